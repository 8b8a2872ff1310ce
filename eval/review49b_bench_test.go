package eval

import (
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// BenchmarkResplitsByClassBlocks times class-conditional resplits of a
// bundle of many classes and many blocks (10 000 images, 1 000 species,
// 2 000 sites), by block and by row: a reviewer found the halving by block
// 55–71 times the row-by-row one's, each class's sort sweeping every block
// of the bundle; a class's few members are sorted by comparison now.
func BenchmarkResplitsByClassBlocks(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n, k, d, classes, blocks, resplits = 10000, 1, 2, 1000, 2000, 100
	mk := func() *bundle.Bundle {
		b := classBundle(rng, n, k, d)
		for i := range n {
			b.Labels[i] = int64(i % classes)
		}
		return b
	}
	cal, test := mk(), mk()
	test.Blocks = make([]int64, n)
	for i := range n {
		test.Blocks[i] = int64(rng.IntN(blocks))
	}
	s, err := conformal.Calibrate(geometry.Ball{D: d}, cal, 0.1, conformal.Options{Mode: conformal.Class})
	if err != nil {
		b.Fatal(err)
	}
	rows := *test
	rows.Blocks = nil
	for _, c := range []struct {
		name string
		b    *bundle.Bundle
	}{{"row", &rows}, {"block", test}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := ResplitsByClass(s, c.b, resplits, 0.5, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
