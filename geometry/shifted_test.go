package geometry

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestShifted: a shifted ball scores ‖x + c‖ for every row (computed here
// in float64), its fast scores and volume are the inner ball's at x + c,
// its gradients match finite differences of its scores (a generalized
// ball inside), and bad shifts are refused.
func TestShifted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const d, n = 5, 40
	shift := make([]float64, d)
	for j := range shift {
		shift[j] = rng.NormFloat64()
	}
	diffs := make([]float32, n*d)
	for i := range diffs {
		diffs[i] = float32(rng.NormFloat64())
	}
	s, err := NewShifted(Ball{D: d}, shift)
	if err != nil {
		t.Fatal(err)
	}
	got, fast := s.Scores(nil, diffs), s.ScoresFast(nil, diffs)
	for i := range n {
		var ss float64
		for j := range d {
			v := float64(diffs[i*d+j]) + float64(float32(shift[j]))
			ss += v * v
		}
		if want := math.Sqrt(ss); math.Abs(got[i]-want) > 1e-5*want || math.Abs(fast[i]-want) > 1e-4*want {
			t.Fatalf("row %d: score %v, fast %v, want ‖x + c‖ = %v", i, got[i], fast[i], want)
		}
	}
	if s.LogVolume(2) != (Ball{D: d}).LogVolume(2) || s.Kind() != KindBall || s.Dim() != d {
		t.Errorf("volume %v, kind %v, dim %d: want the inner ball's", s.LogVolume(2), s.Kind(), s.Dim())
	}
	if got := Describe(s).String(); got != "ball (centre shifted)" {
		t.Errorf("Describe: %q", got)
	}
	if inner, c := Unshift(s); inner != (Ball{D: d}) || len(c) != d {
		t.Errorf("Unshift: %v, %v", inner, c)
	}

	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = 0.5+rng.Float64(), 1.5+rng.Float64()
	}
	gb, err := NewGenBall(m, p)
	if err != nil {
		t.Fatal(err)
	}
	sg, _ := NewShifted(gb, shift)
	x := diffs[:d]
	grad := sg.InputGrads(nil, x)
	const h = 1e-3
	for j := range d {
		up, down := append([]float32(nil), x...), append([]float32(nil), x...)
		up[j] += h
		down[j] -= h
		fd := (sg.Scores(nil, up)[0] - sg.Scores(nil, down)[0]) / (float64(up[j]) - float64(down[j]))
		if math.Abs(fd-grad[j]) > 1e-2*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂φ/∂x_%d: %v, finite difference %v", j, grad[j], fd)
		}
	}

	for _, c := range []struct {
		shift []float64
		want  string
	}{
		{make([]float64, d-1), "a shift of 4 values for a geometry of dimension 5"},
		{[]float64{0, math.NaN(), 0, 0, 0}, "shift[1] is NaN"},
		{[]float64{0, 0, 1e39, 0, 0}, "shift[2] is 1e+39: want a finite float32"},
	} {
		if _, err := NewShifted(Ball{D: d}, c.shift); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.shift, err, c.want)
		}
	}
}
