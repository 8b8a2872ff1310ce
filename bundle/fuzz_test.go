package bundle

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// npyHeader is a .npy v1.0 header for descr and shape (a Python literal),
// padded as NumPy pads it.
func npyHeader(descr, shape string) []byte {
	h := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = append(b, byte(len(h)), byte(len(h)>>8))
	return append(b, h...)
}

// npySeeds are .npy streams that reach every dtype and the size checks.
func npySeeds() [][]byte {
	var out [][]byte
	for _, c := range []struct{ descr, shape string }{
		{"<f4", "(2, 3)"}, {"<i8", "(3,)"}, {"<f8", "(2, 2)"}, {"<f2", "(4,)"}, {"<i4", "(2,)"},
		{"<f4", "(1099511627776,)"}, {"<f4", "(4294967296, 4294967296)"}, {">f4", "(1,)"}, {"|u1", "(3,)"}, {"<f4", "()"},
		{"<U2", "(3,)"}, {"|S3", "(2, 4)"}, {">U1", "(6,)"},
	} {
		out = append(out, append(npyHeader(c.descr, c.shape), make([]byte, 24)...))
	}
	var b bytes.Buffer
	if err := writeArray(&b, Float32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)); err != nil {
		panic(err)
	}
	out = append(out, b.Bytes(), b.Bytes()[:len(b.Bytes())-3], []byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f"))
	// Every header form NumPy reads (keys in any order, either quotes,
	// 1_200, 0x4b0, 1200L, (), (5,)), and headers that lie: past the
	// end, an unknown version, an expression for a dimension.
	for _, c := range headerForms {
		out = append(out, npyWith(c.major, c.text, make([]byte, 24)))
	}
	return append(out,
		append([]byte("\x93NUMPY\x01\x00\x60\xea"), "{'descr': '<f4'"...),
		append([]byte("\x93NUMPY\x09\x00"), npyHeader("<f4", "(2, 3)")[8:]...),
		npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2**40, 3)}", nil),
		npyWith(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}", nil),
		npyWith(3, "{'descr': '<U1', 'fortran_order': False, 'shape': (0x_6,)}", make([]byte, 24)))
}

// arrayBytes is the memory an array's values take; for strings, their
// bytes (each element, at least a byte of the file, also has a header).
func arrayBytes(a Array) int64 {
	n := 4*int64(len(a.F32)) + 8*int64(len(a.I64))
	for _, s := range a.Str {
		n += int64(len(s))
	}
	return n
}

// checkArray fails unless a read array is whole: its values fill its shape.
func checkArray(t *testing.T, name string, a Array) {
	t.Helper()
	kinds := 0
	for _, set := range []bool{a.F32 != nil, a.I64 != nil, a.Str != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 && a.Len() != 0 {
		t.Fatalf("array %q: F32 %d, I64 %d and Str %d values", name, len(a.F32), len(a.I64), len(a.Str))
	}
	if n := len(a.F32) + len(a.I64) + len(a.Str); n != a.Len() {
		t.Fatalf("array %q: %d values for shape %v", name, n, a.Shape)
	}
}

// FuzzReadNPY feeds ReadNPY's decoder arbitrary files: it never panics,
// refuses with an error naming the array, returns only whole arrays, and
// allocates within its stated cap, about twice the file (float16 and int32
// widen) plus its fixed buffers, whatever the header announces.
func FuzzReadNPY(f *testing.F) {
	for _, s := range npySeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a, err := DecodeNPYBytes(data, "x", 0)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*uint64(len(data))+1<<20 {
			t.Fatalf("allocated %d bytes for a %d-byte file", alloc, len(data))
		}
		if err != nil {
			if !strings.Contains(err.Error(), `array "x"`) {
				t.Fatalf("error does not name the array: %v", err)
			}
			return
		}
		checkArray(t, "x", a)
		if arrayBytes(a) > 2*int64(len(data)) {
			t.Fatalf("%d bytes of values from a %d-byte file", arrayBytes(a), len(data))
		}
	})
}

