package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

const countingConfig = `
upstream:
  url: %q
elicitation:
  enabled: %v
tools:
  echo:
    elicit:
      message: "What should echo say?"
      fields:
        message:
          description: "The text to echo."
  count:
    elicit:
      fields:
        n:
          type: string
          description: "How many, as text."
  deploy:
    required: [region]
`

// TestCallOutcomes drives every decision of the tools/call middleware
// against an upstream that counts its calls, for each kind of downstream
// client.
func TestCallOutcomes(t *testing.T) {
	t.Parallel()
	type tc struct {
		name        string
		disabled    bool // elicitation.enabled: false
		noElicit    bool // the client declares no elicitation capability
		tool        string
		args        any
		answer      func(*mcp.ElicitParams) (*mcp.ElicitResult, error)
		wantCalls   int64  // upstream calls of tool
		wantForms   int    // forms shown
		wantArgs    string // upstream arguments, when called
		wantReason  string // proxy outcome, when not called
		wantMissing []string
	}
	tests := []tc{
		{name: "complete call forwarded untouched", tool: "echo", args: json.RawMessage(`{"message":"hi","extra":{"z":1,"a":[1.50,2]}}`),
			wantCalls: 1, wantArgs: `{"message":"hi","extra":{"z":1,"a":[1.50,2]}}`},
		{name: "zero and false are present", tool: "count", args: json.RawMessage(`{"n":0,"verbose":false}`),
			wantCalls: 1, wantArgs: `{"n":0,"verbose":false}`},
		{name: "missing field elicited and merged", tool: "echo", args: json.RawMessage(`{"other":true}`),
			answer: accept(map[string]any{"message": "from the form"}), wantCalls: 1, wantForms: 1,
			wantArgs: `{"other":true,"message":"from the form"}`},
		{name: "blank string elicited", tool: "echo", args: json.RawMessage(`{"message":"  "}`),
			answer: accept(map[string]any{"message": "filled"}), wantCalls: 1, wantForms: 1, wantArgs: `{"message":"filled"}`},
		{name: "extra answers not merged", tool: "echo", args: map[string]any{},
			answer: accept(map[string]any{"message": "m", "injected": "x"}), wantCalls: 1, wantForms: 1, wantArgs: `{"message":"m"}`},
		{name: "declined", tool: "echo", args: map[string]any{}, answer: action("decline"),
			wantForms: 1, wantReason: plan.ReasonDeclined, wantMissing: []string{"message"}},
		{name: "cancelled", tool: "echo", args: map[string]any{}, answer: action("cancel"),
			wantForms: 1, wantReason: plan.ReasonCancelled, wantMissing: []string{"message"}},
		{name: "accepted without the field", tool: "echo", args: map[string]any{}, answer: accept(map[string]any{"message": " "}),
			wantForms: 1, wantReason: plan.ReasonStillMissing, wantMissing: []string{"message"}},
		{name: "unsupported", tool: "echo", args: map[string]any{}, noElicit: true,
			wantReason: plan.ReasonUnsupported, wantMissing: []string{"message"}},
		{name: "disabled", tool: "echo", args: map[string]any{}, disabled: true, answer: accept(map[string]any{"message": "x"}),
			wantReason: plan.ReasonDisabled, wantMissing: []string{"message"}},
		{name: "sensitive field blocks without a form", tool: "deploy", args: map[string]any{"service": "web"},
			answer: accept(map[string]any{"api_key": "leak"}), wantReason: plan.ReasonSensitive, wantMissing: []string{"api_key"}},
		{name: "explicit secret passes, configured field elicited", tool: "deploy", args: json.RawMessage(`{"service":"web","api_key":"k"}`),
			answer: accept(map[string]any{"region": "eu"}), wantCalls: 1, wantForms: 1, wantArgs: `{"service":"web","api_key":"k","region":"eu"}`},
		{name: "object field not elicitable", tool: "configure", args: map[string]any{},
			answer: accept(map[string]any{}), wantReason: plan.ReasonNotElicitable, wantMissing: []string{"settings"}},
		{name: "configured string type converted to upstream integer", tool: "count", args: map[string]any{},
			answer: accept(map[string]any{"n": "7"}), wantCalls: 1, wantForms: 1, wantArgs: `{"n":7}`},
		{name: "converted value must satisfy upstream schema", tool: "count", args: map[string]any{},
			answer: accept(map[string]any{"n": "70"}), wantForms: 1, wantReason: plan.ReasonInvalidResponse, wantMissing: []string{"n"}},
		{name: "unconvertible value refused", tool: "count", args: map[string]any{},
			answer: accept(map[string]any{"n": "seven"}), wantForms: 1, wantReason: plan.ReasonInvalidResponse, wantMissing: []string{"n"}},
	}
	u := newCountingUpstream(t)
	enabled := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	disabled := startProxy(t, fmt.Sprintf(countingConfig, u.URL, false))
	for _, d := range downstreams {
		for _, tt := range tests {
			t.Run(d.name+"/"+tt.name, func(t *testing.T) {
				p := enabled
				if tt.disabled {
					p = disabled
				}
				var e *elicitor
				if !tt.noElicit {
					e = &elicitor{answer: tt.answer}
					if e.answer == nil {
						e.answer = func(*mcp.ElicitParams) (*mcp.ElicitResult, error) {
							t.Error("unexpected form")
							return nil, errors.New("unexpected form")
						}
					}
				}
				cs := connect(t, p, d, e, nil)
				before := u.count(tt.tool)
				res := callTool(t, cs, tt.tool, tt.args)
				if got := u.count(tt.tool) - before; got != tt.wantCalls {
					t.Errorf("upstream called %d times, want %d", got, tt.wantCalls)
				}
				if e != nil && e.count() != tt.wantForms {
					t.Errorf("%d forms shown, want %d", e.count(), tt.wantForms)
				}
				if tt.wantReason == "" {
					if res.IsError {
						t.Fatalf("call failed: %s", text(res))
					}
					if got := u.lastArgs(tt.tool); got != tt.wantArgs {
						t.Errorf("upstream arguments\n got %s\nwant %s", got, tt.wantArgs)
					}
					return
				}
				o := outcome(t, res)
				if o.Reason != tt.wantReason || o.Tool != tt.tool || strings.Join(o.MissingOrAmbiguous, ",") != strings.Join(tt.wantMissing, ",") {
					t.Errorf("outcome %+v, want reason %s, missing %q", o, tt.wantReason, tt.wantMissing)
				}
				wantErr, wantStatus := "elicitation_required", "needs_elicitation"
				switch tt.wantReason {
				case plan.ReasonSensitive:
					wantErr, wantStatus = "tool_call_blocked", "reject"
				case plan.ReasonStillMissing:
					wantErr = "tool_call_blocked"
				}
				if o.Error != wantErr || o.Status != wantStatus || !strings.Contains(o.Message, tt.tool) {
					t.Errorf("outcome %+v: want error %s, status %s and an English message", o, wantErr, wantStatus)
				}
			})
		}
	}
	// Every downstream client above, on stdio-like pipes and on HTTP, went
	// through one upstream session per proxy.
	if n := len(slices.Collect(u.server.Sessions())); n != 2 {
		t.Errorf("the upstream saw %d sessions from two proxies, want 2", n)
	}
}

