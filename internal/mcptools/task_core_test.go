package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	sealerpkg "github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
	"github.com/mcp-elicitation/elicitation/receipt"
)

const core = "2025-11-25"

// endpoints are the deployments the 2025-11-25 flavour is tested on: the
// local default (sessions) and --stateless with two processes that share
// only the store, requests alternating between them.
var endpoints = []struct {
	name string
	o    worldOptions
}{
	{"sessions", worldOptions{}},
	{"stateless", worldOptions{stateless: true, instances: 2}},
}

var approvalArgs = map[string]any{"message": "Ship build 7?", "context": map[string]any{"build": 7}}

func startTask(t *testing.T, c *client, tool string, args any) (id string, task map[string]any) {
	t.Helper()
	res, e := c.Start(tool, args, `{"ttl": 1800000}`)
	if e != nil {
		t.Fatalf("%s as a task: error %d %q", tool, e.Code, e.Message)
	}
	task, _ = res["task"].(map[string]any)
	id, _ = task["taskId"].(string)
	if id == "" || task["status"] != "working" {
		t.Fatalf("CreateTaskResult %v: want a working task", res)
	}
	if _, err := time.Parse(time.RFC3339Nano, task["createdAt"].(string)); err != nil {
		t.Fatalf("createdAt %v", task["createdAt"])
	}
	wantTTL := 30 * time.Minute // the requested ttl, without a timeoutSeconds
	if m, ok := args.(map[string]any); ok && m["timeoutSeconds"] != nil {
		wantTTL = time.Duration(m["timeoutSeconds"].(int)) * time.Second
	}
	if task["ttl"] != float64(wantTTL.Milliseconds()) || task["pollInterval"] != float64(5000) {
		t.Fatalf("ttl %v pollInterval %v: want the request's %s and 5000", task["ttl"], task["pollInterval"], wantTTL)
	}
	meta, _ := res["_meta"].(map[string]any)
	if msg, _ := meta["io.modelcontextprotocol/model-immediate-response"].(string); !strings.Contains(msg, id) || !strings.Contains(msg, "/review/"+id+"/") {
		t.Fatalf("immediate response %q: want the task id and the review link", msg)
	}
	return id, task
}

func TestCoreDecide(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", core, -1, nil)
			id, _ := startTask(t, c, "elicit_approval", approvalArgs)
			if got := c.Must("tasks/get", id); got["status"] != "working" || got["taskId"] != id || got["ttl"] == nil {
				t.Fatalf("tasks/get before the decision: %v", got)
			}
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted, Comment: "go"})
			got := c.Must("tasks/get", id)
			if got["status"] != "completed" || !strings.Contains(got["statusMessage"].(string), "answered") {
				t.Fatalf("tasks/get after the decision: %v", got)
			}
			res := c.Must("tasks/result", id)
			sc := tasktest.Structured(t, res)
			w.mu.Lock()
			link := w.created[id]
			w.mu.Unlock()
			if sc["decision"] != "submitted" || sc["elicitationId"] != id || sc["reviewUrl"] != link || sc["comment"] != "go" || sc["status"] != "consumed" {
				t.Fatalf("tasks/result: %v", sc)
			}
			if rt, _ := res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any); rt["taskId"] != id {
				t.Fatalf("tasks/result _meta: %v", res["_meta"])
			}
			// Fetching again answers the same; each fetch is audited, as
			// elicit_result's are.
			if again := tasktest.Structured(t, c.Must("tasks/result", id)); again["decision"] != "submitted" {
				t.Fatalf("second tasks/result: %v", again)
			}
			if n := w.audited(id, elicitation.ActionResultFetched); n != 2 {
				t.Fatalf("audit has %d result_fetched entries, want 2", n)
			}
		})
	}
}

