// Package notify reaches reviewers and the people who want an outcome:
// named notification targets (signed webhooks, Slack incoming webhooks,
// e-mail over SMTP or Amazon SES, ntfy push topics) configured by the
// operator, and the deliverer that takes each delivery out of the store's
// outbox, sends it, and settles it in the audit trail.
//
// docs/notifications.md is the operator's guide.
package notify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Config is the operator's notification configuration: one document, YAML
// or JSON (docs/notifications.md has examples).
type Config struct {
	// Defaults are the targets every request notifies.
	Defaults []string `yaml:"defaults"`
	// Targets by name; agents name them in notify.
	Targets map[string]TargetConfig `yaml:"targets"`
	// Owners are the targets every request of a principal (an API key's
	// principal, or "anonymous") notifies: how the agent's owner is told.
	Owners map[string][]string `yaml:"owners"`
	// Email configures how e-mail targets send.
	Email EmailConfig `yaml:"email"`
	// Escalate is the deployment's escalation chain, for requests that
	// name none: each step notifies its targets once its after has passed
	// since creation while the request is still pending.
	Escalate []StepConfig `yaml:"escalate"`
	// Slack is the Slack app's part: who a Slack user deciding with a
	// message's buttons is (interactive targets).
	Slack SlackAppConfig `yaml:"slack"`
	// Limits bound the notices each target that reaches people is sent
	// an hour (NoticeLimits); 0: the default.
	Limits LimitsConfig `yaml:"limits"`
}

// LimitsConfig are the notices an hour each target that reaches people
// (slack, email, ntfy) is sent: of one principal's requests, and in all.
type LimitsConfig struct {
	PerPrincipal int `yaml:"perPrincipal"`
	All          int `yaml:"all"`
}

// notices is l as NoticeLimits; a zero count is its default.
func (l LimitsConfig) notices() NoticeLimits {
	n := DefaultNoticeLimits
	if l.PerPrincipal > 0 {
		n.PerPrincipal.Count = l.PerPrincipal
	}
	if l.All > 0 {
		n.All.Count = l.All
	}
	return n
}

func (l LimitsConfig) check() []error {
	var errs []error
	if l.PerPrincipal < 0 || l.All < 0 {
		errs = append(errs, fmt.Errorf("limits: perPrincipal and all are notices an hour, such as 60 and 600; not negative"))
	}
	if n := l.notices(); n.PerPrincipal.Count > n.All.Count {
		errs = append(errs, fmt.Errorf("limits: perPrincipal (%d) is more than all (%d)", n.PerPrincipal.Count, n.All.Count))
	}
	return errs
}

// SlackAppConfig maps the Slack users who may press a message's buttons
// to reviewer identities. Its signing secret and bot token are settings
// (docs/configuration.md), never in this document.
type SlackAppConfig struct {
	// Teams, if set, are the Slack workspaces (team ids, T…, or an
	// Enterprise Grid organization's, E…) whose users' interactions are
	// taken (the presser's user.team_id, not the message's team); others
	// are refused.
	Teams []string `yaml:"teams"`
	// Users maps a Slack user id (U… or W…) or a Slack account's e-mail
	// address (read with users.info, which needs the users:read.email
	// scope) to the reviewer it is.
	Users map[string]SlackUser `yaml:"users"`
}

// SlackUser is the reviewer a Slack user is: an e-mail address (the
// principal recorded and matched against a request's reviewers) and the
// groups matched against its group:NAME entries. In YAML either the
// address alone or {reviewer: ADDRESS, groups: [NAME, …]}.
type SlackUser struct {
	Reviewer string   `yaml:"reviewer"`
	Groups   []string `yaml:"groups"`
}

// UnmarshalYAML reads the address alone or the mapping.
func (u *SlackUser) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		u.Reviewer = n.Value
		return nil
	}
	type plain SlackUser
	var p plain
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "reviewer" && k != "groups" {
				// A TypeError, so that the rest of the document is still checked.
				return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: field %s not found in a slack user (reviewer, groups)", n.Content[i].Line, k)}}
			}
		}
	}
	if err := n.Decode(&p); err != nil {
		return err
	}
	*u = SlackUser(p)
	return nil
}

