package head

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/gradcheck"
)

func randHead(rng *rand.Rand, in, out int) *Linear {
	l := Identity(in, out)
	for i := range l.W {
		l.W[i] += 0.3 * rng.NormFloat64()
	}
	for i := range l.B {
		l.B[i] = 0.2 * rng.NormFloat64()
	}
	return l
}

func randRows(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// naive is W·h (+ b) in plain loops.
func naive(l *Linear, h []float32, bias bool) []float64 {
	n := len(h) / l.In
	y := make([]float64, n*l.Out)
	for r := range n {
		for i := range l.Out {
			s := 0.0
			if bias {
				s = l.B[i]
			}
			for j := range l.In {
				s += l.W[i*l.In+j] * float64(h[r*l.In+j])
			}
			y[r*l.Out+i] = s
		}
	}
	return y
}

func TestForward(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ in, out, n int }{{3, 3, 5}, {4, 2, 7}, {2, 5, 3}, {16, 16, 2500}} {
		l := randHead(rng, tc.in, tc.out)
		h := randRows(rng, tc.n, tc.in)
		for _, bias := range []bool{true, false} {
			var got []float32
			if bias {
				got = l.Forward(nil, h)
			} else {
				got = l.Transform(nil, h)
			}
			want := naive(l, h, bias)
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
					t.Fatalf("%d→%d bias %v: y[%d] = %v, want %v", tc.in, tc.out, bias, i, got[i], want[i])
				}
			}
		}
	}
}

func TestIdentity(t *testing.T) {
	t.Parallel()
	h := randRows(rand.New(rand.NewPCG(3, 3)), 4, 3)
	got := Identity(3, 3).Forward(nil, h)
	for i := range h {
		if got[i] != h[i] {
			t.Fatalf("identity head changed value %d: %v → %v", i, h[i], got[i])
		}
	}
}

// TestAddGrads checks the backward pass: a smooth loss of the outputs,
// L = Σ sin(y)·c, against finite differences in θ = (W, b).
func TestAddGrads(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct{ in, out, n int }{{3, 3, 6}, {5, 2, 4}, {2, 4, 1100}} {
		l := randHead(rng, tc.in, tc.out)
		h := randRows(rng, tc.n, tc.in)
		c := make([]float64, tc.n*tc.out)
		for i := range c {
			c[i] = rng.NormFloat64()
		}
		loss := func(theta []float64) float64 {
			m := l.Clone()
			m.SetParams(theta)
			var s float64
			for i, y := range naive(m, h, true) {
				s += c[i] * math.Sin(y)
			}
			return s
		}
		dout := make([]float64, len(c))
		for i, y := range naive(l, h, true) {
			dout[i] = c[i] * math.Cos(y)
		}
		grad := make([]float64, l.NumParams())
		l.AddGrads(grad, h, dout)
		gradcheck.Check(t, "head θ", loss, grad, l.Params(nil), gradcheck.Tol, 1)

		// Input gradients: ∂L/∂h = Wᵀ·dout.
		hin := make([]float64, len(h))
		for i, v := range h {
			hin[i] = float64(v)
		}
		lossH := func(x []float64) float64 {
			var s float64
			for r := range tc.n {
				for i := range tc.out {
					y := l.B[i]
					for j := range tc.in {
						y += l.W[i*tc.in+j] * x[r*tc.in+j]
					}
					s += c[r*tc.out+i] * math.Sin(y)
				}
			}
			return s
		}
		gradcheck.Check(t, "head input", lossH, l.InputGrads(nil, dout), hin, gradcheck.Tol, 1)
	}
}

