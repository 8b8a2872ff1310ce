package conformal

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"
)

// Scores returns the calibration scores of cal under g: one per unit — an
// anchor with one of its positives (chosen with a PCG seeded by seed), or,
// on a bundle whose positives are its own anchors, each of its
// DisjointPairs (for OnePerAnchor and PAC, as many of each class's as keep
// the classes' shares of the anchors) — or all positives pooled.
func Scores(g geometry.Geometry, cal *bundle.Bundle, mode Mode, seed uint64) ([]float64, error) {
	scores, _, _, err := unitScores(g, cal, mode, seed)
	return scores, err
}

// unitScores is Scores, with the DisjointPairs it scored (trimmed as
// Scores says, and the Trim when that left out many), or nil when its
// units are the anchors, one positive each, or every positive pooled:
// unit u is then anchor u.
func unitScores(g geometry.Geometry, cal *bundle.Bundle, mode Mode, seed uint64) ([]float64, [][2]int, *Trim, error) {
	scores, _, pairs, t, err := scoredUnits(g, cal, mode, seed)
	return scores, pairs, t, err
}

// scoredUnits is unitScores with the units scored (UnitPairs'; nil for
// Pooled), which Calibrate counts the copies of.
func scoredUnits(g geometry.Geometry, cal *bundle.Bundle, mode Mode, seed uint64) ([]float64, [][2]int, [][2]int, *Trim, error) {
	if err := given(g, cal); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := cal.NeedPositives(); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("conformal: %w", err)
	}
	if g.Dim() != cal.D {
		return nil, nil, nil, nil, DimErrorf("calibration bundle", []int{cal.N, cal.D}, g.Dim(), "conformal: geometry has dimension %d, calibration embeddings %d", g.Dim(), cal.D)
	}
	// A bundle built by hand (bundle.Read and Plan.Bundle check theirs):
	// lengths that are not its N, K and D, an index out of its pool, a NaN.
	if err := cal.Validate(); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("conformal: calibration bundle: %w", err)
	}
	switch mode {
	case OnePerAnchor, PAC, Class: // the same positives: PAC differs in the rank, Class in the grouping
		units, pairs, t := unitPairs(cal, mode, seed)
		return ScoreUnits(g, cal, units), units, pairs, t, nil
	case Pooled:
		out := make([]float64, cal.N*cal.K)
		parallel.For(cal.N, 64, 0, func(_, lo, hi int) {
			diffs := make([]float32, cal.K*cal.D)
			for i := lo; i < hi; i++ {
				g.Scores(out[i*cal.K:(i+1)*cal.K], cal.PositiveDiffs(diffs, i))
			}
		})
		return out, nil, nil, nil, nil
	}
	return nil, nil, nil, nil, fmt.Errorf("conformal: unknown calibration mode %v", mode)
}

// given refuses a nil geometry (a variable a switch left unset, or a nil
// pointer of a constructor whose error was dropped) and a nil
// calibration bundle, which would panic where they are first read.
func given(g geometry.Geometry, cal *bundle.Bundle) error {
	if g == nil {
		return errors.New("conformal: no geometry (nil)")
	}
	if v := reflect.ValueOf(g); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("conformal: no geometry (a nil %T)", g)
	}
	if cal == nil {
		return errors.New("conformal: no calibration bundle (nil)")
	}
	return nil
}

// ScoreUnits returns g's score of each unit of cal — (i, j), anchor i
// with its j-th positive, as UnitPairs names them — on all cores: for
// UnitPairs' units, Scores' scores, without its checks of cal (which the
// caller has made once). A caller scoring the same units under several
// geometries builds their differences once (UnitDiffs) and scores them
// under each (ScoreDiffs).
func ScoreUnits(g geometry.Geometry, cal *bundle.Bundle, units [][2]int) []float64 {
	return ScoreDiffs(g, UnitDiffs(cal, units))
}

// UnitDiffs are the differences anchor i − its j-th positive of each unit
// (i, j) of cal, a row of cal.D values each: what ScoreUnits scores.
func UnitDiffs(cal *bundle.Bundle, units [][2]int) []float32 {
	d := cal.D
	diffs := make([]float32, len(units)*d)
	for u, p := range units {
		cal.PositiveDiff(diffs[u*d:(u+1)*d], p[0], p[1])
	}
	return diffs
}

