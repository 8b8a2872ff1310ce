package conformal

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/suggest"
)

// ClassThreshold is one class's threshold of a class-conditional
// (Mondrian) set: the rank among the class's own n calibration scores, one
// positive per anchor of the class.
type ClassThreshold struct {
	Label int64 `json:"label"`
	// Name is the class's string label, when the calibration bundle's
	// labels were strings (Options.LabelNames); "" otherwise.
	Name      string  `json:"name,omitempty"`
	N         int     `json:"n"`
	Rank      int     `json:"rank"`
	Threshold float64 `json:"-"` // +Inf when Rank > N
	// Tie says that the class's threshold equals its calibration scores
	// above its rank (Info.Tie); nil otherwise.
	Tie *Tie `json:"tie,omitempty"`
	// Copies is how many of the class's calibration units repeat another
	// of them exactly (Info.Copies), which ForClass's set of the class
	// says; 0 otherwise.
	Copies int `json:"copies,omitempty"`
}

// String names the class as messages do: class "coat" when it has a
// name, class 3 otherwise.
func (c ClassThreshold) String() string { return className(c.Label, c.Name) }

// className is class "name", or class l without a name.
func className(l int64, name string) string {
	if name != "" {
		return fmt.Sprintf("class %q", name)
	}
	return fmt.Sprintf("class %d", l)
}

// ClassNames are the names of a class-conditional set's classes, label i
// named ClassNames()[i] (a label without a class of the set named by its
// number), or nil when its classes have no names.
func (s *Set) ClassNames() []string {
	var names []string
	for _, c := range s.Classes {
		if c.Name == "" || c.Label < 0 || c.Label >= int64(len(s.Classes))+1<<16 {
			return nil
		}
		for int64(len(names)) <= c.Label {
			names = append(names, strconv.Itoa(len(names)))
		}
		names[c.Label] = c.Name
	}
	return names
}

// nameOf is label l's name among names (label i is names[i]), or "".
func nameOf(names []string, l int64) string {
	if l >= 0 && l < int64(len(names)) {
		return names[l]
	}
	return ""
}

// NoLabelsMessage refuses class-conditional calibration on a bundle
// without labels, saying what gives them and what calibrates without.
const NoLabelsMessage = "conformal: class-conditional calibration needs the calibration bundle's labels, and it has none: a threshold is one per label — bundle with labels (ccs bundle -labels FILE; labels= in Python; relevance pairs have none), or calibrate over every anchor (-calibration one)"

// SeveralLabelsMessage refuses class-conditional calibration (and one
// class's calibration) on a bundle of several labels a row, whose anchors
// have no one label, saying why a label's threshold cannot be calibrated
// on it and what gives one (docs/decisions.md, "Label-conditional
// calibration with several labels a row").
const SeveralLabelsMessage = "conformal: " + SeveralLabelsReason

// SeveralLabelsReason is SeveralLabelsMessage without its package prefix,
// for a command or a C API refusal that names its own flag and file.
const SeveralLabelsReason = "class-conditional calibration needs one label an anchor, and this bundle gives several a row (the rows are their own queries, related by the labels they share): " +
	"a label's threshold would be calibrated on its anchors' positives that share it, and an anchor's k positives, drawn among the rows that share any of its labels, " +
	"hold one that shares a given label with a chance that falls as the anchor's other labels grow, so those units are not exchangeable with a test anchor of the label " +
	"(its coverage fell to 86% at α = 0.1 on synthetic data: docs/decisions.md). " +
	"For each label's coverage under one threshold: evaluate -per-class, coverage-check -per-class (per_class=True in Python); " +
	"for one label's guarantee, bundle that label's rows alone — ccs bundle -labels FILE -one-label NAME (ccs.bundle(X, M, one_label=NAME)): they are the queries, each one's positives the other rows carrying it — " +
	"and calibrate on its cal split, one set a label; " +
	"an anchor with several labels takes the largest of its labels' thresholds, which covers each label's positives with that label's guarantee"

