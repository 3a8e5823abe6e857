package notify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Store is what a Deliverer uses of the store: the outbox, the request a
// delivery tells of, and its audit trail (for a send whose delivery was
// settled elsewhere meanwhile).
type Store interface {
	elicitation.Outbox
	Load(ctx context.Context, id string) (elicitation.Record, error)
	Append(ctx context.Context, id string, entry elicitation.AuditEntry) error
}

// Deliverer takes deliveries out of the outbox one attempt at a time:
// claim, send, settle (with its audit entry). The local server runs it in a
// Worker; on AWS the notify function runs it for stream records and on the
// sweep's schedule. Both act on the one retry policy, which Attempt and
// the lanes apply (docs/notifications.md, "Delivery that loses nothing"):
// a failed attempt that may pass backs off in the outbox (Backoff) and is
// retried by the next look at what is due (the local worker's, the
// sweep's) after it, until MaxAttempts; a permanent refusal is given up at
// once; RestAfter failures in a row rest the target for Backoff too.
// Nothing else retries a notice: not the stream, not Lambda.
type Deliverer struct {
	Store   Store
	Targets *Targets
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Lease is how long a claimed attempt holds its delivery; an attempt
	// that crashes gives it back when the lease ends. Default 1 minute.
	Lease time.Duration
	// Backoff is the wait after failed attempt n (1, 2, …), and the rest
	// after a target's n-th run of failures; default DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// Timeout bounds one send; default AttemptTimeout. A stream batch's
	// sends are bounded by StreamAttemptTimeout too (bound).
	Timeout time.Duration
	// MaxAttempts is how many attempts a delivery gets; default
	// DefaultMaxAttempts.
	MaxAttempts int
	Log         *slog.Logger
	// Observer is told of each send's outcome (nil: nobody).
	Observer Observer
	// Limits bound the notices each target that reaches people is sent,
	// of one principal's requests and in all; a zero Rate is its
	// DefaultNoticeLimits. Each process (a local server, a warm notify
	// function) counts its own.
	Limits NoticeLimits

	health health
	budget budgets
}

// DefaultMaxAttempts is how many attempts a delivery gets before it is
// given up.
const DefaultMaxAttempts = 10

// DefaultBackoff doubles from 15 s up to 30 minutes: ten attempts span
// about an hour and a half.
func DefaultBackoff(attempt int) time.Duration {
	return min(15*time.Second<<min(attempt-1, 10), 30*time.Minute)
}

// Outcome is what one attempt came to.
type Outcome string

const (
	// Delivered: the target accepted it; the delivery left the outbox.
	Delivered Outcome = "delivered"
	// Skipped: nothing to do (already settled, held by another attempt, or not due).
	Skipped Outcome = "skipped"
	// Retrying: the attempt failed; the delivery backs off in the outbox
	// for another.
	Retrying Outcome = "retrying"
	// GaveUp: the attempt failed for good; the delivery left the outbox.
	GaveUp Outcome = "gave up"
	// Dropped: the delivery no longer applies (its request or target is
	// gone), or its target's notices are used up (NoticeLimits).
	Dropped Outcome = "dropped"
	// Deferred: not attempted (its target rests after failures in a row,
	// or the time left was less than an attempt's bound); the delivery
	// stays due in the outbox.
	Deferred Outcome = "deferred"
)

func (d *Deliverer) now() time.Time { return nowOf(d.Now).UTC() }

// nowOf is the time by clock, or by time.Now when clock is nil (a Now
// option left unset).
func nowOf(clock func() time.Time) time.Time {
	if clock != nil {
		return clock()
	}
	return time.Now()
}

func (d *Deliverer) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.Default()
}

// Attempt makes one attempt at dl (named by ID and DueAt). stream says it
// is a stream batch's (the notify function's on AWS, whose shard waits for
// the batch): its send is bounded by StreamAttemptTimeout (bound), where
// the local worker's and the sweep's have the full Timeout. Whoever makes
// it, a failed attempt is settled by the one policy (Deliverer). The error
// is the store's: the send's own failure is the outcome.
func (d *Deliverer) Attempt(ctx context.Context, dl elicitation.Delivery, stream bool) (Outcome, error) {
	lease := d.Lease
	if lease <= 0 {
		lease = time.Minute
	}
	now := d.now()
	c, ok, err := d.Store.ClaimDelivery(ctx, dl, now, now.Add(lease))
	if err != nil {
		return "", err
	}
	if !ok {
		return Skipped, nil
	}
	what := describe(c)
	rec, err := d.Store.Load(ctx, c.RequestID)
	if errors.Is(err, elicitation.ErrNotFound) {
		return d.settle(ctx, c, time.Time{}, Dropped, what+": dropped (the request is gone)")
	}
	if err != nil {
		return "", err
	}
	sender, ok := d.Targets.Sender(c.Target)
	if why := d.dropped(c, rec, ok, now); why != "" {
		return d.settle(ctx, c, time.Time{}, Dropped, what+": "+why)
	}
	sctx, cancel := context.WithTimeout(ctx, d.bound(stream))
	serr := sender.Send(sctx, d.notice(ctx, c, rec, now))
	cancel()
	d.observed(ctx, c.Target, serr)
	if serr == nil {
		return d.settle(ctx, c, time.Time{}, Delivered, fmt.Sprintf("%s: delivered (attempt %d)", what, c.Attempts))
	}
	if ctx.Err() != nil {
		// Shutting down mid-send: leave the claim to run out; the next
		// deliverer sends it again (at least once).
		return "", ctx.Err()
	}
	why := Reason(serr)
	if why.Permanent || c.Attempts >= cmp.Or(d.MaxAttempts, DefaultMaxAttempts) {
		return d.settle(ctx, c, time.Time{}, GaveUp, fmt.Sprintf("%s: gave up at attempt %d (%s)", what, c.Attempts, why.Reason))
	}
	retry := d.now().Add(d.backoff()(c.Attempts))
	return d.settle(ctx, c, retry, Retrying, fmt.Sprintf("%s: attempt %d failed (%s); next attempt at %s", what, c.Attempts, why.Reason, retry.Format(time.RFC3339)))
}

