package conformal

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"
)

// FitInfo records how the geometry was obtained, for the file's reader.
type FitInfo struct {
	Method string  `json:"method"`          // e.g. "none", "covariance of anchor−positive differences"
	N      int     `json:"n,omitempty"`     // anchors used
	Seed   uint64  `json:"seed,omitempty"`  // seed of the split that chose them
	Ridge  float64 `json:"ridge,omitempty"` // added to Σ's diagonal
	// SharedRows says that the rows Σ was estimated on include rows whose
	// scores set the threshold: the halves of a calibration bundle whose
	// positives are other anchors of it (ccs bundle -labels), which ccs
	// made until 2026-12-02 and now refuses. Coverage can then fall far
	// below 1−α; Warnings says so.
	SharedRows bool `json:"shared_rows,omitempty"`
	// Differences is the number of anchor−positive differences Σ was
	// estimated on (the ellipsoid); fewer than the dimension leave Σ
	// singular but for its ridge, which Warnings says.
	Differences int `json:"differences,omitempty"`
	// Rank is the number of directions of the ellipsoid's Σ its data
	// define, the others its ridge's alone (a pivoted Cholesky
	// factorisation of Σ without the ridge, until no variance left
	// exceeds it); 0 where not measured (files made before 2026-12-02,
	// other geometries).
	Rank int `json:"rank,omitempty"`
	// Training is the training recipe and its outcome, as the trainer
	// records them (opaque here: this package imports no training code).
	Training json.RawMessage `json:"training,omitempty"`
	// Splits are the Digests of the bundles the geometry was fitted on, by
	// their role ("fit", "validation"): evaluating the set on one is no
	// test of it (OwnSplit).
	Splits map[string]string `json:"splits,omitempty"`
	// Seen holds the anchor rows of those splits (a Bloom filter): a
	// calibration split that shares many of them, the fit split of another
	// bundling of the same embeddings say, is refused although its digest
	// differs (ErrSeenSplit).
	Seen *bundle.RowFilter `json:"seen_rows,omitempty"`
	// Sources holds those anchors each with its source row (a Bloom
	// filter, bundle.NewSourceFilter), where the splits record them (ccs
	// bundle's do): rows of a calibration split equal to rows Seen holds
	// but from other source rows are the data's own exact copies — a
	// customer's repeat transactions —, which every split holds alike, not
	// rows given again.
	Sources *bundle.RowFilter `json:"seen_sources,omitempty"`
	// Embeddings names the embeddings those source rows are rows of
	// (bundle.Bundle.Embeddings: their SHA-256 in ccs bundle's manifest):
	// a calibration split's source rows are compared with Sources' only
	// under the same embeddings — a re-export in another order numbers
	// the same rows otherwise.
	Embeddings string `json:"embeddings,omitempty"`
}

// SourcesOf is the source filter of a fit set's splits bs and the
// embeddings their source rows number (FitInfo.Sources, .Embeddings),
// or nil and "" where one of them records none or they differ.
func SourcesOf(bs ...*bundle.Bundle) (*bundle.RowFilter, string) {
	emb := ""
	for _, b := range bs {
		if b == nil {
			continue
		}
		if b.Embeddings == "" || emb != "" && b.Embeddings != emb {
			return nil, ""
		}
		emb = b.Embeddings
	}
	if f := bundle.NewSourceFilter(bs...); f != nil && emb != "" {
		return f, emb
	}
	return nil, ""
}

// ErrSeenSplit reports a calibration split that the geometry was fitted
// or validated on (errors.Is): a threshold calibrated on rows the geometry
// has seen carries no guarantee.
var ErrSeenSplit = errors.New("conformal: a threshold calibrated on a split the geometry was fitted on has no guarantee")

// checkUnseen refuses the split of digest d (bundle.Digest) when it is
// one of the splits f records the geometry was fitted or validated on
// (ErrSeenSplit, naming the role). A nil f, or one that records no
// splits, refuses nothing.
func (f *FitInfo) checkUnseen(d string) error {
	if f == nil {
		return nil
	}
	for _, role := range []string{"fit", "validation"} {
		if d != "" && f.Splits[role] == d {
			return fmt.Errorf("%w: this is its %s split; calibrate on a split it never saw (the bundles' cal split)", ErrSeenSplit, role)
		}
	}
	return nil
}

// CalibrateFitted calibrates fitted's geometry on cal (Calibrate), keeping
// how it was fitted (its Fit). cal must be none of the splits the
// geometry was fitted or validated on (ErrSeenSplit); the calibration
// records cal's digest, which that check reads.
func CalibrateFitted(fitted *Set, cal *bundle.Bundle, alpha float64, opt Options) (*Set, error) {
	if fitted == nil {
		return nil, errors.New("conformal: no fitted set (nil)")
	}
	s, err := Calibrate(fitted.Geometry, cal, alpha, opt)
	if err != nil {
		return nil, err
	}
	if err := fitted.Fit.checkUnseen(s.Calibration.Anchors); err != nil {
		return nil, err
	}
	if err := fitted.Fit.checkRows(cal); err != nil {
		return nil, err
	}
	s.Fit = fitted.Fit
	s.hadOOD = fitted.OOD != nil
	return s, nil
}

