package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
)

// TestPercentPrecision: one decimal, or more where one would show 100.0%
// or 0.0% for a figure that is not; a set size of under 10 items with one.
func TestPercentPrecision(t *testing.T) {
	for v, want := range map[float64]int{95.24: 1, 99.966: 2, 99.9996: 3, 100: 1, 0: 1, 0.02: 2, 0.04: 2, 0.0004: 3, 50: 1, 99.94: 1} {
		if got := percentPrecision(v); got != want {
			t.Errorf("percentPrecision(%v) = %d, want %d", v, got, want)
		}
	}
	for v, want := range map[float64]int{1.704: 1, 9.96: 1, 10: 0, 214.3: 0} {
		if got := sizePrecision(v); got != want {
			t.Errorf("sizePrecision(%v) = %d, want %d", v, got, want)
		}
	}
}

// TestCalibrationTextWhose: an evaluation's protocol line says whose rows
// a set of one label's or one class's was calibrated on, as its report
// section is read apart from the others.
func TestCalibrationTextWhose(t *testing.T) {
	one := conformal.Info{Mode: conformal.OnePerAnchor, N: 48, Rank: 45, OneLabel: "giraffe"}
	if got := calibrationText(one); !strings.HasSuffix(got, `, on the rows of label "giraffe" alone)`) {
		t.Errorf("one label: %q", got)
	}
	class := conformal.Info{Mode: conformal.OnePerAnchor, N: 48, Rank: 45, Class: &conformal.ClassOf{Label: 2, Name: "bee"}}
	if got := calibrationText(class); !strings.HasSuffix(got, `, on class "bee"'s anchors alone)`) {
		t.Errorf("one class: %q", got)
	}
	if got := calibrationText(conformal.Info{Mode: conformal.OnePerAnchor, N: 48, Rank: 45}); strings.Contains(got, "alone") {
		t.Errorf("every anchor: %q", got)
	}
}
