package geometry

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// Ball is the ℓ2 ball, φ(x) = ‖x‖₂: the vanilla conformal baseline.
// The composite literal is the API: Ball{D: 128}.
type Ball struct {
	D int // embedding dimension
}

var _ Geometry = Ball{}

// Kind returns KindBall.
func (Ball) Kind() Kind { return KindBall }

// Dim returns D.
func (b Ball) Dim() int { return b.D }

func (Ball) params() Params { return nil }

// Scores computes ‖x‖₂ for each row of diffs.
func (b Ball) Scores(dst []float64, diffs []float32) []float64 {
	return ballScores(dst, diffs, b.D)
}

func ballScores[F Float](dst []float64, diffs []F, d int) []float64 {
	dst, n := rows(dst, diffs, d)
	for i := range n {
		dst[i] = norm2(diffs[i*d : (i+1)*d])
	}
	return dst
}

// norm2 is sqrt(Σ x_j²) accumulated in float64, in index order.
func norm2[F Float](x []F) float64 {
	var s float64
	for _, v := range x {
		f := float64(v)
		s += f * f
	}
	return math.Sqrt(s)
}

// LogVolume is d·log t + (d/2)·log π − lgamma(d/2+1).
func (b Ball) LogVolume(t float64) float64 {
	return float64(b.D)*math.Log(t) + logUnitBall(b.D)
}

// InputGrads writes x/‖x‖₂ (0 at x = 0).
func (b Ball) InputGrads(dst []float64, diffs []float32) []float64 {
	return ballInputGrads(dst, diffs, b.D)
}

func ballInputGrads[F Float](dst []float64, diffs []F, d int) []float64 {
	dst = sameLen(dst, len(diffs))
	_, n := rows(nil, diffs, d)
	for i := range n {
		x := diffs[i*d : (i+1)*d]
		g := dst[i*d : (i+1)*d]
		r := norm2(x)
		for j, v := range x {
			if r == 0 {
				g[j] = 0
			} else {
				g[j] = float64(v) / r
			}
		}
	}
	return dst
}

// Ellipsoid is the Mahalanobis ellipsoid, φ(x) = sqrt(xᵀ Σ⁻¹ x), with a
// fixed symmetric positive-definite Σ. Build it with NewEllipsoid.
type Ellipsoid struct {
	d      int
	sigma  []float64 // d×d row-major, as given
	chol   []float64 // lower Cholesky factor L, Σ = L·Lᵀ, row-major
	logDet float64   // log det Σ
	// fast is the fast score's L⁻¹ in float32 and its bound from d = 16
	// on, computed on first use (fast.go).
	fast atomic.Pointer[ellipsoidFast]
}

var _ Geometry = (*Ellipsoid)(nil)

// ErrNotPositiveDefinite is returned when a covariance is not symmetric
// positive definite.
var ErrNotPositiveDefinite = errors.New("covariance is not symmetric positive definite")

// NewEllipsoid returns the ellipsoid of covariance sigma (d×d, row-major).
// It returns an error if sigma has non-finite entries, is not symmetric, or
// is not positive definite.
func NewEllipsoid(d int, sigma []float64) (*Ellipsoid, error) {
	if d < 1 {
		return nil, fmt.Errorf("geometry: ellipsoid of dimension %d < 1", d)
	}
	if len(sigma) != d*d {
		return nil, fmt.Errorf("geometry: ellipsoid sigma has %d values, want %d×%d = %d", len(sigma), d, d, d*d)
	}
	for i, v := range sigma {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("geometry: ellipsoid sigma[%d][%d] is %v", i/d, i%d, v)
		}
	}
	for i := range d {
		for j := range i {
			a, b := sigma[i*d+j], sigma[j*d+i]
			if math.Abs(a-b) > 1e-12*math.Max(math.Abs(a), math.Abs(b)) {
				return nil, fmt.Errorf("geometry: ellipsoid sigma[%d][%d]=%g differs from sigma[%d][%d]=%g: %w", i, j, a, j, i, b, ErrNotPositiveDefinite)
			}
		}
	}
	// Σ = UᵀU from Σ's upper triangle, as mat.Cholesky factorizes, without
	// the condition number it estimates after (0.8 s at d = 3072, where the
	// factorization took 1.2 s): the same U, and L = Uᵀ.
	u := append([]float64(nil), sigma...)
	if _, ok := lapack64.Potrf(blas64.Symmetric{N: d, Stride: d, Uplo: blas.Upper, Data: u}); !ok {
		return nil, fmt.Errorf("geometry: ellipsoid: %w", ErrNotPositiveDefinite)
	}
	e := &Ellipsoid{d: d, sigma: append([]float64(nil), sigma...), chol: make([]float64, d*d)}
	for i := range d {
		e.logDet += 2 * math.Log(u[i*d+i]) // as mat.Cholesky.LogDet sums
		for j := 0; j <= i; j++ {
			e.chol[i*d+j] = u[j*d+i]
		}
	}
	return e, nil
}

