package eval

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/retrieve"
)

// Sizes is how many items of a collection a set holds around test
// anchors: what a retrieval around each returns before any limit. Coverage
// and exclusion are measured on an anchor's sampled positives and
// negatives; the size says what 1−α of the positives costs on a corpus,
// and where positives are many (a category of thousands of items) it can
// be a large share of it.
type Sizes struct {
	Items   int `json:"items"`   // the collection's
	Anchors int `json:"anchors"` // the test anchors measured: the bundle's first
	// Mean is the sets' mean number of items; Median, P10 and P90 their
	// nearest-rank percentiles (the ⌈q·m⌉-th smallest of m: of an even
	// count the lower of the middle two, where NumPy's median averages
	// them and its percentiles interpolate); Max the largest; Empty the
	// anchors whose set holds none.
	Mean   float64 `json:"mean"`
	Median int     `json:"median"`
	P10    int     `json:"p10"`
	P90    int     `json:"p90"`
	Max    int     `json:"max"`
	Empty  int     `json:"empty"`
}

// DefaultSizeAnchors is how many test anchors the sets' sizes are
// counted around when a caller does not say (ccs evaluate and ccs compare
// -size-anchors, the Python size_anchors).
const DefaultSizeAnchors = 1000

// SetSizes searches store around each of the first n anchors of test (all
// of them when n ≤ 0 or n > test.N) and summarizes how many items each set
// holds. An anchor's own row counts where the store holds it. A
// class-conditional set's set around an anchor is its class's threshold's
// (test.Labels; a test bundle without labels is refused with
// conformal.ErrNoLabel, and a class the set has no threshold for names the
// anchor). It stops with ctx's error when ctx is
// done; progress, where not nil, is told how far it is: anchors done of
// all, or for an in-memory Collection, counted for every anchor in one
// pass (retrieve.CountBatch, or CountWithin at each anchor's class's
// threshold), its chunks done of all, in any order but
// one call at a time. A store that can be transformed for s (a Collection,
// for a single-norm, an ellipsoid or a set behind a head:
// retrieve.Transformable) is transformed first when n is
// retrieve.TransformMin or more, as ccs retrieve's batches are: O(d)
// an item instead of O(d²), and the items surely inside are counted
// without their exact score; the same counts (where the transform is
// refused, over retrieve.BatchTransformBytes, it is scanned plainly).
func SetSizes(ctx context.Context, s *conformal.Set, test *bundle.Bundle, store retrieve.Store, n int, progress func(done, total int)) (Sizes, error) {
	sizes, items, err := AnchorSizes(ctx, s, test, store, n, progress)
	if err != nil {
		return Sizes{}, err
	}
	return summarizeSizes(sizes, items), nil
}

// AnchorSizes is SetSizes before it summarizes: the number of items of
// store inside the set around each of test's first n anchors, and the
// collection's items.
func AnchorSizes(ctx context.Context, s *conformal.Set, test *bundle.Bundle, store retrieve.Store, n int, progress func(done, total int)) (sizes []int, items int, err error) {
	if n <= 0 || n > test.N {
		n = test.N
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("eval: set sizes: the test bundle has no anchors")
	}
	if items, err = store.Len(ctx); err != nil {
		return nil, 0, err
	}
	// A class-conditional set: each anchor's threshold its class's
	// (retrieve.CountWithin in one pass; ForClass's set a search). The
	// transform is s's own, kept by the collection for s's geometry,
	// which ForClass's sets share: not one a call, nor one a class.
	var thresholds []float64
	var classes map[int64]*conformal.Set
	if s.ClassConditional() {
		if thresholds, classes, err = classThresholds(s, test, n); err != nil {
			return nil, 0, err
		}
	}
	if t, ok := store.(retrieve.Transformer); ok && n >= retrieve.TransformMin(s.Geometry) && retrieve.Transformable(s.Geometry) {
		_ = t.Transform(s, retrieve.BatchTransformBytes)
	}
	d := test.D
	if c, ok := store.(*retrieve.Collection); ok {
		// In one pass over the collection, each chunk scored for every
		// anchor while it is in cache: the same totals. CountBatch tells
		// its progress from its workers: one at a time here.
		var mu sync.Mutex
		serial := progress
		if progress != nil {
			serial = func(done, total int) {
				mu.Lock()
				defer mu.Unlock()
				progress(done, total)
			}
		}
		var totals []int
		if thresholds != nil {
			totals, err = retrieve.CountWithin(ctx, s, test.Anchors[:n*d], thresholds, c, serial)
		} else {
			totals, err = retrieve.CountBatch(ctx, s, test.Anchors[:n*d], c, serial)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("eval: set sizes: %w", err)
		}
		return totals, items, nil
	}
	sizes = make([]int, n)
	for i := range n {
		one := s
		if classes != nil {
			one = classes[test.Labels[i]]
		}
		_, total, err := store.Search(ctx, one, test.Anchors[i*d:(i+1)*d], 1)
		if err != nil {
			return nil, 0, fmt.Errorf("eval: set sizes: test anchor %d: %w", i, err)
		}
		sizes[i] = total
		if progress != nil {
			progress(i+1, n)
		}
	}
	return sizes, items, nil
}

