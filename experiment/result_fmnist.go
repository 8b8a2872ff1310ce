package experiment

import (
	"fmt"

	"github.com/ccsets/ccs/figure"
)

func init() {
	Register(Kind{Name: "fmnist", Heading: "Fashion-MNIST (the layout of the paper's real-image tables)", Order: 30,
		New: func() Result { return new(FMNISTResult) }})
}

// FMNISTResult is ccs reproduce fmnist's result (kind "fmnist"): a table
// per encoder, and the convex-hull comparisons.
type FMNISTResult struct {
	Tables []*Table     `json:"tables,omitempty"`
	Hull   []*HullTable `json:"hull,omitempty"`
}

// Add keeps a table or a convex-hull comparison.
func (r *FMNISTResult) Add(t Text) error {
	switch t := t.(type) {
	case *Table:
		r.Tables = append(r.Tables, t)
	case *HullTable:
		r.Hull = append(r.Hull, t)
	default:
		return fmt.Errorf("experiment: an fmnist result takes tables and hull tables, not %T", t)
	}
	return nil
}

// Texts are the tables, then the convex-hull comparisons.
func (r *FMNISTResult) Texts() []Text { return append(texts(r.Tables), texts(r.Hull)...) }

// Figures are each table's: coverage against α and the trade-off.
func (r *FMNISTResult) Figures(stem string) ([]*figure.Figure, error) {
	return tablesFigures(stem, r.Tables)
}

// Check refuses null tables.
func (r *FMNISTResult) Check() error {
	if err := noNulls("tables", r.Tables); err != nil {
		return err
	}
	return noNulls("hull", r.Hull)
}
