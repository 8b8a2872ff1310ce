package head_test

import (
	"fmt"
	"math"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
)

// A set behind a head scores φ(W·x): here the ℓ2 ball behind W = diag(2, 1),
// an ellipse twice as narrow along the first axis, whose volume in the
// embeddings' space is the ball's divided by |det W| = 2.
func ExampleProjected() {
	h := head.Identity(2, 2)
	h.W[0] = 2
	p, err := head.NewProjected(h, geometry.Ball{D: 2})
	if err != nil {
		panic(err)
	}
	scores := p.Scores(nil, []float32{1, 0, 0, 1})
	fmt.Printf("φ(1,0) = %.0f, φ(0,1) = %.0f\n", scores[0], scores[1])
	fmt.Printf("area at t = 1: %.4f (π/2)\n", math.Exp(p.LogVolume(1)))
	// Output:
	// φ(1,0) = 2, φ(0,1) = 1
	// area at t = 1: 1.5708 (π/2)
}
