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

// renderState is the per-render budget: steps, loop iterations, bytes
// built, the deadline, and the first bound exceeded (sticky, so that every
// check point after it fails fast with the same *LimitError).
type renderState struct {
	lim        Limits
	deadline   time.Time
	steps      int
	maxSteps   int  // MaxSteps, or less when a Budget has less left
	budgeted   bool // maxSteps is a Budget's, not MaxSteps
	iterations int
	built      int64
	err        *LimitError
}

func (s *renderState) reset(l Limits, now time.Time, b *Budget) {
	*s = renderState{lim: l, deadline: now.Add(l.MaxDuration), maxSteps: l.MaxSteps}
	if b != nil && b.Steps < l.MaxSteps {
		s.maxSteps, s.budgeted = max(b.Steps, 0), true
	}
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

// step counts one step of work (a tag, a loop iteration, a filter call, a
// write of output) and fails if a bound has already been exceeded, the
// steps run out, or (the last guard) the deadline has passed.
func (s *renderState) step() error { return s.stepData(0) }

// stepData is step for a step that handles data of size n (bytes of a
// string, elements of an array times 64): it counts one more step per 256
// bytes, so that a filter given a large string costs what scanning it costs.
func (s *renderState) stepData(n int) error {
	if s.err != nil {
		return s.err
	}
	s.steps += 1 + n>>8
	if s.steps > s.maxSteps {
		if s.budgeted {
			return s.fail("Budget", int64(s.maxSteps),
				fmt.Sprintf("more than the %d steps left of the budget this render shares with others", s.maxSteps))
		}
		return s.fail("MaxSteps", int64(s.maxSteps),
			fmt.Sprintf("more than %d steps (tags, loop iterations, filter calls, writes) in one render", s.maxSteps))
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
	return s.step()
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
