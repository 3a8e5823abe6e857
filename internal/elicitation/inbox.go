package elicitation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Inbox is the index of pending requests a reviewer's inbox reads: kept by
// each store in the transactions that create and resolve requests (and
// record a quorum's votes), so that listing it never scans the requests.
type Inbox interface {
	// PendingEntries lists the requests pending at now (their ExpiresAt
	// after now), earliest ExpiresAt first, at most limit.
	PendingEntries(ctx context.Context, now time.Time, limit int) ([]InboxEntry, error)
}

// InboxEntry is one pending request as the index holds it: what the inbox
// shows and what decides who may see it, never the payload.
type InboxEntry struct {
	ID        string     `json:"id"`
	Kind      Kind       `json:"kind"`
	Owner     string     `json:"owner"`
	Headline  string     `json:"headline"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	Approvals int        `json:"approvals,omitempty"`
	Approvers []Approval `json:"approvers,omitempty"`
	Reviewers []string   `json:"reviewers,omitempty"`
}

// MaxHeadline bounds an entry's headline, in characters.
const MaxHeadline = 200

// InboxEntryOf is the index entry of a new request (every store derives
// it here).
func InboxEntryOf(r Request) InboxEntry {
	return InboxEntry{
		ID: r.State.ID, Kind: r.State.Kind, Owner: r.State.Owner, Headline: Headline(r.Payload.Message),
		CreatedAt: r.State.CreatedAt, ExpiresAt: r.State.ExpiresAt, Approvals: r.State.Approvals,
		Approvers: r.State.Approvers, Reviewers: r.Payload.Reviewers,
	}
}

// Headline is a message's first non-empty line, at most MaxHeadline
// characters.
func Headline(msg string) string {
	line := strings.TrimSpace(msg)
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	if utf8.RuneCountInString(line) > MaxHeadline {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:MaxHeadline-1])) + "…"
	}
	return line
}

// InboxFilter narrows an inbox: by the principal that asked and by kind
// (empty: all).
type InboxFilter struct {
	Owner string
	Kind  Kind
}

// InboxItem is one row of a reviewer's inbox.
type InboxItem struct {
	InboxEntry
	// Left is the time left to decide.
	Left time.Duration
	// Votes is how many approvals a quorum has; Voted whether the
	// reviewer's is one of them.
	Votes int
	Voted bool
}

// MaxInbox bounds how many pending requests one inbox reads.
const MaxInbox = 20000

// ReviewerInbox lists the requests pending now that id may decide (the
// one rule, ReviewerPolicy.MayDecide: never one id created where the
// creator is barred), most urgent (earliest expiry) first, narrowed by f.
// It needs reviewer sign-in: without it anyone with a link decides, and
// there is no one to list for.
func (s *Service) ReviewerInbox(ctx context.Context, id Identity, f InboxFilter) ([]InboxItem, error) {
	if !s.signIn {
		return nil, invalid(ErrSignInRequired, "reviewer", "the reviewer's inbox needs reviewer sign-in, which this server does not have")
	}
	ix, ok := s.store.(Inbox)
	if !ok {
		return nil, fmt.Errorf("inbox: the store keeps no index of pending requests")
	}
	now := s.now().UTC()
	entries, err := ix.PendingEntries(ctx, now, MaxInbox)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	out := make([]InboxItem, 0, min(len(entries), 256))
	who := id.Principal()
	for _, e := range entries {
		if (f.Owner != "" && e.Owner != f.Owner) || (f.Kind != "" && e.Kind != f.Kind) || !e.ExpiresAt.After(now) {
			continue
		}
		if s.policy.MayDecide(id, e.Owner, e.Reviewers) != nil {
			continue
		}
		it := InboxItem{InboxEntry: e, Left: e.ExpiresAt.Sub(now), Votes: len(e.Approvers)}
		it.Voted = slices.ContainsFunc(e.Approvers, func(a Approval) bool { return strings.EqualFold(a.By, who) })
		out = append(out, it)
	}
	return out, nil
}
