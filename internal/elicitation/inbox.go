package elicitation

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
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
// (empty: all), and bounds how many rows it returns and from where.
type InboxFilter struct {
	Owner string
	Kind  Kind
	// Limit bounds Items (0: DefaultInboxRows); Total still counts all.
	Limit int
	// After starts Items at the first row past it (zero: the most urgent),
	// the Next of the page before; Before ends them at the last row before
	// it, the Prev of the page after (fewer than Limit when fewer rows come
	// before it). Give at most one.
	After, Before InboxCursor
}

// Rows is how many rows a page of f holds: its Limit, DefaultInboxRows
// without one.
func (f InboxFilter) Rows() int {
	if f.Limit <= 0 {
		return DefaultInboxRows
	}
	return f.Limit
}

// InboxCursor is a place in an inbox's order, the key of a row: earliest
// expiry first, the id between rows that expire at the same instant. A
// cursor keeps its place when its row leaves the inbox (decided, expired):
// the next page starts at the first row still after it.
type InboxCursor struct {
	ExpiresAt time.Time
	ID        string
}

// IsZero reports whether c is the zero cursor, the start of the inbox.
func (c InboxCursor) IsZero() bool { return c.ID == "" && c.ExpiresAt.IsZero() }

// Cursor is e's place in an inbox's order.
func (e InboxEntry) Cursor() InboxCursor { return InboxCursor{ExpiresAt: e.ExpiresAt, ID: e.ID} }

// Compare orders cursors as an inbox lists its rows (-1 when c comes
// first).
func (c InboxCursor) Compare(d InboxCursor) int {
	return cmp.Or(c.ExpiresAt.Compare(d.ExpiresAt), strings.Compare(c.ID, d.ID))
}

// voted reports whether e's quorum counts id's approval already: one id
// gave, or one that fills the place id's would (State.ApprovalRefused: the
// delegator's, when id decides e for them through one of ds).
func (s *Service) voted(id Identity, e InboxEntry, ds []Delegation) bool {
	forWhom, _ := s.policy.DecidesFor(id, e.Owner, e.Reviewers, ds)
	return State{Approvers: e.Approvers}.ApprovalRefused(id.Principal(), forWhom) != nil
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

// InboxListing is a reviewer's inbox: one page of rows, most urgent
// first, and what the page says about the rest.
type InboxListing struct {
	// Items are the requests that match the filter, after its After, at
	// most its Limit.
	Items []InboxItem
	// Total is how many match the filter; All how many the reviewer may
	// decide, before the filter; Skipped how many of Total come before
	// Items (at or before the filter's After).
	Total, All, Skipped int
	// Next is the filter's After for the page past this one, zero when
	// Items reach the end; Prev the filter's Before for the page ahead of
	// this one, zero when Items start at the first row (or are none: a
	// page past the end leads back to the first).
	Next, Prev InboxCursor
	// Owners are the principals that asked, among All, sorted: the
	// choices of the filter by agent.
	Owners []string
	// Partial is set when the index held more than MaxInbox pending
	// requests and only the most urgent were read.
	Partial bool
}

// Bounds of an inbox.
const (
	// MaxInbox bounds how many pending requests one inbox reads.
	MaxInbox = 20000
	// DefaultInboxRows is how many rows an inbox returns by default.
	DefaultInboxRows = 200
)

// sortTies puts entries listed by expiry (the Inbox's order) in
// InboxCursor's: between entries that expire at the same instant
// DynamoDB's order is its own, so the id's is set here (a listing is
// otherwise already in order, which the sort passes over in linear time).
func sortTies(es []InboxEntry) {
	slices.SortFunc(es, func(a, b InboxEntry) int { return a.Cursor().Compare(b.Cursor()) })
}

// inboxPage is where the page f asks for lies among n rows in order
// (cursor gives a row's): rows [start, end), at most limit of them, after
// f.After (from the first row past it) or, with f.Before, the limit rows
// just before it (fewer when fewer come before it; the first page when
// none does any more).
func inboxPage(n, limit int, f InboxFilter, cursor func(int) InboxCursor) (start, end int) {
	switch {
	case !f.Before.IsZero():
		if end = sort.Search(n, func(i int) bool { return cursor(i).Compare(f.Before) >= 0 }); end > 0 {
			return max(end-limit, 0), end
		}
	case !f.After.IsZero():
		start = sort.Search(n, func(i int) bool { return cursor(i).Compare(f.After) > 0 })
	}
	return start, min(start+limit, n)
}

// ReviewerInbox lists the requests pending now that id may decide (the
// one rule, ReviewerPolicy.MayDecide: never one id created where the
// creator is barred), most urgent first (InboxCursor's order), narrowed
// and paged by f.
// It needs reviewer sign-in: without it anyone with a link decides, and
// there is no one to list for.
func (s *Service) ReviewerInbox(ctx context.Context, id Identity, f InboxFilter) (InboxListing, error) {
	if !s.signIn {
		return InboxListing{}, invalid(ErrSignInRequired, "reviewer", "the reviewer's inbox needs reviewer sign-in, which this server does not have")
	}
	now := s.now().UTC()
	entries, err := s.store.PendingEntries(ctx, now, MaxInbox+1)
	if err != nil {
		return InboxListing{}, fmt.Errorf("inbox: %w", err)
	}
	ds, err := s.delegatedTo(ctx, id)
	if err != nil {
		return InboxListing{}, fmt.Errorf("inbox: %w", err)
	}
	var l InboxListing
	if len(entries) > MaxInbox {
		entries, l.Partial = entries[:MaxInbox], true
	}
	sortTies(entries)
	limit := f.Rows()
	owners := map[string]bool{}
	rows := make([]int, 0, len(entries)) // the entries that match f, in order
	for i, e := range entries {
		if !e.ExpiresAt.After(now) || s.policy.MayDecide(id, e.Owner, e.Reviewers, ds...) != nil {
			continue
		}
		l.All++
		owners[e.Owner] = true
		if (f.Owner == "" || e.Owner == f.Owner) && (f.Kind == "" || e.Kind == f.Kind) {
			rows = append(rows, i)
		}
	}
	start, end := inboxPage(len(rows), limit, f, func(i int) InboxCursor { return entries[rows[i]].Cursor() })
	l.Total, l.Skipped = len(rows), start
	if end < len(rows) {
		l.Next = entries[rows[end-1]].Cursor()
	}
	if start > 0 && start < end {
		l.Prev = entries[rows[start]].Cursor()
	}
	for _, i := range rows[start:end] {
		e := entries[i]
		it := InboxItem{InboxEntry: e, Left: e.ExpiresAt.Sub(now), Votes: len(e.Approvers)}
		it.Voted = s.voted(id, e, ds)
		l.Items = append(l.Items, it)
	}
	l.Owners = slices.Sorted(maps.Keys(owners))
	return l, nil
}
