package main

import (
	"bytes"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/race"
	"github.com/ccsets/ccs/report"
)

// TestUserResults: what ccs evaluate and ccs coverage-check print with
// -json is a document of its kind, which ccs plot draws (two of one kind
// side by side) and ccs report renders; a JSON that is no document (the
// old ccs evaluate -json, without its kind) is refused by name.
func TestUserResults(t *testing.T) {
	dir := t.TempDir()
	set := calibratedBall(t, dir)
	test := filepath.Join(dir, "test.npz")
	var files []string
	var results []experiment.Result
	for _, c := range []struct {
		name, kind string
		args       []string
	}{
		{"evaluate.json", "evaluate", []string{"evaluate", "-set", set, "-test", test, "-json"}},
		{"evaluate-classes.json", "evaluate", []string{"evaluate", "-set", set, "-test", test, "-per-class", "-json"}},
		{"coverage-check.json", "coverage-check", []string{"coverage-check", "-set", set, "-test", test, "-resplits", "50", "-json"}},
	} {
		out, err := ccs(c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := experiment.LoadDocument(path)
		if err != nil {
			t.Fatal(err)
		}
		if doc.Kind != c.kind || doc.Command != "ccs "+strings.Join(c.args, " ") || len(doc.Build) == 0 {
			t.Errorf("%s: kind %q, command %q, build %s", c.name, doc.Kind, doc.Command, doc.Build)
		}
		files = append(files, path)
		results = append(results, doc.Result)
	}
	// coverage-check's document carries what the file's own threshold
	// covers (the resplits recalibrate): evaluate's coverage.
	ev, cc := results[0].(*experiment.Evaluation), results[2].(*experiment.CoverageCheck)
	if cc.Stored == nil || cc.Stored.Coverage != ev.Coverage || cc.Stored.Positives != ev.Positives {
		t.Errorf("coverage-check -json: this_set %+v, want evaluate's coverage %v of %d positives", cc.Stored, ev.Coverage, ev.Positives)
	}

	plots, page := filepath.Join(dir, "plots"), filepath.Join(dir, "report.html")
	// Drawing and rendering (gonum/plot, PNG encoding) start no goroutine:
	// not under the race detector (TestReportCommand's rule), where the
	// test took 31 s with them and takes 0.3 s without. The refusals below
	// run in every phase.
	if !race.Enabled {
		out, err := ccs(append([]string{"plot", "-out", plots}, files...)...)
		if err != nil {
			t.Fatal(err)
		}
		var drawn []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			drawn = append(drawn, filepath.Base(line))
		}
		want := []string{"evaluate-coverage.png", "evaluate-coverage.svg", "evaluate-coverage-2.png", "evaluate-coverage-2.svg",
			"coverage-check-distribution.png", "coverage-check-distribution.svg"}
		if !slices.Equal(drawn, want) {
			t.Errorf("ccs plot drew %v, want %v", drawn, want)
		}

		if _, err := ccs(append([]string{"report", "-out", page}, files...)...); err != nil {
			t.Fatal(err)
		}
		html, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{`<title>ccs results</title>`, `<section id="evaluate">`, `<section id="evaluate-2">`, `<section id="coverage-check">`,
			`data-figure="evaluate-coverage"`, `data-figure="coverage-check-distribution"`, "Per class of the test bundle&#39;s labels"} {
			if !strings.Contains(string(html), s) {
				t.Errorf("the report lacks %s", s)
			}
		}
	}

	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(`{"geometry": "ball", "coverage": 0.9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"plot", "-out", plots, old}, {"report", "-out", page, old}} {
		if _, err := ccs(cmd...); err == nil || !strings.Contains(err.Error(), `old.json: experiment: kind "", want one of [sim`) {
			t.Errorf("%s of a JSON without a kind: %v", cmd[0], err)
		}
	}
	// A set file given for a result, and a directory that is not there.
	if _, err := ccs("plot", "-out", plots, set); err == nil || !strings.Contains(err.Error(), `a file of format "ccs-set", not a result document`) {
		t.Errorf("plot of a set file: %v", err)
	}
	// A good document before a bad one: nothing is drawn.
	fresh := filepath.Join(dir, "fresh-plots")
	if _, err := ccs("plot", "-out", fresh, files[0], old); err == nil {
		t.Error("plot of a good and a bad document: no error")
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("plot of a good and a bad document: %s made (%v)", fresh, err)
	}
	if _, err := ccs("report", "-in", filepath.Join(dir, "nope"), "-out", page); err == nil || !strings.Contains(err.Error(), "nope: no such directory") {
		t.Errorf("report -in of no directory: %v", err)
	}
}

// TestGoldenDocuments: every golden output that is a document (a command's
// -json) reads back as its kind, draws figures and renders in a report
// under its kind's heading: a kind of result added with its golden is
// checked here with no other change.
func TestGoldenDocuments(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("{\n  \"kind\": ")) {
			continue
		}
		doc, err := experiment.ReadDocument(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		kinds = append(kinds, doc.Kind)
		figs, err := doc.Figures()
		if err != nil || len(figs) == 0 {
			t.Errorf("%s: %d figures, error %v", path, len(figs), err)
		}
		var page bytes.Buffer
		if err := report.Write(&page, "golden", []*experiment.Document{doc}); err != nil {
			t.Errorf("%s: report: %v", path, err)
		}
		k, _ := experiment.KindOf(doc.Kind)
		if !strings.Contains(page.String(), "<h2>"+html.EscapeString(k.Heading)+"</h2>") {
			t.Errorf("%s: the report has no section headed %q", path, k.Heading)
		}
	}
	if !slices.Contains(kinds, "evaluate") {
		t.Errorf("golden documents of the kinds %v, want evaluate's among them", kinds)
	}
}

// TestResultsTextAsEvaluate: an evaluation saved with -db, -per-class
// and -baseline reads back (the text ccs report renders under "ccs
// results") with its set size's line, its baselines' lines, its class
// sizes' table and its worst class's sentence as ccs evaluate prints
// them, word for word; a class-conditional set's too (its sizes at each
// anchor's class's threshold, no baseline).
func TestResultsTextAsEvaluate(t *testing.T) {
	p := simulatedBalls(t)
	for _, c := range []struct {
		set   string
		more  []string
		parts int // set size, baselines, worst class, class sizes
	}{
		{"ball.json", []string{"-baseline", "topk,topk-l2", "-cal", p("cal.npz")}, 5},
		{"class.json", nil, 3},
	} {
		args := append([]string{"evaluate", "-set", p(c.set), "-test", p("test.npz"), "-db", p("fit.npz") + ":anchors", "-size-anchors", "50", "-per-class"}, c.more...)
		var text, js strings.Builder
		if err := run(&text, io.Discard, args); err != nil {
			t.Fatal(err)
		}
		if err := run(&js, io.Discard, append(args, "-json")); err != nil {
			t.Fatal(err)
		}
		doc, err := experiment.ReadDocument(strings.NewReader(js.String()))
		if err != nil {
			t.Fatal(err)
		}
		var saved strings.Builder
		for _, x := range doc.Result.Texts() {
			if err := x.WriteText(&saved); err != nil {
				t.Fatal(err)
			}
		}
		// evaluate's parts, each as it must read in the saved text.
		var parts []string
		lines := strings.Split(text.String(), "\n")
		for i, l := range lines {
			switch {
			case strings.HasPrefix(l, "set size   "):
				parts = append(parts, "Set size: "+strings.TrimPrefix(l, "set size   ")+".")
			case strings.HasPrefix(l, "top-k"):
				parts = append(parts, l)
			case strings.HasPrefix(l, "worst class "):
				parts = append(parts, "Worst class "+strings.TrimPrefix(l, "worst class ")+".")
			case strings.HasPrefix(l, "set size by class"):
				end := i + 2
				for end < len(lines) && strings.HasPrefix(lines[end], "|") {
					end++
				}
				parts = append(parts, strings.Join(lines[i:end], "\n"))
			}
		}
		if len(parts) != c.parts {
			t.Fatalf("%s: evaluate printed %d parts, want %d:\n%s", c.set, len(parts), c.parts, text.String())
		}
		for _, want := range parts {
			if !strings.Contains(saved.String(), want) {
				t.Errorf("%s: the saved evaluation's text lacks evaluate's\n%s\nin\n%s", c.set, want, saved.String())
			}
		}
	}
}

// TestOutDirMissing: a -out file whose directory is not there is refused
// before any input is read (ccs ood found it after its scoring and CIDER's
// training).
func TestOutDirMissing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nodir", "x.json")
	for _, args := range [][]string{
		{"ood", "-set", "s.json", "-id", "a.npz", "-ood", "b.npz", "-out", out},
		{"evaluate", "-set", "s.json", "-test", "t.npz", "-out", out},
		{"coverage-check", "-set", "s.json", "-test", "t.npz", "-out", out},
	} {
		err := run(io.Discard, io.Discard, args)
		if err == nil || !strings.Contains(err.Error(), "-out "+out+": its directory "+filepath.Dir(out)+" is not there") {
			t.Errorf("%s: %v", args[0], err)
		}
	}
}

// TestPlotDirectory: a results directory given to ccs plot is a usage
// error naming the documents in it ("read results: is a directory"
// before).
func TestPlotDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "compare.json"), []byte("{}"), 0o644)
	err := run(io.Discard, io.Discard, []string{"plot", "-out", filepath.Join(dir, "figs"), dir})
	if !isUsage(err) || !strings.Contains(err.Error(), dir+" is a directory: give the result documents in it ("+filepath.Join(dir, "compare.json")+")") {
		t.Errorf("plot of a directory: %v", err)
	}
}
