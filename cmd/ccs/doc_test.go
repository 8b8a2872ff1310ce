package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/internal/kernel"
)

// commandList is the package doc's list of the commands, generated from
// the one table of them (commands()): each name and its description, as
// 'ccs help' prints them.
func commandList() string {
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	var b strings.Builder
	for _, c := range cmds {
		fmt.Fprintf(&b, "//\t%-*s %s\n", width, c.name, c.short)
	}
	return b.String()
}

// TestDoc: the package doc (main.go) lists every command with its
// description, generated from commands() (go test -run TestDoc -update
// rewrites it), and its reproduce line names every table (benchstat's
// TestDoc keeps its doc true the same way).
func TestDoc(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "// (cmd_reproduce_TABLE.go):\n//\n", "//\n// Run 'ccs help'"
	i, j := bytes.Index(src, []byte(begin)), bytes.Index(src, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("main.go: the command list is not between %q and %q", begin, end)
	}
	i += len(begin)
	want := commandList()
	if got := string(src[i:j]); got != want {
		if !*update {
			t.Fatalf("main.go's command list differs from commands() (go test -run TestDoc -update rewrites it):\n%s\nwant:\n%s", got, want)
		}
		if err := os.WriteFile("main.go", append(append(append([]byte{}, src[:i]...), want...), src[j:]...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range commands() {
		if c.name != "reproduce" {
			continue
		}
		for _, s := range c.sub {
			if !strings.Contains(c.short, s.name) {
				t.Errorf("reproduce's description does not name the table %q", s.name)
			}
		}
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

// sessionSizes are the flags TestDocSessions adds to a documented command
// so that it runs in seconds (a flag given twice takes the last value):
// the same commands, on small data.
var sessionSizes = map[string][]string{
	"simulate":              {"-per-class", "150", "-k", "8"},
	"fit":                   {"-epochs", "3", "-quiet"},
	"reproduce sim":         {"-seeds", "1", "-per-class", "150", "-k", "8", "-epochs", "2", "-quiet"},
	"reproduce pnorm":       {"-seeds", "1", "-per-class", "150", "-k", "8", "-quiet"},
	"reproduce sensitivity": {"-seeds", "1", "-per-class", "150", "-sweeps", "alpha", "-epochs", "2", "-quiet"},
	"reproduce fmnist": {"-seeds", "1", "-rows", "baselines", "-train-anchors", "200", "-test-anchors", "300", "-k", "4",
		"-hull=false", "-models", "supervised=" + encoderPath("fmnist-supervised.onnx"), "-quiet"},
	"reproduce ood": {"-seeds", "1", "-rows", "baselines", "-train-anchors", "100", "-test-anchors", "200", "-k", "4",
		"-ood-sets", "noise:100", "-baseline-train", "300", "-cider-epochs", "1", "-models", "supervised=" + encoderPath("fmnist-supervised.onnx"), "-quiet"},
}

// slowSessions are the documented commands TestDocSessions runs only in
// the long suite (they embed images).
var slowSessions = map[string]bool{"reproduce fmnist": true, "reproduce ood": true, "reproduce sensitivity": true}

func encoderPath(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "encoders", name))
	if err != nil {
		panic(err)
	}
	return p
}

// sessions returns the commands of the sh blocks of a Markdown file: each
// line that runs ccs (or ./scripts/ccs), split into arguments, comments
// dropped.
func sessions(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		}
		if !in {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) > 1 && f[0] == "ccs", len(f) > 1 && f[0] == "./scripts/ccs":
			out = append(out, f[1:])
		}
	}
	return out
}

// TestDocSessions runs the command sessions of README.md and docs/*.md —
// every ccs command of their sh blocks, in order, each file in a
// directory of its own — on small data (sessionSizes): the documented
// commands exist, take the flags shown and work together.
func TestDocSessions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	ran := 0
	for _, file := range files {
		cmds := sessions(t, file)
		if len(cmds) == 0 {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Chdir(t.TempDir())
			for _, args := range cmds {
				path := args[0]
				if len(args) > 1 && args[0] == "reproduce" {
					path += " " + args[1]
				}
				if slowSessions[path] && testing.Short() {
					continue
				}
				// "> FILE": standard output into FILE, as a shell would.
				redirect := ""
				if i := slices.Index(args, ">"); i >= 0 && i == len(args)-2 {
					args, redirect = args[:i], args[i+1]
				}
				full := append(slices.Clone(args), sessionSizes[path]...)
				var stdout, stderr bytes.Buffer
				if err := run(&stdout, &stderr, full); err != nil {
					t.Fatalf("ccs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				}
				if redirect != "" {
					if err := os.WriteFile(redirect, stdout.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				ran++
			}
		})
	}
	if ran == 0 {
		t.Fatal("no documented session ran")
	}
}
