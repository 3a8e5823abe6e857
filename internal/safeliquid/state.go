package safeliquid

import (
	"fmt"
	"time"

	"github.com/osteele/liquid/render"
)

// stateKey is the binding under which a render's *renderState travels to the
// tags. Liquid identifiers cannot contain a space or NUL, and the expression
// language has no way to look up a top-level name by string, so no template
// can read or overwrite it.
const stateKey = "\x00safeliquid state"

// renderState is the per-render budget: loop iterations, bytes built, the
// deadline, and the first bound exceeded (sticky, so that every check point
// after it fails fast with the same *LimitError).
type renderState struct {
	lim        Limits
	deadline   time.Time
	iterations int
	built      int64
	err        *LimitError
}

func (s *renderState) reset(l Limits, now time.Time) {
	s.lim = l
	s.deadline = now.Add(l.MaxDuration)
	s.iterations = 0
	s.built = 0
	s.err = nil
}

func (s *renderState) release() {
	s.err = nil
}

// fail records the first bound exceeded and returns it.
func (s *renderState) fail(bound string, limit int64, msg string) *LimitError {
	if s.err == nil {
		s.err = &LimitError{Bound: bound, Limit: limit, Msg: msg}
	}
	return s.err
}

// check fails if a bound has already been exceeded or the deadline has passed.
func (s *renderState) check() error {
	if s.err != nil {
		return s.err
	}
	if time.Now().After(s.deadline) {
		return s.fail("MaxDuration", int64(s.lim.MaxDuration), "render took longer than "+s.lim.MaxDuration.String())
	}
	return nil
}

// iterate counts one loop iteration.
func (s *renderState) iterate() error {
	s.iterations++
	if s.iterations > s.lim.MaxIterations {
		return s.fail("MaxIterations", int64(s.lim.MaxIterations),
			fmt.Sprintf("more than %d loop iterations in one render", s.lim.MaxIterations))
	}
	return s.check()
}

// charge counts n bytes built against MaxTotalBytes.
func (s *renderState) charge(n int) error {
	s.built += int64(n)
	if s.built > int64(s.lim.MaxTotalBytes) {
		return s.fail("MaxTotalBytes", int64(s.lim.MaxTotalBytes),
			fmt.Sprintf("filters and captures built more than %d bytes in one render", s.lim.MaxTotalBytes))
	}
	return nil
}

// checkString refuses a string longer than MaxStringBytes.
func (s *renderState) checkString(what string, n int) error {
	if n > s.lim.MaxStringBytes {
		return s.fail("MaxStringBytes", int64(s.lim.MaxStringBytes),
			fmt.Sprintf("%s would build a %d-byte string", what, n))
	}
	return nil
}

// checkElems refuses an array longer than MaxIterations.
func (s *renderState) checkElems(what string, n int) error {
	if n > s.lim.MaxIterations {
		return s.fail("MaxIterations", int64(s.lim.MaxIterations),
			fmt.Sprintf("%s would build or expand an array of %d elements", what, n))
	}
	return nil
}

// stateOf finds the render's state from a tag's context.
func stateOf(ctx render.Context) (*renderState, error) {
	st, ok := ctx.Get(stateKey).(*renderState)
	if !ok || st == nil {
		return nil, fmt.Errorf("safeliquid: template rendered outside Template.Render")
	}
	return st, nil
}
