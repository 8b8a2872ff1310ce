package eval

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/retrieve"
)

// bruteTopK is TopKBaseline computed by hand: every distance of every
// item, by g, without retrieve's kernels.
func bruteTopK(g geometry.Geometry, s *conformal.Set, units [][2]int, cal, test *bundle.Bundle, rows []float32, n int) (k int, coverage float64) {
	d := cal.D
	items := len(rows) / d
	dist := func(a []float32) []float64 {
		diffs := make([]float32, items*d)
		for r := range items {
			for j := range d {
				diffs[r*d+j] = a[j] - rows[r*d+j]
			}
		}
		return g.Scores(nil, diffs)
	}
	score := func(a, p []float32) float64 {
		diff := make([]float32, d)
		for j := range d {
			diff[j] = a[j] - p[j]
		}
		return g.Scores(nil, diff)[0]
	}
	var ranks []int
	for _, u := range units {
		sp := score(cal.Anchor(u[0]), cal.Positive(u[0], u[1]))
		r := 1
		for _, v := range dist(cal.Anchor(u[0])) {
			if v < sp {
				r++
			}
		}
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	k = ranks[s.Calibration.Rank-1]
	covered := 0
	for i := range n {
		all := dist(test.Anchor(i))
		for j := range test.K {
			sp := score(test.Anchor(i), test.Positive(i, j))
			closer := 0
			for _, v := range all {
				if v < sp {
					closer++
				}
			}
			if closer < k {
				covered++
			}
		}
	}
	return min(k, items), float64(covered) / float64(n*test.K)
}

// TestTopKBaseline: k̂ and the coverage equal a computation by hand over
// every item, for the set's distance and the Euclidean one, a ball, an
// ellipsoid and a generalized ball, marginal (in memory) and PAC (as
// another store), on a collection past the compact copies' minimum; and the set's coverage of the same
// positives is its own membership test's.
func TestTopKBaseline(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 70))
	const d, items = 3, 5000 // past retrieve.HalfMinRows
	cal, test := gaussBundle(rng, 80, 2, d), gaussBundle(rng, 40, 3, d)
	rows, c := gaussItems(t, rng, items, d, 1.5)
	el, _ := geometry.NewEllipsoid(d, []float64{2, 0.3, 0, 0.3, 1, 0.2, 0, 0.2, 0.5})
	gb, _ := geometry.NewGenBall([]float64{0.5, 2, 1}, []float64{1.2, 3, 2})
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, el, gb} {
		for _, opt := range []conformal.Options{{Seed: 3}, {Mode: conformal.PAC, Delta: 0.1}} {
			set, err := conformal.Calibrate(g, cal, 0.1, opt)
			if err != nil {
				t.Fatal(err)
			}
			units := conformal.UnitPairs(cal, set.Calibration.Mode, set.Calibration.Seed)
			for _, tc := range []struct {
				distance string
				g        geometry.Geometry
			}{{DistanceSet, g}, {DistanceL2, geometry.Ball{D: d}}} {
				var store retrieve.Store = c
				if opt.Mode == conformal.PAC { // a store that is not in memory: a search a rank
					store = hiddenStore{c}
				}
				got, err := TopKBaseline(context.Background(), set, tc.distance, cal, test, store, 30, nil)
				if err != nil {
					t.Fatal(err)
				}
				k, cov := bruteTopK(tc.g, set, units, cal, test, rows, 30)
				if got.K != k || got.Coverage != cov || got.Anchors != 30 || got.Positives != 90 || got.N != cal.N || got.Rank != set.Calibration.Rank || got.Whole {
					t.Errorf("%v %v, %s: %+v; by hand k=%d, coverage %v", g.Kind(), opt.Mode, tc.distance, got, k, cov)
				}
				in := 0
				for i := range 30 {
					m, err := set.Members(nil, test.Anchor(i), test.Positives[i*3*d:(i+1)*3*d], nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, ok := range m {
						if ok {
							in++
						}
					}
				}
				if want := float64(in) / 90; got.SetCoverage != want {
					t.Errorf("%v %v, %s: set coverage %v, its members %v", g.Kind(), opt.Mode, tc.distance, got.SetCoverage, want)
				}
			}
		}
	}
}

