package bundle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ccsets/ccs/internal/atomicfile"
)

// Array is one NumPy array, held as float32, int64 or strings in C order
// whatever the file stored.
type Array struct {
	Shape []int
	F32   []float32 // set for floating-point arrays
	I64   []int64   // set for integer arrays
	Str   []string  // set for string arrays (NumPy's '<U…' and '|S…')
	// Dtype is the file's data type as NumPy names it ("float64",
	// "int32", …); empty for an array made in memory.
	Dtype string
	// Converted says how the file's array was converted on reading
	// ("float64 → float32", "Fortran order → C order", …); empty when it
	// was read as stored.
	Converted string
	// Rows, for an array to be written, are the rows of F32 (rows of
	// Shape[1] values) the array holds, gathered as it is written; nil:
	// F32 itself. A split of a large file is written without a copy.
	Rows []int
}

// Gathered is the float32 array of the rows of src (rows of d) listed in
// rows, gathered when written (Array.Rows).
func Gathered(src []float32, d int, rows []int) Array {
	return Array{Shape: []int{len(rows), d}, F32: src, Rows: rows}
}

// Len is the number of elements the shape holds.
func (a Array) Len() int {
	n := 1
	for _, s := range a.Shape {
		n *= s
	}
	return n
}

// Kind is the array's data type for messages: the file's dtype when it
// was read from one ("float64"), else "float32" or "int64".
func (a Array) Kind() string {
	switch {
	case a.Dtype != "":
		return a.Dtype
	case a.I64 != nil:
		return "int64"
	case a.Str != nil:
		return "string"
	}
	return "float32"
}

// Float32 returns a float32 array of the given shape (data is not copied).
func Float32(data []float32, shape ...int) Array { return Array{Shape: shape, F32: data} }

// Int64 returns an int64 array of the given shape (data is not copied).
func Int64(data []int64, shape ...int) Array { return Array{Shape: shape, I64: data} }

// DecodeNPY reads one .npy stream named name in errors. Floating-point
// data (float16, float32, float64) is read as float32 and integer data
// (int8 to int64, uint8 to uint64) as int64, in either byte order; Fortran
// order becomes C order. Each conversion is said in Array.Converted. A
// float64 value that overflows float32, or a nonzero one that float32
// rounds to zero, is an error naming the element (NaN and ±Inf pass, for
// the bundle's checks to name), as is a uint64 beyond int64.
//
// The stream must hold exactly the data its header announces: fewer bytes,
// or bytes after them, are an error (inside an .npz archive, reading to
// the member's end also checks its CRC-32). maxElems, if positive, caps
// the number of elements the header may announce, checked before anything
// is allocated — for untrusted input such as a request body. Memory grows
// with the bytes that arrive, never with what the header announces alone.
// A malformed header is an error, never a panic.
//
// Strings (NumPy's fixed-width '<U…', UTF-32, and '|S…', bytes) are read
// into Array.Str without their trailing NULs, as NumPy gives them; a value
// that is not Unicode (a surrogate or a code point beyond U+10FFFF, bytes
// that are not UTF-8) is an error naming the element. Only labels, group
// ids and ids take strings, and only from files (ReadNPY, ReadNPZ) and
// DecodeRaw: DecodeNPY and DecodeNPYBytes, which read request bodies,
// refuse string dtypes, as every reader of numbers refuses a string array
// by its dtype. Equal strings share their bytes; each element costs a
// string header (16 bytes) beside them.
func DecodeNPY(r io.Reader, name string, maxElems int) (a Array, err error) {
	return decodeNPY(r, name, maxElems, 0, false)
}

// DtypeError is an .npy array's dtype that ccs reads no values of (a
// complex, object or date type): what a caller that takes floats alone
// (a service's body) answers in its own words.
type DtypeError struct {
	Descr string // the header's descr, as NumPy wrote it ('<c8', '|O')
	msg   string
}

func (e *DtypeError) Error() string { return e.msg }

// ElementError is a float64 value of an .npy array that float32 cannot
// hold (Narrow's refusal: beyond its range, or nonzero and rounded to
// zero), named by its place: what a caller that names the element in its
// own words (a service's body[i][j]) reads.
type ElementError struct {
	Index string  // the element, as [i][j] (C order, or the file's Fortran order)
	Value float64 // the value read
	Err   error   // Narrow's
}

