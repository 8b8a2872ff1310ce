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

// TestWholeSpaceClasses: compare -allow-infinite's warning keeps the
// refusal's names and counts of the classes too small, not the conformal
// reason between them (the rows' own warnings give it).
func TestWholeSpaceClasses(t *testing.T) {
	one := `class "yak" has 6 disjoint calibration pairs (an anchor and one of its positives: docs/calibration.md): conformal: 6 calibration scores are too few for alpha 0.05: the rank ⌈(1−α)(n+1)⌉ = 7 exceeds n, so the set is the whole space (threshold +Inf); alpha 0.05 needs at least 19`
	for _, c := range []struct{ in, want string }{
		{one, `class "yak" has 6 disjoint calibration pairs (an anchor and one of its positives: docs/calibration.md)`},
		{one + `; 1 more class has too few too: class "emu" (4)`, `class "yak" has 6 disjoint calibration pairs (an anchor and one of its positives: docs/calibration.md); 1 more class has too few too: class "emu" (4)`},
		{one + `; 12 more classes have too few too: class 3 (2), …`, `class "yak" has 6 disjoint calibration pairs (an anchor and one of its positives: docs/calibration.md); 12 more classes have too few too: class 3 (2), …`},
		{"something else", "something else"},
	} {
		if got := wholeSpaceClasses(c.in); got != c.want {
			t.Errorf("wholeSpaceClasses(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestPercent: two decimals, more only where two would show 100.00% or
// 0.00% for a fraction that is neither.
func TestPercent(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{0.9, "90.00%"}, {1, "100.00%"}, {0, "0.00%"}, {0.99995, "99.995%"}, {0.99999, "99.999%"},
		{0.9999999, ">99.9999%"}, {2e-5, "0.002%"}, {1e-9, "<0.0001%"}, {-0.5, "-50.00%"}, {0.123456, "12.35%"},
	} {
		if got := Percent(c.x); got != c.want {
			t.Errorf("Percent(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}
