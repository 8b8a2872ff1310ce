package baseline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// BenchmarkCovariance: Σ of a label-made fit split's differences (pool
// positives gathered by index, as ccs bundle makes them), n anchors, k = 20.
// Compare -cpu 1,2 for the serial share.
func BenchmarkCovariance(b *testing.B) {
	for _, c := range []struct{ n, d int }{{10000, 128}, {10000, 768}} {
		rng := rand.New(rand.NewPCG(5, 5))
		const classes = 50
		points, labels := make([]float32, c.n*c.d), make([]int64, c.n)
		for i := range points {
			points[i] = float32(rng.NormFloat64())
		}
		idx := make([]int, c.n)
		for i := range labels {
			labels[i] = int64(i % classes)
			idx[i] = i
		}
		bb, err := bundle.FromLabels(points, c.d, labels, idx, 20, rng)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d/d=%d", c.n, c.d), func(b *testing.B) {
			for range b.N {
				if _, _, err := Covariance(context.Background(), bb, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