// TestFormContent checks what the user is asked: only the missing fields,
// with the configured message, types and descriptions.
func TestFormContent(t *testing.T) {
	t.Parallel()
	u := newCountingUpstream(t)
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	for _, d := range downstreams {
		t.Run(d.name, func(t *testing.T) {
			e := &elicitor{answer: accept(map[string]any{"message": "x", "n": "3", "region": "eu"})}
			cs := connect(t, p, d, e, nil)

			callTool(t, cs, "echo", map[string]any{})
			got := e.last()
			if got.Message != "What should echo say?" || got.Mode != "form" {
				t.Errorf("echo form: message %q, mode %q", got.Message, got.Mode)
			}
			if s := schemaJSON(t, got.RequestedSchema); s != `{"type":"object","properties":{"message":{"type":"string","description":"The text to echo."}},"required":["message"]}` {
				t.Errorf("echo requestedSchema = %s", s)
			}

			callTool(t, cs, "count", map[string]any{})
			if s := schemaJSON(t, e.last().RequestedSchema); s != `{"type":"object","properties":{"n":{"type":"string","description":"How many, as text."}},"required":["n"]}` {
				t.Errorf("count requestedSchema = %s", s)
			}
			if !strings.Contains(e.last().Message, "count") || !strings.Contains(e.last().Message, "n") {
				t.Errorf("default message %q does not name the tool and field", e.last().Message)
			}

			callTool(t, cs, "deploy", map[string]any{"service": "s", "api_key": "k"})
			if s := schemaJSON(t, e.last().RequestedSchema); s != `{"type":"object","properties":{"region":{"type":"string"}},"required":["region"]}` {
				t.Errorf("deploy requestedSchema = %s", s)
			}
		})
	}
}

