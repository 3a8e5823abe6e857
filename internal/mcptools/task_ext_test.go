package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
)

const ext = "2026-07-28"

var (
	extCaps    = &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	extURLCaps = &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}, Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
)

// startExt calls tool as a 2026-07-28 client that declared the extension:
// the server answers with a task.
func startExt(t *testing.T, c *client, tool string, args any) string {
	t.Helper()
	res, e := c.Start(tool, args, "")
	if e != nil {
		t.Fatalf("%s: error %d %q", tool, e.Code, e.Message)
	}
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" || res["status"] != "working" || res["ttlMs"] == nil || res["pollIntervalMs"] != float64(5000) {
		t.Fatalf("CreateTaskResult %v", res)
	}
	return id
}

func TestExtDecide(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", ext, -1, extCaps)
			id := startExt(t, c, "elicit_approval", approvalArgs)
			got := c.Must("tasks/get", id)
			if got["status"] != "working" || got["resultType"] != "complete" || got["result"] != nil || got["inputRequests"] != nil {
				t.Fatalf("tasks/get while pending (no URL elicitation declared): %v", got)
			}
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionDeclined, Comment: "not yet"})
			got = c.Must("tasks/get", id)
			if got["status"] != "completed" || got["pollIntervalMs"] != nil {
				t.Fatalf("tasks/get after the decision: %v", got)
			}
			sc := tasktest.Structured(t, got["result"].(map[string]any))
			if sc["decision"] != "declined" || sc["comment"] != "not yet" || sc["elicitationId"] != id || !strings.Contains(sc["reviewUrl"].(string), id) {
				t.Fatalf("inline result: %v", sc)
			}
			// A client that checks a tool's result against the tool's listed
			// output schema (the TypeScript SDK does) accepts the task's.
			if err := listedOutputSchema(t, c.CS, "elicit_approval").Validate(sc); err != nil {
				t.Errorf("the task's result does not match elicit_approval's listed outputSchema: %v", err)
			}
			// Every poll carries the result; the fetch is audited once.
			for range 3 {
				if again := tasktest.Structured(t, c.Must("tasks/get", id)["result"].(map[string]any)); again["decision"] != "declined" {
					t.Fatalf("a later poll: %v", again)
				}
			}
			if n := w.audited(id, elicitation.ActionResultFetched); n != 1 {
				t.Fatalf("%d result_fetched entries after four polls, want 1", n)
			}
		})
	}
}

// listedOutputSchema is tool's outputSchema as tools/list gives it to cs.
func listedOutputSchema(t *testing.T, cs *mcp.ClientSession, tool string) *jsonschema.Resolved {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, tl := range res.Tools {
		if tl.Name != tool {
			continue
		}
		b, _ := json.Marshal(tl.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s's output schema: %v", tool, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s's output schema: %v", tool, err)
		}
		return rs
	}
	t.Fatalf("tools/list has no %s", tool)
	return nil
}

// A client that did not declare the extension gets the plain creation
// result, and tasks methods refuse it with the missing capability.
func TestExtNotDeclared(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{})
	c := w.connect("tok-alice", ext, -1, nil)
	res, e := c.Start("elicit_approval", approvalArgs, "")
	if e != nil || res["resultType"] == "task" || res["structuredContent"] == nil {
		t.Fatalf("plain call: %v %v", res, e)
	}
	id := res["structuredContent"].(map[string]any)["elicitationId"].(string)
	_, e = c.Do("tasks/get", id, nil)
	tasktest.WantCode(t, "tasks/get without the extension", e, mcp.CodeMissingRequiredClientCapabilities, "io.modelcontextprotocol/tasks")
}

