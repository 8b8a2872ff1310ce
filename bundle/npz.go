package bundle

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/sbinet/npyio/npy"
)

// Array is one NumPy array: float32 or int64, C order.
type Array struct {
	Shape []int
	F32   []float32 // set for float32 arrays
	I64   []int64   // set for int64 arrays
	// Converted says how the file's array was converted on reading
	// ("float64 → float32", "Fortran order → C order", …); empty when it
	// was read as stored.
	Converted string
}

// Len is the number of elements the shape holds.
func (a Array) Len() int {
	n := 1
	for _, s := range a.Shape {
		n *= s
	}
	return n
}

// Float32 returns a float32 array of the given shape (data is not copied).
func Float32(data []float32, shape ...int) Array { return Array{Shape: shape, F32: data} }

// Int64 returns an int64 array of the given shape (data is not copied).
func Int64(data []int64, shape ...int) Array { return Array{Shape: shape, I64: data} }

// DecodeNPY reads one .npy stream named name in errors: little-endian
// float32 ('<f4') and int64 ('<i8') as stored; float64 ('<f8') and float16
// ('<f2') converted to float32, int32 ('<i4') to int64, Fortran order to C
// order, each conversion said in Array.Converted. A float64 value that
// overflows float32, or a nonzero one that float32 rounds to zero, is an
// error naming the element (NaN and ±Inf pass, for the bundle's checks to
// name). maxElems, if positive, caps the number of elements the header may
// announce, checked before anything is allocated — for untrusted input such
// as a request body. A malformed header is an error, never a panic.
func DecodeNPY(r io.Reader, name string, maxElems int) (a Array, err error) {
	return decodeNPY(r, name, maxElems, 0)
}

// DecodeNPYBytes is DecodeNPY on a .npy stream held in memory: the data
// its header announces must also fit in data, checked before anything is
// allocated (a 100-byte request body announcing 600 MB is refused).
func DecodeNPYBytes(data []byte, name string, maxElems int) (Array, error) {
	return decodeNPY(bytes.NewReader(data), name, maxElems, max(int64(len(data)), 1))
}

// itemSize is the bytes per element of each dtype DecodeNPY reads.
var itemSize = map[string]int64{"<f4": 4, "<i8": 8, "<f8": 8, "<f2": 2, "<i4": 4}

