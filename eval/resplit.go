package eval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/parallel"
)

// ResplitResult is the distribution of a set's coverage over random
// calibration/test resplits of one bundle: what the guarantee promises,
// seen draw by draw.
type ResplitResult struct {
	Resplits int     `json:"resplits"`
	NCal     int     `json:"n_calibration"` // calibration anchors per resplit
	NTest    int     `json:"n_test"`        // held-out anchors per resplit
	Alpha    float64 `json:"alpha"`
	Mode     string  `json:"mode"`
	Delta    float64 `json:"delta,omitempty"`
	// Coverage is over all held-out positives, per resplit (fractions).
	Coverage   Summary `json:"coverage"`
	P05        float64 `json:"coverage_p05"`         // 5th percentile
	BelowShare float64 `json:"coverage_below_share"` // share of resplits covering < 1−α
	Exclusion  Summary `json:"exclusion"`            // NaN without negatives
	// Band is the marginal guarantee's [1−α, 1−α + 1/(n+1)] for the mean,
	// for one positive per anchor (the marginal rank) over anchors
	// exchangeable one by one; zero (left out) for a halving by blocks
	// (ByBlocks), whose anchors are exchangeable only block by block (a
	// block of many harder anchors moved the mean 6.5 standard errors
	// below it) — kept for one block, or one block an anchor, which halve
	// the anchors uniformly at random as row by row does —, and
	// for the other modes, whose mean is promised no band: a PAC set's lies
	// above it by design, a pooled set's has no guarantee, and a
	// class-conditional set's classes have each their own
	// (ClassResplit.Band). Its upper end holds for scores without ties:
	// TiedShare says how often they were tied.
	Band [2]float64 `json:"band,omitzero"`
	// TiedShare is the share of resplits whose threshold equals another
	// of their calibration scores (duplicate rows, quantised or binary
	// embeddings, a label bundle's mirrored pairs) — for a
	// class-conditional set, some class's threshold: a set then covers
	// the tied scores all at once, and its mean coverage may lie above the
	// band's upper end. 0 (left out) where none was.
	TiedShare float64 `json:"tied_share,omitempty"`
	// Coverages are each resplit's coverage, in order: the distribution
	// the summary above describes.
	Coverages []float64 `json:"coverages,omitempty"`
	// Blocks, where the bundle's anchors record their blocks
	// (bundle.Bundle.Blocks), is their number: each resplit then halves
	// the bundle block by block (blockOrder), as the bundles were split.
	// 0 (left out) for a bundle split row by row.
	Blocks int `json:"blocks,omitempty"`
	// DividedShare is, for a halving by blocks (ByBlocks), the share of
	// the anchors that lay, on average over the resplits, in the block a
	// cut divided (each class's cut, counting the class's rows of it, for
	// a class-conditional set): rows that calibrate and are held out
	// together. A block larger than a side of the cut is divided in every
	// resplit. 0 (left out) otherwise.
	DividedShare float64 `json:"divided_share,omitempty"`
}

// ByBlocks says the resplits halved the bundle by blocks that are not a
// halving of the anchors uniformly at random: more than one block, and
// fewer than the anchors. One block (all anchors a patient's) or one
// block an anchor (blocks = the anchors' index) lays the anchors out in
// a uniformly random order as row by row does, and the guarantees of
// anchors exchangeable one by one hold for the resplits' mean.
func (r *ResplitResult) ByBlocks() bool {
	return r.Blocks > 1 && r.Blocks < r.NCal+r.NTest
}

// divided is the number of members (laid out by sort) in the block the
// cut at n divides: 0 where the cut falls between two blocks.
func (o *blockOrder) divided(members []int, n int) int {
	if n < 1 || n >= len(members) || o.of[members[n-1]] != o.of[members[n]] {
		return 0
	}
	blk, lo, hi := o.of[members[n]], n-1, n+1
	for lo > 0 && o.of[members[lo-1]] == blk {
		lo--
	}
	for hi < len(members) && o.of[members[hi]] == blk {
		hi++
	}
	return hi - lo
}

