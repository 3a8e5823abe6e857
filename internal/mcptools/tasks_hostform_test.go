package mcptools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// TestExtHostForm: a 2026-07-28 task created with askInHost, for a host
// that declared form elicitation, offers the host's form as its input
// request (in place of the review link); tasks/update submits the answer
// as the review page would: an answer the form does not allow is refused
// with the reason and leaves the form outstanding, an accepted one decides
// the task (via host-form), and a later answer is not outstanding any more
// (acknowledged, nothing changes). A cancelled form decides nothing: the
// task goes back to working, on the page.
func TestExtHostForm(t *testing.T) {
	t.Parallel()
	form := map[string]any{"type": "object", "required": []any{"confirm"},
		"properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}}
	args := map[string]any{"message": "Delete notes.txt?", "requestedSchema": form, "askInHost": true}
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			o := ep.o
			o.hostForm = true
			w := newWorld(t, o)
			c := w.connect("tok-alice", ext, -1, extURLCaps)

			id := startExt(t, c, "elicit_approval", args)
			got := c.Must("tasks/get", id)
			ir, _ := got["inputRequests"].(map[string]any)
			f, _ := ir["hostForm"].(map[string]any)
			p, _ := f["params"].(map[string]any)
			if got["status"] != "input_required" || len(ir) != 1 || f["method"] != "elicitation/create" || p["mode"] != "form" || !strings.HasPrefix(p["message"].(string), "Delete notes.txt?") {
				t.Fatalf("tasks/get of a task asked in the host: %v", got)
			}
			if _, e := c.Do("tasks/update", id, map[string]any{"hostForm": map[string]any{"action": "accept", "content": map[string]any{"confirm": "yes"}}}); e == nil || e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, "confirm") {
				t.Fatalf("tasks/update with an answer outside the form: %v, want invalid params naming the field", e)
			}
			if _, e := c.Do("tasks/update", id, map[string]any{"hostForm": "yes"}); e == nil || e.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("tasks/update with no answer object: %v, want invalid params", e)
			}
			if got := c.Must("tasks/get", id); got["status"] != "input_required" {
				t.Fatalf("tasks/get after refused answers: %v, want the form still outstanding", got)
			}
			if ack, e := c.Do("tasks/update", id, map[string]any{"hostForm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}); e != nil || ack["resultType"] != "complete" || ack["status"] != nil {
				t.Fatalf("tasks/update with the answer: %v %v", ack, e)
			}
			got = c.Must("tasks/get", id)
			sc := tasktest.Structured(t, got["result"].(map[string]any))
			if got["status"] != "completed" || sc["decision"] != "submitted" || sc["decidedVia"] != "host-form" || fmt.Sprint(sc["formSubmission"]) != "map[confirm:true]" {
				t.Fatalf("tasks/get after the host answered: %v", got)
			}
			if ack, e := c.Do("tasks/update", id, map[string]any{"hostForm": map[string]any{"action": "decline"}}); e != nil || ack["resultType"] != "complete" {
				t.Fatalf("a second answer: %v %v, want acknowledged", ack, e)
			}
			if sc := tasktest.Structured(t, c.Must("tasks/get", id)["result"].(map[string]any)); sc["decision"] != "submitted" {
				t.Fatalf("the second answer changed the decision: %v", sc)
			}

			id = startExt(t, c, "elicit_approval", args)
			if _, e := c.Do("tasks/update", id, map[string]any{"hostForm": map[string]any{"action": "cancel"}}); e != nil {
				t.Fatalf("tasks/update cancel: %v", e)
			}
			if got := c.Must("tasks/get", id); got["status"] != "working" || got["inputRequests"] != nil {
				t.Fatalf("tasks/get after the form was closed: %v, want working with nothing asked", got)
			}
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionDeclined})
			if sc := tasktest.Structured(t, c.Must("tasks/get", id)["result"].(map[string]any)); sc["decision"] != "declined" || sc["decidedVia"] != "page" {
				t.Fatalf("tasks/get after the page decided: %v", sc)
			}
		})
	}
}

// recordFault fails every read of a request's record while on (a store
// down, a damaged record), with an error text that must stay on the server.
type recordFault struct {
	elicitation.Store
	on *atomic.Bool
}

const recordFaultText = "bolt: page 7 of /var/lib/secret.db is corrupt"

func (f recordFault) Load(ctx context.Context, id string) (elicitation.Record, error) {
	if f.on.Load() {
		return elicitation.Record{}, errors.New(recordFaultText)
	}
	return f.Store.Load(ctx, id)
}

// TestExtHostFormReadFailureHidden: a 2026-07-28 task whose host form
// cannot be built because the store fails (tasks/get, tasks/update) is
// answered with the JSON-RPC internal error and a sentence of this
// server's, never the store's error text; once the failure passes, the
// form is offered as before.
func TestExtHostFormReadFailureHidden(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			var fault atomic.Bool
			o := ep.o
			o.hostForm = true
			o.wrapStore = func(st elicitation.Store) elicitation.Store { return recordFault{Store: st, on: &fault} }
			w := newWorld(t, o)
			c := w.connect("tok-alice", ext, -1, extURLCaps)
			id := startExt(t, c, "elicit_approval", map[string]any{"message": "Delete notes.txt?", "context": 1, "askInHost": true})
			fault.Store(true)
			for _, m := range []struct {
				method string
				inputs map[string]any
			}{{"tasks/get", nil}, {"tasks/update", map[string]any{"hostForm": map[string]any{"action": "decline"}}}} {
				_, e := c.Do(m.method, id, m.inputs)
				if e == nil || e.Code != jsonrpc.CodeInternalError || strings.Contains(e.Message, "secret.db") || strings.Contains(e.Message, "corrupt") {
					t.Errorf("%s with the store failing: %v, want the internal error without the store's text", m.method, e)
				}
			}
			fault.Store(false)
			if got := c.Must("tasks/get", id); got["status"] != "input_required" {
				t.Fatalf("tasks/get once the failure passed: %v, want the form outstanding", got)
			}
		})
	}
}
