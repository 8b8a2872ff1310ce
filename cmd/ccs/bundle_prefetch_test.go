package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleLabelsReadAlongside: the labels, read while the embeddings
// are, are refused as they were read after them: where both files are
// bad the embeddings' error is the one said, whichever read ends first
// (the labels' here, a short file beside a long one), every time.
func TestBundleLabelsReadAlongside(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var emb strings.Builder
	emb.WriteString("x,y\n")
	for i := range 20000 {
		if i == 19990 {
			emb.WriteString("1.5,oops\n")
			continue
		}
		emb.WriteString("0.25,-1.5\n")
	}
	files := map[string]string{
		"emb.csv":  emb.String(),
		"good.csv": strings.Replace(emb.String(), "1.5,oops", "1.5,2", 1),
		"lab.txt":  "a\n",
	}
	for name, text := range files {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("emb.csv"), "-labels", p("lab.txt"), "-out", p("out")})
		if err == nil || !strings.Contains(err.Error(), "emb.csv") || !strings.Contains(err.Error(), "oops") {
			t.Fatalf("both bad: %v; want the embeddings' error", err)
		}
	}
	err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("good.csv"), "-labels", p("lab.txt"), "-out", p("out")})
	if err == nil || !strings.Contains(err.Error(), "lab.txt: 1 labels for the 20000 rows") {
		t.Errorf("labels bad: %v; want the labels' count refused", err)
	}
}

// gzipped is text gzip-compressed, for files cut short in the tests.
func gzipped(text string) []byte {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(text))
	z.Close()
	return b.Bytes()
}

// TestBundleJSONLLabelsSkimmed: -labels of the embeddings' own JSON
// lines skims each line (its embedding passed over, the embeddings'
// reader checking it): the bundles are those of the same labels in a
// file of their own, byte for byte; and a line whose embedding is no
// JSON is refused at its line, as the embeddings' error.
func TestBundleJSONLLabelsSkimmed(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var both, labels strings.Builder
	for i := range 3000 {
		lab := []string{`"cat"`, `"dog"`, `"cat", "ox"`, `"ox"`}[i%4]
		fmt.Fprintf(&both, `{"id": %d, "embedding": [%g, %g, -0.5], "labels": [%s], "tags": [1, 2]}`+"\n", i, float64(i%7)/7, float64(i%4), lab)
		fmt.Fprintf(&labels, `{"labels": [%s]}`+"\n", lab)
	}
	bad := strings.Replace(both.String(), `{"id": 2500, "embedding": [`, `{"id": 2500, "embedding": [0.5 0.25, `, 1)
	for name, text := range map[string]string{"both.jsonl": both.String(), "labels.jsonl": labels.String(), "bad.jsonl": bad} {
		if err := os.WriteFile(p(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ out, labels string }{{"own", p("both.jsonl")}, {"apart", p("labels.jsonl")}} {
		if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("both.jsonl") + ":embedding", "-labels", c.labels, "-k", "3", "-out", p(c.out)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, split := range []string{"fit", "val", "cal", "test"} {
		a, _ := os.ReadFile(filepath.Join(p("own"), split+".npz"))
		b, err := os.ReadFile(filepath.Join(p("apart"), split+".npz"))
		if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s.npz: the labels of the embeddings' file differ from the same in a file of their own (%v)", split, err)
		}
	}
	for range 3 {
		err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p("bad.jsonl") + ":embedding", "-labels", p("bad.jsonl"), "-k", "3", "-out", p("bad")})
		if err == nil || !strings.Contains(err.Error(), "bad.jsonl:2501: not a JSON object") {
			t.Fatalf("a line whose embedding is no JSON: %v", err)
		}
	}
}
