package geometry

import (
	"fmt"
	"math"
	"sync/atomic"

	"gonum.org/v1/gonum/mathext"

	"github.com/ccsets/ccs/internal/kernel"
)

// Norm is the paper's single-norm set, φ(x) = ‖M x‖_p with a free d×d
// matrix M and one exponent p > 0. Build it with NewNorm or IdentityNorm.
//
// Parameter layout θ: M row-major (d² values), then p.
//
// For p < 1, ‖·‖_p is a quasi-norm and the set is star-shaped; the volume
// formula holds for every p > 0.
type Norm struct {
	d int
	m []float64 // d×d row-major
	p float64
	// vol holds M's factorisation, log|det M| and M⁻ᵀ once computed for
	// the current M (normvolume.go): SetParams clears it; training computes
	// it in tasks beside the kernels' chunks (VolumeStaged) rather than in
	// the serial step.
	vol atomic.Pointer[normVolume]
	// spare is the factorisation SetParams cleared, whose buffers the next
	// one reuses (taken by one goroutine: Swap).
	spare atomic.Pointer[normVolume]
	// mt is M for the float32 training kernels (kernel.NewNormMatrix),
	// kept in step with m.
	mt kernel.NormMatrix
	// fast is the fast score's bound from d = 16 on, once computed for
	// the current M (fast.go): SetParams clears it.
	fast atomic.Pointer[normFast]
	// mT is Mᵀ in float64 for the exact products (kernel.DotMT), once
	// computed for the current M: SetParams clears it.
	mT atomic.Pointer[[]float64]
	// gen counts SetParams's changes of M and p (Generation).
	gen uint64
}

// transposed is Mᵀ (d×d row-major), computed once for the current M.
func (n *Norm) transposed() []float64 {
	if t := n.mT.Load(); t != nil {
		return *t
	}
	d := n.d
	t := make([]float64, d*d)
	for j := range d {
		for k, v := range n.m[j*d : (j+1)*d] {
			t[k*d+j] = v
		}
	}
	n.mT.Store(&t)
	return t
}

var _ Learnable = (*Norm)(nil)

// NewNorm returns ‖M x‖_p for M (d×d row-major) and p. It returns an error
// for non-finite values, p ≤ 0 or a singular M.
func NewNorm(d int, m []float64, p float64) (*Norm, error) {
	if d < 1 {
		return nil, fmt.Errorf("geometry: single-norm of dimension %d < 1", d)
	}
	if len(m) != d*d {
		return nil, fmt.Errorf("geometry: single-norm M has %d values, want %d×%d = %d", len(m), d, d, d*d)
	}
	for i, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("geometry: single-norm M[%d][%d] is %v", i/d, i%d, v)
		}
	}
	if !(p > 0) || math.IsInf(p, 0) {
		return nil, fmt.Errorf("geometry: single-norm exponent p = %v, want a finite p > 0", p)
	}
	n := &Norm{d: d, m: append([]float64(nil), m...), p: p}
	n.mt = kernel.NewNormMatrix(n.m, d, kernel.NormMatrix{})
	if math.IsInf(n.logAbsDet(), -1) {
		return nil, fmt.Errorf("geometry: single-norm M is singular (its set has infinite volume)")
	}
	return n, nil
}

// IdentityNorm returns ‖x‖_p (M = I), the paper's initialisation with p = 2.
func IdentityNorm(d int, p float64) *Norm {
	m := make([]float64, d*d)
	for i := range d {
		m[i*d+i] = 1
	}
	n, err := NewNorm(d, m, p)
	if err != nil {
		panic("ccs/geometry: " + err.Error())
	}
	return n
}

// Kind returns KindNorm.
func (*Norm) Kind() Kind { return KindNorm }

// Dim returns d.
func (n *Norm) Dim() int { return n.d }

// M returns a copy of M (row-major).
func (n *Norm) M() []float64 { return append([]float64(nil), n.m...) }

// P returns the exponent p.
func (n *Norm) P() float64 { return n.p }

// Generation counts the changes of M and p since NewNorm (SetParams): while
// it is the same, so are they, and what was computed from a copy of M
// taken at it (retrieve.Collection.Transform) still holds, checked in O(1)
// instead of comparing d² values.
func (n *Norm) Generation() uint64 { return n.gen }

func (n *Norm) params() Params { return Params{"matrix": n.M(), "p": {n.p}} }

func decodeNorm(d int, p Params) (Geometry, error) {
	exp, err := p.one("p")
	if err != nil {
		return nil, err
	}
	return NewNorm(d, p["matrix"], exp)
}

// Clamp keeps p in [b.PMin, b.PMax]; M is free.
func (n *Norm) Clamp(theta []float64, b Bounds) {
	if len(theta) != n.NumParams() {
		panic(errLength)
	}
	p := &theta[len(theta)-1]
	*p = math.Min(math.Max(*p, b.PMin), b.PMax)
}

// NumParams returns d²+1.
func (n *Norm) NumParams() int { return n.d*n.d + 1 }

