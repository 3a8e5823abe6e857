package lambdanotify_test

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
	"github.com/mcp-elicitation/elicitation/internal/notify/lambdanotify"
	"github.com/mcp-elicitation/elicitation/internal/notify/notifybench"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

var (
	benchQueued  = flag.Int("queued", 2000, "BenchmarkHangingTargetOnAWS: notices queued to the hanging webhook first")
	benchHealthy = flag.Int("healthy", 300, "BenchmarkHangingTargetOnAWS: notices to the healthy webhook, measured")
	benchEvery   = flag.Duration("every", 200*time.Millisecond, "BenchmarkHangingTargetOnAWS: pause between two healthy notices")
	benchMixed   = flag.Int("stuck-per-healthy", 1, "BenchmarkHangingTargetOnAWS: new notices to the hanging webhook created after each healthy one")
	benchSweep   = flag.Duration("sweep-every", time.Minute, "BenchmarkHangingTargetOnAWS: the sweep's schedule (template.yaml: rate(1 minute))")
)

// As template.yaml's NotifyFunction deploys it.
const (
	functionTimeout = 60 * time.Second // Timeout
	instances       = 2                // ReservedConcurrentExecutions
	batchSize       = 10               // BatchSize
	batchWindow     = time.Second      // MaximumBatchingWindowInSeconds
	streamPoll      = 250 * time.Millisecond
)

// BenchmarkHangingTargetOnAWS is issue 22.1's benchmark on the AWS
// deployment's code: on DynamoDB Local, -queued notices to a webhook that
// accepts and never answers are written through the Service (as the MCP
// function writes them), then -healthy notices to a healthy webhook, one
// every -every, each followed by -stuck-per-healthy new notices to the
// hanging one. The notify function is two instances of the real
// lambdanotify.Handler (each its own Deliverer, as each execution
// environment has its own): the table's stream, read as the event source
// mapping reads it (a poll every 250 ms, the event filter's INSERTs of
// outbox keys, batches of up to 10 after a 1 s window counted from the
// first record read, one batch at a time, records reported failed retried
// from the first of them three times), and the sweep every -sweep-every,
// each invocation on whichever instance is free (in turn when both are),
// bounded by the function's 60 s. It reports the healthy notices' latency
// from the start of their creation to their arrival at the receiver, and
// the longest stream invocation.
//
//	go test ./internal/notify/lambdanotify -run '^$' -bench HangingTargetOnAWS -benchtime 1x
func BenchmarkHangingTargetOnAWS(b *testing.B) {
	for range b.N {
		runHangingTargetOnAWS(b)
	}
}

func runHangingTargetOnAWS(b *testing.B) {
	b.StopTimer()
	st, _, table := dynamotest.Store(b, dynamostore.Options{})
	hooks, err := notifybench.Start(secret)
	if err != nil {
		b.Fatal(err)
	}
	defer hooks.Close()
	targets, err := notify.New(notify.Config{Targets: map[string]notify.TargetConfig{
		"stuck":   {Type: notify.TypeWebhook, URL: hooks.StuckURL, Secret: secret},
		"healthy": {Type: notify.TypeWebhook, URL: hooks.HealthyURL, Secret: secret},
	}}, notify.Options{})
	if err != nil {
		b.Fatal(err)
	}
	svc := elicitation.NewService(elicitation.Config{Store: st, Notifications: targets})
	create := func(target string) string {
		c, err := svc.Create(context.Background(), "alice", elicitation.KindApproval, elicitation.Input{Message: "benchmark", Context: json.RawMessage(`1`), TimeoutSeconds: 3600, Notify: elicitation.Notify{Targets: []string{target}}})
		if err != nil {
			b.Fatal(err)
		}
		return c.State.ID
	}
	fn := newFunction(st, targets)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	esm := &eventSource{stream: dynamotest.OpenStream(b, table), fn: fn, more: make(chan struct{}, 1)}
	wg.Go(func() { esm.poll(ctx, b) })
	wg.Go(func() { esm.invoke(ctx) })
	wg.Go(func() { fn.sweep(ctx, *benchSweep) })

	b.StartTimer()
	t0 := time.Now()
	for range *benchQueued {
		create("stuck")
	}
	b.Logf("queued %d notices to the hanging webhook in %.1f s", *benchQueued, time.Since(t0).Seconds())
	for range *benchHealthy {
		start := time.Now()
		hooks.Expect(create("healthy"), start)
		for range *benchMixed {
			create("stuck")
		}
		time.Sleep(*benchEvery) // the pace of the agent's requests
	}
	ms, err := hooks.Collect(*benchHealthy, 5*time.Minute)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	esm.mu.Lock()
	defer esm.mu.Unlock()
	b.ReportMetric(percentile.Of(ms, 50), "healthy-p50-ms")
	b.ReportMetric(percentile.Of(ms, 99), "healthy-p99-ms")
	b.ReportMetric(percentile.Of(ms, 100), "healthy-max-ms")
	b.ReportMetric(esm.longest.Seconds(), "longest-stream-invocation-s")
	b.Logf("healthy notice, creation to arrival (%d, behind %d queued to a hanging webhook, %d more to it after each): p50 %.1f ms p99 %.1f ms max %.1f ms; %d stream batches, the longest %.1f s",
		len(ms), *benchQueued, *benchMixed, percentile.Of(ms, 50), percentile.Of(ms, 99), percentile.Of(ms, 100), esm.batches, esm.longest.Seconds())
}

