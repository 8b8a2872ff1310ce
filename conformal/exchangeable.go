package conformal

import (
	"fmt"

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
	// Expected is the share of units exchangeable with the calibration's
	// that lie outside, on average over the calibration draw:
	// (N+1−Rank)/(N+1), at most α.
	Expected float64 `json:"expected"`
	// P is the probability that units exchangeable with the set's N
	// calibration units put at least Outside of Units outside
	// (ExchangeableTail, over the calibration draw and the units); for a
	// class-conditional set, the class's times the number of classes
	// checked (Bonferroni), at most 1. A small P says the test anchors are
	// not drawn as the calibration anchors were, and the set's guarantee
	// does not cover them.
	P float64 `json:"p"`
	// Class, for a class-conditional set, is the class of the smallest P
	// (its label, and Name where the classes have names), and Classes how
	// many classes were checked; 0 otherwise.
	Class   int64  `json:"class,omitempty"`
	Name    string `json:"name,omitempty"`
	Classes int    `json:"classes,omitempty"`
}

// CheckExchangeable scores test's calibration units under s (one score
// each, as Calibrate scores its calibration bundle, with the set's seed)
// and counts those outside the set against its calibration's law
// (Exchangeability). A class-conditional set checks each class of the
// test bundle that it has a finite threshold for (test's labels numbered
// as the set's) and reports the least likely. It returns nil, without an
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
		e := check(scores, s.Threshold, c.N, c.Rank)
		if e != nil {
			e.Pairs = pairs != nil
		}
		return e, nil
	}
	byLabel := map[int64][]float64{}
	for u, l := range unitLabels(test, pairs) {
		byLabel[l] = append(byLabel[l], scores[u])
	}
	var worst *Exchangeability
	checked := 0
	for _, k := range s.Classes {
		e := check(byLabel[k.Label], k.Threshold, k.N, k.Rank)
		if e == nil {
			continue
		}
		checked++
		if worst == nil || e.P < worst.P {
			e.Class, e.Name = k.Label, k.Name
			worst = e
		}
	}
	if worst != nil {
		worst.Classes, worst.Pairs = checked, pairs != nil
		worst.P = min(1, worst.P*float64(checked))
	}
	return worst, nil
}

// check counts the scores above q, a threshold of rank r among n
// calibration scores; nil where there is nothing to check (no scores, or
// q is the whole space's). A NaN score is inside no set: it counts as
// outside.
func check(scores []float64, q float64, n, r int) *Exchangeability {
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
	return &Exchangeability{Units: len(scores), Outside: out, Expected: float64(l) / float64(n+1),
		P: ExchangeableTail(out, len(scores), n, l)}
}
