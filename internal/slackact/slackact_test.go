package slackact_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// lastReply is the last message posted to the interaction's response_url.
func (e *env) lastReply(in interaction) map[string]any {
	e.t.Helper()
	rs := e.slack.repliesTo(in.responseURL)
	if len(rs) == 0 {
		e.t.Fatal("nothing was posted to the response_url")
	}
	return rs[len(rs)-1]
}

func wantReplaced(t *testing.T, msg map[string]any, says string) {
	t.Helper()
	if msg["replace_original"] != true || msg["response_type"] == "ephemeral" {
		t.Errorf("the reply does not replace the message: %s", jsonText(msg))
	}
	if s := jsonText(msg); !strings.Contains(s, says) {
		t.Errorf("the updated message does not say %q: %s", says, s)
	}
}

func wantEphemeral(t *testing.T, msg map[string]any, says string) {
	t.Helper()
	if msg["response_type"] != "ephemeral" || msg["replace_original"] != false {
		t.Errorf("the reply is not an ephemeral note: %s", jsonText(msg))
	}
	if s, _ := msg["text"].(string); !strings.Contains(s, says) {
		t.Errorf("the note says %q, want it to say %q", s, says)
	}
}

// TestApproveButton: Approve decides as the mapped reviewer, through the
// exactly-once path (decidedVia slack), and the message is replaced by one
// that says who decided, without buttons.
func TestApproveButton(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c, msg := e.approval(elicitation.Input{})
	if got := buttons(msg); !slices.Equal(got, []string{notify.SlackActionApprove, notify.SlackActionApproveComment, notify.SlackActionDecline, notify.SlackActionReview}) {
		t.Fatalf("buttons %v", got)
	}
	in := e.slack.press(msg, notify.SlackActionApprove, "U0ALICE001")
	e.ok(in)
	st := e.state(c.State.ID)
	if st.Status != elicitation.StatusSubmitted || st.DecidedBy != "alice@example.com" || st.DecidedVia != elicitation.ViaSlack {
		t.Fatalf("state %+v", st)
	}
	up := e.lastReply(in)
	wantReplaced(t, up, "Decided by alice@example.com")
	if b := buttons(up); len(b) != 0 {
		t.Errorf("the decided message still has buttons %v", b)
	}
}

// TestDeclineWithComment: Decline opens the dialog (views.open with the
// press's trigger_id and the bot token); its submission declines with the
// comment and updates the original message.
func TestDeclineWithComment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c, msg := e.approval(elicitation.Input{})
	press := e.slack.press(msg, notify.SlackActionDecline, "U0BOB00001")
	e.ok(press)
	views := e.slack.openedViews()
	if len(views) != 1 || views[0].Trigger != press.trigger {
		t.Fatalf("views.open calls %+v, want one with trigger %s", views, press.trigger)
	}
	if e.state(c.State.ID).Status != elicitation.StatusPending {
		t.Fatal("opening the dialog decided")
	}
	if body := e.ok(e.slack.submitView(views[0], "U0BOB00001", "  not during the freeze ")); body != "" {
		t.Errorf("the dialog's answer %q, want an empty 200 (close it)", body)
	}
	rec, err := e.store.Load(context.Background(), c.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State.Status != elicitation.StatusDeclined || rec.State.DecidedBy != "bob@example.com" || elicitation.CommentOf(rec.Answer) != "not during the freeze" {
		t.Fatalf("state %+v answer %+v", rec.State, rec.Answer)
	}
	wantReplaced(t, e.lastReply(press), "Decided by bob@example.com")
}

// TestApproveWithCommentNeedsComment: the dialog of Approve with comment
// refuses an empty comment in the dialog itself, and records nothing.
func TestApproveWithCommentTooLong(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c, msg := e.approval(elicitation.Input{})
	e.ok(e.slack.press(msg, notify.SlackActionApproveComment, "U0ALICE001"))
	v := e.slack.openedViews()[0]
	body := e.ok(e.slack.submitView(v, "U0ALICE001", strings.Repeat("x", elicitation.MaxCommentChars+1)))
	var ans struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &ans); err != nil || ans.Action != "errors" || !strings.Contains(ans.Errors["comment"], "at most 2000") {
		t.Fatalf("answer %s", body)
	}
	if e.state(c.State.ID).Status != elicitation.StatusPending {
		t.Fatal("a refused comment decided")
	}
	e.ok(e.slack.submitView(v, "U0ALICE001", "ship it"))
	if st := e.state(c.State.ID); st.Status != elicitation.StatusSubmitted {
		t.Fatalf("state %+v", st)
	}
}

