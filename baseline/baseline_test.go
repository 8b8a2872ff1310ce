package baseline

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/eval"
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

func TestCovarianceMatchesDirectFormula(t *testing.T) {
	t.Parallel()
	b := correlated(rand.New(rand.NewPCG(1, 1)), 40, 3)
	got, added, err := Covariance(b, 0.01)
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
	s, err := Ellipsoid(cal, 0.1, Options{SplitSeed: 5})
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
	ell, err := Ellipsoid(cal, 0.1, Options{})
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
					sigma[r*d+c] += x[r] * x[c]
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
// counts (an anchor's differences never split) and goroutine counts.
func TestCovarianceSameSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, c := range []struct{ n, k, d int }{{40, 3, 3}, {300, 7, 17}, {90, 11, 70}, {1, 2, 5}} {
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
			got, _, err := Covariance(b, 0)
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