// checkRows refuses a calibration split of which a tenth of the anchors
// or more (two at least) are rows the geometry was fitted or validated on
// (FitInfo.Seen): the fit split of another bundling of the same
// embeddings (another seed or split shares) shares about as many as its
// share of the rows. Fewer are let through: duplicates in a data set, or
// the filter's false positives (about 5·10⁻⁴ of the rows).
func (f *FitInfo) checkRows(cal *bundle.Bundle) error {
	if m := f.seenRows(cal); m > 0 {
		msg := fmt.Sprintf("about %d of the %d calibration anchors are rows it was fitted or validated on — the fit split of another bundling of the same embeddings (another seed or split, or the embeddings exported again), or those rows given again; calibrate on the cal split of the bundles it was fitted on", m, cal.N)
		switch {
		case f.Embeddings == "" && cal.Embeddings != "":
			msg += " (if they are the data's own exact copies: the set records no source rows of what it was fitted on — fitted before ccs kept them, or on splits not made by ccs bundle —, so nothing tells copies from rows given again; fit the geometry again on ccs bundle's splits, or remove the copies)"
		case f.Embeddings == "" || cal.Embeddings == "":
			msg += fmt.Sprintf(" (if they are the data's own exact copies, %d among these anchors themselves: nothing tells them from rows given again where the splits are not ccs bundle's, read beside its manifest.json, which names each anchor's source row in the embeddings; make the splits with ccs bundle and fit on them, or remove the copies)", bundle.CountCopies(cal.Anchors, cal.D))
		case cal.Embeddings != f.Embeddings:
			msg += " (the calibration split numbers its rows in other embeddings than the fit splits' — another export of them? —, so its equal rows cannot be told from rows given again)"
		default:
			msg += fmt.Sprintf(" (about %d of them from the same source rows of the same embeddings as the rows it was fitted on: not the data's copies)", f.Sources.CountSources(cal))
		}
		return fmt.Errorf("%w: %s", ErrSeenSplit, msg)
	}
	return nil
}

// KeepRows records the calibration bundle's anchor rows in the set
// (Info.Rows), for OwnSplitWarning to find them in another bundle; what
// ccs calibrate does.
func (s *Set) KeepRows(cal *bundle.Bundle) {
	s.Calibration.Rows = bundle.NewRowFilter(cal)
	s.Calibration.Sources, s.Calibration.Embeddings = SourcesOf(cal)
}

// OwnSplitWarning is what a reader of the set's figures on b must know
// when b is a split the set has seen (OwnSplit), or "": its own
// calibration split is no test of the guarantee (unless recalibrated, as
// resplits do), its fit or validation split no test of anything. A bundle
// that is none of them but of which a tenth of the anchors or more are
// their rows (the test split of another bundling of the same embeddings)
// is warned of likewise, counting them.
func (s *Set) OwnSplitWarning(b *bundle.Bundle, recalibrated bool) string {
	switch role := s.OwnSplit(b); {
	case role == "":
	case role == "calibration" && recalibrated:
		return ""
	case role == "calibration" && b.PositivePool != nil:
		return "this is the set's calibration split (its anchors, the same queries in the same order): with the calibration's positives its coverage is near 1−α by construction, no test of the guarantee; " + laterPositives
	case role == "calibration":
		return "this is the set's calibration split: its coverage is near 1−α by construction, no test of the guarantee; evaluate on the test split"
	default:
		return fmt.Sprintf("this is the %s split the set's geometry was fitted on: its figures are optimistic, no test; evaluate on the test split", role)
	}
	if m := s.Fit.seenRows(b); m > 0 {
		return fmt.Sprintf("about %d of its %d anchors are rows the set's geometry was fitted or validated on (another bundling of the same embeddings?): its figures are optimistic, no test; evaluate on the test split of the bundles it was fitted on", m, b.N)
	}
	if !recalibrated {
		m := manyOf(s.Calibration.Rows, b)
		if m > 0 && copiesOnly(s.Calibration.Sources, s.Calibration.Embeddings, b, m) {
			m = 0 // the data's own copies of calibration rows, from other source rows
		}
		if m > 0 && b.PositivePool != nil {
			return fmt.Sprintf("about %d of its %d anchors are queries of the set's calibration split: with the calibration's positives its coverage is pulled toward 1−α by construction, no test of the guarantee; %s", m, b.N, laterPositives)
		} else if m > 0 {
			w := fmt.Sprintf("about %d of its %d anchors are rows of the set's calibration split (another bundling of the same embeddings?): its coverage is pulled toward 1−α by construction, no test of the guarantee; evaluate on the test split of the bundles it was calibrated with", m, b.N)
			if s.Calibration.Sources == nil || b.Index == nil || b.Embeddings == "" {
				w += " (if that is this split and they are the data's own exact copies: nothing here tells them from rows given again — the set keeps its calibration anchors' source rows only where calibrated by this ccs on ccs bundle's splits, and the split must record its own —; calibrate again so, or remove the copies)"
			}
			return w
		}
	}
	return ""
}

// laterPositives is what a bundle of queries with relevant rows (a
// positive pool) measures when its anchors are the set's calibration
// queries with other positives: a recommender's users calibrated on one
// time window and judged on the next are the same anchors, and their
// coverage is then no calibration by construction (a user's walk-through:
// 77% at α = 0.1, the check's probability 4·10⁻⁸²).
const laterPositives = "with other positives of the same queries (their later interactions: a time split of one set of users) it tests those queries again, not new ones; " +
	"for the guarantee, evaluate on queries the set was not calibrated on (the test split of the bundles it was calibrated with)"

