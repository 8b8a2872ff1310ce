package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// multiLabelOOD writes dir/x.npy and dir/m.npy: n rows of several labels
// a row (a multi-hot matrix of c columns, label j with probability
// 0.35, the last label 0.15), each row the mean of its labels' centres
// plus noise, the last label's centre shifted by shift in every
// coordinate: a label the encoder has not seen, which -ood-classes holds
// out. It returns the matrix.
func multiLabelOOD(t *testing.T, dir string, seed uint64, n, d, c int, shift float64) []int64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	centres := make([]float64, c*d)
	for i := range centres {
		centres[i] = 2 * rng.NormFloat64()
		if i/d == c-1 {
			centres[i] += shift
		}
	}
	x, m := make([]float32, n*d), make([]int64, n*c)
	for i := range n {
		var ls []int
		for j := range c {
			p := 0.35
			if j == c-1 {
				p = 0.15
			}
			if rng.Float64() < p {
				m[i*c+j] = 1
				ls = append(ls, j)
			}
		}
		for k := range d {
			v := 0.7 * rng.NormFloat64()
			for _, j := range ls {
				v += centres[j*d+k] / float64(len(ls))
			}
			x[i*d+k] = float32(v)
		}
	}
	for name, a := range map[string]bundle.Array{"x.npy": bundle.Float32(x, n, d), "m.npy": bundle.Int64(m, n, c)} {
		if err := bundle.WriteNPY(filepath.Join(dir, name), a); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestBundleLabelSetsOOD: ccs bundle -ood-classes with a multi-hot
// matrix holds out every row that carries one of the labels — ood.npz is
// exactly those rows — and no in-distribution bundle's anchor carries
// one; ood-cal.npz holds in-distribution rows of no split; and ccs ood,
// and compare's OOD columns, run on them.
func TestBundleLabelSetsOOD(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d, c = 600, 6, 5
	m := multiLabelOOD(t, dir, 3, n, d, c, 6)
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-ood-classes", "4", "-ood-cal-share", "0.1",
		"-k", "3", "-kneg", "5", "-allow-fewer", "-seed", "2", "-out", p("b")}); err != nil {
		t.Fatal(err, stderr.String())
	}
	var held []int64
	for i := range n {
		if m[i*c+c-1] == 1 {
			held = append(held, int64(i))
		}
	}
	seen := map[int64]string{}
	for _, f := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
		arrays, err := bundle.ReadNPZ(p("b/" + f + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		index := arrays["index"].I64
		if f == "ood" {
			if !slices.Equal(index, held) {
				t.Errorf("ood.npz holds rows %v, want the %d rows of label 4: %v", index, len(held), held)
			}
			continue
		}
		for _, r := range index {
			if m[int(r)*c+c-1] == 1 {
				t.Errorf("%s.npz: row %d carries the OOD label", f, r)
			}
			if s, ok := seen[r]; ok {
				t.Errorf("row %d in %s.npz and %s.npz", r, s, f)
			}
			seen[r] = f
		}
	}
	for _, args := range [][]string{
		{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-reference", "60", "-ood-cal", p("b/ood-cal.npz"), "-out", p("s.json")},
		{"evaluate", "-set", p("s.json"), "-test", p("b/test.npz"), "-per-class"},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	var out bytes.Buffer
	if err := run(&out, io.Discard, []string{"ood", "-set", p("s.json"), "-id", p("b/test.npz"), "-ood", p("b/ood.npz"), "-json"}); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Rows []struct {
			Method string `json:"method"`
			AUROC  []struct {
				Mean float64 `json:"mean"`
			} `json:"auroc"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.Rows) == 0 {
		t.Fatalf("ood -json: %v\n%s", err, out.String())
	}
	for _, r := range res.Rows {
		if len(r.AUROC) != 1 {
			t.Fatalf("%s: AUROC %+v, want one OOD set's", r.Method, r.AUROC)
		}
		t.Logf("%s: AUROC %.2f%%", r.Method, r.AUROC[0].Mean)
		if !(r.AUROC[0].Mean > 80) {
			t.Errorf("%s: AUROC %.2f%% on rows of a label held out, shifted by 6 in every coordinate: want > 80%%", r.Method, r.AUROC[0].Mean)
		}
	}
	out.Reset()
	if err := run(&out, io.Discard, []string{"compare", "-data", p("b"), "-rows", "baselines", "-seeds", "1", "-resplits", "10", "-quiet"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "AUROC") {
		t.Errorf("compare on a multi-label bundle directory with ood.npz shows no OOD column:\n%s", out.String())
	}
}

// TestLabelSetsClassCalibrationRefused: -calibration class (calibrate,
// compare) and calibrate -class on bundles of several labels a row are
// refused with why and what to do instead (conformal.SeveralLabelsMessage),
// not as bundles made without -labels; so is calibrate -ood-class
// (conformal.SeveralLabelsOODClassMessage).
func TestLabelSetsClassCalibrationRefused(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	multiLabelOOD(t, dir, 4, 300, 4, 4, 0)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-k", "3", "-allow-fewer", "-ood-cal-share", "0.1", "-out", p("b")}); err != nil {
		t.Fatal(err)
	}
	why := conformal.SeveralLabelsReason
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-calibration", "class", "-out", p("s.json")}, p("b/cal.npz") + ": " + conformal.SeveralLabelsMessage},
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-class", "1", "-out", p("s.json")}, "calibrate: -class 1: " + p("b/cal.npz") + ": " + why},
		{[]string{"compare", "-data", p("b"), "-rows", "baselines", "-calibration", "class", "-seeds", "1", "-quiet"}, "compare: -calibration class: " + p("b/cal.npz") + ": " + why},
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-reference", "20", "-ood-cal", p("b/ood-cal.npz"), "-ood-class", "1", "-out", p("s.json")},
			"calibrate: -ood-class 1: " + p("b/cal.npz") + ": " + conformal.SeveralLabelsOODClassMessage("-ood-class", "-ood-cal's")},
	} {
		err := run(io.Discard, io.Discard, c.args)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.args[0], err, c.want)
		}
	}
	// What the refusal says to do instead runs: one label's rows alone
	// (-one-label), a set calibrated on their calibration split.
	if !strings.Contains(why, "ccs bundle -labels FILE -one-label NAME (ccs.bundle(X, M, one_label=NAME))") {
		t.Errorf("the refusal names no -one-label: %s", why)
	}
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-one-label", "1", "-k", "3", "-allow-fewer", "-out", p("one")},
		{"calibrate", "-geometry", "ball", "-cal", p("one/cal.npz"), "-out", p("one.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestOODByClassSeveralLabels: ccs ood -ood-by-class on ccs bundle's
// ood.npz of labels of several a row, which has no label a row: with one
// held-out label the file is that label's sample, named by it, and with
// two it is refused (exit status 1), saying why and what to do — not
// that ccs bundle's ood.npz has labels.
func TestOODByClassSeveralLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	multiLabelOOD(t, dir, 5, 600, 6, 5, 6)
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-ood-classes", "4", "-ood-cal-share", "0.1", "-k", "3", "-kneg", "5", "-allow-fewer", "-out", p("one")},
		{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-ood-classes", "3,4", "-ood-cal-share", "0.1", "-k", "3", "-kneg", "5", "-allow-fewer", "-out", p("two")},
		{"calibrate", "-geometry", "ball", "-cal", p("one/cal.npz"), "-reference", "60", "-ood-cal", p("one/ood-cal.npz"), "-out", p("s.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	var out bytes.Buffer
	if err := run(&out, io.Discard, []string{"ood", "-set", p("s.json"), "-id", p("one/test.npz"), "-ood", "held=" + p("one/ood.npz"), "-ood-by-class", "-json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sets []string `json:"ood_sets"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if want := []string{"held:4"}; !slices.Equal(doc.Sets, want) {
		t.Errorf("one held-out label: samples %q, want %q", doc.Sets, want)
	}
	args := []string{"ood", "-set", p("s.json"), "-id", p("two/test.npz"), "-ood", p("two/ood.npz"), "-ood-by-class"}
	err := run(io.Discard, io.Discard, args)
	want := p("two/ood.npz") + ": -ood-by-class: it has no label a row to split its inputs by: ccs bundle held out the rows carrying any of 2 labels (3,4) of several a row"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "-ood-classes 3 -out DIR") || strings.Contains(err.Error(), "ood.npz has them") {
		t.Errorf("two held-out labels: %v, want %q…", err, want)
	}
	if got := exitCode(err); got != 1 {
		t.Errorf("two held-out labels: exit status %d, want 1", got)
	}
}

// TestBundleCSVLabelLists: a CSV column of lists, as pandas' to_csv writes
// a column of lists (['a', 'c']) or json.dumps does (["a", "c"]), is read
// as several labels a row: the same bundles, byte for byte, as the
// multi-hot matrix whose columns are the names in sorted order, and
// -ood-classes takes the names; a list not closed is refused, naming the
// file, the row and the form wanted; names in brackets that are no lists
// ([CLS]) are one label a row.
func TestBundleCSVLabelLists(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, c = 400, 5
	m := multiLabelOOD(t, dir, 6, n, 4, c, 6)
	names := []string{"anger", "fear", "grief", "joy", "love"}
	var pandas, js strings.Builder
	pandas.WriteString(",text,labels\n")
	js.WriteString("labels\n")
	for i := range n {
		var q, d []string
		for j := range c {
			if m[i*c+j] == 1 {
				q, d = append(q, "'"+names[j]+"'"), append(d, `""`+names[j]+`""`)
			}
		}
		fmt.Fprintf(&pandas, "%d,\"text, %d\",\"[%s]\"\n", i, i, strings.Join(q, ", "))
		fmt.Fprintf(&js, "\"[%s]\"\n", strings.Join(d, ", "))
	}
	for name, text := range map[string]string{"pd.csv": pandas.String(), "js.csv": js.String(), "bad.csv": "labels\n\"['joy', 'love]\"\n['joy']\n"} {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bundleOf := func(labels, ood, out string) error {
		return run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("x.npy"), "-labels", labels, "-ood-classes", ood, "-ood-cal-share", "0.1",
			"-k", "3", "-kneg", "5", "-allow-fewer", "-out", p(out)})
	}
	if err := bundleOf(p("m.npy"), "4", "matrix"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ labels, out string }{{p("pd.csv") + ":labels", "pd"}, {p("js.csv"), "js"}} {
		if err := bundleOf(c.labels, "love", c.out); err != nil {
			t.Fatalf("%s: %v", c.labels, err)
		}
		for _, split := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
			a, _ := os.ReadFile(p("matrix/" + split + ".npz"))
			b, err := os.ReadFile(p(c.out + "/" + split + ".npz"))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s: %s.npz differs from the matrix's (%v)", c.labels, split, err)
			}
		}
	}
	// Names in brackets, none a list of quoted names or integers, are
	// one label a row.
	var brackets strings.Builder
	brackets.WriteString("labels\n")
	for i := range n {
		fmt.Fprintf(&brackets, "[%s]\n", []string{"CLS", "SEP"}[i%2])
	}
	if err := os.WriteFile(p("brackets.csv"), []byte(brackets.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("x.npy"), "-labels", p("brackets.csv"), "-k", "3", "-out", p("brackets")}); err != nil || strings.Contains(stderr.String(), "several a row") {
		t.Errorf("labels [CLS] and [SEP]: %v, %s; want one label a row", err, stderr.String())
	}
	err := bundleOf(p("bad.csv"), "joy", "bad")
	if want := p("bad.csv") + ": row 0, ['joy', 'love]: a quote not closed: want a list of labels"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a list not closed: %v, want %q…", err, want)
	}
}