// Params copies M (row-major) and p into dst.
func (n *Norm) Params(dst []float64) []float64 {
	dst = sameLen(dst, n.NumParams())
	copy(dst, n.m)
	dst[len(n.m)] = n.p
	return dst
}

// SetParams sets M and p from θ.
func (n *Norm) SetParams(theta []float64) {
	if len(theta) != n.NumParams() {
		panic(errLength)
	}
	copy(n.m, theta)
	n.p = theta[len(n.m)]
	n.gen++
	if old := n.vol.Swap(nil); old != nil {
		n.spare.Store(old)
	}
	n.fast.Store(nil)
	n.mT.Store(nil)
	n.mt = kernel.NewNormMatrix(n.m, n.d, n.mt)
}

// Scores computes ‖M x‖_p for each row of diffs.
func (n *Norm) Scores(dst []float64, diffs []float32) []float64 {
	return normScores(n, dst, diffs)
}

func normScores[F Float](n *Norm, dst []float64, diffs []F) []float64 {
	dst, rowsN := rows(dst, diffs, n.d)
	if d32, ok := any(diffs).([]float32); ok && n.d >= blasMinDim {
		normBlas(n, nil, dst, d32, nil)
		return dst
	}
	y, buf := make([]float64, n.d), make([]float64, 4*n.d)
	for i := range rowsN {
		mulRows(y, n.m, diffs[i*n.d:(i+1)*n.d])
		dst[i], _, _ = pnorm(y, n.p, nil, buf)
	}
	return dst
}

// mulRows computes y = M x for a row-major M.
func mulRows[F Float](y, m []float64, x []F) {
	d := len(x)
	for k := range y {
		row := m[k*d : (k+1)*d]
		var s float64
		for l, v := range x {
			s += row[l] * float64(v)
		}
		y[k] = s
	}
}

// pnorm returns φ = ‖y‖_p computed without overflow. When up is not nil it
// also fills up[k] = u_k^p, u_k = |y_k|/max|y|, and returns S' = Σ u_k^p and
// T = Σ u_k^p·log u_k, which give ∂φ/∂p and ∂φ/∂y. For p = 2 φ is
// sqrt(Σ y_k²) exactly as the ball computes it, so that Norm(I, 2) and Ball
// agree to the last bit.
// With buf (4·len(y) values of scratch) and p ≠ 2 the logarithms and
// exponentials are taken a vector at a time (kernel.Log64, kernel.Exp64:
// math.Log's and math.Exp's bits), then summed in the same order.
func pnorm(y []float64, p float64, up, buf []float64) (phi, s, t float64) {
	if p == 2 && up == nil {
		return norm2(y), 0, 0
	}
	a := maxAbs(y)
	if a == 0 {
		clear(up)
		return 0, 0, 0
	}
	if buf != nil && p != 2 {
		d := len(y)
		u, lu, arg, uk := buf[:d], buf[d:2*d], buf[2*d:3*d], buf[3*d:4*d]
		kernel.AbsDiv(u, y, a)
		kernel.Log64(lu, u)
		for k, l := range lu {
			arg[k] = p * l
		}
		kernel.Exp64(uk, arg)
		for k, uv := range u {
			var e float64
			switch {
			case uv == 0:
			case uv == 1:
				e = 1
			default:
				e = uk[k]
				t += e * lu[k]
			}
			s += e
			if up != nil {
				up[k] = e
			}
		}
		return a * math.Exp(math.Log(s)/p), s, t
	}
	for k, v := range y {
		u := math.Abs(v) / a
		var uk float64
		switch {
		case u == 0:
		case u == 1: // the largest coordinate: u^p = 1, log u = 0 (as Exp and Log give)
			uk = 1
		case p == 2:
			uk = u * u
			if up != nil {
				t += uk * math.Log(u)
			}
		default:
			lu := math.Log(u)
			uk = math.Exp(p * lu)
			t += uk * lu
		}
		s += uk
		if up != nil {
			up[k] = uk
		}
	}
	if p == 2 {
		phi = norm2(y)
	} else {
		phi = a * math.Exp(math.Log(s)/p)
	}
	return phi, s, t
}

// maxAbs is the largest |y_k| (NaN if one is NaN): math.Max's result over
// the values, without a call a value.
func maxAbs(y []float64) float64 {
	var a float64
	for _, v := range y {
		// math.Max(a, |v|) for a ≥ +0 and |v| ≥ +0: a NaN stays.
		if av := math.Abs(v); av > a || av != av {
			a = av
		}
	}
	return a
}

// LogVolume is d·log t − log|det M| + d·log 2 + d·lgamma(1+1/p) − lgamma(1+d/p).
func (n *Norm) LogVolume(t float64) float64 {
	d := float64(n.d)
	return d*math.Log(t) - n.logAbsDet() + d*math.Ln2 + d*lgamma(1+1/n.p) - lgamma(1+d/n.p)
}

