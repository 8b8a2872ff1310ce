package main

import (
	"flag"
	"io"
	"slices"
	"testing"
)

// TestParsePositional: a positional command's flags may follow its
// arguments, as ccs report's usage line writes them (RESULT.json… -out
// report.html); "--" ends the flags; a command without arguments still
// takes flags before them alone.
func TestParsePositional(t *testing.T) {
	for _, c := range []struct {
		args       []string
		positional bool
		out, title string
		words      []string
	}{
		{[]string{"-out", "r.html", "a.json", "b.json"}, true, "r.html", "", []string{"a.json", "b.json"}},
		{[]string{"a.json", "b.json", "-out", "r.html"}, true, "r.html", "", []string{"a.json", "b.json"}},
		{[]string{"a.json", "-title", "T", "b.json", "-out", "r.html"}, true, "r.html", "T", []string{"a.json", "b.json"}},
		{[]string{"a.json", "--", "-out", "r.html"}, true, "", "", []string{"a.json", "-out", "r.html"}},
		{[]string{"-out", "r.html", "--", "-a.json"}, true, "r.html", "", []string{"-a.json"}},
		{[]string{"a.json", "-out", "r.html"}, false, "", "", []string{"a.json", "-out", "r.html"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		out := fs.String("out", "", "")
		title := fs.String("title", "", "")
		cmd := &command{positional: c.positional}
		if err := cmd.parse(fs, c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if *out != c.out || *title != c.title || !slices.Equal(fs.Args(), c.words) {
			t.Errorf("%q: -out %q -title %q, arguments %q; want %q %q %q", c.args, *out, *title, fs.Args(), c.out, c.title, c.words)
		}
	}
	// An unknown flag after the arguments is refused as before them.
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := (&command{positional: true}).parse(fs, []string{"a.json", "-bogus"}); err == nil {
		t.Error("an unknown flag after the arguments: no error")
	}
}
