package kernel

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkNormTrainSpans: the single-norm's small-d training kernel (d =
// 3) on a batch as training reads it: 256 anchors' 500 rows each, spans
// of a 12 500-anchor split (45 MB) in random order, so that each span
// starts in memory the last one did not touch.
func BenchmarkNormTrainSpans(b *testing.B) { benchNormSpans(b, true) }

// BenchmarkNormScoreSpans: the same batch scored alone (a training step's
// positives, a validation pass), with normSmallScore and, for comparison,
// with the forward kernel that keeps what a backward pass reads.
func BenchmarkNormScoreSpans(b *testing.B) {
	b.Run("score", func(b *testing.B) { benchNormSpans(b, false) })
	b.Run("fwd", func(b *testing.B) {
		saved := normSmallScoreV
		normSmallScoreV = normSmallFwdV
		defer func() { normSmallScoreV = saved }()
		benchNormSpans(b, false)
	})
}

func benchNormSpans(b *testing.B, grads bool) {
	const d, per, anchors, batch = 3, 500, 12500, 256
	rng := rand.New(rand.NewPCG(1, 1))
	split := make([]float32, anchors*per*d)
	for i := range split {
		split[i] = float32(rng.NormFloat64())
	}
	spans := make(Spans, batch)
	m := []float64{1, 0.1, 0, 0, 1, 0.2, 0.1, 0, 1}
	scores := make([]float64, batch*per)
	var dtheta []float64
	if grads {
		dtheta = make([]float64, d*d+1)
	}
	weights := func(lo int, phi, w []float64) {
		for i := range w {
			w[i] = 1e-3
		}
	}
	exact := NormExact{Scores: func(dst []float64, x []float32) {}, Grad: func([]float64, []float32, float64) {}}
	b.SetBytes(int64(len(scores) * d * 4))
	for b.Loop() {
		for k := range spans { // a new batch each time, as an epoch's
			a := rng.IntN(anchors)
			spans[k] = split[a*per*d : (a+1)*per*d]
		}
		if !NormTrain(d, m, NormMatrix{}, 1.5, dtheta, scores, spans, weights, exact) {
			b.Skip("no vector kernels")
		}
	}
}

// TestNewNormMatrix: Mᵀ in float32, every entry, for d a multiple of the
// transpose's tiles and not, in a fresh buffer and in one left by a
// larger matrix; nothing below d = 16 or at the portable level.
func TestNewNormMatrix(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		var buf NormMatrix
		for _, d := range []int{8, 16, 17, 40, 128, 130, 33} {
			m := make([]float64, d*d)
			for i := range m {
				m[i] = float64(i)*0.25 - 7 // exact in float32
			}
			buf = NewNormMatrix(m, d, buf)
			if lanes == 0 || d < normRowsMinDim {
				if buf.Ready() {
					t.Errorf("d = %d: a matrix where NormTrain reads M itself", d)
				}
				continue
			}
			if buf.d != d || len(buf.mt) != d*d {
				t.Fatalf("d = %d: a matrix of d %d and %d entries", d, buf.d, len(buf.mt))
			}
			for k := range d {
				for l := range d {
					if got, want := buf.mt[l*d+k], float32(m[k*d+l]); got != want {
						t.Fatalf("d = %d: Mᵀ[%d][%d] = %v, want M[%d][%d] = %v", d, l, k, got, k, l, want)
					}
				}
			}
		}
	})
}

// BenchmarkNewNormMatrix is the single-norm's float32 Mᵀ at d = 128, made
// after every training step (geometry.Norm.SetParams).
func BenchmarkNewNormMatrix(b *testing.B) {
	const d = 128
	m := make([]float64, d*d)
	for i := range m {
		m[i] = float64(i % 97)
	}
	var buf NormMatrix
	for b.Loop() {
		buf = NewNormMatrix(m, d, buf)
	}
}