var (
	slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)
	slackTeamID = regexp.MustCompile(`^[TE][A-Z0-9]{2,20}$`)
)

// checkSlack checks the Slack users' mapping.
func (s SlackAppConfig) checkSlack() []error {
	var errs []error
	for _, t := range s.Teams {
		if !slackTeamID.MatchString(t) {
			errs = append(errs, fmt.Errorf("slack.teams: %q is not a Slack team id (T…)", t))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Users)) {
		u := s.Users[k]
		if _, err := mail.ParseAddress(k); !slackUserID.MatchString(k) && (err != nil || strings.ContainsAny(k, "<> ")) {
			errs = append(errs, fmt.Errorf("slack.users: %q is neither a Slack user id (U… or W…) nor an e-mail address", k))
		}
		if a, err := mail.ParseAddress(u.Reviewer); err != nil || a.Address != u.Reviewer {
			errs = append(errs, fmt.Errorf("slack.users: %q: the reviewer must be an e-mail address (the reviewer's identity), not %q", k, u.Reviewer))
		}
		for _, g := range u.Groups {
			if strings.TrimSpace(g) == "" {
				errs = append(errs, fmt.Errorf("slack.users: %q: a group name is empty", k))
			}
		}
	}
	return errs
}

// User is the reviewer Slack user id, or else (when it names the user's
// e-mail) email, is; ok false when the mapping has neither.
func (s SlackAppConfig) User(id, email string) (SlackUser, bool) {
	if u, ok := s.Users[id]; ok && id != "" {
		return u, true
	}
	if email == "" {
		return SlackUser{}, false
	}
	for k, u := range s.Users {
		if strings.EqualFold(k, email) {
			return u, true
		}
	}
	return SlackUser{}, false
}

// ByEmail reports whether the mapping names any user by e-mail (then a
// user not named by id is looked up with users.info).
func (s SlackAppConfig) ByEmail() bool {
	for k := range s.Users {
		if strings.Contains(k, "@") {
			return true
		}
	}
	return false
}

// StepConfig is one escalation step: after a duration ("30m"), notify
// these targets.
type StepConfig struct {
	After  string   `yaml:"after"`
	Notify []string `yaml:"notify"`
}

// TargetConfig is one named target.
type TargetConfig struct {
	// Type is webhook, slack, email or ntfy.
	Type string `yaml:"type"`
	// Events are the events the target asks for; default [created].
	Events []elicitation.Event `yaml:"events"`

	// URL: the webhook's or the Slack incoming webhook's URL, or the ntfy
	// server's base URL.
	URL string `yaml:"url"`
	// Secret signs webhook bodies (HMAC-SHA256).
	Secret string `yaml:"secret"`
	// Topic and Token: the ntfy topic and its optional access token.
	Topic string `yaml:"topic"`
	Token string `yaml:"token"`
	// To: the e-mail recipients.
	To []string `yaml:"to"`
	// Interactive (slack): the message carries Approve / Decline buttons
	// (and one per option of a small selection) that decide in Slack,
	// through the Slack app's interactivity (docs/notifications.md).
	Interactive bool `yaml:"interactive"`
	// Remind, a duration ("15m"): remind the target of a request still
	// pending every Remind after creation (at most
	// elicitation.MaxReminders times, before it expires). Empty: never.
	Remind string `yaml:"remind"`
}

// EmailConfig says how e-mail is sent: over SMTP (locally) or with Amazon
// SES (on AWS).
type EmailConfig struct {
	From string     `yaml:"from"`
	SMTP SMTPConfig `yaml:"smtp"`
	SES  SESConfig  `yaml:"ses"`
}

