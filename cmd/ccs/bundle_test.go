package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/arrowtest"
	"github.com/ccsets/ccs/internal/sttest"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/table"
)

// mixture is n embeddings of dimension d from classes Gaussian clusters,
// as float64 (what a NumPy pipeline hands over), with int32-range labels.
func mixture(seed uint64, n, d, classes int) ([]float32, []float64, []int64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	centers := make([]float64, classes*d)
	for i := range centers {
		centers[i] = 2 * rng.NormFloat64()
	}
	x32, x64, y := make([]float32, n*d), make([]float64, n*d), make([]int64, n)
	for i := range n {
		y[i] = int64(rng.IntN(classes))
		for j := range d {
			x64[i*d+j] = centers[int(y[i])*d+j] + rng.NormFloat64()
			x32[i*d+j] = float32(x64[i*d+j])
		}
	}
	return x32, x64, y
}

// writeNPY64 writes float64 values as an .npy of the given shape (the
// bundle package writes float32 and int64 only; NumPy's float64 is what
// users bring).
func writeNPY64(t *testing.T, path string, x []float64, shape ...int) {
	t.Helper()
	var b bytes.Buffer
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
	}
	h := "{'descr': '<f8', 'fortran_order': False, 'shape': (" + strings.Join(dims, ", ") + ",), }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b.WriteString("\x93NUMPY\x01\x00")
	b.WriteByte(byte(len(h)))
	b.WriteByte(byte(len(h) >> 8))
	b.WriteString(h)
	for _, v := range x {
		u := math.Float64bits(v)
		for k := range 8 {
			b.WriteByte(byte(u >> (8 * k)))
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeColumnParquet writes one column, name, as a Parquet file in row
// groups of chunk rows.
func writeColumnParquet(t *testing.T, path, name string, col arrow.Array, chunk int64) {
	t.Helper()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: col.DataType()}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pqarrow.WriteTable(tbl, f, chunk, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

// writeLabelsParquet writes string labels as a Parquet column "label".
func writeLabelsParquet(t *testing.T, path string, labels []string) {
	t.Helper()
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.AppendValues(labels, nil)
	writeColumnParquet(t, path, "label", sb.NewArray(), 1<<16)
}

// writeEmbeddingsParquet writes n float64 rows of d as a column
// "embedding" of list<double>, as pandas and pyarrow write a float64
// array's rows, in row groups of 500.
func writeEmbeddingsParquet(t *testing.T, path string, x []float64, n, d int) {
	t.Helper()
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float64)
	defer lb.Release()
	for i := range n {
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).AppendValues(x[i*d:(i+1)*d], nil)
	}
	writeColumnParquet(t, path, "embedding", lb.NewArray(), 500)
}

// writeArrowStream writes n float32 rows of d and their string labels as
// an Arrow IPC stream (columns "embedding", list<float>, and "label"), as
// a Hugging Face dataset's save_to_disk writes one, in batches of 500.
func writeArrowStream(t *testing.T, path string, x []float32, labels []string, d int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		{Name: "label", Type: arrow.BinaryTypes.String},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for lo := 0; lo < len(labels); lo += 500 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := lo; i < min(len(labels), lo+500); i++ {
			lb := b.Field(0).(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Float32Builder).AppendValues(x[i*d:(i+1)*d], nil)
			b.Field(1).(*array.StringBuilder).Append(labels[i])
		}
		rec := b.NewRecordBatch()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		b.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeArrowLabels writes n float32 rows of d and their string labels as
// an Arrow IPC file whose label column is of type lt: a
// dictionary<int8, string>, as pandas' to_feather writes a column of
// category dtype, or string_view, as Polars writes strings.
func writeArrowLabels(t *testing.T, path string, x []float32, labels []string, d int, lt arrow.DataType) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		{Name: "label", Type: lt},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range labels {
		lb := b.Field(0).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).AppendValues(x[i*d:(i+1)*d], nil)
		switch fb := b.Field(1).(type) {
		case *array.BinaryDictionaryBuilder:
			if err := fb.AppendString(labels[i]); err != nil {
				t.Fatal(err)
			}
		case *array.StringViewBuilder:
			fb.Append(labels[i])
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBundleCommand: ccs bundle on a user's float64 embeddings and
// labels (.npy, and Parquet with string labels), on views, on groups and
// on relevance pairs; the bundles it writes go through fit, calibrate and
// evaluate, and its manifest says what it did.
func TestBundleCommand(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 1200, 6
	x32, x64, y := mixture(5, n, d, 4)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	if err := bundle.WriteNPY(p("labels.npy"), bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"), "-k", "8", "-ood-classes", "3", "-ood-cal-share", "0.1", "-seed", "4"}
	if err := run(&stdout, &stderr, args); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, f := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
		if !strings.Contains(stdout.String(), "wrote "+p("b/"+f+".npz")) {
			t.Errorf("stdout does not say it wrote %s.npz:\n%s", f, stdout.String())
		}
	}
	if got := strings.Count(stderr.String(), "converted on reading: float64 → float32"); got != 1 || !strings.Contains(stderr.String(), "emb.npy") {
		t.Errorf("want one note naming emb.npy, got:\n%s", stderr.String())
	}
	var m bundle.Manifest
	data, err := os.ReadFile(p("b/manifest.json"))
	if err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatalf("manifest: %v\n%s", err, data)
	}
	if m.Format != bundle.ManifestFormat || m.Seed != 4 || m.K != 8 || len(m.Files) != 6 {
		t.Errorf("manifest: %+v", m)
	}
	for role, f := range map[string]string{"embeddings": "emb.npy", "labels": "labels.npy"} {
		raw, err := os.ReadFile(p(f))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := m.Inputs[role].SHA256, fmt.Sprintf("%x", sha256.Sum256(raw)); got != want {
			t.Errorf("manifest: %s's SHA-256 %s, want %s (the file's)", role, got, want)
		}
	}
	for _, args := range [][]string{
		{"fit", "-geometry", "genball", "-objective", "neg", "-train", p("b/fit.npz"), "-val", p("b/val.npz"), "-epochs", "3", "-quiet", "-out", p("f.json")},
		{"calibrate", "-set", p("f.json"), "-cal", p("b/cal.npz"), "-reference", "50", "-ood-cal", p("b/ood-cal.npz"), "-out", p("s.json")},
		{"evaluate", "-set", p("s.json"), "-test", p("b/test.npz"), "-per-class"},
		{"ood", "-set", p("s.json"), "-id", p("b/test.npz"), "-ood", p("b/ood.npz")},
	} {
		var stderr bytes.Buffer
		if err := run(io.Discard, &stderr, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		// ccs bundle's bundles fitted without -recipe: fit says compare's
		// rows train with another.
		if args[0] == "fit" && !strings.Contains(stderr.String(), "note: -recipe sim, ccs fit's default (the simulation's SGD: lr 0.3, no momentum); ccs compare's learned rows train with -recipe embedding") {
			t.Errorf("fit without -recipe: %s", stderr.String())
		}
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b5"), "-k", "8", "-ood-classes", "3", "-ood-cal-share", "0.1", "-seed", "5"}); err != nil {
		t.Fatal(err)
	}
	// The OOD test's own calibration inputs as its ID test inputs: said;
	// the test split: not.
	// So are its reference pool's rows (drawn from the calibration split)
	// and the fit split.
	for id, want := range map[string]string{
		"b/ood-cal.npz": "91 of its 91 inputs are the inputs the set's OOD test was calibrated on (",
		"b/cal.npz":     "50 of its ",
		"b/fit.npz":     "this is the fit split the set's geometry was fitted on: its inputs' scores are not a new input's, so the AUROC and false-alarm rate measured on them are optimistic",
		"b/test.npz":    "",
	} {
		var warned bytes.Buffer
		err := run(io.Discard, &warned, []string{"ood", "-set", p("s.json"), "-id", p(id), "-ood", p("b/ood.npz")})
		// Leave out the per-class false alarms (TestClassAlarms): a small
		// class of these synthetic inputs is flagged more than α_ood.
		var lines []string
		for _, l := range strings.Split(warned.String(), "\n") {
			if !strings.Contains(l, "not class by class") {
				lines = append(lines, l)
			}
		}
		warned.Reset()
		warned.WriteString(strings.Join(lines, "\n"))
		got := strings.Contains(warned.String(), "WARNING: ")
		if err != nil || got != (want != "") || !strings.Contains(warned.String(), want) {
			t.Errorf("ood -id %s: %v, want a warning %q:\n%s", id, err, want, warned.String())
		}
	}
	var calWarned bytes.Buffer
	if err := run(io.Discard, &calWarned, []string{"ood", "-set", p("s.json"), "-id", p("b/cal.npz"), "-ood", p("b/ood.npz")}); err != nil || !strings.Contains(calWarned.String(), "inputs are rows of the set's reference pool (calibration anchors): each one's nearest pool row is itself, at OOD score 0") {
		t.Errorf("ood -id cal.npz: %v\n%s", err, calWarned.String())
	}
	// Its test split holds rows of the set's fit, validation and
	// calibration splits: evaluate says so.
	var warned bytes.Buffer
	if err := run(io.Discard, &warned, []string{"evaluate", "-set", p("s.json"), "-test", p("b5/test.npz")}); err != nil ||
		!strings.Contains(warned.String(), "anchors are rows the set's geometry was fitted or validated on (another bundling of the same embeddings?)") {
		t.Errorf("evaluate on another bundling's test split: %v\n%s", err, warned.String())
	}
	// A fitted set is not calibrated on a split it was fitted or validated
	// on, nor fitted with its training split as validation; a bundle of
	// anchors alone (ood.npz) is no calibration or test split.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "-set", p("f.json"), "-cal", p("b/fit.npz"), "-out", p("x.json")}, p("b/fit.npz") + ": conformal: a threshold calibrated on a split the geometry was fitted on has no guarantee: this is its fit split"},
		{[]string{"calibrate", "-set", p("f.json"), "-cal", p("b/val.npz"), "-out", p("x.json")}, "this is its validation split"},
		{[]string{"calibrate", "-geometry", "ellipsoid", "-fit", p("b/fit.npz"), "-cal", p("b/fit.npz"), "-out", p("x.json")}, "this is its fit split"},
		// The cal split of the same embeddings bundled with another seed
		// holds rows of the fit and validation splits.
		{[]string{"calibrate", "-set", p("f.json"), "-cal", p("b5/cal.npz"), "-out", p("x.json")}, p("b5/cal.npz") + ": conformal: a threshold calibrated on a split the geometry was fitted on has no guarantee: "},
		{[]string{"calibrate", "-geometry", "ellipsoid", "-fit", p("b/fit.npz"), "-cal", p("b5/cal.npz"), "-out", p("x.json")}, " calibration anchors are rows it was fitted or validated on — the fit split of another bundling of the same embeddings (another seed or split, or the embeddings exported again)"},
		{[]string{"fit", "-geometry", "genball", "-objective", "neg", "-train", p("b/fit.npz"), "-val", p("b/fit.npz"), "-epochs", "1", "-quiet", "-out", p("x.json")}, "the validation split is the training split"},
		// A pool larger than the calibration split names the flag.
		{[]string{"calibrate", "-set", p("f.json"), "-cal", p("b/cal.npz"), "-reference", "100000", "-out", p("x.json")}, "calibrate: -reference 100000: " + p("b/cal.npz") + " has "},
		// Nor is the split the set's geometry was fitted on.
		{[]string{"calibrate", "-set", p("f.json"), "-cal", p("b/cal.npz"), "-reference", "50", "-ood-cal", p("b/fit.npz"), "-out", p("x.json")}, "-ood-cal: " + p("b/fit.npz") + ": conformal: this is the fit split the set's geometry was fitted on"},
		// Nor the calibration split, whose anchors the pool is drawn from.
		{[]string{"calibrate", "-set", p("f.json"), "-cal", p("b/cal.npz"), "-reference", "50", "-ood-cal", p("b/cal.npz"), "-out", p("x.json")}, "-ood-cal: " + p("b/cal.npz") + ": conformal: this is the set's calibration split, whose anchors the OOD pool is drawn from"},
		// The OOD sample is no in-distribution calibration of false alarms.
		{[]string{"calibrate", "-set", p("f.json"), "-cal", p("b/cal.npz"), "-reference", "50", "-ood-cal", p("b/ood.npz"), "-out", p("x.json")}, "-ood-cal: " + p("b/ood.npz") + ": the OOD sample ccs bundle held out (its manifest's \"ood\" split), where held-out in-distribution inputs are wanted: give " + p("b/ood-cal.npz")},
	} {
		if err := run(io.Discard, io.Discard, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
		if _, err := os.Stat(p("x.json")); !os.IsNotExist(err) {
			t.Errorf("%v left x.json (%v)", c.args, err)
		}
	}

	// Made again into the same directory without the OOD splits: the
	// earlier run's ood.npz and ood-cal.npz go, said so (their rows are
	// now in the other splits; compare would read them as this run's).
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("again"), "-k", "8", "-ood-classes", "3", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("again"), "-k", "8", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ood-cal", "ood"} {
		if _, err := os.Stat(p("again/" + f + ".npz")); !os.IsNotExist(err) {
			t.Errorf("the earlier run's %s.npz is still there (%v)", f, err)
		}
		if !strings.Contains(stdout.String(), "removed "+p("again/"+f+".npz")) {
			t.Errorf("stdout does not say it removed %s.npz:\n%s", f, stdout.String())
		}
	}

	// Made again with another seed, failing at its last split (a directory
	// where test.npz goes): the earlier bundling stays whole, no new
	// fit.npz beside the old cal.npz and manifest, and no temporary file
	// is left. Each file written in turn left the new fit, val and cal
	// beside the old manifest.
	before := map[string][]byte{}
	for _, f := range []string{"fit.npz", "val.npz", "cal.npz", "manifest.json"} {
		if before[f], err = os.ReadFile(p("again/" + f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(p("again/test.npz")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p("again/test.npz"), 0o755); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	err = run(&stdout, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("again"), "-k", "8", "-seed", "5"})
	if err == nil || !strings.Contains(err.Error(), "test.npz: is a directory") {
		t.Errorf("a directory at test.npz: got %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("a failed run says it wrote files:\n%s", stdout.String())
	}
	for f, b := range before {
		if now, err := os.ReadFile(p("again/" + f)); err != nil || !bytes.Equal(now, b) {
			t.Errorf("a failed run changed %s (%v)", f, err)
		}
	}
	entries, _ := os.ReadDir(p("again"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".ccs-tmp-") {
			t.Errorf("a failed run left %s", e.Name())
		}
	}

	// The same from Parquet with string labels, and from an .npz array.
	emb, err := retrieve.NewCollection(x32, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := table.WriteParquet(p("emb.parquet"), emb); err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i, l := range y {
		names[i] = []string{"boot", "coat", "dress", "shirt"}[l]
	}
	writeLabelsParquet(t, p("labels.parquet"), names)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.parquet") + ":embedding", "-labels", p("labels.parquet"), "-out", p("pq"), "-k", "8"}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(p("pq/manifest.json"))
	if !strings.Contains(string(data), `"shirt"`) {
		t.Errorf("the manifest does not keep the string labels' names:\n%s", data)
	}
	// The same as NumPy writes string labels (np.save of a str array,
	// '<U5'): codes in the names' sorted order, the held-out class by its
	// name, the bundles byte for byte those of the integer labels.
	script := "import sys, json, numpy as np; np.save(sys.argv[1], np.array(json.load(sys.stdin)))"
	cmd := exec.Command("/usr/bin/python3", "-c", script, p("names.npy"))
	js, _ := json.Marshal(names)
	cmd.Stdin = bytes.NewReader(js)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("names.npy"), "-out", p("str"), "-k", "8", "-ood-classes", "shirt", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	// -ood-classes @FILE: one class a line (120 novel protein families
	// are no command-line list; a name may hold a comma), blank lines
	// skipped: the same bundles as the list.
	os.WriteFile(p("held-out.txt"), []byte("shirt\n\n"), 0o644)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("names.npy"), "-out", p("strfile"), "-k", "8", "-ood-classes", "@" + p("held-out.txt"), "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "cal", "test", "ood", "ood-cal"} {
		a, _ := os.ReadFile(p("str/" + f + ".npz"))
		b, err := os.ReadFile(p("strfile/" + f + ".npz"))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("-ood-classes @FILE: %s.npz differs from -ood-classes shirt's (%v)", f, err)
		}
	}
	for _, c := range []struct{ file, want string }{
		{"none.txt", "-ood-classes @" + p("none.txt") + ": open " + p("none.txt") + ": no such file"},
		{"blank.txt", "-ood-classes @" + p("blank.txt") + ": no labels in it"},
	} {
		os.WriteFile(p("blank.txt"), []byte("\n \n"), 0o644)
		err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("names.npy"), "-out", p("strbad"), "-k", "8", "-ood-classes", "@" + p(c.file)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-ood-classes @%s: %v, want %q", c.file, err, c.want)
		}
	}
	// A Hugging Face dataset saved to disk (an Arrow IPC stream of
	// embeddings and string labels): the same bundles as the .npy files'.
	writeArrowStream(t, p("data-00000-of-00001.arrow"), x32, names, d)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("data-00000-of-00001.arrow"), "-labels", p("data-00000-of-00001.arrow") + ":label",
		"-out", p("hf"), "-k", "8", "-ood-classes", "shirt", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	// And its directory, in two shards (state.json names them); the
	// manifest hashes the directory as its files.
	os.Mkdir(p("ds"), 0o755)
	writeArrowStream(t, p("ds/data-00000-of-00002.arrow"), x32[:700*d], names[:700], d)
	writeArrowStream(t, p("ds/data-00001-of-00002.arrow"), x32[700*d:], names[700:], d)
	os.WriteFile(p("ds/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}]}`), 0o644)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("ds"), "-labels", p("ds") + ":label",
		"-out", p("hfdir"), "-k", "8", "-ood-classes", "shirt", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for _, f := range []string{"state.json", "data-00000-of-00002.arrow", "data-00001-of-00002.arrow"} {
		raw, _ := os.ReadFile(p("ds/" + f))
		fmt.Fprintf(&lines, "%s %x\n", f, sha256.Sum256(raw))
	}
	var dm bundle.Manifest
	raw, _ := os.ReadFile(p("hfdir/manifest.json"))
	if err := json.Unmarshal(raw, &dm); err != nil || dm.Inputs["embeddings"].SHA256 != fmt.Sprintf("%x", sha256.Sum256([]byte(lines.String()))) {
		t.Errorf("manifest of a dataset directory: %v, inputs %+v", err, dm.Inputs)
	}
	// A DatasetDict's directory (train and test splits, as load_dataset
	// gives them): its splits read as one table, in dataset_dict.json's
	// order, saying so; the same bundles; the manifest hashes its files by
	// their paths in it.
	for _, sp := range []struct {
		name   string
		lo, hi int
	}{{"train", 0, 600}, {"test", 600, n}} {
		os.MkdirAll(p("dd/"+sp.name), 0o755)
		writeArrowStream(t, p("dd/"+sp.name+"/data-00000-of-00001.arrow"), x32[sp.lo*d:sp.hi*d], names[sp.lo:sp.hi], d)
		os.WriteFile(p("dd/"+sp.name+"/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	}
	os.WriteFile(p("dd/dataset_dict.json"), []byte(`{"splits": ["train", "test"]}`), 0o644)
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("dd"), "-labels", p("dd") + ":label",
		"-out", p("hfdict"), "-k", "8", "-ood-classes", "shirt", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("note: %s: a DatasetDict: its splits train, test read as one table of %d rows, in that order, which ccs bundle splits anew (%s reads one split)", p("dd"), n, p("dd/train")); !strings.Contains(stderr.String(), want) {
		t.Errorf("bundle of a DatasetDict says\n%s\nwant %q", stderr.String(), want)
	}
	lines.Reset()
	for _, f := range []string{"dataset_dict.json", "train/state.json", "train/data-00000-of-00001.arrow", "test/state.json", "test/data-00000-of-00001.arrow"} {
		raw, _ := os.ReadFile(p("dd/" + f))
		fmt.Fprintf(&lines, "%s %x\n", f, sha256.Sum256(raw))
	}
	raw, _ = os.ReadFile(p("hfdict/manifest.json"))
	if err := json.Unmarshal(raw, &dm); err != nil || dm.Inputs["embeddings"].SHA256 != fmt.Sprintf("%x", sha256.Sum256([]byte(lines.String()))) {
		t.Errorf("manifest of a DatasetDict directory: %v, inputs %+v", err, dm.Inputs)
	}
	// Float64 embeddings in Parquet (list<double>, over row groups):
	// converted as the .npy's were, saying so, to the same bundles.
	writeEmbeddingsParquet(t, p("emb64.parquet"), x64, n, d)
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb64.parquet"), "-labels", p("labels.npy"), "-out", p("b64"), "-k", "8", "-ood-classes", "3", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "emb64.parquet: converted on reading: float64 → float32") {
		t.Errorf("no conversion note for float64 Parquet:\n%s", stderr.String())
	}
	// A .safetensors of the embeddings (float64) and labels (int32), as
	// safetensors' save_file writes one from PyTorch: converted as the
	// .npy's were, saying so, to the same bundles.
	y32 := make([]int32, n)
	for i, l := range y {
		y32[i] = int32(l)
	}
	sttest.Write(t, p("emb.safetensors"), sttest.T("embeddings", "F64", []int{n, d}, sttest.LE(x64...)), sttest.T("labels", "I32", []int{n}, sttest.LE(y32...)))
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb.safetensors"), "-labels", p("emb.safetensors") + ":labels", "-out", p("st"), "-k", "8", "-ood-classes", "3", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), `emb.safetensors: tensor "embeddings": converted on reading: float64 → float32`) {
		t.Errorf("no conversion note for a float64 .safetensors:\n%s", stderr.String())
	}
	// A pandas frame with a category column of labels, as to_feather
	// writes it, and Polars' string_view labels: the same bundles as the
	// string labels'.
	for dir, lt := range map[string]arrow.DataType{
		"cat":    &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
		"polars": arrow.BinaryTypes.StringView,
	} {
		writeArrowLabels(t, p(dir+".feather"), x32, names, d, lt)
		if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p(dir + ".feather"), "-labels", p(dir+".feather") + ":label",
			"-out", p(dir), "-k", "8", "-ood-classes", "shirt", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
			t.Fatal(err)
		}
	}
	// Labels as a .txt, one a line: integers (with CRLF), or names.
	var ints, words strings.Builder
	for i, l := range y {
		fmt.Fprintf(&ints, "%d\r\n", l)
		fmt.Fprintf(&words, "%s\n", names[i])
	}
	os.WriteFile(p("labels.txt"), []byte(ints.String()), 0o644)
	os.WriteFile(p("names.txt"), []byte(words.String()), 0o644)
	for _, c := range []struct{ file, out, ood string }{{"labels.txt", "txt", "3"}, {"names.txt", "strtxt", "shirt"}} {
		if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p(c.file), "-out", p(c.out), "-k", "8", "-ood-classes", c.ood, "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
			t.Fatal(err)
		}
	}
	// Names alike but for case are cased of, naming the labels' file.
	casedLines := strings.Split(words.String(), "\n")
	for i, l := range casedLines {
		if l == "shirt" && i%2 == 0 {
			casedLines[i] = "Shirt" // half the class spelt another way
		}
	}
	os.WriteFile(p("cased.txt"), []byte(strings.Join(casedLines, "\n")), 0o644)
	var cased bytes.Buffer
	if err := run(io.Discard, &cased, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("cased.txt"), "-out", p("cased"), "-k", "8", "-allow-fewer", "-seed", "4"}); err != nil ||
		!strings.Contains(cased.String(), "WARNING: "+p("cased.txt")+`: names differ only by case or by spaces around them ("Shirt" and "shirt")`) {
		t.Errorf("names alike: %v\n%s", err, cased.String())
	}
	// A header line above integer labels is refused, not taken for a class.
	os.WriteFile(p("header.txt"), []byte("label\n"+ints.String()), 0o644)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("header.txt"), "-out", p("x"), "-k", "8"}); err == nil ||
		!strings.Contains(err.Error(), p("header.txt")+`:1: "label" is a column's name, not one of the labels`) {
		t.Errorf("a header in a .txt of labels: %v", err)
	}
	// Labels as a uint8 Parquet column (datasets' Value("uint8")).
	ub := array.NewUint8Builder(memory.DefaultAllocator)
	for _, l := range y {
		ub.Append(uint8(l))
	}
	writeColumnParquet(t, p("labels-u8.parquet"), "label", ub.NewArray(), 1<<16)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels-u8.parquet"), "-out", p("u8"), "-k", "8", "-ood-classes", "3", "-ood-cal-share", "0.1", "-seed", "4"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
		a, _ := os.ReadFile(p("b/" + f + ".npz"))
		for _, other := range []string{"str", "b64", "hf", "hfdir", "hfdict", "st", "u8", "cat", "polars", "txt", "strtxt"} {
			b, err := os.ReadFile(p(other + "/" + f + ".npz"))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s/%s.npz differs from the .npy and integer labels' (%v)", other, f, err)
			}
		}
	}
	var sm bundle.Manifest
	data, _ = os.ReadFile(p("str/manifest.json"))
	if err := json.Unmarshal(data, &sm); err != nil || !slices.Equal(sm.LabelNames, []string{"boot", "coat", "dress", "shirt"}) || !slices.Equal(sm.OODClasses, []int64{3}) {
		t.Errorf("manifest of string labels: names %q, OOD classes %v (%v)", sm.LabelNames, sm.OODClasses, err)
	}
	// Each split's counts by name too, the same counts as by number.
	for _, f := range sm.Files {
		for num, n := range f.Classes {
			l, _ := strconv.Atoi(num)
			if f.ClassesByName[sm.LabelNames[l]] != n || len(f.ClassesByName) != len(f.Classes) {
				t.Errorf("%s: classes %v, by name %v", f.File, f.Classes, f.ClassesByName)
			}
		}
	}
	// evaluate and coverage-check name the classes by the manifest's
	// names, in text and JSON; a file the manifest does not describe keeps
	// the numbers.
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("str/cal.npz"), "-out", p("strball.json")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"evaluate", "-set", p("strball.json"), "-test", p("str/test.npz"), "-per-class"}, "| dress | "},
		{[]string{"evaluate", "-set", p("strball.json"), "-test", p("str/test.npz"), "-per-class", "-json"}, `"label_names": [`},
		{[]string{"coverage-check", "-set", p("strball.json"), "-test", p("str/test.npz"), "-per-class", "-resplits", "20"}, "| dress "},
		// Its resplits draw one positive per anchor: a diagnostic, said.
		{[]string{"coverage-check", "-set", p("strball.json"), "-test", p("str/test.npz"), "-resplits", "20"}, "note       On this label bundle (positives that are other anchors) the resplits draw one positive per anchor"},
		{[]string{"coverage-check", "-set", p("strball.json"), "-test", p("str/test.npz"), "-resplits", "20", "-json"}, `"label_bundle": true`},
		// Its check says how many disjoint pairs it kept of those found.
		{[]string{"evaluate", "-set", p("strball.json"), "-test", p("str/test.npz")}, " found, kept in the classes' shares of anchors)"},
		{[]string{"evaluate", "-set", p("strball.json"), "-test", p("str/test.npz"), "-per-class", "-json"}, `"label": 2,`},
		{[]string{"compare", "-data", p("str"), "-rows", "baselines", "-seeds", "1", "-resplits", "10", "-quiet", "-json"}, `"label_names": ["boot", "coat", "dress", "shirt"]`},
		// Label bundles calibrate on disjoint pairs, the same for every seed.
		{[]string{"compare", "-data", p("str"), "-rows", "baselines", "-seeds", "2", "-resplits", "10", "-quiet"}, "calibration takes disjoint pairs of these label bundles' anchors, the same for every seed"},
	} {
		var got bytes.Buffer
		if err := run(&got, io.Discard, c.args); err != nil || !strings.Contains(got.String(), c.want) {
			t.Errorf("%v: %v; want %q in\n%s", c.args, err, c.want, got.String())
		}
	}
	cal, _ := os.ReadFile(p("str/cal.npz"))
	manifest, _ := os.ReadFile(p("str/manifest.json"))
	os.Mkdir(p("moved"), 0o755)
	other, err := bundle.Read(p("str/test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(other.Labels, func(l int64) bool { return l != other.Labels[0] })
	other.Labels[i] = other.Labels[0] // as many anchors as the manifest's test.npz, other counts per class
	if err := bundle.Write(p("moved/test.npz"), other); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("moved/manifest.json"), manifest, 0o644)
	os.WriteFile(p("str/cal-again.npz"), cal, 0o644) // not among the manifest's files
	for _, f := range []string{"moved/test.npz", "str/cal-again.npz"} {
		var got bytes.Buffer
		if err := run(&got, io.Discard, []string{"evaluate", "-set", p("strball.json"), "-test", p(f), "-per-class"}); err != nil || strings.Contains(got.String(), "dress") || !hasRow(got.String(), "2") {
			t.Errorf("%s: named by a manifest that does not describe it (%v):\n%s", f, err, got.String())
		}
	}
	if err := bundle.WriteNPZ(p("arrays.npz"), map[string]bundle.Array{"x": bundle.Float32(x32, n, d), "y": bundle.Int64(y, n)}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("arrays.npz") + ":x", "-labels", p("arrays.npz") + ":y", "-out", p("npz"), "-k", "8"}); err != nil {
		t.Fatal(err)
	}
	// A classifier's logits beside the embeddings: every split carries
	// its anchors' rows of them (ood.npz and ood-cal.npz too).
	lg := make([]float32, n*3)
	for i := range lg {
		lg[i] = float32(i%11) - 5
	}
	// And each ReLU layer's maximum (two layers), as ccs embed writes them.
	acts := make([]float32, n*2)
	for i := range acts {
		acts[i] = float32(i % 13)
	}
	if err := bundle.WriteNPZ(p("withlogits.npz"), map[string]bundle.Array{"x": bundle.Float32(x32, n, d), "y": bundle.Int64(y, n), "logits": bundle.Float32(lg, n, 3), "activations": bundle.Float32(acts, n, 2)}); err != nil {
		t.Fatal(err)
	}
	var lstderr bytes.Buffer
	if err := run(io.Discard, &lstderr, []string{"bundle", "-embeddings", p("withlogits.npz") + ":x", "-labels", p("withlogits.npz") + ":y", "-out", p("lg"), "-k", "8",
		"-ood-classes", "2", "-ood-cal-share", "0.1"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"note: -logits " + p("withlogits.npz") + ":logits: the rows' logits, beside them",
		"note: -activations " + p("withlogits.npz") + ":activations: the rows' activations, beside them"} {
		if !strings.Contains(lstderr.String(), want) {
			t.Errorf("stderr does not note %q:\n%s", want, lstderr.String())
		}
	}
	for _, f := range []string{"fit", "cal", "test", "ood-cal", "ood"} {
		b, err := bundle.ReadFeatures(p("lg/" + f + ".npz"))
		if err != nil {
			t.Fatalf("%s.npz: %v", f, err)
		}
		if b.C != 3 || b.Index == nil {
			t.Fatalf("%s.npz: %d logit classes, index %v", f, b.C, b.Index != nil)
		}
		for i, r := range b.Index {
			if !slices.Equal(b.Logits[i*3:(i+1)*3], lg[r*3:(r+1)*3]) {
				t.Fatalf("%s.npz: anchor %d (row %d): logits %v, want %v", f, i, r, b.Logits[i*3:(i+1)*3], lg[r*3:(r+1)*3])
			}
			if b.A != 2 || !slices.Equal(b.Activations[i*2:(i+1)*2], acts[r*2:(r+1)*2]) {
				t.Fatalf("%s.npz: anchor %d (row %d): %d activations %v, want %v", f, i, r, b.A, b.Activations[i*b.A:(i+1)*b.A], acts[r*2:(r+1)*2])
			}
		}
	}

	// Views (n, v, d): view 0 the anchor, the others its positives.
	if err := bundle.WriteNPY(p("views.npy"), bundle.Float32(x32, n/4, 4, d)); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-views", p("views.npy"), "-out", p("v"), "-k", "3", "-kneg", "5"}); err != nil {
		t.Fatal(err)
	}
	vb, err := bundle.Read(p("v/cal.npz"))
	if err != nil || vb.K != 3 || vb.PositivePool == nil {
		t.Fatalf("views: %+v, %v", vb, err)
	}
	// Relevance pairs: the queries' relevant rows are their positives.
	var pairs strings.Builder
	pairs.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range 100 {
		fmt.Fprintf(&pairs, "%d\t%d\t1\n%d\t%d\t1\n%d\t%d\t0\n", q, q*11%n, q, (q*7+1)%n, q, q*3%n)
	}
	os.WriteFile(p("qrels.tsv"), []byte(pairs.String()), 0o644)
	if err := bundle.WriteNPY(p("queries.npy"), bundle.Float32(x32[:100*d], 100, d)); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels.tsv"), "-out", p("rag"), "-k", "2"}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("rag/cal.npz"), "-alpha", "0.1", "-out", p("rag.json")}); err != nil {
		t.Fatal(err)
	}
	// The same judgements as BEIR writes them, by string ids (the rows'
	// ids a text file, the queries' a NumPy str array), with pairs for
	// passages that were not embedded: the same bundles, a warning.
	var byID, rowIDs strings.Builder
	byID.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range 100 {
		fmt.Fprintf(&byID, "q%d\tdoc-%d\t1\nq%d\tdoc-%d\t1\nq%d\tdoc-%d\t0\nq%d\tgone-%d\t2\n", q, q*11%n, q, (q*7+1)%n, q, q*3%n, q, q)
	}
	for i := range n {
		fmt.Fprintf(&rowIDs, "doc-%d\n", i)
	}
	os.WriteFile(p("qrels-ids.tsv"), []byte(byID.String()), 0o644)
	os.WriteFile(p("ids.txt"), []byte(rowIDs.String()), 0o644)
	qnames := make([]string, 100)
	for q := range qnames {
		qnames[q] = fmt.Sprintf("q%d", q)
	}
	writeStrNPY(t, p("query-ids.npy"), qnames, "(100,)")
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels-ids.tsv"), "-ids", p("ids.txt"), "-query-ids", p("query-ids.npy"), "-out", p("rag-ids"), "-k", "2"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		a, _ := os.ReadFile(p("rag/" + f + ".npz"))
		b, err := os.ReadFile(p("rag-ids/" + f + ".npz"))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s.npz of pairs by id differs from the row numbers' (%v)", f, err)
		}
	}
	if want := `qrels-ids.tsv: 100 pairs name ids that are not among the given ids (the first: row id "gone-0"): left out`; !strings.Contains(stderr.String(), "WARNING: "+p(want)) {
		t.Errorf("stderr does not warn %q:\n%s", want, stderr.String())
	}
	if want := "note: " + p("qrels-ids.tsv") + ": 99 pairs scored 0 or less, judged not relevant: left out (-judged-negatives makes them the queries' negatives)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not note %q:\n%s", want, stderr.String())
	}
	// The same qrels as the Hub's BEIR and MTEB datasets hold them: a
	// table of query-id, corpus-id and score (here an Arrow stream, as
	// save_to_disk writes; Parquet is read by the same table.Pairs), with
	// a column besides: the same bundles, warnings and note.
	var qcol, dcol []string
	var scol []int64
	for _, line := range strings.Split(strings.TrimSpace(byID.String()), "\n")[1:] {
		f := strings.Split(line, "\t")
		s, _ := strconv.ParseInt(f[2], 10, 64)
		qcol, dcol, scol = append(qcol, f[0]), append(dcol, f[1]), append(scol, s)
	}
	sb, ib := array.NewStringBuilder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
	sb.AppendValues(qcol, nil)
	qa := sb.NewArray()
	sb.AppendValues(dcol, nil)
	da := sb.NewArray()
	ib.AppendValues(scol, nil)
	sa := ib.NewArray()
	sb.AppendValues(slices.Repeat([]string{"annotator"}, len(qcol)), nil)
	aa := sb.NewArray()
	writeArrowColumns(t, p("qrels.arrow"), []string{"corpus-id", "query-id", "annotator", "score"}, []arrow.Array{da, qa, aa, sa}, 0, len(qcol), 64)
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels.arrow"), "-ids", p("ids.txt"), "-query-ids", p("query-ids.npy"), "-out", p("rag-arrow"), "-k", "2"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		a, _ := os.ReadFile(p("rag-ids/" + f + ".npz"))
		b, err := os.ReadFile(p("rag-arrow/" + f + ".npz"))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s.npz of a table of pairs differs from the .tsv's (%v)", f, err)
		}
	}
	for _, want := range []string{
		"WARNING: " + p(`qrels.arrow: 100 pairs name ids that are not among the given ids (the first: row id "gone-0"): left out`),
		"note: " + p("qrels.arrow") + ": 99 pairs scored 0 or less, judged not relevant: left out",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("a table of pairs: stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	// The same pairs as a DatasetDict of two splits (save_to_disk's
	// layout): one table, the same bundles, and a note that the splits'
	// judgements were pooled, naming the directory of one split. The ids
	// come from tables of an "_id" column, as BEIR's corpus and queries
	// on the Hub hold them, which need no :COLUMN.
	sb.AppendValues(strings.Fields(rowIDs.String()), nil)
	writeArrowColumns(t, p("corpus.arrow"), []string{"_id", "annotator"}, []arrow.Array{sb.NewArray(), func() arrow.Array {
		sb.AppendValues(slices.Repeat([]string{"x"}, n), nil)
		return sb.NewArray()
	}()}, 0, n, 64)
	sb.AppendValues(qnames, nil)
	writeArrowColumns(t, p("queries.arrow"), []string{"_id"}, []arrow.Array{sb.NewArray()}, 0, len(qnames), 64)
	half := len(qcol) / 2
	for _, sp := range []struct {
		name   string
		lo, hi int
	}{{"train", 0, half}, {"test", half, len(qcol)}} {
		os.MkdirAll(p("qrels-dd/"+sp.name), 0o755)
		writeArrowColumns(t, p("qrels-dd/"+sp.name+"/data-00000-of-00001.arrow"), []string{"corpus-id", "query-id", "annotator", "score"}, []arrow.Array{da, qa, aa, sa}, sp.lo, sp.hi, 64)
		os.WriteFile(p("qrels-dd/"+sp.name+"/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	}
	os.WriteFile(p("qrels-dd/dataset_dict.json"), []byte(`{"splits": ["train", "test"]}`), 0o644)
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels-dd"), "-ids", p("corpus.arrow"), "-query-ids", p("queries.arrow"), "-out", p("rag-dd"), "-k", "2"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		a, _ := os.ReadFile(p("rag-ids/" + f + ".npz"))
		b, err := os.ReadFile(p("rag-dd/" + f + ".npz"))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s.npz of a DatasetDict of pairs differs from the .tsv's (%v)", f, err)
		}
	}
	if want := "note: " + p("qrels-dd") + ": a DatasetDict: its splits train, test read as one table of pairs, in that order"; !strings.Contains(stderr.String(), want) {
		t.Errorf("a DatasetDict of pairs: stderr does not say %q:\n%s", want, stderr.String())
	}
	if want := "every split's judgements pooled (" + p("qrels-dd/train") + " reads one split)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("a DatasetDict of pairs: stderr does not say %q:\n%s", want, stderr.String())
	}
	// The same pairs as Dask writes a DataFrame, a directory named
	// qrels.parquet of parts (part.0.parquet, part.1.parquet, a _SUCCESS
	// as Spark's): one table of its parts, the same bundles, with or
	// without a separator after its name; one without parts is refused,
	// saying what it holds.
	os.Mkdir(p("qrels-dask.parquet"), 0o755)
	for i, b := range [][2]int{{0, half}, {half, len(qcol)}} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "query-id", Type: qa.DataType()}, {Name: "corpus-id", Type: da.DataType()}, {Name: "score", Type: sa.DataType()}}, nil)
		var part []arrow.Array
		for _, c := range []arrow.Array{qa, da, sa} {
			part = append(part, array.NewSlice(c, int64(b[0]), int64(b[1])))
		}
		rec := array.NewRecordBatch(schema, part, int64(b[1]-b[0]))
		tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
		f, err := os.Create(p(fmt.Sprintf("qrels-dask.parquet/part.%d.parquet", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := pqarrow.WriteTable(tbl, f, 64, nil, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		f.Close()
		tbl.Release()
		rec.Release()
	}
	os.WriteFile(p("qrels-dask.parquet/_SUCCESS"), nil, 0o644)
	for i, arg := range []string{p("qrels-dask.parquet"), p("qrels-dask.parquet") + string(filepath.Separator)} {
		out := p(fmt.Sprintf("rag-dask%d", i))
		if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-queries", p("queries.npy"), "-pairs", arg, "-ids", p("ids.txt"), "-query-ids", p("query-ids.npy"), "-out", out, "-k", "2"}); err != nil {
			t.Fatalf("-pairs %s: %v", arg, err)
		}
		for _, f := range []string{"fit", "val", "cal", "test"} {
			a, _ := os.ReadFile(p("rag-ids/" + f + ".npz"))
			b, err := os.ReadFile(filepath.Join(out, f+".npz"))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("-pairs %s: %s.npz of Parquet parts differs from the .tsv's (%v)", arg, f, err)
			}
		}
	}
	os.Mkdir(p("nothing.parquet"), 0o755)
	os.WriteFile(p("nothing.parquet/part-0.csv"), []byte("a,b\n"), 0o644)
	err = run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-queries", p("queries.npy"), "-pairs", p("nothing.parquet") + "/", "-ids", p("ids.txt"), "-query-ids", p("query-ids.npy"), "-out", p("rag-nothing"), "-k", "2"})
	if want := p("nothing.parquet") + "/: holds no .parquet file (it holds part-0.csv): a directory named *.parquet is read as a dataset of Parquet parts"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("-pairs of a directory without parts: %v, want %q", err, want)
	}
	// -judged-negatives: the pairs scored 0 are the queries' negatives,
	// and nothing else; the manifest says so; q0, whose one pair scored 0
	// is also scored relevant (kept relevant), has none and is left out.
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb.npy"), "-queries", p("queries.npy"), "-pairs", p("qrels-ids.tsv"), "-ids", p("ids.txt"), "-query-ids", p("query-ids.npy"), "-out", p("rag-judged"), "-k", "2", "-kneg", "3", "-judged-negatives"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"note: " + p("qrels-ids.tsv") + ": 100 pairs scored 0 or less, judged not relevant: the queries' negatives (99 naming given rows, besides 1 also scored relevant, kept relevant)",
		`WARNING: judged negatives: 1 of the 100 queries with a relevant row have no pair judged not relevant: left out of their splits (the first: query "q0" (row 0 of the queries))`,
		"WARNING: judged negatives: 99 of 99 queries have fewer than kneg = 3 judged not relevant and repeat them",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	var jm bundle.Manifest
	if raw, err := os.ReadFile(p("rag-judged/manifest.json")); err != nil || json.Unmarshal(raw, &jm) != nil || !jm.JudgedNegatives || !strings.HasPrefix(jm.Negatives, "rows judged not relevant to the query") {
		t.Errorf("manifest: judged_negatives %v, negatives %q (%v)", jm.JudgedNegatives, jm.Negatives, err)
	}
	// evaluate says what the exclusion is on where the manifest says the
	// negatives are judged, and nothing where they are random; a set
	// calibrated on all the queries is judged on the judged test split.
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("rag-ids/cal.npz"), "-alpha", "0.1", "-allow-infinite", "-out", p("rag-ids.json")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ test, want string }{
		{"rag-judged/test.npz", " test negatives (the manifest's: rows judged not relevant to the query (its pairs scored 0 or less)"},
		{"rag-ids/test.npz", " test negatives\n"},
	} {
		var got strings.Builder
		if err := run(&got, io.Discard, []string{"evaluate", "-set", p("rag-ids.json"), "-test", p(c.test)}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got.String(), c.want) {
			t.Errorf("evaluate on %s does not say %q:\n%s", c.test, c.want, got.String())
		}
		got.Reset()
		if err := run(&got, io.Discard, []string{"evaluate", "-set", p("rag-ids.json"), "-test", p(c.test), "-json"}); err != nil {
			t.Fatal(err)
		}
		if judged := strings.Contains(c.test, "judged"); strings.Contains(got.String(), `"negatives_are": "rows judged not relevant`) != judged {
			t.Errorf("evaluate -json on %s: negatives_are present %v, want %v:\n%s", c.test, !judged, judged, got.String())
		}
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		jb, err := bundle.Read(p("rag-judged/" + f + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		for a, q := range jb.Index {
			if q == 0 {
				t.Fatalf("%s: query q0 has no judged negative, and is an anchor", f)
			}
			want := x32[int(q)*3%n*d : (int(q)*3%n+1)*d] // its one pair scored 0
			negs := jb.NegativeRows(nil, a)
			for j := range 3 {
				if !slices.Equal(negs[j*d:(j+1)*d], want) {
					t.Fatalf("%s: query %d: negative %d is not its pair judged not relevant", f, q, j)
				}
			}
		}
	}
	// A collection's .npz, its string ids beside the embeddings (as ccs
	// serve reads it): the ids are taken from it, and said to be.
	docs := make([]string, n)
	for i := range docs {
		docs[i] = fmt.Sprintf("doc-%d", i)
	}
	writeStrNPY(t, p("docids.npy"), docs, fmt.Sprintf("(%d,)", n))
	if err := bundle.WriteNPY(p("docemb.npy"), bundle.Float32(x32, n, d)); err != nil {
		t.Fatal(err)
	}
	var npz bytes.Buffer
	zw := zip.NewWriter(&npz)
	for name, file := range map[string]string{"embeddings.npy": "docemb.npy", "ids.npy": "docids.npy"} {
		b, err := os.ReadFile(p(file))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.Create(name)
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("collection.npz"), npz.Bytes(), 0o644)
	stderr.Reset()
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("collection.npz"), "-queries", p("queries.npy"), "-pairs", p("qrels-ids.tsv"), "-query-ids", p("query-ids.npy"), "-out", p("rag-npz"), "-k", "2"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		a, _ := os.ReadFile(p("rag/" + f + ".npz"))
		b, err := os.ReadFile(p("rag-npz/" + f + ".npz"))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s.npz of pairs by the collection's ids differs from the row numbers' (%v)", f, err)
		}
	}
	if want := "note: -ids " + p("collection.npz") + ":ids: the rows' string ids, beside them"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not note %q:\n%s", want, stderr.String())
	}
}

