package mcptools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// TestFlowsDefault walks every flow through the default handler (the
// local server's) with a client of each protocol era: each gets the
// version it asked for (the session eras a session, 2026-07-28 the
// stateless handler), and the latest client 2026-07-28.
func TestFlowsDefault(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-03-26", "2025-06-18", proto20251125, proto20260728} {
		t.Run("client="+orLatest(version), func(t *testing.T) {
			e := newEnv(t, envOptions{})
			cs := e.connect(t, version, "")
			want := version
			if want == "" {
				want = proto20260728
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("negotiated protocol %q, want %q", got, want)
			}
			if sessionless := version == "" || version == proto20260728; sessionless != (cs.ID() == "") {
				t.Errorf("session id %q on protocol %s", cs.ID(), want)
			}
			runFlows(t, e, cs)
		})
	}
}

// TestFlowsStateless walks every flow through two stateless handler
// instances that share only the store, requests alternating between them,
// for clients speaking 2026-07-28 (no initialize; Mcp-* headers) and
// 2025-11-25.
func TestFlowsStateless(t *testing.T) {
	t.Parallel()
	for _, version := range []string{proto20260728, proto20251125} {
		t.Run("protocol="+version, func(t *testing.T) {
			e := newEnv(t, envOptions{stateless: true, instances: 2})
			cs := e.connect(t, version, "")
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated protocol %q, want %q", got, version)
			}
			before := e.next.Load()
			runFlows(t, e, cs)
			if n := e.next.Load() - before; n < 20 {
				t.Errorf("only %d HTTP requests reached the handlers", n)
			}
		})
	}
}

func orLatest(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}

