package kernel

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// atLevels runs f once at each level the processor has, from the portable
// kernels up, and restores the level in use.
func atLevels(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := current
	defer setLevel(saved)
	for l := portable; l <= detected; l++ {
		setLevel(l)
		t.Run(l.String(), f)
	}
}

// TestChoose: CCS_KERNELS lowers the level, never raises it, and a value
// not understood is said so.
func TestChoose(t *testing.T) {
	for _, c := range []struct {
		best level
		want string
		got  level
		note bool
	}{
		{avx512, "", avx512, false},
		{avx512, "avx2", avx2, true},
		{avx512, "PORTABLE", portable, true},
		{avx512, "avx512", avx512, false},
		{avx2, "avx512", avx2, true},
		{portable, "avx2", portable, true},
		{avx512, "sse", avx512, true},
	} {
		got, note := choose(c.best, c.want)
		if got != c.got || (note != "") != c.note {
			t.Errorf("choose(%v, %q) = %v, %q; want %v (a note: %v)", c.best, c.want, got, note, c.got, c.note)
		}
	}
	t.Logf("%s", Describe())
}

// TestTranspose: the block transposer puts coordinate l of row r at l·w+r
// for every d below 16.
func TestTranspose(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		if transposeV == nil {
			t.Skip("the portable level does not transpose")
		}
		W := lanes
		for d := 1; d < 16; d++ {
			x := make([]float32, W*d)
			for i := range x {
				x[i] = float32(i + 1)
			}
			got := make([]float32, W*d)
			transposeV(got, x, d)
			for l := range d {
				for r := range W {
					if got[l*W+r] != x[r*d+l] {
						t.Fatalf("d=%d: coordinate %d of row %d is %v, want %v", d, l, r, got[l*W+r], x[r*d+l])
					}
				}
			}
		}
	})
}

// TestFastPowRows: FastPowRows at every level agrees with the portable form
// to float32 rounding of the lane sums (every d from 1 to 40 and 128: full
// vectors and tails; the implementations differ by the polynomials'
// rounding, within geometry's FastTolerance), including rows with zeros, subnormal, +Inf and NaN
// coordinates (+Inf); FastPowRowsBound's rows that do not stop are the same
// scores, and those that stop are above the limit and below their full
// score (up to rounding).
func TestFastPowRows(t *testing.T) { atLevels(t, testFastPowRows) }

func testFastPowRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	dims := []int{128}
	for d := 1; d <= 40; d++ {
		dims = append(dims, d)
	}
	for _, d := range dims {
		const rows = 37
		m, p := make([]float32, d), make([]float32, d)
		for j := range d {
			m[j] = float32(0.2 + 3*rng.Float64())
			p[j] = float32(0.5 + 4*rng.Float64())
		}
		anchor := make([]float32, d)
		items := make([]float32, rows*d)
		for j := range anchor {
			anchor[j] = float32(rng.NormFloat64())
		}
		for i := range items {
			items[i] = float32(rng.NormFloat64())
		}
		diffs := make([]float32, rows*d)
		for i := range diffs {
			diffs[i] = anchor[i%d] - items[i]
		}
		diffs[0] = 0                          // a zero coordinate
		diffs[d] = 1e-42                      // subnormal: +Inf
		diffs[2*d+d-1] = float32(math.Inf(1)) // +Inf
		diffs[3*d] = float32(math.NaN())      // NaN: +Inf
		want, got := make([]float64, rows), make([]float64, rows)
		fastPowRowsPortable(want, m, p, diffs)
		FastPowRows(got, m, p, diffs)
		for i := range rows {
			if want[i] != got[i] && !(math.Abs(got[i]-want[i]) <= 2e-5*want[i]) {
				t.Fatalf("d=%d, row %d: %v, portable %v", d, i, got[i], want[i])
			}
		}
		for i := 1; i <= 3; i++ {
			if !math.IsInf(got[i], 1) {
				t.Fatalf("d=%d, row %d (not normal): %v, want +Inf", d, i, got[i])
			}
		}
		// The bounded form, on anchor − item, at a limit near the median.
		full := make([]float64, rows)
		FastPowRows(full, m, p, diffsOf(anchor, items, d))
		limit := median(full)
		bound := make([]float64, rows)
		FastPowRowsBound(bound, m, p, anchor, items, limit)
		for i := range rows {
			switch {
			case bound[i] > limit:
				if !(bound[i] <= full[i]*(1+1e-6)) {
					t.Fatalf("d=%d, row %d: stopped at %v, above its full score %v", d, i, bound[i], full[i])
				}
			case math.Abs(bound[i]-full[i]) > 1e-6*full[i]:
				t.Fatalf("d=%d, row %d: %v below the limit %v, full score %v", d, i, bound[i], limit, full[i])
			}
			if full[i] > limit*(1+1e-6) && !(bound[i] > limit) {
				t.Fatalf("d=%d, row %d: full score %v above the limit %v, bounded %v", d, i, full[i], limit, bound[i])
			}
		}
		// A subnormal coordinate: +Inf unless the row stops.
		a2 := append([]float32(nil), anchor...)
		a2[0], items[0] = 2e-42, 1e-42
		FastPowRowsBound(bound[:1], m, p, a2, items[:d], math.Inf(1))
		if !math.IsInf(bound[0], 1) {
			t.Fatalf("d=%d: a subnormal coordinate scores %v, want +Inf", d, bound[0])
		}
	}
}

