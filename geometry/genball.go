package geometry

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mathext"

	"github.com/ccsets/ccs/internal/kernel"
)

// GenBall is the generalized hyper-ball, φ(x) = Σ_j (m_j·|x_j|)^{p_j}, with a
// scale m_j > 0 and an exponent p_j > 0 per coordinate. Build it with
// NewGenBall or UnitGenBall.
//
// This is the paper's score m_j^{p_j}·|x_j|^{p_j}, the one its volume formula
// is right for (the paper's public code scores m_j·|x_j|^{p_j}; docs/design.md §1).
// Unlike the other families φ is not a norm: it scales as t ↦ Σ t^{p_j}, and
// the threshold lives on that scale.
//
// Parameter layout θ: m_1..m_d, then p_1..p_d.
type GenBall struct {
	m, p []float64
	// log m, and log m and p in float32 for the prepared kernels (kept in
	// step by the constructors and SetParams, so that each call does not
	// compute d logarithms: a retrieval's exact scores come a few rows a
	// call).
	logm        []float64
	logm32, p32 []float32
}

var _ Learnable = (*GenBall)(nil)

// NewGenBall returns the generalized ball with scales m and exponents p. It
// returns an error for mismatched lengths, non-finite values, m_j ≤ 0 or
// p_j ≤ 0.
func NewGenBall(m, p []float64) (*GenBall, error) {
	if len(m) < 1 {
		return nil, fmt.Errorf("geometry: genball with no scales (dimension 0)")
	}
	if len(m) != len(p) {
		return nil, fmt.Errorf("geometry: genball with %d scales m but %d exponents p", len(m), len(p))
	}
	for j := range m {
		if !(m[j] > 0) || math.IsInf(m[j], 0) {
			return nil, fmt.Errorf("geometry: genball scale m[%d] = %v, want a finite m > 0", j, m[j])
		}
		if !(p[j] > 0) || math.IsInf(p[j], 0) {
			return nil, fmt.Errorf("geometry: genball exponent p[%d] = %v, want a finite p > 0", j, p[j])
		}
	}
	g := &GenBall{m: append([]float64(nil), m...), p: append([]float64(nil), p...)}
	g.sync()
	return g, nil
}

// UnitGenBall returns the generalized ball with all m_j = 1 and p_j = p.
func UnitGenBall(d int, p float64) *GenBall {
	g := &GenBall{m: make([]float64, d), p: make([]float64, d)}
	for j := range d {
		g.m[j], g.p[j] = 1, p
	}
	g.sync()
	return g
}

// sync computes log m and the float32 log m and p from m and p.
func (g *GenBall) sync() {
	d := len(g.m)
	if len(g.logm32) != d {
		g.logm, g.logm32, g.p32 = make([]float64, d), make([]float32, d), make([]float32, d)
	}
	for j := range d {
		g.logm[j] = math.Log(g.m[j])
		g.logm32[j], g.p32[j] = float32(g.logm[j]), float32(g.p[j])
	}
}

// Kind returns KindGenBall.
func (*GenBall) Kind() Kind { return KindGenBall }

// Dim returns d.
func (g *GenBall) Dim() int { return len(g.m) }

// Scales returns a copy of m.
func (g *GenBall) Scales() []float64 { return append([]float64(nil), g.m...) }

// Exponents returns a copy of p.
func (g *GenBall) Exponents() []float64 { return append([]float64(nil), g.p...) }

func (g *GenBall) params() Params { return Params{"scales": g.Scales(), "exponents": g.Exponents()} }

func decodeGenBall(_ int, p Params) (Geometry, error) { return NewGenBall(p["scales"], p["exponents"]) }

// Clamp keeps every m_j ≥ b.MMin (and ≤ b.MMax when it is positive) and
// every p_j in [b.PMin, b.PMax].
func (g *GenBall) Clamp(theta []float64, b Bounds) {
	if len(theta) != g.NumParams() {
		panic(errLength)
	}
	d := len(g.m)
	for j := range d {
		theta[j] = math.Max(theta[j], b.MMin)
		if b.MMax > 0 {
			theta[j] = math.Min(theta[j], b.MMax)
		}
		theta[d+j] = math.Min(math.Max(theta[d+j], b.PMin), b.PMax)
	}
}

