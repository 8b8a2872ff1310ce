package bundle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// storedNPZ is an .npz archive of one float32 member "a" of the given
// values, as WriteNPZ stores it.
func storedNPZ(t *testing.T, vals []float32) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.npz")
	if err := WriteNPZ(path, map[string]Array{"a": Float32(vals, len(vals))}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestNPZChecksum: a member whose data changed after it was written (one
// byte flipped) is refused by its CRC-32, as Python's zipfile refuses it,
// not read as other numbers.
func TestNPZChecksum(t *testing.T) {
	t.Parallel()
	vals := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	data := storedNPZ(t, vals)
	if arrays, err := readNPZ(bytes.NewReader(data), int64(len(data))); err != nil || !slices.Equal(arrays["a"].F32, vals) {
		t.Fatalf("the archive as written: %v, %v", arrays, err)
	}
	// The member's data: the float32 bytes of 3.
	var three [4]byte
	binary.LittleEndian.PutUint32(three[:], math.Float32bits(3))
	i := bytes.Index(data, three[:])
	if i < 0 {
		t.Fatal("value 3 not found in the archive")
	}
	bad := bytes.Clone(data)
	bad[i+3] ^= 0x01
	_, err := readNPZ(bytes.NewReader(bad), int64(len(bad)))
	if err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), `array "a"`) {
		t.Fatalf("one byte flipped: %v, want a checksum error naming the array", err)
	}
}

