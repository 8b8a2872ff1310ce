package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"
	"github.com/ccsets/ccs/retrieve"
)

// TopK is a certified top-k baseline beside a set: the k̂ items of a
// collection nearest a test anchor, with k̂ calibrated on the set's own
// calibration units so that it keeps the set's guarantee. Each unit, an
// anchor a with its positive p, scores the rank p would take in the
// collection, 1 + #{x : dist(a, x) < dist(a, p)}; k̂ is the set's rank
// (⌈(n+1)(1−α)⌉-th smallest, or PAC's) among those n ranks. A test anchor's
// positive is covered when its rank is at most k̂: when it is no farther
// than the anchor's k̂-th nearest item. The collection is fixed and the
// units are the set's, so a test anchor drawn as the calibration anchors
// were is covered with probability ≥ 1−α (with a PAC set's δ, as the set)
// whatever the distance; the positive need not be one of the collection's
// items.
type TopK struct {
	// Distance ranks the items: "set", the set's own score φ(a − x), or
	// "l2", the Euclidean ‖a − x‖₂ (no learned geometry).
	Distance string `json:"distance"`
	// K is k̂, at most the collection's items; Whole says that k̂ exceeded
	// them (too few calibration units for α, or positives farther than
	// every item): the baseline is then the whole space, covering every
	// positive, and returns the whole collection.
	K     int  `json:"k"`
	Items int  `json:"items"` // the collection's
	Whole bool `json:"whole,omitempty"`
	// Rank and N: k̂ is the Rank-th smallest of the N calibration units'
	// ranks (the set's own Rank and N).
	Rank int `json:"rank"`
	N    int `json:"n"`
	// Anchors are the test anchors judged (the test bundle's first, as
	// Sizes'); Positives their positives; Coverage the share of those
	// positives among their anchor's k̂ nearest items, and SetCoverage the
	// share inside the set, of the same positives.
	Anchors     int     `json:"anchors"`
	Positives   int     `json:"positives"`
	Coverage    float64 `json:"coverage"`
	SetCoverage float64 `json:"set_coverage"`
}

// TopK distances (TopK.Distance).
const (
	DistanceSet = "set"
	DistanceL2  = "l2"
)

// ErrNoCalibrationSplit reports a set that does not record the
// calibration split it was calibrated on (its digest), so that no bundle
// can be shown to be that split.
var ErrNoCalibrationSplit = errors.New("eval: the set records no calibration split (calibrated before ccs recorded its digest, or not calibrated by ccs): recalibrate it with ccs calibrate to compare a top-k baseline on its calibration units")

