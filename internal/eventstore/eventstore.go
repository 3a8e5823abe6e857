// Package eventstore keeps the events of the MCP sessions' streams, so a
// client that lost a stream's connection can resume it (Last-Event-ID): it
// is the go-sdk's EventStore, in bounded memory and at a constant cost a
// call.
//
// The go-sdk's MemoryEventStore keeps every stream a session ever opened
// until the session ends (a request's stream is one POST, so a session's
// map grows with every call) and, past its byte cap, trims every stream
// of every session on every append. This store keeps, for each session,
// its standalone stream (the GET's, id "") and its most recent request
// streams; past a cap it drops the least recently used request stream
// whole, in O(1), and a dropped stream, asked for again, is one whose
// events are gone (ErrEventsPurged, which the SDK answers with 400), never
// a replay with a hole in it.
//
// Four limits bound it: the bytes of all sessions, the bytes of one
// principal's sessions and of one session (so one chatty client, however
// many sessions it opens, cannot push out everyone's streams), and the
// request streams one session keeps. A session's principal is the one its
// first stream was opened for (WithPrincipal); a session opened for none
// counts as a principal of its own. An event costs its data and a
// fixed overhead, so a flood of empty events (every stream's priming
// event is one) is bounded by the same byte caps as data.
package eventstore

import (
	"container/list"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits bound a Store. A zero field takes its default.
type Limits struct {
	// Bytes caps the events of all sessions (DefaultBytes).
	Bytes int
	// SessionBytes caps the events of one session (DefaultSessionBytes).
	SessionBytes int
	// SessionStreams caps the request streams one session keeps
	// (DefaultSessionStreams); its standalone stream is not counted.
	SessionStreams int
	// PrincipalBytes caps the events of one principal's sessions
	// (DefaultPrincipalBytes).
	PrincipalBytes int
}

type principalKey struct{}

// WithPrincipal names the principal a session belongs to in the context
// of the requests that open its streams (the MCP endpoint's front door
// sets it).
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

func principalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// The default limits: the go-sdk's 10 MiB for all, half of it for one
// principal (as a principal holds at most half the sessions: the other
// half is always the others'), a tenth for one session, and enough
// request streams for a client to resume any call it still waits on (a
// session rarely has more than a few in flight).
const (
	DefaultBytes          = 10 << 20
	DefaultPrincipalBytes = DefaultBytes / 2
	DefaultSessionBytes   = 1 << 20
	DefaultSessionStreams = 64
)

// Overheads counted with the data, approximately what a stream's record
// and an event's slice entry hold in memory.
const (
	eventOverhead  = 32
	streamOverhead = 160
)

// Store is an mcp.EventStore. It is safe for concurrent use.
type Store struct {
	limits Limits

	mu       sync.Mutex
	bytes    int
	sessions map[string]*session
	owners   map[string]*owner
	lru      list.List // of *stream: every session's, least recently used first
}

// owner is a principal's sessions, together.
type owner struct {
	key      string
	bytes    int
	sessions int
	lru      list.List // of *stream: its sessions'
}

var _ mcp.EventStore = (*Store)(nil)

type session struct {
	id       string
	owner    *owner
	bytes    int
	requests int // request streams kept
	streams  map[string]*stream
	lru      list.List // of *stream: this session's
}

// A stream is in the lists (all, own) while it can be shed: a request
// stream always, the standalone stream while it holds events (an empty
// one costs its session, which the session caps bound, and is kept).
type stream struct {
	s     *session
	id    string
	first int      // the stream index of data[0]
	data  [][]byte // events first..first+len(data)-1
	bytes int      // what it counts: data, overheads
	lost  bool     // events before its first were dropped: it cannot be replayed
	all   *list.Element
	own   *list.Element
	mine  *list.Element // in its owner's list
}

// standalone reports whether st is a session's standalone stream, which
// is kept as long as its session (its events can still be shed).
func (st *stream) standalone() bool { return st.id == "" && !st.lost }

// New returns an empty store within l.
func New(l Limits) *Store {
	if l.Bytes <= 0 {
		l.Bytes = DefaultBytes
	}
	if l.SessionBytes <= 0 {
		l.SessionBytes = DefaultSessionBytes
	}
	if l.PrincipalBytes <= 0 {
		l.PrincipalBytes = DefaultPrincipalBytes
	}
	l.PrincipalBytes = min(l.PrincipalBytes, l.Bytes)
	l.SessionBytes = min(l.SessionBytes, l.PrincipalBytes)
	if l.SessionStreams <= 0 {
		l.SessionStreams = DefaultSessionStreams
	}
	return &Store{limits: l, sessions: map[string]*session{}, owners: map[string]*owner{}}
}

// Open records a new stream of a session.
func (s *Store) Open(ctx context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stream(principalOf(ctx), sessionID, streamID, false)
	return nil
}

// Append records the next event of a stream. A stream it does not have
// (never opened, or dropped while its request was still answering) is
// recorded as lost: it is never replayed, since its first events are gone.
func (s *Store) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stream(principalOf(ctx), sessionID, streamID, true)
	if st.lost {
		st.first++
		return nil
	}
	st.data = append(st.data, data)
	s.grow(st, len(data)+eventOverhead)
	s.link(st)
	s.trim(st)
	return nil
}

