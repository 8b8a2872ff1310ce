package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpRowMatchesPortable: ExpRow at every level the processor has
// (AVX-512, AVX2, portable) agrees with the portable kernel: e and c within
// the exp's bound, the row sum too, 0 below the exp's range and +Inf above
// it; AddWeighted likewise.
func TestExpRowMatchesPortable(t *testing.T) { atLevels(t, testExpRow) }

func testExpRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	for _, d := range []int{1, 3, 8, 13, 16, 17, 31, 128, 1408} {
		logm, p, row := make([]float32, d), make([]float32, d), make([]float32, d)
		for trial := range 50 {
			for j := range d {
				logm[j] = float32(rng.NormFloat64())
				p[j] = float32(0.1 + 9.9*rng.Float64())
				row[j] = float32(2 * rng.NormFloat64())
			}
			if trial == 0 {
				row[d-1] = LogZero
			}
			e1, c1, e2, c2 := make([]float32, d), make([]float32, d), make([]float32, d), make([]float32, d)
			s1 := expRowPortable(logm, p, row, e1, c1)
			s2 := ExpRow(logm, p, row, e2, c2)
			for j := range d {
				if c1[j] != c2[j] {
					t.Fatalf("d=%d: c[%d] = %v, scalar %v", d, j, c2[j], c1[j])
				}
				if rel := math.Abs(float64(e2[j]-e1[j])) / math.Max(float64(e1[j]), 1e-30); rel > 2*ExpMaxRelErr {
					t.Fatalf("d=%d: e[%d] = %v, scalar %v", d, j, e2[j], e1[j])
				}
			}
			if trial == 0 && e2[d-1] != 0 {
				t.Fatalf("d=%d: exp at LogZero = %v, want exactly 0", d, e2[d-1])
			}
			if rel := math.Abs(s2-s1) / s1; rel > 2*ExpMaxRelErr {
				t.Fatalf("d=%d: row sum %v, scalar %v", d, s2, s1)
			}
		}
		// Overflow: +Inf as the scalar kernel gives.
		for j := range d {
			logm[j], p[j], row[j] = 5, 10, 5
		}
		e, c := make([]float32, d), make([]float32, d)
		if s := ExpRow(logm, p, row, e, c); !math.IsInf(s, 1) {
			t.Errorf("d=%d: overflowing row sums to %v, want +Inf", d, s)
		}
		// NaN stays NaN, as Exp32 has it, in every lane.
		for j := range d {
			row[j] = float32(math.NaN())
		}
		ExpRow(logm, p, row, e, c)
		for j := range d {
			if !math.IsNaN(float64(e[j])) {
				t.Fatalf("d=%d: exp of NaN at %d is %v", d, j, e[j])
			}
		}
	}
	// The gradient accumulation against the scalar one.
	for _, d := range []int{1, 3, 4, 8, 13, 128} {
		e, c := make([]float32, d), make([]float32, d)
		for j := range d {
			e[j], c[j] = float32(rng.ExpFloat64()), float32(rng.NormFloat64())
		}
		s1, s2 := make([]float64, 2*d), make([]float64, 2*d)
		for j := range s1 {
			s1[j] = rng.NormFloat64()
		}
		copy(s2, s1)
		addWeightedPortable(s1[:d], s1[d:], 0.7, e, c)
		AddWeighted(s2[:d], s2[d:], 0.7, e, c)
		for j := range s1 {
			if math.Abs(s1[j]-s2[j]) > 1e-15*math.Max(1, math.Abs(s1[j])) {
				t.Fatalf("d=%d: accumulated %v, scalar %v", d, s2[j], s1[j])
			}
		}
	}
	t.Logf("%s", Describe())
}
