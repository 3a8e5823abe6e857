package elicitation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Delegation (out of office): a reviewer hands the requests that name them
// to another named reviewer for a time window. While it is active, the
// delegate may decide what the delegator could decide because a request
// names the delegator's address (ReviewerPolicy.MayDecide, the one rule):
// never what the delegator could not (another reviewer's request, one the
// delegator's own agent asked under the owner bar), and never through the
// delegator's groups, which the deployment does not know while the
// delegator is away. A decision made so is the delegate's (decidedBy
// names the delegate, as it names whoever decided) and its audit entry
// says for whom ("submitted, for alice@example.com"), so the trail and
// the receipt stay true to who pressed the button.

// Limits of a delegation.
const (
	// MaxDelegationWindow bounds a delegation's window.
	MaxDelegationWindow = 90 * 24 * time.Hour
	// MaxDelegationsFrom bounds the delegations one reviewer has that
	// have not ended.
	MaxDelegationsFrom = 10
	// MaxDelegations bounds the delegations that have not ended, of all
	// reviewers: a store refuses one more (ErrDelegationsFull), so its
	// listing, which stops there, holds every one.
	MaxDelegations = 1000
	// DelegationRetention is how long a store keeps a delegation after its
	// end (for the operator's listing).
	DelegationRetention = 30 * 24 * time.Hour
)

// Named errors of delegation.
var (
	ErrDelegationInvalid  = errors.New("invalid delegation")
	ErrTooManyDelegations = errors.New("too many delegations")
	// ErrDelegationsFull: the store holds MaxDelegations that have not
	// ended, of all reviewers.
	ErrDelegationsFull = errors.New("the server holds its most delegations")
)

