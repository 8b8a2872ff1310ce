package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadIDStrings: ids from a .csv's column (named, or beside pandas'
// index), a .txt's lines trimmed and its blank end dropped; a .txt
// given a column, a blank line inside and an unnamed column of several
// refused, each saying what to do.
func TestReadIDStrings(t *testing.T) {
	dir := t.TempDir()
	p := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	want := []string{"p-0", "p 1", "p-2"}
	for _, c := range []struct {
		arg, err string
	}{
		{p("series.csv", ",id\n0,p-0\n1,p 1\n2,p-2\n"), ""},
		{p("named.csv", "n,id,x\n0,p-0,a\n1,p 1,b\n2,p-2,c\n") + ":id", ""},
		{p("trail.txt", "p-0 \n p 1\np-2\n\n\n"), ""},
		{p("lines.txt", "p-0\np 1\np-2\n") + ":id", "a text file of ids has no columns"},
		{p("blank.txt", "p-0\n\np-2\n"), "blank.txt:2: an empty id"},
		{p("wide.csv", "a,b,c\n1,2,3\n"), "which column holds the ids? give"},
		{filepath.Join(dir, "named.csv") + ":nope", `no column "nope" (the columns: n, id, x)`},
	} {
		got, err := readIDStrings(c.arg, "ids", -1, 0)
		switch {
		case c.err == "" && (err != nil || !slices.Equal(got, want)):
			t.Errorf("%s: %q, %v; want %q", c.arg, got, err, want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.arg, err, c.err)
		}
	}
}