// ScoreDiffs returns g's score of each row of diffs (g.Dim() values a
// row: UnitDiffs') on all cores.
func ScoreDiffs(g geometry.Geometry, diffs []float32) []float64 {
	d := g.Dim()
	n := len(diffs) / d
	// A row's exact score does not depend on the rows scored with it
	// (TestScoresByBlocks): blocks of rows on all cores.
	out := make([]float64, n)
	parallel.For(n, 1024, 0, func(_, lo, hi int) {
		g.Scores(out[lo:hi], diffs[lo*d:hi*d])
	})
	return out
}

// UnitPairs are the calibration units a calibration of cal in mode m (but
// pooled, which scores every positive) with seed scores, in Scores' order:
// (anchor, positive) pairs, (i, j) anchor i with its j-th positive — each
// anchor with the positive the seed draws for it, or, where the bundle's
// positives are its own anchors, its disjoint pairs (trimmed to the
// classes' shares but for Class). A baseline calibrated on the same units
// as a set (eval.TopKBaseline) is then exchangeable with the same test
// anchors. It returns nil for Pooled.
func UnitPairs(cal *bundle.Bundle, m Mode, seed uint64) [][2]int {
	if m == 0 {
		m = OnePerAnchor
	}
	if m == Pooled || cal.K == 0 {
		return nil
	}
	units, _, _ := unitPairs(cal, m, seed)
	return units
}

// unitPairs is UnitPairs, with the DisjointPairs among them (nil where
// the units are the anchors) and their Trim.
func unitPairs(cal *bundle.Bundle, mode Mode, seed uint64) (units, pairs [][2]int, trim *Trim) {
	if pairs, trim = calibrationPairs(cal, mode); pairs != nil {
		return pairs, pairs, trim
	}
	rng := rand.New(rand.NewPCG(seed, 0x63636f6e65)) // "cc one"
	units = make([][2]int, cal.N)
	for i := range cal.N {
		units[i] = [2]int{i, rng.IntN(cal.K)}
	}
	return units, nil, nil
}

// Options configures Calibrate. The zero value is one positive per anchor,
// seed 0, and an error when the rank exceeds n.
type Options struct {
	Mode Mode // zero means OnePerAnchor
	// Seed picks the positive of each anchor in OnePerAnchor and PAC
	// modes; a bundle whose positives are its own anchors (ccs bundle's
	// from labels or groups) is calibrated on its disjoint pairs
	// (DisjointPairs), which no seed changes.
	Seed uint64
	// Delta is PAC's δ: the probability over the calibration draw that the
	// coverage falls below 1 − α. Only PAC uses it.
	Delta float64
	// AllowInfinite accepts a +Inf threshold (the whole space) when there
	// are too few calibration scores, instead of returning the error. The
	// set then says so in Warnings.
	AllowInfinite bool
	// LabelNames name the calibration bundle's classes (label i is
	// LabelNames[i]; ccs bundle's string labels), for a class-conditional
	// set's Classes and its messages. Optional.
	LabelNames []string
	// OneLabel names the label whose rows alone the calibration bundle
	// holds (ccs bundle -one-label, of a data set of several labels a
	// row), for the set's Info: its guarantee is for anchors carrying it.
	// Optional; the bundle itself does not know it (its manifest does).
	OneLabel string
	// Label, if not nil, calibrates on the bundle's anchors of that class
	// alone, each with the positive the whole bundle's calibration draws
	// for it: a set of one threshold (OnePerAnchor or PAC) whose guarantee
	// is for anchors of that class, the same threshold a Class set gives
	// that class. Not for a bundle calibrated on disjoint pairs (whose
	// pairs span its classes' shares) nor a Class or Pooled calibration.
	Label *int64
}

