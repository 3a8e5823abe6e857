package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// formHost is a go-sdk client that declared form elicitation (the
// 2025-06-18 spelling, elicitation: {}) and answers each form with the
// next of its answers, keeping what it was shown. A form the server
// cancels (notifications/cancelled) while no answer came is reported on
// cancelled, and answered with late, as a host that answers anyway would.
type formHost struct {
	shown     chan *mcp.ElicitParams
	answers   chan *mcp.ElicitResult
	cancelled chan struct{}
	late      *mcp.ElicitResult
}

func connectFormHost(t *testing.T, e *env, version string, auto bool) (*mcp.ClientSession, *formHost) {
	t.Helper()
	return connectFormHostWith(t, e, version, auto, &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}})
}

// connectFormHostWith is connectFormHost declaring caps.
func connectFormHostWith(t *testing.T, e *env, version string, auto bool, caps *mcp.ClientCapabilities) (*mcp.ClientSession, *formHost) {
	t.Helper()
	h := &formHost{shown: make(chan *mcp.ElicitParams, 8), answers: make(chan *mcp.ElicitResult, 8), cancelled: make(chan struct{}, 8), late: &mcp.ElicitResult{Action: "cancel"}}
	client := mcp.NewClient(&mcp.Implementation{Name: "form-host", Version: "1"}, &mcp.ClientOptions{
		Capabilities:   caps,
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: !auto},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.shown <- req.Params
			select {
			case a := <-h.answers:
				return a, nil
			case <-ctx.Done():
				h.cancelled <- struct{}{}
				return h.late, nil
			case <-time.After(10 * time.Second):
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: e.servers[0].URL + "/mcp", HTTPClient: &http.Client{Transport: roundTrip{e: e}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, h
}

func (h *formHost) form(t *testing.T) *mcp.ElicitParams {
	t.Helper()
	select {
	case p := <-h.shown:
		return p
	default:
		t.Fatal("the host was shown no form")
		return nil
	}
}

// schemaOf is a form's requestedSchema as plain JSON values.
func schemaOf(t *testing.T, p *mcp.ElicitParams) map[string]any {
	t.Helper()
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

var threeOptions = []map[string]any{{"id": "a", "label": "Alpha"}, {"id": "b", "label": "Beta"}, {"id": "c"}}

// TestHostFormOnSession: on a session, askInHost's first elicit_await
// shows the host's form (the SDK sends elicitation/create and re-runs the
// tool with the answer), and accept, decline and cancel land as the page's
// would, recorded as decided via host-form.
func TestHostFormOnSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{hostForm: true})
	cs, host := connectFormHost(t, e, proto20251125, true)

	// Accept of a multi-select within its bounds, with a comment.
	c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions, "minSelections": 1, "maxSelections": 2, "askInHost": true})
	if !strings.HasPrefix(c["hostForm"].(string), "asked in the host") {
		t.Fatalf("hostForm = %q", c["hostForm"])
	}
	host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": []any{"b", "c"}, "comment": "both fine"}}
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"]}); got["status"] != "submitted" {
		t.Fatalf("await after accept = %v", got)
	}
	form := host.form(t)
	sch := schemaOf(t, form)
	sel := sch["properties"].(map[string]any)["selection"].(map[string]any)
	if form.Mode != "form" || form.Message != "Which?" || sel["type"] != "array" || sel["minItems"] != 1.0 || sel["maxItems"] != 2.0 {
		t.Errorf("form shown: %+v, selection %v", form, sel)
	}
	wantChoices := `[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"},{"const":"c","title":"c"}]`
	if b, _ := json.Marshal(sel["items"].(map[string]any)["anyOf"]); string(b) != wantChoices {
		t.Errorf("choices = %s, want %s", b, wantChoices)
	}
	res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": c["elicitationId"]})
	want := map[string]any{"status": "consumed", "decision": "submitted", "context": nil, "formSubmission": nil, "selectedIds": []any{"b", "c"}, "comment": "both fine", "decidedBy": nil, "decidedVia": "host-form"}
	if !jsonEqual(res, want) {
		t.Errorf("result = %v, want %v", res, want)
	}

	// Decline of an approval with a form: its requestedSchema, plus a comment.
	c = ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Deploy?", "context": map[string]any{"service": "api"},
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"reason": map[string]any{"type": "string", "maxLength": 20}}, "required": []string{"reason"}},
		"askInHost":       true})
	host.answers <- &mcp.ElicitResult{Action: "decline"}
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"]}); got["status"] != "declined" {
		t.Fatalf("await after decline = %v", got)
	}
	form = host.form(t)
	props := schemaOf(t, form)["properties"].(map[string]any)
	if _, ok := props["reason"]; !ok || props["comment"] == nil || !strings.Contains(form.Message, `"service": "api"`) {
		t.Errorf("approval form: message %q, properties %v", form.Message, props)
	}
	if res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": c["elicitationId"]}); res["decision"] != "declined" || res["decidedVia"] != "host-form" {
		t.Errorf("declined result = %v", res)
	}

	// Cancel decides nothing: the wait goes on and the page still decides.
	c = ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "One?", "options": threeOptions, "askInHost": true})
	host.answers <- &mcp.ElicitResult{Action: "cancel"}
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 0.2}); got["status"] != "pending" {
		t.Fatalf("await after cancel = %v", got)
	}
	if sel := schemaOf(t, host.form(t))["properties"].(map[string]any)["selection"].(map[string]any); sel["type"] != "string" || sel["oneOf"] == nil {
		t.Errorf("single select = %v", sel)
	}
	// The host is asked once: the next await only waits.
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 0.1}); got["status"] != "pending" || len(host.shown) != 0 {
		t.Fatalf("second await = %v, %d forms shown", got, len(host.shown))
	}
	e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"a"}})
	if res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": c["elicitationId"]}); res["decidedVia"] != "page" {
		t.Errorf("result after the page decided = %v", res)
	}
}

