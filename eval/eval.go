// Package eval measures fitted sets on test bundles: coverage of positives,
// exclusion of negatives and log-volume per dimension, and summaries over
// seeds.
package eval

import (
	"fmt"
	"math"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/parallel"
)

// Result is a set's performance on one test bundle.
type Result struct {
	// Coverage is the fraction of all test positives (N·K) inside the set.
	Coverage float64 `json:"coverage"`
	// Exclusion is the fraction of all test negatives (N·KNeg) outside the
	// set; NaN when the bundle has no negatives.
	Exclusion float64 `json:"exclusion"`
	// LogVolPerDim is log Vol(N_q̂)/d, the paper's LogVol/d.
	LogVolPerDim float64 `json:"logvol_per_dim"`
	Positives    int     `json:"positives"`
	Negatives    int     `json:"negatives"`
}

// Evaluate scores every positive and negative of test under s. It streams
// over anchors: at most one anchor's differences per worker are held at a
// time.
func Evaluate(s *conformal.Set, test *bundle.Bundle) (Result, error) {
	if !s.Calibrated() {
		return Result{}, conformal.ErrNotCalibrated
	}
	if s.Geometry.Dim() != test.D {
		return Result{}, fmt.Errorf("set has dimension %d, test embeddings %d", s.Geometry.Dim(), test.D)
	}
	// One count per chunk of anchors, summed in chunk order: integers, so the
	// result does not depend on the number of goroutines.
	const chunk = 64
	type count struct{ in, out int }
	counts := make([]count, parallel.Chunks(test.N, chunk))
	parallel.For(test.N, chunk, 0, func(c, lo, hi int) {
		pd := make([]float32, test.K*test.D)
		nd := make([]float32, test.KNeg*test.D)
		ps := make([]float64, test.K)
		ns := make([]float64, test.KNeg)
		for i := lo; i < hi; i++ {
			for _, v := range s.Geometry.Scores(ps, test.PositiveDiffs(pd, i)) {
				if v <= s.Threshold {
					counts[c].in++
				}
			}
			if test.HasNegatives() {
				for _, v := range s.Geometry.Scores(ns, test.NegativeDiffs(nd, i)) {
					if v > s.Threshold {
						counts[c].out++
					}
				}
			}
		}
	})
	var in, out int
	for _, c := range counts {
		in += c.in
		out += c.out
	}
	r := Result{Positives: test.N * test.K, Negatives: test.N * test.KNeg,
		LogVolPerDim: s.LogVolume() / float64(test.D)}
	r.Coverage = float64(in) / float64(r.Positives)
	r.Exclusion = math.NaN()
	if r.Negatives > 0 {
		r.Exclusion = float64(out) / float64(r.Negatives)
	}
	return r, nil
}

// Summary is the mean and standard deviation of a metric over seeds. Std is
// the population standard deviation (divisor n, numpy.std's default, which
// the paper's ± figures use); it is 0 for a single seed.
type Summary struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	N    int     `json:"n"`
}

// Summarize returns the mean and standard deviation of x.
func Summarize(x []float64) Summary {
	s := Summary{N: len(x)}
	if len(x) == 0 {
		return Summary{Mean: math.NaN(), Std: math.NaN()}
	}
	for _, v := range x {
		s.Mean += v
	}
	s.Mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - s.Mean) * (v - s.Mean)
	}
	s.Std = math.Sqrt(ss / float64(len(x)))
	return s
}
