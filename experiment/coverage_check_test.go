package experiment

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/sim"
)

// TestCheckCoverageTooFew: resplits whose calibration share is too small
// for the set's α say which share would do, or that the bundle is too
// small even whole.
func TestCheckCoverageTooFew(t *testing.T) {
	t.Parallel()
	b := sim.Gauss(rand.New(rand.NewPCG(5, 50)), 300, 2, 3)
	for _, c := range []struct {
		alpha float64
		want  string
	}{
		{0.01, "a calibration fraction of 0.34 (-cal-fraction; cal_fraction= in Python) gives it 102"},
		{0.001, "the bundle's 300 anchors are too few at this α even all together"},
	} {
		s := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 1, Alpha: c.alpha, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 2000, Rank: 1990}}
		if _, _, err := CheckCoverage(s, b, 10, 0.2, 1, false, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("α = %v: %v, want %q", c.alpha, err, c.want)
		}
	}
}