// TestBundleBadInput: every input that lies is a clear error naming the
// file and what is wrong, before anything is written.
func TestBundleBadInput(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 3
	x32, x64, y := mixture(6, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	bundle.WriteNPY(p("labels.npy"), bundle.Int64(y, n))
	bundle.WriteNPY(p("short.npy"), bundle.Int64(y[:n-1], n-1))
	bundle.WriteNPY(p("dlabels.npy"), bundle.Int64(y[:d], d)) // as many as the embeddings' columns
	writeNPY64(t, p("short64.npy"), x64[:(n-1)*d], n-1, d)
	writeNPY64(t, p("logitsT.npy"), x64, d, n) // (d, n): logits transposed
	var twoIDs strings.Builder                 // a table of an "id" and an "_id" column
	twoIDs.WriteString("id,_id\n")
	for i := range n {
		fmt.Fprintf(&twoIDs, "%d,d%d\n", i, i)
	}
	os.WriteFile(p("twoids.csv"), []byte(twoIDs.String()), 0o644)
	nan := append([]float64(nil), x64...)
	nan[7*d+1] = math.NaN()
	writeNPY64(t, p("nan.npy"), nan, n, d)
	header := append([]float64{math.NaN(), math.NaN(), math.NaN()}, x64...) // np.genfromtxt of a CSV with its header
	writeNPY64(t, p("header.npy"), header, n+1, d)
	one := append([]int64(nil), y...)
	one[0] = 77
	bundle.WriteNPY(p("one.npy"), bundle.Int64(one, n))
	unlabelled := append([]int64(nil), y...)
	for i := 300; i < n; i++ {
		unlabelled[i] = -1 // a Hugging Face test split without labels
	}
	bundle.WriteNPY(p("unlabelled.npy"), bundle.Int64(unlabelled, n))
	// Groups of 4 rows; then one with 5 rows marked -1, one with single
	// rows, one with groups of 2 among them, one of strings with "nan".
	g4 := make([]int64, n)
	var gtext strings.Builder
	for i := range g4 {
		g4[i] = int64(i / 4)
		if i < 5 {
			gtext.WriteString("nan\n")
		} else {
			fmt.Fprintf(&gtext, "s%d\n", i/4)
		}
	}
	gneg := slices.Clone(g4)
	for i := range 5 {
		gneg[i] = -1
	}
	gsingle := slices.Clone(g4)
	gsingle[397], gsingle[398], gsingle[399] = 1000, 1001, 1002
	gshort := slices.Clone(g4)
	for i := 200; i < 260; i++ {
		gshort[i] = int64(1000 + i/2)
	}
	bundle.WriteNPY(p("g4.npy"), bundle.Int64(g4, n))
	bundle.WriteNPY(p("gneg.npy"), bundle.Int64(gneg, n))
	bundle.WriteNPY(p("gsingle.npy"), bundle.Int64(gsingle, n))
	bundle.WriteNPY(p("gshort.npy"), bundle.Int64(gshort, n))
	os.WriteFile(p("gnan.txt"), []byte(gtext.String()), 0o644)
	views := make([]float32, n*4*d)
	for i := range views {
		views[i] = float32(i%7) + float32(i%5)/10
	}
	bundle.WriteNPY(p("views.npy"), bundle.Float32(views, n, 4, d))
	views[(5*4+2)*d+1] = float32(math.NaN())
	bundle.WriteNPY(p("vnan.npy"), bundle.Float32(views, n, 4, d))
	os.WriteFile(p("empty.txt"), nil, 0o644)
	os.WriteFile(p("short.txt"), []byte("1\n2\n0\n"), 0o644)
	named := "label\n"
	for _, l := range y {
		named += []string{"ant", "bee", "cat"}[l] + "\n"
	}
	os.WriteFile(p("named.txt"), []byte(named), 0o644)
	// Tables exported as CSV (their own cases: TestBundleCSVLabels).
	os.WriteFile(p("obs.csv"), []byte(",cell_type,donor\nAAAC-1,T cell,A\n"), 0o644)
	os.WriteFile(p("semi.csv"), []byte("id;topic;text\n1;a;x\n"), 0o644) // a European spreadsheet's export: read
	os.WriteFile(p("pipe.csv"), []byte("id|topic|text\n1|a|x\n"), 0o644)
	os.WriteFile(p("nohead.csv"), []byte("0.5,1.5,cat\n0.25,2.5,dog\n"), 0o644) // Spark's df.write.csv: no header
	os.WriteFile(p("header.csv"), []byte(""), 0o644)
	flabels := make([]float64, n)
	for i, l := range y {
		flabels[i] = float64(l)
	}
	writeNPY64(t, p("flabels.npy"), flabels, n)
	// Multi-hot matrices of 4 tags: one stray 2, and a float one with a 0.5.
	stray, fhot := make([]int64, n*4), make([]float64, n*4)
	for i := range stray {
		stray[i] = int64(i % 3 % 2)
		fhot[i] = float64(stray[i])
	}
	stray[17*4+2], fhot[9*4+1] = 2, 0.5
	bundle.WriteNPY(p("stray.npy"), bundle.Int64(stray, n, 4))
	writeNPY64(t, p("half.npy"), fhot, n, 4)
	os.WriteFile(p("emb.json"), []byte("[1,2,3]\n"), 0o644)
	var ids strings.Builder
	for i := range n {
		fmt.Fprintf(&ids, "d%d\n", i)
	}
	os.WriteFile(p("ids.txt"), []byte(ids.String()), 0o644)
	os.WriteFile(p("ids3.txt"), []byte("d0\nd1\nd2\n"), 0o644)
	os.WriteFile(p("qids.txt"), []byte(strings.ReplaceAll(ids.String(), "d", "q")), 0o644)
	// Labels as Excel's plain CSV writes them: Latin-1, "é" one byte.
	latin := make([]string, n)
	for i := range latin {
		latin[i] = []string{"caf\xe9", "bar"}[i%2]
	}
	os.WriteFile(p("latin1.txt"), []byte(strings.Join(latin, "\n")+"\n"), 0o644)
	os.WriteFile(p("cp1252.txt"), []byte(strings.ReplaceAll(strings.Join(latin, "\n")+"\n", "\xe9", "\x92")), 0o644)
	os.WriteFile(p("utf16.txt"), []byte("\xff\xfeb\x00a\x00r\x00\n\x00"), 0o644)
	var latinCSV strings.Builder
	latinCSV.WriteString("id,label\n")
	for i, l := range latin {
		fmt.Fprintf(&latinCSV, "%d,%s\n", i, l)
	}
	os.WriteFile(p("latin1.csv"), []byte(latinCSV.String()), 0o644)
	var floats strings.Builder
	floats.WriteString("id,dim_3\n")
	for i := range n {
		fmt.Fprintf(&floats, "%d,%v\n", i, float64(i)/7)
	}
	os.WriteFile(p("floatcol.csv"), []byte(floats.String()), 0o644)
	var blank strings.Builder
	for _, l := range y {
		fmt.Fprintln(&blank, l)
	}
	os.WriteFile(p("blank2.txt"), []byte(blank.String()+"\n\n"), 0o644)
	var numhdr strings.Builder
	numhdr.WriteString("0.5,1.5,1.0\n") // a header of numbers that do not count up: read as a row
	for i := range n {
		fmt.Fprintf(&numhdr, "%v,%v,%v\n", x64[i*d], x64[i*d+1], x64[i*d+2])
	}
	os.WriteFile(p("numhdr.csv"), []byte(numhdr.String()), 0o644)
	os.WriteFile(p("twice.txt"), []byte("d0\nd1\nd0\n"+strings.Repeat("x\n", n-3)), 0o644)
	os.WriteFile(p("blank.txt"), []byte("d0\n\nd2\n"), 0o644)
	os.WriteFile(p("header.txt"), []byte("corpus-id\nd0\nd1\n"), 0o644)
	// A recommender's ids with pandas' header line: one it knows, one it
	// does not (then one line too many).
	os.WriteFile(p("userhdr.txt"), []byte("user_id\n"+ids.String()), 0o644)
	os.WriteFile(p("moviehdr.txt"), []byte("movie_id\n"+ids.String()), 0o644)
	os.WriteFile(p("qrels.tsv"), []byte("query-id\tcorpus-id\tscore\nq0\td1\t1\n"), 0o644)
	os.WriteFile(p("qrels-null.jsonl"), []byte(`{"query-id": 0, "corpus-id": 1}`+"\n"+`{"query-id": 1, "corpus-id": null}`+"\n"), 0o644)
	os.WriteFile(p("qrels-nofield.jsonl"), []byte(`{"q": 0, "d": 1}`+"\n"), 0o644)
	cut := gzipped(strings.Repeat("0\t1\t1\n1\t2\t1\n", 2000))
	os.WriteFile(p("qrels-cut.tsv.gz"), cut[:len(cut)/2], 0o644)
	os.WriteFile(p("qrels-one.tsv"), []byte("0\n1\n"), 0o644)
	os.WriteFile(p("unscored.tsv"), []byte("query-id\tcorpus-id\tscore\n0\t1\t0\n2\t3\t0\n"), 0o644)
	os.WriteFile(p("nanscore.tsv"), []byte("query-id\tcorpus-id\tscore\n0\t1\t1\n2\t3\tnan\n"), 0o644)
	os.WriteFile(p("noscore.tsv"), []byte("query-id\tcorpus-id\tscore\n0\t1\t1\n2\t3\t\n"), 0o644)
	os.WriteFile(p("twocols.tsv"), []byte("query-id\tcorpus-id\tscore\n0\t1\t1\n2\t3\n"), 0o644)
	// A recommender's interaction log as pandas writes it, and its pairs
	// with the event's name for a score.
	os.WriteFile(p("interactions.csv"), []byte("user_id,item_id,timestamp,event\n0,1,2026-06-01 00:01:22,view\n2,3,2026-06-01 00:02:10,purchase\n"), 0o644)
	os.WriteFile(p("events.csv"), []byte("user_id,item_id,event\n0,1,view\n2,3,purchase\n"), 0o644)
	writeNPY64(t, p("fpairs.npy"), []float64{0, 1.5, 1, 2, 3, 0}, 2, 3) // an id that is no whole number
	var utt strings.Builder                                             // a speaker corpus's utt.txt: speaker/session/utterance
	for i := range n {
		fmt.Fprintf(&utt, "id1%04d/s%d/%05d.wav\n", i/20, i%3, i)
	}
	os.WriteFile(p("utt.txt"), []byte(utt.String()), 0o644)
	var reid strings.Builder // a re-ID export's image names: person, camera and sequence, frame, box
	for i := range n {
		fmt.Fprintf(&reid, "%04d_c%ds1_%06d_01.jpg\n", 1+i/4, 1+i%4%3, i)
	}
	os.WriteFile(p("reid.txt"), []byte(reid.String()), 0o644)
	os.WriteFile(p("trials.txt"), []byte("1 d0 d1\n0 d0 d7\n"), 0o644) // VoxCeleb's trial list: target, enrolment, test
	// String labels as NumPy stores them: '<U…', UTF-32 padded with NULs.
	names := make([]string, n)
	for i, l := range y {
		names[i] = []string{"ant", "bee", "émeu"}[l]
	}
	writeStrNPY(t, p("names.npy"), names, "(400,)")
	lonely := slices.Clone(names)
	lonely[0] = "lonely"
	writeStrNPY(t, p("lonely.npy"), lonely, "(400,)")
	writeStrNPY(t, p("names3d.npy"), names, "(400, 1, 1)")
	// Several labels a row: a multi-hot matrix, as integers and as bool
	// (np.save of MultiLabelBinarizer's output, and of its astype(bool)).
	hot := make([]int64, n*3)
	hotBool := make([]byte, n*3)
	for i, l := range y {
		hot[i*3+int(l)], hotBool[i*3+int(l)] = 1, 1
		hot[i*3+(int(l)+1)%3], hotBool[i*3+(int(l)+1)%3] = 1, 1
	}
	bundle.WriteNPY(p("multihot.npy"), bundle.Int64(hot, n, 3))
	os.WriteFile(p("multihot-bool.npy"), append(npyHead("|b1", "(400, 3)"), hotBool...), 0o644)
	writeStrNPY(t, p("names-twice.npy"), slices.Concat(names, names), "(400, 2)")
	// Names of its columns (-label-names), as mlb.classes_ would be written.
	os.WriteFile(p("hot-names2.txt"), []byte("ant\nbee\n"), 0o644)
	os.WriteFile(p("hot-names-twice.txt"), []byte("ant\nbee\nbee\n"), 0o644)
	os.WriteFile(p("hot-names-blank.txt"), []byte("ant\n\nemu\n"), 0o644)
	os.WriteFile(p("hot-names-unknown.txt"), []byte("ant\nUnknown\nemu\n"), 0o644)
	os.WriteFile(p("hot-names.txt"), []byte("ant\nbee\nemu\n"), 0o644)
	writeStrNPY(t, p("hot-names-empty.npy"), []string{"ant", "", "emu"}, "(3,)")
	os.WriteFile(p("hot-lists.csv"), []byte("labels\n"+strings.Repeat("\"['ant', 'bee']\"\n\"['bee']\"\n", n/2)), 0o644)
	bad, at := strNPY(names, "(400,)")
	binary.LittleEndian.PutUint32(bad[at+3*4*4:], 0xD800) // row 3's first code unit ('<U4')
	os.WriteFile(p("surrogate.npy"), bad, 0o644)
	os.WriteFile(p("objects.npy"), append(npyHead("|O", "(400,)"), "\x80\x04pickle"...), 0o644)       // np.save of an object array
	os.WriteFile(p("object-rows.npy"), append(npyHead("|O", "(400, 3)"), "\x80\x04pickle"...), 0o644) // floats kept as Python objects
	bundle.WriteNPY(p("pairs.npy"), bundle.Int64([]int64{0, 9999}, 1, 2))
	bundle.WriteNPY(p("marco.npy"), bundle.Int64([]int64{1000000, 7000026, 1000001, 7000027}, 2, 2)) // MS MARCO's ids, no row numbers
	bundle.WriteNPY(p("okpairs.npy"), bundle.Int64([]int64{0, 1, 2, 3}, 2, 2))
	bundle.WriteNPY(p("pairs0.npy"), bundle.Int64([]int64{0, 1, 0, 2, 3, 0}, 2, 3))       // (query, row, score) all scored 0
	bundle.WriteNPY(p("pairs4.npy"), bundle.Int64([]int64{0, 1, 1, 7, 2, 3, 1, 7}, 2, 4)) // a fourth column
	os.WriteFile(p("csv.arrow"), []byte("embedding,label\n1,2\n"), 0o644)                 // a CSV named .arrow
	writeArrowStream(t, p("hf.arrow"), x32, names, d)
	hf, _ := os.ReadFile(p("hf.arrow"))
	os.WriteFile(p("cut.arrow"), hf[:len(hf)/2], 0o644)
	os.Mkdir(p("plaindir"), 0o755)
	os.Mkdir(p("emptyds"), 0o755)
	os.WriteFile(p("emptyds/state.json"), []byte(`{"_data_files": []}`), 0o644)
	os.Mkdir(p("halfdict"), 0o755)
	os.WriteFile(p("halfdict/dataset_dict.json"), []byte(`{"splits": ["train"]}`), 0o644)
	os.WriteFile(p("model.pt"), []byte("PK\x03\x04pickle"), 0o644)                                      // torch.save
	os.WriteFile(p("labels.jsonl"), []byte(`{"labels": ["joy"]}`+"\n"+`{"labels": "joy"}`+"\n"), 0o644) // ds.to_json, a row's list lost
	os.WriteFile(p("short.jsonl"), []byte(`{"emb": [0.5, 1, 2]}`+"\n"+`{"emb": [0.5, 1]}`+"\n"), 0o644)
	u64 := array.NewUint64Builder(memory.DefaultAllocator)
	for i := range n {
		u64.Append(uint64(i%3) | uint64(i/399)<<63)
	}
	writeColumnParquet(t, p("huge.parquet"), "label", u64.NewArray(), 1<<16)
	// A footer FuzzReadParquet damaged: arrow-go's reader panicked on it
	// (a schema node's children counted negative), and so did ccs.
	os.WriteFile(p("damaged.parquet"), []byte("0000\x15\x00\x150\x1500\x150\x19aH\x06000000\x15109\x02\x18\t0000000008\x0200,8\x00009\x04\x18\x0400000\x02\x00\x150#0\x18\a00000000\x1508\x0200991000\x00\x000\x150#0\x18\x0107000000000\x160\x19\x1c\x190&0,118C00000000000000000000000000000000000000000000000000000000000000000001,8\x008\x0008\x0000&\xdc0,117000000007000000009\x01,1111111101,8\x008\x0008\x0000&\xbc0,8A000000000000000000000000000000000000000000000000000000000000000001,8\x008\x0008\x0000\x16\xfa0\x1609100000000000000000000000000000000000000000000000p\x01\x00\x00PAR1"), 0o644)
	sttest.Write(t, p("two.safetensors"), sttest.T("emb", "F64", []int{n, d}, sttest.LE(x64...)), sttest.T("y", "I64", []int{n}, sttest.LE(y...)))
	sttest.Write(t, p("flags.safetensors"), sttest.T("labels", "U8", []int{n - 1}, make([]byte, n-1)))
	two, _ := os.ReadFile(p("two.safetensors"))
	os.WriteFile(p("cut.safetensors"), two[:len(two)-8], 0o644)
	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"labels of another length", []string{"-labels", p("short.npy")}, false, "short.npy: 399 labels for the 400 rows of " + p("emb.npy") + ": labels are matched to rows by position, one a row in the same order"},
		{"labels as many as the columns", []string{"-labels", p("dlabels.npy")}, false, "dlabels.npy: 3 labels for the 400 rows of " + p("emb.npy") + " (the embeddings are 400 rows of 3 values, and 3 is their columns' count: transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file))"},
		{"NaN rows", []string{"-embeddings", p("nan.npy")}, false, "nan.npy: row 7, coordinate 1 is NaN"},
		{"a class with one member", []string{"-labels", p("one.npy")}, false, "(class 77, 1 item, would have 1 in the fit split)"},
		{"rows labelled -1", []string{"-labels", p("unlabelled.npy")}, false, "unlabelled.npy: bundle: 100 of 400 rows have a label that marks a missing value (-1: 100): Hugging Face datasets and scikit-learn label a row without a label -1"},
		{"an unknown -missing-labels", []string{"-missing-labels", "skip"}, true, `bundle: -missing-labels "skip": want error, drop or class`},
		{"k larger than every class", []string{"-k", "500"}, false, "too few for k = 500 positives"},
		{"shares over 1", []string{"-split", "0.6,0.2,0.2,0.2"}, true, "sum to 1.2, more than 1"},
		{"every share 0", []string{"-split", "0,0,0,0"}, true, "the split shares [0 0 0 0] are all 0: give at least one split a share"},
		{"unknown file type", []string{"-embeddings", p("emb.yaml")}, false, `emb.yaml: unknown file type ".yaml"`},
		{"an AnnData file", []string{"-embeddings", p("cells.h5ad")}, false, `cells.h5ad: an AnnData file (HDF5), which ccs does not read: write its embedding and its labels out — in Python, a = anndata.read_h5ad(PATH); np.save("emb.npy", a.obsm["X_pca"])`},
		{"an HDF5 file of labels", []string{"-labels", p("labels.h5")}, false, `labels.h5: an HDF5 file, which ccs does not read: write the array out`},
		{"a workbook", []string{"-embeddings", p("emb.xlsx")}, false, `emb.xlsx: a spreadsheet's workbook, which ccs does not read: save the sheet as CSV`},
		{"a MATLAB file", []string{"-embeddings", p("emb.mat")}, false, `emb.mat: a MATLAB file, which ccs does not read`},
		{"an R data file", []string{"-embeddings", p("emb.rds")}, false, `emb.rds: an R data file, which ccs does not read`},
		{"a Zarr store", []string{"-embeddings", p("emb.zarr")}, false, `emb.zarr: a Zarr store, which ccs does not read`},
		{"JSON lines of embeddings of two lengths", []string{"-embeddings", p("short.jsonl")}, false, `short.jsonl:2: "emb" holds 2 numbers, and the first line's 3: every embedding one length`},
		{"several labels a row as JSON lines, one no list", []string{"-labels", p("labels.jsonl") + ":labels"}, false, `labels.jsonl:2: "labels" holds the string "joy", and line 1 a list (["joy"]): with several labels a row, every row's a list ([] or null for none)`},
		{"not Arrow", []string{"-embeddings", p("csv.arrow")}, false, "csv.arrow: not a readable Arrow IPC stream or file"},
		{"cut Arrow", []string{"-embeddings", p("cut.arrow")}, false, "cut.arrow: record batch "},
		{"Arrow labels column absent", []string{"-labels", p("hf.arrow") + ":class"}, false, `hf.arrow: no column "class"`},
		{"a damaged Parquet file", []string{"-embeddings", p("damaged.parquet") + ":embedding"}, false, "damaged.parquet: not a readable Parquet file (damaged or truncated?): runtime error: makeslice: cap out of range"},
		{"a Parquet labels column misspelt", []string{"-labels", p("huge.parquet") + ":labl"}, false, `huge.parquet: no column "labl" (the columns: "label" uint64): did you mean "label"?`},
		{"an Arrow embeddings column misspelt", []string{"-embeddings", p("hf.arrow") + ":embeding"}, false, `hf.arrow: no column "embeding" (the columns: "embedding" list<item: float32, nullable>, "label" utf8): did you mean "embedding"?`},
		{"a directory, not a dataset", []string{"-embeddings", p("plaindir")}, false, "plaindir: a directory without state.json or dataset_dict.json"},
		{"a dataset of no shards", []string{"-embeddings", p("emptyds")}, false, "emptyds/state.json: lists no _data_files"},
		{"a DatasetDict's split missing", []string{"-embeddings", p("halfdict")}, false, "halfdict/train: a directory is read as a Hugging Face dataset (save_to_disk), which has a state.json"},
		{"absent OOD class", []string{"-ood-classes", "5"}, false, "OOD class 5 is not among the labels (0, 1, 2)"},
		{"multi-hot with a stray 2", []string{"-labels", p("stray.npy")}, false, "stray.npy: shape (400, 4), want one label per row, (n,) (a multi-hot matrix, several labels a row, holds 0s and 1s; row 17, column 2 is 2: mark each label 0 or 1, (M > 0).astype(np.int64))"},
		{"multi-hot with a fraction", []string{"-labels", p("half.npy")}, false, "half.npy: dtype float64, want integer labels (any integer type) or strings (row 9, column 1 is 0.5, which is no label"},
		{"float labels", []string{"-labels", p("flabels.npy")}, false, "flabels.npy: dtype float64, want integer labels (any integer type) or strings (whole numbers stored as floats: save them as integers, labels.astype(np.int64))"},
		{"an OOD class not among string labels", []string{"-labels", p("names.npy"), "-ood-classes", "emu"}, false, `-ood-classes "emu": "emu" is not among the labels ("ant", "bee", "émeu")`},
		{"an OOD class by name with integer labels", []string{"-ood-classes", "bee"}, true, `-ood-classes "bee": "bee" is not an integer label`},
		{"an empty OOD class", []string{"-ood-classes", "1,"}, true, `-ood-classes "1,": an empty label`},
		{"a string class with one member", []string{"-labels", p("lonely.npy")}, false, `(class "lonely", 1 item, would have 1 in the fit split)`},
		{"embeddings pickled as objects", []string{"-embeddings", p("object-rows.npy")}, false, `'|O' is pickled Python objects: save embeddings as floats (np.save(f, np.asarray(x, dtype=np.float32)))`},
		{"labels pickled as objects", []string{"-labels", p("objects.npy")}, false, `array "objects": dtype "|O" is not supported: want float16, float32 or float64 ('<f2', '<f4', '<f8'), or an integer type ('<i8', '<i4', '<i2', '|i1', '<u8', … '|u1'), either byte order, or strings for labels ('<U…', '|S…'); '|O' is pickled Python objects: save string labels as strings (np.save(f, labels.astype(str))), and embeddings as one float array`},
		{"string labels of three dimensions", []string{"-labels", p("names3d.npy")}, false, "names3d.npy: shape (400, 1, 1), want one label per row"},
		// A multi-hot matrix is several labels a row (the rows their own
		// queries: TestBundleLabelSets), which some flags do not go with.
		{"a multi-hot matrix with an OOD label by name", []string{"-labels", p("multihot.npy"), "-ood-classes", "bee"}, true, `bundle: -ood-classes "bee": "bee" is not an integer label (a multi-hot matrix's labels are its columns, 0 to 2): give its column's number (list(mlb.classes_).index("bee"), mlb the MultiLabelBinarizer), name the matrix's columns (-label-names FILE; label_names=mlb.classes_ in Python), or give the labels as lists of names`},
		{"-label-names, a name short", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names2.txt")}, false, "-label-names " + p("hot-names2.txt") + ": 2 names for the 3 columns of the multi-hot matrix: want one a column, in the columns' order (mlb.classes_) (-labels " + p("multihot.npy") + ")"},
		{"-label-names, a name twice", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names-twice.txt")}, false, `hot-names-twice.txt: "bee" names columns 1 and 2: two labels under one name would read as one`},
		{"-label-names, an empty line", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names-blank.txt")}, false, "-label-names " + p("hot-names-blank.txt") + ":2: an empty name"},
		{"-label-names, an empty string", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names-empty.npy")}, false, "-label-names " + p("hot-names-empty.npy") + ": column 1's name is empty"},
		{"-label-names naming a missing label", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names-unknown.txt")}, false, p("multihot.npy") + `: several labels a row, and some rows list a value that marks a missing label ("Unknown": `},
		{"-label-names of one label a row", []string{"-labels", p("labels.npy"), "-label-names", p("hot-names.txt")}, false, "-label-names " + p("hot-names.txt") + " names the columns of a multi-hot matrix (several labels a row), and " + p("labels.npy") + " holds one label a row"},
		{"-label-names of lists of names", []string{"-labels", p("hot-lists.csv") + ":labels", "-label-names", p("hot-names.txt")}, false, "holds lists of labels, which are their own names: leave -label-names out"},
		{"-label-names without -labels", []string{"-labels", "", "-groups", p("labels.npy"), "-label-names", p("hot-names.txt")}, true, "bundle: -label-names " + p("hot-names.txt") + " names the columns of a multi-hot -labels matrix: give it with -labels (and no -groups)"},
		{"-label-names and an OOD label by column number", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names.txt"), "-ood-classes", "1"}, false, `bundle: -ood-classes "1": "1" is not among the labels ("ant", "bee", "emu"): the matrix's columns are named, and column 1 is "bee"`},
		{"-label-names and an OOD label not among them", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names.txt"), "-ood-classes", "eel"}, false, `bundle: -ood-classes "eel": "eel" is not among the labels ("ant", "bee", "emu")`},
		{"a multi-hot matrix with an OOD label past its columns", []string{"-labels", p("multihot.npy"), "-ood-classes", "7"}, true, `bundle: -ood-classes "7": label 7 is not a column of the multi-hot matrix (0 to 2)`},
		// -one-label: one of several labels a row, named as the manifest
		// names labels (TestBundleOneLabel).
		{"-one-label not among the named columns", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names.txt"), "-one-label", "eme"}, false, `bundle: -one-label "eme": "eme" is not among the labels ("ant", "bee", "emu"): did you mean "emu"?`},
		{"-one-label not among a list column's values", []string{"-labels", p("hot-lists.csv") + ":labels", "-one-label", "bea"}, false, `bundle: -one-label "bea": "bea" is not among the labels ("ant", "bee"): did you mean "bee"?`},
		{"-one-label by name of unnamed columns", []string{"-labels", p("multihot.npy"), "-one-label", "bee"}, true, `bundle: -one-label "bee": "bee" is not an integer label (a multi-hot matrix's labels are its columns, 0 to 2): give its column's number`},
		{"-one-label past the columns", []string{"-labels", p("multihot.npy"), "-one-label", "7"}, true, `bundle: -one-label "7": label 7 is not a column of the multi-hot matrix (0 to 2)`},
		{"-one-label by the number of a named column", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names.txt"), "-one-label", "1"}, false, `bundle: -one-label "1": "1" is not among the labels ("ant", "bee", "emu"): the matrix's columns are named, and column 1 is "bee"`},
		{"-one-label of one label a row", []string{"-one-label", "1"}, true, "bundle: -one-label 1: " + p("labels.npy") + " holds one label a row (a class a row), whose bundles calibrate each label's threshold already: bundle without -one-label and calibrate with -calibration class"},
		{"-one-label with OOD labels", []string{"-labels", p("multihot.npy"), "-one-label", "1", "-ood-classes", "2"}, true, "bundle: -one-label 1 bundles that label's rows for its own threshold: -ood-classes and -ood-cal-share hold rows out of the bundles of every label"},
		{"-one-label with an OOD calibration share", []string{"-labels", p("multihot.npy"), "-one-label", "1", "-ood-cal-share", "0.1"}, true, "bundle: -one-label 1 bundles that label's rows for its own threshold"},
		{"-one-label twice", []string{"-labels", p("multihot.npy"), "-one-label", "1", "-one-label", "2"}, true, `bundle: invalid value "2" for flag -one-label: given twice ("1", then "2"): a run bundles one label's rows — run ccs bundle once a label, each with its own -out`},
		{"-one-label empty", []string{"-labels", p("multihot.npy"), "-one-label", ""}, true, `bundle: invalid value "" for flag -one-label: empty: want a label's name`},
		{"-one-label without -labels", []string{"-labels", "", "-groups", p("g4.npy"), "-one-label", "1"}, true, "bundle: -one-label 1 names one of several labels a row: give it with -labels (a multi-hot matrix or a column of lists) and no -groups, -views or -pairs"},
		{"-one-label with relevance pairs", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("okpairs.npy"), "-one-label", "1"}, true, "bundle: -one-label 1 names one of several labels a row"},
		{"-one-label of too few rows for k", []string{"-labels", p("hot-lists.csv") + ":labels", "-one-label", "ant", "-k", "300"}, false, p("hot-lists.csv") + `:labels: bundle: label "ant" is carried by 200 of 400 rows: each has the 199 others as its positives, too few for k = 300: lower k (-k; k= in Python), or allow fewer (-allow-fewer`},
		{"-one-label of every row", []string{"-labels", p("hot-lists.csv") + ":labels", "-one-label", "bee"}, false, `bundle: label "bee" is carried by 400 of 400 rows: a query's negatives are the rows that do not carry it, 0, too few for kneg = 5`},
		{"-one-label of a label that a missing mark names", []string{"-labels", p("multihot.npy"), "-label-names", p("hot-names-unknown.txt"), "-missing-labels", "drop", "-one-label", "Unknown"}, false, `bundle: -one-label "Unknown": "Unknown" is not among the labels ("ant", "emu")`},
		{"a multi-hot matrix whose every row is OOD", []string{"-labels", p("multihot.npy"), "-ood-classes", "0,1"}, false, "bundle: every row carries an OOD label (0, 1): nothing is left in distribution"},
		{"a multi-hot matrix with OOD rows", []string{"-labels", p("multihot.npy"), "-ood-rows", p("faults.csv") + ":fault"}, true, "bundle: -ood-rows " + p("faults.csv") + ":fault folds faults into one label a row, and " + p("multihot.npy") + " holds several a row: hold the faulty rows out yourself"},
		{"a multi-hot matrix of bool with logits", []string{"-labels", p("multihot-bool.npy"), "-logits", p("emb.npy")}, true, "bundle: -logits and -activations are for one label a row, and " + p("multihot-bool.npy") + " holds several a row"},
		{"a multi-hot matrix with groups", []string{"-labels", p("multihot.npy"), "-groups", p("labels.npy")}, false, "multihot.npy: several labels a row (a multi-hot matrix or a list column) make the rows their own queries, related by the labels they share: give them as the labels of rows alone, without -groups"},
		{"a multi-hot matrix with views", []string{"-embeddings", "", "-labels", p("multihot.npy"), "-views", p("views.npy")}, false, "multihot.npy: several labels a row (a multi-hot matrix or a list column) make the rows their own queries, related by the labels they share: give them as the labels of rows alone, without -views"},
		{"two names a row", []string{"-labels", p("names-twice.npy")}, false, "names-twice.npy: shape (400, 2), want one label per row, (n,) (2 names a row: several labels per row (multi-label) are not classes"},
		{"a label that is not Unicode", []string{"-labels", p("surrogate.npy")}, false, `array "surrogate": element [3]: code unit 0, 0xd800, is not a Unicode code point`},
		{"an empty .txt of labels", []string{"-labels", p("empty.txt")}, false, "empty.txt: no labels"},
		{"a .txt of labels for other rows", []string{"-labels", p("short.txt")}, false, "short.txt: 3 labels for the 400 rows of " + p("emb.npy")},
		{"a .txt of labels absent", []string{"-labels", p("none.txt")}, false, "none.txt: no such file"},
		{"a .txt of names with a header", []string{"-labels", p("named.txt")}, false, "named.txt: 401 labels for the 400 rows of " + p("emb.npy") + " (one line too many: a header line, or a blank line at the end, is read as a label)"},
		{"a table's column unnamed", []string{"-labels", p("obs.csv")}, false, `obs.csv: which column holds the labels? give ` + p("obs.csv") + `:COLUMN (the columns: "", "cell_type", "donor")`},
		{"a table's column absent", []string{"-labels", p("obs.csv") + ":celltype"}, false, `obs.csv: no column "celltype"`},
		{"a table separated by semicolons, read", []string{"-labels", p("semi.csv") + ":topic"}, false, `semi.csv:topic: 1 labels for the 400 rows`},
		{"a table without a header", []string{"-labels", p("nohead.csv") + ":label"}, false, `nohead.csv: no column "label": its first line holds numbers (0.5, 1.5 … of 3 fields), no names — a file without a header has no column of a name: write the labels' column alone as a .txt, cut -d',' -f N ` + p("nohead.csv") + ` > labels.txt`},
		{"a table separated by bars", []string{"-labels", p("pipe.csv") + ":topic"}, false, `pipe.csv: no column "topic" (the columns: "id|topic|text"): the file's columns are separated by "|", and a .csv's are read at commas`},
		{"a table of labels for other rows", []string{"-labels", p("obs.csv") + ":cell_type"}, false, `obs.csv:cell_type: 1 labels for the 400 rows of`},
		{"an empty table", []string{"-labels", p("header.csv") + ":cell_type"}, false, `header.csv: no labels`},
		{"no positives", []string{"-labels", ""}, true, "give -labels FILE, -groups FILE, or -queries FILE with -pairs FILE"},
		{"missing file", []string{"-labels", p("none.npy")}, false, "none.npy: no such file"},
		{"missing file with an array name", []string{"-labels", p("none.npz") + ":y"}, false, "none.npz: no such file"},
		{"views of two dimensions", []string{"-embeddings", "", "-labels", "", "-views", p("emb.npy")}, false, "shape (400, 3), want (n, v, d) views"},
		{"no positives", []string{"-k", "0"}, true, "bundle: -k 0: want at least 1 positive per anchor"},
		{"negative negatives", []string{"-kneg", "-1"}, true, "bundle: -kneg -1: want 0 (as many as -k) or more"},
		{"a text file of ids given a column", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-query-ids", p("ids.txt"), "-ids", p("ids.txt") + ":id"}, false, p("ids.txt") + ":id: a text file of ids has no columns: it holds one id a line (a .csv or .tsv may name its column)"},
		{"ids without pairs", []string{"-ids", p("ids.txt")}, true, "bundle: -ids, -query-ids and -query-labels are of relevance pairs' rows and queries: give them with -queries and -pairs"},
		{"ids for other rows", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("ids3.txt")}, false, "ids3.txt: 3 ids for 400 rows"},
		{"JSON lines of pairs, a null id", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels-null.jsonl")}, false, `qrels-null.jsonl:2: "corpus-id" is null: every pair names its query and its row`},
		{"JSON lines of pairs, fields of other names", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels-nofield.jsonl")}, false, "qrels-nofield.jsonl:1: which fields hold the query's id and the relevant row's? name them"},
		{"qrels.tsv.gz cut short", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels-cut.tsv.gz")}, false, "qrels-cut.tsv.gz: the gzip stream stops before its end: the file is cut short"},
		{"qrels of one column", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels-one.tsv")}, false, "qrels-one.tsv:1: 1 columns, want query, relevant row [, score]"},
		{"a table of pairs with one column", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("huge.parquet")}, false, "huge.parquet: which columns hold the pairs? give " + p("huge.parquet") + `:QUERY,ROW or ` + p("huge.parquet") + `:QUERY,ROW,SCORE (the columns: "label" uint64)`},
		{"a table's pair column absent", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("huge.parquet") + ":label,doc"}, false, `huge.parquet: no column "doc"`},
		{"an id twice", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("twice.txt")}, false, `twice.txt: row id "d0" is given twice (rows 0 and 2, numbered from 0 — in a text file, its lines 1 and 3); 2 ids repeat (397 rows beyond each one's first): keep each id's first row`},
		{"an id twice, the queries' ids given too", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-query-ids", p("ids.txt"), "-ids", p("twice.txt")}, false, p("twice.txt") + `: row id "d0" is given twice (rows 0 and 2, numbered from 0 — in a text file, its lines 1 and 3)`},
		{"an empty id", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("blank.txt")}, false, "blank.txt:2: an empty id"},
		{"a header line in the ids", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("header.txt")}, false, `header.txt:1: "corpus-id" is a column's name, not an id`},
		{"a user_id header in the query ids", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-query-ids", p("userhdr.txt")}, false, `userhdr.txt:1: "user_id" is a column's name, not an id`},
		{"an ids file a line too long", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("moviehdr.txt")}, false, `moviehdr.txt: 401 ids for 400 rows (one line too many: its first line, "movie_id", a header? a .txt of ids holds one id a line and nothing else, in row order: remove it, or write the ids with header=False)`},
		{"ids of floats", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-query-ids", p("flabels.npy")}, false, "flabels.npy: dtype float64, shape (400,): want one id per row"},
		{"query ids without the queries' ids", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("ids.txt")}, false, `qrels.tsv:2: query "q0" is not a row number: give the queries' ids (-query-ids; query_ids= in Python) to name them by id`},
		{"every pair scored 0", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("unscored.tsv")}, false, "unscored.tsv: no pairs: all 2 are scored 0 or less, which marks a pair not relevant"},
		{"a NaN score", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("nanscore.tsv")}, false, `nanscore.tsv:3: score "nan" is not a finite number: a missing score says nothing of the pair's relevance`},
		{"an empty score", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("noscore.tsv")}, false, `noscore.tsv:3: an empty field ("2\t3\t")`},
		{"file paths as labels", []string{"-labels", p("utt.txt")}, false, `utt.txt: bundle: 400 of 400 classes would have exactly 1 item in a split, with no other of its class there to be its positive (class "id10000/s0/00000.wav", 1 item, would have 1 in the fit split): a class's items are split by the shares [0.5 0.1 0.2 0.2], and a class splits without a lone item from 16 items. Names such as "id10000/s0/00000.wav" are file paths, each its own class: its first directory makes 20 classes, its first two 60 — keep one (cut -d/ -f1 FILE > classes.txt; [p.split("/")[0] for p in paths] in Python)`},
		{"file paths as groups", []string{"-labels", "", "-groups", p("utt.txt")}, false, `utt.txt: bundle: 400 groups of the splits have one row (the first: group "id10000/s0/00000.wav"): no other row to be its anchor's positive; names such as "id10000/s0/00000.wav" are file paths, each its own group: its first directory makes 20 classes, its first two 60`},
		{"re-ID image names as groups", []string{"-labels", "", "-groups", p("reid.txt")}, false, `reid.txt: bundle: 400 groups of the splits have one row (the first: group "0001_c1s1_000000_01.jpg"): no other row to be its anchor's positive; names such as "0001_c1s1_000000_01.jpg" are person re-identification image names (person id, camera, frame: Market-1501, DukeMTMC-reID), each its own group: their person ids make 100 people over 3 cameras — give the person as the group and the camera as the session`},
		{"re-ID image names as labels", []string{"-labels", p("reid.txt")}, false, `Names such as "0001_c1s1_000000_01.jpg" are person re-identification image names (person id, camera, frame: Market-1501, DukeMTMC-reID), each its own class: their person ids make 100 people over 3 cameras`},
		{"re-ID image names as sessions", []string{"-labels", "", "-groups", p("g4.npy"), "-sessions", p("reid.txt")}, false, `reid.txt: no two rows of a group share a session (400 sessions for 400 rows): the sessions then exclude no positive, as if none were given`},
		{"a speaker-verification trial list", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("trials.txt"), "-ids", p("ids.txt"), "-query-ids", p("ids.txt")}, false, `trials.txt:1: "1 d0 d1" reads as a speaker-verification trial (target (1 or 0), enrolment, test, as VoxCeleb's lists), not a relevance pair`},
		{"a line without its score", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("twocols.tsv")}, false, "twocols.tsv:3: 2 columns, and line 1 has 3"},
		{"an interaction log as pairs", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("interactions.csv")}, false, `interactions.csv:1: 4 columns (user_id, item_id, timestamp, event), want query, relevant row [, score]: a table of several columns, such as an interaction log, gives its pairs as two of them`},
		{"an event's name for a score", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("events.csv")}, false, `events.csv:2: score "view" is not a number: the third column, "event", is read as each pair's relevance score; map its values to numbers`},
		{"a qrels column its header lacks", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("interactions.csv") + ":user_id,itemid"}, false, `interactions.csv:1: no column "itemid" in the header line (its columns: user_id, item_id, timestamp, event): did you mean "item_id"?`},
		{"ids of two id columns", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("twoids.csv")}, false, `twoids.csv: both "id" and "_id" could hold the ids: name one, ` + p("twoids.csv") + `:id`},
		{"-logits of queries", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-logits", p("emb.npy")}, true, "bundle: -logits are the rows' own, for bundles of -labels or -groups"},
		{"-logits of another length", []string{"-logits", p("short64.npy")}, false, "short64.npy: logits of 399 rows for the 400 rows of"},
		{"-logits transposed", []string{"-logits", p("logitsT.npy")}, false, "logitsT.npy: logits of 3 rows for the 400 rows of " + p("emb.npy") + ": transposed? a (3, 400) array, its columns the rows' count: give its .T"},
		{"-logits of integers", []string{"-logits", p("short.npy")}, false, "-logits " + p("short.npy") + ": dtype int64, want floating point"},
		{"-activations of queries", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-activations", p("emb.npy")}, true, "bundle: -activations are the rows' own, for bundles of -labels or -groups"},
		{"-activations of another length", []string{"-activations", p("short64.npy")}, false, "short64.npy: activations of 399 rows for the 400 rows of"},
		{"-activations of integers", []string{"-activations", p("short.npy")}, false, "-activations " + p("short.npy") + ": dtype int64, want floating point"},
		{"a multi-hot matrix with activations", []string{"-labels", p("multihot.npy"), "-activations", p("emb.npy")}, true, "bundle: -logits and -activations are for one label a row, and " + p("multihot.npy") + " holds several a row"},
		{"-min-score without pairs", []string{"-min-score", "2"}, true, "bundle: -min-score is the least score of a relevant pair: give it with -queries and -pairs"},
		{"-min-score 0", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-min-score", "0"}, true, "bundle: -min-score 0: want a finite score above 0"},
		{"-min-score of pairs without scores", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("pairs.npy"), "-min-score", "1"}, false, p("pairs.npy") + ": a least relevant score (1) for pairs without scores"},
		{"-judged-negatives without pairs", []string{"-judged-negatives"}, true, "bundle: -judged-negatives are a query's pairs judged not relevant (scored 0 or less): give them with -queries and -pairs, whose third column scores each pair"},
		{"-judged-negatives with -kneg-hard", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-judged-negatives", "-kneg-hard", "2"}, true, "bundle: -judged-negatives and -kneg-hard both choose the negatives: give one"},
		{"-judged-negatives of pairs without scores", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("okpairs.npy"), "-judged-negatives"}, false, p("okpairs.npy") + ": bundle: judged negatives asked for, but no pair is judged not relevant: give pairs with a score each, 0 or less for a pair judged not relevant"},
		{"-judged-negatives of a qrels file with none scored 0", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-judged-negatives", "-query-ids", p("qids.txt"), "-ids", p("ids.txt")}, false, p("qrels.tsv") + ": bundle: judged negatives asked for, but no pair is judged not relevant"},
		{"float pairs", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("fpairs.npy")}, false, "a float array holds the ids as floats: give the relevant pairs as integers"},
		{"no pair among the ids", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("qrels.tsv"), "-ids", p("ids.txt"), "-query-ids", p("ids.txt")}, false, `qrels.tsv: no pairs: all 1 name ids that are not among the given ids (the first: query id "q0")`},
		{"pairs of ids, not rows", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("marco.npy")}, false, `the columns are read as row numbers; ids as a qrels file names them (1000000, "doc17") need the rows' ids: -query-ids FILE and -ids FILE`},
		{"a header read as a row of NaN", []string{"-embeddings", p("header.npy")}, false, "header.npy: row 0, coordinate 0 is NaN (row 0 alone, every coordinate NaN, of 401 rows): a header line read as numbers?"},
		{"a pair beyond the rows", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("pairs.npy")}, false, p("pairs.npy") + ": bundle: pair 0 names row 9999, there are 400 rows"},
		{"scored pairs, every one scored 0", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("pairs0.npy")}, false, p("pairs0.npy") + ": no pairs: all 2 are scored 0 or less, which marks a pair not relevant"},
		{"pairs of four columns", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("pairs4.npy")}, false, p("pairs4.npy") + ": dtype int64, shape (2, 4): want pairs (m, 2) of integers or strings, or (m, 3) with a score each"},
		{"group ids marking a missing value", []string{"-labels", "", "-groups", p("gneg.npy"), "-k", "3"}, false, "bundle: 5 of 400 rows have a group id that marks a missing value (-1: 5): as one group those rows would be one another's positives; leave them out (-missing-labels drop"},
		{"string group ids marking a missing value", []string{"-labels", "", "-groups", p("gnan.txt"), "-k", "3"}, false, `bundle: 5 of 400 rows have a group id that marks a missing value ("nan": 5)`},
		{"groups of one row", []string{"-labels", "", "-groups", p("gsingle.npy"), "-k", "3", "-allow-fewer"}, false, "bundle: 4 groups of the splits have one row (the first: group 99): no other row to be its anchor's positive; leave their rows out first (ids, counts = np.unique(groups, return_counts=True)"},
		{"groups too small for k", []string{"-labels", "", "-groups", p("gshort.npy"), "-k", "3"}, false, "groups of the splits have fewer than k = 3 rows besides their anchor (the first: group "},
		{"string groups too small for k", []string{"-labels", "", "-groups", p("gnan.txt"), "-k", "5", "-missing-labels", "drop"}, false, `groups of the splits have fewer than k = 5 rows besides their anchor (the first: group "s`},
		{"-missing-labels with nothing to apply to", []string{"-embeddings", "", "-labels", "", "-views", p("vnan.npy"), "-missing-labels", "drop"}, true, "bundle: -missing-labels drop: there are no labels or group ids for it to apply to"},
		{"groups and relevance pairs", []string{"-labels", "", "-groups", p("g4.npy"), "-queries", p("emb.npy")}, true, "relevance pairs (-queries with -pairs) say which rows are positives, as -labels and -groups do: give one of the three"},
		{"a NaN view", []string{"-embeddings", "", "-labels", "", "-views", p("vnan.npy")}, false, "vnan.npy: item 5, view 2, coordinate 1 is NaN (1 item of 400 holds NaN or ±Inf)"},
		{"OOD classes without labels", []string{"-labels", "", "-groups", p("labels.npy"), "-ood-classes", "1"}, true, "the classes are labels: give -labels FILE too"},
		{"a uint64 label above int64", []string{"-labels", p("huge.parquet")}, false, `huge.parquet: column "label", row 399 is 9223372036854775808, above 2^63−1`},
		{"a PyTorch pickle", []string{"-embeddings", p("model.pt")}, false, `model.pt: a .pt file is a Python pickle, which ccs does not read (unpickling runs the file's code): save the tensor with safetensors`},
		{"a header of numbers read as a row", []string{"-embeddings", p("numhdr.csv")}, false, `400 labels for the 401 rows of ` + p("numhdr.csv") + ` (one row too many in the table: its first line, read as a row, a header of numbers?`},
		{"blank lines at the end", []string{"-labels", p("blank2.txt")}, false, `blank2.txt: 402 labels for the 400 rows of ` + p("emb.npy") + ` (the last 2 are missing labels: blank lines at the end of the file? remove them)`},
		{"a coordinate for labels", []string{"-labels", p("floatcol.csv") + ":dim_3"}, false, `floatcol.csv: column "dim_3" holds real numbers (0.14285714285714285 among them), not labels: a coordinate picked by mistake? labels are integers or names`},
		{"Latin-1 labels", []string{"-labels", p("latin1.txt")}, false, `latin1.txt:1: not UTF-8 ("caf\xe9"): a Latin-1 or Windows-1252 export`},
		{"Windows-1252 labels", []string{"-labels", p("cp1252.txt")}, false, `cp1252.txt:1: not UTF-8 ("caf\x92"): a Windows-1252 export (its curly quotes and dashes, bytes 0x80–0x9F)`},
		{"UTF-16 labels", []string{"-labels", p("utf16.txt")}, false, `utf16.txt:1: not UTF-8 but UTF-16`},
		{"Latin-1 labels in a CSV", []string{"-labels", p("latin1.csv") + ":label"}, false, `latin1.csv:2: not UTF-8 ("caf\xe9")`},
		{"embeddings as a text of ids", []string{"-embeddings", p("qids.txt")}, false, `qids.txt: no column of numbers (columns of text: column 1)`},
		{"which tensor", []string{"-embeddings", p("two.safetensors")}, false, `two.safetensors: which tensor? give FILE:TENSOR (have "emb", "y")`},
		{"a tensor not in the file", []string{"-embeddings", p("two.safetensors") + ":embeddings"}, false, `two.safetensors: no tensor "embeddings" (have "emb", "y")`},
		{"an array's name mistyped", []string{"-embeddings", p("two.safetensors") + ":em"}, false, `two.safetensors: no tensor "em" (have "emb", "y"): did you mean "emb"?`},
		{"a cut .safetensors", []string{"-embeddings", p("cut.safetensors") + ":emb"}, false, "cut.safetensors: the tensors hold"},
		{"labels of another length in a .safetensors", []string{"-labels", p("flags.safetensors")}, false, "flags.safetensors: 399 labels for the 400 rows"},
		{"blocks of another length", []string{"-blocks", p("short.npy")}, false, p("short.npy") + ": 399 block ids for the 400 rows of " + p("emb.npy")},
		{"blocks not there", []string{"-blocks", p("none.npy")}, false, "open " + p("none.npy") + ": no such file or directory"},
		{"blocks with groups", []string{"-labels", "", "-groups", p("g4.npy"), "-blocks", p("labels.npy")}, true, "bundle: -blocks split rows of one class label a row: give them with -labels (groups and views already lie whole in one split"},
		{"ood rows beside integer labels", []string{"-ood-rows", p("short.npy")}, false, p("short.npy") + ": -ood-rows: " + p("labels.npy") + " holds integer labels; give the classes as strings"},
		{"query labels without pairs", []string{"-query-labels", p("labels.npy")}, true, "bundle: -ids, -query-ids and -query-labels are of relevance pairs' rows and queries: give them with -queries and -pairs"},
		{"query labels of another length", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("okpairs.npy"), "-query-labels", p("short.npy")}, false, p("short.npy") + ": 399 query labels for the 400 queries of " + p("emb.npy")},
		{"query labels not there", []string{"-labels", "", "-queries", p("emb.npy"), "-pairs", p("okpairs.npy"), "-query-labels", p("none.npy")}, false, "open " + p("none.npy") + ": no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := p("out-" + strings.ReplaceAll(c.name, " ", "-"))
			args := append([]string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", out, "-k", "5"}, c.args...)
			err := run(io.Discard, io.Discard, args)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want %q", err, c.want)
			}
			if code := exitCode(err); code != map[bool]int{true: 2, false: 1}[c.usage] {
				t.Errorf("exit %d (%v)", code, err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s exists after the error", out)
			}
		})
	}
}

