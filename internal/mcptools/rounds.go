package mcptools

import (
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The multi round-trip without a session (SEP-2322, 2026-07-28): a request
// that needs its client's input answers with an input-required result (the
// input requests, and a sealed requestState), and the client retries it
// with its answers and that state. The request state is this file's, for
// every such request: elicit_await's offers (offer.go: the host's form, the
// review link) and a request served beside the tools (the conformance
// fixture's input-required tools seal and open theirs with SealState and
// OpenState).
//
//   - The state is sealed (Sealer: AES-256-GCM, internal/sealer) for a
//     purpose, which names what asked, and binds what asked (an
//     elicitation, a step), the principal, an expiry, a nonce (each state
//     is unique), and what the asker keeps between rounds (Memo).
//   - A state that does not open (altered, sealed by another deployment or
//     for another purpose), belongs to another request or principal, or has
//     expired is refused as the request's invalid parameters: a JSON-RPC
//     error -32602, never a result, so no client takes a refused retry for
//     an answer (errBadState). elicit_await refuses a state already used
//     the same way.

// RequestState is what a request state binds.
type RequestState struct {
	ID        string    `json:"e"`
	Principal string    `json:"p"`
	Expires   time.Time `json:"x"`
	// WaitUntil is when elicit_await's first call's wait would have ended:
	// the retry continues that wait rather than starting a new one.
	WaitUntil time.Time `json:"w,omitzero"`
	// Memo is what the asker keeps between rounds.
	Memo json.RawMessage `json:"m,omitempty"`
	// Nonce makes each state unique, so that it is accepted once.
	Nonce string `json:"n"`
}

// SealState seals st for purpose, with a fresh nonce: the requestState of
// an input-required result.
func SealState(sealer Sealer, purpose string, st RequestState) string {
	st.Nonce = rand.Text()
	b, _ := json.Marshal(st)
	return sealer.Seal(purpose, b)
}

// errBadState is the refusal of request state that is not this server's
// for this request and principal, is too old, or was already used: the
// request's invalid parameters (JSON-RPC -32602).
func errBadState(why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState " + why + ": send the request again without it"}
}

// OpenState opens the request state a retry carries, sealed by sealer
// (nil: none can be this server's) for purpose, about id, for principal,
// at now; a state refused is the error to answer the retry with.
func OpenState(sealer Sealer, purpose, sealed, id, principal string, now time.Time) (RequestState, error) {
	if sealer == nil {
		return RequestState{}, errBadState("is not one this server issued")
	}
	b, err := sealer.Open(purpose, sealed)
	var st RequestState
	if err != nil || json.Unmarshal(b, &st) != nil {
		return RequestState{}, errBadState("is not one this server issued (altered or foreign)")
	}
	if st.ID != id || st.Principal != principal {
		return RequestState{}, errBadState("belongs to another request or another agent")
	}
	if !now.Before(st.Expires) {
		return RequestState{}, errBadState("has expired")
	}
	return st, nil
}
