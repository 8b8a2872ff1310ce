package geometry

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ccsets/ccs/internal/gradcheck"
)

func randNorm(rng *rand.Rand, d int, p float64) *Norm { return randNormScaled(rng, d, p, 0.4) }

// randNormScaled draws M = I + scale·N(0,1)^{d×d}: non-symmetric, and well
// conditioned for small scales.
func randNormScaled(rng *rand.Rand, d int, p, scale float64) *Norm {
	m := make([]float64, d*d)
	for i := range m {
		m[i] = scale * rng.NormFloat64()
	}
	for i := range d {
		m[i*d+i] += 1
	}
	n, err := NewNorm(d, m, p)
	if err != nil {
		panic(err)
	}
	return n
}

func randGenBall(rng *rand.Rand, d int, p []float64) *GenBall {
	m := make([]float64, d)
	for j := range m {
		m[j] = math.Exp(0.8 * rng.NormFloat64()) // anisotropic scales
	}
	g, err := NewGenBall(m, p)
	if err != nil {
		panic(err)
	}
	return g
}

func randEllipsoid(rng *rand.Rand, d int) *Ellipsoid {
	a := make([]float64, d*d)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	s := make([]float64, d*d)
	for i := range d {
		for j := range d {
			var v float64
			for k := range d {
				v += a[i*d+k] * a[j*d+k]
			}
			s[i*d+j] = v
		}
		s[i*d+i] += 0.5
	}
	e, err := NewEllipsoid(d, s)
	if err != nil {
		panic(err)
	}
	return e
}

