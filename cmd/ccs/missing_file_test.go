package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestMissingFlagFile: a file that does not exist is named with the flag
// that gave it, however the flag was written; an error that names the
// flag already, or another file, is left as it is.
func TestMissingFlagFile(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rows := make([]float32, 40*3)
	for i := range rows {
		rows[i] = float32(i%7) + float32(i)/100
	}
	if err := bundle.WriteNPY(p("emb.npy"), bundle.Float32(rows, 40, 3)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("none.csv") + ":cell", "-out", p("b")}, "-labels: open " + p("none.csv") + ": no such file or directory"},
		{[]string{"bundle", "-embeddings=" + p("nope.npy"), "-labels", p("none.csv"), "-out", p("b")}, "-embeddings: open " + p("nope.npy") + ": no such file or directory"},
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("none.npz"), "-out", p("s.json")}, "-cal: open " + p("none.npz") + ": no such file or directory"},
		{[]string{"evaluate", "-set", p("none.json"), "-test", p("none.npz")}, "-set: open " + p("none.json") + ": no such file or directory"},
		{[]string{"serve", "-set", "a=" + p("none.json"), "-addr", "127.0.0.1:0"}, "-set: set \"a\": open " + p("none.json") + ": no such file or directory"},
	} {
		err := run(io.Discard, io.Discard, c.args)
		if err == nil || err.Error() != c.want || exitCode(err) != 1 {
			t.Errorf("%v: %v, want %q (exit 1)", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(p("b")); !os.IsNotExist(err) {
		t.Errorf("a bundling from a missing file left %s", p("b"))
	}
}
