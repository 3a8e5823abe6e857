package slackpart_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/compose/slackpart"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/slackact"
)

// TestSlackSharesThePagesLimiter: the Slack handler counts decisions in
// the review handler's limiter itself, so that a reviewer's page and Slack
// decisions spend one share.
func TestSlackSharesThePagesLimiter(t *testing.T) {
	t.Parallel()
	targets, err := notify.New(notify.Config{Slack: notify.SlackAppConfig{Users: map[string]notify.SlackUser{"U0ALICE001": {Reviewer: "alice@example.com"}}}}, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.New(ratelimit.Rate{Count: 1, Per: time.Hour}, ratelimit.Rate{Count: 1, Per: time.Hour}, 10)
	a := &compose.App{
		Settings:      compose.Settings{SlackSigningSecret: "8f742231b10e8888abcd99yyyzzz85a5", SlackBotToken: "xoxb-1"},
		Notifications: targets,
		Pages:         review.New(review.Options{Decisions: lim}),
	}
	h, err := slackpart.Handler(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.(*slackact.Handler).Decisions; got != lim {
		t.Errorf("the Slack handler's limiter is %p, want the review page's %p", got, lim)
	}
}
