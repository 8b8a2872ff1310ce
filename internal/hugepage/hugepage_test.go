package hugepage

import (
	"testing"
)

// TestInner: the range is the whole huge pages inside, empty where there
// is none.
func TestInner(t *testing.T) {
	for _, c := range []struct {
		addr, n, lo, hi uintptr
	}{
		{0, 3 * Size, 0, 3 * Size},
		{1, 3 * Size, Size, 3 * Size},
		{Size - 1, Size + 2, Size, 2 * Size},
		{1, Size, Size, Size},
		{5 * Size, 100, 5 * Size, 5 * Size},
		{5*Size + 1, 100, 6 * Size, 6 * Size},
	} {
		lo, hi := inner(c.addr, c.n)
		if lo != c.lo || hi != c.hi {
			t.Errorf("inner(%#x, %#x) = %#x, %#x; want %#x, %#x", c.addr, c.n, lo, hi, c.lo, c.hi)
		}
		if hi < lo || lo < c.addr || (hi > lo && hi > c.addr+c.n) {
			t.Errorf("inner(%#x, %#x) = %#x, %#x: not inside", c.addr, c.n, lo, hi)
		}
	}
}

// TestAdvise: Advise changes no value of slices of every size (and an
// empty one), whole huge pages inside or none, even written before it (a
// destructive advice, such as MADV_DONTNEED, would zero them).
func TestAdvise(t *testing.T) {
	Advise([]float32(nil))
	for _, n := range []int{1, 1000, minBytes/4 - 1, minBytes / 4, 3*Size/4 + 123} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i)
		}
		Advise(x)
		for i, v := range x {
			if v != float32(i) {
				t.Fatalf("n=%d: x[%d] = %v after Advise", n, i, v)
			}
		}
	}
}