// function is the notify function: its execution environments, each
// taken by one invocation at a time.
type function struct{ free chan *lambdanotify.Handler }

func newFunction(st *dynamostore.Store, targets *notify.Targets) *function {
	f := &function{free: make(chan *lambdanotify.Handler, instances)}
	for range instances {
		d := &notify.Deliverer{Store: st, Targets: targets, Now: func() time.Time { return time.Now().UTC() }, Log: slog.New(slog.DiscardHandler)}
		f.free <- &lambdanotify.Handler{D: d, Log: slog.New(slog.DiscardHandler)}
	}
	return f
}

// run invokes the handler on the instance free longest, within the
// function's timeout.
func (f *function) run(ctx context.Context, call func(context.Context, *lambdanotify.Handler)) {
	var h *lambdanotify.Handler
	select {
	case h = <-f.free:
	case <-ctx.Done():
		return
	}
	defer func() { f.free <- h }()
	ictx, cancel := context.WithTimeout(ctx, functionTimeout)
	defer cancel()
	call(ictx, h)
}

// sweep invokes the sweep on its schedule (a late tick is dropped, as
// one sweep after another).
func (f *function) sweep(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		f.run(ctx, func(ictx context.Context, h *lambdanotify.Handler) {
			_, _ = h.Handle(ictx, json.RawMessage(`{"source":"aws.scheduler"}`))
		})
	}
}

// eventSource is the stream's event source mapping, for one shard at a
// time: poll reads the stream and keeps what the event filter passes;
// invoke hands it to the function in batches.
type eventSource struct {
	stream *dynamotest.Stream
	fn     *function
	more   chan struct{} // poll read something

	mu      sync.Mutex
	pending []read
	batches int
	longest time.Duration
}

type read struct {
	r  events.DynamoDBEventRecord
	at time.Time
}

func (e *eventSource) poll(ctx context.Context, b *testing.B) {
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	for {
		recs, err := e.stream.Read(ctx)
		if err != nil && ctx.Err() == nil {
			b.Error(err)
		}
		now := time.Now()
		e.mu.Lock()
		for _, r := range recs {
			if pk := r.Change.Keys["pk"]; r.EventName == "INSERT" && pk.DataType() == events.DataTypeString && dynamostore.IsOutboxKey(pk.String()) {
				e.pending = append(e.pending, read{r: r, at: now})
			}
		}
		e.mu.Unlock()
		select {
		case e.more <- struct{}{}:
		default:
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// next waits for the next batch: batchSize records, or fewer once the
// first of them has waited batchWindow.
func (e *eventSource) next(ctx context.Context) []events.DynamoDBEventRecord {
	for {
		e.mu.Lock()
		wait := time.Duration(-1)
		if len(e.pending) > 0 {
			wait = time.Until(e.pending[0].at.Add(batchWindow))
		}
		if n := min(len(e.pending), batchSize); n == batchSize || n > 0 && wait <= 0 {
			batch := make([]events.DynamoDBEventRecord, n)
			for i := range n {
				batch[i] = e.pending[i].r
			}
			e.pending = e.pending[n:]
			e.mu.Unlock()
			return batch
		}
		e.mu.Unlock()
		var window <-chan time.Time
		if wait > 0 {
			window = time.After(wait)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.more:
		case <-window:
		}
	}
}

func (e *eventSource) invoke(ctx context.Context) {
	for {
		batch := e.next(ctx)
		if batch == nil {
			return
		}
		// One invocation per batch: the function reports no record failed,
		// so Lambda retries none (the sweep does).
		start := time.Now()
		e.fn.run(ctx, func(ictx context.Context, h *lambdanotify.Handler) {
			h.Stream(ictx, events.DynamoDBEvent{Records: batch})
		})
		e.mu.Lock()
		e.batches++
		e.longest = max(e.longest, time.Since(start))
		e.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
	}
}
