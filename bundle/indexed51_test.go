package bundle

import (
	"strings"
	"testing"
)

// TestIndexedRefusesSplitsNotMade checks that Plan.Indexed names a split
// the plan did not make, or an index out of range, instead of panicking
// (failed at 648e135: Indexed(OODCal) of a plan without one returned an
// empty bundle, Indexed(7) panicked with an index out of range), and
// that a made split's counts are its own.
func TestIndexedRefusesSplitsNotMade(t *testing.T) {
	const n = 600
	labels := make([]int64, n)
	for i := range labels {
		labels[i] = int64(i % 3)
	}
	plan, err := Make(Items{N: n, Labels: labels}, MakeConfig{K: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    int
		want string
	}{
		{OODCal, "the ood-cal split is not made"},
		{OOD, "the ood split is not made"},
		{-1, "split -1: want one of Fit (0) to OOD (5)"},
		{7, "split 7: want one of Fit (0) to OOD (5)"},
	} {
		b, err := plan.Indexed(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Indexed(%d) = bundle %v, error %v; want an error containing %q", c.s, b != nil, err, c.want)
		}
	}
	b, err := plan.Indexed(Cal)
	if err != nil {
		t.Fatal(err)
	}
	if sp := plan.Splits[Cal]; b.N != len(sp.Anchors) || b.N == 0 || len(b.Labels) != b.N {
		t.Errorf("Indexed(Cal): N %d, %d labels; the plan's calibration split has %d anchors", b.N, len(b.Labels), len(sp.Anchors))
	}
}
