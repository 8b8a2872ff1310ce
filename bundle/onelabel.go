package bundle

import (
	"fmt"
	"slices"
	"strconv"
)

// OneLabel names the label of several labels a row (Items.LabelSets)
// whose rows alone are bundled (ccs bundle -one-label, ccs.bundle's
// one_label=): the rows carrying it are the queries, each one's positives
// the other rows carrying it and its negatives the rows that do not (never
// its own row), drawn from all rows, and the queries are split — the
// bundles that the relevance pairs of the label's rows,
// np.argwhere(np.outer(rel, rel)) less the diagonal with rel = M[:, l] > 0,
// give as -queries X -pairs (the same seed, byte for byte). A set
// calibrated on its calibration split covers a new row of the label: a
// row drawn among the label's rows is inside its set with probability
// ≥ 1−α, the one-label guarantee class-conditional calibration cannot
// give with several labels a row (conformal.SeveralLabelsReason).
type OneLabel struct {
	Label int32  // the label, as LabelSets number it
	Name  string // its name, as the manifest names labels (a column's number when unnamed)
}

// NewOneLabel is label l of several a row, named names[l] (a list
// column's value, a -label-names name), or by its number where names is
// nil (an unnamed matrix's column).
func NewOneLabel(l int64, names []string) *OneLabel {
	o := &OneLabel{Label: int32(l), Name: strconv.FormatInt(l, 10)}
	if names != nil {
		o.Name = names[l]
	}
	return o
}

// Rows counts the rows of sets (label sets, one a row) that carry o.
func (o OneLabel) Rows(sets [][]int32) int {
	n := 0
	for _, ls := range sets {
		if slices.Contains(ls, o.Label) {
			n++
		}
	}
	return n
}

// String is the label as messages name it: its name, quoted.
func (o OneLabel) String() string { return fmt.Sprintf("label %q", o.Name) }

// oneLabel returns items as the relevance pairs of items.OneLabel's rows
// (OneLabel): queries the rows themselves, the label's rows alone with a
// relevant row, no label sets; rows is how many carry it. It refuses what
// has no meaning for one label's rows (OOD labels, an OOD calibration
// share, labels of another kind), a label carried by fewer than two rows
// (none would have a positive), by too few for k positives (without
// AllowFewer) or by so many that kneg negatives are not left.
func (items Items) oneLabel(cfg MakeConfig) (Items, int, error) {
	o := items.OneLabel
	switch {
	case items.LabelSets == nil:
		return items, 0, fmt.Errorf("bundle: one label's rows (%s) are of several labels a row: give the label sets", o)
	case items.Pairs != nil || items.Labels != nil || items.Groups != nil || items.ViewItems || items.QueryLabels != nil:
		return items, 0, fmt.Errorf("bundle: one label's rows (%s) make their own relevance pairs: give the label sets alone (no labels, groups, views, pairs or query labels)", o)
	case len(cfg.OODClasses) > 0 || cfg.OODCalShare > 0:
		return items, 0, fmt.Errorf("bundle: one label's rows (%s) are bundled for its own threshold: OOD labels and an OOD calibration share are held out of the bundles of every label (without one label)", o)
	case o.Label < 0:
		return items, 0, fmt.Errorf("bundle: %s: its number %d is negative", o, o.Label)
	}
	one := make([][]int32, len(items.LabelSets))
	label := []int32{o.Label}
	for i, ls := range items.LabelSets {
		if slices.Contains(ls, o.Label) {
			one[i] = label
		}
	}
	rows, kneg := o.Rows(items.LabelSets), cfg.KNeg // Make sets KNeg's default
	switch {
	case rows < 2:
		return items, rows, fmt.Errorf("bundle: %s is carried by %s of %d: a row's positives are the other rows carrying it, and its bundles need two at least (one a split they make, more for k positives each)", o, counted(rows, "row"), len(items.LabelSets))
	case rows-1 < cfg.K && !cfg.AllowFewer:
		return items, rows, fmt.Errorf("bundle: %s is carried by %d of %d rows: each has the %d others as its positives, too few for k = %d: lower k (-k; k= in Python), or allow fewer (-allow-fewer; allow_fewer=True in Python: it repeats them)", o, rows, len(items.LabelSets), rows-1, cfg.K)
	case len(items.LabelSets)-rows < kneg:
		return items, rows, fmt.Errorf("bundle: %s is carried by %d of %d rows: a query's negatives are the rows that do not carry it, %d, too few for kneg = %d", o, rows, len(items.LabelSets), len(items.LabelSets)-rows, kneg)
	}
	items.LabelSets, items.oneLabelSets = nil, one
	items.Queries, items.SelfQueries = items.N, true
	if items.QueryRows == nil {
		items.QueryRows = items.Rows
	}
	return items, rows, nil
}
