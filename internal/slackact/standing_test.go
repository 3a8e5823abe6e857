package slackact_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// slackReviewer is the identity the handler makes of a mapped Slack user.
func slackReviewer(user, email string) context.Context {
	return elicitation.WithIdentity(context.Background(), elicitation.Identity{
		Issuer: "https://slack.com", Subject: "slack:" + team + ":" + user, Email: email, EmailVerified: true,
	})
}

func (e *env) rulesOf(user, email string) []elicitation.Rule {
	e.t.Helper()
	rs, err := e.svc.Rules(slackReviewer(user, email))
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// create makes an approval of the agent's straight through the Service
// (no notice delivered): what a later request of the agent is.
func (e *env) create(ctx string) elicitation.State {
	e.t.Helper()
	c, err := e.svc.Create(context.Background(), e.owner, elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: json.RawMessage(ctx)})
	if err != nil {
		e.t.Fatal(err)
	}
	return c.State
}

// withAction is msg with its button from renamed to: a press Slack would
// never send for it (the button is not there), signed as Slack signs.
func withAction(t *testing.T, msg map[string]any, from, to string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(jsonText(msg), `"action_id":"`+from+`"`, `"action_id":"`+to+`"`)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const gateCall = `{"tool":"deploy","arguments":{"env":"prod","service":"api"},"argumentsDigest":"sha256:0f"}`

// TestApproveStanding: Approve for 1 hour approves as the mapped reviewer
// and makes a standing approval of an hour and 10 uses holding every
// field the domain holds by default (a gate call's arguments, else the
// context's fields); a later request that matches is decided by it in
// the reviewer's name, one that differs in a held field is not; the
// reviewer is told what was made; a replay makes nothing more.
func TestApproveStanding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, context string
		paths         [][]string
		differs       string // a context differing in one held field
	}{
		{"context fields", `{"service":"api","version":"1.3"}`, [][]string{{"service"}, {"version"}}, `{"service":"api","version":"1.4"}`},
		{"gate call", gateCall, [][]string{{"arguments", "env"}, {"arguments", "service"}},
			`{"tool":"deploy","arguments":{"env":"staging","service":"api"},"argumentsDigest":"sha256:1a"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOptions{signIn: true})
			c, msg := e.approval(elicitation.Input{Context: json.RawMessage(tc.context)})
			want := []string{notify.SlackActionApprove, notify.SlackActionApproveStanding, notify.SlackActionApproveComment, notify.SlackActionDecline, notify.SlackActionReview}
			if got := buttons(msg); !slices.Equal(got, want) {
				t.Fatalf("buttons %v, want %v", got, want)
			}
			in := e.slack.press(msg, notify.SlackActionApproveStanding, "U0ALICE001")
			e.ok(in)
			st := e.state(c.State.ID)
			if st.Status != elicitation.StatusSubmitted || st.DecidedBy != "alice@example.com" || st.DecidedVia != elicitation.ViaSlack {
				t.Fatalf("state %+v", st)
			}
			replies := e.slack.repliesTo(in.responseURL)
			if len(replies) != 2 {
				t.Fatalf("replies %v, want the updated message and a note", replies)
			}
			wantReplaced(t, replies[0], "Decided by alice@example.com")
			wantEphemeral(t, replies[1], "Approved. Later requests like this one are approved for you too: up to 10, for 1 hour.")

			rules := e.rulesOf("U0ALICE001", "alice@example.com")
			if len(rules) != 1 {
				t.Fatalf("rules %+v, want one", rules)
			}
			r := rules[0]
			var paths [][]string
			for _, k := range r.Constraints {
				paths = append(paths, k.Path)
			}
			if r.By != "alice@example.com" || r.Author.Issuer != "https://slack.com" || r.Principal != e.owner || r.From != c.State.ID ||
				r.MaxUses != 10 || !r.ExpiresAt.Equal(t0.Add(time.Hour)) || !slices.EqualFunc(paths, tc.paths, slices.Equal) {
				t.Fatalf("rule %+v constraints %v, want %v", r, paths, tc.paths)
			}

			e.clock.Add(time.Minute)
			e.ok(in) // Slack sends the press again: nothing more is made
			if rs := e.rulesOf("U0ALICE001", "alice@example.com"); len(rs) != 1 || e.count(c.State.ID, elicitation.ActionRuleCreated) != 1 {
				t.Fatalf("after a replay: rules %+v", rs)
			}

			later := e.create(tc.context)
			if later.Status != elicitation.StatusSubmitted || later.DecidedVia != elicitation.ViaRule || later.DecidedBy != "alice@example.com" {
				t.Fatalf("a matching request: %+v", later)
			}
			if other := e.create(tc.differs); other.Status != elicitation.StatusPending {
				t.Fatalf("a request differing in a held field: %+v", other)
			}
		})
	}
}

// TestApproveStandingRefused: a press that may not make the standing
// approval decides nothing and makes no rule, and the presser is told why.
func TestApproveStandingRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		signIn bool
		policy elicitation.StandingPolicy
		in     elicitation.Input
		forged string // press this button renamed to Approve for 1 hour (it is not offered)
		user   string
		note   string
	}{
		{name: "not a named reviewer", signIn: true, in: elicitation.Input{Reviewers: []string{"alice@example.com"}},
			user: "U0BOB00001", note: "not one of the reviewers"},
		{name: "the agent's owner", signIn: true, in: elicitation.Input{Context: json.RawMessage(`{"service":"api"}`)},
			user: "U0ALICE001", note: "You created this request"},
		{name: "a gate call with no argument to hold", signIn: true, policy: elicitation.StandingPolicy{RequireArgument: true},
			in:     elicitation.Input{Context: json.RawMessage(`{"tool":"deploy","arguments":{},"argumentsDigest":"sha256:0f"}`)},
			forged: notify.SlackActionApprove, user: "U0ALICE001", note: "cannot be approved standing from Slack"},
		{name: "a context with a field too large to hold", signIn: true,
			in:     elicitation.Input{Context: json.RawMessage(`{"service":"api","script":"` + strings.Repeat("x", elicitation.MaxConstraintBytes) + `"}`)},
			forged: notify.SlackActionApprove, user: "U0ALICE001", note: "could not hold all of it"},
		{name: "a quorum of two", signIn: true, in: elicitation.Input{Approvals: 2}, forged: notify.SlackActionApprove,
			user: "U0ALICE001", note: "cannot be approved standing"},
		{name: "no sign-in", forged: notify.SlackActionApprove, user: "U0ALICE001", note: "Nothing was approved: Standing approvals need reviewer sign-in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := envOptions{signIn: tc.signIn, standing: tc.policy}
			if tc.name == "the agent's owner" {
				o.owner = "alice@example.com"
			}
			e := newEnv(t, o)
			c, msg := e.approval(tc.in)
			if tc.forged != "" {
				if slices.Contains(buttons(msg), notify.SlackActionApproveStanding) {
					t.Fatalf("Approve for 1 hour is offered: %v", buttons(msg))
				}
				msg = withAction(t, msg, tc.forged, notify.SlackActionApproveStanding)
			}
			in := e.slack.press(msg, notify.SlackActionApproveStanding, tc.user)
			e.ok(in)
			if st := e.state(c.State.ID); st.Status != elicitation.StatusPending || len(st.Approvers) != 0 {
				t.Fatalf("state %+v", st)
			}
			replies := e.slack.repliesTo(in.responseURL)
			if len(replies) != 1 {
				t.Fatalf("replies %v", replies)
			}
			wantEphemeral(t, replies[0], tc.note)
			if !tc.signIn {
				return // no rules without sign-in: Rules refuses to list
			}
			for _, u := range [][2]string{{"U0ALICE001", "alice@example.com"}, {"U0BOB00001", "bob@example.com"}} {
				if rs := e.rulesOf(u[0], u[1]); len(rs) != 0 {
					t.Errorf("%s holds rules %+v", u[1], rs)
				}
			}
			if n := e.count(c.State.ID, elicitation.ActionRuleCreated); n != 0 {
				t.Errorf("%d rule_created entries", n)
			}
		})
	}
}

// TestApproveStandingOffered: the button is on an approval a rule can
// decide whose fields it can hold whole, with sign-in, and on nothing else.
func TestApproveStandingOffered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{signIn: true})
	opts := []json.RawMessage{json.RawMessage(`{"id":"eu-west-1"}`), json.RawMessage(`{"id":"us-east-1"}`)}
	_, plain := e.approval(elicitation.Input{})
	_, form := e.approval(elicitation.Input{RequestedSchema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}}}`)})
	_, quorum := e.approval(elicitation.Input{Approvals: 2})
	_, empty := e.approval(elicitation.Input{Context: json.RawMessage(`{}`)})
	_, selection := e.selection(elicitation.Input{Options: opts})
	noSignIn := newEnv(t, envOptions{})
	_, unsigned := noSignIn.approval(elicitation.Input{})
	for name, c := range map[string]struct {
		msg  map[string]any
		want bool
	}{
		"approval":            {plain, true},
		"a form":              {form, false},
		"a quorum of two":     {quorum, false},
		"no context to hold":  {empty, false},
		"a selection":         {selection, false},
		"approval, no signIn": {unsigned, false},
	} {
		if got := slices.Contains(buttons(c.msg), notify.SlackActionApproveStanding); got != c.want {
			t.Errorf("%s: Approve for 1 hour offered %v, want %v (buttons %v)", name, got, c.want, buttons(c.msg))
		}
	}
}
