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

// TestDigestOutOfRangeQuotesLittle: a number out of range is refused with
// the number in the error, shortened when it is long (the agent's own
// value, up to a megabyte, is not sent back whole).
func TestDigestOutOfRangeQuotesLittle(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ n, quoted string }{
		{"1e400", `"1e400"`},
		{"1" + strings.Repeat("0", 100_000) + "e10", `"10000000000000000000… (100004 bytes)"`},
	} {
		_, err := Digest(json.RawMessage(`{"n":` + tt.n + `}`))
		if err == nil || !strings.Contains(err.Error(), "number "+tt.quoted+" out of range") || len(err.Error()) > 200 {
			t.Errorf("%.8s…: %.300v, want it quoted as %s", tt.n, err, tt.quoted)
		}
	}
}
