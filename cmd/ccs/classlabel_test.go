package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ccsets/ccs/bundle"
)

// nullLabel is a label writeClassLabelTable writes as a null.
const nullLabel = -99

// writeClassLabelTable writes n float32 rows of d and their integer
// labels y as a Hugging Face dataset does: columns "embedding" and
// "label" (int64, -1 for none, null for nullLabel), the schema's metadata "huggingface"
// holding features (a ClassLabel's names), as an Arrow IPC stream
// (save_to_disk's shard) or, with parquet, a Parquet file (to_parquet).
func writeClassLabelTable(t *testing.T, path string, x []float32, y []int64, d int, features string, parquet bool) {
	t.Helper()
	var md arrow.Metadata
	if features != "" {
		md = arrow.NewMetadata([]string{"huggingface"}, []string{`{"info": {"features": ` + features + `}}`})
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		{Name: "label", Type: arrow.PrimitiveTypes.Int64},
	}, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, l := range y {
		lb := b.Field(0).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float32Builder).AppendValues(x[i*d:(i+1)*d], nil)
		if l == nullLabel {
			b.Field(1).(*array.Int64Builder).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(l)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	if parquet {
		tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
		defer tbl.Release()
		if err := pqarrow.WriteTable(tbl, &buf, 500, nil, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	writeStream(t, path, rec)
}

// writeStream writes rec as an Arrow IPC stream, as save_to_disk writes
// a dataset's shard, its schema's metadata kept.
func writeStream(t *testing.T, path string, rec arrow.RecordBatch) {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBundleClassLabelNames: a Hugging Face dataset's ClassLabel column
// (save_to_disk's directory, to_parquet's file) bundles with its classes
// named by the features' names, in the dataset's id order (not sorted:
// the bundles are those of the bare ids), -ood-classes by name or by id;
// metadata that lies is ignored, the classes numbered, with a warning
// that says what is wrong.
func TestBundleClassLabelNames(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 600, 4
	x32, _, y := mixture(35, n, d, 3)
	y[5], y[17] = -1, -1 // no label, as Hugging Face marks it
	// Unsorted, and "Unknown" a class of its own (a ClassLabel's -1 is
	// its missing mark): names[i] is class i.
	names := []string{"Unknown", "Trouser", "Pullover"}
	features := `{"embedding": {"feature": {"dtype": "float32", "_type": "Value"}, "_type": "Sequence"}, "label": {"names": ["Unknown", "Trouser", "Pullover"], "_type": "ClassLabel"}}`
	os.Mkdir(p("ds"), 0o755)
	writeClassLabelTable(t, p("ds/data-00000-of-00001.arrow"), x32, y, d, features, false)
	os.WriteFile(p("ds/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	writeClassLabelTable(t, p("ds.parquet"), x32, y, d, features, true)
	os.Mkdir(p("bare"), 0o755)
	writeClassLabelTable(t, p("bare/data-00000-of-00001.arrow"), x32, y, d, "", false)
	os.WriteFile(p("bare/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	bundleOf := func(src, out string, extra ...string) (string, error) {
		var stderr bytes.Buffer
		args := append([]string{"bundle", "-embeddings", src, "-labels", src + ":label", "-out", p(out), "-k", "5",
			"-ood-cal-share", "0.1", "-seed", "3", "-missing-labels", "drop"}, extra...)
		err := run(io.Discard, &stderr, args)
		return stderr.String(), err
	}
	manifest := func(out string) bundle.Manifest {
		var m bundle.Manifest
		raw, err := os.ReadFile(p(out + "/manifest.json"))
		if err != nil || json.Unmarshal(raw, &m) != nil {
			t.Fatalf("%s: manifest: %v", out, err)
		}
		return m
	}
	if _, err := bundleOf(p("bare"), "bare-b", "-ood-classes", "1"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ src, out, ood string }{
		{p("ds"), "ds-name", "Trouser"},
		{p("ds"), "ds-id", "1"},
		{p("ds.parquet"), "pq-name", "Trouser"},
	} {
		stderr, err := bundleOf(c.src, c.out, "-ood-classes", c.ood)
		if err != nil {
			t.Fatalf("%s -ood-classes %s: %v", c.src, c.ood, err)
		}
		if strings.Contains(stderr, "metadata") {
			t.Errorf("%s: %s", c.src, stderr)
		}
		m := manifest(c.out)
		if !slices.Equal(m.LabelNames, names) {
			t.Errorf("%s: label_names %q, want the ClassLabel's %q", c.src, m.LabelNames, names)
		}
		// The ids are the dataset's: the same bundles as its bare ids'.
		for _, f := range []string{"fit", "val", "cal", "test", "ood", "ood-cal"} {
			a, _ := os.ReadFile(p("bare-b/" + f + ".npz"))
			b, err := os.ReadFile(p(c.out + "/" + f + ".npz"))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s -ood-classes %s: %s.npz differs from the bare ids' (%v)", c.src, c.ood, f, err)
			}
		}
	}
	// retrieve -labels names each hit's class, a -1 by its number.
	if labels, _, err := readRowLabels(p("ds")+":label", "", n, "db"); err != nil || labels[1] != names[y[1]] || labels[5] != "-1" {
		t.Errorf("retrieve -labels of a ClassLabel: %v, rows 1 and 5 %q, %q, want %q, \"-1\"", err, labels[1], labels[5], names[y[1]])
	}
	if _, err := bundleOf(p("ds"), "ds-bad", "-ood-classes", "Trousers"); err == nil || !strings.Contains(err.Error(), `"Trousers" is not among the labels`) || !strings.Contains(err.Error(), `did you mean "Trouser"?`) {
		t.Errorf("-ood-classes Trousers: %v", err)
	}
	// -missing-labels class: a null row's class comes last, named
	// "null", the dataset's ids kept.
	yn := slices.Clone(y)
	for i := 5; i < n; i += 30 { // 20 nulls: a class of them splits
		yn[i] = nullLabel
	}
	yn[17] = 0
	os.Mkdir(p("nulls"), 0o755)
	lower := []string{"unknown", "trouser", "pullover"} // "null" sorts among them
	writeClassLabelTable(t, p("nulls/data-00000-of-00001.arrow"), x32, yn, d, `{"label": {"names": ["unknown", "trouser", "pullover"], "_type": "ClassLabel"}}`, false)
	os.WriteFile(p("nulls/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	if _, err := bundleOf(p("nulls"), "nulls-b", "-missing-labels", "class", "-allow-fewer"); err != nil {
		t.Fatal(err)
	}
	if got, want := manifest("nulls-b").LabelNames, append(lower, "null"); !slices.Equal(got, want) {
		t.Errorf("-missing-labels class: label_names %q, want %q", got, want)
	}
	// -missing-labels class: a -1 row's class comes last too, named "-1",
	// the dataset's ids kept: the bundles of the bare ids with -1 as 3.
	// It once stayed class -1, which no name names: every table and the
	// set's classes fell back to numbers.
	ym, y3 := slices.Clone(y), slices.Clone(y)
	for i := 5; i < n; i += 30 {
		ym[i] = -1
	}
	for i, l := range ym {
		if l < 0 {
			y3[i] = 3
		}
	}
	for _, c := range []struct {
		dir      string
		y        []int64
		features string
	}{{"marks", ym, features}, {"marks-bare", y3, ""}} {
		os.Mkdir(p(c.dir), 0o755)
		writeClassLabelTable(t, p(c.dir+"/data-00000-of-00001.arrow"), x32, c.y, d, c.features, false)
		os.WriteFile(p(c.dir+"/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
		if _, err := bundleOf(p(c.dir), c.dir+"-b", "-missing-labels", "class", "-allow-fewer"); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := manifest("marks-b").LabelNames, append(slices.Clone(names), "-1"); !slices.Equal(got, want) {
		t.Errorf("-missing-labels class of a -1: label_names %q, want %q", got, want)
	}
	for _, f := range []string{"fit", "val", "cal", "test", "ood-cal"} {
		a, _ := os.ReadFile(p("marks-bare-b/" + f + ".npz"))
		if b, err := os.ReadFile(p("marks-b/" + f + ".npz")); err != nil || !bytes.Equal(a, b) {
			t.Errorf("-missing-labels class of a -1: %s.npz differs from the bare ids' with 3 for -1 (%v)", f, err)
		}
	}
	// Metadata that lies: ignored, the classes numbered, saying why.
	for _, c := range []struct{ name, features, warn string }{
		{"fewer names than ids", `{"label": {"names": ["Unknown", "Trouser"], "_type": "ClassLabel"}}`, `the ClassLabel feature "label" of the schema's "huggingface" metadata names 2 classes, but the column holds class 2: its classes are numbered, not named`},
		{"names no list", `{"label": {"names": "Unknown,Trouser,Pullover", "_type": "ClassLabel"}}`, `has names "Unknown,Trouser,Pullover", not a list of strings: its classes are numbered, not named`},
		{"malformed JSON", `{"label": {"names": [`, `metadata is no JSON document of a dataset's info`},
	} {
		os.RemoveAll(p("lie"))
		os.Mkdir(p("lie"), 0o755)
		writeClassLabelTable(t, p("lie/data-00000-of-00001.arrow"), x32, y, d, c.features, false)
		os.WriteFile(p("lie/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
		os.RemoveAll(p("lie-b"))
		stderr, err := bundleOf(p("lie"), "lie-b", "-ood-classes", "1")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := "WARNING: " + p("lie") + ": "; !strings.Contains(stderr, want+"the ") || !strings.Contains(stderr, c.warn) {
			t.Errorf("%s: stderr\n%s\nwant %q", c.name, stderr, c.warn)
		}
		if m := manifest("lie-b"); m.LabelNames != nil {
			t.Errorf("%s: label_names %q, want none", c.name, m.LabelNames)
		}
	}
}

// TestBundleClassLabelOODRows: -ood-rows beside a ClassLabel column
// keeps the ClassLabel's classes in the dataset's id order, the faults
// after them (sorted): the same bundles, byte for byte, and label_names
// as a ClassLabel that names the faults last, with -ood-classes naming
// them — not the classes re-sorted by name. -ood-rows of a ClassLabel
// column of faults (-1: none) names them by its names.
func TestBundleClassLabelOODRows(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 600, 4
	x32, _, y := mixture(36, n, d, 3)
	faults := make([]string, n)
	folded := slices.Clone(y)
	var csv strings.Builder
	csv.WriteString("row,fault\n")
	for i := range n {
		switch i % 10 {
		case 3:
			faults[i], folded[i] = "Torn", 4
		case 7:
			faults[i], folded[i] = "Stained", 3
		}
		fmt.Fprintf(&csv, "%d,%s\n", i, faults[i])
	}
	if err := os.WriteFile(p("faults.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"Unknown", "Trouser", "Pullover"} // unsorted: the dataset's order
	writeClassLabelTable(t, p("ds.parquet"), x32, y, d, `{"label": {"names": ["Unknown", "Trouser", "Pullover"], "_type": "ClassLabel"}}`, true)
	writeClassLabelTable(t, p("all.parquet"), x32, folded, d, `{"label": {"names": ["Unknown", "Trouser", "Pullover", "Stained", "Torn"], "_type": "ClassLabel"}}`, true)
	bundleOf := func(src, out string, extra ...string) {
		t.Helper()
		args := append([]string{"bundle", "-embeddings", src, "-labels", src + ":label", "-out", p(out), "-k", "5",
			"-ood-cal-share", "0.1", "-seed", "3"}, extra...)
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
	}
	bundleOf(p("ds.parquet"), "rows", "-ood-rows", p("faults.csv")+":fault")
	bundleOf(p("all.parquet"), "classes", "-ood-classes", "Stained,Torn")
	// The faults as a ClassLabel column of their own (-1: none), named
	// in another order: the same faults.
	ids := make([]int64, n)
	for i, f := range faults {
		ids[i] = int64(slices.Index([]string{"Torn", "Stained"}, f))
	}
	writeClassLabelTable(t, p("faults.parquet"), x32, ids, d, `{"label": {"names": ["Torn", "Stained"], "_type": "ClassLabel"}}`, true)
	bundleOf(p("ds.parquet"), "classlabel", "-ood-rows", p("faults.parquet")+":label")
	for _, out := range []string{"rows", "classes", "classlabel"} {
		var m bundle.Manifest
		raw, err := os.ReadFile(p(out + "/manifest.json"))
		if err != nil || json.Unmarshal(raw, &m) != nil {
			t.Fatalf("%s: manifest: %v", out, err)
		}
		if want := append(slices.Clone(names), "Stained", "Torn"); !slices.Equal(m.LabelNames, want) {
			t.Errorf("%s: label_names %q, want %q", out, m.LabelNames, want)
		}
	}
	for _, f := range []string{"fit", "val", "cal", "test", "ood", "ood-cal"} {
		a, err := os.ReadFile(p("classes/" + f + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		for _, out := range []string{"rows", "classlabel"} {
			if b, err := os.ReadFile(p(out + "/" + f + ".npz")); err != nil || !bytes.Equal(a, b) {
				t.Errorf("-ood-rows (%s): %s.npz differs from the ClassLabel's that names the faults last (%v)", out, f, err)
			}
		}
	}
}

// TestBundleClassLabelQueryLabels: -query-labels of a ClassLabel column
// names the queries' labels by its names, in the dataset's id order, as
// -labels does: in manifest.json and evaluate -per-class's rows, the
// bundles those of the bare ids. -groups of a ClassLabel column name
// the groups in messages.
func TestBundleClassLabelQueryLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, nq, d = 200, 400, 4
	x32, _, y := mixture(37, n+nq, d, 3)
	if err := bundle.WriteNPY(p("passages.npy"), bundle.Float32(x32[:n*d], n, d)); err != nil {
		t.Fatal(err)
	}
	pairs := make([]int64, 0, 2*nq)
	for q := range nq {
		pairs = append(pairs, int64(q), int64(q%n))
	}
	if err := bundle.WriteNPY(p("pairs.npy"), bundle.Int64(pairs, nq, 2)); err != nil {
		t.Fatal(err)
	}
	names := []string{"sw", "en", "de"} // unsorted: the dataset's order
	writeClassLabelTable(t, p("q.parquet"), x32[n*d:], y[n:], d, `{"label": {"names": ["sw", "en", "de"], "_type": "ClassLabel"}}`, true)
	writeClassLabelTable(t, p("bare.parquet"), x32[n*d:], y[n:], d, "", true)
	for _, src := range []string{"q", "bare"} {
		q := p(src + ".parquet")
		if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("passages.npy"), "-queries", q + ":embedding", "-pairs", p("pairs.npy"),
			"-query-labels", q + ":label", "-k", "1", "-kneg", "5", "-out", p(src)}); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		b, err := bundle.Read(p("q/" + f + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if got := bundle.ManifestLabelNames(p("q/"+f+".npz"), b); !slices.Equal(got, names) {
			t.Errorf("%s: the manifest's names %q, want the ClassLabel's %q", f, got, names)
		}
		a, _ := os.ReadFile(p("bare/" + f + ".npz"))
		if c, err := os.ReadFile(p("q/" + f + ".npz")); err != nil || !bytes.Equal(a, c) {
			t.Errorf("%s.npz differs from the bare ids' (%v)", f, err)
		}
	}
	// -missing-labels class: a query's -1 is a language of its own,
	// named "-1" after the ClassLabel's names, its id the next.
	ym := slices.Clone(y[n:])
	for i := 3; i < nq; i += 20 {
		ym[i] = -1
	}
	writeClassLabelTable(t, p("qm.parquet"), x32[n*d:], ym, d, `{"label": {"names": ["sw", "en", "de"], "_type": "ClassLabel"}}`, true)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("passages.npy"), "-queries", p("qm.parquet") + ":embedding", "-pairs", p("pairs.npy"),
		"-query-labels", p("qm.parquet") + ":label", "-k", "1", "-kneg", "5", "-missing-labels", "class", "-out", p("qm")}); err != nil {
		t.Fatalf("-query-labels with a -1, -missing-labels class: %v", err)
	}
	b, err := bundle.Read(p("qm/cal.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := bundle.ManifestLabelNames(p("qm/cal.npz"), b), append(slices.Clone(names), "-1"); !slices.Equal(got, want) {
		t.Errorf("-query-labels with a -1, -missing-labels class: the manifest's names %q, want %q", got, want)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("q/cal.npz"), "-alpha", "0.2", "-calibration", "class", "-allow-infinite", "-out", p("lang.json")}); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := run(&got, io.Discard, []string{"evaluate", "-set", p("lang.json"), "-test", p("q/test.npz"), "-per-class"}); err != nil {
		t.Fatal(err)
	}
	for _, l := range names {
		if !hasRow(got.String(), l) {
			t.Errorf("evaluate -per-class has no row for %q:\n%s", l, got.String())
		}
	}

	// Groups: 40 speakers of 6 rows, speaker 7 of 3, fewer than -k 5
	// positives: the refusal names it.
	const ng, per = 40, 6
	var gx []float32
	var g []int64
	spk := make([]string, ng)
	for s := range ng {
		spk[s] = fmt.Sprintf("id1%04d", s)
		for r := range per {
			if s == 7 && r >= 3 {
				break
			}
			gx = append(gx, x32[(s*per+r)*d:(s*per+r+1)*d]...)
			g = append(g, int64(s))
		}
	}
	quoted := make([]string, ng)
	for i, s := range spk {
		quoted[i] = `"` + s + `"`
	}
	writeClassLabelTable(t, p("g.parquet"), gx, g, d, `{"label": {"names": [`+strings.Join(quoted, ", ")+`], "_type": "ClassLabel"}}`, true)
	writeClassLabelTable(t, p("gbare.parquet"), gx, g, d, "", true)
	for _, c := range []struct{ src, want string }{
		{"g", `(the first: group "id10007", with 2)`},
		{"gbare", `(the first: group 7, with 2)`},
	} {
		src := p(c.src + ".parquet")
		err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", src + ":embedding", "-groups", src + ":label", "-k", "5", "-out", p("g-out")})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-groups %s: %v, want %q", c.src, err, c.want)
		}
	}
}

// TestRetrieveAnchorClassLabel: retrieve -anchor-labels reads a Hugging
// Face ClassLabel column as ccs bundle -labels does, by its names, so
// each anchor gets its named class's threshold: on a set calibrated
// class-conditionally on the ClassLabel bundle (whose labels are the
// dataset's ids) and on one calibrated on the same rows' names as
// strings (numbered in sorted order, not the dataset's), as -label NAME
// answers each anchor; a ClassLabel's -1 is refused as a missing label.
func TestRetrieveAnchorClassLabel(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 600, 4
	x32, _, y := mixture(36, n, d, 3)
	names := []string{"Trouser", "Pullover", "Dress"} // class i is names[i], unsorted
	features := `{"embedding": {"feature": {"dtype": "float32", "_type": "Value"}, "_type": "Sequence"}, "label": {"names": ["Trouser", "Pullover", "Dress"], "_type": "ClassLabel"}}`
	writeClassLabelTable(t, p("ds.parquet"), x32, y, d, features, true)
	var text strings.Builder
	for _, l := range y {
		fmt.Fprintln(&text, names[l])
	}
	os.WriteFile(p("names.txt"), []byte(text.String()), 0o644)
	// Six anchors, two of each class, and their labels as a ClassLabel column.
	rows := []int{}
	for c := range int64(3) {
		for i, l := range y {
			if l == c && len(rows) < 2*int(c+1) {
				rows = append(rows, i)
			}
		}
	}
	ax, ay := make([]float32, 0, len(rows)*d), make([]int64, 0, len(rows))
	for _, i := range rows {
		ax, ay = append(ax, x32[i*d:(i+1)*d]...), append(ay, y[i])
	}
	writeClassLabelTable(t, p("anchors.parquet"), ax, ay, d, features, true)
	if err := bundle.WriteNPY(p("anchors.npy"), bundle.Float32(ax, len(rows), d)); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if err := bundle.WriteNPY(p(fmt.Sprintf("a%d.npy", i)), bundle.Float32(ax[i*d:(i+1)*d], d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bundle.WriteNPY(p("db.npy"), bundle.Float32(x32, n, d)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("ds.parquet"), "-labels", p("ds.parquet") + ":label", "-k", "5", "-seed", "3", "-out", p("cl")},
		{"bundle", "-embeddings", p("ds.parquet"), "-labels", p("names.txt"), "-k", "5", "-seed", "3", "-out", p("str")},
		{"calibrate", "-geometry", "ball", "-cal", p("cl/cal.npz"), "-calibration", "class", "-alpha", "0.2", "-out", p("cl.json")},
		{"calibrate", "-geometry", "ball", "-cal", p("str/cal.npz"), "-calibration", "class", "-alpha", "0.2", "-out", p("str.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	for _, set := range []string{"cl.json", "str.json"} {
		batch, _ := retrieveJSON(t, "-set", p(set), "-db", p("db.npy"), "-anchor", p("anchors.npy"), "-anchor-labels", p("anchors.parquet")+":label")
		thresholds := map[any]bool{}
		for i, l := range ay {
			one, _ := retrieveJSON(t, "-set", p(set), "-db", p("db.npy"), "-anchor", p(fmt.Sprintf("a%d.npy", i)), "-label", names[l])
			if a := batch.Anchors[i]; a.Class != names[l] || a.Threshold != one.Threshold || !slices.Equal(a.rows(), one.rows()) {
				t.Errorf("%s: -anchor-labels, anchor %d: class %q, threshold %v, %d rows; -label %s: threshold %v, %d rows", set, i, a.Class, a.Threshold, a.Total, names[l], one.Threshold, one.Total)
			}
			thresholds[one.Threshold] = true
		}
		if len(thresholds) != 3 {
			t.Errorf("%s: the three classes' thresholds are %d distinct values: no test of which class an anchor gets", set, len(thresholds))
		}
	}
	// A set calibrated on the ClassLabel's ids as bare integers (as
	// ccs.bundle(X, ds["label"]) gives): its classes are the ids, which
	// the anchors' ClassLabel column gives as they are.
	if err := bundle.WriteNPY(p("ids.npy"), bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("ds.parquet"), "-labels", p("ids.npy"), "-k", "5", "-seed", "3", "-out", p("int")},
		{"calibrate", "-geometry", "ball", "-cal", p("int/cal.npz"), "-calibration", "class", "-alpha", "0.2", "-out", p("int.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	batch, _ := retrieveJSON(t, "-set", p("int.json"), "-db", p("db.npy"), "-anchor", p("anchors.npy"), "-anchor-labels", p("anchors.parquet")+":label")
	for i, l := range ay {
		one, _ := retrieveJSON(t, "-set", p("int.json"), "-db", p("db.npy"), "-anchor", p(fmt.Sprintf("a%d.npy", i)), "-label", fmt.Sprint(l))
		if a := batch.Anchors[i]; a.Threshold != one.Threshold || !slices.Equal(a.rows(), one.rows()) {
			t.Errorf("int.json: -anchor-labels, anchor %d: threshold %v, %d rows; -label %d: threshold %v, %d rows", i, a.Threshold, a.Total, l, one.Threshold, one.Total)
		}
	}
	// A ClassLabel's -1 is Hugging Face's no label.
	ay[1] = -1
	writeClassLabelTable(t, p("missing.parquet"), ax, ay, d, features, true)
	err := run(io.Discard, io.Discard, []string{"retrieve", "-set", p("cl.json"), "-db", p("db.npy"), "-anchor", p("anchors.npy"), "-anchor-labels", p("missing.parquet") + ":label"})
	if want := `missing.parquet:label: row 1: "-1" marks a missing label`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a ClassLabel's -1: %v, want %q", err, want)
	}
}

// writeSequenceTable writes n float32 rows of d and their lists of class
// ids as a Hugging Face dataset does a Sequence(ClassLabel): an Arrow IPC
// stream of columns "embedding" and "tags", features (when given) in the
// schema's "huggingface" metadata.
func writeSequenceTable(t *testing.T, path string, x []float32, lists [][]int64, d int, features string) {
	t.Helper()
	var md arrow.Metadata
	if features != "" {
		md = arrow.NewMetadata([]string{"huggingface"}, []string{`{"info": {"features": ` + features + `}}`})
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "embedding", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
	}, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, l := range lists {
		eb := b.Field(0).(*array.ListBuilder)
		eb.Append(true)
		eb.ValueBuilder().(*array.Float32Builder).AppendValues(x[i*d:(i+1)*d], nil)
		tb := b.Field(1).(*array.ListBuilder)
		tb.Append(true)
		tb.ValueBuilder().(*array.Int64Builder).AppendValues(l, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeStream(t, path, rec)
}

// TestBundleSequenceClassLabel: a Hugging Face Sequence(ClassLabel)
// column (several labels a row) is named by its feature's names, in the
// dataset's id order, as -label-names names a CSV column's integer lists:
// the bundles are the bare lists', label_names the names (a class no row
// lists kept), -ood-classes by name or id; a -1 among the ids is a missing
// label's mark: refused, dropped (the bundles of the lists without it) or
// a class named "-1" after the names. It was once numbered "0", "1", …
func TestBundleSequenceClassLabel(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 4
	x32, _, y := mixture(38, n, d, 3)
	names := []string{"joy", "anger", "love", "grief"} // unsorted; no row lists "grief"
	features := `{"tags": {"feature": {"names": ["joy", "anger", "love", "grief"], "_type": "ClassLabel"}, "_type": "Sequence"}}`
	lists, marked, bare := make([][]int64, n), make([][]int64, n), make([][]int64, n)
	for i := range n {
		lists[i] = []int64{y[i]}
		if y[i] == 1 && i%4 == 0 { // anger and love: held out with love
			lists[i] = append(lists[i], 2)
		}
		bare[i] = slices.Clone(lists[i])
		marked[i] = slices.Clone(lists[i])
		if i%10 == 3 {
			marked[i] = append(marked[i], -1)
		}
	}
	for _, c := range []struct {
		name     string
		lists    [][]int64
		features string
	}{{"ds", lists, features}, {"bare", bare, ""}, {"marked", marked, features},
		// A class named as a missing mark elsewhere is a class here, as a ClassLabel's.
		{"unknown", lists, strings.Replace(features, `"anger"`, `"Unknown"`, 1)}} {
		os.Mkdir(p(c.name), 0o755)
		writeSequenceTable(t, p(c.name+"/data-00000-of-00001.arrow"), x32, c.lists, d, c.features)
		os.WriteFile(p(c.name+"/state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	}
	bundleOf := func(src, out string, extra ...string) error {
		return run(io.Discard, io.Discard, append([]string{"bundle", "-embeddings", p(src), "-labels", p(src) + ":tags", "-out", p(out),
			"-k", "3", "-kneg", "4", "-allow-fewer", "-seed", "5"}, extra...))
	}
	labelNames := func(out string) []string {
		var m bundle.Manifest
		raw, err := os.ReadFile(p(out + "/manifest.json"))
		if err != nil || json.Unmarshal(raw, &m) != nil {
			t.Fatalf("%s: manifest: %v", out, err)
		}
		return m.LabelNames
	}
	same := func(a, b string, splits ...string) {
		t.Helper()
		for _, f := range splits {
			x, _ := os.ReadFile(p(a + "/" + f + ".npz"))
			if y, err := os.ReadFile(p(b + "/" + f + ".npz")); err != nil || !bytes.Equal(x, y) {
				t.Errorf("%s/%s.npz differs from %s's (%v)", b, f, a, err)
			}
		}
	}
	for _, c := range []struct{ src, out, ood string }{{"bare", "bare-b", "2"}, {"ds", "ds-name", "love"}, {"ds", "ds-id", "2"}} {
		if err := bundleOf(c.src, c.out, "-ood-classes", c.ood); err != nil {
			t.Fatalf("%s -ood-classes %s: %v", c.src, c.ood, err)
		}
	}
	if got := labelNames("ds-name"); !slices.Equal(got, names) {
		t.Errorf("label_names %q, want the Sequence(ClassLabel)'s %q", got, names)
	}
	same("bare-b", "ds-name", "fit", "val", "cal", "test", "ood")
	same("bare-b", "ds-id", "fit", "val", "cal", "test", "ood")
	// -one-label by name or by the dataset's id, as -ood-classes: it once
	// refused 2 as "joy", the sorted order's.
	for _, one := range []string{"love", "2"} {
		if err := bundleOf("ds", "one-"+one, "-one-label", one); err != nil {
			t.Fatalf("-one-label %s: %v", one, err)
		}
	}
	same("one-love", "one-2", "fit", "val", "cal", "test")
	if err := bundleOf("unknown", "unknown-b", "-ood-classes", "love"); err != nil {
		t.Fatalf("a class named Unknown: %v", err)
	}
	same("ds-name", "unknown-b", "fit", "val", "cal", "test", "ood")

	err := bundleOf("marked", "marked-refused")
	if want := `some rows list a value that marks a missing label ("-1": 40 rows, the first row `; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a -1 by default: %v, want %q", err, want)
	}
	if err := bundleOf("ds", "ds-b"); err != nil {
		t.Fatal(err)
	}
	if err := bundleOf("marked", "marked-drop", "-missing-labels", "drop"); err != nil {
		t.Fatal(err)
	}
	same("ds-b", "marked-drop", "fit", "val", "cal", "test")
	if got := labelNames("marked-drop"); !slices.Equal(got, names) {
		t.Errorf("-missing-labels drop: label_names %q, want %q", got, names)
	}
	if err := bundleOf("marked", "marked-class", "-missing-labels", "class"); err != nil {
		t.Fatal(err)
	}
	if got, want := labelNames("marked-class"), append(slices.Clone(names), "-1"); !slices.Equal(got, want) {
		t.Errorf("-missing-labels class: label_names %q, want %q", got, want)
	}
	// ccs retrieve -labels names the hits' labels too, a -1 as it is.
	labels, _, err := readRowLabels(p("marked")+":tags", "", n, "db")
	if err != nil || labels[5] != names[lists[5][0]] || !strings.HasPrefix(labels[3], "-1, ") {
		t.Errorf("retrieve -labels of a Sequence(ClassLabel): %v, rows 3 and 5 %q, %q, want \"-1, …\", %q", err, labels[3], labels[5], names[lists[5][0]])
	}
}