func randDiffs32(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestParamGrads checks ∂(Σ w_i φ_i)/∂θ and ∂logVol/∂θ, ∂logVol/∂t against
// central differences at seeded random points, including p < 1, anisotropic
// scales and a non-symmetric M.
func TestParamGrads(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	type tc struct {
		name string
		g    Learnable
	}
	var cases []tc
	for _, p := range []float64{0.4, 0.9, 1.7, 2, 3.5} {
		for _, d := range []int{2, 3, 7} {
			cases = append(cases, tc{"single", randNorm(rng, d, p)})
		}
	}
	for _, d := range []int{2, 3, 9} {
		p := make([]float64, d)
		for j := range p {
			p[j] = 0.3 + 4*rng.Float64()
		}
		cases = append(cases, tc{"genball", randGenBall(rng, d, p)})
	}
	for _, c := range cases {
		g := c.g
		d := g.Dim()
		const n = 6
		diffs := randDiffs32(rng, n, d)
		w := make([]float64, n)
		for i := range w {
			w[i] = rng.Float64() + 0.1
		}
		theta := g.Params(nil)
		f := func(th []float64) float64 {
			g.SetParams(th)
			defer g.SetParams(theta)
			s := g.Scores(nil, diffs)
			var sum float64
			for i, v := range s {
				sum += w[i] * v
			}
			return sum
		}
		grad := make([]float64, len(theta))
		scores := g.ScoreGrads(grad, nil, diffs, Fixed(w))
		want := g.Scores(nil, diffs)
		for i := range want {
			if scores[i] != want[i] {
				t.Errorf("%s d=%d: ScoreGrads score %d = %v, Scores gives %v", c.name, d, i, scores[i], want[i])
			}
		}
		gradcheck.Check(t, c.name+" score", f, grad, theta, gradcheck.Tol, 1e-3)
		// Weights that read the scores see each row's own, in order, and
		// give the same gradient.
		grad2 := make([]float64, len(theta))
		next := 0
		g.ScoreGrads(grad2, nil, diffs, perRow(func(i int, s float64) float64 {
			if s != want[i] || i != next {
				t.Errorf("%s: weights saw score %v for row %d (after row %d), want %v", c.name, s, i, next-1, want[i])
			}
			next++
			return w[i]
		}))
		for i := range grad {
			if grad2[i] != grad[i] {
				t.Fatalf("%s: gradient[%d] = %v with weights from scores, %v with fixed weights", c.name, i, grad2[i], grad[i])
			}
		}

		for _, thr := range []float64{0.3, 2.5} {
			lv := func(th []float64) float64 {
				g.SetParams(th)
				defer g.SetParams(theta)
				return g.LogVolume(thr)
			}
			const wv = 0.7
			vgrad := make([]float64, len(theta))
			dt := g.LogVolumeGrad(vgrad, thr, wv)
			for i := range vgrad {
				vgrad[i] /= wv
			}
			gradcheck.Check(t, c.name+" logvol", lv, vgrad, theta, gradcheck.Tol, 1e-3)
			gradcheck.Check(t, c.name+" logvol/t", func(x []float64) float64 { return g.LogVolume(x[0]) }, []float64{dt}, []float64{thr}, gradcheck.Tol, 1e-3)
		}
	}
}

// TestInputGrads checks ∂φ/∂x for every family in float64 arithmetic (the
// kernels are generic; float32 inputs cannot carry a finite difference).
func TestInputGrads(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	for _, d := range []int{2, 3, 8} {
		p := make([]float64, d)
		for j := range p {
			p[j] = 0.5 + 3*rng.Float64()
		}
		gb := randGenBall(rng, d, p)
		nm := randNorm(rng, d, 0.7+2*rng.Float64())
		el := randEllipsoid(rng, d)
		type fam struct {
			name  string
			score func(x []float64) float64
			grad  func(x []float64) []float64
			grad2 func(x []float32) []float64 // the public float32 API
		}
		fams := []fam{
			{"ball", func(x []float64) float64 { return ballScores(nil, x, d)[0] },
				func(x []float64) []float64 { return ballInputGrads(nil, x, d) },
				func(x []float32) []float64 { return Ball{D: d}.InputGrads(nil, x) }},
			{"ellipsoid", func(x []float64) float64 { return ellipsoidScores(el, nil, x)[0] },
				func(x []float64) []float64 { return ellipsoidInputGrads(el, nil, x) }, func(x []float32) []float64 { return el.InputGrads(nil, x) }},
			{"single", func(x []float64) float64 { return normScores(nm, nil, x)[0] },
				func(x []float64) []float64 { return normInputGrads(nm, nil, x) }, func(x []float32) []float64 { return nm.InputGrads(nil, x) }},
			{"genball", func(x []float64) float64 { return genBallScoreGrads(gb, nil, nil, x, nil)[0] },
				func(x []float64) []float64 { return genBallInputGrads(gb, nil, x) }, func(x []float32) []float64 { return gb.InputGrads(nil, x) }},
		}
		for _, f := range fams {
			for range 4 {
				x32 := randDiffs32(rng, 1, d)
				x := make([]float64, d)
				for j := range x {
					x[j] = float64(x32[j])
				}
				g := f.grad(x)
				gradcheck.Check(t, f.name+" input", f.score, g, x, gradcheck.Tol, 1e-3)
				g32 := f.grad2(x32)
				for j := range g {
					if math.Abs(g32[j]-g[j]) > 1e-12*math.Max(1, math.Abs(g[j])) {
						t.Errorf("%s: float32 InputGrads[%d] = %v, float64 kernel %v", f.name, j, g32[j], g[j])
					}
				}
			}
		}
	}
}

// TestNormIdentityIsBall: single-norm with M = I, p = 2 is the ℓ2 ball.
func TestNormIdentityIsBall(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	for _, d := range []int{1, 3, 128, 512} {
		x := randDiffs32(rng, 50, d)
		n, b := IdentityNorm(d, 2), Ball{D: d}
		sn, sb := n.Scores(nil, x), b.Scores(nil, x)
		for i := range sn {
			if sn[i] != sb[i] {
				t.Fatalf("d=%d row %d: single-norm(I,2) = %v, ball = %v", d, i, sn[i], sb[i])
			}
		}
		for _, thr := range []float64{0.1, 1, 7.5} {
			vn, vb := n.LogVolume(thr), b.LogVolume(thr)
			if math.Abs(vn-vb) > 1e-12*math.Max(1, math.Abs(vb)) {
				t.Errorf("d=%d t=%v: single-norm(I,2) logvol %v, ball %v", d, thr, vn, vb)
			}
		}
	}
}

// TestNormGeneration: a single-norm's generation changes with every
// SetParams, even one that sets the same M and p (it does not compare
// them), and nothing else changes it.
func TestNormGeneration(t *testing.T) {
	t.Parallel()
	n := IdentityNorm(2, 2)
	if g := n.Generation(); g != 0 {
		t.Fatalf("new: generation %d, want 0", g)
	}
	n.Scores(nil, []float32{1, 2})
	n.Params(nil)
	if g := n.Generation(); g != 0 {
		t.Fatalf("after Scores and Params: generation %d, want 0", g)
	}
	for i, theta := range [][]float64{{1, 0, 0, 2, 2}, {1, 0, 0, 2, 2}, {1, 0, 0, 2, 3}} {
		n.SetParams(theta)
		if g := n.Generation(); g != uint64(i+1) {
			t.Fatalf("after SetParams %d: generation %d, want %d", i+1, g, i+1)
		}
	}
}

// TestGenBallMatchesNorm: Σ|x_j|^p ≤ t^p is ‖x‖_p ≤ t, so the generalized
// ball with m = 1, p_j = p has the single-norm's volume at t^p.
func TestGenBallMatchesNorm(t *testing.T) {
	t.Parallel()
	for _, p := range []float64{0.5, 1, 2.5} {
		for _, d := range []int{2, 10, 300} {
			thr := 1.7
			vg := UnitGenBall(d, p).LogVolume(math.Pow(thr, p))
			vn := IdentityNorm(d, p).LogVolume(thr)
			if math.Abs(vg-vn) > 1e-9*math.Max(1, math.Abs(vn)) {
				t.Errorf("p=%v d=%d: genball %v, single-norm %v", p, d, vg, vn)
			}
		}
	}
}

// TestKnownLogVolumes holds the unit ℓ2 ball's log-volume to the closed form of docs/design.md §1.
func TestKnownLogVolumes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    int
		want float64
	}{{1, math.Log(2)}, {2, math.Log(math.Pi)}, {3, math.Log(4 * math.Pi / 3)}, {512, -874.206}, {1408, -3110.280}} {
		got := Ball{D: c.d}.LogVolume(1)
		if math.Abs(got-c.want) > 5e-4 {
			t.Errorf("unit ball d=%d: log-volume %.6f, want %.3f", c.d, got, c.want)
		}
	}
}