// schemaJSON renders a requested schema with its keys in the order
// received (a map from the SDK client is re-sorted, so compare as data).
func schemaJSON(t testing.TB, s any) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(b, &v)
	want := map[string]any{}
	_ = want
	// Normalise to the proxy's order: type, properties, required.
	m, _ := v.(map[string]any)
	props, _ := json.Marshal(orderedProps(m["properties"]))
	req, _ := json.Marshal(m["required"])
	return fmt.Sprintf(`{"type":%q,"properties":%s,"required":%s}`, m["type"], props, req)
}

type kv struct {
	k string
	v any
}

type ordered []kv

func (o ordered) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, x := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(x.k)
		v, _ := json.Marshal(x.v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// orderedProps orders each property's keys as the proxy writes them.
func orderedProps(v any) ordered {
	props, _ := v.(map[string]any)
	var out ordered
	for name, p := range props {
		pm, _ := p.(map[string]any)
		var po ordered
		for _, k := range []string{"type", "title", "description", "enum", "minimum", "maximum", "format", "default"} {
			if x, ok := pm[k]; ok {
				po = append(po, kv{k, x})
			}
		}
		out = append(out, kv{name, po})
	}
	return out
}

// TestElicitationCapabilityForms checks that "elicitation": {} (the
// 2025-06-18 form) counts as form support.
func TestElicitationCapabilityForms(t *testing.T) {
	t.Parallel()
	u := newCountingUpstream(t)
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	for _, d := range []downstream{{"pipe/2025-06-18", false, "2025-06-18"}, {"http/2025-06-18", true, "2025-06-18"}} {
		t.Run(d.name, func(t *testing.T) {
			e := &elicitor{answer: accept(map[string]any{"message": "old client"})}
			cs := connect(t, p, d, e, nil)
			before := u.count("echo")
			res := callTool(t, cs, "echo", map[string]any{})
			if res.IsError || e.count() != 1 || u.count("echo")-before != 1 {
				t.Errorf("2025-06-18 client: isError=%v forms=%d calls=%d: %s", res.IsError, e.count(), u.count("echo")-before, text(res))
			}
		})
	}
	// A client that declares only URL elicitation cannot fill forms.
	t.Run("url only", func(t *testing.T) {
		e := &elicitor{answer: accept(map[string]any{"message": "x"})}
		cs := connect(t, p, downstreams[0], e, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}},
		}})
		if o := outcome(t, callTool(t, cs, "echo", map[string]any{})); o.Reason != plan.ReasonUnsupported {
			t.Errorf("url-only client: reason %s", o.Reason)
		}
	})
}

