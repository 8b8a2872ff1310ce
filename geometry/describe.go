package geometry

import "fmt"

// Description is what a geometry says of itself to people and to files:
// its family, the dimension of the differences it scores and, for a set
// behind a projection head (package head), the head's shape.
type Description struct {
	Kind Kind
	Dim  int // the dimension of the differences it scores
	// HeadIn and HeadOut are the input and output dimensions of the
	// projection head W the geometry scores through, φ(W·x); both 0
	// without one.
	HeadIn, HeadOut int
	// Shifted says that the sets are centred off their anchors (Shifted).
	Shifted bool
}

// Describer is implemented by geometries with more to say than Kind and Dim
// (package head's Projected).
type Describer interface {
	Describe() Description
}

// Describe returns g's description.
func Describe(g Geometry) Description {
	if d, ok := g.(Describer); ok {
		return d.Describe()
	}
	return Description{Kind: g.Kind(), Dim: g.Dim()}
}

// Head reports whether the geometry scores through a projection head.
func (d Description) Head() bool { return d.HeadOut != 0 }

// ProjectedVolume reports whether the geometry's log-volumes are measured in
// the head's output space rather than in the space of the differences it
// scores: a head that is not square has no volume in the latter (zero or
// infinite), so its sets' volumes are not comparable with those of sets
// without one.
func (d Description) ProjectedVolume() bool { return d.HeadIn != d.HeadOut }

// String returns the family's name, followed by the head's shape when it
// has one and the shift when its sets are centred off their anchors:
// "genball", "genball (behind a 3→2 projection head)" or "ball (centre
// shifted)".
func (d Description) String() string {
	s := d.Kind.String()
	if d.Head() {
		s = fmt.Sprintf("%v (behind a %d→%d projection head)", d.Kind, d.HeadIn, d.HeadOut)
	}
	if d.Shifted {
		s += " (centre shifted)"
	}
	return s
}
