package experiment

import (
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
)

// TestShiftLevel: a marginal check warns below ShiftTail; a
// class-conditional one makes two tests (the classes summed, the least
// likely class with its Bonferroni factor) and warns where either is
// below ShiftTail/2, so that exchangeable anchors are warned of with
// probability at most ShiftTail in all.
func TestShiftLevel(t *testing.T) {
	worst := func(p float64) *conformal.ClassCheck {
		return &conformal.ClassCheck{Label: 3, Units: 200, Outside: 40, P: p}
	}
	for _, c := range []struct {
		name string
		e    conformal.Exchangeability
		want string // "" for no warning
	}{
		{"marginal below", conformal.Exchangeability{Units: 1000, Outside: 150, Expected: 0.1, P: 0.9e-3}, "leave the set more often than chance allows: 150 of 1000"},
		{"marginal below, units of another kind", conformal.Exchangeability{Units: 1000, Outside: 150, Expected: 0.1, P: 0.9e-3, Pairs: true, OtherUnits: true}, "with probability 0.0009 (approximate: the set was calibrated on anchors with one positive each, units of another kind)"},
		{"marginal above", conformal.Exchangeability{Units: 1000, Outside: 120, Expected: 0.1, P: 1.1e-3}, ""},
		{"class sum between the levels", conformal.Exchangeability{Units: 1000, Outside: 150, Expected: 0.1, P: 0.9e-3, Classes: 10, Worst: worst(0.5)}, ""},
		{"class sum below half", conformal.Exchangeability{Units: 1000, Outside: 160, Expected: 0.1, P: 0.4e-3, Classes: 10, Worst: worst(0.5)}, "(10 classes, each against its own threshold)"},
		{"worst class between the levels", conformal.Exchangeability{Units: 1000, Outside: 110, Expected: 0.1, P: 0.2, Classes: 10, Worst: worst(0.9e-3)}, ""},
		{"worst class below half", conformal.Exchangeability{Units: 1000, Outside: 110, Expected: 0.1, P: 0.2, Classes: 10, Worst: worst(0.4e-3)}, "its anchors of class 3 leave the set more often than chance allows: 40 of 200"},
	} {
		got := shiftWhat(&c.e)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
