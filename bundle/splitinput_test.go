package bundle

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSplitInput: FILE:NAME is split at the last colon where the part
// before it is a file that exists or has the extension of a file of
// several arrays or columns (so a missing one is said to be missing);
// any other colon is the file's own.
func TestSplitInput(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"emb.npy", "a:b.npy"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ds := filepath.Join(dir, "ds") // a Hugging Face dataset's directory
	if err := os.Mkdir(ds, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ds, "state.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := func(s string) string { return filepath.Join(dir, s) }
	for _, c := range []struct{ arg, path, name string }{
		{in("emb.npy"), in("emb.npy"), ""},
		{in("emb.npy:x"), in("emb.npy"), "x"},             // exists: split, its reader refuses the name
		{in("none.npy:x"), in("none.npy:x"), ""},          // missing, of one array: a file of that name
		{in("none.npz:emb"), in("none.npz"), "emb"},       // missing archive: said to be missing
		{in("n.SAFETENSORS:t"), in("n.SAFETENSORS"), "t"}, // extensions of any case
		{in("l.csv:label"), in("l.csv"), "label"},
		{in("l.tsv:label"), in("l.tsv"), "label"},
		{in("q.parquet:QQ,RR,SS"), in("q.parquet"), "QQ,RR,SS"},
		{in("q.arrow:c"), in("q.arrow"), "c"},
		{in("q.feather:c"), in("q.feather"), "c"},
		{ds + ":labels", ds, "labels"},
		{in("a:b.npy"), in("a:b.npy"), ""},         // a colon of the file's own name
		{`C:\data\emb.npy`, `C:\data\emb.npy`, ""}, // a Windows drive
		{":emb", ":emb", ""},
		{"", "", ""},
	} {
		if path, name := SplitInput(c.arg); path != c.path || name != c.name {
			t.Errorf("SplitInput(%q) = %q, %q, want %q, %q", c.arg, path, name, c.path, c.name)
		}
	}
}
