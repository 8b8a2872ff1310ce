package main

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestUnitNormInputs: a set calibrated on unit-norm embeddings refuses a
// test bundle, or OOD inputs, whose anchors are not normalised, naming
// the file, the anchor and its norm (it covered none of their positives,
// and the shift check blamed another session or site).
func TestUnitNormInputs(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 600, 8
	rng := rand.New(rand.NewPCG(7, 7))
	x := make([]float32, n*d)
	labels := make([]int64, n)
	for i := range n {
		labels[i] = int64(i % 4)
		var ss float64
		for j := range d {
			v := rng.NormFloat64() + float64(labels[i])
			x[i*d+j], ss = float32(v), ss+v*v
		}
		for j := range d {
			x[i*d+j] /= float32(math.Sqrt(ss))
		}
	}
	if err := bundle.WriteNPY(p("x.npy"), bundle.Float32(x, n, d)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("y.npy"), bundle.Int64(labels, n)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("x.npy"), "-labels", p("y.npy"), "-k", "5", "-out", p("b")},
		{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-out", p("u.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	test, err := bundle.Read(p("b/test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range test.Anchors {
		test.Anchors[i] *= 9
	}
	if err := bundle.Write(p("long.npz"), test); err != nil {
		t.Fatal(err)
	}
	long := make([]float32, 10*d)
	for i := range long {
		long[i] = x[i] * 3
	}
	if err := bundle.WriteNPY(p("long.npy"), bundle.Float32(long, 10, d)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"evaluate", "-set", p("u.json"), "-test", p("long.npz")}, p("long.npz") + ": anchor 0: norm 9: the set was calibrated on unit-norm embeddings"},
		{[]string{"ood", "-set", p("u.json"), "-id", p("long.npz"), "-ood", p("long.npy")}, p("long.npz") + ": anchor 0: norm 9: "},
		{[]string{"ood", "-set", p("u.json"), "-id", p("b/test.npz"), "-ood", p("long.npy")}, p("long.npy") + ": anchor 0: norm 3: "},
	} {
		if err := run(io.Discard, io.Discard, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if err := run(io.Discard, io.Discard, []string{"evaluate", "-set", p("u.json"), "-test", p("b/test.npz")}); err != nil {
		t.Errorf("the normalised test split: %v", err)
	}
	// A collection not normalised is searched, and warned of; the
	// normalised embeddings are not.
	if err := bundle.WriteNPY(p("a.npy"), bundle.Float32(x[:d], 1, d)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ db, want string }{
		{p("long.npy"), p("long.npy") + ": 10 of its 10 rows are not of unit norm (the first: row 0, norm 3), and the set was calibrated on unit-norm embeddings"},
		{p("x.npy"), ""},
	} {
		var stderr bytes.Buffer
		err := run(io.Discard, &stderr, []string{"retrieve", "-set", p("u.json"), "-db", c.db, "-anchor", p("a.npy")})
		if err != nil || strings.Contains(stderr.String(), "unit norm") != (c.want != "") || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("retrieve -db %s: %v\n%s", c.db, err, stderr.String())
		}
	}
}
