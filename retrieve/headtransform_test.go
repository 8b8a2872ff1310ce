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
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/race"
)

// TestHeadTransformMatchesScan: a set behind a head (the InfoNCE rows'
// generalized ball, behind a square head and behind ones that shrink and
// widen the space, exponents from 0.6 to 3; a single-norm of p = 1.5 and 2
// behind such heads too) searched on the collection transformed for it
// returns the plain scan's hits — ids, rows, scores to the bit, order and
// total — and its counts (CountBatch, which counts the items the bounds
// place inside without their exact score) are the plain scan's, with a
// fifth of the items moved onto the boundary (their scores within 10⁻⁷ of
// q on either side), far from the origin too (every coordinate offset by
// 3 000: the roundings of W·a and W·z then matter, and without the
// margins the counts and hits differ). Near the origin the filter rules
// most items out before the exact score. Under the race detector, a third
// of the cases (in turn): the concurrency is the same in each.
func TestHeadTransformMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 7))
	every := 1
	if race.Enabled {
		every = 3
	}
	for i, c := range []struct {
		in, out int
		inner   string
		offset  float32
	}{
		{24, 24, "genball", 0}, {24, 16, "genball", 0}, {16, 40, "genball", 0}, {40, 40, "genball", 3000}, {16, 24, "genball", 3000},
		{24, 24, "single1.5", 0}, {40, 40, "single2", 0}, {24, 16, "single2", 0}, {16, 40, "single1.5", 0}, {24, 24, "single2", 3000}, {24, 24, "single1.5", 3000},
	} {
		if (i+1)%every != 0 {
			continue
		}
		in, out := c.in, c.out
		w := make([]float64, out*in)
		for i := range w {
			w[i] = 0.3 / math.Sqrt(float64(in)) * rng.NormFloat64()
		}
		for k := range min(in, out) {
			w[k*in+k] += 1
		}
		var inner geometry.Geometry
		var err error
		switch c.inner {
		case "genball":
			m, p := make([]float64, out), make([]float64, out)
			for j := range out {
				m[j], p[j] = 0.5+rng.Float64(), 0.6+2.4*rng.Float64()
			}
			inner, err = geometry.NewGenBall(m, p)
		case "single1.5":
			inner, err = geometry.NewNorm(out, nearIdentity(rng, out), 1.5)
		default:
			inner, err = geometry.NewNorm(out, nearIdentity(rng, out), 2)
		}
		if err != nil {
			t.Fatal(err)
		}
		g, err := head.NewProjected(&head.Linear{In: in, Out: out, W: w, B: make([]float64, out)}, inner)
		if err != nil {
			t.Fatal(err)
		}
		if !Transformable(g) {
			t.Fatalf("%d → %d, %s: not transformable", in, out, c.inner)
		}
		const n = 6000
		rows := make([]float32, n*in)
		for i := range rows {
			rows[i] = float32(rng.NormFloat64()) + c.offset
		}
		anchor := make([]float32, in)
		for j := range anchor {
			anchor[j] = float32(0.3*rng.NormFloat64()) + c.offset
		}
		diff := make([]float32, in)
		score := func(i int, f float64) float64 {
			for j := range in {
				diff[j] = float32(f * float64(anchor[j]-rows[i*in+j]))
			}
			return g.Scores(nil, diff)[0]
		}
		sc := make([]float64, n)
		for i := range n {
			sc[i] = score(i, 1)
		}
		sorted := slices.Clone(sc)
		slices.Sort(sorted)
		q := sorted[n/20]
		// A fifth of the items moved onto the boundary: the factor f on
		// their difference whose score is q, found by bisection (the
		// scores grow with f), then moved by 10⁻⁷ relatively.
		for i := 0; i < n; i += 5 {
			lo, hi := 0.0, 1.0
			for score(i, hi) < q {
				hi *= 2
			}
			for range 60 {
				if mid := (lo + hi) / 2; score(i, mid) < q {
					lo = mid
				} else {
					hi = mid
				}
			}
			f := hi * (1 + 1e-7*(2*rng.Float64()-1))
			for j := range in {
				rows[i*in+j] = anchor[j] - float32(f*float64(anchor[j]-rows[i*in+j]))
			}
		}
		plain, _ := NewCollection(rows, in, nil)
		fast, _ := NewCollection(rows, in, nil)
		s := &conformal.Set{Geometry: g, Threshold: q, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 20, Rank: 19}}
		if err := fast.Transform(s, 0); err != nil {
			t.Fatal(err)
		}
		if !fast.Transformed(s) {
			t.Fatalf("%d → %d, %s: not transformed", in, out, c.inner)
		}
		want, wt, err := Search(context.Background(), s, anchor, plain, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, gt, err := Search(context.Background(), s, anchor, fast, 0)
		if err != nil {
			t.Fatal(err)
		}
		boundary := 0
		for i := 0; i < n; i += 5 {
			if sc[i] = score(i, 1); sc[i] <= q {
				boundary++
			}
		}
		if gt != wt || !slices.Equal(got, want) || wt < n/40 || boundary < n/20 || boundary > n/5-n/20 {
			t.Fatalf("%d → %d, %s, offset %v: %d hits transformed, %d plain (of %d items; %d of the boundary's inside)", in, out, c.inner, c.offset, gt, wt, n, boundary)
		}
		// The nearest 10, and the counts around several anchors.
		want, _, _ = Search(context.Background(), s, anchor, plain, 10)
		got, _, _ = Search(context.Background(), s, anchor, fast, 10)
		if !slices.Equal(got, want) {
			t.Errorf("%d → %d, %s: the nearest 10 differ", in, out, c.inner)
		}
		anchors := slices.Concat(anchor, rows[:3*in])
		wc, err := CountBatch(context.Background(), s, anchors, plain, nil)
		if err != nil {
			t.Fatal(err)
		}
		gc, err := CountBatch(context.Background(), s, anchors, fast, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gc, wc) {
			t.Errorf("%d → %d, %s: counts %v transformed, %v plain", in, out, c.inner, gc, wc)
		}
		keep, _, _ := fast.filter(s, s, anchor)
		if keep == nil {
			t.Fatalf("%d → %d, %s: no filter on the transformed collection", in, out, c.inner)
		}
		kept, scr := make([]bool, n), make([]float64, n)
		keep(0, n, kept, scr)
		// Far from the origin the rounding of W·a and W·z is wide against
		// the differences (the margin of a generalized ball's small powers
		// with it): the exact scores decide, the filter little.
		if k := countTrue(kept); k > n/2 && (c.offset == 0 || c.inner != "genball") {
			t.Errorf("%d → %d, %s: the filter kept %d of %d items (%d inside)", in, out, c.inner, k, n, wt)
		}
		// A head changed after the transform: scanned plainly, as the
		// plain collection scans it.
		w[0] += 0.5
		if fast.Transformed(s) {
			t.Errorf("%d → %d, %s: a changed head still searches its stale transform", in, out, c.inner)
		}
		want, wt, _ = Search(context.Background(), s, anchor, plain, 0)
		got, gt, _ = Search(context.Background(), s, anchor, fast, 0)
		if gt != wt || !slices.Equal(got, want) {
			t.Errorf("%d → %d, %s: changed head: %d hits transformed, %d plain", in, out, c.inner, gt, wt)
		}
	}
}