// A host that declared URL elicitation sees the review link as the task's
// input request while it waits; its answer (tasks/update) puts the task
// back to working, and the key is never offered again.
func TestExtInputRequired(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", ext, -1, extURLCaps)
			id := startExt(t, c, "elicit_selection", map[string]any{"message": "Which region?", "options": []any{map[string]any{"id": "eu"}, map[string]any{"id": "us"}}})
			got := c.Must("tasks/get", id)
			ir, _ := got["inputRequests"].(map[string]any)["review"].(map[string]any)
			p, _ := ir["params"].(map[string]any)
			w.mu.Lock()
			link := w.created[id]
			w.mu.Unlock()
			if got["status"] != "input_required" || ir["method"] != "elicitation/create" || p["mode"] != "url" || p["url"] != link || p["elicitationId"] != id || p["message"] != "Which region?" {
				t.Fatalf("tasks/get with URL elicitation: %v", got)
			}
			// A key the task never issued is ignored, as the extension asks:
			// acknowledged, nothing recorded, the link still outstanding.
			if ack, e := c.Do("tasks/update", id, map[string]any{"nope": map[string]any{"action": "accept"}}); e != nil || ack["resultType"] != "complete" || ack["taskId"] != nil || ack["status"] != nil {
				t.Fatalf("tasks/update of a key never issued: %v %v", ack, e)
			}
			if got := c.Must("tasks/get", id); got["status"] != "input_required" {
				t.Fatalf("tasks/get after an ignored answer: %v", got)
			}
			_, e := c.Do("tasks/update", id, map[string]any{})
			tasktest.WantCode(t, "no inputResponses", e, jsonrpc.CodeInvalidParams, "needs inputResponses")
			if _, e := c.Do("tasks/update", id, map[string]any{"review": map[string]any{"action": "accept"}}); e != nil {
				t.Fatalf("tasks/update: %v", e)
			}
			if got := c.Must("tasks/get", id); got["status"] != "working" || got["inputRequests"] != nil {
				t.Fatalf("tasks/get after the host answered: %v", got)
			}
			// Answering again is ignored (the key is no longer outstanding):
			// recorded once.
			if _, e := c.Do("tasks/update", id, map[string]any{"review": map[string]any{"action": "accept"}}); e != nil {
				t.Fatalf("tasks/update again: %v", e)
			}
			tr, _ := w.svc.Audit(t.Context(), "alice", id)
			answered := 0
			for _, en := range tr.Entries {
				if en.Action == elicitation.ActionPushAnswered {
					answered++
				}
			}
			if answered != 1 {
				t.Fatalf("push_answered %d times, want 1", answered)
			}
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"eu"}})
			got = c.Must("tasks/get", id)
			if sc := tasktest.Structured(t, got["result"].(map[string]any)); got["status"] != "completed" || sc["selectedIds"].([]any)[0] != "eu" {
				t.Fatalf("tasks/get after the decision: %v", got)
			}
		})
	}
}

func TestExtCancelExpireAndErrors(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", ext, -1, extCaps)
			bob := w.connect("tok-bob", ext, -1, extCaps)
			id := startExt(t, c, "elicit_approval", approvalArgs)
			for _, m := range []string{"tasks/get", "tasks/cancel"} {
				_, e := bob.Do(m, id, nil)
				tasktest.WantCode(t, m+" by another principal", e, jsonrpc.CodeInvalidParams, "Task not found")
			}
			if res := c.Must("tasks/cancel", id); res["resultType"] != "complete" {
				t.Fatalf("tasks/cancel: %v", res)
			}
			if got := c.Must("tasks/get", id); got["status"] != "cancelled" {
				t.Fatalf("tasks/get after cancel: %v", got)
			}
			// Expiry completes the task with elicit_result's expired error.
			id2 := startExt(t, c, "elicit_approval", map[string]any{"message": "m", "context": 1, "timeoutSeconds": 60})
			w.clock.Add(61e9)
			got := c.Must("tasks/get", id2)
			res, _ := got["result"].(map[string]any)
			if got["status"] != "completed" || res["isError"] != true || !strings.HasPrefix(textOf(res), "expired: ") || !strings.Contains(got["statusMessage"].(string), "ask again") {
				t.Fatalf("tasks/get after expiry: %v", got)
			}
			_, e := c.Do("tasks/result", id2, nil)
			tasktest.WantCode(t, "tasks/result on 2026-07-28", e, jsonrpc.CodeMethodNotFound, "tasks/result")
			// Mcp-Name must name the task.
			c.SetName(false)
			_, e = c.Do("tasks/get", id2, nil)
			tasktest.WantCode(t, "no Mcp-Name", e, mcp.CodeHeaderMismatch, "Mcp-Name")
			c.SetName(true)
			// A tool that does not run as a task answers as always.
			r, e := c.Start("elicit_status", map[string]any{"elicitationId": id2}, "")
			if e != nil || r["resultType"] == "task" {
				t.Fatalf("elicit_status: %v %v", r, e)
			}
			b, _ := json.Marshal(r)
			if !strings.Contains(string(b), "expired") {
				t.Fatalf("elicit_status: %s", b)
			}
		})
	}
}