// TestHostFormBoundedOnSession: on a session, a host form still open when
// elicit_await's wait bound elapses does not hold the call: the await
// returns pending exactly as at any bound, the host's elicitation/create
// is cancelled (notifications/cancelled), the host's late answer decides
// nothing, the next await does not show the form again, and the review
// page still decides.
func TestHostFormBoundedOnSession(t *testing.T) {
	// Not in parallel: a 400 ms wait bound holds the host form's round trip.
	e := newEnv(t, envOptions{hostForm: true, maxWait: 400 * time.Millisecond})
	cs, host := connectFormHost(t, e, proto20251125, true)
	host.late = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": "b"}}
	c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "One?", "options": threeOptions, "askInHost": true})
	id := c["elicitationId"].(string)

	// No answer comes: the host's handler holds the form until cancelled.
	done := make(chan callResult, 1)
	go func() {
		r, err := callE(cs, mcptools.ToolAwait, map[string]any{"elicitationId": id})
		if err != nil {
			r = callResult{isError: true, text: "harness: " + err.Error()}
		}
		done <- r
	}()
	held := receive(t, done, 10*time.Second)
	if held.isError || held.structured["status"] != "pending" {
		t.Fatalf("await with the form open = %v %q", held.structured, held.text)
	}
	if f := host.form(t); f.Mode != "form" || f.Message != "One?" {
		t.Errorf("form shown: %+v", f)
	}
	select {
	case <-host.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the host's elicitation/create was never cancelled")
	}

	// The next await only waits (the form was shown once), and returns what
	// the bounded one did.
	next, err := callE(cs, mcptools.ToolAwait, map[string]any{"elicitationId": id})
	if err != nil {
		t.Fatal(err)
	}
	if next.text != held.text || !jsonEqual(next.structured, held.structured) || next.isError != held.isError {
		t.Errorf("await at the bound with the form open = %v %q; a plain await at its bound = %v %q", held.structured, held.text, next.structured, next.text)
	}
	if len(host.shown) != 0 {
		t.Errorf("the form was shown again")
	}
	tr, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range tr.Entries {
		if en.Action == elicitation.ActionDecided {
			t.Fatalf("decided with the form cancelled: %+v", en)
		}
	}
	e.decide(t, c, elicitation.Submission{Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"a"}})
	res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
	if res["decidedVia"] != "page" || !jsonEqual(res["selectedIds"], []any{"a"}) {
		t.Errorf("result after the page decided = %v", res)
	}
}

