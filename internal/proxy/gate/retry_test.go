package gate

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
	"github.com/mcp-elicitation/elicitation/internal/proxy/requeststate"
)

func retryReq(state string, res *mcp.ElicitResult) *mcp.CallToolRequest {
	p := &mcp.CallToolParamsRaw{Name: "rm", RequestState: state}
	if res != nil {
		p.InputResponses = mcp.InputResponseMap{plan.HoldInputKey: res}
	}
	return &mcp.CallToolRequest{Params: p}
}

func TestRetryHost(t *testing.T) {
	sealer := requeststate.NewRandomSealer()
	form := &mcp.ElicitParams{Mode: "form", Message: "Allow rm?"}
	// First pass: nothing answered, the form is asked.
	h := newRetryHost(sealer, retryReq("", nil), "rm", "sha256:a")
	_, err := h.Elicit(context.Background(), form)
	res, ok, err := h.inputRequired(sealer, err)
	if !ok || err != nil || res.RequestState == "" || res.InputRequests[plan.HoldInputKey] == nil {
		t.Fatalf("first pass: %+v %v %v", res, ok, err)
	}
	accept := &mcp.ElicitResult{Action: "accept"}
	// The retry answers it.
	h = newRetryHost(sealer, retryReq(res.RequestState, accept), "rm", "sha256:a")
	if got, err := h.Elicit(context.Background(), form); err != nil || got.Action != "accept" {
		t.Fatalf("retry: %+v %v", got, err)
	}
	// Another form in the same pass is asked in turn.
	if _, err := h.Elicit(context.Background(), &mcp.ElicitParams{Message: "other"}); !errors.As(err, new(*errInputRequired)) {
		t.Errorf("a second form was not asked: %v", err)
	}
	for name, req := range map[string]*mcp.CallToolRequest{
		"forged state":    retryReq(res.RequestState+"x", accept),
		"no answer":       retryReq(res.RequestState, nil),
		"other arguments": retryReq(res.RequestState, accept),
		"another process": retryReq(mustSeal(t, requeststate.NewRandomSealer(), retryState{Tool: "rm", Args: "sha256:a", Asked: formDigest(form)}), accept),
	} {
		digest := "sha256:a"
		if name == "other arguments" {
			digest = "sha256:b"
		}
		h := newRetryHost(sealer, req, "rm", digest)
		if _, err := h.Elicit(context.Background(), form); !errors.As(err, new(*errInputRequired)) {
			t.Errorf("%s: answered from the state (%v); want the form asked again", name, err)
		}
	}
	// An answer to a form that has since changed is not reused.
	h = newRetryHost(sealer, retryReq(res.RequestState, accept), "rm", "sha256:a")
	if _, err := h.Elicit(context.Background(), &mcp.ElicitParams{Mode: "form", Message: "Allow rm now?"}); !errors.As(err, new(*errInputRequired)) {
		t.Errorf("an answer to another form was reused: %v", err)
	}
}

func mustSeal(t *testing.T, s *requeststate.Sealer, v any) string {
	t.Helper()
	tok, err := s.Seal(v, retryTTL)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
