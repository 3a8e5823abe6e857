package granttest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// race runs Concurrency calls of write at once, alternating the handles,
// and returns the index of the one that succeeded. It fails t unless
// exactly one did and every other lost with one of losses.
func race(t *testing.T, a, b grant.Store, write func(i int, s grant.Store) error, losses ...error) int {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, Concurrency)
	)
	for i := range Concurrency {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			<-start
			errs[i] = write(i, s)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !isAny(err, losses):
			t.Fatalf("writer %d: %v, want one of %v", i, err, losses)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer of %d won: %v", Concurrency, errs[0])
	}
	return winner
}

func isAny(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// testConcurrentPuts: writers racing to rotate the same version (a
// refresh token used twice at once): exactly one lands, and it is what is
// stored.
func testConcurrentPuts(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	r := put(t, a, Record("family", "fam-race", []byte("gen 1"), time.Hour))
	landed := make([]grant.Record, Concurrency)
	w := race(t, a, b, func(i int, s grant.Store) error {
		next := r
		next.Data = fmt.Appendf(nil, "gen 2 by writer %d", i)
		var err error
		landed[i], err = s.Put(ctxT(t), next)
		return err
	}, grant.ErrConflict)
	same(t, "the winner's record", a, landed[w])
}

// testConcurrentCreates: writers racing to create the same record, once
// where there is none and once over an expired one: exactly one lands.
func testConcurrentCreates(t *testing.T, clk *testclock.Clock, a, b grant.Store) {
	for _, c := range []struct {
		name    string
		expired bool
	}{{"none stored", false}, {"over an expired record", true}} {
		id := "login-" + fmt.Sprint(c.expired)
		if c.expired {
			old := put(t, a, Record("login", id, []byte("old"), time.Minute))
			clk.Set(old.Expires)
		}
		landed := make([]grant.Record, Concurrency)
		w := race(t, a, b, func(i int, s grant.Store) error {
			var err error
			landed[i], err = s.Put(ctxT(t), Record("login", id, fmt.Appendf(nil, "by writer %d", i), 2*time.Hour))
			return err
		}, grant.ErrConflict)
		same(t, c.name+": the winner's record", b, landed[w])
	}
}

// testConcurrentRedeem: an authorization code presented many times at
// once, each presenter reading it and deleting the version read: exactly
// one deletes it.
func testConcurrentRedeem(t *testing.T, _ *testclock.Clock, a, b grant.Store) {
	put(t, a, Record("code", "code-race", []byte("redeem once"), time.Minute))
	race(t, a, b, func(_ int, s grant.Store) error {
		r, err := s.Get(ctxT(t), "code", "code-race")
		if err != nil {
			return err
		}
		return s.Delete(ctxT(t), "code", "code-race", r.Version)
	}, grant.ErrConflict, grant.ErrNotFound)
	gone(t, "after the redeem", b, "code", "code-race")
}