// TestHostFormHoldsAWaitSlot: a session's host form holds the
// elicit_await call while the form is open, so it takes one of the
// principal's wait slots: with a share of one, a second elicit_await of the
// same principal is busy until the first returns.
func TestHostFormHoldsAWaitSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{hostForm: true, maxWait: 2 * time.Second, waitShare: 1})
	cs, host := connectFormHost(t, e, proto20251125, true)
	c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "One?", "options": threeOptions, "askInHost": true})
	other := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Other?", "context": map[string]any{"n": 1}})
	done := make(chan callResult, 1)
	go func() {
		r, err := callE(cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"]})
		if err != nil {
			r = callResult{isError: true, text: "harness: " + err.Error()}
		}
		done <- r
	}()
	select { // the form is open: the first call holds its slot
	case <-host.shown:
	case <-time.After(10 * time.Second):
		t.Fatal("the host was shown no form")
	}
	busy, err := callE(cs, mcptools.ToolAwait, map[string]any{"elicitationId": other["elicitationId"], "waitSeconds": 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if !busy.isError || !strings.Contains(busy.text, "already has 1 elicit_await calls waiting") {
		t.Fatalf("a second await while the host's form is open = %v %q, want busy", busy.structured, busy.text)
	}
	if r := receive(t, done, 10*time.Second); r.isError || r.structured["status"] != "pending" {
		t.Fatalf("the form's await = %v %q", r.structured, r.text)
	}
	after, err := callE(cs, mcptools.ToolAwait, map[string]any{"elicitationId": other["elicitationId"], "waitSeconds": 0.1})
	if err != nil || after.isError {
		t.Fatalf("an await after the form's returned = %v %q, %v", after.structured, after.text, err)
	}
}

// answerInHost sends the host's answer as a 2026-07-28 client's retry does.
func answerInHost(cs *mcp.ClientSession, id, state string, answer *mcp.ElicitResult) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.1},
		RequestState: state, InputResponses: mcp.InputResponseMap{"hostForm": answer},
	})
}

