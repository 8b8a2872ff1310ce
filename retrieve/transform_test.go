package retrieve

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/race"
	"gonum.org/v1/gonum/mat"
)

// TestTransformMatchesScan: a single-norm search on a transformed
// collection returns exactly the plain scan's hits — ids, rows, scores to
// the bit, order and total — for p in {1, 1.5, 2, 3.7}, dimensions 3 to 64
// and items placed on the boundary (scores within 1e-7 of q on either
// side), where the float32 transform's rounding would decide wrongly
// without the margin.
//
// An ellipsoid (transformed by its whitening L⁻¹) does the same, for a
// well-conditioned Σ and one of condition number 10⁸, and its filter rules
// most items out before the exact score. So do items and anchor far from
// the origin (every coordinate offset by 1 000: M·item is then 10⁴ times
// the scores), which the transform computes in float64, rounded once,
// since the float32 products' rounding (d·2⁻²⁴ of that at worst) would
// leave the filter nothing to rule out; near the origin, from d = 16 on,
// the vector kernels compute it in float32. Under the race detector, a
// third of the cases (in turn): the concurrency is the same in each.
func TestTransformMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 5))
	cases, every := 0, 1
	if race.Enabled {
		every = 3
	}
	for _, c := range []struct {
		d      int
		offset float32
	}{{3, 0}, {17, 0}, {64, 0}, {17, 1000}, {64, 1000}} {
		d := c.d
		for _, p := range []float64{1, 1.5, 2, 3.7, 0, -8} { // 0, −8: ellipsoids of condition 10⁰…10⁸
			if cases++; cases%every != 0 {
				continue
			}
			m := nearIdentity(rng, d)
			var g geometry.Geometry
			var err error
			if p > 0 {
				g, err = geometry.NewNorm(d, m, p)
			} else {
				g, err = geometry.NewEllipsoid(d, covariance(rng, d, p))
			}
			if err != nil {
				t.Fatal(err)
			}
			const n = 6000
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(rng.NormFloat64())
			}
			anchor := make([]float32, d)
			for j := range anchor {
				anchor[j] = float32(0.3 * rng.NormFloat64())
			}
			for i := range rows {
				rows[i] += c.offset
			}
			for j := range anchor {
				anchor[j] += c.offset
			}
			// q at the 5% quantile of the scores; a fifth of the items then
			// moved onto the boundary.
			diff := make([]float32, d)
			score := func(i int) float64 {
				for j := range d {
					diff[j] = anchor[j] - rows[i*d+j]
				}
				return g.Scores(nil, diff)[0]
			}
			sc := make([]float64, n)
			for i := range n {
				sc[i] = score(i)
			}
			sorted := slices.Clone(sc)
			slices.Sort(sorted)
			q := sorted[n/20]
			for i := 0; i < n; i += 5 {
				f := q / sc[i] * (1 + 1e-7*(2*rng.Float64()-1))
				for j := range d {
					rows[i*d+j] = anchor[j] - float32(f*float64(anchor[j]-rows[i*d+j]))
				}
			}
			plain, err := NewCollection(rows, d, nil)
			if err != nil {
				t.Fatal(err)
			}
			fast, _ := NewCollection(rows, d, nil)
			s := &conformal.Set{Geometry: g, Threshold: q, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
			if err := fast.Transform(s, 0); err != nil {
				t.Fatal(err)
			}
			if tr := fast.transformed(s.Geometry).(*normTransform); (tr.gz > 0) != (kernel.Vector() && d >= 16 && c.offset == 0) {
				t.Errorf("d=%d, offset %v, %v: transformed in float32: %v (the vector kernels: %v)", d, c.offset, g.Kind(), tr.gz > 0, kernel.Vector())
			}
			want, wt, err := Search(context.Background(), s, anchor, plain, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, gt, err := Search(context.Background(), s, anchor, fast, 0)
			if err != nil {
				t.Fatal(err)
			}
			if gt != wt || !slices.Equal(got, want) || wt < n/40 {
				t.Fatalf("d=%d, offset %v, %v: %d hits transformed, %d plain (of %d items)", d, c.offset, g.Kind(), gt, wt, n)
			}
			keep, _, _ := fast.filter(s, s, anchor)
			if keep == nil {
				t.Fatalf("d=%d, %v: no filter on the transformed collection", d, g.Kind())
			}
			kept, sc := make([]bool, n), make([]float64, n)
			keep(0, n, kept, sc)
			if k := countTrue(kept); k > n/2 {
				t.Errorf("d=%d, %v: the filter kept %d of %d items (%d inside)", d, g.Kind(), k, n, wt)
			}
		}
	}
}