// decodeNPY is DecodeNPY with a cap, if maxBytes is positive, on the
// stream's length: the data its header announces must fit in it.
func decodeNPY(r io.Reader, name string, maxElems int, maxBytes int64) (a Array, err error) {
	defer func() {
		if p := recover(); p != nil { // npyio on a malformed header
			a, err = Array{}, fmt.Errorf("array %q: malformed .npy header (%v)", name, p)
		}
	}()
	br := bufio.NewReaderSize(r, 1<<16)
	// npyio allocates the header's announced length before reading it: a
	// 20-byte body announcing 4 GiB would be obeyed. Check it first.
	if head, err := br.Peek(12); err == nil && string(head[:6]) == "\x93NUMPY" {
		hlen := int(binary.LittleEndian.Uint16(head[8:10]))
		if head[6] >= 2 {
			hlen = int(binary.LittleEndian.Uint32(head[8:12]))
		}
		if hlen > maxHeader {
			return Array{}, fmt.Errorf("array %q: .npy header of %d bytes, more than the %d allowed", name, hlen, maxHeader)
		}
	}
	nr, err := npy.NewReader(br)
	if err != nil {
		return Array{}, fmt.Errorf("array %q: %w", name, err)
	}
	h := nr.Header.Descr
	n := 1
	for _, s := range h.Shape {
		if s < 0 || (s > 0 && n > math.MaxInt/8/s) {
			return Array{}, fmt.Errorf("array %q: shape %v is too large", name, h.Shape)
		}
		n *= s
	}
	if maxElems > 0 && n > maxElems {
		return Array{}, fmt.Errorf("array %q: shape %v holds %d values, more than the %d allowed", name, h.Shape, n, maxElems)
	}
	if size, ok := itemSize[h.Type]; ok && maxBytes > 0 && int64(n) > maxBytes/size {
		return Array{}, fmt.Errorf("array %q: shape %v of %s needs %d bytes of data, more than the %d bytes stored", name, h.Shape, h.Type, int64(n)*size, maxBytes)
	}
	a = Array{Shape: slices.Clone(h.Shape)}
	var conv []string
	count := func(got int) error {
		if got != n {
			return fmt.Errorf("holds %d values, its shape %v says %d", got, a.Shape, n)
		}
		return nil
	}
	switch h.Type {
	case "<f4":
		if err = nr.Read(&a.F32); err == nil {
			err = count(len(a.F32))
		}
	case "<i8":
		if err = nr.Read(&a.I64); err == nil {
			err = count(len(a.I64))
		}
	case "<f8":
		var x []float64
		if err = nr.Read(&x); err == nil {
			err = count(len(x))
		}
		if err == nil {
			a.F32, err = narrow(x, a.Shape, h.Fortran)
		}
		conv = append(conv, "float64 → float32")
	case "<f2":
		raw := make([]byte, 2*n)
		if _, err = io.ReadFull(br, raw); err != nil {
			err = fmt.Errorf("holds fewer than the %d values its shape %v says: %w", n, a.Shape, err)
			break
		}
		a.F32 = make([]float32, n)
		for i := range a.F32 {
			a.F32[i] = halfToFloat32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		conv = append(conv, "float16 → float32")
	case "<i4":
		var x []int32
		if err = nr.Read(&x); err == nil {
			err = count(len(x))
		}
		a.I64 = make([]int64, len(x))
		for i, v := range x {
			a.I64[i] = int64(v)
		}
		conv = append(conv, "int32 → int64")
	default:
		return Array{}, fmt.Errorf("array %q: dtype %q is not supported: want float32 ('<f4'), float64 ('<f8'), float16 ('<f2'), int64 ('<i8') or int32 ('<i4'), little-endian", name, h.Type)
	}
	if err != nil {
		return Array{}, fmt.Errorf("array %q: %w", name, err)
	}
	if h.Fortran && len(a.Shape) > 1 {
		if a.F32 != nil {
			a.F32 = cOrder(a.F32, a.Shape)
		} else {
			a.I64 = cOrder(a.I64, a.Shape)
		}
		conv = append(conv, "Fortran order → C order")
	}
	a.Converted = strings.Join(conv, ", ")
	return a, nil
}

// maxHeader caps a .npy header's length (NumPy's are a few hundred bytes).
const maxHeader = 1 << 16

// halfToFloat32 converts an IEEE 754 binary16 value exactly: subnormals
// (exponent 0) are mant·2⁻²⁴, infinities and NaNs keep their payload.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		return math.Float32frombits(sign | math.Float32bits(float32(mant)/(1<<24)))
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}

// narrow converts float64 values to float32, refusing a finite value
// beyond float32's range and a nonzero one that rounds to zero; the error
// names the element by its index in shape (in the file's order).
func narrow(x []float64, shape []int, fortran bool) ([]float32, error) {
	out := make([]float32, len(x))
	for i, v := range x {
		f := float32(v)
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
		case math.IsInf(float64(f), 0):
			return nil, fmt.Errorf("element %s = %g overflows float32 (largest %g)", index(i, shape, fortran), v, math.MaxFloat32)
		case f == 0 && v != 0:
			return nil, fmt.Errorf("element %s = %g underflows to zero in float32 (smallest %g)", index(i, shape, fortran), v, math.SmallestNonzeroFloat32)
		}
		out[i] = f
	}
	return out, nil
}

// index writes the flat position i of an array of shape as [i0][i1]…, in C
// order or, for a Fortran-order file, Fortran order.
func index(i int, shape []int, fortran bool) string {
	if len(shape) == 0 {
		return "(the scalar)"
	}
	idx := make([]string, len(shape))
	for k := range shape {
		s := len(shape) - 1 - k // C order: the last axis varies fastest
		if fortran {
			s = k
		}
		idx[s] = fmt.Sprintf("[%d]", i%shape[s])
		i /= shape[s]
	}
	return strings.Join(idx, "")
}