// TestHostFormSessionless: on 2026-07-28 the form travels in an
// input-required result and the answer in the retry, across two stateless
// instances. An answer that breaks the schema or the bounds is refused
// with a clear error and decides nothing; an answer after expiry, or after
// the page decided, decides nothing and the wait reports what happened.
func TestHostFormSessionless(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, instances: 2, hostForm: true})
	cs, _ := connectFormHost(t, e, proto20260728, false)
	ask := func(args map[string]any) (map[string]any, string) {
		t.Helper()
		args["askInHost"] = true
		tool := mcptools.ToolSelection
		if _, ok := args["requestedSchema"]; ok {
			tool = mcptools.ToolApproval
		}
		c := ok(t, cs, tool, args)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait, Arguments: map[string]any{"elicitationId": c["elicitationId"]}})
		if err != nil {
			t.Fatal(err)
		}
		p, ok := res.InputRequests["hostForm"].(*mcp.ElicitParams)
		if !res.NeedsInput() || !ok || p.Mode != "form" || res.RequestState == "" {
			t.Fatalf("first await: %+v", res)
		}
		return c, res.RequestState
	}
	refused := func(res *mcp.CallToolResult, err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res); !res.IsError || !strings.HasPrefix(got, "invalid_argument: ") || !strings.Contains(got, want) {
			t.Errorf("answer: %q, want an invalid_argument error saying %q", got, want)
		}
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"reason": map[string]any{"type": "string", "maxLength": 5}, "ok": map[string]any{"type": "boolean"}}, "required": []string{"reason"}}

	c, state := ask(map[string]any{"message": "Deploy?", "requestedSchema": schema})
	id := c["elicitationId"].(string)
	res, err := answerInHost(cs, id, state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "far too long"}})
	refused(res, err, "reason: must be at most 5 characters")
	res, err = answerInHost(cs, id, state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}})
	refused(res, err, "reason: is required")
	res, err = answerInHost(cs, id, state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "fine", "ok": "yes"}})
	refused(res, err, "ok: has the wrong type of value")
	if st := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); st["status"] != "pending" {
		t.Fatalf("a refused answer decided: %v", st)
	}
	// A state for another request is refused; a good answer lands once.
	other, otherState := ask(map[string]any{"message": "Which?", "options": threeOptions, "maxSelections": 2})
	_, err = answerInHost(cs, id, otherState, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "ok"}})
	if je := (*jsonrpc.Error)(nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "belongs to another request") {
		t.Errorf("foreign state: %v, want a -32602 error", err)
	}
	res, err = answerInHost(cs, id, state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "ok", "ok": true, "comment": "go"}})
	if err != nil || res.IsError || !strings.Contains(text(res), `"submitted"`) {
		t.Fatalf("good answer: %q, %v", text(res), err)
	}
	r := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": id})
	if string(mustJSON(t, r["formSubmission"])) != `{"ok":true,"reason":"ok"}` || r["comment"] != "go" || r["decidedVia"] != "host-form" {
		t.Errorf("result = %v", r)
	}

	// The selection's bounds hold in the host too.
	oid := other["elicitationId"].(string)
	res, err = answerInHost(cs, oid, otherState, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": []any{"a", "b", "c"}}})
	refused(res, err, "pick between 1 and 2 options; 3 were picked")
	res, err = answerInHost(cs, oid, otherState, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": []any{"zzz"}}})
	refused(res, err, `"zzz" is not one of the options`)
	// The page answers first: the host's later answer decides nothing.
	e.decide(t, other, elicitation.Submission{Decision: elicitation.DecisionDeclined})
	res, err = answerInHost(cs, oid, otherState, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": []any{"a"}}})
	if err != nil || res.IsError || !strings.Contains(text(res), `"declined"`) {
		t.Fatalf("answer after the page decided: %q, %v", text(res), err)
	}
	if r := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": oid}); r["decision"] != "declined" || r["decidedVia"] != "page" {
		t.Errorf("result after both answered = %v", r)
	}

	// An answer after expiry decides nothing.
	late, lateState := ask(map[string]any{"message": "Late?", "options": threeOptions, "timeoutSeconds": 60})
	e.clock.Add(2 * time.Minute)
	// Its state expired with it: the retry is refused (-32602).
	_, err = answerInHost(cs, late["elicitationId"].(string), lateState, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"selection": "a"}})
	if je := (*jsonrpc.Error)(nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "expired") {
		t.Fatalf("answer after expiry: %v, want a -32602 error saying the state expired", err)
	}
	tr, err := e.svc.OperatorAudit(context.Background(), late["elicitationId"].(string))
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range tr.Entries {
		if en.Action == elicitation.ActionDecided {
			t.Errorf("an answer after expiry was recorded: %+v", en)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostFormRefused: the host is not asked, and the creation result says
// why, where the deployment does not allow it, where the host declared no
// form elicitation, and on a server with reviewer sign-in.
func TestHostFormRefused(t *testing.T) {
	t.Parallel()
	args := map[string]any{"message": "Which?", "options": threeOptions, "askInHost": true}
	for _, tc := range []struct {
		name string
		o    envOptions
		caps bool
		want string
	}{
		{"deployment off", envOptions{}, true, "this server does not ask in hosts"},
		{"no form elicitation", envOptions{hostForm: true}, false, "your host did not declare form elicitation"},
		{"sign-in", envOptions{hostForm: true, signIn: true}, true, "this server signs reviewers in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.o)
			var cs *mcp.ClientSession
			var host *formHost
			if tc.caps {
				cs, host = connectFormHost(t, e, proto20251125, true)
			} else {
				cs = e.connect(t, proto20251125, "")
			}
			c := ok(t, cs, mcptools.ToolSelection, args)
			if got, _ := c["hostForm"].(string); !strings.HasPrefix(got, "not asked in the host: ") || !strings.Contains(got, tc.want) {
				t.Errorf("hostForm = %q, want it to say %q", got, tc.want)
			}
			if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"], "waitSeconds": 0.1}); got["status"] != "pending" {
				t.Errorf("await = %v", got)
			}
			if host != nil && len(host.shown) != 0 {
				t.Errorf("the host was shown a form")
			}
		})
	}
	// Without askInHost the result has no hostForm at all.
	e := newEnv(t, envOptions{hostForm: true})
	cs, _ := connectFormHost(t, e, proto20251125, true)
	if c := ok(t, cs, mcptools.ToolSelection, map[string]any{"message": "Which?", "options": threeOptions}); c["hostForm"] != nil {
		t.Errorf("hostForm without askInHost: %v", c["hostForm"])
	}
}

// TestHostFormInputRequiredRound: a go-sdk client on 2026-07-28 that
// answers input-required rounds itself (its default) is shown the form in
// elicit_await's first round, and its retry lands the answer, across two
// stateless instances that share only the store and the keys.
func TestHostFormInputRequiredRound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, instances: 2, hostForm: true})
	cs, host := connectFormHost(t, e, proto20260728, true)
	c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Ship?", "context": map[string]any{"build": 9}, "askInHost": true})
	host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"comment": "ship it"}}
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"]}); got["status"] != "submitted" {
		t.Fatalf("await = %v", got)
	}
	if f := host.form(t); f.Mode != "form" || !strings.Contains(f.Message, `"build": 9`) {
		t.Errorf("form shown: %+v", f)
	}
	res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": c["elicitationId"]})
	if res["decision"] != "submitted" || res["comment"] != "ship it" || res["decidedVia"] != "host-form" {
		t.Errorf("result = %v", res)
	}
}

