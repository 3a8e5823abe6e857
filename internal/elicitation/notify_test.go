package elicitation_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// targets is a fake Notifications: "ops" is the default and asks for every
// event, "chat" asks for created and decided only.
type targets struct{ queued atomic.Int32 }

func (*targets) Targets(owner string, names []string) ([]string, error) {
	out := []string{"ops"}
	if owner != "alice" {
		return nil, elicitation.UnknownTarget("owner "+owner, nil)
	}
	for _, n := range names {
		if n != "ops" && n != "chat" {
			return nil, elicitation.UnknownTarget(n, []string{"chat", "ops"})
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (*targets) Wants(target string, ev elicitation.Event) bool {
	return target == "ops" || ev == elicitation.EventCreated || ev == elicitation.EventDecided
}

func (*targets) Remind(string) time.Duration { return 0 }

func (*targets) Escalation() []elicitation.EscalationStep { return nil }

func (*targets) Known(name string) bool { return name == "ops" || name == "chat" }

func (t *targets) Queued() { t.queued.Add(1) }

type outboxEntry struct {
	Event  elicitation.Event
	Target string
}

func outbox(t *testing.T, st elicitation.Store, now time.Time) []outboxEntry {
	t.Helper()
	ds, err := st.DueDeliveries(context.Background(), now, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []outboxEntry
	for _, d := range ds {
		out = append(out, outboxEntry{d.Event, d.Target})
	}
	slices.SortFunc(out, func(a, b outboxEntry) int {
		if a.Event != b.Event {
			return map[bool]int{true: -1, false: 1}[a.Event < b.Event]
		}
		return map[bool]int{true: -1, false: 1}[a.Target < b.Target]
	})
	return out
}

func TestServiceNotifications(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	tg := &targets{}
	svc := elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, Notifications: tg})

	// An unknown name is the agent's error, and nothing is stored.
	_, err = svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), Notify: elicitation.Notify{Targets: []string{"https://evil.example/hook"}}})
	if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument || elicitation.PublicMessage(err) != `notify names "https://evil.example/hook", which is not a notification target of this deployment; the targets are "chat", "ops"` {
		t.Fatalf("unknown target: %v", err)
	}
	if got := outbox(t, st, c.Now().Add(48*time.Hour)); len(got) != 0 {
		t.Fatalf("a refused creation wrote deliveries: %v", got)
	}

	link := func(id, key string) string { return "https://r.example/review/" + id + "/" + key }
	cr, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: json.RawMessage(`1`), TimeoutSeconds: 600,
		Notify: elicitation.Notify{Targets: []string{"chat", "ops"}, ReviewLink: link}})

	if err != nil {
		t.Fatal(err)
	}
	if got, want := outbox(t, st, c.Now()), []outboxEntry{{"created", "chat"}, {"created", "ops"}}; !slices.Equal(got, want) {
		t.Errorf("due at creation = %v, want %v", got, want)
	}
	ds, _ := st.DueDeliveries(ctx, c.Now(), 10)
	if len(ds) == 0 || ds[0].Link != link(cr.State.ID, cr.ReviewKey) {
		t.Errorf("created delivery carries link %q", ds[0].Link)
	}
	if got, want := outbox(t, st, cr.State.ExpiresAt), []outboxEntry{{"created", "chat"}, {"created", "ops"}, {"expired", "ops"}}; !slices.Equal(got, want) {
		t.Errorf("due at expiry = %v, want %v", got, want)
	}
	if tg.queued.Load() != 1 {
		t.Errorf("Queued called %d times, want 1", tg.queued.Load())
	}

	// A decline: decided to both, and the expiry notice withdrawn.
	c.Add(time.Minute)
	if _, err := svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "sub", Decision: elicitation.DecisionDeclined}); err != nil {
		t.Fatal(err)
	}
	if got, want := outbox(t, st, cr.State.ExpiresAt), []outboxEntry{{"created", "chat"}, {"created", "ops"}, {"decided", "chat"}, {"decided", "ops"}}; !slices.Equal(got, want) {
		t.Errorf("due after the decision = %v, want %v", got, want)
	}

	// A cancel: canceled only to ops (chat does not ask), expiry withdrawn.
	cr2, err := svc.Create(ctx, "alice", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: []json.RawMessage{json.RawMessage(`{"id":"a"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Cancel(ctx, "alice", cr2.State.ID); err != nil {
		t.Fatal(err)
	}
	var got []outboxEntry
	all, _ := st.DueDeliveries(ctx, cr2.State.ExpiresAt, 100)
	for _, d := range all {
		if d.RequestID == cr2.State.ID {
			got = append(got, outboxEntry{d.Event, d.Target})
		}
	}
	slices.SortFunc(got, func(a, b outboxEntry) int { return len(a.Event) - len(b.Event) })
	if want := []outboxEntry{{"created", "ops"}, {"canceled", "ops"}}; len(got) != 2 || !slices.Contains(got, want[0]) || !slices.Contains(got, want[1]) {
		t.Errorf("deliveries after the cancel = %v, want %v", got, want)
	}

	// Without targets configured, notify is refused.
	plain := elicitation.NewService(elicitation.Config{Store: st, Now: c.Now})
	_, err = plain.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), Notify: elicitation.Notify{Targets: []string{"ops"}}})
	if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
		t.Errorf("notify without targets: %v", err)
	}
}