// TestSelectionButtons: a single-choice selection of up to five options
// has a button per option, and pressing one picks it; a multiple-choice
// one opens a dialog of checkboxes whose count rule is checked there.
func TestSelectionButtons(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	opts := []json.RawMessage{json.RawMessage(`{"id":"eu-west-1","label":"Ireland"}`), json.RawMessage(`{"id":"us-east-1","label":"Virginia"}`), json.RawMessage(`{"id":"ap-south-1"}`)}
	c, msg := e.selection(elicitation.Input{Options: opts})
	want := []string{notify.SlackActionSelect + "0", notify.SlackActionSelect + "1", notify.SlackActionSelect + "2", notify.SlackActionDecline, notify.SlackActionReview}
	if got := buttons(msg); !slices.Equal(got, want) {
		t.Fatalf("buttons %v, want %v", got, want)
	}
	in := e.slack.press(msg, notify.SlackActionSelect+"1", "U0ALICE001")
	e.ok(in)
	rec, _ := e.store.Load(context.Background(), c.State.ID)
	if rec.State.Status != elicitation.StatusSubmitted || rec.Answer == nil || !slices.Equal(rec.Answer.SelectedIDs, []string{"us-east-1"}) {
		t.Fatalf("state %+v answer %+v", rec.State, rec.Answer)
	}
	wantReplaced(t, e.lastReply(in), "Selection made")

	multi, msg := e.selection(elicitation.Input{Options: opts, MinSelections: 2, MaxSelections: 2})
	if got := buttons(msg); !slices.Equal(got, []string{notify.SlackActionChoose, notify.SlackActionDecline, notify.SlackActionReview}) {
		t.Fatalf("multiple choice buttons %v", got)
	}
	e.ok(e.slack.press(msg, notify.SlackActionChoose, "U0ALICE001"))
	v := e.slack.openedViews()[0]
	body := e.ok(e.slack.submitView(v, "U0ALICE001", "", "0"))
	if !strings.Contains(body, `"options":"Pick exactly 2 options; 1 were picked."`) {
		t.Fatalf("one of two picked: answer %s", body)
	}
	e.ok(e.slack.submitView(v, "U0ALICE001", "", "0", "2"))
	rec, _ = e.store.Load(context.Background(), multi.State.ID)
	if rec.State.Status != elicitation.StatusSubmitted || !slices.Equal(rec.Answer.SelectedIDs, []string{"eu-west-1", "ap-south-1"}) {
		t.Fatalf("state %+v answer %+v", rec.State, rec.Answer)
	}
}