// covariance is a random d×d covariance Q·diag(10^(e·i/(d−1)))·Qᵀ, Q from
// the QR of a Gaussian matrix: condition number 10^|e|.
func covariance(rng *rand.Rand, d int, e float64) []float64 {
	a := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	ev := make([]float64, d)
	for i := range ev {
		ev[i] = math.Pow(10, e*float64(i)/float64(max(d-1, 1)))
	}
	var s mat.Dense
	s.Mul(&q, mat.NewDiagDense(d, ev))
	s.Mul(&s, q.T())
	out := make([]float64, d*d)
	for i := range d {
		for j := range d {
			out[i*d+j] = (s.At(i, j) + s.At(j, i)) / 2
		}
	}
	return out
}

func countTrue(b []bool) (n int) {
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// TestTransformRefuses: Transform says why it does not apply.
func TestTransformRefuses(t *testing.T) {
	c, _ := NewCollection(make([]float32, 40), 4, nil)
	nm := func(p float64) *conformal.Set {
		g, err := geometry.NewNorm(4, []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, p)
		if err != nil {
			t.Fatal(err)
		}
		return &conformal.Set{Geometry: g, Threshold: 1}
	}
	for _, tc := range []struct {
		s    *conformal.Set
		max  int64
		want string
	}{
		{&conformal.Set{Geometry: geometry.Ball{D: 4}, Threshold: 1}, 0, "only a single-norm or ellipsoid"},
		{nm(0.7), 0, "p = 0.7 < 1"},
		{nm(2), 100, "over the limit"},
	} {
		err := c.Transform(tc.s, tc.max)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Transform: %v, want an error with %q", err, tc.want)
		}
	}
	if err := c.Transform(nm(2), TransformBytes(10, 4)); err != nil {
		t.Errorf("Transform within the limit: %v", err)
	}
}

// TestTransformEdges: the transformed scan keeps the plain scan's hits for
// an ill-conditioned M (the rounding of a − z in float32, which the exact
// scan scores, is far larger than that of M·a − M·z: without its term in the
// margin the hit is lost), and a set whose M changed after Transform is
// scanned plainly with the new M.
func TestTransformEdges(t *testing.T) {
	g, err := geometry.NewNorm(2, []float64{1, -1, 0, 1e-9}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rows := []float32{3 * 0x1p-27, 0, 5, 6}
	anchor := []float32{1, 1}
	s := &conformal.Set{Geometry: g, Threshold: 1e-8, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}}
	plain, _ := NewCollection(rows, 2, nil)
	fast, _ := NewCollection(rows, 2, nil)
	if err := fast.Transform(s, 0); err != nil {
		t.Fatal(err)
	}
	want, _, _ := Search(context.Background(), s, anchor, plain, 0)
	got, _, _ := Search(context.Background(), s, anchor, fast, 0)
	if len(want) != 1 || !slices.Equal(got, want) {
		t.Fatalf("ill-conditioned M: %v transformed, %v plain", got, want)
	}
	// Change M: the old transform must not answer.
	g.SetParams([]float64{1, 0, 0, 1, 2})
	s.Threshold = 0.5
	// a − z = (0.3, −0.3): 0.42 with M = I, 0.6 with the old M.
	want, _, _ = Search(context.Background(), s, []float32{5.3, 5.7}, plain, 0)
	got, _, _ = Search(context.Background(), s, []float32{5.3, 5.7}, fast, 0)
	if len(want) != 1 || !slices.Equal(got, want) {
		t.Fatalf("after SetParams: %v transformed, %v plain", got, want)
	}
	// The batches too, which ask once an anchor: CountWithin (0.5 holds
	// the item at 0.42 with M = I, not at the old M's 0.6) and SearchBatch.
	anchors := []float32{5.3, 5.7, 5.3, 5.7}
	for _, c := range []*Collection{plain, fast} {
		counts, err := CountWithin(context.Background(), s, anchors, []float64{0.5, 0.41}, c, nil)
		if err != nil || !slices.Equal(counts, []int{1, 0}) {
			t.Fatalf("after SetParams: CountWithin = %v, %v, want [1 0]", counts, err)
		}
		_, totals, err := SearchBatch(context.Background(), s, anchors, c, 0, nil)
		if err != nil || !slices.Equal(totals, []int{1, 1}) {
			t.Fatalf("after SetParams: SearchBatch totals = %v, %v, want [1 1]", totals, err)
		}
	}
	if fast.Transformed(s) {
		t.Fatal("after SetParams: Transformed reports the stale transform")
	}
	// Transforming again replaces the stale transform with one for the
	// new M, which answers as the plain scan.
	if err := fast.Transform(s, 0); err != nil {
		t.Fatal(err)
	}
	if !fast.Transformed(s) {
		t.Fatal("transformed again after SetParams: the stale transform kept, the set scanned plainly")
	}
	counts, err := CountWithin(context.Background(), s, anchors, []float64{0.5, 0.41}, fast, nil)
	if err != nil || !slices.Equal(counts, []int{1, 0}) {
		t.Fatalf("transformed again: CountWithin = %v, %v, want [1 0]", counts, err)
	}
}

