package encoder

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/embed"
	"github.com/ccsets/ccs/images"
)

// encoders are the project's ONNX files (encoders/train.py wrote them and
// the features PyTorch computed for the first 64 test images).
var encoders = []string{"supervised", "simclr"}

func onnxPath(name string) string { return filepath.Join("..", "encoders", "fmnist-"+name+".onnx") }

// TestMatchesPyTorch: ONNX Runtime's features and logits equal the ones
// PyTorch recorded at export, to 1e-4.
func TestMatchesPyTorch(t *testing.T) {
	test, err := images.FashionMNIST("", "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range encoders {
		ref, err := bundle.ReadNPZ(filepath.Join("..", "encoders", "fmnist-"+name+"-reference.npz"))
		if err != nil {
			t.Fatal(err)
		}
		idx := ref["index"].I64
		sub := &images.Set{Name: "reference images", N: len(idx), H: 28, W: 28}
		for _, i := range idx {
			sub.Pixels = append(sub.Pixels, test.Image(int(i))...)
		}
		m, err := Open(onnxPath(name), Options{Batch: 7})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if m.Dim() < 128 || m.Classes() != 10 {
			t.Errorf("%s: %d features and %d logits, want ≥ 128 and 10", name, m.Dim(), m.Classes())
		}
		calls := 0
		out, err := m.Embed(context.Background(), sub, func(done, total int) { calls++ })
		if err != nil {
			t.Fatal(err)
		}
		feats, logits := out.Features, out.Logits
		checkOODOutputs(t, name, m, out)
		if want := (len(idx) + 6) / 7; calls != want {
			t.Errorf("%s: progress called %d times, want %d (one per batch)", name, calls, want)
		}
		for _, c := range []struct {
			what      string
			got, want []float32
		}{{"features", feats, ref["features"].F32}, {"logits", logits, ref["logits"].F32}} {
			if len(c.got) != len(c.want) {
				t.Fatalf("%s %s: %d values, PyTorch %d", name, c.what, len(c.got), len(c.want))
			}
			worst := 0.0
			for i := range c.got {
				worst = math.Max(worst, math.Abs(float64(c.got[i]-c.want[i])))
			}
			t.Logf("%s %s: max |ONNX Runtime − PyTorch| = %.2g", name, c.what, worst)
			if worst > 1e-4 {
				t.Errorf("%s %s: max abs difference from PyTorch %.3g > 1e-4", name, c.what, worst)
			}
		}
	}
}

// TestBatchInvariant: the features of an image do not depend on the batch
// it was run in, nor on the number of threads.
func TestBatchInvariant(t *testing.T) {
	s := images.Noise(20, 28, 28, 1)
	var ref []float32
	for _, opt := range []Options{{Batch: 20, Threads: 1}, {Batch: 3, Threads: 2}, {Batch: 1, Threads: 1}} {
		m, err := Open(onnxPath("supervised"), opt)
		if err != nil {
			t.Fatal(err)
		}
		o, err := m.Embed(context.Background(), s, nil)
		m.Close()
		f := o.Features
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = f
			continue
		}
		for i := range f {
			if math.Abs(float64(f[i]-ref[i])) > 1e-5 {
				t.Fatalf("batch %d, %d threads: feature %d = %v, batch 20: %v", opt.Batch, opt.Threads, i, f[i], ref[i])
			}
		}
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{Input: "pixels"}, `no input "pixels"`},
		{Options{Features: "penultimate"}, `no output "penultimate"`},
		{Options{Logits: "scores"}, `no output "scores"`},
		{Options{Std: -1}, "want all positive"},
	} {
		if _, err := Open(onnxPath("supervised"), tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to mention %q", tc.opt, err, tc.want)
		}
	}
	if _, err := Open("testdata/none.onnx", Options{}); err == nil || !strings.Contains(err.Error(), "none.onnx") {
		t.Errorf("missing model: error %v", err)
	}
	m, err := Open(onnxPath("supervised"), Options{Logits: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Classes() != 0 {
		t.Errorf("-logits -: %d classes, want none", m.Classes())
	}
	if _, err := m.Embed(context.Background(), images.Noise(2, 32, 32, 1), nil); err == nil || !strings.Contains(err.Error(), "takes 28×28 images") {
		t.Errorf("wrong image size: error %v", err)
	}
}

// checkOODOutputs checks what encoders/add_ood_outputs.py added: the last
// activation summary is the maximum of the features (the last ReLU's
// output), every summary is a ReLU maximum (≥ 0), and the classifier file
// maps the features to the logits.
func checkOODOutputs(t *testing.T, name string, m *Model, out embed.Outputs) {
	t.Helper()
	L, d, c := m.Activations(), m.Dim(), m.Classes()
	if L != 5 {
		t.Fatalf("%s: %d activation summaries, want 5 (one per ReLU layer)", name, L)
	}
	n := len(out.Features) / d
	for i := range n {
		row := out.Activations[i*L : (i+1)*L]
		if got, want := row[L-1], slices.Max(out.Features[i*d:(i+1)*d]); got != want {
			t.Fatalf("%s image %d: last activation summary %v, max of the features %v", name, i, got, want)
		}
		if slices.Min(row) < 0 {
			t.Fatalf("%s image %d: a ReLU maximum below 0: %v", name, i, row)
		}
	}
	cl, err := bundle.ReadNPZ(filepath.Join("..", "encoders", "fmnist-"+name+"-classifier.npz"))
	if err != nil {
		t.Fatal(err)
	}
	w, b := cl["weight"].F32, cl["bias"].F32
	worst := 0.0
	for i := range n {
		for k := range c {
			z := float64(b[k])
			for j := range d {
				z += float64(w[k*d+j]) * float64(out.Features[i*d+j])
			}
			worst = math.Max(worst, math.Abs(z-float64(out.Logits[i*c+k])))
		}
	}
	if worst > 1e-4 {
		t.Errorf("%s: features·Wᵀ + b differs from the logits by %.3g", name, worst)
	}
}
