package eval

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/ccsets/ccs/bundle"
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

// cancelling is a geometry that counts its Scores calls and cancels a
// context at the first: a Ctrl-C while a judgement scores.
type cancelling struct {
	geometry.Geometry
	calls  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelling) Scores(dst []float64, diffs []float32) []float64 {
	if c.calls.Add(1) == 1 {
		c.cancel()
	}
	return c.Geometry.Scores(dst, diffs)
}

// review50Bundle is n labelled anchors of d = 4, each with 2 positives
// and 2 negatives.
func review50Bundle(n int) *bundle.Bundle {
	rng := rand.New(rand.NewPCG(50, 1))
	b := &bundle.Bundle{N: n, K: 2, KNeg: 2, D: 4, Labels: make([]int64, n)}
	fill := func(m int) []float32 {
		x := make([]float32, m)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	b.Anchors, b.Positives, b.Negatives = fill(n*4), fill(n*2*4), fill(n*2*4)
	for i := range b.Labels {
		b.Labels[i] = int64(i % 3)
	}
	return b
}

// TestReview50JudgementsStopOnCancel checks that EvaluateContext,
// WithClassesContext, WithLabelsContext's scores and the resplits
// (ResplitsContext, ResplitsByClassContext) stop within a few chunks of
// anchors once their context is cancelled, with its error (failed at
// 1c23c4e: Evaluate, WithClasses and Resplits took no context, and
// scored every anchor after a Ctrl-C: ccs evaluate went on for 4.5 s,
// ccs coverage-check for 6.6 s, and both wrote their results).
func TestReview50JudgementsStopOnCancel(t *testing.T) {
	const n = 6000
	b := review50Bundle(n)
	// At most checkEvery anchors a goroutine after the cancel, two calls
	// (positives, negatives) an anchor, and a chunk's start each.
	most := int64(2 * (checkEvery + 1) * runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		name string
		run  func(ctx context.Context, b *bundle.Bundle, g *cancelling) error
	}{
		{"EvaluateContext", func(ctx context.Context, b *bundle.Bundle, g *cancelling) error {
			s := mustCalibrate(t, g.Geometry, b)
			s.Geometry = g
			_, err := EvaluateContext(ctx, s, b)
			return err
		}},
		{"WithClassesContext", func(ctx context.Context, b *bundle.Bundle, g *cancelling) error {
			s := mustCalibrate(t, g.Geometry, b)
			s.Geometry = g
			_, _, err := WithClassesContext(ctx, s, b)
			return err
		}},
		{"ResplitsContext", func(ctx context.Context, b *bundle.Bundle, g *cancelling) error {
			s := mustCalibrate(t, g.Geometry, b)
			s.Geometry = g
			_, err := ResplitsContext(ctx, s, b, 100, 0.5, 1)
			return err
		}},
		{"ResplitsByClassContext", func(ctx context.Context, b *bundle.Bundle, g *cancelling) error {
			s := mustCalibrate(t, g.Geometry, b)
			s.Geometry = g
			_, _, err := ResplitsByClassContext(ctx, s, b, 100, 0.5, 1)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g := &cancelling{Geometry: geometry.UnitGenBall(4, 1.5), cancel: cancel}
			err := c.run(ctx, b, g)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s cancelled while scoring: err = %v, want context.Canceled", c.name, err)
			}
			if calls := g.calls.Load(); calls > most {
				t.Errorf("%s scored %d of the %d anchors' positives and negatives (a Scores call each) after its context was cancelled at the first, want at most %d", c.name, calls, 2*n, most)
			}
		})
	}
	// The resplits themselves, b scored already: each resplit looks.
	s := mustCalibrate(t, geometry.UnitGenBall(4, 1.5), b)
	sc, err := Score(s, b)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var visits atomic.Int64
	_, err = resplits1(ctx, s, b, 100000, 0.5, 1, func(int, []int, []float64, float64) {
		if visits.Add(1) == 1 {
			cancel()
		}
	}, sc)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("resplits cancelled at the first: err = %v, want context.Canceled", err)
	}
	if v, most := visits.Load(), int64(4*runtime.GOMAXPROCS(0)); v > most {
		t.Errorf("%d of 100 000 resplits run after the context was cancelled at the first, want at most %d", v, most)
	}
}