func (e *ElementError) Error() string {
	return fmt.Sprintf("element %s = %g %v", e.Index, e.Value, e.Err)
}
func (e *ElementError) Unwrap() error { return e.Err }

// TooLargeError is a .npy header that announces more values than the
// reader's cap (DecodeNPY's maxElems), refused before anything is read:
// its shape tells a caller whether the array has too many rows or another
// shape altogether.
type TooLargeError struct {
	Label  string // the array, as errors name it
	Shape  []int  // as the header announces it
	N, Max int    // its values, and the cap
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: shape %s holds %d values, more than the %d allowed", e.Label, FormatShape(e.Shape), e.N, e.Max)
}

// DecodeNPYBytes is DecodeNPY on a .npy stream held in memory: the data
// its header announces must also fit in data, checked before anything is
// allocated (a 100-byte request body announcing 600 MB is refused).
func DecodeNPYBytes(data []byte, name string, maxElems int) (Array, error) {
	return decodeNPY(bytes.NewReader(data), name, maxElems, max(int64(len(data)), 1), false)
}

// dtype is a .npy data type that DecodeNPY reads.
type dtype struct {
	kind  byte // 'f' floating point, 'i' signed, 'u' unsigned integer
	size  int  // bytes per element
	order binary.ByteOrder
	name  string // NumPy's name: "float64", "uint8", …
}