// Delegation lets To decide for From from Start until End.
type Delegation struct {
	ID string `json:"id"`
	// From and To are principals (Identity.Principal): verified e-mail
	// addresses, lower-case.
	From      string    `json:"from"`
	To        string    `json:"to"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	CreatedAt time.Time `json:"createdAt"`
	// EndedAt is when From ended it before its End (End is then EndedAt).
	EndedAt time.Time `json:"endedAt,omitzero"`
}

// ActiveAt reports whether d lets To decide for From at now.
func (d Delegation) ActiveAt(now time.Time) bool { return !now.Before(d.Start) && now.Before(d.End) }

// Delegations holds the delegations: a store role that both stores
// implement and the contract (storetest) holds them to.
type Delegations interface {
	// PutDelegation stores a new delegation (d.ID not yet used, else
	// ErrConflict) unless d.From already has MaxDelegationsFrom that end
	// after d.CreatedAt (ErrTooManyDelegations), or all reviewers have
	// MaxDelegations (ErrDelegationsFull); nothing is written then
	// (RoomFor).
	PutDelegation(ctx context.Context, d Delegation) error
	// EndDelegation ends from's delegation id at at: its End becomes at
	// and EndedAt at. It returns the delegation ended; ErrNotFound if
	// there is no such delegation of from, ErrConflict if it has already
	// ended at at.
	EndDelegation(ctx context.Context, from, id string, at time.Time) (Delegation, error)
	// ListDelegations lists the delegations whose End is after after
	// (every one kept, with the zero time), by Start then ID, at most
	// MaxDelegations, with a strongly consistent read.
	ListDelegations(ctx context.Context, after time.Time) ([]Delegation, error)
}

// DelegationInput is what a reviewer asks for.
type DelegationInput struct {
	To         string
	Start, End time.Time
}

// checkDelegation validates in for the reviewer id at now and returns the
// delegation to store.
func checkDelegation(id Identity, in DelegationInput, now time.Time) (Delegation, error) {
	from := id.Principal()
	to, err := ParseReviewers([]string{in.To})
	switch {
	case !id.EmailVerified || id.Email == "":
		return Delegation{}, invalid(ErrDelegationInvalid, "from", "only a reviewer signed in with a verified e-mail address can delegate: requests name reviewers by address")
	case strings.TrimSpace(in.To) == "":
		return Delegation{}, invalid(ErrDelegationInvalid, "to", "name the reviewer to delegate to by e-mail address")
	case err != nil || strings.HasPrefix(to[0], GroupPrefix):
		return Delegation{}, invalid(ErrDelegationInvalid, "to", "%q is not an e-mail address: delegate to one reviewer, named by address", truncate(in.To, 64))
	case to[0] == from:
		return Delegation{}, invalid(ErrDelegationInvalid, "to", "you cannot delegate to yourself; name another reviewer")
	case in.End.IsZero():
		return Delegation{}, invalid(ErrDelegationInvalid, "end", "give when the delegation ends")
	case !in.Start.IsZero() && !in.End.After(in.Start):
		return Delegation{}, invalid(ErrDelegationInvalid, "end", "the delegation must end after it starts")
	case !in.End.After(now):
		return Delegation{}, invalid(ErrDelegationInvalid, "end", "the delegation's end is in the past")
	}
	start := in.Start
	if start.Before(now) {
		start = now // none, or one already past: from now on
	}
	if in.End.Sub(start) > MaxDelegationWindow {
		return Delegation{}, invalid(ErrDelegationInvalid, "end", "a delegation lasts at most %d days", int(MaxDelegationWindow/(24*time.Hour)))
	}
	return Delegation{ID: NewID(), From: from, To: to[0], Start: start.UTC(), End: in.End.UTC(), CreatedAt: now.UTC()}, nil
}

// delegations is the Service's store of delegations, if its store keeps
// them (both stores do; nil for a store without the role).
func (s *Service) delegations() Delegations {
	d, _ := s.store.(Delegations)
	return d
}

// delegating is the store of delegations a reviewer's change goes to: an
// error without sign-in (or a store without the role).
func (s *Service) delegating() (Delegations, error) {
	if ds := s.delegations(); s.signIn && ds != nil {
		return ds, nil
	}
	return nil, invalid(ErrSignInRequired, "reviewer", "delegation needs reviewer sign-in, which this server does not have")
}

// Delegate stores a delegation from the signed-in reviewer id.
func (s *Service) Delegate(ctx context.Context, id Identity, in DelegationInput) (Delegation, error) {
	ds, err := s.delegating()
	if err != nil {
		return Delegation{}, err
	}
	d, err := checkDelegation(id, in, s.now())
	if err != nil {
		return Delegation{}, err
	}
	if err := ds.PutDelegation(ctx, d); err != nil {
		switch {
		case errors.Is(err, ErrTooManyDelegations):
			return Delegation{}, invalid(ErrTooManyDelegations, "to", "you have %d delegations that have not ended; end one first", MaxDelegationsFrom)
		case errors.Is(err, ErrDelegationsFull):
			return Delegation{}, invalid(ErrDelegationsFull, "to", "this server holds %d delegations that have not ended, its most; one must end before another can be made (tell its operator)", MaxDelegations)
		}
		return Delegation{}, fmt.Errorf("delegate: %w", err)
	}
	return d, nil
}

// EndDelegation ends the signed-in reviewer's delegation did now.
func (s *Service) EndDelegation(ctx context.Context, id Identity, did string) (Delegation, error) {
	ds, err := s.delegating()
	if err != nil {
		return Delegation{}, err
	}
	d, err := ds.EndDelegation(ctx, id.Principal(), did, s.now().UTC())
	if err != nil {
		return Delegation{}, fmt.Errorf("end delegation: %w", err)
	}
	return d, nil
}

// ReviewerDelegations lists the delegations from or to the signed-in
// reviewer id that have not ended.
func (s *Service) ReviewerDelegations(ctx context.Context, id Identity) (from, to []Delegation, err error) {
	all, err := s.currentDelegations(ctx)
	if err != nil {
		return nil, nil, err
	}
	who := id.Principal()
	for _, d := range all {
		switch who {
		case d.From:
			from = append(from, d)
		case d.To:
			to = append(to, d)
		}
	}
	return from, to, nil
}

// OperatorDelegations lists the delegations that have not ended, or with
// all every one the store keeps (for an operator command).
func (s *Service) OperatorDelegations(ctx context.Context, all bool) ([]Delegation, error) {
	after := s.now()
	if all {
		after = time.Time{}
	}
	return s.listDelegations(ctx, after)
}

func (s *Service) currentDelegations(ctx context.Context) ([]Delegation, error) {
	if !s.signIn {
		return nil, nil
	}
	return s.listDelegations(ctx, s.now())
}

// listDelegations lists the delegations that end after after (none for a
// store without the role).
func (s *Service) listDelegations(ctx context.Context, after time.Time) ([]Delegation, error) {
	ds := s.delegations()
	if ds == nil {
		return nil, nil
	}
	l, err := ds.ListDelegations(ctx, after)
	if err != nil {
		return nil, fmt.Errorf("list delegations: %w", err)
	}
	return l, nil
}

// delegatedTo are the delegations active at now that let id decide for
// someone, read from the store (none without sign-in).
func (s *Service) delegatedTo(ctx context.Context, id Identity) ([]Delegation, error) {
	l, err := s.currentDelegations(ctx)
	if err != nil {
		return nil, err
	}
	now, who := s.now(), id.Principal()
	return slices.DeleteFunc(l, func(d Delegation) bool { return d.To != who || !d.ActiveAt(now) }), nil
}

// CheckDelegationKey checks a delegation's from and id as a store keys
// them.
func CheckDelegationKey(from, id string) error {
	if from == "" || id == "" || len(id) > 64 {
		return fmt.Errorf("delegation key: %w", ErrNotFound)
	}
	return nil
}

// Listed is what ListDelegations returns of ds, the delegations a store
// read: those whose End is after after, by Start then ID, at most
// MaxDelegations.
func Listed(ds []Delegation, after time.Time) []Delegation {
	ds = slices.DeleteFunc(ds, func(d Delegation) bool { return !d.End.After(after) })
	slices.SortFunc(ds, func(a, b Delegation) int {
		return cmp.Or(a.Start.Compare(b.Start), strings.Compare(a.ID, b.ID))
	})
	return ds[:min(len(ds), MaxDelegations)]
}

// RoomFor is the one pair of bounds PutDelegation applies, counting the
// delegations among ds that end after d.CreatedAt: ErrTooManyDelegations
// if d's delegator already has MaxDelegationsFrom, ErrDelegationsFull if
// all reviewers have MaxDelegations.
func RoomFor(ds []Delegation, d Delegation) error {
	open, all := 0, 0
	for _, o := range ds {
		if o.End.After(d.CreatedAt) {
			all++
			if o.From == d.From {
				open++
			}
		}
	}
	switch {
	case open >= MaxDelegationsFrom:
		return fmt.Errorf("delegations of %s: %w", d.From, ErrTooManyDelegations)
	case all >= MaxDelegations:
		return fmt.Errorf("delegation of %s: %w", d.From, ErrDelegationsFull)
	}
	return nil
}

// Ended is the delegation d as from's ending of it at at leaves it, the
// one rule EndDelegation applies: ErrNotFound if d is not from's, and
// ErrConflict if it has already ended at at.
func (d Delegation) Ended(from string, at time.Time) (Delegation, error) {
	switch {
	case d.From != from:
		return Delegation{}, fmt.Errorf("delegation %s: %w", d.ID, ErrNotFound)
	case !d.End.After(at):
		return Delegation{}, fmt.Errorf("delegation %s ended: %w", d.ID, ErrConflict)
	}
	d.End, d.EndedAt = at.UTC(), at.UTC()
	return d, nil
}
