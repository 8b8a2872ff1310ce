package figure

import (
	"slices"
	"testing"
)

// TestDistinctTicks: a narrow range near 100 (exclusion of 99.8–100%)
// gets labels that differ, with no more decimals than it needs; a range
// of whole numbers none.
func TestDistinctTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string // the labels, in order
	}{
		{99.8, 100, nil},
		{0, 100, []string{"0", "50", "100"}},
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
		if c.want != nil && !slices.Equal(labels, c.want) {
			t.Errorf("%v–%v: labels %q, want %q", c.min, c.max, labels, c.want)
		}
	}
}