// classThresholds is the threshold of a class-conditional set s around
// each of test's first n anchors, its class's (test.Labels), and the set
// of each of their classes (conformal.Set.ForClass).
func classThresholds(s *conformal.Set, test *bundle.Bundle, n int) ([]float64, map[int64]*conformal.Set, error) {
	if test.Labels == nil {
		return nil, nil, fmt.Errorf("eval: set sizes: %w: the test bundle has no labels", conformal.ErrNoLabel)
	}
	if len(test.Labels) < n {
		return nil, nil, fmt.Errorf("eval: set sizes: %d labels for %d test anchors", len(test.Labels), n)
	}
	thresholds := make([]float64, n)
	classes := map[int64]*conformal.Set{}
	for i, l := range test.Labels[:n] {
		c, ok := classes[l]
		if !ok {
			var err error
			if c, err = s.ForClass(l); err != nil {
				return nil, nil, fmt.Errorf("eval: set sizes: test anchor %d: %w", i, err)
			}
			classes[l] = c
		}
		thresholds[i] = c.Threshold
	}
	return thresholds, classes, nil
}

// ClassSizes is Sizes of one class's anchors: how many items the set
// holds around the test anchors of that class among those measured.
type ClassSizes struct {
	Label int64  `json:"label"`
	Name  string `json:"name,omitempty"` // the class's, for string labels
	Sizes
}

// SizesByClass summarizes sizes (AnchorSizes': anchor i's sizes[i]) class
// by class of labels (anchor i's labels[i]), in ascending label order, of
// a collection of items. A class with no anchor among those measured has
// no row.
func SizesByClass(sizes []int, labels []int64, items int) ([]ClassSizes, error) {
	if len(labels) < len(sizes) {
		return nil, fmt.Errorf("eval: set sizes by class: %d labels for %d anchors", len(labels), len(sizes))
	}
	by := map[int64][]int{}
	for i, v := range sizes {
		by[labels[i]] = append(by[labels[i]], v)
	}
	out := make([]ClassSizes, 0, len(by))
	for _, l := range slices.Sorted(maps.Keys(by)) {
		out = append(out, ClassSizes{Label: l, Sizes: summarizeSizes(by[l], items)})
	}
	return out, nil
}

// SummarizeSizes is Sizes of sizes (AnchorSizes'), the sets' sizes in a
// collection of items; sizes must not be empty.
func SummarizeSizes(sizes []int, items int) Sizes { return summarizeSizes(sizes, items) }

// summarizeSizes is Sizes of the sets' sizes in a collection of items.
func summarizeSizes(sizes []int, items int) Sizes {
	sorted := slices.Sorted(slices.Values(sizes))
	rank := func(q float64) int { // nearest rank: the ⌈q·m⌉-th smallest
		return sorted[max(0, int(math.Ceil(q*float64(len(sorted))))-1)]
	}
	z := Sizes{Items: items, Anchors: len(sizes), Median: rank(0.5), P10: rank(0.1), P90: rank(0.9), Max: sorted[len(sorted)-1]}
	sum := 0
	for _, v := range sizes {
		sum += v
		if v == 0 {
			z.Empty++
		}
	}
	z.Mean = float64(sum) / float64(len(sizes))
	return z
}