// Kind returns KindEllipsoid.
func (*Ellipsoid) Kind() Kind { return KindEllipsoid }

// Dim returns d.
func (e *Ellipsoid) Dim() int { return e.d }

// Sigma returns a copy of Σ (row-major).
func (e *Ellipsoid) Sigma() []float64 { return append([]float64(nil), e.sigma...) }

func (e *Ellipsoid) params() Params { return Params{"sigma": e.Sigma()} }

// Scores computes sqrt(xᵀ Σ⁻¹ x) = ‖L⁻¹x‖₂ for each row of diffs: many
// rows in blocks on all cores (each row's solve its own, so the scores
// are those of one goroutine; a calibration split of 40 000 rows at
// d = 512 took 4.4 s in one).
func (e *Ellipsoid) Scores(dst []float64, diffs []float32) []float64 {
	const block = 256
	dst, n := rows(dst, diffs, e.d)
	if n < 2*block {
		return ellipsoidScores(e, dst, diffs)
	}
	parallel.For(n, block, 0, func(_, lo, hi int) {
		ellipsoidScores(e, dst[lo:hi], diffs[lo*e.d:hi*e.d])
	})
	return dst
}

// ellipsoidScores scores each row with forward's solve, where the build
// has vector kernels kernel.SolveRows() rows at a time (the last block
// padded with zero rows): the same bits, a lane a row. At d = 768 the
// solve is d²/2 products a row, and one at a time (each subtraction waiting
// for the last) it took 62% of ccs compare's CPU on 20 000 embeddings.
func ellipsoidScores[F Float](e *Ellipsoid, dst []float64, diffs []F) []float64 {
	d := e.d
	dst, n := rows(dst, diffs, d)
	w := kernel.SolveRows()
	bp, buf := scratch64(d * (w + 1)) // 96 KB at d = 384: a chunk's few rows a call
	defer scratchPool.Put(bp)
	y, yt := buf[:d], buf[d:]
	if w > 0 && n > 0 && d > 0 {
		for lo := 0; lo < n; lo += w {
			hi := min(n, lo+w)
			for r := range hi - lo {
				for i, v := range diffs[(lo+r)*d : (lo+r+1)*d] {
					yt[i*w+r] = float64(v)
				}
			}
			if hi-lo < w { // the padding lanes zero, not an earlier call's
				for i := range d {
					clear(yt[i*w+hi-lo : (i+1)*w])
				}
			}
			kernel.SolveLower(yt, e.chol, d)
			for r := range hi - lo {
				for i := range y {
					y[i] = yt[i*w+r]
				}
				dst[lo+r] = norm2(y)
			}
		}
		return dst
	}
	for i := range n {
		forward(e, y, diffs[i*d:(i+1)*d])
		dst[i] = norm2(y)
	}
	return dst
}

// forward solves L·y = x: each product rounded before it is subtracted
// (the conversion keeps a compiler from fusing them), as kernel.SolveLower
// does.
func forward[F Float](e *Ellipsoid, y []float64, x []F) {
	d := e.d
	for i := range d {
		s := float64(x[i])
		row := e.chol[i*d : i*d+i]
		for j, l := range row {
			s -= float64(l * y[j])
		}
		y[i] = s / e.chol[i*d+i]
	}
}

// backward solves Lᵀ·z = y in place.
func (e *Ellipsoid) backward(y []float64) {
	d := e.d
	for i := d - 1; i >= 0; i-- {
		s := y[i]
		for j := i + 1; j < d; j++ {
			s -= e.chol[j*d+i] * y[j]
		}
		y[i] = s / e.chol[i*d+i]
	}
}

// LogVolume is the ball's log-volume plus ½·log det Σ.
func (e *Ellipsoid) LogVolume(t float64) float64 {
	return float64(e.d)*math.Log(t) + logUnitBall(e.d) + 0.5*e.logDet
}

// InputGrads writes Σ⁻¹x / φ(x) (0 at x = 0).
func (e *Ellipsoid) InputGrads(dst []float64, diffs []float32) []float64 {
	return ellipsoidInputGrads(e, dst, diffs)
}

func ellipsoidInputGrads[F Float](e *Ellipsoid, dst []float64, diffs []F) []float64 {
	d := e.d
	dst = sameLen(dst, len(diffs))
	_, n := rows(nil, diffs, d)
	y := make([]float64, d)
	for i := range n {
		forward(e, y, diffs[i*d:(i+1)*d])
		phi := norm2(y)
		g := dst[i*d : (i+1)*d]
		if phi == 0 {
			clear(g)
			continue
		}
		e.backward(y)
		for j := range g {
			g[j] = y[j] / phi
		}
	}
	return dst
}
