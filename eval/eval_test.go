package eval

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestEvaluateByHand: d = 1, anchor at 0, threshold 1 (membership is ≤).
func TestEvaluateByHand(t *testing.T) {
	b := &bundle.Bundle{N: 1, K: 3, D: 1, KNeg: 2,
		Anchors:   []float32{0},
		Positives: []float32{0.5, 1, -2},
		Negatives: []float32{0.9, 3}}
	s := &conformal.Set{Geometry: geometry.Ball{D: 1}, Threshold: 1, Alpha: 0.1,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor}}
	r, err := Evaluate(s, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Coverage != 2.0/3 || r.Exclusion != 0.5 || r.Positives != 3 || r.Negatives != 2 {
		t.Errorf("got %+v, want coverage 2/3, exclusion 1/2", r)
	}
	if want := math.Log(2); math.Abs(r.LogVolPerDim-want) > 1e-15 {
		t.Errorf("LogVol/d %v, want log 2", r.LogVolPerDim)
	}
	b.KNeg, b.Negatives = 0, nil
	if r, _ := Evaluate(s, b); !math.IsNaN(r.Exclusion) {
		t.Errorf("no negatives: exclusion %v, want NaN", r.Exclusion)
	}
	if _, err := Evaluate(&conformal.Set{Geometry: geometry.Ball{D: 2}, Calibration: conformal.Info{Mode: conformal.OnePerAnchor}}, b); err == nil {
		t.Error("dimension mismatch: no error")
	}
	if _, err := Evaluate(conformal.Uncalibrated(geometry.Ball{D: 1}, nil), b); err != conformal.ErrNotCalibrated {
		t.Errorf("uncalibrated set: error %v, want ErrNotCalibrated", err)
	}
}

// TestEvaluateDeterministic: the same numbers with 1 and several workers.
func TestEvaluateDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	b := &bundle.Bundle{N: 301, K: 7, D: 4, KNeg: 5}
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	b.Anchors, b.Positives, b.Negatives = fill(301*4), fill(301*7*4), fill(301*5*4)
	s := &conformal.Set{Geometry: geometry.UnitGenBall(4, 1.5), Threshold: 3, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor}}
	prev := runtime.GOMAXPROCS(1)
	r1, _ := Evaluate(s, b)
	runtime.GOMAXPROCS(4)
	r4, _ := Evaluate(s, b)
	runtime.GOMAXPROCS(prev)
	if r1 != r4 {
		t.Errorf("1 worker %+v, 4 workers %+v", r1, r4)
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	s := Summarize([]float64{1, 2, 3})
	if s.Mean != 2 || math.Abs(s.Std-math.Sqrt(2.0/3)) > 1e-15 || s.N != 3 {
		t.Errorf("got %+v, want mean 2, population std sqrt(2/3)", s)
	}
	if s := Summarize([]float64{5}); s.Std != 0 {
		t.Errorf("one value: std %v", s.Std)
	}
}
