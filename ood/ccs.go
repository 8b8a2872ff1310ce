package ood

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/parallel"
)

// The CCS OOD score of a sample (paper, eq. ood-score) is −s_n/q̂, where s_n
// is the mean score φ(Z − z_neg) of the sample's negatives under the fitted
// set and q̂ its calibrated threshold. In distribution the set was trained
// to exclude negatives, so s_n is large and the score low; out of
// distribution the negatives crowd inside the ID threshold and the score
// rises. The two functions differ only in where the negatives come from.

// CCSBatch is the paper's protocol: each anchor of b is scored with its own
// negatives, which come from the evaluated sample itself (negative_index
// into b's anchors, as ccs embed draws them; a file of anchors alone, as
// ccs bundle's ood.npz, gets BatchNegatives of them). Caution
// (docs/design.md §6): with batch negatives the score mostly measures how
// spread out the evaluated sample is, so it compares one sample with
// another rather than one input with the training distribution.
func CCSBatch(s *conformal.Set, b *bundle.Bundle) ([]float64, error) {
	return ccsBatch(context.Background(), s, b, nil)
}

// ccsBatch is CCSBatch, stopping with ctx's error when ctx is done and
// telling progress (when not nil) the anchors scored, a chunk at a time
// (tell).
func ccsBatch(ctx context.Context, s *conformal.Set, b *bundle.Bundle, progress func(done, total int)) ([]float64, error) {
	if err := checkSet(s, b.D); errors.Is(err, conformal.ErrDimension) {
		return nil, conformal.DimErrorf("bundle", []int{b.N, b.D}, s.Geometry.Dim(), "ood: the set has dimension %d, the embeddings %d (the bundle's)", s.Geometry.Dim(), b.D)
	} else if err != nil {
		return nil, err
	}
	if err := checkRows(s, "anchor", "anchors", b.Anchors); err != nil { // as Nearest.Scores, ccs ood's CheckBundleNorms
		return nil, err
	}
	if !b.HasNegatives() {
		if b.N < 2 {
			return nil, errors.New("ood: one input: the batch score draws its negatives among the other inputs of the sample (use the reference mode)")
		}
		b = withBatchNegatives(b)
	}
	q := s.Threshold
	out := make([]float64, b.N)
	told := tell(progress, b.N)
	parallel.For(b.N, 64, 0, func(_, lo, hi int) {
		if ctx.Err() != nil {
			return
		}
		nd := make([]float32, b.KNeg*b.D)
		sc := make([]float64, b.KNeg)
		for i := lo; i < hi; i++ {
			out[i] = -mean(s.Geometry.Scores(sc, b.NegativeDiffs(nd, i))) / q
		}
		told(hi - lo)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// tell is a chunk's report to progress (nil: none) of total inputs: each
// call adds its chunk's inputs to the count and tells progress, one
// goroutine at a time (ood.Steps' rule), so that the counts it hears
// only grow.
func tell(progress func(done, total int), total int) func(n int) {
	if progress == nil {
		return func(int) {}
	}
	var mu sync.Mutex
	done := 0
	return func(n int) {
		mu.Lock()
		defer mu.Unlock()
		done += n
		progress(done, total)
	}
}

// BatchNegatives is how many negatives CCSBatch draws for each anchor of a
// sample stored without any: the paper's 20, or all the other anchors of
// a smaller sample.
const BatchNegatives = 20

// withBatchNegatives is b with BatchNegatives negatives per anchor drawn
// among its other anchors, without replacement, by a PCG of a fixed seed:
// the same negatives on every run.
func withBatchNegatives(b *bundle.Bundle) *bundle.Bundle {
	k := min(BatchNegatives, b.N-1)
	rng := rand.New(rand.NewPCG(0, 0x6f6f646261746368)) // "oodbatch"
	idx := make([]int64, 0, b.N*k)
	for i := range b.N {
		row := idx[len(idx):len(idx)]
		for len(row) < k { // k ≤ 20 distinct draws among the N−1 others
			j := int64(rng.IntN(b.N - 1))
			if j >= int64(i) {
				j++
			}
			if !slices.Contains(row, j) {
				row = append(row, j)
			}
		}
		idx = idx[:len(idx)+k]
	}
	c := *b
	c.KNeg, c.Negatives, c.NegativeIndex, c.Pool = k, nil, idx, nil
	return &c
}

// CCSReference is the per-sample mode: each query row (n×d, row-major) is
// scored with the set's reference pool of in-distribution embeddings as its
// negatives, so a query's score depends on nothing but the query.
func CCSReference(s *conformal.Set, queries []float32) ([]float64, error) {
	return ccsReference(context.Background(), s, queries, nil)
}

// ccsReference is CCSReference, stopping with ctx's error when ctx is
// done and telling progress (when not nil) the queries scored, a chunk of
// 16 at a time: each query is scored against the whole pool (7 451 inputs
// against 500 rows at d = 128 took 15 s on 2 shared cores, silent and
// deaf to Ctrl-C before it looked).
func ccsReference(ctx context.Context, s *conformal.Set, queries []float32, progress func(done, total int)) ([]float64, error) {
	if s.Reference == nil {
		return nil, errors.New("ood: the set has no reference pool (ccs calibrate -reference N; reference= in Python; conformal.NewReference in Go)")
	}
	d := s.Geometry.Dim()
	if err := checkSet(s, d); err != nil {
		return nil, err
	}
	if err := checkRows(s, "query", "queries", queries); err != nil {
		return nil, err
	}
	n, ref, m := len(queries)/d, s.Reference.Rows, s.Reference.N
	q := s.Threshold
	out := make([]float64, n)
	told := tell(progress, n)
	parallel.For(n, 16, 0, func(_, lo, hi int) {
		if ctx.Err() != nil {
			return
		}
		diffs := make([]float32, m*d)
		sc := make([]float64, m)
		for i := lo; i < hi; i++ {
			z := queries[i*d : (i+1)*d]
			for r := range m {
				row := diffs[r*d : (r+1)*d]
				for j, v := range ref[r*d : (r+1)*d] {
					row[j] = z[j] - v
				}
			}
			out[i] = -mean(s.Geometry.Scores(sc, diffs)) / q
		}
		told(hi - lo)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ood: query %d has CCS score %v (a non-finite coordinate?)", i, v)
		}
	}
	return out, nil
}

// ErrClassConditional is the refusal of a class-conditional set for an
// OOD test: the OOD score divides an input's score by the set's one
// threshold. Errors wrapping it say how to calibrate one in the caller's
// terms (ccs calibrate's -calibration one, Python's calibration="one").
var ErrClassConditional = errors.New("ood: the OOD score divides an input's score by the set's one threshold, and a class-conditional set has one per class, none without the input's class")

func checkSet(s *conformal.Set, d int) error {
	if err := s.OneThreshold(); err != nil { // the score divides by the one threshold
		return fmt.Errorf("%w (%w): a class-conditional set and an OOD test are two sets: calibrate a second set with -calibration one (or pac) on the same split for the OOD test", ErrClassConditional, err)
	}
	switch {
	case !s.Calibrated():
		return conformal.ErrNotCalibrated
	case s.Geometry.Dim() != d:
		return conformal.DimensionErrorf("ood: the set has dimension %d, the embeddings %d", s.Geometry.Dim(), d)
	case !(s.Threshold > 0) || math.IsInf(s.Threshold, 1):
		return fmt.Errorf("ood: threshold %v: %s", s.Threshold, conformal.OODThresholdRule)
	}
	return nil
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
