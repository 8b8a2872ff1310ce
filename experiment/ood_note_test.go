package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/eval"
)

// TestOODTableReferenceNote: the paper's reference score below chance is
// explained under the table, and only then.
func TestOODTableReferenceNote(t *testing.T) {
	const note = "CCS (reference): AUROC below 50 is the paper's score with the paper's sign"
	for _, c := range []struct {
		auroc float64
		want  bool
	}{{34.6, true}, {50, false}, {71.2, false}} {
		tab := OODTable{Title: "OOD detection", Sets: []string{"hen"}, Runs: 1, Rows: []OODRow{
			{Method: "CCS (batch)", AUROC: []eval.Summary{{Mean: 30}}, FPR95: []eval.Summary{{Mean: 90}}},
			{Method: "CCS (reference)", AUROC: []eval.Summary{{Mean: c.auroc}}, FPR95: []eval.Summary{{Mean: 90}}},
		}}
		var b strings.Builder
		if err := tab.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), note); got != c.want {
			t.Errorf("AUROC %v: note %v, want %v:\n%s", c.auroc, got, c.want, b.String())
		}
		if strings.Contains(b.String(), "CCS (batch): AUROC below 50") {
			t.Errorf("the batch row got the reference row's note:\n%s", b.String())
		}
	}
}