// dropped says why c is not sent ("" if it is): its target is gone
// (sender false), its request is no longer in the state it tells of, or
// its target's notices are used up (NoticeLimits, counted at a first
// attempt).
func (d *Deliverer) dropped(c elicitation.Delivery, rec elicitation.Record, sender bool, now time.Time) string {
	switch {
	case !sender:
		return "dropped (the target is no longer configured)"
	case c.Event == elicitation.EventExpired && rec.State.StatusAt(now) != elicitation.StatusExpired:
		return "dropped (the request was resolved)"
	case c.Pending() && rec.State.StatusAt(now) != elicitation.StatusPending:
		// A reminder or an escalation outlived its request's pending time
		// (it expired: nothing withdrew it).
		return "dropped (the request is no longer pending)"
	case c.Attempts == 1:
		if why := d.overBound(c.Target, rec.State.Owner, now); why != "" {
			return "not sent (" + why + "; the request waits in the inbox)"
		}
	}
	return ""
}

// Observer is told of each send to a target, by the target's type
// (webhook, slack, email, ntfy), for counting (package metrics). A send
// cut short by the deliverer's own shutdown is not told.
type Observer interface {
	Notified(targetType string, delivered bool)
}

func (d *Deliverer) observed(ctx context.Context, target string, serr error) {
	if d.Observer != nil && ctx.Err() == nil {
		d.Observer.Notified(d.Targets.Type(target), serr == nil)
	}
}

// describe names a delivery in its audit entries: "created to oncall",
// "reminder 2 to oncall".
func describe(c elicitation.Delivery) string {
	if c.Step > 0 {
		return fmt.Sprintf("%s %d to %s", c.Event, c.Step, c.Target)
	}
	return fmt.Sprintf("%s to %s", c.Event, c.Target)
}

// bound is how long one send may take: Timeout (default AttemptTimeout),
// and for a stream batch's attempt no longer than StreamAttemptTimeout.
func (d *Deliverer) bound(stream bool) time.Duration {
	t := d.Timeout
	if t <= 0 {
		t = AttemptTimeout
	}
	if stream {
		t = min(t, StreamAttemptTimeout)
	}
	return t
}

func (d *Deliverer) backoff() func(int) time.Duration {
	if d.Backoff != nil {
		return d.Backoff
	}
	return DefaultBackoff
}

func (d *Deliverer) settle(ctx context.Context, c elicitation.Delivery, retry time.Time, o Outcome, detail string) (Outcome, error) {
	e := elicitation.AuditEntry{At: d.now(), Action: elicitation.ActionNotified, Principal: elicitation.Notifier, Detail: detail}
	err := d.Store.SettleDelivery(ctx, c, retry, e)
	if errors.Is(err, elicitation.ErrConflict) {
		return d.settledElsewhere(ctx, c, o, e)
	}
	if err != nil {
		return "", fmt.Errorf("settle %s: %w", c.ID, err)
	}
	lvl := slog.LevelInfo
	if o == Retrying || o == GaveUp {
		lvl = slog.LevelWarn
	}
	d.log().Log(ctx, lvl, "notification", "deliveryId", c.ID, "elicitationId", c.RequestID, "event", c.Event, "target", c.Target, "outcome", string(o), "detail", detail)
	return o, nil
}

// settledElsewhere ends an attempt whose delivery was no longer held when
// it was settled: a decision withdrew it during the send (a reminder, an
// escalation notice), or its lease ran out and another attempt took it. A
// send that reached the target is audited all the same (the target shows
// it; a second attempt's own entry, if any, follows at least once);
// anything else is left to whoever holds the delivery now, if anyone.
func (d *Deliverer) settledElsewhere(ctx context.Context, c elicitation.Delivery, o Outcome, e elicitation.AuditEntry) (Outcome, error) {
	d.log().InfoContext(ctx, "notification was withdrawn or taken by another attempt while it was sent", "deliveryId", c.ID, "elicitationId", c.RequestID, "outcome", string(o))
	if o != Delivered {
		return Skipped, nil
	}
	if err := d.Store.Append(ctx, c.RequestID, e); err != nil && !errors.Is(err, elicitation.ErrNotFound) {
		return "", fmt.Errorf("audit %s: %w", c.ID, err)
	}
	return Delivered, nil
}