// TestMonteCarloVolume checks every closed-form volume in d = 2 and 3 by
// uniform sampling in a bounding box (≥ 2·10⁶ samples, ≤ 2% relative error).
func TestMonteCarloVolume(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte-Carlo volumes: long")
	}
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	for _, d := range []int{2, 3} {
		el := randEllipsoid(rng, d)
		p := make([]float64, d)
		for j := range p {
			p[j] = 0.7 + 3*rng.Float64()
		}
		gb := randGenBall(rng, d, p)
		cases := []struct {
			name string
			g    Geometry
			t    float64
			half []float64 // bounding box half-widths
		}{
			{"ball", Ball{D: d}, 1.3, fill(d, 1.3)},
			{"ellipsoid", el, 1.1, ellipsoidBox(el, 1.1)},
			{"single p=0.7", randNormScaled(rng, d, 0.7, 0.2), 1.2, nil},
			{"single p=3", randNormScaled(rng, d, 3, 0.2), 0.8, nil},
			{"genball", gb, 1.5, genBallBox(gb, 1.5)},
		}
		for _, c := range cases {
			half := c.half
			if n, ok := c.g.(*Norm); ok {
				half = normBox(n, c.t)
			}
			// At least 2·10⁶ samples, and on until 40 000 fall inside (≈0.5%
			// noise) since star-shaped sets (p < 1) fill little of the box.
			const batch = 10_000
			x := make([]float32, batch*d)
			s := make([]float64, batch)
			inside, samples := 0, 0
			for samples < 2_000_000 || (inside < 40_000 && samples < 100_000_000) {
				samples += batch
				for i := range x {
					x[i] = float32((2*rng.Float64() - 1) * half[i%d])
				}
				for _, v := range c.g.Scores(s, x) {
					if v <= c.t {
						inside++
					}
				}
			}
			box := 1.0
			for _, h := range half {
				box *= 2 * h
			}
			t.Logf("%s d=%d: %d samples, %d inside", c.name, d, samples, inside)
			mc := box * float64(inside) / float64(samples)
			exact := math.Exp(c.g.LogVolume(c.t))
			if rel := math.Abs(mc-exact) / exact; rel > 0.02 {
				t.Errorf("%s d=%d: Monte-Carlo volume %.5g, closed form %.5g (relative error %.3g)", c.name, d, mc, exact, rel)
			}
		}
	}
}

