package slackact_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// TestDecisionShareInSlack: a decision from a Slack button or dialog
// spends from the reviewer's share and everyone's (the review page's
// limiter, keyed by the same principal), so a reviewer's page and Slack
// decisions have one budget. Past it the presser gets the ephemeral note
// (the dialog keeps its comment and says so), and nothing is decided.
func TestDecisionShareInSlack(t *testing.T) {
	t.Parallel()
	const over = "more decisions than this server takes"
	for _, tc := range []struct {
		name         string
		each, all    int
		pageSpent    int  // alice's decisions on the review page first
		dialog       bool // alice's second decision is a Decline dialog
		bobDecidesB  bool // bob's share is his own
		aliceDecides bool // alice's first Slack decision lands
	}{
		{name: "own share", each: 1, all: 10, bobDecidesB: true, aliceDecides: true},
		{name: "own share in a dialog", each: 1, all: 10, dialog: true, bobDecidesB: true, aliceDecides: true},
		{name: "everyone's", each: 10, all: 1, aliceDecides: true},
		{name: "shared with the page", each: 1, all: 10, pageSpent: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := ratelimit.New(ratelimit.Rate{Count: tc.each, Per: time.Hour}, ratelimit.Rate{Count: tc.all, Per: time.Hour}, 100)
			e := newEnv(t, envOptions{signIn: true, decisions: lim})
			if tc.pageSpent > 0 && lim.TakeN("alice@example.com", tc.pageSpent, e.clock.Now()) != 0 {
				t.Fatal("the page's decisions were refused")
			}
			a, msgA := e.approval(elicitation.Input{Message: "First"})
			b, msgB := e.approval(elicitation.Input{Message: "Second"})
			first := e.slack.press(msgA, notify.SlackActionApprove, "U0ALICE001")
			e.ok(first)
			if got := e.state(a.State.ID).Status == elicitation.StatusSubmitted; got != tc.aliceDecides {
				t.Fatalf("alice's first decision landed %t, want %t", got, tc.aliceDecides)
			}
			if !tc.aliceDecides {
				wantEphemeral(t, e.lastReply(first), over)
				return
			}
			if tc.dialog {
				press := e.slack.press(msgB, notify.SlackActionDecline, "U0ALICE001")
				e.ok(press)
				views := e.slack.openedViews()
				if len(views) != 1 {
					t.Fatalf("views.open calls %d, want 1", len(views))
				}
				if body := e.ok(e.slack.submitView(views[0], "U0ALICE001", "not now")); !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, over) {
					t.Errorf("the dialog's answer %s, want it kept open saying %q", body, over)
				}
			} else {
				second := e.slack.press(msgB, notify.SlackActionApprove, "U0ALICE001")
				e.ok(second)
				wantEphemeral(t, e.lastReply(second), over)
			}
			if st := e.state(b.State.ID); st.Status != elicitation.StatusPending || e.count(b.State.ID, elicitation.ActionDecided) != 0 {
				t.Fatalf("alice past her share decided: %+v", st)
			}
			bob := e.slack.press(msgB, notify.SlackActionApprove, "U0BOB00001")
			e.ok(bob)
			if got := e.state(b.State.ID).Status == elicitation.StatusSubmitted; got != tc.bobDecidesB {
				t.Errorf("bob's decision landed %t, want %t", got, tc.bobDecidesB)
			}
		})
	}
}
