// Package notifypart is compose.Parts.Notify: the notification targets of
// the settings, and the deliverer over them. It is apart from compose so
// that a binary that names no targets does not link the senders (SES among
// them).
package notifypart

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// Part returns compose.Parts.Notify: the targets of Settings.NotifyConfig
// (a file path, or the document itself when it starts with '{' or holds a
// newline), else of the secret Settings.NotifySecretARN names (read once
// with secret). lookup expands ${VAR} references in the document
// (os.LookupEnv locally; on Lambda nil: the secret holds the values).
// With neither setting there are no targets.
func Part(lookup func(string) (string, bool)) func(context.Context, *compose.App, func(context.Context, string) (string, error)) (elicitation.Notifications, error) {
	return func(ctx context.Context, a *compose.App, secret func(context.Context, string) (string, error)) (elicitation.Notifications, error) {
		t, err := Targets(ctx, a.Settings, secret, lookup)
		if t == nil || err != nil {
			return nil, err
		}
		return t, nil
	}
}

// Targets reads the configured targets; nil when none are configured.
func Targets(ctx context.Context, s compose.Settings, secret func(context.Context, string) (string, error), lookup func(string) (string, bool)) (*notify.Targets, error) {
	doc, from, err := document(ctx, s, secret)
	if doc == nil || err != nil {
		return nil, err
	}
	cfg, err := notify.Parse(doc, lookup)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	var o notify.Options
	if cfg.Email.SES.Enabled {
		ac, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: load the AWS configuration for SES: %w", from, err)
		}
		if cfg.Email.SES.Region != "" {
			ac.Region = cfg.Email.SES.Region
		}
		o.SES = sesv2.NewFromConfig(ac)
	}
	t, err := notify.New(cfg, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return t, nil
}

func document(ctx context.Context, s compose.Settings, secret func(context.Context, string) (string, error)) ([]byte, string, error) {
	switch v := strings.TrimSpace(s.NotifyConfig); {
	case v != "" && (v[0] == '{' || strings.Contains(v, "\n")):
		return []byte(v), "$" + compose.Env("notify-config"), nil
	case v != "":
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, "", fmt.Errorf("--notify-config: %w", err)
		}
		return b, v, nil
	case s.NotifySecretARN != "":
		if secret == nil {
			return nil, "", fmt.Errorf("%s is set but this deployment reads no secrets", compose.Env("notify-secret-arn"))
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		text, err := secret(ctx, s.NotifySecretARN)
		if err != nil {
			return nil, "", fmt.Errorf("read the notification secret %s: %w", s.NotifySecretARN, err)
		}
		return []byte(text), "the notification secret " + s.NotifySecretARN, nil
	}
	return nil, "", nil
}

// Deliverer is the deliverer over the app's store and targets; nil when
// the app has no targets.
func Deliverer(a *compose.App) *notify.Deliverer {
	t, ok := a.Notifications.(*notify.Targets)
	if !ok || t == nil {
		return nil
	}
	return &notify.Deliverer{Store: a.Store, Targets: t, Now: a.Now, Log: a.Log}
}
