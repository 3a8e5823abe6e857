package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

func webhookConfig(url string) notify.Config {
	return notify.Config{
		Defaults: []string{"hook"},
		Targets: map[string]notify.TargetConfig{"hook": {
			Type: notify.TypeWebhook, URL: url, Secret: hookSecret,
			Events: []elicitation.Event{elicitation.EventCreated, elicitation.EventDecided, elicitation.EventCanceled, elicitation.EventExpired},
		}},
	}
}

// TestWebhookExactlyOnceAcrossRestart: a receiver that verifies signatures
// and drops repeats by delivery id accepts exactly one delivery per event,
// although the first attempt of each is refused (HTTP 503) and the server
// is stopped while the created notice's second attempt is in flight (the
// receiver has it; the server never learns): the restarted server resumes
// from the outbox and sends the same delivery id again.
func TestWebhookExactlyOnceAcrossRestart(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	inFlight := make(chan struct{})
	release := make(chan struct{})
	rc.respond = func(w http.ResponseWriter, n elicitation.Notice, attempt int) bool {
		switch {
		case attempt == 1:
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return false
		case n.Event == elicitation.EventCreated && attempt == 2:
			// Accepted, but the answer is held until the server is gone.
			close(inFlight)
			<-release
		}
		return true
	}
	cfg := webhookConfig(rc.srv.URL)
	path := dbPath(t)
	fast := func(d *notify.Deliverer) {
		d.Backoff = func(int) time.Duration { return 10 * time.Millisecond }
		d.Lease = 500 * time.Millisecond
	}
	s1 := startServer(t, path, cfg, fast)
	ctx := context.Background()
	cr, err := s1.svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{
		Message: "Deploy api v1.3 to production?", Context: json.RawMessage(`{"service":"api"}`),
		Notify: elicitation.Notify{ReviewLink: func(id, key string) string { return "https://review.example/review/" + id + "/" + key }},
	})

	if err != nil {
		t.Fatal(err)
	}
	created := elicitation.DeliveryID(cr.State.ID, elicitation.EventCreated, "hook")
	if got := rc.next(t, "first attempt"); got != created {
		t.Fatalf("first delivery %s, want the created notice %s", got, created)
	}
	if got := rc.next(t, "second attempt"); got != created {
		t.Fatalf("second delivery %s, want %s again", got, created)
	}
	<-inFlight
	s1.stop(t) // the process exits mid-delivery
	close(release)

	s2 := startServer(t, path, cfg, fast)
	if got := rc.next(t, "attempt after the restart"); got != created {
		t.Fatalf("after the restart: delivery %s, want %s again", got, created)
	}
	waitSettled(t, s2, created)

	// The decision: refused once, then accepted.
	if _, err := s2.svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "page-1", Decision: elicitation.DecisionSubmitted}); err != nil {
		t.Fatal(err)
	}
	decided := elicitation.DeliveryID(cr.State.ID, elicitation.EventDecided, "hook")
	for i := range 2 {
		if got := rc.next(t, "decided notice"); got != decided {
			t.Fatalf("decided attempt %d: delivery %s, want %s", i+1, got, decided)
		}
	}
	waitSettled(t, s2, decided)
	if ds, _ := s2.store.DueDeliveries(ctx, cr.State.ExpiresAt.Add(time.Hour), 10); len(ds) != 0 {
		t.Errorf("the outbox still holds %+v (the decision withdraws the expiry notice)", ds)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.bad != 0 {
		t.Errorf("%d deliveries had a bad signature", rc.bad)
	}
	for ev, want := range map[elicitation.Event][]string{elicitation.EventCreated: {created}, elicitation.EventDecided: {decided}} {
		if got := rc.accepted[ev]; !slices.Equal(got, want) {
			t.Errorf("accepted %s deliveries = %v, want exactly %v", ev, got, want)
		}
	}
	if n := len(rc.accepted); n != 2 {
		t.Errorf("accepted events %v, want created and decided only (no expired: it was decided)", rc.accepted)
	}
	if rc.attempts[created] != 3 || rc.attempts[decided] != 2 {
		t.Errorf("attempts = %v, want 3 of created (refused, lost in the restart, repeated) and 2 of decided", rc.attempts)
	}
	c := rc.notices[created]
	if c.ReviewURL != "https://review.example/review/"+cr.State.ID+"/"+cr.ReviewKey || c.Message != "Deploy api v1.3 to production?" || c.Owner != "alice" || c.Kind != elicitation.KindApproval {
		t.Errorf("created notice = %+v", c)
	}
	if d := rc.notices[decided]; d.ReviewURL != "" || d.Decision != elicitation.DecisionSubmitted || d.DecidedBy != "" {
		t.Errorf("decided notice = %+v (carries no link, says the decision)", d)
	}

	// The delivery status is in the audit trail (elicit_status includeAudit).
	tr, err := s2.svc.Audit(ctx, "alice", cr.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionNotified {
			if e.Principal != elicitation.Notifier {
				t.Errorf("notified entry by %q", e.Principal)
			}
			notes = append(notes, e.Detail)
		}
	}
	want := []string{
		"created to hook: attempt 1 failed (HTTP 503); next attempt at ",
		"created to hook: delivered (attempt 3)",
		"decided to hook: attempt 1 failed (HTTP 503); next attempt at ",
		"decided to hook: delivered (attempt 2)",
	}
	if len(notes) != len(want) {
		t.Fatalf("notified entries = %q, want %q", notes, want)
	}
	for i := range want {
		if !strings.HasPrefix(notes[i], want[i]) {
			t.Errorf("notified entry %d = %q, want %q…", i, notes[i], want[i])
		}
	}
}

// TestWebhookSignature: Verify accepts what Sign made, and refuses a
// tampered body, another secret and a stale timestamp.
func TestWebhookSignature(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"event":"created"}`)
	h := http.Header{}
	h.Set(notify.HeaderTimestamp, "1800000000")
	h.Set(notify.HeaderSignature, notify.Sign([]byte(hookSecret), now, body))
	if err := notify.Verify([]byte(hookSecret), h, body, now.Add(time.Minute), 5*time.Minute); err != nil {
		t.Errorf("genuine: %v", err)
	}
	for _, tc := range []struct {
		name   string
		secret string
		body   string
		at     time.Time
		want   error
	}{
		{"tampered", hookSecret, `{"event":"decided"}`, now, notify.ErrBadSignature},
		{"other secret", "another-secret-0123456789", string(body), now, notify.ErrBadSignature},
		{"replayed later", hookSecret, string(body), now.Add(time.Hour), notify.ErrStale},
	} {
		if err := notify.Verify([]byte(tc.secret), h, []byte(tc.body), tc.at, 5*time.Minute); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// The signature is HMAC-SHA256 over "timestamp.body", hex.
	m := hmac.New(sha256.New, []byte("k"))
	m.Write([]byte("1.b"))
	if got, want := notify.Sign([]byte("k"), time.Unix(1, 0), []byte("b")), "v1="+hex.EncodeToString(m.Sum(nil)); got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
}