// TestLinkOnly: a request that needs its form filled, or has more options
// than buttons, shows only Review and decide.
func TestLinkOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	_, form := e.approval(elicitation.Input{RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ticket":{"type":"string"}},"required":["ticket"]}`)})
	var six []json.RawMessage
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		six = append(six, json.RawMessage(`{"id":"`+id+`"}`))
	}
	_, many := e.selection(elicitation.Input{Options: six})
	_, optional := e.approval(elicitation.Input{RequestedSchema: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}}}`)})
	for name, c := range map[string]struct {
		msg  map[string]any
		want []string
	}{
		"required form":  {form, []string{notify.SlackActionReview}},
		"six options":    {many, []string{notify.SlackActionReview}},
		"optional field": {optional, []string{notify.SlackActionApprove, notify.SlackActionApproveComment, notify.SlackActionDecline, notify.SlackActionReview}},
	} {
		if got := buttons(c.msg); !slices.Equal(got, c.want) {
			t.Errorf("%s: buttons %v, want %v", name, got, c.want)
		}
	}
}

// TestRefusedInteractions: what decides nothing. Each case presses
// Approve (or Decline) on a fresh request; none records a decision, and each answers
// as Slack needs (401 to a bad signature, an ephemeral note or an updated
// message otherwise).
func TestRefusedInteractions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		signIn bool
		teams  []string
		action string // default Approve
		token  string // the bot token the service holds
		in     elicitation.Input
		user   string
		secret string
		skew   time.Duration // of the signature's timestamp
		wait   time.Duration // between signing and sending (the clock moves)
		owner  string        // the requests' principal; default deploy-bot
		// userTeam is the pressing user's own workspace (user.team_id)
		// when it is not the message's (team.id): a Slack Connect channel.
		userTeam string
		code     int
		note     string // the ephemeral note, if any
		// audited is the principal of the refusal's audit entry: a mapped
		// user who may not decide is audited as the page audits them.
		audited string
	}{
		{name: "forged signature", user: "U0ALICE001", secret: "not-the-signing-secret-0123456789", code: http.StatusUnauthorized},
		{name: "stale timestamp", user: "U0ALICE001", wait: 5*time.Minute + time.Second, code: http.StatusUnauthorized},
		{name: "timestamp from the future", user: "U0ALICE001", skew: 5*time.Minute + time.Second, code: http.StatusUnauthorized},
		{name: "unknown user", user: "U0MALLORY1", code: http.StatusOK, note: "not mapped to a reviewer"},
		{name: "not a named reviewer", signIn: true, in: elicitation.Input{Reviewers: []string{"alice@example.com"}}, user: "U0BOB00001", code: http.StatusOK, note: "not one of the reviewers", audited: "bob@example.com"},
		{name: "not in the named group", signIn: true, in: elicitation.Input{Reviewers: []string{"group:security"}}, user: "U0BOB00001", code: http.StatusOK, note: "not one of the reviewers", audited: "bob@example.com"},
		{name: "the agent's owner", signIn: true, owner: "alice@example.com", user: "U0ALICE001", code: http.StatusOK, note: "You created this request", audited: "alice@example.com"},
		{name: "the agent's owner, dialog", signIn: true, owner: "alice@example.com", action: notify.SlackActionApproveComment, user: "U0ALICE001", code: http.StatusOK, note: "You created this request", audited: "alice@example.com"},
		{name: "another workspace", teams: []string{"T0OTHER001"}, user: "U0ALICE001", code: http.StatusOK, note: "not one this deployment takes decisions from"},
		// In a channel shared with another organisation, team is the
		// workspace the message was posted from and user.team_id the
		// presser's own (Slack's block_actions payload).
		{name: "another workspace's user in a shared channel", teams: []string{team}, userTeam: "T0OTHER001", user: "U0ALICE001", code: http.StatusOK, note: "not one this deployment takes decisions from"},
		{name: "the dialog cannot open", action: notify.SlackActionDecline, token: "xoxb-revoked", user: "U0ALICE001", code: http.StatusOK, note: "could not be opened"},
		{name: "not a named reviewer, dialog", signIn: true, action: notify.SlackActionDecline, in: elicitation.Input{Reviewers: []string{"alice@example.com"}}, user: "U0BOB00001", code: http.StatusOK, note: "not one of the reviewers", audited: "bob@example.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOptions{signIn: tc.signIn, teams: tc.teams, botToken: tc.token, owner: tc.owner})
			c, msg := e.approval(tc.in)
			action := tc.action
			if action == "" {
				action = notify.SlackActionApprove
			}
			in := e.slack.press(msg, action, tc.user)
			if tc.userTeam != "" {
				in = withUserTeam(t, in, tc.userTeam)
			}
			secret := tc.secret
			if secret == "" {
				secret = signingSecret
			}
			skew := tc.skew
			if tc.wait > 0 {
				// Signed now, arriving after the wait: the clock moved.
				skew = -tc.wait
			}
			code, _ := e.slack.send(in, secret, skew)
			if code != tc.code {
				t.Fatalf("answered %d, want %d", code, tc.code)
			}
			if st := e.state(c.State.ID); st.Status != elicitation.StatusPending {
				t.Fatalf("state %+v", st)
			}
			replies := e.slack.repliesTo(in.responseURL)
			if tc.note == "" {
				if len(replies) != 0 || e.count(c.State.ID, elicitation.ActionSubmissionRefused) != 0 {
					t.Errorf("a refused signature reached the service: replies %v", replies)
				}
				return
			}
			if len(replies) != 1 {
				t.Fatalf("replies %v", replies)
			}
			wantEphemeral(t, replies[0], tc.note)
			if len(e.slack.openedViews()) != 0 {
				t.Error("a dialog was opened")
			}
			if got := e.refusedBy(c.State.ID); tc.audited != "" && !slices.Equal(got, []string{tc.audited}) || tc.audited == "" && len(got) != 0 {
				t.Errorf("refusals audited under %q, want %q", got, tc.audited)
			}
		})
	}
}

// withUserTeam is in with its user's own workspace (user.team_id) set
// to userTeam, its team (the message's workspace) left.
func withUserTeam(t *testing.T, in interaction, userTeam string) interaction {
	t.Helper()
	form, err := url.ParseQuery(in.body)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(form.Get("payload")), &p); err != nil {
		t.Fatal(err)
	}
	p["user"].(map[string]any)["team_id"] = userTeam
	in.body = formBody(p)
	return in
}

// TestStaleAfterWindow: the same request, sent within the window, is
// taken; the check uses the shared clock, not the machine's.
func TestWindowEdge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c, msg := e.approval(elicitation.Input{})
	in := e.slack.press(msg, notify.SlackActionApprove, "U0ALICE001")
	if code, _ := e.slack.send(in, signingSecret, -5*time.Minute+time.Second); code != http.StatusOK {
		t.Fatalf("signed 4m59s ago: %d", code)
	}
	if e.state(c.State.ID).Status != elicitation.StatusSubmitted {
		t.Fatal("not decided")
	}
}

// TestReplay: the same signed interaction sent again (within the window)
// records nothing a second time.
func TestReplay(t *testing.T) {
	t.Parallel()
	for _, action := range []string{notify.SlackActionApprove, notify.SlackActionDecline} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOptions{})
			c, msg := e.approval(elicitation.Input{})
			in := e.slack.press(msg, action, "U0ALICE001")
			e.ok(in)
			if action == notify.SlackActionDecline {
				in = e.slack.submitView(e.slack.openedViews()[0], "U0ALICE001", "no")
				e.ok(in)
			}
			before := e.state(c.State.ID)
			e.clock.Add(time.Minute)
			e.ok(in)
			e.ok(in)
			after := e.state(c.State.ID)
			if before.Status == elicitation.StatusPending || after.DecidedAt != before.DecidedAt || after.SubmissionID != before.SubmissionID {
				t.Fatalf("before %+v after %+v", before, after)
			}
			if n := e.count(c.State.ID, elicitation.ActionDecided); n != 1 {
				t.Errorf("%d decided entries", n)
			}
			if n := e.count(c.State.ID, elicitation.ActionSubmissionRefused); n != 0 {
				t.Errorf("%d refused entries for a replay", n)
			}
		})
	}
}

// TestDecidedMeanwhile: a button of a request decided elsewhere updates
// the message to say who decided, and records nothing.
func TestDecidedMeanwhile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	c, msg := e.approval(elicitation.Input{})
	if _, err := e.svc.Submit(context.Background(), c.State.ID, c.ReviewKey, elicitation.Submission{ID: "page-1", Decision: elicitation.DecisionDeclined, By: "dave@example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{notify.SlackActionApprove, notify.SlackActionDecline} {
		in := e.slack.press(msg, action, "U0ALICE001")
		e.ok(in)
		wantReplaced(t, e.lastReply(in), "Decided by dave@example.com")
	}
	if len(e.slack.openedViews()) != 0 {
		t.Error("a dialog was opened for a decided request")
	}
	st := e.state(c.State.ID)
	if st.Status != elicitation.StatusDeclined || st.DecidedBy != "dave@example.com" || e.count(c.State.ID, elicitation.ActionDecided) != 1 || e.count(c.State.ID, elicitation.ActionSubmissionRefused) != 0 {
		t.Fatalf("state %+v", st)
	}
}

// TestQuorumInSlack: with sign-in and two approvals, the first approval
// keeps the buttons and shows the progress; the same reviewer pressing
// again is told their approval already counts; a second reviewer decides.
func TestQuorumInSlack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{signIn: true})
	c, msg := e.approval(elicitation.Input{Approvals: 2, Reviewers: []string{"alice@example.com", "group:release"}})
	first := e.slack.press(msg, notify.SlackActionApprove, "U0ALICE001")
	e.ok(first)
	up := e.lastReply(first)
	wantReplaced(t, up, "Needs 2 approvals; 1 so far: alice@example.com")
	if !slices.Contains(buttons(up), notify.SlackActionApprove) {
		t.Fatalf("the buttons went after one approval of two: %s", jsonText(up))
	}
	again := e.slack.press(up, notify.SlackActionApprove, "U0ALICE001")
	e.ok(again)
	wantEphemeral(t, e.lastReply(again), "already approved")
	second := e.slack.press(up, notify.SlackActionApprove, "U0BOB00001")
	e.ok(second)
	st := e.state(c.State.ID)
	if st.Status != elicitation.StatusSubmitted || st.DecidedBy != "bob@example.com" {
		t.Fatalf("state %+v", st)
	}
	wantReplaced(t, e.lastReply(second), "Decided by bob@example.com")
}

// TestEmailMapping: a user the mapping names by their Slack e-mail is
// found with users.info.
func TestEmailMapping(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.slack.emails["U0CAROL001"] = "Carol@corp.example"
	c, msg := e.approval(elicitation.Input{})
	e.ok(e.slack.press(msg, notify.SlackActionApprove, "U0CAROL001"))
	if st := e.state(c.State.ID); st.DecidedBy != "carol@example.com" {
		t.Fatalf("state %+v", st)
	}
}
