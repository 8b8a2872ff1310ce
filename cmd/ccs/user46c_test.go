package main

// A new user's findings on OOD detection with an image classifier's
// exported features and logits (docs/ood.md, docs/your-data.md §9). Each
// test failed at b9f6811 for the reason its comment gives.

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// h5Data writes feats.npy (n, d), labels.npy (n,) and logits.npy (n, C)
// into dir: C classes of unequal sizes, the last one small and spread
// out, logits a linear function of the features plus noise (a
// classifier's penultimate layer and head). It returns the paths.
func h5Data(t *testing.T, dir string) (feats, labels, logits string) {
	t.Helper()
	const d, C = 16, 5
	sizes := []int{900, 800, 600, 400, 300}
	spread := []float64{1, 1, 1, 1, 2.5}
	rng := rand.New(rand.NewPCG(5, 5))
	means := make([][]float64, C)
	for c := range means {
		means[c] = make([]float64, d)
		for k := range d {
			means[c][k] = 2 * rng.NormFloat64()
		}
	}
	var x, l []float32
	var y []int64
	for c, n := range sizes {
		for range n {
			row := make([]float64, d)
			for k := range d {
				row[k] = means[c][k] + spread[c]*rng.NormFloat64()
				x = append(x, float32(row[k]))
			}
			for j := range C {
				var s float64
				for k := range d {
					s += means[j][k] * row[k] / 4
				}
				l = append(l, float32(s+0.5*rng.NormFloat64()))
			}
			y = append(y, int64(c))
		}
	}
	// shuffle rows together (bundle draws its own splits, but keep the
	// files looking like an export, not sorted by class)
	n := len(y)
	perm := rng.Perm(n)
	xs, ls, ys := make([]float32, len(x)), make([]float32, len(l)), make([]int64, n)
	for i, p := range perm {
		copy(xs[i*d:(i+1)*d], x[p*d:(p+1)*d])
		copy(ls[i*C:(i+1)*C], l[p*C:(p+1)*C])
		ys[i] = y[p]
	}
	feats, labels, logits = filepath.Join(dir, "feats.npy"), filepath.Join(dir, "labels.npy"), filepath.Join(dir, "logits.npy")
	for _, w := range []struct {
		path string
		a    bundle.Array
	}{{feats, bundle.Float32(xs, n, d)}, {labels, bundle.Int64(ys, n)}, {logits, bundle.Float32(ls, n, C)}} {
		if err := bundle.WriteNPY(w.path, w.a); err != nil {
			t.Fatal(err)
		}
	}
	return feats, labels, logits
}

func h5Run(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	if err := run(&o, &e, args); err != nil {
		t.Fatalf("ccs %s: %v\n%s", strings.Join(args, " "), err, e.String())
	}
	return o.String(), e.String()
}

// h5Setup bundles the export (features, labels, logits) with an
// ood-cal split and calibrates the ℓ2 ball's per-input OOD test.
func h5Setup(t *testing.T, dir string) (b, set string) {
	t.Helper()
	feats, labels, logitsFile := h5Data(t, dir)
	b = filepath.Join(dir, "b")
	h5Run(t, "bundle", "-embeddings", feats, "-labels", labels, "-logits", logitsFile, "-k", "5", "-kneg", "5", "-ood-cal-share", "0.1", "-out", b)
	set = filepath.Join(dir, "ball.json")
	h5Run(t, "calibrate", "-geometry", "ball", "-cal", filepath.Join(b, "cal.npz"), "-reference", "300", "-ood-cal", filepath.Join(b, "ood-cal.npz"), "-out", set)
	return b, set
}

// TestH5FeaturesGivenAsLogits: a user who passes the penultimate features
// where the logits belong (-logits feats.npy, the same file as
// -embeddings) gets bundles whose "logits" have d = 16 columns for 5
// classes, and `ccs ood -train fit.npz` then computes MSP and Energy on
// the features and prints their AUROC and alarm rates as the baselines',
// without a word — although the "logits"' argmax agrees with the labels
// on about chance's share of the training rows and the array is the
// embeddings to the bit. Neither bundle nor ood says anything about the
// logits today.
func TestH5FeaturesGivenAsLogits(t *testing.T) {
	dir := t.TempDir()
	feats, labels, _ := h5Data(t, dir)
	b := filepath.Join(dir, "b")
	var bundleErr bytes.Buffer
	if err := run(io.Discard, &bundleErr, []string{"bundle", "-embeddings", feats, "-labels", labels, "-logits", feats,
		"-k", "5", "-kneg", "5", "-ood-cal-share", "0.1", "-out", b}); err != nil {
		return // refused: fine
	}
	set := filepath.Join(dir, "ball.json")
	h5Run(t, "calibrate", "-geometry", "ball", "-cal", filepath.Join(b, "cal.npz"), "-reference", "300", "-ood-cal", filepath.Join(b, "ood-cal.npz"), "-out", set)
	_, oodErr := h5Run(t, "ood", "-set", set, "-id", filepath.Join(b, "test.npz"), "-ood", "x="+filepath.Join(b, "val.npz"),
		"-train", filepath.Join(b, "fit.npz"), "-ood-cal", filepath.Join(b, "ood-cal.npz"), "-cider-epochs", "0")
	if !strings.Contains(bundleErr.String(), "logits") && !strings.Contains(oodErr, "logits") {
		t.Errorf("features given as -logits (the -embeddings file itself; 16 columns for 5 classes; argmax agrees with the labels at chance) "+
			"passed bundle and ood without a word about the logits:\nbundle stderr: %q\nood stderr: %q", bundleErr.String(), oodErr)
	}
}

