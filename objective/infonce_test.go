package objective

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/internal/gradcheck"
)

func gridRows(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = gradcheck.OnGrid(rng.NormFloat64())
	}
	return x
}

func randPairs(rng *rand.Rand, n, k, kn, d int) Pairs {
	return Pairs{N: n, K: k, KNeg: kn, D: d,
		Anchors: gridRows(rng, n*d), Positives: gridRows(rng, n*k*d), Negatives: gridRows(rng, n*kn*d)}
}

// TestInfoNCEValue checks the loss on vectors whose cosines are known: a
// positive along the anchor (s = 1) and an orthogonal negative (s = 0) give
// −log(e^{1/τ}/(e^{1/τ} + 1)) = log(1 + e^{−1/τ}).
func TestInfoNCEValue(t *testing.T) {
	t.Parallel()
	b := Pairs{N: 1, K: 1, KNeg: 1, D: 2, Anchors: []float32{2, 0}, Positives: []float32{0.5, 0}, Negatives: []float32{0, 3}}
	for _, tau := range []float64{0.1, 1} {
		got, err := InfoNCE(b, tau, nil, nil, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := math.Log1p(math.Exp(-1 / tau)); math.Abs(got-want) > 1e-15 {
			t.Errorf("τ = %v: loss %v, want %v", tau, got, want)
		}
	}
	// Two positives, one at s = −1: mean of the two pairs' losses.
	b = Pairs{N: 1, K: 2, KNeg: 1, D: 2, Anchors: []float32{1, 0}, Positives: []float32{1, 0, -1, 0}, Negatives: []float32{0, 1}}
	got, _ := InfoNCE(b, 1, nil, nil, nil, 1)
	want := (math.Log1p(math.Exp(-1)) + math.Log1p(math.Exp(1))) / 2
	if math.Abs(got-want) > 1e-15 {
		t.Errorf("two positives: loss %v, want %v", got, want)
	}
}

// TestInfoNCEGradients checks ∂L/∂ of anchors, positives and negatives
// against central differences.
func TestInfoNCEGradients(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 1))
	for _, tau := range []float64{0.1, 0.5} {
		b := randPairs(rng, 3, 2, 4, 5)
		ga, gp, gn := make([]float64, len(b.Anchors)), make([]float64, len(b.Positives)), make([]float64, len(b.Negatives))
		if _, err := InfoNCE(b, tau, ga, gp, gn, 1); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			x    *[]float32
			g    []float64
		}{{"anchors", &b.Anchors, ga}, {"positives", &b.Positives, gp}, {"negatives", &b.Negatives, gn}} {
			orig := *tc.x
			f := func(x []float32) float64 {
				*tc.x = x
				defer func() { *tc.x = orig }()
				l, err := InfoNCE(b, tau, nil, nil, nil, 1)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			gradcheck.CheckFloat32(t, "InfoNCE "+tc.name, f, tc.g, orig, gradcheck.Tol, 1e-3)
		}
	}
}

func TestInfoNCEDeterministic(t *testing.T) {
	t.Parallel()
	b := randPairs(rand.New(rand.NewPCG(12, 1)), 300, 3, 5, 8)
	g1 := make([]float64, len(b.Anchors))
	l1, _ := InfoNCE(b, 0.1, g1, make([]float64, len(b.Positives)), make([]float64, len(b.Negatives)), 1)
	for _, w := range []int{2, 5} {
		g := make([]float64, len(b.Anchors))
		l, _ := InfoNCE(b, 0.1, g, make([]float64, len(b.Positives)), make([]float64, len(b.Negatives)), w)
		if l != l1 || !slices.Equal(g, g1) {
			t.Errorf("%d workers: loss %v, want %v bit for bit (and the same gradients)", w, l, l1)
		}
	}
}

func TestInfoNCEErrors(t *testing.T) {
	t.Parallel()
	b := randPairs(rand.New(rand.NewPCG(13, 1)), 2, 2, 2, 3)
	for i := range 3 {
		b.Positives[3+i] = 0
	}
	if _, err := InfoNCE(b, 0.1, nil, nil, nil, 1); err == nil || !strings.Contains(err.Error(), "projected positive 1 has norm 0") {
		t.Errorf("zero positive: error %v", err)
	}
	b.Positives[3] = 1
	b.Negatives[2] = float32(math.NaN())
	if _, err := InfoNCE(b, 0.1, nil, nil, nil, 1); err == nil || !strings.Contains(err.Error(), "projected negative 0 has norm NaN") {
		t.Errorf("NaN negative: error %v", err)
	}
	if _, err := InfoNCE(b, 0, nil, nil, nil, 1); err == nil || !strings.Contains(err.Error(), "temperature") {
		t.Errorf("τ = 0: error %v", err)
	}
}

// TestEvalRows checks that EvalRows computes Eval's objective.
func TestEvalRows(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(14, 1))
	for _, g := range learnables(rng, 3) {
		for _, o := range []Objective{Neg, Vol, NegVol} {
			ev, _ := New(Config{Objective: o})
			b := Batch{Pos: randRows(rng, 200, 3, 1), Neg: randRows(rng, 300, 3, 2)}
			v1, err := ev.Eval(g, b, make([]float64, g.NumParams()))
			if err != nil {
				t.Fatal(err)
			}
			v2, err := ev.EvalRows(g, b, make([]float64, 200), make([]float64, 300))
			if err != nil {
				t.Fatal(err)
			}
			if v1.T != v2.T || math.Abs(v1.Loss-v2.Loss) > 1e-12*math.Max(1, math.Abs(v1.Loss)) {
				t.Errorf("%v %v: EvalRows %+v, Eval %+v", g.Kind(), o, v2, v1)
			}
		}
	}
}

func TestParseObjectives(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    Objective
		infoNCE bool
		err     string
	}{
		{"neg", Neg, false, ""},
		{"vol,infonce", Vol, true, ""},
		{"infonce,neg", Neg, true, ""},
		{"neg,vol,infonce", NegVol, true, ""},
		{"neg,infonce,vol", NegVol, true, ""},
		{"infonce", 0, false, "add the set's objective"},
		{"neg,infonce,infonce", 0, false, "twice"},
		{"neg,foo", 0, false, "unknown objective"},
	} {
		o, n, err := ParseObjectives(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || o != tc.want || n != tc.infoNCE {
			t.Errorf("%q: %v, %v, %v; want %v, %v", tc.in, o, n, err, tc.want, tc.infoNCE)
		}
	}
}