// TestHostFormAskedAgain: on 2026-07-28 a retry that carries the form's
// request state but not the form's answer (inputResponses missing or
// keyed otherwise) is asked the form again under a fresh state, and the
// answer under that state lands; nothing is decided meanwhile.
func TestHostFormAskedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{stateless: true, hostForm: true})
	cs, _ := connectFormHost(t, e, proto20260728, false)
	c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Deploy?", "askInHost": true,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
	id := c["elicitationId"].(string)
	await := func(state string, inputs mcp.InputResponseMap) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcptools.ToolAwait,
			Arguments: map[string]any{"elicitationId": id, "waitSeconds": 0.1}, RequestState: state, InputResponses: inputs})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	asked := func(res *mcp.CallToolResult, when string) string {
		t.Helper()
		p, isForm := res.InputRequests["hostForm"].(*mcp.ElicitParams)
		if !res.NeedsInput() || !isForm || p.Mode == "url" || res.RequestState == "" {
			t.Fatalf("%s: %+v, want the host's form asked", when, res)
		}
		return res.RequestState
	}
	first := asked(await("", nil), "first await")
	for name, inputs := range map[string]mcp.InputResponseMap{
		"no inputResponses": nil,
		"another key":       {"wrong_key": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}},
	} {
		if again := asked(await(first, inputs), name); again == first {
			t.Errorf("%s: asked again under the same state", name)
		}
	}
	if st := ok(t, cs, mcptools.ToolStatus, map[string]any{"elicitationId": id}); st["status"] != "pending" {
		t.Fatalf("asking again decided: %v", st)
	}
	again := asked(await(first, nil), "asked again")
	res := await(again, mcp.InputResponseMap{"hostForm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}})
	if res.IsError || !strings.Contains(text(res), `"submitted"`) {
		t.Fatalf("the answer under the fresh state: %q", text(res))
	}
}

// TestHostFormOnURLHost: a host that declares URL elicitation as well as
// form is asked its form for an askInHost request, not pushed the review
// link at creation: a request is offered to a host once, and the push
// would take that offer.
func TestHostFormOnURLHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{hostForm: true, push: true})
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
	cs, host := connectFormHostWith(t, e, proto20251125, true, caps)
	c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Deploy?", "context": map[string]any{"service": "api"}, "askInHost": true})
	if !strings.HasPrefix(c["hostForm"].(string), "asked in the host") {
		t.Fatalf("hostForm = %q", c["hostForm"])
	}
	host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"comment": "go"}}
	if got := ok(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"]}); got["status"] != "submitted" {
		t.Fatalf("await = %v", got)
	}
	if form := host.form(t); form.Mode != "form" {
		t.Fatalf("the host was first shown a %q elicitation (%s), want its form", form.Mode, form.Message)
	}
	if res := ok(t, cs, mcptools.ToolResult, map[string]any{"elicitationId": c["elicitationId"]}); res["decidedVia"] != "host-form" || res["comment"] != "go" {
		t.Errorf("result = %v, want decided in the host's form", res)
	}
}

// TestHostFormAnswerNotLogged: a host's answer outside its form on a
// session (here a value longer than its maxLength, as a pasted key would be)
// is refused to the agent as before, and the server's log says the form
// was not answered without the value the host sent: an answer is an
// argument value, and may be a secret.
func TestHostFormAnswerNotLogged(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	e := newEnv(t, envOptions{hostForm: true, log: slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	cs, host := connectFormHost(t, e, proto20251125, true)
	c := ok(t, cs, mcptools.ToolApproval, map[string]any{"message": "Rotate the key?", "askInHost": true,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"key": map[string]any{"type": "string", "maxLength": 8}}, "required": []string{"key"}}})
	const secret = "sk-live-4f9a0c1e77"
	host.answers <- &mcp.ElicitResult{Action: "accept", Content: map[string]any{"key": secret}}
	if got := fails(t, cs, mcptools.ToolAwait, map[string]any{"elicitationId": c["elicitationId"]}, elicitation.CodeInvalidArgument); !strings.Contains(got, "nothing was recorded") {
		t.Fatalf("await after an answer outside the form: %q", got)
	}
	log := out.String()
	if !strings.Contains(log, "host form not answered") {
		t.Fatalf("the log does not say the form was not answered:\n%s", log)
	}
	if strings.Contains(log, secret) {
		t.Fatalf("the host's answer reached the log:\n%s", log)
	}
}