// manyOf is how many of b's anchors the filter f holds when they are
// many: a tenth or more, two at least; else 0 (and for a nil f). Fewer
// are duplicates in a data set, or the filter's false positives (about
// 5·10⁻⁴ of the rows).
func manyOf(f *bundle.RowFilter, b *bundle.Bundle) int {
	if f == nil {
		return 0
	}
	if m := f.Count(b); m >= 2 && 10*m >= b.N {
		return m
	}
	return 0
}

// seenRows is how many of b's anchors are rows the geometry was fitted or
// validated on (FitInfo.Seen), when they are many (manyOf); else 0.
func (f *FitInfo) seenRows(b *bundle.Bundle) int {
	if f == nil {
		return 0
	}
	m := manyOf(f.Seen, b)
	if m > 0 && f.copiesOnly(b, m) {
		return 0
	}
	return m
}

// copiesOnly reports whether the m anchors of b equal to rows the set was
// fitted on are the data's own exact copies: b's source rows number the
// same embeddings as the fit splits' (Embeddings: one manifest's digest),
// and hardly any of b's anchors — a fiftieth of the m, where the filter's
// false positives are 5·10⁻⁴ — is a fit row from the same source row,
// which another bundling of the same embeddings shares by the share of its
// rows. Under other embeddings (a re-export in another order numbers the
// same rows otherwise), or where either side records none, nothing tells
// copies from rows given again.
func (f *FitInfo) copiesOnly(b *bundle.Bundle, m int) bool {
	return copiesOnly(f.Sources, f.Embeddings, b, m)
}

// copiesOnly is FitInfo.copiesOnly for any rows kept with their source
// rows: sources (bundle.NewSourceFilter) of rows numbered in the
// embeddings emb, of which m of b's anchors equal rows by value.
func copiesOnly(sources *bundle.RowFilter, emb string, b *bundle.Bundle, m int) bool {
	return sources.OnlyCopies(emb, b, m)
}

// OwnSplit says which of the splits the set was fitted or calibrated on b
// is ("calibration", "fit", "validation"), by its anchors' Digest, or ""
// for a bundle the set has not seen (or a set that does not record them).
func (s *Set) OwnSplit(b *bundle.Bundle) string {
	d := b.Digest()
	if s.Calibration.Anchors == d {
		return "calibration"
	}
	if s.Fit != nil {
		for _, role := range []string{"fit", "validation"} {
			if s.Fit.Splits[role] == d {
				return role
			}
		}
	}
	return ""
}

// ErrNotCalibrated reports a set that has a geometry but no threshold yet.
var ErrNotCalibrated = errors.New("conformal: the set is not calibrated: calibrate it first (ccs calibrate -set; ccs.calibrate in Python; conformal.CalibrateFitted in Go)")

// Set is a fitted contrastive conformal set: a geometry, its calibrated
// threshold and the facts behind it. A point z is in the set around anchor Z
// when φ(Z − z) ≤ Threshold.
type Set struct {
	Geometry    geometry.Geometry
	Threshold   float64
	Alpha       float64
	Calibration Info
	Fit         *FitInfo
	// Reference, when not nil, is a pool of in-distribution embeddings kept
	// with the set for the per-input OOD scores (package ood).
	Reference *Reference
	// Classes, for a class-conditional set (Mode Class), are the
	// per-class thresholds, by increasing label; Threshold is then the one
	// over all anchors (no class guarantee).
	Classes []ClassThreshold
	// OOD, when not nil, calibrates the per-input OOD score on held-out
	// in-distribution inputs: what a conformal OOD test needs (package
	// ood). It comes with a Reference.
	OOD *OODCalibration
	// overAll marks a class-conditional set's judgement over all classes
	// (OverAllClasses), for its warnings' remedies.
	overAll bool
	// hadOOD marks a set calibrated again from one that carried an OOD
	// test (CalibrateFitted), which a new threshold does not keep: its
	// scores divide by the threshold (CalibrateWarnings says so unless
	// the new set has one of its own).
	hadOOD bool
	// unchecked marks a set read from a file without a checksum (written
	// by hand, by a ccs before checksums, or by a tool that dropped the
	// field): its threshold cannot be checked against calibration's.
	unchecked bool
	// file is FileChecksum's: the checksum of the file the set was read
	// from.
	file string
}

// FileChecksum names the file the set was read from (Load, Read):
// "sha256:" and 64 hex digits, the file's own checksum field as ccs wrote
// it (jq .checksum SET.json prints it), or, for a file without one, the
// SHA-256 of its bytes; "" for a set not read from a file. A service
// answers with it, so that a client can tell which file answered where a
// name and a generation number repeat across restarts and replicas.
func (s *Set) FileChecksum() string { return s.file }

// Uncalibrated returns a set that holds a fitted geometry and no threshold;
// Calibrate it before use.
func Uncalibrated(g geometry.Geometry, fit *FitInfo) *Set {
	return &Set{Geometry: g, Threshold: math.NaN(), Fit: fit}
}

// Guarantee says what the set's threshold promises, as its file does:
// "exact", "training-conditional", "class-conditional" (with ",
// training-conditional" for PAC per class) or "approximate".
func (s *Set) Guarantee() string { return guaranteeOf(s.Calibration.Mode, s.Calibration.Delta) }

