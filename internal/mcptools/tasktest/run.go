package tasktest

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Target is a deployment under test.
type Target struct {
	// MCPURL is its MCP endpoint.
	MCPURL string
	// Alice and Bob are the headers of two principals (API keys); Bob nil:
	// one principal only (no API keys), and the foreign-task case is left
	// to the package tests.
	Alice, Bob http.Header
	// URLInput: 2026-07-28 hosts that declare URL elicitation get the
	// review link as an input request (push-state keys are configured).
	URLInput bool
}

var approval = map[string]any{"message": "Ship build 7?", "context": map[string]any{"build": 7}}

var selection = map[string]any{"message": "Which region?", "options": []any{map[string]any{"id": "eu", "label": "EU"}, map[string]any{"id": "us", "label": "US"}}}

// Run runs the scenario of both flavours against tg.
func Run(t *testing.T, tg Target) {
	t.Run("2025-11-25", func(t *testing.T) { runCore(t, tg) })
	t.Run("2026-07-28", func(t *testing.T) { runExt(t, tg) })
}

func (tg Target) connect(t *testing.T, h http.Header, version string, url bool) *Client {
	o := Options{URL: tg.MCPURL, Header: h, Version: version}
	if version == Ext {
		o.Caps = ExtCaps
		if url {
			o.Caps = ExtURLCaps
		}
	}
	return Connect(t, o)
}

// start creates a task of either flavour and returns its id and the review
// link named in its immediate response.
func start(t *testing.T, c *Client, tool string, args map[string]any) (id, reviewURL string) {
	t.Helper()
	task := ""
	if c.rt.o.Version == Core {
		task = `{"ttl": 600000}`
	}
	res, e := c.Start(tool, args, task)
	if e != nil {
		t.Fatalf("%s as a task: error %d %q", tool, e.Code, e.Message)
	}
	fields := res
	if c.rt.o.Version == Core {
		fields, _ = res["task"].(map[string]any)
	} else if res["resultType"] != "task" {
		t.Fatalf("%s: resultType %v, want task", tool, res["resultType"])
	}
	id, _ = fields["taskId"].(string)
	if id == "" || fields["status"] != "working" {
		t.Fatalf("%s as a task: %v", tool, res)
	}
	meta, _ := res["_meta"].(map[string]any)
	msg, _ := meta["io.modelcontextprotocol/model-immediate-response"].(string)
	reviewURL = regexp.MustCompile(`https?://\S+?/review/` + regexp.QuoteMeta(id) + `/[A-Za-z0-9_-]+`).FindString(msg)
	if reviewURL == "" {
		t.Fatalf("immediate response %q names no review link", msg)
	}
	return id, reviewURL
}

// outcome reads a decided task's result, by flavour: tasks/result, or
// tasks/get's inline result.
func outcome(t *testing.T, c *Client, id string) map[string]any {
	t.Helper()
	if c.rt.o.Version == Core {
		if got := c.Must("tasks/get", id); got["status"] != "completed" {
			t.Fatalf("tasks/get after the decision: %v", got)
		}
		return Structured(t, c.Must("tasks/result", id))
	}
	got := c.Must("tasks/get", id)
	res, _ := got["result"].(map[string]any)
	if got["status"] != "completed" || res == nil {
		t.Fatalf("tasks/get after the decision: %v", got)
	}
	return Structured(t, res)
}

func runCore(t *testing.T, tg Target) {
	c := tg.connect(t, tg.Alice, Core, false)
	decideAndDecline(t, c)
	t.Run("selection", func(t *testing.T) {
		id, link := start(t, c, "elicit_selection", selection)
		done := make(chan map[string]any, 1)
		go func() {
			res, e := c.Do("tasks/result", id, nil) // waits for the decision
			if e != nil {
				t.Errorf("tasks/result: %d %q", e.Code, e.Message)
			}
			done <- res
		}()
		Decide(t, link, "submitted", "", "us")
		if res := <-done; res != nil {
			if sc := Structured(t, res); sc["selectedIds"].([]any)[0] != "us" || sc["elicitationId"] != id {
				t.Fatalf("tasks/result: %v", sc)
			}
		}
	})
	t.Run("cancel", func(t *testing.T) {
		id, link := start(t, c, "elicit_approval", approval)
		if got := c.Must("tasks/cancel", id); got["status"] != "cancelled" {
			t.Fatalf("tasks/cancel: %v", got)
		}
		if !Refused(t, link) {
			t.Fatal("the review page still takes an answer to a cancelled task")
		}
		_, e := c.Do("tasks/cancel", id, nil)
		WantCode(t, "cancel again", e, jsonrpc.CodeInvalidParams, "already cancelled")
	})
	foreign(t, tg, Core)
}

