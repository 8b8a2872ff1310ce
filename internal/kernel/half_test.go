package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestToHalf: every half float survives the round trip, and toHalf rounds
// any float32 to the nearest half (ties to even), as 11 significant bits
// in float64 do.
func TestToHalf(t *testing.T) {
	for h := range 1 << 16 {
		f := fromHalf(uint16(h))
		if f != f {
			if g := fromHalf(toHalf(f)); g == g {
				t.Fatalf("NaN half %#04x: came back %v", h, g)
			}
			continue
		}
		if got := toHalf(f); got != uint16(h) {
			t.Fatalf("half %#04x = %v: toHalf gives %#04x", h, f, got)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2_000_000 {
		x := float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(50)-30))
		if i%5 == 0 { // ties and near-ties
			x = fromHalf(uint16(rng.IntN(0x7c00))) + float32(rng.IntN(3)-1)*math.Nextafter32(0, 1)
		}
		want := nearestHalf(float64(x))
		if got := float64(fromHalf(toHalf(x))); got != want && !(math.IsInf(want, 0) && math.IsInf(got, 0)) {
			t.Fatalf("toHalf(%v) = %v, want %v", x, got, want)
		}
		if h := float64(fromHalf(toHalf(x))); math.Abs(x64(x)) < 65504 && math.Abs(x64(x)-h) > 0x1p-11*math.Abs(h)+0x1p-25 {
			t.Fatalf("toHalf(%v) = %v: off by more than halfRel·|h| + halfAbs", x, h)
		}
	}
}

func x64(x float32) float64 { return float64(x) }

// nearestHalf rounds x to a half float's precision: 11 significant bits,
// no finer than 2⁻²⁴, ties to even; ±Inf at 65520 and beyond.
func nearestHalf(x float64) float64 {
	if x == 0 {
		return x
	}
	_, e := math.Frexp(math.Abs(x)) // |x| ∈ [2^(e−1), 2^e)
	ulp := math.Ldexp(1, max(e-11, -24))
	r := math.RoundToEven(x/ulp) * ulp
	if math.Abs(r) > 65504 {
		return math.Copysign(math.Inf(1), x)
	}
	return r
}

// halfRows builds a HalfRows serially.
func halfRows(rows []float32, d int) *HalfRows {
	return NewHalfRows(rows, d, func(nb int, fill func(b0, b1 int)) { fill(0, nb) })
}

// TestSqHalfMask: at every level, no row within q of the anchor is ruled
// out, and every row beyond 1.01·q is (the half floats' error is about
// 2⁻¹² of the rows' norms); the padding rows never pass.
func TestSqHalfMask(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, d := range []int{1, 3, 4, 5, 16, 37, 128} {
			for trial := range 20 {
				n := 1 + rng.IntN(90)
				scale := math.Ldexp(1, rng.IntN(40)-20)
				rows := make([]float32, n*d)
				for i := range rows {
					rows[i] = float32(rng.NormFloat64() * scale)
				}
				anchor := make([]float32, d)
				for j := range anchor {
					anchor[j] = float32(rng.NormFloat64() * scale)
				}
				dist := make([]float64, n)
				for i := range n {
					var s float64
					for j := range d {
						x := float64(anchor[j]) - float64(rows[i*d+j])
						s += x * x
					}
					dist[i] = math.Sqrt(s)
				}
				q := dist[rng.IntN(n)]
				h := halfRows(rows, d)
				a := scaled(h, anchor)
				masks := make([]uint16, len(h.blocks)/(HalfBlock*d))
				r, c := h.sqHalfParams(q)
				sqHalfMask(masks, a, h.blocks, h.blockErr, r, c)
				for i := range len(masks) * HalfBlock {
					kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
					switch {
					case i >= n && kept:
						t.Fatalf("d %d trial %d: padding row %d kept", d, trial, i)
					case i < n && dist[i] <= q && !kept:
						t.Fatalf("d %d trial %d: row %d at %v ≤ q = %v ruled out", d, trial, i, dist[i], q)
					case i < n && dist[i] > 1.01*q && kept:
						t.Fatalf("d %d trial %d: row %d at %v > 1.01·q = %v kept", d, trial, i, dist[i], q)
					}
				}
			}
		}
	})
}

