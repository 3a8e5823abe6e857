package percentile_test

import (
	"slices"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

func TestOf(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 … 1, unsorted
	}
	for _, tc := range []struct {
		name string
		xs   []int
		p    int
		want int
	}{
		{"none", nil, 50, 0},
		{"one", []int{7}, 99, 7},
		{"median of an odd count", []int{5, 1, 3}, 50, 3},
		{"median of an even count is the lower middle", []int{4, 1, 3, 2}, 50, 2},
		{"p99 of 100", hundred, 99, 99},
		{"p50 of 100", hundred, 50, 50},
		{"p1 of 100", hundred, 1, 1},
		{"max", hundred, 100, 100},
		{"min", hundred, 0, 1},
		{"below 0 is the min", []int{3, 2}, -5, 2},
		{"above 100 is the max", []int{3, 2}, 250, 3},
		{"p99 of 10 is the max", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
		{"p90 of 10", []int{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.xs)
			if got := percentile.Of(tc.xs, tc.p); got != tc.want {
				t.Errorf("Of(%v, %d) = %d, want %d", tc.xs, tc.p, got, tc.want)
			}
			if !slices.Equal(in, tc.xs) {
				t.Error("Of changed its input")
			}
		})
	}
	if got := percentile.Of([]time.Duration{3 * time.Millisecond, time.Millisecond}, 50); got != time.Millisecond {
		t.Errorf("durations: %v", got)
	}
	if got := percentile.Of([]float64{0.5, 0.25, 2}, 100); got != 2 {
		t.Errorf("floats: %v", got)
	}
}