func TestLogAbsDet(t *testing.T) {
	t.Parallel()
	l := &Linear{In: 2, Out: 2, W: []float64{2, 1, 0, -3}, B: []float64{0, 0}}
	if got, want := l.LogAbsDet(), math.Log(6); math.Abs(got-want) > 1e-14 {
		t.Errorf("log|det| = %v, want log 6 = %v", got, want)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	l = randHead(rng, 4, 4)
	f := func(theta []float64) float64 {
		m := l.Clone()
		m.SetParams(theta)
		return m.LogAbsDet()
	}
	grad := make([]float64, l.NumParams())
	if err := l.AddLogAbsDetGrad(grad, 1); err != nil {
		t.Fatal(err)
	}
	gradcheck.Check(t, "log|det W|", f, grad, l.Params(nil), gradcheck.Tol, 1)
	sing := &Linear{In: 2, Out: 2, W: []float64{1, 2, 2, 4}, B: []float64{0, 0}}
	if v := sing.LogAbsDet(); !math.IsInf(v, -1) {
		t.Errorf("singular W: log|det| = %v, want −Inf", v)
	}
	if err := sing.AddLogAbsDetGrad(make([]float64, 6), 1); err == nil {
		t.Error("singular W: gradient of log|det| gave no error")
	}
}

// TestProjected checks that a set behind a head scores φ(W·x), that its
// gradients are Wᵀ·∇φ, and that its log-volume in the backbone's space is
// the projected one minus log|det W| — against Monte Carlo.
func TestProjected(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 6))
	l := randHead(rng, 2, 2)
	inner, _ := geometry.NewGenBall([]float64{1.3, 0.7}, []float64{1.5, 3})
	p, err := NewProjected(l, inner)
	if err != nil {
		t.Fatal(err)
	}
	x := randRows(rng, 50, 2)
	got := p.Scores(nil, x)
	want := inner.Scores(nil, l.Transform(nil, x))
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("score %d: %v, want %v", i, got[i], want[i])
		}
	}
	// Monte Carlo over a box that holds the set.
	const tval, n = 1.0, 2_000_000
	inv := [4]float64{l.W[3], -l.W[1], -l.W[2], l.W[0]}
	det := l.W[0]*l.W[3] - l.W[1]*l.W[2]
	var box float64 // the set is W⁻¹ of the inner set, which lies in |y_j| ≤ 1/m_j
	for _, c := range [][2]float64{{1 / 1.3, 1 / 0.7}, {1 / 1.3, -1 / 0.7}} {
		for r := range 2 {
			box = math.Max(box, math.Abs(inv[2*r]*c[0]+inv[2*r+1]*c[1])/math.Abs(det))
		}
	}
	pts := make([]float32, 2*n)
	for i := range pts {
		pts[i] = float32(box * (2*rng.Float64() - 1))
	}
	in := 0
	for _, s := range p.Scores(nil, pts) {
		if s <= tval {
			in++
		}
	}
	mc := math.Log(float64(in) / n * 4 * box * box)
	if lv := p.LogVolume(tval); math.Abs(math.Exp(lv-mc)-1) > 0.01 {
		t.Errorf("log-volume %v, Monte Carlo %v", lv, mc)
	}
	if p.ProjectedSpace() {
		t.Error("a square head reports its volume in the projected space")
	}
	// Input gradients against finite differences of φ(W·x) in float64.
	x64 := []float64{0.4, -0.9}
	f := func(v []float64) float64 {
		var s float64
		for i := range 2 {
			y := l.W[2*i]*v[0] + l.W[2*i+1]*v[1]
			s += math.Pow([]float64{1.3, 0.7}[i]*math.Abs(y), []float64{1.5, 3}[i])
		}
		return s
	}
	gradcheck.Check(t, "projected input", f, p.InputGrads(nil, []float32{0.4, -0.9}), x64, 1e-4, 1)

	if _, err := NewProjected(Identity(3, 4), inner); err == nil {
		t.Error("a head of 4 outputs joined a 2-d geometry without error")
	}
}

