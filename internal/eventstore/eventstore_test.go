package eventstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var ctx = context.Background()

// replay is what After yields: the events joined by "|", or "purged".
func replay(t *testing.T, s *Store, session, stream string, index int) string {
	t.Helper()
	var got []string
	for d, err := range s.After(ctx, session, stream, index) {
		if err != nil {
			if !errors.Is(err, mcp.ErrEventsPurged) {
				t.Fatalf("After(%q, %q, %d): %v, want ErrEventsPurged", session, stream, index, err)
			}
			if len(got) > 0 {
				t.Fatalf("After(%q, %q, %d): %q then an error: a replay with a hole", session, stream, index, got)
			}
			return "purged"
		}
		got = append(got, string(d))
	}
	return strings.Join(got, "|")
}

// run runs a script, a call a line: "open S/T", "append S/T data",
// "replay S/T" (After the stream's start), "close S".
func run(t *testing.T, s *Store, script ...string) {
	t.Helper()
	for _, line := range script {
		verb, rest, _ := strings.Cut(line, " ")
		ids, data, _ := strings.Cut(rest, " ")
		session, stream, _ := strings.Cut(ids, "/")
		var err error
		switch verb {
		case "open":
			err = s.Open(ctx, session, stream)
		case "append":
			err = s.Append(ctx, session, stream, []byte(data))
		case "replay":
			replay(t, s, session, stream, -1)
		case "close":
			err = s.SessionClosed(ctx, session)
		default:
			t.Fatalf("bad script line %q", line)
		}
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		check(t, s)
	}
}

// check verifies the store's bookkeeping against its records: the bytes
// counted are the bytes held, every stream that can be shed is in both
// lists once, and the caps hold (but for a stream in use alone over one).
func check(t *testing.T, s *Store) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	total, linked := 0, 0
	for id, ss := range s.sessions {
		sum, requests, own := 0, 0, 0
		for sid, st := range ss.streams {
			n := 0
			if !st.standalone() {
				n, requests = streamOverhead, requests+1
			}
			for _, d := range st.data {
				n += len(d) + eventOverhead
			}
			if n != st.bytes {
				t.Fatalf("stream %s/%s counts %d bytes, holds %d", id, sid, st.bytes, n)
			}
			if inLists := st.all != nil; inLists != (!st.standalone() || len(st.data) > 0) || inLists != (st.own != nil) {
				t.Fatalf("stream %s/%s: in the lists %v, %d events", id, sid, inLists, len(st.data))
			}
			if st.all != nil {
				linked++
				own++
			}
			sum += n
		}
		if sum != ss.bytes || requests != ss.requests || own != ss.lru.Len() {
			t.Fatalf("session %s counts %d bytes, %d request streams, %d listed; holds %d, %d, %d", id, ss.bytes, ss.requests, ss.lru.Len(), sum, requests, own)
		}
		if ss.requests > s.limits.SessionStreams {
			t.Fatalf("session %s keeps %d request streams, cap %d", id, ss.requests, s.limits.SessionStreams)
		}
		total += sum
	}
	if total != s.bytes || linked != s.lru.Len() {
		t.Fatalf("store counts %d bytes, %d listed; holds %d, %d", s.bytes, s.lru.Len(), total, linked)
	}
	type held struct{ bytes, sessions, listed int }
	owners := map[*owner]held{}
	for _, ss := range s.sessions {
		h := owners[ss.owner]
		owners[ss.owner] = held{h.bytes + ss.bytes, h.sessions + 1, h.listed + ss.lru.Len()}
		if s.owners[ss.owner.key] != ss.owner {
			t.Fatalf("session %s's owner %s is not the store's", ss.id, ss.owner.key)
		}
	}
	if len(owners) != len(s.owners) {
		t.Fatalf("store keeps %d owners, its sessions have %d", len(s.owners), len(owners))
	}
	for o, h := range owners {
		if o.bytes != h.bytes || o.sessions != h.sessions || o.lru.Len() != h.listed {
			t.Fatalf("owner %s counts %d bytes, %d sessions, %d listed; holds %d, %d, %d", o.key, o.bytes, o.sessions, o.lru.Len(), h.bytes, h.sessions, h.listed)
		}
	}
}

