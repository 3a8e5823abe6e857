package notify_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

const sampleConfig = `
defaults: [oncall]
owners:
  deploy-bot: [audit]
targets:
  oncall:
    type: slack
    url: ${SLACK_WEBHOOK_URL}
    events: [created, decided, canceled, expired]
  approvers:
    type: email
    to: [alice@example.com]
  audit:
    type: webhook
    url: https://hooks.example.com/elicitation
    secret: ${HOOK_SECRET}
    events: [decided, canceled, expired]
  phone:
    type: ntfy
    url: https://ntfy.sh
    topic: alice-reviews
email:
  from: Elicitation <elicitation@example.com>
  smtp: {addr: "127.0.0.1:1025", tls: none}
`

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParse(t *testing.T) {
	t.Parallel()
	c, err := notify.Parse([]byte(sampleConfig), env(map[string]string{"SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/x", "HOOK_SECRET": "0123456789abcdef-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Targets["oncall"].URL != "https://hooks.slack.com/services/T/B/x" || c.Targets["audit"].Secret != "0123456789abcdef-secret" {
		t.Errorf("references not expanded: %+v", c.Targets)
	}
	tg, err := notify.New(c, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tg.Targets("alice", []string{"phone", "oncall"}); err != nil || !slices.Equal(got, []string{"oncall", "phone"}) {
		t.Errorf("Targets = %v, %v; want the default, then the named, once each", got, err)
	}
	if got, err := tg.Targets("deploy-bot", []string{"phone", "audit"}); err != nil || !slices.Equal(got, []string{"oncall", "audit", "phone"}) {
		t.Errorf("deploy-bot's Targets = %v, %v; want the default, the owner's, then the named", got, err)
	}
	_, err = tg.Targets("alice", []string{"https://evil.example"})
	if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument || !strings.Contains(err.Error(), `the targets are "approvers", "audit", "oncall", "phone"`) {
		t.Errorf("unknown name: %v", err)
	}
	for _, w := range []struct {
		target string
		ev     elicitation.Event
		want   bool
	}{{"approvers", elicitation.EventCreated, true}, {"approvers", elicitation.EventDecided, false}, {"audit", elicitation.EventCreated, false}, {"audit", elicitation.EventExpired, true}, {"nope", elicitation.EventCreated, false}} {
		if got := tg.Wants(w.target, w.ev); got != w.want {
			t.Errorf("Wants(%s, %s) = %v", w.target, w.ev, got)
		}
	}
	// JSON is YAML.
	if _, err := notify.Parse([]byte(`{"targets":{"h":{"type":"webhook","url":"http://127.0.0.1:9/h","secret":"0123456789abcdef"}}}`), nil); err != nil {
		t.Errorf("JSON config: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", ``, "the document is empty"},
		{"unknown key", `targets: {a: {type: slack, url: "https://x.example", colour: red}}`, "field colour not found"},
		{"no type", `targets: {a: {url: "https://x.example"}}`, `target "a": type is required`},
		{"bad type", `targets: {a: {type: sms}}`, `target "a": type "sms" is not webhook, slack, email or ntfy`},
		{"bad name", `targets: {"On Call": {type: slack, url: "https://x.example"}}`, `target "On Call": a name is 1 to 64`},
		{"bad event", `targets: {a: {type: slack, url: "https://x.example", events: [approved]}}`, `events: "approved" is not one of`},
		{"relative url", `targets: {a: {type: slack, url: "/hook"}}`, `url (the Slack incoming webhook URL) must be an absolute http(s) URL`},
		{"short secret", `targets: {a: {type: webhook, url: "https://x.example", secret: short}}`, "at least 16 characters"},
		{"no topic", `targets: {a: {type: ntfy, url: "https://ntfy.sh"}}`, "topic is required"},
		{"bad recipient", `{targets: {a: {type: email, to: [nobody]}}, email: {from: a@b.c, smtp: {addr: "h:25"}}}`, `to: "nobody" is not an e-mail address`},
		{"no transport", `{targets: {a: {type: email, to: [x@y.z]}}, email: {from: a@b.c}}`, "email.smtp.addr"},
		{"unknown default", `{defaults: [ops], targets: {a: {type: slack, url: "https://x.example"}}}`, `defaults names "ops"`},
		{"unknown owner target", `{owners: {bob: [ops]}, targets: {a: {type: slack, url: "https://x.example"}}}`, `owners: "bob" names "ops"`},
		{"unset reference", `targets: {a: {type: slack, url: "${NOPE}"}}`, `${NOPE} is not set`},
		{"negative limit", `{targets: {a: {type: slack, url: "https://x.example"}}, limits: {perPrincipal: -1}}`, "limits: perPrincipal and all are notices an hour"},
		{"limits upside down", `{targets: {a: {type: slack, url: "https://x.example"}}, limits: {perPrincipal: 100, all: 50}}`, "limits: perPrincipal (100) is more than all (50)"},
		{"secret not echoed", `targets: {a: {type: webhook, url: "not a url", secret: "s3cr3t-s3cr3t-s3cr3t"}}`, `url must be an absolute`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := notify.Parse([]byte(tc.doc), env(nil))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("the error repeats a secret: %v", err)
			}
		})
	}
}

// TestReferencesNotEchoed: a value read from a ${NAME} reference (a
// secret, perhaps put in the wrong field) is never repeated in an error,
// whole or in part: the error names the reference instead.
func TestReferencesNotEchoed(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-hunter2-hunter2"
	for _, tc := range []struct{ name, doc, want string }{
		{"type", `{targets: {a: {type: "${S}"}}}`, `type "${S}" is not webhook`},
		{"remind", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t, remind: "${S}"}}}`, `remind: "${S}" is not a duration`},
		{"after", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t}}, escalate: [{after: "${S}", notify: [a]}]}`, `escalate[0].after: "${S}" is not a duration`},
		{"recipient", `{targets: {a: {type: email, to: ["${S}"]}}, email: {from: a@b.c, smtp: {addr: "h:25"}}}`, `to: "${S}" is not an e-mail address`},
		{"list", `{targets: {a: {type: email, to: "${S}"}}, email: {from: a@b.c, smtp: {addr: "h:25"}}}`, "cannot unmarshal"},
		{"bool", `{targets: {a: {type: slack, url: "https://x.example", interactive: "${S}"}}}`, "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := notify.Parse([]byte(tc.doc), env(map[string]string{"S": secret}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret[:7]) {
				t.Errorf("the error repeats the reference's value: %v", err)
			}
		})
	}
}

