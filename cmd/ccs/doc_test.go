package main

import (
	"bytes"
	"context"
	"encoding/json"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/internal/kernel"
)

// TestDoc: the package doc (main.go) lists every command, in the order
// 'ccs help' does, and nothing else; the reproduce line names every table
// (benchstat's TestDoc keeps its doc true the same way).
func TestDoc(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	line := regexp.MustCompile(`(?m)^\t([a-z-]+)\s{2,}(.*)$`)
	var listed []string
	var reproduce string
	for _, m := range line.FindAllStringSubmatch(doc, -1) {
		listed = append(listed, m[1])
		if m[1] == "reproduce" {
			reproduce = m[2]
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		if c.name == "reproduce" {
			for _, s := range c.sub {
				if !strings.Contains(reproduce, s.name) {
					t.Errorf("the package doc's reproduce line does not name the table %q", s.name)
				}
			}
		}
	}
	if !slices.Equal(listed, names) {
		t.Errorf("the package doc lists the commands %v; ccs has %v", listed, names)
	}
}

// TestRunFunctions: the commands' entry points called directly with their
// options do what the command line does.
func TestRunFunctions(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var sink bytes.Buffer
	out := &output{stdout: &sink, stderr: &sink}
	if err := runSimulate(ctx, simulateOptions{Out: dir, Seed: 2, DataSeed: 7, K: 5, PerClass: 60}, out); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "ball.json")
	if err := runCalibrate(ctx, calibrateOptions{Geometry: "ball", Cal: filepath.Join(dir, "cal.npz"), Out: set, Alpha: 0.1,
		Calibration: "one", Ridge: 1e-6}, out); err != nil {
		t.Fatal(err)
	}
	var direct bytes.Buffer
	args := []string{"evaluate", "-set", set, "-test", filepath.Join(dir, "test.npz"), "-json"}
	// The document names its command line: the direct call's is the one
	// the flags give.
	directOut := &output{stdout: &direct, stderr: &sink, command: "ccs " + strings.Join(args, " ")}
	if err := runEvaluate(ctx, evaluateOptions{Set: set, Test: filepath.Join(dir, "test.npz"), JSON: true}, directOut); err != nil {
		t.Fatal(err)
	}
	var viaFlags bytes.Buffer
	if err := run(&viaFlags, &sink, args); err != nil {
		t.Fatal(err)
	}
	if direct.String() != viaFlags.String() || !strings.Contains(direct.String(), `"coverage"`) {
		t.Errorf("runEvaluate printed\n%s\nccs evaluate printed\n%s", direct.String(), viaFlags.String())
	}
	if err := runCalibrate(ctx, calibrateOptions{Geometry: "cube", Cal: "x", Out: "y", Alpha: 0.1, Calibration: "one", Ridge: 1}, out); !isUsage(err) {
		t.Errorf("an unknown family: %v, want a usage error", err)
	}
}

// TestVersion: ccs version names the module and this build's kernels, as
// text and as JSON.
func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"version"}); err != nil {
		t.Fatal(err)
	}
	if s := stdout.String(); !strings.Contains(s, "github.com/ccsets/ccs") || !strings.Contains(s, "kernels: "+kernel.Level()) || !strings.Contains(s, "BLAS: "+kernel.BLAS) {
		t.Errorf("ccs version printed\n%s", s)
	}
	stdout.Reset()
	if err := run(&stdout, &stderr, []string{"version", "-json"}); err != nil {
		t.Fatal(err)
	}
	var b buildInfo
	if err := json.Unmarshal(stdout.Bytes(), &b); err != nil || b.Kernels != kernel.Level() || b.Go == "" || b.Version == "" {
		t.Errorf("ccs version -json: %+v, %v", b, err)
	}
}