func TestReplay(t *testing.T) {
	t.Parallel()
	s := New(Limits{})
	run(t, s, "open a/", "open a/1", "append a/1 ", "append a/1 x", "append a/1 y", "append a/ n")
	for _, c := range []struct {
		stream string
		index  int
		want   string
	}{
		{"1", -1, "|x|y"}, // the priming event, empty, is event 0
		{"1", 0, "x|y"},
		{"1", 1, "y"},
		{"1", 2, ""},
		{"1", 9, ""},
		{"", -1, "n"},
		{"2", -1, "purged"}, // never opened
	} {
		if got := replay(t, s, "a", c.stream, c.index); got != c.want {
			t.Errorf("After(a/%s, %d) = %q, want %q", c.stream, c.index, got, c.want)
		}
	}
	if got := replay(t, s, "b", "1", -1); got != "purged" {
		t.Errorf("an unknown session's stream: %q, want purged", got)
	}
}

// TestLost: a stream appended to that the store does not have (never
// opened, or dropped while its request answered) is never replayed, not
// replayed from where it was found again.
func TestLost(t *testing.T) {
	t.Parallel()
	s := New(Limits{SessionStreams: 1})
	run(t, s, "append a/x late", "append a/x later")
	if got := replay(t, s, "a", "x", 0); got != "purged" {
		t.Errorf("a stream never opened: %q, want purged", got)
	}
	run(t, s, "open b/1", "append b/1 p", "open b/2", "append b/1 answer")
	if got := replay(t, s, "b", "1", 0); got != "purged" {
		t.Errorf("a dropped stream appended to again: %q, want purged", got)
	}
	if got := replay(t, s, "b", "2", -1); got != "purged" {
		t.Errorf("the stream the lost one pushed out: %q, want purged (cap 1)", got)
	}
}

func TestSessionStreams(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		script []string
		kept   map[string]string // stream: its replay from -1
	}{
		{"the oldest goes", []string{"open a/", "open a/1", "append a/1 1", "open a/2", "append a/2 2", "open a/3", "append a/3 3"},
			map[string]string{"1": "purged", "2": "2", "3": "3", "": ""}},
		{"used is recent", []string{"open a/1", "append a/1 1", "open a/2", "append a/2 2", "append a/1 1b", "open a/3"},
			map[string]string{"1": "1|1b", "2": "purged", "3": ""}},
		{"replayed is recent", []string{"open a/1", "open a/2", "replay a/1", "open a/3"},
			map[string]string{"1": "", "2": "purged", "3": ""}},
		{"the standalone stream is not one of them", []string{"open a/", "append a/ n", "open a/1", "open a/2", "open a/3", "open a/4"},
			map[string]string{"": "n", "1": "purged", "2": "purged", "3": "", "4": ""}},
		{"other sessions keep theirs", []string{"open a/1", "open b/1", "open b/2", "open b/3"},
			map[string]string{"1": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Limits{SessionStreams: 2})
			run(t, s, c.script...)
			for stream, want := range c.kept {
				if got := replay(t, s, "a", stream, -1); got != want {
					t.Errorf("a/%s: %q, want %q", stream, got, want)
				}
			}
		})
	}
}

