package geometry_test

import (
	"fmt"

	"github.com/ccsets/ccs/geometry"
)

func ExampleGenBall() {
	// Σ_j (m_j·|x_j|)^{p_j} with a box-like first coordinate and a diamond-like second.
	g, _ := geometry.NewGenBall([]float64{1, 2}, []float64{8, 1})
	scores := g.Scores(nil, []float32{0.5, 0.25, 1, 0})
	// By hand: {|x₁|⁸ + 2|x₂| ≤ 1} has area ∫₋₁¹ (1 − x⁸) dx = 16/9, log 0.5754.
	fmt.Printf("scores %.4f %.4f\n", scores[0], scores[1])
	fmt.Printf("log-volume at t=1: %.4f\n", g.LogVolume(1))
	// Output:
	// scores 0.5039 1.0000
	// log-volume at t=1: 0.5754
}