func fill(d int, v float64) []float64 {
	h := make([]float64, d)
	for i := range h {
		h[i] = v
	}
	return h
}

// ellipsoidBox: |x_j| ≤ t·sqrt(Σ_jj) on the ellipsoid.
func ellipsoidBox(e *Ellipsoid, t float64) []float64 {
	h := make([]float64, e.d)
	for j := range h {
		h[j] = t * math.Sqrt(e.sigma[j*e.d+j])
	}
	return h
}

// normBox: x = M⁻¹y with |y_k| ≤ ‖y‖_p ≤ t, so |x_l| ≤ t·Σ_k |M⁻¹_lk|; for
// p ≤ 1, ‖y‖₁ ≤ ‖y‖_p ≤ t gives the tighter |x_l| ≤ t·max_k |M⁻¹_lk|.
func normBox(n *Norm, t float64) []float64 {
	d := n.d
	inv := invert(n.m, d)
	h := make([]float64, d)
	for l := range d {
		for k := range d {
			a := t * math.Abs(inv[l*d+k])
			if n.p <= 1 {
				h[l] = math.Max(h[l], a)
			} else {
				h[l] += a
			}
		}
	}
	return h
}

// genBallBox: (m_j|x_j|)^{p_j} ≤ t gives |x_j| ≤ t^{1/p_j}/m_j.
func genBallBox(g *GenBall, t float64) []float64 {
	h := make([]float64, len(g.m))
	for j := range h {
		h[j] = math.Pow(t, 1/g.p[j]) / g.m[j]
	}
	return h
}

// invert is Gauss–Jordan for the tiny matrices of the volume test.
func invert(m []float64, d int) []float64 {
	a := append([]float64(nil), m...)
	inv := make([]float64, d*d)
	for i := range d {
		inv[i*d+i] = 1
	}
	for c := range d {
		piv := c
		for r := c + 1; r < d; r++ {
			if math.Abs(a[r*d+c]) > math.Abs(a[piv*d+c]) {
				piv = r
			}
		}
		for j := range d {
			a[c*d+j], a[piv*d+j] = a[piv*d+j], a[c*d+j]
			inv[c*d+j], inv[piv*d+j] = inv[piv*d+j], inv[c*d+j]
		}
		f := a[c*d+c]
		for j := range d {
			a[c*d+j] /= f
			inv[c*d+j] /= f
		}
		for r := range d {
			if r == c {
				continue
			}
			f := a[r*d+c]
			for j := range d {
				a[r*d+j] -= f * a[c*d+j]
				inv[r*d+j] -= f * inv[c*d+j]
			}
		}
	}
	return inv
}

func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