// strNPY is strings as NumPy stores a str array: '<U…' of the longest
// string's code points, each padded with NULs; data is where the values
// begin.
func strNPY(s []string, shape string) (b []byte, data int) {
	w := 1
	for _, v := range s {
		w = max(w, len([]rune(v)))
	}
	b = npyHead(fmt.Sprintf("<U%d", w), shape)
	data = len(b)
	for _, v := range s {
		units := make([]uint32, w)
		for i, r := range []rune(v) {
			units[i] = uint32(r)
		}
		for _, u := range units {
			b = binary.LittleEndian.AppendUint32(b, u)
		}
	}
	return b, data
}

// npyHead is a .npy header as NumPy writes it.
func npyHead(descr, shape string) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(b, h...)
}

func writeStrNPY(t *testing.T, path string, s []string, shape string) {
	t.Helper()
	b, _ := strNPY(s, shape)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHashChanged: an input whose size or modification time changed after
// its hash began (while ccs bundle read it) is refused by name, not
// recorded with a hash of other bytes.
func TestHashChanged(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "emb.npy")
	if err := os.WriteFile(path, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := hashFile(context.Background(), path)
	<-h.done
	if got, err := hashFile(context.Background(), path).wait(); err != nil || got != fmt.Sprintf("%x", sha256.Sum256([]byte("first"))) {
		t.Fatalf("unchanged: %q, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("second, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.wait(); err == nil || !strings.Contains(err.Error(), path+": changed while ccs bundle read it (5 bytes") {
		t.Errorf("changed: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := hashFile(ctx, path).wait(); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := hashFile(context.Background(), path+".gone").wait(); err == nil || !strings.Contains(err.Error(), "emb.npy.gone") {
		t.Errorf("missing: %v", err)
	}
	// A dataset directory: a shard changed is named; state.json naming a
	// shard that is not there is an error.
	ds := filepath.Join(t.TempDir(), "ds")
	os.Mkdir(ds, 0o755)
	os.WriteFile(filepath.Join(ds, "state.json"), []byte(`{"_data_files": [{"filename": "a.arrow"}, {"filename": "b.arrow"}]}`), 0o644)
	os.WriteFile(filepath.Join(ds, "a.arrow"), []byte("aaa"), 0o644)
	os.WriteFile(filepath.Join(ds, "b.arrow"), []byte("bbb"), 0o644)
	h = hashFile(context.Background(), ds)
	<-h.done
	os.WriteFile(filepath.Join(ds, "b.arrow"), []byte("bbbb"), 0o644)
	if _, err := h.wait(); err == nil || !strings.Contains(err.Error(), filepath.Join(ds, "b.arrow")+": changed while ccs bundle read it (3 bytes") {
		t.Errorf("a shard changed: %v", err)
	}
	os.Remove(filepath.Join(ds, "a.arrow"))
	if _, err := hashFile(context.Background(), ds).wait(); err == nil || !strings.Contains(err.Error(), "a.arrow") {
		t.Errorf("a shard missing: %v", err)
	}
}

// TestBundleMissingLabels: -missing-labels drop leaves the rows labelled
// -1 out of every split, says so on stderr and in the manifest.
func TestBundleMissingLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 3
	_, x64, y := mixture(6, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	for i := 300; i < n; i++ {
		y[i] = -1
	}
	bundle.WriteNPY(p("labels.npy"), bundle.Int64(y, n))
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("labels.npy"), "-out", p("b"), "-k", "5", "-missing-labels", "drop"}); err != nil {
		t.Fatal(err)
	}
	const want = "100 of 400 rows have a label that marks a missing value (-1: 100), taken for no label: left out of every split"
	if !strings.Contains(stderr.String(), "WARNING: "+want) {
		t.Errorf("stderr:\n%s\nwant the warning %q", stderr.String(), want)
	}
	var m bundle.Manifest
	raw, _ := os.ReadFile(p("b/manifest.json"))
	if err := json.Unmarshal(raw, &m); err != nil || m.MissingLabels != "drop" || !slices.Contains(m.Warnings, want) {
		t.Errorf("manifest: %v, missing_labels %q, warnings %q", err, m.MissingLabels, m.Warnings)
	}
	// String labels with pandas' missing value, "nan" (astype(str) of
	// NaN): refused by default, naming it; dropped, not a class name.
	names := make([]string, n)
	for i := range names {
		names[i] = "nan"
		if y[i] >= 0 {
			names[i] = []string{"ant", "bee", "cat"}[y[i]%3]
		}
	}
	writeStrNPY(t, p("names.npy"), names, fmt.Sprintf("(%d,)", n))
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("names.npy"), "-out", p("s"), "-k", "5"})
	if err == nil || !strings.Contains(err.Error(), `100 of 400 rows have a label that marks a missing value ("nan": 100)`) {
		t.Errorf("string labels \"nan\": %v", err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("names.npy"), "-out", p("s"), "-k", "5", "-missing-labels", "drop"}); err != nil {
		t.Fatal(err)
	}
	var sm bundle.Manifest
	raw, _ = os.ReadFile(p("s/manifest.json"))
	if err := json.Unmarshal(raw, &sm); err != nil || !slices.Equal(sm.LabelNames, []string{"ant", "bee", "cat"}) ||
		!slices.Contains(sm.Warnings, `100 of 400 rows have a label that marks a missing value ("nan": 100), taken for no label: left out of every split`) {
		t.Errorf("string labels \"nan\" dropped: %v, names %q, warnings %q", err, sm.LabelNames, sm.Warnings)
	}
	// The same labels as an (n, 1) column (pandas' df[["label"]].to_numpy(),
	// y.reshape(-1, 1)): one label a row, the same bundles byte for byte.
	writeStrNPY(t, p("names-col.npy"), names, fmt.Sprintf("(%d, 1)", n))
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("names-col.npy"), "-out", p("col"), "-k", "5", "-missing-labels", "drop"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		want, _ := os.ReadFile(p("s/" + f + ".npz"))
		if got, err := os.ReadFile(p("col/" + f + ".npz")); err != nil || !bytes.Equal(got, want) {
			t.Errorf("an (n, 1) column of labels: %s.npz differs from the (n,) labels' (%v)", f, err)
		}
	}
	rows := 0
	for _, f := range []string{"fit", "val", "cal", "test"} {
		arrays, err := bundle.ReadNPZ(p("b/" + f + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range arrays["index"].I64 {
			if r >= 300 {
				t.Errorf("%s: row %d, labelled -1, is an anchor", f, r)
			}
		}
		rows += len(arrays["index"].I64)
	}
	if rows != 300 {
		t.Errorf("%d anchors in the splits, want the 300 labelled rows", rows)
	}
}

// TestBundleMissingSessions: a session id that marks a missing value
// (-1, an empty line, "nan") follows -missing-labels as a group id does:
// refused, naming the sessions' file, the marks and the first row; with
// drop, its rows are left out, counted in a warning and the manifest;
// with class, each mark is a session of its own, its rows kept.
func TestBundleMissingSessions(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 3
	_, x64, _ := mixture(6, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	var groups []byte
	for i := range n {
		groups = fmt.Appendf(groups, "%d\n", i/10)
	}
	os.WriteFile(p("groups.txt"), groups, 0o644)
	marked := func(i int) bool { return i%10 == 4 || i%40 == 0 } // every fourth group's anchor among them
	for _, c := range []struct{ file, mark, named string }{
		{"int.txt", "-1", "-1"},
		{"empty.txt", "", `""`},
		{"nan.txt", "nan", `"nan"`},
	} {
		var b []byte
		for i := range n {
			s := fmt.Sprint(i % 10 % 3)
			if c.mark != "-1" {
				s = "cam" + s
			}
			if marked(i) {
				s = c.mark
			}
			b = fmt.Appendf(b, "%s\n", s)
		}
		os.WriteFile(p(c.file), b, 0o644)
		base := []string{"bundle", "-embeddings", p("emb.npy"), "-groups", p("groups.txt"), "-sessions", p(c.file), "-k", "3", "-seed", "2"}
		t.Run(c.file, func(t *testing.T) {
			err := run(io.Discard, io.Discard, append(slices.Clone(base), "-out", p(c.file+"-err")))
			want := fmt.Sprintf("%s: bundle: 50 of 400 rows have a session id that marks a missing value (%s: 50); the first: row 0", p(c.file), c.named)
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "-missing-labels drop") {
				t.Errorf("refused: %v, want %q", err, want)
			}
			for _, mode := range []string{"drop", "class"} {
				var stderr bytes.Buffer
				out := p(c.file + "-" + mode)
				if err := run(io.Discard, &stderr, append(slices.Clone(base), "-missing-labels", mode, "-out", out)); err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				warning := fmt.Sprintf("50 of 400 rows have a session id that marks a missing value (%s: 50), taken for no session: left out of every split", c.named)
				if got := strings.Contains(stderr.String(), "WARNING: "+warning); got != (mode == "drop") {
					t.Errorf("%s: stderr:\n%s\nthe warning %q: %v", mode, stderr.String(), warning, got)
				}
				var m bundle.Manifest
				raw, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
				if err := json.Unmarshal(raw, &m); err != nil || m.MissingLabels != mode {
					t.Errorf("%s: manifest: %v, missing_labels %q", mode, err, m.MissingLabels)
				}
				anchors := 0
				for _, f := range []string{"fit", "val", "cal", "test"} {
					arrays, err := bundle.ReadNPZ(filepath.Join(out, f+".npz"))
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range arrays["index"].I64 {
						if marked(int(r)) {
							anchors++
						}
					}
				}
				if want := map[string]int{"drop": 0, "class": 10}[mode]; anchors != want {
					t.Errorf("%s: %d anchors of a missing session, want %d", mode, anchors, want)
				}
			}
		})
	}
}

// TestBundleViewsNPZ: -views FILE.npz reads its "views" array without
// FILE:ARRAY, among others, and -k defaults to v − 1.
func TestBundleViewsNPZ(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	v := make([]float32, 200*4*3)
	for i := range v {
		v[i] = float32(i%11) + float32(i%7)/10
	}
	if err := bundle.WriteNPZ(p("vz.npz"), map[string]bundle.Array{"views": bundle.Float32(v, 200, 4, 3), "other": bundle.Float32(make([]float32, 3), 3)}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-views", p("vz.npz"), "-out", p("b")}); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(p("b/test.npz"))
	if err != nil || b.K != 3 {
		t.Errorf("k %d, %v; want 3 (v − 1)", b.K, err)
	}
}

// TestBundleTransposedIDs: embeddings saved transposed beside their ids
// file are refused with the count, and the hint that they look
// transposed, for the passages' ids and the queries' alike.
func TestBundleTransposedIDs(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 30, 4
	if err := bundle.WriteNPY(p("rowsT.npy"), bundle.Float32(make([]float32, n*d), d, n)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("rows.npy"), bundle.Float32(make([]float32, n*d), n, d)); err != nil {
		t.Fatal(err)
	}
	var ids strings.Builder
	for i := range n {
		fmt.Fprintf(&ids, "id%d\n", i)
	}
	os.WriteFile(p("ids.txt"), []byte(ids.String()), 0o644)
	os.WriteFile(p("qrels.tsv"), []byte("id1\tid2\n"), 0o644)
	want := fmt.Sprintf("%d ids for %d rows (the embeddings are %d rows of %d values, and %d is their columns' count: transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file))", n, d, d, n, n)
	for _, args := range [][]string{
		{"-embeddings", p("rowsT.npy"), "-queries", p("rows.npy"), "-ids", p("ids.txt")},
		{"-embeddings", p("rows.npy"), "-queries", p("rowsT.npy"), "-query-ids", p("ids.txt")},
	} {
		err := run(io.Discard, io.Discard, append([]string{"bundle", "-pairs", p("qrels.tsv"), "-out", p("b")}, args...))
		if w := strings.Replace(want, " ids ", map[bool]string{true: " query ids ", false: " ids "}[args[len(args)-2] == "-query-ids"], 1); err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("%v: %v, want %q", args, err, w)
		}
	}
}

// TestBundleZeroShares: -split with a share of 0 makes no such split —
// test alone, to judge a set calibrated on other data — and, bundled
// again into a directory of all four, removes the files it does not make;
// the manifest lists the splits made and the shares.
func TestBundleZeroShares(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(8, 9))
	const n, d = 400, 4
	x, y := make([]float32, n*d), make([]int64, n)
	for i := range n {
		y[i] = int64(i % 4)
		for j := range d {
			x[i*d+j] = float32(3*float64(y[i]) + rng.NormFloat64())
		}
	}
	if err := bundle.WriteNPY(p("x.npy"), bundle.Float32(x, n, d)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("y.npy"), bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"bundle", "-embeddings", p("x.npy"), "-labels", p("y.npy"), "-k", "3", "-out", p("b")}
	if err := run(&stdout, &stderr, args); err != nil {
		t.Fatal(err, stderr.String())
	}
	stdout.Reset()
	if err := run(&stdout, &stderr, append(args, "-split", "0,0,0,1")); err != nil {
		t.Fatal(err, stderr.String())
	}
	for _, want := range []string{"wrote " + p("b/test.npz") + ": 400 anchors", "removed " + p("b/fit.npz"), "removed " + p("b/cal.npz")} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q in\n%s", want, stdout.String())
		}
	}
	entries, err := os.ReadDir(p("b"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"manifest.json", "test.npz"}) {
		t.Errorf("the directory holds %v, want the manifest and test.npz", names)
	}
	m, err := os.ReadFile(p("b/manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), `"split": "test"`) || strings.Contains(string(m), `"split": "fit"`) || !strings.Contains(string(m), `"fit": 0,`) {
		t.Errorf("manifest:\n%s", m)
	}
}

