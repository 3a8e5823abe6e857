package lambdanotify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/notify/lambdanotify"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

const secret = "whsec-test-0123456789abcdef"

// record is the stream record of a new outbox item (KEYS_ONLY, as the
// table's stream sends it).
func record(d elicitation.Delivery, seq int) events.DynamoDBEventRecord {
	sk := fmt.Sprintf("%020d#%s", uint64(d.DueAt.UnixNano())^(1<<63), d.ID)
	return events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{
		Keys:           map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("outbox#0"), "sk": events.NewStringAttribute(sk)},
		SequenceNumber: fmt.Sprint(seq),
	}}
}

// TestStreamBatchNotHeldByHangingTarget: a stream batch on DynamoDB Local
// with 20 new deliveries to a webhook that accepts and never answers and
// one to a healthy webhook, on a Deliverer as the function builds it (the
// default Timeout): the healthy one is delivered; the hanging target gets
// a lane's worth of attempts (and no second round) before it rests, each dropped at the
// stream's bound (notify.StreamAttemptTimeout, seen at the webhook), not
// the sweep's 10 s, so the batch is held about that long; no record is
// reported as failed (a time-out backs off in the outbox for the sweep,
// and the stream shard moves on); the deliveries stay in the outbox. The
// next batch does not try the resting target at all, and an invocation
// without time for a whole attempt starts none.
func TestStreamBatchNotHeldByHangingTarget(t *testing.T) {
	t.Parallel()
	st, _, _ := dynamotest.Store(t, dynamostore.Options{})
	var stuckHits, goodHits atomic.Int64
	stop := make(chan struct{})
	held := make(chan time.Duration, 100) // how long each hanging request lasted
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stuckHits.Add(1)
		start := time.Now()
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the deliverer drop the connection
		select {
		case <-stop:
		case <-r.Context().Done():
			held <- time.Since(start)
		}
	}))
	defer stuck.Close()
	defer close(stop)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { goodHits.Add(1) }))
	defer good.Close()
	ev := []elicitation.Event{elicitation.EventCreated}
	targets, err := notify.New(notify.Config{Targets: map[string]notify.TargetConfig{
		"stuck": {Type: notify.TypeWebhook, URL: stuck.URL, Secret: secret, Events: ev},
		"hook":  {Type: notify.TypeWebhook, URL: good.URL, Secret: secret, Events: ev},
	}}, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := elicitation.NewService(elicitation.Config{Store: st, Notifications: targets})
	ctx := context.Background()
	create := func(target string) {
		if _, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), TimeoutSeconds: 3600, Notify: elicitation.Notify{Targets: []string{target}}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		create("stuck")
	}
	create("hook")
	// The stream's records: the new outbox items' keys.
	written, err := st.DueDeliveries(ctx, time.Now(), 100)
	if err != nil || len(written) != 21 {
		t.Fatalf("outbox = %d, %v", len(written), err)
	}
	var batch events.DynamoDBEvent
	for i, d := range written {
		batch.Records = append(batch.Records, record(d, i))
	}
	now := func() time.Time { return time.Now().UTC() }
	h := &lambdanotify.Handler{D: &notify.Deliverer{Store: st, Targets: targets, Now: now, Log: slog.New(slog.DiscardHandler)}, Log: slog.New(slog.DiscardHandler)}
	ictx, cancel := context.WithTimeout(ctx, 60*time.Second) // the function's timeout
	defer cancel()
	// Generous margins: what they catch is a hang of notify.AttemptTimeout
	// (10 s), not a slow machine.
	const margin = 3 * time.Second
	start := time.Now()
	res := h.Stream(ictx, batch)
	if took := time.Since(start); took > notify.StreamAttemptTimeout+2*margin {
		t.Errorf("the batch took %s; want it held for about one stream attempt's bound, %s", took, notify.StreamAttemptTimeout)
	}
	if res.Attempted != 1+notify.PerTarget {
		t.Errorf("attempted %d; want the healthy one and a lane's worth of the hanging ones (the rest wait for the sweep)", res.Attempted)
	}
	if n := goodHits.Load(); n != 1 {
		t.Errorf("the healthy webhook got %d requests, want 1", n)
	}
	tried := stuckHits.Load()
	if tried != notify.PerTarget {
		t.Errorf("the hanging webhook got %d requests; want a lane's worth, %d, and no second round before it rests", tried, notify.PerTarget)
	}
	for range tried {
		select {
		case d := <-held:
			if d > notify.StreamAttemptTimeout+margin {
				t.Errorf("the hanging webhook held a request %s; want it dropped at the stream's bound, %s", d, notify.StreamAttemptTimeout)
			}
		case <-time.After(margin):
			t.Fatal("a hanging request outlived its attempt")
		}
	}
	due, err := st.DueDeliveries(ctx, time.Now().Add(time.Hour), 100)
	if err != nil || len(due) != 20 {
		t.Errorf("the outbox holds %d due deliveries an hour on (%v); want the 20 to the hanging target", len(due), err)
	}

	if res := h.Stream(ictx, batch); res.Attempted != 0 || stuckHits.Load() != tried {
		t.Errorf("the next batch: attempted %d, the resting target tried %d more times; want none", res.Attempted, stuckHits.Load()-tried)
	}
	fresh := &lambdanotify.Handler{D: &notify.Deliverer{Store: st, Targets: targets, Now: now, Log: slog.New(slog.DiscardHandler)}, Log: slog.New(slog.DiscardHandler)}
	short, cancel2 := context.WithTimeout(ctx, notify.StreamAttemptTimeout+time.Second) // less than an attempt and the margin (2 s)
	defer cancel2()
	if res := fresh.Stream(short, batch); res.Attempted != 0 || stuckHits.Load() != tried || goodHits.Load() != 1 {
		t.Errorf("without time for an attempt: attempted %d, %d more attempts; want none", res.Attempted, stuckHits.Load()-tried+goodHits.Load()-1)
	}
}

// TestScheduleRunsTheSweepFirst: a scheduled invocation runs the Handler's
// Sweep (the metrics' expiry sweep) before the due deliveries, and goes on
// to them when it fails; a stream batch does not run it.
func TestScheduleRunsTheSweepFirst(t *testing.T) {
	testenv.Slow(t, "DynamoDB Local")
	t.Parallel()
	st, _, _ := dynamotest.Store(t, dynamostore.Options{})
	targets, err := notify.New(notify.Config{Targets: map[string]notify.TargetConfig{
		"hook": {Type: notify.TypeWebhook, URL: "https://hooks.example/x", Secret: secret},
	}}, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	swept := 0
	h := &lambdanotify.Handler{D: &notify.Deliverer{Store: st, Targets: targets, Log: slog.New(slog.DiscardHandler)}, Log: slog.New(slog.DiscardHandler),
		Sweep: func(context.Context) error { swept++; return errors.New("the index is unreachable") }}
	if _, err := h.Handle(context.Background(), json.RawMessage(`{"source":"aws.events"}`)); err != nil || swept != 1 {
		t.Fatalf("a scheduled invocation: %v, swept %d times; want the deliveries done after the sweep's failure, swept once", err, swept)
	}
	if _, err := h.Handle(context.Background(), json.RawMessage(`{"Records":[]}`)); err != nil || swept != 1 {
		t.Fatalf("a stream batch: %v, swept %d times; want no sweep", err, swept)
	}
}