// SMTPConfig is an SMTP relay.
type SMTPConfig struct {
	// Addr is host:port.
	Addr     string `yaml:"addr"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// TLS is "starttls" (the default: used when the server offers it,
	// required when a username is set), "tls" (implicit TLS, port 465) or
	// "none" (loopback relays only).
	TLS string `yaml:"tls"`
}

// SESConfig selects Amazon SES.
type SESConfig struct {
	// Region; default the environment's.
	Region string `yaml:"region"`
	// Enabled sends through SES rather than SMTP.
	Enabled bool `yaml:"enabled"`
	// ConfigurationSet, optional.
	ConfigurationSet string `yaml:"configurationSet"`
}

// Target types.
const (
	TypeWebhook = "webhook"
	TypeSlack   = "slack"
	TypeEmail   = "email"
	TypeNtfy    = "ntfy"
)

var targetName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Parse reads a configuration document (YAML or JSON). In string values,
// ${NAME} is replaced by lookup(NAME) (for example the environment, so that
// secrets stay out of the file); a name lookup does not know is an error.
// lookup may be nil when the document has no references. A document with
// several mistakes is refused with every one of them named: each unset
// reference, each unknown key, each invalid target.
//
// The errors never repeat a value read from a reference (of at least
// minRedacted characters), whole or shortened: a secret put in the wrong
// field is named by its reference instead.
func Parse(doc []byte, lookup func(string) (string, bool)) (Config, error) {
	var read refs
	c, errs := parse(doc, read.track(lookup))
	if c == nil {
		return Config{}, read.redact(errors.Join(errs...))
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	return *c, read.redact(errors.Join(errs...))
}

// minRedacted is the shortest value read from a reference that Parse's
// errors name by its reference (a shorter one, such as tls: none, would
// be replaced inside other words).
const minRedacted = 6

// refs are the values Parse read from references, each with its ${NAME}.
type refs struct{ read []readRef }

type readRef struct{ value, name string }

func (r *refs) track(lookup func(string) (string, bool)) func(string) (string, bool) {
	if lookup == nil {
		return nil
	}
	return func(name string) (string, bool) {
		v, ok := lookup(name)
		if ok && len(v) >= minRedacted {
			r.read = append(r.read, readRef{v, "${" + name + "}"})
			if len(v) > 10 { // the YAML decoder's errors shorten a value so
				r.read = append(r.read, readRef{"`" + v[:7] + "...`", "`${" + name + "}`"})
			}
		}
		return v, ok
	}
}

// redact is err with every value read named by its reference instead.
func (r *refs) redact(err error) error {
	if err == nil || len(r.read) == 0 {
		return err
	}
	// The longest first, so that a value inside another is not replaced
	// in it (the replacer tries its pairs in order at each position).
	slices.SortStableFunc(r.read, func(a, b readRef) int { return len(b.value) - len(a.value) })
	var args []string
	for _, x := range r.read {
		args = append(args, x.value, x.name)
	}
	return errors.New(strings.NewReplacer(args...).Replace(err.Error()))
}

// parse decodes doc. It returns every reference that is not set and every
// key that is unknown; c is nil only when the document could not be read
// at all (then the errors say why).
func parse(doc []byte, lookup func(string) (string, bool)) (*Config, []error) {
	fail := func(err error) (*Config, []error) { return nil, []error{fmt.Errorf("notification config: %w", err)} }
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return fail(err)
	}
	if root.Kind == 0 {
		return fail(errors.New("the document is empty"))
	}
	var errs []error
	for _, e := range expand(&root, lookup, nil) {
		errs = append(errs, fmt.Errorf("notification config: %w", e))
	}
	b, err := yaml.Marshal(&root)
	if err != nil {
		return fail(err)
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var te *yaml.TypeError
	switch err := dec.Decode(&c); {
	case errors.As(err, &te):
		// Unknown keys and values of the wrong type: every one, and the
		// rest of the document is still checked.
		for _, e := range te.Errors {
			errs = append(errs, fmt.Errorf("notification config: %s", e))
		}
	case err != nil && !errors.Is(err, io.EOF):
		return fail(err)
	}
	return &c, errs
}

var ref = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces the references in n's scalars, and returns errs with one
// more for each reference that is not set.
func expand(n *yaml.Node, lookup func(string) (string, bool), errs []error) []error {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		n.Value = ref.ReplaceAllStringFunc(n.Value, func(m string) string {
			name := m[2 : len(m)-1]
			if lookup != nil {
				if v, ok := lookup(name); ok {
					return v
				}
			}
			errs = append(errs, fmt.Errorf("line %d: ${%s} is not set", n.Line, name))
			return ""
		})
		n.Tag, n.Style = "!!str", yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		errs = expand(c, lookup, errs)
	}
	return errs
}

// ParseRouting reads the parts of a configuration document that say who
// is told of what (the targets' names, types and events, the defaults),
// without the values of its ${NAME} references: for the functions that
// write deliveries but never send them, and so never see a secret.
func ParseRouting(doc []byte) (*Targets, error) {
	c, errs := parse(doc, func(string) (string, bool) { return "", true })
	if c == nil {
		return nil, errors.Join(errs...)
	}
	for _, name := range c.Names() {
		tc := c.Targets[name]
		errs = append(errs, (TargetConfig{Type: tc.Type, Events: tc.Events, URL: "https://routing.invalid", Secret: "routing-only-placeholder", Topic: "t", To: []string{"a@routing.invalid"}}).validate(name, EmailConfig{From: "a@routing.invalid", SES: SESConfig{Enabled: true}})...)
	}
	errs = append(errs, c.checkDocument()...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Targets{cfg: *c, names: c.Names(), senders: map[string]Sender{}}, nil
}

// Validate checks the configuration and names everything that is wrong,
// target by target. It never repeats a secret in its errors.
func (c Config) Validate() error {
	var errs []error
	email := false
	for _, name := range c.Names() {
		errs = append(errs, c.Targets[name].validate(name, c.Email)...)
		email = email || c.Targets[name].Type == TypeEmail
	}
	if email && !c.Email.SES.Enabled {
		errs = append(errs, c.Email.SMTP.validate()...)
	}
	errs = append(errs, c.checkDocument()...)
	return errors.Join(errs...)
}

// checkDocument is what ParseRouting and Validate both check beyond the
// targets themselves: names, the schedule, Slack's part and the limits.
func (c Config) checkDocument() []error {
	return slices.Concat(c.checkNames(), c.checkSchedule(), c.Slack.checkSlack(), c.Limits.check())
}

// checkSchedule checks each target's remind and the escalation chain.
func (c Config) checkSchedule() []error {
	var errs []error
	for _, name := range c.Names() {
		if r := c.Targets[name].Remind; r != "" {
			if _, err := positive(r); err != nil {
				errs = append(errs, fmt.Errorf("target %q: remind: %w", name, err))
			}
		}
	}
	if _, err := c.escalation(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// positive parses a positive duration such as "15m".
func positive(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration such as \"15m\" or \"1h30m\"", s)
	case d <= 0:
		return 0, fmt.Errorf("%q must be a positive duration such as \"15m\"", s)
	}
	return d, nil
}

// escalation is the deployment's chain, checked.
func (c Config) escalation() ([]elicitation.EscalationStep, error) {
	var chain []elicitation.EscalationStep
	for i, st := range c.Escalate {
		d, err := positive(st.After)
		if err != nil {
			return nil, fmt.Errorf("notification config: escalate[%d].after: %w", i, err)
		}
		chain = append(chain, elicitation.EscalationStep{After: d, Notify: st.Notify})
	}
	known := func(n string) bool { _, ok := c.Targets[n]; return ok }
	if err := elicitation.CheckEscalation(chain, 0, known, "escalate"); err != nil {
		return nil, fmt.Errorf("notification config: %w", err)
	}
	return chain, nil
}

// checkNames checks that defaults and owners name targets.
func (c Config) checkNames() []error {
	var errs []error
	for _, d := range c.Defaults {
		if _, ok := c.Targets[d]; !ok {
			errs = append(errs, fmt.Errorf("defaults names %q, which is not a target", d))
		}
	}
	for _, o := range slices.Sorted(maps.Keys(c.Owners)) {
		for _, n := range c.Owners[o] {
			if _, ok := c.Targets[n]; !ok {
				errs = append(errs, fmt.Errorf("owners: %q names %q, which is not a target", o, n))
			}
		}
	}
	return errs
}

// Names lists the targets' names in order.
func (c Config) Names() []string { return slices.Sorted(maps.Keys(c.Targets)) }

func (t TargetConfig) validate(name string, email EmailConfig) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("target %q: %s", name, fmt.Sprintf(format, a...)))
	}
	if !targetName.MatchString(name) {
		bad("a name is 1 to 64 of a-z, 0-9, '_', '.', '-', starting with a letter or digit")
	}
	for _, ev := range t.Events {
		if !slices.Contains(elicitation.Events, ev) {
			bad("events: %q is not one of created, escalated, decided, canceled, expired", ev)
		}
	}
	if t.Interactive && t.Type != TypeSlack {
		bad("interactive is for slack targets only")
	}
	switch t.Type {
	case TypeWebhook:
		t.checkURL(bad, "url")
		if len(t.Secret) < 16 {
			bad("secret (the HMAC key receivers verify signatures with) must be at least 16 characters")
		}
	case TypeSlack:
		t.checkURL(bad, "url (the Slack incoming webhook URL)")
	case TypeNtfy:
		t.checkURL(bad, "url (the ntfy server, for example https://ntfy.sh)")
		if t.Topic == "" || strings.ContainsAny(t.Topic, "/?# ") {
			bad("topic is required: the ntfy topic name (no '/', '?', '#' or spaces)")
		}
	case TypeEmail:
		t.checkEmail(bad, email)
	case "":
		bad("type is required: webhook, slack, email or ntfy")
	default:
		bad("type %q is not webhook, slack, email or ntfy", t.Type)
	}
	return errs
}

func (t TargetConfig) checkURL(bad func(string, ...any), what string) {
	u, err := url.Parse(t.URL)
	if t.URL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		bad("%s must be an absolute http(s) URL", what)
	}
}

func (t TargetConfig) checkEmail(bad func(string, ...any), email EmailConfig) {
	if len(t.To) == 0 {
		bad("to lists no recipient")
	}
	for _, a := range t.To {
		if _, err := mail.ParseAddress(a); err != nil {
			bad("to: %q is not an e-mail address", a)
		}
	}
	if _, err := mail.ParseAddress(email.From); err != nil {
		bad("email.from must be the sender's address")
	}
	if !email.SES.Enabled && email.SMTP.Addr == "" {
		bad("e-mail needs email.smtp.addr (host:port) or email.ses.enabled")
	}
}

// validate checks the SMTP relay once, for every e-mail target: tls none
// is for a relay on loopback, and never with a password (it would cross
// the connection in clear).
func (s SMTPConfig) validate() []error {
	var errs []error
	switch s.TLS {
	case "", "starttls", "tls":
	case "none":
		if s.Username != "" {
			errs = append(errs, errors.New("email.smtp: tls is none and a username is set, which would send the password in clear: use starttls (the default) or tls"))
		}
		if host, _, err := net.SplitHostPort(s.Addr); s.Addr != "" && (err != nil || !isLoopback(host)) {
			errs = append(errs, errors.New("email.smtp: tls none is only for a relay on loopback (127.0.0.1, [::1] or localhost); for another relay use starttls (the default) or tls"))
		}
	default:
		errs = append(errs, errors.New("email.smtp.tls must be starttls, tls or none"))
	}
	if _, _, err := net.SplitHostPort(s.Addr); s.Addr != "" && err != nil {
		errs = append(errs, errors.New("email.smtp.addr must be host:port"))
	}
	return errs
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// events is the target's events, with the default.
func (t TargetConfig) events() []elicitation.Event {
	if len(t.Events) == 0 {
		return []elicitation.Event{elicitation.EventCreated}
	}
	return t.Events
}