// TestBundleLabelSets: -labels of a multi-hot matrix (several labels a
// row) writes the bundles of the recipe it replaces — the rows as their
// own queries, the pairs of rows that share a label as relevance pairs —
// byte for byte, notes what it did, and its manifest says which rows are
// positives.
func TestBundleLabelSets(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(12, 13))
	const n, d, c = 300, 4, 5
	x, m := make([]float32, n*d), make([]int64, n*c)
	for i := range n {
		for j := range c {
			if rng.Float64() < 0.4/float64(j+1) {
				m[i*c+j] = 1
			}
		}
		for j := range d {
			x[i*d+j] = float32(rng.NormFloat64())
		}
	}
	var pairs []int64
	for q := range n {
		for r := range n {
			for j := range c {
				if q != r && m[q*c+j] == 1 && m[r*c+j] == 1 {
					pairs = append(pairs, int64(q), int64(r))
					break
				}
			}
		}
	}
	for name, a := range map[string]bundle.Array{"x.npy": bundle.Float32(x, n, d), "m.npy": bundle.Int64(m, n, c), "pairs.npy": bundle.Int64(pairs, len(pairs)/2, 2)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	common := []string{"-k", "2", "-kneg", "4", "-allow-fewer", "-seed", "3"}
	if err := run(&stdout, &stderr, append([]string{"bundle", "-embeddings", p("x.npy"), "-queries", p("x.npy"), "-pairs", p("pairs.npy"), "-out", p("recipe")}, common...)); err != nil {
		t.Fatal(err, stderr.String())
	}
	stderr.Reset()
	if err := run(&stdout, &stderr, append([]string{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-out", p("native")}, common...)); err != nil {
		t.Fatal(err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "note: "+p("m.npy")+": 5 labels, several a row: rows that share a label are one another's positives") {
		t.Errorf("no note of the label sets:\n%s", stderr.String())
	}
	for _, split := range []string{"fit", "val", "cal", "test"} {
		if err := sameAsRecipe(p("native/"+split+".npz"), p("recipe/"+split+".npz")); err != nil {
			t.Errorf("%s: the label sets' bundle differs from the recipe's: %v", split, err)
		}
	}
	man, err := os.ReadFile(p("native/manifest.json"))
	if err != nil || !strings.Contains(string(man), "rows that share a label with the row") {
		t.Errorf("manifest (%v):\n%s", err, man)
	}
	// A Hugging Face dataset's multi-label column: a list of class ids, or
	// of names, a row (an empty list, or a null, for no label), in an
	// Arrow stream of two batches beside the embeddings.
	tags := []string{"a", "b", "c", "d", "e"}
	for _, lt := range []arrow.DataType{arrow.ListOf(arrow.PrimitiveTypes.Int64), arrow.ListOf(arrow.BinaryTypes.String)} {
		schema := arrow.NewSchema([]arrow.Field{
			{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
			{Name: "labels", Type: lt},
		}, nil)
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
		for lo := 0; lo < n; lo += 200 {
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			for i := lo; i < min(n, lo+200); i++ {
				eb := b.Field(0).(*array.ListBuilder)
				eb.Append(true)
				eb.ValueBuilder().(*array.Float32Builder).AppendValues(x[i*d:(i+1)*d], nil)
				lb := b.Field(1).(*array.ListBuilder)
				if !slices.Contains(m[i*c:(i+1)*c], 1) && i%2 == 0 {
					lb.AppendNull()
					continue
				}
				lb.Append(true)
				for j := range c {
					if m[i*c+j] == 1 {
						switch vb := lb.ValueBuilder().(type) {
						case *array.Int64Builder:
							vb.Append(int64(10 * j)) // class ids need not be 0 … C−1
						case *array.StringBuilder:
							vb.Append(tags[j])
						}
					}
				}
			}
			rec := b.NewRecordBatch()
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			rec.Release()
			b.Release()
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p("hf.arrow"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out := p("hf-" + lt.(*arrow.ListType).Elem().Name())
		if err := run(&stdout, &stderr, append([]string{"bundle", "-embeddings", p("hf.arrow"), "-labels", p("hf.arrow") + ":labels", "-out", out}, common...)); err != nil {
			t.Fatal(err, stderr.String())
		}
		for _, split := range []string{"fit", "val", "cal", "test"} {
			if err := sameAsRecipe(filepath.Join(out, split+".npz"), p("recipe/"+split+".npz")); err != nil {
				t.Errorf("%v: %s: the list column's bundle differs from the recipe's: %v", lt, split, err)
			}
		}
		// Label by label: the list's values name the labels; the matrix's
		// columns number the same labels, with the same counts.
		names := []string{"0", "10", "20", "30", "40"}
		if lt.(*arrow.ListType).Elem().ID() == arrow.STRING {
			names = tags
		}
		byLabel := func(dir string) []experiment.LabelEvaluation {
			t.Helper()
			if err := run(io.Discard, io.Discard, []string{"calibrate", "-cal", filepath.Join(dir, "cal.npz"), "-geometry", "ball", "-alpha", "0.2", "-out", filepath.Join(dir, "ball.json")}); err != nil {
				t.Fatal(err)
			}
			var doc experiment.Evaluation
			var js bytes.Buffer
			if err := run(&js, io.Discard, []string{"evaluate", "-set", filepath.Join(dir, "ball.json"), "-test", filepath.Join(dir, "test.npz"), "-per-class", "-json"}); err != nil || json.Unmarshal(js.Bytes(), &doc) != nil {
				t.Fatalf("%v\n%s", err, js.String())
			}
			return doc.Labels
		}
		got, matrix := byLabel(out), byLabel(p("native"))
		if len(got) != len(matrix) || len(got) == 0 {
			t.Fatalf("%v: %d labels, the matrix's %d", lt, len(got), len(matrix))
		}
		for i, l := range got {
			m := matrix[i]
			if l.Name != names[l.Label] || m.Name != "" || l.Label != m.Label || l.Positives != m.Positives || l.Coverage != m.Coverage {
				t.Errorf("%v: label %+v, the matrix's %+v, want the name %q", lt, l, m, names[l.Label])
			}
		}
		// ccs compare's Worst label column, the worst named.
		var cmpOut bytes.Buffer
		if err := run(&cmpOut, io.Discard, []string{"compare", "-data", out, "-rows", "baselines", "-seeds", "1", "-resplits", "10"}); err != nil {
			t.Fatal(err)
		}
		if s := cmpOut.String(); !strings.Contains(s, "| Worst label |") || !strings.Contains(s, "Worst label of each row (") || strings.Contains(s, "Worst class") ||
			!slices.ContainsFunc(names, func(n string) bool {
				return strings.Contains(s, strconv.Quote(n)+": Conformal Ball") || strings.Contains(s, strconv.Quote(n)+": Mahalanobis")
			}) {
			t.Errorf("%v: compare:\n%s", lt, s)
		}
		// Per-class resplits: label by label, named as evaluate names them.
		var ccOut bytes.Buffer
		err := run(&ccOut, io.Discard, []string{"coverage-check", "-set", filepath.Join(out, "ball.json"), "-test", filepath.Join(out, "test.npz"), "-per-class", "-resplits", "10"})
		if s := ccOut.String(); err != nil || !strings.Contains(s, "| label | held-out anchors | resplits |") || !strings.Contains(s, "not each label's") ||
			!slices.ContainsFunc(names, func(n string) bool { return strings.Contains(s, "| "+n+" ") }) {
			t.Errorf("%v: coverage-check -per-class: %v\n%s", lt, err, s)
		}
	}
	// A list column of the matrix's rows (a DataFrame of M.tolist()): the
	// matrix, as Python reads such lists, not the labels 0 and 1.
	schema := arrow.NewSchema([]arrow.Field{{Name: "labels", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	lb := b.Field(0).(*array.ListBuilder)
	for i := range n {
		lb.Append(true)
		lb.ValueBuilder().(*array.Int64Builder).AppendValues(m[i*c:(i+1)*c], nil)
	}
	rec := b.NewRecordBatch()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	b.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("rows.arrow"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, append([]string{"bundle", "-embeddings", p("x.npy"), "-labels", p("rows.arrow") + ":labels", "-out", p("rows")}, common...)); err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"fit", "val", "cal", "test"} {
		a, errA := os.ReadFile(p("native/" + split + ".npz"))
		b, errB := os.ReadFile(p("rows/" + split + ".npz"))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the matrix's rows as a list column: not the matrix's bundle (%v, %v)", split, errA, errB)
		}
	}
}

// TestNotABundle: the embeddings' .npy or a trial list given where a
// bundle goes is named for what it is, with the command that makes a
// bundle, by calibrate, evaluate, fit and coverage-check alike.
func TestNotABundle(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := bundle.WriteNPY(p("emb.npy"), bundle.Float32(make([]float32, 40*3), 40, 3)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("trials.txt"), []byte("1 id10270/a/00001.wav id10270/b/00002.wav\n"), 0o644)
	npy := p("emb.npy") + ": a .npy array of shape (40, 3), not a bundle: a bundle is a .npz of anchors and their positives (positives, or positive_index), as ccs bundle -out writes one from embeddings and labels, groups or pairs (ccs bundle -embeddings " + p("emb.npy") + " -labels FILE -out DIR; ccs.bundle in Python)"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"calibrate", []string{"calibrate", "-geometry", "ball", "-cal", p("emb.npy"), "-out", p("s.json")}, npy},
		{"calibrate a trial list", []string{"calibrate", "-geometry", "ball", "-cal", p("trials.txt"), "-out", p("s.json")}, `trials.txt: a text file ("1 id10270/a/00001.wav id10270/b/00002.wav"), not a bundle`},
		{"fit", []string{"fit", "-geometry", "genball", "-objective", "neg", "-train", p("emb.npy"), "-val-share", "0.1", "-out", p("f.json")}, npy},
	} {
		err := run(io.Discard, io.Discard, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 1 {
			t.Errorf("%s: %v (exit %d), want %q", c.name, err, exitCode(err), c.want)
		}
	}
}

// TestBundleTestOnly: -split 0,0,0,1 writes test.npz alone, of every
// group (held-out speakers, another donor), which a set calibrated on
// other bundles evaluates; ccs compare says what such a directory is for.
func TestBundleTestOnly(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 3
	_, x64, _ := mixture(6, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	g := make([]int64, n)
	for i := range g {
		g[i] = int64(i / 10)
	}
	bundle.WriteNPY(p("groups.npy"), bundle.Int64(g, n))
	var stdout strings.Builder
	if err := run(&stdout, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-groups", p("groups.npy"), "-k", "5", "-split", "0,0,0,1", "-out", p("b")}); err != nil {
		t.Fatal(err)
	}
	if want := "wrote " + p("b/test.npz") + ": 40 anchors, 5 positives and 5 negatives each, by index\nwrote " + p("b/manifest.json") + "\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	for _, f := range []string{"fit.npz", "val.npz", "cal.npz"} {
		if _, err := os.Stat(p("b/" + f)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want none", f, err)
		}
	}
	err := run(io.Discard, io.Discard, []string{"compare", "-data", p("b"), "-seeds", "1"})
	if want := p("b") + ": fit.npz is missing: its bundles were made with a fit share of 0 (fit 0, val 0, cal 0, test 1): a test split alone, to judge a set calibrated on other data (ccs evaluate -set SET.json -test " + p("b/test.npz") + "; s.evaluate in Python); but compare fits"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("compare: %v, want %q", err, want)
	}
}

// TestEvaluateTrials: ccs evaluate -trials judges a set on a VoxCeleb
// trial list of the utterances of -embeddings named by -ids (a path
// listed twice with its row said, and read once), as eval.Trials does;
// what it cannot judge is refused by file and line.
func TestEvaluateTrials(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 3
	x32, x64, _ := mixture(6, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	g := make([]int64, n)
	var utt, trials strings.Builder
	for i := range g {
		g[i] = int64(i / 10)
		fmt.Fprintf(&utt, "id%d/s%d/%05d.wav\n", i/10, i%2, i)
	}
	for i := 0; i+11 < n; i += 7 {
		fmt.Fprintf(&trials, "1 id%d/s%d/%05d.wav id%d/s%d/%05d.wav\n", i/10, i%2, i, (i+1)/10, (i+1)%2, i+1)
		fmt.Fprintf(&trials, "0 id%d/s%d/%05d.wav id%d/s%d/%05d.wav\n", i/10, i%2, i, (i+11)/10, (i+11)%2, i+11)
	}
	os.WriteFile(p("utt.txt"), []byte(utt.String()), 0o644)
	os.WriteFile(p("trials.txt"), []byte(trials.String()), 0o644)
	os.WriteFile(p("bad.txt"), []byte("1 id0/s0/00000.wav id0/s1/00001.wav\n0 id0/s0/00000.wav id99/s0/99999.wav\n"), 0o644)
	bundle.WriteNPY(p("groups.npy"), bundle.Int64(g, n))
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-groups", p("groups.npy"), "-k", "5", "-kneg", "2", "-out", p("b")}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-alpha", "0.2", "-out", p("ball.json")}); err != nil {
		t.Fatal(err)
	}
	set, err := conformal.Load(p("ball.json"))
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(utt.String())
	m, _ := bundle.IndexIDs(ids, "utterance")
	tr, err := bundle.ReadTrials(strings.NewReader(trials.String()), "trials.txt", m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := eval.Trials(set, x32, d, tr.Trials)
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("ball.json"), "-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt"), "-json"}); err != nil {
		t.Fatal(err)
	}
	var got eval.TrialResult
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil || got != want {
		t.Errorf("%+v (%v), want %+v", got, err, want)
	}
	// -out writes the document -json prints.
	var text strings.Builder
	if err := run(&text, io.Discard, []string{"evaluate", "-set", p("ball.json"), "-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt"), "-out", p("trials.json")}); err != nil {
		t.Fatal(err)
	}
	if saved, err := os.ReadFile(p("trials.json")); err != nil || string(saved) != stdout.String() || !strings.HasSuffix(text.String(), "wrote "+p("trials.json")+"\n") {
		t.Errorf("-out: %v: the file\n%s\nis not -json's\n%s\nor stdout does not end saying so:\n%s", err, saved, stdout.String(), text.String())
	}
	// A header line (pandas' to_csv writes one): the same trials, and
	// the line said.
	os.WriteFile(p("header.txt"), []byte("label enrol test\n"+trials.String()), 0o644)
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("ball.json"), "-trials", p("header.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt")}); err != nil || !strings.Contains(stdout.String(), `(VoxCeleb's form, its header line "label enrol test" skipped): `) {
		t.Errorf("a header line: %v, stdout %q", err, stdout.String())
	}
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("ball.json"), "-trials", p("header.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt"), "-json"}); err != nil {
		t.Fatal(err)
	}
	var withHeader struct {
		Header string `json:"header"`
		eval.TrialResult
	}
	if err := json.Unmarshal([]byte(stdout.String()), &withHeader); err != nil || withHeader.TrialResult != want || withHeader.Header != "label enrol test" {
		t.Errorf("a header line, -json: %+v (%v), want %+v", withHeader, err, want)
	}
	// A path listed twice, with its row: read once, and said.
	os.WriteFile(p("utt2.txt"), []byte(utt.String()+ids[3]+"\n"), 0o644)
	x2 := append(slices.Clone(x64), x64[3*d:4*d]...)
	writeNPY64(t, p("emb2.npy"), x2, n+1, d)
	var stderr strings.Builder
	if err := run(io.Discard, &stderr, []string{"evaluate", "-set", p("ball.json"), "-trials", p("trials.txt"), "-embeddings", p("emb2.npy"), "-ids", p("utt2.txt")}); err != nil || !strings.Contains(stderr.String(), `utt2.txt: 1 utterance listed twice with the same embedding (the first: "id0/s1/00003.wav", rows 3 and 400)`) {
		t.Errorf("a path twice: %v, stderr %q", err, stderr.String())
	}
	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"an utterance not among the ids", []string{"-trials", p("bad.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt")}, false, `bad.txt: 1 trial of 2 name an utterance that is not among the ids (the first: line 2, "id99/s0/99999.wav")`},
		{"ids for other rows", []string{"-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("bad.txt")}, false, "bad.txt: 2 ids for 400 rows"},
		{"a bundle, not a trial list", []string{"-trials", p("b/test.npz"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt")}, false, "test.npz:1: "},
		{"-test with -trials", []string{"-test", p("b/test.npz"), "-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt")}, true, "evaluate: -trials judges the set on a trial list; -test on a bundle: give one of the two"},
		{"no ids", []string{"-trials", p("trials.txt"), "-embeddings", p("emb.npy")}, true, "-ids"},
		{"-per-class with -trials", []string{"-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt"), "-per-class"}, true, "evaluate: -per-class, -db, -size-anchors, -baseline and -cal read a test bundle (-test), not a trial list"},
		{"-size-anchors with -trials", []string{"-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt"), "-size-anchors", "5"}, true, "-cal read a test bundle (-test)"},
		{"-unlabeled misspelt with -trials", []string{"-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt"), "-unlabeled", "marginl"}, true, `evaluate: -unlabeled "marginl": want error or marginal`},
	} {
		err := run(io.Discard, io.Discard, append([]string{"evaluate", "-set", p("ball.json")}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != map[bool]int{true: 2, false: 1}[c.usage] {
			t.Errorf("%s: %v (exit %d), want %q", c.name, err, exitCode(err), c.want)
		}
	}
	// A class-conditional set (the speakers as labels): refused, a trial
	// list giving no enrolment's class; with -unlabeled marginal, judged
	// with its threshold over all classes, and warned of.
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.npy"), "-labels", p("groups.npy"), "-k", "4", "-kneg", "2", "-split", "0,0,0.5,0.5", "-out", p("lab")}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("lab/cal.npz"), "-alpha", "0.2", "-calibration", "class", "-allow-infinite", "-out", p("class.json")}); err != nil {
		t.Fatal(err)
	}
	trialArgs := []string{"evaluate", "-set", p("class.json"), "-trials", p("trials.txt"), "-embeddings", p("emb.npy"), "-ids", p("utt.txt"), "-json"}
	if err := run(io.Discard, io.Discard, trialArgs); err == nil || !strings.Contains(err.Error(), "-unlabeled marginal judges every enrolment with the threshold over all classes") || exitCode(err) != 1 {
		t.Errorf("a class-conditional set: %v", err)
	}
	stdout.Reset()
	var stderr2 strings.Builder
	if err := run(&stdout, &stderr2, append(trialArgs, "-unlabeled", "marginal")); err != nil || !strings.Contains(stderr2.String(), "every enrolment is judged with the threshold over all classes") {
		t.Fatalf("-unlabeled marginal: %v, stderr %q", err, stderr2.String())
	}
	class, err := conformal.Load(p("class.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantMarginal, err := eval.Trials(class.OverAllClasses(), x32, d, tr.Trials)
	if err != nil {
		t.Fatal(err)
	}
	var marginal eval.TrialResult
	if err := json.Unmarshal([]byte(stdout.String()), &marginal); err != nil || marginal != wantMarginal {
		t.Errorf("-unlabeled marginal: %+v (%v), want %+v", marginal, err, wantMarginal)
	}
}

// TestMissGuarantee: the trials' miss line says what the set's threshold
// promises: on average for the exact one, with probability 1 − δ for
// PAC's, nothing exact for a pooled one.
func TestMissGuarantee(t *testing.T) {
	for _, c := range []struct {
		mode  conformal.Mode
		delta float64
		want  string
	}{
		{conformal.OnePerAnchor, 0, "α = 5.00%: on average over enrolments drawn as the calibration anchors were"},
		{conformal.PAC, 0.1, "α = 5.00%: at most that, with probability ≥ 90% over the calibration draw, for enrolments drawn as the calibration anchors were"},
		{conformal.Pooled, 0, "α = 5.00%: approximately — a pooled calibration guarantees nothing exact"},
	} {
		s := &conformal.Set{Alpha: 0.05, Calibration: conformal.Info{Mode: c.mode, Delta: c.delta}}
		if got := missGuarantee(s); got != c.want {
			t.Errorf("%v: %q, want %q", c.mode, got, c.want)
		}
	}
}

// sameAsRecipe says how a bundle of label sets (path) differs from the
// relevance pairs recipe's (recipe): every array the same, and the labels
// each positive shares with its anchor its own (the recipe's pairs do not
// know them); nil where they agree.
func sameAsRecipe(path, recipe string) error {
	a, err := bundle.ReadNPZ(path)
	if err != nil {
		return err
	}
	b, err := bundle.ReadNPZ(recipe)
	if err != nil {
		return err
	}
	for _, name := range []string{"positive_label_start", "positive_labels"} {
		if _, ok := a[name]; !ok {
			return fmt.Errorf("no %s", name)
		}
		delete(a, name)
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("arrays %v, the recipe's %v", slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b)))
	}
	return nil
}

