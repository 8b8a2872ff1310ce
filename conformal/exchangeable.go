package conformal

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ccsets/ccs/bundle"
)

// Exchangeability is a check of a test bundle against a set's calibration:
// whether the test anchors leave the set as often as anchors drawn as the
// calibration anchors were would. A test bundle's coverage of all its
// positives below 1 − α can be chance (a few hundred anchors, a threshold
// from a few hundred scores) or a shift (another session, donor, site or
// time); this tells the two apart. The units are the test bundle's own
// calibration units, one score each — an anchor with one positive drawn
// as the calibration's seed draws it, or its disjoint pairs — since an
// anchor's positives are not independent draws: counting every positive
// would overstate the evidence.
type Exchangeability struct {
	// Units is how many test units were scored (of the class, for a
	// class-conditional set), and Outside how many of them lie outside
	// the set.
	Units   int `json:"units"`
	Outside int `json:"outside"`
	// Pairs says the units were disjoint (anchor, positive) pairs (the
	// test bundle's positives are its own anchors), not anchors.
	Pairs bool `json:"pairs,omitempty"`
	// PairsFound is, where Units were disjoint pairs kept in the classes'
	// shares of anchors (a set of one threshold on a label bundle, as its
	// calibration keeps them), how many disjoint pairs the bundle has;
	// 0 where every one found was checked.
	PairsFound int `json:"pairs_found,omitempty"`
	// OtherUnits says the set's calibration units were of the other kind
	// (anchors with one positive each where these are disjoint pairs, or
	// the reverse): units of two kinds are not exchangeable by
	// construction, so P is then approximate.
	OtherUnits bool `json:"other_units,omitempty"`
	// Expected is the share of units exchangeable with the calibration's
	// that lie outside, on average over the calibration draw:
	// (N+1−Rank)/(N+1), at most α, for scores without ties. Where the
	// threshold ties calibration scores above its rank (Info.Tie), half a
	// point of coverage or more, fewer lie outside: Expected is then (N+1−AtOrBelow)/(N+1), as if its rank
	// were the tie's last, and Untied the (N+1−Rank)/(N+1) it is at most.
	Expected float64 `json:"expected"`
	// Untied is, where the threshold ties (Expected), the share outside
	// for scores without ties, which P's law takes (so that P stays a
	// valid, conservative tail); 0 otherwise.
	Untied float64 `json:"untied,omitempty"`
	// P is the probability that units exchangeable with the set's N
	// calibration units put at least Outside of Units outside
	// (ExchangeableTail, over the calibration draw and the units); for a
	// class-conditional set, Units and Outside count every class checked,
	// each against its own threshold, and P is the tail of their sum
	// (ExchangeableSumTail: the classes are calibrated on disjoint units).
	// A small P says the test anchors are not drawn as the calibration
	// anchors were, and the set's guarantee does not cover them.
	P float64 `json:"p"`
	// Classes, for a class-conditional set, is how many classes were
	// checked, and Worst the one least likely on its own; 0 and nil
	// otherwise.
	Classes int         `json:"classes,omitempty"`
	Worst   *ClassCheck `json:"worst_class,omitempty"`
}

// ClassCheck is one class's part of a class-conditional set's check:
// its label (and name, where the classes have names), its test units and
// those outside its threshold, and P, its tail (ExchangeableTail) times
// the number of classes checked (Bonferroni), at most 1.
type ClassCheck struct {
	Label   int64   `json:"label"`
	Name    string  `json:"name,omitempty"`
	Units   int     `json:"units"`
	Outside int     `json:"outside"`
	P       float64 `json:"p"`
}