// TestDstConvention: nil dst allocates, a given dst is written in place and
// returned, a wrong length panics.
func TestDstConvention(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	gs := []Geometry{Ball{D: 3}, randEllipsoid(rng, 3), randNorm(rng, 3, 1.5), UnitGenBall(3, 2)}
	x := randDiffs32(rng, 4, 3)
	for _, g := range gs {
		dst := make([]float64, 4)
		if got := g.Scores(dst, x); &got[0] != &dst[0] {
			t.Errorf("%v: Scores did not write into dst", g.Kind())
		}
		if !panics(func() { g.Scores(make([]float64, 3), x) }) {
			t.Errorf("%v: Scores with a short dst did not panic", g.Kind())
		}
		if !panics(func() { g.Scores(nil, x[:5]) }) {
			t.Errorf("%v: Scores with a partial row did not panic", g.Kind())
		}
		if !panics(func() { g.InputGrads(make([]float64, 2), x) }) {
			t.Errorf("%v: InputGrads with a short dst did not panic", g.Kind())
		}
		if l, ok := g.(Learnable); ok {
			if !panics(func() { l.SetParams(make([]float64, l.NumParams()+1)) }) {
				t.Errorf("%v: SetParams with a wrong length did not panic", g.Kind())
			}
			if !panics(func() { l.ScoreGrads(make([]float64, 1), nil, x, nil) }) {
				t.Errorf("%v: ScoreGrads with a wrong dtheta did not panic", g.Kind())
			}
		}
	}
}

