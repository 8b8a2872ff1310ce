package conformal_test

import (
	"errors"
	"fmt"

	"github.com/ccsets/ccs/conformal"
)

func ExampleThreshold() {
	scores := []float64{0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6}
	q, err := conformal.Threshold(scores, 0.1) // rank ⌈0.9·10⌉ = 9 of 9
	fmt.Println(q, err)

	_, err = conformal.Threshold(scores[:8], 0.1) // rank 9 of 8: the whole space
	fmt.Println(errors.Is(err, conformal.ErrTooFewCalibration))
	// Output:
	// 0.9 <nil>
	// true
}

func ExampleRank() {
	for _, n := range []int{19, 101, 1000} {
		r, _ := conformal.Rank(n, 0.05)
		fmt.Printf("n=%d: rank %d\n", n, r)
	}
	// Output:
	// n=19: rank 19
	// n=101: rank 97
	// n=1000: rank 951
}
