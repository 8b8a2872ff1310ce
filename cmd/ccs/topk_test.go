package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
)

// TestEvaluateBaselineInputs: evaluate -baseline measures the top-k
// baselines on the -db collection, k calibrated on the set's own split
// (the JSON's k, rank and n), and refuses, naming why, what it cannot
// compare: a set that records no calibration split, another split as
// -cal, a collection of another dimension, a class-conditional set, a
// trial list.
func TestEvaluateBaselineInputs(t *testing.T) {
	p := simulatedBalls(t)
	set, err := conformal.Load(p("ball.json"))
	if err != nil {
		t.Fatal(err)
	}
	set.Calibration.Anchors = "" // as a set calibrated before ccs recorded it
	if err := set.Save(p("nosplit.json")); err != nil {
		t.Fatal(err)
	}
	writeNPY64(t, p("d4.npy"), make([]float64, 40), 10, 4)
	db := p("fit.npz") + ":anchors"

	var stdout strings.Builder
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("ball.json"), "-test", p("test.npz"), "-db", db, "-baseline", "topk", "-cal", p("cal.npz"), "-json"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Baselines []eval.TopK `json:"baselines"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil || len(got.Baselines) != 1 {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if b := got.Baselines[0]; b.N != set.Calibration.N || b.Rank != set.Calibration.Rank || b.K < 1 || b.K > b.Items || b.Anchors == 0 {
		t.Errorf("baseline %+v; the set calibrated rank %d of n=%d", b, set.Calibration.Rank, set.Calibration.N)
	}

	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no calibration split recorded", []string{"-set", p("nosplit.json"), "-test", p("test.npz"), "-db", db, "-baseline", "topk", "-cal", p("cal.npz")}, false, "nosplit.json: -baseline: eval: the set records no calibration split"},
		{"another split", []string{"-set", p("ball.json"), "-test", p("test.npz"), "-db", db, "-baseline", "topk", "-cal", p("test.npz")}, false, "-cal " + p("test.npz") + ": it is not the split the set was calibrated on"},
		{"a collection of another dimension", []string{"-set", p("ball.json"), "-test", p("test.npz"), "-db", p("d4.npy"), "-baseline", "topk", "-cal", p("cal.npz")}, false, "d4.npy: embeddings of shape (10, 4), dimension 4; the set's dimension is 3"},
		{"a class-conditional set", []string{"-set", p("class.json"), "-test", p("test.npz"), "-db", db, "-baseline", "topk", "-cal", p("cal.npz")}, true, "-baseline: " + p("class.json") + " is class-conditional"},
		{"no -cal", []string{"-set", p("ball.json"), "-test", p("test.npz"), "-db", db, "-baseline", "topk"}, true, "give -cal"},
		{"-cal not there", []string{"-set", p("ball.json"), "-test", p("test.npz"), "-db", db, "-baseline", "topk", "-cal", p("none.npz")}, false, "open " + p("none.npz") + ": no such file or directory"},
		{"an unknown baseline", []string{"-set", p("ball.json"), "-test", p("test.npz"), "-db", db, "-baseline", "top", "-cal", p("cal.npz")}, true, `-baseline "top": want topk`},
		{"with -trials", []string{"-set", p("ball.json"), "-trials", p("t.txt"), "-embeddings", p("e.npy"), "-ids", p("u.txt"), "-baseline", "topk"}, true, "-baseline and -cal read a test bundle (-test), not a trial list"},
	} {
		err := run(io.Discard, io.Discard, append([]string{"evaluate"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != map[bool]int{true: 2, false: 1}[c.usage] {
			t.Errorf("%s: %v (exit %d), want %q", c.name, err, exitCode(err), c.want)
		}
	}
}

// simulatedBalls makes ccs simulate's bundles (60 anchors a class, k = 4,
// seed 5) in a temporary directory, with a ball calibrated on cal.npz at
// α = 0.2, ball.json, and its class-conditional one, class.json; p names
// a file of the directory.
func simulatedBalls(t *testing.T) (p func(name string) string) {
	t.Helper()
	dir := t.TempDir()
	p = func(name string) string { return filepath.Join(dir, name) }
	if err := run(io.Discard, io.Discard, []string{"simulate", "-out", dir, "-per-class", "60", "-k", "4", "-seed", "5"}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-alpha", "0.2", "-out", p("ball.json")},
		{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-alpha", "0.2", "-calibration", "class", "-allow-infinite", "-out", p("class.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatal(err)
		}
	}
	return p
}
