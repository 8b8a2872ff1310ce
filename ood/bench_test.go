package ood

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkKNN is the exact search at the size: 10 000 queries
// against 60 000 training features (the whole Fashion-MNIST training set)
// at d = 128, k = 50. -short runs a tenth of the queries.
func BenchmarkKNN(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const d, n = 128, 60000
	m := 10000
	if testing.Short() {
		m = 1000
	}
	ref, q := randRows(rng, n, d), randRows(rng, m, d)
	x := newIndex(ref, d)
	b.Run(fmt.Sprintf("n=%d/m=%d/d=%d", n, m, d), func(b *testing.B) {
		for b.Loop() {
			x.kth(q, 50, false)
		}
		b.ReportMetric(float64(n)*float64(m)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
	})
}