// TestPowHalfMask: at every level, no row whose generalized-ball score
// Σ (m_j·|a_j − x_j|)^{p_j} is at most q is ruled out — exponents below
// and above 1, rows at the anchor's coordinates, scales from 2⁻²⁰ to 2²⁰,
// zeros — and most rows beyond 1.5·q are. (The padding rows' bits mean
// nothing.)
func TestPowHalfMask(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		var far, farOut int
		for _, d := range []int{1, 2, 7, 16, 33, 128} {
			for trial := range 20 {
				n := 1 + rng.IntN(90)
				_, p, log2m, anchor, rows, score := powCase(rng, n, d, false, false)
				q := score[rng.IntN(n)]
				h := halfRows(rows, d)
				a := scaled(h, anchor)
				consts := make([]float32, 4*d)
				powHalfConsts(consts, a, log2m, p, h.log2)
				masks := make([]uint16, len(h.blocks)/(HalfBlock*d))
				powHalfMask(masks, consts, h.blocks, h.powHalfLimit(q, log2m, p))
				for i := range len(masks) * HalfBlock {
					kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
					switch {
					case i < n && score[i] <= q && !kept:
						t.Fatalf("d %d trial %d: row %d scoring %v ≤ q = %v ruled out", d, trial, i, score[i], q)
					case i < n && score[i] > 1.5*q:
						far++
						if !kept {
							farOut++
						}
					}
				}
			}
		}
		if farOut < far*9/10 {
			t.Errorf("%d of %d rows scoring above 1.5·q ruled out, want ≥ 90%%", farOut, far)
		}
	})
}

// powCase draws a generalized ball's test case for n rows of dimension d:
// m and p ∈ [0.5, 4] at a scale from 2⁻²⁰ to 2²⁰, an anchor (with far, far
// outside the rows' range), rows with zero differences, zeros and near
// ties (with constant, a constant last column), and the rows' exact
// scores.
func powCase(rng *rand.Rand, n, d int, far, constant bool) (m, p, log2m []float64, anchor, rows []float32, score []float64) {
	scale := math.Ldexp(1, rng.IntN(40)-20)
	m, p, log2m = make([]float64, d), make([]float64, d), make([]float64, d)
	for j := range d {
		m[j] = math.Exp(rng.NormFloat64()) / scale
		p[j] = 0.5 + 3.5*rng.Float64()
		log2m[j] = math.Log2(m[j])
	}
	anchor = make([]float32, d)
	for j := range anchor {
		anchor[j] = float32(rng.NormFloat64() * scale)
		if far {
			anchor[j] += float32(100 * scale)
		}
	}
	rows = make([]float32, n*d)
	for i := range rows {
		switch rng.IntN(10) {
		case 0:
			rows[i] = anchor[i%d] // a zero difference
		case 1:
			rows[i] = 0
		case 2:
			rows[i] = anchor[i%d] * (1 + float32(rng.NormFloat64())*1e-4)
		default:
			rows[i] = float32(rng.NormFloat64() * scale)
		}
		if constant && i%d == d-1 && d > 2 {
			rows[i] = float32(scale)
		}
	}
	score = make([]float64, n)
	for i := range n {
		for j := range d {
			score[i] += math.Pow(m[j]*math.Abs(float64(anchor[j])-float64(rows[i*d+j])), p[j])
		}
	}
	return m, p, log2m, anchor, rows, score
}

// TestHalfRowsExtremeScales: rows of the largest and the smallest float32
// magnitudes get a finite scale and bounds that still hold.
func TestHalfRowsExtremeScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const d, n = 5, 40
	for _, scale := range []float64{0x1p126, 0x1p-120, 0x1p-140, 1e-44} {
		rows := make([]float32, n*d)
		for i := range rows {
			rows[i] = float32(scale * rng.NormFloat64())
		}
		h := halfRows(rows, d)
		if math.IsInf(float64(h.scale()), 0) || h.scale() == 0 {
			t.Fatalf("scale %g: HalfRows scale %v", scale, h.scale())
		}
		anchor := make([]float32, d)
		dist := make([]float64, n)
		for i := range n {
			var s float64
			for j := range d {
				x := float64(rows[i*d+j])
				s += x * x
			}
			dist[i] = math.Sqrt(s)
		}
		q := dist[n/2]
		a, ok := h.ScaleAnchor(anchor)
		screen := h.SqScreen(a, q)
		if !ok || screen == nil {
			t.Fatalf("scale %g: no screen", scale)
		}
		masks := make([]uint16, len(h.blockErr))
		screen(0, masks)
		for i := range n {
			if dist[i] <= q && masks[i/HalfBlock]>>(i%HalfBlock)&1 == 0 {
				t.Fatalf("scale %g: row %d at %v ≤ q = %v ruled out", scale, i, dist[i], q)
			}
		}
	}
}

