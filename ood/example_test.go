package ood_test

import (
	"fmt"

	"github.com/ccsets/ccs/ood"
)

// Anomaly scores (higher = more likely OOD) of three ID and three OOD
// inputs: 7 of the 9 pairs are ordered right, the two ties count ½.
func ExampleEvaluate() {
	m, _ := ood.Evaluate([]float64{0, 1, 2}, []float64{1, 2, 3}, ood.IDPositive)
	fmt.Printf("AUROC %.4f, FPR95 %.3f\n", m.AUROC, m.FPR95)
	// Output: AUROC 0.7778, FPR95 0.667
}