// offTheMaximum is the fewest calibration scores, more than n, whose rank
// at α (and PAC's δ) is below their number; 0 when none is near.
func offTheMaximum(alpha, delta float64, n int) int {
	mode := OnePerAnchor
	if delta > 0 {
		mode = PAC
	}
	return firstOff(n+1, 4*n+100, func(m int) bool {
		r, err := RankOf(mode, m, alpha, delta)
		return err == nil && r < m
	})
}

// firstOff is the first m in [lo, hi] with off(m), or 0 when there is
// none, for an off that stays true once it is (m − rank(m) never
// decreases: one more score moves the rank by 0 or 1): a bisection, where
// a scan took seconds for a class of thousands at a small α with PAC's δ.
func firstOff(lo, hi int, off func(m int) bool) int {
	if !off(hi) {
		return 0
	}
	for lo < hi {
		if mid := lo + (hi-lo)/2; off(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Calibrated reports whether the set has a threshold.
func (s *Set) Calibrated() bool { return s.Calibration.Mode != 0 }

// Guaranteed reports whether the set carries the conformal guarantee: it
// was calibrated with one positive per calibration anchor (not pooled),
// marginally (OnePerAnchor), training-conditionally (PAC) or per class
// (Class).
func (s *Set) Guaranteed() bool { return s.Calibrated() && s.Calibration.Mode != Pooled }

// WholeSpaceReason says why a set of threshold +Inf is the whole space
// (its calibration scores too few for its α, and δ), or is "" for a
// finite threshold.
func (s *Set) WholeSpaceReason() string {
	if !math.IsInf(s.Threshold, 1) {
		return ""
	}
	c := s.Calibration
	return (&TooFewError{N: c.N, Rank: c.Rank, Alpha: s.Alpha, Delta: c.Delta}).Reason()
}

// UncheckedWarning is the warning of a set read from a file without a
// checksum.
const UncheckedWarning = "the set file has no checksum (written by hand, by a ccs before checksums, or by a tool that dropped the field): nothing checks that its threshold is the one calibration gave, and a threshold edited by hand certifies nothing; calibrate it again to write one"

// Warnings lists what a reader of this set's numbers must know: a whole-space
// set, a pooled (approximate) calibration, or an ellipsoid whose Σ shares
// rows with its calibration.
func (s *Set) Warnings() []string {
	var w []string
	if s.Alpha > 0.5 {
		w = append(w, AlphaWarning(s.Alpha))
	}
	w = append(w, s.classWarnings()...)
	if t := s.Calibration.Trim; t != nil && s.overAll {
		// Said in full where the set was calibrated (TrimWarning); here,
		// where it changes the answer, once and short.
		w = append(w, fmt.Sprintf("the threshold over all classes was taken on %d of the %d disjoint calibration pairs (every class kept %s's share: %s of %d anchors); ccs calibrate warned why and what to do (docs/calibration.md)",
			s.Calibration.N, t.Pairs, className(t.Class, t.Name), countOf(t.ClassPairs, "pair", "pairs"), t.Anchors))
	} else if t != nil {
		w = append(w, s.TrimWarning())
	}
	if c := s.Calibration; c.Mode != Class && c.Mode != Pooled && c.N > 0 && c.Rank == c.N {
		w = append(w, s.rankN(c.N, "the set"))
	}
	// A tie among copies is theirs (the copies' warning below says what
	// it costs): the tie's own says the guarantee holds, which copies
	// break.
	if c := s.Calibration; c.Mode != Class && c.Copies == 0 && c.Tie.material(c.N, c.Rank) {
		w = append(w, "the threshold "+c.Tie.coverageText(c.N, c.Rank)+"; "+tieRemedy)
	}
	if c := s.Calibration; c.Mode == PAC && !math.IsInf(s.Threshold, 1) {
		if m := pacBelowMarginal(c.N, c.Rank, s.Alpha); m > 0 {
			w = append(w, pacBelowText("the set", c.N, c.Rank, m, s.Alpha, c.Delta))
		}
	}
	if c := s.Calibration; c.Copies > 0 {
		w = append(w, CopiesWarning(c.Copies, c.N))
	}
	if reason := s.WholeSpaceReason(); reason != "" && s.Calibration.Mode != Class { // a class set's classes decide
		if c := s.Calibration.Class; c != nil { // one class's set (ForClass, -class): which
			reason = className(c.Label, c.Name) + ": " + reason
		}
		w = append(w, reason)
	}
	if v := s.VolumeWarning(); v != "" {
		w = append(w, v)
	}
	if f := s.Fit; f != nil && f.Rank > 0 && f.Rank < s.Geometry.Dim() {
		d := s.Geometry.Dim()
		w = append(w, fmt.Sprintf("Σ's data define only %d of its %d directions (from %d anchor−positive differences of %d fit anchors): the other %d are its ridge's alone, so along them the ellipsoid is a ball scaled by the ridge, and a test point off the fit data's span gets most of its score there; coverage stays guaranteed, but the shape there is not the data's: estimate Σ on more items than the dimension, or prefer the ℓ2 ball or a learned set",
			f.Rank, d, f.Differences, f.N, d-f.Rank))
	} else if f != nil && f.Rank == 0 && f.Differences > 0 && f.Differences < s.Geometry.Dim() {
		w = append(w, fmt.Sprintf("Σ was estimated on %d anchor−positive differences in dimension %d, fewer than the dimension: it is singular but for its ridge, so the ellipsoid's shape along the unseen directions is the ridge's, not the data's (coverage stays guaranteed); estimate Σ on a larger fit split", s.Fit.Differences, s.Geometry.Dim()))
	}
	if s.Fit != nil && s.Fit.SharedRows {
		w = append(w, "Σ was estimated on half of a calibration bundle whose positives are other anchors of it, so the half that set the threshold shares rows with it and coverage can fall far below 1−α (93.4% at α = 0.05 at d = 64, 46.8% at d = 768); calibrate it again with Σ from the fit split (ccs calibrate -fit, or ccs.calibrate(..., fit=))")
	}
	if c := s.OOD; c != nil && c.N > 0 && c.N < 19 {
		w = append(w, OODFewWarning(c))
	} else if c != nil && c.N > 0 {
		if t := c.TieWarning(fmt.Sprintf("α_ood = %v", DefaultOODAlpha), FlaggedRankAt(DefaultOODAlpha, c.N)); t != "" {
			w = append(w, t)
		}
	}
	if s.unchecked && s.Calibrated() {
		w = append(w, UncheckedWarning)
	}
	if s.Calibration.Mode == Pooled {
		w = append(w, "pooled calibration (all positives of each anchor): the 1−α coverage is approximate, not guaranteed — the positives of one anchor are not exchangeable with a test anchor's single positive, so when an anchor's positives share a spread the set undercovers, the more so the fewer the anchors; -calibration one gives the guarantee")
	}
	return w
}

// CalibrateWarnings are the warnings of a set where it is made (ccs
// calibrate, ccs.calibrate): its Warnings, and a class-conditional set's
// TrimWarning, which is news there and nowhere else.
func (s *Set) CalibrateWarnings() []string {
	w := s.Warnings()
	if s.ClassConditional() {
		if t := s.TrimWarning(); t != "" {
			w = append(w, t)
		}
	}
	if s.hadOOD && s.OOD == nil {
		w = append(w, "the set calibrated again carried a per-input OOD test, which is not kept: its scores divide by the threshold, which is new, and its pool and calibration inputs are not in the set; give them again (-reference N -ood-cal FILE; reference= and ood_cal=) for an OOD test")
	}
	if t := s.trainedAlpha(); t > 0 && t != s.Alpha {
		w = append(w, fmt.Sprintf("the geometry was trained for α = %v and is calibrated at α = %v: the guarantee is for %[2]v (calibration makes it), but the shape was learned for another level; ccs compare trains each row at the table's α (and the embedding recipe) — train with -alpha %[2]v (alpha=%[2]v) to deploy a compared row, or take the row's own set (compare -out's sets; Comparison.set)", t, s.Alpha))
	}
	return w
}

// trainedAlpha is the α the geometry was trained for, as the trainer's
// record in the set file keeps it (its recipe's objective); 0 where the
// file has no such record (a baseline, a file made by other code).
func (s *Set) trainedAlpha() float64 {
	if s.Fit == nil || len(s.Fit.Training) == 0 {
		return 0
	}
	var rec struct {
		Recipe struct {
			Objective struct {
				Alpha float64 `json:"alpha"`
			} `json:"objective"`
		} `json:"recipe"`
	}
	if json.Unmarshal(s.Fit.Training, &rec) != nil {
		return 0
	}
	return rec.Recipe.Objective.Alpha
}

// TrimWarning is what a calibration on disjoint pairs that kept each
// class's share of the anchors, and so left a tenth of the pairs or more
// out, says of it in full — how many were kept, the class whose share
// set it, what to do —, or "" for none. A marginal or PAC set's Warnings
// include it: it sets the threshold every answer takes. A
// class-conditional set's is its threshold's over all classes
// (Info.OverAll), which decides only for an anchor of unknown class: the
// class set's Warnings leave it out (every command that opens the set
// printed it, whether or not it judged over all classes); ccs calibrate
// prints it, where it is news, and the set judged over all classes
// (OverAllClasses), where it changes the answer, warns of it in one short
// line.
func (s *Set) TrimWarning() string {
	c := s.Calibration
	n, t := c.N, c.Trim
	remedy := "calibrate each class on all its pairs (-calibration class)"
	kept := "%d of the %d disjoint calibration pairs were kept"
	switch {
	case c.Mode == Class:
		if c.OverAll == nil {
			return ""
		}
		n, t = c.OverAll.N, c.OverAll.Trim
		kept = "the threshold over all classes, which judges anchors of no known class (-unlabeled marginal), was taken on %d of the %d disjoint calibration pairs"
		fallthrough
	case s.overAll:
		remedy = "judge anchors whose class is known by their class's threshold, which takes all its pairs (the test bundle's labels; a trial list gives none)"
	}
	if t == nil {
		return ""
	}
	return fmt.Sprintf(kept+", to keep each class's share of the anchors as a test split has it: %s has %d calibration anchors and %s, a share of %.3g, which every class then takes (docs/calibration.md); hold that class out (-ood-classes) or give it more calibration anchors, or %s",
		n, t.Pairs, className(t.Class, t.Name), t.Anchors, countOf(t.ClassPairs, "pair", "pairs"), float64(t.ClassPairs)/float64(t.Anchors), remedy)
}

// OODFewWarning is what a set says of a per-input OOD test calibrated on
// fewer than 19 inputs: its smallest p-value, 1/(n+1), is above 0.05, so
// α_ood = 0.05 cannot be certified and is refused when inputs are judged
// (ccs calibrate's output says the same limit for every n).
func OODFewWarning(c *OODCalibration) string {
	return fmt.Sprintf("the per-input OOD test is calibrated on %d inputs (%s): it certifies α_ood ≥ 1/(n+1) = %.4g alone, so α_ood = 0.05 cannot be certified (it needs 19 inputs; α_ood = 0.01 needs 99) and judging inputs at it is refused; calibrate it on more held-out in-distribution inputs (a larger ood-cal share: -ood-cal-share; ood_cal_share= in Python)",
		c.N, c.Source, 1/float64(c.N+1))
}

// AlphaWarning is what a set says of an α above one half, legal but
// seldom meant: α is the share of positives the set may miss, and α =
// 0.95 asks for 5% coverage (read as a confidence level, it is 0.05).
func AlphaWarning(alpha float64) string {
	return fmt.Sprintf("α = %v: the set is guaranteed to cover only 1 − α = %.3g%% of positives; α is the share it may miss (0.05 for 95%% coverage), not the coverage", alpha, 100*(1-alpha))
}

// Contains reports whether point is inside the set around anchor (of
// class *label for a class-conditional set, nil for a set with one
// threshold: ThresholdOf), both embeddings of the set's dimension: the
// score φ(anchor − point) at most the threshold. An uncalibrated set is
// ErrNotCalibrated; embeddings of another dimension, or with a NaN or
// infinite coordinate, are an error.
func (s *Set) Contains(anchor, point []float32, label *int64) (bool, error) {
	if !s.Calibrated() {
		return false, ErrNotCalibrated
	}
	if err := s.hasGeometry(); err != nil {
		return false, err
	}
	d := s.Geometry.Dim()
	if len(point) != d {
		return false, DimErrorf("point", []int{len(point)}, d, "conformal: a point of %d values, the set's dimension is %d", len(point), d)
	}
	in, err := s.Members(make([]bool, 1), anchor, point, label)
	if err != nil {
		return false, err
	}
	return in[0], nil
}

// Members writes into dst (allocated when nil) whether each of points
// (rows of the set's dimension) is inside the set around anchor, as
// Contains decides, on all cores: geometries with a fast score are scored
// fast from the anchor and the points and rescored exactly only near the
// threshold (geometry.MembersAround). An uncalibrated set is
// ErrNotCalibrated; an anchor or points of another dimension
// (ErrDimension), a dst of another length, a NaN or infinite coordinate,
// or, for a set calibrated on unit-norm embeddings, an anchor or point
// not of unit norm (CheckNorms: a *NormError) are an error.
func (s *Set) Members(dst []bool, anchor, points []float32, label *int64) ([]bool, error) {
	q, err := s.ThresholdOf(label)
	if err != nil {
		return nil, err
	}
	n, err := s.checkQuery(anchor, points)
	if err != nil {
		return nil, err
	}
	d := s.Geometry.Dim()
	if dst == nil {
		dst = make([]bool, n)
	}
	if len(dst) != n {
		return nil, fmt.Errorf("conformal: an output of %d for %d points", len(dst), n)
	}
	const block = 1024
	around := geometry.MembersAroundFor(s.Geometry, n) // a few points: not worth an ellipsoid's L⁻¹
	var bad atomic.Int64                               // 1 + the first point a NaN or infinite score came from
	parallel.For(n, block, 0, func(_, lo, hi int) {
		scores := make([]float64, hi-lo)
		around(s.Geometry, q, anchor, points[lo*d:hi*d], dst[lo:hi], scores)
		for i, v := range scores {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				for r := bad.Load(); (r == 0 || int64(lo+i+1) < r) && !bad.CompareAndSwap(r, int64(lo+i+1)); r = bad.Load() {
				}
				break
			}
		}
	})
	if r := int(bad.Load()) - 1; r >= 0 {
		// An infinite score of finite points (far outside a set of a
		// large exponent) is a decision; a NaN or ±Inf coordinate is not.
		if i := bundle.FirstNonFinite(points[r*d:]); i >= 0 {
			i += r * d
			return nil, fmt.Errorf("conformal: points[%d][%d] is %v", i/d, i%d, points[i])
		}
	}
	return dst, nil
}

// checkQuery checks an anchor and points (rows) for Members and Scores:
// of the set's dimension, the anchor finite, and of unit norm where the
// set's calibration was; it returns the number of points.
func (s *Set) checkQuery(anchor, points []float32) (int, error) {
	if err := s.hasGeometry(); err != nil {
		return 0, err
	}
	d := s.Geometry.Dim()
	if len(anchor) != d {
		return 0, DimErrorf("anchor", []int{len(anchor)}, d, "conformal: an anchor of %d values, the set's dimension is %d", len(anchor), d)
	}
	n := len(points) / d
	if len(points) != n*d {
		return 0, DimensionErrorf("conformal: %d point values are not rows of the set's dimension %d", len(points), d)
	}
	if i := bundle.FirstNonFinite(anchor); i >= 0 {
		return 0, fmt.Errorf("conformal: anchor[%d] is %v", i, anchor[i])
	}
	if err := s.CheckNorms(anchor); err != nil {
		return 0, fmt.Errorf("conformal: the anchor: %w", err)
	}
	if err := s.CheckRows("points", points); err != nil {
		var ne *NormError
		if errors.As(err, &ne) {
			return 0, fmt.Errorf("conformal: points[%d]: %w", ne.Row, err)
		}
		return 0, fmt.Errorf("conformal: %w", err)
	}
	return n, nil
}

// hasGeometry refuses a set without a geometry (a zero Set, one whose
// load or calibration failed), which every score needs.
func (s *Set) hasGeometry() error {
	if s == nil || s.Geometry == nil {
		return errors.New("conformal: the set has no geometry (a zero Set: calibrate or load one)")
	}
	return nil
}

// Scores writes into dst (allocated when nil) the score φ(anchor − point)
// of each of points (rows of the set's dimension) — through the set's
// shift and projection head, where it has them; the score Members
// compares with the threshold — on all cores. Its checks are Members'; an
// uncalibrated set is scored too (a fitted geometry's scores).
func (s *Set) Scores(dst []float64, anchor, points []float32) ([]float64, error) {
	n, err := s.checkQuery(anchor, points)
	if err != nil {
		return nil, err
	}
	d := s.Geometry.Dim()
	if dst == nil {
		dst = make([]float64, n)
	}
	if len(dst) != n {
		return nil, fmt.Errorf("conformal: an output of %d for %d points", len(dst), n)
	}
	const block = 1024
	parallel.For(n, block, 0, func(_, lo, hi int) {
		diffs := make([]float32, (hi-lo)*d)
		for i := range hi - lo {
			p, x := points[(lo+i)*d:(lo+i+1)*d], diffs[i*d:(i+1)*d]
			for j := range x {
				x[j] = anchor[j] - p[j]
			}
		}
		s.Geometry.Scores(dst[lo:hi], diffs)
	})
	// A NaN or ±Inf coordinate gives a NaN or infinite score: only those
	// points are looked at (an infinite score of finite points, far
	// outside a set of a large exponent, is a score).
	for i, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if j := bundle.FirstNonFinite(points[i*d : (i+1)*d]); j >= 0 {
				return nil, fmt.Errorf("conformal: points[%d][%d] is %v", i, j, points[i*d+j])
			}
		}
	}
	return dst, nil
}

