package head

import (
	"fmt"
	"math"

	"github.com/ccsets/ccs/geometry"
)

// Projected is a set geometry behind a head: φ'(x) = φ(W·x) on the
// backbone's differences x. It is what a fitted set with a head scores with.
type Projected struct {
	Head  *Linear
	Inner geometry.Geometry // on the projected space (dimension Head.Out)

	logDet float64 // log|det W|, square heads only
}

var (
	_ geometry.Geometry  = (*Projected)(nil)
	_ geometry.Describer = (*Projected)(nil)
)

// NewProjected joins a validated head to a geometry on its output space.
func NewProjected(h *Linear, inner geometry.Geometry) (*Projected, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if inner.Dim() != h.Out {
		return nil, fmt.Errorf("head: the head outputs %d dimensions, the geometry has %d", h.Out, inner.Dim())
	}
	p := &Projected{Head: h, Inner: inner, logDet: math.NaN()}
	if h.In == h.Out {
		p.logDet = h.LogAbsDet()
	}
	return p, nil
}

// Kind is the inner geometry's family.
func (p *Projected) Kind() geometry.Kind { return p.Inner.Kind() }

// Dim is the backbone's dimension (the head's input).
func (p *Projected) Dim() int { return p.Head.In }

// Scores computes φ(W·x) for each row x of diffs.
func (p *Projected) Scores(dst []float64, diffs []float32) []float64 {
	return p.Inner.Scores(dst, p.Head.Transform(nil, diffs))
}

// LogVolume is the log-volume of {x : φ(W·x) ≤ t} in the backbone's space,
// log Vol_projected − log|det W|, when the head is square: comparable with
// the log-volumes of sets without a head. A non-square head has no such
// volume (zero or infinite); LogVolume then returns the volume in the
// projected space, and ProjectedSpace says so.
func (p *Projected) LogVolume(t float64) float64 {
	v := p.Inner.LogVolume(t)
	if p.ProjectedSpace() {
		return v
	}
	return v - p.logDet
}

// ProjectedSpace reports whether LogVolume is measured in the projected
// space (a non-square head) rather than the backbone's.
func (p *Projected) ProjectedSpace() bool { return p.Head.In != p.Head.Out }

// InputGrads writes Wᵀ·∇φ(W·x) for each row.
func (p *Projected) InputGrads(dst []float64, diffs []float32) []float64 {
	g := p.Inner.InputGrads(nil, p.Head.Transform(nil, diffs))
	if dst == nil {
		dst = make([]float64, len(diffs))
	}
	if len(dst) != len(diffs) {
		panic("ccs/head: slice length mismatch")
	}
	return p.Head.InputGrads(dst, g)
}

// Describe names the inner geometry's family and the head's shape.
func (p *Projected) Describe() geometry.Description {
	return geometry.Description{Kind: p.Inner.Kind(), Dim: p.Head.In, HeadIn: p.Head.In, HeadOut: p.Head.Out}
}

// Split returns the geometry a set file stores and its head: g's inner
// geometry and head when g scores through one, g and nil otherwise.
func Split(g geometry.Geometry) (inner geometry.Geometry, h *Linear) {
	if p, ok := g.(*Projected); ok {
		return p.Inner, p.Head
	}
	return g, nil
}

var _ geometry.Decomposer = (*Projected)(nil)

// Decompose is the inner geometry's decomposition composed with W, when the
// inner geometry decomposes (every family of package geometry does).
func (p *Projected) Decompose() (geometry.Decomposition, bool) {
	d, ok := p.Inner.(geometry.Decomposer)
	if !ok {
		return geometry.Decomposition{}, false
	}
	inner, ok := d.Decompose()
	if !ok {
		return geometry.Decomposition{}, false
	}
	return inner.Then(p.Head.W, p.Head.In), true
}
