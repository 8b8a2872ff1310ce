package main

import (
	"bytes"
	"compress/gzip"
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
