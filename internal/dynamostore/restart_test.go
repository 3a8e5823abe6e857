package dynamostore_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// TestServerRestartMidFlow stops DynamoDB Local (kept on disk with -sharedDb
// -dbPath, so that its data survives) in the middle of decisions, once
// before the write reaches it and once after the write landed but before
// the response came back, and restarts it. No decision is lost or
// duplicated; the failed calls say what failed; the caller's retry with the
// same submission id is answered as the success it was; and a waiter that
// polled through the outage wakes with the decision.
func TestServerRestartMidFlow(t *testing.T) {
	testenv.Slow(t, "DynamoDB Local")
	// Not parallel: TestFaultsOnEveryCall's parallel subtests already fill
	// the package's parallel slots (-parallel is GOMAXPROCS), so running this
	// beside them saved nothing and only added a JVM start to their load
	// (docs/architecture.md).
	ctx := context.Background()
	local, err := dynamotest.Start(ctx, dynamotest.Options{DBPath: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = local.Stop() })

	f := newFaults(nil)
	c := dynamotest.Client(local.Endpoint, withFaults(f))
	table := dynamotest.Table(t, c)
	decider := dynamostore.New(c, table, dynamostore.Options{})
	clean := dynamostore.New(dynamotest.Client(local.Endpoint), table, dynamostore.Options{})
	wf := newFaults(nil) // counts the waiter's polls; never armed
	waiter := dynamostore.New(dynamotest.Client(local.Endpoint, withFaults(wf)), table, dynamostore.Options{PollFailureTolerance: 2 * time.Minute})

	restart := func() {
		t.Helper()
		start := time.Now()
		if err := local.Restart(ctx); err != nil {
			t.Fatalf("restart DynamoDB Local: %v", err)
		}
		t.Logf("DynamoDB Local restarted in %v", time.Since(start).Round(time.Millisecond))
	}
	var once sync.Once
	stopOnce := func() { once.Do(func() { _ = local.Stop() }) }

	// 1. The server goes away just before the decision's transaction.
	r := approval()
	mustCreate(t, decider, r)
	woke := make(chan error, 1)
	var wokeWith elicitation.State
	polled := wf.reached("GetItem", 2)
	go func() {
		var err error
		wokeWith, err = wait(ctx, waiter, r.State.ID)
		woke <- err
	}()
	polling(t, polled)
	f.setHooks(func(op string) {
		if op == "TransactWriteItems" {
			stopOnce()
		}
	}, nil)
	win := submit("render-7", t0.Add(time.Minute))
	win.Answer = &elicitation.Answer{}
	_, err = decider.Resolve(ctx, r.State.ID, win)
	f.setHooks(nil, nil)
	if err == nil || !strings.Contains(err.Error(), "resolve "+r.State.ID) || !strings.Contains(err.Error(), "TransactWriteItems") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("resolve while the server is down: %v; want an error naming the call and the cause", err)
	}
	if errors.Is(err, elicitation.ErrConflict) || errors.Is(err, elicitation.ErrNotFound) {
		t.Fatalf("an outage reported as a domain error: %v", err)
	}
	t.Logf("outage error: %v", err)
	restart()
	st, err := clean.State(ctx, r.State.ID)
	if err != nil || st.Status != elicitation.StatusPending {
		t.Fatalf("after the failed decision: %+v, %v; want still pending", st, err)
	}
	decided, err := decider.Resolve(ctx, r.State.ID, win)
	if err != nil || decided.Status != elicitation.StatusSubmitted {
		t.Fatalf("the caller's retry: %+v, %v", decided, err)
	}
	select {
	case err := <-woke:
		if err != nil || !reflect.DeepEqual(wokeWith, decided) {
			t.Fatalf("waiter across the outage: %+v, %v; want %+v", wokeWith, err, decided)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not wake after the restart")
	}
	checkOneDecision(t, clean, r.State.ID, 1)

	// 2. The server goes away after the decision landed, before its
	// response: the caller sees a failure, and its retry is the success
	// that already happened.
	once = sync.Once{}
	r2 := selection(3, 100)
	mustCreate(t, decider, r2)
	f.setHooks(nil, func(op string) bool {
		if op != "TransactWriteItems" {
			return false
		}
		stopOnce()
		return true
	})
	win2 := submit("render-8", t0.Add(time.Minute), "opt-002")
	_, err = decider.Resolve(ctx, r2.State.ID, win2)
	f.setHooks(nil, nil)
	if err == nil || !strings.Contains(err.Error(), "resolve "+r2.State.ID) {
		t.Fatalf("resolve whose response was lost: %v; want an error", err)
	}
	t.Logf("lost-response error: %v", err)
	restart()
	st, err = clean.State(ctx, r2.State.ID)
	if err != nil || st.Status != elicitation.StatusSubmitted || st.SubmissionID != "render-8" {
		t.Fatalf("the decision that landed before the outage: %+v, %v", st, err)
	}
	again, err := decider.Resolve(ctx, r2.State.ID, win2)
	if err != nil || !reflect.DeepEqual(again, st) {
		t.Fatalf("the caller's retry: %+v, %v; want %+v", again, err, st)
	}
	other := submit("render-9", t0.Add(2*time.Minute), "opt-001")
	if _, err := decider.Resolve(ctx, r2.State.ID, other); !errors.Is(err, elicitation.ErrConflict) {
		t.Fatalf("another submission after the restart: %v, want ErrConflict", err)
	}
	checkOneDecision(t, clean, r2.State.ID, 1)
	rec, err := clean.Load(ctx, r2.State.ID)
	if err != nil || rec.Answer == nil || strings.Join(rec.Answer.SelectedIDs, ",") != "opt-002" {
		t.Fatalf("answer after the restart: %+v, %v", rec.Answer, err)
	}
}