func runFlows(t *testing.T, e *env, cs *mcp.ClientSession) {
	t.Run("ListTools", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			if tl.OutputSchema == nil {
				t.Errorf("%s has no output schema", tl.Name)
			}
		}
		slices.Sort(names)
		want := slices.Sorted(slices.Values(mcptools.ToolNames))
		if !slices.Equal(names, want) {
			t.Errorf("tools %v, want %v", names, want)
		}
	})

	t.Run("SelectionSingle", func(t *testing.T) {
		c := ok(t, cs, mcptools.ToolSelection, map[string]any{
			"message": "Pick a region",
			"options": []any{map[string]any{"id": "a", "label": "Alpha"}, map[string]any{"id": "b", "price": 3}, map[string]any{"id": "c"}},
		})
		id := checkCreated(t, e, c, elicitation.DefaultTimeout)
		if got := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "pending" || got["expiresAt"] != c["expiresAt"] {
			t.Errorf("status = %v, want pending and the creation's expiresAt %v", got, c["expiresAt"])
		}
		fails(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id}, elicitation.CodeNotDecided)

		// A waiter with a long bound is woken by the decision.
		start := time.Now()
		done := e.awaitAsync(t, cs, map[string]any{"elicitationId": id, "waitSeconds": 10})
		e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"b"}})
		r := receive(t, done, 10*time.Second)
		if r.isError || r.structured["status"] != "submitted" {
			t.Fatalf("elicit_await = %v %q, want submitted", r.structured, r.text)
		}
		if d := time.Since(start); d >= 10*time.Second {
			t.Errorf("elicit_await returned after %s, not before its 10 s bound", d)
		}
		if got := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "submitted" {
			t.Errorf("status after decision = %v", got)
		}
		res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
		want := map[string]any{"status": "consumed", "decision": "submitted", "context": nil, "formSubmission": nil, "selectedIds": []any{"b"}, "comment": nil, "decidedBy": nil, "decidedVia": "page"}
		if !jsonEqual(res, want) {
			t.Errorf("result = %v, want %v", res, want)
		}
		if got := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "consumed" {
			t.Errorf("status after result = %v, want consumed", got)
		}
		// An await after the fact returns at once.
		if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": id}); got["status"] != "consumed" {
			t.Errorf("await after result = %v, want consumed", got)
		}
		// Cancel after a decision is a conflict.
		fails(t, cs, mcptools.ToolCancel, map[string]any{"elicitationId": id}, elicitation.CodeConflict)
	})

	t.Run("SelectionMultiWithBounds", func(t *testing.T) {
		c := ok(t, cs, mcptools.ToolSelection, map[string]any{
			"message":       "Pick two or three",
			"options":       []any{map[string]any{"id": "w"}, map[string]any{"id": "x"}, map[string]any{"id": "y"}, map[string]any{"id": "z"}},
			"minSelections": 2, "maxSelections": 3,
			"timeoutSeconds": 120,
		})
		id := checkCreated(t, e, c, 120*time.Second)
		key := reviewKey(t, id, c["reviewUrl"].(string))
		// Too few and too many are refused and decide nothing.
		for _, picked := range [][]string{{"w"}, {"w", "x", "y", "z"}, {"w", "nope"}} {
			_, err := e.svc.Submit(context.Background(), id, key, elicitation.Submission{ID: "bad", Decision: elicitation.DecisionSubmitted, SelectedIDs: picked})
			if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
				t.Errorf("submit %v: %v, want invalid_argument", picked, err)
			}
		}
		if got := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "pending" {
			t.Fatalf("status after refused submissions = %v, want pending", got)
		}
		e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"z", "w", "y"}})
		if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": id}); got["status"] != "submitted" {
			t.Errorf("await = %v", got)
		}
		res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
		if !jsonEqual(res["selectedIds"], []any{"z", "w", "y"}) || res["decision"] != "submitted" {
			t.Errorf("result = %v, want z, w, y submitted", res)
		}
	})

	t.Run("ApprovalJSONMode", func(t *testing.T) {
		ctxv := map[string]any{"action": "deploy", "replicas": 3, "tags": []any{"a", "b"}, "nested": map[string]any{"ok": true}}
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{
			"message": "Deploy to production?", "context": ctxv,
			"labels": map[string]any{"submit": "Ship it", "decline": "Not yet"},
		})
		checkCreated(t, e, c, elicitation.DefaultTimeout)
		done := e.awaitAsync(t, cs, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 10})
		e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted})
		if r := receive(t, done, 10*time.Second); r.structured["status"] != "submitted" {
			t.Fatalf("await = %v %q", r.structured, r.text)
		}
		res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": c["elicitationId"]})
		want := map[string]any{"status": "consumed", "decision": "submitted", "context": ctxv, "formSubmission": nil, "selectedIds": nil, "comment": nil, "decidedBy": nil, "decidedVia": "page"}
		if !jsonEqual(res, want) {
			t.Errorf("result = %v, want %v", res, want)
		}
	})

	t.Run("ApprovalFormMode", func(t *testing.T) {
		schema := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"count":  map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
				"email":  map[string]any{"type": "string", "format": "email"},
				"urgent": map[string]any{"type": "boolean"},
				"ratio":  map[string]any{"type": "number"},
				"color":  map[string]any{"type": "string", "enum": []any{"red", "green"}},
				"sizes":  map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"s", "m", "l"}}},
			},
			"required": []any{"count", "email"},
		}
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Fill in the order", "requestedSchema": schema, "context": "order #7"})
		id := checkCreated(t, e, c, elicitation.DefaultTimeout)
		key := reviewKey(t, id, c["reviewUrl"].(string))
		// Wrong types are refused field by field, and decide nothing.
		_, err := e.svc.Submit(context.Background(), id, key, elicitation.Submission{ID: "bad", Decision: elicitation.DecisionSubmitted,
			Form: map[string][]string{"count": {"3.5"}, "email": {"not-an-email"}}})
		if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
			t.Errorf("bad form: %v, want invalid_argument", err)
		}
		e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted, Form: map[string][]string{
			"count": {"3"}, "email": {"a@example.com"}, "urgent": {"true"}, "ratio": {"0.25"}, "color": {"green"}, "sizes": {"s", "l"},
		}})
		if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": id}); got["status"] != "submitted" {
			t.Fatalf("await = %v", got)
		}
		r := call(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
		want := map[string]any{"count": 3, "email": "a@example.com", "urgent": true, "ratio": 0.25, "color": "green", "sizes": []any{"s", "l"}}
		if !jsonEqual(r.structured["formSubmission"], want) || r.structured["context"] != "order #7" {
			t.Errorf("result = %v, want formSubmission %v", r.structured, want)
		}
		// The integer stays an integer on the wire.
		var raw struct {
			FormSubmission map[string]json.RawMessage `json:"formSubmission"`
		}
		if err := json.Unmarshal([]byte(r.text), &raw); err != nil || string(raw.FormSubmission["count"]) != "3" {
			t.Errorf("count on the wire = %s (%v), want 3", raw.FormSubmission["count"], err)
		}
	})

	t.Run("DeclineRefine", func(t *testing.T) {
		c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": []any{map[string]any{"id": "only"}}})
		id := checkCreated(t, e, c, elicitation.DefaultTimeout)
		done := e.awaitAsync(t, cs, map[string]any{"elicitationId": id})
		e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionDeclined, Comment: "None fit: I need one <near> the station & cheaper\r\n"})
		if r := receive(t, done, 20*time.Second); r.structured["status"] != "declined" {
			t.Fatalf("await = %v %q, want declined", r.structured, r.text)
		}
		res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
		want := map[string]any{"status": "consumed", "decision": "declined", "context": nil, "formSubmission": nil, "selectedIds": nil, "comment": "None fit: I need one <near> the station & cheaper", "decidedBy": nil, "decidedVia": "page"}
		if !jsonEqual(res, want) {
			t.Errorf("result = %v, want %v", res, want)
		}
		// Approvals decline too.
		a := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "OK?", "context": map[string]any{"x": 1}})
		e.decide(t, a, elicitation.Submission{Decision: elicitation.DecisionDeclined})
		if res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": a["elicitationId"]}); res["decision"] != "declined" {
			t.Errorf("approval result = %v, want declined", res)
		}
	})

	t.Run("CancelWakesWaiter", func(t *testing.T) {
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Approve?", "context": []any{1, 2}})
		id := checkCreated(t, e, c, elicitation.DefaultTimeout)
		done := e.awaitAsync(t, cs, map[string]any{"elicitationId": id, "waitSeconds": 10})
		if got := ok(t, cs, mcptools.ToolCancel, map[string]any{"elicitationId": id}); got["status"] != "canceled" {
			t.Fatalf("cancel = %v", got)
		}
		if r := receive(t, done, 10*time.Second); r.isError || r.structured["status"] != "canceled" {
			t.Fatalf("await = %v %q, want canceled", r.structured, r.text)
		}
		if got := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "canceled" {
			t.Errorf("status = %v", got)
		}
		fails(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id}, elicitation.CodeCanceled)
		// Canceling again succeeds again; the reviewer can no longer decide.
		ok(t, cs, mcptools.ToolCancel, map[string]any{"elicitationId": id})
		key := reviewKey(t, id, c["reviewUrl"].(string))
		if _, err := e.svc.Submit(context.Background(), id, key, elicitation.Submission{ID: "late", Decision: elicitation.DecisionSubmitted}); elicitation.CodeOf(err) != elicitation.CodeCanceled {
			t.Errorf("submit after cancel: %v", err)
		}
	})

	t.Run("ExpiryByClock", func(t *testing.T) {
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Quick!", "context": true, "timeoutSeconds": 1})
		id := checkCreated(t, e, c, elicitation.MinTimeout) // 1 is clamped to 60
		e.clock.Add(elicitation.MinTimeout)
		start := time.Now()
		if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": id}); got["status"] != "expired" {
			t.Errorf("await = %v, want expired", got)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("await on an expired request took %s", d)
		}
		if got := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); got["status"] != "expired" || got["expiresAt"] != c["expiresAt"] {
			t.Errorf("status = %v, want expired", got)
		}
		fails(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id}, elicitation.CodeExpired)
		fails(t, cs, mcptools.ToolCancel, map[string]any{"elicitationId": id}, elicitation.CodeExpired)
	})

	t.Run("ResultFetchedTwice", func(t *testing.T) {
		c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Pick", "options": []any{map[string]any{"id": "p"}, map[string]any{"id": "q"}}})
		id := c["elicitationId"].(string)
		e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"q"}})
		first := call(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
		second := call(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
		if first.isError || first.text != second.text || first.structured["status"] != "consumed" {
			t.Errorf("results differ or fail: %q then %q", first.text, second.text)
		}
		tr, err := e.svc.Audit(context.Background(), elicitation.Anonymous, id)
		if err != nil {
			t.Fatal(err)
		}
		var fetched int
		for _, en := range tr.Entries {
			if en.Action == elicitation.ActionResultFetched {
				fetched++
				if en.Principal != elicitation.Anonymous {
					t.Errorf("result_fetched by %q, want %q", en.Principal, elicitation.Anonymous)
				}
			}
		}
		if fetched != 2 {
			t.Errorf("%d result_fetched audit entries, want 2: %+v", fetched, tr.Entries)
		}
		// The owner reads the same trail through elicit_status.
		st := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id, "includeAudit": true})
		audit, _ := st["audit"].(map[string]any)
		entries, _ := audit["entries"].([]any)
		var actions []string
		for _, en := range entries {
			actions = append(actions, en.(map[string]any)["action"].(string))
		}
		if got := strings.Join(actions, ","); got != "created,decided,result_fetched,result_fetched" {
			t.Errorf("elicit_status audit actions = %s", got)
		}
		if plain := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); plain["audit"] != nil {
			t.Errorf("audit returned without includeAudit: %v", plain)
		}
		fails(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id, "includeAudit": "yes"}, elicitation.CodeInvalidArgument)
	})

	t.Run("AwaitPendingWhenBoundElapses", func(t *testing.T) {
		c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Later", "context": 1})
		id := c["elicitationId"].(string)
		start := time.Now()
		if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": id, "waitSeconds": 0.2}); got["status"] != "pending" {
			t.Errorf("await = %v, want pending", got)
		}
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("await returned pending after %s, before its 0.2 s bound", d)
		}
		ok(t, cs, mcptools.ToolCancel, map[string]any{"elicitationId": id})
	})
}