// noLabels is the refusal of a class-conditional calibration on cal,
// which has no labels: SeveralLabelsMessage where it gives several a row,
// NoLabelsMessage otherwise.
func noLabels(cal *bundle.Bundle) error {
	if cal.SeveralLabels() {
		return errors.New(SeveralLabelsMessage)
	}
	return errors.New(NoLabelsMessage)
}

// CheckClasses reports the first class of cal (in label order) with too
// few calibration units (anchors, or DisjointPairs) for a class-conditional set at level α (with
// PAC's δ > 0), its set would be the whole space, and the others that
// have too few (their counts). The error names the
// class (by its name in names, when given; label i is names[i]), wraps a
// *TooFewError and so is ErrTooFewCalibration (errors.Is). It lets a
// caller refuse such a calibration before any work.
func CheckClasses(cal *bundle.Bundle, alpha, delta float64, names []string) error {
	if cal.Labels == nil {
		return noLabels(cal)
	}
	pairs, units := DisjointPairs(cal), "calibration anchors"
	if pairs != nil {
		units = "disjoint calibration pairs (an anchor and one of its positives, no anchor in two: docs/calibration.md)"
	}
	counts := map[int64]int{}
	for _, l := range cal.Labels {
		counts[l] = 0 // a class of anchors but no pair is counted, as 0
	}
	for _, l := range unitLabels(cal, pairs) {
		counts[l]++
	}
	var first error
	var others []string // the other classes short of it, so that one fix does for all
	for _, l := range slices.Sorted(maps.Keys(counts)) {
		r, err := RankOf(classRankMode(delta), counts[l], alpha, delta)
		if err != nil {
			return err
		}
		switch {
		case r <= counts[l]:
		case first == nil:
			first = fmt.Errorf("%s has %d %s: %w", className(l, nameOf(names, l)), counts[l], units,
				&TooFewError{N: counts[l], Rank: r, Alpha: alpha, Delta: delta})
		default:
			others = append(others, fmt.Sprintf("%s (%d)", className(l, nameOf(names, l)), counts[l]))
		}
	}
	if first != nil {
		return moreTooFew(first, others)
	}
	return nil
}

// ErrNoLabel reports a class-conditional set asked about an anchor whose
// class it does not know: membership, scores against the threshold,
// retrieval and OOD scores of such a set need the anchor's label. It is
// the one refusal every caller reports (errors.Is).
var ErrNoLabel = errors.New("conformal: the set is class-conditional: its threshold depends on the anchor's class, so it needs the anchor's label")

// OODOneThreshold is what a class-conditional set refused an OOD score
// (ErrNoLabel) is told: the score divides by one threshold, and an OOD
// input has no class; a set of one threshold calibrated on the same split
// gives it.
const OODOneThreshold = `the OOD scores divide by one threshold, and an OOD input has no class: calibrate a set of one threshold on the same split for them (ccs calibrate without -calibration class, with -ood-cal FILE -reference N for the per-input test; calibration="one" in Python)`

// ErrLabel reports a label given to a set with one threshold.
var ErrLabel = errors.New("conformal: the set has one threshold: it takes no label")

