package ood

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
)

// Known sorts out the points (m rows of d, row-major) that are no new
// inputs to a set's per-input OOD test: rows of its reference pool
// (pool, known exactly: a pool row's nearest pool row is itself, so it
// scores 0 and gets p-value 1) and inputs its OOD test was calibrated
// on (cal, a filter of their rows, which a new input matches about once
// in 2 000). Either may be nil. The indices are in order.
func Known(pool *bundle.RowIndex, cal *bundle.RowFilter, pts []float32, d int) (pooled, calibrated []int) {
	for i := range len(pts) / d {
		row := pts[i*d : (i+1)*d]
		switch {
		case pool != nil && pool.Has(row):
			pooled = append(pooled, i)
		case cal.Has(row):
			calibrated = append(calibrated, i)
		}
	}
	return pooled, calibrated
}

// KnownWarning says which of m points Known found, naming them by index,
// or "" where none: what ccs serve's /ood answers and Python's Set.ood
// warns. monitored adds that a drift monitor did not observe them (the
// service's, which watches new inputs only).
func KnownWarning(pooled, calibrated []int, m int, monitored bool) string {
	var parts []string
	if n := len(pooled); n > 0 {
		parts = append(parts, fmt.Sprintf("%s %s of the set's reference pool: a pool row's nearest pool row is itself, so it scores 0 (p-value 1), not as a new input would",
			pointList(pooled, m), either(n == 1, "is a row", "are rows")))
	}
	if n := len(calibrated); n > 0 {
		parts = append(parts, fmt.Sprintf("%s the filter of the inputs the OOD test was calibrated on (a filter of their rows, which a new input matches about once in 2 000): if %s",
			pointList(calibrated, m)+either(n == 1, " matches", " match"),
			either(n == 1, "it is one, its score and p-value are not a new input's", "they are such inputs, their scores and p-values are not a new input's")))
	}
	if parts == nil {
		return ""
	}
	s := strings.Join(parts, "; ")
	if monitored {
		s += "; the drift monitor did not observe " + either(len(pooled)+len(calibrated) == 1, "it", "them")
	}
	return s
}

// either is one if cond holds, else other.
func either(cond bool, one, other string) string {
	if cond {
		return one
	}
	return other
}

// pointList names points by their indices among m: "point 3 of 5",
// "points 0, 4 of 5", the first ten and a count of the others.
func pointList(idx []int, m int) string {
	shown := idx[:min(10, len(idx))]
	s := make([]string, len(shown))
	for i, v := range shown {
		s[i] = strconv.Itoa(v)
	}
	list := strings.Join(s, ", ")
	if len(idx) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(idx)-len(shown))
	}
	if len(idx) == 1 {
		return fmt.Sprintf("point %s of %d", list, m)
	}
	return fmt.Sprintf("points %s of %d", list, m)
}
