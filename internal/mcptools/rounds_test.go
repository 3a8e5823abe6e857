package mcptools_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// asking is a 2026-07-28 tools/call of principal declaring caps in its _meta.
func asking(principal string, caps map[string]any) *mcp.CallToolRequest {
	return &mcp.CallToolRequest{
		Params: &mcp.CallToolParamsRaw{Meta: mcp.Meta{"io.modelcontextprotocol/clientCapabilities": caps}},
		Extra:  &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: principal}},
	}
}

// TestRoundsDeclared: a client is asked only for the inputs it declared.
func TestRoundsDeclared(t *testing.T) {
	t.Parallel()
	inputs := mcp.InputRequestMap{
		"form":     &mcp.ElicitParams{Message: "m", RequestedSchema: map[string]any{"type": "object"}},
		"url":      &mcp.ElicitParams{Mode: "url", Message: "m", URL: "https://x.invalid/", ElicitationID: "e"},
		"sampling": &mcp.CreateMessageParams{MaxTokens: 1},
		"roots":    &mcp.ListRootsParams{},
	}
	empty := map[string]any{}
	for _, c := range []struct {
		caps map[string]any
		want []string
	}{
		{map[string]any{}, nil},
		{map[string]any{"elicitation": empty}, []string{"form"}},
		{map[string]any{"elicitation": map[string]any{"url": empty}}, []string{"url"}},
		{map[string]any{"elicitation": map[string]any{"form": empty, "url": empty}}, []string{"form", "url"}},
		{map[string]any{"sampling": empty}, []string{"sampling"}},
		{map[string]any{"roots": empty, "sampling": empty}, []string{"roots", "sampling"}},
	} {
		got, _ := mcptools.NewRounds(nil, time.Now).Ask(asking("alice", c.caps), "p", inputs, nil)
		if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, c.want) {
			t.Errorf("caps %v: asked %v, want %v", c.caps, keys, c.want)
		}
	}
}

// TestRoundsState: a request state comes back with its memo, unless it was
// altered, sealed for another purpose, or is another principal's, or
// expired: each refused as the request's invalid params (-32602).
func TestRoundsState(t *testing.T) {
	t.Parallel()
	keys, err := sealer.ParseKeyring(sealer.GenerateSecret())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := mcptools.NewRounds(keys, func() time.Time { return now })
	caps := map[string]any{"elicitation": map[string]any{}}
	_, state := r.Ask(asking("alice", caps), "tool a", mcp.InputRequestMap{}, []byte(`{"step":2}`))
	if memo, err := r.Resume(asking("alice", caps), "tool a", state); err != nil || string(memo) != `{"step":2}` {
		t.Fatalf("resume = %s, %v", memo, err)
	}
	later := mcptools.NewRounds(keys, func() time.Time { return now.Add(mcptools.StateTTL) })
	for _, c := range []struct {
		name, who, purpose, state string
		r                         *mcptools.Rounds
		want                      string
	}{
		{"tampered", "alice", "tool a", state + "-TAMPERED", r, "altered or foreign"},
		{"another purpose", "alice", "tool b", state, r, "altered or foreign"},
		{"another principal", "bob", "tool a", state, r, "belongs to another request or another agent"},
		{"expired", "alice", "tool a", state, later, "has expired"},
	} {
		_, err := c.r.Resume(asking(c.who, caps), c.purpose, c.state)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, c.want) {
			t.Errorf("%s: %v, want a -32602 error saying %q", c.name, err, c.want)
		}
	}
	if _, none := r.Ask(asking("alice", caps), "tool a", mcp.InputRequestMap{}, nil); none != "" {
		t.Errorf("a round without memo has state %q", none)
	}
}
