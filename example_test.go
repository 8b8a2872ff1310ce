package ccs_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
)

// toy draws n anchors in 2-D, each with k positives at distance ~ N(0, 1)
// and k negatives at distance ~ N(0, 3²).
func toy(rng *rand.Rand, n, k int) *bundle.Bundle {
	b := &bundle.Bundle{N: n, K: k, D: 2, KNeg: k, Anchors: make([]float32, 2*n),
		Positives: make([]float32, 2*n*k), Negatives: make([]float32, 2*n*k)}
	for i := range 2 * n {
		b.Anchors[i] = float32(rng.NormFloat64())
	}
	for i := range 2 * n * k {
		a := b.Anchors[(i/(2*k))*2+i%2]
		b.Positives[i] = a + float32(rng.NormFloat64())
		b.Negatives[i] = a + float32(3*rng.NormFloat64())
	}
	return b
}

// Calibrate an ℓ2 ball on one split and measure it on another.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	cal, test := toy(rng, 2000, 5), toy(rng, 2000, 50)

	set, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := eval.Evaluate(set, test)
	// By hand: distances are Rayleigh, so at q̂ = 2.103 the coverage is
	// 1 − exp(−q̂²/2) = 0.890 and the exclusion exp(−q̂²/(2·9)) = 0.782
	// (the exact 90% quantile would be sqrt(2·ln 10) = 2.146).
	fmt.Printf("threshold %.3f from the %d-th of %d scores\n", set.Threshold, set.Calibration.Rank, set.Calibration.N)
	fmt.Printf("coverage %.2f, exclusion %.2f\n", r.Coverage, r.Exclusion)
	// Output:
	// threshold 2.103 from the 1801-th of 2000 scores
	// coverage 0.89, exclusion 0.78
}