// TopKBaseline calibrates the top-k baseline of s ranked by distance
// (DistanceSet or DistanceL2) on cal, which must be the split s was
// calibrated on (its digest, and as many units as s counts), and measures
// it on test's first n anchors (all where n ≤ 0 or n > test.N) in store.
// s needs one threshold and a guarantee (not pooled). Each calibration
// unit and each test anchor is one search of store (retrieve.Search: the
// kernels' exact scores), an in-memory Collection's on all cores. progress,
// where not nil, is told the searches done of all, one call at a time.
func TopKBaseline(ctx context.Context, s *conformal.Set, distance string, cal, test *bundle.Bundle, store retrieve.Store, n int, progress func(done, total int)) (TopK, error) {
	d := s.Geometry.Dim()
	var g geometry.Geometry
	switch distance {
	case DistanceSet:
		g = s.Geometry
	case DistanceL2:
		g = geometry.Ball{D: d}
	default:
		return TopK{}, fmt.Errorf("eval: top-k: distance %q: want %s or %s", distance, DistanceSet, DistanceL2)
	}
	if err := s.OneThreshold(); err != nil {
		return TopK{}, fmt.Errorf("eval: top-k: %w", err)
	}
	switch c := s.Calibration; {
	case !s.Calibrated():
		return TopK{}, conformal.ErrNotCalibrated
	case c.Mode == conformal.Pooled:
		return TopK{}, errors.New("eval: top-k: a pooled calibration has no guarantee to calibrate a baseline at: calibrate the set with -calibration one or pac")
	case c.Anchors == "":
		return TopK{}, ErrNoCalibrationSplit
	case cal.D != d:
		return TopK{}, fmt.Errorf("eval: top-k: the calibration bundle has dimension %d, the set %d", cal.D, d)
	case test.D != d:
		return TopK{}, fmt.Errorf("eval: top-k: the test bundle has dimension %d, the set %d", test.D, d)
	case store.Dim() != d:
		return TopK{}, fmt.Errorf("eval: top-k: the collection has dimension %d, the set %d", store.Dim(), d)
	case cal.Digest() != c.Anchors:
		return TopK{}, fmt.Errorf("eval: top-k: the calibration bundle is not the split the set was calibrated on (its anchors' digest %.12s…, the set's %.12s…): k̂ must come from the set's own calibration units", cal.Digest(), c.Anchors)
	}
	if err := cal.NeedPositives(); err != nil {
		return TopK{}, fmt.Errorf("eval: top-k: calibration bundle: %w", err)
	}
	if err := test.NeedPositives(); err != nil {
		return TopK{}, fmt.Errorf("eval: top-k: test bundle: %w", err)
	}
	units := conformal.UnitPairs(cal, s.Calibration.Mode, s.Calibration.Seed)
	if len(units) != s.Calibration.N {
		return TopK{}, fmt.Errorf("eval: top-k: the set was calibrated on %d units, the calibration bundle gives %d (a set of one class's anchors, ccs calibrate -class, is not compared)", s.Calibration.N, len(units))
	}
	items, err := store.Len(ctx)
	if err != nil {
		return TopK{}, err
	}
	if n <= 0 || n > test.N {
		n = test.N
	}
	if n == 0 {
		return TopK{}, errors.New("eval: top-k: the test bundle has no anchors")
	}
	// count is how many items score ≤ t around anchor by g: one count of
	// an in-memory collection (retrieve.CountBatch, no hits kept), one
	// search of another store.
	probe := *s
	probe.Geometry, probe.Classes = g, nil
	coll, _ := store.(*retrieve.Collection)
	count := func(anchor []float32, t float64) (int, error) {
		if t < 0 { // scores are ≥ 0
			return 0, nil
		}
		p := probe
		p.Threshold = t
		if coll != nil {
			counts, err := retrieve.CountBatch(ctx, &p, anchor, coll, nil)
			if err != nil {
				return 0, err
			}
			return counts[0], nil
		}
		_, inside, err := store.Search(ctx, &p, anchor, 1)
		return inside, err
	}
	// closer is 1 + how many items are nearer anchor than a point of score
	// v: the rank the point would take among them.
	closer := func(anchor []float32, v float64) (int, error) {
		nearer, err := count(anchor, math.Nextafter(v, math.Inf(-1)))
		return nearer + 1, err
	}
	workers := 1 // a database's searches one at a time
	if coll != nil {
		workers = 0
	}
	var (
		mu   sync.Mutex
		done int
	)
	total := len(units) + n
	step := func() { // one call of progress at a time, as SetSizes'
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		progress(done, total)
	}
	// Each calibration unit's rank among the items.
	ranks := make([]int, len(units))
	var firstErr atomic.Pointer[error]
	fail := func(err error) {
		firstErr.CompareAndSwap(nil, &err)
	}
	parallel.For(len(units), 1, workers, func(u, _, _ int) {
		if firstErr.Load() != nil || ctx.Err() != nil {
			return
		}
		i, j := units[u][0], units[u][1]
		diff := cal.PositiveDiff(nil, i, j)
		sc := g.Scores(nil, diff)[0]
		rank, err := closer(cal.Anchor(i), sc)
		if err != nil {
			fail(fmt.Errorf("eval: top-k: calibration unit %d (anchor %d): %w", u, i, err))
			return
		}
		ranks[u] = rank
		step()
	})
	if err := ctx.Err(); err != nil {
		return TopK{}, err
	}
	if p := firstErr.Load(); p != nil {
		return TopK{}, *p
	}
	r := TopK{Distance: distance, Items: items, Rank: s.Calibration.Rank, N: len(units), Anchors: n}
	k := math.MaxInt
	if r.Rank <= len(ranks) {
		sorted := slices.Sorted(slices.Values(ranks))
		k = sorted[r.Rank-1]
	}
	r.K, r.Whole = min(k, items), k > items
	// Each test anchor's positives against its k̂-th nearest item.
	K := test.K
	covered, inSet := make([]int, n), make([]int, n)
	parallel.For(n, 1, workers, func(i, _, _ int) {
		if firstErr.Load() != nil || ctx.Err() != nil {
			return
		}
		diffs := test.PositiveDiffs(nil, i)
		scores := g.Scores(nil, diffs)
		own := scores
		if distance != DistanceSet {
			own = s.Geometry.Scores(nil, diffs)
		}
		for _, v := range own {
			if v <= s.Threshold {
				inSet[i]++
			}
		}
		if r.Whole {
			covered[i] = K
			step()
			return
		}
		// A positive is covered when its rank is at most k̂, and a
		// nearer one's rank is no larger: the covered are the nearest
		// few, found in ⌈log₂(K+1)⌉ counts.
		slices.Sort(scores)
		lo, hi := 0, len(scores) // scores[:lo] covered, scores[hi:] not
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			rank, err := closer(test.Anchor(i), scores[m])
			if err != nil {
				fail(fmt.Errorf("eval: top-k: test anchor %d: %w", i, err))
				return
			}
			if rank <= r.K {
				lo = m + 1
			} else {
				hi = m
			}
		}
		covered[i] = lo
		step()
	})
	if err := ctx.Err(); err != nil {
		return TopK{}, err
	}
	if p := firstErr.Load(); p != nil {
		return TopK{}, *p
	}
	var c, in int
	for i := range n {
		c += covered[i]
		in += inSet[i]
	}
	r.Positives = n * K
	r.Coverage = float64(c) / float64(r.Positives)
	r.SetCoverage = float64(in) / float64(r.Positives)
	return r, nil
}
