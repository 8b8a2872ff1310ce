package ood

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// review50Bundle is n anchors of dimension d with k positives each, the
// anchors plus noise.
func review50Bundle(rng *rand.Rand, n, k, d int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, d*n), Positives: make([]float32, d*n*k)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(rng.NormFloat64())
	}
	for i := range b.Positives {
		b.Positives[i] = b.Anchors[(i/(k*d))*d+i%d] + float32(0.5*rng.NormFloat64())
	}
	return b
}

// review50Test is a calibrated per-input OOD test on 1 000 held-out
// inputs, and 2 000 fresh in-distribution queries.
func review50Test(t *testing.T) (*Conformal, []float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 4
	cal := review50Bundle(rng, 600, 2, d)
	set, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if set.Reference, err = conformal.NewReference(cal, 100, 1, conformal.CalibrationAnchors); err != nil {
		t.Fatal(err)
	}
	near, err := NewNearest(set, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if set.OOD, err = near.Calibrate(review50Bundle(rng, 1000, 1, d).Anchors, "held"); err != nil {
		t.Fatal(err)
	}
	c, err := NewConformal(set, Test{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	return c, review50Bundle(rng, 2000, 1, d).Anchors
}

// TestReview50AnswerChecksTestLevel checks that Conformal.Answer refuses a
// level that With refuses, set on its exported Test field, and that
// Test.PValues and Test.FlaggedRank take any δ without a panic (failed at
// 1c23c4e: Answer checked only a zero Alpha, so α_ood = 1.5 flagged every
// input, δ = 0.9 and an α_ood that 1 000 scores cannot reach were answered
// without an error, and a negative δ panicked in gonum's Beta.Quantile, as
// did PValues and FlaggedRank for δ < 0 or δ ≥ 1).
func TestReview50AnswerChecksTestLevel(t *testing.T) {
	c, queries := review50Test(t)
	for _, test := range []Test{{Alpha: 1.5}, {Alpha: 0.05, Delta: 0.9}, {Alpha: 0.0001}, {Alpha: 0.05, Delta: -1}, {Alpha: 0.05, Delta: 1}, {Alpha: 0.05, Delta: math.NaN()}} {
		_, want := c.With(test)
		if want == nil {
			t.Fatalf("With(%+v) accepted", test)
		}
		cc := *c
		cc.Test = test
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Test{Alpha: %v, Delta: %v} (refused by With) panicked: %v", test.Alpha, test.Delta, r)
				}
			}()
			a, err := cc.Answer(context.Background(), queries, 0)
			if err == nil {
				flagged := 0
				for _, r := range a.Results {
					if r.OOD {
						flagged++
					}
				}
				t.Errorf("Answer with Test{Alpha: %v, Delta: %v} (refused by With) answered without an error: %d of %d inputs flagged",
					test.Alpha, test.Delta, flagged, len(a.Results))
			} else if err.Error() != want.Error() {
				t.Errorf("Answer with Test{Alpha: %v, Delta: %v}: %v, want With's error %v", test.Alpha, test.Delta, err, want)
			}
			// Unchecked, an invalid δ has no level: p-values of 1, which
			// flag nothing.
			if d := test.Delta; !(d >= 0 && d < 1) {
				for _, simultaneous := range []bool{false, true} {
					u := Test{Alpha: 0.05, Delta: d, Simultaneous: simultaneous}
					for i, p := range u.PValues(c.Cal, []float64{0, 1e9}) {
						if p != 1 {
							t.Errorf("δ = %v (simultaneous %v): PValues[%d] = %v, want 1", d, simultaneous, i, p)
						}
					}
					if r := u.FlaggedRank(c.Cal.N()); r != 0 {
						t.Errorf("δ = %v (simultaneous %v): FlaggedRank = %d, want 0", d, simultaneous, r)
					}
				}
			}
		}()
	}
}