// checkCreated checks a creation result and returns its id.
func checkCreated(t *testing.T, e *env, c map[string]any, ttl time.Duration) string {
	t.Helper()
	id, _ := c["elicitationId"].(string)
	if len(id) < 22 || c["status"] != "pending" {
		t.Fatalf("created = %v", c)
	}
	u, _ := c["reviewUrl"].(string)
	reviewKey(t, id, u)
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("reviewUrl %q is not derived from the request's host", u)
	}
	e.mu.Lock()
	hooked := e.created[id]
	e.mu.Unlock()
	if hooked != u {
		t.Errorf("OnCreated got %q, want %q", hooked, u)
	}
	exp, err := time.Parse(time.RFC3339, c["expiresAt"].(string))
	if want := e.clock.Now().Add(ttl); err != nil || !exp.Equal(want) {
		t.Errorf("expiresAt %v (%v), want %v", c["expiresAt"], err, want)
	}
	return id
}

// TestClientRecorded: the MCP client's clientInfo is kept with each request
// it creates, from the session's initialize (stateful) or from the
// 2026-07-28 request's _meta (stateless). A stateless 2025-11-25 call
// carries neither, so nothing is recorded.
func TestClientRecorded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stateless bool
		version   string
		want      string
	}{
		{"stateful", false, "", "mcptools-test 1"},
		{"stateless 2026-07-28", true, proto20260728, "mcptools-test 1"},
		{"stateless 2025-11-25", true, proto20251125, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{stateless: tc.stateless})
			cs := e.connect(t, tc.version, "")
			for _, c := range []map[string]any{
				ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": []any{map[string]any{"id": "a"}}}),
				ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "OK?", "context": 1}),
			} {
				id := c["elicitationId"].(string)
				rv, err := e.svc.OpenReview(context.Background(), id, reviewKey(t, id, c["reviewUrl"].(string)))
				if err != nil {
					t.Fatal(err)
				}
				if got := rv.Payload.Client.String(); got != tc.want {
					t.Errorf("client recorded as %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// A call's _meta audit note is recorded with the entries it writes.
func TestAuditNote(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	cs := e.connect(t, "", "")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Meta: mcp.Meta{mcptools.AuditNoteMeta: "gate=confirm tool=rm digest=sha256:ab"},
		Name: mcptools.ToolApproval, Arguments: map[string]any{"message": "OK?", "context": 1},
	})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var c struct{ ElicitationID string }
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &c)
	trail, err := e.svc.OperatorAudit(ctx, c.ElicitationID)
	if err != nil {
		t.Fatal(err)
	}
	if d := trail.Entries[0].Detail; d != "approval; gate=confirm tool=rm digest=sha256:ab" {
		t.Errorf("created entry's detail %q", d)
	}
}