// After yields the events of a stream past index, or ErrEventsPurged (and
// nothing else) when one of them is gone.
func (s *Store) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	events, err := s.after(sessionID, streamID, index)
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range events {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func (s *Store) after(sessionID, streamID string, index int) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st *stream
	if ss := s.sessions[sessionID]; ss != nil {
		st = ss.streams[streamID]
	}
	switch {
	case st == nil:
		return nil, fmt.Errorf("stream %q of session %q is not kept: %w", streamID, sessionID, mcp.ErrEventsPurged)
	case st.lost || index+1 < st.first:
		return nil, fmt.Errorf("stream %q of session %q, after event %d: %w", streamID, sessionID, index, mcp.ErrEventsPurged)
	}
	s.touch(st)
	if index+1-st.first >= len(st.data) {
		return nil, nil
	}
	// A copy: shedding moves the stream's slice on.
	return slices.Clone(st.data[index+1-st.first:]), nil
}

// SessionClosed forgets a session and its streams.
func (s *Store) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[sessionID]
	if ss == nil {
		return nil
	}
	for _, st := range ss.streams {
		if st.all != nil {
			s.unlink(st)
		}
	}
	s.bytes -= ss.bytes
	ss.owner.bytes -= ss.bytes
	s.forget(ss)
	return nil
}

// forget removes a session, and its owner with its last. Requires s.mu.
func (s *Store) forget(ss *session) {
	delete(s.sessions, ss.id)
	if ss.owner.sessions--; ss.owner.sessions == 0 {
		delete(s.owners, ss.owner.key)
	}
}

// stream returns a session's stream, recording it if the store does not
// have it (lost, when appending), and the session, for principal, if it
// does not have that; it marks the stream used. Requires s.mu.
func (s *Store) stream(principal, sessionID, streamID string, appending bool) *stream {
	ss := s.sessions[sessionID]
	if ss == nil {
		ss = &session{id: sessionID, owner: s.owner(principal, sessionID), streams: map[string]*stream{}}
		ss.owner.sessions++
		s.sessions[sessionID] = ss
	}
	if st := ss.streams[streamID]; st != nil {
		s.touch(st)
		return st
	}
	st := &stream{s: ss, id: streamID, lost: appending}
	ss.streams[streamID] = st
	if st.standalone() {
		return st
	}
	ss.requests++
	s.grow(st, streamOverhead)
	s.link(st)
	if ss.requests > s.limits.SessionStreams {
		// The session's least recently used request stream but st: the
		// list's first or second (the standalone stream is one, at most).
		for e := ss.lru.Front(); e != nil; e = e.Next() {
			if v := e.Value.(*stream); v != st && !v.standalone() {
				s.drop(v)
				break
			}
		}
	}
	s.trim(st)
	return st
}

// owner returns principal's sessions (a session of none, sessionID's
// alone), recording them if the store does not have them. Requires s.mu.
func (s *Store) owner(principal, sessionID string) *owner {
	key := "principal " + principal
	if principal == "" {
		key = "session " + sessionID
	}
	o := s.owners[key]
	if o == nil {
		o = &owner{key: key}
		s.owners[key] = o
	}
	return o
}

// link puts st in the lists, at their most recent end, if it is not in
// them. Requires s.mu.
func (s *Store) link(st *stream) {
	if st.all == nil {
		st.all = s.lru.PushBack(st)
		st.own = st.s.lru.PushBack(st)
		st.mine = st.s.owner.lru.PushBack(st)
	}
}

// touch marks st the most recently used. Requires s.mu.
func (s *Store) touch(st *stream) {
	if st.all != nil {
		s.lru.MoveToBack(st.all)
		st.s.lru.MoveToBack(st.own)
		st.s.owner.lru.MoveToBack(st.mine)
	}
}

func (s *Store) grow(st *stream, n int) {
	st.bytes += n
	st.s.bytes += n
	st.s.owner.bytes += n
	s.bytes += n
}

// trim brings the session of st, then its principal's sessions, then the
// store, within their byte caps. Requires s.mu.
func (s *Store) trim(st *stream) {
	for st.s.bytes > s.limits.SessionBytes && s.shed(st, &st.s.lru) {
	}
	for st.s.owner.bytes > s.limits.PrincipalBytes && s.shed(st, &st.s.owner.lru) {
	}
	for s.bytes > s.limits.Bytes && s.shed(st, &s.lru) {
	}
}

// shed frees the least recently used stream of l but st, the one in use:
// a request stream whole, the standalone stream's oldest event. With no
// other stream in l, st loses its oldest event. It reports whether it
// freed anything. Requires s.mu.
func (s *Store) shed(st *stream, l *list.List) bool {
	e := l.Front()
	if e != nil && e.Value.(*stream) == st {
		e = e.Next()
	}
	if e == nil {
		return s.dropOldest(st)
	}
	victim := e.Value.(*stream)
	if victim.standalone() {
		return s.dropOldest(victim)
	}
	s.drop(victim)
	return true
}

// dropOldest drops the oldest event of st; it reports whether there was
// one. A standalone stream left empty leaves the lists. Requires s.mu.
func (s *Store) dropOldest(st *stream) bool {
	if len(st.data) == 0 {
		return false
	}
	n := len(st.data[0]) + eventOverhead
	st.data[0] = nil
	st.data = st.data[1:]
	st.first++
	s.grow(st, -n)
	if len(st.data) == 0 && st.standalone() {
		s.unlink(st)
	}
	return true
}

func (s *Store) unlink(st *stream) {
	s.lru.Remove(st.all)
	st.s.lru.Remove(st.own)
	st.s.owner.lru.Remove(st.mine)
	st.all, st.own, st.mine = nil, nil, nil
}

// drop forgets a request stream, and its session with its last stream.
// Requires s.mu.
func (s *Store) drop(st *stream) {
	ss := st.s
	s.unlink(st)
	delete(ss.streams, st.id)
	ss.requests--
	s.grow(st, -st.bytes)
	if len(ss.streams) == 0 {
		s.forget(ss)
	}
}
