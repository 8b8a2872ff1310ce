package bundle

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ccsets/ccs/internal/atomicfile"
)

// maxDeflateRatio bounds how much a deflated member can expand: deflate's
// best is 1032:1, so a member whose directory claims more is not deflate's
// output but a zip bomb's lie, refused before its data is read.
const maxDeflateRatio = 1032

// ReadNPZ reads every array of a .npz archive (as numpy.savez or
// numpy.savez_compressed write it), keyed by name without ".npy". Each
// member's array must fit in the uncompressed size the archive's directory
// gives it (archive/zip checks that the member holds exactly that), and a
// deflated member may claim at most deflate's largest ratio: what a file
// can make us allocate is bounded by its size, checked before allocation.
func ReadNPZ(path string) (map[string]Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	out, err := readNPZ(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// readNPZ is ReadNPZ on an archive of size bytes. archive/zip believes the
// sizes the archive's directory gives; they are checked here first: a
// member's compressed size within the archive, a stored member's two sizes
// equal, a deflated one's ratio within deflate's, and all members'
// uncompressed sizes together within deflate's ratio of the archive (its
// entries may share data). Only then is a member's array allocated, and
// its data must fit in its member's size.
func readNPZ(r io.ReaderAt, size int64) (map[string]Array, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("not a NumPy .npz archive: %w", err)
	}
	out := make(map[string]Array)
	var total uint64
	limit := maxDeflateRatio*uint64(size) + 1024*uint64(len(zr.File))
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("array %q appears twice in the archive", name)
		}
		c, u := f.CompressedSize64, f.UncompressedSize64
		if c > uint64(size) {
			return nil, fmt.Errorf("array %q: member claims %d compressed bytes, the archive has %d", name, c, size)
		}
		switch f.Method {
		case zip.Store:
			if u != c {
				return nil, fmt.Errorf("array %q: stored member claims %d bytes from %d", name, u, c)
			}
		case zip.Deflate:
			if u > 1024 && (u-1024)/maxDeflateRatio > c {
				return nil, fmt.Errorf("array %q: member claims %d bytes from %d compressed, beyond deflate's %d:1", name, u, c, maxDeflateRatio)
			}
		default:
			return nil, fmt.Errorf("array %q: compression method %d, want stored (0) or deflated (8)", name, f.Method)
		}
		if total += u; total > limit {
			return nil, fmt.Errorf("array %q: the members claim %d bytes in all, beyond deflate's %d:1 of the %d-byte archive", name, total, maxDeflateRatio, size)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("array %q: %w", name, err)
		}
		a, err := decodeNPY(rc, name, 0, max(int64(u), 1), true)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out[name] = a
	}
	return out, nil
}

// WriteNPZ writes arrays to an uncompressed .npz archive at path atomically,
// entries named NAME.npy, stored (not deflated) in sorted order, as
// numpy.savez does.
func WriteNPZ(path string, arrays map[string]Array) error {
	return atomicfile.Write(path, func(w io.Writer) error { return writeNPZ(w, arrays) })
}

// EncodeNPZ writes the .npz archive WriteNPZ writes of arrays into memory
// alloc gives it, sized to the archive exactly (counted first, without a
// copy): a Python bundle's pickle, into memory C allocates.
func EncodeNPZ(arrays map[string]Array, alloc func(n int) []byte) ([]byte, error) {
	var count countWriter
	if err := writeNPZ(&count, arrays); err != nil {
		return nil, err
	}
	out := alloc(int(count))
	w := fixedWriter{buf: out[:0:len(out)]}
	if err := writeNPZ(&w, arrays); err != nil {
		return nil, err
	}
	if len(w.buf) != len(out) {
		return nil, fmt.Errorf("npz: %d bytes written of the %d counted", len(w.buf), len(out))
	}
	return out, nil
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// fixedWriter appends to buf within its capacity, refusing more.
type fixedWriter struct{ buf []byte }

func (f *fixedWriter) Write(p []byte) (int, error) {
	if len(f.buf)+len(p) > cap(f.buf) {
		return 0, fmt.Errorf("npz: more bytes than counted")
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

// DecodeNPZ reads the arrays of an .npz archive in memory, as ReadNPZ
// reads a file's.
func DecodeNPZ(data []byte) (map[string]Array, error) {
	return readNPZ(bytes.NewReader(data), int64(len(data)))
}

// writeNPZ writes arrays to w as WriteNPZ's archive.
func writeNPZ(w io.Writer, arrays map[string]Array) error {
	zw := zip.NewWriter(w)
	for _, k := range slices.Sorted(maps.Keys(arrays)) {
		ew, err := zw.CreateHeader(&zip.FileHeader{Name: k + ".npy", Method: zip.Store})
		if err != nil {
			return err
		}
		if err := writeArray(ew, arrays[k]); err != nil {
			return fmt.Errorf("array %q: %w", k, err)
		}
	}
	return zw.Close()
}
