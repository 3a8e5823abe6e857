package notify

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Targets are the configured targets with their senders. They implement
// elicitation.Notifications for the Service.
type Targets struct {
	cfg     Config
	names   []string
	senders map[string]Sender
	// remind and escalate are the configuration's reminder intervals and
	// escalation chain, read once (Validate checked them).
	remind   map[string]time.Duration
	escalate []elicitation.EscalationStep
	queued   atomic.Pointer[func()]
}

var _ elicitation.Notifications = (*Targets)(nil)

// Options are the parts the senders use.
type Options struct {
	// HTTPClient for webhooks, Slack and ntfy; default HTTPClient().
	HTTPClient *http.Client
	// SES makes the SES sender of an e-mail target (sesmail.New),
	// required when email.ses.enabled.
	SES func(from string, to []string, configurationSet string) Sender
	// Now is the clock of webhook timestamps and mail dates; default time.Now.
	Now func() time.Time
	// SlackStandingFor is how long the standing approval of an interactive
	// Slack message's Approve for… button lasts (SlackStanding of the
	// operator's cap); 0, as where reviewers do not sign in: no such button.
	SlackStandingFor time.Duration
}

// New builds the targets of cfg (validated by Parse).
func New(cfg Config, o Options) (*Targets, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o.HTTPClient = cmp.Or(o.HTTPClient, HTTPClient())
	t := &Targets{cfg: cfg, names: cfg.Names(), senders: map[string]Sender{}, remind: map[string]time.Duration{}}
	t.escalate, _ = cfg.escalation()
	for name, tc := range cfg.Targets {
		if d, err := positive(tc.Remind); err == nil {
			t.remind[name] = d
		}
	}
	for name, tc := range cfg.Targets {
		switch tc.Type {
		case TypeWebhook:
			t.senders[name] = &Webhook{URL: tc.URL, Secret: []byte(tc.Secret), Client: o.HTTPClient, Now: o.Now}
		case TypeSlack:
			t.senders[name] = &Slack{URL: tc.URL, Client: o.HTTPClient, Interactive: tc.Interactive, StandingFor: o.SlackStandingFor}
		case TypeNtfy:
			t.senders[name] = &Ntfy{URL: tc.URL, Topic: tc.Topic, Token: tc.Token, Client: o.HTTPClient}
		case TypeEmail:
			if cfg.Email.SES.Enabled {
				if o.SES == nil {
					return nil, fmt.Errorf("target %q: email.ses.enabled needs an SES client", name)
				}
				t.senders[name] = o.SES(cfg.Email.From, tc.To, cfg.Email.SES.ConfigurationSet)
			} else {
				t.senders[name] = &SMTP{Config: cfg.Email.SMTP, From: cfg.Email.From, To: tc.To, Now: o.Now}
			}
		}
	}
	return t, nil
}

// Type is the type of the target name (webhook, slack, email, ntfy), ""
// if it is not configured.
func (t *Targets) Type(name string) string { return t.cfg.Targets[name].Type }

// Names lists the configured targets.
func (t *Targets) Names() []string { return slices.Clone(t.names) }

// Sender is the sender of the named target.
func (t *Targets) Sender(name string) (Sender, bool) {
	s, ok := t.senders[name]
	return s, ok
}

// Targets implements elicitation.Notifications.
func (t *Targets) Targets(owner string, names []string) ([]string, error) {
	out := slices.Clone(t.cfg.Defaults)
	for _, n := range t.cfg.Owners[owner] {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range names {
		if _, ok := t.cfg.Targets[n]; !ok {
			return nil, elicitation.UnknownTarget(n, t.names)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Wants implements elicitation.Notifications.
func (t *Targets) Wants(target string, ev elicitation.Event) bool {
	tc, ok := t.cfg.Targets[target]
	return ok && slices.Contains(tc.events(), ev)
}

// Remind implements elicitation.Notifications.
func (t *Targets) Remind(target string) time.Duration {
	return t.remind[target]
}

// Escalation implements elicitation.Notifications.
func (t *Targets) Escalation() []elicitation.EscalationStep {
	return slices.Clone(t.escalate)
}

// SlackApp is the configuration's Slack users' mapping.
func (t *Targets) SlackApp() SlackAppConfig { return t.cfg.Slack }

// Known implements elicitation.Notifications.
func (t *Targets) Known(name string) bool {
	_, ok := t.cfg.Targets[name]
	return ok
}

// Queued implements elicitation.Notifications: it wakes the deliverer set
// with OnQueued, if any.
func (t *Targets) Queued() {
	if fn := t.queued.Load(); fn != nil {
		(*fn)()
	}
}

// OnQueued sets what Queued calls (a Worker's Wake).
func (t *Targets) OnQueued(fn func()) { t.queued.Store(&fn) }
