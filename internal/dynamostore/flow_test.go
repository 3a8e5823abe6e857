package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// A flow is one request's life through two faulty handles: the waiter
// (handle 1, where elicit_await runs) and the decider (handle 2, where
// everything else runs), checked through a clean third handle.
type flowEnv struct {
	waiter, decider, clean *dynamostore.Store
	f1, f2                 *faults
}

func newFlowEnv(t *testing.T) *flowEnv {
	t.Helper()
	clean, _, table := dynamotest.Store(t, dynamostore.Options{})
	e := &flowEnv{clean: clean, f1: newFaults(nil), f2: newFaults(nil)}
	e.waiter = dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t), withFaults(e.f1)), table, dynamostore.Options{})
	e.decider = dynamostore.New(dynamotest.Client(dynamotest.Endpoint(t), withFaults(e.f2)), table, dynamostore.Options{})
	return e
}

// A step of the flow, and the DynamoDB operations it calls.
type flowStep struct {
	name   string
	waiter bool // runs on the waiter's handle (else the decider's)
	ops    []string
}

var flowSteps = []flowStep{
	{"create", false, []string{"TransactWriteItems"}},
	{"append", false, []string{"GetItem", "TransactWriteItems"}},
	{"load", false, []string{"Query"}},
	{"resolve", false, []string{"GetItem", "TransactWriteItems"}},
	{"wait", true, []string{"GetItem"}},
	{"retry", false, []string{"GetItem"}},
	{"consume", false, []string{"GetItem", "TransactWriteItems"}},
	{"audit", false, []string{"GetItem", "Query"}},
	{"cleanup", false, []string{"Query", "GetItem", "BatchWriteItem", "DeleteItem"}},
}

// A fault plan: the faults armed on one operation of one step, and whether
// they outlast the SDK's retries (so that the step must fail, clearly, and
// succeed when the caller tries again).
type faultPlan struct {
	name   string
	faults []fault
	fails  bool
}

var faultPlans = []faultPlan{
	{"mixed transient", []fault{throughputExceeded, serverError, stalled, lostResponse}, false},
	{"throttled", []fault{throttling, throughputExceeded}, false},
	{"500 beyond retries", repeat(serverError, dynamostore.RetryMaxAttempts), true},
	{"responses lost beyond retries", repeat(lostResponse, dynamostore.RetryMaxAttempts), true},
	{"hang until the deadline", []fault{hang}, true},
}

func repeat(f fault, n int) []fault {
	fs := make([]fault, n)
	for i := range fs {
		fs[i] = f
	}
	return fs
}

// TestFaultsOnEveryCall injects each fault plan on each DynamoDB call of
// each step of a request's life, and checks that no decision is lost or
// duplicated, that a call fails only when its faults outlast the retries,
// with an error that says what failed, and that the caller's retry then
// succeeds.
func TestFaultsOnEveryCall(t *testing.T) {
	for _, step := range flowSteps {
		for _, op := range step.ops {
			t.Run(step.name+"/"+op, func(t *testing.T) {
				t.Parallel()
				e := newFlowEnv(t)
				for i, plan := range faultPlans {
					t.Run(plan.name, func(t *testing.T) {
						e.run(t, i, step.name, op, plan)
					})
				}
			})
		}
	}
}

