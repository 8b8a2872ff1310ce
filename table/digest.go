package table

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A Digest is the SHA-256 of an input, as a bundle's manifest records
// it: of a file, or of a dataset's directory (DatasetFiles: a Hugging
// Face dataset's, a directory of Parquet parts) as its files — the
// SHA-256 of a line "NAME SHA-256" for each, in their order, NAME its
// path in the directory (train/state.json in a DatasetDict's). It keeps
// each file's state when hashing began, for Unchanged.
type Digest struct {
	// Sum is the hex SHA-256.
	Sum   string
	files []string
	infos []os.FileInfo
}

// NewDigest hashes the file, or dataset directory, at path; cancelling
// ctx stops it.
func NewDigest(ctx context.Context, path string) (*Digest, error) {
	d := &Digest{files: []string{path}}
	dir := false
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if d.files, err = DatasetFiles(path); err != nil {
			return nil, err
		}
		dir = true
	}
	var lines strings.Builder
	for _, f := range d.files {
		sum, info, err := hashOne(ctx, f)
		if err != nil {
			return nil, err
		}
		d.infos = append(d.infos, info)
		d.Sum = sum
		name := filepath.Base(f)
		if dir { // a DatasetDict's files are in its splits' directories
			if name, err = filepath.Rel(path, f); err != nil {
				return nil, err
			}
			name = filepath.ToSlash(name)
		}
		fmt.Fprintf(&lines, "%s %s\n", name, sum)
	}
	if dir {
		s := sha256.Sum256([]byte(lines.String()))
		d.Sum = hex.EncodeToString(s[:])
	}
	return d, nil
}

// hashOne is one file's SHA-256 and its state when hashing began.
func hashOne(ctx context.Context, path string) (string, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	sum := sha256.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", nil, err
		}
		n, err := f.Read(buf)
		sum.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return hex.EncodeToString(sum.Sum(nil)), info, nil
}

// Unchanged returns an error where a file's size or modification time
// changed since hashing began, for then the hash may not be of the
// values reader (the command or function that read them: "ccs bundle")
// read.
func (d *Digest) Unchanged(reader string) error {
	for i, f := range d.files {
		now, err := os.Stat(f)
		if err != nil {
			return err
		}
		if was := d.infos[i]; now.Size() != was.Size() || !now.ModTime().Equal(was.ModTime()) {
			return fmt.Errorf("%s: changed while %s read it (%d bytes, modified %s; now %d bytes, modified %s): its SHA-256 would not be of the values read",
				f, reader, was.Size(), was.ModTime().Format(time.RFC3339Nano), now.Size(), now.ModTime().Format(time.RFC3339Nano))
		}
	}
	return nil
}
