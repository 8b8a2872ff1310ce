package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
)

// TestHighDimWarning: a comparison at d ≥ 2 048 with rows whose cost grows
// with d² or d³ (single-norm, ellipsoid, InfoNCE heads) names them and the
// rows that stay cheap; cheap rows alone, or a smaller d, say nothing (a
// user at d = 3 072 waited hours before anything said what a row costs).
func TestHighDimWarning(t *testing.T) {
	all := ForCompare(append(Baselines(), Learned(geometry.KindGenBall, objective.NegVol), Learned(geometry.KindNorm, objective.Neg),
		LearnedInfoNCE(geometry.KindGenBall, objective.Neg)))
	w := HighDimWarning(3072, all)
	for _, want := range []string{"d = 3072: Mahalanobis Ellipsoid", "Single (Neg)", "Generalized (Neg,InfoNCE)", "-rows ball,genball-neg-vol (rows=\"ball,genball-neg-vol\" in Python)", "High dimensions"} {
		if !strings.Contains(w, want) {
			t.Errorf("want %q in %q", want, w)
		}
	}
	if strings.Contains(w, "Generalized (Neg,Vol),") {
		t.Errorf("a cheap row among the costly: %q", w)
	}
	if w := HighDimWarning(1536, all); w != "" {
		t.Errorf("d = 1536: %q", w)
	}
	if w := HighDimWarning(4096, ForCompare([]Method{Ball(), Learned(geometry.KindGenBall, objective.Neg)})); w != "" {
		t.Errorf("cheap rows alone: %q", w)
	}
}