// ErrDimension is matched (errors.Is) by every error of embeddings whose
// dimension is not the set's: a *DimError where their shape is known
// (files, requests), and the errors of Contains, Members, Scores,
// Calibrate, eval's judgements, retrieve's searches and ood's tests,
// which take flat rows or bundles; of those, an anchor, a point or a
// bundle of another dimension (a known shape) also reads as a *DimError
// with errors.As (DimErrorf), values that are not rows do not.
var ErrDimension = errors.New("embeddings of another dimension than the set's")

// Is reports whether target is ErrDimension.
func (e *DimError) Is(target error) bool { return target == ErrDimension }

// DimensionErrorf is an error formatted as fmt.Sprintf does that matches
// ErrDimension: the dimension errors of the packages that take flat rows.
func DimensionErrorf(format string, a ...any) error {
	return &dimensionError{msg: fmt.Sprintf(format, a...)}
}

// DimErrorf is DimensionErrorf for rows whose shape is known (an anchor
// or point of shape (n,), a bundle's (N, D)): its message is the one
// formatted, and errors.As also reads it as the *DimError of source,
// shape and the set's dimension dim, for a caller that wants the numbers.
func DimErrorf(source string, shape []int, dim int, format string, a ...any) error {
	return &dimensionError{msg: fmt.Sprintf(format, a...), dim: &DimError{Source: source, Shape: shape, Dim: dim}}
}

