package retrieve_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/sim"
)

// TestConcurrentUse: one calibrated set, one collection and one test
// bundle, used from many goroutines at once as a service uses them —
// Members, Search (whose second call starts the collection's compact copy
// in the background), Evaluate and the collection's Transform — give what
// one goroutine gets alone. Under the race detector (the suite's race
// phase) this is the library's promise that they are safe to share.
func TestConcurrentUse(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	const d = 16
	test := sim.Gauss(rng, 200, 4, d)
	rows := normalValues(rng, retrieve.HalfMinRows*d)
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	gb := randomGenBall(t, rng, d)
	info := conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 95}
	sets := []*conformal.Set{
		{Geometry: geometry.Ball{D: d}, Threshold: 5, Alpha: 0.05, Calibration: info},
		{Geometry: gb, Threshold: 40, Alpha: 0.05, Calibration: info},
		{Geometry: geometry.IdentityNorm(d, 2), Threshold: 5, Alpha: 0.05, Calibration: info},
	}
	type answer struct {
		in    []bool
		hits  []retrieve.Hit
		total int
		r     eval.Result
	}
	ask := func(s *conformal.Set, i int) (answer, error) {
		var a answer
		anchor := rows[i*d : (i+1)*d]
		var err error
		if a.in, err = s.Members(nil, anchor, rows[:512*d], nil); err != nil {
			return a, err
		}
		if a.hits, a.total, err = retrieve.Search(context.Background(), s, anchor, c, 50); err != nil {
			return a, err
		}
		a.r, err = eval.Evaluate(s, test)
		return a, err
	}
	want := make([][]answer, len(sets))
	for k, s := range sets {
		for i := range 4 {
			a, err := ask(s, i)
			if err != nil {
				t.Fatal(err)
			}
			if a.total == 0 || a.total == c.N || !slices.Contains(a.in, false) || !slices.Contains(a.in, true) {
				t.Fatalf("set %d, anchor %d: %d of %d items inside; the test decides nothing", k, i, a.total, c.N)
			}
			want[k] = append(want[k], a)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 12 {
		wg.Go(func() {
			k, i := g%len(sets), g%4
			if g%5 == 0 && retrieve.Transformable(sets[2].Geometry) {
				if err := c.Transform(sets[2], 0); err != nil { // the single-norm's, beside its searches
					errs <- err
					return
				}
			}
			for range 3 {
				a, err := ask(sets[k], i)
				if err != nil {
					errs <- err
					return
				}
				w := want[k][i]
				if !slices.Equal(a.in, w.in) || a.total != w.total || len(a.hits) != len(w.hits) || a.r != w.r {
					t.Errorf("set %d, anchor %d: %d hits of %d, result %+v; alone %d of %d, %+v", k, i, len(a.hits), a.total, a.r, len(w.hits), w.total, w.r)
					return
				}
				for h := range a.hits {
					if a.hits[h].Row != w.hits[h].Row {
						t.Errorf("set %d, anchor %d: hit %d is row %d, alone %d", k, i, h, a.hits[h].Row, w.hits[h].Row)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	retrieve.WaitCopies(c)
}

// normalValues is n standard normal values.
func normalValues(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// randomGenBall is a generalized ball of dimension d: radii drawn from
// [1, 2), every exponent 1.5.
func randomGenBall(t *testing.T, rng *rand.Rand, d int) *geometry.GenBall {
	t.Helper()
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = 1+rng.Float64(), 1.5
	}
	gb, err := geometry.NewGenBall(m, p)
	if err != nil {
		t.Fatal(err)
	}
	return gb
}
