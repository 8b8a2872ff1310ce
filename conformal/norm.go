package conformal

import (
	"errors"
	"fmt"
	"math"

	"github.com/ccsets/ccs/bundle"
)

// UnitNormTolerance is how far from 1 a calibration row's norm may be for
// the set to record unit-norm embeddings (Info.UnitNorm): float32
// rounding of a normalised vector is far inside it, float16's (about
// 5·10⁻⁴ at d = 384) too.
const UnitNormTolerance = 1e-3

// NormRefusal is how far from 1 the norm of an anchor or point given to a
// set of unit-norm embeddings may be before CheckNorms refuses it: ten
// times the calibration's tolerance, so that rounding on the way (JSON's
// float32 digits, float16 storage) never trips it.
const NormRefusal = 1e-2

// unit reports whether a row has norm 1 within UnitNormTolerance.
func unit(x []float32) bool { return math.Abs(RowNorm(x)-1) <= UnitNormTolerance }

// UnitNorm reports whether every anchor and positive of b has norm 1
// within UnitNormTolerance: whether a set calibrated on b records
// unit-norm embeddings (Info.UnitNorm).
func UnitNorm(b *bundle.Bundle) bool { return unitNorm(b) }

// unitNorm reports whether every anchor and positive of b has norm 1
// within UnitNormTolerance.
func unitNorm(b *bundle.Bundle) bool {
	if !unitAnchors(b) {
		return false
	}
	for i := range b.N {
		for j := range b.K {
			if !unit(b.Positive(i, j)) {
				return false
			}
		}
	}
	return true
}

// unitAnchors reports whether every anchor of b has norm 1 within
// UnitNormTolerance.
func unitAnchors(b *bundle.Bundle) bool {
	if b.N == 0 || b.D == 0 {
		return false
	}
	for i := range b.N {
		if !unit(b.Anchor(i)) {
			return false
		}
	}
	return true
}

// unitNormAnchors reports whether b's anchors have norm 1 and its
// positives not all (Info.UnitNormAnchors).
func unitNormAnchors(b *bundle.Bundle) bool { return unitAnchors(b) && !unitNorm(b) }

// RowNorm is the ℓ2 norm of a row, summed in float64.
func RowNorm(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// NormError reports an input whose norm is not 1 given to a set of
// unit-norm embeddings (CheckNorms).
type NormError struct {
	Row  int     // the row of the input (0 for a lone anchor)
	Norm float64 // its norm
	// Anchors is set when the set's calibration anchors alone were of
	// unit norm (Info.UnitNormAnchors), not its positives.
	Anchors bool
}

func (e *NormError) Error() string {
	if e.Norm == 0 {
		return "norm 0: an all-zero row, which no normalisation makes a unit vector, and the set was calibrated on unit-norm embeddings: a failed encoding? leave it out"
	}
	if e.Anchors {
		return fmt.Sprintf("norm %.6g: the set was calibrated around unit-norm anchors (every calibration anchor's norm 1 ± %g, not its positives': normalised queries, as the inner-product map's users u/‖u‖ beside items of their own norms), and it takes anchors of norm 1 ± %g alone, its guarantee being for anchors normalised alike; normalise it (x / ‖x‖) as the calibration anchors were", e.Norm, UnitNormTolerance, NormRefusal)
	}
	return fmt.Sprintf("norm %.6g: the set was calibrated on unit-norm embeddings (every calibration anchor's and positive's norm 1 ± %g), and it takes inputs of norm 1 ± %g alone, its guarantee being for inputs normalised alike; normalise it (x / ‖x‖) as your encoder did its own", e.Norm, UnitNormTolerance, NormRefusal)
}

// CheckNorms refuses, for a set calibrated on unit-norm embeddings
// (Info.UnitNorm), the first row of rows (rows of the set's dimension)
// whose norm is more than NormRefusal from 1, with a *NormError: a query
// the encoder did not normalise, or an all-zero row, lies outside what
// the guarantee speaks of, and the set around it would be answered as if
// it did not (an unnormalised query three times too long had no passage
// inside). Sets of other embeddings take any rows.
func (s *Set) CheckNorms(rows []float32) error {
	d := s.Geometry.Dim()
	if !s.Calibration.UnitNorm || d == 0 {
		return nil
	}
	for i := 0; i+d <= len(rows); i += d {
		if n := RowNorm(rows[i : i+d]); NormRefused(n) {
			return &NormError{Row: i / d, Norm: n}
		}
	}
	return nil
}

// CheckAnchorNorms refuses, as CheckNorms does, the first of rows given
// as anchors whose norm is more than NormRefusal from 1, for a set
// calibrated on unit-norm embeddings or around unit-norm anchors
// (Info.UnitNormAnchors): a recommender's user vector sent without the
// normalisation its calibration users had would be answered with another
// set than the guarantee speaks of, and no error.
func (s *Set) CheckAnchorNorms(rows []float32) error {
	d := s.Geometry.Dim()
	if !s.Calibration.UnitNormAnchors || d == 0 {
		return s.CheckNorms(rows)
	}
	for i := 0; i+d <= len(rows); i += d {
		if n := RowNorm(rows[i : i+d]); NormRefused(n) {
			return &NormError{Row: i / d, Norm: n, Anchors: true}
		}
	}
	return nil
}

// CheckRows is CheckNorms of rows (rows of the set's dimension) given to
// the set as name ("points", "queries"), with their finiteness first:
// where CheckNorms refuses a row and rows hold a NaN or infinite
// coordinate, the error names the first such, as name[row][coordinate]
// (a NaN is not an unnormalised row, and normalising would not mend it),
// and otherwise it is CheckNorms' *NormError. Rows CheckNorms takes cost
// no more; a set of other embeddings takes any rows, as CheckNorms does
// (its callers find a NaN by its score).
func (s *Set) CheckRows(name string, rows []float32) error {
	return s.finiteFirst(name, rows, s.CheckNorms(rows))
}

// CheckAnchorRows is CheckRows with CheckAnchorNorms: rows given as
// anchors.
func (s *Set) CheckAnchorRows(name string, rows []float32) error {
	return s.finiteFirst(name, rows, s.CheckAnchorNorms(rows))
}

// finiteFirst is err, a refusal of rows by CheckNorms or
// CheckAnchorNorms, or, where rows hold a NaN or infinite coordinate, an
// error naming the first one.
func (s *Set) finiteFirst(name string, rows []float32, err error) error {
	if err == nil {
		return nil
	}
	if i := bundle.FirstNonFinite(rows); i >= 0 {
		d := s.Geometry.Dim()
		return fmt.Errorf("%s[%d][%d] is %v", name, i/d, i%d, rows[i])
	}
	return err
}

// CheckBundleNorms is CheckAnchorRows of b's anchors, for a set judged
// on a bundle (evaluate, coverage checks, OOD inputs): a set of unit-norm
// embeddings judged on anchors not normalised alike covered none of their
// positives, and the shift check blamed another session or site.
func (s *Set) CheckBundleNorms(b *bundle.Bundle) error {
	if b.D != s.Geometry.Dim() {
		return nil // refused elsewhere, by dimension
	}
	if err := s.CheckAnchorRows("anchors", b.Anchors); err != nil {
		var ne *NormError
		if errors.As(err, &ne) {
			return fmt.Errorf("anchor %d: %w", ne.Row, err)
		}
		return err
	}
	return nil
}

// NormRefused reports whether an input of norm n is refused by a set of
// unit-norm embeddings: more than NormRefusal from 1, or NaN.
func NormRefused(n float64) bool { return !(math.Abs(n-1) <= NormRefusal) }