// Where the deployment signs receipts, a task's result carries one, as
// elicit_result's does: for this task's request, verified by the key set.
func TestCoreReceipt(t *testing.T) {
	t.Parallel()
	k, err := sealerpkg.ParseKeys("k1:" + pagetoken.GenerateSecret())
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := signing.Derive(k)
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			o := ep.o
			o.receipts = keys
			w := newWorld(t, o)
			c := w.connect("tok-alice", core, -1, nil)
			id, _ := startTask(t, c, "elicit_approval", approvalArgs)
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionDeclined})
			sc := tasktest.Structured(t, c.Must("tasks/result", id))
			tok, _ := sc["receipt"].(string)
			r, err := receipt.Verify(tok, signing.JWKS(keys), receipt.Expect{Issuer: receiptIssuer, Txn: id, Outcome: receipt.OutcomeDeclined, Now: w.clock.Now()})
			if err != nil || r.Requester != "alice" {
				t.Fatalf("the task's receipt: %v %+v (result %v)", err, r, sc)
			}
		})
	}
}

func TestCoreDeclineWithComment(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", core, -1, nil)
			id, _ := startTask(t, c, "elicit_approval", approvalArgs)
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionDeclined, Comment: "not on a Friday"})
			got := c.Must("tasks/get", id)
			if got["status"] != "completed" || !strings.Contains(got["statusMessage"].(string), "declined") {
				t.Fatalf("tasks/get: %v", got)
			}
			if sc := tasktest.Structured(t, c.Must("tasks/result", id)); sc["decision"] != "declined" || sc["comment"] != "not on a Friday" {
				t.Fatalf("tasks/result: %v", sc)
			}
		})
	}
}

func TestCoreSelection(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", core, -1, nil)
			args := map[string]any{"message": "Which region?", "options": []any{map[string]any{"id": "eu", "label": "EU"}, map[string]any{"id": "us", "label": "US"}}}
			id, _ := startTask(t, c, "elicit_selection", args)
			// tasks/result waits for the decision (within the wait bound)
			// and returns it once made.
			done := make(chan map[string]any, 1)
			go func() {
				res, e := c.Do("tasks/result", id, nil)
				if e != nil {
					t.Errorf("tasks/result: %d %q", e.Code, e.Message)
				}
				done <- res
			}()
			w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"us"}})
			res := <-done
			if res == nil {
				return
			}
			if sc := tasktest.Structured(t, res); sc["decision"] != "submitted" || len(sc["selectedIds"].([]any)) != 1 || sc["selectedIds"].([]any)[0] != "us" {
				t.Fatalf("tasks/result: %v", sc)
			}
		})
	}
}

func TestCoreCancel(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", core, -1, nil)
			id, _ := startTask(t, c, "elicit_approval", approvalArgs)
			got := c.Must("tasks/cancel", id)
			if got["status"] != "cancelled" || got["taskId"] != id {
				t.Fatalf("tasks/cancel: %v", got)
			}
			if got := c.Must("tasks/get", id); got["status"] != "cancelled" || !strings.Contains(got["statusMessage"].(string), "withdrawn") {
				t.Fatalf("tasks/get after cancel: %v", got)
			}
			_, e := c.Do("tasks/cancel", id, nil)
			tasktest.WantCode(t, "cancel again", e, jsonrpc.CodeInvalidParams, "already cancelled")
			// The review page refuses it now.
			w.mu.Lock()
			u := w.created[id]
			w.mu.Unlock()
			key := u[strings.LastIndex(u, "/")+1:]
			if _, err := w.svc.Submit(context.Background(), id, key, elicitation.Submission{ID: "late", Decision: elicitation.DecisionSubmitted}); err == nil {
				t.Fatal("the review page accepted an answer to a cancelled task")
			}
			// tasks/result returns what elicit_result does: canceled.
			res := c.Must("tasks/result", id)
			if res["isError"] != true || !strings.HasPrefix(textOf(res), "canceled: ") {
				t.Fatalf("tasks/result of a cancelled task: %v", res)
			}
		})
	}
}

func TestCoreExpiry(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", core, -1, nil)
			id, _ := startTask(t, c, "elicit_approval", map[string]any{"message": "Ship?", "context": 1, "timeoutSeconds": 60})
			w.clock.Add(61 * time.Second)
			got := c.Must("tasks/get", id)
			if got["status"] != "failed" || !strings.Contains(got["statusMessage"].(string), "expired") || !strings.Contains(got["statusMessage"].(string), "ask again") {
				t.Fatalf("tasks/get after expiry: %v", got)
			}
			res := c.Must("tasks/result", id)
			if res["isError"] != true || !strings.HasPrefix(textOf(res), "expired: ") {
				t.Fatalf("tasks/result after expiry: %v", res)
			}
			_, e := c.Do("tasks/cancel", id, nil)
			tasktest.WantCode(t, "cancel an expired task", e, jsonrpc.CodeInvalidParams, "already failed")
		})
	}
}

