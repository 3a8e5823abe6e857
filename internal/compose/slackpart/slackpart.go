// Package slackpart builds the Slack interaction handler of a composed
// app (internal/slackact): the Slack app's secrets from the settings
// (locally) or from Secrets Manager (on Lambda), the Slack users' mapping
// from the notification configuration, and the app's service. It is apart
// from compose so that a binary that takes no decisions from Slack does
// not link it.
package slackpart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/slackact"
)

// Path is where the handler is served (the Slack app's interactivity
// request URL is the public URL and this path).
const Path = slackact.Path

// Handler is the app's Slack interaction handler; nil (and no error) when
// the deployment has no Slack app (neither a signing secret nor a Slack
// secret is set).
func Handler(ctx context.Context, a *compose.App) (http.Handler, error) {
	s := a.Settings
	signing, token := s.SlackSigningSecret, s.SlackBotToken
	if s.SlackSecretARN != "" {
		var err error
		if signing, token, err = secret(ctx, a, s.SlackSecretARN); err != nil {
			return nil, err
		}
	}
	if signing == "" {
		return nil, nil
	}
	t, ok := a.Notifications.(*notify.Targets)
	if !ok || t == nil || len(t.SlackApp().Users) == 0 {
		return nil, fmt.Errorf("a Slack app is configured, but the notification configuration (%s) maps no Slack users to reviewers (slack.users): nobody could decide in Slack", compose.Env("notify-config"))
	}
	// A reviewer's Slack decisions spend the share their page decisions
	// spend: the review handler's limiter, the same instance.
	decisions := s.ReviewLimiter()
	if a.Pages != nil {
		decisions = a.Pages.Decisions
	}
	h, err := slackact.New(slackact.Options{
		Service: a.Service, SigningSecret: signing, BotToken: token, APIURL: s.SlackAPIURL,
		Users: t.SlackApp(), Now: a.Now, Logger: a.Log, Decisions: decisions,
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// secret reads the Slack secret: a JSON object with signingSecret and
// botToken.
func secret(ctx context.Context, a *compose.App, arn string) (signing, token string, err error) {
	if a.Secret == nil {
		return "", "", fmt.Errorf("%s is set but this deployment reads no secrets", compose.Env("slack-secret-arn"))
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	text, err := a.Secret(ctx, arn)
	if err != nil {
		return "", "", fmt.Errorf("read the Slack secret %s: %w", arn, err)
	}
	var v struct {
		SigningSecret string `json:"signingSecret"`
		BotToken      string `json:"botToken"`
	}
	if json.Unmarshal([]byte(text), &v) != nil || v.SigningSecret == "" || v.BotToken == "" {
		return "", "", errors.New("the Slack secret " + arn + `: want a JSON object {"signingSecret": "…", "botToken": "xoxb-…"} with both set`)
	}
	return v.SigningSecret, v.BotToken, nil
}
