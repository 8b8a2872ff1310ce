package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/eval"
)

// TestReview51TableSaysWhatPlusMinusIs checks that a reproduced table's
// protocol line (ccs reproduce sim|fmnist, and the Markdown, LaTeX and
// HTML ccs report makes of the same text) names its ± as the population
// standard deviation over seeds, and that a one-seed table, which shows
// no ±, does not (failed at 2131dd3: the table never said whether ± was
// a standard deviation or a standard error, nor its divisor, though the
// docs read it as the population std, eval.Summary's).
func TestReview51TableSaysWhatPlusMinusIs(t *testing.T) {
	s := func(xs ...float64) eval.Summary { return eval.Summarize(xs) }
	const config = "5 clusters × 5000 points, k=500, α=0.05, seeds 0–1"
	tab := &Table{Title: "Simulated 3D clusters (mixed)", Config: config,
		Rows: []Row{{Method: "Conformal Ball (ℓ2)", Coverage: s(94.8, 95.6), Exclusion: s(20.6, 17.0), LogVolPerDim: s(2.70, 2.79),
			Paper: &PaperRow{94.7, 15.3, 2.74}}}}
	var b strings.Builder
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	first, _, _ := strings.Cut(out, "\n")
	if want := "Simulated 3D clusters (mixed): " + config + "; mean ± std over seeds (divisor n)"; first != want {
		t.Errorf("the protocol line does not say what ± is:\n got %q\nwant %q", first, want)
	}
	// The numbers are the population std's (divisor n: 0.4, not 0.6).
	if !strings.Contains(out, "| 95.2 ± 0.4% | 18.8 ± 1.8% | 2.75 ± 0.04 |") {
		t.Errorf("the cells are not mean ± population std:\n%s", out)
	}

	one := &Table{Title: "Simulated 3D clusters (mixed)", Config: "5 clusters × 5000 points, k=500, α=0.05, seed 0",
		Rows: []Row{{Method: "Conformal Ball (ℓ2)", Coverage: s(94.8), Exclusion: s(20.6), LogVolPerDim: s(2.70)}}}
	b.Reset()
	if err := one.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "±") {
		t.Errorf("a one-seed table speaks of a ± it does not show:\n%s", b.String())
	}
}

// TestReview51OODTableSaysWhatPlusMinusIs checks that the OOD table, like
// the results tables, names its ± where a cell shows one, and not for one
// run (failed at b96e8d9: its protocol line said the seeds alone).
func TestReview51OODTableSaysWhatPlusMinusIs(t *testing.T) {
	for _, runs := range []int{1, 2} {
		xs := []float64{81.2, 81.4}[:runs]
		tab := &OODTable{Title: "OOD detection, Fashion-MNIST (ID), supervised", Config: "seeds 0–1", Sets: []string{"mnist"}, Runs: runs,
			Rows: []OODRow{{Method: "MSP", AUROC: []eval.Summary{eval.Summarize(xs)}, FPR95: []eval.Summary{eval.Summarize(xs)}}}}
		var b strings.Builder
		if err := tab.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(b.String(), "\n")
		if said := strings.HasSuffix(first, "; mean ± std over seeds (divisor n)"); said != (runs > 1) {
			t.Errorf("%d runs: protocol line %q; want the ± named exactly when there is one", runs, first)
		}
	}
}
