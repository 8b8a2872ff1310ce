package main

// Reproductions of a new user's findings (REPORT.md in the clone's root):
// a multi-label emotion export in the shapes datasets, pandas and NumPy
// write it. Each test fails on the commit the report was written against.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// user45Data writes x.npy (n, d) and m.npy (n, c), clustered by label
// (each row the mean of its labels' centres plus noise, 1 or 2 labels a
// row), and returns the embeddings and the multi-hot matrix.
func user45Data(t *testing.T, dir string, n, d, c int) ([]float32, []int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(45, 1))
	centres := make([]float64, c*d)
	for i := range centres {
		centres[i] = 2 * rng.NormFloat64()
	}
	x, m := make([]float32, n*d), make([]int64, n*c)
	for i := range n {
		ls := []int{rng.IntN(c)}
		if rng.Float64() < 0.3 {
			if j := rng.IntN(c); j != ls[0] {
				ls = append(ls, j)
			}
		}
		for _, j := range ls {
			m[i*c+j] = 1
		}
		for k := range d {
			v := 0.4 * rng.NormFloat64()
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
	return x, m
}

func user45Same(t *testing.T, what, a, b string) {
	t.Helper()
	for _, split := range []string{"fit", "val", "cal", "test"} {
		x, _ := os.ReadFile(filepath.Join(a, split+".npz"))
		y, err := os.ReadFile(filepath.Join(b, split+".npz"))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s: %s.npz differs from the multi-hot matrix's (%v)", what, split, err)
		}
	}
}

