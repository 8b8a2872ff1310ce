package ood

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/race"
)

// testGeometries are one set of each family (and one behind a head) in d
// dimensions, with parameters away from the ℓ2 ball.
func testGeometries(t *testing.T, rng *rand.Rand, d int) []geometry.Geometry {
	t.Helper()
	m := make([]float64, d*d)
	sigma := make([]float64, d*d)
	for i := range d {
		for j := range d {
			m[i*d+j] = 0.3 * rng.NormFloat64()
		}
		m[i*d+i] += 1
	}
	for i := range d { // Σ = MMᵀ + I
		for j := range d {
			var s float64
			for l := range d {
				s += m[i*d+l] * m[j*d+l]
			}
			sigma[i*d+j] = s
		}
		sigma[i*d+i] += 1
	}
	scales, exps := make([]float64, d), make([]float64, d)
	for j := range d {
		scales[j], exps[j] = math.Exp(rng.NormFloat64()), 0.3+3*rng.Float64()
	}
	ell, err := geometry.NewEllipsoid(d, sigma)
	if err != nil {
		t.Fatal(err)
	}
	n2, _ := geometry.NewNorm(d, m, 2)
	n07, _ := geometry.NewNorm(d, m, 0.7)
	n35, _ := geometry.NewNorm(d, m, 3.5)
	gb, _ := geometry.NewGenBall(scales, exps)
	h := head.Identity(d, d-1)
	for i := range h.W {
		h.W[i] += 0.2 * rng.NormFloat64()
	}
	mi := make([]float64, (d-1)*(d-1))
	for i := range d - 1 {
		mi[i*(d-1)+i] = 1 + 0.5*rng.Float64()
	}
	inner, err := geometry.NewNorm(d-1, mi, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := head.NewProjected(h, inner)
	if err != nil {
		t.Fatal(err)
	}
	projGB, err := head.NewProjected(h, geometry.UnitGenBall(d-1, 1.3))
	if err != nil {
		t.Fatal(err)
	}
	return []geometry.Geometry{geometry.Ball{D: d}, ell, n2, n07, n35, gb, proj, projGB}
}

// brutePoolKth is the k-th smallest φ(a_i − x) by scoring every pool row.
func brutePoolKth(g geometry.Geometry, pool, x []float32, k int) float64 {
	d := g.Dim()
	n := len(pool) / d
	diffs := make([]float32, n*d)
	for i := range n {
		for j := range d {
			diffs[i*d+j] = pool[i*d+j] - x[j]
		}
	}
	s := g.Scores(nil, diffs)
	slices.Sort(s)
	return s[k-1]
}

// TestPoolExact: the pool's k-th nearest scores are the brute force's to
// the bit, for every family and behind a head, for k = 1, 3 and 20, with
// duplicate pool rows, a query on a pool row (score 0), a query a
// subnormal difference away from a pool row (a term the float32 screens
// cannot hold), one query against a pool large enough to be split over
// cores, and many queries at once; d = 6 and 40 (the vector screens' tails
// and whole vectors), and at d = 40 and 80 coordinates of spreads from 0.1
// to 10 (the scans take them in an order of their own).
func TestPoolExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(71, 71))
	cases := []struct {
		d, n    int
		spread  bool
		offset  float64
		cluster bool
	}{{6, 50, false, 0, false}, {6, 3000, false, 0, true}, {40, 700, false, 0, true}, {40, 700, true, 0, false},
		{80, 400, true, 0, false}, {6, 400, false, 300, false}, {40, 300, false, 300, false}}
	if race.Enabled {
		// The pool's concurrency in two cases (a cluster of near ties, rows
		// far from 0); the rest are numbers, checked without the race
		// detector (57 s under it).
		cases = append(cases[1:2:2], cases[5])
	}
	for _, c := range cases {
		d, n := c.d, c.n
		scale := make([]float64, d)
		for j := range scale {
			scale[j] = 1
			if c.spread {
				scale[j] = math.Pow(10, 2*rng.Float64()-1)
			}
		}
		// With an offset the rows sit far from 0 and close to each other
		// (spread 10⁻³ a coordinate): T·a_i rounded to float32 is then off by
		// a good part of the rows' differences.
		spread := 1.0
		if c.offset != 0 {
			spread = 1e-3
		}
		pool := make([]float32, n*d)
		for i := range pool {
			pool[i] = float32(c.offset + spread*scale[i%d]*rng.NormFloat64())
		}
		copy(pool[d:2*d], pool[:d]) // a duplicate row
		queries := make([]float32, 40*d)
		for i := range queries {
			queries[i] = float32(c.offset + 1.5*spread*rng.NormFloat64())
		}
		if c.cluster {
			// 20 pool rows and 10 queries within 10⁻⁵ of row 10: near ties
			// that T·a_i rounded to float32 cannot tell apart.
			for i := 11; i < 31; i++ {
				for j := range d {
					pool[i*d+j] = pool[10*d+j] + float32(1e-5*rng.NormFloat64())
				}
			}
			for q := 3; q < 13; q++ {
				for j := range d {
					queries[q*d+j] = pool[10*d+j] + float32(1e-5*rng.NormFloat64())
				}
			}
		}
		copy(queries[d:2*d], pool[5*d:6*d]) // a query on a pool row
		pool[7*d+1] = 1e-39
		copy(queries[2*d:3*d], pool[7*d:8*d]) // and one a subnormal away
		queries[2*d+1] = 3e-39
		for _, g := range testGeometries(t, rng, d) {
			p, err := NewPool(g, pool)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 3, 20} {
				many, err := p.Kth(nil, queries, k)
				if err != nil {
					t.Fatal(err)
				}
				for q := range len(queries) / d {
					x := queries[q*d : (q+1)*d]
					want := brutePoolKth(g, pool, x, k)
					one, err := p.Kth(nil, x, k)
					if err != nil {
						t.Fatal(err)
					}
					if many[q] != want || one[0] != want {
						t.Fatalf("%v n=%d k=%d query %d: %v (many), %v (one); brute force %v", geometry.Describe(g), n, k, q, many[q], one[0], want)
					}
				}
			}
		}
	}
}