// A subscriptions/listen asking for task notifications without the
// extension is refused with -32021; with it, for no task of the asker's,
// it is acknowledged and ends at once (TestExtTaskNotifications: with
// tasks).
func TestExtListenForTasks(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			listen := func(caps string) map[string]any {
				body := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["x"]},"_meta":{"io.modelcontextprotocol/clientCapabilities":` + caps + `,"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
				req, _ := http.NewRequest(http.MethodPost, w.servers[0].URL+"/mcp", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer tok-alice")
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", ext)
				req.Header.Set("Mcp-Method", "subscriptions/listen")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				var msg map[string]any
				if err := json.Unmarshal(tasktest.AnswerOf(b), &msg); err != nil {
					t.Fatalf("listen answered %d %q", res.StatusCode, b)
				}
				return msg
			}
			refused := listen(`{}`)
			if e, _ := refused["error"].(map[string]any); e["code"] != float64(mcp.CodeMissingRequiredClientCapabilities) || refused["id"] != float64(9) {
				t.Fatalf("listen without the extension: %v", refused)
			}
			if ok := listen(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`); ok["error"] != nil || ok["result"] == nil {
				t.Fatalf("listen with the extension: %v", ok)
			}
		})
	}
}

// TestExtTaskNotifications: a subscriptions/listen for task ids (read raw)
// is acknowledged with the asker's own tasks only, then carries each one's
// notifications/tasks when it ends (decided: the result inline, audited
// once; cancelled), and ends when all have; the carriers never reach the
// wire.
func TestExtTaskNotifications(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", ext, -1, extCaps)
			bob := w.connect("tok-bob", ext, -1, extCaps)
			decided := startExt(t, c, "elicit_approval", approvalArgs)
			cancelled := startExt(t, c, "elicit_approval", approvalArgs)
			foreign := startExt(t, bob, "elicit_approval", approvalArgs)
			next := openListen(t, w, "tok-alice", decided, cancelled, foreign, "unknown")
			ack := next("the acknowledgement")
			ids, _ := ack["params"].(map[string]any)["notifications"].(map[string]any)["taskIds"].([]any)
			if ack["method"] != "notifications/subscriptions/acknowledged" || len(ids) != 2 || ids[0] != decided || ids[1] != cancelled {
				t.Fatalf("acknowledgement %v: want alice's two tasks only", ack)
			}
			w.decide(decided, elicitation.Submission{Decision: elicitation.DecisionSubmitted, Comment: "ok"})
			n := next("the decided task's notification")
			p, _ := n["params"].(map[string]any)
			if n["method"] != "notifications/tasks" || p["taskId"] != decided || p["status"] != "completed" || p["resultType"] != nil {
				t.Fatalf("notification %v", n)
			}
			if sc := tasktest.Structured(t, p["result"].(map[string]any)); sc["decision"] != "submitted" || sc["comment"] != "ok" {
				t.Fatalf("inline result %v", sc)
			}
			c.Must("tasks/cancel", cancelled)
			if n := next("the cancelled task's notification"); n["method"] != "notifications/tasks" || n["params"].(map[string]any)["status"] != "cancelled" {
				t.Fatalf("notification %v", n)
			}
			if end := next("the listen's result"); end["id"] != float64(9) || end["result"] == nil {
				t.Fatalf("the listen ended with %v", end)
			}
			// The notification's result was the first fetch; a poll after it
			// carries the result without another audit entry.
			c.Must("tasks/get", decided)
			if n := w.audited(decided, elicitation.ActionResultFetched); n != 1 {
				t.Fatalf("%d result_fetched entries, want 1", n)
			}
		})
	}
}

// openListen sends a 2026-07-28 subscriptions/listen (JSON-RPC id 9) for
// task ids as token's principal on the first instance and returns what
// reads its stream's messages one at a time (failing t when the stream
// ends first or nothing comes within 10 s); the carriers must never reach
// the wire.
func openListen(t *testing.T, w *world, token string, ids ...string) (next func(what string) map[string]any) {
	t.Helper()
	taskIDs, _ := json.Marshal(ids)
	body := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"taskIds":` + string(taskIDs) + `},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, w.servers[0].URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", ext)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	events := make(chan map[string]any, 16)
	go func() {
		defer close(events)
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			var msg map[string]any
			if b, _ := io.ReadAll(res.Body); json.Unmarshal(b, &msg) == nil {
				events <- msg
			}
			return
		}
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			if strings.Contains(d, "notifications/progress") || strings.Contains(d, "io.github.mcp-elicitation") {
				t.Errorf("a carrier reached the wire: %s", d)
			}
			var msg map[string]any
			if json.Unmarshal([]byte(d), &msg) == nil {
				events <- msg
			}
		}
	}()
	return func(what string) map[string]any {
		t.Helper()
		select {
		case m, ok := <-events:
			if !ok {
				t.Fatalf("the listen stream ended before %s", what)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10 s", what)
		}
		return nil
	}
}

// TestExtListenHoldsAWaitSlot: a listen for tasks holds one of its
// principal's wait slots (the same ones elicit_await takes) until it ends:
// past the share, a second listen is refused with CodeBusy and a sentence
// saying what to do, as is an elicit_await; once the first listen ended, a
// listen is acknowledged again.
func TestExtListenHoldsAWaitSlot(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{waitShare: 1})
	c := w.connect("tok-alice", ext, -1, extCaps)
	first := startExt(t, c, "elicit_approval", approvalArgs)
	second := startExt(t, c, "elicit_approval", approvalArgs)
	next := openListen(t, w, "tok-alice", first)
	if ack := next("the first listen's acknowledgement"); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first listen: %v", ack)
	}
	refused := openListen(t, w, "tok-alice", second)("the second listen's answer")
	e, _ := refused["error"].(map[string]any)
	if e == nil || e["code"] != float64(mcptools.CodeBusy) || !strings.Contains(e["message"].(string), "this client (alice) already has 1") || !strings.Contains(e["message"].(string), "poll tasks/get") {
		t.Fatalf("second listen past the share: %v", refused)
	}
	w.decide(first, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if n := next("the first task's notification"); n["method"] != "notifications/tasks" {
		t.Fatalf("notification %v", n)
	}
	if end := next("the first listen's result"); end["result"] == nil {
		t.Fatalf("the first listen ended with %v", end)
	}
	again := openListen(t, w, "tok-alice", second)
	if ack := again("the third listen's acknowledgement"); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("a listen after the first ended: %v", ack)
	}
}

// A tasks/get, tasks/update or tasks/cancel whose Mcp-Name header is not
// its params.taskId (or is missing) is refused with -32020 and HTTP 400,
// as the SDK refuses the headers it checks itself (SEP-2243), before the
// task is read; with the header right, the method answers as always.
func TestExtNameMismatchIsHTTP400(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{stateless: true})
	c := w.connect("tok-alice", ext, -1, extCaps)
	id := startExt(t, c, "elicit_approval", approvalArgs)
	post := func(method, name string) (int, string) {
		body := `{"jsonrpc":"2.0","id":9,"method":"` + method + `","params":{"taskId":"` + id + `","inputResponses":{"x":{}},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		req, _ := http.NewRequest(http.MethodPost, w.servers[0].URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok-alice")
		req.Header.Set("Mcp-Protocol-Version", ext)
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		for _, name := range []string{"another-task", ""} {
			if code, body := post(m, name); code != http.StatusBadRequest || !strings.Contains(body, `"code":-32020`) || !strings.Contains(body, `"id":9`) {
				t.Errorf("%s with Mcp-Name %q: HTTP %d %s, want 400 and -32020", m, name, code, body)
			}
		}
	}
	if code, body := post("tasks/get", id); code != http.StatusOK || !strings.Contains(body, `"status":"working"`) {
		t.Errorf("tasks/get with the right Mcp-Name: HTTP %d %s", code, body)
	}
}

// TestExtResultFailed: a decided task whose result the server cannot
// produce (an internal failure) is failed, with the JSON-RPC internal
// error inline and no result, as the extension keeps failed for
// protocol-level errors; its message sends the agent to elicit_result,
// which returns the answer once the failure passes.
func TestExtResultFailed(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			var fault atomic.Bool
			o := ep.o
			o.wrapStore = func(st elicitation.Store) elicitation.Store { return recordFault{Store: st, on: &fault} }
			w := newWorld(t, o)
			c := w.connect("tok-alice", ext, -1, extCaps)
			id := startExt(t, c, "elicit_approval", approvalArgs)
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
			fault.Store(true) // the decided record cannot be read back
			for range 2 {
				got := c.Must("tasks/get", id)
				e, _ := got["error"].(map[string]any)
				if got["status"] != "failed" || got["result"] != nil || e["code"] != float64(jsonrpc.CodeInternalError) ||
					!strings.Contains(e["message"].(string), "could not produce") || !strings.Contains(got["statusMessage"].(string), "elicit_result") {
					t.Fatalf("tasks/get of a task whose result cannot be produced: %v", got)
				}
				if strings.Contains(got["statusMessage"].(string), recordFaultText) || strings.Contains(e["message"].(string), recordFaultText) {
					t.Fatalf("the internal error's text reached the agent: %v", got)
				}
			}
			fault.Store(false)
			res, err := c.CS.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolResult, Arguments: map[string]any{"elicitationId": id}})
			if err != nil || res.IsError {
				t.Fatalf("elicit_result once the failure passed: %v %v", res, err)
			}
			if sc := res.StructuredContent.(map[string]any); sc["decision"] != "submitted" {
				t.Fatalf("elicit_result once the failure passed: %v", sc)
			}
		})
	}
}

