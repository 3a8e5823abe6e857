package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// retryTTL is how long a 2026-07-28 client has to answer the gate's form.
const retryTTL = 30 * time.Minute

// retryState is what the gate's multi round-trip result carries to the
// retry: the call it belongs to and the answers given so far, in the order
// the gate asked (an ambiguity's pick, then the confirmation).
type retryState struct {
	Tool string `json:"tool"`
	// Args is the digest of the call's own arguments.
	Args    string        `json:"args"`
	Answers []retryAnswer `json:"answers,omitempty"`
	// Asked is the digest of the form the pending input request shows.
	Asked string `json:"asked,omitempty"`
	// Proc names the process that sealed the state and Serial this state
	// among those it sealed: a state is used once, there (stateUses).
	Proc   string `json:"proc,omitempty"`
	Serial uint64 `json:"serial,omitempty"`
}

type retryAnswer struct {
	// Form is the digest of the form answered: a retry whose form came
	// out otherwise (the candidates changed) is asked again.
	Form   string            `json:"form"`
	Result *mcp.ElicitResult `json:"result"`
}

// errInputRequired is raised by a retryHost for a form the client has not
// answered yet: the call returns an input request.
type errInputRequired struct {
	params *mcp.ElicitParams
}

func (e *errInputRequired) Error() string { return "the client must answer a form first" }

// retryHost is the host's form for a 2026-07-28 client, which answers a
// form by retrying the call: each Elicit is answered from the retry's
// sealed state and input responses, in order, or raises errInputRequired.
type retryHost struct {
	st   retryState
	next int // answers used in this pass
}

func formDigest(p *mcp.ElicitParams) string {
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// newRetryHost reads the retry's state, when it carries a valid one for
// this call that was sealed by this process and not used before; anything
// else starts afresh (the gate asks again). reused reports a valid state
// that was refused because it had been used already (or was sealed by
// another process).
func newRetryHost(sealer *plan.Sealer, uses *stateUses, now time.Time, req *mcp.CallToolRequest, tool, argsDigest string) (h *retryHost, reused bool) {
	h = &retryHost{st: retryState{Tool: tool, Args: argsDigest}}
	res, ok := req.Params.InputResponses[plan.HoldInputKey].(*mcp.ElicitResult)
	if !ok || req.Params.RequestState == "" {
		return h, false
	}
	var st retryState
	if sealer.Open(req.Params.RequestState, &st) != nil || st.Tool != tool || st.Args != argsDigest || st.Asked == "" {
		return h, false
	}
	if !uses.take(st, now) {
		return h, true
	}
	st.Answers = append(st.Answers, retryAnswer{Form: st.Asked, Result: res})
	st.Asked, st.Proc, st.Serial = "", "", 0
	h.st = st
	return h, false
}

func (h *retryHost) Elicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	d := formDigest(p)
	if h.next < len(h.st.Answers) {
		a := h.st.Answers[h.next]
		if a.Form == d {
			h.next++
			return a.Result, nil
		}
		// The form changed since it was answered: drop that answer and
		// what followed it.
		h.st.Answers = h.st.Answers[:h.next]
	}
	h.st.Asked = d
	return nil, &errInputRequired{params: p}
}

// inputRequired renders the pending form as a multi round-trip result.
func (h *retryHost) inputRequired(sealer *plan.Sealer, uses *stateUses, now time.Time, err error) (*mcp.CallToolResult, bool, error) {
	var ir *errInputRequired
	if !errors.As(err, &ir) {
		return nil, false, nil
	}
	uses.stamp(&h.st, now)
	state, serr := sealer.Seal(h.st, retryTTL)
	if serr != nil {
		return nil, true, fmt.Errorf("sealing the gate's request state: %w", serr)
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{plan.HoldInputKey: ir.params}, RequestState: state}, true, nil
}