// npzOf is a .npz archive of the given members (name → .npy bytes), each
// stored or deflated.
func npzOf(tb testing.TB, deflate bool, members map[string][]byte) []byte {
	tb.Helper()
	data, err := makeNPZ(deflate, members)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func makeNPZ(deflate bool, members map[string][]byte) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range members {
		m := zip.Store
		if deflate {
			m = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: m})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// FuzzReadNPZ feeds ReadNPZ's decoder arbitrary archives, seeded with every
// committed fixture: no panic, whole arrays only, and no array larger than
// its member's stored size allows (deflate's ratio bounds the rest).
func FuzzReadNPZ(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.npz")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	seeds := npySeeds()
	f.Add(npzOf(f, false, map[string][]byte{"anchors.npy": seeds[0], "index.npy": seeds[1]}))
	f.Add(npzOf(f, true, map[string][]byte{"anchors.npy": seeds[5], "a.npy": seeds[2]}))
	// A bomb's shape: a deflated member of zeros announcing a huge array.
	f.Add(npzOf(f, true, map[string][]byte{"z.npy": append(npyHeader("<f4", "(268435456,)"), make([]byte, 1<<16)...)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		arrays, err := readNPZ(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		var total int64
		for name, a := range arrays {
			checkArray(t, name, a)
			total += arrayBytes(a)
		}
		if total > 2*maxDeflateRatio*int64(len(data))+1<<20 {
			t.Fatalf("%d bytes of values from a %d-byte archive", total, len(data))
		}
		// Whatever reads as arrays must also make a bundle or say why.
		if b, err := FromArrays(arrays); err == nil {
			if err := b.Validate(); err != nil {
				t.Fatalf("FromArrays accepted a bundle Validate refuses: %v", err)
			}
		}
	})
}

// TestReadNPZBomb checks the caps on a deflated archive whose member
// announces 1 GiB of float32 in a 1 MiB stream of zeros: refused before
// the gigabyte is allocated, with the sizes in the message.
func TestReadNPZBomb(t *testing.T) {
	data := npzOf(t, true, map[string][]byte{"z.npy": append(npyHeader("<f4", "(268435456,)"), make([]byte, 1<<20)...)})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readNPZ(bytes.NewReader(data), int64(len(data)))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "needs 1073741824 bytes of data") {
		t.Fatalf("got %v, want the announced data refused", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("allocated %d bytes before refusing", alloc)
	}
	// A directory that lies about the uncompressed size beyond deflate's
	// ratio is refused before reading.
	lie := bytes.Clone(data)
	i := bytes.LastIndex(lie, []byte("PK\x01\x02")) // central directory entry
	copy(lie[i+24:], []byte{0xff, 0xff, 0xff, 0x7f})
	if _, err := readNPZ(bytes.NewReader(lie), int64(len(lie))); err == nil || !strings.Contains(err.Error(), "beyond deflate's") {
		t.Fatalf("got %v, want the claimed ratio refused", err)
	}
	// A directory claiming 2 GiB, compressed and not, for a stored member
	// of a tiny archive (archive/zip believes it); and a member claiming
	// more compressed bytes than the archive holds.
	small := npzOf(t, false, map[string][]byte{"a.npy": npyHeader("<f4", "(536870912,)")})
	for _, c := range []struct {
		off  int // in the central directory entry: 20 compressed, 24 uncompressed size
		want string
	}{{20, "compressed bytes, the archive has"}, {24, "stored member claims"}} {
		lie := bytes.Clone(small)
		i := bytes.LastIndex(lie, []byte("PK\x01\x02"))
		copy(lie[i+c.off:], []byte{0, 0, 0, 0x80})
		runtime.ReadMemStats(&before)
		_, err := readNPZ(bytes.NewReader(lie), int64(len(lie)))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("directory lie at +%d: %v, want %q", c.off, err, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("directory lie at +%d: allocated %d bytes before refusing", c.off, alloc)
		}
	}
}

// FuzzReadNPZMember fuzzes what lies inside an archive — a member's name,
// its .npy bytes, stored or deflated — past the zip checksums the raw
// archive fuzzer rarely gets through: no panic, whole arrays only, values
// no larger than twice the member's bytes.
func FuzzReadNPZMember(f *testing.F) {
	for i, s := range npySeeds() {
		f.Add("anchors.npy", s, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, name string, member []byte, deflate bool) {
		data, err := makeNPZ(deflate, map[string][]byte{name: member})
		if err != nil {
			return
		}
		arrays, err := readNPZ(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for n, a := range arrays {
			checkArray(t, n, a)
			if arrayBytes(a) > 2*int64(len(member)) {
				t.Fatalf("%d bytes of values from a %d-byte member", arrayBytes(a), len(member))
			}
		}
	})
}
