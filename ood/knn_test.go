package ood

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/ccsets/ccs/internal/parallel"
)

// TestKthBruteForce: the blocked index agrees with sorting all distances,
// with and without leaving each row's own entry out, across block edges.
func TestKthBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const d = 5
	for _, tc := range []struct{ n, m, k int }{{1, 3, 1}, {7, 5, 3}, {2500, 130, 50}} {
		ref := randRows(rng, tc.n, d)
		queries := randRows(rng, tc.m, d)
		x := newIndex(ref, d)
		got := x.kth(queries, tc.k, false, nil)
		for i := range tc.m {
			want := bruteKth(ref, queries[i*d:(i+1)*d], d, tc.k, -1)
			if math.Abs(got[i]-want) > 1e-9 {
				t.Fatalf("n=%d k=%d query %d: %v, brute force %v", tc.n, tc.k, i, got[i], want)
			}
		}
		if tc.n > tc.k {
			self := x.kth(ref, tc.k, true, nil)
			for i := 0; i < tc.n; i += 97 {
				want := bruteKth(ref, ref[i*d:(i+1)*d], d, tc.k, i)
				if math.Abs(self[i]-want) > 1e-9 {
					t.Fatalf("self n=%d k=%d row %d: %v, brute force %v", tc.n, tc.k, i, self[i], want)
				}
			}
		}
	}
	// k = 1 on a tiny set by hand: the nearest of 0, 3, 10 to 4 is 3.
	x := newIndex([]float64{0, 3, 10}, 1)
	if got := x.kth([]float64{4, -2}, 1, false, nil); got[0] != 1 || got[1] != 2 {
		t.Errorf("k=1: %v, want [1 2]", got)
	}
	if got := x.kth([]float64{4}, 4, false, nil); !math.IsNaN(got[0]) {
		t.Errorf("k beyond the reference rows: %v, want NaN", got)
	}
}

func TestKthDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ref, q := randRows(rng, 3000, 16), randRows(rng, 300, 16)
	var first []float64
	for _, p := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(p)
		got := newIndex(ref, 16).kth(q, 10, false, nil)
		runtime.GOMAXPROCS(old)
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Fatalf("GOMAXPROCS %d changed the distances", p)
		}
	}
}

func randRows(rng *rand.Rand, n, d int) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

func bruteKth(ref, q []float64, d, k, skip int) float64 {
	var all []float64
	for r := range len(ref) / d {
		if r == skip {
			continue
		}
		var s float64
		for j := range d {
			v := q[j] - ref[r*d+j]
			s += v * v
		}
		all = append(all, math.Sqrt(s))
	}
	slices.Sort(all)
	return all[k-1]
}

// TestKthNearTies: rows whose distances to the query differ by less than
// the float32 screen can tell apart (a cluster of rows 1e-6 apart, far from
// the origin) still give the float64 brute force's k-th distance, because
// the screen keeps every row within its error bound for the exact pass.
func TestKthNearTies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	const d, n = 24, 3000
	base := randRows(rng, 1, d)
	ref := make([]float64, n*d)
	for i := range n {
		for j := range d {
			ref[i*d+j] = 30*base[j] + 1e-6*rng.NormFloat64()
		}
	}
	queries := randRows(rng, 40, d)
	for i := range queries {
		queries[i] += 30 * base[i%d]
	}
	x := newIndex(ref, d)
	for _, k := range []int{1, 50, 700} {
		got := x.kth(queries, k, false, nil)
		for i := range 40 {
			if want := bruteKth(ref, queries[i*d:(i+1)*d], d, k, -1); math.Abs(got[i]-want) > 1e-9*want {
				t.Fatalf("k=%d query %d: %v, brute force %v", k, i, got[i], want)
			}
		}
	}
	// Queries inside the cloud too (a collapsed head's projections: rows
	// and queries 10⁻³ apart, 30 from the origin), where the screen works
	// on the rows less their mean.
	for i := range ref {
		ref[i] = 30*base[i%d] + 1e-3*rng.NormFloat64()
	}
	for i := range queries {
		queries[i] = 30*base[i%d] + 1e-3*rng.NormFloat64()
	}
	x = newIndex(ref, d)
	for _, k := range []int{1, 50} {
		got := x.kth(queries, k, false, nil)
		for i := range 40 {
			if want := bruteKth(ref, queries[i*d:(i+1)*d], d, k, -1); math.Abs(got[i]-want) > 1e-9*want {
				t.Fatalf("inside the cloud, k=%d query %d: %v, brute force %v", k, i, got[i], want)
			}
		}
	}
}

// TestKthProgress: progress hears every query once, in blocks, up to the
// total.
func TestKthProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	ref, q := randRows(rng, 500, 8), randRows(rng, 1000, 8)
	last, calls := 0, 0
	newIndex(ref, 8).kth(q, 5, false, func(done, total int) {
		if total != 1000 || done <= last || done > total {
			t.Errorf("progress %d of %d after %d", done, total, last)
		}
		last, calls = done, calls+1
	})
	if last != 1000 || calls != parallel.Chunks(1000, queryBlock) {
		t.Errorf("progress ended at %d after %d calls", last, calls)
	}
}

// kth is kthContext without a context, as the tests call it.
func (x *index) kth(queries []float64, k int, self bool, progress func(done, total int)) []float64 {
	out, _ := x.kthContext(context.Background(), queries, k, self, progress)
	return out
}
