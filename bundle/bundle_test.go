package bundle

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The fixture values, as testdata/make_fixtures.py writes them.
const fn, fk, fd, fc = 4, 3, 5, 2

func fixtureAnchor(i, j int) float32 { return float32(0.25*float64(i*fd+j) - 1) }
func fixturePositive(i, a, j int) float32 {
	return float32(0.5*float64((i*fk+a)*fd+j) + 0.125)
}
func fixtureNegative(i, a, j int) float32 { return float32(-0.375 * float64((i*fk+a)*fd+j)) }

func TestReadNumPyFixtures(t *testing.T) {
	t.Parallel()
	ex, err := Read("testdata/explicit.npz")
	if err != nil {
		t.Fatal(err)
	}
	in, err := Read("testdata/indexed.npz") // savez_compressed
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Bundle{ex, in} {
		if b.N != fn || b.K != fk || b.D != fd || b.KNeg != fk {
			t.Fatalf("shape N=%d K=%d D=%d KNeg=%d, want %d %d %d %d", b.N, b.K, b.D, b.KNeg, fn, fk, fd, fk)
		}
		for i := range fn {
			for j := range fd {
				if got := b.Anchors[i*fd+j]; got != fixtureAnchor(i, j) {
					t.Fatalf("anchors[%d][%d] = %v, want %v", i, j, got, fixtureAnchor(i, j))
				}
			}
			pd := b.PositiveDiffs(nil, i)
			for a := range fk {
				for j := range fd {
					if got, want := pd[a*fd+j], fixtureAnchor(i, j)-fixturePositive(i, a, j); got != want {
						t.Fatalf("positive diff [%d][%d][%d] = %v, want %v", i, a, j, got, want)
					}
				}
			}
		}
	}
	nd := ex.NegativeDiffs(nil, 1)
	if got, want := nd[2*fd+4], fixtureAnchor(1, 4)-fixtureNegative(1, 2, 4); got != want {
		t.Errorf("explicit negative diff = %v, want %v", got, want)
	}
	// negative_index[i][j] = (i+j+1) % n into the anchors.
	nd = in.NegativeDiffs(nil, 3)
	r := (3 + 1 + 1) % fn
	if got, want := nd[1*fd+2], fixtureAnchor(3, 2)-fixtureAnchor(r, 2); got != want {
		t.Errorf("indexed negative diff = %v, want %v", got, want)
	}
	if !slices.Equal(in.Labels, []int64{0, 1, 0, 1}) {
		t.Errorf("labels = %v", in.Labels)
	}
	if in.C != fc || in.Logits[3*fc+1] != 2 {
		t.Errorf("logits C=%d, logits[3][1]=%v, want 2 and 2", in.C, in.Logits[3*fc+1])
	}
	a, err := ReadNPY("testdata/anchors.npy")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Shape, []int{fn, fd}) || !slices.Equal(a.F32, ex.Anchors) {
		t.Errorf("anchors.npy: shape %v, data differs from the npz", a.Shape)
	}
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, want string }{
		{"overflow64.npz", `array "anchors": element [1][2] = 1e+39 overflows float32`},
		{"underflow64.npz", `array "anchors": element [2][3] = 1e-50 underflows to zero in float32`},
		{"shape.npz", `array "positives": shape (4, 3, 4), want (4, k, 5)`},
		{"nan.npz", `positives[2][1][3] is NaN`},
		{"index_range.npz", `negative_index[0][0] = 11 is outside the anchors' 4 rows`},
		{"missing.npz", `array "positives" (or "positive_index") is missing`},
		{"k0.npz", `positives: 0 positives per anchor, want at least 1`},
		{"nonexistent.npz", `no such file`},
	} {
		_, err := Read(filepath.Join("testdata", c.file))
		if err == nil {
			t.Errorf("%s: no error", c.file)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.file, err, c.want)
		}
		if !strings.Contains(err.Error(), c.file) {
			t.Errorf("%s: error %q does not name the file", c.file, err)
		}
	}
}