// TestTermOrder: the scans take the coordinates in decreasing order of
// their mean term between pool rows: through the identity the coordinates
// of the larger spreads first, for the ball and for a generalized ball
// whose scales reverse that order.
func TestTermOrder(t *testing.T) {
	const d, n = 12, 400
	rng := rand.New(rand.NewPCG(5, 9))
	spread := []float64{3, 0.5, 8, 1, 0.1, 2, 5, 0.3, 4, 0.7, 6, 0.2}
	pool := make([]float32, n*d)
	for i := range pool {
		pool[i] = float32(spread[i%d] * rng.NormFloat64())
	}
	byDesc := func(w []float64) []int {
		perm := make([]int, d)
		for j := range perm {
			perm[j] = j
		}
		slices.SortFunc(perm, func(a, b int) int { return cmp.Compare(w[b], w[a]) })
		return perm
	}
	m, p := make([]float64, d), make([]float64, d)
	weight := make([]float64, d)
	for j := range d {
		m[j], p[j] = 1/(spread[j]*spread[j]), 1.5
		weight[j] = 1 / spread[j] // (m·spread)^p falls with the spread
	}
	gb, err := geometry.NewGenBall(m, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g    geometry.Geometry
		want []int
	}{{geometry.Ball{D: d}, byDesc(spread)}, {gb, byDesc(weight)}} {
		pl, err := NewPool(c.g, pool)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pl.perm, c.want) {
			t.Errorf("%v: order %v, want %v", geometry.Describe(c.g), pl.perm, c.want)
		}
	}
}

// TestPoolErrors: bad pools, queries and k are errors naming what is wrong.
func TestPoolErrors(t *testing.T) {
	t.Parallel()
	g := geometry.Ball{D: 2}
	for _, rows := range [][]float32{nil, {1, 2, 3}, {1, float32(math.NaN())}} {
		if _, err := NewPool(g, rows); err == nil {
			t.Errorf("pool %v: no error", rows)
		}
	}
	p, err := NewPool(g, []float32{0, 0, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q []float32
		k int
	}{{[]float32{0, 0}, 0}, {[]float32{0, 0}, 3}, {[]float32{0}, 1}, {[]float32{float32(math.Inf(1)), 0}, 1}} {
		if _, err := p.Kth(nil, c.q, c.k); err == nil {
			t.Errorf("query %v, k %d: no error", c.q, c.k)
		}
	}
}
