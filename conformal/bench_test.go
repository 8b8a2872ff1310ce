package conformal

import (
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
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

// BenchmarkMembershipGenBallD128 counts membership checks per second: 4096
// points against a calibrated generalized-ball set at d = 128 — "exact" scores
// each difference on one goroutine and compares with the threshold;
// "members" is Set.Members (the fast score on all cores, exact near q).
func BenchmarkMembershipGenBallD128(b *testing.B) {
	const n, d = 4096, 128
	rng := rand.New(rand.NewPCG(2, 2))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	s := &Set{Geometry: geometry.UnitGenBall(d, 1.5), Threshold: 150, Alpha: 0.05, Calibration: Info{Mode: OnePerAnchor}}
	zero := make([]float32, d)
	b.Run("exact", func(b *testing.B) {
		scores := make([]float64, n)
		inside := 0
		for b.Loop() {
			for _, v := range s.Geometry.Scores(scores, x) {
				if v <= s.Threshold {
					inside++
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "checks/s")
		sinkF = float64(inside)
	})
	b.Run("members", func(b *testing.B) {
		in := make([]bool, n)
		inside := 0
		for b.Loop() {
			in, _ = s.Members(in, zero, x, nil) // around the origin: the rows are −(anchor − point)
			for _, v := range in {
				if v {
					inside++
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "checks/s")
		sinkF = float64(inside)
	})
}

// BenchmarkSelect1e5 is one selection of the 95% rank among 10⁵ normal
// scores (a validation threshold's size).
func BenchmarkSelect1e5(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 100_000)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y := make([]float64, len(x))
	for b.Loop() {
		copy(y, x)
		Select(y, 95_000)
	}
}

// BenchmarkScoreUnits: 20 000 calibration units of d = 128 scored under
// two geometries, a ball and a diagonal ellipsoid (eval.TopKBaselines'
// topk and topk-l2): "each" builds the units' differences for each
// (ScoreUnits), "shared" once (UnitDiffs, then ScoreDiffs each).
func BenchmarkScoreUnits(b *testing.B) {
	const n, k, d = 20_000, 4, 128
	rng := rand.New(rand.NewPCG(5, 50))
	x := make([]float32, n*(k+1)*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	cal := &bundle.Bundle{N: n, K: k, D: d, Anchors: x[:n*d], Positives: x[n*d:]}
	units := UnitPairs(cal, OnePerAnchor, 1)
	sigma := make([]float64, d*d)
	for i := range d {
		sigma[i*d+i] = 1 + float64(i%4)
	}
	el, err := geometry.NewEllipsoid(d, sigma)
	if err != nil {
		b.Fatal(err)
	}
	geoms := []geometry.Geometry{geometry.Ball{D: d}, el}
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, g := range geoms {
				sinkF += ScoreUnits(g, cal, units)[0]
			}
		}
	})
	b.Run("shared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			diffs := UnitDiffs(cal, units)
			for _, g := range geoms {
				sinkF += ScoreDiffs(g, diffs)[0]
			}
		}
	})
}
