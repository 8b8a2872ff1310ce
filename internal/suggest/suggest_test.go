package suggest

import "testing"

// TestNearest: a typo, a case slip and a dropped letter find their name;
// a name far from all, an exact one, and a tie find none.
func TestNearest(t *testing.T) {
	names := []string{"billing_refund", "billing_invoice", "order_cancel", "Account", "cat", "car"}
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"biling_refund", "billing_refund", true},
		{"Order_Cancel", "order_cancel", true},
		{"account", "Account", true},
		{"billing_refnud", "billing_refund", true},
		{"shipping", "", false},
		{"order_cancel", "", false},
		{"caz", "", false}, // cat and car, one edit each
		{"dog", "", false},
	} {
		got, ok := Nearest(c.in, names)
		if got != c.want || ok != c.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
