package elicitation

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"time"
)

// Event is what a notification tells a target about a request.
type Event string

const (
	// EventCreated: a new request waits for its reviewer (with the review link).
	EventCreated Event = "created"
	// EventDecided: the reviewer submitted or declined.
	EventDecided Event = "decided"
	// EventCanceled: the agent withdrew the request.
	EventCanceled Event = "canceled"
	// EventExpired: nobody decided before expiresAt.
	EventExpired Event = "expired"
)

// Events lists every event a target may ask for, in the order a request
// can go through them (reminders go to targets with a remind interval,
// whatever their events).
var Events = []Event{EventCreated, EventEscalated, EventDecided, EventCanceled, EventExpired}

// ActionNotified is the audit action of a delivery attempt: Detail says
// which event, to which target, and how it went (never the message sent).
const ActionNotified Action = "notified"

// Notifier is the principal of audit entries written by the deliverer.
const Notifier = "notifier"

// Delivery is one notification of one event to one target. It waits in the
// store's outbox, written in the same transaction as the event it tells,
// until a deliverer settles it. Delivery is at least once: a receiver
// recognises a repeat by ID, which is the same for every attempt.
type Delivery struct {
	// ID is DeliveryID(RequestID, Event, Target): stable across attempts,
	// restarts and processes.
	ID        string `json:"id"`
	RequestID string `json:"requestId"`
	Event     Event  `json:"event"`
	Target    string `json:"target"`
	// At is when the event happened (for EventExpired: the request's expiresAt).
	At time.Time `json:"at"`
	// DueAt is when it may first be sent: At, or the request's ExpiresAt for
	// an expiry notice scheduled at creation.
	DueAt time.Time `json:"dueAt"`
	// RetainUntil is the request's: a delivery never outlives its request.
	RetainUntil time.Time `json:"retainUntil"`
	// Step numbers a reminder or an escalation step (1, 2, …); 0 for the
	// other events.
	Step int `json:"step,omitempty"`
	// Link is the review URL, for EventCreated (and the reminders and
	// escalation notices to those who may decide) only. It is the reviewer's
	// capability: it lives in the outbox until the delivery is settled.
	Link string `json:"link,omitempty"`

	// Attempts counts the claims made so far.
	Attempts int `json:"attempts,omitempty"`
	// NotBefore is when the next attempt may start: the end of the current
	// claim's lease, or of the backoff after a failed attempt.
	NotBefore time.Time `json:"notBefore,omitzero"`
	// Lease names the claim that holds the delivery (set by ClaimDelivery).
	Lease string `json:"lease,omitempty"`
}

// DeliveryID is the stable id of the delivery of ev about request id to target.
func DeliveryID(id string, ev Event, target string) string {
	h := sha256.Sum256([]byte(id + "\x00" + string(ev) + "\x00" + target))
	return "dlv_" + base64.RawURLEncoding.EncodeToString(h[:18])
}

// NewDelivery is the delivery of ev about the request in st to target,
// happening at at and due at due.
func NewDelivery(st State, ev Event, target string, at, due time.Time) Delivery {
	return Delivery{
		ID: DeliveryID(st.ID, ev, target), RequestID: st.ID, Event: ev, Target: target,
		At: at, DueAt: due, RetainUntil: st.RetainUntil,
	}
}

// Due reports whether an attempt at d may start at now.
func (d Delivery) Due(now time.Time) bool {
	return !now.Before(d.DueAt) && !now.Before(d.NotBefore)
}

// NewLease returns a fresh claim name.
func NewLease() string { return randomToken(12) }

// NextAt is when the next attempt at d may start: DueAt, or later after a
// failed attempt (or while one holds it).
func (d Delivery) NextAt() time.Time {
	if d.NotBefore.After(d.DueAt) {
		return d.NotBefore
	}
	return d.DueAt
}

// FairDue is the one rule both stores apply to the deliveries due now (ds,
// in any order): earliest NextAt first, at most perTarget of each target,
// so that a target with a long queue (one that keeps failing, or a burst)
// never hides another target's deliveries, and a new notice is not listed
// behind its own target's retries.
func FairDue(ds []Delivery, perTarget int) []Delivery {
	slices.SortStableFunc(ds, func(a, b Delivery) int { return cmp.Or(a.NextAt().Compare(b.NextAt()), strings.Compare(a.ID, b.ID)) })
	count := map[string]int{}
	out := ds[:0]
	for _, d := range ds {
		if count[d.Target] < perTarget {
			count[d.Target]++
			out = append(out, d)
		}
	}
	return out
}
