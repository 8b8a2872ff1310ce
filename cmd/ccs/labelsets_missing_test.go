package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ccsets/ccs/bundle"
)

// TestBundleLabelSetsMissing: a list column's value that marks a missing
// label (Hugging Face's -1 for a ClassLabel, "Unknown") is no label to
// share: refused by default, naming -missing-labels; with drop, no label
// (the same bundles as the row's list without it); with class, a label
// like any other (its rows one another's positives).
func TestBundleLabelSetsMissing(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(4, 5))
	const n, d = 240, 4
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, c := range []struct {
		elem   arrow.DataType
		marker any
	}{{arrow.PrimitiveTypes.Int64, int64(-1)}, {arrow.BinaryTypes.String, "Unknown"}} {
		// labels(marked) writes the column: every third row's one label the
		// marker (or none), the others one or two of five labels.
		write := func(name string, marked bool) {
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
				{Name: "labels", Type: arrow.ListOf(c.elem)},
			}, nil)
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			defer b.Release()
			for i := range n {
				eb := b.Field(0).(*array.ListBuilder)
				eb.Append(true)
				eb.ValueBuilder().(*array.Float32Builder).AppendValues(x[i*d:(i+1)*d], nil)
				lb := b.Field(1).(*array.ListBuilder)
				lb.Append(true)
				var vals []any
				switch {
				case i%3 == 0 && marked:
					vals = []any{c.marker}
				case i%3 == 0:
				default:
					vals = []any{int64(i % 5), int64((i + 2) % 5)}
				}
				for _, v := range vals {
					switch vb := lb.ValueBuilder().(type) {
					case *array.Int64Builder:
						vb.Append(v.(int64))
					case *array.StringBuilder:
						if s, ok := v.(string); ok {
							vb.Append(s)
						} else {
							vb.Append(string(rune('a' + v.(int64))))
						}
					}
				}
			}
			rec := b.NewRecordBatch()
			defer rec.Release()
			var buf bytes.Buffer
			w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p(name), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("marked.arrow", true)
		write("plain.arrow", false)
		common := []string{"-k", "2", "-kneg", "2", "-allow-fewer", "-seed", "1"}
		notes := map[string]string{} // each bundle's stderr
		bundleOf := func(file, out string, flags ...string) error {
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, append(append([]string{"bundle", "-embeddings", p(file), "-labels", p(file) + ":labels", "-out", p(out)}, common...), flags...))
			notes[out] = stderr.String()
			return err
		}
		err := bundleOf("marked.arrow", "refused")
		if err == nil || !strings.Contains(err.Error(), "-missing-labels") || !strings.Contains(err.Error(), "80 rows") {
			t.Errorf("%v: a missing label's marker in the lists: %v, want it refused, naming -missing-labels and its 80 rows", c.elem, err)
		}
		if err := bundleOf("marked.arrow", "drop", "-missing-labels", "drop"); err != nil {
			t.Fatal(err)
		}
		if err := bundleOf("plain.arrow", "plain"); err != nil {
			t.Fatal(err)
		}
		if err := bundleOf("marked.arrow", "class", "-missing-labels", "class"); err != nil {
			t.Fatal(err)
		}
		// The note counts the labels the bundles number: the marker's
		// among them with class, not with drop.
		for out, want := range map[string]string{"plain": ": 5 labels, several a row", "drop": ": 5 labels, several a row", "class": ": 6 labels, several a row"} {
			if !strings.Contains(notes[out], want) {
				t.Errorf("%v: %s: no %q in\n%s", c.elem, out, want, notes[out])
			}
		}
		for _, split := range []string{"fit", "val", "cal", "test"} {
			a, errA := os.ReadFile(p("drop/" + split + ".npz"))
			b, errB := os.ReadFile(p("plain/" + split + ".npz"))
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Errorf("%v: %s: -missing-labels drop's bundle differs from the lists without the marker (%v, %v)", c.elem, split, errA, errB)
			}
			cl, errC := os.ReadFile(p("class/" + split + ".npz"))
			if errC != nil || bytes.Equal(cl, b) {
				t.Errorf("%v: %s: -missing-labels class made no label of the marker (%v)", c.elem, split, errC)
			}
		}
	}
}

// TestBundleOneHotLabels: a one-hot matrix — exactly one 1 a row, as
// keras' to_categorical and pandas' get_dummies make one label a row — is
// one label a row: the bundles of its column indices, byte for byte
// (labels, positives within the split), not label sets.
func TestBundleOneHotLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(6, 7))
	const n, d, c = 400, 3, 4
	x, y, hot := make([]float32, n*d), make([]int64, n), make([]int64, n*c)
	for i := range n {
		y[i] = int64(i % c)
		hot[i*c+int(y[i])] = 1
		for j := range d {
			x[i*d+j] = float32(y[i]) + float32(rng.NormFloat64())
		}
	}
	for name, a := range map[string]bundle.Array{"x.npy": bundle.Float32(x, n, d), "y.npy": bundle.Int64(y, n), "hot.npy": bundle.Int64(hot, n, c)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	for _, labels := range []string{"y", "hot"} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, []string{"bundle", "-embeddings", p("x.npy"), "-labels", p(labels + ".npy"), "-k", "5", "-out", p("out-" + labels)}); err != nil {
			t.Fatal(err, stderr.String())
		}
		if strings.Contains(stderr.String(), "several a row") {
			t.Errorf("%s: read as label sets:\n%s", labels, stderr.String())
		}
	}
	for _, split := range []string{"fit", "val", "cal", "test"} {
		a, errA := os.ReadFile(p("out-y/" + split + ".npz"))
		b, errB := os.ReadFile(p("out-hot/" + split + ".npz"))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the one-hot matrix's bundle differs from its labels' (%v, %v)", split, errA, errB)
		}
	}
}