// writeNullableParquet writes one nullable column, name, as pyarrow
// writes a column with nulls (an optional field), in row groups of 128.
func writeNullableParquet(t *testing.T, path, name string, col arrow.Array) {
	t.Helper()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: col.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pqarrow.WriteTable(tbl, f, 128, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

// TestBundleParquetNulls: a null in a Parquet label or group column — a
// Hugging Face dataset's row with no family, pandas' None through
// to_parquet — is a missing label, as "" and -1 are: refused by default,
// counting the rows and naming the mark (null, beside the file's "" when
// it has both), left out with -missing-labels drop, and a class with
// -missing-labels class. An id column's null stays an error, counted.
// The same columns beside the embeddings in one Arrow stream, and in a
// save_to_disk directory of two shards, read alike (one column read of
// the table, not the table): nulls counted across batches and shards, a
// float column refused, a column absent named with the columns there.
func TestBundleParquetNulls(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 3
	x32, x64, y := mixture(6, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	for i, l := range y {
		switch {
		case i%40 == 7: // 10 nulls
			sb.AppendNull()
			ib.AppendNull()
		case i%100 == 3: // 4 empty strings
			sb.Append("")
			ib.Append(l)
		default:
			sb.Append([]string{"PF00069.28", "PF07714.21", "PF00076.26"}[l])
			ib.Append(l)
		}
	}
	fam, lab := sb.NewArray(), ib.NewArray()
	fam.Retain()
	lab.Retain()
	writeNullableParquet(t, p("family.parquet"), "family", fam)
	writeNullableParquet(t, p("label.parquet"), "label", lab)
	// pandas' category column with NaN, as to_parquet writes it:
	// dictionary-encoded strings with nulls.
	db := array.NewDictionaryBuilder(memory.DefaultAllocator, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}).(*array.BinaryDictionaryBuilder)
	for i, l := range y {
		switch {
		case i%40 == 7:
			db.AppendNull()
		case i%100 == 3:
			db.AppendString("")
		default:
			db.AppendString([]string{"PF00069.28", "PF07714.21", "PF00076.26"}[l])
		}
	}
	category := db.NewArray()
	category.Retain()
	writeNullableParquet(t, p("category.parquet"), "family", category)
	// The columns beside the embeddings in one Arrow stream (batches of
	// 64 rows) and a dataset of two shards (rows [0, 150) and [150, n)).
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	for i, l := range y {
		if i%40 == 7 {
			fb.AppendNull()
		} else {
			fb.Append(float64(l))
		}
	}
	flt := fb.NewArray()
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Float32)
	for i := range n {
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).AppendValues(x32[i*d:(i+1)*d], nil)
	}
	emb := lb.NewArray()
	names, cols := []string{"embedding", "family", "label", "category", "score"}, []arrow.Array{emb, fam, lab, category, flt}
	writeArrowColumns(t, p("all.arrow"), names, cols, 0, n, 64)
	os.Mkdir(p("ds"), 0o755)
	writeArrowColumns(t, p("ds/data-00000-of-00002.arrow"), names, cols, 0, 150, 64)
	writeArrowColumns(t, p("ds/data-00001-of-00002.arrow"), names, cols, 150, n, 64)
	os.WriteFile(p("ds/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00002.arrow"}, {"filename": "data-00001-of-00002.arrow"}]}`), 0o644)
	base := []string{"bundle", "-embeddings", p("emb.npy"), "-k", "5"}
	for _, c := range []struct {
		name string
		args []string
		want string // the error, or, with -missing-labels drop, the warning
	}{
		{"string labels", []string{"-labels", p("family.parquet") + ":family"}, `14 of 400 rows have a label that marks a missing value ("": 4, null: 10)`},
		{"string labels dropped", []string{"-labels", p("family.parquet") + ":family", "-missing-labels", "drop"}, `14 of 400 rows have a label that marks a missing value ("": 4, null: 10), taken for no label: left out of every split`},
		{"integer labels", []string{"-labels", p("label.parquet")}, `10 of 400 rows have a label that marks a missing value (null: 10)`},
		{"category labels dropped", []string{"-labels", p("category.parquet") + ":family", "-missing-labels", "drop"}, `14 of 400 rows have a label that marks a missing value ("": 4, null: 10), taken for no label: left out of every split`},
		{"integer labels dropped", []string{"-labels", p("label.parquet"), "-missing-labels", "drop"}, `10 of 400 rows have a label that marks a missing value (null: 10), taken for no label: left out of every split`},
		{"string groups", []string{"-groups", p("family.parquet") + ":family", "-allow-fewer"}, `14 of 400 rows have a group id that marks a missing value ("": 4, null: 10)`},
		{"Arrow string labels", []string{"-embeddings", p("all.arrow"), "-labels", p("all.arrow") + ":family"}, `14 of 400 rows have a label that marks a missing value ("": 4, null: 10)`},
		{"Arrow integer labels dropped", []string{"-embeddings", p("all.arrow"), "-labels", p("all.arrow") + ":label", "-missing-labels", "drop"}, `10 of 400 rows have a label that marks a missing value (null: 10), taken for no label: left out of every split`},
		{"Arrow category labels dropped", []string{"-embeddings", p("all.arrow"), "-labels", p("all.arrow") + ":category", "-missing-labels", "drop"}, `14 of 400 rows have a label that marks a missing value ("": 4, null: 10), taken for no label: left out of every split`},
		{"dataset integer labels", []string{"-embeddings", p("ds"), "-labels", p("ds") + ":label"}, `10 of 400 rows have a label that marks a missing value (null: 10)`},
		{"dataset string labels dropped", []string{"-embeddings", p("ds"), "-labels", p("ds") + ":family", "-missing-labels", "drop"}, `14 of 400 rows have a label that marks a missing value ("": 4, null: 10), taken for no label: left out of every split`},
		{"dataset string groups", []string{"-embeddings", p("ds"), "-groups", p("ds") + ":family", "-allow-fewer"}, `14 of 400 rows have a group id that marks a missing value ("": 4, null: 10)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := p("out-" + strings.ReplaceAll(c.name, " ", "-"))
			var stderr bytes.Buffer
			err := run(io.Discard, &stderr, append(append(slices.Clone(base), c.args...), "-out", out))
			if !slices.Contains(c.args, "drop") {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%v, want %q", err, c.want)
				}
				if code := exitCode(err); code != 1 {
					t.Errorf("exit %d", code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var m bundle.Manifest
			raw, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
			if err := json.Unmarshal(raw, &m); err != nil || !slices.Contains(m.Warnings, c.want) {
				t.Errorf("manifest: %v, warnings %q, want %q", err, m.Warnings, c.want)
			}
			if strings.Contains(c.name, "labels") && slices.Contains(m.LabelNames, "") {
				t.Errorf("label names %q hold the missing mark", m.LabelNames)
			}
			rows := 0
			for _, f := range []string{"fit", "val", "cal", "test"} {
				arrays, err := bundle.ReadNPZ(filepath.Join(out, f+".npz"))
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range arrays["index"].I64 {
					if r%40 == 7 || (r%100 == 3 && strings.Contains(c.name, "string")) {
						t.Errorf("%s: row %d, without a label, is an anchor", f, r)
					}
				}
				rows += len(arrays["index"].I64)
			}
			if rows == 0 {
				t.Error("no anchors")
			}
		})
	}
	// -missing-labels class: the nulls are one class of their own, named
	// "null" among the string labels (here too small to split)...
	err := run(io.Discard, io.Discard, append(slices.Clone(base), "-labels", p("family.parquet")+":family", "-missing-labels", "class", "-out", p("cls"), "-allow-fewer"))
	if err == nil || !strings.Contains(err.Error(), `2 of 5 classes would have exactly 1 item in a split`) {
		t.Errorf("-missing-labels class: %v", err)
	}
	// ... so that a class-conditional set keeps its classes' names: a
	// negative label among them left it with none, every class then
	// named by its number in evaluate -per-class.
	nb := array.NewStringBuilder(memory.DefaultAllocator)
	for i, l := range y {
		if i%40 == 7 {
			nb.AppendNull()
		} else {
			nb.Append([]string{"PF00069.28", "PF07714.21", "PF00076.26"}[l])
		}
	}
	writeNullableParquet(t, p("nulls.parquet"), "family", nb.NewArray())
	err = run(io.Discard, io.Discard, append(slices.Clone(base), "-labels", p("nulls.parquet")+":family", "-missing-labels", "class", "-split", "0,0,0.5,0.5", "-allow-fewer", "-out", p("cls2")))
	if err != nil {
		t.Fatal(err)
	}
	var m bundle.Manifest
	raw, _ := os.ReadFile(p("cls2/manifest.json"))
	if err := json.Unmarshal(raw, &m); err != nil || !slices.Equal(m.LabelNames, []string{"PF00069.28", "PF00076.26", "PF07714.21", "null"}) {
		t.Errorf("-missing-labels class: %v, label names %q", err, m.LabelNames)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-calibration", "class", "-allow-infinite", "-cal", p("cls2/cal.npz"), "-out", p("cls2/set.json")}); err != nil {
		t.Fatal(err)
	}
	set, err := conformal.Load(p("cls2/set.json"))
	if err != nil {
		t.Fatal(err)
	}
	if names := set.ClassNames(); !slices.Equal(names, m.LabelNames) {
		t.Errorf("-missing-labels class: the set's class names %q, want %q", names, m.LabelNames)
	}
	// A session column's null is refused as a missing session is, the
	// message saying a null is one.
	var g []byte
	for i := range n {
		g = fmt.Appendf(g, "%d\n", i%20)
	}
	os.WriteFile(p("groups.txt"), g, 0o644)
	err = run(io.Discard, io.Discard, append(slices.Clone(base), "-groups", p("groups.txt"), "-sessions", p("family.parquet")+":family", "-allow-fewer", "-out", p("sessions")))
	if want := `14 of 400 rows have a session id that marks a missing value ("": 4, null: 10); the first: row 3`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("null sessions: %v, want %q", err, want)
	}
	// pandas' integer labels with a NaN are float64, nulls in Parquet:
	// refused, saying how to write them as integers.
	flt.Retain()
	writeNullableParquet(t, p("float.parquet"), "label", flt)
	// An id column's null is no missing label: still refused, counted.
	os.WriteFile(p("pairs.tsv"), []byte("0\t1\t1\n"), 0o644)
	const floatHint = `, want integer or string labels (pandas stores an integer column with a missing value as floats: write it as integers, df[col].astype("Int64"), its missing values then nulls)`
	const arrowColumns = `(the columns: "embedding" list<item: float32, nullable>, "family" utf8, "label" int64, "category" dictionary<values=utf8, indices=int32, ordered=false>, "score" float64)`
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"float labels", []string{"-labels", p("float.parquet")}, p("float.parquet") + `: column "label" is float64` + floatHint},
		{"Arrow float labels", []string{"-labels", p("all.arrow") + ":score"}, p("all.arrow") + `: column "score" is float64` + floatHint},
		{"dataset float labels", []string{"-labels", p("ds") + ":score"}, p("ds") + `: column "score" is float64` + floatHint},
		{"null ids", []string{"-queries", p("emb.npy"), "-pairs", p("pairs.tsv"), "-ids", p("family.parquet") + ":family"}, p("family.parquet") + `: column "family", row 7 is null (10 of its 400 rows are)`},
		{"Arrow null ids", []string{"-queries", p("emb.npy"), "-pairs", p("pairs.tsv"), "-ids", p("all.arrow") + ":family"}, p("all.arrow") + `: column "family", row 7 is null (10 of its 400 rows are)`},
		{"dataset null ids", []string{"-queries", p("emb.npy"), "-pairs", p("pairs.tsv"), "-ids", p("ds") + ":family"}, p("ds") + `: column "family", row 7 is null (10 of its 400 rows are)`},
		{"Arrow labels column misspelt", []string{"-labels", p("all.arrow") + ":famly"}, p("all.arrow") + `: no column "famly" ` + arrowColumns + `: did you mean "family"?`},
		{"dataset groups column absent", []string{"-groups", p("ds") + ":group"}, p("ds") + `: no column "group" ` + arrowColumns},
		{"dataset groups unnamed", []string{"-groups", p("ds")}, p("ds") + `: which column holds the groups? none is named "groups" or "group" ` + arrowColumns + `: give ` + p("ds") + `:COLUMN`},
		{"dataset ids unnamed", []string{"-queries", p("emb.npy"), "-pairs", p("pairs.tsv"), "-ids", p("ds")}, p("ds") + `: which column holds the ids? none is named "ids" or "id" or "_id" ` + arrowColumns + `: give ` + p("ds") + `:COLUMN`},
	} {
		err := run(io.Discard, io.Discard, append(append(slices.Clone(base), c.args...), "-out", p("bad")))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		} else if code := exitCode(err); code != 1 {
			t.Errorf("%s: exit %d, want 1", c.name, code)
		}
	}
}

