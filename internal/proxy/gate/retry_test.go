package gate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

func retryReq(state string, res *mcp.ElicitResult) *mcp.CallToolRequest {
	p := &mcp.CallToolParamsRaw{Name: "rm", RequestState: state}
	if res != nil {
		p.InputResponses = mcp.InputResponseMap{plan.HoldInputKey: res}
	}
	return &mcp.CallToolRequest{Params: p}
}

func TestRetryHost(t *testing.T) {
	sealer := plan.NewRandomSealer()
	uses := newStateUses()
	now := time.Now()
	open := func(req *mcp.CallToolRequest, digest string) *retryHost {
		h, _ := newRetryHost(sealer, uses, now, req, "rm", digest)
		return h
	}
	form := &mcp.ElicitParams{Mode: "form", Message: "Allow rm?"}
	// First pass: nothing answered, the form is asked.
	h := open(retryReq("", nil), "sha256:a")
	_, err := h.Elicit(context.Background(), form)
	res, ok, err := h.inputRequired(sealer, uses, now, err)
	if !ok || err != nil || res.RequestState == "" || res.InputRequests[plan.HoldInputKey] == nil {
		t.Fatalf("first pass: %+v %v %v", res, ok, err)
	}
	accept := &mcp.ElicitResult{Action: "accept"}
	// The retry answers it.
	h = open(retryReq(res.RequestState, accept), "sha256:a")
	if got, err := h.Elicit(context.Background(), form); err != nil || got.Action != "accept" {
		t.Fatalf("retry: %+v %v", got, err)
	}
	// A state is used once: the same retry sent again, here or to another
	// process sharing the key, is asked again.
	for name, u := range map[string]*stateUses{"resent": uses, "resent to another process": newStateUses()} {
		h, reused := newRetryHost(sealer, u, now, retryReq(res.RequestState, accept), "rm", "sha256:a")
		if _, err := h.Elicit(context.Background(), form); !errors.As(err, new(*errInputRequired)) || !reused {
			t.Errorf("%s: answered from a used state (%v, reused %v); want the form asked again", name, err, reused)
		}
	}
	// Another form in the same pass is asked in turn.
	if _, err := h.Elicit(context.Background(), &mcp.ElicitParams{Message: "other"}); !errors.As(err, new(*errInputRequired)) {
		t.Errorf("a second form was not asked: %v", err)
	}
	// Every case below opens a fresh state.
	fresh := func() string {
		_, err := open(retryReq("", nil), "sha256:a").Elicit(context.Background(), form)
		res, _, _ := (&retryHost{st: retryState{Tool: "rm", Args: "sha256:a", Asked: formDigest(form)}}).inputRequired(sealer, uses, now, err)
		return res.RequestState
	}
	for name, req := range map[string]*mcp.CallToolRequest{
		"forged state":    retryReq(fresh()+"x", accept),
		"no answer":       retryReq(fresh(), nil),
		"other arguments": retryReq(fresh(), accept),
		"another process": retryReq(mustSeal(t, plan.NewRandomSealer(), retryState{Tool: "rm", Args: "sha256:a", Asked: formDigest(form)}), accept),
	} {
		digest := "sha256:a"
		if name == "other arguments" {
			digest = "sha256:b"
		}
		h := open(req, digest)
		if _, err := h.Elicit(context.Background(), form); !errors.As(err, new(*errInputRequired)) {
			t.Errorf("%s: answered from the state (%v); want the form asked again", name, err)
		}
	}
	// An answer to a form that has since changed is not reused.
	h = open(retryReq(fresh(), accept), "sha256:a")
	if _, err := h.Elicit(context.Background(), &mcp.ElicitParams{Mode: "form", Message: "Allow rm now?"}); !errors.As(err, new(*errInputRequired)) {
		t.Errorf("an answer to another form was reused: %v", err)
	}
}

func mustSeal(t *testing.T, s *plan.Sealer, v any) string {
	t.Helper()
	tok, err := s.Seal(v, retryTTL)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// One client cannot fill the record of used states that other clients'
// approvals depend on (#38): after more states sealed and declined than the
// record used to hold (100,000, then refusing further uses for up to 31
// minutes), a legitimate host's first answer is still taken, once; the
// record forgets expired states, so its memory follows the states that can
// still be answered.
func TestStateUsesNeverRefuseAFirstUse(t *testing.T) {
	t.Parallel()
	uses := newStateUses()
	now := time.Now()
	seal := func() retryState {
		st := retryState{Tool: "rm"}
		uses.stamp(&st, now)
		return st
	}
	early := seal() // a host's form, answered after the flood
	for i := range 150000 {
		st := seal()
		if !uses.take(st, now) {
			t.Fatalf("the flood's state %d was refused on its first use", i)
		}
		now = now.Add(time.Millisecond) // 150 s of calls
	}
	late := seal()
	for name, st := range map[string]retryState{"sealed before the flood": early, "sealed after it": late} {
		if !uses.take(st, now) {
			t.Errorf("a state %s was refused on its first use", name)
		}
		if uses.take(st, now) {
			t.Errorf("a state %s was taken twice", name)
		}
	}
	// Once every state has expired, their bits are forgotten: no state
	// sealed then is taken, and a new one is.
	now = now.Add(usesLife)
	if uses.take(late, now) || uses.take(early, now) {
		t.Error("an expired state was taken")
	}
	st := seal()
	if !uses.take(st, now) {
		t.Error("a state sealed after the flood expired was refused")
	}
	if n := len(uses.used); n > 1 {
		t.Errorf("the record holds %d words after every flooded state expired; want at most 1", n)
	}
	if uses.take(retryState{Proc: uses.proc, Serial: st.Serial + 1}, now) {
		t.Error("a serial never sealed was taken")
	}
}
