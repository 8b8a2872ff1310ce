package bundle

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/internal/sttest"
)

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSafetensorsReference reads the bytes the format's reference
// implementation writes in its own tests (safetensors' Python tests:
// save({"test": np.int32 (2, 2)}), and a header with metadata, padded
// with spaces).
func TestSafetensorsReference(t *testing.T) {
	plain := "<\x00\x00\x00\x00\x00\x00\x00" + `{"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}` +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00"
	meta := "f\x00\x00\x00\x00\x00\x00\x00" + `{"__metadata__":{"framework":"pt"},"test1":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}       ` +
		strings.Repeat("\x00", 16)
	for _, c := range []struct {
		file, name string
		want       []int64
	}{{plain, "test", []int64{0, 0, 0, 1}}, {meta, "test1", []int64{0, 0, 0, 0}}} {
		st, err := OpenSafetensors(writeTemp(t, "ref.safetensors", []byte(c.file)))
		if err != nil {
			t.Fatal(err)
		}
		a, err := st.Read(c.name)
		st.Close()
		if err != nil || !slices.Equal(a.I64, c.want) || !slices.Equal(a.Shape, []int{2, 2}) || !slices.Equal(st.Names(), []string{c.name}) {
			t.Errorf("%s: %v %v, %v", c.name, a.Shape, a.I64, err)
		}
	}
}

