package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText renders t in the paper's layout: mean ± std over seeds, coverage
// and exclusion in percent with one decimal, LogVol/d with two, and the
// paper's figure beside each row where it has one.
func (t *Table) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s: %s\n\n", t.Title, t.Config)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Method\tCoverage\tExclusion↑\tLogVol/d↓\tPaper (cov / exc / LogVol/d)")
	for _, r := range t.Rows {
		paper := "—"
		if r.Paper != nil {
			paper = fmt.Sprintf("%.1f%% / %.1f%% / %.2f", r.Paper.Coverage, r.Paper.Exclusion, r.Paper.LogVolPerDim)
		}
		fmt.Fprintf(tw, "%s\t%.1f ± %.1f%%\t%.1f ± %.1f%%\t%.2f ± %.2f\t%s\n", r.Method,
			r.Coverage.Mean, r.Coverage.Std, r.Exclusion.Mean, r.Exclusion.Std,
			r.LogVolPerDim.Mean, r.LogVolPerDim.Std, paper)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, warn := range t.Warnings {
		if _, err := fmt.Fprintf(w, "WARNING: %s\n", warn); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes t as indented JSON.
func (t *Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}
