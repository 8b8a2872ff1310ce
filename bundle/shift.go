package bundle

import (
	"fmt"
	"math"
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
