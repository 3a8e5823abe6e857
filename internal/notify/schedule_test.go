package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// scheduleConfig: hook (the default) is reminded every 15 minutes and
// told of escalations; lead is the escalation step's target; audit (the
// agent's owner's, say) is told of outcomes only.
func scheduleConfig(url string) notify.Config {
	all := []elicitation.Event{elicitation.EventCreated, elicitation.EventEscalated, elicitation.EventDecided, elicitation.EventCanceled, elicitation.EventExpired}
	return notify.Config{
		Defaults: []string{"hook"},
		Targets: map[string]notify.TargetConfig{
			"hook":  {Type: notify.TypeWebhook, URL: url, Secret: hookSecret, Events: all, Remind: "15m"},
			"lead":  {Type: notify.TypeWebhook, URL: url, Secret: hookSecret, Events: []elicitation.Event{elicitation.EventDecided}},
			"audit": {Type: notify.TypeWebhook, URL: url, Secret: hookSecret, Events: []elicitation.Event{elicitation.EventDecided, elicitation.EventCanceled, elicitation.EventExpired}},
		},
		Escalate: []notify.StepConfig{{After: "40m", Notify: []string{"lead"}}},
	}
}

// TestRemindersAndEscalation: a request nobody answers reminds its target
// every 15 minutes (at most three times) and escalates to the step's
// target once, with the review link, telling the owner's target without
// it; each notice is sent exactly once, however often the sweep runs, and
// is in the audit trail. A decision withdraws what is still scheduled; an
// expired request's remaining notices are dropped, never sent.
func TestRemindersAndEscalation(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	_, svc, d, clk := deliveryRig(t, scheduleConfig(rc.srv.URL))
	ctx := context.Background()
	sweep := func(what string, want int) {
		t.Helper()
		for range 2 { // a second sweep at the same time sends nothing again
			n, err := d.DeliverDue(ctx)
			if err != nil || n != want {
				t.Fatalf("%s: DeliverDue = %d, %v; want %d attempts", what, n, err, want)
			}
			want = 0
		}
	}
	link := func(id, key string) string { return "https://review.example/review/" + id + "/" + key }
	in := func(msg string, timeout int) elicitation.Input {
		return elicitation.Input{Message: msg, Context: json.RawMessage(`1`), TimeoutSeconds: timeout, Notify: elicitation.Notify{ReviewLink: link}}
	}
	// Unanswered for an hour: reminders at 15, 30 and 45 minutes (none at
	// 60: that is the expiry), the escalation at 40.
	left, err := svc.Create(ctx, "alice", elicitation.KindApproval, in("left alone", 3600))
	if err != nil {
		t.Fatal(err)
	}
	sweep("created", 1)
	clk.Add(14 * time.Minute)
	sweep("before the first reminder", 0)
	clk.Add(time.Minute)
	sweep("reminder 1", 1)
	clk.Add(25 * time.Minute) // 40 minutes: reminder 2 and the escalation to lead and to hook
	sweep("reminder 2 and the escalation", 3)
	// Decided at 50 minutes: reminder 3 is withdrawn with the expiry notice.
	decided, err := svc.Create(ctx, "alice", elicitation.KindApproval, in("decided", 3600))
	if err != nil {
		t.Fatal(err)
	}
	sweep("the second request's created", 1)
	clk.Add(10 * time.Minute)
	if _, err := svc.Submit(ctx, decided.State.ID, decided.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionDeclined}); err != nil {
		t.Fatal(err)
	}
	sweep("the decision, and left alone's reminder 3", 2)
	clk.Add(2 * time.Hour)
	sweep("left alone's expiry (the decided request sends nothing more)", 1)

	rc.mu.Lock()
	got := map[elicitation.Event]int{}
	var escalated []elicitation.Notice
	for ev, ids := range rc.accepted {
		got[ev] = len(ids)
		for _, id := range ids {
			if ev == elicitation.EventEscalated {
				escalated = append(escalated, rc.notices[id])
			}
		}
	}
	rc.mu.Unlock()
	want := map[elicitation.Event]int{elicitation.EventCreated: 2, elicitation.EventReminder: 3, elicitation.EventEscalated: 2, elicitation.EventDecided: 1, elicitation.EventExpired: 1}
	if len(got) != len(want) {
		t.Errorf("accepted %v; want %v", got, want)
	}
	for ev, n := range want {
		if got[ev] != n {
			t.Errorf("accepted %d %s notices, want %d (all: %v)", got[ev], ev, n, got)
		}
	}
	links := 0
	for _, n := range escalated {
		if n.ID != left.State.ID || !slices.Equal(n.EscalatedTo, []string{"lead"}) || n.Step != 1 {
			t.Errorf("escalation notice %+v", n)
		}
		if n.ReviewURL == link(left.State.ID, left.ReviewKey) {
			links++
		}
	}
	if links != 1 {
		t.Errorf("%d escalation notices carry the review link, want 1 (lead's)", links)
	}
	tr, _ := svc.Audit(ctx, "alice", left.State.ID)
	var notes []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionNotified {
			notes = append(notes, e.Detail)
		}
	}
	slices.Sort(notes)
	wantNotes := []string{
		"created to hook: delivered (attempt 1)", "escalated 1 to hook: delivered (attempt 1)", "escalated 1 to lead: delivered (attempt 1)",
		"expired to hook: delivered (attempt 1)", "reminder 1 to hook: delivered (attempt 1)", "reminder 2 to hook: delivered (attempt 1)", "reminder 3 to hook: delivered (attempt 1)",
	}
	if !slices.Equal(notes, wantNotes) {
		t.Errorf("left alone's audit:\n%s\nwant\n%s", strings.Join(notes, "\n"), strings.Join(wantNotes, "\n"))
	}
}

