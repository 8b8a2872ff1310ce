package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaging: files staged and aborted leave the directory as it was,
// with no temporary file; committed, they are in place with the
// manifest, and an earlier run's split this one did not make is gone.
func TestStaging(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	old := map[string]Array{"anchors": Float32([]float32{1, 2}, 1, 2)}
	for _, name := range []string{"fit", "ood"} {
		if err := WriteNPZ(p(name+".npz"), old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := WriteManifest(dir, &Manifest{Command: "old"}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	oldFit, oldManifest := read("fit.npz"), read("manifest.json")
	noTemps := func(when string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".ccs-tmp-") {
				t.Errorf("%s: %s left", when, e.Name())
			}
		}
	}
	newer := map[string]Array{"anchors": Float32([]float32{3, 4, 5, 6}, 2, 2)}

	s, err := NewStaging(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fit", "cal"} {
		if _, err := s.NPZ(name, newer); err != nil {
			t.Fatal(err)
		}
	}
	s.Abort()
	if !bytes.Equal(read("fit.npz"), oldFit) || !bytes.Equal(read("manifest.json"), oldManifest) {
		t.Error("aborted: the earlier files changed")
	}
	if _, err := os.Stat(p("cal.npz")); !os.IsNotExist(err) {
		t.Errorf("aborted: cal.npz is there (%v)", err)
	}
	noTemps("aborted")

	s, _ = NewStaging(dir)
	for _, name := range []string{"fit", "cal"} {
		if _, err := s.NPZ(name, newer); err != nil {
			t.Fatal(err)
		}
	}
	removed, manifest, err := s.Commit(&Manifest{Command: "new"})
	if err != nil {
		t.Fatal(err)
	}
	if manifest != p("manifest.json") || len(removed) != 1 || removed[0] != p("ood.npz") {
		t.Errorf("committed: manifest %s, removed %v", manifest, removed)
	}
	for _, name := range []string{"fit", "cal"} {
		a, err := ReadNPZ(p(name + ".npz"))
		if err != nil || len(a["anchors"].F32) != 4 {
			t.Errorf("committed: %s.npz is not the new one (%v)", name, err)
		}
	}
	if !bytes.Contains(read("manifest.json"), []byte(`"new"`)) {
		t.Errorf("committed: the manifest is not the new one:\n%s", read("manifest.json"))
	}
	s.Abort() // after Commit: nothing left to remove
	noTemps("committed")
	if _, err := os.Stat(p("fit.npz")); err != nil {
		t.Errorf("Abort after Commit removed fit.npz (%v)", err)
	}
}

// TestStagingMadeDirectory: an aborted first bundling into a directory
// that was not there (two levels of it) leaves none behind; one into a
// directory that was there keeps it; a committed one keeps what it made.
func TestStagingMadeDirectory(t *testing.T) {
	root := t.TempDir()
	arrays := map[string]Array{"anchors": Float32([]float32{1, 2}, 1, 2)}
	out := filepath.Join(root, "new", "bundles")
	s, err := NewStaging(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NPZ("fit", arrays); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("aborted: %s/new left (%v)", root, err)
	}
	if s, err = NewStaging(root); err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if _, err := os.Stat(root); err != nil {
		t.Errorf("aborted into a directory that was there: %v", err)
	}
	if s, err = NewStaging(out); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NPZ("fit", arrays); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Commit(&Manifest{Command: "new"}); err != nil {
		t.Fatal(err)
	}
	s.Abort() // deferred after a Commit, as callers do
	if _, err := os.Stat(filepath.Join(out, "fit.npz")); err != nil {
		t.Errorf("committed, then Abort: %v", err)
	}
}
