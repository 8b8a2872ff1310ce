package eval

import (
	"context"
	"fmt"
	"math"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// Scored is a bundle's exact scores under a set, every positive's and
// negative's, computed once on all cores (Score). A comparison measures
// one test bundle several ways — the result and its recalibrated curve,
// class by class, over resplits — and each of Scored's methods counts from
// the stored scores with the numbers of the function it is named after,
// instead of scoring the bundle again: they were three passes of float64
// scores, a third of ccs compare's CPU on 60 000 embeddings of d = 128.
// It holds N·(K + KNeg) float64s.
type Scored struct {
	set      *conformal.Set
	b        *bundle.Bundle
	pos, neg []float64 // anchor by anchor: N·K and N·KNeg
}

// Score scores b under s (a calibrated set of b's dimension).
func Score(s *conformal.Set, b *bundle.Bundle) (*Scored, error) {
	return score(context.Background(), s, b)
}

// score is Score, stopping with ctx's error when ctx is done (looked at
// every checkEvery anchors).
func score(ctx context.Context, s *conformal.Set, b *bundle.Bundle) (*Scored, error) {
	if err := given(s, b); err != nil {
		return nil, err
	}
	if !s.Calibrated() {
		return nil, conformal.ErrNotCalibrated
	}
	if err := b.NeedPositives(); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	if s.Geometry.Dim() != b.D {
		return nil, dimError(s.Geometry.Dim(), b)
	}
	sc := &Scored{set: s, b: b, pos: make([]float64, b.N*b.K), neg: make([]float64, b.N*b.KNeg)}
	parallel.For(b.N, 64, 0, func(_, lo, hi int) {
		pd := make([]float32, b.K*b.D)
		nd := make([]float32, b.KNeg*b.D)
		for i := lo; i < hi; i++ {
			if stop(ctx, i, lo) {
				return
			}
			s.Geometry.Scores(sc.pos[i*b.K:(i+1)*b.K], b.PositiveDiffs(pd, i))
			if b.HasNegatives() {
				s.Geometry.Scores(sc.neg[i*b.KNeg:(i+1)*b.KNeg], b.NegativeDiffs(nd, i))
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return sc, nil
}

// WithClasses is Evaluate and ByClass (test's labels needed): s's result
// and each class's, the numbers of the two calls. For a class-conditional
// set that is ByClass alone; for a geometry with a fast score, the two
// calls, each a pass of fast scores; otherwise test is scored once,
// exactly (Score), for both.
func WithClasses(s *conformal.Set, test *bundle.Bundle) (Result, []ClassResult, error) {
	return WithClassesContext(context.Background(), s, test)
}

// WithClassesContext is WithClasses, stopping with ctx's error when ctx
// is done, as EvaluateContext does; the numbers are WithClasses'.
func WithClassesContext(ctx context.Context, s *conformal.Set, test *bundle.Bundle) (Result, []ClassResult, error) {
	if err := given(s, test); err != nil {
		return Result{}, nil, err
	}
	if test.Labels == nil {
		return Result{}, nil, fmt.Errorf("%w: the test bundle has no labels", conformal.ErrNoLabel)
	}
	if s.ClassConditional() { // Evaluate is ByClass's whole result
		return byClass(ctx, s, test, nil)
	}
	if decisiveAt(s.Geometry) != nil {
		r, err := EvaluateContext(ctx, s, test)
		if err != nil {
			return Result{}, nil, err
		}
		_, classes, err := byClass(ctx, s, test, nil)
		return r, classes, err
	}
	sc, err := score(ctx, s, test)
	if err != nil {
		return Result{}, nil, err
	}
	r, err := sc.Evaluate()
	if err != nil {
		return Result{}, nil, err
	}
	_, classes, err := sc.ByClass()
	return r, classes, err
}

// Evaluate is Evaluate(s, b).
func (sc *Scored) Evaluate() (Result, error) {
	s := sc.set
	if s.ClassConditional() {
		r, _, err := byClass(context.Background(), s, sc.b, sc)
		return r, err
	}
	r, err := evaluateSet(context.Background(), s, []float64{s.Threshold}, sc.b, sc)
	if err != nil {
		return Result{}, err
	}
	return r[0], nil
}

// WithCurve is WithCurve(s, cal, b, alphas).
func (sc *Scored) WithCurve(cal *bundle.Bundle, alphas []float64) (Result, []Point, error) {
	return recalibrated(context.Background(), sc.set, cal, sc.b, alphas, true, sc)
}

// ByClass is ByClass(s, b).
func (sc *Scored) ByClass() (Result, []ClassResult, error) {
	return byClass(context.Background(), sc.set, sc.b, sc)
}

// Resplits is Resplits(s, b, resplits, calFraction, seed).
func (sc *Scored) Resplits(resplits int, calFraction float64, seed uint64) (ResplitResult, error) {
	return resplits1(context.Background(), sc.set, sc.b, resplits, calFraction, seed, nil, sc)
}

// anchorScores gives anchor i's positives' and negatives' scores (neg
// empty without negatives); each goroutine has its own (its scratch).
type anchorScores func(i int) (pos, neg []float64)

// stored is an anchorScores of the stored scores.
func (sc *Scored) stored() anchorScores {
	return func(i int) (pos, neg []float64) {
		b := sc.b
		return sc.pos[i*b.K : (i+1)*b.K], sc.neg[i*b.KNeg : (i+1)*b.KNeg]
	}
}

// streamed makes, for each goroutine, an anchorScores that scores the
// anchor's differences of b with score as they are asked for.
func streamed(b *bundle.Bundle, score func(dst []float64, diffs []float32) []float64) func() anchorScores {
	return func() anchorScores {
		pd, nd := make([]float32, b.K*b.D), make([]float32, b.KNeg*b.D)
		ps, ns := make([]float64, b.K), make([]float64, b.KNeg)
		return func(i int) (pos, neg []float64) {
			pos = score(ps, b.PositiveDiffs(pd, i))
			if b.HasNegatives() {
				neg = score(ns, b.NegativeDiffs(nd, i))
			}
			return pos, neg
		}
	}
}

// imaged is, for a single-norm geometry (geometry.Norm, p ≥ 1) over a
// bundle whose positives and negatives are rows of pools (ccs bundle's
// from labels: the anchors), a maker of anchorScores that score each
// difference from its rows' images under M (geometry.Images), each row
// transformed once, and by Scores where the image score lies within its
// bound of a threshold of qs (or is not finite): every decision at every
// threshold is Scores'. nil where that is not so, or where the rows are
// not fewer than half the differences.
func imaged(g geometry.Geometry, b *bundle.Bundle, qs []float64) func() anchorScores {
	n, ok := g.(*geometry.Norm)
	if !ok || b.PositiveIndex == nil || b.HasNegatives() && b.NegativeIndex == nil {
		return nil
	}
	posPool, negPool := b.Pools()
	d := b.D
	rows := b.N
	if b.PositivePool != nil {
		rows += len(posPool) / d
	}
	if b.Pool != nil && b.HasNegatives() {
		rows += len(negPool) / d
	}
	if 2*rows > b.N*(b.K+b.KNeg) {
		return nil
	}
	im := geometry.NewImages(n)
	if im == nil {
		return nil
	}
	ya := im.Transform(b.Anchors)
	yp, yn := ya, ya
	if b.PositivePool != nil {
		yp = im.Transform(posPool)
	}
	if b.Pool != nil && b.HasNegatives() {
		yn = im.Transform(negPool)
	}
	return func() anchorScores {
		y, buf := make([]float64, d), make([]float64, 4*d)
		diff, one := make([]float32, d), make([]float64, 1)
		ps, ns := make([]float64, b.K), make([]float64, b.KNeg)
		score := func(dst []float64, i int, idx []int64, pool []float32, ypool []float64) {
			a, yai := b.Anchor(i), ya[i*d:(i+1)*d]
			for j, r := range idx {
				z := pool[int(r)*d : (int(r)+1)*d]
				s, tol := im.Score(y, yai, ypool[int(r)*d:(int(r)+1)*d], a, z, buf)
				undecided := math.IsNaN(s) || math.IsInf(s, 0)
				for _, q := range qs {
					undecided = undecided || math.Abs(s-q) <= tol
				}
				if undecided { // Scores', on the difference as the bundle makes it
					kernel.Sub(diff, a, z)
					s = g.Scores(one, diff)[0]
				}
				dst[j] = s
			}
		}
		return func(i int) (pos, neg []float64) {
			score(ps, i, b.PositiveIndex[i*b.K:(i+1)*b.K], posPool, yp)
			if b.HasNegatives() {
				score(ns, i, b.NegativeIndex[i*b.KNeg:(i+1)*b.KNeg], negPool, yn)
				neg = ns
			}
			return ps, neg
		}
	}
}