type dimensionError struct {
	msg string
	dim *DimError // nil where the shape is unknown (values that are not rows)
}

func (e *dimensionError) Error() string        { return e.msg }
func (e *dimensionError) Is(target error) bool { return target == ErrDimension }

// As sets a **DimError target to the error's shape, where it is known.
func (e *dimensionError) As(target any) bool {
	if t, ok := target.(**DimError); ok && e.dim != nil {
		*t = e.dim
		return true
	}
	return false
}

// CheckDim is where embeddings meet a set: it returns nil when rows of the
// given shape (the last axis is the dimension) suit the set's input
// dimension, and otherwise an error naming source (a file and its array,
// a request field), the shape found and the dimension wanted. Every reader
// of embeddings for a set calls it — files, request bodies, collections,
// reference pools, OOD calibration inputs — before anything is scored.
func (s *Set) CheckDim(source string, shape ...int) error {
	return CheckDim(source, s.Geometry.Dim(), shape...)
}

// CheckDim is Set.CheckDim for a set of dimension dim.
func CheckDim(source string, dim int, shape ...int) error {
	if len(shape) > 0 && shape[len(shape)-1] == dim {
		return nil
	}
	return &DimError{Source: source, Shape: shape, Dim: dim}
}

// DimError reports embeddings whose dimension is not the set's.
type DimError struct {
	Source string // the file and array, or the request field
	Shape  []int  // the shape found; its last axis is the dimension
	Dim    int    // the set's dimension
}

