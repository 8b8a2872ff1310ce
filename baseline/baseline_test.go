package baseline

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/internal/race"
)

// correlated draws anchors with positives around them along a fixed
// anisotropic covariance, and negatives from elsewhere.
func correlated(rng *rand.Rand, n, k int) *bundle.Bundle {
	const d = 3
	L := [d][d]float64{{2, 0, 0}, {1.5, 0.5, 0}, {0, -0.3, 0.2}}
	b := &bundle.Bundle{N: n, K: k, D: d, KNeg: k, Anchors: make([]float32, n*d),
		Positives: make([]float32, n*k*d), Negatives: make([]float32, n*k*d)}
	for i := range n {
		for j := range d {
			b.Anchors[i*d+j] = float32(rng.NormFloat64())
		}
		for a := range k {
			e := [d]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
			for r := range d {
				var v float64
				for c := range d {
					v += L[r][c] * e[c]
				}
				b.Positives[(i*k+a)*d+r] = b.Anchors[i*d+r] + float32(v)
				b.Negatives[(i*k+a)*d+r] = b.Anchors[i*d+r] + float32(3*rng.NormFloat64())
			}
		}
	}
	return b
}

// TestCovarianceCancelled: a cancelled context stops Σ's estimate, and
// the ellipsoid's fit with it, with the context's error.
func TestCovarianceCancelled(t *testing.T) {
	t.Parallel()
	b := correlated(rand.New(rand.NewPCG(1, 2)), 40, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Covariance(ctx, b, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Covariance: %v, want context.Canceled", err)
	}
	if _, err := EllipsoidFrom(ctx, b, b, 0.1, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("EllipsoidFrom: %v, want context.Canceled", err)
	}
}

func TestCovarianceMatchesDirectFormula(t *testing.T) {
	t.Parallel()
	b := correlated(rand.New(rand.NewPCG(1, 1)), 40, 3)
	got, added, err := Covariance(context.Background(), b, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	var xs [][]float64
	for i := range b.N {
		dd := b.PositiveDiffs(nil, i)
		for a := range b.K {
			x := make([]float64, b.D)
			for j := range x {
				x[j] = float64(dd[a*b.D+j])
			}
			xs = append(xs, x)
		}
	}
	m := float64(len(xs))
	mean := make([]float64, b.D)
	for _, x := range xs {
		for j := range x {
			mean[j] += x[j] / m
		}
	}
	var trace float64
	want := make([]float64, b.D*b.D)
	for r := range b.D {
		for c := range b.D {
			for _, x := range xs {
				want[r*b.D+c] += (x[r] - mean[r]) * (x[c] - mean[c]) / (m - 1)
			}
		}
		trace += want[r*b.D+r]
	}
	if math.Abs(added-0.01*trace/3) > 1e-12 {
		t.Errorf("ridge added %v, want %v", added, 0.01*trace/3)
	}
	for i := range want {
		if i%(b.D+1) == 0 {
			want[i] += added
		}
		if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("Σ[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestEllipsoidUsesDisjointHalves(t *testing.T) {
	t.Parallel()
	cal := correlated(rand.New(rand.NewPCG(2, 2)), 301, 4)
	s, err := Ellipsoid(context.Background(), cal, 0.1, Options{SplitSeed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if s.Fit.N+s.Calibration.N != cal.N || s.Fit.N != 150 {
		t.Errorf("Σ from %d anchors, threshold from %d: want 150 + 151 = 301", s.Fit.N, s.Calibration.N)
	}
}

// TestEllipsoidBeatsBallOnAnisotropicData: both cover ≈ 1−α; the ellipsoid,
// shaped like the positives, excludes more negatives with a smaller volume.
func TestEllipsoidBeatsBallOnAnisotropicData(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	cal, test := correlated(rng, 2000, 5), correlated(rng, 2000, 20)
	ball, err := Ball(cal, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ell, err := Ellipsoid(context.Background(), cal, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := eval.Evaluate(ball, test)
	re, _ := eval.Evaluate(ell, test)
	for _, r := range []eval.Result{rb, re} {
		if math.Abs(r.Coverage-0.9) > 0.02 {
			t.Errorf("coverage %.4f, want ≈ 0.90", r.Coverage)
		}
	}
	if re.Exclusion <= rb.Exclusion || re.LogVolPerDim >= rb.LogVolPerDim {
		t.Errorf("ellipsoid exclusion %.3f / LogVol/d %.3f vs ball %.3f / %.3f", re.Exclusion, re.LogVolPerDim, rb.Exclusion, rb.LogVolPerDim)
	}
}

// covarianceOneByOne is Covariance as a rank-one update a difference at a
// time, a product at a time: the order of sums Covariance keeps.
func covarianceOneByOne(b *bundle.Bundle) []float64 {
	d, m := b.D, b.N*b.K
	mean := make([]float64, d)
	for i := range b.N {
		for j, v := range b.PositiveDiffs(nil, i) {
			mean[j%d] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(m)
	}
	sigma := make([]float64, d*d)
	x := make([]float64, d)
	for i := range b.N {
		diffs := b.PositiveDiffs(nil, i)
		for a := range b.K {
			for j := range d {
				x[j] = float64(diffs[a*d+j]) - mean[j]
			}
			for r := range d {
				for c := 0; c <= r; c++ {
					sigma[r*d+c] += float64(x[r] * x[c]) // no fused multiply-add, as AddScaled
				}
			}
		}
	}
	for r := range d {
		for c := 0; c <= r; c++ {
			sigma[r*d+c] /= float64(m - 1)
			sigma[c*d+r] = sigma[r*d+c]
		}
	}
	return sigma
}

// TestCovarianceSameSums: the blocked covariance on all cores has the
// bits of the update a difference at a time, for several dimensions, block
// counts (an anchor's differences never split; 9 600 differences of
// d = 70 make three mean blocks and two of the rank update's 4 MB) and
// goroutine counts.
func TestCovarianceSameSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, c := range []struct{ n, k, d int }{{40, 3, 3}, {300, 7, 17}, {90, 11, 70}, {1, 2, 5}, {1300, 7, 9}, {800, 12, 70}} {
		b := &bundle.Bundle{N: c.n, K: c.k, D: c.d, Anchors: make([]float32, c.n*c.d), Positives: make([]float32, c.n*c.k*c.d)}
		for i := range b.Anchors {
			b.Anchors[i] = float32(rng.NormFloat64())
		}
		for i := range b.Positives {
			b.Positives[i] = float32(3 * rng.NormFloat64())
		}
		want := covarianceOneByOne(b)
		for _, procs := range []int{1, 4} {
			prev := runtime.GOMAXPROCS(procs)
			got, _, err := Covariance(context.Background(), b, 0)
			runtime.GOMAXPROCS(prev)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("n=%d k=%d d=%d, %d goroutines: Σ[%d] = %v, want %v", c.n, c.k, c.d, procs, i, got[i], want[i])
				}
			}
		}
	}
}

// labelled draws n points of c classes in d dimensions (class means apart,
// each class its own diagonal spread) and makes fit, calibration and test
// bundles from them as ccs bundle does from labels: positives are other
// points of the anchor's class in the same split.
func labelled(t *testing.T, rng *rand.Rand, nFit, nCal, nTest, c, d, k int) (fit, cal, test *bundle.Bundle) {
	t.Helper()
	n := nFit + nCal + nTest
	scale := make([]float64, c*d)
	mean := make([]float64, c*d)
	for i := range scale {
		scale[i] = 0.3 + 1.5*rng.Float64()
		mean[i] = 2 * rng.NormFloat64()
	}
	points, labels := make([]float32, n*d), make([]int64, n)
	for i := range n {
		labels[i] = int64(i % c)
		for j := range d {
			l := int(labels[i])*d + j
			points[i*d+j] = float32(mean[l] + scale[l]*rng.NormFloat64())
		}
	}
	perm := rng.Perm(n)
	parts := [][]int{perm[:nFit], perm[nFit : nFit+nCal], perm[nFit+nCal:]}
	var out [3]*bundle.Bundle
	for p, idx := range parts {
		b, err := bundle.FromLabels(points, d, labels, idx, k, rng)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
	}
	return out[0], out[1], out[2]
}

// TestEllipsoidFromCoverage: over 400 seeded draws of label-made bundles
// (d = 24, 150 calibration points, positives the other points of the
// anchor's class), the ellipsoid with Σ from the fit split covers at least
// 1−α on average (within three standard errors). The paper's halves of the
// calibration split share rows (a row of one half is a positive of the
// other's anchors), and on these draws they fall short: the test fails if
// EllipsoidFrom is given the halves, or the calibration split, to estimate
// Σ on. Under the race detector, 40 draws (the bounds are the count's):
// the concurrency is Σ's and the evaluation's, the same in each.
func TestEllipsoidFromCoverage(t *testing.T) {
	t.Parallel()
	const alpha = 0.1
	draws := 400
	if race.Enabled {
		draws = 40
	}
	var from, halves []float64
	for r := range draws {
		rng := rand.New(rand.NewPCG(uint64(r), 77))
		fit, cal, test := labelled(t, rng, 300, 150, 150, 3, 24, 5)
		opt := Options{SplitSeed: uint64(r)}
		opt.Calibration.Seed = uint64(r)
		for _, c := range []struct {
			dst  *[]float64
			make func() (*conformal.Set, error)
		}{
			{&from, func() (*conformal.Set, error) { return EllipsoidFrom(context.Background(), fit, cal, alpha, opt) }},
			{&halves, func() (*conformal.Set, error) { return Ellipsoid(context.Background(), cal, alpha, opt) }},
		} {
			s, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			res, err := eval.Evaluate(s, test)
			if err != nil {
				t.Fatal(err)
			}
			*c.dst = append(*c.dst, res.Coverage)
		}
	}
	meanSE := func(x []float64) (m, se float64) {
		m, sd := stat.MeanStdDev(x, nil)
		return m, sd / math.Sqrt(float64(len(x)))
	}
	mf, sf := meanSE(from)
	mh, sh := meanSE(halves)
	t.Logf("coverage over %d draws: Σ from the fit split %.4f ± %.4f, from half of the calibration split %.4f ± %.4f", draws, mf, sf, mh, sh)
	if mf < 1-alpha-3*sf {
		t.Errorf("Σ from the fit split: mean coverage %.4f, want ≥ %v − 3·%.4f", mf, 1-alpha, sf)
	}
	if mh > mf-3*math.Hypot(sf, sh) {
		t.Errorf("halves of the calibration split: mean coverage %.4f, not below the fit split's %.4f: the draws no longer show the shared rows' bias", mh, mf)
	}
}

// TestEllipsoidSharedRows: Σ from half of a bundle whose positives index
// its own anchors is refused (ErrSharedRows); positives written out, a pool
// of their own, or Σ from another split are not, and their sets carry no
// shared-rows warning; a set file that says its rows were shared (made
// before the refusal) still warns.
func TestEllipsoidSharedRows(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	const n, k, d = 40, 3, 3
	byIndex := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, n*d), PositiveIndex: make([]int64, n*k)}
	for i := range byIndex.Anchors {
		byIndex.Anchors[i] = float32(rng.NormFloat64())
	}
	for i := range n {
		for j := range k {
			byIndex.PositiveIndex[i*k+j] = int64((i + 2*(j+1)) % n) // same parity: the same class
		}
	}
	if err := byIndex.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := Ellipsoid(context.Background(), byIndex, 0.1, Options{}); !errors.Is(err, ErrSharedRows) {
		t.Fatalf("halves of a bundle whose positives index its anchors: error %v, want ErrSharedRows", err)
	}
	pooled := *byIndex
	pooled.PositivePool = slices.Clone(byIndex.Anchors) // a pool of its own (views, passages)
	written := correlated(rng, n, k)
	warned := func(s *conformal.Set) bool {
		return slices.ContainsFunc(s.Warnings(), func(w string) bool { return strings.Contains(w, "shares rows") })
	}
	for _, c := range []struct {
		name string
		make func() (*conformal.Set, error)
	}{
		{"halves, a positive pool", func() (*conformal.Set, error) { return Ellipsoid(context.Background(), &pooled, 0.1, Options{}) }},
		{"halves, positives written out", func() (*conformal.Set, error) { return Ellipsoid(context.Background(), written, 0.1, Options{}) }},
		{"Σ from another split", func() (*conformal.Set, error) {
			return EllipsoidFrom(context.Background(), written, byIndex, 0.1, Options{})
		}},
	} {
		s, err := c.make()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.Fit.SharedRows || warned(s) {
			t.Errorf("%s: shared rows %v, warned %v", c.name, s.Fit.SharedRows, warned(s))
		}
		if c.name == "halves, a positive pool" {
			s.Fit.SharedRows = true // as a set file made before the refusal says
			if !warned(s) {
				t.Error("a set whose Σ shared rows with its threshold does not warn")
			}
		}
	}
}

// TestEllipsoidFewDifferences: Σ whose data define fewer directions than
// the dimension — from fewer differences than it (2 at d = 3), or from
// many differences among few items (200 differences of 40 items of 4
// classes at d = 64: the differences within classes span at most 40 − 4
// directions) — is singular but for its ridge: the set records how many
// directions its data define, and warns; from enough items, it does not.
// A set file of before the rank was kept warns by the count of
// differences.
func TestEllipsoidFewDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	cal := correlated(rng, 200, 1)
	fit64, cal64, _ := labelled(t, rng, 40, 200, 40, 4, 64, 5)
	for _, c := range []struct {
		fit, cal *bundle.Bundle
		rank     int
		warn     string
	}{
		{correlated(rng, 2, 1), cal, 1, "Σ's data define only 1 of its 3 directions (from 2 anchor−positive differences of 2 fit anchors): the other 2 are its ridge's alone"},
		{correlated(rng, 50, 2), cal, 3, ""},
		{fit64, cal64, 36, "Σ's data define only 36 of its 64 directions (from 200 anchor−positive differences of 40 fit anchors)"},
	} {
		s, err := EllipsoidFrom(context.Background(), c.fit, c.cal, 0.1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(s.Warnings(), func(w string) bool { return c.warn != "" && strings.HasPrefix(w, c.warn) })
		if s.Fit.Differences != c.fit.N*c.fit.K || s.Fit.Rank != c.rank || warned != (c.warn != "") || c.warn == "" && strings.Contains(strings.Join(s.Warnings(), " "), "Σ") {
			t.Errorf("%d differences: recorded %d, rank %d (want %d), warnings %q", c.fit.N*c.fit.K, s.Fit.Differences, s.Fit.Rank, c.rank, s.Warnings())
		}
		if c.rank == 1 {
			s.Fit.Rank = 0 // a file of before
			if !slices.ContainsFunc(s.Warnings(), func(w string) bool {
				return strings.HasPrefix(w, "Σ was estimated on 2 anchor−positive differences in dimension 3, fewer than the dimension")
			}) {
				t.Errorf("no rank: warnings %q", s.Warnings())
			}
		}
	}
}

// gapped draws a dual encoder's pairs: queries (anchors) at a random point
// and their k passages (positives) at query + gap + N(0, σ²I), negatives
// at other queries' passages' places, in d = 4.
func gapped(rng *rand.Rand, n, k int) *bundle.Bundle {
	const d = 4
	gap := [d]float64{1.5, -1, 0.5, 0}
	b := &bundle.Bundle{N: n, K: k, D: d, KNeg: k, Anchors: make([]float32, n*d),
		Positives: make([]float32, n*k*d), Negatives: make([]float32, n*k*d)}
	for i := range n {
		for j := range d {
			b.Anchors[i*d+j] = float32(3 * rng.NormFloat64())
		}
		for a := range k {
			for j := range d {
				b.Positives[(i*k+a)*d+j] = b.Anchors[i*d+j] + float32(gap[j]+0.5*rng.NormFloat64())
				b.Negatives[(i*k+a)*d+j] = float32(3*rng.NormFloat64() + gap[j])
			}
		}
	}
	return b
}

// TestShiftedCoverage: the ball and the ellipsoid centred at anchor + the
// fit split's mean offset keep the guarantee — mean coverage over 400
// draws of fit, calibration and test splits at least 1 − α less three
// standard errors — and, where every positive lies off its anchor by the
// same gap, are far smaller than the sets centred on the anchor (log-volume
// per dimension lower by more than 0.5) and exclude more. Under the race
// detector, 40 draws (the bound is the count's): the concurrency is the
// same in each.
func TestShiftedCoverage(t *testing.T) {
	t.Parallel()
	const alpha = 0.1
	draws := 400
	if race.Enabled {
		draws = 40
	}
	type row struct{ cov, logvol, exc []float64 }
	rows := map[string]*row{}
	for r := range draws {
		rng := rand.New(rand.NewPCG(uint64(r), 78))
		fit, cal, test := gapped(rng, 200, 3), gapped(rng, 100, 1), gapped(rng, 200, 3)
		for _, shift := range []bool{false, true} {
			opt := Options{SplitSeed: uint64(r), Shift: shift}
			opt.Calibration.Seed = uint64(r)
			ball, err := BallFrom(fit, cal, alpha, opt)
			if err != nil {
				t.Fatal(err)
			}
			ell, err := EllipsoidFrom(context.Background(), fit, cal, alpha, opt)
			if err != nil {
				t.Fatal(err)
			}
			for name, s := range map[string]*conformal.Set{"ball": ball, "ellipsoid": ell} {
				res, err := eval.Evaluate(s, test)
				if err != nil {
					t.Fatal(err)
				}
				key := name
				if shift {
					key += " shifted"
				}
				if rows[key] == nil {
					rows[key] = &row{}
				}
				rows[key].cov = append(rows[key].cov, res.Coverage)
				rows[key].logvol = append(rows[key].logvol, res.LogVolPerDim)
				rows[key].exc = append(rows[key].exc, res.Exclusion)
			}
		}
	}
	for _, name := range []string{"ball", "ellipsoid"} {
		plain, shifted := rows[name], rows[name+" shifted"]
		m, sd := stat.MeanStdDev(shifted.cov, nil)
		se := sd / math.Sqrt(float64(draws))
		lp, ls := stat.Mean(plain.logvol, nil), stat.Mean(shifted.logvol, nil)
		ep, es := stat.Mean(plain.exc, nil), stat.Mean(shifted.exc, nil)
		t.Logf("%s: shifted coverage %.4f ± %.4f (plain %.4f); LogVol/d %.3f against %.3f; exclusion %.3f against %.3f", name, m, se, stat.Mean(plain.cov, nil), ls, lp, es, ep)
		if m < 1-alpha-3*se {
			t.Errorf("%s shifted: mean coverage %.4f, want ≥ %v − 3·%.4f", name, m, 1-alpha, se)
		}
		if ls > lp-0.5 || es <= ep {
			t.Errorf("%s shifted: LogVol/d %.3f (plain %.3f), exclusion %.3f (plain %.3f): the shift should shrink the set", name, ls, lp, es, ep)
		}
	}
}