// TestElicitationFailure checks that a client whose form fails gets the
// structured failure, and the upstream is not called.
func TestElicitationFailure(t *testing.T) {
	t.Parallel()
	u := newCountingUpstream(t)
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	for _, d := range []downstream{downstreams[0], downstreams[2]} { // session-ful clients
		t.Run(d.name, func(t *testing.T) {
			e := &elicitor{answer: func(*mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, errors.New("form crashed") }}
			cs := connect(t, p, d, e, nil)
			if o := outcome(t, callTool(t, cs, "echo", map[string]any{})); o.Reason != plan.ReasonFailed || o.Status != "needs_elicitation" {
				t.Errorf("outcome %+v", o)
			}
			if n := u.count("echo"); n != 0 {
				t.Errorf("upstream called %d times", n)
			}
		})
	}
}

// TestMultiRoundTripState checks the retry of a 2026-07-28 client that
// drives the rounds itself: a valid retry is forwarded once, a forged or
// mismatched one is refused without calling the upstream.
func TestMultiRoundTripState(t *testing.T) {
	t.Parallel()
	u := newCountingUpstream(t)
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	for _, d := range []downstream{downstreams[1], downstreams[3]} {
		t.Run(d.name, func(t *testing.T) {
			cs := connect(t, p, d, &elicitor{answer: action("cancel")}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
			ctx := callCtx(t)
			args := json.RawMessage(`{"other":1}`)
			first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			if !first.NeedsInput() || first.RequestState == "" {
				t.Fatalf("first round: want input_required with state, got %+v", first)
			}
			ir, ok := first.InputRequests["missing_required_fields"].(*mcp.ElicitParams)
			if !ok || ir.Message != "What should echo say?" {
				t.Fatalf("input requests %+v", first.InputRequests)
			}
			answer := mcp.InputResponseMap{"missing_required_fields": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"message": "round two"}}}
			retry := func(state string, args json.RawMessage) *mcp.CallToolResult {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args, InputResponses: answer, RequestState: state})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			before := u.count("echo")
			for name, res := range map[string]*mcp.CallToolResult{
				"forged state":    retry(first.RequestState[:len(first.RequestState)-3]+"AAA", args),
				"garbage state":   retry("not-a-state", args),
				"changed args":    retry(first.RequestState, json.RawMessage(`{"other":2}`)),
				"no input answer": func() *mcp.CallToolResult { answer = nil; r := retry(first.RequestState, args); return r }(),
			} {
				if o := outcome(t, res); o.Reason != plan.ReasonFailed {
					t.Errorf("%s: outcome %+v", name, o)
				}
			}
			if n := u.count("echo") - before; n != 0 {
				t.Fatalf("refused retries reached the upstream %d times", n)
			}
			answer = mcp.InputResponseMap{"missing_required_fields": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"message": "round two"}}}
			res := retry(first.RequestState, args)
			if res.IsError || u.count("echo")-before != 1 || u.lastArgs("echo") != `{"other":1,"message":"round two"}` {
				t.Errorf("valid retry: isError=%v calls=%d args=%s text=%s", res.IsError, u.count("echo")-before, u.lastArgs("echo"), text(res))
			}
		})
	}
}

