package proxy

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// TestDescribeRedacts: the upstream as logged (start, reconnects) carries no
// credentials from its URL.
func TestDescribeRedacts(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://user:hunter2hunter2@mcp.example.com/mcp",
		"https://hunter2hunter2@mcp.example.com/mcp",
		"https://mcp.example.com/mcp?api_key=hunter2hunter2&profile=x",
		"https://mcp.example.com/mcp#hunter2hunter2",
	} {
		c := &upstreamConn{opts: upstreamOptions{Upstream: config.Upstream{URL: raw}}}
		got := c.Describe()
		if strings.Contains(got, "hunter2") || !strings.Contains(got, "mcp.example.com/mcp") {
			t.Errorf("Describe() of %q = %q", raw, got)
		}
	}
	if got := (&upstreamConn{opts: upstreamOptions{Upstream: config.Upstream{URL: "http://127.0.0.1:8080/mcp"}}}).Describe(); got != "http://127.0.0.1:8080/mcp" {
		t.Errorf("plain URL described as %q", got)
	}
}

// TestErrorsRedacted: an HTTP client's error quoting the upstream URL is
// logged without the URL's credentials.
func TestErrorsRedacted(t *testing.T) {
	t.Parallel()
	var logs strings.Builder
	c := &upstreamConn{opts: upstreamOptions{Upstream: config.Upstream{URL: "http://hunter2user:hunter2hunter2@127.0.0.1:1/mcp?api_key=hunter2hunter2"}}}
	// The error net/http returns for a failed request: it hides the URL's
	// password but keeps its query string.
	err := &url.Error{Op: "Post", URL: c.opts.URL, Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	if !strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("the error under test carries no credential: %q", err)
	}
	logs.WriteString(c.redact(err.Error()))
	if strings.Contains(logs.String(), "hunter2") || !strings.Contains(logs.String(), "127.0.0.1:1/mcp") {
		t.Errorf("redacted error %q", logs.String())
	}
}