func (e *DimError) Error() string {
	got := "no dimension"
	if len(e.Shape) > 0 {
		got = fmt.Sprintf("dimension %d", e.Shape[len(e.Shape)-1])
	}
	msg := fmt.Sprintf("%s: embeddings of shape %s, %s; the set's dimension is %d", e.Source, bundle.FormatShape(e.Shape), got, e.Dim)
	if len(e.Shape) == 2 && e.Shape[0] == e.Dim {
		msg += fmt.Sprintf(" (its %d rows are of the set's dimension: %s)", e.Dim, bundle.Transposed)
	}
	return msg
}

// VolumeWarning is the warning of Warnings that speaks of log-volumes
// alone (a projection head that is not square measures them in its output
// space), "" where there is none: a command that prints no volume (ccs
// retrieve) leaves it out.
func (s *Set) VolumeWarning() string {
	if d := geometry.Describe(s.Geometry); d.ProjectedVolume() {
		return fmt.Sprintf("the %d→%d projection head is not square: log-volumes are measured in its %d-dimensional output space (LogVol/d divides by %d), not comparable with sets on the %d-dimensional embeddings",
			d.HeadIn, d.HeadOut, d.HeadOut, d.HeadOut, d.HeadIn)
	}
	return ""
}

// LogVolume is the log-volume of the set.
func (s *Set) LogVolume() float64 { return s.Geometry.LogVolume(s.Threshold) }

