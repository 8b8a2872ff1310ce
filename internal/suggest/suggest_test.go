package suggest

import (
	"slices"
	"testing"
)

// TestNearest: a typo, a case slip, a dropped or added letter and two
// letters swapped find their name; a name far from all, an exact one,
// and a tie find none.
func TestNearest(t *testing.T) {
	names := []string{"billing_refund", "billing_invoice", "order_cancel", "Account", "cat", "car",
		"grief", "joy", "label", "labels", "bundle", "calibrate", "sim"}
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"biling_refund", "billing_refund", true},   // a deletion
		{"billling_refund", "billing_refund", true}, // an insertion
		{"Order_Cancel", "order_cancel", true},
		{"account", "Account", true},
		{"billing_refnud", "billing_refund", true},
		// Two adjacent letters swapped are one edit: within a quarter
		// of a short name's length, where Levenshtein counts two.
		{"greif", "grief", true},
		{"rgief", "grief", true},
		{"lable", "label", true},
		{"bundel", "bundle", true},
		{"smi", "sim", true},
		{"calibrtae", "calibrate", true},
		// Too far: two edits in a name of five letters; a swap and a
		// substitution; letters moved apart, not adjacent.
		{"gierf", "", false},
		{"grefx", "", false},
		{"fierg", "", false},
		{"shipping", "", false},
		{"order_cancel", "", false},
		{"caz", "", false}, // cat and car, one edit each
		{"dog", "", false},
		{"oyj", "", false}, // joy rotated: two edits
	} {
		got, ok := Nearest(c.in, names)
		if got != c.want || ok != c.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestNear: a tie gives every name as near, in the candidates' order;
// one name, or none, as Nearest finds them.
func TestNear(t *testing.T) {
	names := []string{"set", "test", "cat", "car", "labels"}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"tset", []string{"set", "test"}},
		{"caz", []string{"cat", "car"}},
		{"lables", []string{"labels"}},
		{"dog", nil},
		{"set", nil},
	} {
		if got := Near(c.in, names); !slices.Equal(got, c.want) {
			t.Errorf("Near(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDistance: the optimal-string-alignment distance of pairs counted
// by hand, and limit + 1 for those beyond the limit.
func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 3, 0},
		{"abc", "abc", 3, 0},
		{"ab", "ba", 3, 1},
		{"abcd", "acbd", 3, 1},
		{"abcd", "badc", 3, 2}, // two swaps
		{"ca", "abc", 3, 3},    // OSA edits no substring twice: not 2
		{"kitten", "sitting", 3, 3},
		{"greif", "grief", 1, 1},
		{"gierf", "grief", 1, 2}, // beyond the limit: limit + 1
		{"abcdef", "badcfe", 1, 2},
		{"abcdefgh", "a", 2, 3}, // lengths too far apart
	} {
		if got := distance([]rune(c.a), []rune(c.b), c.limit); got != c.want {
			t.Errorf("distance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}
