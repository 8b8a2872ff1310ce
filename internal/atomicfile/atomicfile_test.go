package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Errorf("a failed write changed the file to %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files in the directory, want 1 (no temporary file left)", len(entries))
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

// TestSweep: a dead writer's stale temporary file is removed by the first
// write into its directory; a live writer's (here the test's parent), a
// fresh one, and other files are kept.
func TestSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "set[1].json")
	// A PID that is not running: past the kernel's largest.
	dead := filepath.Join(dir, ".set[1].json.ccs-tmp-4194999-123")
	fresh := filepath.Join(dir, ".other.json.ccs-tmp-4194999-789")
	live := filepath.Join(dir, ".set[1].json.ccs-tmp-"+strconv.Itoa(os.Getppid())+"-456")
	plain := filepath.Join(dir, ".notes.tmp-2024-01")   // a user's file, not ours
	odd := filepath.Join(dir, ".x.ccs-tmp-4194999-abc") // not os.CreateTemp's digits
	old := time.Now().Add(-2 * StaleAge)
	for _, p := range []string{dead, fresh, live, plain, odd} {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
		if p != fresh {
			os.Chtimes(p, old, old)
		}
	}
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{dead: false, fresh: true, live: true, plain: true, odd: true, path: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

// TestWriteErrorsNamePath: a write that cannot happen says so of the path
// asked for, never of the temporary file, and leaves nothing behind.
func TestWriteErrorsNamePath(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "x.json"), filepath.Join(dir, "missing", "x.json") + ": no such directory " + filepath.Join(dir, "missing") + " (create it first)"},
		{dir, dir + ": is a directory"},
	} {
		err := Write(c.path, write)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), tmpMark) || strings.Contains(c.want, "missing") && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Write(%s): %v, want %q…", c.path, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries in %s", len(entries), dir)
	}
}
