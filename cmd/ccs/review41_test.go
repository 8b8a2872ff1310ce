package main

// Regressions from a fourth review (np.savetxt's comment header, a
// .txt's label column, the decimal-comma separator rule, otherColumn):
// each failed at 8db3eea.

import (
	"slices"
	"testing"
)

// A .txt of one label a line whose first line has several words, one of
// them "label"/"session"/"group": read as a blank-separated table since
// 8db3eea (readTxtColumn), its first line lost as a header and the
// column of the word taken. Before: 4 labels, 4 classes.
func TestReview41TxtOneALineFirstLineNamesWhat(t *testing.T) {
	for _, c := range []struct{ what, body string }{
		{"labels", "label A\nlabel B\nlabel C\nlabel A\n"},
		{"sessions", "session 1\nsession 2\nsession 1\nsession 3\n"},
		{"groups", "control group\ntreatment group\ncontrol group\nplacebo group\n"},
		{"labels", "no label\nB cell\nT cell\nNK cell\n"},
	} {
		p := reproWrite(t, c.what+".txt", c.body)
		ids, names, _, _, err := readIDs(p, c.what)
		if err != nil {
			t.Errorf("%q: %v", c.body, err)
			continue
		}
		if len(ids) != 4 {
			t.Errorf("%q: %d %s (names %v), want 4 (one a line)", c.body, len(ids), c.what, names)
		}
	}
}

// A headerless one-column labels CSV whose values start with '#'
// (hashtags, colours): openCSV (9568662) now skips every leading '#' line
// as np.savetxt's header: labels silently lost, or the file refused.
func TestReview41CSVHashLabelsSkipped(t *testing.T) {
	p := reproWrite(t, "tags.csv", "#news\n#sports\n#news\n#tech\n")
	ids, names, _, _, err := readIDs(p, "labels")
	if err != nil {
		t.Fatalf("%v", err)
	}
	if len(ids) != 4 {
		t.Errorf("%d labels %v, want 4", len(ids), names)
	}
	p = reproWrite(t, "tags2.csv", "#news\nsports\nnews\ntech\n")
	ids, names, _, _, err = readIDs(p, "labels")
	if err != nil {
		t.Fatalf("%v", err)
	}
	if len(ids) != 4 || !slices.Contains(names, "#news") {
		t.Errorf("%d labels %v, want 4 with #news", len(ids), names)
	}
}

// 8db3eea's fix for semicolon rows of decimal commas misses two columns
// (UMAP's x;y): at commas "-0","80;1","32" holds two numbers, as many as
// at semicolons, and the commas, more, win.
func TestReview41SniffTwoDecimalCommaColumns(t *testing.T) {
	for _, line := range []string{"-0,80;1,32", "0,5;0,25"} {
		if got := sniffSeparator(line, ".csv"); got != ';' {
			t.Errorf("sniffSeparator(%q) = %q, want ';'", line, got)
		}
	}
}
