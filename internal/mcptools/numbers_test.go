package mcptools_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

// TestNumbersOutOfRange: a JSON number no 64-bit float can hold (1e400) in
// context, an option or a form schema is the caller's mistake: an
// invalid_argument naming where it is, never an internal error, with or
// without a template that would bind it.
func TestNumbersOutOfRange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	// 2025-11-25: a 2026-07-28 go-sdk client cannot send a number no float
	// holds (it fails to build the Mcp-Name header from such a body).
	cs := e.connect(t, proto20251125, "")
	for _, tc := range []struct {
		name, tool, args, field string
	}{
		{"context", mcptools.ToolApproval, `{"message":"m","context":{"amount":1e400}}`, "context"},
		{"context with a template", mcptools.ToolApproval, `{"message":"m","context":{"amount":1e400},"displayTemplate":"{{ context.amount }}"}`, "context"},
		{"negative context", mcptools.ToolApproval, `{"message":"m","context":[-1e400]}`, "context"},
		{"option", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a"},{"id":"b","price":1e400}]}`, "options[1]"},
		{"option with a template", mcptools.ToolSelection, `{"message":"m","options":[{"id":"a","price":1e400}],"rowTemplate":"{{ option.price }}"}`, "options[0]"},
		{"schema", mcptools.ToolApproval, `{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}}`, "requestedSchema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := fails(t, cs, tc.tool, json.RawMessage(tc.args), elicitation.CodeInvalidArgument)
			if !strings.Contains(msg, tc.field) {
				t.Errorf("error %q does not name %s", msg, tc.field)
			}
		})
	}
	// A large number that a float holds is data like any other.
	ok(t, cs, mcptools.ToolApproval, json.RawMessage(`{"message":"m","context":{"amount":1e300,"tiny":1e-400},"displayTemplate":"{{ context.amount }}"}`))
}

// TestTimeoutClamped: timeoutSeconds outside 60..86400 is clamped, as its
// description says, zero and negative values included; absent is the
// default.
func TestTimeoutClamped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	// 2025-11-25: a 2026-07-28 go-sdk client cannot send a number no float
	// holds (it fails to build the Mcp-Name header from such a body).
	cs := e.connect(t, proto20251125, "")
	for _, tc := range []struct {
		timeout string
		want    time.Duration
	}{
		{"", elicitation.DefaultTimeout},
		{`,"timeoutSeconds":0`, elicitation.MinTimeout},
		{`,"timeoutSeconds":-1`, elicitation.MinTimeout},
		{`,"timeoutSeconds":-1e300`, elicitation.MinTimeout},
		{`,"timeoutSeconds":59`, elicitation.MinTimeout},
		{`,"timeoutSeconds":600`, 10 * time.Minute},
		{`,"timeoutSeconds":86401`, elicitation.MaxTimeout},
		{`,"timeoutSeconds":1e12`, elicitation.MaxTimeout},
	} {
		c := ok(t, cs, mcptools.ToolApproval, json.RawMessage(`{"message":"m","context":1`+tc.timeout+`}`))
		exp, err := time.Parse(time.RFC3339, c["expiresAt"].(string))
		if want := e.clock.Now().Add(tc.want); err != nil || !exp.Equal(want) {
			t.Errorf("timeout%s: expiresAt %v, want %v", tc.timeout, c["expiresAt"], want)
		}
	}
}
