package experiment

import (
	"fmt"
	"strings"

	"github.com/ccsets/ccs/figure"
)

func init() {
	Register(Kind{Name: "ood", Heading: "OOD detection", Order: 40,
		New: func() Result { return new(OODResult) }})
	// ccs ood's result is one table, its keys the document's.
	Register(Kind{Name: "ood-detection", Heading: "OOD detection with a fitted set (ccs ood)", Order: 80,
		New: func() Result { return new(OODTable) }})
}

// OODResult is ccs reproduce ood's result (kind "ood"): an OOD table per
// encoder.
type OODResult struct {
	OOD []*OODTable `json:"ood,omitempty"`
}

// Add keeps a table.
func (r *OODResult) Add(t Text) error {
	ot, ok := t.(*OODTable)
	if !ok {
		return fmt.Errorf("experiment: an ood result takes OOD tables, not %T", t)
	}
	r.OOD = append(r.OOD, ot)
	return nil
}

// Texts are the tables.
func (r *OODResult) Texts() []Text { return texts(r.OOD) }

// Figures are each table's ROC curves and score histograms, named
// stem-ENCODER-… after the table's title.
func (r *OODResult) Figures(stem string) ([]*figure.Figure, error) {
	var figs []*figure.Figure
	for _, t := range r.OOD {
		f, err := t.Figures(stem + "-" + figure.Slug(strings.TrimPrefix(t.Title, "OOD detection, ")))
		if err != nil {
			return nil, err
		}
		figs = append(figs, f...)
	}
	return figs, nil
}

// Check refuses null tables and tables whose rows do not match their OOD
// sets.
func (r *OODResult) Check() error {
	if err := noNulls("ood", r.OOD); err != nil {
		return err
	}
	for i, t := range r.OOD {
		if err := t.Check(); err != nil {
			return fmt.Errorf("ood[%d], %w", i, err)
		}
	}
	return nil
}

// Texts are the table itself: an OOD table is a result of its own, ccs
// ood's (kind "ood-detection").
func (t *OODTable) Texts() []Text { return []Text{t} }

// Figures are the table's ROC curves (stem-roc) and score histograms
// (stem-histograms), when its rows have score curves.
func (t *OODTable) Figures(stem string) ([]*figure.Figure, error) {
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("OOD table %q: %w", t.Title, err)
	}
	var figs []*figure.Figure
	if f := rocFigure(t, stem); f != nil {
		figs = append(figs, f)
	}
	if f := histogramsFigure(t, stem); f != nil {
		figs = append(figs, f)
	}
	return figs, nil
}

// Check refuses rows whose numbers or curves do not match the table's OOD
// sets, which the text and the figures index.
func (t *OODTable) Check() error {
	n := len(t.Sets)
	for _, r := range t.Rows {
		if r.Unavailable != "" {
			continue
		}
		bad := len(r.AUROC) != n || len(r.FPR95) != n ||
			(r.FAR != nil && len(r.TAR) != n) ||
			((r.FDP != nil || r.Power != nil) && (len(r.FDP) != n || len(r.Power) != n)) ||
			(r.Curves != nil && len(r.Curves) != n)
		if bad {
			return fmt.Errorf("%s: %d AUROC, %d FPR95, %d TAR, %d FDP, %d power and %d curves for %d OOD sets",
				r.Method, len(r.AUROC), len(r.FPR95), len(r.TAR), len(r.FDP), len(r.Power), len(r.Curves), n)
		}
		for _, c := range r.Curves {
			if len(c.FPR) != len(c.TPR) || len(c.FPR) < 2 || len(c.ID) == 0 || len(c.Edges) != len(c.ID)+1 || len(c.OOD) != len(c.ID) {
				return fmt.Errorf("%s, %s: malformed curve (%d FPR, %d TPR, %d edges, %d and %d bins)",
					r.Method, c.Set, len(c.FPR), len(c.TPR), len(c.Edges), len(c.ID), len(c.OOD))
			}
		}
	}
	return nil
}