func TestConstructorErrors(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func() error{
		"genball m<=0":     func() error { _, err := NewGenBall([]float64{1, 0}, []float64{1, 1}); return err },
		"genball p NaN":    func() error { _, err := NewGenBall([]float64{1, 1}, []float64{1, math.NaN()}); return err },
		"genball lengths":  func() error { _, err := NewGenBall([]float64{1, 1}, []float64{1}); return err },
		"single p=0":       func() error { _, err := NewNorm(2, []float64{1, 0, 0, 1}, 0); return err },
		"single singular":  func() error { _, err := NewNorm(2, []float64{1, 2, 2, 4}, 2); return err },
		"single Inf":       func() error { _, err := NewNorm(2, []float64{1, math.Inf(1), 0, 1}, 2); return err },
		"ellipsoid indef":  func() error { _, err := NewEllipsoid(2, []float64{1, 2, 2, 1}); return err },
		"ellipsoid asym":   func() error { _, err := NewEllipsoid(2, []float64{1, 0.5, 0, 1}); return err },
		"ellipsoid length": func() error { _, err := NewEllipsoid(2, []float64{1, 0, 0}); return err },
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestKindText(t *testing.T) {
	t.Parallel()
	for _, k := range []Kind{KindBall, KindEllipsoid, KindNorm, KindGenBall} {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var k2 Kind
		if err := k2.UnmarshalText(b); err != nil || k2 != k {
			t.Errorf("%v: round trip gave %v, %v", k, k2, err)
		}
	}
	if _, err := ParseKind("elipsoid"); err == nil || !strings.HasSuffix(err.Error(), `: did you mean "ellipsoid"?`) {
		t.Errorf("ParseKind(elipsoid): %v", err)
	}
	if _, err := ParseKind("sphere"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("ParseKind(sphere): %v", err)
	}
}

// perRow turns a weight per row into Weights.
func perRow(weight func(i int, score float64) float64) Weights {
	return func(lo int, phi, w []float64) {
		for k, s := range phi {
			w[k] = weight(lo+k, s)
		}
	}
}

// TestVectorLogExpRows: maxAbs is math.Max's fold (NaN included), and
// genBallRow and pnorm give the same bits with
// their scratch (the logarithms and exponentials a vector at a time) as
// without it (math.Log and math.Exp a value at a time): the score, the
// terms and logarithms, S' and T — on rows with zeros, ties for the
// largest coordinate, tiny and huge coordinates, a NaN and an infinity,
// at lengths around the vector widths, exponents below, at and above 1.
func TestVectorLogExpRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for _, d := range []int{1, 3, 4, 7, 8, 9, 16, 33, 128} {
		for trial := range 40 {
			x := make([]float32, d)
			y := make([]float64, d)
			for j := range d {
				v := rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
				switch rng.IntN(12) {
				case 0:
					v = 0
				case 1:
					v = 1e-40
				case 2:
					v = 3e38
				}
				x[j], y[j] = float32(v), v
			}
			if trial%10 == 9 {
				x[rng.IntN(d)] = float32(math.Inf(1))
				y[rng.IntN(d)] = math.NaN()
			}
			if d > 1 && trial%5 == 4 {
				y[0], y[d-1] = 7, -7 // a tie for the largest
			}
			logm, p := make([]float64, d), make([]float64, d)
			for j := range d {
				logm[j], p[j] = rng.NormFloat64(), 0.2+4*rng.Float64()
			}
			var a float64
			for _, v := range y {
				a = math.Max(a, math.Abs(v))
			}
			if !same(maxAbs(y), a) {
				t.Fatalf("d %d trial %d: maxAbs %v, math.Max's %v", d, trial, maxAbs(y), a)
			}
			buf := make([]float64, 4*d)
			e1, l1, e2, l2 := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
			want := genBallRow(logm, p, x, e1, l1, nil)
			got := genBallRow(logm, p, x, e2, l2, buf)
			if !same(got, want) {
				t.Fatalf("d %d trial %d: genBallRow %v with scratch, %v without", d, trial, got, want)
			}
			for j := range d {
				if !same(e1[j], e2[j]) || !same(l1[j], l2[j]) {
					t.Fatalf("d %d trial %d: coordinate %d: e %v, l %v with scratch; %v, %v without", d, trial, j, e2[j], l2[j], e1[j], l1[j])
				}
			}
			if got := genBallRow(logm, p, x, nil, nil, buf); !same(got, want) {
				t.Fatalf("d %d trial %d: genBallRow alone %v, %v", d, trial, got, want)
			}
			for _, pp := range []float64{0.5, 1, 1.5, 2, 3.7} {
				up1, up2 := make([]float64, d), make([]float64, d)
				phi1, s1, t1 := pnorm(y, pp, up1, nil)
				phi2, s2, t2 := pnorm(y, pp, up2, buf)
				if !same(phi1, phi2) || !same(s1, s2) || !same(t1, t2) {
					t.Fatalf("d %d trial %d p %v: pnorm (%v, %v, %v) with scratch, (%v, %v, %v) without", d, trial, pp, phi2, s2, t2, phi1, s1, t1)
				}
				for j := range d {
					if !same(up1[j], up2[j]) {
						t.Fatalf("d %d trial %d p %v: up[%d] %v with scratch, %v without", d, trial, pp, j, up2[j], up1[j])
					}
				}
				if phi, _, _ := pnorm(y, pp, nil, buf); !same(phi, phi1) {
					t.Fatalf("d %d trial %d p %v: pnorm alone %v, %v", d, trial, pp, phi, phi1)
				}
			}
		}
	}
}

// TestEllipsoidFactor: NewEllipsoid's factor and log-determinant are
// mat.Cholesky's to the bit (it calls LAPACK's potrf itself, to skip the
// condition number), and Σ's lower triangle is not read.
func TestEllipsoidFactor(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 40))
	for _, d := range []int{1, 2, 7, 70, 130} { // 130 > potrf's block of 64
		e := randEllipsoid(rng, d)
		var ch mat.Cholesky
		if !ch.Factorize(mat.NewSymDense(d, e.Sigma())) {
			t.Fatalf("d=%d: mat.Cholesky refused Σ", d)
		}
		var l mat.TriDense
		ch.LTo(&l)
		for i := range d {
			for j := range d {
				want := 0.0
				if j <= i {
					want = l.At(i, j)
				}
				if e.chol[i*d+j] != want {
					t.Fatalf("d=%d: L[%d][%d] = %v, mat.Cholesky %v", d, i, j, e.chol[i*d+j], want)
				}
			}
		}
		if e.logDet != ch.LogDet() {
			t.Errorf("d=%d: log det %v, mat.Cholesky %v", d, e.logDet, ch.LogDet())
		}
	}
	// Not positive definite: refused.
	if _, err := NewEllipsoid(2, []float64{1, 2, 2, 1}); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("an indefinite Σ: %v", err)
	}
}