// AttemptAll makes one attempt at each of ds, in lanes (PerTarget at a
// time for each target, every target apart; stream as for Attempt), and
// returns each one's outcome and error, in order. A delivery to a resting
// target, or one there is no time left for before ctx's deadline, is
// Deferred: it stays due in the outbox.
func (d *Deliverer) AttemptAll(ctx context.Context, ds []elicitation.Delivery, stream bool) ([]Outcome, []error) {
	outs, errs := make([]Outcome, len(ds)), make([]error, len(ds))
	l := newLanes(d, stream, nil)
	for i, dl := range ds {
		if ok, not := l.add(ctx, dl, func(o Outcome, err error) { outs[i], errs[i] = o, err }); !ok {
			outs[i] = not
		}
	}
	l.wait()
	return outs, errs
}

// sweepBatch is how many due deliveries of each target one round of the
// sweep lists.
const sweepBatch = 50

// DeliverDue attempts every delivery due now, in rounds of up to
// sweepBatch per target, each target in its own lane, and returns how many
// it attempted. It is the sweep: expiry notices, retries after a backoff,
// and anything a crashed deliverer left. A resting target's deliveries are
// left for a later sweep.
func (d *Deliverer) DeliverDue(ctx context.Context) (int, error) {
	n := 0
	for {
		due, err := d.Store.DueDeliveries(ctx, d.now(), sweepBatch)
		if err != nil {
			return n, err
		}
		outs, errs := d.AttemptAll(ctx, due, false)
		progress := false
		for i := range due {
			if errs[i] != nil {
				return n, errs[i]
			}
			if outs[i] != Skipped && outs[i] != Deferred {
				n++
				progress = true
			}
		}
		if !progress {
			return n, nil
		}
	}
}

// Worker runs a Deliverer in the server process: at start (resuming what a
// previous run left), whenever Wake is called (a request wrote deliveries),
// and every Interval (expiry notices and retries).
type Worker struct {
	D *Deliverer
	// Interval is the sweep period; default 5 s.
	Interval time.Duration
	wake     chan struct{}
}

// NewWorker returns a Worker for d.
func NewWorker(d *Deliverer, interval time.Duration) *Worker {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	return &Worker{D: d, Interval: interval, wake: make(chan struct{}, 1)}
}

// Wake makes the worker look for due deliveries now. It never blocks.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends: whenever it wakes it lists what is due (at
// most 2×PerTarget of each target) and queues each on its target's lane,
// without waiting for any attempt; the end of an attempt at a target whose
// listing was cut wakes it again. A failing store is logged and retried at
// the next wake or tick, never fatal. It returns when ctx ends and the
// attempts in flight have.
func (w *Worker) Run(ctx context.Context) error {
	tick := time.NewTicker(w.Interval)
	defer tick.Stop()
	const listed = 2 * PerTarget
	var mu sync.Mutex
	cut := map[string]bool{} // targets with more due than the last listing held
	l := newLanes(w.D, false, func(target string) {
		mu.Lock()
		more := cut[target]
		mu.Unlock()
		if more {
			w.Wake()
		}
	})
	defer l.wait()
	for {
		due, err := w.D.Store.DueDeliveries(ctx, w.D.now(), listed)
		if err != nil && ctx.Err() == nil {
			w.D.log().ErrorContext(ctx, "notification delivery", "err", err)
		}
		count := map[string]int{}
		for _, dl := range due {
			count[dl.Target]++
			l.add(ctx, dl, nil)
		}
		mu.Lock()
		clear(cut)
		for t, n := range count {
			cut[t] = n >= listed
		}
		mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.wake:
		case <-tick.C:
		}
	}
}

// notice is the notice c delivers about rec: for a reminder or an
// escalation, with the delegations active at now (when the store keeps
// them), so that it reaches the delegates of the reviewers it addresses
// too (elicitation.Notice.AlsoTo). A failure to read them sends it to the
// reviewers alone (logged): the notice is not held back for it.
func (d *Deliverer) notice(ctx context.Context, c elicitation.Delivery, rec elicitation.Record, now time.Time) elicitation.Notice {
	n := elicitation.NoticeOf(c, rec)
	ds, ok := d.Store.(interface {
		ListDelegations(ctx context.Context, after time.Time) ([]elicitation.Delegation, error)
	})
	if !c.Pending() || !ok {
		return n
	}
	all, err := ds.ListDelegations(ctx, now)
	if err != nil {
		d.log().WarnContext(ctx, "notice without delegates", "elicitationId", c.RequestID, "err", err)
		return n
	}
	for _, dl := range all {
		if dl.ActiveAt(now) {
			n.Delegates = append(n.Delegates, dl)
		}
	}
	return n
}