// TestHeadTransformRefuses: what a head's transform does not serve is
// refused with its reason (and scanned plainly), and its memory is
// counted in TransformBytesOf.
func TestHeadTransformRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 32))
	lin := func(in, out int) *head.Linear {
		w := make([]float64, out*in)
		for k := range min(in, out) {
			w[k*in+k] = 1
		}
		return &head.Linear{In: in, Out: out, W: w, B: make([]float64, out)}
	}
	norm := func(d int, p float64) geometry.Geometry {
		g, err := geometry.NewNorm(d, nearIdentity(rng, d), p)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	el, err := geometry.NewEllipsoid(8, covariance(rng, 8, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		h     *head.Linear
		inner geometry.Geometry
		want  string
	}{
		{lin(8, 8), norm(8, 0.5), "quasi-norm"},
		{lin(8, 8), el, "is not transformed"},
		{lin(8, 8), geometry.Ball{D: 8}, "is not transformed"},
	} {
		g, err := head.NewProjected(c.h, c.inner)
		if err != nil {
			t.Fatal(err)
		}
		if Transformable(g) {
			t.Errorf("%v behind %d → %d: transformable", c.inner.Kind(), c.h.In, c.h.Out)
		}
		coll, _ := NewCollection(make([]float32, 80), 8, nil)
		err = coll.Transform(&conformal.Set{Geometry: g, Threshold: 1}, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v behind %d → %d: %v, want %q", c.inner.Kind(), c.h.In, c.h.Out, err, c.want)
		}
	}
	gb, _ := geometry.NewGenBall([]float64{1, 1, 1}, []float64{2, 2, 2})
	g, _ := head.NewProjected(lin(8, 3), gb)
	if got, want := TransformBytesOf(g, 1000), int64(1000*4*4); got != want {
		t.Errorf("TransformBytesOf a generalized ball behind 8 → 3: %d, want %d", got, want)
	}
	gn, _ := head.NewProjected(lin(8, 3), norm(3, 1.5))
	if got, want := TransformBytesOf(gn, 1000), TransformBytes(1000, 3); got != want {
		t.Errorf("TransformBytesOf a single-norm behind 8 → 3: %d, want %d", got, want)
	}
	coll, _ := NewCollection(make([]float32, 8000), 8, nil)
	if err := coll.Transform(&conformal.Set{Geometry: g, Threshold: 1}, 1000); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("over the limit: %v", err)
	}
}
