package figure

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDistinctTicks: a narrow range near 100 (exclusion of 99.8–100%)
// gets labels that differ, with no more decimals than it needs; a range
// of whole numbers none; every label says its tick's value (a range of
// −1.3 to 0.45 was labelled "-1", "-0", "0" at −1.2, −0.4, 0.4).
func TestDistinctTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string // the labels, in order
	}{
		{99.8, 100, nil},
		{0, 100, []string{"0", "50", "100"}},
		// A trial's coverage − (1 − α) axis: labelled "-1", "-0", "0".
		{-1.3, 0.45, nil},
	} {
		var labels []string
		for _, tk := range (DistinctTicks{}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		seen := map[string]bool{}
		for _, l := range labels {
			if seen[l] {
				t.Errorf("%v–%v: label %q twice in %q", c.min, c.max, l, labels)
			}
			seen[l] = true
		}
		if len(labels) < 2 {
			t.Errorf("%v–%v: labels %q", c.min, c.max, labels)
		}
		// Each label says its tick's value.
		for _, tk := range (DistinctTicks{}).Ticks(c.min, c.max) {
			if v, err := strconv.ParseFloat(tk.Label, 64); tk.Label != "" && (err != nil || math.Abs(v-tk.Value) > 1e-9 || strings.HasPrefix(tk.Label, "-0") && v == 0) {
				t.Errorf("%v–%v: the tick at %v labelled %q", c.min, c.max, tk.Value, tk.Label)
			}
		}
		if c.want != nil && !slices.Equal(labels, c.want) {
			t.Errorf("%v–%v: labels %q, want %q", c.min, c.max, labels, c.want)
		}
	}
}
