package bundle

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRowFilter: a filter holds every row added, the rows of another
// bundle at about its false-positive rate (≤ 10⁻³ over 200 000 rows), a
// row differing in one value's last bit not; it reads back from its JSON
// to the same answers, and a file whose bits do not fit its rows is
// refused.
func TestRowFilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gauss := func(n, d int) *Bundle { return gaussAnchors(rng, n, d) }
	fit, val := gauss(3000, 16), gauss(500, 16)
	f := NewRowFilter(fit, val, nil)
	if f.Rows != 3500 || f.Count(fit) != 3000 || f.Count(val) != 500 {
		t.Fatalf("rows %d, holds %d of fit, %d of val", f.Rows, f.Count(fit), f.Count(val))
	}
	other := gauss(200_000, 16)
	c := f.Count(other)
	t.Logf("%d of 200 000 other rows held", c)
	if c > 200 {
		t.Errorf("%d of 200 000 other rows held: a rate of %.2g, want about 5e-4", c, float64(c)/200_000)
	}
	near := &Bundle{N: 1, D: 16, Anchors: append([]float32(nil), fit.Anchors[:16]...)}
	near.Anchors[7] = math.Float32frombits(math.Float32bits(near.Anchors[7]) ^ 1)
	if f.Count(near) != 0 {
		t.Error("a row one bit away is held")
	}
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var back RowFilter
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Count(fit) != 3000 || back.Count(other) != f.Count(other) || len(raw) > 3500*2*4/3+100 {
		t.Errorf("read back: %d of fit, %d of other (%d), %d bytes", back.Count(fit), back.Count(other), f.Count(other), len(raw))
	}
	for _, c := range []struct{ json, want string }{
		{strings.Replace(string(raw), `"rows":3500`, `"rows":3600`, 1), "row filter: 7000 bytes of bits for 3600 rows, want 7200"},
		{`{"rows": 1, "bits": "AAAA"}`, "row filter: 3 bytes of bits for 1 rows, want 8"},
		{`{"rows": -1, "bits": ""}`, "row filter: -1 rows"},
		{`{"rows": 1, "bits": "!!!!!!!!!!!!"}`, "row filter: bits: illegal base64"},
		{`{"rows": 1, "bits": "AAAAAAAAAAA=", "x": 1}`, `unknown field "x"`},
		{`{"rows": 1, "bits": "` + strings.Repeat("A", 1000) + `"}`, "row filter: 1000 characters of bits for 1 rows"},
	} {
		var g RowFilter
		if err := json.Unmarshal([]byte(c.json), &g); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s: %v, want %q", c.json, err, c.want)
		}
	}
}

// BenchmarkRowFilter: the filter of a fit split of 20 000 rows at d = 768
// (what ccs fit adds to a set) and a count of 4 000 calibration rows
// against it (what ccs calibrate adds).
func BenchmarkRowFilter(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	fit, cal := gaussAnchors(rng, 20_000, 768), gaussAnchors(rng, 4_000, 768)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			NewRowFilter(fit)
		}
	})
	f := NewRowFilter(fit)
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			f.Count(cal)
		}
	})
}

// gaussAnchors is a bundle of n standard normal anchors of dimension d.
func gaussAnchors(rng *rand.Rand, n, d int) *Bundle {
	b := &Bundle{N: n, D: d, Anchors: make([]float32, n*d)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(rng.NormFloat64())
	}
	return b
}

// TestRowIndex: RowIndex knows its rows bit for bit — a row's copy is
// found, a row one ulp off, of another length or with −0 for 0 is not —
// and so answers no false positive, where RowFilter answers about one new
// row in 2 000: of 20 000 rows never added, the index finds none.
func TestRowIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const n, d = 500, 6
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	rows[3*d] = 0
	x := RowIndexOf(rows, d)
	for i := range n {
		if !x.Has(slices.Clone(rows[i*d : (i+1)*d])) {
			t.Fatalf("row %d not found", i)
		}
	}
	off := slices.Clone(rows[:d])
	off[2] = math.Nextafter32(off[2], 10)
	neg := slices.Clone(rows[3*d : 4*d])
	neg[0] = float32(math.Copysign(0, -1))
	for _, r := range [][]float32{off, neg, rows[:d-1], nil} {
		if x.Has(r) {
			t.Errorf("%v found", r)
		}
	}
	var none *RowIndex
	if none.Has(rows[:d]) {
		t.Error("a nil index found a row")
	}
	filter := RowFilterOf(rows, d)
	falseFilter, falseIndex := 0, 0
	row := make([]float32, d)
	for range 20000 {
		for j := range row {
			row[j] = float32(rng.NormFloat64())
		}
		if filter.Has(row) {
			falseFilter++
		}
		if x.Has(row) {
			falseIndex++
		}
	}
	if falseIndex != 0 {
		t.Errorf("the index found %d rows never added", falseIndex)
	}
	t.Logf("the filter matched %d of 20 000 rows never added", falseFilter)
}

// TestSharedAnchors: the exact count of anchors that are another
// bundle's rows — a copy reordered, a subset, a few shared, none; -0 and
// 0 are other rows (bit for bit), as the filter takes them.
func TestSharedAnchors(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 44))
	const n, d = 500, 3
	a := &Bundle{N: n, D: d, Anchors: make([]float32, n*d)}
	for i := range a.Anchors {
		a.Anchors[i] = float32(rng.NormFloat64())
	}
	perm := rng.Perm(n)
	subset := &Bundle{N: 200, D: d}
	for _, i := range perm[:200] {
		subset.Anchors = append(subset.Anchors, a.Anchors[i*d:(i+1)*d]...)
	}
	other := &Bundle{N: n, D: d, Anchors: make([]float32, n*d)}
	for i := range other.Anchors {
		other.Anchors[i] = float32(rng.NormFloat64())
	}
	copy(other.Anchors, a.Anchors[:30*d]) // 30 shared
	zero := &Bundle{N: 1, D: d, Anchors: []float32{0, 0, 0}}
	negZero := &Bundle{N: 1, D: d, Anchors: []float32{float32(math.Copysign(0, -1)), 0, 0}}
	for _, c := range []struct {
		name     string
		b, other *Bundle
		want     int
	}{
		{"a subset, reordered", subset, a, 200}, {"a few shared", other, a, 30}, {"itself", a, a, n},
		{"-0 against 0", negZero, zero, 0}, {"0 against 0", zero, zero, 1},
		{"another dimension", &Bundle{N: 1, D: 2, Anchors: []float32{1, 2}}, a, 0},
	} {
		if got := SharedAnchors(c.b, c.other); got != c.want {
			t.Errorf("%s: %d shared, want %d", c.name, got, c.want)
		}
	}
}