// NumParams returns 2d.
func (g *GenBall) NumParams() int { return 2 * len(g.m) }

// Params copies m then p into dst.
func (g *GenBall) Params(dst []float64) []float64 {
	dst = sameLen(dst, g.NumParams())
	copy(dst, g.m)
	copy(dst[len(g.m):], g.p)
	return dst
}

// SetParams sets m and p from θ.
func (g *GenBall) SetParams(theta []float64) {
	if len(theta) != g.NumParams() {
		panic(errLength)
	}
	d := len(g.m)
	copy(g.m, theta[:d])
	copy(g.p, theta[d:])
	g.sync()
}

// Scores computes Σ_j (m_j·|x_j|)^{p_j} for each row of diffs.
func (g *GenBall) Scores(dst []float64, diffs []float32) []float64 {
	return genBallScoreGrads(g, nil, dst, diffs, nil)
}

// ScoreGrads computes the scores and adds Σ_i w_i·∂φ_i/∂θ into dtheta, with
// e_ij = (m_j·|x_ij|)^{p_j}: ∂φ_i/∂m_j = e_ij·p_j/m_j and
// ∂φ_i/∂p_j = e_ij·log(m_j·|x_ij|) (both 0 where x_ij = 0).
func (g *GenBall) ScoreGrads(dtheta, scores []float64, diffs []float32, w Weights) []float64 {
	if len(dtheta) != g.NumParams() {
		panic(errLength)
	}
	return genBallScoreGrads(g, dtheta, scores, diffs, orOnes(w))
}

// genBallScoreGrads computes the scores and, with a non-nil dtheta, adds the
// weighted parameter gradients, weightBlock rows at a time; each element
// costs one log and one exp.
func genBallScoreGrads[F Float](g *GenBall, dtheta, scores []float64, diffs []F, weights Weights) []float64 {
	d := len(g.m)
	scores, n := rows(scores, diffs, d)
	logm := g.logm
	blk := weightBlock(d)
	var e, l, w []float64 // each row's e_ij and log(m_j·|x_ij|), and the block's weights
	// genBallRow's scratch, reused: a retrieval scores a few rows a call,
	// and fresh memory each call cost more than the rows (its first
	// writes).
	bp, buf := scratch64(4 * d)
	defer scratchPool.Put(bp)
	if dtheta != nil {
		e, l, w = make([]float64, blk*d), make([]float64, blk*d), make([]float64, blk)
	}
	for lo := 0; lo < n; lo += blk {
		hi := min(n, lo+blk)
		for i := lo; i < hi; i++ {
			var ei, li []float64
			if e != nil {
				ei, li = e[(i-lo)*d:(i-lo+1)*d], l[(i-lo)*d:(i-lo+1)*d]
			}
			scores[i] = genBallRow(logm, g.p, diffs[i*d:(i+1)*d], ei, li, buf)
		}
		if dtheta == nil {
			continue
		}
		weights(lo, scores[lo:hi], w[:hi-lo])
		for i := lo; i < hi; i++ {
			wi := w[i-lo]
			if wi == 0 {
				continue
			}
			ei, li := e[(i-lo)*d:(i-lo+1)*d], l[(i-lo)*d:(i-lo+1)*d]
			for j := range d {
				if ei[j] == 0 {
					continue
				}
				dtheta[j] += wi * ei[j] * g.p[j] / g.m[j]
				dtheta[d+j] += wi * ei[j] * li[j]
			}
		}
	}
	return scores
}

// scratchPool holds the scores' float64 scratch (scratch64), shared by
// the geometries: a retrieval's exact re-score of a chunk's few uncertain
// rows is a call, thousands of calls a search.
var scratchPool = sync.Pool{New: func() any { return new([]float64) }}

// scratch64 returns n values of scratch (of any contents) from
// scratchPool, and the pointer to give back to it (scratchPool.Put).
func scratch64(n int) (*[]float64, []float64) {
	bp := scratchPool.Get().(*[]float64)
	if cap(*bp) < n {
		*bp = make([]float64, n)
	}
	return bp, (*bp)[:n]
}

