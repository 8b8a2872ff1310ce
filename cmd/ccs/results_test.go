package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/buildinfo"
)

// TestMain lets a test run ccs as a process of its own (the test binary
// with CCS_TEST_MAIN=1 is ccs), so that it can kill it.
func TestMain(m *testing.M) {
	if os.Getenv("CCS_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ccsProcess is a command running ccs with args as a process of its own
// (the test binary, as TestMain lets it be), not yet started.
func ccsProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CCS_TEST_MAIN=1")
	return cmd
}

// keptCells counts the finished cells under dir (not the temporary files
// of a write a kill interrupted).
// startUntilCell starts ccs with args in a process of its own and returns
// once it has kept its first cell in cells, with the process and its
// standard error.
func startUntilCell(t *testing.T, cells string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := ccsProcess(args...)
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); keptCells(t, cells) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no cell kept in 2 minutes:\n%s", stderr.String())
		}
	}
	return cmd, stderr
}

// keptCells counts the cells kept under dir.
func keptCells(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "seed-") && strings.HasSuffix(d.Name(), ".json") {
			n++
		}
		return nil
	})
	return n
}

// TestResume: a run killed after its first cells loses only the cells in
// progress; the rerun reads the kept cells back, computes the rest and
// prints the table an uninterrupted run prints; a third run computes
// nothing; a changed flag or code version computes again.
func TestResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and reruns a training table")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "results")
	args := func(out string, extra ...string) []string {
		return append([]string{"reproduce", "sim", "-rows", "learned", "-seeds", "2", "-k", "40", "-per-class", "1500",
			"-epochs", "40", "-patience", "100", "-quiet", "-json", "-out", out}, extra...)
	}
	const total = 12 // six rows, two seeds

	cells := filepath.Join(out, "cells")
	cmd, _ := startUntilCell(t, cells, args(out)...)
	cmd.Process.Kill()
	cmd.Wait()
	kept := keptCells(t, cells)
	if kept == 0 || kept >= total {
		t.Fatalf("%d of %d cells kept when the run was killed; want some, not all", kept, total)
	}

	rerun := func(args []string) (experiment.Document, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatal(err)
		}
		var doc experiment.Document
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc, stderr.String()
	}
	doc, msg := rerun(args(out))
	if want := fmt.Sprintf("%d read back, %d computed\n", kept, total-kept); !strings.Contains(msg, want) {
		t.Errorf("rerun says %q, want %q", msg, want)
	}
	fresh, _ := rerun(args(filepath.Join(dir, "fresh")))
	a, _ := json.Marshal(doc.Result)
	b, _ := json.Marshal(fresh.Result)
	if !bytes.Equal(a, b) {
		t.Errorf("the resumed table differs from an uninterrupted run's:\n%s\n%s", a, b)
	}
	kept2, err := experiment.LoadDocument(filepath.Join(out, "sim.json"))
	if err != nil || len(kept2.Result.(*experiment.SimResult).Tables) != 1 {
		t.Fatalf("the results directory's sim.json: %v", err)
	}
	if _, msg = rerun(args(out)); !strings.Contains(msg, fmt.Sprintf("%d read back, 0 computed\n", total)) {
		t.Errorf("third run says %q", msg)
	}
	// Another T (a flag) and another code version invalidate seed 0's six
	// cells; -seeds (not a cell's number) does not.
	// Each says which changed (it blamed the build for a flag's change).
	if _, msg = rerun(args(out, "-T", "5", "-seeds", "1")); !strings.Contains(msg, "0 read back, 6 computed (of them kept before: 6 under another configuration (flags or input files))") {
		t.Errorf("changed flag: %q", msg)
	}
	defer func(v func() string) { codeVersion = v }(codeVersion)
	codeVersion = func() string { return "another build" }
	if _, msg = rerun(args(out, "-seeds", "1")); !strings.Contains(msg, "0 read back, 6 computed (of them kept before: 6 under another code version") {
		t.Errorf("changed code version: %q", msg)
	}
	// A build without a clean VCS revision (a test binary's) keys cells on
	// its file: said, since Python's library keeps its own.
	bi := buildinfo.Read()
	if clean := bi.Revision != "" && !bi.Modified; strings.Contains(msg, "carries no VCS revision of an unmodified tree") == clean {
		t.Errorf("a build of revision %q (modified %v): %q", bi.Revision, bi.Modified, msg)
	}
}

