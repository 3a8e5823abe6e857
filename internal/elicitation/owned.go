package elicitation

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// Owned is the index of each principal's own requests that an agent's
// listing reads: kept by each store in the transaction that creates a
// request (its key, the owner and the creation time, never changes) and
// removed with the request by Cleanup, so that listing one principal's
// requests never scans anyone else's.
type Owned interface {
	// OwnedRequests lists the states of the requests owner created that
	// Cleanup has not removed (pending, decided, consumed, canceled or
	// expired), newest first (CreatedAt descending; requests created at the
	// same instant in an order of the store's, the same on every call), at
	// most limit of them, after the position after (the zero OwnedPosition:
	// from the newest). more reports whether requests remain after the last
	// one listed. The states are as stored (an expiry is not derived). A
	// store whose index is eventually consistent (DynamoDB's) may miss a
	// request created a moment ago or list a state a moment old.
	OwnedRequests(ctx context.Context, owner string, after OwnedPosition, limit int) (states []State, more bool, err error)
}

// OwnedPosition is a place in a principal's listing: just after the
// request of that CreatedAt and ID.
type OwnedPosition struct {
	CreatedAt time.Time
	ID        string
}

// IsZero reports whether p is the start of a listing.
func (p OwnedPosition) IsZero() bool { return p.ID == "" && p.CreatedAt.IsZero() }

// PositionOf is the position just after st in its owner's listing.
func PositionOf(st State) OwnedPosition { return OwnedPosition{CreatedAt: st.CreatedAt, ID: st.ID} }

// MaxOwnedPage bounds one page of a principal's listing.
const MaxOwnedPage = 100

// ListOwned lists principal's requests, newest first, at most limit
// (at most MaxOwnedPage; 0 or less: MaxOwnedPage), after the position
// after, with their status derived at now. next is the position to go on
// from, the zero position when there is no more.
func (s *Service) ListOwned(ctx context.Context, principal string, after OwnedPosition, limit int) (states []State, next OwnedPosition, err error) {
	if limit <= 0 || limit > MaxOwnedPage {
		limit = MaxOwnedPage
	}
	owner := cmp.Or(principal, Anonymous)
	got, more, err := s.store.OwnedRequests(ctx, owner, after, limit)
	if err != nil {
		return nil, OwnedPosition{}, fmt.Errorf("list owned: %w", err)
	}
	states = make([]State, 0, len(got))
	for _, st := range got {
		if st.Owner != owner {
			continue // never another's, whatever an index holds
		}
		states = append(states, s.derive(st))
	}
	if more && len(got) > 0 {
		next = PositionOf(got[len(got)-1])
	}
	return states, next, nil
}