// cOrder returns the C-order copy of x, stored in Fortran order with shape.
func cOrder[T any](x []T, shape []int) []T {
	out := make([]T, len(x))
	// Fortran strides: the first axis varies fastest.
	fs := make([]int, len(shape))
	st := 1
	for k, s := range shape {
		fs[k] = st
		st *= s
	}
	idx := make([]int, len(shape))
	for c := range out {
		f := 0
		for k, v := range idx {
			f += v * fs[k]
		}
		out[c] = x[f]
		for k := len(shape) - 1; k >= 0; k-- { // the next C index
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out
}

// ReadNPY reads a single .npy file. The data its header announces must fit
// in the file (a regular one): a header claiming more is refused before any
// allocation.
func ReadNPY(path string) (Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return Array{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Array{}, err
	}
	limit := int64(0) // a pipe's length is unknown: no cap
	if fi.Mode().IsRegular() {
		limit = max(fi.Size(), 1)
	}
	a, err := decodeNPY(f, strings.TrimSuffix(filepath.Base(path), ".npy"), 0, limit)
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

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
		a, err := decodeNPY(rc, name, 0, max(int64(u), 1))
		rc.Close()
		if err != nil {
			return nil, err
		}
		out[name] = a
	}
	return out, nil
}

// WriteNPY writes one array to path atomically (a temporary file, then rename).
func WriteNPY(path string, a Array) error {
	return atomicfile.Write(path, func(w io.Writer) error { return writeArray(w, a) })
}

// WriteNPZ writes arrays to an uncompressed .npz archive at path atomically,
// entries named NAME.npy, stored (not deflated) in sorted order, as
// numpy.savez does.
func WriteNPZ(path string, arrays map[string]Array) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		names := make([]string, 0, len(arrays))
		for k := range arrays {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			ew, err := zw.CreateHeader(&zip.FileHeader{Name: k + ".npy", Method: zip.Store})
			if err != nil {
				return err
			}
			if err := writeArray(ew, arrays[k]); err != nil {
				return fmt.Errorf("array %q: %w", k, err)
			}
		}
		return zw.Close()
	})
}

// writeArray writes a .npy v1.0 stream. npyio (v0.9.0) takes an array's
// shape from its Go type, so it cannot write an n-D array held in a flat
// slice; the header is written here by the format's specification (magic,
// version, little-endian header length, a Python dict literal padded with
// spaces to a multiple of 64 bytes and ended by a newline) and read back by
// npyio and NumPy in the tests.
func writeArray(w io.Writer, a Array) error {
	var descr string
	var n int
	switch {
	case a.F32 != nil && a.I64 == nil:
		descr, n = "<f4", len(a.F32)
	case a.I64 != nil && a.F32 == nil:
		descr, n = "<i8", len(a.I64)
	default:
		return fmt.Errorf("array must hold exactly one of float32 or int64 data")
	}
	if n != a.Len() || len(a.Shape) == 0 {
		return fmt.Errorf("%d values do not fill shape %v", n, a.Shape)
	}
	dims := make([]string, len(a.Shape))
	for i, s := range a.Shape {
		dims[i] = strconv.Itoa(s)
	}
	shape := "(" + strings.Join(dims, ", ") + ")"
	if len(dims) == 1 {
		shape = "(" + dims[0] + ",)"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	const pre = 10 // magic (6) + version (2) + header length (2)
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hdr := make([]byte, 0, total)
	hdr = append(hdr, "\x93NUMPY\x01\x00"...)
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(total-pre))
	hdr = append(hdr, dict...)
	for len(hdr) < total-1 {
		hdr = append(hdr, ' ')
	}
	hdr = append(hdr, '\n')
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<15)
	flush := func() error {
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	for i := range n {
		if a.F32 != nil {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(a.F32[i]))
		} else {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(a.I64[i]))
		}
		if len(buf) >= cap(buf)-8 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// Read reads and validates a bundle .npz file. Errors name the file and the