func runExt(t *testing.T, tg Target) {
	c := tg.connect(t, tg.Alice, Ext, false)
	decideAndDecline(t, c)
	if tg.URLInput {
		t.Run("url input", func(t *testing.T) {
			u := tg.connect(t, tg.Alice, Ext, true)
			id, link := start(t, u, "elicit_selection", selection)
			got := u.Must("tasks/get", id)
			ir, _ := got["inputRequests"].(map[string]any)["review"].(map[string]any)
			if got["status"] != "input_required" || ir["params"].(map[string]any)["url"] != link {
				t.Fatalf("tasks/get: %v", got)
			}
			if _, e := u.Do("tasks/update", id, map[string]any{"review": map[string]any{"action": "accept"}}); e != nil {
				t.Fatalf("tasks/update: %v", e)
			}
			if got := u.Must("tasks/get", id); got["status"] != "working" {
				t.Fatalf("tasks/get after the update: %v", got)
			}
			Decide(t, link, "submitted", "", "eu")
			if sc := outcome(t, u, id); sc["selectedIds"].([]any)[0] != "eu" {
				t.Fatalf("result: %v", sc)
			}
		})
	}
	t.Run("cancel", func(t *testing.T) {
		id, link := start(t, c, "elicit_approval", approval)
		if got := c.Must("tasks/cancel", id); got["resultType"] != "complete" {
			t.Fatalf("tasks/cancel: %v", got)
		}
		if got := c.Must("tasks/get", id); got["status"] != "cancelled" || !strings.Contains(got["statusMessage"].(string), "withdrawn") {
			t.Fatalf("tasks/get after cancel: %v", got)
		}
		if !Refused(t, link) {
			t.Fatal("the review page still takes an answer to a cancelled task")
		}
	})
	foreign(t, tg, Ext)
}

func decideAndDecline(t *testing.T, c *Client) {
	t.Run("decide", func(t *testing.T) {
		id, link := start(t, c, "elicit_approval", approval)
		if got := c.Must("tasks/get", id); got["status"] != "working" {
			t.Fatalf("tasks/get before the decision: %v", got)
		}
		Decide(t, link, "submitted", "ship it")
		sc := outcome(t, c, id)
		if sc["decision"] != "submitted" || sc["comment"] != "ship it" || sc["elicitationId"] != id || sc["reviewUrl"] != link {
			t.Fatalf("result: %v", sc)
		}
	})
	t.Run("decline", func(t *testing.T) {
		id, link := start(t, c, "elicit_approval", approval)
		Decide(t, link, "declined", "use build 8")
		if sc := outcome(t, c, id); sc["decision"] != "declined" || sc["comment"] != "use build 8" {
			t.Fatalf("result: %v", sc)
		}
	})
}

func foreign(t *testing.T, tg Target, version string) {
	if tg.Bob == nil {
		return
	}
	t.Run("another principal", func(t *testing.T) {
		alice := tg.connect(t, tg.Alice, version, false)
		bob := tg.connect(t, tg.Bob, version, false)
		id, _ := start(t, alice, "elicit_approval", approval)
		for _, m := range []string{"tasks/get", "tasks/cancel"} {
			_, foreign := bob.Do(m, id, nil)
			_, unknown := bob.Do(m, "AAAAAAAAAAAAAAAAAAAAAA", nil)
			WantCode(t, m+" of another principal's task", foreign, jsonrpc.CodeInvalidParams, "Task not found")
			if unknown == nil || unknown.Message != foreign.Message {
				t.Fatalf("%s: foreign %v, unknown %v: want the same error", m, foreign, unknown)
			}
		}
		if got := alice.Must("tasks/get", id); got["status"] != "working" {
			t.Fatalf("bob changed alice's task: %v", got)
		}
		if version == Core {
			// tasks/list: alice's newest task first, none of hers for bob.
			if ids := listed(alice.Must("tasks/list", "")); len(ids) == 0 || ids[0] != id {
				t.Fatalf("alice's tasks/list %v: want her task %s first", ids, id)
			}
			if ids := listed(bob.Must("tasks/list", "")); slices.Contains(ids, id) {
				t.Fatalf("bob's tasks/list %v holds alice's task %s", ids, id)
			}
		}
	})
}

// listed is the task ids of a tasks/list result.
func listed(res map[string]any) []string {
	var ids []string
	tasks, _ := res["tasks"].([]any)
	for _, x := range tasks {
		if m, ok := x.(map[string]any); ok {
			id, _ := m["taskId"].(string)
			ids = append(ids, id)
		}
	}
	return ids
}
