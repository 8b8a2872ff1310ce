package retrieve

import (
	"strings"
	"testing"
)

// TestUnitNormWarning: a collection's rows more than NormRefusal off unit
// norm are counted (an all-zero row, a row of norm 1.3), the first named;
// rows within it, or none off, give no warning; the count is kept.
func TestUnitNormWarning(t *testing.T) {
	rows := []float32{
		1, 0, 0,
		0, 0.6, 0.8,
		0, 0, 0, // a failed encoding
		1.3, 0, 0,
		0, 1.005, 0, // within NormRefusal
	}
	c, err := NewCollection(rows, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if off, first, norm := c.OffUnit(); off != 2 || first != 2 || norm != 0 {
		t.Errorf("OffUnit = %d, %d, %v; want 2, 2, 0", off, first, norm)
	}
	w := UnitNormWarning(`collection "db"`, c, "a", "b")
	if !strings.HasPrefix(w, `collection "db": 2 of its 5 rows are not of unit norm (the first: row 2, norm 0), and sets a, b were calibrated on unit-norm embeddings`) {
		t.Errorf("warning %q", w)
	}
	if w := UnitNormWarning("c", c); !strings.Contains(w, "and the set was calibrated") {
		t.Errorf("warning %q", w)
	}
	one, err := NewCollection(rows[:9], 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := UnitNormWarning("c", one, "s"); !strings.HasPrefix(w, "c: 1 of its 3 rows is not of unit norm (the first: row 2, norm 0), and set s was") {
		t.Errorf("warning %q", w)
	}
	unit, err := NewCollection(rows[:6], 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := UnitNormWarning("c", unit, "s"); w != "" {
		t.Errorf("unit rows: warning %q", w)
	}
}
