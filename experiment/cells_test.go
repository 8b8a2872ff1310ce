package experiment

import (
	"errors"
	"os"
	"testing"
)

// TestCells: a cell is computed once and read back under its key; another
// key, a damaged file or another row or seed computes it again; a failed
// computation keeps nothing; nil cells compute every time.
func TestCells(t *testing.T) {
	dir := t.TempDir()
	c, err := NewCells(dir, "k1")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	f := func(v int) func() (int, error) { return func() (int, error) { calls++; return v, nil } }
	for i, want := range []int{7, 7} {
		if v, err := cell(c, "tab/le", "row 1", 3, f(7)); err != nil || v != want {
			t.Fatalf("call %d: %v, %v", i, v, err)
		}
	}
	if r, n, s := c.Counts(); calls != 1 || r != 1 || n != 1 || s != 0 {
		t.Errorf("%d computations, counts %d %d %d; want 1, 1 read back, 1 computed", calls, r, n, s)
	}
	if v, _ := cell(c, "tab/le", "row 1", 4, f(8)); v != 8 {
		t.Errorf("another seed read %v", v)
	}
	c2, _ := NewCells(dir, "k2")
	if v, _ := cell(c2, "tab/le", "row 1", 3, f(9)); v != 9 {
		t.Errorf("another key read %v, want a computed 9", v)
	}
	if _, _, s := c2.Counts(); s != 1 {
		t.Errorf("stale %d, want 1", s)
	}
	if err := os.WriteFile(c2.path("tab/le", "row 1", 3), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, _ := cell(c2, "tab/le", "row 1", 3, f(10)); v != 10 {
		t.Errorf("a damaged file read %v, want a computed 10", v)
	}
	boom := errors.New("boom")
	if _, err := cell(c2, "t", "r", 0, func() (int, error) { return 0, boom }); err != boom {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(c2.path("t", "r", 0)); !os.IsNotExist(err) {
		t.Error("a failed cell was kept")
	}
	calls = 0
	cell(nil, "t", "r", 0, f(1))
	cell(nil, "t", "r", 0, f(1))
	if calls != 2 {
		t.Errorf("nil cells: %d computations, want 2", calls)
	}
	if _, err := NewCells(dir, ""); err == nil {
		t.Error("an empty key was accepted")
	}
}
