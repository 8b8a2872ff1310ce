package geometry

import (
	"fmt"
	"math"
	"sync"
)

// Shifted is a geometry whose sets are centred off their anchor: on the
// differences x = anchor − point it scores φ(x + c), so that the set
// around an anchor a is {z : φ(a + c − z) ≤ t}, centred at a + c.
//
// When anchors and their positives come from two encoders (a dual
// encoder's queries and passages, CLIP's captions and images) every
// positive lies off its anchor by about the same vector — the modality
// gap — and a set centred on the anchor has to reach across it in every
// direction. With c the mean of positive − anchor over a fit split
// (bundle.MeanOffset), never the calibration split, the set is centred
// where the positives are, and the conformal guarantee is unchanged: the
// score is still a fixed function of the anchor and the point.
//
// A translation keeps volumes, so LogVolume is the inner geometry's.
type Shifted struct {
	Inner Geometry
	Shift []float32 // c, Inner.Dim() values
}

var (
	_ Geometry   = (*Shifted)(nil)
	_ FastScorer = (*Shifted)(nil)
	_ Describer  = (*Shifted)(nil)
)

// NewShifted centres inner's sets at anchor + shift; shift must have
// inner.Dim() finite values.
func NewShifted(inner Geometry, shift []float64) (*Shifted, error) {
	if len(shift) != inner.Dim() {
		return nil, fmt.Errorf("geometry: a shift of %d values for a geometry of dimension %d", len(shift), inner.Dim())
	}
	c := make([]float32, len(shift))
	for j, v := range shift {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
			return nil, fmt.Errorf("geometry: shift[%d] is %v: want a finite float32", j, v)
		}
		c[j] = float32(v)
	}
	return &Shifted{Inner: inner, Shift: c}, nil
}

// Unshift returns g's inner geometry and shift when g is Shifted, and g
// and nil otherwise.
func Unshift(g Geometry) (inner Geometry, shift []float32) {
	if s, ok := g.(*Shifted); ok {
		return s.Inner, s.Shift
	}
	return g, nil
}

// Kind is the inner geometry's family.
func (s *Shifted) Kind() Kind { return s.Inner.Kind() }

// Dim is the inner geometry's dimension.
func (s *Shifted) Dim() int { return s.Inner.Dim() }

var shiftBufs sync.Pool

// shifted returns diffs + c row by row in a pooled buffer; put returns it.
func (s *Shifted) shifted(diffs []float32) (*[]float32, []float32) {
	d := len(s.Shift)
	if len(diffs)%d != 0 {
		panic("ccs/geometry: diffs are not rows of the shift's dimension")
	}
	bp, _ := shiftBufs.Get().(*[]float32)
	if bp == nil || cap(*bp) < len(diffs) {
		b := make([]float32, len(diffs))
		bp = &b
	}
	x := (*bp)[:len(diffs)]
	for i := 0; i < len(diffs); i += d {
		row, out := diffs[i:i+d], x[i:i+d]
		for j, c := range s.Shift {
			out[j] = row[j] + c
		}
	}
	return bp, x
}

// Scores computes φ(x + c) for each row x of diffs.
func (s *Shifted) Scores(dst []float64, diffs []float32) []float64 {
	bp, x := s.shifted(diffs)
	defer shiftBufs.Put(bp)
	return s.Inner.Scores(dst, x)
}

// ScoresFast is the inner geometry's fast scores of x + c (its exact
// scores when it has none).
func (s *Shifted) ScoresFast(dst []float64, diffs []float32) []float64 {
	bp, x := s.shifted(diffs)
	defer shiftBufs.Put(bp)
	if f, ok := s.Inner.(FastScorer); ok {
		return f.ScoresFast(dst, x)
	}
	return s.Inner.Scores(dst, x)
}

// FastTolerance is the inner geometry's (0, 0 without fast scores: they
// are its exact ones).
func (s *Shifted) FastTolerance() (rel, abs float64) {
	if f, ok := s.Inner.(FastScorer); ok {
		return f.FastTolerance()
	}
	return 0, 0
}

// LogVolume is the inner geometry's: a translation keeps volumes.
func (s *Shifted) LogVolume(t float64) float64 { return s.Inner.LogVolume(t) }

// InputGrads writes ∇φ(x + c) for each row x of diffs.
func (s *Shifted) InputGrads(dst []float64, diffs []float32) []float64 {
	bp, x := s.shifted(diffs)
	defer shiftBufs.Put(bp)
	return s.Inner.InputGrads(dst, x)
}

// Describe is the inner geometry's description, marked as shifted.
func (s *Shifted) Describe() Description {
	d := Describe(s.Inner)
	d.Shifted = true
	return d
}

// ShiftNorm is ‖c‖, how far the sets' centres lie from their anchors.
func (s *Shifted) ShiftNorm() float64 {
	var ss float64
	for _, c := range s.Shift {
		ss += float64(c) * float64(c)
	}
	return math.Sqrt(ss)
}