// TestUser45JSONLEmbeddingBesideLabelLists: datasets' to_json of a
// multi-label dataset with an embedding column writes both fields on each
// line, {"text": …, "labels": [3, 17], "embedding": [0.01…, …]}. The docs
// (your-data.md, "JSON lines" and "A column that -labels … names in the
// embeddings' own table … is theirs: left out of the embedding") give
// -embeddings emb.jsonl -labels emb.jsonl:labels; it is refused because
// the first line's labels list is also "a list of numbers", and the
// refusal suggests naming the labels field as the embedding
// ("name it, emb.jsonl:labels"), which then fails with "every embedding
// one length".
func TestUser45JSONLEmbeddingBesideLabelLists(t *testing.T) {
	dir := t.TempDir()
	const n, d, c = 300, 6, 4
	x, m := user45Data(t, dir, n, d, c)
	var b strings.Builder
	for i := range n {
		var ids, e []string
		for j := range c {
			if m[i*c+j] == 1 {
				ids = append(ids, strconv.Itoa(j))
			}
		}
		for k := range d {
			e = append(e, strconv.FormatFloat(float64(x[i*d+k]), 'g', 17, 64)) // Python's repr of a float32 value
		}
		fmt.Fprintf(&b, `{"text": "row %d", "labels": [%s], "embedding": [%s]}`+"\n", i, strings.Join(ids, ", "), strings.Join(e, ", "))
	}
	p := filepath.Join(dir, "emb.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"-k", "3", "-kneg", "5", "-allow-fewer"}
	if err := run(io.Discard, io.Discard, append([]string{"bundle", "-embeddings", filepath.Join(dir, "x.npy"), "-labels", filepath.Join(dir, "m.npy"), "-out", filepath.Join(dir, "matrix")}, common...)); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := run(io.Discard, &stderr, append([]string{"bundle", "-embeddings", p, "-labels", p + ":labels", "-out", filepath.Join(dir, "jsonl")}, common...))
	if err != nil {
		t.Fatalf("-embeddings emb.jsonl -labels emb.jsonl:labels: %v\n(the labels field is named by -labels: it is not the embedding)", err)
	}
	if !strings.Contains(stderr.String(), `"labels" (-labels)`) {
		t.Errorf("the note should say the labels field was left out as -labels', as a CSV's does:\n%s", stderr.String())
	}
	user45Same(t, "emb.jsonl", filepath.Join(dir, "matrix"), filepath.Join(dir, "jsonl"))
}

// TestUser45CSVFloatMultiHotLists: pandas' to_csv of a BCE target kept as
// a column of float lists writes "[0.0, 1.0, 0.0, 0.0]". The same rows as
// a JSON-lines field are read as the multi-hot matrix (your-data.md:
// "0.0/1.0, as a BCE target is written"); in a CSV column every such
// value is taken as one name, so each combination of labels becomes a
// class of its own and the bundles are written (with a warning that
// advises giving "a multi-hot (n, C) matrix of 0s and 1s" — which this
// is). Either read it as the matrix, or refuse it.
func TestUser45CSVFloatMultiHotLists(t *testing.T) {
	dir := t.TempDir()
	const n, d, c = 600, 6, 3 // every combination of labels on 16 rows or more, so that no class is too small to split
	_, m := user45Data(t, dir, n, d, c)
	var b strings.Builder
	b.WriteString(",labels\n")
	for i := range n {
		var row []string
		for j := range c {
			row = append(row, fmt.Sprintf("%.1f", float64(m[i*c+j])))
		}
		fmt.Fprintf(&b, "%d,\"[%s]\"\n", i, strings.Join(row, ", "))
	}
	p := filepath.Join(dir, "labels.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"-embeddings", filepath.Join(dir, "x.npy"), "-k", "3", "-kneg", "5", "-allow-fewer"}
	if err := run(io.Discard, io.Discard, append([]string{"bundle", "-labels", filepath.Join(dir, "m.npy"), "-out", filepath.Join(dir, "matrix")}, common...)); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := run(io.Discard, &stderr, append([]string{"bundle", "-labels", p + ":labels", "-out", filepath.Join(dir, "csv")}, common...))
	if err != nil {
		t.Logf("refused (acceptable): %v", err)
		return
	}
	if man, _ := os.ReadFile(filepath.Join(dir, "csv", "manifest.json")); bytes.Contains(man, []byte(`"[0.0`)) {
		t.Errorf("the float multi-hot lists were read as class names (manifest's label_names hold \"[0.0, …]\"): each combination of labels a class\n%s", stderr.String())
	}
	user45Same(t, "labels.csv:labels", filepath.Join(dir, "matrix"), filepath.Join(dir, "csv"))
}

// TestUser45SavetxtMultiHot: np.savetxt("labels.txt", M) of a multi-hot
// matrix writes "0.000000000000000000e+00 1.000000000000000000e+00 …" a
// row. -labels labels.txt reads each whole line as one name, so each
// combination of labels is a class of its own — silently: no note, no
// warning (the docs promise a warning for lists joined by ",", ";" or
// "|"). The same np.savetxt format is read as columns of numbers for
// -embeddings. Either read it as the matrix, refuse it, or warn.
func TestUser45SavetxtMultiHot(t *testing.T) {
	dir := t.TempDir()
	const n, d, c = 600, 6, 3 // every combination of labels on 16 rows or more
	_, m := user45Data(t, dir, n, d, c)
	var b strings.Builder
	for i := range n {
		var row []string
		for j := range c {
			row = append(row, fmt.Sprintf("%.18e", float64(m[i*c+j])))
		}
		b.WriteString(strings.Join(row, " ") + "\n")
	}
	p := filepath.Join(dir, "labels.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", filepath.Join(dir, "x.npy"), "-labels", p, "-k", "3", "-kneg", "5", "-allow-fewer", "-out", filepath.Join(dir, "txt")})
	if err != nil || strings.Contains(stderr.String(), "WARNING") && strings.Contains(stderr.String(), "multi-hot") {
		t.Logf("refused or warned (acceptable): %v\n%s", err, stderr.String())
		return
	}
	if man, _ := os.ReadFile(filepath.Join(dir, "txt", "manifest.json")); bytes.Contains(man, []byte("e+00 ")) {
		t.Errorf("np.savetxt's multi-hot rows were read as class names, silently (manifest's label_names hold whole lines of numbers)\nstderr:\n%s", stderr.String())
	}
}

// TestUser45TruncatedInputs: an export cut short — a .jsonl whose last
// line is cut, a .jsonl.gz cut mid-stream — is what a killed export or an
// interrupted copy leaves. The cut .jsonl is diagnosed as "an object over
// several lines — a JSON file, not JSON lines", which it is not; the cut
// .gz answers "unexpected EOF" alone, naming neither gzip nor truncation.
func TestUser45TruncatedInputs(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"label": %d, "embedding": [%d.5, 1.25, -0.5]}`+"\n", i%4, i)
	}
	whole := b.String()
	cut := filepath.Join(dir, "emb.jsonl")
	if err := os.WriteFile(cut, []byte(whole[:len(whole)-20]), 0o644); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte(whole))
	w.Close()
	gz := filepath.Join(dir, "emb.jsonl.gz")
	if err := os.WriteFile(gz, z.Bytes()[:z.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", cut, "-labels", cut + ":label", "-k", "3", "-out", filepath.Join(dir, "a")})
	if err == nil || strings.Contains(err.Error(), "over several lines") {
		t.Errorf("a .jsonl whose last line is cut short: %v\nwant: the last line cut short (a truncated file), not a pretty-printed JSON file", err)
	}
	err = run(io.Discard, io.Discard, []string{"bundle", "-embeddings", gz, "-labels", gz + ":label", "-k", "3", "-out", filepath.Join(dir, "b")})
	if msg := fmt.Sprint(err); err == nil || !strings.Contains(msg, "gzip") && !strings.Contains(msg, "truncated") && !strings.Contains(msg, "cut short") {
		t.Errorf("a .jsonl.gz cut short: %v\nwant a message that says the gzip stream ends early (a truncated file)", err)
	}
}
