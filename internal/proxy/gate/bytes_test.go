package gate_test

import (
	"bufio"
	"bytes"
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

// spacedArgs are arguments as a client may write them: white space
// between the tokens, escapes a re-encoder would rewrite (\u00e9, \/),
// characters an HTML-safe encoder would escape (<, &), U+2028 as is, and
// a number spelled 1.0.
const spacedArgs = "{ \"path\" : \"<a&b> \\u00e9 \\/ é \u2028\" ,\t\"n\": 1.0 }"

// What docs/proxy.md says of forwarding: the upstream receives a call's
// arguments as the client wrote them, with only the white space between
// tokens removed (the JSON-RPC encoder compacts every message); members,
// their order, escapes, raw characters and number spelling are unchanged.
// It holds on the stdio fast path, on the SDK path (a call with a
// progress token, and HTTP) and for a call the gate held and a human
// approved.
func TestArgumentsForwardedAsWritten(t *testing.T) {
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(spacedArgs)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(want.String(), " : ") || !strings.Contains(want.String(), `\u00e9 \/ é`) || !strings.Contains(want.String(), "<a&b>") {
		t.Fatalf("json.Compact is not what this test assumes: %s", want.String())
	}
	const confirmWipe = "tools:\n  wipe:\n    confirm_if:\n      always: true\n"

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		local := Start(t)
		raw := t.TempDir() + "/upstream-stdin"
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		p := gatedProxy(t, fmt.Sprintf("upstream:\n  command: %q\n  env:\n    %s: \"1\"\n    %s: %q\nelicitation_service:\n  url: %q\n  wait_seconds: 1\n%s",
			self, stdioUpstreamEnv, rawLogEnv, raw, local.MCPURL, confirmWipe))
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		ss, err := p.Server().Connect(context.Background(), p.WrapTransport(&mcp.IOTransport{Reader: sr, Writer: sw}), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		c := &lines{t: t, w: cw, r: bufio.NewReader(cr)}
		c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		c.read()
		c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for _, params := range []string{
			`{"name":"delete_file","arguments":` + spacedArgs + `}`,                               // the fast path
			`{"name":"delete_file","arguments":` + spacedArgs + `,"_meta":{"progressToken":"t"}}`, // the SDK path
		} {
			c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)
			if got := c.read(); !strings.Contains(got, "delete_file ran") {
				t.Fatalf("%s: %s", params, got)
			}
		}
		// A gated call, approved on the review page.
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wipe","arguments":` + spacedArgs + `}}`)
		var pending struct {
			Result struct {
				StructuredContent gate.Payload `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(c.read()), &pending); err != nil || pending.Result.StructuredContent.ReviewURL == "" {
			t.Fatalf("the gated call: %v %+v", err, pending)
		}
		local.Decide(t, pending.Result.StructuredContent.ReviewURL, "submitted", nil)
		c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wipe","arguments":` + spacedArgs + `}}`)
		if got := c.read(); !strings.Contains(got, "wipe ran") {
			t.Fatalf("the approved call: %s", got)
		}
		b, err := os.ReadFile(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := forwardedArgs(t, b); len(got) != 3 || got[0] != want.String() || got[1] != want.String() || got[2] != want.String() {
			t.Errorf("the upstream read the arguments as\n%q\nwant each %q", got, want.String())
		}
	})

	t.Run("http", func(t *testing.T) {
		t.Parallel()
		upstream := recordingUpstream()
		var mu sync.Mutex
		var bodies []byte
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(append(bodies, b...), '\n')
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
			mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, &mcp.StreamableHTTPOptions{Stateless: true}).ServeHTTP(w, r)
		}))
		t.Cleanup(up.Close)
		p := gatedProxy(t, fmt.Sprintf("upstream:\n  url: %q\n", up.URL))
		srv := httptest.NewServer(p.HTTPHandler())
		t.Cleanup(srv.Close)
		post := func(session, body string) (string, string) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.Header.Get("Mcp-Session-Id"), string(b)
		}
		session, _ := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if _, got := post(session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_file","arguments":`+spacedArgs+`}}`); !strings.Contains(got, "delete_file ran") {
			t.Fatalf("over HTTP: %s", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if got := forwardedArgs(t, bodies); len(got) != 1 || got[0] != want.String() {
			t.Errorf("the upstream read the arguments as\n%q\nwant %q", got, want.String())
		}
	})
}

// gatedProxy starts a proxy for a configuration, with its gate.
func gatedProxy(t *testing.T, yaml string) *proxy.Proxy {
	t.Helper()
	cfg, err := config.ParseWith([]byte(yaml), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
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
	return p
}

// forwardedArgs finds the arguments of each tools/call of delete_file or
// wipe in the bytes an upstream read, as they were written there.
func forwardedArgs(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"tools/call"`)) || !(bytes.Contains(line, []byte(`"delete_file"`)) || bytes.Contains(line, []byte(`"wipe"`))) {
			continue
		}
		var msg struct {
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, string(msg.Params.Arguments))
	}
	return out
}

// lines is a raw newline-delimited JSON-RPC client.
type lines struct {
	t *testing.T
	w io.Writer
	r *bufio.Reader
}

func (c *lines) send(s string) {
	c.t.Helper()
	if _, err := c.w.Write([]byte(s + "\n")); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next response line (skipping notifications and
// requests to the client).
func (c *lines) read() string {
	c.t.Helper()
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatal(err)
		}
		if !strings.Contains(l, `"method"`) {
			return l
		}
	}
}
