package conformal

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// normalised is synthetic's bundle with every anchor and positive scaled
// to unit norm, as a sentence encoder's output is.
func normalised(b *bundle.Bundle) *bundle.Bundle {
	u := *b
	u.Anchors, u.Positives = append([]float32(nil), b.Anchors...), append([]float32(nil), b.Positives...)
	for _, x := range [][]float32{u.Anchors, u.Positives} {
		for i := 0; i < len(x); i += b.D {
			n := float32(RowNorm(x[i : i+b.D]))
			for j := range b.D {
				x[i+j] /= n
			}
		}
	}
	return &u
}

// TestUnitNorm: a set calibrated on unit-norm embeddings records it, keeps
// it through its file, and refuses an anchor or point of another norm
// (an unnormalised query, an all-zero row) naming the row; a set of other
// embeddings takes any.
func TestUnitNorm(t *testing.T) {
	b := synthetic(rand.New(rand.NewPCG(3, 4)), 300, 2)
	raw, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Calibration.UnitNorm || raw.CheckNorms([]float32{3, 4}) != nil {
		t.Errorf("a set of raw embeddings: unit norm %v, %v", raw.Calibration.UnitNorm, raw.CheckNorms([]float32{3, 4}))
	}
	u := normalised(b)
	s, err := Calibrate(geometry.Ball{D: 2}, u, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "set.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(path); err != nil || !s.Calibration.UnitNorm {
		t.Fatalf("loaded: %v, unit norm %v", err, s != nil && s.Calibration.UnitNorm)
	}
	for _, c := range []struct {
		rows []float32
		row  int
		norm float64
	}{
		{[]float32{0.6, 0.8, 0.6, 0.805}, -1, 0}, // 1.004: rounding
		{[]float32{0.6, 0.8, 1.8, 2.4}, 1, 3},
		{[]float32{0, 0}, 0, 0},
		{[]float32{float32(math.NaN()), 0}, 0, math.NaN()},
	} {
		err := s.CheckNorms(c.rows)
		var ne *NormError
		switch {
		case c.row < 0 && err != nil:
			t.Errorf("%v: %v, want none", c.rows, err)
		case c.row >= 0 && (!errors.As(err, &ne) || ne.Row != c.row || !(math.Abs(ne.Norm-c.norm) < 1e-6 || math.IsNaN(c.norm) && math.IsNaN(ne.Norm))):
			t.Errorf("%v: %v, want row %d of norm %v refused", c.rows, err, c.row, c.norm)
		case c.row >= 0 && ne.Norm == 0 && err.Error() != "norm 0: an all-zero row, which no normalisation makes a unit vector, and the set was calibrated on unit-norm embeddings: a failed encoding? leave it out":
			t.Errorf("%v: %v", c.rows, err)
		case c.row >= 0 && ne.Norm != 0 && !strings.Contains(err.Error(), "the set was calibrated on unit-norm embeddings (every calibration anchor's and positive's norm 1 ± 0.001)"):
			t.Errorf("%v: %v", c.rows, err)
		}
	}
	// One positive off the unit sphere: not a set of unit-norm embeddings.
	u.Positives[6] *= 1.01
	u.Positives[7] *= 1.01
	if s, err := Calibrate(geometry.Ball{D: 2}, u, 0.1, Options{}); err != nil || s.Calibration.UnitNorm {
		t.Errorf("a positive of norm 1.01: %v, unit norm %v", err, s.Calibration.UnitNorm)
	}
}

// TestUnitNormAnchors: a set calibrated around unit-norm anchors whose
// positives are not (the inner-product map's users u/‖u‖ beside items of
// their own norms) records it, keeps it through its file, and refuses an
// anchor of another norm — a user vector sent without its normalisation —
// while it takes points of any norm.
func TestUnitNormAnchors(t *testing.T) {
	b := synthetic(rand.New(rand.NewPCG(3, 4)), 300, 2)
	u := normalised(b)
	u.Positives = b.Positives // the items keep their norms
	s, err := Calibrate(geometry.Ball{D: 2}, u, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "set.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	if s, err = Load(path); err != nil || s.Calibration.UnitNorm || !s.Calibration.UnitNormAnchors {
		t.Fatalf("loaded: %v, unit norm %v, unit-norm anchors %v", err, s != nil && s.Calibration.UnitNorm, s != nil && s.Calibration.UnitNormAnchors)
	}
	if err := s.CheckNorms([]float32{3, 4, 0, 0}); err != nil {
		t.Errorf("points of any norm: %v", err)
	}
	for _, c := range []struct {
		rows []float32
		row  int
		norm float64
	}{
		{[]float32{0.6, 0.8, 0.6, 0.805}, -1, 0},
		{[]float32{0.6, 0.8, 1.8, 2.4}, 1, 3},
		{[]float32{0, 0}, 0, 0},
	} {
		err := s.CheckAnchorNorms(c.rows)
		var ne *NormError
		switch {
		case c.row < 0 && err != nil:
			t.Errorf("%v: %v, want none", c.rows, err)
		case c.row >= 0 && (!errors.As(err, &ne) || ne.Row != c.row || math.Abs(ne.Norm-c.norm) > 1e-6):
			t.Errorf("%v: %v, want row %d of norm %v refused", c.rows, err, c.row, c.norm)
		case c.row >= 0 && ne.Norm != 0 && !strings.Contains(err.Error(), "the set was calibrated around unit-norm anchors (every calibration anchor's norm 1 ± 0.001, not its positives': normalised queries, as the inner-product map's users u/‖u‖ beside items of their own norms)"):
			t.Errorf("%v: %v", c.rows, err)
		}
	}
	// A set of unit-norm anchors and positives refuses anchors as points;
	// one of raw anchors takes any.
	both, err := Calibrate(geometry.Ball{D: 2}, normalised(b), 0.1, Options{})
	if err != nil || !both.Calibration.UnitNorm || both.Calibration.UnitNormAnchors || both.CheckAnchorNorms([]float32{3, 4}) == nil {
		t.Errorf("unit-norm embeddings: %v, %+v", err, both.Calibration)
	}
	raw, err := Calibrate(geometry.Ball{D: 2}, b, 0.1, Options{})
	if err != nil || raw.Calibration.UnitNormAnchors || raw.CheckAnchorNorms([]float32{3, 4}) != nil {
		t.Errorf("raw embeddings: %v, %+v", err, raw.Calibration)
	}
}
