// Package geometry holds the set families of contrastive conformal sets.
//
// A geometry is a nonconformity score φ on difference vectors x = Z − z
// between an anchor embedding Z and a point z. The set around Z at
// threshold t is N_t(Z) = {z : φ(Z − z) ≤ t}; its volume does not depend on
// Z and has a closed form for every family here (docs/design.md §1):
//
//	Ball       φ(x) = ‖x‖₂
//	Ellipsoid  φ(x) = sqrt(xᵀ Σ⁻¹ x)
//	Norm       φ(x) = ‖M x‖_p                      (the paper's single-norm set)
//	GenBall    φ(x) = Σ_j (m_j·|x_j|)^{p_j}         (the generalized hyper-ball)
//
// Difference vectors arrive as float32 rows of Dim() values (what encoders
// emit); every score, sum, parameter and gradient is float64. All methods
// follow gonum's dst convention: a nil dst is allocated, a non-nil dst of
// the wrong length is a programmer error and panics, as are rows that are
// not whole rows of Dim() values. This package trusts its caller: the
// packages that take data from outside (conformal.Set.Members, eval,
// retrieve, serve) check lengths and values and return errors first.
package geometry

import (
	"math"
)

const (
	errLength = "ccs/geometry: slice length mismatch"
	errRows   = "ccs/geometry: diffs is not a whole number of rows"
)

// Geometry is a set family with fixed parameters.
type Geometry interface {
	// Kind names the family.
	Kind() Kind
	// Dim is the embedding dimension d.
	Dim() int
	// Scores computes φ for each row of diffs (len(diffs)/Dim() rows) into dst.
	Scores(dst []float64, diffs []float32) []float64
	// LogVolume is log Vol(N_t), the natural log of the Lebesgue volume of
	// the set at threshold t. It is −Inf at t = 0 and +Inf at t = +Inf.
	LogVolume(t float64) float64
	// InputGrads writes ∂φ_i/∂x_ij for every row i and coordinate j of diffs
	// into dst (same layout as diffs). Where φ is not differentiable (x = 0,
	// or a zero coordinate with an exponent below 1) the value is 0, a
	// subgradient for the convex cases.
	InputGrads(dst []float64, diffs []float32) []float64
}

// Learnable is a geometry whose parameters θ can be trained.
//
// Parameters are exposed as one flat vector so that optimisers and finite
// differences apply unchanged. The layout is documented on each type.
type Learnable interface {
	Geometry
	// NumParams is len(θ).
	NumParams() int
	// Params copies θ into dst.
	Params(dst []float64) []float64
	// SetParams sets θ. It panics if len(theta) != NumParams(); it does not
	// validate values (the trainer clamps them).
	SetParams(theta []float64)
	// ScoreGrads computes the scores of diffs into scores and adds
	// Σ_i w_i·∂φ_i/∂θ into dtheta, in one pass: the weights w_i come from
	// w, which may depend on the scores (a nil w weighs every row 1).
	ScoreGrads(dtheta, scores []float64, diffs []float32, w Weights) []float64
	// LogVolumeGrad adds w·∂logVol(N_t)/∂θ into dtheta and returns
	// ∂logVol(N_t)/∂t.
	LogVolumeGrad(dtheta []float64, t, w float64) float64
	// Clamp projects θ, in place, onto the family's parameters within b
	// (the paper's Remark 1), after every training step.
	Clamp(theta []float64, b Bounds)
}

// Bounds keep a learnable family's parameters in range (the paper's Remark
// 1): exponents p in [PMin, PMax], generalized-ball scales m ≥ MMin and, if
// MMax > 0, m ≤ MMax. The single-norm's M is free.
type Bounds struct {
	PMin float64 `json:"p_min"`
	PMax float64 `json:"p_max"`
	MMin float64 `json:"m_min"`
	MMax float64 `json:"m_max"` // 0 means no upper bound
}

// Float is the element type of difference vectors inside the kernels:
// float32 for embeddings, float64 where tests need smooth inputs.
type Float interface{ ~float32 | ~float64 }

// rows checks that diffs is a whole number of rows of d and that dst has one
// slot per row, allocating it when nil.
func rows[F Float](dst []float64, diffs []F, d int) ([]float64, int) {
	if len(diffs)%d != 0 {
		panic(errRows)
	}
	n := len(diffs) / d
	if dst == nil {
		return make([]float64, n), n
	}
	if len(dst) != n {
		panic(errLength)
	}
	return dst, n
}

// sameLen allocates dst with length n when nil and panics when its length
// differs.
func sameLen(dst []float64, n int) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic(errLength)
	}
	return dst
}

// logUnitBall is log Vol of the unit ℓ2 ball in d dimensions.
func logUnitBall(d int) float64 {
	fd := float64(d)
	lg, _ := math.Lgamma(fd/2 + 1)
	return fd/2*math.Log(math.Pi) - lg
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}