func checkOneDecision(t *testing.T, s *dynamostore.Store, id string, want int) {
	t.Helper()
	tr, err := s.Audit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionDecided {
			n++
		}
	}
	if n != want {
		t.Errorf("%d decided entries, want %d: %+v", n, want, tr.Entries)
	}
}

// TestWaitThroughFailingPolls: polls that fail (after the SDK's retries)
// for less than the tolerance wake no watch, so they do not end a wait;
// failures that last longer wake it, and its own read ends it with the
// error.
func TestWaitThroughFailingPolls(t *testing.T) {
	ctx := context.Background()
	clean, _, table := dynamotest.Store(t, dynamostore.Options{})
	f := newFaults(nil)
	waiter := dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t), withFaults(f)), table, dynamostore.Options{PollFailureTolerance: 3 * time.Second})

	r := approval()
	mustCreate(t, clean, r)
	woke := make(chan error, 1)
	polled := f.reached("GetItem", 2)
	go func() {
		st, err := wait(ctx, waiter, r.State.ID)
		if err == nil && st.Status != elicitation.StatusSubmitted {
			err = errors.New("woke with status " + string(st.Status))
		}
		woke <- err
	}()
	polling(t, polled)
	f.arm("GetItem", repeat(serverError, 2*dynamostore.RetryMaxAttempts)...) // two failed polls
	if _, err := clean.Resolve(ctx, r.State.ID, submit("s", t0.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		if err != nil {
			t.Fatalf("wait through two failed polls: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not wake")
	}
	if left := f.disarm(); left != 0 {
		t.Errorf("%d faults never hit", left)
	}

	r2 := approval()
	mustCreate(t, clean, r2)
	polled = f.reached("GetItem", 2)
	go func() {
		_, err := wait(ctx, waiter, r2.State.ID)
		woke <- err
	}()
	polling(t, polled)
	f.arm("GetItem", repeat(serverError, 1000)...)
	start := time.Now()
	select {
	case err := <-woke:
		if err == nil || !strings.Contains(err.Error(), "InternalServerError") {
			t.Fatalf("wait through a lasting outage: %v", err)
		}
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("a lasting outage surfaced after %v, tolerance 3s", took)
		}
		t.Logf("lasting outage: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("wait did not give up on a lasting outage")
	}
	f.disarm()
}