// TestCountBatch: CountBatch's counts are the exact scan's, one anchor at
// a time, on a transformed collection whose sets hold most of it, where
// it counts the items surely inside without their exact score: for p in
// {1, 1.5, 2, 3.7}, ellipsoids of condition 10⁰ to 10⁸, a shifted set,
// dimensions 3 to 64, items far from the origin, and a fifth of the items
// moved onto the boundary around the first anchor (within 10⁻⁷ of q on
// either side) under a threshold that is an item's own score or lies
// between two. Without the transform, and in SearchBatch, the same
// totals. The bounds hold every item's exact score, and put inside every
// item whose score is below 0.9·q. With limits of 1, 10 and 3 000,
// Search and SearchBatch on the transformed collection, which score only
// the items their bounds cannot place behind limit others, return the
// plain scan's hits and totals. Under the race detector, a third of the
// cases (in turn) over 1 500 items: the concurrency is the same.
func TestCountBatch(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(71, 17))
	n, every := 5000, 1
	if race.Enabled {
		n, every = 1500, 3
	}
	cases := 0
	for _, c := range []struct {
		d      int
		offset float32
	}{{3, 0}, {17, 0}, {64, 0}, {17, 1000}} {
		d := c.d
		for _, p := range []float64{1, 1.5, 2, 3.7, 0, -4, -8, 20} { // 0, −4, −8: ellipsoids; 20: shifted p = 2
			if cases++; cases%every != 0 {
				continue
			}
			m := nearIdentity(rng, d)
			var g geometry.Geometry
			var err error
			switch {
			case p == 20:
				var inner geometry.Geometry
				if inner, err = geometry.NewNorm(d, m, 2); err == nil {
					shift := make([]float64, d)
					for j := range shift {
						shift[j] = 0.2 * rng.NormFloat64()
					}
					g, err = geometry.NewShifted(inner, shift)
				}
			case p > 0:
				g, err = geometry.NewNorm(d, m, p)
			default:
				g, err = geometry.NewEllipsoid(d, covariance(rng, d, p))
			}
			if err != nil {
				t.Fatal(err)
			}
			const anchors = 3
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(rng.NormFloat64()) + c.offset
			}
			as := make([]float32, anchors*d)
			for i := range as {
				as[i] = float32(0.3*rng.NormFloat64()) + c.offset
			}
			set := &conformal.Set{Geometry: g, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
			// exact scores every item as the scan does: the set's score of
			// the float32 difference, around the centred anchor.
			exact := func(i int) []float64 {
				s, a := Centred(set, as[i*d:(i+1)*d])
				diffs := make([]float32, n*d)
				for r := range n {
					kernel.Sub(diffs[r*d:(r+1)*d], a, rows[r*d:(r+1)*d])
				}
				return s.Geometry.Scores(nil, diffs)
			}
			// q at the 70% quantile around the first anchor, then a fifth of
			// the items moved onto the boundary.
			sc := exact(0)
			sorted := slices.Sorted(slices.Values(sc))
			q := sorted[7*n/10]
			_, a0 := Centred(set, as[:d])
			for i := 0; i < n; i += 5 {
				f := q / sc[i] * (1 + 1e-7*(2*rng.Float64()-1))
				for j := range d {
					rows[i*d+j] = a0[j] - float32(f*float64(a0[j]-rows[i*d+j]))
				}
			}
			sc = exact(0)
			sorted = slices.Sorted(slices.Values(sc))
			for _, q := range []float64{sorted[7*n/10], (sorted[7*n/10] + sorted[7*n/10+1]) / 2} {
				set.Threshold = q
				plain, _ := NewCollection(rows, d, nil)
				fast, _ := NewCollection(rows, d, nil)
				if err := fast.Transform(set, 0); err != nil {
					t.Fatal(err)
				}
				want := make([]int, anchors) // the items inside around each anchor
				deep, sure := 0, 0           // around the first anchor: items below 0.9·q; those counted unscored
				for i := range anchors {
					sc := exact(i)
					for _, v := range sc {
						if v <= q {
							want[i]++
						}
					}
					if i > 0 {
						continue
					}
					pr := fast.probe(set, as[:d])
					kept, filtered := make([]bool, n), make([]float64, n)
					pr.keep(0, n, kept, filtered)
					for r, v := range sc {
						if !kept[r] {
							continue
						}
						lo, hi, ok := pr.bounds(r, filtered[r])
						if ok && !(lo <= v && v <= hi) {
							t.Fatalf("d=%d, offset %v, p %v: row %d scores %v, bounds [%v, %v]", d, c.offset, p, r, v, lo, hi)
						}
						if v <= 0.9*q {
							if deep++; ok && hi <= q {
								sure++
							}
						}
					}
				}
				for _, coll := range []*Collection{fast, plain} {
					got, err := CountBatch(context.Background(), set, as, coll, nil)
					if err != nil {
						t.Fatal(err)
					}
					_, totals, err := SearchBatch(context.Background(), set, as, coll, 1, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) || !slices.Equal(totals, want) {
						t.Fatalf("d=%d, offset %v, p %v, q %v, transformed %v: counts %v, SearchBatch %v, exact %v", d, c.offset, p, q, coll == fast, got, totals, want)
					}
				}
				// With a limit, the nearest hits are the plain scan's, and
				// the totals all items inside, though most are not scored.
				for _, limit := range []int{1, 10, 3000} {
					nearest, _, err := SearchBatch(context.Background(), set, as, plain, limit, nil)
					if err != nil {
						t.Fatal(err)
					}
					got, totals, err := SearchBatch(context.Background(), set, as, fast, limit, nil)
					if err != nil {
						t.Fatal(err)
					}
					for i := range anchors {
						one, total, err := Search(context.Background(), set, as[i*d:(i+1)*d], fast, limit)
						if err != nil {
							t.Fatal(err)
						}
						if !slices.EqualFunc(got[i], nearest[i], sameHit) || !slices.EqualFunc(one, nearest[i], sameHit) || totals[i] != want[i] || total != want[i] {
							t.Fatalf("d=%d, offset %v, p %v, limit %d, anchor %d: %d hits of %d (Search %d of %d), plain %d of %d", d, c.offset, p, limit, i, len(got[i]), totals[i], len(one), total, len(nearest[i]), want[i])
						}
					}
				}
				if sure != deep || deep == 0 {
					t.Errorf("d=%d, offset %v, p %v: %d of %d items below 0.9·q counted without their score", d, c.offset, p, sure, deep)
				}
			}
		}
	}
}

