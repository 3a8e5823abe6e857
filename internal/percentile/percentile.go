// Package percentile computes the nearest-rank percentiles that the
// benchmarks and load runs report (docs/benchmarks.md), one definition for
// all of them.
package percentile

import (
	"cmp"
	"slices"
)

// Of is the p-th percentile of xs by nearest rank: the smallest value that
// at least p percent of xs are at or below (100: the maximum; 0 and below:
// the minimum; above 100: the maximum). It is the zero value for no
// values, and leaves xs as it was.
func Of[T cmp.Ordered](xs []T, p int) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := (len(s)*min(max(p, 0), 100) + 99) / 100 // ceil(n·p/100), 1-based
	return s[max(rank, 1)-1]
}