// calibrateClasses computes the per-class thresholds (Mondrian
// calibration) from the calibration units' scores (unitScores in mode
// Class: each anchor with one positive, the same as OnePerAnchor's with
// the same seed, or every one of the DisjointPairs), at level α with the
// marginal rank, or PAC's with δ > 0. A class too small for its rank gets
// +Inf when allowInfinite, else the error names the class (by its name in
// opt.LabelNames, if any).
func calibrateClasses(scores []float64, pairs [][2]int, cal *bundle.Bundle, alpha float64, opt Options) ([]ClassThreshold, error) {
	byClass := map[int64][]float64{}
	for u, l := range unitLabels(cal, pairs) {
		byClass[l] = append(byClass[l], scores[u])
	}
	anchors := map[int64]int{}
	for _, l := range cal.Labels {
		if anchors[l]++; byClass[l] == nil {
			return nil, fmt.Errorf("%s: its calibration anchors hold no disjoint pair of an anchor and one of its positives", className(l, nameOf(opt.LabelNames, l)))
		}
	}
	var out []ClassThreshold
	var first error
	var others []string // the other classes too small, so that one fix does for all
	for _, l := range slices.Sorted(maps.Keys(byClass)) {
		s := byClass[l]
		q, r, err := Quantile(s, alpha, Options{Mode: classRankMode(opt.Delta), Delta: opt.Delta})
		name := nameOf(opt.LabelNames, l)
		switch {
		case err == nil || opt.AllowInfinite && errors.Is(err, ErrTooFewCalibration):
		case first != nil && errors.Is(err, ErrTooFewCalibration):
			others = append(others, fmt.Sprintf("%s (%d)", className(l, name), len(s)))
			continue
		case first != nil:
			continue
		case pairs != nil:
			// The need is in pairs; a user counts anchors: about as many
			// more as the class's anchors a pair (14 anchors, 7 pairs: 9
			// pairs is about 18 anchors).
			var few *TooFewError
			more := ""
			if errors.As(err, &few) && few.Need() > 0 && len(s) > 0 {
				more = fmt.Sprintf(" — about %d calibration anchors of the class, at its %.1f anchors a pair", int(math.Ceil(float64(few.Need())*float64(anchors[l])/float64(len(s)))), float64(anchors[l])/float64(max(len(s), 1)))
			}
			first = fmt.Errorf("%s (%d disjoint pairs of its %d calibration anchors): %w%s", className(l, name), len(s), anchors[l], err, more)
			continue
		default:
			first = fmt.Errorf("%s: %w", className(l, name), err)
			continue
		}
		out = append(out, ClassThreshold{Label: l, Name: name, N: len(s), Rank: r, Threshold: q, Tie: tieAt(s, q, r)})
	}
	if first != nil {
		return nil, moreTooFew(first, others)
	}
	return out, nil
}

// moreTooFew adds to the refusal first the other classes too small for
// their rank (each "class NAME (n)"), the first ten of them named.
func moreTooFew(first error, others []string) error {
	more := len(others)
	switch {
	case more == 0:
		return first
	case more == 1:
		return fmt.Errorf("%w; 1 more class has too few too: %s", first, others[0])
	case more > 10:
		others = append(others[:10], "…")
	}
	return fmt.Errorf("%w; %d more classes have too few too: %s", first, more, strings.Join(others, ", "))
}

// unitLabels is each calibration unit's class, its anchor's: the labels
// themselves when the units are the anchors (pairs nil).
func unitLabels(cal *bundle.Bundle, pairs [][2]int) []int64 {
	if pairs == nil {
		return cal.Labels
	}
	out := make([]int64, len(pairs))
	for u, p := range pairs {
		out[u] = cal.Labels[p[0]]
	}
	return out
}

// DisjointPairs are the calibration units of a class-conditional set on a
// bundle whose positives are its own anchors (positive_index into the
// anchors, no positive_pool: ccs bundle's label bundles): disjoint
// (anchor, positive) pairs, each pair's positive one of the anchor's own
// listed positives, no anchor in two pairs — (i, a) is anchor i with its
// a-th positive. It is nil for any other bundle, whose units are its
// anchors, one positive each.
//
// One positive per anchor makes anchors share items there: anchor i's
// positive j is an anchor whose own score may involve i, and every score
// of a class comes from the one pool of its items in the split. The scores
// are then not exchangeable with a test anchor's, drawn from another pool,
// and small classes fell short of 1 − α (docs/calibration.md measures it);
// disjoint pairs are exchangeable units again, a little under half as
// many as the anchors (0.47 with k = 5). The pairs are chosen greedily in the bundle's order (its split
// was drawn at random), each anchor taking its first listed positive not
// yet in a pair: they depend on the bundle alone, never on the embeddings'
// values or on a seed.
func DisjointPairs(cal *bundle.Bundle) [][2]int {
	if cal.PositiveIndex == nil || cal.PositivePool != nil || cal.K == 0 {
		return nil
	}
	used := make([]bool, cal.N)
	var pairs [][2]int
	for i := range cal.N {
		if used[i] {
			continue
		}
		for a := range cal.K {
			j := int(cal.PositiveIndex[i*cal.K+a])
			if j != i && !used[j] && (cal.Labels == nil || cal.Labels[j] == cal.Labels[i]) {
				used[i], used[j] = true, true
				pairs = append(pairs, [2]int{i, a})
				break
			}
		}
	}
	return pairs
}