// TestNPYTrailingBytes: a .npy stream with bytes after the data its header
// announces is refused — a file, a member of an archive, or a body.
func TestNPYTrailingBytes(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := writeArray(&b, Float32([]float32{1, 2, 3, 4}, 2, 2)); err != nil {
		t.Fatal(err)
	}
	whole := b.Bytes()
	for _, extra := range [][]byte{{0}, make([]byte, 16)} {
		long := append(bytes.Clone(whole), extra...)
		if _, err := DecodeNPYBytes(long, "body", 0); err == nil || !strings.Contains(err.Error(), "bytes after the 4 values") {
			t.Errorf("body with %d bytes more: %v, want them refused", len(extra), err)
		}
		path := filepath.Join(t.TempDir(), "x.npy")
		if err := os.WriteFile(path, long, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadNPY(path); err == nil || !strings.Contains(err.Error(), "bytes after") || !strings.Contains(err.Error(), path) {
			t.Errorf("file with %d bytes more: %v, want them refused, naming the file", len(extra), err)
		}
		for _, deflate := range []bool{false, true} {
			z := npzOf(t, deflate, map[string][]byte{"anchors.npy": long})
			if _, err := readNPZ(bytes.NewReader(z), int64(len(z))); err == nil || !strings.Contains(err.Error(), "bytes after") {
				t.Errorf("member (deflated %v) with %d bytes more: %v, want them refused", deflate, len(extra), err)
			}
		}
	}
	// One byte short is refused too, saying how many values arrived.
	if _, err := DecodeNPYBytes(whole[:len(whole)-1], "body", 0); err == nil {
		t.Error("a body one byte short was accepted")
	}
	if _, err := DecodeNPY(bytes.NewReader(whole[:len(whole)-4]), "body", 0); err == nil || !strings.Contains(err.Error(), "holds 3 of the 4 values") {
		t.Errorf("a stream one value short: %v", err)
	}
}

// TestNPYNotNPY: an empty file, a text file and a pickle named .npy are
// refused saying what they are not, naming the file.
func TestNPYNotNPY(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name, data, want string
	}{
		{"empty", "", `array "empty": empty: no .npy header (0 bytes)`},
		{"text", "1.0 2.0\n3.0 4.0\n", `array "text": not an .npy file: it does not begin as one (\x93NUMPY), but with "1.0 2."`},
		{"short", "\x93NU", `array "short": not an .npy file`},
		{"pickle", "\x80\x04\x95\x00\x00\x00", `array "pickle": not an .npy file`},
	} {
		path := filepath.Join(dir, c.name+".npy")
		if err := os.WriteFile(path, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadNPY(path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestNPYPipeBounded: a .npy read from a pipe, whose header announces 2³⁶
// float32 values (256 GiB) and which then sends a little data, is refused
// with memory in proportion to what arrived, not to what was announced.
func TestNPYPipeBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(npyHeader("<f4", "(68719476736,)"))
		f.Write(make([]byte, 1<<20)) // 2¹⁸ values
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadNPY(path)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "holds 262144 of the 68719476736 values") {
		t.Fatalf("got %v, want the short stream refused", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("allocated %d bytes for a 1 MiB stream", alloc)
	}
}

// TestDtypes: every dtype DecodeNPY takes, in both byte orders, reads the
// same values; labels of a floating-point type are refused naming the
// file's dtype.
func TestDtypes(t *testing.T) {
	t.Parallel()
	raw := func(descr string, order binary.ByteOrder, size int, vals []float64) []byte {
		b := npyHeader(descr, "(3,)")
		for _, v := range vals {
			e := make([]byte, size)
			switch {
			case descr[1] == 'f' && size == 8:
				order.PutUint64(e, math.Float64bits(v))
			case descr[1] == 'f' && size == 4:
				order.PutUint32(e, math.Float32bits(float32(v)))
			case size == 8:
				order.PutUint64(e, uint64(int64(v)))
			case size == 4:
				order.PutUint32(e, uint32(int32(v)))
			case size == 2:
				order.PutUint16(e, uint16(int16(v)))
			default:
				e[0] = byte(int8(v))
			}
			b = append(b, e...)
		}
		return b
	}
	for _, c := range []struct {
		descr string
		size  int
		vals  []float64
		conv  string
	}{
		{"<f8", 8, []float64{1.5, -2, 3}, "float64 → float32"},
		{">f8", 8, []float64{1.5, -2, 3}, "float64 → float32, big-endian → little-endian"},
		{">f4", 4, []float64{1.5, -2, 3}, "big-endian → little-endian"},
		{"<i8", 8, []float64{1, -2, 3}, ""},
		{"<i4", 4, []float64{1, -2, 3}, "int32 → int64"},
		{"<i2", 2, []float64{1, -2, 3}, "int16 → int64"},
		{"|i1", 1, []float64{1, -2, 3}, "int8 → int64"},
		{"|u1", 1, []float64{1, 254, 3}, "uint8 → int64"},
		{"<u2", 2, []float64{1, 65534, 3}, "uint16 → int64"},
		{">i4", 4, []float64{1, -2, 3}, "int32 → int64, big-endian → little-endian"},
	} {
		var order binary.ByteOrder = binary.LittleEndian
		if c.descr[0] == '>' {
			order = binary.BigEndian
		}
		vals := c.vals
		data := raw(c.descr, order, c.size, vals)
		if c.descr[1] == 'u' && c.size == 2 {
			data = npyHeader(c.descr, "(3,)")
			for _, v := range vals {
				data = binary.LittleEndian.AppendUint16(data, uint16(v))
			}
		}
		if c.descr == "|u1" {
			data = append(npyHeader(c.descr, "(3,)"), 1, 254, 3)
		}
		a, err := DecodeNPYBytes(data, "x", 0)
		if err != nil {
			t.Errorf("%s: %v", c.descr, err)
			continue
		}
		if a.Converted != c.conv {
			t.Errorf("%s: converted %q, want %q", c.descr, a.Converted, c.conv)
		}
		for i, v := range vals {
			got := float64(0)
			if a.F32 != nil {
				got = float64(a.F32[i])
			} else {
				got = float64(a.I64[i])
			}
			if got != v {
				t.Errorf("%s: element %d = %v, want %v", c.descr, i, got, v)
			}
		}
	}
	big := append(npyHeader("<u8", "(1,)"), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	if _, err := DecodeNPYBytes(big, "x", 0); err == nil || !strings.Contains(err.Error(), "exceeds int64") {
		t.Errorf("uint64 beyond int64: %v", err)
	}
	arrays := map[string]Array{
		"anchors": Float32(make([]float32, 4), 2, 2),
		"labels":  {Shape: []int{2}, F32: []float32{0, 1}, Dtype: "float64"},
	}
	if _, err := fromArrays(arrays, false); err == nil || !strings.Contains(err.Error(), `array "labels": dtype float64, want an integer type`) {
		t.Errorf("float64 labels: %v", err)
	}
}

// TestDecodeRaw: an array given as raw bytes and its dtype, shape and order
// decodes exactly as the same array in a .npy stream, errors included
// (DecodeRaw is the C API's reader).
func TestDecodeRaw(t *testing.T) {
	le := func(vals ...float64) []byte { // float64 little-endian
		var b []byte
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	be32 := func(vals ...float32) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	for _, c := range []struct {
		name, descr string
		shape       []int
		fortran     bool
		data        []byte
		err         string
	}{
		{"float64", "<f8", []int{2, 2}, false, le(1, 2, 3, 4), ""},
		{"fortran", "<f8", []int{2, 2}, true, le(1, 2, 3, 4), ""},
		{"big-endian", ">f4", []int{3}, false, be32(1, -2, 0.5), ""},
		{"int16", "<i2", []int{2}, false, []byte{1, 0, 0xff, 0xff}, ""},
		{"empty", "<f4", []int{0, 3}, false, nil, ""},
		{"overflow", "<f8", []int{1}, false, le(1e300), "float32"},
		{"short", "<f8", []int{3}, false, le(1, 2), "more than the"},
		{"long", "<f8", []int{1}, false, le(1, 2), "bytes after"},
		{"dtype", "<c8", []int{1}, false, le(1), "not supported"},
	} {
		got, gerr := DecodeRaw(c.data, "x", c.descr, c.shape, c.fortran)
		order := "False"
		if c.fortran {
			order = "True"
		}
		h := "{'descr': '" + c.descr + "', 'fortran_order': " + order + ", 'shape': " + FormatShape(c.shape) + ", }"
		for (10+len(h)+1)%64 != 0 {
			h += " "
		}
		stream := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)+1), byte((len(h)+1)>>8))
		stream = append(append(append(stream, h...), '\n'), c.data...)
		want, werr := DecodeNPY(bytes.NewReader(stream), "x", 0)
		switch {
		case c.err != "":
			if gerr == nil || !strings.Contains(gerr.Error(), c.err) {
				t.Errorf("%s: error %v, want one mentioning %q", c.name, gerr, c.err)
			}
			if werr == nil {
				t.Errorf("%s: the .npy stream decodes, the raw array does not: %v", c.name, gerr)
			}
		case gerr != nil || werr != nil:
			t.Errorf("%s: errors %v (raw), %v (.npy)", c.name, gerr, werr)
		case !reflect.DeepEqual(got, want):
			t.Errorf("%s: raw %+v, .npy %+v", c.name, got, want)
		}
	}
}

// TestLongArrays: arrays of more than one read's 65 536 values, in the
// byte orders and float widths that have their own loops, read back value
// for value (bits: ±0, subnormals, ±Inf, NaN payloads) against a decoding
// of each element; a float64 that overflows float32 beyond the first read
// is refused by its own index; written back, with and without gathered
// rows, they are the same bytes as the values encoded one by one.
func TestLongArrays(t *testing.T) {
	t.Parallel()
	const n = 3*65536/2 + 7
	rng := rand.New(rand.NewPCG(7, 7))
	bits := make([]uint32, n)
	for i := range bits {
		switch i % 11 {
		case 0:
			bits[i] = 0x80000000 // −0
		case 1:
			bits[i] = rng.Uint32N(0x800000) // subnormal
		case 2:
			bits[i] = 0x7f800000 | rng.Uint32N(2)<<31 // ±Inf
		case 3:
			bits[i] = 0x7fc00000 | rng.Uint32N(0x400000) // NaN, with a payload
		default:
			bits[i] = math.Float32bits(float32(rng.NormFloat64()))
		}
	}
	type byteOrder interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	for _, c := range []struct {
		descr string
		order byteOrder
		size  int
	}{{"<f4", binary.LittleEndian, 4}, {">f4", binary.BigEndian, 4}, {"<f8", binary.LittleEndian, 8}, {">f8", binary.BigEndian, 8}} {
		data := npyHeader(c.descr, fmt.Sprintf("(%d,)", n))
		for _, b := range bits {
			if c.size == 4 {
				data = c.order.AppendUint32(data, b)
			} else {
				data = c.order.AppendUint64(data, math.Float64bits(float64(math.Float32frombits(b))))
			}
		}
		a, err := DecodeNPYBytes(data, "x", 0)
		if err != nil {
			t.Fatalf("%s: %v", c.descr, err)
		}
		for i, b := range bits {
			if got := math.Float32bits(a.F32[i]); got != b {
				t.Fatalf("%s: element %d = %#x, want %#x", c.descr, i, got, b)
			}
		}
		if c.size == 8 {
			at := 65536 + 99
			bad := slices.Clone(data)
			c.order.PutUint64(bad[len(bad)-8*(n-at):], math.Float64bits(1e300))
			if _, err := DecodeNPYBytes(bad, "x", 0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("element [%d] = 1e+300 overflows float32", at)) {
				t.Errorf("%s: overflow at %d: %v", c.descr, at, err)
			}
			c.order.PutUint64(bad[len(bad)-8*(n-at):], math.Float64bits(1e-300))
			if _, err := DecodeNPYBytes(bad, "x", 0); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("element [%d] = 1e-300 underflows", at)) {
				t.Errorf("%s: underflow at %d: %v", c.descr, at, err)
			}
		}
	}
	// Written back: the values, and rows gathered from them, as bytes.
	const d = 5
	vals := make([]float32, n/d*d)
	for i := range vals {
		vals[i] = math.Float32frombits(bits[i])
	}
	rows := make([]int, 9000)
	for i := range rows {
		rows[i] = rng.IntN(len(vals) / d)
	}
	ints := make([]int64, 70000)
	for i := range ints {
		ints[i] = int64(rng.Uint64())
	}
	for name, arr := range map[string]Array{
		"values":   Float32(vals, len(vals)),
		"gathered": Gathered(vals, d, rows),
		"ints":     {Shape: []int{len(ints)}, I64: ints},
	} {
		var buf bytes.Buffer
		if err := writeArray(&buf, arr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var want []byte
		switch name {
		case "values":
			for _, v := range vals {
				want = binary.LittleEndian.AppendUint32(want, math.Float32bits(v))
			}
		case "gathered":
			for _, r := range rows {
				for _, v := range vals[r*d : (r+1)*d] {
					want = binary.LittleEndian.AppendUint32(want, math.Float32bits(v))
				}
			}
		default:
			for _, v := range ints {
				want = binary.LittleEndian.AppendUint64(want, uint64(v))
			}
		}
		got := buf.Bytes()
		if hdr := len(got) - len(want); hdr < 0 || !bytes.Equal(got[hdr:], want) {
			t.Errorf("%s: the %d bytes written differ from the values encoded one by one", name, len(got))
		}
	}
}

// TestReadBoolLabels: labels saved as bool (y > 0.5, a multi-hot matrix
// as bool) read as 0 and 1; a multi-hot matrix is then refused as labels
// with the multi-label advice.
func TestReadBoolLabels(t *testing.T) {
	cases := []struct {
		name, shape string
		data        []byte
		want        []int64
		err         string
	}{
		{"binary labels", "(4,)", []byte{1, 0, 0, 1}, []int64{1, 0, 0, 1}, ""},
		{"a multi-hot matrix", "(2, 3)", []byte{1, 1, 0, 0, 0, 1}, nil, "y: shape (2, 3), want one label per row, (n,) (0s and 1s: a multi-hot matrix, several labels a row, which make the rows their own queries, related by the labels they share: give it as the labels of rows alone, without groups, views or pairs)"},
	}
	for _, c := range cases {
		h := fmt.Sprintf("{'descr': '|b1', 'fortran_order': False, 'shape': %s, }", c.shape)
		for (10+len(h)+1)%64 != 0 {
			h += " "
		}
		h += "\n"
		raw := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
		path := filepath.Join(t.TempDir(), "y.npy")
		if err := os.WriteFile(path, append(append(raw, h...), c.data...), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadNPY(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if a.Converted != "bool → int64" {
			t.Errorf("%s: converted %q, want bool → int64", c.name, a.Converted)
		}
		ids, _, err := Labels(a, "y", "labels")
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s: error %v, want %s", c.name, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(ids, c.want)):
			t.Errorf("%s: %v, %v, want %v", c.name, ids, err, c.want)
		}
	}
}
