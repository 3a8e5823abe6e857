package elicitation

import (
	"errors"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"
)

// Notifications are the deployment's named notification targets, as the
// Service needs them: which exist, which are the defaults, which events
// each asks for. Package notify implements it from the operator's
// configuration.
type Notifications interface {
	// Targets returns the targets a new request of owner notifies: the
	// defaults, the owner's own targets, then names, without repeats. A
	// name that is not configured gives an *Error with CodeInvalidArgument
	// on the field "notify".
	Targets(owner string, names []string) ([]string, error)
	// Wants reports whether target asks for ev.
	Wants(target string, ev Event) bool
	// Remind is how often target is reminded of a request still pending
	// (0: never).
	Remind(target string) time.Duration
	// Escalation is the deployment's escalation chain, for requests that
	// name none.
	Escalation() []EscalationStep
	// Known reports whether name is a configured target.
	Known(name string) bool
	// Queued is called after deliveries were committed, so that a
	// deliverer in this process can start on them at once.
	Queued()
}

// Notify is the notification part of a creation input.
type Notify struct {
	// Targets are the names the agent passed as notify (operator-configured
	// targets; never addresses or URLs).
	Targets []string
	// ReviewLink builds the review URL for the created notice from the new
	// request's id and review key (the same URL the agent gets); nil
	// leaves the link out.
	ReviewLink func(id, key string) string
	// Escalate is the request's own escalation chain (replacing the
	// deployment's); nil: the deployment's.
	Escalate []EscalationStep
}

func (n Notify) link(id, key string) string {
	if n.ReviewLink == nil {
		return ""
	}
	return n.ReviewLink(id, key)
}

// ErrUnknownTarget: notify named a target the deployment does not have.
var ErrUnknownTarget = errors.New("unknown notification target")

// UnknownTarget is the error for a notify name that is not configured.
func UnknownTarget(name string, known []string) *Error {
	if len(known) == 0 {
		return invalid(ErrUnknownTarget, "notify", "notify names %q, but this deployment has no notification targets; leave notify out", name)
	}
	return invalid(ErrUnknownTarget, "notify", "notify names %q, which is not a notification target of this deployment; the targets are %s", name, quoteList(known))
}

func quoteList(names []string) string {
	return `"` + strings.Join(names, `", "`) + `"`
}

// targets resolves a request's notify names.
func (s *Service) targets(owner string, names []string) ([]string, error) {
	if s.notify == nil {
		if len(names) > 0 {
			return nil, UnknownTarget(names[0], nil)
		}
		return nil, nil
	}
	return s.notify.Targets(owner, names)
}

// createdOutbox is what a new request's creation writes to the outbox: the
// created notice (with the link) to each target that asks for it, and the
// expiry notice, scheduled for expiresAt, to each that asks for that; then
// the reminders and escalation notices of sched.
func (s *Service) createdOutbox(st State, targets []string, sched []Scheduled, link func() string) []Delivery {
	var out []Delivery
	link1 := sync.OnceValue(link)
	for _, tg := range targets {
		if s.notify.Wants(tg, EventCreated) {
			d := NewDelivery(st, EventCreated, tg, st.CreatedAt, st.CreatedAt)
			d.Link = link1()
			out = append(out, d)
		}
		if s.notify.Wants(tg, EventExpired) {
			out = append(out, NewDelivery(st, EventExpired, tg, st.ExpiresAt, st.ExpiresAt))
		}
	}
	return append(out, scheduledDeliveries(st, sched, link1)...)
}

// resolutionOutbox adds to t the notices of its event, and withdraws every
// expiry notice the request may have scheduled (whatever the configuration
// says now: withdrawing one that was never written writes nothing) and
// every reminder and escalation notice its creation scheduled (those
// already sent are gone: withdrawing them writes nothing either).
func (s *Service) resolutionOutbox(t *Resolution, rec Record) {
	for _, sc := range rec.Payload.Scheduled {
		t.Withdraw = append(t.Withdraw, sc.delivery(rec.State))
	}
	if s.notify == nil || len(rec.Payload.Notify) == 0 {
		return
	}
	ev := EventDecided
	if t.Status == StatusCanceled {
		ev = EventCanceled
	}
	for _, tg := range rec.Payload.Notify {
		if s.notify.Wants(tg, ev) {
			t.Outbox = append(t.Outbox, NewDelivery(rec.State, ev, tg, t.At, t.At))
		}
		t.Withdraw = append(t.Withdraw, NewDelivery(rec.State, EventExpired, tg, rec.State.ExpiresAt, rec.State.ExpiresAt))
	}
}