// blockOrder halves a bundle whose anchors record their blocks
// (Bundle.Blocks: ccs bundle -blocks' patients, recordings, sites) block
// by block: a resplit draws a random order of the blocks and lays out its
// anchors (already shuffled) block after block, so that its first nCal —
// the calibration anchors — are whole blocks but the last, which the cut
// divides (the same number of calibration scores in every resplit, one
// rank). A class-conditional set's resplits cut each class's anchors so:
// each class's rows of a block lie on one side but in the block its cut
// divides, and a block with rows of several classes may calibrate one
// class and be held out in another — each class's threshold is
// calibrated on that class's rows alone. Halving row by row instead put
// each block's rows on both sides, which understated the spread over
// calibration draws (a medical-imaging user's patients: ± 1.01 against
// 1.45 by patient).
type blockOrder struct {
	of []int32 // each anchor's block, numbered from 0 in order of appearance
	n  int     // blocks
}

// newBlockOrder is b's blockOrder, nil where b records no blocks; an
// error where they are not one a anchor.
func newBlockOrder(b *bundle.Bundle) (*blockOrder, error) {
	if b.Blocks == nil {
		return nil, nil
	}
	if len(b.Blocks) != b.N {
		return nil, fmt.Errorf("eval: the bundle's blocks: %d for %d anchors", len(b.Blocks), b.N)
	}
	o := &blockOrder{of: make([]int32, b.N)}
	ids := map[int64]int32{}
	for i, v := range b.Blocks {
		id, ok := ids[v]
		if !ok {
			id = int32(len(ids))
			ids[v] = id
		}
		o.of[i] = id
	}
	o.n = len(ids)
	return o, nil
}

// blocks is the number of blocks (0 for a nil o).
func (o *blockOrder) blocks() int {
	if o == nil {
		return 0
	}
	return o.n
}

// draw is a resplit's order of the blocks: each block's place.
func (o *blockOrder) draw(rng *rand.Rand) []int { return rng.Perm(o.n) }

// sort lays out members (anchor indices, shuffled) block after block in
// the order place gives, each block's members in the order they had: a
// counting sort, linear in the members and the blocks, or, for members
// far fewer than the blocks (one class's of many), a stable sort of them
// (a class path of 1 000 classes and 2 000 blocks swept every block for
// each class: 55–71 times the row-by-row halving's time).
func (o *blockOrder) sort(members []int, place []int) {
	if m := len(members); m*bits.Len(uint(m)) < o.n {
		slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(place[o.of[a]], place[o.of[b]]) })
		return
	}
	count := make([]int, o.n+1)
	for _, i := range members {
		count[place[o.of[i]]+1]++
	}
	for j := 1; j <= o.n; j++ {
		count[j] += count[j-1]
	}
	out := make([]int, len(members))
	for _, i := range members {
		k := place[o.of[i]]
		out[count[k]] = i
		count[k]++
	}
	copy(members, out)
}

// Resplits measures s's geometry recalibrated on random halves of b:
// resplits times, b's anchors are shuffled (seeded by seed and the resplit),
// a calFraction of them calibrate the threshold at s's α with s's mode (and
// PAC's δ), and the others' positives and negatives are counted. b must be
// disjoint from everything that chose the geometry. Every score is computed
// once.
func Resplits(s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, error) {
	return ResplitsContext(context.Background(), s, b, resplits, calFraction, seed)
}

// ResplitsContext is Resplits, stopping with ctx's error when ctx is
// done: it looks while scoring b (as EvaluateContext does) and before
// each resplit (ccs coverage-check ran 6.6 s past Ctrl-C over 1 000
// resplits, and wrote its result). The numbers are Resplits'.
func ResplitsContext(ctx context.Context, s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, error) {
	return resplits1(ctx, s, b, resplits, calFraction, seed, nil, nil)
}

