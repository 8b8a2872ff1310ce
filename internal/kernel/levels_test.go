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
			transposeV(got, x, d, transposeTabs[d])
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
		// The anchored form, every row to its end: the full scores, the
		// special rows +Inf (items made so that anchor − item is each
		// special value of the first rows above).
		around := make([]float64, rows)
		it2 := append([]float32(nil), items...)
		for _, i := range []int{0, d, 2*d + d - 1, 3 * d} {
			it2[i] = anchor[i%d] - diffs[i]
		}
		it2[d] = anchor[0] - 1e-42 // rounds to anchor[0]: a zero, not a subnormal
		FastPowRowsAround(around, m, p, anchor, it2)
		want2 := make([]float64, rows)
		FastPowRows(want2, m, p, diffsOf(anchor, it2, d))
		for i := range rows {
			if around[i] != want2[i] && !(math.Abs(around[i]-want2[i]) <= 1e-6*want2[i]) {
				t.Fatalf("d=%d, row %d: around %v, on the differences %v", d, i, around[i], want2[i])
			}
		}
		if !math.IsInf(around[2], 1) || !math.IsInf(around[3], 1) {
			t.Fatalf("d=%d: rows with +Inf and NaN score %v, %v around, want +Inf", d, around[2], around[3])
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

// TestGemm: the product at every level against a float64 reference,
// within the float32 sum's bound |ĉ − c| ≤ γ_k·Σ_l |a_il·b_lj|,
// γ_k = k·2⁻²⁴/(1 − k·2⁻²⁴) (GemmErr), for shapes around the tiles' edges,
// A row-major and transposed, strides wider than the rows, and C's values
// outside its m×n untouched.
func TestGemm(t *testing.T) { atLevels(t, testGemm) }

func testGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	for _, m := range []int{1, 5, 6, 7, 13, 37} {
		for _, n := range []int{1, 15, 16, 17, 63, 64, 65, 130} {
			for _, k := range []int{0, 1, 7, 128, 300} {
				for _, trans := range []bool{false, true} {
					lda, ldb, ldc := k+3, n+5, n+2
					si, sk := lda, 1
					if trans { // A stored as Aᵀ, k rows of m
						lda = m + 3
						si, sk = 1, lda
					}
					a, b := rnd(max(1, m*k+lda*max(m, k))), rnd(max(1, k*ldb))
					c := rnd(m * ldc)
					before := slices.Clone(c)
					Gemm(m, n, k, a, si, sk, b, ldb, c, ldc)
					bound := GemmErr(k)
					for i := range m {
						for j := range ldc {
							got := c[i*ldc+j]
							if j >= n {
								if got != before[i*ldc+j] {
									t.Fatalf("m=%d n=%d k=%d trans=%v: C[%d][%d] beyond n written", m, n, k, trans, i, j)
								}
								continue
							}
							var want, mag float64
							for l := range k {
								p := float64(a[i*si+l*sk]) * float64(b[l*ldb+j])
								want += p
								mag += math.Abs(p)
							}
							if math.Abs(float64(got)-want) > bound*mag {
								t.Fatalf("m=%d n=%d k=%d trans=%v: C[%d][%d] = %v, want %v (bound %.3g)", m, n, k, trans, i, j, got, want, bound*mag)
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmPanics: slices shorter than the shapes are a programmer error.
func TestGemmPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Gemm with a short C did not panic")
		}
	}()
	Gemm(2, 2, 2, make([]float32, 4), 2, 1, make([]float32, 4), 2, make([]float32, 3), 2)
}

// TestSubRows64: SubRows64 at every level is float32(a − y) to the bit,
// for row lengths around the vector width.
func TestSubRows64(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 6))
		for d := 1; d <= 40; d++ {
			const rows = 5
			a, y := make([]float64, rows*d), make([]float64, d)
			for i := range a {
				a[i] = 1e3 * rng.NormFloat64()
			}
			for i := range y {
				y[i] = 1e3 * rng.NormFloat64()
			}
			got := make([]float32, rows*d)
			SubRows64(got, a, y)
			for i, v := range got {
				if want := float32(a[i] - y[i%d]); v != want {
					t.Fatalf("d=%d: value %d is %v, want %v", d, i, v, want)
				}
			}
		}
	})
}

// TestSub: Sub at every level gives a − b's float32 bits, at lengths 0–40
// and 1000, with special values (±0, ±Inf, NaN, subnormals, the largest
// float32), and in place (dst the same slice as a).
func TestSub(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 8))
		specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, -3e-39, math.MaxFloat32, -math.MaxFloat32}
		value := func() float32 {
			if rng.IntN(8) == 0 {
				return specials[rng.IntN(len(specials))]
			}
			return float32(rng.NormFloat64() * math.Exp(10*rng.NormFloat64()))
		}
		lengths := []int{1000}
		for n := range 41 {
			lengths = append(lengths, n)
		}
		for _, n := range lengths {
			a, b, got := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range n {
				a[i], b[i] = value(), value()
			}
			Sub(got, a, b)
			for i := range n {
				if want := a[i] - b[i]; math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Fatalf("n=%d: %v − %v is %v, want %v", n, a[i], b[i], got[i], want)
				}
			}
			Sub(a, a, b)
			for i := range n {
				if math.Float32bits(a[i]) != math.Float32bits(got[i]) {
					t.Fatalf("n=%d in place: value %d is %v, want %v", n, i, a[i], got[i])
				}
			}
		}
	})
}