func TestByteCaps(t *testing.T) {
	t.Parallel()
	ev := strings.Repeat("e", 100-eventOverhead) // an event that counts 100
	stream := 2*100 + streamOverhead             // a request stream of two such events
	for _, c := range []struct {
		name    string
		limits  Limits
		script  []string
		session string
		kept    map[string]string
	}{
		{"a session sheds its own least recent stream", Limits{SessionBytes: 2 * stream},
			[]string{"open a/1", "append a/1 " + ev, "append a/1 " + ev, "open b/1", "append b/1 x",
				"open a/2", "append a/2 " + ev, "append a/2 " + ev, "open a/3", "append a/3 y"},
			"a", map[string]string{"1": "purged", "2": ev + "|" + ev, "3": "y"}},
		{"not another session's", Limits{SessionBytes: 2 * stream},
			[]string{"open b/1", "append b/1 x", "open a/1", "append a/1 " + ev, "append a/1 " + ev,
				"open a/2", "append a/2 " + ev, "append a/2 " + ev, "open a/3", "append a/3 y"},
			"b", map[string]string{"1": "x"}},
		{"the store sheds the least recent of all", Limits{Bytes: 2 * stream},
			[]string{"open b/1", "append b/1 " + ev, "append b/1 " + ev, "open a/1", "append a/1 " + ev,
				"append a/1 " + ev, "open a/2", "append a/2 y"},
			"b", map[string]string{"1": "purged"}},
		{"a stream alone over the cap loses its oldest events", Limits{SessionBytes: stream},
			[]string{"open a/1", "append a/1 ", "append a/1 " + ev, "append a/1 " + ev, "append a/1 " + ev},
			"a", map[string]string{"1": "purged"}},
		{"the standalone stream loses its oldest events first", Limits{SessionBytes: stream + 100},
			[]string{"open a/", "append a/ " + ev, "append a/ n2", "open a/1", "append a/1 " + ev, "append a/1 " + ev},
			"a", map[string]string{"": "purged", "1": ev + "|" + ev}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(c.limits)
			run(t, s, c.script...)
			for stream, want := range c.kept {
				if got := replay(t, s, c.session, stream, -1); got != want {
					t.Errorf("%s/%s: %q, want %q", c.session, stream, got, want)
				}
			}
		})
	}
	t.Run("what is left of a trimmed stream replays", func(t *testing.T) {
		s := New(Limits{SessionBytes: stream})
		run(t, s, "open a/1", "append a/1 ", "append a/1 "+ev, "append a/1 "+ev, "append a/1 last")
		if got := replay(t, s, "a", "1", 2); got != "last" {
			t.Errorf("after event 2: %q, want %q", got, "last")
		}
		if got := replay(t, s, "a", "1", 0); got != "purged" {
			t.Errorf("after event 0: %q, want purged", got)
		}
	})
	t.Run("the standalone stream is kept empty", func(t *testing.T) {
		s := New(Limits{SessionBytes: stream})
		run(t, s, "open a/", "append a/ "+ev, "open a/1", "append a/1 "+ev, "append a/1 "+ev)
		if got := replay(t, s, "a", "", 0); got != "" {
			t.Errorf("after its trimmed event: %q, want nothing", got)
		}
		if u := s.Usage(); u.Sessions != 1 || u.Streams != 2 {
			t.Errorf("usage %+v, want the session and its two streams", u)
		}
	})
}

func TestSessionClosed(t *testing.T) {
	t.Parallel()
	s := New(Limits{})
	run(t, s, "open a/", "append a/ n", "open a/1", "append a/1 x", "open b/1", "append b/1 y", "close a", "close a", "close zz")
	if got := replay(t, s, "a", "1", -1); got != "purged" {
		t.Errorf("a closed session's stream: %q, want purged", got)
	}
	if got := replay(t, s, "b", "1", -1); got != "y" {
		t.Errorf("another session's stream: %q, want y", got)
	}
	run(t, s, "close b")
	if u := s.Usage(); u != (Usage{}) {
		t.Errorf("usage %+v after every session closed, want none", u)
	}
}