// TestForwarding checks progress, cancellation, upstream errors and _meta
// cleaning on forwarded calls.
func TestForwarding(t *testing.T) {
	t.Parallel()
	u := newCountingUpstream(t)
	gotMeta := make(chan map[string]any, 10)
	u.addTool("meta", `{"type":"object"}`, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		gotMeta <- req.Params.Meta
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	u.addTool("progress", `{"type":"object"}`, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprint("step ", i)})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	cancelled := make(chan struct{}, 10)
	started := make(chan struct{}, 10)
	u.addTool("slow", `{"type":"object"}`, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return &mcp.CallToolResult{}, nil
		}
	})
	u.addTool("fails", `{"type":"object"}`, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32042, Message: "quota exhausted", Data: json.RawMessage(`{"retryAfter":30}`)}
	})
	u.addTool("tool-error", `{"type":"object"}`, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}, StructuredContent: json.RawMessage(`{"z":1,"a":2}`)}, nil
	})
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))

	for _, d := range downstreams {
		t.Run(d.name, func(t *testing.T) {
			type prog struct {
				token any
				n     float64
				msg   string
			}
			progress := make(chan prog, 10)
			cs := connect(t, p, d, nil, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				offer(progress, prog{r.Params.ProgressToken, r.Params.Progress, r.Params.Message})
			}})
			ctx := context.Background()

			t.Run("meta cleaned", func(t *testing.T) {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "meta", Arguments: map[string]any{}, Meta: mcp.Meta{"app/trace": "t1"}})
				if err != nil {
					t.Fatal(err)
				}
				m := <-gotMeta
				if m["app/trace"] != "t1" {
					t.Errorf("custom _meta lost: %v", m)
				}
				for k := range m {
					if strings.HasPrefix(k, "io.modelcontextprotocol/") {
						t.Errorf("downstream protocol key %s forwarded", k)
					}
				}
			})

			t.Run("progress", func(t *testing.T) {
				params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
				params.SetProgressToken("my-token")
				res, err := cs.CallTool(ctx, params)
				if err != nil || text(res) != "done" {
					t.Fatalf("call: %v %v", res, err)
				}
				for i := 1; i <= 3; i++ {
					select {
					case pr := <-progress:
						if pr.token != "my-token" || pr.n != float64(i) || pr.msg != fmt.Sprint("step ", i) {
							t.Errorf("progress %d: %+v", i, pr)
						}
					case <-time.After(10 * time.Second):
						t.Fatalf("progress %d not passed on", i)
					}
				}
			})

			t.Run("cancellation", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				errc := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
					errc <- err
				}()
				<-started
				cancel()
				if err := <-errc; err == nil {
					t.Error("cancelled call succeeded")
				}
				select {
				case <-cancelled:
				case <-time.After(20 * time.Second):
					t.Fatal("cancellation did not reach the upstream")
				}
			})

			t.Run("upstream protocol error", func(t *testing.T) {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fails", Arguments: map[string]any{}})
				var we *jsonrpc.Error
				if !errors.As(err, &we) || we.Code != -32042 || we.Message != "quota exhausted" || string(we.Data) != `{"retryAfter":30}` {
					t.Errorf("error = %#v", err)
				}
			})

			t.Run("upstream tool error", func(t *testing.T) {
				res := callTool(t, cs, "tool-error", map[string]any{})
				b, _ := json.Marshal(res.StructuredContent)
				if !res.IsError || text(res) != "disk full" || string(b) != `{"a":2,"z":1}` {
					t.Errorf("tool error result: %+v %s", res, b)
				}
			})
		})
	}
}