// TestHalfMaskLooks: powHalfMask stops adding a pair of blocks'
// coordinates (the portable kernel: a row's) once every row is above the
// limit, and goes on to the next: on collections of many blocks (odd and
// even numbers of them: pairs and a single one) whose rows are far from
// the anchor through a few large coordinates placed early, late or
// anywhere, some blocks with one row near the anchor, every row's mask
// bit is its whole sum's (every score is below a third of the limit or
// above thirty times it, far from any rounding), at every level. A look
// that stopped at a row within the limit, or a wrong step to the next
// pair, fails it; sqHalfMask, which does not look, is held to the same,
// and powByteMask (ByteRows), which looks as powHalfMask, too.
func TestHalfMaskLooks(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, d := range []int{1, 5, 16, 33, 37, 128, 200} {
			for trial := range 6 {
				nb := 2*rng.IntN(6) + 1 + trial%2 // odd and even block counts
				n := nb*HalfBlock - rng.IntN(HalfBlock)
				rows := make([]float32, n*d)
				near := make([]bool, n)
				for b := range nb {
					kind := rng.IntN(4) // 0: far early, 1: far late, 2: far at random places, 3: one near row
					at := rng.IntN(d)
					for l := range HalfBlock {
						i := b*HalfBlock + l
						if i >= n {
							break
						}
						row := rows[i*d : (i+1)*d]
						for j := range row {
							row[j] = float32(rng.NormFloat64() * 0.01)
						}
						if kind == 3 && l == at%HalfBlock {
							near[i] = true
							continue
						}
						var j int
						switch kind {
						case 0:
							j = rng.IntN(min(d, 3))
						case 1:
							j = d - 1 - rng.IntN(min(d, 3))
						default:
							j = (at + rng.IntN(3)) % d
						}
						row[j] = float32(10 + rng.Float64())
					}
				}
				anchor := make([]float32, d)
				h := halfRows(rows, d)
				a := scaled(h, anchor)
				// Near rows' squared norms are below 0.1, far rows' above 100.
				q := 1.0
				check := func(name string, masks []uint16) {
					t.Helper()
					for i := range n {
						kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
						if kept != near[i] {
							t.Fatalf("%s d %d trial %d (%d blocks): row %d kept %v, want %v", name, d, trial, nb, i, kept, near[i])
						}
					}
				}
				masks := make([]uint16, nb)
				r, c := h.sqHalfParams(math.Sqrt(q))
				sqHalfMask(masks, a, h.blocks, h.blockErr, r, c)
				check("sqHalfMask", masks)
				// m = 1, p from 1.5 to 2.5: near rows' scores below 0.3, far
				// rows' above 10^1.5; the limit for 1 (its slack: about 1.07).
				log2m, p := make([]float64, d), make([]float64, d)
				for j := range d {
					p[j] = 1.5 + rng.Float64()
				}
				consts := make([]float32, 4*d)
				powHalfConsts(consts, a, log2m, p, h.log2)
				clear(masks)
				powHalfMask(masks, consts, h.blocks, h.powHalfLimit(1, log2m, p))
				check("powHalfMask", masks)
				// The 8-bit copy's screen, which looks as powHalfMask.
				clear(masks)
				byteRows(rows, d).powScreen(anchor, log2m, p, 1)(0, masks)
				check("powByteMask", masks)
			}
		}
	})
}

