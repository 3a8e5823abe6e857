package mcptools

import (
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The multi round-trip without a session (SEP-2322, 2026-07-28): a request
// that needs its client's input answers with an input-required result (the
// input requests, and a sealed requestState), and the client retries it
// with its answers and that state. The request state is this file's, for
// every such request: elicit_await's offers (offer.go: the host's form, the
// review link) and, through Rounds, a request served beside the tools (the
// conformance fixture's).
//
//   - The state is sealed (Sealer: AES-256-GCM, internal/sealer) for a
//     purpose, which names what asked, and binds what asked (an
//     elicitation, a step), the principal, an expiry, a nonce (each state
//     is unique), and what the asker keeps between rounds (memo).
//   - A state that does not open (altered, sealed by another deployment or
//     for another purpose), belongs to another request or principal, or has
//     expired is refused as the request's invalid parameters: a JSON-RPC
//     error -32602, never a result, so no client takes a refused retry for
//     an answer (refuseState). elicit_await refuses a state already used
//     the same way.
//   - Only the input requests the client declared a capability for are
//     asked (Declared): a form or URL elicitation needs elicitation (form,
//     url), sampling/createMessage sampling, roots/list roots.

// pushState is what a request state binds.
type pushState struct {
	ID        string    `json:"e"`
	Principal string    `json:"p"`
	Expires   time.Time `json:"x"`
	// WaitUntil is when elicit_await's first call's wait would have ended:
	// the retry continues that wait rather than starting a new one.
	WaitUntil time.Time `json:"w,omitzero"`
	// Memo is what the asker keeps between rounds (Rounds).
	Memo json.RawMessage `json:"m,omitempty"`
	// Nonce makes each state unique, so that it is accepted once.
	Nonce string `json:"n"`
}

// sealState seals st for purpose, with a fresh nonce.
func sealState(sealer Sealer, purpose string, st pushState) string {
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

// openState checks the request state a retry carries, sealed by sealer
// (nil: none can be this server's) for purpose, about id, for principal.
func openState(sealer Sealer, purpose, sealed, id, principal string, now time.Time) (pushState, error) {
	if sealer == nil {
		return pushState{}, errBadState("is not one this server issued")
	}
	b, err := sealer.Open(purpose, sealed)
	var st pushState
	if err != nil || json.Unmarshal(b, &st) != nil {
		return pushState{}, errBadState("is not one this server issued (altered or foreign)")
	}
	if st.ID != id || st.Principal != principal {
		return pushState{}, errBadState("belongs to another request or another agent")
	}
	if !now.Before(st.Expires) {
		return pushState{}, errBadState("has expired")
	}
	return st, nil
}

// Asking is a request that may ask its client for input: a tools/call, a
// prompts/get (*mcp.CallToolRequest, *mcp.GetPromptRequest).
type Asking interface {
	GetExtra() *mcp.RequestExtra
	ClientCapabilities() *mcp.ClientCapabilities
}

// Rounds runs the multi round-trip without a session for a request served
// beside this package's tools, on the same request state: Ask the client,
// Resume the retry.
type Rounds struct {
	sealer Sealer
	now    func() time.Time
}

// NewRounds returns Rounds sealing with sealer (the deployment's state
// keys, compose.StateKeys) on the clock now.
func NewRounds(sealer Sealer, now func() time.Time) *Rounds {
	return &Rounds{sealer: sealer, now: now}
}

// Ask returns what an input-required result of req asks: of inputs, those
// the client declared (Declared), and the request state, sealed for
// purpose (what asks: the tool or the prompt, and its step), binding req's
// principal, StateTTL and memo; no state when memo is nil (the request
// keeps nothing between rounds).
func (r *Rounds) Ask(req Asking, purpose string, inputs mcp.InputRequestMap, memo []byte) (mcp.InputRequestMap, string) {
	inputs = Declared(req.ClientCapabilities(), inputs)
	if memo == nil {
		return inputs, ""
	}
	return inputs, sealState(r.sealer, purpose, pushState{ID: purpose, Principal: principalOf(req.GetExtra()), Expires: r.now().Add(StateTTL), Memo: memo})
}

// Resume opens the request state of req's retry, sealed for purpose, and
// returns its memo; a state refused is the error to answer req with.
func (r *Rounds) Resume(req Asking, purpose, sealed string) ([]byte, error) {
	st, err := openState(r.sealer, purpose, sealed, purpose, principalOf(req.GetExtra()), r.now())
	return st.Memo, err
}

// Declared is inputs less the input requests whose capability caps does
// not declare.
func Declared(caps *mcp.ClientCapabilities, inputs mcp.InputRequestMap) mcp.InputRequestMap {
	out := mcp.InputRequestMap{}
	for key, in := range inputs {
		if declares(caps, in) {
			out[key] = in
		}
	}
	return out
}

// declares reports whether caps declares what input request in needs.
func declares(caps *mcp.ClientCapabilities, in mcp.InputRequest) bool {
	if caps == nil {
		return false
	}
	switch p := in.(type) {
	case *mcp.ElicitParams:
		e := caps.Elicitation
		if e == nil {
			return false
		}
		if p.Mode == "url" {
			return e.URL != nil
		}
		// elicitation: {} (2025-06-18) means form mode.
		return e.Form != nil || e.URL == nil
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		//lint:ignore SA1019 sampling is deprecated from 2026-07-28 on, still an input request a client may declare
		return caps.Sampling != nil
	case *mcp.ListRootsParams:
		//lint:ignore SA1019 roots are deprecated from 2026-07-28 on, still an input request a client may declare
		return caps.RootsV2 != nil
	}
	return false
}