// TestExtReviewAnswerMalformed: a tasks/update whose answer to the review
// link is not an answer (not an object with action accept, decline or
// cancel) is refused with -32602 and the reason, records nothing, and
// leaves the link outstanding, as a malformed answer to the host's form
// is: only an answer retires the input request.
func TestExtReviewAnswerMalformed(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", ext, -1, extURLCaps)
			id := startExt(t, c, "elicit_approval", approvalArgs)
			for _, bad := range []any{"opened", 42, map[string]any{}, map[string]any{"action": "clicked"}} {
				_, e := c.Do("tasks/update", id, map[string]any{"review": bad})
				tasktest.WantCode(t, fmt.Sprintf("review answer %v", bad), e, jsonrpc.CodeInvalidParams, "inputResponses.review")
			}
			if got := c.Must("tasks/get", id); got["status"] != "input_required" {
				t.Fatalf("tasks/get after malformed answers: %v, want the link still outstanding", got)
			}
			if n := w.audited(id, elicitation.ActionPushAnswered); n != 0 {
				t.Fatalf("push_answered %d times after malformed answers, want 0", n)
			}
			if _, e := c.Do("tasks/update", id, map[string]any{"review": map[string]any{"action": "decline"}}); e != nil {
				t.Fatalf("tasks/update with an answer: %v", e)
			}
			if got := c.Must("tasks/get", id); got["status"] != "working" {
				t.Fatalf("tasks/get after the answer: %v", got)
			}
		})
	}
}

