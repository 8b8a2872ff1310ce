package eval

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestReview49bBlockMeanInBand: the resplits of a -blocks bundle report the
// marginal band [1−α, 1−α + 1/(n+1)] for their mean (ResplitResult.Band)
// and the docs say of halving by block "The mean is not affected". The
// band is a guarantee for anchors exchangeable with the calibration's;
// halved by block they are not (blocks are), and where a block's size goes
// with its spread (a patient of many images, all wider) the mean falls
// outside it. Expected: the mean over resplits in the band the result
// prints, or no band printed for a halving by blocks.
func TestReview49bBlockMeanInBand(t *testing.T) {
	rng := rand.New(rand.NewPCG(88, 1))
	const n, k, d = 1200, 1, 2
	cal := classBundle(rng, 600, k, d)
	test := classBundle(rng, n, k, d)
	test.Blocks = make([]int64, n)
	// blocks: a few large wide ones, many small narrow ones.
	i, blk := 0, int64(0)
	for i < n {
		size, scale := 3, 1.0
		if rng.IntN(40) == 0 {
			size, scale = 200, 3
		}
		for j := 0; j < size && i < n; j++ {
			test.Blocks[i] = blk
			for a := range k {
				for c := range d {
					at := (i*k+a)*d + c
					test.Positives[at] = test.Anchors[i*d+c] + float32(scale)*(test.Positives[at]-test.Anchors[i*d+c])
				}
			}
			i++
		}
		blk++
	}
	s, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Resplits(s, test, 4000, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	rows := *test
	rows.Blocks = nil
	byRow, err := Resplits(s, &rows, 4000, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	se := res.Coverage.Std / math.Sqrt(float64(res.Resplits))
	t.Logf("by block (%d blocks): mean %.4f ± %.4f (se %.5f), band %v; by row: mean %.4f ± %.4f", res.Blocks, res.Coverage.Mean, res.Coverage.Std, se, res.Band, byRow.Coverage.Mean, byRow.Coverage.Std)
	if res.Band != [2]float64{} && (res.Coverage.Mean < res.Band[0]-4*se || res.Coverage.Mean > res.Band[1]+4*se) {
		t.Errorf("halved by block, the mean %.4f lies %.1f standard errors outside the band %v the result prints (row by row: %.4f)", res.Coverage.Mean, math.Max(res.Band[0]-res.Coverage.Mean, res.Coverage.Mean-res.Band[1])/se, res.Band, byRow.Coverage.Mean)
	}
}
