package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/experiment"
)

// TestUser49ViMNamesClassifierFlag (failed at c4cca8c): docs/ood.md says that with logits in the
// bundles `ccs ood -train fit.npz -id test.npz -ood ood.npz -ood-cal
// ood-cal.npz` "runs MSP, Energy and ViM with no glue", but ViM needs
// -classifier FILE.npz; its "not available" line says only "needs the
// classifier's W and b", naming neither the flag nor the file's form
// (weight, bias), so the user of the walk-through cannot get ViM's row.
func TestUser49ViMNamesClassifierFlag(t *testing.T) {
	dir := t.TempDir()
	var sink bytes.Buffer
	run1 := func(args ...string) (string, error) {
		var stdout bytes.Buffer
		err := run(&stdout, &sink, args)
		return stdout.String(), err
	}
	if _, err := run1("simulate", "-out", dir, "-per-class", "300", "-k", "5", "-seed", "2"); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	withLogits := func(in, out string) {
		b, err := bundle.Read(p(in))
		if err != nil {
			t.Fatal(err)
		}
		const C = 5
		logits := make([]float32, b.N*C)
		for i := 0; i < b.N; i++ {
			for c := 0; c < C; c++ {
				var s float32
				for j := 0; j < b.D; j++ {
					s += b.Anchors[i*b.D+j] * float32((c+j)%3-1)
				}
				logits[i*C+c] = s
			}
		}
		arrs := map[string]bundle.Array{"embeddings": bundle.Float32(b.Anchors, b.N, b.D), "logits": bundle.Float32(logits, b.N, C)}
		if b.Labels != nil {
			arrs["labels"] = bundle.Int64(b.Labels, b.N)
		}
		if err := bundle.WriteNPZ(p(out), arrs); err != nil {
			t.Fatal(err)
		}
	}
	withLogits("fit.npz", "trainf.npz")
	withLogits("test.npz", "testf.npz")
	withLogits("val.npz", "oodcalf.npz")
	if _, err := run1("calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference", "150", "-ood-cal", p("oodcalf.npz"), "-out", p("set.json")); err != nil {
		t.Fatal(err)
	}
	out, err := run1("ood", "-set", p("set.json"), "-id", p("testf.npz"), "-ood", "x="+p("testf.npz"), "-train", p("trainf.npz"),
		"-ood-cal", p("oodcalf.npz"), "-cider-epochs", "0", "-quiet", "-json")
	if err != nil {
		t.Fatal(err)
	}
	var tab experiment.OODTable
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		if r.Method != "ViM" {
			continue
		}
		if r.Unavailable == "" {
			return // ViM ran: the docs' "no glue" holds
		}
		if !strings.Contains(r.Unavailable, "-classifier") {
			t.Errorf("ViM is %q: it should name the flag that gives it (-classifier FILE.npz of weight and bias)", r.Unavailable)
		}
		return
	}
	t.Fatal("no ViM row")
}