// TestReadConversions: bundles written by NumPy in float64, float16,
// int32 and Fortran order read the same values as their float32, int64,
// C-order twins (explicit.npz, indexed.npz), and say what was converted.
func TestReadConversions(t *testing.T) {
	t.Parallel()
	ex, err := Read("testdata/explicit.npz")
	if err != nil {
		t.Fatal(err)
	}
	in, err := Read("testdata/indexed.npz")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Converted != nil || in.Converted != nil {
		t.Errorf("float32 C-order files converted: %v, %v", ex.Converted, in.Converted)
	}
	for _, c := range []struct {
		file string
		twin *Bundle
		conv []string
	}{
		{"float64.npz", ex, []string{"anchors: float64 → float32"}},
		{"float16.npz", ex, []string{"anchors: float16 → float32"}},
		{"fortran.npz", ex, []string{"anchors: Fortran order → C order"}},
		{"twin64.npz", ex, []string{"anchors: float64 → float32", "negatives: float64 → float32, Fortran order → C order", "positives: float64 → float32"}},
		{"twin32.npz", in, []string{"anchors: Fortran order → C order", "labels: int32 → int64", "logits: float16 → float32",
			"negative_index: int32 → int64, Fortran order → C order", "positives: Fortran order → C order"}},
	} {
		b, err := Read(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if !slices.Equal(b.Converted, c.conv) {
			t.Errorf("%s: converted %q, want %q", c.file, b.Converted, c.conv)
		}
		if !slices.Equal(b.Anchors, c.twin.Anchors) || !slices.Equal(b.Positives, c.twin.Positives) {
			t.Errorf("%s: anchors or positives differ from the twin's", c.file)
		}
		if c.file == "twin64.npz" && !slices.Equal(b.Negatives, c.twin.Negatives) {
			t.Errorf("%s: negatives differ", c.file)
		}
		if c.file == "twin32.npz" && (!slices.Equal(b.NegativeIndex, c.twin.NegativeIndex) || !slices.Equal(b.Labels, c.twin.Labels) || !slices.Equal(b.Logits, c.twin.Logits)) {
			t.Errorf("%s: negative_index, labels or logits differ", c.file)
		}
	}
}

// TestCOrder: a Fortran-order array of any rank is reordered to C order.
func TestCOrder(t *testing.T) {
	t.Parallel()
	// shape (2, 3, 2); Fortran stores x[i][j][k] at i + 2j + 6k.
	shape := []int{2, 3, 2}
	f := make([]int, 12)
	for i := range 2 {
		for j := range 3 {
			for k := range 2 {
				f[i+2*j+6*k] = 100*i + 10*j + k
			}
		}
	}
	want := []int{0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121}
	if got := cOrder(f, shape); !slices.Equal(got, want) {
		t.Errorf("C order %v, want %v", got, want)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"explicit.npz", "indexed.npz"} {
		b, err := Read(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		b.Index = make([]int64, b.N) // where each anchor came from
		for i := range b.Index {
			b.Index[i] = int64(1000 + 7*i)
		}
		b.A, b.Activations = 2, make([]float32, 2*b.N) // per-layer summaries
		for i := range b.Activations {
			b.Activations[i] = float32(i) / 3
		}
		path := filepath.Join(t.TempDir(), name)
		if err := Write(path, b); err != nil {
			t.Fatal(err)
		}
		b2, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if !equalBundles(b, b2) {
			t.Errorf("%s: bundle changed in a write/read round trip", name)
		}
	}
}

// TestNumPyReadsWhatWeWrite has NumPy itself (Debian's python3-numpy, which
// the set-up script installs) load a bundle written by Write.
func TestNumPyReadsWhatWeWrite(t *testing.T) {
	t.Parallel()
	b, err := Read("testdata/indexed.npz")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.npz")
	if err := Write(path, b); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, numpy as np
z = np.load(sys.argv[1])
a, p, i, l, g = z["anchors"], z["positives"], z["negative_index"], z["labels"], z["logits"]
assert a.dtype == np.float32 and a.shape == (4, 5) and a.flags["C_CONTIGUOUS"], a
assert p.dtype == np.float32 and p.shape == (4, 3, 5)
assert i.dtype == np.int64 and i.shape == (4, 3) and l.shape == (4,) and g.shape == (4, 2)
assert (a == (0.25 * np.arange(20).reshape(4, 5) - 1)).all()
assert (p == 0.5 * np.arange(60).reshape(4, 3, 5) + 0.125).all()
assert (i == (np.arange(4)[:, None] + np.arange(3)[None, :] + 1) % 4).all()
print("ok")
`
	out, err := exec.Command("/usr/bin/python3", "-c", script, path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("numpy could not read the bundle Go wrote: %v\n%s", err, out)
	}
}

func equalBundles(a, b *Bundle) bool {
	return a.N == b.N && a.K == b.K && a.D == b.D && a.KNeg == b.KNeg && a.C == b.C &&
		slices.Equal(a.Anchors, b.Anchors) && slices.Equal(a.Positives, b.Positives) &&
		slices.Equal(a.Negatives, b.Negatives) && slices.Equal(a.NegativeIndex, b.NegativeIndex) &&
		slices.Equal(a.Pool, b.Pool) && slices.Equal(a.Labels, b.Labels) && slices.Equal(a.Logits, b.Logits) &&
		a.A == b.A && slices.Equal(a.Activations, b.Activations) && slices.Equal(a.Index, b.Index)
}

func TestActivationsValidated(t *testing.T) {
	t.Parallel()
	b, err := Read(filepath.Join("testdata", "indexed.npz"))
	if err != nil {
		t.Fatal(err)
	}
	b.A, b.Activations = 2, make([]float32, 2*b.N)
	b.Activations[3] = float32(math.Inf(1))
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "activations[1][1] is +Inf") {
		t.Errorf("infinite activation: error %v", err)
	}
	b.Activations = b.Activations[:3]
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "activations") {
		t.Errorf("short activations: error %v", err)
	}
}

func TestWriteIsAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "b.npz")
	bad := &Bundle{N: 1, K: 1, D: 2, Anchors: []float32{1, 2}, Positives: []float32{1}}
	if err := Write(path, bad); err == nil {
		t.Fatal("writing an inconsistent bundle: no error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("a failed write left %d files behind", len(entries))
	}
}

func TestFromLabels(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	const n, d, k = 60, 2, 5
	points := make([]float32, n*d)
	labels := make([]int64, n)
	for i := range n {
		labels[i] = int64(i % 3)
		points[i*d] = float32(i) // the first coordinate identifies the point
	}
	idx := rng.Perm(n)[:45]
	b, err := FromLabels(points, d, labels, idx, k, rng)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	inSplit := map[float32]bool{}
	for _, i := range idx {
		inSplit[float32(i)] = true
	}
	for a := range b.N {
		self := b.Anchors[a*d]
		seen := map[float32]bool{}
		for j := range k {
			p := b.Positives[(a*k+j)*d]
			if p == self {
				t.Fatalf("anchor %v is its own positive", self)
			}
			if seen[p] {
				t.Fatalf("anchor %v: positive %v drawn twice", self, p)
			}
			seen[p] = true
			if labels[int(p)] != b.Labels[a] || !inSplit[p] {
				t.Fatalf("anchor %v: positive %v has another label or lies outside the split", self, p)
			}
		}
		seen = map[float32]bool{}
		for _, r := range b.NegativeIndex[a*k : (a+1)*k] {
			if seen[float32(r)] {
				t.Fatalf("anchor %v: negative %d drawn twice", self, r)
			}
			seen[float32(r)] = true
			if b.Labels[r] == b.Labels[a] {
				t.Fatalf("anchor %v: negative %d has the same label", self, r)
			}
		}
	}
	// The same seed gives the same pairs.
	b2, _ := FromLabels(points, d, labels, idx, k, rand.New(rand.NewPCG(7, 7)))
	b3, _ := FromLabels(points, d, labels, idx, k, rand.New(rand.NewPCG(7, 7)))
	if !equalBundles(b2, b3) {
		t.Error("FromLabels is not deterministic for a fixed seed")
	}
	if _, err := FromLabels(points, d, labels, idx[:6], k, rng); err == nil {
		t.Error("too few points per label: no error")
	}
}

func TestSubsetKeepsNegativePool(t *testing.T) {
	t.Parallel()
	b, err := Read("testdata/indexed.npz")
	if err != nil {
		t.Fatal(err)
	}
	s := b.Subset([]int{3, 1})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.NegativeDiffs(nil, 0), b.NegativeDiffs(nil, 3)) ||
		!slices.Equal(s.PositiveDiffs(nil, 1), b.PositiveDiffs(nil, 1)) {
		t.Error("subset changed an anchor's pairs")
	}
}

// TestReadFeatures: a file of features alone ("embeddings" or "anchors",
// labels, logits) reads without positives; a bundle reads as a bundle; bad
// arrays are errors naming the file and the array.
func TestReadFeatures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, arrays map[string]Array) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := WriteNPZ(path, arrays); err != nil {
			t.Fatal(err)
		}
		return path
	}
	feats := write("f.npz", map[string]Array{"embeddings": Float32([]float32{1, 2, 3, 4, 5, 6}, 3, 2),
		"labels": Int64([]int64{0, 1, 0}, 3), "logits": Float32([]float32{1, 0, 0, 1, 1, 0}, 3, 2)})
	b, err := ReadFeatures(feats)
	if err != nil || b.N != 3 || b.D != 2 || b.K != 0 || b.C != 2 || len(b.Labels) != 3 {
		t.Fatalf("features: %+v, %v", b, err)
	}
	// A file of no inputs, or of none of the arrays named: each
	// said as the file has it (an OOD trial's messages spoke of anchors
	// and bundles, and an empty file's of "no anchors").
	for _, c := range []struct {
		arrays map[string]Array
		want   string
	}{
		{map[string]Array{"embeddings": Float32([]float32{}, 0, 4), "logits": Float32([]float32{}, 0, 2)}, "e.npz: embeddings: shape (0, 4): the file holds no inputs (0 rows)"},
		{map[string]Array{"X": Float32([]float32{1, 2}, 1, 2)}, `e.npz: no "embeddings" (or "anchors") array (have X)`},
	} {
		if _, err := ReadFeatures(write("e.npz", c.arrays)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	anchorsOnly := write("a.npz", map[string]Array{"anchors": Float32([]float32{1, 2}, 1, 2)})
	if _, err := Read(anchorsOnly); err == nil || !strings.Contains(err.Error(), `"positives" (or "positive_index") is missing`) || !strings.Contains(err.Error(), "ccs bundle") {
		t.Errorf("Read of features alone: %v", err)
	}
	if _, err := Read(feats); err == nil || !strings.Contains(err.Error(), "this is a file of embeddings") || !strings.Contains(err.Error(), "ccs bundle") {
		t.Errorf("Read of an embeddings file: %v", err)
	}
	full := write("b.npz", map[string]Array{"anchors": Float32([]float32{1, 2}, 1, 2), "positives": Float32([]float32{1, 2}, 1, 1, 2)})
	if b, err := ReadFeatures(full); err != nil || b.K != 1 {
		t.Errorf("a bundle: %+v, %v", b, err)
	}
	// An .npy is its anchors alone (np.save of a model's embeddings).
	npy := filepath.Join(dir, "x.npy")
	if err := WriteNPY(npy, Float32([]float32{1, 2, 3, 4, 5, 6}, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFeatures(npy); err != nil || b.N != 3 || b.D != 2 || b.K != 0 || b.Anchors[5] != 6 {
		t.Errorf(".npy: %+v, %v", b, err)
	}
	if err := WriteNPY(npy, Float32([]float32{1, 2, 3, float32(math.NaN()), 5, 6}, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFeatures(npy); err == nil || !strings.Contains(err.Error(), "x.npy: row 1, coordinate 1 is NaN") {
		t.Errorf(".npy with a NaN: %v", err)
	}
	// A text table and a pickle, each refused saying what to do.
	csv := filepath.Join(dir, "emb.csv")
	os.WriteFile(csv, []byte("0.12345678901234567890,0.12345678901234567890,0.12345678901234567890\n1,2,3\n"), 0o644)
	if _, err := ReadFeatures(csv); err == nil || !strings.Contains(err.Error(), `emb.csv: a text file ("0.12345678901234567890,0.12345678901234567890,0.123456789012…"), not embeddings: want .npy (n, d) or .npz ("embeddings" or "anchors"); np.save("emb.npy", np.loadtxt("emb.csv", delimiter=",")) converts it`) {
		t.Errorf("a CSV: %v", err)
	}
	// With a header line (a pandas to_csv), the advice skips it: np.loadtxt
	// refuses "f0" as a number.
	os.WriteFile(csv, []byte("\ufefff0,f1,\"f2\"\n0.5,1,-2e-3\n"), 0o644)
	if _, err := ReadFeatures(csv); err == nil || !strings.Contains(err.Error(), `np.save("emb.npy", np.loadtxt("emb.csv", delimiter=",", skiprows=1)) converts it`) {
		t.Errorf("a CSV with a header: %v", err)
	}
	pt := filepath.Join(dir, "emb.pt")
	os.WriteFile(pt, []byte("PK\x03\x04"), 0o644)
	for _, read := range []func(string) (*Bundle, error){ReadFeatures, Read} {
		if _, err := read(pt); err == nil || !strings.Contains(err.Error(), "emb.pt: a .pt file is a Python pickle, which ccs does not read") {
			t.Errorf("a .pt: %v", err)
		}
	}
	if err := WriteNPY(npy, Float32([]float32{1, 2, 3}, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFeatures(npy); err == nil || !strings.Contains(err.Error(), "x.npy") {
		t.Errorf(".npy of one dimension: %v", err)
	}
	for name, c := range map[string]struct {
		arrays map[string]Array
		want   string
	}{
		"nan.npz":    {map[string]Array{"anchors": Float32([]float32{1, float32(math.NaN())}, 1, 2)}, "nan.npz: anchors: row 0, coordinate 1 is NaN"},
		"inf.npz":    {map[string]Array{"embeddings": Float32([]float32{1, 2, 3, float32(math.Inf(1))}, 2, 2)}, "inf.npz: embeddings: row 1, coordinate 1 is +Inf (1 row of 2"},
		"none.npz":   {map[string]Array{"labels": Int64([]int64{0}, 1)}, `no "embeddings" (or "anchors") array (have labels)`},
		"labels.npz": {map[string]Array{"anchors": Float32([]float32{1, 2}, 1, 2), "labels": Int64([]int64{0, 1}, 2)}, `"labels"`},
	} {
		if _, err := ReadFeatures(write(name, c.arrays)); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestFloat16Exact: every one of the 65 536 float16 values converts to the
// float32 NumPy gives, bit for bit: subnormals, ±0, ±Inf and NaNs included.
func TestFloat16Exact(t *testing.T) {
	t.Parallel()
	arrays, err := ReadNPZ("testdata/half.npz")
	if err != nil {
		t.Fatal(err)
	}
	h, h32 := arrays["half"], arrays["half32"]
	if h.Converted != "float16 → float32" || len(h.F32) != 65536 || len(h32.F32) != 65536 {
		t.Fatalf("half: %q, %d and %d values", h.Converted, len(h.F32), len(h32.F32))
	}
	bad := 0
	for i := range h.F32 {
		if math.Float32bits(h.F32[i]) != math.Float32bits(h32.F32[i]) {
			if bad++; bad <= 5 {
				t.Errorf("float16 %#04x: %g (%#08x), NumPy %g (%#08x)", i, h.F32[i], math.Float32bits(h.F32[i]), h32.F32[i], math.Float32bits(h32.F32[i]))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 65536 values differ", bad)
	}
}

// TestNPYHeaderCap: a header announcing more than 64 KiB is refused before
// anything is allocated for it.
func TestNPYHeaderCap(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"\x93NUMPY\x02\x00\xff\xff\xff\x7f{}", "\x93NUMPY\x01\x00\xff\xff{}"} {
		_, err := DecodeNPY(strings.NewReader(h), "body", 100)
		want := "more than the 65536 allowed"
		if h[6] == 1 {
			want = "" // 65 535 bytes: allowed by the cap, then too short
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", h, err, want)
		}
	}
}

// TestNegatives: k distinct others per anchor, never the anchor, the same
// for the same seed.
func TestNegatives(t *testing.T) {
	t.Parallel()
	const n, k = 50, 7
	idx := Negatives(n, k, 3)
	if len(idx) != n*k || !slices.Equal(idx, Negatives(n, k, 3)) || slices.Equal(idx, Negatives(n, k, 4)) {
		t.Fatalf("%d indices; same seed equal, another seed different: want both", len(idx))
	}
	for a := range n {
		row := slices.Clone(idx[a*k : (a+1)*k])
		slices.Sort(row)
		if slices.Contains(row, int64(a)) || len(slices.Compact(row)) != k || row[0] < 0 || row[k-1] >= n {
			t.Fatalf("anchor %d: negatives %v", a, idx[a*k:(a+1)*k])
		}
	}
}

// TestPositiveIndex: a bundle whose positives are rows of a pool (or of
// its anchors) gives the same differences as the same bundle written out,
// reads back as written, survives Subset, and is checked.
func TestPositiveIndex(t *testing.T) {
	t.Parallel()
	const n, k, d = 5, 2, 3
	rng := rand.New(rand.NewPCG(4, 4))
	anchors, pool := make([]float32, n*d), make([]float32, 7*d)
	for i := range anchors {
		anchors[i] = float32(rng.NormFloat64())
	}
	for i := range pool {
		pool[i] = float32(rng.NormFloat64())
	}
	for _, c := range []struct {
		name string
		pool []float32
		rows int
	}{{"pool", pool, 7}, {"anchors", nil, n}} {
		idx := make([]int64, n*k)
		for i := range idx {
			idx[i] = int64(rng.IntN(c.rows))
			if c.pool == nil { // another row than the anchor's own
				idx[i] = int64((i/k + 1 + rng.IntN(c.rows-1)) % c.rows)
			}
		}
		ib := &Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: idx, PositivePool: c.pool}
		if err := ib.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		eb := ib.Explicit()
		if eb.PositiveIndex != nil || len(eb.Positives) != n*k*d {
			t.Fatalf("%s: Explicit kept the index", c.name)
		}
		for i := range n {
			if !slices.Equal(ib.PositiveDiffs(nil, i), eb.PositiveDiffs(nil, i)) || !slices.Equal(ib.PositiveDiff(nil, i, 1), eb.PositiveDiff(nil, i, 1)) {
				t.Fatalf("%s: anchor %d's differences differ from the written-out bundle's", c.name, i)
			}
		}
		path := filepath.Join(t.TempDir(), "b.npz")
		if err := Write(path, ib); err != nil {
			t.Fatal(err)
		}
		rb, err := Read(path)
		if err != nil || !slices.Equal(rb.PositiveIndex, idx) || !slices.Equal(rb.PositivePool, c.pool) || rb.Positives != nil {
			t.Fatalf("%s: read back %+v, %v", c.name, rb, err)
		}
		sub := ib.Subset([]int{3, 1})
		if !slices.Equal(sub.PositiveDiffs(nil, 0), ib.PositiveDiffs(nil, 3)) || !slices.Equal(sub.PositiveDiffs(nil, 1), ib.PositiveDiffs(nil, 1)) {
			t.Fatalf("%s: Subset moved the positives", c.name)
		}
	}
	others := []int64{1, 1, 0, 0, 0, 0, 0, 0, 0, 0} // no anchor's own row
	for _, c := range []struct {
		b    *Bundle
		want string
	}{
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: []int64{1, 2, 0, 3, 4, 5, 0, 0, 0, 0}}, "positive_index[2][1] = 5 is outside the anchors' 5 rows"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: []int64{1, 2, 0, 3, 4, 2, 0, 0, 0, 0}}, "positive_index[2][1] = 2 names its own anchor"},
		{&Bundle{N: n, K: k, D: d, KNeg: 1, Anchors: anchors, PositiveIndex: []int64{1, 2, 0, 3, 4, 1, 0, 0, 0, 0}, NegativeIndex: []int64{1, 2, 3, 3, 0}}, "negative_index[3][0] = 3 names its own anchor"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: make([]int64, n*k), PositivePool: pool[:4]}, "positive_pool: 4 values"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: make([]int64, n*k), Positives: make([]float32, n*k*d)}, "both positives and positive_index"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, Positives: make([]float32, n*k*d), PositivePool: pool}, "positive_pool: present without positive_index"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: make([]int64, n)}, "positive_index: 5 values"},
		// The labels positives share with their anchors (several labels a row).
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: others, PositiveLabels: []int64{1}}, "positive_labels: present without positive_label_start"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: others, PositiveLabelStart: []int64{0, 1}, PositiveLabels: []int64{1}}, "positive_label_start: 2 values, want 11"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: others, PositiveLabelStart: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12}, PositiveLabels: make([]int64, 10)}, "positive_label_start: from 0 to 12, want from 0 to 10"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: others, PositiveLabelStart: []int64{0, 1, 2, 3, 3, 5, 6, 7, 8, 9, 10}, PositiveLabels: make([]int64, 10)}, "positive_label_start: positive 1 of anchor 1 shares no label with it"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: others, PositiveLabelStart: []int64{0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, PositiveLabels: []int64{3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}}, "positive_labels[1] = 3 (positive 0 of anchor 0): want labels ≥ 0, ascending"},
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: others, PositiveLabelStart: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, PositiveLabels: []int64{0, -1, 0, 0, 0, 0, 0, 0, 0, 0}}, "positive_labels[1] = -1 (positive 1 of anchor 0)"},
		// A start past the labels' end mid-way (a damaged file): refused, not a panic.
		{&Bundle{N: n, K: k, D: d, Anchors: anchors, PositiveIndex: others, PositiveLabelStart: []int64{0, 11, 2, 3, 4, 5, 6, 7, 8, 9, 10}, PositiveLabels: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}, "positive_label_start: positive 0 of anchor 0 ends at 11, past positive_labels' 10"},
	} {
		if err := c.b.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

// TestFiniteFindsFirst: finite's block pass names the first ±Inf or NaN,
// wherever it lies (block edges, the tail, among subnormals and the
// largest finite values), as a plain scan does.
func TestFiniteFindsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	bad := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xffc00001)}
	for trial := range 2000 {
		n := 1 + rng.IntN(3000)
		x := make([]float32, n)
		for i := range x {
			switch rng.IntN(4) {
			case 0:
				x[i] = math.MaxFloat32
			case 1:
				x[i] = -math.SmallestNonzeroFloat32
			default:
				x[i] = float32(rng.NormFloat64())
			}
		}
		want := -1
		if trial%5 != 0 {
			for range 1 + rng.IntN(3) {
				i := rng.IntN(n)
				if trial%7 == 0 { // a block's edge
					i = min(n-1, 1023+rng.IntN(2))
				}
				x[i] = bad[rng.IntN(len(bad))]
			}
			want = slices.IndexFunc(x, func(v float32) bool { return v != v || math.IsInf(float64(v), 0) })
		}
		err := finite("a", x, n)
		switch {
		case want < 0 && err != nil:
			t.Fatalf("trial %d: %v on finite values", trial, err)
		case want >= 0 && (err == nil || !strings.HasPrefix(err.Error(), "a["+strconv.Itoa(want)+"] is ")):
			t.Fatalf("trial %d: %v, want a[%d] named", trial, err, want)
		}
	}
}

// TestDistinctPositives: an anchor that lists a positive twice counts it
// once; positives stored by value count as given.
func TestDistinctPositives(t *testing.T) {
	b := &Bundle{N: 3, K: 3, PositiveIndex: []int64{1, 2, 1, 0, 0, 0, 0, 1, 2}}
	if n := b.DistinctPositives(); n != 2+1+3 {
		t.Errorf("indexed: %d, want 6", n)
	}
	if n := (&Bundle{N: 4, K: 2, Positives: make([]float32, 8)}).DistinctPositives(); n != 8 {
		t.Errorf("by value: %d, want 8", n)
	}
}

// TestReadNotABundle: a file that is no .npz archive, given where a bundle
// goes (ccs calibrate -cal, evaluate -test, fit -train), is named for what
// it is — the embeddings' .npy, a text file — with the way to make a
// bundle of it, not only "not a valid zip file".
func TestReadNotABundle(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := WriteNPY(p("emb.npy"), Float32(make([]float32, 12), 4, 3)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("trials.txt"), []byte("1 id10270/a/00001.wav id10270/b/00002.wav\n"), 0o644)
	os.WriteFile(p("empty.npz"), nil, 0o644)
	for _, c := range []struct{ file, want string }{
		{"emb.npy", `emb.npy: a .npy array of shape (4, 3), not a bundle: a bundle is a .npz of anchors and their positives (positives, or positive_index), as ccs bundle -out writes one from embeddings and labels, groups or pairs (ccs bundle -embeddings ` + p("emb.npy") + ` -labels FILE -out DIR; ccs.bundle in Python)`},
		{"trials.txt", `trials.txt: a text file ("1 id10270/a/00001.wav id10270/b/00002.wav"), not a bundle: a bundle is a .npz of anchors and their positives (positives, or positive_index), as ccs bundle -out writes one from embeddings and labels, groups or pairs (ccs bundle -embeddings EMB.npy -labels FILE -out DIR`},
		{"empty.npz", `empty.npz: not a NumPy .npz archive: zip: not a valid zip file`},
	} {
		_, err := Read(p(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
}

// TestFromArraysSides: the positives and the negatives are each read
// embedded or by index (into the anchors or a pool), and each side's
// arrays at odds are refused, naming them.
func TestFromArraysSides(t *testing.T) {
	const n, d, k = 3, 2, 2
	f32 := func(shape ...int) Array {
		size := 1
		for _, s := range shape {
			size *= s
		}
		return Array{Shape: shape, F32: make([]float32, size)}
	}
	i64 := func(shape ...int) Array { return Array{Shape: shape, I64: make([]int64, shape[0]*shape[1])} }
	with := func(extra map[string]Array) map[string]Array {
		arrays := map[string]Array{"anchors": f32(n, d)}
		maps.Copy(arrays, extra)
		return arrays
	}
	for _, c := range []struct {
		name   string
		arrays map[string]Array
		want   string // the error; "" for none
	}{
		{"embedded", with(map[string]Array{"positives": f32(n, k, d), "negatives": f32(n, 3, d)}), ""},
		{"by index into pools", with(map[string]Array{"positive_index": i64(n, k), "positive_pool": f32(5, d), "negative_index": i64(n, 3), "negative_pool": f32(4, d)}), ""},
		{"no positives", with(nil), `array "positives" (or "positive_index") is missing`},
		{"both positives", with(map[string]Array{"positives": f32(n, k, d), "positive_index": i64(n, k)}), `both "positives" and "positive_index" are present; give one`},
		{"both negatives", with(map[string]Array{"positives": f32(n, k, d), "negatives": f32(n, k, d), "negative_index": i64(n, k)}), `both "negatives" and "negative_index" are present; give one`},
		{"positives of another n", with(map[string]Array{"positives": f32(n+1, k, d)}), `array "positives": shape (4, 2, 2), want (3, k, 2) to match anchors (3, 2)`},
		{"negatives of another d", with(map[string]Array{"positives": f32(n, k, d), "negatives": f32(n, k, d+1)}), `array "negatives": shape (3, 2, 3), want (3, kn, 2) to match anchors (3, 2)`},
		{"positive index of another n", with(map[string]Array{"positive_index": i64(n+1, k)}), `array "positive_index": shape (4, 2), want (3, k) to match anchors (3, 2)`},
		{"negative index of another n", with(map[string]Array{"positives": f32(n, k, d), "negative_index": i64(n-1, k)}), `array "negative_index": shape (2, 2), want (3, kn) to match anchors (3, 2)`},
		{"positive pool of another d", with(map[string]Array{"positive_index": i64(n, k), "positive_pool": f32(5, d+1)}), `array "positive_pool": shape (5, 3), want (m, 2)`},
		{"negative pool of another d", with(map[string]Array{"positives": f32(n, k, d), "negative_index": i64(n, k), "negative_pool": f32(5, d+1)}), `array "negative_pool": shape (5, 3), want (m, 2)`},
		{"positive pool beside positives", with(map[string]Array{"positives": f32(n, k, d), "negative_index": i64(n, 3), "positive_pool": f32(5, d)}), `array "positive_pool" is present without "positive_index"`},
		{"negative pool beside negatives", with(map[string]Array{"positives": f32(n, k, d), "negatives": f32(n, 3, d), "negative_pool": f32(5, d)}), `array "negative_pool" is present without "negative_index"`},
		{"negative pool alone", with(map[string]Array{"positives": f32(n, k, d), "negative_pool": f32(5, d)}), `array "negative_pool" is present without "negative_index"`},
		// A misnamed array: named, with the name meant.
		{"anchors misnamed", map[string]Array{"anchor": f32(n, d), "positive_index": i64(n, k)},
			`array "anchors" is missing (have [anchor positive_index]); "anchor" is no bundle's array: did you mean "anchors"?: a bundle holds`},
		{"anchors in another case", map[string]Array{"Anchors": f32(n, d), "positive_index": i64(n, k)}, `"Anchors" is no bundle's array: did you mean "anchors"?`},
		{"positive index misnamed", with(map[string]Array{"positive_indx": i64(n, k)}), `array "positives" (or "positive_index") is missing: a bundle needs each anchor's positives; "positive_indx" is no bundle's array: did you mean "positive_index"?; ccs bundle makes them`},
		{"positives misnamed", with(map[string]Array{"positive": f32(n, k, d)}), `"positive" is no bundle's array: did you mean "positives"?`},
		{"nothing near", map[string]Array{"x": f32(n, d), "index": i64(n, k)}, `array "anchors" is missing (have [index x]): a bundle holds`},
		// Blocks and indices into the anchors that no bundle holds.
		{"blocks of another n", with(map[string]Array{"positives": f32(n, k, d), "blocks": Int64([]int64{1, 2}, 2)}), `"blocks"`},
		{"negative blocks", with(map[string]Array{"positives": f32(n, k, d), "blocks": Int64([]int64{0, -1, 1}, n)}), `"blocks"`},
		{"a positive naming its anchor", with(map[string]Array{"positive_index": Int64([]int64{1, 2, 1, 0, 0, 1}, n, k)}), "positive_index[1][0] = 1 names its own anchor"},
		{"a negative naming its anchor", with(map[string]Array{"positives": f32(n, k, d), "negative_index": Int64([]int64{1, 2, 2}, n, 1)}), "negative_index[2][0] = 2 names its own anchor"},
	} {
		b, err := FromArrays(c.arrays)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case c.want != "" && strings.HasPrefix(c.want, `array "positives" (or`) && !errors.Is(err, ErrNoPositives):
			t.Errorf("%s: %v does not wrap ErrNoPositives", c.name, err)
		case c.want == "" && (b.K != k || b.KNeg != 3):
			t.Errorf("%s: k %d, kneg %d; want %d, 3", c.name, b.K, b.KNeg, k)
		}
	}
}

// TestPairingWarningNegatives: half or more of the negatives of their
// anchor's own label (failed at 1c23c4e: said only where the positives
// were wrong too, and ccs evaluate printed an exclusion of 9.44% for
// 100.00% without a word) are said with their count; a few (rows
// labelled wrongly, as TestPairingWarning's), negatives of other labels
// and unlabelled rows are not.
func TestPairingWarningNegatives(t *testing.T) {
	t.Parallel()
	base := func(neg []int64) *Bundle {
		return &Bundle{N: 4, D: 1, K: 1, KNeg: 1,
			Anchors:       []float32{0, 0.1, 5, 5.1},
			Labels:        []int64{0, 0, 1, 1},
			PositiveIndex: []int64{1, 0, 3, 2},
			NegativeIndex: neg,
		}
	}
	for _, c := range []struct {
		name string
		b    *Bundle
		want string
	}{
		{"all of the anchor's class", base([]int64{1, 0, 3, 2}), "4 of the 4 negatives (100.0%"},
		{"two of four", base([]int64{1, 0, 0, 0}), "2 of the 4 negatives (50.0%"},
		{"one of four", base([]int64{1, 2, 0, 0}), ""},
		{"other classes", base([]int64{2, 3, 0, 1}), ""},
	} {
		if err := c.b.Validate(); err != nil {
			t.Fatal(err)
		}
		w := c.b.PairingWarning()
		if c.want == "" && w != "" || c.want != "" && !strings.Contains(w, c.want) {
			t.Errorf("%s: %q, want %q", c.name, w, c.want)
		}
	}
	// Unlabelled anchors' negatives (unlabelled too: the same -1, which
	// no class is) are not counted.
	unlabelled := &Bundle{N: 6, D: 1, K: 1, KNeg: 1,
		Anchors:       []float32{0, 0.1, 5, 5.1, 9, 9.1},
		Labels:        []int64{-1, -1, -1, -1, 0, 0},
		PositiveIndex: []int64{1, 0, 3, 2, 5, 4},
		NegativeIndex: []int64{1, 0, 3, 2, 0, 1},
	}
	if w := unlabelled.PairingWarning(); strings.Contains(w, "negatives (") {
		t.Errorf("negatives without labels: %q, want none said", w)
	}
}