// Units is the number of calibration scores one positive per anchor
// takes from cal (Scores, OnePerAnchor): its anchors, or, where its
// positives are its own anchors, its disjoint pairs kept in the classes'
// shares. It reads the bundle's indices and labels alone
// (bundle.Plan.Indexed gives them without the rows).
func Units(cal *bundle.Bundle) int {
	if pairs, _ := calibrationPairs(cal, OnePerAnchor); pairs != nil {
		return len(pairs)
	}
	return cal.N
}

// calibrationPairs are the units of a calibration of cal in mode (but
// pooled) where its positives are its own anchors: its DisjointPairs, as
// many of each class's as keep the classes' shares but per class (trim
// says when that left out many); nil where its units are its anchors.
func calibrationPairs(cal *bundle.Bundle, mode Mode) ([][2]int, *Trim) {
	pairs := DisjointPairs(cal)
	if pairs == nil || mode == Class {
		return pairs, nil
	}
	return proportional(cal, pairs)
}

// Inspect is what ccs bundle and ccs.bundle check of a plan and its rows
// before writing a bundle: plan.Inspect (the rows' own warnings, and
// CheckRows's error), and FewUnitsWarning of its calibration split, added
// to plan.Warnings.
func Inspect(plan *bundle.Plan, rows, queries []float32, d int) error {
	if err := plan.Inspect(rows, queries, d); err != nil {
		return err
	}
	// A plan without a calibration split (its share 0: calibrated
	// elsewhere) has none to warn of.
	if cal, err := plan.Indexed(bundle.Cal); err == nil {
		if w := FewUnitsWarning(cal); w != "" {
			plan.Warnings = append(plan.Warnings, w)
		}
	}
	return nil
}

// FewUnitsWarning is what ccs bundle says of a calibration split of fewer
// than 100 calibration scores (Units), where α's reach is coarse: the
// smallest α with a finite threshold, and the rank α = 0.05 takes; ""
// from 100 on.
func FewUnitsWarning(cal *bundle.Bundle) string {
	all := DisjointPairs(cal)
	n := cal.N
	if all != nil {
		kept, _ := proportional(cal, all)
		n = len(kept)
	}
	if n >= 100 || n < 1 {
		return ""
	}
	what := fmt.Sprintf("%d calibration scores", n)
	switch {
	case all != nil && len(all) > n:
		what += fmt.Sprintf(" (its %d anchors' disjoint pairs of an anchor and a positive, %d of %d kept to keep the classes' shares: docs/calibration.md)", cal.N, n, len(all))
	case all != nil:
		what += fmt.Sprintf(" (its %d anchors' disjoint pairs of an anchor and a positive: docs/calibration.md)", cal.N)
	}
	at := "no finite threshold at α = 0.05 (it needs 19)"
	if r, err := Rank(n, 0.05); err == nil && r <= n {
		at = fmt.Sprintf("α = 0.05 takes the score of rank %d of them, counted from the smallest", r)
	}
	return fmt.Sprintf("the calibration split gives %s: a finite threshold needs α ≥ 1/(n+1) = %.3g, %s, and α = 0.01 needs 99; more items, or a larger calibration share (-split; split= in Python), give more", what, 1/float64(n+1), at)
}

