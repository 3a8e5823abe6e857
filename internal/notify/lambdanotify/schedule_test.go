package lambdanotify_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/notify/lambdanotify"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// TestRemindersOnAWS: on DynamoDB Local, the notify function's stream
// handler sends the created notice and leaves the scheduled reminders and
// escalation to the sweep; each sweep sends what came due, once; the
// decision withdraws the rest, and later sweeps send nothing.
func TestRemindersOnAWS(t *testing.T) {
	t.Parallel()
	st, _, _ := dynamotest.Store(t, dynamostore.Options{})
	var mu sync.Mutex
	got := map[string]int{} // event + step + target -> accepted
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n elicitation.Notice
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		mu.Lock()
		got[string(n.Event)+"#"+r.URL.Path+"#"+string(rune('0'+n.Step))]++
		mu.Unlock()
	}))
	defer hook.Close()
	targets, err := notify.New(notify.Config{
		Defaults: []string{"oncall"},
		Targets: map[string]notify.TargetConfig{
			"oncall": {Type: notify.TypeWebhook, URL: hook.URL + "/oncall", Secret: secret, Remind: "15m", Events: []elicitation.Event{elicitation.EventCreated, elicitation.EventDecided}},
			"lead":   {Type: notify.TypeWebhook, URL: hook.URL + "/lead", Secret: secret},
		},
		Escalate: []notify.StepConfig{{After: "20m", Notify: []string{"lead"}}},
	}, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := testclock.New(time.Now().UTC())
	svc := elicitation.NewService(elicitation.Config{Store: st, Now: clk.Now, Notifications: targets})
	ctx := context.Background()
	cr, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600})
	if err != nil {
		t.Fatal(err)
	}
	written, err := st.DueDeliveries(ctx, clk.Now().Add(2*time.Hour), 100)
	if err != nil || len(written) != 5 {
		t.Fatalf("outbox = %d, %v; want created, three reminders and the escalation", len(written), err)
	}
	var batch events.DynamoDBEvent
	for i, d := range written {
		batch.Records = append(batch.Records, record(d, i))
	}
	h := &lambdanotify.Handler{D: &notify.Deliverer{Store: st, Targets: targets, Now: clk.Now, Log: slog.New(slog.DiscardHandler)}, Log: slog.New(slog.DiscardHandler)}
	if res := h.Stream(ctx, batch); res.Attempted != 1 {
		t.Fatalf("stream attempted %d; want the created notice (the scheduled ones are not due)", res.Attempted)
	}
	sweep := func(what string, want int) {
		t.Helper()
		for range 2 {
			res, err := h.Handle(ctx, json.RawMessage(`{"source":"aws.scheduler"}`))
			if err != nil || res.(lambdanotify.Result).Attempted != want {
				t.Fatalf("%s: sweep = %+v, %v; want %d attempts", what, res, err, want)
			}
			want = 0 // a second sweep at the same time sends nothing again
		}
	}
	sweep("at creation, after the stream", 0)
	clk.Add(15 * time.Minute)
	sweep("reminder 1", 1)
	clk.Add(5 * time.Minute)
	sweep("the escalation", 1)
	if _, err := svc.Submit(ctx, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionDeclined}); err != nil {
		t.Fatal(err)
	}
	sweep("the decision", 1)
	clk.Add(2 * time.Hour)
	sweep("after the decision", 0)
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"created#/oncall#0": 1, "reminder#/oncall#1": 1, "escalated#/lead#1": 1, "decided#/oncall#0": 1}
	if len(got) != len(want) {
		t.Errorf("accepted %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("accepted %v, want %v", got, want)
			break
		}
	}
}

// TestReminderDecidedWhileSentOnAWS: on DynamoDB Local, through the
// sweep, a reminder the target took while the decision withdrew it is in
// the audit trail as delivered.
func TestReminderDecidedWhileSentOnAWS(t *testing.T) {
	t.Parallel()
	st, _, _ := dynamotest.Store(t, dynamostore.Options{})
	var (
		svc *elicitation.Service
		cr  elicitation.Created
	)
	decided := make(chan error, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n elicitation.Notice
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		if n.Event == elicitation.EventReminder {
			_, err := svc.Submit(context.Background(), cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "s", Decision: elicitation.DecisionDeclined})
			decided <- err
		}
	}))
	defer hook.Close()
	targets, err := notify.New(notify.Config{
		Defaults: []string{"oncall"},
		Targets:  map[string]notify.TargetConfig{"oncall": {Type: notify.TypeWebhook, URL: hook.URL, Secret: secret, Remind: "15m"}},
	}, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := testclock.New(time.Now().UTC())
	svc = elicitation.NewService(elicitation.Config{Store: st, Now: clk.Now, Notifications: targets})
	ctx := context.Background()
	if cr, err = svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600}); err != nil {
		t.Fatal(err)
	}
	h := &lambdanotify.Handler{D: &notify.Deliverer{Store: st, Targets: targets, Now: clk.Now, Log: slog.New(slog.DiscardHandler)}, Log: slog.New(slog.DiscardHandler)}
	sweep := json.RawMessage(`{"source":"aws.scheduler"}`)
	if _, err := h.Handle(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	clk.Add(15 * time.Minute)
	if _, err := h.Handle(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	if err := <-decided; err != nil {
		t.Fatalf("the decision during the reminder's send: %v", err)
	}
	tr, err := svc.Audit(ctx, "alice", cr.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range tr.Entries {
		found = found || e.Action == elicitation.ActionNotified && e.Detail == "reminder 1 to oncall: delivered (attempt 1)"
	}
	if !found {
		t.Errorf("no delivered reminder in the audit trail: %+v", tr.Entries)
	}
}