// parseDtype reads a .npy descr such as '<f8', '>i4' or '|u1'.
func parseDtype(descr string) (dtype, bool) {
	if len(descr) < 3 {
		return dtype{}, false
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch descr[0] {
	case '<', '=': // '=': native, little-endian on every platform ccs builds for
	case '>':
		order = binary.BigEndian
	case '|':
	default:
		return dtype{}, false
	}
	size, err := strconv.Atoi(descr[2:])
	if err != nil {
		return dtype{}, false
	}
	t := dtype{kind: descr[1], size: size, order: order}
	switch {
	case t.kind == 'f' && (size == 2 || size == 4 || size == 8):
		t.name = "float" + strconv.Itoa(8*size)
	case t.kind == 'i' && (size == 1 || size == 2 || size == 4 || size == 8):
		t.name = "int" + strconv.Itoa(8*size)
	case t.kind == 'u' && (size == 1 || size == 2 || size == 4 || size == 8):
		t.name = "uint" + strconv.Itoa(8*size)
	default:
		return dtype{}, false
	}
	if descr[0] == '|' && size != 1 {
		return dtype{}, false
	}
	return t, true
}

// maxStrLen caps a string dtype's width: '<U4096' (16 KiB an element) or
// '|S16384'. Labels are names; a wider dtype is refused before anything
// is read.
const maxStrLen = 1 << 14

// parseStrDtype reads a NumPy string descr: '<U8' (8 UTF-32 code units an
// element, either byte order) or '|S8' (8 bytes). Its name is the descr
// itself, as NumPy prints the dtype.
func parseStrDtype(descr string) (dtype, bool) {
	if len(descr) < 3 {
		return dtype{}, false
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch descr[0] {
	case '<', '=', '|':
	case '>':
		order = binary.BigEndian
	default:
		return dtype{}, false
	}
	n, err := strconv.Atoi(descr[2:])
	if err != nil || n < 1 || strconv.Itoa(n) != descr[2:] {
		return dtype{}, false
	}
	switch descr[1] {
	case 'U':
		if n > maxStrLen/4 || descr[0] == '|' {
			return dtype{}, false
		}
		return dtype{kind: 'U', size: 4 * n, order: order, name: descr}, true
	case 'S':
		if n > maxStrLen {
			return dtype{}, false
		}
		return dtype{kind: 'S', size: n, order: order, name: descr}, true
	}
	return dtype{}, false
}

// StringDtypeSize is the bytes an element of a string dtype ('<U8', '|S8')
// takes, and whether DecodeRaw reads that dtype.
func StringDtypeSize(descr string) (int, bool) {
	t, ok := parseStrDtype(descr)
	return t.size, ok
}

// readValues fills raw, the values done onwards of n, from br; a stream
// that ends first is an error saying how many values it held.
func readValues(br *bufio.Reader, raw []byte, done, n, size int, shape []int) error {
	got, err := io.ReadFull(br, raw)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("holds %d of the %d values its shape %s announces", done+got/size, n, FormatShape(shape))
	}
	return err
}

// readStrings is readData for a string dtype: n elements into a.Str, each
// without its trailing NULs, read a megabyte at a time.
func readStrings(br *bufio.Reader, a *Array, t dtype, n int, sized bool, fortran bool) error {
	per := max(1, (1<<20)/t.size) // elements per read
	buf := make([]byte, min(n, per)*t.size)
	capacity := min(n, per) // grown as the data arrives, unless its length was checked
	if sized {
		capacity = n
	}
	out := make([]string, 0, capacity)
	var sb strings.Builder
	seen := map[string]string{} // labels repeat: one copy of each
	intern := func(s string) string {
		if v, ok := seen[s]; ok {
			return v
		}
		if len(seen) < 1<<16 {
			seen[s] = s
		}
		return s
	}
	for done := 0; done < n; {
		m := min(per, n-done)
		raw := buf[:m*t.size]
		if err := readValues(br, raw, done, n, t.size, a.Shape); err != nil {
			return err
		}
		for e := range m {
			b := raw[e*t.size : (e+1)*t.size]
			if t.kind == 'S' {
				b = bytes.TrimRight(b, "\x00")
				if !utf8.Valid(b) {
					return fmt.Errorf("element %s = %q is not UTF-8", index(done+e, a.Shape, fortran), b)
				}
				out = append(out, intern(string(b)))
				continue
			}
			units := len(b) / 4
			for units > 0 && t.order.Uint32(b[4*(units-1):]) == 0 {
				units--
			}
			sb.Reset()
			for u := range units {
				r := t.order.Uint32(b[4*u:])
				if r > unicode.MaxRune || !utf8.ValidRune(rune(r)) {
					return fmt.Errorf("element %s: code unit %d, %#x, is not a Unicode code point", index(done+e, a.Shape, fortran), u, r)
				}
				sb.WriteRune(rune(r))
			}
			out = append(out, intern(sb.String()))
		}
		done += m
	}
	a.Str = out
	return nil
}

// decodeNPY is DecodeNPY with a cap, if maxBytes is positive, on the
// stream's length: the data its header announces must fit in it, and the
// arrays are then allocated at once; without it they grow as data arrives.
func decodeNPY(r io.Reader, name string, maxElems int, maxBytes int64, strs bool) (Array, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	switch magic, _ := br.Peek(6); {
	case len(magic) == 0:
		return Array{}, fmt.Errorf("array %q: empty: no .npy header (0 bytes)", name)
	case string(magic) != "\x93NUMPY":
		return Array{}, fmt.Errorf("array %q: not an .npy file: it does not begin as one (\\x93NUMPY), but with %q (write it with np.save)", name, magic)
	}
	h, err := readNPYHeader(br, maxBytes)
	if err != nil {
		return Array{}, fmt.Errorf("array %q: %w", name, err)
	}
	return decodeData(br, fmt.Sprintf("array %q", name), nativeDescr(h.descr), h.shape, h.fortran, maxElems, maxBytes, strs)
}

// DecodeRaw decodes an array given as its raw bytes and what a .npy
// header would say of them — NumPy's dtype string (descr, such as '<f8'),
// the shape and whether the order is Fortran's — with DecodeNPY's
// conversions, checks and messages; data must hold exactly the values
// the shape announces. The result holds no reference to data. This is how
// arrays handed over in memory (the C API's) are read.
func DecodeRaw(data []byte, name, descr string, shape []int, fortran bool) (Array, error) {
	return decodeData(bufio.NewReader(bytes.NewReader(data)), fmt.Sprintf("array %q", name), descr, shape, fortran, 0, max(int64(len(data)), 1), true)
}

// decodeData is decodeNPY after the header: the values of dtype descr,
// shape and order read from br, which must end with them; string dtypes
// only with strs. Errors begin with label (`array "x"`).
func decodeData(br *bufio.Reader, label, descr string, shape []int, fortran bool, maxElems int, maxBytes int64, strs bool) (Array, error) {
	t, ok := parseDtype(descr)
	if !ok && strs {
		t, ok = parseStrDtype(descr)
	}
	if !ok && strs && descr == "|b1" {
		// Labels as booleans (y > 0.5; a multi-hot matrix as bool): 0 and 1,
		// one byte each, as uint8.
		t, ok = dtype{kind: 'u', size: 1, name: "bool", order: binary.LittleEndian}, true
	}
	if !ok {
		labels := ""
		if strs {
			labels = ", or strings for labels ('<U…', '|S…')"
		}
		switch {
		case descr == "|O" && len(shape) >= 2: // floats kept as objects: embeddings
			labels += "; '|O' is pickled Python objects: save embeddings as floats (np.save(f, np.asarray(x, dtype=np.float32)))"
		case descr == "|O":
			labels += "; '|O' is pickled Python objects: save string labels as strings (np.save(f, labels.astype(str))), and embeddings as one float array (np.stack(rows).astype(np.float32): rows of unequal lengths cannot be one)"
		}
		return Array{}, &DtypeError{Descr: descr, msg: fmt.Sprintf("%s: dtype %q is not supported: want float16, float32 or float64 ('<f2', '<f4', '<f8'), or an integer type ('<i8', '<i4', '<i2', '|i1', '<u8', … '|u1'), either byte order%s", label, descr, labels)}
	}
	n := 1
	for _, s := range shape {
		if s < 0 {
			return Array{}, fmt.Errorf("%s: shape %s: dimension %d is negative", label, FormatShape(shape), s)
		}
		if s > 0 && n > math.MaxInt/8/s {
			return Array{}, fmt.Errorf("%s: shape %s is too large", label, FormatShape(shape))
		}
		n *= s
	}
	if maxElems > 0 && n > maxElems {
		return Array{}, &TooLargeError{Label: label, Shape: shape, N: n, Max: maxElems}
	}
	if maxBytes > 0 && int64(n) > maxBytes/int64(t.size) {
		return Array{}, fmt.Errorf("%s: shape %s of %s needs %d bytes of data, more than the %d bytes stored", label, FormatShape(shape), t.name, int64(n)*int64(t.size), maxBytes)
	}
	a := Array{Shape: slices.Clone(shape), Dtype: t.name}
	read := readData
	if t.kind == 'U' || t.kind == 'S' {
		read = readStrings
	}
	if err := read(br, &a, t, n, maxBytes > 0, fortran); err != nil {
		return Array{}, fmt.Errorf("%s: %w", label, err)
	}
	// Exactly the announced data: a byte more is a file that lies about its
	// shape. Reading to the end is also what makes an .npz member's reader
	// check the member's CRC-32.
	switch _, err := br.ReadByte(); {
	case err == nil:
		return Array{}, fmt.Errorf("%s: bytes after the %d values its shape %s announces", label, n, FormatShape(a.Shape))
	case errors.Is(err, io.EOF):
	default:
		return Array{}, fmt.Errorf("%s: %w", label, err)
	}
	var conv []string
	switch {
	case t.kind == 'U' || t.kind == 'S':
	case t.kind == 'f' && t.size != 4:
		conv = append(conv, t.name+" → float32")
	case t.kind != 'f' && (t.kind != 'i' || t.size != 8):
		conv = append(conv, t.name+" → int64")
	}
	if t.order == binary.BigEndian && t.size > 1 && t.kind != 'S' {
		conv = append(conv, "big-endian → little-endian")
	}
	if fortran && len(a.Shape) > 1 {
		switch {
		case a.F32 != nil:
			a.F32 = cOrder(a.F32, a.Shape)
		case a.Str != nil:
			a.Str = cOrder(a.Str, a.Shape)
		default:
			a.I64 = cOrder(a.I64, a.Shape)
		}
		conv = append(conv, "Fortran order → C order")
	}
	a.Converted = strings.Join(conv, ", ")
	return a, nil
}

// readData reads n elements of type t from br into a.F32 (floating point)
// or a.I64 (integers), converting each. With sized, the stream's length
// was checked to hold them and the array is allocated at once; else it
// grows with the bytes that arrive (a pipe announcing terabytes costs only
// what it sends).
func readData(br *bufio.Reader, a *Array, t dtype, n int, sized bool, fortran bool) error {
	const chunk = 1 << 16 // elements per read
	capFor := func(have int) int {
		if sized {
			return n
		}
		return min(n, max(2*have, chunk))
	}
	var f32 []float32
	var i64 []int64
	if t.kind == 'f' {
		f32 = make([]float32, 0, capFor(0))
	} else {
		i64 = make([]int64, 0, capFor(0))
	}
	buf := make([]byte, chunk*t.size)
	for done := 0; done < n; {
		m := min(chunk, n-done)
		raw := buf[:m*t.size]
		if err := readValues(br, raw, done, n, t.size, a.Shape); err != nil {
			return err
		}
		if f32 != nil && len(f32)+m > cap(f32) {
			f32 = slices.Grow(f32, capFor(len(f32))-len(f32))
		}
		if i64 != nil && len(i64)+m > cap(i64) {
			i64 = slices.Grow(i64, capFor(len(i64))-len(i64))
		}
		if f32 != nil && t.size == 4 && t.order == binary.LittleEndian {
			// NumPy's default float32, in one tight loop (the switch
			// below, through the ByteOrder interface, read 800 MB at
			// 0.5 GB/s).
			f32 = f32[:len(f32)+m]
			dst := f32[len(f32)-m:]
			for e := range dst {
				dst[e] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*e:]))
			}
			done += m
			continue
		}
		if f32 != nil && t.size == 8 && t.order == binary.LittleEndian {
			// NumPy's default float64, narrowed as below.
			f32 = f32[:len(f32)+m]
			dst := f32[len(f32)-m:]
			for e := range dst {
				x := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*e:]))
				v := float32(x)
				if v == 0 && x != 0 || math.IsInf(float64(v), 0) && !math.IsInf(x, 0) {
					_, err := Narrow(x)
					return &ElementError{Index: index(done+e, a.Shape, fortran), Value: x, Err: err}
				}
				dst[e] = v
			}
			done += m
			continue
		}
		for e := range m {
			b := raw[e*t.size : (e+1)*t.size]
			switch t.kind {
			case 'f':
				var v float32
				switch t.size {
				case 2:
					v = halfToFloat32(t.order.Uint16(b))
				case 4:
					v = math.Float32frombits(t.order.Uint32(b))
				default:
					x := math.Float64frombits(t.order.Uint64(b))
					var err error
					if v, err = Narrow(x); err != nil {
						return &ElementError{Index: index(done+e, a.Shape, fortran), Value: x, Err: err}
					}
				}
				f32 = append(f32, v)
			case 'i':
				var v int64
				switch t.size {
				case 1:
					v = int64(int8(b[0]))
				case 2:
					v = int64(int16(t.order.Uint16(b)))
				case 4:
					v = int64(int32(t.order.Uint32(b)))
				default:
					v = int64(t.order.Uint64(b))
				}
				i64 = append(i64, v)
			default:
				var v uint64
				switch t.size {
				case 1:
					v = uint64(b[0])
				case 2:
					v = uint64(t.order.Uint16(b))
				case 4:
					v = uint64(t.order.Uint32(b))
				default:
					v = t.order.Uint64(b)
				}
				if v > math.MaxInt64 {
					return fmt.Errorf("element %s = %d exceeds int64", index(done+e, a.Shape, fortran), v)
				}
				i64 = append(i64, int64(v))
			}
		}
		done += m
	}
	if t.kind == 'f' {
		a.F32 = f32
	} else {
		a.I64 = i64
	}
	return nil
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

