// Package notifypart is compose.Parts.Notify: the notification targets of
// the settings, and the deliverer over them. It is apart from compose so
// that a binary that names no targets does not link the senders (SES among
// them).
package notifypart

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// Part returns compose.Parts.Notify for a deployment that delivers (the
// local server, the notify function; ses sends e-mail targets through
// Amazon SES where the document enables it): the targets of Settings.NotifyConfig
// (a file path, or the document itself when it starts with '{' or holds a
// newline). ${NAME} references in it take their values from the secret
// Settings.NotifySecretARN names (a JSON object of strings, read once with
// secret), else from lookup (os.LookupEnv locally; nil on Lambda). Without
// NotifyConfig there are no targets.
func Part(lookup func(string) (string, bool), ses SES) func(context.Context, *compose.App, func(context.Context, string) (string, error)) (elicitation.Notifications, error) {
	return func(ctx context.Context, a *compose.App, secret func(context.Context, string) (string, error)) (elicitation.Notifications, error) {
		t, err := Targets(ctx, a.Settings, secret, lookup, ses)
		if t == nil || err != nil {
			return nil, err
		}
		return t, nil
	}
}

// RoutingPart is compose.Parts.Notify for the functions that write
// deliveries but never send them (MCP, submit): who is told of what, read
// from Settings.NotifyConfig without resolving its references, so that
// those functions need no right to read the targets' secrets.
func RoutingPart(ctx context.Context, a *compose.App, _ func(context.Context, string) (string, error)) (elicitation.Notifications, error) {
	doc, from, err := document(a.Settings)
	if doc == nil || err != nil {
		return nil, err
	}
	t, err := notify.ParseRouting(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return t, nil
}

// SES makes the SES senders of e-mail targets for a region ("" the
// environment's): sesmail.FromConfig over the local server's or the
// function's AWS configuration. A parameter, so that this package links no
// SES client.
type SES func(ctx context.Context, region string) (func(from string, to []string, configurationSet string) notify.Sender, error)

// Targets reads the configured targets; nil when none are configured.
func Targets(ctx context.Context, s compose.Settings, secret func(context.Context, string) (string, error), lookup func(string) (string, bool), ses SES) (*notify.Targets, error) {
	doc, from, err := document(s)
	if doc == nil || err != nil {
		return nil, err
	}
	if s.NotifySecretARN != "" {
		values, err := secretValues(ctx, s.NotifySecretARN, secret)
		if err != nil {
			return nil, err
		}
		env := lookup
		lookup = func(name string) (string, bool) {
			if v, ok := values[name]; ok {
				return v, true
			}
			if env != nil {
				return env(name)
			}
			return "", false
		}
	}
	cfg, err := notify.Parse(doc, lookup)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	var o notify.Options
	if s.SignIn() {
		// Interactive Slack messages offer Approve for 1 hour (the
		// Service's StandingMaxTTL is this cap with sign-in).
		o.SlackStandingFor = notify.SlackStanding(s.StandingMaxTTL)
	}
	if cfg.Email.SES.Enabled {
		if ses == nil {
			return nil, fmt.Errorf("%s: email.ses.enabled, but this deployment sends no e-mail through SES", from)
		}
		if o.SES, err = ses(ctx, cfg.Email.SES.Region); err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
	}
	t, err := notify.New(cfg, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return t, nil
}

func document(s compose.Settings) ([]byte, string, error) {
	switch v := strings.TrimSpace(s.NotifyConfig); {
	case v != "" && (v[0] == '{' || strings.Contains(v, "\n")):
		return []byte(v), "$" + compose.Env("notify-config"), nil
	case v != "":
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, "", fmt.Errorf("--notify-config: %w", err)
		}
		return b, v, nil
	}
	return nil, "", nil
}

// secretValues reads the secret holding the references' values: a JSON
// object of strings.
func secretValues(ctx context.Context, arn string, secret func(context.Context, string) (string, error)) (map[string]string, error) {
	if secret == nil {
		return nil, fmt.Errorf("%s is set but this deployment reads no secrets", compose.Env("notify-secret-arn"))
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	text, err := secret(ctx, arn)
	if err != nil {
		return nil, fmt.Errorf("read the notification secret %s: %w", arn, err)
	}
	var values map[string]string
	if err := json.Unmarshal([]byte(text), &values); err != nil {
		return nil, fmt.Errorf("the notification secret %s: want a JSON object of strings, like {\"SLACK_WEBHOOK_URL\": \"https://hooks.slack.com/...\"}", arn)
	}
	return values, nil
}

// Deliverer is the deliverer over the app's store and targets; nil when
// the app has no targets.
func Deliverer(a *compose.App) *notify.Deliverer {
	t, ok := a.Notifications.(*notify.Targets)
	if !ok || t == nil {
		return nil
	}
	d := &notify.Deliverer{Store: a.Store, Targets: t, Now: a.Now, Log: a.Log}
	if a.Metrics != nil {
		d.Observer = a.Metrics
	}
	return d
}
