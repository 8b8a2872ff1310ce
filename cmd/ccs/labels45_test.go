package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSavetxtLabels: labels NumPy's savetxt wrote in its default %.18e —
// class ids (np.savetxt("y.txt", y) of an integer array writes
// "9.000000000000000000e+00") and a multi-hot matrix's rows — are read as
// what they are: the ids' bundles those of the integers written as such,
// -ood-classes 9 class 9 (they were names in code-point order: class 10
// label 2, and 9 no label); the matrix's its .npy's. A matrix of other
// numbers is refused as no labels.
func TestSavetxtLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, c = 400, 5
	m := multiLabelOOD(t, dir, 6, n, 4, c, 6)
	var ids, idsE, hot, bad strings.Builder
	for i := range n {
		y := i % 12
		fmt.Fprintf(&ids, "%d\n", y)
		idsE.WriteString(strconv.FormatFloat(float64(y), 'e', 18, 64) + "\n")
		var h []string
		for j := range c {
			h = append(h, strconv.FormatFloat(float64(m[i*c+j]), 'e', 18, 64))
		}
		hot.WriteString(strings.Join(h, " ") + "\n")
		h[2] = "2.000000000000000000e+00"
		bad.WriteString(strings.Join(h, " ") + "\n")
	}
	for name, text := range map[string]string{"ids.txt": ids.String(), "idsE.txt": idsE.String(), "hot.txt": hot.String(), "bad.txt": bad.String()} {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bundleOf := func(labels, ood, out string) error {
		return run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("x.npy"), "-labels", labels, "-ood-classes", ood, "-ood-cal-share", "0.1",
			"-k", "3", "-kneg", "5", "-allow-fewer", "-out", p(out)})
	}
	same := func(what, a, b string) {
		t.Helper()
		for _, split := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
			x, _ := os.ReadFile(p(a + "/" + split + ".npz"))
			y, err := os.ReadFile(p(b + "/" + split + ".npz"))
			if err != nil || !bytes.Equal(x, y) {
				t.Errorf("%s: %s.npz differs from %s's (%v)", what, split, a, err)
			}
		}
	}
	for _, c := range []struct{ labels, ood, out string }{
		{p("ids.txt"), "9", "ids"}, {p("idsE.txt"), "9", "idsE"}, {p("m.npy"), "4", "matrix"}, {p("hot.txt"), "4", "hot"},
	} {
		if err := bundleOf(c.labels, c.ood, c.out); err != nil {
			t.Fatalf("%s: %v", c.labels, err)
		}
	}
	same("class ids as %.18e", "ids", "idsE")
	same("a multi-hot matrix as %.18e", "matrix", "hot")
	err := bundleOf(p("bad.txt"), "4", "bad")
	if want := "bad.txt: every line holds 5 numbers, a matrix, and row 0 (counted from 0) holds 2.000000000000000000e+00: labels are one a line"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a matrix of other numbers: %v\nwant …%s…", err, want)
	}
}

// TestLabelNamesTrailingBlank: a names file with a blank last line (as
// `echo >> names.txt` leaves one) names its lines; a blank line among
// them is still an empty name, refused with its line.
func TestLabelNamesTrailingBlank(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"end.txt": "joy\nlove\n\n\n", "mid.txt": "joy\n\nlove\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if names, err := readLabelNames(filepath.Join(dir, "end.txt")); err != nil || strings.Join(names, ",") != "joy,love" {
		t.Errorf("blank lines at the end: %q, %v; want joy, love", names, err)
	}
	if _, err := readLabelNames(filepath.Join(dir, "mid.txt")); err == nil || !strings.Contains(err.Error(), "mid.txt:2: an empty name") {
		t.Errorf("a blank line between names: %v", err)
	}
}

// TestUnlistedLabels: one id far past the others (99 among 0 to 27)
// makes a matrix of 100 labels, most listed by no row: said, with the
// row; lists that list most of their numbers are not.
func TestUnlistedLabels(t *testing.T) {
	sets := make([][]int32, 200)
	for i := range sets {
		sets[i] = []int32{int32(i % 28)}
	}
	if msg := unlistedLabels(sets, 28); msg != "" {
		t.Errorf("every number listed: %q", msg)
	}
	sets[117] = []int32{3, 99}
	if msg := unlistedLabels(sets, 100); !strings.HasPrefix(msg, "71 of the 100 label numbers (0 to 99) are listed by no row") || !strings.Contains(msg, "the highest, 99 (row 117, counted from 0), makes 100 labels — a typo?") {
		t.Errorf("99 among 0 to 27: %q", msg)
	}
}

// TestLabelsRepeatedHeader: a labels CSV made of part files joined with
// cat repeats its header below: the line is refused at its line (read as
// a label, every row below would pair with the label of the one above),
// with pandas' index or without; a label that happens to be the column's
// name beside an index that is not the header's is a label.
func TestLabelsRepeatedHeader(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	for name, text := range map[string]string{
		"pd.csv":    ",label\n0,cat\n1,dog\n,label\n2,cat\n",
		"plain.csv": "label\ncat\ndog\nlabel\ncat\n",
		"ok.csv":    ",label\n0,cat\n1,label\n2,dog\n",
	} {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, want string }{
		{"pd.csv", "pd.csv:4: a line repeating the header"},
		{"plain.csv", "plain.csv:4: a line repeating the header"},
	} {
		if _, err := readLabels(p(c.name)+":label", false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want …%s…", c.name, err, c.want)
		}
	}
	if li, err := readLabels(p("ok.csv")+":label", false); err != nil || len(li.names) != 3 {
		t.Errorf("a label named as the column: %v, names %q", err, li.names)
	}
}