// Narrow converts a float64 value to float32, refusing a finite value
// beyond float32's range and a nonzero one that rounds to zero (NaN and
// ±Inf pass, for the finiteness checks to name): the readers' one
// conversion to float32.
func Narrow(v float64) (float32, error) {
	f := float32(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
	case math.IsInf(float64(f), 0):
		return 0, fmt.Errorf("overflows float32 (largest %g)", math.MaxFloat32)
	case f == 0 && v != 0:
		return 0, fmt.Errorf("underflows to zero in float32 (smallest %g; x.astype(np.float32) first, if flushing such values to 0 is what you mean)", math.SmallestNonzeroFloat32)
	}
	return f, nil
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
	fortranWalk(shape, func(c, f int) { out[c] = x[f] })
	return out
}

// COrderBytes are the bytes of a Fortran-order array of shape, elements
// of size bytes, in C order (NumPy's np.ascontiguousarray(a).tobytes()).
func COrderBytes(data []byte, shape []int, size int) []byte {
	out := make([]byte, len(data))
	fortranWalk(shape, func(c, f int) { copy(out[c*size:(c+1)*size], data[f*size:]) })
	return out
}

// fortranWalk calls visit for every element of an array of shape, in C
// order: c its C-order index, f its Fortran-order one.
func fortranWalk(shape []int, visit func(c, f int)) {
	n := 1
	// Fortran strides: the first axis varies fastest.
	fs := make([]int, len(shape))
	for k, s := range shape {
		fs[k] = n
		n *= s
	}
	idx := make([]int, len(shape))
	for c := range n {
		f := 0
		for k, v := range idx {
			f += v * fs[k]
		}
		visit(c, f)
		for k := len(shape) - 1; k >= 0; k-- { // the next C index
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
}

// ReadNPY reads a single .npy file. For a regular file the data its header
// announces must fit in the file, checked before any allocation; a pipe or
// other stream of unknown length is read as it arrives, its memory growing
// with the bytes actually sent.
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
	limit := int64(0) // a pipe's length is unknown: read as it arrives
	if fi.Mode().IsRegular() {
		limit = max(fi.Size(), 1)
	}
	a, err := decodeNPY(f, strings.TrimSuffix(filepath.Base(path), ".npy"), 0, limit, true)
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// FormatShape writes a shape as NumPy prints it: (4, 5), (5,) or ().
func FormatShape(shape []int) string {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = strconv.Itoa(s)
	}
	if len(dims) == 1 {
		return "(" + dims[0] + ",)"
	}
	return "(" + strings.Join(dims, ", ") + ")"
}

// WriteNPY writes one array to path atomically (a temporary file, then rename).
func WriteNPY(path string, a Array) error {
	return atomicfile.Write(path, func(w io.Writer) error { return writeArray(w, a) })
}

// writeArray writes a .npy v1.0 stream: the header by the format's
// specification (magic, version, little-endian header length, a Python
// dict literal padded with spaces to a multiple of 64 bytes and ended by a
// newline), read back by NumPy in the tests.
func writeArray(w io.Writer, a Array) error {
	var descr string
	var n int
	switch {
	case a.Rows != nil:
		if a.F32 == nil || len(a.Shape) != 2 || a.Shape[0] != len(a.Rows) {
			return fmt.Errorf("gathered rows need float32 data and shape (%d, d), got %v", len(a.Rows), a.Shape)
		}
		d := a.Shape[1]
		for _, r := range a.Rows {
			if r < 0 || (r+1)*d > len(a.F32) {
				return fmt.Errorf("row %d is outside the %d rows of %d", r, len(a.F32)/d, d)
			}
		}
		descr, n = "<f4", a.Len()
	case a.F32 != nil && a.I64 == nil:
		descr, n = "<f4", len(a.F32)
	case a.I64 != nil && a.F32 == nil:
		descr, n = "<i8", len(a.I64)
	default:
		return fmt.Errorf("array must hold exactly one of float32 or int64 data")
	}
	if n != a.Len() || len(a.Shape) == 0 {
		return fmt.Errorf("%d values do not fill shape %s", n, FormatShape(a.Shape))
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, FormatShape(a.Shape))
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
	// The values in pieces of up to 32 KiB, each encoded in a tight loop.
	buf := make([]byte, 1<<15)
	put32 := func(x []float32) error {
		for len(x) > 0 {
			k := min(len(x), len(buf)/4)
			for i, v := range x[:k] {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
			if _, err := w.Write(buf[:4*k]); err != nil {
				return err
			}
			x = x[k:]
		}
		return nil
	}
	switch {
	case a.Rows != nil:
		d := a.Shape[1]
		for _, r := range a.Rows {
			if err := put32(a.F32[r*d : (r+1)*d]); err != nil {
				return err
			}
		}
		return nil
	case a.F32 != nil:
		return put32(a.F32)
	}
	for x := a.I64; len(x) > 0; {
		k := min(len(x), len(buf)/8)
		for i, v := range x[:k] {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(v))
		}
		if _, err := w.Write(buf[:8*k]); err != nil {
			return err
		}
		x = x[k:]
	}
	return nil
}
