package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
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

// BaselineDistance is the distance a baseline's name ranks the
// collection by — "topk" the set's own (DistanceSet), "topk-l2" the
// Euclidean (DistanceL2) — as ccs evaluate -baseline and Python's
// baseline= name them; ok is false for another name.
func BaselineDistance(name string) (distance string, ok bool) {
	switch name {
	case "topk":
		return DistanceSet, true
	case "topk-l2":
		return DistanceL2, true
	}
	return "", false
}

// ErrNoCalibrationSplit reports a set that does not record the
// calibration split it was calibrated on (its digest), so that no bundle
// can be shown to be that split.
var ErrNoCalibrationSplit = errors.New("eval: the set records no calibration split (calibrated before ccs recorded its digest, or not calibrated by ccs): recalibrate it with ccs calibrate to compare a top-k baseline on its calibration units")

// TopKBaseline calibrates the top-k baseline of s ranked by distance
// (DistanceSet or DistanceL2) on cal, which must be the split s was
// calibrated on (its digest, and as many units as s counts), and measures
// it on test's first n anchors (all where n ≤ 0 or n > test.N) in store:
// TopKBaselines of the one distance.
func TopKBaseline(ctx context.Context, s *conformal.Set, distance string, cal, test *bundle.Bundle, store retrieve.Store, n int, progress func(done, total int)) (TopK, error) {
	r, err := TopKBaselines(ctx, s, []string{distance}, cal, test, store, n, progress)
	if err != nil {
		return TopK{}, err
	}
	return r[0], nil
}