// Info records how a set was calibrated.
type Info struct {
	Mode Mode `json:"mode"`
	N    int  `json:"n"` // calibration scores
	// Rank is ⌈(1−α)(n+1)⌉, or PAC's, among N; > N means +Inf. For a
	// class-conditional set with OverAll it is the rank among all N
	// pairs, which no threshold of the set has: OverAll's is its
	// threshold over all classes'.
	Rank  int     `json:"rank"`
	Seed  uint64  `json:"seed"`
	Delta float64 `json:"delta,omitempty"` // PAC's δ
	// Pairs says the N calibration units were disjoint (anchor, positive)
	// pairs (DisjointPairs: the bundle's positives were its own anchors),
	// not its anchors.
	Pairs bool `json:"pairs,omitempty"`
	// Trim, for a marginal or PAC calibration on pairs, says that keeping
	// the classes' shares left out a tenth of the pairs or more, and why.
	Trim *Trim `json:"trim,omitempty"`
	// Anchors is the calibration bundle's Digest: evaluating the set on
	// that bundle is no test of it (OwnSplit).
	Anchors string `json:"anchors,omitempty"`
	// Rows holds the calibration anchors' rows (KeepRows), so that a test
	// bundle sharing many of them is warned of although its digest
	// differs (OwnSplitWarning). The set file keeps it beside the
	// calibration ("calibration_rows"), out of the documents that
	// describe the calibration.
	Rows *bundle.RowFilter `json:"-"`
	// Sources holds those anchors each with its source row and Embeddings
	// names the embeddings they number (KeepRows, as FitInfo.Sources and
	// .Embeddings), where the calibration split records them (ccs
	// bundle's do): a test bundle's anchors equal to calibration rows but
	// from other source rows of the same embeddings are the data's own
	// exact copies, which every split holds alike, and are not warned of.
	// The set file keeps them beside Rows ("calibration_sources",
	// "calibration_embeddings").
	Sources    *bundle.RowFilter `json:"-"`
	Embeddings string            `json:"-"`
	// OverAll, for a class-conditional calibration on disjoint pairs, is
	// how its threshold over all classes (Threshold, which OverAllClasses
	// judges with) was taken where that differs from the classes' N pairs:
	// among as many of each class's pairs as keep the classes' shares of
	// the anchors, as a marginal calibration takes them. Nil when that
	// kept every pair (and for sets calibrated before it was kept).
	OverAll *OverAll `json:"over_all,omitempty"`
	// UnitNorm says that every calibration anchor and positive had norm 1
	// (within UnitNormTolerance): embeddings normalised by their encoder,
	// whose guarantee is for inputs normalised alike (Set.CheckNorms).
	UnitNorm bool `json:"unit_norm,omitempty"`
	// UnitNormAnchors says that every calibration anchor had norm 1
	// (within UnitNormTolerance) and some positive not: normalised
	// queries beside rows of their own norms — the inner-product map's
	// users u/‖u‖ and items (docs/your-data.md, "Dot-product models") —
	// whose guarantee is for anchors normalised alike
	// (Set.CheckAnchorNorms). False when UnitNorm holds.
	UnitNormAnchors bool `json:"unit_norm_anchors,omitempty"`
	// Class, for a set of one threshold calibrated on one class's anchors
	// alone (Options.Label, ccs calibrate -class) or taken from a
	// class-conditional set for one class (Set.ForClass), is that class:
	// the set's guarantee is for anchors of it. Nil otherwise, and in files
	// written before it was kept.
	Class *ClassOf `json:"class,omitempty"`
	// OneLabel, for a set calibrated on one label's bundles (ccs bundle
	// -one-label: the rows carrying the label alone, of a data set of
	// several labels a row; Options.OneLabel), names the label: the set's
	// guarantee is for anchors carrying it, a positive drawn among the
	// label's rows. "" otherwise, and in files written before it was kept.
	OneLabel string `json:"one_label,omitempty"`
	// Tie, for a set of one threshold, says that the threshold equals
	// calibration scores above its rank (scores of few values), nil
	// otherwise and in files written before it was kept.
	Tie *Tie `json:"tie,omitempty"`
	// Copies is how many calibration units repeat another exactly (the
	// same anchor and positive embeddings), which the rank counts as
	// exchangeable units (CopiesWarning); 0 in files written before it
	// was counted.
	Copies int `json:"copies,omitempty"`
}

// ClassOf names the class a set of one threshold is for (Info.Class): its
// label, and its name when the calibration bundle's labels were strings.
type ClassOf struct {
	Label int64  `json:"label"`
	Name  string `json:"name,omitempty"`
}

// String names the class as messages do: class "sw", or class 3.
func (c ClassOf) String() string { return className(c.Label, c.Name) }

