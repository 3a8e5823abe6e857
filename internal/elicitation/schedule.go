package elicitation

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Reminders and escalation are notices scheduled at a request's creation:
// written to the outbox in the creation's transaction (as the expiry
// notice is), each due at its own time, so that each is sent exactly once
// by whichever deliverer claims it, recorded in the audit trail as it is
// settled, and withdrawn by the transaction that decides or cancels the
// request. A deliverer drops one whose request is no longer pending when
// it comes due (expired, say): expiry is derived, never written.

const (
	// EventReminder: the request still waits; sent to a target that has
	// a remind interval and asks for created notices (with the review
	// link).
	EventReminder Event = "reminder"
	// EventEscalated: nobody decided within an escalation step's after;
	// sent with the review link to the step's targets, and without it to
	// the request's targets that ask for escalated (the agent's owner).
	EventEscalated Event = "escalated"
)

// MaxReminders is how many reminders one target gets for one request.
const MaxReminders = 3

// MaxEscalationSteps bounds a request's escalation chain, and
// MaxStepTargets the targets one step names.
const (
	MaxEscalationSteps = 5
	MaxStepTargets     = 4
)

// MaxScheduled bounds the reminders and escalation notices one request
// schedules: its creation and its resolution each write or withdraw them
// in one store transaction.
const MaxScheduled = 40

// ErrBadSchedule: a reminder or escalation setting that cannot be kept.
var ErrBadSchedule = errors.New("bad reminder or escalation")

// EscalationStep notifies Notify once After has passed since the creation
// of a request still pending.
type EscalationStep struct {
	After  time.Duration `json:"after"`
	Notify []string      `json:"notify"`
}

// Scheduled names one notice scheduled at creation (a reminder or an
// escalation), as the request keeps it so that its resolution withdraws
// exactly what was written, whatever the configuration says by then.
type Scheduled struct {
	Event  Event     `json:"event"`
	Target string    `json:"target"`
	Step   int       `json:"step"`
	DueAt  time.Time `json:"dueAt"`
	Link   bool      `json:"link,omitempty"`
}

// StepDeliveryID is the stable id of step n of ev about request id to
// target (DeliveryID for step 0).
func StepDeliveryID(id string, ev Event, target string, step int) string {
	if step == 0 {
		return DeliveryID(id, ev, target)
	}
	return DeliveryID(id, Event(string(ev)+"#"+strconv.Itoa(step)), target)
}

// delivery is the outbox item of sc about the request in st.
func (sc Scheduled) delivery(st State) Delivery {
	d := NewDelivery(st, sc.Event, sc.Target, sc.DueAt, sc.DueAt)
	d.ID, d.Step = StepDeliveryID(st.ID, sc.Event, sc.Target, sc.Step), sc.Step
	return d
}

// CheckEscalation checks a chain (a request's, or the deployment's with
// ttl zero): every after positive and, with ttl, before the request's
// expiry; every step naming known targets. field prefixes the field
// names ("escalate").
func CheckEscalation(chain []EscalationStep, ttl time.Duration, known func(string) bool, field string) error {
	if len(chain) > MaxEscalationSteps {
		return invalid(ErrBadSchedule, field, "%s has %d steps; at most %d are allowed", field, len(chain), MaxEscalationSteps)
	}
	for i, step := range chain {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case step.After <= 0:
			return invalid(ErrBadSchedule, f+".after", "%s.after must be a positive duration such as \"30m\", not %s", f, step.After)
		case ttl > 0 && step.After >= ttl:
			return invalid(ErrBadSchedule, f+".after", "%s.after (%s) is at or after the request's expiry (%s after creation): the step could never be sent; shorten it or raise timeoutSeconds", f, step.After, ttl)
		case len(step.Notify) == 0:
			return invalid(ErrBadSchedule, f+".notify", "%s.notify must name at least one notification target", f)
		case len(step.Notify) > MaxStepTargets:
			return invalid(ErrBadSchedule, f+".notify", "%s.notify names %d targets; at most %d are allowed", f, len(step.Notify), MaxStepTargets)
		}
		for _, n := range step.Notify {
			if !known(n) {
				return invalid(ErrUnknownTarget, f+".notify", "%s.notify names %q, which is not a notification target of this deployment", f, n)
			}
		}
	}
	return nil
}