// writeArrowColumns writes rows [lo, hi) of cols as an Arrow IPC stream,
// as a Hugging Face dataset's save_to_disk does, in record batches of
// batch rows.
func writeArrowColumns(t *testing.T, path string, names []string, cols []arrow.Array, lo, hi, batch int) {
	t.Helper()
	part := make([]arrow.Array, len(cols))
	for i, c := range cols {
		part[i] = array.NewSlice(c, int64(lo), int64(hi))
		defer part[i].Release()
	}
	if err := os.WriteFile(path, arrowtest.Write(t, names, part, batch, false), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompareLabelsFewPositives: ccs compare on label sets whose labels
// all have fewer than eval.MinLabelPositives test positives judges every
// label, seed after seed (the worst among all of them): each row's
// labels are the same, each a mean over every seed, and the worst named
// is the lowest of them.
func TestCompareLabelsFewPositives(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d, c, seeds = 160, 4, 6, 3
	centre := make([]float64, c*d)
	for i := range centre {
		centre[i] = 3 * rng.NormFloat64()
	}
	x, m := make([]float32, n*d), make([]int64, n*c)
	for i := range n {
		l := rng.IntN(c)
		m[i*c+l] = 1
		if rng.Float64() < 0.3 {
			m[i*c+(l+1)%c] = 1
		}
		spread := 1.0
		if l == c-1 {
			spread = 3
		}
		for j := range d {
			x[i*d+j] = float32(centre[l*d+j] + spread*rng.NormFloat64())
		}
	}
	for name, a := range map[string]bundle.Array{"x.npy": bundle.Float32(x, n, d), "m.npy": bundle.Int64(m, n, c)} {
		if err := bundle.WriteNPY(p(name), a); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-k", "2", "-kneg", "2", "-out", p("b")}); err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := run(&js, io.Discard, []string{"compare", "-data", p("b"), "-rows", "baselines", "-seeds", strconv.Itoa(seeds), "-alpha", "0.3", "-json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tables []experiment.CompareTable `json:"tables"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Tables) != 1 {
		t.Fatalf("%v\n%s", err, js.String())
	}
	tb := doc.Tables[0]
	if !tb.ByLabel {
		t.Fatalf("not by label:\n%s", js.String())
	}
	var first []int64
	for _, r := range tb.Rows {
		var labels []int64
		for _, k := range r.Classes {
			labels = append(labels, k.Label)
			if k.Coverage.N != seeds {
				t.Errorf("%s: label %d over %d seeds, want %d", r.Method, k.Label, k.Coverage.N, seeds)
			}
		}
		if first == nil {
			first = labels
		}
		if len(labels) != c || !slices.Equal(labels, first) {
			t.Errorf("%s: labels %v, want the %d labels, as the first row's %v", r.Method, labels, c, first)
		}
	}
}
