package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestGCDefaults: GOGC=400 and a 256 MiB soft memory limit, each unless
// the operator set its variable.
func TestGCDefaults(t *testing.T) {
	prevGC, prevLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevLimit) })
	for _, tc := range []struct {
		name    string
		env     map[string]string
		percent int
		limit   int64
	}{
		{"none set", nil, 400, 256 << 20},
		{"GOGC set", map[string]string{"GOGC": "100"}, 100, 256 << 20},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, 400, math.MaxInt64},
		{"both set", map[string]string{"GOGC": "off", "GOMEMLIMIT": "off"}, 100, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			gcDefaults(func(k string) string { return tc.env[k] })
			if got := debug.SetGCPercent(100); got != tc.percent {
				t.Errorf("GC percent %d, want %d", got, tc.percent)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.limit {
				t.Errorf("memory limit %d, want %d", got, tc.limit)
			}
		})
	}
}
