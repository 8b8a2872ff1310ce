package main

// A second review of the forty-eighth round's change: each test failed
// at 9de4658.

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestReview48bRenumberedEmbeddingsCalibrate: the same embeddings (no exact
// copies at all), exported again without their first row (the dedup the
// messages advise, a row dropped, another order) and bundled again with
// another seed: the new cal split shares about 60% of its anchors with the
// fit split the ellipsoid was estimated on, every one from another source
// row number, so the source filter takes them for the data's own copies
// and ccs calibrate -set writes the set. The same bundling of the
// unchanged file is refused ("… from the same source rows").
func TestReview48bRenumberedEmbeddingsCalibrate(t *testing.T) {
	t.Chdir(t.TempDir())
	h2Data(t, false)
	x, err := bundle.ReadNPY("x.npy")
	if err != nil {
		t.Fatal(err)
	}
	y, err := bundle.ReadNPY("y.npy")
	if err != nil {
		t.Fatal(err)
	}
	n, d := x.Shape[0], x.Shape[1]
	if err := bundle.WriteNPY("x2.npy", bundle.Float32(x.F32[d:], n-1, d)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY("y2.npy", bundle.Int64(y.I64[1:], n-1)); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	must := func(args ...string) {
		t.Helper()
		out.Reset()
		errb.Reset()
		if err := run(&out, &errb, args); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
	}
	must("bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-out", "A", "-k", "5", "-allow-fewer", "-seed", "1")
	must("bundle", "-embeddings", "x2.npy", "-labels", "y2.npy", "-out", "B", "-k", "5", "-allow-fewer", "-seed", "2")
	must("bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-out", "C", "-k", "5", "-allow-fewer", "-seed", "2")
	must("calibrate", "-geometry", "ellipsoid", "-fit", "A/fit.npz", "-cal", "A/cal.npz", "-alpha", "0.1", "-out", "s.json")
	out.Reset()
	errb.Reset()
	if err := run(&out, &errb, []string{"calibrate", "-set", "s.json", "-cal", "C/cal.npz", "-out", "c.json"}); err == nil || !strings.Contains(err.Error(), "rows it was fitted or validated on") {
		t.Fatalf("premise: another bundling of the same file: %v", err)
	}
	out.Reset()
	errb.Reset()
	if err := run(&out, &errb, []string{"calibrate", "-set", "s.json", "-cal", "B/cal.npz", "-out", "b.json"}); err == nil {
		t.Errorf("another bundling of the same rows, renumbered by one: calibrated, want refused as C/cal.npz is:\n%s", out.String())
	}
}
