package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/eval"
)

// TestCompareTableFormats: the table's grid alone as Markdown (the rows
// WriteText prints, without its title or notes) and as a LaTeX tabular
// whose symbols are escaped or in math mode.
func TestCompareTableFormats(t *testing.T) {
	tab := &CompareTable{Title: "Your data", Config: "α = 0.05", Seeds: 3, Alpha: 0.05, Rows: []CompareRow{
		{Row: Row{Method: "Conformal Ball (ℓ2)", Coverage: eval.Summary{Mean: 95.1, Std: 0.4}, Exclusion: eval.Summary{Mean: 47.9, Std: 0}, LogVolPerDim: eval.Summary{Mean: -1.23, Std: 0.01}}, FitSeconds: eval.Summary{Mean: 0.012}},
		{Row: Row{Method: "Generalized (Neg,Vol)", Coverage: eval.Summary{Mean: 94.3, Std: 0.1}, Exclusion: eval.Summary{Mean: 86.8, Std: 1.2}, LogVolPerDim: eval.Summary{Mean: -1.5, Std: 0.02}}, FitSeconds: eval.Summary{Mean: 12.3}},
	}}
	var text, md, tex strings.Builder
	if err := tab.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteLaTeX(&tex); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), md.String()) || strings.Contains(md.String(), "Your data") || strings.Count(md.String(), "\n") != 4 {
		t.Errorf("markdown:\n%s\nnot the text's grid:\n%s", md.String(), text.String())
	}
	for _, want := range []string{`\begin{tabular}{lrrrr}`, `Conformal Ball ($\ell_2$) & 95.1 $\pm$ 0.4\% & 47.9\% & -1.23 $\pm$ 0.01 & 0.012 \\`,
		`Method & Coverage & Exclusion$\uparrow$ & LogVol/d$\downarrow$ & Fit s \\`, `\midrule`, `\bottomrule`} {
		if !strings.Contains(tex.String(), want) {
			t.Errorf("want %q in:\n%s", want, tex.String())
		}
	}
}
