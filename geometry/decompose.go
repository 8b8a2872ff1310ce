package geometry

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// A Decomposition writes a geometry's score as a sum of per-coordinate
// terms of a linear image of the difference,
//
//	φ(x) = Outer(Σ_j term_j(y_j)),  y = T·x,
//
// every term non-negative and nondecreasing in |y_j|, Outer increasing. A
// scan that compares scores with a bound sums the terms and stops a row
// once the partial sum passes Inner(bound); a pool of points a_i can be
// mapped by T once, since T·(a − x) = T·a − T·x. Its arithmetic is not the
// geometry's to the last bit (T·a − T·x is not T applied to the float32
// difference): exact decisions rescore near the bound with Scores.
type Decomposition struct {
	// T is the linear map, Out×In row-major (In the geometry's Dim); nil
	// means the identity (Out = In).
	T       []float64
	In, Out int
	// Power > 0: term_j(y) = |y|^Power and Outer(s) = s^{1/Power} (the ℓ2
	// ball and the ellipsoid with Power 2, the single-norm with its p).
	// Power = 0: the generalized ball, term_j(y) = (M_j·|y|)^{P_j} and
	// Outer the identity.
	Power float64
	M, P  []float64
}

// Decomposer is implemented by geometries whose score may decompose: every
// family of this package does, and package head's sets behind a head do
// when their inner geometry does (ok says so).
type Decomposer interface {
	Geometry
	Decompose() (d Decomposition, ok bool)
}

// Term returns term_j(y).
func (d *Decomposition) Term(j int, y float64) float64 {
	a := math.Abs(y)
	switch {
	case d.Power == 2:
		return a * a
	case d.Power > 0:
		if a == 0 {
			return 0
		}
		return math.Pow(a, d.Power)
	case a == 0:
		return 0
	}
	return math.Exp(d.P[j] * (math.Log(d.M[j]) + math.Log(a)))
}

// Inner is Outer's inverse: the sum of terms whose score is phi.
func (d *Decomposition) Inner(phi float64) float64 {
	switch d.Power {
	case 0:
		return phi
	case 2:
		return phi * phi
	}
	return math.Pow(phi, d.Power)
}

// Outer maps a sum of terms to the score.
func (d *Decomposition) Outer(s float64) float64 {
	switch d.Power {
	case 0:
		return s
	case 2:
		return math.Sqrt(s)
	}
	return math.Pow(s, 1/d.Power)
}

// Apply writes T·x into y (len Out), x of length In.
func (d *Decomposition) Apply(y []float64, x []float32) {
	if d.T == nil {
		for j, v := range x {
			y[j] = float64(v)
		}
		return
	}
	for k := range d.Out {
		row := d.T[k*d.In : (k+1)*d.In]
		var s float64
		for l, v := range x {
			s += row[l] * float64(v)
		}
		y[k] = s
	}
}

// Then composes: the decomposition of x ↦ φ(W·x), for W (Out_W × In_W,
// row-major) into the space d scores.
func (d Decomposition) Then(w []float64, in int) Decomposition {
	mid := len(w) / in
	t := w
	if d.T != nil { // T·W
		t = make([]float64, d.Out*in)
		for k := range d.Out {
			for m := range mid {
				a := d.T[k*mid+m]
				if a == 0 {
					continue
				}
				for l := range in {
					t[k*in+l] += a * w[m*in+l]
				}
			}
		}
	}
	d.T, d.In = append([]float64(nil), t...), in
	return d
}

var (
	_ Decomposer = Ball{}
	_ Decomposer = (*Ellipsoid)(nil)
	_ Decomposer = (*Norm)(nil)
	_ Decomposer = (*GenBall)(nil)
)

// Decompose returns ‖x‖₂ = (Σ x_j²)^{1/2}.
func (b Ball) Decompose() (Decomposition, bool) {
	return Decomposition{In: b.D, Out: b.D, Power: 2}, true
}

// Decompose returns sqrt(xᵀΣ⁻¹x) = ‖L⁻¹x‖₂, with T = L⁻¹ (Σ = L·Lᵀ).
func (e *Ellipsoid) Decompose() (Decomposition, bool) {
	d := e.d
	var l mat.TriDense
	lt := mat.NewTriDense(d, mat.Lower, nil)
	for i := range d {
		for j := 0; j <= i; j++ {
			lt.SetTri(i, j, e.chol[i*d+j])
		}
	}
	if err := l.InverseTri(lt); err != nil {
		// L has a positive diagonal (NewEllipsoid checked Σ is positive
		// definite): it is invertible, if badly conditioned.
		panic("ccs/geometry: " + err.Error())
	}
	t := make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			t[i*d+j] = l.At(i, j)
		}
	}
	return Decomposition{T: t, In: d, Out: d, Power: 2}, true
}

// Decompose returns ‖M·x‖_p = (Σ |(M·x)_j|^p)^{1/p}.
func (n *Norm) Decompose() (Decomposition, bool) {
	return Decomposition{T: n.M(), In: n.d, Out: n.d, Power: n.p}, true
}

// Decompose returns Σ_j (m_j·|x_j|)^{p_j}.
func (g *GenBall) Decompose() (Decomposition, bool) {
	return Decomposition{In: len(g.m), Out: len(g.m), M: g.Scales(), P: g.Exponents()}, true
}
