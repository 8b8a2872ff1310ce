package experiment

import (
	"context"
	"math"
	"testing"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/sim"
)

// TestPNorm: on one seed, every fixed-volume p-ball has the ℓ2 ball's
// calibrated log-volume (its threshold inverts LogVolume), the p = 2 row at
// fixed volume is the calibrated ℓ2 ball itself (same coverage and
// exclusion), calibrated rows cover about 1−α, and a bad p is refused.
func TestPNorm(t *testing.T) {
	cfg := SimConfig{Config: Config{Seeds: 1, K: 50}, PerClass: 400}
	tab, err := PNorm(context.Background(), cfg, PNormPs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != len(PNormPs) || tab.Rows[0].P != 2 {
		t.Fatalf("rows %+v", tab.Rows)
	}
	ball := tab.Rows[0]
	for _, r := range tab.Rows {
		lv := geometry.IdentityNorm(sim.Dim, r.P).LogVolume(r.VolThreshold.Mean)
		if math.Abs(lv-ball.LogVol.Mean) > 1e-9*math.Abs(ball.LogVol.Mean) {
			t.Errorf("p = %v: fixed-volume log-volume %v, the ℓ2 ball's %v", r.P, lv, ball.LogVol.Mean)
		}
		if r.Coverage.Mean < 90 || r.Coverage.Mean > 99.5 {
			t.Errorf("p = %v: calibrated coverage %v%%, want near 95%%", r.P, r.Coverage.Mean)
		}
	}
	if math.Abs(ball.VolCoverage.Mean-ball.Coverage.Mean) > 1e-9 || math.Abs(ball.VolExclusion.Mean-ball.Exclusion.Mean) > 1e-9 {
		t.Errorf("p = 2 at its own volume: %v%% / %v%%, calibrated %v%% / %v%%",
			ball.VolCoverage.Mean, ball.VolExclusion.Mean, ball.Coverage.Mean, ball.Exclusion.Mean)
	}
	for _, r := range tab.Rows { // the paper's table gives every exponent
		if r.Paper == nil || r.Paper.VolThreshold == 0 {
			t.Errorf("p = %v: the paper's row is missing", r.P)
		}
	}
	if _, err := PNorm(context.Background(), cfg, []float64{2, 0}, nil); err == nil {
		t.Error("p = 0 accepted")
	}
}