// array.
func Read(path string) (*Bundle, error) {
	arrays, err := ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	b, err := FromArrays(arrays)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// ReadFeatures reads a file of embeddings that needs no positives: a
// bundle, or features alone — "anchors" (or "embeddings") (n, d) float32
// with optional "labels", "index", "logits" and "activations" (K = 0). It
// is what the OOD detectors read (training features, in-distribution and
// OOD samples). Errors name the file and the array.
func ReadFeatures(path string) (*Bundle, error) {
	arrays, err := ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	if _, ok := arrays["anchors"]; !ok {
		if e, ok := arrays["embeddings"]; ok {
			arrays["anchors"] = e
			delete(arrays, "embeddings")
		}
	}
	b, err := fromArrays(arrays, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// FromArrays builds and validates a bundle from named arrays.
func FromArrays(arrays map[string]Array) (*Bundle, error) { return fromArrays(arrays, true) }

// fromArrays is FromArrays; without needPositives "positives" may be
// missing (features alone).
func fromArrays(arrays map[string]Array, needPositives bool) (*Bundle, error) {
	get := func(name string, i64 bool, ndim int) (Array, bool, error) {
		a, ok := arrays[name]
		if !ok {
			return a, false, nil
		}
		if i64 && a.I64 == nil {
			return a, true, fmt.Errorf("array %q: dtype float32, want int64", name)
		}
		if !i64 && a.F32 == nil {
			return a, true, fmt.Errorf("array %q: dtype int64, want float32", name)
		}
		if len(a.Shape) != ndim {
			return a, true, fmt.Errorf("array %q: shape %v has %d dimensions, want %d", name, a.Shape, len(a.Shape), ndim)
		}
		return a, true, nil
	}
	anchors, ok, err := get("anchors", false, 2)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("array \"anchors\" is missing")
	}
	pos, ok, err := get("positives", false, 3)
	if err != nil {
		return nil, err
	}
	if !ok && needPositives {
		return nil, fmt.Errorf("array \"positives\" is missing")
	}
	b := &Bundle{N: anchors.Shape[0], D: anchors.Shape[1], Anchors: anchors.F32}
	for _, name := range slices.Sorted(maps.Keys(arrays)) {
		if c := arrays[name].Converted; c != "" {
			b.Converted = append(b.Converted, name+": "+c)
		}
	}
	if ok {
		b.K, b.Positives = pos.Shape[1], pos.F32
		if pos.Shape[0] != b.N || pos.Shape[2] != b.D {
			return nil, fmt.Errorf("array \"positives\": shape %v, want (%d, k, %d) to match anchors %v", pos.Shape, b.N, b.D, anchors.Shape)
		}
	}
	neg, hasNeg, err := get("negatives", false, 3)
	if err != nil {
		return nil, err
	}
	idx, hasIdx, err := get("negative_index", true, 2)
	if err != nil {
		return nil, err
	}
	pool, hasPool, err := get("negative_pool", false, 2)
	if err != nil {
		return nil, err
	}
	switch {
	case hasNeg && hasIdx:
		return nil, fmt.Errorf("both \"negatives\" and \"negative_index\" are present; give one")
	case hasNeg:
		if neg.Shape[0] != b.N || neg.Shape[2] != b.D {
			return nil, fmt.Errorf("array \"negatives\": shape %v, want (%d, kn, %d) to match anchors %v", neg.Shape, b.N, b.D, anchors.Shape)
		}
		b.KNeg, b.Negatives = neg.Shape[1], neg.F32
	case hasIdx:
		if idx.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"negative_index\": shape %v, want (%d, kn) to match anchors %v", idx.Shape, b.N, anchors.Shape)
		}
		b.KNeg, b.NegativeIndex = idx.Shape[1], idx.I64
		if hasPool {
			if pool.Shape[1] != b.D {
				return nil, fmt.Errorf("array \"negative_pool\": shape %v, want (m, %d)", pool.Shape, b.D)
			}
			b.Pool = pool.F32
		}
	case hasPool:
		return nil, fmt.Errorf("array \"negative_pool\" is present without \"negative_index\"")
	}
	if a, ok, err := get("labels", true, 1); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"labels\": shape %v, want (%d,)", a.Shape, b.N)
		}
		b.Labels = a.I64
	}
	if a, ok, err := get("index", true, 1); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"index\": shape %v, want (%d,)", a.Shape, b.N)
		}
		b.Index = a.I64
	}
	if a, ok, err := get("logits", false, 2); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"logits\": shape %v, want (%d, C)", a.Shape, b.N)
		}
		b.C, b.Logits = a.Shape[1], a.F32
	}
	if a, ok, err := get("activations", false, 2); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"activations\": shape %v, want (%d, L)", a.Shape, b.N)
		}
		b.A, b.Activations = a.Shape[1], a.F32
	}
	if err := b.validate(needPositives); err != nil {
		return nil, err
	}
	return b, nil
}

// Arrays returns the bundle's named arrays, as Write stores them.
func (b *Bundle) Arrays() map[string]Array {
	m := map[string]Array{
		"anchors":   Float32(b.Anchors, b.N, b.D),
		"positives": Float32(b.Positives, b.N, b.K, b.D),
	}
	if b.Negatives != nil {
		m["negatives"] = Float32(b.Negatives, b.N, b.KNeg, b.D)
	}
	if b.NegativeIndex != nil {
		m["negative_index"] = Int64(b.NegativeIndex, b.N, b.KNeg)
		if b.Pool != nil {
			m["negative_pool"] = Float32(b.Pool, len(b.Pool)/b.D, b.D)
		}
	}
	if b.Labels != nil {
		m["labels"] = Int64(b.Labels, b.N)
	}
	if b.Logits != nil {
		m["logits"] = Float32(b.Logits, b.N, b.C)
	}
	if b.Activations != nil {
		m["activations"] = Float32(b.Activations, b.N, b.A)
	}
	if b.Index != nil {
		m["index"] = Int64(b.Index, b.N)
	}
	return m
}

// Write validates b and writes it to path as an .npz archive, atomically.
func Write(path string, b *Bundle) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteNPZ(path, b.Arrays())
}
