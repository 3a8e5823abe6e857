package notify

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// PerTarget is how many attempts at one target run at once. Every target
// has its own lane of that many, so a slow or hanging target delays its
// own deliveries and nobody else's.
const PerTarget = 4

// RestAfter is how many failed attempts in a row (refusals that may pass,
// time-outs) rest a target: its deliveries stay due in the outbox and are
// not attempted until the rest ends, so that a target that keeps failing
// is retried on its own schedule (one round of attempts per rest) instead
// of holding a lane, a batch or a sweep. Rests follow Backoff: 15 s,
// doubling up to 30 minutes; a delivered notice ends them.
const RestAfter = 3

// settleMargin is kept free after an attempt's bound before a deadline
// (the Lambda invocation's), for the claim, the read and the settle.
const settleMargin = 2 * time.Second

// health is what a Deliverer remembers of each target: failed attempts in
// a row and the rest they earned.
type health struct {
	mu      sync.Mutex
	targets map[string]*targetHealth
}

type targetHealth struct {
	fails, rests int
	until        time.Time
}

func (d *Deliverer) resting(target string, now time.Time) bool {
	d.health.mu.Lock()
	defer d.health.mu.Unlock()
	h := d.health.targets[target]
	return h != nil && now.Before(h.until)
}

// record counts an attempt's outcome toward its target's rest.
func (d *Deliverer) record(target string, o Outcome, now time.Time) {
	failed := o.failed()
	if !failed && o != Delivered {
		return
	}
	d.health.mu.Lock()
	defer d.health.mu.Unlock()
	if d.health.targets == nil {
		d.health.targets = map[string]*targetHealth{}
	}
	h := d.health.targets[target]
	if h == nil {
		h = &targetHealth{}
		d.health.targets[target] = h
	}
	if !failed {
		*h = targetHealth{}
		return
	}
	if h.fails++; h.fails >= RestAfter {
		h.fails = 0
		h.rests++
		h.until = now.Add(d.backoff()(h.rests))
		d.log().Warn("notification target is resting after failed attempts in a row", "target", target, "until", h.until.Format(time.RFC3339), "failures", RestAfter)
	}
}

// failed says whether an outcome counts as a failure toward a rest: a
// refusal that may pass, a time-out.
func (o Outcome) failed() bool { return o == Retrying }

// attempt is Attempt for a lane: nothing while the target rests or when
// ctx's deadline leaves no room for a whole attempt (the delivery stays due
// in the outbox), and the outcome counted toward the target's rest.
func (d *Deliverer) attempt(ctx context.Context, dl elicitation.Delivery, stream bool) (Outcome, error) {
	if d.resting(dl.Target, d.now()) {
		return Deferred, nil
	}
	if end, ok := ctx.Deadline(); ok && time.Until(end) < d.bound(stream)+settleMargin {
		return Deferred, nil
	}
	o, err := d.Attempt(ctx, dl, stream)
	d.record(dl.Target, o, d.now())
	return o, err
}

// lanes runs attempts, PerTarget at a time for each target, every target
// apart. A delivery is held (queued or in flight) at most once. After a
// failed attempt, a lane's runner stops while other attempts at its target
// are in flight, no new runner starts, and the last of them goes on: their
// outcomes decide whether the target rests before the lane tries more.
// (Otherwise the first of a hanging target's attempts to time out would
// start the next ones before the last of them rested it, and a batch would
// wait for a second bound.)
type lanes struct {
	d      *Deliverer
	stream bool // a stream batch's attempts (Attempt)
	// after is called with the target when an attempt ends (the Worker
	// looks for more).
	after func(target string)

	mu       sync.Mutex
	byTarget map[string]*lane
	held     map[string]bool
	wg       sync.WaitGroup
}

type lane struct {
	queue    []job
	running  int  // runners
	inFlight int  // attempts under way
	narrowed bool // a runner stopped after a failure: no new runner until the attempts out have ended
}

type job struct {
	dl   elicitation.Delivery
	done func(Outcome, error)
}

func newLanes(d *Deliverer, stream bool, after func(string)) *lanes {
	return &lanes{d: d, stream: stream, after: after, byTarget: map[string]*lane{}, held: map[string]bool{}}
}

// add queues an attempt at dl on its target's lane; done (if not nil)
// gets its outcome. It queues nothing and returns Skipped if dl is held
// already, Deferred if its target rests.
func (l *lanes) add(ctx context.Context, dl elicitation.Delivery, done func(Outcome, error)) (queued bool, not Outcome) {
	if l.d.resting(dl.Target, l.d.now()) {
		return false, Deferred
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[dl.ID] {
		return false, Skipped
	}
	l.held[dl.ID] = true
	ln := l.byTarget[dl.Target]
	if ln == nil {
		ln = &lane{}
		l.byTarget[dl.Target] = ln
	}
	ln.queue = append(ln.queue, job{dl: dl, done: done})
	if ln.running < PerTarget && !ln.narrowed {
		ln.running++
		l.wg.Add(1)
		go l.run(ctx, ln)
	}
	return true, ""
}

func (l *lanes) run(ctx context.Context, ln *lane) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		if len(ln.queue) == 0 {
			ln.running--
			l.mu.Unlock()
			return
		}
		j := ln.queue[0]
		ln.queue = ln.queue[1:]
		ln.inFlight++
		l.mu.Unlock()
		o, err := l.d.attempt(ctx, j.dl, l.stream)
		l.mu.Lock()
		delete(l.held, j.dl.ID)
		ln.inFlight--
		stop := o.failed() && ln.inFlight > 0
		if stop {
			ln.running--
			ln.narrowed = true
		} else if ln.inFlight == 0 {
			ln.narrowed = false
		}
		l.mu.Unlock()
		if j.done != nil {
			j.done(o, err)
		}
		if l.after != nil && o != Deferred {
			l.after(j.dl.Target)
		}
		if stop {
			return
		}
	}
}

// wait waits for every queued attempt to end.
func (l *lanes) wait() { l.wg.Wait() }
