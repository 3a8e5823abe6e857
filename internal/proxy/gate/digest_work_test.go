package gate

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// allocatedBy is the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The digest's work grows with the arguments' size, not with its square:
// a number's digits are read as text, never turned into a big integer and
// back (a 900 KB integer took 10 s of CPU, and each call is digested more
// than once). Counted in bytes allocated, a bound that holds on any
// machine: the linear digest of an argument allocates a few times its
// size; the big-integer conversion allocated far more.
// Not parallel: ReadMemStats counts the whole process's allocations.
func TestDigestWorkIsLinear(t *testing.T) {
	for _, n := range []string{"1" + strings.Repeat("7", 200_000), "-1" + strings.Repeat("3", 200_000) + ".000", "0." + strings.Repeat("0", 200_000) + "1"} {
		args := json.RawMessage(`{"n":` + n + `}`)
		var err error
		got := allocatedBy(func() { _, err = Digest(args) })
		if err != nil && !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%.8s…: %v", n, err)
		}
		if limit := uint64(16 * len(args)); got > limit {
			t.Errorf("digesting %d bytes (%.8s…) allocated %d bytes, more than %d", len(args), n, got, limit)
		}
	}
}