// schedule is what a new request schedules besides its created and
// expiry notices: the reminders of each target with a remind interval
// (every interval after creation, at most MaxReminders, before expiry),
// and each escalation step of chain (the request's, else the
// deployment's, whose steps at or after expiry are left out).
func (s *Service) schedule(st State, targets []string, chain []EscalationStep) ([]Scheduled, []EscalationStep, error) {
	if s.notify == nil {
		if len(chain) > 0 {
			return nil, nil, invalid(ErrUnknownTarget, "escalate", "escalate names notification targets, but this deployment has none; leave escalate out")
		}
		return nil, nil, nil
	}
	ttl := st.ExpiresAt.Sub(st.CreatedAt)
	if len(chain) > 0 {
		if err := CheckEscalation(chain, ttl, s.notify.Known, "escalate"); err != nil {
			return nil, nil, err
		}
		if err := s.stepsMayDecide(chain); err != nil {
			return nil, nil, err
		}
	} else {
		for _, step := range s.notify.Escalation() {
			if step.After < ttl {
				chain = append(chain, step)
			}
		}
	}
	var out []Scheduled
	for _, tg := range targets {
		every := s.notify.Remind(tg)
		if every <= 0 || !s.notify.Wants(tg, EventCreated) {
			continue
		}
		for k := 1; k <= MaxReminders && time.Duration(k)*every < ttl; k++ {
			out = append(out, Scheduled{Event: EventReminder, Target: tg, Step: k, DueAt: st.CreatedAt.Add(time.Duration(k) * every), Link: true})
		}
	}
	for i, step := range chain {
		out = append(out, escalationNotices(st, targets, i+1, step, s.notify.Wants)...)
	}
	if len(out) > MaxScheduled {
		return nil, nil, invalid(ErrBadSchedule, "escalate", "this request would schedule %d reminders and escalation notices; at most %d are allowed: name fewer targets or escalation steps", len(out), MaxScheduled)
	}
	return out, chain, nil
}

// stepsMayDecide checks a request's own chain (the agent's): a step sends its
// targets the review link, the capability to decide, so it may name only
// targets the operator sends that link anyway: those told of new requests
// (created), and those of the deployment's chain. Never one told of
// outcomes only, such as the agent's owner's.
func (s *Service) stepsMayDecide(chain []EscalationStep) error {
	deployment := map[string]bool{}
	for _, step := range s.notify.Escalation() {
		for _, n := range step.Notify {
			deployment[n] = true
		}
	}
	for i, step := range chain {
		for _, n := range step.Notify {
			if !deployment[n] && !s.notify.Wants(n, EventCreated) {
				f := fmt.Sprintf("escalate[%d].notify", i)
				return invalid(ErrBadSchedule, f, "%s names %q, which is told of outcomes only, not of new requests: an escalation step sends the review link, so a request's own chain names only targets told of new requests or in the deployment's escalation chain", f, n)
			}
		}
	}
	return nil
}

// escalationNotices are step n's notices: with the review link to the
// step's targets, without it to the request's targets that ask for
// escalated and are not in the step.
func escalationNotices(st State, targets []string, n int, step EscalationStep, wants func(string, Event) bool) []Scheduled {
	due := st.CreatedAt.Add(step.After)
	var out []Scheduled
	seen := map[string]bool{}
	for _, tg := range step.Notify {
		if !seen[tg] {
			seen[tg] = true
			out = append(out, Scheduled{Event: EventEscalated, Target: tg, Step: n, DueAt: due, Link: true})
		}
	}
	for _, tg := range targets {
		if !seen[tg] && wants(tg, EventEscalated) {
			seen[tg] = true
			out = append(out, Scheduled{Event: EventEscalated, Target: tg, Step: n, DueAt: due})
		}
	}
	return out
}

// scheduledDeliveries are the outbox items of sched, with link on those
// that carry the review link.
func scheduledDeliveries(st State, sched []Scheduled, link func() string) []Delivery {
	out := make([]Delivery, 0, len(sched))
	for _, sc := range sched {
		d := sc.delivery(st)
		if sc.Link {
			d.Link = link()
		}
		out = append(out, d)
	}
	return out
}

// Pending reports whether d is a reminder or an escalation, which only a
// pending request sends.
func (d Delivery) Pending() bool { return d.Event == EventReminder || d.Event == EventEscalated }