// proportional keeps of each class's pairs (in order) ⌊ρ·m⌋, m the class's
// anchors and ρ the smallest share of pairs to anchors among the classes
// that have pairs, so that the classes weigh in the units as in the
// anchors, and so in a test split: the share of anchors that pair differs
// from class to class (0.48 of 10 anchors, 0.465 of 1 000 with k = 5;
// more where positives repeat), and taking every pair made a marginal
// set's coverage a mixture of the classes' in the wrong proportions. Pairs
// without labels are kept. When that leaves out a tenth of the pairs or
// more, trim says so and names the class whose share set ρ (nil
// otherwise).
func proportional(cal *bundle.Bundle, pairs [][2]int) (out [][2]int, trim *Trim) {
	if cal.Labels == nil {
		return pairs, nil
	}
	anchors, made := map[int64]int{}, map[int64]int{}
	for _, l := range cal.Labels {
		anchors[l]++
	}
	for _, p := range pairs {
		made[cal.Labels[p[0]]]++
	}
	// ρ = made[limit]/anchors[limit], compared and applied in integers:
	// in floating point ⌊(1/49)·49⌋ is 0, which left the class that sets ρ
	// without the pair it has.
	limit, first := int64(0), true
	for _, l := range slices.Sorted(maps.Keys(made)) {
		if first || made[l]*anchors[limit] < made[limit]*anchors[l] {
			limit, first = l, false
		}
	}
	kept := map[int64]int{}
	out = make([][2]int, 0, len(pairs))
	for _, p := range pairs {
		l := cal.Labels[p[0]]
		if kept[l] < made[limit]*anchors[l]/anchors[limit] {
			kept[l]++
			out = append(out, p)
		}
	}
	if 10*(len(pairs)-len(out)) >= len(pairs) {
		trim = &Trim{Pairs: len(pairs), Class: limit, Anchors: anchors[limit], ClassPairs: made[limit]}
	}
	return out, trim
}

// Trim records a marginal or PAC calibration on disjoint pairs that left
// out a tenth of them or more to keep the classes' shares of the anchors
// (proportional): a small class whose anchors seldom pair sets the share
// for all.
type Trim struct {
	Pairs      int    `json:"pairs"`          // disjoint pairs found; Info.N of them kept
	Class      int64  `json:"class"`          // the class with the smallest share of pairs to anchors
	Name       string `json:"name,omitempty"` // its name, for string labels
	Anchors    int    `json:"anchors"`        // its calibration anchors
	ClassPairs int    `json:"class_pairs"`    // its disjoint pairs
}

// classRankMode is the rank rule of a class-conditional set: marginal, or
// PAC with δ > 0.
func classRankMode(delta float64) Mode {
	if delta > 0 {
		return PAC
	}
	return OnePerAnchor
}

// ClassConditional reports whether the set has one threshold per class.
func (s *Set) ClassConditional() bool { return s.Calibration.Mode == Class }

// OverAllClasses is a class-conditional set judged with its threshold over
// all classes (marginal, or PAC's with its δ), its classes dropped: for
// anchors whose class is unknown, with no class-conditional guarantee. Its
// calibration is the threshold's own (Info.OverAll's units, rank and
// trim, where the calibration kept them). A shallow copy: the geometry is
// shared.
func (s *Set) OverAllClasses() *Set {
	m := *s
	m.Calibration.Mode, m.Classes = OnePerAnchor, nil
	if s.Calibration.Delta > 0 {
		m.Calibration.Mode = PAC
	}
	if o := s.Calibration.OverAll; o != nil {
		m.Calibration.N, m.Calibration.Rank, m.Calibration.Trim, m.Calibration.OverAll = o.N, o.Rank, o.Trim, nil
		m.overAll = true
	}
	return &m
}

