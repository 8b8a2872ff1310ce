package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ccsets/ccs/internal/atomicfile"
)

// Staging writes a bundling's files into a directory as one: each split's
// .npz under a temporary name first (NPZ), then at Commit all of them
// renamed into place, an earlier run's splits that this one did not make
// removed (RemoveStale), and the manifest last. A run that fails or is
// interrupted before Commit (Abort removes what it staged) leaves the
// directory's earlier bundling whole, where writing each file in turn left
// the new fit.npz beside the old cal.npz and the old manifest.
type Staging struct {
	dir    string
	names  []string
	staged []*atomicfile.Staged
	// made is the directory NewStaging made (dir, or one above it),
	// removed by an Abort before Commit where it is still empty: an
	// interrupted first bundling leaves no empty directory behind.
	made      string
	committed bool
}

// NewStaging makes dir if need be and returns a Staging for it.
func NewStaging(dir string) (*Staging, error) {
	made := ""
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			break
		}
		made = d // the topmost directory that is not there yet
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Staging{dir: dir, made: made}, nil
}

// NPZ stages arrays as the split name's file, DIR/NAME.npz (WriteNPZ's
// archive), and returns its path.
func (s *Staging) NPZ(name string, arrays map[string]Array) (string, error) {
	path := filepath.Join(s.dir, name+".npz")
	f, err := atomicfile.Stage(path, func(w io.Writer) error { return writeNPZ(w, arrays) })
	if err != nil {
		return "", err
	}
	s.names, s.staged = append(s.names, name), append(s.staged, f)
	return path, nil
}

// Commit stages m as DIR/manifest.json, then puts every staged file in
// place, removes the earlier run's splits this one did not make (their
// paths returned) and puts the manifest in place; it returns the
// manifest's path.
func (s *Staging) Commit(m *Manifest) (removed []string, manifest string, err error) {
	manifest = filepath.Join(s.dir, "manifest.json")
	mf, err := atomicfile.Stage(manifest, func(w io.Writer) error { return encodeManifest(w, m) })
	if err != nil {
		return nil, "", err
	}
	defer mf.Abort()
	for i, f := range s.staged {
		if err := f.Commit(); err != nil {
			return nil, "", err
		}
		s.staged[i] = nil
	}
	if removed, err = RemoveStale(s.dir, s.names); err != nil {
		return removed, "", err
	}
	s.committed = true // some files are in place: the directory stays
	if err := mf.Commit(); err != nil {
		return removed, "", fmt.Errorf("bundle: %w", err)
	}
	return removed, manifest, nil
}

// Abort removes the files staged and not yet put in place (after Commit,
// none): the directory keeps what it held before, and one NewStaging made
// is removed again, with those it made below it, where they are empty.
func (s *Staging) Abort() {
	for _, f := range s.staged {
		if f != nil {
			f.Abort()
		}
	}
	if s.made == "" || s.committed {
		return
	}
	for d := filepath.Clean(s.dir); ; d = filepath.Dir(d) {
		if os.Remove(d) != nil || d == s.made { // not empty: kept
			return
		}
	}
}

// encodeManifest writes m as manifest.json holds it.
func encodeManifest(w io.Writer, m *Manifest) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a dtype "<f8" as NumPy writes it, not "\u003cf8"
	return enc.Encode(m)
}