// TestBounded: under a random mix of calls from many sessions, the
// bookkeeping stays exact and the store within its caps (a stream alone
// over a cap excepted: here no event is that large).
func TestBounded(t *testing.T) {
	t.Parallel()
	l := Limits{Bytes: 20 << 10, PrincipalBytes: 8 << 10, SessionBytes: 4 << 10, SessionStreams: 8}
	s := New(l)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		n := r.IntN(40)
		session := fmt.Sprint("s", n)
		stream := fmt.Sprint(r.IntN(20))
		if r.IntN(10) == 0 {
			stream = ""
		}
		pctx := ctx // sessions s0-s9 of no principal, the rest of three
		if n >= 10 {
			pctx = WithPrincipal(ctx, fmt.Sprint("p", n%3))
		}
		switch n := r.IntN(100); {
		case n < 20:
			_ = s.Open(pctx, session, stream)
		case n < 90:
			_ = s.Append(pctx, session, stream, make([]byte, r.IntN(200)))
		case n < 98:
			replay(t, s, session, stream, r.IntN(5)-1)
		default:
			_ = s.SessionClosed(ctx, session)
		}
		if i%100 == 0 {
			check(t, s)
		}
		if u := s.Usage(); u.Bytes > l.Bytes+streamOverhead+200+eventOverhead {
			t.Fatalf("after %d calls the store holds %d bytes, cap %d", i, u.Bytes, l.Bytes)
		}
	}
	check(t, s)
}

// TestConcurrent runs the calls from many goroutines (go test -race).
func TestConcurrent(t *testing.T) {
	t.Parallel()
	s := New(Limits{Bytes: 8 << 10, SessionStreams: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			session := fmt.Sprint("s", g%3)
			for i := range 2000 {
				stream := fmt.Sprint(i % 7)
				_ = s.Open(ctx, session, stream)
				_ = s.Append(ctx, session, stream, []byte("data"))
				for _, err := range s.After(ctx, session, stream, -1) {
					if err != nil && !errors.Is(err, mcp.ErrEventsPurged) {
						t.Error(err)
					}
				}
				if i%500 == 0 {
					_ = s.SessionClosed(ctx, session)
				}
			}
		})
	}
	wg.Wait()
	check(t, s)
}

// Usage is what a store holds.
type Usage struct {
	Bytes, Sessions, Streams int
}

// Usage reports what the store holds now.
func (s *Store) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := Usage{Bytes: s.bytes, Sessions: len(s.sessions)}
	for _, ss := range s.sessions {
		u.Streams += len(ss.streams)
	}
	return u
}

// TestPrincipalBytes: one principal's sessions together hold at most
// PrincipalBytes, shedding their own least recently used streams, so a
// principal with many sessions cannot push another principal's streams
// out of the store; a session opened for no principal counts alone.
func TestPrincipalBytes(t *testing.T) {
	t.Parallel()
	ev := strings.Repeat("e", 100-eventOverhead)
	stream := 2*100 + streamOverhead
	s := New(Limits{Bytes: 3 * stream, PrincipalBytes: 2 * stream})
	as := func(p string) context.Context { return WithPrincipal(ctx, p) }
	fill := func(p, session string) {
		t.Helper()
		if err := s.Open(as(p), session, "1"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := s.Append(as(p), session, "1", []byte(ev)); err != nil {
				t.Fatal(err)
			}
		}
		check(t, s)
	}
	fill("bob", "b")
	for _, session := range []string{"a1", "a2", "a3", "a4"} {
		fill("alice", session)
	}
	if got := replay(t, s, "b", "1", -1); got != ev+"|"+ev {
		t.Errorf("bob's stream beside alice's four sessions: %q, want kept", got)
	}
	for session, want := range map[string]string{"a1": "purged", "a2": "purged", "a3": ev + "|" + ev, "a4": ev + "|" + ev} {
		if got := replay(t, s, session, "1", -1); got != want {
			t.Errorf("alice's %s: %q, want %q", session, got, want)
		}
	}
	// Sessions of no principal each count alone: two of them fit beside bob.
	s2 := New(Limits{Bytes: 3 * stream, PrincipalBytes: stream})
	run(t, s2, "open x/1", "append x/1 "+ev, "open y/1", "append y/1 "+ev)
	if got := replay(t, s2, "x", "1", -1); got != ev {
		t.Errorf("a session of no principal beside another: %q, want kept", got)
	}
}