// LabelAndName are the class's label and name as answers give them (ccs
// retrieve's and the service's "label" and "class"): nil and "" for no
// class (c nil, a set of every class's anchors), the name "" for a class
// of numbered labels.
func (c *ClassOf) LabelAndName() (label *int64, name string) {
	if c == nil {
		return nil, ""
	}
	l := c.Label
	return &l, c.Name
}

// RankOf is the rank a calibration in mode m (with PAC's δ) takes among n
// scores at level α.
func RankOf(m Mode, n int, alpha, delta float64) (int, error) {
	if m == PAC || (m == Class && delta > 0) {
		return PACRank(n, alpha, delta)
	}
	return Rank(n, alpha)
}

// Quantile returns the threshold a calibration with opt's mode (and δ)
// takes among scores at level α, and its rank; scores is reordered. When
// the rank exceeds n it returns +Inf with a *TooFewError, as Threshold.
func Quantile(scores []float64, alpha float64, opt Options) (float64, int, error) {
	r, err := RankOf(opt.Mode, len(scores), alpha, opt.Delta)
	if err != nil {
		return math.NaN(), 0, err
	}
	q, err := selectRank(scores, r, alpha, opt.Delta)
	return q, r, err
}

// Calibrate computes g's threshold on the calibration bundle cal: the
// ⌈(1−α)(n+1)⌉-th smallest of its n calibration scores (Scores: one
// positive per anchor, or, where the positives are the bundle's own
// anchors, its disjoint pairs, as many of each class's as keep the
// classes' shares). The bundle must be disjoint from everything used to
// choose g (the caller's duty: the guarantee rests on it); for a fitted
// set CalibrateFitted checks it against the splits the set records. It
// does not keep cal's rows in the set (KeepRows: what ccs calibrate does).
func Calibrate(g geometry.Geometry, cal *bundle.Bundle, alpha float64, opt Options) (*Set, error) {
	if err := given(g, cal); err != nil {
		return nil, err
	}
	if err := CheckAlpha(alpha); err != nil {
		return nil, err
	}
	if opt.Mode == 0 {
		opt.Mode = OnePerAnchor
	}
	switch {
	case opt.Mode == PAC || (opt.Mode == Class && opt.Delta != 0):
		if err := CheckGivenDelta(opt.Delta); err != nil {
			return nil, err
		}
	case opt.Mode != Class:
		opt.Delta = 0
	}
	if opt.Mode == Class && cal.Labels == nil {
		return nil, noLabels(cal)
	}
	scores, units, pairs, trim, err := scoredUnits(g, cal, opt.Mode, opt.Seed)
	if err != nil {
		return nil, err
	}
	if trim != nil {
		trim.Name = nameOf(opt.LabelNames, trim.Class)
	}
	if opt.Label != nil {
		if scores, err = labelScores(scores, pairs, cal, *opt.Label, opt); err != nil {
			return nil, err
		}
	}
	var classes []ClassThreshold
	if opt.Mode == Class { // before Quantile reorders the scores
		if classes, err = calibrateClasses(scores, pairs, cal, alpha, opt); err != nil {
			return nil, err
		}
	}
	// A class-conditional set also keeps the threshold over all classes,
	// for the anchors whose class a caller chooses not to give: taken as
	// a marginal calibration would take it, on pairs, among as many of
	// each class's as keep the classes' shares of the anchors (OverAll);
	// where too few remain for its rank it is +Inf, no error (the
	// classes' thresholds decide).
	all := scores
	var over *OverAll
	if opt.Mode == Class && pairs != nil {
		if kept, t := proportional(cal, pairs); len(kept) < len(pairs) {
			if t != nil {
				t.Name = nameOf(opt.LabelNames, t.Class)
			}
			scores = keptScores(scores, pairs, kept)
			over = &OverAll{N: len(scores), Trim: t}
		}
	}
	q, r, err := Quantile(scores, alpha, opt)
	if over != nil {
		if err != nil && !errors.Is(err, ErrTooFewCalibration) {
			return nil, err
		}
		over.Rank, err = r, nil
		if r, err = RankOf(opt.Mode, len(all), alpha, opt.Delta); err != nil {
			return nil, err
		}
	}
	if err != nil && !(opt.AllowInfinite && errors.Is(err, ErrTooFewCalibration)) {
		if pairs != nil {
			return nil, fmt.Errorf("%d disjoint pairs of the %d calibration anchors (their positives are other anchors, docs/calibration.md): %w", len(scores), cal.N, err)
		}
		return nil, err
	}
	var of *ClassOf
	if opt.Label != nil {
		of = &ClassOf{Label: *opt.Label, Name: nameOf(opt.LabelNames, *opt.Label)}
	}
	var tie *Tie
	if opt.Mode != Class && opt.Mode != Pooled && err == nil {
		tie = tieAt(scores, q, r)
	}
	n := unitCopies(cal, units, opt, classes)
	return &Set{Geometry: g, Threshold: q, Alpha: alpha, Classes: classes,
		Calibration: Info{Mode: opt.Mode, N: len(all), Rank: r, Seed: opt.Seed, Delta: opt.Delta, Pairs: pairs != nil, Trim: trim, OverAll: over, Anchors: cal.Digest(),
			UnitNorm: unitNorm(cal), UnitNormAnchors: unitNormAnchors(cal), Class: of, OneLabel: opt.OneLabel,
			Tie: tie, Copies: n}}, nil
}