// TestTopKCoverage: over 300 seeded draws of 60 calibration and 100 test
// anchors (positives at one standard deviation from their anchor, a
// collection of 500 items), the certified top-k̂ covers 1−α of the test
// positives on average, within 3 standard errors, and ⌈(n+1)(1−α)⌉ − 1
// would not: the rank is the guarantee's, not a looser one.
func TestTopKCoverage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 110))
	const d, items, draws, alpha = 2, 500, 300, 0.1
	_, c := gaussItems(t, rng, items, d, 1)
	var sum, sumSq float64
	for range draws {
		cal, test := gaussBundle(rng, 60, 1, d), gaussBundle(rng, 100, 1, d)
		set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, alpha, conformal.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		r, err := TopKBaseline(context.Background(), set, DistanceSet, cal, test, c, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum += r.Coverage
		sumSq += r.Coverage * r.Coverage
	}
	mean := sum / draws
	se := math.Sqrt((sumSq/draws - mean*mean) / draws)
	// The 55th of 60 ranks covers 55/61 = 0.9016 of exchangeable
	// positives on average; the 54th, 0.885.
	t.Logf("mean coverage %.4f ± %.4f over %d draws", mean, se, draws)
	if mean < 1-alpha-3*se || mean > 55.0/61+1.0/61+3*se {
		t.Errorf("mean coverage %.4f ± %.4f over %d draws: want ≥ %.2f", mean, se, draws, 1-alpha)
	}
}

// TestTopKRefuses: what TopKBaseline cannot compare is refused, naming
// why.
func TestTopKRefuses(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(12, 120))
	const d = 3
	cal, other, test := gaussBundle(rng, 50, 1, d), gaussBundle(rng, 50, 1, d), gaussBundle(rng, 10, 1, d)
	rows := make([]float32, 100*d)
	c, _ := retrieve.NewCollection(rows, d, nil)
	c4, _ := retrieve.NewCollection(make([]float32, 100*4), 4, nil)
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	noDigest := *set
	noDigest.Calibration.Anchors = ""
	pooled, _ := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{Mode: conformal.Pooled})
	for _, tc := range []struct {
		name     string
		set      *conformal.Set
		distance string
		cal      *bundle.Bundle
		store    retrieve.Store
		want     string
	}{
		{"no calibration split", &noDigest, DistanceSet, cal, c, "records no calibration split"},
		{"another split", set, DistanceSet, other, c, "not the split the set was calibrated on"},
		{"collection's dimension", set, DistanceSet, cal, c4, "the collection has dimension 4, the set 3"},
		{"pooled", pooled, DistanceSet, cal, c, "pooled calibration has no guarantee"},
		{"distance", set, "cosine", cal, c, `distance "cosine"`},
	} {
		_, err := TopKBaseline(context.Background(), tc.set, tc.distance, tc.cal, test, tc.store, 0, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if _, err := TopKBaseline(context.Background(), &noDigest, DistanceSet, cal, test, c, 0, nil); !errors.Is(err, ErrNoCalibrationSplit) {
		t.Errorf("no calibration split: %v; want ErrNoCalibrationSplit", err)
	}
}

// TestTopKTies: on a lattice every distance ties with many others, so
// positives fall exactly at the k̂-th nearest item's distance and on items
// themselves; a positive's rank counts only the items strictly nearer
// (1 + #{dist < dist(a, p)}), so one tied with the k̂-th item is covered.
// k̂ and the coverage equal the computation by hand, in memory (past the
// compact copies' minimum, and transformed for the ellipsoid) and as
// another store.
func TestTopKTies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 130))
	const d, side = 2, 71 // 5 041 items, past retrieve.HalfMinRows
	rows := make([]float32, 0, side*side*d)
	for x := range side {
		for y := range side {
			rows = append(rows, float32(x), float32(y))
		}
	}
	c, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	lattice := func(n, k int) *bundle.Bundle {
		b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d)}
		for i := range n {
			for j := range d {
				a := float32(10 + rng.IntN(side-20))
				b.Anchors[i*d+j] = a
				for p := range k {
					b.Positives[(i*k+p)*d+j] = a + float32(rng.IntN(13)-6)
				}
			}
		}
		return b
	}
	cal, test := lattice(80, 2), lattice(40, 3)
	el, err := geometry.NewEllipsoid(d, []float64{2, 1, 1, 2}) // integer scores² on the lattice: exact
	if err != nil {
		t.Fatal(err)
	}
	ties := 0
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, el} {
		set, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		units := conformal.UnitPairs(cal, set.Calibration.Mode, set.Calibration.Seed)
		k, cov := bruteTopK(g, set, units, cal, test, rows, test.N)
		// How many test positives sit exactly at their anchor's k̂-th
		// item's distance: the boundary this test is about.
		for i := range test.N {
			var dist []float64
			for r := range side * side {
				dist = append(dist, g.Scores(nil, []float32{test.Anchor(i)[0] - rows[2*r], test.Anchor(i)[1] - rows[2*r+1]})[0])
			}
			slices.Sort(dist)
			for j := range test.K {
				p := test.Positive(i, j)
				if g.Scores(nil, []float32{test.Anchor(i)[0] - p[0], test.Anchor(i)[1] - p[1]})[0] == dist[k-1] {
					ties++
				}
			}
		}
		for _, store := range []retrieve.Store{c, hiddenStore{c}} {
			got, err := TopKBaseline(context.Background(), set, DistanceSet, cal, test, store, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.K != k || got.Coverage != cov {
				t.Errorf("%v, %T: k̂ %d, coverage %v; by hand %d, %v", g.Kind(), store, got.K, got.Coverage, k, cov)
			}
		}
	}
	if ties == 0 {
		t.Fatal("no test positive ties with its anchor's k̂-th item: the boundary is not exercised")
	}
	t.Logf("%d test positives at exactly their anchor's k̂-th item's distance", ties)
}

