package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/gate"
)

// stdioUpstreamEnv makes the test binary a stdio MCP upstream (see
// TestMain): a go-sdk server whose tools record every call they receive.
const stdioUpstreamEnv = "GATE_TEST_STDIO_UPSTREAM"

// rawLogEnv, when set, names a file the stdio upstream appends every byte
// it reads to: what the proxy sent it, exactly.
const rawLogEnv = "GATE_TEST_RAW_LOG"

func TestMain(m *testing.M) {
	if os.Getenv(stdioUpstreamEnv) == "1" {
		var in io.Reader = os.Stdin
		if path := os.Getenv(rawLogEnv); path != "" {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				os.Exit(2)
			}
			in = io.TeeReader(os.Stdin, f)
		}
		_ = recordingUpstream().Run(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(in), Writer: os.Stdout})
		return
	}
	os.Exit(m.Run())
}

// recordingUpstream is a real go-sdk MCP server: delete_file and wipe (no
// annotations: destructive by the specification's defaults) record the
// raw arguments of each call they receive; calls (read-only) returns the
// records, so that a test on the other side of a stdio pipe can count.
func recordingUpstream() *mcp.Server {
	var mu sync.Mutex
	var records []string
	s := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	record := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		records = append(records, req.Params.Name+" "+string(req.Params.Arguments))
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Params.Name + " ran"}}}, nil
	}
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	s.AddTool(&mcp.Tool{Name: "delete_file", Description: "Deletes a file.", InputSchema: schema}, record)
	s.AddTool(&mcp.Tool{Name: "wipe", Description: "Wipes a disk.", InputSchema: schema}, record)
	s.AddTool(&mcp.Tool{Name: "calls", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			b, _ := json.Marshal(records)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	return s
}

// shapeGated starts the proxy with its gate in front of the recording
// upstream, both on stdio ("stdio": the client on a pipe, through the fast
// path) or both on streamable HTTP ("http"), and returns a client of it.
// serviceURL, if set, is the gate's elicitation service.
func shapeGated(t *testing.T, transport, serviceURL, rest string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var up string
	if transport == "stdio" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		up = fmt.Sprintf("upstream:\n  command: %q\n  env:\n    %s: \"1\"\n", self, stdioUpstreamEnv)
	} else {
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstreamOnce(t) }, nil))
		t.Cleanup(srv.Close)
		up = fmt.Sprintf("upstream:\n  url: %q\n", srv.URL)
	}
	if serviceURL != "" {
		up += fmt.Sprintf("elicitation_service:\n  url: %q\n  wait_seconds: 1\n", serviceURL)
	}
	cfg, err := config.ParseWith([]byte(up+rest), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(ctx, proxy.Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	g, closer, err := gate.Open(ctx, cfg, gate.OpenOptions{Version: "test", Upstream: p.CallUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closer.Close() })
	g.Install(p.Planner())
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	var cs *mcp.ClientSession
	if transport == "stdio" {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ss, err := p.Server().Connect(ctx, p.WrapTransport(&mcp.IOTransport{Reader: sr, Writer: sw}), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		srv := httptest.NewServer(p.HTTPHandler())
		t.Cleanup(srv.Close)
		cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// upstreamOnce returns the test's one HTTP recording upstream, so that
// every HTTP session of the proxy reaches the same records.
func upstreamOnce(t *testing.T) *mcp.Server {
	httpUpstreams.Lock()
	defer httpUpstreams.Unlock()
	if httpUpstreams.m == nil {
		httpUpstreams.m = map[string]*mcp.Server{}
	}
	s, ok := httpUpstreams.m[t.Name()]
	if !ok {
		s = recordingUpstream()
		httpUpstreams.m[t.Name()] = s
	}
	return s
}

var httpUpstreams struct {
	sync.Mutex
	m map[string]*mcp.Server
}

// upstreamCalls returns what the upstream received, through the proxy.
func upstreamCalls(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	r := call(t, cs, "calls", map[string]any{})
	var got []string
	if err := json.Unmarshal([]byte(r.text), &got); err != nil {
		t.Fatalf("calls: %q: %v", r.text, err)
	}
	return got
}

const shapeRules = "policies:\n  confirm_destructive:\n    enabled: true\ntools:\n  delete_file:\n    confirm_if:\n      always: true\n"

// Arguments that are not a JSON object never skip the gate: on the stdio
// fast path and over HTTP (the SDK path), a call a rule could hold is
// refused when its arguments are an array, a string, a number or a
// boolean, and held (here: refused for want of a channel) when they are
// null, which MCP reads as no arguments; the upstream receives none of
// them. An object is held as always.
func TestArgumentsThatAreNotAnObjectAreGated(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			cs := shapeGated(t, transport, "", shapeRules)
			for _, tool := range []string{"delete_file", "wipe"} {
				for _, tc := range []struct {
					args   string
					reason string
				}{
					{`["/etc/passwd"]`, gate.ReasonArgumentsNotObject},
					{`"/etc/passwd"`, gate.ReasonArgumentsNotObject},
					{`42`, gate.ReasonArgumentsNotObject},
					{`true`, gate.ReasonArgumentsNotObject},
					{`null`, gate.ReasonConfirmationRequired},
					{`{"path":"/etc/passwd"}`, gate.ReasonConfirmationRequired},
				} {
					r := call(t, cs, tool, json.RawMessage(tc.args))
					if r.gate.Reason != tc.reason {
						t.Errorf("%s %s: want %s, got %q %+v", tool, tc.args, tc.reason, r.text, r.gate)
					}
					if tc.reason == gate.ReasonArgumentsNotObject && (r.gate.Error != gate.ErrorBlocked || !strings.Contains(r.gate.Message, "not a JSON object")) {
						t.Errorf("%s %s: the refusal does not say why: %+v", tool, tc.args, r.gate)
					}
				}
			}
			if got := upstreamCalls(t, cs); len(got) != 0 {
				t.Errorf("the upstream received %q", got)
			}
		})
	}
}

// Lone UTF-16 surrogates (which Go's decoder turns into U+FFFD, while a
// JavaScript upstream keeps them) are refused with a clear reason, on
// both paths, so that an approval of "x\ud800" can never forward
// "x\udbff"; a surrogate pair is text and is held as usual, and an
// approval of it forwards exactly the bytes approved.
func TestLoneSurrogatesAreRefused(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			local := Start(t)
			cs := shapeGated(t, transport, local.MCPURL, shapeRules)
			for _, args := range []string{`{"path":"x\ud800"}`, `{"path":"x\udbff"}`, `{"path":"x\udc00y"}`, `{"path":"\ud800\ud800"}`, `{"p\ud800":"x"}`} {
				r := call(t, cs, "delete_file", json.RawMessage(args))
				if r.gate.Reason != gate.ReasonInvalidText || r.gate.Error != gate.ErrorBlocked || !strings.Contains(r.gate.Message, "not valid text") {
					t.Errorf("%s: want a refusal for invalid text, got %q %+v", args, r.text, r.gate)
				}
			}
			if ids := local.Created(); len(ids) != 0 {
				t.Errorf("review requests were created for invalid text: %v", ids)
			}
			pair := `{"path":"x\ud83d\ude00"}`
			p := wantPending(t, call(t, cs, "delete_file", json.RawMessage(pair)))
			local.Decide(t, p.ReviewURL, "submitted", nil)
			if r := call(t, cs, "delete_file", json.RawMessage(pair)); r.text != "delete_file ran" {
				t.Fatalf("the approved pair: %q %+v", r.text, r.gate)
			}
			if got := upstreamCalls(t, cs); len(got) != 1 || got[0] != `delete_file `+pair {
				t.Errorf("the upstream received %q", got)
			}
		})
	}
}