// TestPowHalfMaskHugeTerms: where a coordinate's term is beyond float32
// (z from 104 to 136: the bits of w = 2²³·(z + 127) reach the NaNs and,
// from w = 2³¹, int32's overflow), powHalfMask keeps every row scoring at
// most q, rules out every row above q whose term is finite (only a NaN or
// an overflowed w may keep a row above q), and the vector kernels' masks
// equal the portable kernel's bit for bit; PowScreen, which scales such
// terms down, rules them out.
func TestPowHalfMaskHugeTerms(t *testing.T) {
	const d, n = 24, 200
	rng := rand.New(rand.NewPCG(11, 12))
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	// Row i's coordinate 0 at distance 2^e_i from the anchor, e_i from
	// −4 to 4: with m_0 = 2^30 and p_0 = 4, z_0 = 4·(30 + e_i), 104 to 136;
	// the other coordinates' terms are small.
	for i := range n {
		rows[i*d] = float32(math.Exp2(-4 + 8*float64(i)/n))
	}
	anchor := make([]float32, d)
	log2m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		p[j] = 1.5
	}
	log2m[0], p[0] = 30, 4
	score := make([]float64, n)
	for i := range n {
		for j := range d {
			score[i] += math.Pow(math.Exp2(log2m[j])*math.Abs(float64(rows[i*d+j])), p[j])
		}
	}
	q := score[n/4] // about 2^126: some rows kept, the rest above
	h := halfRows(rows, d)
	a := scaled(h, anchor)
	consts := make([]float32, 4*d)
	powHalfConsts(consts, a, log2m, p, h.log2)
	limit := h.powHalfLimit(q, log2m, p)
	if math.IsInf(float64(limit), 0) {
		t.Fatalf("limit for q = %v overflows", q)
	}
	var want []uint16
	atLevels(t, func(t *testing.T) {
		masks := make([]uint16, len(h.blockErr))
		powHalfMask(masks, consts, h.blocks, limit)
		for i := range n {
			kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
			if score[i] <= q && !kept {
				t.Fatalf("row %d scoring %v ≤ q = %v ruled out", i, score[i], q)
			}
		}
		if want == nil {
			want = masks // the portable kernel's: the first level
			return
		}
		if !slices.Equal(masks, want) {
			t.Errorf("masks %x, the portable kernel's %x", masks, want)
		}
	})
	// Coordinate 0's w for each row, as the kernels compute it: the test
	// must reach every regime, and rows above q whose terms stay finite
	// are ruled out.
	var finite, nans, over, finiteAbove, finiteOut int
	for i := range n {
		hv := fromHalf(h.blocks[i/HalfBlock*d*HalfBlock+i%HalfBlock])
		y := float32(math.FMA(float64(abs32(hv-consts[0])), float64(halfKeep), -float64(consts[3])))
		w := float32(math.FMA(float64(float32(int32(math.Float32bits(y)))), float64(consts[1]), float64(consts[2])))
		switch bits := truncInt32(w); {
		case bits == math.MinInt32:
			over++
		case bits>>23 == 0xff:
			nans++
		default:
			finite++
			if score[i] > q {
				finiteAbove++
				if want[i/HalfBlock]>>(i%HalfBlock)&1 == 0 {
					finiteOut++
				}
			}
		}
	}
	if finite == 0 || nans == 0 || over == 0 || finiteAbove == 0 {
		t.Fatalf("rows with a finite term %d (%d above q), NaN's bits %d, w beyond int32 %d: want each > 0", finite, finiteAbove, nans, over)
	}
	if finiteOut != finiteAbove {
		t.Errorf("%d of %d rows above q with finite terms ruled out", finiteOut, finiteAbove)
	}
	// PowScreen scales the terms below 2¹²¹: it keeps the rows at most q
	// and rules out every row above 1.1·q, the huge ones included.
	screen := h.PowScreen(a, log2m, p, q)
	if screen == nil {
		t.Fatal("PowScreen: no screen")
	}
	masks := make([]uint16, len(h.blockErr))
	screen(0, masks)
	for i := range n {
		kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
		if score[i] <= q && !kept || score[i] > 1.1*q && kept {
			t.Errorf("PowScreen: row %d scoring %v against q = %v kept %v", i, score[i], q, kept)
		}
	}
	// PowScreens: one anchor's constants for every q, the same masks as
	// PowScreen's (here with the terms scaled, and without).
	testPowScreens(t, h, a, log2m, p, score)
	for j := range log2m {
		log2m[j] = 0
	}
	testPowScreens(t, h, a, log2m, p, nil)
}

// testPowScreens: PowScreener.Masks for q at each of scores' deciles (or
// 1, 10, 100 without scores) and at 0 equals PowScreen's masks, and
// reports false where PowScreen is nil (q = +Inf).
func testPowScreens(t *testing.T, h *HalfRows, a []float32, log2m, p []float64, scores []float64) {
	t.Helper()
	sc := new(PowScreener)
	if !h.PowScreens(log2m, p).At(sc, a) {
		t.Fatal("PowScreens.At: false")
	}
	qs := []float64{0, 1, 10, 100, math.Inf(1)}
	if scores != nil {
		sorted := slices.Sorted(slices.Values(scores))
		qs = []float64{0, math.Inf(1)}
		for k := 1; k < 10; k++ {
			qs = append(qs, sorted[k*len(sorted)/10])
		}
	}
	nb := len(h.blockErr)
	for _, q := range qs {
		got, want := make([]uint16, nb), make([]uint16, nb)
		ok := sc.Masks(0, got, q)
		f := h.PowScreen(a, log2m, p, q)
		if ok != (f != nil) {
			t.Fatalf("q = %v: Masks reports %v, PowScreen nil is %v", q, ok, f == nil)
		}
		if f == nil {
			continue
		}
		f(0, want)
		if !slices.Equal(got, want) {
			t.Fatalf("q = %v: Masks %x, PowScreen's %x", q, got, want)
		}
		if sc.shift == 0 && scores != nil {
			t.Fatalf("the scaled test's terms were not scaled")
		}
	}
}

// scaled is anchor scaled as h's rows are (ScaleAnchor without its range
// check).
func scaled(h *HalfRows, anchor []float32) []float32 {
	a := make([]float32, len(anchor))
	for j, v := range anchor {
		a[j] = v * h.scale()
	}
	return a
}