// TestH5PerClassSetJudgedOnAllClasses: `calibrate -ood-class 4` makes the
// test of class 4 alone (its guarantee holds for class 4's inputs), but
// `ccs ood -set ball4.json -id test.npz` with a labelled test file of all
// five classes prints "FAR@0.05 (≤ 5%)" over every class's inputs — a
// number the guarantee says nothing about — and never says that the set's
// test is class 4's. The set file records the class only inside the
// ood_calibration's "source" string. Expected: the rate over class 4's
// labelled inputs, or at least a warning naming the set's class.
func TestH5PerClassSetJudgedOnAllClasses(t *testing.T) {
	dir := t.TempDir()
	b, _ := h5Setup(t, dir)
	set4 := filepath.Join(dir, "ball4.json")
	h5Run(t, "calibrate", "-geometry", "ball", "-cal", filepath.Join(b, "cal.npz"), "-reference", "20",
		"-ood-cal", filepath.Join(b, "ood-cal.npz"), "-ood-class", "4", "-out", set4)
	out, errOut := h5Run(t, "ood", "-set", set4, "-id", filepath.Join(b, "test.npz"), "-ood", "x="+filepath.Join(b, "val.npz"))
	if !strings.Contains(errOut+out, `class "4"`) && !strings.Contains(errOut+out, "-ood-class") {
		t.Errorf("a per-class (-ood-class 4) set judged on a test file of all classes: no word that its false-alarm rate is class 4's;\nstdout %q\nstderr %q", out, errOut)
	}
}

// TestH5ClassWarningInJSON: `ccs ood` warns on stderr that the per-input
// test flagged a small, spread-out class far beyond α_ood ("flagged X% of
// class 4's N inputs, beyond chance"), but `-json` / `-out FILE` (what
// `ccs report` reads) carry no trace of it: the report then shows
// "FAR@0.05 (≤ 5%) 5.x" alone. `ccs evaluate -json` keeps its warnings in
// a "warnings" field; `ccs ood -json` has none.
func TestH5ClassWarningInJSON(t *testing.T) {
	dir := t.TempDir()
	b, set := h5Setup(t, dir)
	var o, e bytes.Buffer
	if err := run(&o, &e, []string{"ood", "-set", set, "-id", filepath.Join(b, "test.npz"), "-ood", "x=" + filepath.Join(b, "val.npz"), "-json"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.String(), "beyond chance") {
		t.Fatalf("setup: no class warning on stderr: %q", e.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(o.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.String(), "beyond chance") {
		t.Errorf("the class-wise false-alarm warning is not in the -json document (keys %v); stderr %q", keys(doc), strings.TrimSpace(e.String()))
	}
}

func keys(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

// TestH5OODClassUnknownListsClasses: `calibrate -ood-class 12` on a bundle
// of classes 0–4 says "b/cal.npz has no anchors of it" and stops; `ccs
// bundle -ood-classes 12` on the same labels lists them ("is not among
// the labels (0, 1, 2, 3, 4)"), and the README promises a label your data
// does not have is answered with what it has or the nearest.
func TestH5OODClassUnknownListsClasses(t *testing.T) {
	dir := t.TempDir()
	b, _ := h5Setup(t, dir)
	err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", filepath.Join(b, "cal.npz"), "-reference", "20",
		"-ood-cal", filepath.Join(b, "ood-cal.npz"), "-ood-class", "12", "-out", filepath.Join(dir, "x.json")})
	if err == nil {
		t.Fatal("-ood-class 12 accepted")
	}
	if !strings.Contains(err.Error(), "0, 1, 2, 3, 4") {
		t.Errorf("-ood-class 12: %v: does not list the classes the data has (bundle -ood-classes does)", err)
	}
}

// TestReportInFile: ccs report -in ood.json — a result file given where
// a results directory goes — was refused as "open ood.json/sim.json: not
// a directory"; it is read as a result file, with a note, and the page
// carries the detection's warnings under its table.
func TestReportInFile(t *testing.T) {
	dir := t.TempDir()
	b, set := h5Setup(t, dir)
	doc := filepath.Join(dir, "ood.json")
	h5Run(t, "ood", "-set", set, "-id", filepath.Join(b, "test.npz"), "-ood", "x="+filepath.Join(b, "val.npz"), "-out", doc)
	var e bytes.Buffer
	page := filepath.Join(dir, "ood.html")
	if err := run(io.Discard, &e, []string{"report", "-in", doc, "-out", page}); err != nil {
		t.Fatalf("report -in %s: %v", doc, err)
	}
	if !strings.Contains(e.String(), "a file, read as a result file") {
		t.Errorf("no note of the file given as -in: %q", e.String())
	}
	html, _ := os.ReadFile(page)
	if !strings.Contains(string(html), "beyond chance") {
		t.Errorf("the page does not carry the detection's warning")
	}
}