// TestParseRouting: the functions that only write deliveries read who is
// told of what without any reference's value, and still refuse a bad
// document.
func TestParseRouting(t *testing.T) {
	t.Parallel()
	tg, err := notify.ParseRouting([]byte(sampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tg.Targets("deploy-bot", []string{"approvers"}); err != nil || !slices.Equal(got, []string{"oncall", "audit", "approvers"}) {
		t.Errorf("Targets = %v, %v", got, err)
	}
	if !tg.Wants("audit", elicitation.EventExpired) || tg.Wants("audit", elicitation.EventCreated) {
		t.Error("events not read")
	}
	if _, ok := tg.Sender("oncall"); ok {
		t.Error("a routing-only configuration has senders")
	}
	for _, bad := range []string{`targets: {a: {type: sms}}`, `{defaults: [b], targets: {a: {type: slack, url: "${U}"}}}`, `targets: {a: {type: slack, events: [approved]}}`} {
		if _, err := notify.ParseRouting([]byte(bad)); err == nil {
			t.Errorf("ParseRouting(%s) accepted it", bad)
		}
	}
}

// TestParseNamesEveryMistake: a document with several mistakes is refused
// with all of them named at once: each unset reference, each unknown key,
// each invalid target, each name that is no target.
func TestParseNamesEveryMistake(t *testing.T) {
	t.Parallel()
	doc := `
defaults: [oncall, pager]
targets:
  oncall:
    type: slack
    url: ${SLACK_URL}
    colour: red
  audit:
    type: webhook
    url: https://hooks.example.com/x
    secret: ${HOOK_SECRET}
  phone:
    type: ntfy
    url: /relative
  mail:
    type: email
    to: [nobody]
email:
  from: e@example.com
  smtp: {addr: "smtp.example.com:25", tls: none, username: bob, pasword: x}
extra: 1
`
	_, err := notify.Parse([]byte(doc), env(nil))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"${SLACK_URL} is not set", "${HOOK_SECRET} is not set",
		"field colour not found", "field pasword not found", "field extra not found",
		`target "audit": secret`, `target "phone": url`, `target "phone": topic is required`, `target "mail": to: "nobody"`,
		"password in clear", "only for a relay on loopback", `defaults names "pager"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q:\n%v", want, err)
		}
	}
}

// TestSlackMapping: the Slack users' mapping reads the address alone or
// the mapping with groups, through ParseRouting too (the submit function
// reads it without the secrets), and each mistake is named.
func TestSlackMapping(t *testing.T) {
	t.Parallel()
	const doc = `
targets:
  team: {type: slack, url: "${SLACK_WEBHOOK_URL}", interactive: true}
slack:
  teams: [T0TEAM0001]
  users:
    U0ALICE001: alice@example.com
    U0BOB00001: {reviewer: bob@example.com, groups: [release]}
    carol@corp.example: carol@example.com
`
	c, err := notify.Parse([]byte(doc), env(map[string]string{"SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/x"}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Targets["team"].Interactive {
		t.Error("interactive not read")
	}
	rt, err := notify.ParseRouting([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	app := rt.SlackApp()
	for _, tc := range []struct {
		id, email, want string
		ok              bool
	}{
		{"U0ALICE001", "", "alice@example.com", true},
		{"U0BOB00001", "", "bob@example.com", true},
		{"U0CAROL001", "Carol@Corp.example", "carol@example.com", true},
		{"U0MALLORY1", "mallory@corp.example", "", false},
	} {
		u, ok := app.User(tc.id, tc.email)
		if ok != tc.ok || u.Reviewer != tc.want {
			t.Errorf("User(%q, %q) = %+v, %v", tc.id, tc.email, u, ok)
		}
	}
	if u, _ := app.User("U0BOB00001", ""); !slices.Equal(u.Groups, []string{"release"}) || !app.ByEmail() {
		t.Errorf("bob %+v, by e-mail %v", u, app.ByEmail())
	}
	bad := `
targets:
  hook: {type: webhook, url: "https://h.example", secret: 0123456789abcdef0, interactive: true}
slack:
  teams: [acme]
  users:
    alice: alice@example.com
    U0BOB00001: {reviewer: "Bob <bob@example.com>"}
    U0CAROL001: {reviewer: carol@example.com, team: x}
`
	_, err = notify.Parse([]byte(bad), nil)
	for _, want := range []string{
		"interactive is for slack targets only", `slack.teams: "acme"`, `slack.users: "alice" is neither`,
		`slack.users: "U0BOB00001": the reviewer must be an e-mail address`, "field team not found",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}