// TestScreenMask: ScreenMask at every level marks exactly the values with
// norms − 2·prod ≤ bound, for lengths around the vector width, with
// values on the bound and a NaN (never kept).
func TestScreenMask(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 7))
		for n := 1; n <= 70; n++ {
			prod, norms := make([]float32, n), make([]float32, n)
			for j := range prod {
				prod[j], norms[j] = float32(rng.NormFloat64()), float32(rng.Float64())
			}
			const bound = 0.5
			norms[rng.IntN(n)], prod[0] = bound, 0
			prod[n-1] = float32(math.NaN())
			masks := make([]uint16, (n+7)/8)
			w := ScreenMask(masks, prod, norms, bound)
			for j := range n {
				got := masks[j/w]>>(j%w)&1 == 1
				if want := norms[j]-2*prod[j] <= bound; got != want {
					t.Fatalf("n=%d: value %d marked %v, want %v", n, j, got, want)
				}
			}
		}
	})
}

// TestMaxAbsGradRow: MaxAbs and gradRow at every level against their
// definitions, for lengths around the vector width, with zeros, a NaN
// (passed over by MaxAbs) and entries below the threshold.
func TestMaxAbsGradRow(t *testing.T) { atLevels(t, testMaxAbsGradRow) }

func testMaxAbsGradRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for d := 1; d <= 70; d++ {
		y, up, g := make([]float32, d), make([]float32, d), make([]float32, d)
		for j := range y {
			y[j] = float32(rng.NormFloat64())
			up[j] = float32(rng.Float64())
		}
		y[rng.IntN(d)] = 0
		var want float32
		for _, v := range y {
			want = max(want, float32(math.Abs(float64(v))))
		}
		if got := MaxAbs(y); got != want {
			t.Fatalf("d=%d: MaxAbs %v, want %v", d, got, want)
		}
		withNaN := slices.Clone(y)
		withNaN[rng.IntN(d)] = float32(math.NaN())
		if got := MaxAbs(withNaN); math.IsNaN(float64(got)) || got > want {
			t.Fatalf("d=%d: MaxAbs with a NaN %v, want at most %v", d, got, want)
		}
		const a, cw, thr = 1.7, -0.3, 0.5
		gmax := gradRow(g, y, up, a, cw, thr)
		var wmax float32
		for j := range y {
			var q float64
			if y[j] != 0 {
				q = float64(up[j]) * a / float64(y[j])
			}
			if math.Abs(q) < thr {
				q = 0
			}
			w := q * cw
			if math.Abs(float64(g[j])-w) > 1e-6*math.Abs(w) {
				t.Fatalf("d=%d: g[%d] = %v, want %v", d, j, g[j], w)
			}
			wmax = max(wmax, float32(math.Abs(w)))
		}
		if math.Abs(float64(gmax-wmax)) > 1e-6*float64(wmax) {
			t.Fatalf("d=%d: gradRow's largest |g| %v, want %v", d, gmax, wmax)
		}
	}
}

// TestRequires: every assembly function uses only the extensions its level
// checks for (detect): the AVX2 forms nothing of AVX-512 — on a processor
// without it they would stop with SIGILL, which tests on an AVX-512
// machine under CCS_KERNELS=avx2 cannot see — and the AVX-512 forms only
// F, DQ, VL and BMI2 besides, but for the functions in extra, whose
// further extensions setVector checks for itself. avo writes each
// function's requirements above it in vec_amd64.s.
func TestRequires(t *testing.T) {
	src, err := os.ReadFile("vec_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"AVX", "AVX2", "FMA3", "SSE", "SSE2", "MMX+"}
	allowed := map[string][]string{
		"256": append(slices.Clone(base), "F16C"),
		"512": append(slices.Clone(base), "F16C", "AVX512F", "AVX512DQ", "AVX512VL", "BMI2"),
	}
	extra := map[string][]string{"lutByte512": {"AVX512BW", "AVX512VBMI"}}
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
			if !slices.Contains(allowed[level], ext) && !slices.Contains(extra[name], ext) {
				t.Errorf("%s requires %s, which its level does not check", name, ext)
			}
		}
		n++
	}
	if n < 20 {
		t.Fatalf("%d functions found in vec_amd64.s", n)
	}
}

