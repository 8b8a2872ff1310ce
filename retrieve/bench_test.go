package retrieve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"gonum.org/v1/gonum/mat"
)

// BenchmarkSearch is one query over 10⁶ items at d = 128 (-short: 10⁵),
// per geometry; the thresholds keep about 0.1% of the items. The
// ball screens the collection's half-precision copy first, the
// generalized ball its 8-bit copy (each made once before the timings,
// its time logged). The
// single-norm and the ellipsoid run twice each: plain (d² per item), then
// transformed (Transform, once; its time is logged).
func BenchmarkSearch(b *testing.B) {
	const d = 128
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	rng := rand.New(rand.NewPCG(1, 1))
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	c, _ := NewCollection(rows, d, nil)
	start := time.Now()
	c.PrepareHalf() // made by the second search; made here, outside the timings
	b.Logf("half-precision copy of %d items: %v, %d MiB", n, time.Since(start), HalfBytes(n, d)>>20)
	start = time.Now()
	c.PrepareBytes()
	b.Logf("8-bit copy of %d items: %v, %d MiB", n, time.Since(start), ByteBytes(n, d)>>20)
	anchor := make([]float32, d)
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = 0.5+rng.Float64(), 1.5+rng.Float64()
	}
	gb, _ := geometry.NewGenBall(m, p)
	mm := make([]float64, d*d)
	for i := range mm {
		mm[i] = 0.05 * rng.NormFloat64()
	}
	for j := range d {
		mm[j*d+j] += 1
	}
	nm, _ := geometry.NewNorm(d, mm, 2)
	sigma := make([]float64, d*d) // (M·Mᵀ)⁻¹: the ellipsoid the single-norm's M whitens
	{
		var mt, s mat.Dense
		mt.Mul(mat.NewDense(d, d, mm), mat.NewDense(d, d, mm).T())
		if err := s.Inverse(&mt); err != nil {
			b.Fatal(err)
		}
		for i := range d {
			for j := range d {
				sigma[i*d+j] = (s.At(i, j) + s.At(j, i)) / 2
			}
		}
	}
	el, err := geometry.NewEllipsoid(d, sigma)
	if err != nil {
		b.Fatal(err)
	}
	var sets []*conformal.Set
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, gb, nm, el} {
		// The threshold: the 0.1% quantile of the scores of 10⁴ items.
		sc := g.Scores(make([]float64, 10000), rows[:10000*d])
		q := quantile(sc, 0.001)
		sets = append(sets, &conformal.Set{Geometry: g, Threshold: q, Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 100, Rank: 96}})
	}
	// The compact copies made first: a search starts them in the
	// background, which would fall in the first runs' times.
	c.PrepareHalf()
	c.PrepareBytes()
	for _, s := range []*conformal.Set{sets[0], sets[1], sets[2], sets[2], sets[3], sets[3]} {
		g := s.Geometry
		name := g.Kind().String()
		if ok := Transformable(g); ok && !c.Transformed(s) {
			name += "/plain"
		} else if ok {
			name += "/transformed"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := Search(context.Background(), s, anchor, c, 100); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
		if Transformable(g) && !c.Transformed(s) {
			// The next run: the same set on the collection transformed once.
			start := time.Now()
			if err := c.Transform(s, 0); err != nil {
				b.Fatal(err)
			}
			b.Logf("transform of %d items: %v, %d MiB", n, time.Since(start), TransformBytes(n, d)>>20)
		}
	}
}

func quantile(x []float64, q float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	return y[int(q*float64(len(y)))]
}

