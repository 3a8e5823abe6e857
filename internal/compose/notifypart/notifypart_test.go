package notifypart_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/notifypart"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// TestSlackStanding: with sign-in, interactive Slack messages offer
// Approve for… for an hour, or the operator's shorter cap; without, not.
func TestSlackStanding(t *testing.T) {
	t.Parallel()
	doc := "targets:\n  approvals:\n    type: slack\n    url: https://hooks.slack.com/services/T0/B0/x\n    interactive: true\nslack:\n  users:\n    U024BE7LH: alice@example.com\n"
	for _, tc := range []struct {
		name   string
		issuer string
		maxTTL time.Duration
		want   time.Duration
	}{
		{"sign-in", "https://idp.example.com", 24 * time.Hour, time.Hour},
		{"sign-in, a shorter cap", "https://idp.example.com", 15 * time.Minute, 15 * time.Minute},
		{"no sign-in", "", 24 * time.Hour, 0},
	} {
		s := compose.Settings{NotifyConfig: doc, OIDCIssuer: tc.issuer, StandingMaxTTL: tc.maxTTL}
		targets, err := notifypart.Targets(context.Background(), s, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		snd, _ := targets.Sender("approvals")
		sl, ok := snd.(*notify.Slack)
		if !ok || sl.StandingFor != tc.want {
			t.Errorf("%s: sender %#v, want Approve for %s", tc.name, snd, tc.want)
		}
	}
}