// run runs one flow, with plan armed on op when the flow reaches victim.
// Flows on one table run one after another, each with a later RetainUntil,
// so that each flow's cleanup removes its own request.
func (e *flowEnv) run(t *testing.T, n int, victim, op string, plan faultPlan) {
	bg := context.Background()
	r := selection(3, 200)
	r.State.RetainUntil = r.State.RetainUntil.Add(time.Duration(n) * time.Minute)
	id := r.State.ID
	win := submit("render-1", t0.Add(time.Minute), "opt-001")
	render := elicitation.AuditEntry{At: t0.Add(30 * time.Second), Action: elicitation.ActionRendered, Principal: elicitation.Reviewer, Detail: "pending"}
	fetch := elicitation.AuditEntry{At: t0.Add(2 * time.Minute), Action: elicitation.ActionResultFetched, Principal: "agent-1"}
	var decided, woke elicitation.State
	retried := map[string]bool{} // steps the caller had to repeat

	steps := map[string]func(ctx context.Context) error{
		"create": func(ctx context.Context) error {
			err := e.decider.Create(ctx, r, created(r))
			if errors.Is(err, elicitation.ErrConflict) && retried["create"] {
				// The caller's retry of a create whose response was lost:
				// it is there, whole.
				if rec, lerr := e.clean.Load(bg, id); lerr == nil && reflect.DeepEqual(rec.State, r.State) {
					return nil
				}
			}
			return err
		},
		"append": func(ctx context.Context) error { return e.decider.Append(ctx, id, render) },
		"load": func(ctx context.Context) error {
			rec, err := e.decider.Load(ctx, id)
			if err == nil && len(rec.Payload.Options) != 3 {
				err = fmt.Errorf("loaded %d options", len(rec.Payload.Options))
			}
			return err
		},
		"resolve": func(ctx context.Context) error {
			st, err := e.decider.Resolve(ctx, id, win)
			if err == nil {
				decided = st
			}
			return err
		},
		"wait": func(ctx context.Context) error {
			st, err := wait(ctx, e.waiter, id)
			if err == nil {
				woke = st
			}
			return err
		},
		"retry": func(ctx context.Context) error {
			again := win
			again.At = t0.Add(90 * time.Second)
			st, err := e.decider.Resolve(ctx, id, again)
			if err == nil && !reflect.DeepEqual(st, decided) {
				err = fmt.Errorf("retried resolution answered %+v, want %+v", st, decided)
			}
			return err
		},
		"consume": func(ctx context.Context) error {
			st, err := e.decider.Consume(ctx, id, fetch)
			if err == nil && (st.Status != elicitation.StatusConsumed || st.SubmissionID != "render-1") {
				err = fmt.Errorf("consumed state %+v", st)
			}
			return err
		},
		"audit": func(ctx context.Context) error {
			tr, err := e.decider.Audit(ctx, id)
			if err != nil {
				return err
			}
			return checkTrail(tr, retried)
		},
		"cleanup": func(ctx context.Context) error {
			_, err := e.decider.Cleanup(ctx, r.State.RetainUntil)
			return err
		},
	}

	for _, step := range flowSteps {
		switch step.name {
		case "wait":
			continue // runs with resolve
		case "resolve":
			e.decide(t, steps["resolve"], steps["wait"], victim, op, plan)
			if !reflect.DeepEqual(woke, decided) {
				t.Fatalf("the waiter woke with %+v, want the decision %+v", woke, decided)
			}
			continue
		}
		run := steps[step.name]
		if step.name != victim {
			if err := run(bg); err != nil {
				t.Fatalf("%s (no faults): %v", step.name, err)
			}
			continue
		}
		ctx, cancel := faultCtx(plan)
		e.f2.arm(op, plan.faults...)
		start := time.Now()
		err := run(ctx)
		took := time.Since(start)
		cancel()
		e.check(t, e.f2, step.name, op, plan, err, took)
		if plan.fails {
			retried[step.name] = true
			if err := run(bg); err != nil {
				t.Fatalf("%s: the caller's retry: %v", step.name, err)
			}
		}
	}
	checkFlowEnd(t, e, r, decided)
}

// hangDeadline is the deadline of a call whose DynamoDB call hangs: long
// enough for the calls before the hanging one to finish on a loaded machine.
const hangDeadline = 3 * time.Second

func faultCtx(plan faultPlan) (context.Context, context.CancelFunc) {
	if plan.faults[0] == hang {
		return context.WithTimeout(context.Background(), hangDeadline)
	}
	return context.WithTimeout(context.Background(), 20*time.Second)
}

// check checks the outcome of a call made with plan armed on op.
func (e *flowEnv) check(t *testing.T, f *faults, step, op string, plan faultPlan, err error, took time.Duration) {
	t.Helper()
	if left := f.disarm(); left != 0 {
		t.Errorf("%s: %d of %d faults never hit %s", step, left, len(plan.faults), op)
	}
	switch {
	case !plan.fails && err != nil:
		t.Fatalf("%s with faults on %s: %v (retries should have absorbed them)", step, op, err)
	case plan.fails && err == nil:
		t.Fatalf("%s with faults on %s beyond retries succeeded", step, op)
	case plan.fails:
		checkClearError(t, step, op, plan, err, took)
	}
}