func TestProjectBundle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	b := &bundle.Bundle{N: 4, K: 2, D: 3, KNeg: 2, Anchors: randRows(rng, 4, 3), Positives: randRows(rng, 8, 3),
		NegativeIndex: []int64{1, 2, 0, 3, 0, 1, 2, 0}}
	l := randHead(rng, 3, 2)
	p, err := l.Project(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	// The projected differences are W·(raw differences): the bias cancels.
	raw := b.NegativeDiffs(nil, 2)
	want := l.Transform(nil, raw)
	got := p.NegativeDiffs(nil, 2)
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("projected negative difference %d: %v, want %v", i, got[i], want[i])
		}
	}
	l.W[1] = 1e38
	b.Anchors[0], b.Anchors[1] = 1e38, 1e38
	if _, err := l.Project(b); err == nil || !strings.Contains(err.Error(), "projected anchors: row 0") {
		t.Errorf("overflowing head: error %v, want it to name projected anchors row 0", err)
	}
	if _, err := Identity(5, 5).Project(b); err == nil || !strings.Contains(err.Error(), "dimension 3") {
		t.Errorf("dimension mismatch: error %v", err)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	l := randHead(rand.New(rand.NewPCG(8, 8)), 3, 2)
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back Linear
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !equal(back.W, l.W) || !equal(back.B, l.B) || back.In != 3 || back.Out != 2 {
		t.Errorf("round trip: %+v, want %+v", back, *l)
	}
	l.W[0] = math.NaN()
	if _, err := json.Marshal(l); err == nil {
		t.Error("a NaN weight was written")
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"in":2,"out":1,"w":[[1,2,3]],"b":[0]}`, "w[0] has 3 values"},
		{`{"in":2,"out":2,"w":[[1,2]],"b":[0,0]}`, "w has 1 rows"},
		{`{"in":2,"out":1,"w":[[1,2]],"b":[]}`, "b has 0 values"},
		{`{"in":0,"out":0,"w":[],"b":[]}`, "dimensions"},
	} {
		var h Linear
		if err := json.Unmarshal([]byte(tc.doc), &h); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.doc, err, tc.want)
		}
	}
}

func equal(a, b []float64) bool { return slices.Equal(a, b) }

// TestDescribeAndSplit: a set behind a head describes itself with the
// head's shape (and says when its volumes live in the head's output space),
// and Split takes it apart for the set file; a geometry without a head
// describes itself plainly and splits into itself.
func TestDescribeAndSplit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, out   int
		want      string
		projected bool
	}{{3, 3, "genball (behind a 3→3 projection head)", false}, {3, 2, "genball (behind a 3→2 projection head)", true}} {
		inner := geometry.UnitGenBall(c.out, 2)
		p, err := NewProjected(Identity(c.in, c.out), inner)
		if err != nil {
			t.Fatal(err)
		}
		d := geometry.Describe(p)
		if d.String() != c.want || d.Dim != c.in || !d.Head() || d.ProjectedVolume() != c.projected || d.Kind != geometry.KindGenBall {
			t.Errorf("%d→%d: %+v (%v), want %q, projected volume %v", c.in, c.out, d, d, c.want, c.projected)
		}
		if g, h := Split(p); g != geometry.Geometry(inner) || h != p.Head {
			t.Errorf("%d→%d: Split gave %v, %v", c.in, c.out, g, h)
		}
	}
	ball := geometry.Ball{D: 4}
	if d := geometry.Describe(ball); d.String() != "ball" || d.Head() || d.ProjectedVolume() || d.Dim != 4 {
		t.Errorf("ball: %+v", d)
	}
	if g, h := Split(ball); g != geometry.Geometry(ball) || h != nil {
		t.Errorf("ball: Split gave %v, %v", g, h)
	}
}

// TestProjectedDecompose: a set behind a head decomposes as its inner
// geometry after W (T·W), to the float32 rounding of W·x that Scores
// applies.
func TestProjectedDecompose(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(62, 62))
	h := Identity(4, 3)
	for i := range h.W {
		h.W[i] += 0.3 * rng.NormFloat64()
	}
	m := make([]float64, 9)
	for i := range m {
		m[i] = 0.2 * rng.NormFloat64()
	}
	for i := range 3 {
		m[i*3+i] += 1
	}
	nm, err := geometry.NewNorm(3, m, 1.7)
	if err != nil {
		t.Fatal(err)
	}
	for _, inner := range []geometry.Geometry{nm, geometry.UnitGenBall(3, 1.3), geometry.Ball{D: 3}} {
		p, err := NewProjected(h, inner)
		if err != nil {
			t.Fatal(err)
		}
		dec, ok := p.Decompose()
		if !ok || dec.In != 4 || dec.Out != 3 {
			t.Fatalf("%v: %+v, %v", inner.Kind(), dec, ok)
		}
		x := make([]float32, 4*20)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		want := p.Scores(nil, x)
		y := make([]float64, 3)
		for i := range want {
			dec.Apply(y, x[i*4:(i+1)*4])
			var s float64
			for j, v := range y {
				s += dec.Term(j, v)
			}
			if got := dec.Outer(s); math.Abs(got-want[i]) > 1e-5*want[i] {
				t.Fatalf("%v row %d: decomposed %v, Scores %v", inner.Kind(), i, got, want[i])
			}
		}
	}
}