// ThresholdOf is the threshold for an anchor whose class is *label: its
// class's for a class-conditional set, which needs the label (ErrNoLabel),
// the set's threshold for a set with one, which takes none (ErrLabel). An
// uncalibrated set has none (ErrNotCalibrated).
func (s *Set) ThresholdOf(label *int64) (float64, error) {
	switch {
	case !s.Calibrated():
		return math.NaN(), ErrNotCalibrated
	case s.ClassConditional() && label == nil:
		return math.NaN(), ErrNoLabel
	case !s.ClassConditional() && label != nil:
		return math.NaN(), ErrLabel
	case label == nil:
		return s.Threshold, nil
	}
	return s.ThresholdFor(*label)
}

// LabelNamed is the label of the class named name, for a class-conditional
// set calibrated on string labels (ClassThreshold.Name): what a client
// that knows its anchor's class by name gives ThresholdOf. A set with one
// threshold takes no label (ErrLabel); a set whose classes have no names,
// or none of this name, is an error listing its classes.
func (s *Set) LabelNamed(name string) (int64, error) {
	if !s.ClassConditional() {
		return 0, ErrLabel
	}
	named := false
	for _, c := range s.Classes {
		if c.Name == name {
			return c.Label, nil
		}
		named = named || c.Name != ""
	}
	if !named {
		return 0, fmt.Errorf("conformal: no class is named %q: the set was calibrated on integer labels, give the anchor's label as one (the set's classes: %s)", name, s.classList())
	}
	mean := ""
	near, ok := suggest.Nearest(name, s.classNames())
	if !ok {
		near, ok = containing(name, s.classNames())
	}
	if ok {
		mean = fmt.Sprintf(": did you mean %q?", near)
	}
	return 0, fmt.Errorf("conformal: no class is named %q (the set's classes: %s)%s", name, s.classList(), mean)
}

// containing is the one name among names that holds name (3 characters
// or more), case aside: "gdpr" for "gdpr_request"; false when none or
// several do.
func containing(name string, names []string) (string, bool) {
	if utf8.RuneCountInString(name) < 3 {
		return "", false
	}
	found, n := "", 0
	for _, c := range names {
		if strings.Contains(strings.ToLower(c), strings.ToLower(name)) {
			found, n = c, n+1
		}
	}
	return found, n == 1
}

// classNames are the names of the set's classes that have one.
func (s *Set) classNames() []string {
	var names []string
	for _, c := range s.Classes {
		if c.Name != "" {
			names = append(names, c.Name)
		}
	}
	return names
}

// OneThreshold returns nil for a set with one threshold and ErrNoLabel for
// a class-conditional one: what a caller with no label to give checks (the
// per-input OOD score, retrieval, coverage over resplits).
func (s *Set) OneThreshold() error {
	if s.ClassConditional() {
		return ErrNoLabel
	}
	return nil
}

// ThresholdFor is the threshold for an anchor of class label: its class's
// for a class-conditional set (a class the calibration never saw is an
// error), the set's threshold otherwise.
func (s *Set) ThresholdFor(label int64) (float64, error) {
	if !s.ClassConditional() {
		return s.Threshold, nil
	}
	i, err := s.classIndex(label)
	if err != nil {
		return math.NaN(), err
	}
	return s.Classes[i].Threshold, nil
}

// classIndex is the index in s.Classes of class label, or an error naming
// the set's classes where the calibration never saw it.
func (s *Set) classIndex(label int64) (int, error) {
	i, ok := slices.BinarySearchFunc(s.Classes, label, func(c ClassThreshold, l int64) int { return cmp.Compare(c.Label, l) })
	if !ok {
		return 0, fmt.Errorf("conformal: class %d has no threshold: the calibration bundle had no anchor of it (the set's classes: %s); a class-conditional set judges the classes it was calibrated on alone: leave this class's anchors out, or calibrate on a split that holds it", label, s.classList())
	}
	return i, nil
}

