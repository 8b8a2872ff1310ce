package eval

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestScoredSame: a Scored's Evaluate, WithCurve, ByClass and Resplits
// give the numbers of the functions they are named after, which score the
// bundle themselves, to the bit, for geometries with fast scores and
// without (a single-norm of d ≥ 16 scores on BLAS), marginal, PAC and
// class-conditional sets, a bundle without negatives and one whose scores
// tie the thresholds.
func TestScoredSame(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(50, 50))
	for _, d := range []int{3, 17} {
		cal, test := classBundle(rng, 300, 3, d), classBundle(rng, 400, 4, d)
		bare := *test
		bare.KNeg, bare.Negatives = 0, nil
		m := make([]float64, d*d)
		for i := range m {
			m[i] = 0.3 * rng.NormFloat64()
		}
		for j := range d {
			m[j*d+j] += 1
		}
		norm, err := geometry.NewNorm(d, m, 1.4)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []geometry.Geometry{geometry.Ball{D: d}, geometry.UnitGenBall(d, 1.3), norm} {
			for _, opt := range []conformal.Options{{Mode: conformal.OnePerAnchor, Seed: 3}, {Mode: conformal.PAC, Delta: 0.1, Seed: 3}, {Mode: conformal.Class, Seed: 3}} {
				set, err := conformal.Calibrate(g, cal, 0.1, opt)
				if err != nil {
					t.Fatal(err)
				}
				// The calibration bundle itself: its scores tie the thresholds.
				for _, b := range []*bundle.Bundle{test, &bare, cal} {
					name := fmt.Sprintf("d=%d %T %v negatives=%d", d, g, opt.Mode, b.KNeg)
					sc, err := Score(set, b)
					if err != nil {
						t.Fatal(err)
					}
					same := func(what string, got, want any, gotErr, wantErr error) {
						t.Helper()
						if g, w := fmt.Sprintf("%v %v", got, gotErr), fmt.Sprintf("%v %v", want, wantErr); g != w {
							t.Errorf("%s: %s: Scored gives\n%s\nwant\n%s", name, what, g, w)
						}
					}
					r1, err1 := sc.Evaluate()
					r2, err2 := Evaluate(set, b)
					same("Evaluate", r1, r2, err1, err2)
					_, c1, err1 := sc.ByClass()
					_, c2, err2 := ByClass(set, b)
					same("ByClass", c1, c2, err1, err2)
					r1, c1, err1 = WithClasses(set, b)
					same("WithClasses", fmt.Sprint(r1, c1), fmt.Sprint(r2, c2), err1, err2)
					if set.ClassConditional() {
						continue
					}
					r1, p1, err1 := sc.WithCurve(cal, []float64{0.05, 0.2, 0.5})
					r2, p2, err2 := WithCurve(set, cal, b, []float64{0.05, 0.2, 0.5})
					same("WithCurve", fmt.Sprint(r1, p1), fmt.Sprint(r2, p2), err1, err2)
					s1, err1 := sc.Resplits(30, 0.5, 9)
					s2, err2 := Resplits(set, b, 30, 0.5, 9)
					same("Resplits", s1, s2, err1, err2)
				}
			}
		}
	}
}
