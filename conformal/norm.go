package conformal

import (
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

// unitNorm reports whether every anchor and positive of b has norm 1
// within UnitNormTolerance.
func unitNorm(b *bundle.Bundle) bool {
	if b.N == 0 || b.D == 0 {
		return false
	}
	unit := func(x []float32) bool {
		return math.Abs(RowNorm(x)-1) <= UnitNormTolerance
	}
	for i := range b.N {
		if !unit(b.Anchor(i)) {
			return false
		}
		for j := range b.K {
			if !unit(b.Positive(i, j)) {
				return false
			}
		}
	}
	return true
}

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
}

func (e *NormError) Error() string {
	return fmt.Sprintf("norm %.6g: the set was calibrated on unit-norm embeddings (every calibration anchor's and positive's norm 1 ± %g), and its guarantee is for inputs normalised alike; normalise it (x / ‖x‖) as your encoder did its own", e.Norm, UnitNormTolerance)
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

// NormRefused reports whether an input of norm n is refused by a set of
// unit-norm embeddings: more than NormRefusal from 1, or NaN.
func NormRefused(n float64) bool { return !(math.Abs(n-1) <= NormRefusal) }
