package main

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/parallel"
)

// rawArray is an array as the caller holds it: its bytes (a view of the
// caller's memory, valid during the call only), NumPy's dtype string
// ("<f4", "<f8", ">f2", "<i8", "|u1", …), its shape and its order.
type rawArray struct {
	Name    string // the array's name in messages ("anchors", "points")
	Data    []byte
	Dtype   string
	Shape   []int
	Fortran bool
}

// maxDims bounds an array's rank: no array of the API has more than 3.
const maxDims = 32

// check validates the shape against the bytes: what the caller claims
// must be what it holds.
func (r rawArray) check() (int, error) {
	if len(r.Shape) > maxDims {
		return 0, fmt.Errorf("array %q: %d dimensions", r.Name, len(r.Shape))
	}
	n := 1
	for _, s := range r.Shape {
		if s < 0 || (s > 0 && n > math.MaxInt/16/s) {
			return 0, fmt.Errorf("array %q: shape %s is not a shape", r.Name, bundle.FormatShape(r.Shape))
		}
		n *= s
	}
	size, ok := dtypeSize(r.Dtype)
	if !ok {
		return 0, unsupportedDtype(r.Name, r.Dtype)
	}
	if n*size != len(r.Data) {
		return 0, fmt.Errorf("array %q: shape %s of %s needs %d bytes, the buffer has %d", r.Name, bundle.FormatShape(r.Shape), r.Dtype, n*size, len(r.Data))
	}
	return n, nil
}

// dtypeSize is the element size of a dtype string the API takes: a
// float16/32/64 or an integer of 1 to 8 bytes, either byte order, or
// fixed-width strings ('<U8': 8 UTF-32 code units; '|S8': 8 bytes), which
// only labels and group ids take.
func dtypeSize(dtype string) (int, bool) {
	if n, ok := bundle.StringDtypeSize(dtype); ok {
		return n, true
	}
	if len(dtype) != 3 || !strings.ContainsRune("<>|=", rune(dtype[0])) {
		return 0, false
	}
	switch dtype[1:] {
	case "f2", "i2", "u2":
		return 2, true
	case "f4", "i4", "u4":
		return 4, true
	case "f8", "i8", "u8":
		return 8, true
	case "i1", "u1":
		return 1, true
	}
	return 0, false
}

// unsupportedDtype is the error for a dtype no array of the API takes
// (complex, object, strings, booleans, …), in the .npz reader's words.
func unsupportedDtype(name, dtype string) error {
	hint := ""
	switch {
	case strings.HasSuffix(dtype, "b1"):
		hint = ": booleans — x.astype(np.float32) for embeddings, x.astype(np.int64) for labels"
	case strings.HasSuffix(dtype, "O"):
		hint = ": Python objects — a DataFrame of mixed columns gives them: df.to_numpy(dtype=np.float32) for embeddings"
	}
	return fmt.Errorf("array %q: dtype %q is not supported (embeddings are floating point; labels integers or strings): want float16, float32 or float64 ('<f2', '<f4', '<f8'), an integer type ('<i8', '<i4', '<i2', '|i1', '<u8', … '|u1'), either byte order, or strings for labels ('<U…', '|S…')%s", name, dtype, hint)
}

// littleEndian reports whether the dtype's bytes are in this machine's
// (little-endian) order.
func littleEndian(dtype string) bool { return dtype[0] != '>' }

// decode converts r as the .npz reader converts a file's array
// (bundle.DecodeNPY): floating point to float32 (a float64 value that
// overflows float32, or a nonzero one that rounds to zero, is an error
// naming the element), integers to int64, Fortran order to C order. The
// result holds no reference to r's memory.
func decode(r rawArray) (bundle.Array, error) {
	n, err := r.check()
	if err != nil {
		return bundle.Array{}, err
	}
	cOrder := !r.Fortran || len(r.Shape) < 2
	switch {
	case r.Dtype[1:] == "f4" && littleEndian(r.Dtype) && cOrder:
		out := make([]float32, n)
		copy(out, viewF32(r.Data))
		return bundle.Array{Shape: clone(r.Shape), F32: out, Dtype: "float32"}, nil
	case r.Dtype[1:] == "i8" && littleEndian(r.Dtype) && cOrder:
		out := make([]int64, n)
		copy(out, viewI64(r.Data))
		return bundle.Array{Shape: clone(r.Shape), I64: out, Dtype: "int64"}, nil
	case r.Dtype[1:] == "f8" && littleEndian(r.Dtype) && cOrder:
		// NumPy's default dtype: converted on all cores; a value float32
		// cannot hold goes the decoder's way below, for its message.
		if out, ok := narrowAll(viewF64(r.Data)); ok {
			return bundle.Array{Shape: clone(r.Shape), F32: out, Dtype: "float64", Converted: "float64 → float32"}, nil
		}
	}
	if r.Fortran && len(r.Shape) == 2 && littleEndian(r.Dtype) && n > 0 {
		// A (n, d) Fortran array (x.T of a (d, n) one, pandas' values):
		// read into C order in one pass, no copy in its own order first
		// (a 1M × 128 collection cost twice its size at once).
		rows, cols := r.Shape[0], r.Shape[1]
		switch r.Dtype[1:] {
		case "f4":
			out := make([]float32, n)
			fromFortran(out, viewF32(r.Data), rows, cols, func(v float32) float32 { return v })
			return bundle.Array{Shape: clone(r.Shape), F32: out, Dtype: "float32", Converted: "Fortran order → C order"}, nil
		case "f8":
			out, bad := make([]float32, n), false
			fromFortran(out, viewF64(r.Data), rows, cols, func(v float64) float32 {
				f := float32(v)
				// A value float32 cannot hold: the decoder's message, below.
				bad = bad || math.IsInf(float64(f), 0) || math.IsNaN(v) || f == 0 && v != 0
				return f
			})
			if !bad {
				return bundle.Array{Shape: clone(r.Shape), F32: out, Dtype: "float64", Converted: "float64 → float32, Fortran order → C order"}, nil
			}
		}
	}
	// Every other dtype and order goes through the .npy decoder's own
	// conversions: the same results, the same messages.
	return bundle.DecodeRaw(r.Data, r.Name, r.Dtype, r.Shape, r.Fortran)
}