// TestNormSmallBwdSubnormals: the small-d backward kernel leaves out
// weights below float32's normal range (it runs with flush-to-zero and
// denormals-are-zero, which spare an Intel core a microcode assist per
// operation) while a normal weight adds in, and it gives the caller its
// MXCSR back: Go's own float32 arithmetic still makes subnormals after it.
func TestNormSmallBwdSubnormals(t *testing.T) { atLevels(t, testNormSmallBwdSubnormals) }

func testNormSmallBwdSubnormals(t *testing.T) {
	if lanes == 0 {
		return // no vector kernel at the portable level
	}
	const d = 3
	W := lanes
	rng := rand.New(rand.NewPCG(7, 7))
	x := make([]float32, W*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	m := []float32{1, 0.2, 0, 0, 1, 0.3, 0.1, 0, 1}
	const p = 1.5
	xt, y, up, out := make([]float32, d*W), make([]float32, d*W), make([]float32, d*W), make([]float32, 7*W)
	acc := make([]float32, d*d*W)
	for _, tc := range []struct {
		w        float32
		wantZero bool
	}{{1e-39, true}, {0x1p-127, true}, {1, false}} {
		phi := make([]float64, W)
		normSmallFwdV([][]float32{x}, d, m, p, 1/p, (1-p)/p, xt, y, up, out, transposeTabs[d], phi, make([]uint16, 1))
		w := make([]float64, W)
		for r := range W {
			w[r] = float64(tc.w)
		}
		clear(acc)
		normSmallBwdV(xt, y, up, d, out, acc, w, phi, p, p*p, make([]float64, W), make([]uint16, 1))
		if zero := !slices.ContainsFunc(acc, func(v float32) bool { return v != 0 }); zero != tc.wantZero {
			t.Errorf("weight %g: the lane sums all zero %v, want %v", tc.w, zero, tc.wantZero)
		}
	}
	// Compared as bits: with DAZ left set, a comparison would take the
	// subnormal 2⁻¹⁴⁰ for 0 too.
	if got := tiny[0] * tiny[1]; math.Float32bits(got) != math.Float32bits(0x1p-140) {
		t.Errorf("after the kernel Go's float32 2⁻⁷⁰·2⁻⁷⁰ = %g, want 2⁻¹⁴⁰: MXCSR left flushing", got)
	}
}

// tiny is two float32s whose product is subnormal, kept in a variable so
// that the compiler does not fold the product.
var tiny = []float32{0x1p-70, 0x1p-70}

// TestAddWiden: AddWiden gives the bits of Go's dst[i] += float64(x[i]) at
// every level, for every length from 0 to 40 and the single-norm's d² at
// d = 128 (the vector part and the scalar tail), with values of every
// magnitude, subnormal, zero and non-finite ones on either side, and
// nothing written past len(x).
func TestAddWiden(t *testing.T) { atLevels(t, testAddWiden) }

func testAddWiden(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	special32 := []float32{0, float32(math.Copysign(0, -1)), 0x1p-149, 1e-40, math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	special64 := []float64{0, math.Copysign(0, -1), 5e-324, math.MaxFloat64, math.Inf(-1), math.NaN()}
	lengths := append(make([]int, 0, 42), 128*128)
	for n := range 41 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		x := make([]float32, n)
		dst := make([]float64, n+3)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30)))
			if rng.IntN(8) == 0 {
				x[i] = special32[rng.IntN(len(special32))]
			}
		}
		for i := range dst {
			dst[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(80)-40))
			if rng.IntN(8) == 0 {
				dst[i] = special64[rng.IntN(len(special64))]
			}
		}
		want := slices.Clone(dst)
		for i, v := range x {
			want[i] += float64(v)
		}
		AddWiden(dst[:n], x)
		for i := range dst {
			if math.Float64bits(dst[i]) != math.Float64bits(want[i]) && !(want[i] != want[i] && dst[i] != dst[i]) {
				t.Fatalf("n=%d: dst[%d] = %g, want %g", n, i, dst[i], want[i])
			}
		}
	}
}

// TestMulDiv: MulDiv gives the bits of Go's c * x[i] / n at every level,
// for every length from 0 to 40 (the vector part and the scalar tail),
// subnormal, huge, zero and non-finite values included.
func TestMulDiv(t *testing.T) { atLevels(t, testMulDiv) }

func testMulDiv(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	special := []float64{0, math.Copysign(0, -1), 5e-324, 1e-310, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	for n := range 41 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
			if rng.IntN(8) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		for _, cn := range [][2]float64{{-7, 12800}, {0.3, 3}, {-1e300, 1e-10}, {2.5, 1e308}} {
			c, nn := cn[0], cn[1]
			dst := make([]float64, n)
			MulDiv(dst, x, c, nn)
			for i, v := range x {
				if want := c * v / nn; math.Float64bits(dst[i]) != math.Float64bits(want) && !(want != want && dst[i] != dst[i]) {
					t.Fatalf("n=%d, c=%g, n=%g: MulDiv(%g) = %g, want %g", n, c, nn, v, dst[i], want)
				}
			}
		}
	}
}