// sameHit: the same item and score, the score to the bit but where the
// single-norm's exact score runs through BLAS in blocks of another size
// (within 10⁻¹² of it).
func sameHit(a, b Hit) bool {
	return a.Row == b.Row && a.ID == b.ID && (a.Score == b.Score || math.Abs(a.Score-b.Score) <= 1e-12*b.Score)
}

// nearIdentity is a single-norm's M: the identity plus Gaussian entries
// of standard deviation 0.3 (d×d, row-major).
func nearIdentity(rng *rand.Rand, d int) []float64 {
	m := make([]float64, d*d)
	for i := range m {
		m[i] = 0.3 * rng.NormFloat64()
	}
	for k := range d {
		m[k*d+k] += 1
	}
	return m
}

// TestCountWithin: each anchor's count at its own threshold is the exact
// count (every item scored), on a plain collection and on one transformed
// for the set at another threshold, for a ball, a single-norm, an
// ellipsoid and a shifted single-norm; thresholds of another length are
// refused.
func TestCountWithin(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(72, 27))
	const n, d, anchors = 5000, 8, 6
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	as := make([]float32, anchors*d)
	for i := range as {
		as[i] = float32(0.5 * rng.NormFloat64())
	}
	m := nearIdentity(rng, d)
	sn, _ := geometry.NewNorm(d, m, 1.5)
	el, _ := geometry.NewEllipsoid(d, covariance(rng, d, -4))
	inner, _ := geometry.NewNorm(d, m, 2)
	shift := make([]float64, d)
	for j := range shift {
		shift[j] = 0.2 * rng.NormFloat64()
	}
	sh, _ := geometry.NewShifted(inner, shift)
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, sn, el, sh} {
		set := &conformal.Set{Geometry: g, Alpha: 0.1, Threshold: 1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
		qs := make([]float64, anchors)
		want := make([]int, anchors)
		for i := range anchors {
			s, a := Centred(set, as[i*d:(i+1)*d])
			diffs := make([]float32, n*d)
			for r := range n {
				kernel.Sub(diffs[r*d:(r+1)*d], a, rows[r*d:(r+1)*d])
			}
			sc := s.Geometry.Scores(nil, diffs)
			sorted := slices.Sorted(slices.Values(sc))
			qs[i] = sorted[(i+1)*n/(anchors+2)] // an item's exact score: at the boundary
			for _, v := range sc {
				if v <= qs[i] {
					want[i]++
				}
			}
		}
		for _, transform := range []bool{false, true} {
			c, _ := NewCollection(rows, d, nil)
			if transform && Transformable(g) {
				if err := c.Transform(set, 0); err != nil {
					t.Fatal(err)
				}
			}
			got, err := CountWithin(context.Background(), set, as, qs, c, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%v, transformed %v: %v, scored one by one %v", g.Kind(), transform, got, want)
			}
		}
	}
	c, _ := NewCollection(rows, d, nil)
	if _, err := CountWithin(context.Background(), &conformal.Set{Geometry: geometry.Ball{D: d}, Calibration: conformal.Info{Mode: conformal.OnePerAnchor}}, as, make([]float64, 2), c, nil); err == nil || !strings.Contains(err.Error(), "48 anchor values for 2 thresholds of dimension 8") {
		t.Errorf("thresholds of another length: %v", err)
	}
}