// TestConvertedInputs: a bundle NumPy wrote in float64 with a Fortran-order
// array evaluates exactly as its float32 twin, and the conversion is said
// once on stderr.
func TestConvertedInputs(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "ball.json")
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", "../../bundle/testdata/twin64.npz", "-alpha", "0.5", "-allow-infinite", "-out", set}); err != nil {
		t.Fatal(err)
	}
	want := "note: ../../bundle/testdata/twin64.npz: converted on reading: anchors: float64 → float32; negatives: float64 → float32, Fortran order → C order; positives: float64 → float32\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	eval := func(file string) (string, string) {
		var o, e bytes.Buffer
		if err := run(&o, &e, []string{"evaluate", "-set", set, "-test", "../../bundle/testdata/" + file}); err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String()
	}
	o32, e32 := eval("explicit.npz")
	o64, e64 := eval("twin64.npz")
	// Both hold the calibration split's anchors, the same values: each
	// evaluation warns that it is no test.
	own := ": this is the set's calibration split"
	if o32 != o64 || strings.Count(e32, "\n") != 1 || !strings.Contains(e32, own) || strings.Count(e64, "note:") != 1 || !strings.Contains(e64, own) ||
		!strings.Contains(o32, " calibration-split positives") || strings.Contains(o32, "test ") ||
		!strings.Contains(o32, "check      ") || !strings.Contains(o32, " calibration-split anchors (one positive each)") {
		t.Errorf("float32:\n%s%s\nfloat64:\n%s%s", o32, e32, o64, e64)
	}
}

// TestCellKeyFlags: the flags that choose which cells run, or only size
// what is never kept (-hull-anchors), leave the cells' key alone; a flag
// that changes a cell's numbers changes it.
func TestCellKeyFlags(t *testing.T) {
	var reproduce *command
	for _, c := range commands() {
		if c.name == "reproduce" {
			reproduce = c
		}
	}
	// config is the key's configuration of reproduce fmnist with args;
	// -k 0 stops the command before it loads anything.
	config := func(args ...string) string {
		t.Helper()
		out := &output{stdout: io.Discard, stderr: io.Discard}
		if err := reproduce.run(context.Background(), out, "reproduce", append([]string{"fmnist", "-k", "0"}, args...)); err == nil {
			t.Fatalf("reproduce fmnist -k 0 %v ran", args)
		}
		if out.config == "" {
			t.Fatalf("no configuration for %v", args)
		}
		return out.config
	}
	base := config()
	for _, c := range []struct {
		args []string
		same bool
	}{
		{[]string{"-hull-anchors", "300"}, true},
		{[]string{"-hull=false"}, true},
		{[]string{"-seeds", "2"}, true},
		{[]string{"-rows", "infonce"}, true},
		{[]string{"-quiet", "-json"}, true},
		{[]string{"-T", "5"}, false},
		{[]string{"-test-anchors", "500"}, false},
		{[]string{"-alpha", "0.1"}, false},
	} {
		if got := config(c.args...) == base; got != c.same {
			t.Errorf("%v: same key %v, want %v", c.args, got, c.same)
		}
	}
}

// TestResultsReplacedSaid: a second run into a results directory says
// that it replaced the directory's table (a quick variant replaced a
// trial's 20-seed table without a word).
func TestResultsReplacedSaid(t *testing.T) {
	dir := t.TempDir()
	args := []string{"reproduce", "sim", "-rows", "baselines", "-seeds", "1", "-k", "10", "-per-class", "100", "-out", dir}
	for i, want := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr.String(), "sim.json replaced by this run's table"); got != want {
			t.Errorf("run %d: said replaced %v, want %v:\n%s", i+1, got, want, stderr.String())
		}
	}
}

// TestSimDrawsJSON: sim-draws -json names its fields as the documents do
// (snake case), not as Go's field names.
func TestSimDrawsJSON(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(&stdout, io.Discard, []string{"reproduce", "sim-draws", "-draws", "1", "-k", "10", "-per-class", "100", "-quiet", "-json"}); err != nil {
		t.Fatal(err)
	}
	var draws []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &draws); err != nil || len(draws) != 1 {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	for _, k := range []string{"data_seed", "ball_exclusion", "ball_logvol_per_dim", "ellipsoid_exclusion", "ellipsoid_logvol_per_dim", "distance"} {
		if _, ok := draws[0][k]; !ok {
			t.Errorf("no %q in %v", k, draws[0])
		}
	}
}