// BenchmarkWideSets is searches whose sets hold 80% of 20 000 items at d =
// 128 (an ellipsoid of condition number 100), on the collection
// transformed for it: 64 anchors' SearchBatch with every hit (each item
// inside scored exactly, O(d²)), with the nearest 10 (only the items the
// transformed rows' bounds cannot place behind 10 others scored) and
// their counts alone (CountBatch: the items surely inside not scored);
// and one anchor's Search, every hit and the nearest 10.
func BenchmarkWideSets(b *testing.B) {
	const n, d, m = 20000, 128, 64
	rng := rand.New(rand.NewPCG(3, 3))
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	anchors := slices.Clone(rows[:m*d])
	el, err := geometry.NewEllipsoid(d, covariance(rng, d, 2))
	if err != nil {
		b.Fatal(err)
	}
	diffs := diffsFrom(anchors[:d], rows, d)
	s := &conformal.Set{Geometry: el, Threshold: quantile(el.Scores(nil, diffs), 0.8), Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 100, Rank: 96}}
	c, _ := NewCollection(rows, d, nil)
	if err := c.Transform(s, 0); err != nil {
		b.Fatal(err)
	}
	c.PrepareHalf()
	for _, limit := range []int{0, 10} {
		b.Run(fmt.Sprintf("SearchBatch/limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := SearchBatch(context.Background(), s, anchors, c, limit, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("CountBatch", func(b *testing.B) {
		for b.Loop() {
			if _, err := CountBatch(context.Background(), s, anchors, c, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, limit := range []int{0, 10} {
		b.Run(fmt.Sprintf("Search/limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := Search(context.Background(), s, anchors[:d], c, limit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCountWithin is a certified top-k's ranks (eval.TopKBaseline):
// 1 000 anchors, each its own threshold (its positive's score: the
// anchor is its positive, an item, moved by a little noise), over 10⁴
// items at d = 384 (-short: 128), a single-norm set, the collection
// transformed for it once before the timings. Every anchor's probe asks
// whether the transform still fits the set's geometry.
func BenchmarkCountWithin(b *testing.B) {
	d, n, m := 384, 10_000, 1000
	if testing.Short() {
		d = 128
	}
	rng := rand.New(rand.NewPCG(5, 5))
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	mm := make([]float64, d*d)
	for i := range mm {
		mm[i] = 0.05 * rng.NormFloat64()
	}
	for j := range d {
		mm[j*d+j] += 1
	}
	g, err := geometry.NewNorm(d, mm, 2)
	if err != nil {
		b.Fatal(err)
	}
	anchors := make([]float32, m*d)
	for i := range anchors {
		anchors[i] = rows[i] + float32(0.3*rng.NormFloat64())
	}
	diffs := make([]float32, m*d)
	for i := range diffs {
		diffs[i] = anchors[i] - rows[i]
	}
	thresholds := g.Scores(make([]float64, m), diffs)
	s := &conformal.Set{Geometry: g, Threshold: quantile(thresholds, 0.5), Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 100, Rank: 96}}
	c, _ := NewCollection(rows, d, nil)
	if err := c.Transform(s, 0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CountWithin(context.Background(), s, anchors, thresholds, c, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeadSets is the sets behind a head (the InfoNCE rows: a
// generalized ball and a single-norm, each scored through a square head W
// near the identity) over 20 000 unit-norm items at d = 384, as compare's
// Size column and ccs evaluate -db count them: 64 anchors' CountBatch, and
// one anchor's Search with every hit; each threshold keeps about 5% of
// the items. Each set runs plain (every item through W, O(d²) an item),
// then on the collection transformed for it once (its time logged).
func BenchmarkHeadSets(b *testing.B) {
	const n, d, m = 20000, 384, 16
	rng := rand.New(rand.NewPCG(9, 9))
	rows := unitRows(rng, n, d)
	anchors := make([]float32, m*d)
	for i := range anchors {
		anchors[i] = rows[i] + float32(0.02*rng.NormFloat64())
	}
	w := make([]float64, d*d)
	for i := range w {
		w[i] = 0.3 / math.Sqrt(d) * rng.NormFloat64()
	}
	for k := range d {
		w[k*d+k] += 1
	}
	gm, gp := make([]float64, d), make([]float64, d)
	for j := range d {
		gm[j], gp[j] = 0.5+rng.Float64(), 1.5+rng.Float64()
	}
	gb, _ := geometry.NewGenBall(gm, gp)
	nm, _ := geometry.NewNorm(d, nearIdentity(rng, d), 2)
	diffs := diffsFrom(anchors[:d], rows, d)
	for _, inner := range []geometry.Geometry{gb, nm} {
		h := &head.Linear{In: d, Out: d, W: slices.Clone(w), B: make([]float64, d)}
		g, err := head.NewProjected(h, inner)
		if err != nil {
			b.Fatal(err)
		}
		s := &conformal.Set{Geometry: g, Threshold: quantile(g.Scores(nil, diffs), 0.05), Alpha: 0.05, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 100, Rank: 96}}
		c, _ := NewCollection(rows, d, nil)
		for _, transformed := range []bool{false, true} {
			if transformed {
				start := time.Now()
				if err := c.Transform(s, 0); err != nil {
					b.Logf("%v: %v", g.Kind(), err)
					continue
				}
				b.Logf("%v: transform of %d items: %v", g.Kind(), n, time.Since(start))
			}
			name := g.Kind().String() + map[bool]string{false: "/plain", true: "/transformed"}[transformed]
			b.Run(name+"/CountBatch", func(b *testing.B) {
				for b.Loop() {
					if _, err := CountBatch(context.Background(), s, anchors, c, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/Search", func(b *testing.B) {
				for b.Loop() {
					if _, _, err := Search(context.Background(), s, anchors[:d], c, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// unitRows is n Gaussian rows of dimension d scaled to unit norm.
func unitRows(rng *rand.Rand, n, d int) []float32 {
	rows := make([]float32, n*d)
	for i := range n {
		var s float64
		r := make([]float64, d)
		for j := range r {
			r[j] = rng.NormFloat64()
			s += r[j] * r[j]
		}
		for j, v := range r {
			rows[i*d+j] = float32(v / math.Sqrt(s))
		}
	}
	return rows
}

// diffsFrom is anchor − row for each row of rows (of d values).
func diffsFrom(anchor, rows []float32, d int) []float32 {
	diffs := make([]float32, len(rows))
	for i := range len(rows) / d {
		for j := range d {
			diffs[i*d+j] = anchor[j] - rows[i*d+j]
		}
	}
	return diffs
}