// TopKBaselines calibrates the top-k baselines of s ranked by each of
// distances (DistanceSet or DistanceL2, in that order in the result) on
// cal, which must be the split s was calibrated on (its digest, and as
// many units as s counts), and measures them on test's first n anchors
// (all where n ≤ 0 or n > test.N) in store. What the distances share is
// done once: the checks of cal (its digest) and test, the calibration
// units, and the set's own coverage of the test positives (SetCoverage).
// s needs one threshold and a guarantee (not pooled). An in-memory
// Collection counts every calibration unit's rank in one pass
// (retrieve.CountWithin, on its transform for s where s is a single-norm
// or an ellipsoid, as SetSizes'), and the test anchors' in ⌈log₂(K+1)⌉
// passes; another store takes a search a rank. progress, where not nil, is
// told the ranks counted of about all (every distance's), after each pass.
func TopKBaselines(ctx context.Context, s *conformal.Set, distances []string, cal, test *bundle.Bundle, store retrieve.Store, n int, progress func(done, total int)) ([]TopK, error) {
	d := s.Geometry.Dim()
	if len(distances) == 0 {
		return nil, errors.New("eval: top-k: no distance")
	}
	for _, distance := range distances {
		if distance != DistanceSet && distance != DistanceL2 {
			return nil, fmt.Errorf("eval: top-k: distance %q: want %s or %s", distance, DistanceSet, DistanceL2)
		}
	}
	if err := s.OneThreshold(); err != nil {
		return nil, fmt.Errorf("eval: top-k: %w", err)
	}
	switch c := s.Calibration; {
	case !s.Calibrated():
		return nil, conformal.ErrNotCalibrated
	case c.Mode == conformal.Pooled:
		return nil, errors.New("eval: top-k: a pooled calibration has no guarantee to calibrate a baseline at: calibrate the set with -calibration one or pac")
	case c.Anchors == "":
		return nil, ErrNoCalibrationSplit
	case cal.D != d:
		return nil, fmt.Errorf("eval: top-k: the calibration bundle has dimension %d, the set %d", cal.D, d)
	case test.D != d:
		return nil, fmt.Errorf("eval: top-k: the test bundle has dimension %d, the set %d", test.D, d)
	case store.Dim() != d:
		return nil, fmt.Errorf("eval: top-k: the collection has dimension %d, the set %d", store.Dim(), d)
	}
	if digest := cal.Digest(); digest != s.Calibration.Anchors {
		return nil, fmt.Errorf("eval: top-k: the calibration bundle is not the split the set was calibrated on (its anchors' digest %.12s…, the set's %.12s…): k̂ must come from the set's own calibration units", digest, s.Calibration.Anchors)
	}
	if err := cal.NeedPositives(); err != nil {
		return nil, fmt.Errorf("eval: top-k: calibration bundle: %w", err)
	}
	if err := cal.Validate(); err != nil { // a bundle built by hand, as conformal.Scores checks it
		return nil, fmt.Errorf("eval: top-k: calibration bundle: %w", err)
	}
	if err := test.NeedPositives(); err != nil {
		return nil, fmt.Errorf("eval: top-k: test bundle: %w", err)
	}
	units := conformal.UnitPairs(cal, s.Calibration.Mode, s.Calibration.Seed)
	if len(units) != s.Calibration.N {
		return nil, fmt.Errorf("eval: top-k: the set was calibrated on %d units, the calibration bundle gives %d (a set of one class's anchors, ccs calibrate -class, is not compared)", s.Calibration.N, len(units))
	}
	items, err := store.Len(ctx)
	if err != nil {
		return nil, err
	}
	if n <= 0 || n > test.N {
		n = test.N
	}
	if n == 0 {
		return nil, errors.New("eval: top-k: the test bundle has no anchors")
	}
	// The set's own scores of each test anchor's positives, and its
	// coverage of them, the same beside every distance.
	own := make([][]float64, n)
	inSet := 0
	for i := range n {
		own[i] = s.Geometry.Scores(nil, test.PositiveDiffs(nil, i))
		for _, v := range own[i] {
			if v <= s.Threshold {
				inSet++
			}
		}
	}
	unitAnchors := make([]float32, len(units)*d)
	for u, p := range units {
		copy(unitAnchors[u*d:(u+1)*d], cal.Anchor(p[0]))
	}
	// The units' differences, built once, scored under each distance's
	// geometry.
	unitDiffs := conformal.UnitDiffs(cal, units)
	rounds := bits.Len(uint(test.K)) // the test anchors' binary searches
	each := len(units) + n*rounds    // ranks a distance counts
	b := topKRun{s: s, test: test, store: store, n: n, items: items, unitAnchors: unitAnchors,
		unitDiffs: unitDiffs, own: own, each: each, total: len(distances) * each, progress: progress}
	out := make([]TopK, len(distances))
	for j, distance := range distances {
		if out[j], err = b.measure(ctx, distance); err != nil {
			return nil, err
		}
		out[j].SetCoverage = float64(inSet) / float64(out[j].Positives)
	}
	if progress != nil {
		progress(b.total, b.total)
	}
	return out, nil
}

// topKRun is what TopKBaselines' distances share: the checked inputs, the
// calibration units' anchors (rows) and differences, the set's own scores
// of the first n test anchors' positives, and the progress of all the
// distances' passes.
type topKRun struct {
	s           *conformal.Set
	test        *bundle.Bundle
	store       retrieve.Store
	n, items    int
	unitAnchors []float32
	unitDiffs   []float32 // the units' differences (conformal.UnitDiffs)
	own         [][]float64
	each        int // the ranks a distance counts: its units' and its test anchors' rounds
	total, done int
	progress    func(done, total int)
}

