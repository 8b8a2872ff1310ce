package experiment

import (
	"fmt"

	"github.com/ccsets/ccs/figure"
)

func init() {
	Register(Kind{Name: "sim", Heading: "The simulation (the paper's Table 1)", Order: 10,
		New: func() Result { return new(SimResult) }})
}

// SimResult is ccs reproduce sim's result (kind "sim"): the simulation's
// table.
type SimResult struct {
	Tables []*Table `json:"tables,omitempty"`
}

// Add keeps a table.
func (r *SimResult) Add(t Text) error {
	tt, ok := t.(*Table)
	if !ok {
		return fmt.Errorf("experiment: a sim result takes tables, not %T", t)
	}
	r.Tables = append(r.Tables, tt)
	return nil
}

// Texts are the tables.
func (r *SimResult) Texts() []Text { return texts(r.Tables) }

// Figures are each table's: coverage against α, the inclusion–exclusion
// trade-off and the learned sets' shapes.
func (r *SimResult) Figures(stem string) ([]*figure.Figure, error) {
	return tablesFigures(stem, r.Tables)
}

// Check refuses null tables.
func (r *SimResult) Check() error { return noNulls("tables", r.Tables) }

// texts are tables as Texts.
func texts[T Text](tables []T) []Text {
	out := make([]Text, len(tables))
	for i, t := range tables {
		out[i] = t
	}
	return out
}

// noNulls refuses nil entries in a document's list (JSON null).
func noNulls[T any](name string, list []*T) error {
	for i, t := range list {
		if t == nil {
			return fmt.Errorf("%s[%d] is null", name, i)
		}
	}
	return nil
}

// tablesFigures are each table's figures, named stem-TITLE-…: those its
// data allow.
func tablesFigures(stem string, tables []*Table) ([]*figure.Figure, error) {
	var figs []*figure.Figure
	for _, t := range tables {
		s := stem + "-" + figure.Slug(t.Title)
		if f := coverageFigure(t, s, ""); f != nil {
			figs = append(figs, f)
		}
		if f := tradeoffFigure(t, s); f != nil {
			figs = append(figs, f)
		}
		if t.Shapes != nil {
			f, err := shapesFigure(t, s)
			if err != nil {
				return nil, err
			}
			figs = append(figs, f)
		}
	}
	return figs, nil
}
