package percent

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		x      float64
		digits int
		want   string
	}{
		{0.9, 2, "90.00%"}, {1, 2, "100.00%"}, {0, 2, "0.00%"}, {0.99995, 2, "99.995%"}, {0.99999, 2, "99.999%"},
		{0.9999999, 2, ">99.9999%"}, {2e-5, 2, "0.002%"}, {1e-9, 2, "<0.0001%"}, {-0.5, 2, "-50.00%"}, {0.123456, 2, "12.35%"},
		{0.99996, 1, "99.996%"}, {0.9996, 1, "99.96%"}, {0.5, 1, "50.0%"}, {0.99999999, 1, ">99.999%"},
		{math.NaN(), 2, "NaN%"},
	} {
		if got := Format(c.x, c.digits); got != c.want {
			t.Errorf("Format(%v, %d) = %q, want %q", c.x, c.digits, got, c.want)
		}
	}
}