// decide resolves the request through the decider while the waiter waits
// on it, with plan armed on the decider (victim "resolve") or on the waiter
// (victim "wait"). When the faults outlast the retries the failed call is
// repeated, as its caller would.
func (e *flowEnv) decide(t *testing.T, resolve, wait func(context.Context) error, victim, op string, plan faultPlan) {
	t.Helper()
	rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	f := map[string]*faults{"resolve": e.f2, "wait": e.f1}[victim]
	if f != nil {
		if victim == "resolve" {
			rcancel()
			rctx, rcancel = faultCtx(plan)
		} else {
			wcancel()
			wctx, wcancel = faultCtx(plan)
		}
		f.arm(op, plan.faults...)
	}
	defer rcancel()
	defer wcancel()
	waited := make(chan error, 1)
	polled := e.f1.reached("GetItem", 1) // the waiter's first read has gone out
	start := time.Now()
	go func() { waited <- wait(wctx) }()
	polling(t, polled)
	rstart := time.Now()
	rerr := resolve(rctx)
	rtook := time.Since(rstart)
	if rerr != nil {
		wcancel() // nothing to wait for
	}
	werr := <-waited
	wtook := time.Since(start)
	switch victim {
	case "resolve":
		e.check(t, f, victim, op, plan, rerr, rtook)
	case "wait":
		e.check(t, f, victim, op, plan, werr, wtook)
	}
	if rerr != nil {
		if victim != "resolve" {
			t.Fatalf("resolve (no faults): %v", rerr)
		}
		if err := resolve(context.Background()); err != nil {
			t.Fatalf("resolve: the caller's retry: %v", err)
		}
	}
	if werr != nil {
		if victim == "wait" || victim == "resolve" && rerr != nil {
			werr = wait(context.Background())
		}
		if werr != nil {
			t.Fatalf("wait: %v", werr)
		}
	}
}

func checkClearError(t *testing.T, step, op string, plan faultPlan, err error, took time.Duration) {
	t.Helper()
	msg := err.Error()
	for _, sentinel := range []error{elicitation.ErrNotFound, elicitation.ErrConflict, elicitation.ErrExpired} {
		if errors.Is(err, sentinel) {
			t.Errorf("%s: a store failure was reported as %v: %v", step, sentinel, err)
		}
	}
	if !strings.HasPrefix(msg, step+" ") && !strings.HasPrefix(msg, "cleanup") && !strings.HasPrefix(msg, "resolve") {
		t.Errorf("%s: error does not say which call failed: %v", step, err)
	}
	if op != "" && !strings.Contains(msg, op) && plan.faults[0] != hang {
		t.Errorf("%s: error does not name the DynamoDB operation %s: %v", step, op, err)
	}
	switch plan.faults[0] {
	case hang:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: hung call ended with %v, want the deadline", step, err)
		}
		if took > hangDeadline+2*time.Second {
			t.Errorf("%s: hung call took %v, well past its %v deadline", step, took, hangDeadline)
		}
	case serverError:
		if !strings.Contains(msg, "InternalServerError") || !strings.Contains(msg, "exceeded maximum number of attempts") {
			t.Errorf("%s: error does not say the server failed every attempt: %v", step, err)
		}
	case lostResponse:
		if !strings.Contains(msg, "connection reset") {
			t.Errorf("%s: error does not say the connection failed: %v", step, err)
		}
	}
}

// checkTrail: one creation, one decision, whatever the faults; more than one
// render or fetch only where the caller repeated that step.
func checkTrail(tr elicitation.AuditTrail, retried map[string]bool) error {
	n := map[elicitation.Action]int{}
	for _, e := range tr.Entries {
		n[e.Action]++
	}
	want := map[elicitation.Action]int{elicitation.ActionCreated: 1, elicitation.ActionRendered: 1, elicitation.ActionDecided: 1, elicitation.ActionResultFetched: 1}
	if retried["append"] && n[elicitation.ActionRendered] == 2 {
		want[elicitation.ActionRendered] = 2
	}
	if retried["consume"] && n[elicitation.ActionResultFetched] == 2 {
		want[elicitation.ActionResultFetched] = 2
	}
	if fmt.Sprint(n) != fmt.Sprint(want) {
		return fmt.Errorf("audit trail has %v, want %v", n, want)
	}
	return nil
}

func checkFlowEnd(t *testing.T, e *flowEnv, r elicitation.Request, decided elicitation.State) {
	t.Helper()
	if decided.Status != elicitation.StatusSubmitted || decided.SubmissionID != "render-1" || decided.Decision != elicitation.DecisionSubmitted {
		t.Errorf("decision %+v", decided)
	}
	if _, err := e.clean.State(context.Background(), r.State.ID); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("after cleanup: %v, want ErrNotFound", err)
	}
	if n, err := e.clean.CountItems(context.Background(), r.State.ID); err != nil || n != 0 {
		t.Errorf("%d items left after cleanup (%v)", n, err)
	}
}
