package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestClassTrimWarning: a class-conditional set whose threshold over all
// classes left a third of the disjoint pairs out (class 1: 3 anchors, 1
// pair) says so in full where it is made (calibrate), not in a command
// that judges by the classes' thresholds (evaluate on a labelled bundle,
// retrieve -label), and in one short line where the threshold over all
// classes answers (retrieve -unlabeled marginal).
func TestClassTrimWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{"cal.npz", "test.npz"} {
		const n, d = 203, 2
		b := &bundle.Bundle{N: n, K: 1, D: d, Anchors: make([]float32, n*d), Labels: make([]int64, n), PositiveIndex: make([]int64, n)}
		for i := range b.Anchors {
			b.Anchors[i] = float32(5 * rng.NormFloat64())
		}
		for i := range 200 {
			b.PositiveIndex[i] = int64(i ^ 1)
		}
		b.Labels[200], b.Labels[201], b.Labels[202] = 1, 1, 1
		b.PositiveIndex[200], b.PositiveIndex[201], b.PositiveIndex[202] = 201, 200, 200
		if err := bundle.Write(p(name), b); err != nil {
			t.Fatal(err)
		}
	}
	const (
		full  = "the threshold over all classes, which judges anchors of no known class (-unlabeled marginal), was taken on 67 of the 101 disjoint calibration pairs, to keep each class's share"
		short = "WARNING: the threshold over all classes was taken on 67 of the 101 disjoint calibration pairs (every class kept class 1's share: 1 pair of 3 anchors); ccs calibrate warned why and what to do (docs/calibration.md)\n"
		none  = "disjoint calibration pairs"
	)
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-calibration", "class", "-alpha", "0.1", "-allow-infinite", "-out", p("set.json")}, full, ""},
		{[]string{"evaluate", "-set", p("set.json"), "-test", p("test.npz")}, "", none},
		{[]string{"retrieve", "-set", p("set.json"), "-db", p("test.npz"), "-anchor-index", "3", "-label", "0"}, "", none},
		{[]string{"retrieve", "-set", p("set.json"), "-db", p("test.npz"), "-anchor-index", "3", "-unlabeled", "marginal"}, short, "hold that class out"},
	} {
		var stderr bytes.Buffer
		if err := run(io.Discard, &stderr, c.args); err != nil {
			t.Fatalf("%s: %v", c.args[0], err)
		}
		got := stderr.String()
		if c.want != "" && strings.Count(got, c.want) != 1 {
			t.Errorf("%s: want %q once, got:\n%s", strings.Join(c.args[:3], " "), c.want, got)
		}
		if c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("%s: %q, got:\n%s", strings.Join(c.args[:3], " "), c.not, got)
		}
	}
}