// TestTransformByGeometry: a transform is kept by the set's geometry, so a
// set sharing it with another threshold (a class-conditional set's
// ForClass sets) searches it, with the plain scan's hits, and transforming
// for it again makes nothing new; a set whose geometry is equal but made
// anew (a reload) does not search it.
func TestTransformByGeometry(t *testing.T) {
	const n, d = 2000, 4
	rng := rand.New(rand.NewPCG(3, 4))
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	sigma := []float64{1, 0.3, 0, 0, 0.3, 2, 0.1, 0, 0, 0.1, 0.5, 0, 0, 0, 0, 1}
	m := []float64{1, 0.3, 0, 0, 0, 2, 0.1, 0, 0, 0, 0.5, 0, 0.2, 0, 0, 1}
	anchor := []float32{0.1, 0.2, -0.3, 0.4}
	for _, mk := range []func() geometry.Geometry{
		func() geometry.Geometry { g, _ := geometry.NewEllipsoid(d, sigma); return g },
		func() geometry.Geometry { g, _ := geometry.NewNorm(d, m, 1.5); return g },
	} {
		g := mk()
		parent := &conformal.Set{Geometry: g, Threshold: 2, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
		c, _ := NewCollection(rows, d, nil)
		plain, _ := NewCollection(rows, d, nil)
		if err := c.Transform(parent, 0); err != nil {
			t.Fatal(err)
		}
		t0 := c.transformed(g)
		for _, q := range []float64{2, 1.2, 0.6} {
			child := *parent
			child.Threshold = q
			if !c.Transformed(&child) {
				t.Errorf("%v, threshold %v: a set sharing the geometry does not search its transform", g.Kind(), q)
			}
			if err := c.Transform(&child, 0); err != nil || c.transformed(g) != t0 {
				t.Errorf("%v, threshold %v: transforming again: %v, a new transform: %v", g.Kind(), q, err, c.transformed(g) != t0)
			}
			got, gt, err := Search(context.Background(), &child, anchor, c, 0)
			want, wt, err2 := Search(context.Background(), &child, anchor, plain, 0)
			if err != nil || err2 != nil || gt != wt || wt == 0 || !slices.Equal(got, want) {
				t.Errorf("%v, threshold %v: %d hits (%v), the plain scan's %d (%v)", g.Kind(), q, gt, err, wt, err2)
			}
		}
		again := *parent
		again.Geometry = mk()
		if c.Transformed(&again) {
			t.Errorf("%v: a geometry made anew searches the old one's transform", g.Kind())
		}
	}
}