// TestToolListChanged checks that a change of the upstream's tools is
// followed and passed on.
func TestToolListChanged(t *testing.T) {
	t.Parallel()
	u := newCountingUpstream(t)
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	for _, d := range []downstream{downstreams[0], downstreams[2]} {
		t.Run(d.name, func(t *testing.T) {
			changed := make(chan struct{}, 10)
			cs := connect(t, p, d, nil, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				offer(changed, struct{}{})
			}})
			name := "added-" + strings.ReplaceAll(d.name, "/", "-")
			u.addTool(name, `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, nil)
			// A list_changed may still be on its way from the previous
			// subtest's removal: list again on each one until the one for
			// this addition (each notice reflects a real change).
			deadline := time.After(20 * time.Second)
			for found := false; !found; {
				select {
				case <-changed:
				case <-deadline:
					t.Fatalf("%s missing from tools/list after the change, or tools/list_changed not passed on", name)
				}
				res, err := cs.ListTools(callCtx(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range res.Tools {
					found = found || tool.Name == name
				}
			}
			if res := callTool(t, cs, name, map[string]any{"q": "x"}); res.IsError || u.count(name) != 1 {
				t.Errorf("calling the new tool: %s (calls %d)", text(res), u.count(name))
			}
			u.server.RemoveTools(name)
			select {
			case <-changed:
			case <-time.After(20 * time.Second):
				t.Fatal("removal not passed on")
			}
		})
	}
}

// TestPagedToolList checks that a paginated upstream listing is passed on
// page by page with the upstream's cursors.
func TestPagedToolList(t *testing.T) {
	t.Parallel()
	up := mcp.NewServer(&mcp.Implementation{Name: "paged"}, &mcp.ServerOptions{PageSize: 2})
	var want []string
	for i := range 5 {
		name := fmt.Sprintf("tool-%d", i)
		want = append(want, name)
		up.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(srv.Close) // after the proxy's cleanup has closed its upstream session
	p := startProxy(t, fmt.Sprintf("upstream:\n  url: %q\n", srv.URL))
	for _, d := range downstreams {
		t.Run(d.name, func(t *testing.T) {
			cs := connect(t, p, d, nil, nil)
			var got []string
			pages := 0
			cursor := ""
			for {
				res, err := cs.ListTools(callCtx(t), &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, tool := range res.Tools {
					got = append(got, tool.Name)
				}
				if res.NextCursor == "" {
					break
				}
				cursor = res.NextCursor
			}
			if strings.Join(got, ",") != strings.Join(want, ",") || pages != 3 {
				t.Errorf("listed %q in %d pages, want %q in 3", got, pages, want)
			}
			// A tool from the last page is known to the required-field check.
			if o := outcome(t, callTool(t, cs, "tool-4", map[string]any{})); o.Reason != plan.ReasonUnsupported {
				t.Errorf("tool-4 without q: %+v", o)
			}
		})
	}
}

// TestMultiRoundTripAnswerOutsideForm: a 2026-07-28 retry whose answer
// does not fit the form asked (deploy's region, which the configuration
// requires and the upstream's schema does not declare, asked as a string)
// is refused as a session client's is (the SDK checks a session's answer
// against the form), elicitation_failed, and the upstream is not called; an
// answer that fits is forwarded once.
func TestMultiRoundTripAnswerOutsideForm(t *testing.T) {
	t.Parallel()
	u := newCountingUpstream(t)
	p := startProxy(t, fmt.Sprintf(countingConfig, u.URL, true))
	for _, d := range []downstream{downstreams[1], downstreams[3]} {
		t.Run(d.name, func(t *testing.T) {
			cs := connect(t, p, d, &elicitor{answer: action("cancel")}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
			ctx := callCtx(t)
			args := json.RawMessage(`{"service":"api","api_key":"k"}`)
			first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			if !first.NeedsInput() || first.RequestState == "" {
				t.Fatalf("first round: want input_required with state, got %+v", first)
			}
			retry := func(content map[string]any) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "deploy", Arguments: args, RequestState: first.RequestState,
					InputResponses: mcp.InputResponseMap{"missing_required_fields": &mcp.ElicitResult{Action: "accept", Content: content}}})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			before := u.count("deploy")
			for name, region := range map[string]any{"an object": map[string]any{"zone": "a"}, "a number": 7, "a list": []any{"eu"}} {
				if o := outcome(t, retry(map[string]any{"region": region})); o.Reason != plan.ReasonFailed || o.Status != "needs_elicitation" {
					t.Errorf("%s for a string field: outcome %+v, want elicitation_failed", name, o)
				}
			}
			if n := u.count("deploy") - before; n != 0 {
				t.Fatalf("answers outside the form reached the upstream %d times (last arguments %s)", n, u.lastArgs("deploy"))
			}
			if res := retry(map[string]any{"region": "eu-west-1"}); res.IsError || u.count("deploy")-before != 1 || u.lastArgs("deploy") != `{"service":"api","api_key":"k","region":"eu-west-1"}` {
				t.Errorf("an answer that fits: isError=%v calls=%d args=%s", res.IsError, u.count("deploy")-before, u.lastArgs("deploy"))
			}
		})
	}
}
