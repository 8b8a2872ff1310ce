package main

import (
	"encoding/binary"
	"github.com/ccsets/ccs/bundle"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// encode writes values as little- (or big-) endian bytes of the given
// kind and size.
func encode(vals []float64, kind byte, size int, big bool) []byte {
	var order binary.ByteOrder = binary.LittleEndian
	if big {
		order = binary.BigEndian
	}
	out := make([]byte, len(vals)*size)
	for i, v := range vals {
		b := out[i*size : (i+1)*size]
		switch {
		case kind == 'f' && size == 2:
			order.PutUint16(b, toHalf(v))
		case kind == 'f' && size == 4:
			order.PutUint32(b, math.Float32bits(float32(v)))
		case kind == 'f':
			order.PutUint64(b, math.Float64bits(v))
		case size == 1:
			b[0] = byte(int8(v))
		case size == 2:
			order.PutUint16(b, uint16(int16(v)))
		case size == 4:
			order.PutUint32(b, uint32(int32(v)))
		default:
			order.PutUint64(b, uint64(int64(v)))
		}
	}
	return out
}

// toHalf converts the small integers and halves the tests use to binary16.
func toHalf(v float64) uint16 {
	if v == 0 {
		return 0
	}
	sign := uint16(0)
	if v < 0 {
		sign, v = 0x8000, -v
	}
	e := int(math.Floor(math.Log2(v)))
	m := v/math.Exp2(float64(e)) - 1
	return sign | uint16(e+15)<<10 | uint16(m*1024)
}

func TestDecode(t *testing.T) {
	t.Parallel()
	c := []float64{1, 2, 3, -4, 5.5, 6} // a (2, 3) array in C order
	f := []float64{1, -4, 2, 5.5, 3, 6} // the same in Fortran order
	ints := []float64{1, 2, 3, -4, 5, 6}
	intsF := []float64{1, -4, 2, 5, 3, 6}
	tests := []struct {
		name, dtype string
		data        []byte
		fortran     bool
		f32         []float32
		i64         []int64
	}{
		{"float32", "<f4", encode(c, 'f', 4, false), false, []float32{1, 2, 3, -4, 5.5, 6}, nil},
		{"float32 Fortran", "<f4", encode(f, 'f', 4, false), true, []float32{1, 2, 3, -4, 5.5, 6}, nil},
		{"float64", "<f8", encode(c, 'f', 8, false), false, []float32{1, 2, 3, -4, 5.5, 6}, nil},
		{"float64 Fortran", "<f8", encode(f, 'f', 8, false), true, []float32{1, 2, 3, -4, 5.5, 6}, nil},
		{"float16", "<f2", encode(c, 'f', 2, false), false, []float32{1, 2, 3, -4, 5.5, 6}, nil},
		{"float64 big-endian", ">f8", encode(c, 'f', 8, true), false, []float32{1, 2, 3, -4, 5.5, 6}, nil},
		{"int64", "<i8", encode(ints, 'i', 8, false), false, nil, []int64{1, 2, 3, -4, 5, 6}},
		{"int64 Fortran", "<i8", encode(intsF, 'i', 8, false), true, nil, []int64{1, 2, 3, -4, 5, 6}},
		{"int32", "<i4", encode(ints, 'i', 4, false), false, nil, []int64{1, 2, 3, -4, 5, 6}},
		{"int8", "|i1", encode(ints, 'i', 1, false), false, nil, []int64{1, 2, 3, -4, 5, 6}},
		{"uint16", "<u2", encode([]float64{1, 2, 3, 4, 5, 6}, 'u', 2, false), false, nil, []int64{1, 2, 3, 4, 5, 6}},
	}
	for _, tt := range tests {
		a, err := decode(rawArray{Name: "x", Data: tt.data, Dtype: tt.dtype, Shape: []int{2, 3}, Fortran: tt.fortran})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.Equal(a.Shape, []int{2, 3}) || !slices.Equal(a.F32, tt.f32) || !slices.Equal(a.I64, tt.i64) {
			t.Errorf("%s: shape %v, %v %v; want %v %v", tt.name, a.Shape, a.F32, a.I64, tt.f32, tt.i64)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		r     rawArray
		error string
	}{
		{"complex", rawArray{Name: "anchors", Dtype: "<c16", Data: make([]byte, 32), Shape: []int{2}},
			`array "anchors": dtype "<c16" is not supported (embeddings are floating point; labels integers or strings): want float16, float32 or float64`},
		{"object", rawArray{Name: "anchors", Dtype: "|O", Data: make([]byte, 16), Shape: []int{2}},
			`array "anchors": dtype "|O" is not supported (embeddings are floating point; labels integers or strings): want float16, float32 or float64 ('<f2', '<f4', '<f8'), an integer type ('<i8', '<i4', '<i2', '|i1', '<u8', … '|u1'), either byte order, or strings for labels ('<U…', '|S…'): Python objects — a DataFrame of mixed columns gives them: df.to_numpy(dtype=np.float32) for embeddings`},
		{"bool", rawArray{Name: "labels", Dtype: "|b1", Data: make([]byte, 2), Shape: []int{2}},
			`array "labels": dtype "|b1" is not supported`},
		{"strings too wide", rawArray{Name: "labels", Dtype: "<U4097", Data: make([]byte, 4*4097), Shape: []int{1}},
			`array "labels": dtype "<U4097" is not supported`},
		{"strings of no width", rawArray{Name: "labels", Dtype: "|S0", Shape: []int{0}},
			`array "labels": dtype "|S0" is not supported`},
		{"strings not Unicode", rawArray{Name: "labels", Dtype: "<U1", Data: []byte{0, 0xd8, 0, 0}, Shape: []int{1}},
			`array "labels": element [0]: code unit 0, 0xd800, is not a Unicode code point`},
		{"strings of a short buffer", rawArray{Name: "labels", Dtype: "|S3", Data: make([]byte, 5), Shape: []int{2}},
			`array "labels": shape (2,) of |S3 needs 6 bytes, the buffer has 5`},
		{"short buffer", rawArray{Name: "anchors", Dtype: "<f4", Data: make([]byte, 20), Shape: []int{2, 3}},
			`array "anchors": shape (2, 3) of <f4 needs 24 bytes, the buffer has 20`},
		{"negative shape", rawArray{Name: "anchors", Dtype: "<f4", Shape: []int{-1, 3}},
			`array "anchors": shape (-1, 3) is not a shape`},
		{"float64 overflow", rawArray{Name: "anchors", Dtype: "<f8", Data: encode([]float64{1, 2, 3, 4, 5, 1e39}, 'f', 8, false), Shape: []int{2, 3}},
			`array "anchors": element [1][2] = 1e+39 overflows float32`},
		{"float64 underflow, Fortran", rawArray{Name: "anchors", Dtype: "<f8", Data: encode([]float64{1, 1e-50, 3, 4, 5, 6}, 'f', 8, false), Shape: []int{2, 3}, Fortran: true},
			`array "anchors": element [1][0] = 1e-50 underflows to zero in float32`},
	}
	for _, tt := range tests {
		_, err := decode(tt.r)
		if err == nil || !strings.Contains(err.Error(), tt.error) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.error)
		}
	}
}

