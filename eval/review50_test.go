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

// TestReview50DividedShare checks that a halving by blocks counts the
// share of the anchors in the block a cut divides: at least a block's
// share where the block is larger than a side of the cut (divided in every
// resplit), none where every cut falls between equal blocks, each class's
// cut counted on the class path (failed at 1c23c4e: nothing counted it,
// so a block of most of the anchors, divided in every resplit, went
// unnoticed).
func TestReview50DividedShare(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 5))
	cal, test := classBundle(rng, 600, 3, 2), classBundle(rng, 400, 3, 2)
	s, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	class, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	b := *test
	b.Blocks = make([]int64, b.N)
	for i := range b.Blocks {
		b.Blocks[i] = int64(i / 20) // 20 blocks of 20: the cut at 200 between two
	}
	res, err := Resplits(s, &b, 200, 0.5, 1)
	if err != nil || res.DividedShare != 0 {
		t.Errorf("blocks of 20 cut at 200: divided share %v (%v)", res.DividedShare, err)
	}
	for i := range b.Blocks {
		b.Blocks[i] = max(0, int64(i/20)-10) // blocks 0–10 one: 220 of the 400 anchors
	}
	res, err = Resplits(s, &b, 200, 0.5, 1)
	if err != nil || !(res.DividedShare >= 0.55) {
		t.Errorf("a block of 220 of 400 anchors cut at 200: divided share %v, want ≥ 0.55 (%v)", res.DividedShare, err)
	}
	cr, _, err := ResplitsByClass(class, &b, 200, 0.5, 1)
	if err != nil || !(cr.DividedShare > 0 && cr.DividedShare <= 1) {
		t.Errorf("class path: divided share %v (%v)", cr.DividedShare, err)
	}
}
