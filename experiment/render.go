package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText renders t as a Markdown table in the paper's layout (mean ± std
// over seeds, coverage and exclusion in percent with one decimal, LogVol/d
// with two) with the paper's figures beside each row where it has them.
// Cells are padded so the table also reads as plain text.
func (t *Table) WriteText(w io.Writer) error {
	rows := [][]string{{"Method", "Coverage", "Exclusion↑", "LogVol/d↓", "Paper: cov / exc / LogVol/d"}}
	for _, r := range t.Rows {
		paper := "—"
		if r.Paper != nil {
			paper = fmt.Sprintf("%.1f%% / %.1f%% / %.2f", r.Paper.Coverage, r.Paper.Exclusion, r.Paper.LogVolPerDim)
		}
		rows = append(rows, []string{r.Method,
			fmt.Sprintf("%.1f ± %.1f%%", r.Coverage.Mean, r.Coverage.Std),
			fmt.Sprintf("%.1f ± %.1f%%", r.Exclusion.Mean, r.Exclusion.Std),
			fmt.Sprintf("%.2f ± %.2f", r.LogVolPerDim.Mean, r.LogVolPerDim.Std), paper})
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for c, cell := range r {
			width[c] = max(width[c], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", t.Title, t.Config)
	line := func(cells []string) {
		for c, cell := range cells {
			fmt.Fprintf(&b, "| %s%s ", cell, strings.Repeat(" ", width[c]-utf8.RuneCountInString(cell)))
		}
		b.WriteString("|\n")
	}
	line(rows[0])
	for c := range width {
		fmt.Fprintf(&b, "|%s", strings.Repeat("-", width[c]+2))
	}
	b.WriteString("|\n")
	for _, r := range rows[1:] {
		line(r)
	}
	for _, warn := range t.Warnings {
		fmt.Fprintf(&b, "\nWARNING: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes t as indented JSON.
func (t *Table) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}
