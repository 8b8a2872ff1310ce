package report

import (
	"slices"
	"testing"
)

// TestParseText: the heading, captions before grids, notes after them,
// and every row, on the shapes of the tables' text (the p-norm table's two
// captioned grids, an OOD table's notes, a hull table's remark).
func TestParseText(t *testing.T) {
	text := `Title here: the protocol: with colons

At fixed coverage (calibrated):

| p | Coverage |
|---|---|
| 2 | 95.0% |
| 1 | 95.1% |

At fixed volume (not guaranteed):

| p | Coverage |
|---|---|
| 2 | 95.0% |

FAR, TAR: a note.
WARNING: another line of it
`
	b := parseText(text)
	if b.Title != "Title here" || b.Protocol != "the protocol: with colons" || len(b.Tables) != 2 || len(b.Notes) != 0 {
		t.Fatalf("%+v", b)
	}
	t0, t1 := b.Tables[0], b.Tables[1]
	if t0.Caption != "At fixed coverage (calibrated):" || t1.Caption != "At fixed volume (not guaranteed):" {
		t.Errorf("captions %q, %q", t0.Caption, t1.Caption)
	}
	if !slices.Equal(t0.Head, []string{"p", "Coverage"}) || len(t0.Rows) != 2 || t0.Rows[1][1] != "95.1%" || len(t1.Rows) != 1 {
		t.Errorf("grids %+v", b.Tables)
	}
	if len(t0.Notes) != 0 || len(t1.Notes) != 1 || t1.Notes[0] != "FAR, TAR: a note. WARNING: another line of it" {
		t.Errorf("notes %q, %q", t0.Notes, t1.Notes)
	}
	// A grid right under the heading has no caption; a remark after it is
	// its note.
	b = parseText("Hull: protocol\n\n| Method | Coverage |\n|---|---|\n| Convex Hull | 90% |\n\n(3 views left out)\n")
	if len(b.Tables) != 1 || b.Tables[0].Caption != "" || !slices.Equal(b.Tables[0].Notes, []string{"(3 views left out)"}) {
		t.Errorf("%+v", b)
	}
}