// listedClasses is how many classes of one kind Warnings names one by
// one; more make one warning that counts them and names the first
// listedClasses.
const listedClasses = 5

// classWarnings are a class-conditional set's warnings about its
// classes: those whose set is the whole space (too few calibration
// units) and those at rank n, each a warning of its own up to
// listedClasses of a kind, else one warning for all of that kind — a long
// tail of classes (449 protein families, 395 of them too small at α =
// 0.1) made hundreds of lines on every command that read the set.
func (s *Set) classWarnings() []string {
	var inf, top, tied, below []ClassThreshold
	delta := s.Calibration.Delta
	for _, c := range s.Classes {
		switch {
		case math.IsInf(c.Threshold, 1):
			inf = append(inf, c)
		case c.Rank == c.N:
			top = append(top, c)
		}
		if c.Copies == 0 && c.Tie.material(c.N, c.Rank) {
			tied = append(tied, c)
		}
		if delta > 0 && !math.IsInf(c.Threshold, 1) && pacBelowMarginal(c.N, c.Rank, s.Alpha) > 0 {
			below = append(below, c)
		}
	}
	list := func(cs []ClassThreshold) string {
		var each []string
		for _, c := range cs[:listedClasses] {
			each = append(each, fmt.Sprintf("%v (%d)", c, c.N))
		}
		return fmt.Sprintf("%s, … %d in all", strings.Join(each, ", "), len(cs))
	}
	var w []string
	if len(inf) <= listedClasses {
		for _, c := range inf {
			w = append(w, fmt.Sprintf("%v: %s", c, (&TooFewError{N: c.N, Rank: c.Rank, Alpha: s.Alpha, Delta: delta}).Reason()))
		}
	} else {
		what, need := fmt.Sprintf("alpha %v", s.Alpha), minCalibration(s.Alpha)
		if delta > 0 {
			what, need = fmt.Sprintf("alpha %v with delta %v", s.Alpha, delta), minPACCalibration(s.Alpha, delta)
		}
		w = append(w, fmt.Sprintf("%d of the %d classes' sets are the whole space (threshold +Inf): their calibration scores are too few for %s, which %s a class (%s)",
			len(inf), len(s.Classes), what, strings.TrimPrefix(needs("", need), " "), list(inf)))
	}
	if len(top) <= listedClasses {
		for _, c := range top {
			w = append(w, fmt.Sprintf("%v: %s", c, s.rankN(c.N, "the class's set")))
		}
	} else {
		w = append(w, fmt.Sprintf("%d classes' thresholds are their largest calibration score (rank n; the guarantee holds, but one outlying score sets each such class's set%s): %s",
			len(top), s.liftOff(top[0].N), list(top)))
	}
	if len(tied) <= listedClasses {
		for _, c := range tied {
			w = append(w, fmt.Sprintf("%v: its threshold %s; %s", c, c.Tie.coverageText(c.N, c.Rank), tieRemedy))
		}
	} else {
		w = append(w, fmt.Sprintf("%d classes' thresholds tie other calibration scores of their class, so their sets cover more than their ranks give (%s): %s", len(tied), tieRemedy, list(tied)))
	}
	if len(below) <= listedClasses {
		for _, c := range below {
			m := pacBelowMarginal(c.N, c.Rank, s.Alpha)
			w = append(w, pacBelowText(c.String(), c.N, c.Rank, m, s.Alpha, delta))
		}
	} else {
		w = append(w, fmt.Sprintf("%d classes' PAC ranks at δ = %v are below their marginal ranks ⌈(n+1)(1−α)⌉: P(coverage ≥ 1−α) ≥ 1−δ holds for each, but their mean coverage over calibration draws is below 1−α — the marginal guarantee is lost; a δ of 0.1 or less never does this: %s", len(below), delta, list(below)))
	}
	return w
}

// liftOff is "; m would lift it off the maximum", how many calibration
// units would lift a threshold of rank n off the largest score, or "".
func (s *Set) liftOff(n int) string {
	if m := offTheMaximum(s.Alpha, s.Calibration.Delta, n); m > 0 {
		return fmt.Sprintf("; %d would lift it off the maximum", m)
	}
	return ""
}

// rankN says that n calibration units (of a class, or of the set) give
// rank n: the threshold is their largest score, which one outlier sets
// for what (the class's set, the set).
func (s *Set) rankN(n int, what string) string {
	more := s.liftOff(n)
	units := "calibration anchors"
	if s.Calibration.Pairs {
		units = "disjoint calibration pairs"
	}
	return fmt.Sprintf("its %d %s give rank n = %d: its threshold is its largest calibration score (the guarantee holds, but one outlying score sets %s%s)", n, units, n, what, more)
}

// countOf is "1 pair" or "n pairs".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