func diffsOf(anchor, items []float32, d int) []float32 {
	x := make([]float32, len(items))
	for i := range x {
		x[i] = anchor[i%d] - items[i]
	}
	return x
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// TestMatRows: the single-norm's vector product y = x·mt against the
// float64 product, within float32 rounding of d terms, for odd and even
// row counts and column counts that leave 0–3 vectors after the tiles of
// four.
func TestMatRows(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		if matRowsV == nil {
			t.Skip("no vector product at the portable level")
		}
		rng := rand.New(rand.NewPCG(3, 3))
		for _, nv := range []int{1, 2, 3, 4, 5, 7, 8, 9} {
			d := nv * lanes
			mt := make([]float32, d*d)
			for i := range mt {
				mt[i] = float32(rng.NormFloat64())
			}
			for _, r := range []int{1, 2, 3, 10} {
				x := make([]float32, r*d)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				y := make([]float32, r*d)
				mulRows(y, x, mt, make([]float32, 4*d), d)
				for i := range r {
					for k := range d {
						var want, mag float64
						for l := range d {
							p := float64(x[i*d+l]) * float64(mt[l*d+k])
							want += p
							mag += math.Abs(p)
						}
						if math.Abs(float64(y[i*d+k])-want) > 1e-6*mag*float64(d) {
							t.Fatalf("d=%d, %d rows: y[%d][%d] = %v, want %v", d, r, i, k, y[i*d+k], want)
						}
					}
				}
			}
		}
	})
}

// TestRequires: every assembly function uses only the extensions its level
// checks for (detect): the AVX2 forms nothing of AVX-512 — on a processor
// without it they would stop with SIGILL, which tests on an AVX-512
// machine under CCS_KERNELS=avx2 cannot see — and the AVX-512 forms only
// F, DQ, VL and BMI2 besides. avo writes each function's requirements
// above it in vec_amd64.s.
func TestRequires(t *testing.T) {
	src, err := os.ReadFile("vec_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"AVX", "AVX2", "FMA3", "SSE", "SSE2", "MMX+"}
	allowed := map[string][]string{
		"256": base,
		"512": append(slices.Clone(base), "AVX512F", "AVX512DQ", "AVX512VL", "BMI2"),
	}
	lines := strings.Split(string(src), "\n")
	n := 0
	for i, line := range lines {
		name, ok := strings.CutPrefix(line, "TEXT ·")
		if !ok {
			continue
		}
		name = name[:strings.Index(name, "(")]
		level := name[len(name)-3:]
		if allowed[level] == nil {
			t.Fatalf("%s: no level suffix", name)
		}
		req, ok := strings.CutPrefix(lines[i-1], "// Requires: ")
		if !ok {
			t.Fatalf("%s: no Requires line above it", name)
		}
		for _, ext := range strings.Split(req, ", ") {
			if !slices.Contains(allowed[level], ext) {
				t.Errorf("%s requires %s, which its level does not check", name, ext)
			}
		}
		n++
	}
	if n < 20 {
		t.Fatalf("%d functions found in vec_amd64.s", n)
	}
}