// measure calibrates and measures the baseline ranked by distance, all
// but its SetCoverage.
func (b *topKRun) measure(ctx context.Context, distance string) (TopK, error) {
	s, d := b.s, b.s.Geometry.Dim()
	// The sets searched: s itself for its own distance (an in-memory
	// collection keeps its transform for s, as SetSizes'), a ball for l2.
	probe := s
	if distance != DistanceSet {
		probe = &conformal.Set{Geometry: geometry.Ball{D: d}, Alpha: s.Alpha, Threshold: s.Threshold, Calibration: s.Calibration}
	}
	g := probe.Geometry
	coll, _ := b.store.(*retrieve.Collection)
	if coll != nil && b.each >= retrieve.TransformMin(g) && retrieve.Transformable(g) {
		_ = coll.Transform(probe, retrieve.BatchTransformBytes) // refused: scanned plainly
	}
	// ranksOf is the rank a point of score v[i] around anchor i (rows of
	// anchors) would take among the items: 1 + how many score below it —
	// one pass of an in-memory collection for all of them
	// (retrieve.CountWithin), a search an anchor of another store.
	ranksOf := func(anchors []float32, v []float64) ([]int, error) {
		below := make([]float64, len(v))
		for i, x := range v {
			below[i] = max(0, math.Nextafter(x, math.Inf(-1))) // scores are ≥ 0
		}
		var counts []int
		if coll != nil {
			var err error
			if counts, err = retrieve.CountWithin(ctx, probe, anchors, below, coll, nil); err != nil {
				return nil, err
			}
		} else {
			counts = make([]int, len(v))
			for i := range v {
				p := *probe
				p.Threshold = below[i]
				_, inside, err := b.store.Search(ctx, &p, anchors[i*d:(i+1)*d], 1)
				if err != nil {
					return nil, fmt.Errorf("anchor %d: %w", i, err)
				}
				counts[i] = inside
			}
		}
		for i, x := range v {
			if counts[i]++; x <= 0 { // nothing scores below 0
				counts[i] = 1
			}
		}
		if b.done += len(v); b.progress != nil {
			b.progress(min(b.done, b.total), b.total)
		}
		return counts, nil
	}
	// Each calibration unit's rank among the items, from its score under
	// g (on every core).
	scores := conformal.ScoreDiffs(g, b.unitDiffs)
	ranks, err := ranksOf(b.unitAnchors, scores)
	if err != nil {
		return TopK{}, fmt.Errorf("eval: top-k: calibration units: %w", err)
	}
	n := b.n
	r := TopK{Distance: distance, Items: b.items, Rank: s.Calibration.Rank, N: s.Calibration.N, Anchors: n}
	k := math.MaxInt
	if r.Rank <= len(ranks) {
		sorted := slices.Sorted(slices.Values(ranks))
		k = sorted[r.Rank-1]
	}
	r.K, r.Whole = min(k, b.items), k > b.items
	// Each test anchor's positives against its k̂-th nearest item: a
	// positive is covered when its rank is at most k̂, and a nearer one's
	// rank is no larger, so the covered are its nearest few, found by
	// bisection — a round of ranks for all anchors at once, ⌈log₂(K+1)⌉
	// rounds.
	K := b.test.K
	sorted := make([][]float64, n) // each anchor's positives' scores by g, ascending
	lo, hi := make([]int, n), make([]int, n)
	for i := range n {
		if distance == DistanceSet {
			sorted[i] = slices.Clone(b.own[i])
		} else {
			sorted[i] = g.Scores(nil, b.test.PositiveDiffs(nil, i))
		}
		slices.Sort(sorted[i])
		lo[i], hi[i] = 0, K // sorted[i][:lo] covered, [hi:] not
		if r.Whole {
			lo[i] = K
		}
	}
	var anchors []float32
	for {
		var which []int
		anchors, scores = anchors[:0], scores[:0]
		for i := range n {
			if lo[i] < hi[i] {
				which = append(which, i)
				anchors = append(anchors, b.test.Anchor(i)...)
				scores = append(scores, sorted[i][(lo[i]+hi[i])/2])
			}
		}
		if which == nil {
			break
		}
		ranks, err := ranksOf(anchors, scores)
		if err != nil {
			return TopK{}, fmt.Errorf("eval: top-k: test anchors: %w", err)
		}
		for j, i := range which {
			if m := (lo[i] + hi[i]) / 2; ranks[j] <= r.K {
				lo[i] = m + 1
			} else {
				hi[i] = m
			}
		}
	}
	c := 0
	for i := range n {
		c += lo[i]
	}
	r.Positives = n * K
	r.Coverage = float64(c) / float64(r.Positives)
	return r, nil
}
