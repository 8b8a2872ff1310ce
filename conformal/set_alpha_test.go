package conformal

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// TestTrainedAlphaWarning: a geometry trained for one α and calibrated at
// another is said so where the set is made; at the same α, or without a
// trainer's record, it is not.
func TestTrainedAlphaWarning(t *testing.T) {
	rec := func(alpha float64) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"recipe": map[string]any{"objective": map[string]any{"objective": "neg", "alpha": alpha}}})
		return b
	}
	for _, c := range []struct {
		training json.RawMessage
		alpha    float64
		want     string
	}{
		{rec(0.05), 0.1, "the geometry was trained for α = 0.05 and is calibrated at α = 0.1: the guarantee is for 0.1"},
		{rec(0.1), 0.1, ""},
		{nil, 0.1, ""},
		{json.RawMessage(`{"recipe": 3}`), 0.1, ""},
	} {
		s := &Set{Geometry: geometry.Ball{D: 2}, Alpha: c.alpha, Threshold: 1, Fit: &FitInfo{Training: c.training}}
		got := strings.Join(s.CalibrateWarnings(), "\n")
		if c.want == "" && strings.Contains(got, "trained for") || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("training %s at α = %v: warnings %q, want %q", c.training, c.alpha, got, c.want)
		}
	}
}

// TestRecalibratedOODWarning: a set with an OOD test calibrated again
// without one says the test is not kept; with a new one, or from a set
// without, it says nothing of it.
func TestRecalibratedOODWarning(t *testing.T) {
	cal := synthetic(rand.New(rand.NewPCG(5, 6)), 200, 3)
	base, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withOOD := *base
	withOOD.OOD = &OODCalibration{}
	for _, c := range []struct {
		from   *Set
		newOOD bool
		want   bool
	}{{&withOOD, false, true}, {&withOOD, true, false}, {base, false, false}} {
		s, err := CalibrateFitted(c.from, cal, 0.2, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.newOOD {
			s.OOD = &OODCalibration{}
		}
		got := strings.Contains(strings.Join(s.CalibrateWarnings(), "\n"), "carried a per-input OOD test, which is not kept")
		if got != c.want {
			t.Errorf("from a set with OOD %v, a new one %v: warned %v, want %v", c.from.OOD != nil, c.newOOD, got, c.want)
		}
	}
}