// unitCopies counts the calibration units of cal (units, as a calibration
// with opt scored them; of class opt.Label alone, where given), that repeat
// another exactly (copies), and each class's own among classes (a
// class-conditional calibration's, counted within the class); 0 for a
// pooled calibration, which has no guarantee to lose, and for embeddings
// of few values (quantised), whose units repeat by chance as often as
// their law makes them: those repeats are exchangeable draws, not records
// exported twice.
func unitCopies(cal *bundle.Bundle, units [][2]int, opt Options, classes []ClassThreshold) int {
	if opt.Mode == Pooled {
		return 0
	}
	if opt.Label != nil && cal.Labels != nil {
		units = slices.DeleteFunc(slices.Clone(units), func(u [2]int) bool { return cal.Labels[u[0]] != *opt.Label })
	}
	if quantised(cal, units) {
		return 0
	}
	if len(classes) > 0 {
		byClass := map[int64][][2]int{}
		for _, u := range units {
			l := cal.Labels[u[0]]
			byClass[l] = append(byClass[l], u)
		}
		for i := range classes {
			classes[i].Copies = copies(cal, byClass[classes[i].Label])
		}
	}
	return copies(cal, units)
}

// OverAll is how a class-conditional set's threshold over all classes was
// taken on disjoint pairs where keeping the classes' shares left some out
// (Info.OverAll): among N of the pairs, at rank Rank (> N: +Inf, which
// only a judgement over all classes sees), with the Trim when a tenth or
// more were left out.
type OverAll struct {
	N    int   `json:"n"`
	Rank int   `json:"rank"`
	Trim *Trim `json:"trim,omitempty"`
}

// keptScores are the scores of the pairs kept, a subsequence of pairs in
// order (proportional), scores[u] pairs[u]'s.
func keptScores(scores []float64, pairs, kept [][2]int) []float64 {
	out := make([]float64, 0, len(kept))
	k := 0
	for u, p := range pairs {
		if k < len(kept) && kept[k] == p {
			out = append(out, scores[u])
			k++
		}
	}
	return out
}

// labelScores are the calibration scores of cal's anchors of class label
// alone (Options.Label), each scored as the whole bundle's calibration
// scored it.
func labelScores(scores []float64, pairs [][2]int, cal *bundle.Bundle, label int64, opt Options) ([]float64, error) {
	name := strconv.FormatInt(label, 10)
	if label >= 0 && label < int64(len(opt.LabelNames)) {
		name = strconv.Quote(opt.LabelNames[label])
	}
	switch {
	case opt.Mode == Class || opt.Mode == Pooled:
		return nil, fmt.Errorf("conformal: the anchors of class %s alone take one threshold, from one positive each: a %s calibration has another", name, opt.Mode)
	case cal.Labels == nil:
		return nil, noLabels(cal)
	case pairs != nil:
		return nil, fmt.Errorf("conformal: the anchors of class %s alone: the bundle's positives are its own anchors, calibrated on disjoint pairs of the whole split, which one class's anchors would not keep: calibrate every class at once (Mode Class)", name)
	}
	var out []float64
	for i, l := range cal.Labels {
		if l == label {
			out = append(out, scores[i])
		}
	}
	if out == nil {
		return nil, fmt.Errorf("conformal: the calibration bundle has no anchor of class %s", name)
	}
	return out, nil
}
