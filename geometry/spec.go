package geometry

import (
	"fmt"
	"math"
	"slices"
)

// Spec is a geometry's parameters as stored in a fitted-set file. Only the
// fields of its Kind are set.
type Spec struct {
	Kind Kind `json:"kind"`
	Dim  int  `json:"dim"`
	// Sigma is the ellipsoid's covariance Σ, d×d row-major.
	Sigma []float64 `json:"sigma,omitempty"`
	// Matrix and P are the single-norm's M (d×d row-major) and p.
	Matrix []float64 `json:"matrix,omitempty"`
	P      float64   `json:"p,omitempty"`
	// Scales and Exponents are the generalized ball's m_j and p_j.
	Scales    []float64 `json:"scales,omitempty"`
	Exponents []float64 `json:"exponents,omitempty"`
}

// Encode returns g's Spec.
func Encode(g Geometry) (Spec, error) {
	s := Spec{Kind: g.Kind(), Dim: g.Dim()}
	switch g := g.(type) {
	case Ball:
	case *Ellipsoid:
		s.Sigma = g.Sigma()
	case *Norm:
		s.Matrix, s.P = g.M(), g.P()
	case *GenBall:
		s.Scales, s.Exponents = g.Scales(), g.Exponents()
	default:
		return Spec{}, fmt.Errorf("geometry: cannot encode %T", g)
	}
	return s, nil
}

// Decode validates s and builds its geometry. Errors name the bad field.
func Decode(s Spec) (Geometry, error) {
	if s.Dim < 1 {
		return nil, fmt.Errorf("geometry: dim %d < 1", s.Dim)
	}
	// Each kind's own fields; any other field set is an error.
	present := []struct {
		name string
		set  bool
	}{{"sigma", s.Sigma != nil}, {"matrix", s.Matrix != nil}, {"p", s.P != 0},
		{"scales", s.Scales != nil}, {"exponents", s.Exponents != nil}}
	own := map[Kind][]string{KindBall: nil, KindEllipsoid: {"sigma"}, KindNorm: {"matrix", "p"},
		KindGenBall: {"scales", "exponents"}}
	fields, ok := own[s.Kind]
	if !ok {
		return nil, fmt.Errorf("geometry: unknown kind %v", s.Kind)
	}
	for _, f := range present {
		if f.set && !slices.Contains(fields, f.name) {
			return nil, fmt.Errorf("geometry: %v: field %q does not belong to it", s.Kind, f.name)
		}
	}
	var (
		g   Geometry
		err error
	)
	switch s.Kind {
	case KindBall:
		g = Ball{D: s.Dim}
	case KindEllipsoid:
		g, err = NewEllipsoid(s.Dim, s.Sigma)
	case KindNorm:
		g, err = NewNorm(s.Dim, s.Matrix, s.P)
	case KindGenBall:
		g, err = NewGenBall(s.Scales, s.Exponents)
		if err == nil && g.Dim() != s.Dim {
			err = fmt.Errorf("geometry: genball with %d scales for dim %d", g.Dim(), s.Dim)
		}
	}
	if err != nil {
		return nil, err
	}
	if math.IsInf(g.LogVolume(1), 0) || math.IsNaN(g.LogVolume(1)) {
		return nil, fmt.Errorf("geometry: %v: its unit set has log-volume %v", s.Kind, g.LogVolume(1))
	}
	return g, nil
}
