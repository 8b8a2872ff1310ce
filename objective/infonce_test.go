package objective

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
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
	// A small τ (the paper's sensitivity sweep goes to 0.001): two
	// positives at s = 1 and s = −1 and a negative at s = 0 give the
	// terms log(1 + e^{−1/τ}) ≈ 0 and log(1 + e^{1/τ}) ≈ 1/τ, 1000 and
	// 2000 logits apart: finite, not −Inf from a shared maximum.
	for _, tau := range []float64{0.01, 0.001} {
		got, err := InfoNCE(b, tau, make([]float64, 2), make([]float64, 4), make([]float64, 2), 1)
		want := (math.Log1p(math.Exp(-1/tau)) + 1/tau + math.Log1p(math.Exp(-1/tau))) / 2
		if err != nil || math.Abs(got-want) > 1e-12*want {
			t.Errorf("τ = %v: loss %v (%v), want %v", tau, got, err, want)
		}
	}
}

// TestInfoNCEGradients checks ∂L/∂ of anchors, positives and negatives
// against central differences.
func TestInfoNCEGradients(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 1))
	for _, tau := range []float64{0.1, 0.5, 0.02} {
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

// TestEvalRowGrads: Eval's per-row gradients carry its parameter gradient
// (the chain rule through the scores): ∂Loss/∂θ = Σ Pos_i·∂φ_i/∂θ +
// Σ Neg_j·∂φ_j/∂θ + λ_vol·∂logVol/∂θ, and asking for them changes neither the
// value nor ∂Loss/∂θ. Rows outside the threshold's window weigh 0, and
// with more negatives than one parallel chunk.
func TestEvalRowGrads(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(14, 1))
	for _, g := range learnables(rng, 3) {
		for _, o := range []Objective{Neg, Vol, NegVol} {
			for _, mode := range []ThresholdMode{Soft, OrderStatistic, Detached} {
				ev, _ := New(Config{Objective: o, Threshold: mode, Lambda: 0.3})
				nPos, nNeg := 200, chunkRows(3, 6)+300
				b := Batch{Pos: randRows(rng, nPos, 3, 1), Neg: randRows(rng, nNeg, 3, 2)}
				g1 := make([]float64, g.NumParams())
				v1, err := ev.Eval(g, b, Grads{Params: g1})
				if err != nil {
					t.Fatal(err)
				}
				g2, pos, neg := make([]float64, g.NumParams()), make([]float64, nPos), make([]float64, nNeg)
				v2, err := ev.Eval(g, b, Grads{Params: g2, Pos: pos, Neg: neg})
				if err != nil {
					t.Fatal(err)
				}
				if v1 != v2 && !(math.IsNaN(v1.NegTerm) && v1.Loss == v2.Loss && v1.T == v2.T) {
					t.Fatalf("%v %v %v: value %+v with row gradients, %+v without", g.Kind(), o, mode, v2, v1)
				}
				for i := range g1 {
					if g1[i] != g2[i] {
						t.Fatalf("%v %v %v: ∂Loss/∂θ[%d] %v with row gradients, %v without", g.Kind(), o, mode, i, g2[i], g1[i])
					}
				}
				// The rows alone (a projection head's call): the same value and
				// row gradients, to rounding (the Neg term is summed in row
				// order there, per parallel chunk with ∂Loss/∂θ).
				pos3, neg3 := make([]float64, nPos), make([]float64, nNeg)
				v3, err := ev.Eval(g, b, Grads{Pos: pos3, Neg: neg3})
				if err != nil {
					t.Fatal(err)
				}
				close := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y)) }
				if !close(v3.Loss, v1.Loss) || v3.T != v1.T {
					t.Fatalf("%v %v %v: value %+v from the rows alone, %+v with ∂Loss/∂θ", g.Kind(), o, mode, v3, v1)
				}
				for i := range pos {
					if !close(pos3[i], pos[i]) {
						t.Fatalf("%v %v %v: positive row %d: %v alone, %v with ∂Loss/∂θ", g.Kind(), o, mode, i, pos3[i], pos[i])
					}
				}
				for i := range neg {
					if negW, _ := ev.Config().Weights(); negW != 0 && !close(neg3[i], neg[i]) {
						t.Fatalf("%v %v %v: negative row %d: %v alone, %v with ∂Loss/∂θ", g.Kind(), o, mode, i, neg3[i], neg[i])
					}
				}
				nonzero := 0
				for _, w := range pos {
					if w != 0 {
						nonzero++
					}
				}
				if want := map[ThresholdMode]int{Soft: 11, OrderStatistic: 1, Detached: 0}[mode]; nonzero > want {
					t.Errorf("%v %v %v: %d positive rows carry a gradient, want at most %d", g.Kind(), o, mode, nonzero, want)
				}
				chain := make([]float64, g.NumParams())
				g.ScoreGrads(chain, nil, b.Pos, geometry.Fixed(pos))
				if negW, _ := ev.Config().Weights(); negW != 0 {
					g.ScoreGrads(chain, nil, b.Neg, geometry.Fixed(neg))
				}
				if _, volW := ev.Config().Weights(); volW != 0 {
					g.LogVolumeGrad(chain, v1.T, volW)
				}
				for i := range g1 {
					if math.Abs(chain[i]-g1[i]) > 1e-9*math.Max(1, math.Abs(g1[i])) {
						t.Errorf("%v %v %v: chain rule through the rows gives ∂Loss/∂θ[%d] = %v, Eval %v", g.Kind(), o, mode, i, chain[i], g1[i])
					}
				}
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
		{"neg, vol", 0, false, `unknown objective "neg, vol" (want "neg", "vol" or "neg,vol", each optionally with ",infonce"): the terms are joined by commas alone`},
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
