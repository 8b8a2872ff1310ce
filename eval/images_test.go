package eval

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// labelBundle is n anchors of d coordinates in four classes, each with k
// positives of its class and k negatives of others, both as indices into
// the anchors (ccs bundle's from labels).
func labelBundle(rng *rand.Rand, n, d, k int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, KNeg: k, D: d, Anchors: make([]float32, n*d),
		PositiveIndex: make([]int64, n*k), NegativeIndex: make([]int64, n*k)}
	for i := range n {
		for j := range d {
			b.Anchors[i*d+j] = float32(float64(i%4) + rng.NormFloat64())
		}
	}
	for i := range n {
		for j := range k {
			for {
				r := rng.IntN(n)
				if r != i && r%4 == i%4 {
					b.PositiveIndex[i*k+j] = int64(r)
					break
				}
			}
			for {
				r := rng.IntN(n)
				if r%4 != i%4 {
					b.NegativeIndex[i*k+j] = int64(r)
					break
				}
			}
		}
	}
	return b
}

// TestImagedDecisions: a single-norm set's evaluation of a label bundle
// from its rows' images under M (each row transformed once) counts what
// the differences through M count, at every threshold — thresholds set at
// pairs' own scores (a tie at q: inside), between them and far off —, for
// p from 1 to 4, at dimensions below and above the BLAS path's.
func TestImagedDecisions(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 1))
	for trial := range 24 {
		d := []int{3, 8, 40, 96}[trial%4]
		p := 1 + 3*rng.Float64()
		if trial%3 == 0 {
			p = 2
		}
		m := make([]float64, d*d)
		for i := range m {
			m[i] = rng.NormFloat64() / float64(d)
		}
		for i := range d {
			m[i*d+i] += 1
		}
		g, err := geometry.NewNorm(d, m, p)
		if err != nil {
			t.Fatal(err)
		}
		b := labelBundle(rng, 200, d, 6)
		// Thresholds at pairs' exact scores, and between.
		all := make([]float64, 0, 2*b.N*b.K)
		for i := range b.N {
			diffs := b.PositiveDiffs(nil, i)
			all = append(all, g.Scores(nil, diffs)...)
			all = append(all, g.Scores(nil, b.NegativeDiffs(nil, i))...)
		}
		qs := []float64{all[0], all[17], all[len(all)/2], all[len(all)-1], 0.5 * (all[3] + all[4]), 1e-9, 1e9}
		if imaged(g, b, qs) == nil {
			t.Fatalf("trial %d: no imaged scores for a label bundle", trial)
		}
		got, err := evaluate(context.Background(), g, qs, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		per := streamed(b, decisive(g, qs))()
		for qi, q := range qs {
			in, out := 0, 0
			for i := range b.N {
				pos, neg := per(i)
				for _, v := range pos {
					if v <= q {
						in++
					}
				}
				for _, v := range neg {
					if v > q {
						out++
					}
				}
			}
			want := float64(in) / float64(b.N*b.K)
			if got[qi].Coverage != want || got[qi].Exclusion != float64(out)/float64(b.N*b.KNeg) {
				t.Errorf("trial %d (d = %d, p = %.3f), q = %v: coverage %v, exclusion %v; through M %v, %v",
					trial, d, p, q, got[qi].Coverage, got[qi].Exclusion, want, float64(out)/float64(b.N*b.KNeg))
			}
		}
	}
}

// BenchmarkEvaluateSingleNorm: a single-norm set's evaluation of a label
// bundle (2 000 anchors, k = kneg = 20, d = 256): through M a difference,
// or from the rows' images.
func BenchmarkEvaluateSingleNorm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 256
	m := make([]float64, d*d)
	for i := range m {
		m[i] = rng.NormFloat64() / d
	}
	g, err := geometry.NewNorm(d, m, 1.7)
	if err != nil {
		b.Fatal(err)
	}
	bu := labelBundle(rng, 2000, d, 20)
	qs := []float64{0.5}
	b.Run("through-M", func(b *testing.B) {
		for b.Loop() {
			per := streamed(bu, decisive(g, qs))()
			for i := range bu.N {
				per(i)
			}
		}
	})
	b.Run("images", func(b *testing.B) {
		for b.Loop() {
			per := imaged(g, bu, qs)()
			for i := range bu.N {
				per(i)
			}
		}
	})
}
