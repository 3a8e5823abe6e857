package gate

import (
	"encoding/json"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// TestListingReadOncePerListing: the gate reads a tool's listing (title,
// description, annotations, properties) once per listing, not on every
// gated call: fifty calls under confirm_destructive parse it once, and a
// new listing (a new tools/list, tools/list_changed) is read once again.
// The parses are counted with a fake parser.
func TestListingReadOncePerListing(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{}
	cfg.Policies.ConfirmDestructive.Enabled = true
	g := New(Options{Config: cfg})
	var parses int
	g.parseTool = func(raw json.RawMessage) (Tool, error) {
		parses++
		return ParseTool(raw)
	}
	for listings, listing := range []string{
		`{"name":"read","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"}}`,
		`{"name":"read","annotations":{"destructiveHint":true},"inputSchema":{"type":"object"}}`,
	} {
		tool, err := plan.ParseTool(json.RawMessage(listing))
		if err != nil {
			t.Fatal(err)
		}
		destructive := listings == 1
		for range 50 {
			c := &plan.Call{Name: "read", Tool: tool}
			if g.holds(c) != destructive || g.toolOf(c).Destructive() != destructive {
				t.Fatalf("listing %d: held %v, want %v", listings, g.holds(c), destructive)
			}
		}
		if parses != listings+1 {
			t.Fatalf("listing %d, read on 100 calls: %d parses in all, want %d", listings+1, parses, listings+1)
		}
	}
}