// Another principal's task does not exist for them: the same error as an
// unknown id, for every method.
func TestCoreAnotherPrincipal(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			alice := w.connect("tok-alice", core, -1, nil)
			bob := w.connect("tok-bob", core, -1, nil)
			id, _ := startTask(t, alice, "elicit_approval", approvalArgs)
			for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
				_, foreign := bob.Do(m, id, nil)
				_, unknown := bob.Do(m, "no-such-task-id-0000000000", nil)
				tasktest.WantCode(t, m+" foreign", foreign, jsonrpc.CodeInvalidParams, "Task not found")
				if unknown == nil || foreign.Message != unknown.Message || foreign.Code != unknown.Code {
					t.Fatalf("%s: foreign %v, unknown %v: want the same error", m, foreign, unknown)
				}
			}
			if got := alice.Must("tasks/get", id); got["status"] != "working" {
				t.Fatalf("bob's attempts changed alice's task: %v", got)
			}
		})
	}
}

// A task outlives the processes: created, then every process restarted,
// then decided and read through the new ones.
func TestCoreRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{stateless: true})
	c := w.connect("tok-alice", core, -1, nil)
	id, _ := startTask(t, c, "elicit_approval", approvalArgs)
	w.restart(1)
	c = w.connect("tok-alice", core, -1, nil)
	if got := c.Must("tasks/get", id); got["status"] != "working" {
		t.Fatalf("tasks/get after the restart: %v", got)
	}
	w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if sc := tasktest.Structured(t, c.Must("tasks/result", id)); sc["decision"] != "submitted" || sc["reviewUrl"] == nil {
		t.Fatalf("tasks/result after the restart: %v", sc)
	}
}

// A task created through one process is polled and read through another
// that never saw it (each its own store handle, no shared memory).
func TestCoreOtherProcess(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{stateless: true, instances: 2})
	creator := w.connect("tok-alice", core, 0, nil)
	other := w.connect("tok-alice", core, 1, nil)
	id, _ := startTask(t, creator, "elicit_approval", approvalArgs)
	if got := other.Must("tasks/get", id); got["status"] != "working" {
		t.Fatalf("tasks/get through the other process: %v", got)
	}
	w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if sc := tasktest.Structured(t, other.Must("tasks/result", id)); sc["decision"] != "submitted" || sc["elicitationId"] != id {
		t.Fatalf("tasks/result through the other process: %v", sc)
	}
}

func TestCoreBadInput(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			c := w.connect("tok-alice", core, -1, nil)
			for _, tc := range []struct {
				name, tool, task string
				args             any
				code             int64
				contains         string
			}{
				{"forbidden tool", "elicit_status", `{}`, map[string]any{"elicitationId": "x"}, jsonrpc.CodeMethodNotFound, "tool elicit_status does not run as a task"},
				{"task not an object", "elicit_approval", `"soon"`, approvalArgs, jsonrpc.CodeInvalidParams, "params.task must be an object"},
				{"task null", "elicit_approval", `null`, approvalArgs, jsonrpc.CodeInvalidParams, "params.task must be an object"},
				{"ttl not a number", "elicit_approval", `{"ttl": "1h"}`, approvalArgs, jsonrpc.CodeInvalidParams, "params.task.ttl must be a number"},
				{"negative ttl", "elicit_approval", `{"ttl": -5}`, approvalArgs, jsonrpc.CodeInvalidParams, "params.task.ttl must be a number"},
				{"bad arguments", "elicit_approval", `{}`, map[string]any{"timeoutSeconds": 60}, jsonrpc.CodeInvalidParams, "no task was created"},
			} {
				_, e := c.Start(tc.tool, tc.args, tc.task)
				tasktest.WantCode(t, tc.name, e, tc.code, tc.contains)
			}
			_, e := c.Do("tasks/get", "", nil)
			tasktest.WantCode(t, "empty taskId", e, jsonrpc.CodeInvalidParams, "needs params.taskId")
			_, e = c.Do("tasks/update", "x", map[string]any{"review": map[string]any{}})
			tasktest.WantCode(t, "tasks/update on 2025-11-25", e, jsonrpc.CodeMethodNotFound, "tasks/update")
			// A call without params.task is answered as always.
			res, err := c.CS.CallTool(context.Background(), &mcp.CallToolParams{Name: "elicit_approval", Arguments: approvalArgs})
			if err != nil || res.IsError {
				t.Fatalf("plain call: %v %v", res, err)
			}
			// A tasks/get storm on one id: every answer the same, nothing
			// written.
			id, _ := startTask(t, c, "elicit_approval", approvalArgs)
			for range 200 {
				if got := c.Must("tasks/get", id); got["status"] != "working" {
					t.Fatalf("storm: %v", got)
				}
			}
			tr, _ := w.svc.Audit(context.Background(), "alice", id)
			if len(tr.Entries) != 1 {
				t.Fatalf("tasks/get wrote to the audit trail: %v", tr.Entries)
			}
		})
	}
}

