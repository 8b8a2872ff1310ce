package experiment

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/sim"
)

// TestDividedBlockResplits checks the resplits column's warning of a
// block larger than a half of the test split (failed at 648e135: ccs
// coverage-check warned of such a block, ccs compare's resplits column,
// halving the same split by the same blocks, said nothing).
func TestDividedBlockResplits(t *testing.T) {
	blocks := func(sizes ...int) *bundle.Bundle {
		b := &bundle.Bundle{}
		for k, n := range sizes {
			for range n {
				b.Blocks = append(b.Blocks, int64(100+k))
			}
		}
		b.N = len(b.Blocks)
		return b
	}
	each := blocks(1, 1, 1, 1, 1, 1)
	for _, c := range []struct {
		name string
		b    *bundle.Bundle
		want string
	}{
		{"no blocks", &bundle.Bundle{N: 10}, ""},
		{"one block", blocks(10), ""},
		{"one an anchor", each, ""},
		{"halves", blocks(5, 5), ""},
		{"even, 11", blocks(6, 5), "a block holds 6 of its 11 anchors, more than a resplit's half (5)"},
		{"dominant", blocks(7, 1, 1, 1), "a block holds 7 of its 10 anchors, more than a resplit's half (5)"},
	} {
		got := DividedBlockResplits("test.npz", c.b)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	// In a comparison's table, beside the resplits column.
	r := rand.New(rand.NewPCG(7, 51))
	const d = 3
	test := sim.Gauss(r, 120, 2, d)
	test.Blocks = make([]int64, test.N)
	for i := range test.Blocks {
		test.Blocks[i] = int64(min(i, 50)) // anchors 50… one block of 70, the rest one each
	}
	data := CompareData{Name: "g", Cal: sim.Gauss(r, 200, 2, d), Test: test}
	cfg := CompareConfig{Config: Config{Seeds: 1, Alpha: 0.1}, Resplits: 5}
	tab, err := Compare(context.Background(), data, cfg, ForCompare(Baselines())[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(tab.Warnings, "\n"), "the test split: a block holds 70 of its 120 anchors") {
		t.Errorf("table warnings %q: want the test split's block of 70", tab.Warnings)
	}
}
