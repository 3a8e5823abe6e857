package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// TestExpirySweep: the sweep sends the expiry notice once per request, at
// expiresAt and not before; a permanent refusal is given up at once; a
// canceled request's notices are the cancel only.
func TestExpirySweep(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t)
	rc.respond = func(w http.ResponseWriter, n elicitation.Notice, attempt int) bool {
		if strings.HasPrefix(n.Message, "gone") {
			http.Error(w, "no such hook", http.StatusGone)
			return false
		}
		return true
	}
	_, svc, d, clk := deliveryRig(t, webhookConfig(rc.srv.URL))
	ctx := context.Background()
	sweep := func(want int) {
		t.Helper()
		n, err := d.DeliverDue(ctx)
		if err != nil || n != want {
			t.Fatalf("DeliverDue = %d, %v; want %d attempts", n, err, want)
		}
	}
	in := func(msg string) elicitation.Input {
		return elicitation.Input{Message: msg, Context: json.RawMessage(`1`), TimeoutSeconds: 60}
	}
	left, err := svc.Create(ctx, "alice", elicitation.KindApproval, in("left alone"))
	if err != nil {
		t.Fatal(err)
	}
	canceled, err := svc.Create(ctx, "alice", elicitation.KindApproval, in("canceled"))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := svc.Create(ctx, "alice", elicitation.KindApproval, in("gone hook"))
	if err != nil {
		t.Fatal(err)
	}
	sweep(3) // the created notices
	if _, err := svc.Cancel(ctx, "alice", canceled.State.ID); err != nil {
		t.Fatal(err)
	}
	sweep(1) // the cancel
	clk.Add(59 * time.Second)
	sweep(0) // nothing expires early
	clk.Add(time.Second)
	sweep(2) // left alone and gone hook expire; the canceled one does not
	clk.Add(time.Hour)
	sweep(0) // once

	rc.mu.Lock()
	got := map[elicitation.Event]int{}
	for ev, ids := range rc.accepted {
		got[ev] = len(ids)
	}
	rc.mu.Unlock()
	if got[elicitation.EventCreated] != 2 || got[elicitation.EventCanceled] != 1 || got[elicitation.EventExpired] != 1 || len(got) != 3 {
		t.Errorf("accepted %v; want 2 created, 1 canceled, 1 expired", got)
	}
	tr, _ := svc.Audit(ctx, "alice", gone.State.ID)
	var notes []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionNotified {
			notes = append(notes, e.Detail)
		}
	}
	if strings.Join(notes, "|") != "created to hook: gave up at attempt 1 (HTTP 410)|expired to hook: gave up at attempt 1 (HTTP 410)" {
		t.Errorf("gone hook's audit: %q", notes)
	}
	if st, _ := svc.Status(ctx, "alice", left.State.ID); st.Status != elicitation.StatusExpired {
		t.Errorf("left alone: %s", st.Status)
	}
}

// TestOneRetryPolicy: a stream batch's attempt and the sweep's are
// settled alike: a refusal that may pass backs off in the outbox (due
// again after DefaultBackoff, not at once), with the same audit entry; a
// permanent refusal is given up at once.
func TestOneRetryPolicy(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{true, false} {
		for _, c := range []struct {
			status int
			want   notify.Outcome
			left   int // deliveries in the outbox after the backoff
		}{{http.StatusServiceUnavailable, notify.Retrying, 1}, {http.StatusGone, notify.GaveUp, 0}} {
			t.Run(fmt.Sprintf("stream %v, HTTP %d", stream, c.status), func(t *testing.T) {
				t.Parallel()
				rc := newReceiver(t)
				rc.respond = func(w http.ResponseWriter, _ elicitation.Notice, _ int) bool {
					w.WriteHeader(c.status)
					return false
				}
				st, svc, d, clk := deliveryRig(t, webhookConfig(rc.srv.URL))
				ctx := context.Background()
				cr, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600})
				if err != nil {
					t.Fatal(err)
				}
				due, err := st.DueDeliveries(ctx, clk.Now(), 10)
				if err != nil || len(due) != 1 {
					t.Fatalf("due = %v, %v", due, err)
				}
				outs, errs := d.AttemptAll(ctx, due, stream)
				if errs[0] != nil || outs[0] != c.want {
					t.Fatalf("outcome %s, %v; want %s", outs[0], errs[0], c.want)
				}
				for _, at := range []struct {
					after time.Duration
					want  int
				}{{notify.DefaultBackoff(1) - time.Second, 0}, {time.Second, c.left}} {
					clk.Add(at.after)
					if due, err := st.DueDeliveries(ctx, clk.Now(), 10); err != nil || len(due) != at.want {
						t.Errorf("%d due %s after the attempt (%v); want %d", len(due), clk.Now().Sub(cr.State.CreatedAt), err, at.want)
					}
				}
				tr, _ := svc.Audit(ctx, "alice", cr.State.ID)
				var notes []string
				for _, e := range tr.Entries {
					if e.Action == elicitation.ActionNotified {
						notes = append(notes, e.Detail)
					}
				}
				want := fmt.Sprintf("created to hook: attempt 1 failed (HTTP %d); next attempt at ", c.status)
				if c.want == notify.GaveUp {
					want = fmt.Sprintf("created to hook: gave up at attempt 1 (HTTP %d)", c.status)
				}
				if len(notes) != 1 || !strings.HasPrefix(notes[0], want) {
					t.Errorf("audit %q; want %q…", notes, want)
				}
			})
		}
	}
}