// The declarations a 2025-11-25 client sees: the tasks capability and
// each tool's execution.taskSupport (read raw: the go-sdk's types drop
// both).
func TestCoreDeclarations(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{})
	post := func(session, body string) (http.Header, map[string]any) { return rawPost(t, w, session, body) }
	h, init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	caps := init["result"].(map[string]any)["capabilities"].(map[string]any)
	tasks, _ := caps["tasks"].(map[string]any)
	if _, ok := tasks["requests"].(map[string]any)["tools"].(map[string]any)["call"]; !ok || tasks["cancel"] == nil || tasks["list"] == nil {
		t.Fatalf("tasks capability %v: want requests.tools.call, cancel and list", tasks)
	}
	sid := h.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, list := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	seen := map[string]any{}
	for _, tool := range list["result"].(map[string]any)["tools"].([]any) {
		m := tool.(map[string]any)
		seen[m["name"].(string)] = m["execution"].(map[string]any)["taskSupport"]
	}
	want := map[string]any{"elicit_approval": "optional", "elicit_selection": "optional", "elicit_await": "forbidden", "elicit_status": "forbidden", "elicit_result": "forbidden", "elicit_cancel": "forbidden"}
	a, _ := json.Marshal(seen)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Fatalf("taskSupport %s, want %s", a, b)
	}
	// Tasks methods without params are answered (the SDK would panic
	// reading their _meta).
	_, noParams := post(sid, `{"jsonrpc":"2.0","id":3,"method":"tasks/get"}`)
	if e, _ := noParams["error"].(map[string]any); e == nil || e["code"] != float64(jsonrpc.CodeInvalidParams) {
		t.Fatalf("tasks/get without params: %v", noParams)
	}
	_, noParams = post(sid, `{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`)
	if r, _ := noParams["result"].(map[string]any); r == nil || r["tasks"] == nil {
		t.Fatalf("tasks/list without params: %v", noParams)
	}
	// An older session sees no tasks capability.
	_, old := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, ok := old["result"].(map[string]any)["capabilities"].(map[string]any)["tasks"]; ok {
		t.Fatal("a 2025-06-18 session was offered tasks")
	}
}

