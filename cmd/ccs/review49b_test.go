package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// h8BlocksDir bundles 30 recordings of 80 windows with -blocks (as
// TestBundleBlocks does) and calibrates a ball on cal.npz: the directory.
func h8BlocksDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const recs, per, d = 30, 80, 6
	rng := rand.New(rand.NewPCG(9, 9))
	var x []float64
	var csv strings.Builder
	csv.WriteString("recording_id,mode\n")
	modes := []string{"idle", "low", "high"}
	for r := range recs {
		z := make([]float64, d)
		for j := range z {
			z[j] = 3 * rng.NormFloat64()
		}
		for i := range per {
			m := ((i/20)*5 + r) % 3
			for j := range z {
				z[j] = 0.99*z[j] + 0.1*rng.NormFloat64()
				x = append(x, z[j]+4*float64(m))
			}
			fmt.Fprintf(&csv, "R-%02d,%s\n", r, modes[m])
		}
	}
	writeNPY64(t, p("w.npy"), x, recs*per, d)
	os.WriteFile(p("w.csv"), []byte(csv.String()), 0o644)
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"bundle", "-embeddings", p("w.npy"), "-labels", p("w.csv") + ":mode", "-blocks", p("w.csv") + ":recording_id", "-k", "5", "-out", p("b")}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if err := run(&stdout, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-alpha", "0.1", "-out", p("b/ball.json")}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	return p("b")
}

// TestReview49bBlocksContradictingManifest: the manifest beside test.npz says its
// anchors are the rows of a few recordings (ManifestBlocks); a "blocks"
// array that says every anchor is its own block (np.arange, an index
// passed by mistake) or that they are all one block contradicts it. The
// resplits then halve the bundle row by row — the understated spread the
// round set out to fix — and coverage-check says nothing: BlocksResplits
// is silenced by any non-nil Bundle.Blocks. Expected: refused or warned
// of, naming the blocks and the manifest's count.
func TestReview49bBlocksContradictingManifest(t *testing.T) {
	dir := h8BlocksDir(t)
	test := filepath.Join(dir, "test.npz")
	b, err := bundle.Read(test)
	if err != nil {
		t.Fatal(err)
	}
	want := bundle.ManifestBlocks(test, b)
	if want < 2 || len(b.Blocks) != b.N {
		t.Fatalf("the manifest counts %d blocks, the bundle records %d", want, len(b.Blocks))
	}
	for _, c := range []struct {
		name  string
		block func(i int) int64
	}{{"each anchor its own block", func(i int) int64 { return int64(i) }}, {"one block", func(int) int64 { return 0 }}} {
		for i := range b.Blocks {
			b.Blocks[i] = c.block(i)
		}
		if err := bundle.Write(test, b); err != nil {
			t.Fatal(err)
		}
		if got := bundle.ManifestBlocks(test, b); got != want {
			t.Fatalf("the rewritten file no longer matches its manifest entry (%d blocks)", got)
		}
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, []string{"coverage-check", "-set", filepath.Join(dir, "ball.json"), "-test", test, "-resplits", "20", "-json"})
		if err == nil && !strings.Contains(stderr.String(), "block") {
			t.Errorf("%s, against the manifest's %d: accepted without a word (stderr %q)", c.name, want, stderr.String())
		}
	}
}