func (s *Service) queued(ds []Delivery) {
	if s.notify != nil && len(ds) > 0 {
		s.notify.Queued()
	}
}

// Notice is what a notification says about a request: what was asked,
// by whom, until when, and what became of it. It carries nothing the
// reviewer submitted.
type Notice struct {
	DeliveryID string    `json:"deliveryId"`
	Event      Event     `json:"event"`
	At         time.Time `json:"at"`
	ID         string    `json:"elicitationId"`
	Kind       Kind      `json:"kind"`
	Message    string    `json:"message"`
	Owner      string    `json:"requestedBy"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
	// ReviewURL, for EventCreated, and reminders and escalation notices to
	// those who may decide, only.
	ReviewURL string `json:"reviewUrl,omitempty"`
	// Step numbers a reminder or an escalation step (1, 2, …).
	Step int `json:"step,omitempty"`
	// EscalatedTo names the targets an escalation step notified.
	EscalatedTo []string `json:"escalatedTo,omitempty"`
	// Decision and DecidedBy, for EventDecided only.
	Decision  Decision `json:"decision,omitempty"`
	DecidedBy string   `json:"decidedBy,omitempty"`
	// Choices is what the request asks, for a sender that lets the
	// reviewer answer where the notice reaches them (Slack's buttons): set
	// with ReviewURL only, and never part of a webhook's body.
	Choices *Choices `json:"-"`
	// Delegates are, for a reminder or an escalation, the delegations
	// active when it is sent (delegation.go; the deliverer sets them): a sender that addresses
	// people (e-mail) sends it to the delegates of its addresses too
	// (AlsoTo). Never part of a webhook's body.
	Delegates []Delegation `json:"-"`
}

// AlsoTo is to with the delegates, through n.Delegates, of each address
// in it, each address once.
func (n Notice) AlsoTo(to []string) []string {
	out := slices.Clone(to)
	for _, a := range to {
		if p, err := mail.ParseAddress(a); err == nil {
			a = p.Address
		}
		for _, d := range n.Delegates {
			if strings.EqualFold(d.From, a) && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, d.To) }) {
				out = append(out, d.To)
			}
		}
	}
	return out
}

// Choices is what a pending request asks of its reviewer, as a notice
// that can be answered in place needs it.
type Choices struct {
	// FormRequired: an approval whose form cannot be submitted empty (a
	// required field, a minimum): it is answered on the review page only.
	FormRequired bool
	// Options, MinSelections and MaxSelections: a selection's.
	Options                      []Option
	MinSelections, MaxSelections int
	// Approvals is the quorum (0 or 1: one approval decides); Approvers
	// the principals counted so far.
	Approvals int
	Approvers []string
	// Standing: an approval of the request may also be made standing
	// from the notice (Record.StandingInPlace), where reviewers sign in.
	Standing bool
}

// ChoicesOf is what rec asks.
func ChoicesOf(rec Record) *Choices {
	c := &Choices{Options: rec.Payload.Options, MinSelections: rec.Payload.MinSelections, MaxSelections: rec.Payload.MaxSelections, Approvals: rec.State.Approvals,
		Standing: rec.StandingInPlace()}
	if rec.State.Kind == KindApproval && rec.Payload.Schema != nil {
		_, err := rec.Payload.Schema.ParseForm(nil)
		c.FormRequired = err != nil
	}
	for _, a := range rec.State.Approvers {
		c.Approvers = append(c.Approvers, a.By)
	}
	return c
}

// NoticeOf is the notice d delivers about rec.
func NoticeOf(d Delivery, rec Record) Notice {
	n := Notice{
		DeliveryID: d.ID, Event: d.Event, At: d.At, ID: rec.State.ID, Kind: rec.State.Kind,
		Message: rec.Payload.Message, Owner: rec.State.Owner, CreatedAt: rec.State.CreatedAt, ExpiresAt: rec.State.ExpiresAt,
		ReviewURL: d.Link, Step: d.Step,
	}
	if d.Link != "" {
		n.Choices = ChoicesOf(rec)
	}
	switch d.Event {
	case EventEscalated:
		if d.Step >= 1 && d.Step <= len(rec.Payload.Escalate) {
			n.EscalatedTo = rec.Payload.Escalate[d.Step-1].Notify
		}
	case EventDecided:
		n.Decision, n.DecidedBy = rec.State.Decision, rec.State.Decider()
	}
	return n
}

// Decider is who decided, as elicit_result and every notice name them:
// the signed-in reviewer, or "" for the anonymous holder of the review
// link (no sign-in; stored as Reviewer).
func (s State) Decider() string {
	if s.DecidedBy == Reviewer {
		return ""
	}
	return s.DecidedBy
}
