package ccs_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/train"
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

// From embeddings in memory to a certified set and its answers, in Go: what
// ccs bundle, fit, calibrate, evaluate and retrieve do, without files.
// docs/go.md walks through it.
func Example_pipeline() {
	// 4 000 items of 8 classes in 16 dimensions, as an encoder gives them:
	// one row after another (n·d float32 values) and a label a row.
	const n, d = 4000, 16
	rng := rand.New(rand.NewPCG(3, 4))
	centres := make([]float32, 8*d)
	for i := range centres {
		centres[i] = float32(3 * rng.NormFloat64())
	}
	rows, labels := make([]float32, n*d), make([]int64, n)
	for i := range n {
		labels[i] = int64(i % 8)
		for j := range d {
			rows[i*d+j] = centres[int(labels[i])*d+j] + float32(rng.NormFloat64())*float32(1+j%3)
		}
	}

	// Splits with positives (same class) and negatives (other classes).
	plan, err := bundle.Make(bundle.Items{N: n, Labels: labels}, bundle.MakeConfig{K: 10, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := conformal.Inspect(plan, rows, nil, d); err != nil { // checks the rows; warnings in plan.Warnings
		fmt.Println(err)
		return
	}
	split := make([]*bundle.Bundle, bundle.Test+1)
	for s := range split {
		if split[s], err = plan.Bundle(s, rows, nil, d); err != nil {
			fmt.Println(err)
			return
		}
	}

	// Learn a generalized ball, then calibrate it on its own split.
	cfg := train.EmbeddingRecipe
	cfg.Objective.Objective, cfg.Objective.Alpha, cfg.Seed = objective.Neg, 0.1, 1
	f, err := train.Fit(context.Background(), train.Spec{Kind: geometry.KindGenBall, Config: cfg}, split[bundle.Fit], split[bundle.Val], nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := conformal.CalibrateFitted(f.Set(), split[bundle.Cal], 0.1, conformal.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	set.KeepRows(split[bundle.Cal]) // as ccs calibrate: evaluate then knows these rows
	ball, err := conformal.Calibrate(geometry.Ball{D: d}, split[bundle.Cal], 0.1, conformal.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	learned, _ := eval.Evaluate(set, split[bundle.Test])
	plain, _ := eval.Evaluate(ball, split[bundle.Test])
	fmt.Printf("threshold from the %d-th of %d calibration scores\n", set.Calibration.Rank, set.Calibration.N)
	fmt.Printf("coverage at least 85%%: %v; excludes more negatives than the ℓ2 ball: %v\n",
		learned.Coverage >= 0.85, learned.Exclusion > plain.Exclusion)

	// Answers: is a point inside the set around an anchor, and which
	// items of a collection are.
	anchor, point := rows[:d], rows[8*d:9*d] // items 0 and 8: both of class 0
	in, err := set.Contains(anchor, point, nil)
	fmt.Println("item 8 inside the set around item 0:", in, err)
	items, err := retrieve.NewCollection(rows, d, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	hits, total, err := retrieve.Search(context.Background(), set, anchor, items, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	same := 0
	for _, h := range hits {
		if labels[h.Row] == 0 {
			same++
		}
	}
	fmt.Printf("the 5 nearest of the items inside: %d of class 0 (of %v inside)\n", same, total > 400)
	// Output:
	// threshold from the 347-th of 384 calibration scores
	// coverage at least 85%: true; excludes more negatives than the ℓ2 ball: true
	// item 8 inside the set around item 0: true <nil>
	// the 5 nearest of the items inside: 5 of class 0 (of true inside)
}
