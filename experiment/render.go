package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ccsets/ccs/eval"
)

// spreadNote ends a table's protocol line where its cells show a ±:
// eval.Summary's Std, the population standard deviation over seeds.
const spreadNote = "; mean ± std over seeds (divisor n)"

// WriteText renders t as a Markdown table in the paper's layout (mean ± std
// over seeds, the population std of eval.Summary, which the protocol line
// names; coverage and exclusion in percent with one decimal, LogVol/d with
// two) with the paper's figures beside each row where it has them. Cells
// are padded so the table also reads as plain text.
func (t *Table) WriteText(w io.Writer) error {
	// The paper's column when some row has its figures; the class-consistent
	// columns when the table measured them.
	paperCol := slices.ContainsFunc(t.Rows, func(r Row) bool { return r.Paper != nil })
	classCols := slices.ContainsFunc(t.Rows, func(r Row) bool { return r.ClassCoverage != nil })
	head := []string{"Method", "Coverage", "Exclusion↑", "LogVol/d↓"}
	if classCols {
		head = append(head, "Same-class coverage", "Other-class exclusion")
	}
	if paperCol || !classCols {
		head = append(head, "Paper: cov / exc / LogVol/d")
	}
	rows := [][]string{head}
	// One seed has no spread to show: "± 0.0" would read as a certainty.
	pct := func(s eval.Summary) string { return meanPM("%.1f", "%.1f", s) + "%" }
	logVol := func(s eval.Summary) string { return meanPM("%.2f", "%.2f", s) }
	for _, r := range t.Rows {
		cells := []string{r.Method, pct(r.Coverage), pct(r.Exclusion), logVol(r.LogVolPerDim)}
		if classCols {
			cc, ce := "—", "—"
			if r.ClassCoverage != nil {
				cc, ce = pct(*r.ClassCoverage), pct(*r.ClassExclusion)
			}
			cells = append(cells, cc, ce)
		}
		if paperCol || !classCols {
			paper := "—"
			if r.Paper != nil {
				paper = fmt.Sprintf("%.1f%% / %.1f%% / %.2f", r.Paper.Coverage, r.Paper.Exclusion, r.Paper.LogVolPerDim)
			}
			cells = append(cells, paper)
		}
		rows = append(rows, cells)
	}
	// The protocol line says what ± is (eval.Summary's Std), where a cell
	// shows one: a reader copying the table cannot tell a std from a
	// standard error, nor the divisor, otherwise.
	spread := ""
	if slices.ContainsFunc(t.Rows, func(r Row) bool { return r.Coverage.N > 1 }) {
		spread = spreadNote
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s%s\n\n", t.Title, t.Config, spread)
	writeGrid(&b, rows)
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
