package dynamostore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

// BenchmarkWakeLatency measures how long after a decision lands through
// handle B a Wait on handle A (another client: as another process would)
// returns. The decision comes at a random phase of A's poll schedule.
// Metrics: p50-ms and p99-ms from the moment Resolve returned on B;
// p99-from-send-ms from the moment B sent the decision's TransactWriteItems
// (an upper bound: the write lands between the two).
//
//	go test -run '^$' -bench WakeLatency -benchtime 200x ./internal/dynamostore/
func BenchmarkWakeLatency(b *testing.B) {
	ctx := context.Background()
	fa := newFaults(nil)
	a, _, table := dynamotest.Store(b, dynamostore.Options{})
	a = dynamostore.New(dynamotest.Client(dynamotest.Endpoint(b), withFaults(fa)), table, dynamostore.Options{})
	fd := newFaults(nil)
	var sent time.Time
	fd.setHooks(func(op string) {
		if op == "TransactWriteItems" {
			sent = time.Now()
		}
	}, nil)
	d := dynamostore.New(dynamotest.Client(dynamotest.Endpoint(b), withFaults(fd)), table, dynamostore.Options{})
	var fromReturn, fromSend []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := approval()
		mustCreate(b, d, r)
		woke := make(chan time.Time, 1)
		go func() {
			if _, err := wait(ctx, a, r.State.ID); err != nil {
				b.Error(err)
			}
			woke <- time.Now()
		}()
		time.Sleep(250*time.Millisecond + rand.N(dynamostore.DefaultPollInterval))
		b.StartTimer()
		if _, err := d.Resolve(ctx, r.State.ID, submit("s", t0.Add(time.Second))); err != nil {
			b.Fatal(err)
		}
		landed := time.Now()
		w := <-woke
		fromReturn = append(fromReturn, max(0, w.Sub(landed)))
		fromSend = append(fromSend, w.Sub(sent))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile.Of(fromReturn, 50)), "p50-ms")
	b.ReportMetric(ms(percentile.Of(fromReturn, 99)), "p99-ms")
	b.ReportMetric(ms(percentile.Of(fromSend, 50)), "p50-from-send-ms")
	b.ReportMetric(ms(percentile.Of(fromSend, 99)), "p99-from-send-ms")
	b.ReportMetric(ms(slices.Max(fromReturn)), "max-ms")
}

// BenchmarkWaitReads counts the GetItem calls a waiting call makes on a
// request that stays pending, per second of waiting.
//
//	go test -run '^$' -bench WaitReads -benchtime 3x ./internal/dynamostore/
func BenchmarkWaitReads(b *testing.B) {
	ctx := context.Background()
	f := newFaults(nil)
	_, _, table := dynamotest.Store(b, dynamostore.Options{})
	a := dynamostore.New(dynamotest.Client(dynamotest.Endpoint(b), withFaults(f)), table, dynamostore.Options{})
	r := approval()
	mustCreate(b, a, r)
	const waitFor = 10 * time.Second
	var perSecond []float64
	for i := 0; i < b.N; i++ {
		f.reset()
		wctx, cancel := context.WithTimeout(ctx, waitFor)
		start := time.Now()
		_, _ = wait(wctx, a, r.State.ID)
		took := time.Since(start)
		cancel()
		perSecond = append(perSecond, float64(f.count("GetItem"))/took.Seconds())
		if n := f.count("GetItem"); n != f.total() {
			b.Errorf("a wait made %d calls other than GetItem", f.total()-n)
		}
	}
	b.ReportMetric(slices.Max(perSecond), "max-reads/s")
}

// BenchmarkItemSizes reports the item sizes of a 500-option selection: at
// the domain's 256 KiB payload limit (options of about 480 bytes), and with
// options of about 1 KiB (twice the limit, to show the chunking), and
// checks that each is written and read back on DynamoDB Local.
//
//	go test -run '^$' -bench ItemSizes -benchtime 1x ./internal/dynamostore/
func BenchmarkItemSizes(b *testing.B) {
	for _, tc := range []struct {
		optionBytes    int
		incompressible bool
	}{{360, false}, {900, false}, {900, true}} {
		name := fmt.Sprintf("500x%dB-description", tc.optionBytes)
		if tc.incompressible {
			name += "-random"
		}
		b.Run(name, func(b *testing.B) {
			r := selection(500, tc.optionBytes)
			if tc.incompressible {
				randomDescriptions(r.Payload.Options, tc.optionBytes)
			}
			raw, _ := json.Marshal(r.Payload)
			opts := 0
			for _, o := range r.Payload.Options {
				opts += len(o.Raw)
			}
			state, chunks, encoded, enc, err := dynamostore.ItemSizes(r)
			if err != nil {
				b.Fatal(err)
			}
			s, _, _ := dynamotest.Store(b, dynamostore.Options{})
			for i := 0; i < b.N; i++ {
				r.State.ID = elicitation.NewID()
				mustCreate(b, s, r)
				if _, err := s.Load(context.Background(), r.State.ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(opts)/float64(len(r.Payload.Options)), "option-bytes")
			b.ReportMetric(float64(opts), "options-bytes")
			b.ReportMetric(float64(len(raw)), "payload-json-bytes")
			b.ReportMetric(float64(encoded), "payload-stored-bytes")
			b.ReportMetric(float64(len(chunks)), "payload-items")
			b.ReportMetric(float64(slices.Max(chunks)), "largest-item-bytes")
			b.ReportMetric(float64(state), "state-item-bytes")
			b.ReportMetric(float64(dynamostore.AuditItemSize(r.State.ID, elicitation.AuditEntry{At: t0, Action: elicitation.ActionRendered, Principal: "reviewer", Detail: "pending"})), "audit-item-bytes")
			b.Logf("encoding %s", enc)
		})
	}
}

// randomDescriptions replaces each option's description with random
// base64 text: the worst case for compression.
func randomDescriptions(opts []elicitation.Option, n int) {
	for i := range opts {
		var m map[string]any
		_ = json.Unmarshal(opts[i].Raw, &m)
		buf := make([]byte, n*3/4)
		for j := range buf {
			buf[j] = byte(rand.Uint32())
		}
		m["description"] = base64.StdEncoding.EncodeToString(buf)
		opts[i].Raw, _ = json.Marshal(m)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
