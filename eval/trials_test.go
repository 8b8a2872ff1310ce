package eval

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/jsonfloat"
)

// TestTrials: a set's misses and false acceptances on a trial list, and
// the cosine baseline's EER and its false acceptance at the set's miss
// rate, against hand-computed values; what cannot be judged is refused.
func TestTrials(t *testing.T) {
	// The ball of radius 1 around row 0 = (1, 0) holds rows 1 (0.9, 0.1)
	// and 4 (0.6, 0.8), not 2 (0, 1) nor 3 (−1, 0).
	rows := []float32{1, 0, 0.9, 0.1, 0, 1, -1, 0, 0.6, 0.8, 0, 0}
	s := &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor}}
	trials := []bundle.Trial{{Enrol: 0, Test: 1, Target: true}, {Enrol: 0, Test: 2, Target: true}, {Enrol: 0, Test: 3, Target: false}, {Enrol: 0, Test: 4, Target: false}, {Enrol: 1, Test: 4, Target: true}}
	r, err := Trials(s, rows, 2, trials)
	if err != nil {
		t.Fatal(err)
	}
	// Row 1 to row 4: ‖(0.3, −0.7)‖ = 0.76, inside. Cosines: targets
	// 0.99388, 0, 0.66262; non-targets −1, 0.6. At t = 0.6 a third of the
	// targets (0) is missed and half the non-targets (0.6) accepted, a gap
	// of 1/6; at t = 0.66262 a third and none, a gap of 1/3; at 0, none
	// and a half; at −1 and 0.99388, wider still: the EER is at 0.6,
	// (1/3 + 1/2)/2. The set misses one target: the cosine that misses one
	// is the second smallest target score, 0.66262, accepting no
	// non-target.
	c14 := (0.9*0.6 + 0.1*0.8) / math.Hypot(0.9, 0.1)
	want := TrialResult{Trials: 5, Targets: 3, NonTargets: 2, Miss: 1.0 / 3, FalseAcceptance: 0.5,
		CosineEER: (1.0/3 + 0.5) / 2, CosineEERThreshold: 0.6, CosineAtMiss: jsonfloat.Float(c14), CosineFalseAcceptance: 0}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	if r.Trials != want.Trials || r.Targets != want.Targets || r.NonTargets != want.NonTargets || r.Miss != want.Miss || r.FalseAcceptance != want.FalseAcceptance ||
		!near(r.CosineEER, want.CosineEER) || !near(r.CosineEERThreshold, 0.6) || !near(float64(r.CosineAtMiss), float64(want.CosineAtMiss)) || r.CosineFalseAcceptance != 0 {
		t.Errorf("%+v, want %+v", r, want)
	}
	for _, c := range []struct {
		name   string
		set    *conformal.Set
		trials []bundle.Trial
		want   string
	}{
		{"targets alone", s, trials[:2], "2 target and 0 non-target trials"},
		{"a row of zeros", s, []bundle.Trial{{Enrol: 0, Test: 5, Target: true}, {Enrol: 0, Test: 3, Target: false}}, "row 5 is all zeros"},
		{"a row beyond the rows", s, []bundle.Trial{{Enrol: 0, Test: 6, Target: true}}, "a trial names row 0 or 6, there are 6 rows"},
		{"class-conditional", &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.Class}, Classes: []conformal.ClassThreshold{{Label: 0, Threshold: 1}}}, trials, "a class-conditional set judges an enrolment by its class"},
	} {
		if _, err := Trials(c.set, rows, 2, c.trials); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A set that misses every target: the cosine threshold that misses as
	// many accepts nothing, +Inf, which JSON writes as "+Inf" (jsonfloat),
	// not an error.
	far := []bundle.Trial{{Enrol: 0, Test: 3, Target: true}, {Enrol: 0, Test: 2, Target: true}, {Enrol: 0, Test: 1, Target: false}}
	r, err = Trials(s, rows, 2, far)
	if err != nil || r.Miss != 1 || !math.IsInf(float64(r.CosineAtMiss), 1) || r.CosineFalseAcceptance != 0 {
		t.Errorf("every target missed: %+v, %v", r, err)
	}
	if b, err := json.Marshal(r); err != nil || !strings.Contains(string(b), `"cosine_at_miss":"+Inf","cosine_false_acceptance":0`) {
		t.Errorf("every target missed, in JSON: %s, %v", b, err)
	}
	unit := &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, UnitNorm: true}}
	if _, err := Trials(unit, rows, 2, []bundle.Trial{{Enrol: 0, Test: 1, Target: true}, {Enrol: 0, Test: 3, Target: false}}); err == nil || !strings.Contains(err.Error(), "row 1: norm 0.905538: the set was calibrated on unit-norm embeddings") {
		t.Errorf("a row not of unit norm: %v", err)
	}
	if _, err := Trials(&conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Calibration: conformal.Info{Mode: conformal.Class}, Classes: []conformal.ClassThreshold{{Label: 0, Threshold: 1}}}, rows, 2, trials); !errors.Is(err, conformal.ErrNoLabel) {
		t.Errorf("class-conditional: %v is not ErrNoLabel", err)
	}
}
