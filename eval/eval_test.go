package eval

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
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
	// A bundle built by hand is checked as a file's is: a NaN, no anchors,
	// slices that are not its N rows — an error, not a count or a panic.
	for _, c := range []struct {
		name string
		b    *bundle.Bundle
		want string
	}{
		{"a NaN negative", &bundle.Bundle{N: 1, K: 1, D: 1, KNeg: 1, Anchors: []float32{0}, Positives: []float32{0.5}, Negatives: []float32{float32(math.NaN())}}, "eval: test bundle: negatives[0][0][0] is NaN"},
		{"no anchors", &bundle.Bundle{N: 0, K: 1, D: 1}, "eval: test bundle: anchors: no anchors"},
		{"N larger than the rows", &bundle.Bundle{N: 2, K: 1, D: 1, Anchors: []float32{0}, Positives: []float32{0.5}}, "eval: test bundle: anchors: 1 values"},
	} {
		if _, err := Evaluate(s, c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Anchors alone (an OOD sample's features): refused, not a NaN coverage.
	features := &bundle.Bundle{N: 1, D: 1, Anchors: []float32{0}}
	if _, err := Evaluate(s, features); !errors.Is(err, bundle.ErrFeatures) {
		t.Errorf("features: Evaluate %v, want ErrFeatures", err)
	}
	if _, err := Resplits(s, features, 5, 0.5, 0); !errors.Is(err, bundle.ErrFeatures) {
		t.Errorf("features: Resplits %v, want ErrFeatures", err)
	}
	// A class-conditional set too, before its classes are looked up: an
	// OOD sample's labels are classes the set has no threshold for, and
	// the calibration's held-out inputs have no positives to count.
	cs := &conformal.Set{Geometry: geometry.Ball{D: 1}, Threshold: 1, Alpha: 0.1,
		Calibration: conformal.Info{Mode: conformal.Class}, Classes: []conformal.ClassThreshold{{Label: 0, Threshold: 1, N: 9, Rank: 9}}}
	for _, labels := range [][]int64{{0}, {7}} {
		features.Labels = labels
		if _, err := Evaluate(cs, features); !errors.Is(err, bundle.ErrFeatures) {
			t.Errorf("features labelled %v: class-conditional Evaluate %v, want ErrFeatures", labels, err)
		}
		if _, _, err := WithClasses(cs, features); !errors.Is(err, bundle.ErrFeatures) {
			t.Errorf("features labelled %v: class-conditional WithClasses %v, want ErrFeatures", labels, err)
		}
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

// TestRecalibrated: each point is what Calibrate at its α and Evaluate
// give, and an α the calibration cannot reach is left out.
func TestRecalibrated(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	bundleOf := func(n int) *bundle.Bundle {
		b := &bundle.Bundle{N: n, K: 6, D: 3, KNeg: 4}
		fill := func(m int, scale float64) []float32 {
			x := make([]float32, m)
			for i := range x {
				x[i] = float32(scale * rng.NormFloat64())
			}
			return x
		}
		b.Anchors, b.Positives, b.Negatives = fill(n*3, 1), fill(n*6*3, 1), fill(n*4*3, 2)
		return b
	}
	cal, test := bundleOf(150), bundleOf(97)
	g := geometry.UnitGenBall(3, 1.3)
	set, err := conformal.Calibrate(g, cal, 0.1, conformal.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	alphas := []float64{0.005, 0.05, 0.1, 0.3}
	pts, err := Recalibrated(set, cal, test, alphas)
	if err != nil {
		t.Fatal(err)
	}
	// 150 scores reach α ≥ 1/151 only: 0.005 is left out.
	if len(pts) != 3 || pts[0].Alpha != 0.05 {
		t.Fatalf("points %+v, want α 0.05, 0.1, 0.3", pts)
	}
	for _, p := range pts {
		s, err := conformal.Calibrate(g, cal, p.Alpha, conformal.Options{Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Evaluate(s, test)
		if err != nil {
			t.Fatal(err)
		}
		if p.Result != want || p.N != 150 {
			t.Errorf("α=%v: %+v (n %d), want %+v (n 150)", p.Alpha, p.Result, p.N, want)
		}
	}
	if pts[0].Coverage <= pts[2].Coverage || pts[0].Exclusion >= pts[2].Exclusion {
		t.Errorf("coverage should fall and exclusion rise with α: %+v", pts)
	}
	// WithCurve: the set's own result and the same points, in one pass.
	own, err := Evaluate(set, test)
	if err != nil {
		t.Fatal(err)
	}
	r, both, err := WithCurve(set, cal, test, alphas)
	if err != nil {
		t.Fatal(err)
	}
	if r != own || !slices.Equal(both, pts) {
		t.Errorf("WithCurve: %+v and %+v, want %+v and %+v", r, both, own, pts)
	}
	if _, _, err := WithCurve(set, test, test, alphas); err == nil {
		t.Error("WithCurve accepted a bundle the set was not calibrated on")
	}
}

// TestJSONNaN: a NaN exclusion or summary is null in JSON and NaN again
// when read; the other fields survive the round trip.
func TestJSONNaN(t *testing.T) {
	in := []Point{{Alpha: 0.1, N: 9, Result: Result{Coverage: 0.9, Exclusion: math.NaN(), LogVolPerDim: -1.5, Positives: 10}},
		{Alpha: 0.2, N: 9, Result: Result{Coverage: 0.8, Exclusion: 0.25, Positives: 10, Negatives: 4}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"alpha":0.1,"n":9,"coverage":0.9,"exclusion":null,"logvol_per_dim":-1.5,"positives":10,"negatives":0},` +
		`{"alpha":0.2,"n":9,"coverage":0.8,"exclusion":0.25,"logvol_per_dim":0,"positives":10,"negatives":4}]`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var out []Point
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !math.IsNaN(out[0].Exclusion) || out[1] != in[1] || out[0].Alpha != 0.1 || out[0].Coverage != 0.9 {
		t.Errorf("round trip %+v, want %+v", out, in)
	}
	s := Summarize(nil)
	b, err = json.Marshal(s)
	if err != nil || string(b) != `{"mean":null,"std":null,"n":0}` {
		t.Errorf("empty summary: %s, %v", b, err)
	}
	var s2 Summary
	if err := json.Unmarshal([]byte(`{"mean":1.5,"std":null,"n":2}`), &s2); err != nil || s2.Mean != 1.5 || !math.IsNaN(s2.Std) || s2.N != 2 {
		t.Errorf("read %+v, %v", s2, err)
	}
}

// TestEvaluateCounts: evaluate's binned counts equal a plain count of the
// exact scores against each threshold, for thresholds that tie with
// scores, repeat, are ±Inf or NaN, in any order, for a geometry with fast
// scores (the generalized ball) and one without (the ℓ2 ball).
func TestEvaluateCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	b := &bundle.Bundle{N: 40, K: 7, D: 3, KNeg: 5}
	fill := func(m int, scale float64) []float32 {
		x := make([]float32, m)
		for i := range x {
			x[i] = float32(scale * rng.NormFloat64())
		}
		return x
	}
	b.Anchors, b.Positives, b.Negatives = fill(b.N*3, 1), fill(b.N*b.K*3, 1), fill(b.N*b.KNeg*3, 2)
	for _, g := range []geometry.Geometry{geometry.UnitGenBall(3, 1.3), geometry.Ball{D: 3}} {
		var pos, neg []float64
		for i := range b.N {
			pos = append(pos, g.Scores(make([]float64, b.K), b.PositiveDiffs(nil, i))...)
			neg = append(neg, g.Scores(make([]float64, b.KNeg), b.NegativeDiffs(nil, i))...)
		}
		for trial := range 50 {
			qs := []float64{math.Inf(1), math.Inf(-1), math.NaN()}[:trial%4]
			for range 1 + rng.IntN(8) {
				q := pos[rng.IntN(len(pos))] // a tie with a positive
				if rng.IntN(2) == 0 {
					q = neg[rng.IntN(len(neg))]
				}
				qs = append(qs, q, q) // and a repeat
			}
			rng.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
			rs, err := evaluate(context.Background(), g, qs, b, nil)
			if err != nil {
				t.Fatal(err)
			}
			for j, q := range qs {
				var in, out int
				for _, v := range pos {
					if v <= q {
						in++
					}
				}
				for _, v := range neg {
					if v > q {
						out++
					}
				}
				if got := rs[j]; got.Coverage != float64(in)/float64(len(pos)) || got.Exclusion != float64(out)/float64(len(neg)) {
					t.Fatalf("%T, q=%v: coverage %v exclusion %v, want %d/%d and %d/%d", g, q, got.Coverage, got.Exclusion, in, len(pos), out, len(neg))
				}
			}
		}
	}
}