func textOf(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

// TestCoreResultBusy: a tasks/result past the server's limit of waits per
// principal answers at once that the task is still working, with the
// sentence of the limit that is full, never an internal error.
func TestCoreResultBusy(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{stateless: true, instances: 1, maxWait: 5 * time.Second, waitShare: 1})
	c1 := w.connect("tok-alice", core, -1, nil)
	c2 := w.connect("tok-alice", core, -1, nil)
	a, _ := startTask(t, c1, "elicit_approval", approvalArgs)
	b, _ := startTask(t, c2, "elicit_approval", approvalArgs)
	// Both wait at once with room for one: one holds the place until the
	// bound, the other is refused as soon as it asks.
	errs := make(chan *jsonrpc.Error, 2)
	for _, x := range []struct {
		c  *client
		id string
	}{{c1, a}, {c2, b}} {
		go func() {
			_, e := x.c.Do("tasks/result", x.id, nil)
			errs <- e
		}()
	}
	var busy, bound int
	for range 2 {
		e := <-errs
		switch {
		case e == nil:
			t.Fatal("tasks/result of a pending task returned a result")
		case e.Code == mcptools.CodeStillWorking && strings.Contains(e.Message, "elicit_await"):
			busy++
		case e.Code == mcptools.CodeStillWorking && strings.Contains(e.Message, "wait bound"):
			bound++
		default:
			t.Fatalf("tasks/result: error %d %q, want still working", e.Code, e.Message)
		}
	}
	if busy != 1 || bound != 1 {
		t.Fatalf("%d refused as busy and %d at the wait bound, want 1 and 1", busy, bound)
	}
}

// TestCoreTTL: a requested ttl is the request's lifetime where the call
// gives no timeoutSeconds (clamped to the tools' bounds), the agent's own
// timeoutSeconds wins, and the task's ttl is always the lifetime it got.
func TestCoreTTL(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{})
	c := w.connect("tok-alice", core, -1, nil)
	for _, tc := range []struct {
		name, task string
		args       map[string]any
		want       time.Duration
	}{
		{"ttl", `{"ttl": 600000}`, approvalArgs, 10 * time.Minute},
		{"ttl rounded up to the second", `{"ttl": 90500}`, approvalArgs, 91 * time.Second},
		{"timeoutSeconds wins", `{"ttl": 600000}`, map[string]any{"message": "m", "context": 1, "timeoutSeconds": 120}, 2 * time.Minute},
		{"below the minimum", `{"ttl": 1000}`, approvalArgs, time.Minute},
		{"above the maximum", `{"ttl": 1e15}`, approvalArgs, 24 * time.Hour},
		{"no ttl", `{}`, approvalArgs, time.Hour},
		{"ttl 0", `{"ttl": 0}`, approvalArgs, time.Hour},
	} {
		res, e := c.Start("elicit_approval", tc.args, tc.task)
		if e != nil {
			t.Fatalf("%s: error %d %q", tc.name, e.Code, e.Message)
		}
		task := res["task"].(map[string]any)
		if task["ttl"] != float64(tc.want.Milliseconds()) {
			t.Errorf("%s: ttl %v, want %d", tc.name, task["ttl"], tc.want.Milliseconds())
		}
		st, err := w.svc.Status(context.Background(), "alice", task["taskId"].(string))
		if err != nil || st.ExpiresAt.Sub(st.CreatedAt) != tc.want {
			t.Errorf("%s: the request lives %v (%v), want %v", tc.name, st.ExpiresAt.Sub(st.CreatedAt), err, tc.want)
		}
	}
}

// TestCoreStatusNotification: a session's GET stream, read raw, carries
// notifications/tasks/status when a task started on that session ends
// (here: decided), with the whole task; the carrier it travels in never
// reaches the wire.
func TestCoreStatusNotification(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{})
	id, events := rawTaskSession(t, w, `{"message":"Ship?","context":1}`)
	w.decide(id, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if p := nextStatus(t, events, 10*time.Second); p["taskId"] != id || p["status"] != "completed" || p["ttl"] == nil {
		t.Fatalf("notifications/tasks/status: %v", p)
	}
}

// TestCoreStatusNotificationExpiry: an expiry is told too (status failed,
// the sentence to ask again). It waits for the request's shortest
// lifetime, 60 s, in real time: the watch's timer is the wall clock's.
func TestCoreStatusNotificationExpiry(t *testing.T) {
	testenv.Slow(t, "a 60 s expiry")
	t.Parallel()
	w := newWorld(t, worldOptions{})
	id, events := rawTaskSession(t, w, `{"message":"Ship?","context":1,"timeoutSeconds":60}`)
	w.clock.Add(61 * time.Second)
	p := nextStatus(t, events, 75*time.Second)
	if p["taskId"] != id || p["status"] != "failed" || !strings.Contains(p["statusMessage"].(string), "ask again") {
		t.Fatalf("notifications/tasks/status: %v", p)
	}
}