// classList names a class-conditional set's classes for a message: each
// label, with its name when it has one, the first eight and how many.
func (s *Set) classList() string {
	var b strings.Builder
	for i, c := range s.Classes {
		if i == 8 && len(s.Classes) > 10 { // ten are listed whole
			fmt.Fprintf(&b, ", … %d in all", len(s.Classes))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if fmt.Fprint(&b, c.Label); c.Name != "" {
			fmt.Fprintf(&b, " %q", c.Name)
		}
	}
	return b.String()
}

// checkClasses validates a class-conditional set's classes as read from a
// file: sorted distinct labels, distinct names (where they have names),
// each rank the rule's for its n, each threshold +Inf exactly when the
// rank exceeds n.
func checkClasses(cs []ClassThreshold, alpha, delta float64) error {
	if len(cs) == 0 {
		return fmt.Errorf("a class-conditional set needs classes")
	}
	named := make(map[string]int, len(cs)) // a name's class
	for i, c := range cs {
		if i > 0 && c.Label <= cs[i-1].Label {
			return fmt.Errorf("classes[%d]: label %d after %d: want distinct labels in increasing order", i, c.Label, cs[i-1].Label)
		}
		// A name given twice: the anchors the name gives the class of
		// are judged with the first class's threshold, the second never.
		if j, ok := named[c.Name]; ok && c.Name != "" {
			return fmt.Errorf("classes[%d].name %q (label %d) is classes[%d]'s too (label %d): want distinct names", i, c.Name, c.Label, j, cs[j].Label)
		}
		named[c.Name] = i
		if c.N < 1 {
			return fmt.Errorf("classes[%d] (label %d): n %d, want at least 1", i, c.Label, c.N)
		}
		r, err := RankOf(classRankMode(delta), c.N, alpha, delta)
		if err != nil {
			return err
		}
		if r != c.Rank {
			return fmt.Errorf("classes[%d] (label %d): rank %d, but n = %d and alpha = %v give %d", i, c.Label, c.Rank, c.N, alpha, r)
		}
		switch t := c.Threshold; {
		case math.IsNaN(t) || t < 0:
			return fmt.Errorf("classes[%d] (label %d): threshold %v, want ≥ 0", i, c.Label, t)
		case math.IsInf(t, 1) != (c.Rank > c.N):
			return fmt.Errorf("classes[%d] (label %d): threshold %v contradicts rank %d of n = %d", i, c.Label, t, c.Rank, c.N)
		}
	}
	return nil
}

// LabelsByName renumbers labels numbered by names (label i is names[i],
// as a test bundle of string labels numbers them, in the sorted order of
// its own classes) into a class-conditional set's numbering of the same
// names, so that each anchor is judged with its own class's threshold. A
// bundle made from other rows than the calibration's (another donor,
// another site) numbers its classes otherwise wherever its set of classes
// differs — one class more or less shifts every later number — and the
// numbers alone would judge a class with another's threshold. It returns
// labels unchanged (renumbered false) for a set with one threshold, when
// the set's classes or labels have no names, or when the two numberings
// agree; a named class that the set has no threshold for is an error.
func (s *Set) LabelsByName(labels []int64, names []string) (out []int64, renumbered bool, err error) {
	own := s.ClassNames()
	if !s.ClassConditional() || own == nil || names == nil {
		return labels, false, nil
	}
	byName := make(map[string]int64, len(s.Classes))
	for _, c := range s.Classes {
		byName[c.Name] = c.Label
	}
	to := make([]int64, len(names)) // names[i]'s label in the set, -1 for none
	for i, n := range names {
		l, ok := byName[n]
		if !ok {
			l = -1
		}
		to[i] = l
	}
	out = make([]int64, len(labels))
	// Every class the set lacks, named at once: one refusal a class
	// had a user bundle again five times.
	var missing []string
	seen := map[int64]bool{}
	for _, l := range labels {
		if l >= 0 && l < int64(len(names)) && to[l] < 0 && !seen[l] {
			seen[l] = true
			missing = append(missing, names[l])
		}
	}
	if len(missing) > 1 {
		slices.Sort(missing)
		quoted := make([]string, len(missing))
		for i, n := range missing {
			quoted[i] = strconv.Quote(n)
		}
		return nil, false, fmt.Errorf("conformal: %d classes of the test bundle are not among the set's classes, so they have no threshold: %s; the set's classes: %s; leave their rows out of the test bundle (ccs bundle -ood-classes %q)",
			len(missing), strings.Join(quoted, ", "), s.classList(), strings.Join(missing, ","))
	}
	for i, l := range labels {
		if l < 0 || l >= int64(len(names)) {
			return nil, false, fmt.Errorf("conformal: label %d of row %d has no name (%d names)", l, i, len(names))
		}
		if to[l] < 0 {
			mean := ""
			if near, ok := suggest.Nearest(names[l], s.classNames()); ok {
				mean = fmt.Sprintf(" (did you mean %q?)", near)
			}
			return nil, false, fmt.Errorf("conformal: class %q (label %d of the test bundle) is not one of the set's classes, so it has no threshold%s: the set's classes: %s; leave its rows out of the test bundle (ccs bundle -ood-classes)", names[l], l, mean, s.classList())
		}
		out[i] = to[l]
		renumbered = renumbered || out[i] != l
	}
	if !renumbered {
		return labels, false, nil
	}
	return out, true, nil
}

// ForClass is the set of one threshold that a class-conditional set is for
// anchors of class label: its class's threshold, rank and number of
// calibration units, the mode its rank rule is (OnePerAnchor, or PAC with
// its δ) and the class in Info.Class — what calibrating on that class's
// anchors alone gives (Options.Label), for the callers that take one
// threshold (retrieval). A class the calibration never saw is an error
// listing the set's classes; a set with one threshold takes no label
// (ErrLabel). A shallow copy: the geometry is shared.
func (s *Set) ForClass(label int64) (*Set, error) {
	if !s.ClassConditional() {
		return nil, ErrLabel
	}
	i, err := s.classIndex(label)
	if err != nil {
		return nil, err
	}
	c := s.Classes[i]
	m := *s
	m.Classes, m.Threshold = nil, c.Threshold
	m.Calibration.Mode = classRankMode(s.Calibration.Delta)
	m.Calibration.N, m.Calibration.Rank, m.Calibration.OverAll, m.Calibration.Trim = c.N, c.Rank, nil, nil
	m.Calibration.Tie, m.Calibration.Copies = c.Tie, c.Copies // the class's own, not the whole set's
	m.Calibration.Class = &ClassOf{Label: c.Label, Name: c.Name}
	return &m, nil
}

// ClassNamed is the label given as a client gives it: an integer label as
// it is (with set a name, a label that reads as one integer and names
// another class is ambiguous and refused), a name as LabelNamed reads it.
// It is for the callers that read a label from text (a flag, a query
// parameter): ccs retrieve -label, serve's ?label=.
func (s *Set) ClassNamed(text string) (int64, error) {
	l, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return s.LabelNamed(text)
	}
	if !s.ClassConditional() {
		return 0, ErrLabel
	}
	if n, err := s.LabelNamed(text); err == nil && n != l {
		return 0, fmt.Errorf("conformal: %s reads as label %d and names class %d: give the class's label, %d, or the name of class %d", text, l, n, n, l)
	}
	return l, nil
}

// SeveralLabelsOODClassMessage refuses one class's per-input OOD test
// (ccs calibrate -ood-class, Python's ood_class=, both named by flag) on
// a bundle of several labels a row, whose anchors carry no one label,
// saying what calibrates a test instead (oodCal names the calibration
// inputs' flag).
func SeveralLabelsOODClassMessage(flag, oodCal string) string {
	return "one class's OOD test picks the calibration anchors and " + oodCal + " inputs of that class, and this bundle gives several labels a row, so its anchors carry no one label (a row may carry several): " +
		"leave " + flag + " out — the test calibrated on every in-distribution input flags each, whatever its labels, at most α_ood of the time — " +
		"or, for one label's set, bundle that label's rows alone (ccs bundle -one-label NAME; one_label= in Python) and calibrate on its splits"
}