// TestScheduleDroppedAfterExpiry: a reminder still in the outbox when its
// request expired (a deliverer that was down) is dropped, not sent.
func TestScheduleDroppedAfterExpiry(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	_, svc, d, clk := deliveryRig(t, scheduleConfig(rc.srv.URL))
	ctx := context.Background()
	cr, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 1200})
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour) // the deliverer was down all along
	if n, err := d.DeliverDue(ctx); err != nil || n != 3 {
		t.Fatalf("DeliverDue = %d, %v; want the created, expired and the dropped reminder", n, err)
	}
	rc.mu.Lock()
	n := len(rc.accepted[elicitation.EventReminder])
	rc.mu.Unlock()
	if n != 0 {
		t.Errorf("%d reminders sent after expiry", n)
	}
	tr, _ := svc.Audit(ctx, "alice", cr.State.ID)
	found := false
	for _, e := range tr.Entries {
		found = found || e.Detail == "reminder 1 to hook: dropped (the request is no longer pending)"
	}
	if !found {
		t.Errorf("audit has no dropped reminder: %+v", tr.Entries)
	}
}

// TestScheduleBadInput: every mistake is named with its field.
func TestScheduleBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, doc, want string }{
		{"zero remind", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t, remind: 0s}}}`, `target "a": remind: "0s" must be a positive duration such as "15m"`},
		{"negative remind", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t, remind: -5m}}}`, `target "a": remind: "-5m" must be a positive duration`},
		{"not a duration", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t, remind: soon}}}`, `target "a": remind: "soon" is not a duration`},
		{"zero after", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t}}, escalate: [{after: 0m, notify: [a]}]}`, `escalate[0].after: "0m" must be a positive duration`},
		{"unknown target", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t}}, escalate: [{after: 30m, notify: [oncall-lead]}]}`, `escalate[0].notify names "oncall-lead", which is not a notification target`},
		{"no target", `{targets: {a: {type: ntfy, url: "https://ntfy.sh", topic: t}}, escalate: [{after: 30m}]}`, `escalate[0].notify must name at least one notification target`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := notify.Parse([]byte(c.doc), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse: %v; want it to say %q", err, c.want)
			}
			if _, err := notify.ParseRouting([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ParseRouting: %v; want it to say %q", err, c.want)
			}
		})
	}

	// A request's own chain: checked against its expiry and the targets.
	rc := newReceiver(t)
	st, err := boltstore.Open(dbPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	targets, err := notify.New(scheduleConfig(rc.srv.URL), notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := elicitation.NewService(elicitation.Config{Store: st, Notifications: targets})
	for _, c := range []struct {
		name, field, want string
		chain             []elicitation.EscalationStep
	}{
		{"after expiry", "escalate[1].after", "escalate[1].after (2h0m0s) is at or after the request's expiry (1h0m0s after creation)",
			[]elicitation.EscalationStep{{After: time.Minute, Notify: []string{"lead"}}, {After: 2 * time.Hour, Notify: []string{"lead"}}}},
		{"negative", "escalate[0].after", "escalate[0].after must be a positive duration", []elicitation.EscalationStep{{After: -time.Minute, Notify: []string{"lead"}}}},
		{"unknown", "escalate[0].notify", `escalate[0].notify names "boss", which is not a notification target`, []elicitation.EscalationStep{{After: time.Minute, Notify: []string{"boss"}}}},
		// A step sends the review link: not to a target the operator tells
		// of outcomes only (the agent's owner could decide with it).
		{"outcome-only target", "escalate[1].notify", `escalate[1].notify names "audit", which is told of outcomes only`,
			[]elicitation.EscalationStep{{After: time.Minute, Notify: []string{"lead"}}, {After: 2 * time.Minute, Notify: []string{"hook", "audit"}}}},
	} {
		_, err := svc.Create(context.Background(), "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600, Notify: elicitation.Notify{Escalate: c.chain}})
		var e *elicitation.Error
		if !asError(err, &e) || e.Field != c.field || !strings.Contains(e.Message, c.want) || e.Code != elicitation.CodeInvalidArgument {
			t.Errorf("%s: %v; want %s: %q", c.name, err, c.field, c.want)
		}
	}
	if ds, _ := st.DueDeliveries(context.Background(), time.Now().Add(24*time.Hour), 100); len(ds) != 0 {
		t.Errorf("refused creations wrote %d deliveries", len(ds))
	}
	// Those told of new requests, and the deployment chain's, may be named.
	if _, err := svc.Create(context.Background(), "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600,
		Notify: elicitation.Notify{Escalate: []elicitation.EscalationStep{{After: time.Minute, Notify: []string{"hook", "lead"}}}}}); err != nil {
		t.Errorf("a chain of hook and lead: %v", err)
	}
}

func asError(err error, e **elicitation.Error) bool { return errors.As(err, e) }

// TestReminderDecidedWhileSent: a reminder the target accepted is in the
// audit trail even when the decision that withdrew it landed while it was
// being sent (its settle finds the delivery gone).
func TestReminderDecidedWhileSent(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	_, svc, d, clk := deliveryRig(t, scheduleConfig(rc.srv.URL))
	ctx := context.Background()
	cr, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("DeliverDue = %d, %v; want the created notice", n, err)
	}
	decided := make(chan error, 1)
	rc.respond = func(w http.ResponseWriter, n elicitation.Notice, attempt int) bool {
		if n.Event == elicitation.EventReminder {
			_, err := svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionDeclined})
			decided <- err
		}
		return true
	}
	clk.Add(15 * time.Minute)
	if _, err := d.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-decided; err != nil {
		t.Fatalf("the decision during the reminder's send: %v", err)
	}
	tr, err := svc.Audit(ctx, "alice", cr.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionNotified {
			notes = append(notes, e.Detail)
		}
	}
	if !slices.Contains(notes, "reminder 1 to hook: delivered (attempt 1)") {
		t.Errorf("audit %q has no delivered reminder", notes)
	}
}

// TestRemindShortTimeout: a timeoutSeconds under a minute is raised to
// one (docs/notifications.md's example): a 30 s reminder is sent once, at
// 30 s, and the expiry notice at 60 s.
func TestRemindShortTimeout(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	all := []elicitation.Event{elicitation.EventCreated, elicitation.EventExpired}
	_, svc, d, clk := deliveryRig(t, notify.Config{Defaults: []string{"hook"}, Targets: map[string]notify.TargetConfig{
		"hook": {Type: notify.TypeWebhook, URL: rc.srv.URL, Secret: hookSecret, Events: all, Remind: "30s"},
	}})
	ctx := context.Background()
	if _, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 45}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		after time.Duration
		want  int
	}{{0, 1}, {29 * time.Second, 0}, {time.Second, 1}, {29 * time.Second, 0}, {time.Second, 1}, {time.Hour, 0}} {
		clk.Add(step.after)
		if n, err := d.DeliverDue(ctx); err != nil || n != step.want {
			t.Fatalf("after %s more: DeliverDue = %d, %v; want %d", step.after, n, err, step.want)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.accepted[elicitation.EventReminder]) != 1 || len(rc.accepted[elicitation.EventExpired]) != 1 {
		t.Errorf("accepted %v; want one reminder and one expiry notice", rc.accepted)
	}
}
