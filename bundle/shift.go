package bundle

import (
	"fmt"
	"math"
	"slices"
)

// MeanOffset is the mean over b's anchors and their positives of
// positive − anchor (in float64): where positives lie from their anchor
// on average. For anchors and positives from one encoder it is near 0;
// for a dual encoder's queries and passages it is the modality gap, the
// shift that centres a set where the positives are (geometry.Shifted).
// Estimate it on a fit split, never on the calibration split.
func MeanOffset(b *Bundle) ([]float64, error) {
	if err := b.NeedPositives(); err != nil {
		return nil, err
	}
	c := make([]float64, b.D)
	for i := range b.N {
		a := b.Anchor(i)
		for k := range b.K {
			for j, v := range b.Positive(i, k) {
				c[j] += float64(v) - float64(a[j])
			}
		}
	}
	n := float64(b.N * b.K)
	for j := range c {
		c[j] /= n
		if math.IsNaN(c[j]) || math.IsInf(c[j], 0) {
			return nil, fmt.Errorf("bundle: the mean offset's coordinate %d is %v", j, c[j])
		}
	}
	return c, nil
}

// Shifted returns b with every anchor moved by c (anchor + c) and its
// positives and negatives where they were: its differences anchor −
// point are b's plus c, what a set shifted by c scores (geometry.Shifted),
// so that a geometry is fitted on the differences it will score. Pools
// that were the anchors themselves become a copy of them; other arrays
// are shared with b.
func (b *Bundle) Shifted(c []float64) (*Bundle, error) {
	if len(c) != b.D {
		return nil, fmt.Errorf("bundle: a shift of %d values for embeddings of dimension %d", len(c), b.D)
	}
	s := *b
	if s.PositiveIndex != nil && s.PositivePool == nil {
		s.PositivePool = b.Anchors
	}
	if s.NegativeIndex != nil && s.Pool == nil {
		s.Pool = b.Anchors
	}
	s.Anchors = make([]float32, len(b.Anchors))
	for i, v := range b.Anchors {
		s.Anchors[i] = v + float32(c[i%b.D])
	}
	return &s, nil
}

// OffsetSpread is the median over b's anchor–positive pairs of ‖positive −
// anchor‖ and of ‖positive − (anchor + c)‖: how far the positives lie
// from their anchors, and from the centres a shift by c puts the sets at.
// A shift is worth its while where the second is well below the first.
func OffsetSpread(b *Bundle, c []float64) (fromAnchor, fromCentre float64) {
	from, centre := make([]float64, 0, b.N*b.K), make([]float64, 0, b.N*b.K)
	for i := range b.N {
		a := b.Anchor(i)
		for k := range b.K {
			var s0, s1 float64
			for j, v := range b.Positive(i, k) {
				x := float64(v) - float64(a[j])
				s0 += x * x
				s1 += (x - c[j]) * (x - c[j])
			}
			from, centre = append(from, math.Sqrt(s0)), append(centre, math.Sqrt(s1))
		}
	}
	median := func(x []float64) float64 {
		if len(x) == 0 {
			return math.NaN()
		}
		slices.Sort(x)
		if n := len(x); n%2 == 0 {
			return (x[n/2-1] + x[n/2]) / 2
		}
		return x[len(x)/2]
	}
	return median(from), median(centre)
}

// ShiftNote says what a shift by c, estimated on b, does: ‖c‖ and the
// positives' median distance from their anchors and from anchor + c
// (OffsetSpread).
func ShiftNote(b *Bundle, c []float64) string {
	var n float64
	for _, v := range c {
		n += v * v
	}
	from, centre := OffsetSpread(b, c)
	return fmt.Sprintf("‖c‖ = %.3g; the positives lie %.3g from their anchor at the median, %.3g from anchor + c", math.Sqrt(n), from, centre)
}
