package experiment

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ccsets/ccs/eval"
)

// Review of fc33573, alike(): a spread that rounds to 0 at the digits
// shown has no ±, but a spread of exactly half the last digit (two seeds'
// mean set sizes 12 and 13: population std 0.5, shown with 0 decimals)
// prints "12 ± 0" — %.0f rounds 0.5 half to even, and alike's test is
// Std < 0.5·10^-digits.
func TestReview45bCompareHalfDigitSpread(t *testing.T) {
	tab := &CompareTable{Title: "t", Seeds: 2, Alpha: 0.1, Rows: []CompareRow{{
		Row:     Row{Method: "m", Coverage: eval.Summary{Mean: 90, Std: 1, N: 2}, Exclusion: eval.Summary{Mean: 60, Std: 1, N: 2}, LogVolPerDim: eval.Summary{Mean: 2.5, Std: 0.1, N: 2}},
		SetSize: &eval.Summary{Mean: 12.5, Std: 0.5, N: 2},
	}}}
	var b bytes.Buffer
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "± 0 ") || strings.Contains(b.String(), "± 0|") {
		t.Errorf("a spread of 0.5 items shown as \"± 0\":\n%s", b.String())
	}
}