// TestRetrieveLabelSets: ccs retrieve -labels with several labels a row
// (a multi-hot matrix, or a CSV column of lists) counts a set's items
// label by label — an item of two labels for each, as the matrix's
// columns count them — where the matrix was refused and a list column
// counted each combination as a label of its own.
func TestRetrieveLabelSets(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, c = 300, 4
	m := multiLabelOOD(t, dir, 9, n, 4, c, 0)
	names := []string{"anger", "fear", "joy", "love"}
	var lists strings.Builder
	lists.WriteString("labels\n")
	for i := range n {
		var ls []string
		for j := range c {
			if m[i*c+j] == 1 {
				ls = append(ls, "'"+names[j]+"'")
			}
		}
		fmt.Fprintf(&lists, "\"[%s]\"\n", strings.Join(ls, ", "))
	}
	if err := os.WriteFile(p("lists.csv"), []byte(lists.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bundle", "-embeddings", p("x.npy"), "-labels", p("m.npy"), "-k", "3", "-allow-fewer", "-out", p("b")},
		{"calibrate", "-geometry", "ball", "-cal", p("b/cal.npz"), "-alpha", "0.1", "-out", p("s.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	for _, tc := range []struct {
		labels string
		name   func(j int) string
	}{
		{p("m.npy"), strconv.Itoa},
		{p("lists.csv"), func(j int) string { return names[j] }},
	} {
		var out bytes.Buffer
		if err := run(&out, io.Discard, []string{"retrieve", "-set", p("s.json"), "-db", p("x.npy"), "-anchor-index", "7", "-labels", tc.labels, "-json"}); err != nil {
			t.Fatalf("%s: %v", tc.labels, err)
		}
		var doc struct {
			Hits []struct {
				Row int `json:"row"`
			} `json:"hits"`
			Labels []struct {
				Label string `json:"label"`
				Count int    `json:"count"`
			} `json:"labels"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		want := map[string]int{}
		for _, h := range doc.Hits {
			for j := range c {
				if m[h.Row*c+j] == 1 {
					want[tc.name(j)]++
				}
			}
		}
		got := map[string]int{}
		for _, l := range doc.Labels {
			got[l.Label] = l.Count
		}
		if len(doc.Hits) == 0 || !maps.Equal(got, want) {
			t.Errorf("%s: labels %v over %d hits, want %v", tc.labels, got, len(doc.Hits), want)
		}
	}
}