// TestSafetensorsDtypes: every dtype read gives the values the .npy
// decoder gives for the same bytes under NumPy's name (its conversions:
// float to float32, integers to int64), BF16 widened exactly, and a
// float64 float32 cannot hold refused naming the element.
func TestSafetensorsDtypes(t *testing.T) {
	bf16 := func(x ...float32) []byte {
		var b []byte
		for _, v := range x {
			b = binary.LittleEndian.AppendUint16(b, uint16(math.Float32bits(v)>>16))
		}
		return b
	}
	tensors := []sttest.Tensor{
		sttest.T("f64", "F64", []int{2, 2}, sttest.LE(1.5, -2.25, 3e-3, 1e10)),
		sttest.T("f32", "F32", []int{3}, sttest.LE[float32](1, -0.5, 3.25)),
		sttest.T("f16", "F16", []int{2}, sttest.LE[uint16](0x3c00, 0xc000)), // 1, -2
		sttest.T("bf16", "BF16", []int{3}, bf16(1, -2.5, 3.140625)),
		sttest.T("i64", "I64", []int{2}, sttest.LE[int64](-7, 1<<40)),
		sttest.T("i32", "I32", []int{2}, sttest.LE[int32](-3, 9)),
		sttest.T("i16", "I16", []int{1}, sttest.LE[int16](-300)),
		sttest.T("i8", "I8", []int{2}, sttest.LE[int8](-1, 5)),
		sttest.T("u64", "U64", []int{1}, sttest.LE[uint64](12)),
		sttest.T("u32", "U32", []int{1}, sttest.LE[uint32](4e9)),
		sttest.T("u16", "U16", []int{1}, sttest.LE[uint16](65535)),
		sttest.T("u8", "U8", []int{2, 1}, sttest.LE[uint8](0, 255)),
		sttest.T("empty", "F32", []int{0, 4}, nil),
	}
	st, err := OpenSafetensors(writeTemp(t, "all.safetensors", sttest.File(tensors...)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.Names(); len(got) != len(tensors) || got[0] != "f64" || got[3] != "bf16" {
		t.Errorf("names %v", got)
	}
	for _, tt := range tensors {
		got, err := st.Read(tt.Name)
		if err != nil {
			t.Fatalf("%s: %v", tt.Name, err)
		}
		if tt.Dtype == "BF16" {
			if !slices.Equal(got.F32, []float32{1, -2.5, 3.140625}) || got.Converted != "bfloat16 → float32" {
				t.Errorf("bf16: %v (%s)", got.F32, got.Converted)
			}
			continue
		}
		want, err := DecodeRaw(tt.Data, tt.Name, safeDtypes[tt.Dtype], tt.Shape, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.F32, want.F32) || !slices.Equal(got.I64, want.I64) || !slices.Equal(got.Shape, tt.Shape) || got.Converted != want.Converted {
			t.Errorf("%s: %v %v %v (%s), want %v %v (%s)", tt.Name, got.Shape, got.F32, got.I64, got.Converted, want.F32, want.I64, want.Converted)
		}
	}
	if _, err := st.Read("nothing"); err == nil || !strings.Contains(err.Error(), `no tensor "nothing" (have [f64 f32`) {
		t.Errorf("a missing tensor: %v", err)
	}
	big, err := OpenSafetensors(writeTemp(t, "big.safetensors", sttest.File(sttest.T("x", "F64", []int{2}, sttest.LE(1.0, 1e300)))))
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	if _, err := big.Read("x"); err == nil || !strings.Contains(err.Error(), `big.safetensors: tensor "x": element [1] = 1e+300`) {
		t.Errorf("a float64 float32 cannot hold: %v", err)
	}
}

// TestSafetensorsBadFiles: each way a file can lie about itself is an
// error naming the file and what is wrong.
func TestSafetensorsBadFiles(t *testing.T) {
	good := sttest.File(sttest.T("a", "F32", []int{2}, sttest.LE[float32](1, 2)), sttest.T("b", "I64", []int{1}, sttest.LE[int64](3)))
	header := func(h string, data int) []byte {
		out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(append(out, h...), make([]byte, data)...)
	}
	tensor := `"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}`
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "0 bytes, shorter than its 8-byte header length"},
		{"seven bytes", []byte("\x10\x00\x00\x00\x00\x00\x00"), "7 bytes, shorter than its 8-byte header length"},
		{"huge header", binary.LittleEndian.AppendUint64(nil, 1<<40), "a header of 1099511627776 bytes, more than the 100000000 allowed"},
		{"truncated header", good[:20], "a header of"},
		{"not an object", header(`[1, 2]  `, 0), "the header is not a JSON object"},
		{"bad JSON", header(`{"a":{"dtype":`, 0), "header: tensor \"a\""},
		{"junk after", header(`{`+tensor+`}x`, 8), "bytes after its JSON object"},
		{"bool", header(`{"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}`, 2), `tensor "a": dtype "BOOL" is not read`},
		{"negative shape", header(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 8), `tensor "a": shape [-2] is not a shape`},
		{"shape overflow", header(`{"a":{"dtype":"F32","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,8]}}`, 8), "is not a shape"},
		{"three offsets", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4,8]}}`, 8), "data_offsets [0 4 8]: want [begin, end]"},
		{"reversed offsets", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}`, 8), "want [begin, end], 0 ≤ begin ≤ end"},
		{"shape and offsets disagree", header(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), "data_offsets [0 8] hold 8 bytes; shape [3] of F32 needs 12"},
		{"gap", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, 12), `tensor "a": data_offsets start at 4, the tensors before end at 0: a gap before it`},
		{"overlap", header(`{`+tensor+`,"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "it overlaps the tensor before"},
		{"bytes after the tensors", header(`{`+tensor+`}`, 12), "the tensors hold 8 bytes; the file has 12 after its header"},
		{"short data", header(`{`+tensor+`}`, 4), "the tensors hold 8 bytes; the file has 4 after its header"},
		{"twice", header(`{`+tensor+`,`+tensor+`}`, 8), `tensor "a" twice`},
		{"metadata not strings", header(`{"__metadata__":{"n":1},`+tensor+`}`, 8), "__metadata__: want an object of strings: 1 is a number, want a string"},
		// encoding/json's errors in the file's words, no Go struct or type.
		{"float offsets", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0.0,8]}}`, 8), `header: tensor "a": data_offsets: 0.0 is not an integer`},
		{"a string shape", header(`{"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}`, 8), `header: tensor "a": shape: "2" is a string, want an integer`},
		{"a number dtype", header(`{"a":{"dtype":32,"shape":[2],"data_offsets":[0,8]}}`, 8), `header: tensor "a": dtype: 32 is a number, want a string`},
		{"nested metadata", header(`{"__metadata__":{"n":{"a":"b"}},`+tensor+`}`, 8), `__metadata__: want an object of strings: an object, want a string`},
		{"NaN offsets", header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[NaN,8]}}`, 8), `header: tensor "a": line 1, column 49: NaN is not JSON`},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, "bad.safetensors", c.file)
			_, err := OpenSafetensors(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("got %v, want %q after the path", err, c.want)
			}
			if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json: ")) {
				t.Errorf("Go's words in %v", err)
			}
		})
	}
	if _, err := OpenSafetensors(filepath.Join(t.TempDir(), "none.safetensors")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}

// FuzzOpenSafetensors: arbitrary files never panic; a file that opens
// reads every tensor whole or refuses it, with memory bounded by the
// file (BF16 and F16 widen twofold, I8 and U8 eightfold).
func FuzzOpenSafetensors(f *testing.F) {
	f.Add(sttest.File(sttest.T("a", "F32", []int{2}, sttest.LE[float32](1, 2)), sttest.T("b", "U8", []int{3}, []byte{1, 2, 3})))
	f.Add(sttest.File(sttest.T("x", "BF16", []int{1, 2}, []byte{0, 0x3f, 0, 0xc0})))
	f.Add(sttest.File(sttest.T("e", "F64", []int{0}, nil)))
	f.Add([]byte("\x08\x00\x00\x00\x00\x00\x00\x00{}      "))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.safetensors")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, err := OpenSafetensors(path)
		if err != nil {
			return
		}
		defer st.Close()
		for _, name := range st.Names() {
			a, err := st.Read(name)
			if err != nil {
				if !strings.Contains(err.Error(), fmt.Sprintf("tensor %q", name)) {
					t.Fatalf("error does not name the tensor: %v", err)
				}
				continue
			}
			checkArray(t, name, a)
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*uint64(len(data))+4<<20 {
			t.Fatalf("allocated %d bytes for a %d-byte file", alloc, len(data))
		}
	})
}