// rawPost sends body as alice to the world's first server over raw HTTP,
// on session (with its protocol version, 2025-11-25) unless it is "", and
// returns the response's headers and its JSON-RPC answer (nil if none).
func rawPost(t *testing.T, w *world, session, body string) (http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.servers[0].URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", core)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var msg map[string]any
	_ = json.Unmarshal(tasktest.AnswerOf(b), &msg)
	return res.Header, msg
}

// rawTaskSession opens a 2025-11-25 session over raw HTTP with its GET
// stream, starts elicit_approval with args as a task on it, and returns the
// task id and the stream's data lines.
func rawTaskSession(t *testing.T, w *world, args string) (string, <-chan string) {
	t.Helper()
	sid, events := rawSession(t, w)
	return rawTask(t, w, sid, args), events
}

// rawSession opens a 2025-11-25 session over raw HTTP with its GET stream
// and returns the session id and the stream's data lines.
func rawSession(t *testing.T, w *world) (string, <-chan string) {
	t.Helper()
	post := func(session, body string) (http.Header, map[string]any) { return rawPost(t, w, session, body) }
	h, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := h.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	get, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, w.servers[0].URL+"/mcp", nil)
	get.Header.Set("Authorization", "Bearer tok-alice")
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", core)
	stream, err := http.DefaultClient.Do(get)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", stream, err)
	}
	t.Cleanup(func() { _ = stream.Body.Close() })
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
		close(events)
	}()
	return sid, events
}

// rawTask starts elicit_approval with args as a task on session sid and
// returns the task id.
func rawTask(t *testing.T, w *world, sid, args string) string {
	t.Helper()
	_, created := rawPost(t, w, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"elicit_approval","arguments":`+args+`,"task":{}}}`)
	id, _ := created["result"].(map[string]any)["task"].(map[string]any)["taskId"].(string)
	if id == "" {
		t.Fatalf("tools/call as a task: %v", created)
	}
	return id
}

// nextStatus returns the params of the next notifications/tasks/status on
// the stream, failing on a carrier on the wire.
func nextStatus(t *testing.T, events <-chan string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case d, ok := <-events:
			if !ok {
				t.Fatal("the GET stream ended before the notification")
			}
			if strings.Contains(d, "notifications/progress") || strings.Contains(d, "io.github.mcp-elicitation") {
				t.Fatalf("the carrier reached the wire: %s", d)
			}
			var msg struct {
				Method string         `json:"method"`
				Params map[string]any `json:"params"`
			}
			if json.Unmarshal([]byte(d), &msg) == nil && msg.Method == "notifications/tasks/status" {
				return msg.Params
			}
		case <-deadline:
			t.Fatalf("no notifications/tasks/status within %s", within)
		}
	}
}

// TestCoreStatusNotificationsBounded: what one principal's tasks hold in
// memory is bounded (#38): past its share of watches (here one), a task
// is not watched for its status notification (best effort: the host
// polls), another principal's tasks still are, and a watch that ends gives
// its slot back.
func TestCoreStatusNotificationsBounded(t *testing.T) {
	t.Parallel()
	w := newWorld(t, worldOptions{watchShare: 1})
	sid, events := rawSession(t, w)
	first := rawTask(t, w, sid, `{"message":"first","context":1}`)
	second := rawTask(t, w, sid, `{"message":"second","context":1}`)
	// The second task, past alice's share, is decided first, on the same
	// session: had it been watched, its notification would come first.
	w.decide(second, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	w.decide(first, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if p := nextStatus(t, events, 10*time.Second); p["taskId"] != first {
		t.Fatalf("the first notification is for %v, want the watched task %s (the second was past the share)", p["taskId"], first)
	}
	// The first watch ended and gave its slot back: a third task is watched.
	third := rawTask(t, w, sid, `{"message":"third","context":1}`)
	w.decide(third, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
	if p := nextStatus(t, events, 10*time.Second); p["taskId"] != third {
		t.Fatalf("after a slot came back: notification for %v, want %s", p["taskId"], third)
	}
}