// genBallRow returns Σ_j (m_j·|x_j|)^{p_j} of one row and, when e is not
// nil, writes each term into e and log(m_j·|x_j|) into l (e_j = 0 where
// x_j = 0). With buf (4·len(x) values of scratch) the logarithms and
// exponentials are taken a vector at a time (kernel.Log64, kernel.Exp64:
// math.Log's and math.Exp's bits), then summed in the same order.
func genBallRow[F Float](logm, p []float64, x []F, e, l, buf []float64) float64 {
	var phi float64
	if buf != nil {
		d := len(x)
		a, lg, arg, ex := buf[:d], buf[d:2*d], buf[2*d:3*d], buf[3*d:4*d]
		for j, v := range x {
			a[j] = math.Abs(float64(v))
		}
		kernel.Log64(lg, a)
		for j, v := range lg {
			lg[j] = logm[j] + v
			arg[j] = p[j] * lg[j]
		}
		kernel.Exp64(ex, arg)
		for j, aj := range a {
			if aj == 0 {
				if e != nil {
					e[j] = 0
				}
				continue
			}
			phi += ex[j]
			if e != nil {
				e[j], l[j] = ex[j], lg[j]
			}
		}
		return phi
	}
	for j, v := range x {
		// Widen first, then test: testing the float32 before widening
		// makes the compiler write the widened value into the register
		// holding phi (CVTSS2SD only replaces the low lane), so each
		// element waits for the previous one's exp — measured 3× slower.
		a := math.Abs(float64(v))
		if a == 0 {
			if e != nil {
				e[j] = 0
			}
			continue
		}
		lj := logm[j] + math.Log(a)
		ej := math.Exp(p[j] * lj)
		phi += ej
		if e != nil {
			e[j], l[j] = ej, lj
		}
	}
	return phi
}

// LogVolume is (Σ_j 1/p_j)·log t − Σ_j log m_j + d·log 2 +
// Σ_j lgamma(1+1/p_j) − lgamma(1+Σ_j 1/p_j).
func (g *GenBall) LogVolume(t float64) float64 {
	var sInv, sLogM, sLg float64
	for j := range g.m {
		sInv += 1 / g.p[j]
		sLogM += math.Log(g.m[j])
		sLg += lgamma(1 + 1/g.p[j])
	}
	return sInv*math.Log(t) - sLogM + float64(len(g.m))*math.Ln2 + sLg - lgamma(1+sInv)
}

// LogVolumeGrad adds w·∂logVol/∂θ: −1/m_j for m_j and
// −(log t + ψ(1+1/p_j) − ψ(1+Σ1/p))/p_j² for p_j; it returns (Σ_j 1/p_j)/t.
func (g *GenBall) LogVolumeGrad(dtheta []float64, t, w float64) float64 {
	d := len(g.m)
	if len(dtheta) != g.NumParams() {
		panic(errLength)
	}
	var sInv float64
	for _, p := range g.p {
		sInv += 1 / p
	}
	logT, psiS := math.Log(t), mathext.Digamma(1+sInv)
	for j := range d {
		p := g.p[j]
		dtheta[j] -= w / g.m[j]
		dtheta[d+j] -= w * (logT + mathext.Digamma(1+1/p) - psiS) / (p * p)
	}
	return sInv / t
}

// InputGrads writes ∂φ/∂x_j = sign(x_j)·p_j·(m_j|x_j|)^{p_j}/|x_j| (0 at x_j = 0).
func (g *GenBall) InputGrads(dst []float64, diffs []float32) []float64 {
	return genBallInputGrads(g, dst, diffs)
}

func genBallInputGrads[F Float](g *GenBall, dst []float64, diffs []F) []float64 {
	d := len(g.m)
	dst = sameLen(dst, len(diffs))
	_, n := rows(nil, diffs, d)
	for i := range n {
		for j := range d {
			v := float64(diffs[i*d+j])
			if v == 0 {
				dst[i*d+j] = 0
				continue
			}
			a := math.Abs(v)
			e := math.Pow(g.m[j]*a, g.p[j])
			dst[i*d+j] = math.Copysign(g.p[j]*e/a, v)
		}
	}
	return dst
}