// CheckExchangeable scores test's calibration units under s (one score
// each, as Calibrate scores its calibration bundle, with the set's seed)
// and counts those outside the set against its calibration's law
// (Exchangeability). A class-conditional set checks each class of the
// test bundle that it has a finite threshold for (test's labels numbered
// as the set's): all of them together, and the least likely alone. It returns nil, without an
// error, where there is no exact law to check against: a pooled
// calibration (no guarantee), a whole-space set, or no unit to check.
func (s *Set) CheckExchangeable(test *bundle.Bundle) (*Exchangeability, error) {
	if !s.Calibrated() {
		return nil, ErrNotCalibrated
	}
	if !s.Guaranteed() {
		return nil, nil
	}
	c := s.Calibration
	mode := c.Mode
	if mode == Class && test.Labels == nil {
		return nil, fmt.Errorf("%w: a class-conditional set's check needs the test bundle's labels", ErrNoLabel)
	}
	scores, pairs, _, err := unitScores(s.Geometry, test, mode, c.Seed)
	if err != nil {
		return nil, err
	}
	if mode != Class {
		e := check(scores, s.Threshold, c.N, c.Rank, c.Tie)
		if e != nil {
			e.Pairs = pairs != nil
			e.OtherUnits = e.Pairs != c.Pairs
			if pairs != nil {
				if found := len(DisjointPairs(test)); found > len(pairs) {
					e.PairsFound = found
				}
			}
		}
		return e, nil
	}
	byLabel := map[int64][]float64{}
	for u, l := range unitLabels(test, pairs) {
		byLabel[l] = append(byLabel[l], scores[u])
	}
	var all *Exchangeability
	var worst *ClassCheck
	var groups []TailGroup
	mean, untied, tied := 0.0, 0.0, false
	for _, k := range s.Classes {
		e := check(byLabel[k.Label], k.Threshold, k.N, k.Rank, k.Tie)
		if e == nil {
			continue
		}
		if all == nil {
			all = &Exchangeability{Pairs: pairs != nil, OtherUnits: (pairs != nil) != c.Pairs}
		}
		all.Units += e.Units
		all.Outside += e.Outside
		all.Classes++
		mean += e.Expected * float64(e.Units)
		if e.Untied > 0 {
			untied += e.Untied * float64(e.Units)
			tied = true
		} else {
			untied += e.Expected * float64(e.Units)
		}
		groups = append(groups, TailGroup{M: e.Units, N: k.N, L: k.N + 1 - k.Rank})
		if worst == nil || e.P < worst.P {
			worst = &ClassCheck{Label: k.Label, Name: k.Name, Units: e.Units, Outside: e.Outside, P: e.P}
		}
	}
	if all == nil {
		return nil, nil
	}
	all.Expected = mean / float64(all.Units)
	if tied {
		all.Untied = untied / float64(all.Units)
	}
	all.P = ExchangeableSumTail(all.Outside, groups)
	worst.P = min(1, worst.P*float64(all.Classes))
	all.Worst = worst
	return all, nil
}

// CheckClasses checks each class of a labelled test bundle against a set
// with one threshold for all classes (marginal or PAC): each class's units
// (as CheckExchangeable scores them) against the set's threshold and its
// calibration's law, as if the class's anchors were drawn as the
// calibration anchors were. The guarantee is over all classes, and a class
// the set serves worse (a language the encoder embeds worse) is not drawn
// so: its P says whether its shortfall is beyond chance. Each check's P is
// the class's own tail (ExchangeableTail), not multiplied by the number of
// classes; the checks are in label order. It is nil for a
// class-conditional set (CheckExchangeable checks it class by class), a
// set with no check, or a test bundle without labels.
func (s *Set) CheckClasses(test *bundle.Bundle) ([]ClassCheck, error) {
	if !s.Calibrated() {
		return nil, ErrNotCalibrated
	}
	c := s.Calibration
	if !s.Guaranteed() || c.Mode == Class || test.Labels == nil {
		return nil, nil
	}
	scores, pairs, _, err := unitScores(s.Geometry, test, c.Mode, c.Seed)
	if err != nil {
		return nil, err
	}
	byLabel := map[int64][]float64{}
	for u, l := range unitLabels(test, pairs) {
		byLabel[l] = append(byLabel[l], scores[u])
	}
	var out []ClassCheck
	for _, l := range slices.Sorted(maps.Keys(byLabel)) {
		if e := check(byLabel[l], s.Threshold, c.N, c.Rank, c.Tie); e != nil {
			out = append(out, ClassCheck{Label: l, Units: e.Units, Outside: e.Outside, P: e.P})
		}
	}
	return out, nil
}

// check counts the scores above q, a threshold of rank r among n
// calibration scores (tied as tie says, or nil); nil where there is
// nothing to check (no scores, or q is the whole space's). A NaN score is
// inside no set: it counts as outside.
func check(scores []float64, q float64, n, r int, tie *Tie) *Exchangeability {
	if len(scores) == 0 || r > n || r < 1 {
		return nil
	}
	out := 0
	for _, v := range scores {
		if !(v <= q) {
			out++
		}
	}
	l := n + 1 - r
	e := &Exchangeability{Units: len(scores), Outside: out, Expected: float64(l) / float64(n+1),
		P: ExchangeableTail(out, len(scores), n, l)}
	if tie.material(n, r) {
		e.Untied, e.Expected = e.Expected, float64(n+1-tie.AtOrBelow)/float64(n+1)
	}
	return e
}