// fromFortran writes src, a rows × cols array in Fortran order (column
// after column), into out in C order (row after row), converting each
// value, in tiles that keep both sides in cache.
func fromFortran[T float32 | float64](out []float32, src []T, rows, cols int, conv func(T) float32) {
	const tile = 64
	for i0 := 0; i0 < rows; i0 += tile {
		i1 := min(i0+tile, rows)
		for j0 := 0; j0 < cols; j0 += tile {
			j1 := min(j0+tile, cols)
			for j := j0; j < j1; j++ {
				col := src[j*rows : (j+1)*rows]
				for i := i0; i < i1; i++ {
					out[i*cols+j] = conv(col[i])
				}
			}
		}
	}
}

// decodeF32 is decode for an array that must be floating point: its
// float32 values, with a view of r's own memory (no copy) when r already
// is float32 in C order and view is set — valid during the call only.
func decodeF32(r rawArray, view bool) ([]float32, error) {
	n, err := r.check()
	if err != nil {
		return nil, err
	}
	if view && r.Dtype[1:] == "f4" && littleEndian(r.Dtype) && (!r.Fortran || len(r.Shape) < 2) {
		return viewF32(r.Data)[:n:n], nil
	}
	a, err := decode(r)
	if err != nil {
		return nil, err
	}
	if a.F32 == nil {
		return nil, fmt.Errorf("array %q: dtype %s, want floating point (float32, float64 or float16)", r.Name, a.Kind())
	}
	return a.F32, nil
}

// viewF32 and viewI64 read bytes as the values they hold, without a copy.
// The caller's arrays are aligned to their element size (the Python side
// makes them so).
func viewF32(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func viewF64(b []byte) []float64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// narrowAll converts x to float32 on all cores, as the .npz reader
// converts float64 (bundle.DecodeNPY); ok is false when a finite value
// overflows float32 or a nonzero one rounds to zero (NaN and ±Inf pass).
func narrowAll(x []float64) (out []float32, ok bool) {
	out = make([]float32, len(x))
	var bad atomic.Bool
	parallel.For(len(x), 1<<16, 0, func(_, lo, hi int) {
		if !narrowInto(out[lo:hi], x[lo:hi]) {
			bad.Store(true)
		}
	})
	return out, !bad.Load()
}

// narrowInto converts src to float32 into dst (as long), reporting false
// when a value float32 cannot hold is among them (narrowAll).
func narrowInto(dst []float32, src []float64) bool {
	ok := true
	src = src[:len(dst)]
	for i, v := range src {
		f := float32(v)
		dst[i] = f
		if f == 0 || f-f != 0 { // rare: zero, ±Inf or NaN
			if (f == 0 && v != 0) || (math.IsInf(float64(f), 0) && !math.IsInf(v, 0)) {
				ok = false
			}
		}
	}
	return ok
}

func viewI64(b []byte) []int64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
}

func clone(s []int) []int { return append([]int(nil), s...) }

// finiteRows reports the first NaN or ±Inf of rows (rows of d) as
// "NAME: row i, coordinate j is v", the CLI's words for a file of
// embeddings.
func finiteRows(name string, rows []float32, d int) error {
	for i, v := range rows {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: row %d, coordinate %d is %v", name, i/d, i%d, v)
		}
	}
	return nil
}

// bytesOf is the memory of x as bytes (a view, not a copy).
func bytesOf[T float32 | float64 | int64](x []T) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*int(unsafe.Sizeof(x[0])))
}
