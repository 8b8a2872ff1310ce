package conformal

import (
	"math/rand/v2"
	"testing"
)

var sinkF float64

// benchThreshold times Threshold on n exponential scores (a fresh copy each
// iteration, since selection reorders its input; the copy is timed too).
func benchThreshold(b *testing.B, n int) {
	rng := rand.New(rand.NewPCG(1, 1))
	src := make([]float64, n)
	for i := range src {
		src[i] = rng.ExpFloat64()
	}
	x := make([]float64, n)
	b.ResetTimer()
	for b.Loop() {
		copy(x, src)
		q, err := Threshold(x, 0.05)
		if err != nil {
			b.Fatal(err)
		}
		sinkF = q
	}
}

func BenchmarkThreshold1e3(b *testing.B) { benchThreshold(b, 1_000) }
func BenchmarkThreshold1e5(b *testing.B) { benchThreshold(b, 100_000) }
func BenchmarkThreshold1e7(b *testing.B) { benchThreshold(b, 10_000_000) }
