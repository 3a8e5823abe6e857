package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// race makes n calls at once through the two handles of one store (even i
// through a, odd i through b), all released together, and returns each
// call's error by i: the scaffolding of every race in the suite.
func race(n int, a, b elicitation.Store, call func(i int, h elicitation.Store) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range errs {
		h := a
		if i%2 == 1 {
			h = b
		}
		wg.Go(func() {
			<-start
			errs[i] = call(i, h)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// wins counts the calls of a race (errs, by race) that succeeded; every
// other one must have lost with loss (else the test fails, naming what
// raced).
func wins(t *testing.T, what string, errs []error, loss error) int {
	t.Helper()
	n := 0
	for _, err := range errs {
		switch {
		case err == nil:
			n++
		case !errors.Is(err, loss):
			t.Errorf("%s got %v, want success or %v", what, err, loss)
		}
	}
	return n
}
