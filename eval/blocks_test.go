package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// blocksBundle is classBundle's anchors in blocks of 2 to 8 (a patient's
// images), each block of one class and its anchors' positives spread
// alike, by a scale of the block's own (a patient's images more or less
// alike): the scores of a block's anchors are far more alike than two
// blocks'.
func blocksBundle(rng *rand.Rand, n, k, d int) *bundle.Bundle {
	b := classBundle(rng, n, k, d)
	b.Blocks = make([]int64, n)
	block, left, scale := int64(100), 0, 1.0
	for i := range n {
		if left == 0 {
			block, left, scale = block+7, 2+rng.IntN(7), math.Exp(0.6*rng.NormFloat64())
		}
		left--
		b.Blocks[i] = block
		b.Labels[i] = block % 3
		for a := range k {
			for j := range d {
				at := (i*k+a)*d + j
				b.Positives[at] = b.Anchors[i*d+j] + float32(scale)*(b.Positives[at]-b.Anchors[i*d+j])
			}
		}
	}
	return b
}

// TestResplitsKeepBlocks: a bundle whose anchors record their blocks is
// halved block by block — in every resplit at most one block (the one the
// cut divides) has anchors on both sides, in each class for the class
// path —, the number of blocks is reported, the numbers do not depend on
// the threads, and the spread over resplits is wider than the row-by-row
// halving's of the same bundle without its blocks (which put every
// block's anchors on both sides).
func TestResplitsKeepBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 9))
	cal, test := blocksBundle(rng, 600, 3, 2), blocksBundle(rng, 1200, 3, 2)
	s, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	straddling := 0
	res, err := resplits1(context.Background(), s, test, 300, 0.5, 4, func(r int, held []int, _ []float64, _ float64) {
		isHeld := make([]bool, test.N)
		for _, i := range held {
			isHeld[i] = true
		}
		sides := map[int64][2]bool{}
		for i, bk := range test.Blocks {
			v := sides[bk]
			if isHeld[i] {
				v[1] = true
			} else {
				v[0] = true
			}
			sides[bk] = v
		}
		n := 0
		for _, v := range sides {
			if v[0] && v[1] {
				n++
			}
		}
		if n > 1 {
			straddling++
		}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if straddling > 0 {
		t.Errorf("%d of 300 resplits put more than one block on both sides", straddling)
	}
	if res.Blocks < 100 {
		t.Errorf("blocks %d", res.Blocks)
	}
	rows := *test
	rows.Blocks = nil
	byRow, err := Resplits(s, &rows, 300, 0.5, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("± %.4f by block, %.4f by row", res.Coverage.Std, byRow.Coverage.Std)
	if byRow.Blocks != 0 || !(res.Coverage.Std > 1.2*byRow.Coverage.Std) {
		t.Errorf("by block ± %.4f, by row ± %.4f (blocks %d): want the blocks' spread wider", res.Coverage.Std, byRow.Coverage.Std, byRow.Blocks)
	}
	// Blocks not one an anchor (the Go API: files are checked when read):
	// an error naming them, not a halving row by row.
	short := *test
	short.Blocks = test.Blocks[:test.N-1]
	if _, err := Resplits(s, &short, 10, 0.5, 1); err == nil || !strings.Contains(err.Error(), "blocks") {
		t.Errorf("short blocks: %v", err)
	}
	if res.Band != [2]float64{} {
		t.Errorf("a halving by blocks prints the band %v, which holds for anchors exchangeable one by one", res.Band)
	}
	again, err := Resplits(s, test, 300, 0.5, 4)
	if err != nil || again.Coverage != res.Coverage {
		t.Errorf("not deterministic: %+v against %+v (%v)", again.Coverage, res.Coverage, err)
	}
	// The class path (each class's cut divides one block at most: the
	// cuts are the class's, on the one order of the blocks of the resplit).
	class, err := conformal.Calibrate(geometry.Ball{D: 2}, cal, 0.1, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	cr, classes, err := ResplitsByClass(class, test, 300, 0.5, 4)
	if err != nil {
		t.Fatal(err)
	}
	rowClass, _, err := ResplitsByClass(class, &rows, 300, 0.5, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(classes) != 3 || cr.Blocks < 100 || !(cr.Coverage.Std > 1.2*rowClass.Coverage.Std) {
		t.Errorf("by class: blocks %d, ± %.4f by block against %.4f by row", cr.Blocks, cr.Coverage.Std, rowClass.Coverage.Std)
	}
}

// TestBlockOrderSort: the counting sort lays members out block after block
// in place's order, keeping their order within a block.
func TestBlockOrderSort(t *testing.T) {
	b := &bundle.Bundle{N: 7, Blocks: []int64{5, 9, 5, 2, 9, 2, 5}}
	o, err := newBlockOrder(b) // blocks 5, 9, 2 numbered 0, 1, 2
	if err != nil {
		t.Fatal(err)
	}
	members := []int{6, 1, 3, 0, 4, 2, 5}
	o.sort(members, []int{2, 0, 1}) // 9 first, then 2, then 5
	want := []int{1, 4, 3, 5, 6, 0, 2}
	for i := range want {
		if members[i] != want[i] {
			t.Fatalf("sorted %v, want %v", members, want)
		}
	}
	if none, err := newBlockOrder(&bundle.Bundle{N: 2}); none != nil || err != nil || o.blocks() != 3 {
		t.Errorf("a bundle without blocks has an order (%v), or %d blocks", err, o.blocks())
	}
	// Few members among many blocks: the comparison sort, the same order.
	many := &bundle.Bundle{N: 7, Blocks: []int64{5, 9, 5, 2, 9, 2, 5}}
	for i := range 200 {
		many.Blocks = append(many.Blocks, int64(1000+i))
	}
	many.N = len(many.Blocks)
	m, _ := newBlockOrder(many)
	few := []int{6, 1, 3, 0, 4, 2, 5}
	place := make([]int, m.n)
	for i := range place {
		place[i] = m.n - 1 - i
	}
	place[0], place[1], place[2] = 2, 0, 1
	m.sort(few, place)
	for i := range want {
		if few[i] != want[i] {
			t.Fatalf("sorted among many blocks %v, want %v", few, want)
		}
	}

}