func TestDecodeF32View(t *testing.T) {
	t.Parallel()
	buf := encode([]float64{1, 2, 3, 4}, 'f', 4, false)
	r := rawArray{Name: "points", Data: buf, Dtype: "<f4", Shape: []int{2, 2}}
	tests := []struct {
		name  string
		r     rawArray
		view  bool
		alias bool
	}{
		{"float32 C order, view", r, true, true},
		{"float32 C order, copy", r, false, false},
		{"float64, view asked", rawArray{Name: "points", Data: encode([]float64{1, 2, 3, 4}, 'f', 8, false), Dtype: "<f8", Shape: []int{2, 2}}, true, false},
	}
	for _, tt := range tests {
		x, err := decodeF32(tt.r, tt.view)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(x, []float32{1, 2, 3, 4}) {
			t.Errorf("%s: %v", tt.name, x)
		}
		if alias := unsafe.Pointer(&x[0]) == unsafe.Pointer(&buf[0]); alias != tt.alias {
			t.Errorf("%s: shares the caller's memory: %v, want %v", tt.name, alias, tt.alias)
		}
	}
	if _, err := decodeF32(rawArray{Name: "points", Data: encode([]float64{1, 2}, 'i', 8, false), Dtype: "<i8", Shape: []int{2}}, true); err == nil ||
		!strings.Contains(err.Error(), `array "points": dtype int64, want floating point`) {
		t.Errorf("integers as points: %v", err)
	}
}

// TestFloat64FastPath checks the float64 path taken on all cores against
// the decoder's (the same values big-endian, which it converts one by one).
func TestFloat64FastPath(t *testing.T) {
	t.Parallel()
	vals := []float64{0, -0.0, 1e-40, -3.4e38, math.MaxFloat32, math.SmallestNonzeroFloat32, math.NaN(), math.Inf(-1), 1.0 / 3}
	for i := 0; len(vals) < 300_000; i++ {
		vals = append(vals, math.Sin(float64(i))*math.Exp(float64(i%80)-40))
	}
	fast, err := decode(rawArray{Name: "x", Data: encode(vals, 'f', 8, false), Dtype: "<f8", Shape: []int{len(vals)}})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := decode(rawArray{Name: "x", Data: encode(vals, 'f', 8, true), Dtype: ">f8", Shape: []int{len(vals)}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if math.Float32bits(fast.F32[i]) != math.Float32bits(slow.F32[i]) {
			t.Fatalf("value %d = %g: %g on all cores, %g by the decoder", i, vals[i], fast.F32[i], slow.F32[i])
		}
	}
	if fast.Converted != "float64 → float32" {
		t.Errorf("converted: %q", fast.Converted)
	}
}

// TestDecodeFortranTiles: a Fortran array over several tiles each way is
// read into C order as the .npy decoder reads it, float32 and float64;
// a float64 float32 cannot hold keeps the decoder's refusal.
func TestDecodeFortranTiles(t *testing.T) {
	t.Parallel()
	const rows, cols = 130, 70
	f := make([]float64, rows*cols) // Fortran order: column after column
	for i := range f {
		f[i] = float64(i%97) - 48.5 + float64(i)/7
	}
	for _, c := range []struct {
		dtype string
		size  int
	}{{"<f4", 4}, {"<f8", 8}} {
		data := encode(f, 'f', c.size, false)
		got, err := decode(rawArray{Name: "x", Data: data, Dtype: c.dtype, Shape: []int{rows, cols}, Fortran: true})
		want, err2 := bundle.DecodeRaw(data, "x", c.dtype, []int{rows, cols}, true)
		if err != nil || err2 != nil || !slices.Equal(got.F32, want.F32) || !slices.Equal(got.Shape, want.Shape) || got.Converted != want.Converted {
			t.Errorf("%s: %v, %v: C order differs from the decoder's", c.dtype, err, err2)
		}
	}
	big := slices.Clone(f)
	big[rows*3+5] = 1e300
	_, err := decode(rawArray{Name: "x", Data: encode(big, 'f', 8, false), Dtype: "<f8", Shape: []int{rows, cols}, Fortran: true})
	_, want := bundle.DecodeRaw(encode(big, 'f', 8, false), "x", "<f8", []int{rows, cols}, true)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("a value beyond float32: %v, want %v", err, want)
	}
}