// TestTopKBaselines: both distances measured at once are, in the order
// asked, what each measured alone is; progress ends at the total of both,
// never past it; a distance that is none, or none at all, is refused.
// ("Alone" is TopKBaselines of one distance: this holds the distances
// apart; TestTopKBaseline checks k̂ and the coverage against bruteTopK.)
func TestTopKBaselines(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 130))
	const d = 3
	cal, test := gaussBundle(rng, 80, 2, d), gaussBundle(rng, 40, 3, d)
	_, c := gaussItems(t, rng, 2000, d, 1.5)
	el, _ := geometry.NewEllipsoid(d, []float64{2, 0.3, 0, 0.3, 1, 0.2, 0, 0.2, 0.5})
	set, err := conformal.Calibrate(el, cal, 0.1, conformal.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, distances := range [][]string{{DistanceSet, DistanceL2}, {DistanceL2, DistanceSet}} {
		var calls, last, total int
		got, err := TopKBaselines(ctx, set, distances, cal, test, c, 30, func(done, all int) {
			if done > all || (total != 0 && all != total) {
				t.Errorf("%v: progress %d of %d (before: of %d)", distances, done, all, total)
			}
			calls, last, total = calls+1, done, all
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || last != total || calls < 2 {
			t.Fatalf("%v: %d baselines, progress %d of %d in %d calls", distances, len(got), last, total, calls)
		}
		for i, dist := range distances {
			alone, err := TopKBaseline(ctx, set, dist, cal, test, c, 30, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got[i] != alone {
				t.Errorf("%v: %s with the other %+v, alone %+v", distances, dist, got[i], alone)
			}
		}
	}
	for _, distances := range [][]string{nil, {DistanceSet, "cosine"}} {
		if _, err := TopKBaselines(ctx, set, distances, cal, test, c, 30, nil); err == nil {
			t.Errorf("%q: no error", distances)
		}
	}
}

// BenchmarkTopKBaselines: both baselines of an ellipsoid set of d=64 (ccs
// evaluate -baseline topk,topk-l2), measured one distance a call
// (separate) and together (shared: one digest, one check of the units,
// the set's scores of the test positives once).
func BenchmarkTopKBaselines(b *testing.B) {
	rng := rand.New(rand.NewPCG(14, 140))
	const d = 64
	cal, test := gaussBundle(rng, 2000, 1, d), gaussBundle(rng, 1000, 50, d)
	_, c := gaussItems(b, rng, 2000, d, 1.5)
	sigma := make([]float64, d*d)
	for i := range d {
		sigma[i*d+i] = 1 + float64(i%4)
	}
	el, err := geometry.NewEllipsoid(d, sigma)
	if err != nil {
		b.Fatal(err)
	}
	set, err := conformal.Calibrate(el, cal, 0.1, conformal.Options{Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	both := []string{DistanceSet, DistanceL2}
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			for _, dist := range both {
				if _, err := TopKBaseline(ctx, set, dist, cal, test, c, 0, nil); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("shared", func(b *testing.B) {
		for b.Loop() {
			if _, err := TopKBaselines(ctx, set, both, cal, test, c, 0, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
