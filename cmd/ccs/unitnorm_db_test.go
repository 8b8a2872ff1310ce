package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
)

// TestUnitNormCorpus: evaluate -db and compare -db with sets calibrated
// on unit-norm embeddings warn of a corpus whose rows are not of unit
// norm (a corpus saved without its normalisation: every set came back
// empty, Size 0.0, without a word, as a trial's user found), as ccs
// retrieve does; a unit-norm corpus draws no warning.
func TestUnitNormCorpus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 600, 8
	rng := rand.New(rand.NewPCG(4, 4))
	emb, labels := make([]float32, n*d), make([]int64, n)
	for i := range n {
		labels[i] = int64(i % 3)
		var s float64
		for j := range d {
			v := rng.NormFloat64()
			if int64(j%3) == labels[i] {
				v += 2
			}
			emb[i*d+j], s = float32(v), s+v*v
		}
		for j := range d {
			emb[i*d+j] = float32(float64(emb[i*d+j]) / math.Sqrt(s))
		}
	}
	scaled := make([]float32, len(emb))
	for i, v := range emb {
		scaled[i] = 3 * v
	}
	for name, a := range map[string]bundle.Array{"emb.npy": bundle.Float32(emb, n, d), "x3.npy": bundle.Float32(scaled, n, d), "labels.npy": bundle.Int64(labels, n)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"), "-k", "5"},
		{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-out", p("ball.json")},
	} {
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatal(err)
		}
	}
	const want = "x3.npy: 600 of its 600 rows are not of unit norm (the first: row 0, norm 3), and "
	for _, c := range []struct {
		args []string
		who  string
	}{
		{[]string{"evaluate", "-set", p("ball.json"), "-test", p("b/test.npz"), "-size-anchors", "10"}, "the set was calibrated on unit-norm embeddings"},
		{[]string{"compare", "-data", p("b"), "-rows", "baselines", "-seeds", "1", "-size-anchors", "10", "-quiet"}, "the rows' sets were calibrated on unit-norm embeddings"},
	} {
		for _, db := range []string{"x3.npy", "emb.npy"} {
			stdout.Reset()
			stderr.Reset()
			if err := run(&stdout, &stderr, append(c.args, "-db", p(db))); err != nil {
				t.Fatalf("%s -db %s: %v", c.args[0], db, err)
			}
			got := stdout.String() + stderr.String()
			if warned := strings.Contains(got, want+c.who); warned != (db == "x3.npy") {
				t.Errorf("%s -db %s: warned %v:\n%s", c.args[0], db, warned, got)
			}
		}
	}
}

// TestRetrieveNoVolumeWarning: ccs retrieve, which prints no volume,
// leaves out the warning of a non-square head's log-volumes (a trial's
// user saw it on every run), and keeps the set's other warnings.
func TestRetrieveNoVolumeWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	pr, err := head.NewProjected(head.Identity(3, 2), geometry.Ball{D: 2})
	if err != nil {
		t.Fatal(err)
	}
	set := &conformal.Set{Geometry: pr, Threshold: 1, Alpha: 0.1, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 99, Rank: 90}}
	if set.VolumeWarning() == "" {
		t.Fatal("a 3→2 head: no volume warning")
	}
	if err := set.Save(p("set.json")); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("db.npy"), bundle.Float32([]float32{0, 0, 0, 0.5, 0, 0, 3, 3, 3}, 3, 3)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"retrieve", "-set", p("set.json"), "-db", p("db.npy"), "-anchor-index", "0"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "not square") || !strings.Contains(stdout.String(), "2 of 3 items inside the set") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// TestFitWideHead: a head wider than the embeddings is warned of (its
// log-volumes are measured in dimensions the embeddings never fill); one
// as wide or narrower is not. A head that is not square records its
// volume term as the projected space's, where it trains.
func TestFitWideHead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"simulate", "-out", dir, "-per-class", "60", "-k", "5"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dim  string
		warn bool
	}{{"5", true}, {"3", false}, {"2", false}} {
		stdout.Reset()
		stderr.Reset()
		args := []string{"fit", "-geometry", "genball", "-objective", "neg,infonce", "-head-dim", c.dim, "-epochs", "1", "-quiet",
			"-train", filepath.Join(dir, "fit.npz"), "-val", filepath.Join(dir, "val.npz"), "-out", filepath.Join(dir, "f"+c.dim+".json")}
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatal(err)
		}
		want := "-head-dim: a head of 5 outputs widens the 3-dimensional embeddings: it maps them into a 3-dimensional slice of its 5-dimensional output"
		if got := strings.Contains(stderr.String(), "widens"); got != c.warn || c.warn && !strings.Contains(stderr.String(), want) {
			t.Errorf("-head-dim %s: stderr %q", c.dim, stderr.String())
		}
		// A head that is not square trains its volume term in the
		// projected space, and the file says so (it said the backbone's).
		b, err := os.ReadFile(filepath.Join(dir, "f"+c.dim+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(b, []byte(`"projected_volume": true`)); got != (c.dim != "3") {
			t.Errorf("-head-dim %s: projected_volume recorded %v", c.dim, got)
		}
		// -head-volume backbone asked of a head that is not square: said.
		stderr.Reset()
		if err := run(&stdout, &stderr, append(args, "-head-volume", "backbone")); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr.String(), "-head-volume backbone: a 3→"+c.dim+" head is not square"); got != (c.dim != "3") {
			t.Errorf("-head-dim %s -head-volume backbone: stderr %q", c.dim, stderr.String())
		}
	}
}