// TestExtMalformedParams: a tasks request whose params do not decode (a
// taskId that is not a string, inputResponses that are not an object) is
// refused with -32602 and a sentence
// naming the member, never the decoder's text (Go type names, the params
// echoed back), and decides nothing.
func TestExtMalformedParams(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{stateless: true})
	c := w.connect("tok-alice", ext, -1, extCaps)
	id := startExt(t, c, "elicit_approval", approvalArgs)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	for _, c := range []struct {
		method, params, want string
	}{
		{"tasks/update", `{"taskId":"` + id + `","inputResponses":"x",` + meta + `}`, "params.inputResponses"},
		{"tasks/get", `{"taskId":5,` + meta + `}`, "params.taskId"},
		{"tasks/cancel", `{"taskId":["` + id + `"],` + meta + `}`, "params.taskId"},
	} {
		body := `{"jsonrpc":"2.0","id":9,"method":"` + c.method + `","params":` + c.params + `}`
		req, _ := http.NewRequest(http.MethodPost, w.servers[0].URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok-alice")
		req.Header.Set("Mcp-Protocol-Version", ext)
		req.Header.Set("Mcp-Method", c.method)
		req.Header.Set("Mcp-Name", id)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		got := string(b)
		if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, c.want) || strings.Contains(got, "mcptools.") || strings.Contains(got, "Go struct") || strings.Contains(got, "unmarshal") {
			t.Errorf("%s %s: %s, want -32602 naming %s in this server's words", c.method, c.params, got, c.want)
		}
	}
	if got := c.Must("tasks/get", id); got["status"] != "working" {
		t.Fatalf("the task after malformed requests: %v, want working", got)
	}
}
