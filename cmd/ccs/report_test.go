package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/internal/race"
)

// TestReportCommand: ccs report from a results directory, from result
// files, and from both (a document twice gets two sections); neither is
// a usage error.
func TestReportCommand(t *testing.T) {
	if race.Enabled {
		// 42 s under the race detector, drawing a report's figures: code
		// with no goroutines (gonum/plot, PNG encoding); reproduce runs
		// under it in TestInterrupt. It runs in the suite's other phases.
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	dir := t.TempDir()
	res := filepath.Join(dir, "results")
	if _, err := ccs("reproduce", "sim", "-rows", "baselines", "-seeds", "1", "-k", "10", "-per-class", "100", "-quiet", "-out", res); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(res, "sim.json")
	for _, c := range []struct {
		args     []string
		sections []string
	}{
		{[]string{"-in", res}, []string{`id="sim"`}},
		{[]string{doc}, []string{`id="sim"`}},
		{[]string{"-in", res, doc}, []string{`id="sim"`, `id="sim-2"`}},
	} {
		page := filepath.Join(dir, "report.html")
		if _, err := ccs(append([]string{"report", "-out", page}, c.args...)...); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		html, _ := os.ReadFile(page)
		if n := strings.Count(string(html), "<section "); n != len(c.sections) {
			t.Errorf("%v: %d sections, want %d", c.args, n, len(c.sections))
		}
		for _, s := range c.sections {
			if !strings.Contains(string(html), s) {
				t.Errorf("%v: no section %s", c.args, s)
			}
		}
	}
	// The tables alone, as Markdown and as LaTeX, by the file's name; a
	// name of another format is a usage error, naming the three.
	for _, c := range []struct{ name, want string }{{"t.md", "| Conformal Ball (ℓ2) "}, {"t.tex", "Conformal Ball ($\\ell_2$) & "}} {
		path := filepath.Join(dir, c.name)
		if _, err := ccs("report", "-in", res, "-out", path); err != nil {
			t.Fatalf("-out %s: %v", c.name, err)
		}
		b, _ := os.ReadFile(path)
		if !strings.Contains(string(b), c.want) || strings.Contains(string(b), "<html") {
			t.Errorf("-out %s: %q lacks %q", c.name, b[:min(len(b), 600)], c.want)
		}
	}
	if _, err := ccs("report", "-in", res, "-out", filepath.Join(dir, "r.pdf")); !isUsage(err) || !strings.Contains(err.Error(), ".tex (LaTeX tables), not .pdf") {
		t.Errorf("-out r.pdf: %v, want a usage error naming .html, .md and .tex", err)
	}
	// A result under a name of the user's own is read from -in too, and
	// said; a set file beside it is not a result.
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(doc)
	os.WriteFile(filepath.Join(other, "mine.json"), b, 0o644)
	os.WriteFile(filepath.Join(other, "ball.json"), []byte(`{"format": "ccs-set", "version": 1}`), 0o644)
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"report", "-in", other, "-out", filepath.Join(dir, "o.html")}); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "o.html"))
	if want := "note: -in " + other + ": also read " + filepath.Join(other, "mine.json") + " (results not named KIND.json)\nnote: -in " + other + ": left ball.json alone: no result document (a set file, other JSON)"; !strings.Contains(stderr.String(), want) ||
		strings.Count(string(html), "<section ") != 1 {
		t.Errorf("-in with mine.json: %d sections, stderr %q, want one section and %q", strings.Count(string(html), "<section "), stderr.String(), want)
	}
	if _, err := ccs("report", "-out", filepath.Join(dir, "r.html")); !isUsage(err) {
		t.Errorf("no input: %v, want a usage error", err)
	}
	// Inputs of the wrong kind, each named with what was wanted.
	npz := filepath.Join(dir, "cal.npz")
	if err := os.WriteFile(npz, []byte("PK\x03\x04"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"-out", filepath.Join(dir, "r.html"), npz}, false, "cal.npz: not a result document (JSON from ccs compare -json"},
		{[]string{"-in", res, "-out", dir}, true, "is a directory: give the file to write"},
		{[]string{"-in", dir, "-out", filepath.Join(dir, "r.html")}, false, "written by ccs compare -out"},
	} {
		_, err := ccs(append([]string{"report"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || isUsage(err) != c.usage {
			t.Errorf("%v: %v, want %q (usage %v)", c.args, err, c.want, c.usage)
		}
	}
}
