package retrieve

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/race"
)

// gaussBundle draws n anchors in d dimensions with k positives each
// (anchor + N(0, σ²I)).
func gaussBundle(rng *rand.Rand, n, k, d int, sigma float64) *bundle.Bundle {
	return spreadBundle(rng, n, k, d, func() float64 { return sigma })
}

// spreadBundle is gaussBundle with each anchor's positives at the spread
// spread() draws for it.
func spreadBundle(rng *rand.Rand, n, k, d int, spread func() float64) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d)}
	for i := range n {
		sigma := spread()
		for j := range d {
			b.Anchors[i*d+j] = float32(3 * rng.NormFloat64())
		}
		for p := range k {
			for j := range d {
				b.Positives[(i*k+p)*d+j] = b.Anchors[i*d+j] + float32(sigma*rng.NormFloat64())
			}
		}
	}
	return b
}

// inside lists the rows (of d values) inside s around anchor, by
// Contains on each row: what a search must find.
func inside(s *conformal.Set, anchor, rows []float32, d int) []int {
	var in []int
	for i := range len(rows) / d {
		if ok, _ := s.Contains(anchor, rows[i*d:(i+1)*d], nil); ok {
			in = append(in, i)
		}
	}
	return in
}

// TestSearchMatchesContains: every hit is inside, every item inside is a
// hit, ordered by score then row; the limit keeps the nearest. For the
// geometries with a prefilter (ball, generalized ball) and one without
// (single-norm).
func TestSearchMatchesContains(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 4
	gb, _ := geometry.NewGenBall([]float64{1, 2, 0.5, 1}, []float64{2, 1.5, 3, 0.8})
	nm, _ := geometry.NewNorm(d, []float64{1, 0.2, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0.1, 0, 0, 1}, 1.5)
	rows := make([]float32, 20000*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	c, err := NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	anchor := []float32{0.2, -0.1, 0.3, 0}
	for _, tc := range []struct {
		g geometry.Geometry
		q float64
	}{{gb, 3}, {geometry.Ball{D: d}, 1.2}, {nm, 1.5}} {
		s := &conformal.Set{Geometry: tc.g, Threshold: tc.q, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
		hits, total, err := Search(context.Background(), s, anchor, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := inside(s, anchor, rows, d)
		kind := tc.g.Kind()
		if total != len(want) || len(hits) != total || total == 0 || total == c.N {
			t.Fatalf("%v: %d hits (total %d), %d items inside of %d", kind, len(hits), total, len(want), c.N)
		}
		got := make([]int, len(hits))
		for i, h := range hits {
			got[i] = h.Row
			if i > 0 && (hits[i-1].Score > h.Score || hits[i-1].Score == h.Score && hits[i-1].Row > h.Row) {
				t.Fatalf("%v: hits %d and %d out of order", kind, i-1, i)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%v: the hits are not the items inside the set", kind)
		}
		top, total2, _ := Search(context.Background(), s, anchor, c, 5)
		if total2 != total || !slices.Equal(top, hits[:5]) {
			t.Errorf("%v: limit 5: %v (total %d), want the first five of all hits", kind, top, total2)
		}
	}
}

// TestRecallGuarantee: a ball calibrated on held-out anchors (one positive
// each) retrieves, from a collection holding the test anchors' positives,
// on average at least 1−α of each test anchor's own positives.
func TestRecallGuarantee(t *testing.T) {
	t.Parallel()
	const d, alpha, seeds = 8, 0.1, 20
	var recall float64
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 77))
		cal := gaussBundle(rng, 300, 1, d, 1)
		s, err := conformal.Calibrate(geometry.Ball{D: d}, cal, alpha, conformal.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		test := gaussBundle(rng, 100, 10, d, 1)
		c, err := NewCollection(test.Positives, d, nil) // positive i is anchor i/K's
		if err != nil {
			t.Fatal(err)
		}
		var found int
		for a := range test.N {
			hits, _, err := Search(context.Background(), s, test.Anchor(a), c, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if int(h.ID)/test.K == a {
					found++
				}
			}
		}
		recall += float64(found) / float64(test.N*test.K) / seeds
	}
	t.Logf("mean recall of the anchors' own positives over %d seeds: %.4f (1−α = %.2f)", seeds, recall, 1-alpha)
	if recall < 1-alpha-0.01 || recall > 1-alpha+0.04 {
		t.Errorf("mean recall %.4f, want about %.2f (≥ 1−α up to sampling error, and not everything)", recall, 1-alpha)
	}
}

// TestRecallPerQuery: the guarantee is on recall in expectation over query
// anchors and calibration draws, not on each query's recall. With
// anchor-specific spreads (each anchor's positives at its own scale, half
// to twice the median), a ball calibrated at α = 0.1 keeps the mean recall
// at 0.9, while many queries — the widely spread anchors — fall below 0.9
// and some retrieve none of their positives. The docs say "expected
// recall" for this reason.
func TestRecallPerQuery(t *testing.T) {
	t.Parallel()
	const d, alpha, seeds, nTest, k = 8, 0.1, 40, 250, 10
	var recall, below, none float64
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 78))
		spread := func() float64 { return math.Exp(0.5 * rng.NormFloat64()) }
		draw := func(n, k int) *bundle.Bundle { return spreadBundle(rng, n, k, d, spread) }
		s, err := conformal.Calibrate(geometry.Ball{D: d}, draw(300, 1), alpha, conformal.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		test := draw(nTest, k)
		for a := range test.N {
			c, err := NewCollection(test.Positives[a*k*d:(a+1)*k*d], d, nil)
			if err != nil {
				t.Fatal(err)
			}
			hits, _, err := Search(context.Background(), s, test.Anchor(a), c, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := float64(len(hits)) / k
			recall += r / (seeds * nTest)
			if r < 1-alpha {
				below += 1.0 / (seeds * nTest)
			}
			if len(hits) == 0 {
				none += 1.0 / (seeds * nTest)
			}
		}
	}
	t.Logf("mean recall %.4f; %.1f%% of queries below %.2f, %.1f%% retrieve none of their positives", recall, 100*below, 1-alpha, 100*none)
	// 40 calibrations of 300 anchors: the mean recall's standard error is
	// about 0.003.
	if recall < 1-alpha-0.015 || recall > 1-alpha+0.05 {
		t.Errorf("mean recall %.4f, want about %.2f", recall, 1-alpha)
	}
	if below < 0.1 || none < 0.005 {
		t.Errorf("%.3f of queries below 1−α and %.3f with no hit: want many below and some with none (per-query recall is not guaranteed)", below, none)
	}
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	s := &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 1, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
	c, _ := NewCollection(make([]float32, 2*20000), 2, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Search(ctx, s, []float32{0, 0}, c, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	c3, _ := NewCollection(make([]float32, 9), 3, nil)
	nanFile := filepath.Join(t.TempDir(), "nan.npz")
	if err := bundle.WriteNPZ(nanFile, map[string]bundle.Array{"embeddings": bundle.Float32([]float32{1, 2, float32(math.NaN()), 4}, 2, 2)}); err != nil {
		t.Fatal(err)
	}
	intFile := filepath.Join(t.TempDir(), "ints.npy") // integer features: the dtype named, not the shape
	if err := bundle.WriteNPY(intFile, bundle.Int64([]int64{1, 2, 3, 4}, 2, 2)); err != nil {
		t.Fatal(err)
	}
	names := filepath.Join(t.TempDir(), "gallery_names.txt") // a re-ID export's image names given for the features
	if err := os.WriteFile(names, []byte("0002_c1s1_000451_03.jpg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An .npz under another name is read as one, and its own errors said:
	// a member that is no .npy array is no "not a collection file".
	odd := filepath.Join(t.TempDir(), "gallery.data")
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	if w, err := zw.Create("embeddings.npy"); err != nil {
		t.Fatal(err)
	} else if _, err := w.Write([]byte("no array")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(odd, zipped.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{third(Search(context.Background(), s, []float32{0}, c, 0)), "anchor of dimension 1"},
		{second(ReadCollection(odd)), "gallery.data: array \"embeddings\""},
		{second(ReadCollection(names)), "gallery_names.txt: not a collection file: a collection is an (n, d) float array in a .npy, .npz or .safetensors file, or a Parquet or Arrow table (a text file of ids goes with ccs retrieve -ids FILE; serve and Collection.load take the ids from the collection file, FILE?ids=NAME)"},
		{third(Search(context.Background(), s, []float32{0, 0}, c3, 0)), "the collection 3"},
		{second(NewCollection(make([]float32, 5), 2, nil)), "not rows of dimension 2"},
		{second(NewCollection(make([]float32, 4), 2, []int64{1})), "1 ids for 2 rows"},
		{second(NewCollection(make([]float32, 6), 2, []int64{5, 9, 5})), "rows 0 and 2 have the same id 5"},
		{second(ReadCollection(nanFile)), "row 1, coordinate 0 is NaN"},
		{second(ReadCollection(intFile)), "ints.npy: dtype int64 (2, 2): want floating-point embeddings (float16, float32 or float64), (n, d): convert them, x.astype(np.float32)"},
		{second(ReadCollection(filepath.Join("..", "bundle", "testdata", "indexed.npz"))), ""},
	} {
		if tc.want == "" { // a bundle's anchors and index read as a collection
			if tc.err != nil {
				t.Errorf("bundle as a collection: %v", tc.err)
			}
			continue
		}
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want %q", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }

// TestFilterEdges: the filters never drop an item the exact scan keeps —
// an ℓ2 difference whose float32 square overflows (the exact score sums in
// float64), and a generalized ball with exponents so large that the fast
// score's error bound exceeds 1 (no filter then).
func TestFilterEdges(t *testing.T) {
	info := conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}
	gb, err := geometry.NewGenBall([]float64{1, 1}, []float64{5e4, 5e4})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		s      *conformal.Set
		rows   []float32
		anchor []float32
		want   int
	}{
		{"ℓ2 overflow", &conformal.Set{Geometry: geometry.Ball{D: 2}, Threshold: 2e20, Alpha: 0.1, Calibration: info},
			[]float32{0, 0, 1e20, 0}, []float32{0, 0}, 2},
		{"huge p", &conformal.Set{Geometry: gb, Threshold: 1, Alpha: 0.1, Calibration: info},
			[]float32{0.5, 0.5}, []float32{0, 0}, 1},
	} {
		c, _ := NewCollection(tc.rows, 2, nil)
		hits, _, err := Search(context.Background(), tc.s, tc.anchor, c, 0)
		if err != nil || len(hits) != tc.want {
			t.Errorf("%s: %d hits (%v), want %d", tc.name, len(hits), err, tc.want)
		}
	}
}

// TestHalfScreenExact: the half-precision screen changes no answer. Over
// seeded draws — dimensions 3 to 128, rows at scales from 2⁻³⁰ to 2³⁰ in
// one collection, thresholds set to an item's exact score (so an item lies
// on the boundary), the ℓ2 ball, generalized balls with exponents below
// and above 1, single-norms transformed with p = 2 and p = 1.5 — Search
// returns the same hits and total as on a collection without the copy.
// Under the race detector, the first 4 draws (one of each dimension): the
// search's concurrency is the same in the rest.
func TestHalfScreenExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	info := conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}
	screened := 0
	trials := 12
	if race.Enabled {
		trials = 4
	}
	for trial := range trials {
		d := []int{3, 16, 37, 128}[trial%4]
		n := HalfMinRows + rng.IntN(3000)
		rows := make([]float32, n*d)
		for i := range n {
			scale := 1.0
			if rng.IntN(8) == 0 {
				scale = math.Ldexp(1, rng.IntN(61)-30)
			}
			for j := range d {
				rows[i*d+j] = float32(scale * rng.NormFloat64())
			}
		}
		anchor := slices.Clone(rows[rng.IntN(n)*d:][:d])
		anchor[0] += 0.01
		m, p := make([]float64, d), make([]float64, d)
		for j := range d {
			m[j], p[j] = math.Exp(rng.NormFloat64()/2), 0.7+2*rng.Float64()
		}
		gb, _ := geometry.NewGenBall(m, p)
		mm := make([]float64, d*d)
		for i := range mm {
			mm[i] = 0.1 * rng.NormFloat64()
		}
		for j := range d {
			mm[j*d+j] += 1
		}
		n2, _ := geometry.NewNorm(d, mm, 2)
		n15, _ := geometry.NewNorm(d, mm, 1.5)
		plain, _ := NewCollection(rows, d, nil)
		plain.NoHalf = true
		fast, _ := NewCollection(rows, d, nil)
		fast.PrepareHalf()
		fast.PrepareBytes()
		for _, g := range []geometry.Geometry{geometry.Ball{D: d}, gb, n2, n15} {
			// The threshold: the exact score of an item among the nearest.
			// A single-norm's score can differ in its last bit with the
			// rows scored beside it (its products' blocking): there, the
			// midpoint between two items' scores, and scores compared to
			// 10⁻¹².
			sc := g.Scores(nil, diffsTo(anchor, rows, d))
			slices.Sort(sc)
			at := int((0.01 + 0.05*rng.Float64()) * float64(n))
			q := sc[at]
			_, isNorm := g.(geometry.LinearNorm)
			if isNorm {
				q = (sc[at] + sc[at+1]) / 2
			}
			s := &conformal.Set{Geometry: g, Threshold: q, Alpha: 0.1, Calibration: info}
			if isNorm {
				if err := fast.Transform(s, 0); err != nil {
					t.Fatal(err)
				}
			}
			want, wantN, err := Search(context.Background(), s, anchor, plain, 0)
			if err != nil {
				t.Fatal(err)
			}
			keep, screen, _ := fast.filter(s, s, anchor)
			if screen == nil || keep == nil {
				t.Fatalf("trial %d, %v: no screen of a compact copy", trial, g.Kind())
			}
			screened++
			got, gotN, err := Search(context.Background(), s, anchor, fast, 0)
			if err != nil {
				t.Fatal(err)
			}
			same := func(a, b Hit) bool {
				return a.Row == b.Row && a.ID == b.ID && (a.Score == b.Score || isNorm && math.Abs(a.Score-b.Score) <= 1e-12*b.Score)
			}
			if gotN != wantN || !slices.EqualFunc(got, want, same) || wantN == 0 {
				t.Fatalf("trial %d (d %d), %v, q %v: %d hits with the screen, %d without", trial, d, g.Kind(), q, gotN, wantN)
			}
		}
	}
	if screened != 4*trials {
		t.Errorf("%d searches screened, want %d", screened, 4*trials)
	}
}

// diffsTo is anchor − row for each row.
func diffsTo(anchor, rows []float32, d int) []float32 {
	out := make([]float32, len(rows))
	for i, v := range rows {
		out[i] = anchor[i%d] - v
	}
	return out
}

// TestCopiesWhen: a collection starts its half-precision copy at the
// second ℓ2 ball search and its 8-bit copy at the second generalized ball
// search, in the background (a one-off query scans plainly; one kind's searches do not make
// the other's copy), at once with PrepareHalf and PrepareBytes, never
// with NoHalf or below HalfMinRows items; the answers are the same before
// and after.
func TestCopiesWhen(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const d = 8
	rows := make([]float32, HalfMinRows*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	info := conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = 1, 1.5
	}
	gb, _ := geometry.NewGenBall(m, p)
	half := func(c *Collection) bool { return c.half.p.Load() != nil }
	bytes := func(c *Collection) bool { return c.bytes.p.Load() != nil }
	for _, k := range []struct {
		g           geometry.Geometry
		q           float64
		made, other func(*Collection) bool
		prepare     func(*Collection) int64
		bytes       int64
	}{
		{geometry.Ball{D: d}, 3, half, bytes, (*Collection).PrepareHalf, HalfBytes(HalfMinRows, d)},
		{gb, 12, bytes, half, (*Collection).PrepareBytes, ByteBytes(HalfMinRows, d)},
	} {
		s := &conformal.Set{Geometry: k.g, Threshold: k.q, Alpha: 0.1, Calibration: info}
		anchor := rows[:d]
		search := func(c *Collection) []Hit {
			h, _, err := Search(context.Background(), s, anchor, c, 0)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		c, _ := NewCollection(rows, d, nil)
		first := search(c)
		if k.made(c) {
			t.Fatalf("%v: the first search made the copy", k.g.Kind())
		}
		second := search(c) // starts the copy, in the background
		c.half.wait()
		c.bytes.wait()
		if third := search(c); !k.made(c) || k.other(c) || !slices.Equal(first, second) || !slices.Equal(first, third) || len(first) < 2 {
			t.Fatalf("%v: after the second search: copy %v (the other kind's %v), %d and %d hits against %d", k.g.Kind(), k.made(c), k.other(c), len(second), len(third), len(first))
		}
		pc, _ := NewCollection(rows, d, nil)
		if b := k.prepare(pc); !k.made(pc) || b != k.bytes {
			t.Fatalf("%v: prepared %d bytes, copy %v", k.g.Kind(), b, k.made(pc))
		}
		off, _ := NewCollection(rows, d, nil)
		off.NoHalf = true
		search(off)
		search(off)
		small, _ := NewCollection(rows[:(HalfMinRows-1)*d], d, nil)
		search(small)
		search(small)
		if k.made(off) || k.prepare(off) != 0 || k.made(small) || k.prepare(small) != 0 {
			t.Fatalf("%v: a copy made with NoHalf or below HalfMinRows items", k.g.Kind())
		}
	}
}

// TestSearchShifted: a set centred off its anchors (geometry.Shifted)
// retrieves the items its own Contains puts inside (but an item within a
// relative 10⁻⁶ of the threshold, where the two roundings of a + c − z
// may part; none here), with the inner family's screens, filters and a
// single-norm's transform, from a collection large enough for the
// half-precision copies; and the shift moves the hits: centred on the
// anchor they differ.
func TestSearchShifted(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const d, n = 4, 70000
	gb, _ := geometry.NewGenBall([]float64{1, 2, 0.5, 1}, []float64{2, 1.5, 3, 0.8})
	nm, _ := geometry.NewNorm(d, []float64{1, 0.2, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0.1, 0, 0, 1}, 1.5)
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	c, err := NewCollection(rows, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	anchor := []float32{0.2, -0.1, 0.3, 0}
	shift := []float64{-0.6, 0.45, 0.25, -1}
	for _, tc := range []struct {
		g geometry.Geometry
		q float64
	}{{gb, 2}, {geometry.Ball{D: d}, 1}, {nm, 1.2}} {
		sh, err := geometry.NewShifted(tc.g, shift)
		if err != nil {
			t.Fatal(err)
		}
		info := conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}
		s := &conformal.Set{Geometry: sh, Threshold: tc.q, Alpha: 0.1, Calibration: info}
		plain := &conformal.Set{Geometry: tc.g, Threshold: tc.q, Alpha: 0.1, Calibration: info}
		if tc.g == nm {
			if err := c.Transform(s, 0); err != nil {
				t.Fatal(err)
			}
		}
		hits, total, err := Search(context.Background(), s, anchor, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := inside(s, anchor, rows, d)
		got := make([]int, len(hits))
		for i, h := range hits {
			got[i] = h.Row
		}
		slices.Sort(got)
		if total != len(hits) || total < 100 || !slices.Equal(got, want) {
			t.Fatalf("%v shifted: %d hits (total %d), %d items inside of %d", tc.g.Kind(), len(hits), total, len(want), c.N)
		}
		if tc.g == nm && !c.Transformed(s) {
			t.Errorf("single-norm shifted: not transformed")
		}
		unshifted, _, _ := Search(context.Background(), plain, anchor, c, 0)
		if len(unshifted) > 0 && unshifted[0].Row == hits[0].Row && len(unshifted) == len(hits) {
			t.Errorf("%v: the shift left the hits where they were", tc.g.Kind())
		}
	}
}

// TestSearchBatch: a batch's pass over the collection, a chunk for every
// anchor in turn, gives each anchor Search's hits, order, scores and
// total — for the ℓ2 ball and the generalized ball (their screens over
// the compact copies), a single-norm before and after Transform, an
// ellipsoid and a shifted ball; limits 0 and 7 (the chunks in groups,
// each anchor's nearest 7 kept after each); anchors that are rows,
// perturbed rows and far points. A bad batch is an error naming the
// anchor; a cancelled one returns the context's error.
func TestSearchBatch(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	const d, n, m = 16, HalfMinRows + 1500, 9
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	for i := 0; i < 40; i++ { // exact copies: ties broken by id, then row
		copy(rows[(n-1-i)*d:(n-i)*d], rows[i*d:(i+1)*d])
	}
	anchors := make([]float32, m*d)
	for i := range m {
		copy(anchors[i*d:], rows[rng.IntN(n)*d:][:d])
		if i%3 == 1 {
			anchors[i*d] += 0.05
		}
		if i%3 == 2 {
			for j := range d {
				anchors[i*d+j] = 4 * float32(rng.NormFloat64())
			}
		}
	}
	m_, p := make([]float64, d), make([]float64, d)
	mm := make([]float64, d*d)
	for j := range d {
		m_[j], p[j] = math.Exp(rng.NormFloat64()/3), 1+rng.Float64()
		mm[j*d+j] = 1
	}
	for i := range mm {
		mm[i] += 0.1 * rng.NormFloat64()
	}
	gb, _ := geometry.NewGenBall(m_, p)
	nm, _ := geometry.NewNorm(d, mm, 2)
	sigma := make([]float64, d*d)
	for j := range d {
		sigma[j*d+j] = 0.5 + rng.Float64()
	}
	el, err := geometry.NewEllipsoid(d, sigma)
	if err != nil {
		t.Fatal(err)
	}
	shift := make([]float64, d)
	shift[0] = 0.3
	sh, err := geometry.NewShifted(geometry.Ball{D: d}, shift)
	if err != nil {
		t.Fatal(err)
	}
	info := conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}
	for _, tc := range []struct {
		name      string
		g         geometry.Geometry
		q         float64
		transform bool
	}{
		{"ball", geometry.Ball{D: d}, 4.5, false},
		{"shifted ball", sh, 4.5, false},
		{"genball", gb, 14, false},
		{"single-norm", nm, 4.5, false},
		{"single-norm, transformed", nm, 4.5, true},
		{"ellipsoid", el, 5, false},
	} {
		c, err := NewCollection(rows, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.batchGroup = 3 // the 11 chunks in four groups, each anchor's nearest merged after each
		s := &conformal.Set{Geometry: tc.g, Threshold: tc.q, Alpha: 0.1, Calibration: info}
		if tc.transform {
			if err := c.Transform(s, 1<<30); err != nil {
				t.Fatal(err)
			}
		}
		for _, run := range []struct{ block, limit int }{{0, 0}, {0, 7}, {4, 0}, {4, 7}} {
			limit := run.limit
			c.anchorBlock = run.block // 4: the anchors a few at a time, as at a large d
			var mu sync.Mutex
			var chunks []int
			hits, totals, err := SearchBatch(context.Background(), s, anchors, c, limit, func(done, total int) {
				mu.Lock()
				defer mu.Unlock()
				chunks = append(chunks, total)
			})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if len(chunks) == 0 || len(chunks) != chunks[0] {
				t.Errorf("%s: progress %v, want every chunk of %d once", tc.name, len(chunks), chunks)
			}
			some := 0
			for i := range m {
				want, total, err := Search(context.Background(), s, anchors[i*d:(i+1)*d], c, limit)
				if err != nil {
					t.Fatal(err)
				}
				some += total
				if totals[i] != total || !slices.Equal(hits[i], want) {
					t.Fatalf("%s, limit %d, anchor %d: %d hits (total %d), Search %d (total %d)", tc.name, limit, i, len(hits[i]), totals[i], len(want), total)
				}
			}
			if some == 0 || some == m*n {
				t.Errorf("%s: %d hits in all: the thresholds test nothing", tc.name, some)
			}
			// SearchBatchLabels: the same hits, and every hit counted by
			// label (5 of them), not only the nearest limit kept.
			labels := make([]int32, n)
			for r := range labels {
				labels[r] = int32(r*7) % 5
			}
			lhits, ltotals, counts, err := SearchBatchLabels(context.Background(), s, anchors, c, limit, labels, nil)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			for i := range m {
				all, _, err := Search(context.Background(), s, anchors[i*d:(i+1)*d], c, 0)
				if err != nil {
					t.Fatal(err)
				}
				want := map[int32]int{}
				for _, h := range all {
					want[labels[h.Row]]++
				}
				if ltotals[i] != totals[i] || !slices.Equal(lhits[i], hits[i]) || !maps.Equal(counts[i], want) {
					t.Fatalf("%s, limit %d, anchor %d: %d hits (total %d), counts %v; want %d (total %d), counts %v", tc.name, limit, i, len(lhits[i]), ltotals[i], counts[i], len(hits[i]), totals[i], want)
				}
			}
		}
	}
	// The anchors a block at a time: a generalized ball's probe holds a
	// table of 512 bytes a coordinate, so at d = 2048 a block is 256.
	for _, c := range []struct{ d, want int }{{2048, 256}, {128, 4096}, {1 << 20, 1}} {
		if got := (&Collection{D: c.d}).anchors(); got != c.want {
			t.Errorf("d = %d: %d anchors a block, want %d", c.d, got, c.want)
		}
	}
	c, _ := NewCollection(rows, d, nil)
	s := &conformal.Set{Geometry: geometry.Ball{D: d}, Threshold: 4.5, Alpha: 0.1, Calibration: info}
	bad := slices.Clone(anchors)
	bad[2*d+3] = float32(math.NaN())
	if _, _, err := SearchBatch(context.Background(), s, bad, c, 0, nil); err == nil || !strings.Contains(err.Error(), "anchor 2") {
		t.Errorf("a NaN in anchor 2: %v", err)
	}
	if _, _, err := SearchBatch(context.Background(), s, anchors[:d+3], c, 0, nil); err == nil {
		t.Error("a batch of d+3 values: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := SearchBatch(ctx, s, anchors, c, 0, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRowOutOfRange: a row past the end is refused with the rows there
// are, and an empty collection's with none.
func TestRowOutOfRange(t *testing.T) {
	c, err := NewCollection(make([]float32, 6), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct {
		i    int
		want string
	}{{3, "retrieve: row 3: the collection has 3 rows (0 to 2)"}, {-1, "retrieve: row -1: the collection has 3 rows (0 to 2)"}} {
		if _, err := c.Row(c2.i); err == nil || err.Error() != c2.want {
			t.Errorf("row %d: %v, want %q", c2.i, err, c2.want)
		}
	}
	if _, err := (&Collection{D: 2}).Row(0); err == nil || err.Error() != "retrieve: row 0: the collection has no rows" {
		t.Errorf("an empty collection: %v", err)
	}
}

// TestSearchBatchCancelledWhileCopying: a batch whose collection's compact
// copy is being made returns its context's error when the context is
// done, without waiting for the copy (here held back until the end: the
// batch would wait for ever), and the copy is made for the next batch.
func TestSearchBatchCancelledWhileCopying(t *testing.T) {
	t.Parallel()
	const d, n = 4, HalfMinRows
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(i%7) / 7
	}
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, geometry.UnitGenBall(d, 1.5)} {
		c, err := NewCollection(rows, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		set := &conformal.Set{Geometry: g, Alpha: 0.1, Threshold: 1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
		var held *sync.Mutex
		if _, ok := g.(geometry.ByteScreener); ok {
			held = &c.bytes.mu
		} else {
			held = &c.half.mu
		}
		held.Lock() // the copy cannot be made
		ctx, cancel := context.WithCancel(context.Background())
		answered := make(chan error, 1)
		go func() {
			_, _, err := SearchBatch(ctx, set, rows[:2*d], c, 5, nil)
			answered <- err
		}()
		cancel()
		select {
		case err := <-answered:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%T: %v, want context.Canceled", g, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%T: the cancelled batch waited for the compact copy", g)
		}
		held.Unlock()
		if _, _, err := SearchBatch(context.Background(), set, rows[:2*d], c, 5, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckQueryRefusals: CheckQuery's dimension errors match
// conformal.ErrDimension, and a set calibrated on unit-norm embeddings
// refuses an anchor not of unit norm (a *conformal.NormError), so that a
// library's Search answers it with an error, not with no hits.
func TestCheckQueryRefusals(t *testing.T) {
	t.Parallel()
	s := &conformal.Set{Geometry: geometry.Ball{D: 2}, Alpha: 0.1, Threshold: 0.5,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19, UnitNorm: true}}
	c, err := NewCollection([]float32{0.6, 0.8, 1, 0}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ne *conformal.NormError
	if _, _, err := Search(context.Background(), s, []float32{6, 8}, c, 0); !errors.As(err, &ne) || ne.Norm != 10 {
		t.Errorf("an anchor of norm 10: %v, want a *NormError", err)
	}
	if hits, _, err := Search(context.Background(), s, []float32{0.6, 0.8}, c, 0); err != nil || len(hits) != 1 {
		t.Errorf("a unit anchor: %v, %v", hits, err)
	}
	for _, a := range [][]float32{{1}, {1, 0, 0}} {
		if _, _, err := Search(context.Background(), s, a, c, 0); !errors.Is(err, conformal.ErrDimension) {
			t.Errorf("an anchor of %d values: %v, want ErrDimension", len(a), err)
		}
	}
	// Nothing given: an error, not a panic.
	if _, _, err := Search(context.Background(), nil, []float32{0.6, 0.8}, c, 0); err == nil {
		t.Error("a nil set searched")
	}
	if _, _, err := Search(context.Background(), s, []float32{0.6, 0.8}, nil, 0); err == nil {
		t.Error("a nil collection searched")
	}
	if _, _, _, err := SearchBatchLabels(context.Background(), s, []float32{0.6, 0.8}, nil, 0, []int32{1}, nil); err == nil {
		t.Error("a nil collection searched in a batch")
	}
}
