package notify_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// TestRemindersReachTheDelegate: while alice has delegated to bob, the
// reminders and escalation notices an e-mail target sends to alice reach
// bob too (a real SMTP server, Mailpit); the created notice (not a
// reminder) and a reminder after the delegation's end reach alice alone.
func TestRemindersReachTheDelegate(t *testing.T) {
	t.Parallel()
	mp := startMailpit(t)
	st, err := boltstore.Open(dbPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all := []elicitation.Event{elicitation.EventCreated, elicitation.EventEscalated}
	cfg := notify.Config{
		Targets:  map[string]notify.TargetConfig{"approvers": {Type: notify.TypeEmail, To: []string{"Alice Reviewer <alice@example.com>"}, Events: all, Remind: "15m"}},
		Escalate: []notify.StepConfig{{After: "40m", Notify: []string{"approvers"}}},
		Email:    notify.EmailConfig{From: "Elicitation <elicitation@example.com>", SMTP: notify.SMTPConfig{Addr: mp.SMTP, TLS: "none"}},
	}
	targets, err := notify.New(cfg, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := testclock.New(time.Now().UTC())
	svc := elicitation.NewService(elicitation.Config{Store: st, Now: clk.Now, Notifications: targets})
	d := &notify.Deliverer{Store: st, Targets: targets, Now: clk.Now, Log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	sweep := func(want int) {
		t.Helper()
		if n, err := d.DeliverDue(ctx); err != nil || n != want {
			t.Fatalf("DeliverDue = %d, %v; want %d", n, err, want)
		}
	}
	link := func(id, key string) string { return "https://review.example/review/" + id + "/" + key }
	if _, err := svc.Create(ctx, "deploy-bot", elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: json.RawMessage(`1`), TimeoutSeconds: 3600,
		Notify: elicitation.Notify{Targets: []string{"approvers"}, ReviewLink: link}}); err != nil {
		t.Fatal(err)
	}
	sweep(1) // created
	now := clk.Now()
	if err := st.PutDelegation(ctx, elicitation.Delegation{ID: "d1", From: "alice@example.com", To: "bob@example.com", Start: now, End: now.Add(42 * time.Minute), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	clk.Add(15 * time.Minute)
	sweep(1) // reminder 1
	clk.Add(15 * time.Minute)
	sweep(1) // reminder 2
	clk.Add(10 * time.Minute)
	sweep(1) // the escalation
	clk.Add(5 * time.Minute)
	sweep(1) // reminder 3, past the delegation's end
	list := mp.waitMessages(t, 5)
	got := map[string]int{}
	for _, m := range list {
		var to []string
		for _, a := range m.To {
			to = append(to, a.Address)
		}
		b, _ := json.Marshal(to)
		got[string(b)]++
	}
	if got[`["alice@example.com","bob@example.com"]`] != 3 || got[`["alice@example.com"]`] != 2 || len(list) != 5 {
		t.Errorf("recipients %v, want reminders 1 and 2 and the escalation to alice and bob, the created notice and reminder 3 (after the end) to alice alone", got)
	}
}

// TestRefusedDelegateCostsNothing: a delegate's address the relay refuses
// (a real SMTP server, Mailpit, taking only example.com recipients) is
// left out of the reminder, which still reaches the reviewers, once, and
// is audited as delivered; a refused address of the target's own still
// fails the send.
func TestRefusedDelegateCostsNothing(t *testing.T) {
	t.Parallel()
	mp := startMailpit(t, "--smtp-allowed-recipients", `@example\.com$`)
	st, err := boltstore.Open(dbPath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	smtp := notify.SMTPConfig{Addr: mp.SMTP, TLS: "none"}
	cfg := notify.Config{
		Targets: map[string]notify.TargetConfig{
			"approvers": {Type: notify.TypeEmail, To: []string{"alice@example.com", "carol@example.com"}, Remind: "15m"},
			"outside":   {Type: notify.TypeEmail, To: []string{"dave@elsewhere.test"}, Remind: "15m"},
		},
		Email: notify.EmailConfig{From: "Elicitation <elicitation@example.com>", SMTP: smtp},
	}
	targets, err := notify.New(cfg, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := testclock.New(time.Now().UTC())
	svc := elicitation.NewService(elicitation.Config{Store: st, Now: clk.Now, Notifications: targets})
	d := &notify.Deliverer{Store: st, Targets: targets, Now: clk.Now, Log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	cr, err := svc.Create(ctx, "deploy-bot", elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: json.RawMessage(`1`), TimeoutSeconds: 3600,
		Notify: elicitation.Notify{Targets: []string{"approvers", "outside"}, ReviewLink: func(id, key string) string { return "https://review.example/review/" + id + "/" + key }}})
	if err != nil {
		t.Fatal(err)
	}
	now := clk.Now()
	if err := st.PutDelegation(ctx, elicitation.Delegation{ID: "d1", From: "alice@example.com", To: "bob@elsewhere.test", Start: now, End: now.Add(time.Hour), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	clk.Add(15 * time.Minute)
	if _, err := d.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	tr, err := svc.Audit(ctx, "deploy-bot", cr.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionNotified {
			notes = append(notes, e.Detail)
		}
	}
	slices.Sort(notes)
	want := []string{
		"created to approvers: delivered (attempt 1)", "created to outside: gave up at attempt 1 (SMTP 550)",
		"reminder 1 to approvers: delivered (attempt 1)", "reminder 1 to outside: gave up at attempt 1 (SMTP 550)",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("audit:\n%s\nwant\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
	list := mp.waitMessages(t, 2)
	if len(list) != 2 {
		t.Errorf("mailpit holds %d messages, want the created notice and the reminder to approvers", len(list))
	}
}
