package upstream

import (
	"strings"
	"testing"
)

// TestDescribeRedacts: the upstream as logged (start, reconnects) carries no
// credentials from its URL.
func TestDescribeRedacts(t *testing.T) {
	for _, raw := range []string{
		"https://user:hunter2hunter2@mcp.example.com/mcp",
		"https://hunter2hunter2@mcp.example.com/mcp",
		"https://mcp.example.com/mcp?api_key=hunter2hunter2&profile=x",
		"https://mcp.example.com/mcp#hunter2hunter2",
	} {
		c := &Conn{opts: Options{URL: raw}}
		got := c.Describe()
		if strings.Contains(got, "hunter2") || !strings.Contains(got, "mcp.example.com/mcp") {
			t.Errorf("Describe() of %q = %q", raw, got)
		}
	}
	if got := (&Conn{opts: Options{URL: "http://127.0.0.1:8080/mcp"}}).Describe(); got != "http://127.0.0.1:8080/mcp" {
		t.Errorf("plain URL described as %q", got)
	}
}