// dphidy writes ∂φ/∂y_k = sign(y_k)·(|y_k|/φ)^{p−1} into g (0 where
// y_k = 0), from u_k^p and S': with u_k = |y_k|/max|y| and φ = max|y|·S'^{1/p},
// (|y_k|/φ)^{p−1} = (u_k^p/u_k)·S'^{(1−p)/p}, one power per row.
func dphidy(g, y, up []float64, s, p float64) {
	a := maxAbs(y)
	if a == 0 {
		clear(g)
		return
	}
	c := math.Exp((1 - p) / p * math.Log(s))
	for k, v := range y {
		if v == 0 {
			g[k] = 0
			continue
		}
		u := math.Abs(v) / a
		g[k] = math.Copysign(up[k]/u*c, v)
	}
}

// ScoreGrads computes the scores and adds Σ_i w_i·∂φ_i/∂θ into dtheta:
// ∂φ/∂M_kl = ∂φ/∂y_k·x_l and ∂φ/∂p = φ·(T/(p·S') − log S'/p²).
func (n *Norm) ScoreGrads(dtheta, scores []float64, diffs []float32, w Weights) []float64 {
	return normScoreGrads(n, dtheta, scores, diffs, orOnes(w))
}

func normScoreGrads[F Float](n *Norm, dtheta, scores []float64, diffs []F, weights Weights) []float64 {
	d := n.d
	if len(dtheta) != n.NumParams() {
		panic(errLength)
	}
	scores, rowsN := rows(scores, diffs, d)
	if d32, ok := any(diffs).([]float32); ok && d >= blasMinDim {
		normBlas(n, dtheta, scores, d32, weights)
		return scores
	}
	blk := weightBlock(d)
	// Each row of a block: ∂φ/∂y (which needs no weight) and the part of
	// ∂φ/∂p that is not φ's factor, then the block's weights, then the
	// weighted sums.
	y, up, gy, buf := make([]float64, d), make([]float64, d), make([]float64, blk*d), make([]float64, 4*d)
	var dp, w [16]float64 // (weightBlock ≤ 16)
	for lo := 0; lo < rowsN; lo += blk {
		hi := min(rowsN, lo+blk)
		for i := lo; i < hi; i++ {
			mulRows(y, n.m, diffs[i*d:(i+1)*d])
			phi, s, t := pnorm(y, n.p, up, buf)
			scores[i] = phi
			if phi != 0 {
				dphidy(gy[(i-lo)*d:(i-lo+1)*d], y, up, s, n.p)
				dp[i-lo] = t/(n.p*s) - math.Log(s)/(n.p*n.p)
			}
		}
		// Every row's weight is drawn, in order (the caller may sum over
		// them); a row of score 0 has no gradient.
		weights(lo, scores[lo:hi], w[:hi-lo])
		for i := lo; i < hi; i++ {
			phi, wi := scores[i], w[i-lo]
			if phi == 0 || wi == 0 {
				continue
			}
			g, x := gy[(i-lo)*d:(i-lo+1)*d], diffs[i*d:(i+1)*d]
			for k := range d {
				gk := wi * g[k]
				if gk == 0 {
					continue
				}
				row := dtheta[k*d : (k+1)*d]
				for l, v := range x {
					row[l] += gk * float64(v)
				}
			}
			dtheta[d*d] += wi * phi * dp[i-lo]
		}
	}
	return scores
}

// LogVolumeGrad adds w·∂logVol/∂θ: −M⁻ᵀ for M and
// (d/p²)·(ψ(1+d/p) − ψ(1+1/p)) for p; it returns d/t.
func (n *Norm) LogVolumeGrad(dtheta []float64, t, w float64) float64 {
	d := n.d
	if len(dtheta) != n.NumParams() {
		panic(errLength)
	}
	if v := n.volume(); !v.conditioned() {
		// A singular M has an infinite volume and no gradient: say so with
		// NaN, which the trainer reports, rather than a made-up number.
		for k := range d * d {
			dtheta[k] = math.NaN()
		}
	} else {
		for b := range v.blocks {
			v.solve(b)
		}
		v.subInvT(dtheta[:d*d], w)
	}
	fd, p := float64(d), n.p
	dtheta[d*d] += w * fd / (p * p) * (mathext.Digamma(1+fd/p) - mathext.Digamma(1+1/p))
	return fd / t
}

// InputGrads writes ∂φ/∂x = Mᵀ·∂φ/∂y.
func (n *Norm) InputGrads(dst []float64, diffs []float32) []float64 {
	return normInputGrads(n, dst, diffs)
}

func normInputGrads[F Float](n *Norm, dst []float64, diffs []F) []float64 {
	d := n.d
	dst = sameLen(dst, len(diffs))
	_, rowsN := rows(nil, diffs, d)
	y := make([]float64, d)
	g := make([]float64, d)
	up, buf := make([]float64, d), make([]float64, 4*d)
	for i := range rowsN {
		mulRows(y, n.m, diffs[i*d:(i+1)*d])
		_, s, _ := pnorm(y, n.p, up, buf)
		dphidy(g, y, up, s, n.p)
		out := dst[i*d : (i+1)*d]
		clear(out)
		for k, gk := range g {
			if gk == 0 {
				continue
			}
			row := n.m[k*d : (k+1)*d]
			for l := range out {
				out[l] += gk * row[l]
			}
		}
	}
	return dst
}