// resplits1 is ResplitsContext; visit, if not nil, sees each resplit's
// held-out anchors, every positive's score and the threshold (called
// from several goroutines, once for each r); sc, if not nil, is b's
// scores under s.
func resplits1(ctx context.Context, s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64, visit func(r int, held []int, pos []float64, q float64), sc *Scored) (ResplitResult, error) {
	if !s.Calibrated() {
		return ResplitResult{}, conformal.ErrNotCalibrated
	}
	if err := b.NeedPositives(); err != nil {
		return ResplitResult{}, fmt.Errorf("eval: %w", err)
	}
	if s.Geometry.Dim() != b.D {
		d := s.Geometry.Dim()
		return ResplitResult{}, conformal.DimErrorf("bundle", []int{b.N, b.D}, d, "eval: the set has dimension %d, the bundle %d", d, b.D)
	}
	if err := s.OneThreshold(); err != nil {
		return ResplitResult{}, err
	}
	if resplits < 1 {
		return ResplitResult{}, fmt.Errorf("resplits %d, want at least 1", resplits)
	}
	nCal := int(calFraction * float64(b.N))
	if !(calFraction > 0 && calFraction < 1) || nCal < 1 || nCal >= b.N {
		return ResplitResult{}, fmt.Errorf("calibration fraction %v of %d anchors leaves no calibration or no test anchors", calFraction, b.N)
	}
	c := s.Calibration
	// Every resplit calibrates on the same number of scores: one rank.
	nScores := nCal
	if c.Mode == conformal.Pooled {
		nScores = nCal * b.K
	}
	rank, err := conformal.RankOf(c.Mode, nScores, s.Alpha, c.Delta)
	if err != nil {
		return ResplitResult{}, err
	}
	if rank > nScores {
		return ResplitResult{}, &conformal.TooFewError{N: nScores, Rank: rank, Alpha: s.Alpha, Delta: c.Delta}
	}
	if sc == nil {
		if sc, err = score(ctx, s, b); err != nil {
			return ResplitResult{}, err
		}
	}
	pos, neg := sc.pos, sc.neg
	bo, err := newBlockOrder(b)
	if err != nil {
		return ResplitResult{}, err
	}
	res := ResplitResult{Resplits: resplits, NCal: nCal, NTest: b.N - nCal, Alpha: s.Alpha, Mode: c.Mode.String(), Delta: c.Delta, Blocks: bo.blocks()}
	if c.Mode == conformal.OnePerAnchor && !res.ByBlocks() {
		res.Band = band(s.Alpha, nCal)
	}
	cov := make([]float64, resplits)
	exc := make([]float64, resplits)
	tied := make([]bool, resplits)
	divided := make([]int, resplits) // anchors in the block the cut divides
	// Each resplit draws from its own generator (seed, r) into its own
	// slots: they run on all cores, with the same numbers.
	parallel.For(resplits, 4, 0, func(_, lo, hi int) {
		var cal []float64
		for r := lo; r < hi; r++ {
			if ctx.Err() != nil {
				return
			}
			rng := rand.New(rand.NewPCG(seed, uint64(r)))
			perm := rng.Perm(b.N)
			if bo != nil {
				bo.sort(perm, bo.draw(rng))
				divided[r] = bo.divided(perm, nCal)
			}
			cal = cal[:0]
			for _, i := range perm[:nCal] {
				switch c.Mode {
				case conformal.Pooled:
					cal = append(cal, pos[i*b.K:(i+1)*b.K]...)
				default: // one positive per anchor
					cal = append(cal, pos[i*b.K+rng.IntN(b.K)])
				}
			}
			q := conformal.Select(cal, rank)
			if visit != nil {
				visit(r, perm[nCal:], pos, q)
			}
			in, out := counted(b, pos, neg, perm[nCal:], q)
			tied[r] = tiedAt(cal, q) > 1
			cov[r] = float64(in) / float64(res.NTest*b.K)
			exc[r] = math.NaN()
			if b.HasNegatives() {
				exc[r] = float64(out) / float64(res.NTest*b.KNeg)
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return ResplitResult{}, err
	}
	res.finish(cov, exc)
	res.dividedShare(divided, b.N)
	for _, t := range tied {
		if t {
			res.TiedShare++
		}
	}
	res.TiedShare /= float64(resplits)
	return res, nil
}

// dividedShare sets DividedShare, for a halving by blocks, from each
// resplit's anchors in divided blocks, of n.
func (res *ResplitResult) dividedShare(divided []int, n int) {
	if !res.ByBlocks() {
		return
	}
	sum := 0
	for _, d := range divided {
		sum += d
	}
	res.DividedShare = float64(sum) / (float64(len(divided)) * float64(n))
}

// band is [1−α, 1−α + 1/(n+1)], the mean coverage's over calibration
// draws of n scores at the marginal rank (its upper end never above 1).
func band(alpha float64, n int) [2]float64 {
	return [2]float64{1 - alpha, min(1, 1-alpha+1/float64(n+1))}
}

// tiedAt is the number of scores equal to q.
func tiedAt(scores []float64, q float64) int {
	n := 0
	for _, v := range scores {
		if v == q {
			n++
		}
	}
	return n
}

// counted is the number of the test anchors' positives inside the set of
// threshold q and of their negatives outside it (pos and neg: Scored's).
func counted(b *bundle.Bundle, pos, neg []float64, test []int, q float64) (in, out int) {
	for _, i := range test {
		for _, v := range pos[i*b.K : (i+1)*b.K] {
			if v <= q {
				in++
			}
		}
		for _, v := range neg[i*b.KNeg : (i+1)*b.KNeg] {
			if v > q {
				out++
			}
		}
	}
	return in, out
}

// finish summarises the resplits' coverages and exclusions.
func (res *ResplitResult) finish(cov, exc []float64) {
	res.Coverage, res.Exclusion, res.Coverages = Summarize(cov), Summarize(exc), cov
	below := 0
	for _, v := range cov {
		if v < 1-res.Alpha {
			below++
		}
	}
	res.BelowShare = float64(below) / float64(len(cov))
	sorted := slices.Sorted(slices.Values(cov))
	res.P05 = sorted[int(0.05*float64(len(sorted)-1))]
}

// ClassResplit is one class's coverage over resplits: its anchors'
// held-out positives, each resplit judged with the class's threshold
// recalibrated on the resplit's calibration anchors of the class (a
// class-conditional set) or with the set's recalibrated threshold.
type ClassResplit struct {
	Label      int64   `json:"label"`
	Name       string  `json:"name,omitempty"`          // a string label's name, where the caller knows it (experiment.CheckCoverage)
	NCal       int     `json:"n_calibration,omitempty"` // the class's calibration anchors per resplit (a class-conditional set; left out for a marginal one)
	NTest      int     `json:"n_test"`                  // the class's held-out anchors per resplit (the mean, rounded, for a marginal set)
	Coverage   Summary `json:"coverage"`
	P05        float64 `json:"coverage_p05"`
	BelowShare float64 `json:"coverage_below_share"`
	// WholeSpace says the class's calibration anchors per resplit are too
	// few for its rank (a class-conditional set): its set is the whole
	// space in every resplit, its coverage 100% by construction.
	WholeSpace bool `json:"whole_space,omitempty"`
	// Band is, for a class-conditional set of the marginal rank, the
	// class's [1−α, 1−α + 1/(n+1)] of its NCal calibration anchors: its
	// mean coverage lies in it, for scores without ties (zero otherwise).
	Band [2]float64 `json:"band,omitzero"`
	// TiedShare is, for a class-conditional set, the share of resplits
	// whose class threshold equals another of the class's calibration
	// scores: its mean then may lie above the band's upper end.
	TiedShare float64 `json:"tied_share,omitempty"`
}

// ResplitsByClass is Resplits with each class's coverage (b.Labels
// needed). A class-conditional set is recalibrated class by class: each
// resplit shuffles each class's anchors, a calFraction of them calibrate
// that class's threshold (the set's rank rule: marginal, or PAC per class
// with δ), and the others' positives are judged with it — the guarantee
// each class gets, seen draw by draw. A set with one threshold is
// resplit as Resplits does, and its held-out positives are counted class by
// class.
func ResplitsByClass(s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, []ClassResplit, error) {
	return ResplitsByClassContext(context.Background(), s, b, resplits, calFraction, seed)
}

// ResplitsByClassContext is ResplitsByClass, stopping with ctx's error
// when ctx is done, as ResplitsContext does; the numbers are
// ResplitsByClass'.
func ResplitsByClassContext(ctx context.Context, s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, []ClassResplit, error) {
	if err := b.NeedPositives(); err != nil {
		return ResplitResult{}, nil, fmt.Errorf("eval: %w", err)
	}
	if b.Labels == nil {
		return ResplitResult{}, nil, fmt.Errorf("%w: the bundle has no labels for per-class resplits", conformal.ErrNoLabel)
	}
	if !s.ClassConditional() {
		return marginalByClass(ctx, s, b, resplits, calFraction, seed)
	}
	if !s.Calibrated() {
		return ResplitResult{}, nil, conformal.ErrNotCalibrated
	}
	if resplits < 1 {
		return ResplitResult{}, nil, fmt.Errorf("resplits %d, want at least 1", resplits)
	}
	if !(calFraction > 0 && calFraction < 1) {
		return ResplitResult{}, nil, fmt.Errorf("calibration fraction %v, want 0 < f < 1", calFraction)
	}
	delta := s.Calibration.Delta
	mode := conformal.OnePerAnchor
	if delta > 0 {
		mode = conformal.PAC
	}
	byClass := map[int64][]int{}
	for i, l := range b.Labels {
		byClass[l] = append(byClass[l], i)
	}
	labels := slices.Sorted(func(yield func(int64) bool) {
		for l := range byClass {
			if !yield(l) {
				return
			}
		}
	})
	type class struct {
		members    []int
		nCal, rank int
	}
	classes := make([]class, len(labels))
	nTest := 0
	for ci, l := range labels {
		m := byClass[l]
		nCal := int(calFraction * float64(len(m)))
		if nCal < 1 || nCal >= len(m) {
			smallest := len(m)
			for _, o := range byClass {
				smallest = min(smallest, len(o))
			}
			return ResplitResult{}, nil, &ClassFractionError{Label: l, Anchors: len(m), Smallest: smallest, Fraction: calFraction}
		}
		r, err := conformal.RankOf(mode, nCal, s.Alpha, delta)
		if err != nil {
			return ResplitResult{}, nil, fmt.Errorf("class %d: %w", l, err)
		}
		classes[ci] = class{members: m, nCal: nCal, rank: r}
		nTest += len(m) - nCal
	}
	sc, err := score(ctx, s, b)
	if err != nil {
		return ResplitResult{}, nil, err
	}
	pos, neg := sc.pos, sc.neg
	bo, err := newBlockOrder(b)
	if err != nil {
		return ResplitResult{}, nil, err
	}
	res := ResplitResult{Resplits: resplits, NCal: b.N - nTest, NTest: nTest, Alpha: s.Alpha, Mode: s.Calibration.Mode.String(), Delta: delta, Blocks: bo.blocks()}
	cov, exc := make([]float64, resplits), make([]float64, resplits)
	tied := make([]bool, resplits*len(classes)) // resplit r, class ci: r·len(classes) + ci
	divided := make([]int, resplits)            // anchors in the blocks the classes' cuts divide
	classCov := make([][]float64, len(labels))
	for ci := range classCov {
		classCov[ci] = make([]float64, resplits)
	}
	// Each resplit's own generator and slots, as in resplits1.
	parallel.For(resplits, 4, 0, func(_, lo, hi int) {
		var cal []float64
		var perm []int
		for r := lo; r < hi; r++ {
			if ctx.Err() != nil {
				return
			}
			rng := rand.New(rand.NewPCG(seed, uint64(r)))
			var place []int // the blocks' order, one for every class of the resplit
			if bo != nil {
				place = bo.draw(rng)
			}
			in, out := 0, 0
			for ci, c := range classes {
				perm = append(perm[:0], c.members...)
				rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
				if bo != nil {
					bo.sort(perm, place)
					divided[r] += bo.divided(perm, c.nCal)
				}
				cal = cal[:0]
				for _, i := range perm[:c.nCal] {
					cal = append(cal, pos[i*b.K+rng.IntN(b.K)])
				}
				q := math.Inf(1) // a rank beyond n: the whole space
				if c.rank <= c.nCal {
					q = conformal.Select(cal, c.rank)
					tied[r*len(classes)+ci] = tiedAt(cal, q) > 1
				}
				cin, cout := counted(b, pos, neg, perm[c.nCal:], q)
				in, out = in+cin, out+cout
				classCov[ci][r] = float64(cin) / float64((len(c.members)-c.nCal)*b.K)
			}
			cov[r] = float64(in) / float64(nTest*b.K)
			exc[r] = math.NaN()
			if b.HasNegatives() {
				exc[r] = float64(out) / float64(nTest*b.KNeg)
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return ResplitResult{}, nil, err
	}
	res.finish(cov, exc)
	res.dividedShare(divided, b.N)
	var out []ClassResplit
	for ci, l := range labels {
		c := classes[ci]
		cr := classResplit(l, c.nCal, len(c.members)-c.nCal, classCov[ci], s.Alpha)
		cr.WholeSpace = c.rank > c.nCal
		if !cr.WholeSpace && mode == conformal.OnePerAnchor && !res.ByBlocks() { // as Resplits' Band
			cr.Band = band(s.Alpha, c.nCal)
		}
		for r := range resplits {
			if tied[r*len(classes)+ci] {
				cr.TiedShare++
			}
		}
		cr.TiedShare /= float64(resplits)
		out = append(out, cr)
	}
	for r := range resplits {
		if slices.Contains(tied[r*len(classes):(r+1)*len(classes)], true) {
			res.TiedShare++
		}
	}
	res.TiedShare /= float64(resplits)
	return res, out, nil
}

// ClassFractionError reports a class whose anchors a calibration fraction
// cannot split into calibration and held-out ones (ResplitsByClass).
type ClassFractionError struct {
	Label    int64
	Anchors  int     // the class's anchors in the bundle
	Smallest int     // the smallest class's anchors, which a fraction must split
	Fraction float64 // the calibration fraction asked for
}

func (e *ClassFractionError) Error() string {
	return fmt.Sprintf("class %d: calibration fraction %v of its %d anchors leaves no calibration or no test anchor", e.Label, e.Fraction, e.Anchors)
}

// marginalByClass is Resplits, counting each class's held-out positives.
func marginalByClass(ctx context.Context, s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, []ClassResplit, error) {
	if resplits < 1 { // before the per-resplit counts are made
		return ResplitResult{}, nil, fmt.Errorf("resplits %d, want at least 1", resplits)
	}
	labels := slices.Compact(slices.Sorted(slices.Values(b.Labels)))
	class := make([]int32, b.N) // each anchor's index in labels
	for i, l := range b.Labels {
		k, _ := slices.BinarySearch(labels, l)
		class[i] = int32(k)
	}
	nc := len(labels)
	// Per resplit and class: positives inside, positives held out.
	in, n := make([]int, resplits*nc), make([]int, resplits*nc)
	res, err := resplits1(ctx, s, b, resplits, calFraction, seed, func(r int, held []int, pos []float64, q float64) {
		rin, rn := in[r*nc:(r+1)*nc], n[r*nc:(r+1)*nc]
		for _, i := range held {
			k := class[i]
			rn[k] += b.K
			for _, v := range pos[i*b.K : (i+1)*b.K] {
				if v <= q {
					rin[k]++
				}
			}
		}
	}, nil)
	if err != nil {
		return res, nil, err
	}
	var out []ClassResplit
	for k, l := range labels {
		var cov []float64
		tested := 0
		for r := range resplits {
			// A class absent from a resplit's held-out part has no
			// coverage there.
			if c := n[r*nc+k]; c > 0 {
				cov = append(cov, float64(in[r*nc+k])/float64(c))
				tested += c / b.K
			}
		}
		if cov != nil {
			out = append(out, classResplit(l, 0, (2*tested+resplits)/(2*resplits), cov, s.Alpha)) // the mean, rounded
		}
	}
	return res, out, nil
}

func classResplit(label int64, nCal, nTest int, cov []float64, alpha float64) ClassResplit {
	c := ClassResplit{Label: label, NCal: nCal, NTest: nTest, Coverage: Summarize(cov)}
	below := 0
	for _, v := range cov {
		if v < 1-alpha {
			below++
		}
	}
	c.BelowShare = float64(below) / float64(len(cov))
	sorted := slices.Sorted(slices.Values(cov))
	c.P05 = sorted[int(0.05*float64(len(sorted)-1))]
	return c
}

// ResplitsByLabel is Resplits with each label's coverage, in a bundle of
// several labels a row (b.PositiveLabels needed: ccs bundle writes them):
// the set's threshold recalibrated on each resplit as Resplits does, and
// each label's coverage of the held-out positives that share it with
// their anchor, a positive sharing several labels counting for each (as
// ByLabel counts them). A ClassResplit's Label is then the label, its
// NTest the number of held-out anchors with a positive sharing it, on
// average (rounded) over the resplits that hold out any, its Coverage.N
// the number of those resplits: a label no held-out positive shares in a
// resplit has no coverage there.
// The guarantee is over all positives, not label by label. A
// class-conditional set is refused, as ByLabel refuses it.
func ResplitsByLabel(s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, []ClassResplit, error) {
	return ResplitsByLabelContext(context.Background(), s, b, resplits, calFraction, seed)
}

// ResplitsByLabelContext is ResplitsByLabel, stopping with ctx's error
// when ctx is done, as ResplitsContext does; the numbers are
// ResplitsByLabel's.
func ResplitsByLabelContext(ctx context.Context, s *conformal.Set, b *bundle.Bundle, resplits int, calFraction float64, seed uint64) (ResplitResult, []ClassResplit, error) {
	if s.ClassConditional() {
		return ResplitResult{}, nil, fmt.Errorf("%w: a class-conditional set judges anchors by their label, and several labels a row give none", conformal.ErrNoLabel)
	}
	if b.PositiveLabelStart == nil {
		return ResplitResult{}, nil, fmt.Errorf("eval: by label: the bundle carries no labels of its positives (ccs bundle writes them for several labels a row)")
	}
	if resplits < 1 { // before the per-resplit counts are made
		return ResplitResult{}, nil, fmt.Errorf("resplits %d, want at least 1", resplits)
	}
	if err := b.Validate(); err != nil {
		return ResplitResult{}, nil, fmt.Errorf("eval: bundle: %w", err)
	}
	labels := slices.Compact(slices.Sorted(slices.Values(b.PositiveLabels)))
	index := make([]int32, len(b.PositiveLabels)) // each shared label's index in labels
	for j, l := range b.PositiveLabels {
		k, _ := slices.BinarySearch(labels, l)
		index[j] = int32(k)
	}
	start := b.PositiveLabelStart
	nl := len(labels)
	// Per resplit and label: positives inside, positives and anchors held out.
	// int32: 12 bytes a resplit and label (1 000 resplits of 20 000
	// labels: 240 MB); a resplit's counts are at most its held-out
	// anchors times K, below 2³¹ here.
	if int64(b.N)*int64(b.K) > math.MaxInt32 {
		return ResplitResult{}, nil, fmt.Errorf("eval: by label: %d anchors of %d positives, more positives than per-label resplits count (2³¹)", b.N, b.K)
	}
	in, n, anchors := make([]int32, resplits*nl), make([]int32, resplits*nl), make([]int32, resplits*nl)
	res, err := resplits1(ctx, s, b, resplits, calFraction, seed, func(r int, held []int, pos []float64, q float64) {
		rin, rn, ra := in[r*nl:(r+1)*nl], n[r*nl:(r+1)*nl], anchors[r*nl:(r+1)*nl]
		last := make([]int, nl) // the last anchor counted for each label, +1
		for _, i := range held {
			for u := i * b.K; u < (i+1)*b.K; u++ {
				inside := pos[u] <= q
				for _, k := range index[start[u]:start[u+1]] {
					rn[k]++
					if inside {
						rin[k]++
					}
					if last[k] != i+1 {
						last[k] = i + 1
						ra[k]++
					}
				}
			}
		}
	}, nil)
	if err != nil {
		return res, nil, err
	}
	var out []ClassResplit
	for k, l := range labels {
		var cov []float64
		tested := 0
		for r := range resplits {
			if c := n[r*nl+k]; c > 0 {
				cov = append(cov, float64(in[r*nl+k])/float64(c))
				tested += int(anchors[r*nl+k])
			}
		}
		if cov != nil { // anchors per resplit that hold it out
			out = append(out, classResplit(l, 0, (2*tested+len(cov))/(2*len(cov)), cov, s.Alpha))
		}
	}
	return res, out, nil
}
