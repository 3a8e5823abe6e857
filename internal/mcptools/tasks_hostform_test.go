package mcptools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
)

// TestCoreHostForm: a 2025-11-25 task created with askInHost on a session
// whose client declared form elicitation shows the host's form while the
// host waits in tasks/result (the call's own stream), within the wait
// bound: an answer decides the task, recorded via host-form; a form still
// open at the bound is cancelled (notifications/cancelled), tasks/result
// says the task is still working, the form is not shown again, and the
// review page then decides.
func TestCoreHostForm(t *testing.T) {
	// Not in parallel: a 400 ms wait bound holds the host form's round trip.
	shown := make(chan *mcp.ElicitParams, 4)
	answers := make(chan *mcp.ElicitResult, 4)
	cancelled := make(chan struct{}, 4)
	w := newWorld(t, worldOptions{maxWait: 400 * time.Millisecond, hostForm: true,
		onElicit: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			shown <- req.Params
			select {
			case a := <-answers:
				return a, nil
			case <-ctx.Done():
				cancelled <- struct{}{}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"comment": "too late"}}, nil
			}
		}})
	c := w.connect("tok-alice", core, -1, &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}})
	args := map[string]any{"message": "Ship build 7?", "context": map[string]any{"build": 7}, "askInHost": true}

	id, _ := startTask(t, c, "elicit_approval", args)
	answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"comment": "from the host"}}
	sc := tasktest.Structured(t, c.Must("tasks/result", id))
	if sc["decision"] != "submitted" || sc["comment"] != "from the host" || sc["decidedVia"] != "host-form" {
		t.Fatalf("tasks/result after the host answered: %v", sc)
	}
	if f := <-shown; f.Mode != "form" || !strings.HasPrefix(f.Message, "Ship build 7?") {
		t.Errorf("form shown: %+v", f)
	} else if rel, _ := f.Meta[mcptools.MetaRelatedTask].(map[string]any); rel["taskId"] != id {
		t.Errorf("form shown during tasks/result: _meta %v, want %s {taskId: %s}", f.Meta, mcptools.MetaRelatedTask, id)
	}

	id, _ = startTask(t, c, "elicit_approval", args)
	if _, e := c.Do("tasks/result", id, nil); e == nil || e.Code != mcptools.CodeStillWorking {
		t.Fatalf("tasks/result with the form open at the bound: %v, want still working", e)
	}
	<-shown
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the host's elicitation/create was never cancelled")
	}
	if _, e := c.Do("tasks/result", id, nil); e == nil || e.Code != mcptools.CodeStillWorking || len(shown) != 0 {
		t.Fatalf("second tasks/result: %v, %d forms shown", e, len(shown))
	}
	if got := c.Must("tasks/get", id); got["status"] != "working" {
		t.Fatalf("tasks/get after the form was cancelled: %v", got)
	}
	w.decide(id, elicitation.Submission{Decision: elicitation.DecisionDeclined})
	if sc := tasktest.Structured(t, c.Must("tasks/result", id)); sc["decision"] != "declined" || sc["decidedVia"] != "page" {
		t.Fatalf("tasks/result after the page decided: %v", sc)
	}
}
