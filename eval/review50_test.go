package eval

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestReview50RowLikeBlocksKeepBand checks that a bundle whose anchors are
// all one block (one patient's images, one recording) or each its own
// block (blocks = the anchors' index) keeps the row-by-row halving's band
// for the mean, one block giving the row-by-row coverages themselves, and
// the class path its classes' bands (failed at 1c23c4e: any blocks
// dropped the band, though blockOrder then halves the anchors uniformly
// at random, under which the mean lies in [1−α, 1−α + 1/(n+1)]).
func TestReview50RowLikeBlocksKeepBand(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 3))
	cal, test := classBundle(rng, 600, 3, 2), classBundle(rng, 600, 3, 2)
	s, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	class, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Resplits(s, test, 300, 0.5, 4)
	if err != nil {
		t.Fatal(err)
	}
	_, rowClasses, err := ResplitsByClass(class, test, 300, 0.5, 4)
	if err != nil {
		t.Fatal(err)
	}
	for name, blocks := range map[string]func(i int) int64{"one block": func(int) int64 { return 7 }, "one block an anchor": func(i int) int64 { return int64(i) }} {
		b := *test
		b.Blocks = make([]int64, b.N)
		for i := range b.Blocks {
			b.Blocks[i] = blocks(i)
		}
		res, err := Resplits(s, &b, 300, 0.5, 4)
		if err != nil {
			t.Fatal(err)
		}
		if name == "one block" && !slices.Equal(res.Coverages, rows.Coverages) {
			t.Errorf("%s: not the row-by-row halving", name)
		}
		if res.Band != rows.Band || res.ByBlocks() {
			t.Errorf("%s (%d blocks): band %v (by blocks %v), where a halving of the anchors uniformly at random keeps the row-by-row band %v (mean %.4f)", name, res.Blocks, res.Band, res.ByBlocks(), rows.Band, res.Coverage.Mean)
		}
		_, classes, err := ResplitsByClass(class, &b, 300, 0.5, 4)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range classes {
			if c.Band != rowClasses[i].Band {
				t.Errorf("%s: class %d's band %v, row by row %v", name, c.Label, c.Band, rowClasses[i].Band)
			}
		}
	}
}
