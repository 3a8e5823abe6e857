package notify_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// TestNoticeLimits: an agent that creates and cancels requests in a loop
// gets its share of a reviewer's phone (an ntfy topic) and no more: past
// its principal's bound its notices are not sent (audited as such), while
// another principal's notice still is; past the bound of all principals
// together nobody's is; the counts come back with time; and a webhook,
// which feeds a system, gets every notice.
func TestNoticeLimits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	pushed := map[string]int{} // first line of the message -> notices
	phone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Message string }
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Errorf("ntfy body: %v", err)
		}
		mu.Lock()
		pushed[strings.SplitN(m.Message, "\n", 2)[0]]++
		mu.Unlock()
	}))
	t.Cleanup(phone.Close)
	rc := newReceiver(t)
	events := []elicitation.Event{elicitation.EventCreated, elicitation.EventCanceled}
	_, svc, d, clk := deliveryRig(t, notify.Config{
		Defaults: []string{"phone", "hook"},
		Targets: map[string]notify.TargetConfig{
			"phone": {Type: notify.TypeNtfy, URL: phone.URL, Topic: "reviews", Events: events},
			"hook":  {Type: notify.TypeWebhook, URL: rc.srv.URL, Secret: hookSecret, Events: events},
		},
	})
	d.Limits = notify.NoticeLimits{PerPrincipal: ratelimit.Rate{Count: 4, Per: time.Hour}, All: ratelimit.Rate{Count: 6, Per: time.Hour}}
	ctx := context.Background()
	ask := func(principal, msg string, cancel bool) string {
		t.Helper()
		c, err := svc.Create(ctx, principal, elicitation.KindApproval, elicitation.Input{Message: msg, Context: json.RawMessage(`1`)})
		if err != nil {
			t.Fatal(err)
		}
		if cancel {
			if _, err := svc.Cancel(ctx, principal, c.State.ID); err != nil {
				t.Fatal(err)
			}
		}
		return c.State.ID
	}
	notes := func(principal, id string) (sent, held []string) {
		t.Helper()
		tr, err := svc.Audit(ctx, principal, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tr.Entries {
			switch {
			case e.Action != elicitation.ActionNotified || !strings.Contains(e.Detail, " to phone: "):
			case strings.HasSuffix(e.Detail, ": delivered (attempt 1)"):
				sent = append(sent, e.Detail)
			default:
				held = append(held, e.Detail)
			}
		}
		return sent, held
	}
	sweep := func() {
		t.Helper()
		if _, err := d.DeliverDue(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// mallory: 5 requests created and canceled, 10 notices to phone.
	var mallory []string
	for i := range 5 {
		mallory = append(mallory, ask("mallory", "mallory "+string(rune('a'+i)), true))
	}
	alice := ask("alice", "alice asks", false)
	sweep()
	var sent, held int
	for _, id := range mallory {
		s, h := notes("mallory", id)
		sent += len(s)
		held += len(h)
		for _, n := range h {
			if !strings.Contains(n, "not sent (mallory's requests have had their 4 notices to phone in 1 hour; the request waits in the inbox)") {
				t.Errorf("mallory's held notice says %q", n)
			}
		}
	}
	if sent != 4 || held != 6 {
		t.Errorf("of mallory's 10 notices to phone, %d were sent and %d held back; want 4 and 6", sent, held)
	}
	if s, h := notes("alice", alice); len(s) != 1 || len(h) != 0 {
		t.Errorf("alice's notice to phone: sent %q, held %q; want it sent", s, h)
	}

	// bob and carol: the sixth notice of all is sent, the seventh not.
	bob, carol := ask("bob", "bob asks", false), ask("carol", "carol asks", false)
	sweep()
	bs, bh := notes("bob", bob)
	cs, ch := notes("carol", carol)
	if len(bs)+len(cs) != 1 || len(bh)+len(ch) != 1 {
		t.Fatalf("bob's and carol's notices: sent %q %q, held %q %q; want one of each", bs, cs, bh, ch)
	}
	if h := append(bh, ch...)[0]; !strings.Contains(h, "not sent (phone has had its 6 notices in 1 hour, of all requests;") {
		t.Errorf("the held notice says %q", h)
	}

	// A quarter of an hour later (4 an hour) mallory has one notice again.
	clk.Add(16 * time.Minute)
	again := ask("mallory", "mallory again", false)
	sweep()
	if s, h := notes("mallory", again); len(s) != 1 || len(h) != 0 {
		t.Errorf("mallory's notice 16 minutes later: sent %q, held %q; want it sent", s, h)
	}
	mu.Lock()
	total := 0
	for _, n := range pushed {
		total += n
	}
	mu.Unlock()
	if total != 4+1+1+1 {
		t.Errorf("phone got %d notices %v, want 7", total, pushed)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if n := len(rc.accepted[elicitation.EventCreated]) + len(rc.accepted[elicitation.EventCanceled]); n != 10+1+2+1 {
		t.Errorf("the webhook got %d notices, want every one (14)", n)
	}
}

// TestNoticeLimitsConfigured: the document's limits (notices an hour)
// bound a deliverer that sets none of its own.
func TestNoticeLimitsConfigured(t *testing.T) {
	t.Parallel()
	phone := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(phone.Close)
	cfg, err := notify.Parse([]byte(`{defaults: [phone], targets: {phone: {type: ntfy, url: "`+phone.URL+`", topic: t}}, limits: {perPrincipal: 2}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, svc, d, _ := deliveryRig(t, cfg)
	ctx := context.Background()
	var ids []string
	for range 3 {
		c, err := svc.Create(ctx, "bot", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.State.ID)
	}
	if _, err := d.DeliverDue(ctx); err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, id := range ids {
		tr, _ := svc.Audit(ctx, "bot", id)
		for _, e := range tr.Entries {
			if e.Action == elicitation.ActionNotified && strings.Contains(e.Detail, "not sent") {
				held = append(held, e.Detail)
			}
		}
	}
	if len(held) != 1 || !strings.Contains(held[0], "bot's requests have had their 2 notices to phone in 1 hour") {
		t.Errorf("held back %q; want the third of bot's notices", held)
	}
}
