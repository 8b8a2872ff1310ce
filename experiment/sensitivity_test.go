package experiment

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/ccsets/ccs/train"
)

// TestSensitivity runs a reduced sweep on a small simulation: every point
// covers about 1−α of its own α, the base point (on both sweeps) runs once,
// the paper's figure's points sit beside ours, and bad sweeps are refused.
func TestSensitivity(t *testing.T) {
	data := SimSensitivityData(SimConfig{PerClass: 400})
	recipe := train.SimRecipe
	recipe.MaxEpochs = 3
	cfg := SensitivityConfig{Config: Config{Seeds: 2, Train: recipe},
		Sweeps: map[string][]float64{"alpha": {0.05, 0.2}, "k": {5, 20}}}
	var calls, total int
	tab, err := Sensitivity(context.Background(), data, cfg, func(done, tot int, _ string) { calls, total = done, tot })
	if err != nil {
		t.Fatal(err)
	}
	// Three distinct points (α=0.05,k=20 is on both sweeps), two seeds.
	if calls != 6 || total != 6 {
		t.Errorf("progress %d of %d, want 6 of 6", calls, total)
	}
	if len(tab.Sweeps) != 2 || tab.Sweeps[0].Param != "alpha" || tab.Sweeps[1].Param != "k" {
		t.Fatalf("sweeps %+v", tab.Sweeps)
	}
	a, k := tab.Sweeps[0].Points, tab.Sweeps[1].Points
	if a[0].Coverage != k[1].Coverage || a[0].Exclusion != k[1].Exclusion {
		t.Errorf("the base point differs between sweeps: %+v, %+v", a[0], k[1])
	}
	for _, p := range a {
		if want := 100 * (1 - p.Value); math.Abs(p.Coverage.Mean-want) > 3 || p.Coverage.N != 2 {
			t.Errorf("α = %v: coverage %v over %d seeds, want about %v%%", p.Value, p.Coverage.Mean, p.Coverage.N, want)
		}
	}
	if a[1].Exclusion.Mean <= a[0].Exclusion.Mean {
		t.Errorf("exclusion at α = 0.2 (%v) not above α = 0.05 (%v)", a[1].Exclusion.Mean, a[0].Exclusion.Mean)
	}
	if a[0].Paper == nil || math.Abs(a[0].Paper[0]-94.81) > 1e-9 || k[0].Paper == nil {
		t.Errorf("the paper's points: %v, %v", a[0].Paper, k[0].Paper)
	}
	for _, bad := range []map[string][]float64{{"alpha": {1.5}}, {"k": {0}}, {"k": {2.5}}, {"gamma": {1}}, {"tau": {0}}} {
		cfg.Sweeps = bad
		if _, err := Sensitivity(context.Background(), data, cfg, nil); err == nil || !strings.Contains(err.Error(), "sensitivity") {
			t.Errorf("sweep %v: error %v", bad, err)
		}
	}
}
