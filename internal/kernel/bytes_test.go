package kernel

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

func byteRows(rows []float32, d int) *ByteRows {
	return NewByteRows(rows, d, func(nb int, fill func(b0, b1 int)) {
		// Two calls (when there are two blocks), so that the ranges merge.
		fill(0, nb/2)
		fill(nb/2, nb)
	})
}

// TestByteRowsCodes: every value is within s_j·byteErr of its code's value
// lo_j + c·s_j, over columns of any scale, constant columns and columns
// with one outlier; the padding rows are code 0.
func TestByteRowsCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 50 {
		d, n := 1+rng.IntN(40), 1+rng.IntN(100)
		rows := make([]float32, n*d)
		kinds := make([]int, d)
		for j := range kinds {
			kinds[j] = rng.IntN(4)
		}
		scale := math.Ldexp(1, rng.IntN(200)-100)
		for i := range n {
			for j := range d {
				v := rng.NormFloat64() * scale
				switch kinds[j] {
				case 1:
					v = 3 * scale // constant
				case 2:
					if i == n/2 {
						v = 1e6 * scale // an outlier
					}
				case 3:
					v += 1e4 * scale // far from 0, a narrow range
				}
				rows[i*d+j] = float32(v)
			}
		}
		h := byteRows(rows, d)
		for i := range len(h.blocks) / d {
			b, l := i/HalfBlock, i%HalfBlock
			for j := range d {
				c := h.blocks[(b*d+j)*HalfBlock+l]
				if i >= n {
					if c != 0 {
						t.Fatalf("trial %d: padding row %d, coordinate %d: code %d", trial, i, j, c)
					}
					continue
				}
				// |x − lo − c·s| ≤ s·byteErr, exactly (big floats of
				// 2000 bits hold every such sum of float64s).
				x := float64(rows[i*d+j])
				exact := func(v float64) *big.Float { return new(big.Float).SetPrec(2000).SetFloat64(v) }
				e := exact(x)
				e.Sub(e, exact(h.lo[j]))
				e.Sub(e, new(big.Float).SetPrec(2000).Mul(exact(float64(c)), exact(h.step[j])))
				e.Abs(e)
				if lim := new(big.Float).SetPrec(2000).Mul(exact(h.step[j]), exact(byteErr)); e.Cmp(lim) > 0 {
					t.Fatalf("trial %d: row %d, coordinate %d (%v): code %d off by %v, more than %v", trial, i, j, x, c, e, lim)
				}
			}
		}
	}
}

// TestPowByteMask: the 8-bit screen by arithmetic (powScreen) never rules out a row whose exact
// score is at most q, over random m, p ∈ [0.5, 4], scales from 2⁻²⁰ to
// 2²⁰, anchors inside and far outside the rows' range, zero differences
// and constant columns; it rules out at least 90% of rows scoring above
// 1.5·q; and every level's masks are the portable kernel's.
func TestPowByteMask(t *testing.T) {
	var want [][]uint16
	first := true
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		var far, farOut, k int
		for _, d := range []int{1, 2, 7, 16, 33, 128} {
			for trial := range 20 {
				n := 1 + rng.IntN(90)
				_, p, log2m, anchor, rows, score := powCase(rng, n, d, trial%5 == 4, true)
				q := score[rng.IntN(n)]
				h := byteRows(rows, d)
				screen := h.powScreen(anchor, log2m, p, q)
				if screen == nil {
					t.Fatalf("d %d trial %d: no screen", d, trial)
				}
				masks := make([]uint16, (n+HalfBlock-1)/HalfBlock)
				screen(0, masks)
				if first {
					want = append(want, masks)
				} else if !slices.Equal(masks, want[k]) {
					t.Fatalf("d %d trial %d: masks %x, the portable kernel's %x", d, trial, masks, want[k])
				}
				k++
				f, out := checkMasks(t, fmt.Sprintf("d %d trial %d", d, trial), masks, score, q, 1.5)
				far, farOut = far+f, farOut+out
			}
		}
		first = false
		if farOut < far*9/10 {
			t.Errorf("%d of %d rows scoring above 1.5·q ruled out, want ≥ 90%%", farOut, far)
		}
	})
}

// TestPowByteShift: terms far above 2¹²⁸ (p = 10, m_j·|a_j − x_j| up to
// 7000) are scaled down, so that far rows are still ruled out and none
// within q is; extreme row scales give a screen that holds or none.
func TestPowByteShift(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		const d, n = 8, 200
		for _, scale := range []float64{1, 0x1p100, 0x1p-100, 1e-40} {
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(scale * 7000 * rng.Float64())
			}
			log2m, p := make([]float64, d), make([]float64, d)
			for j := range d {
				log2m[j], p[j] = -math.Log2(scale), 10
			}
			anchor := make([]float32, d)
			score := make([]float64, n)
			for i := range n {
				for j := range d {
					score[i] += math.Pow(math.Abs(float64(rows[i*d+j]))/scale, 10)
				}
			}
			sorted := slices.Clone(score)
			slices.Sort(sorted)
			q := sorted[n/10]
			out, far := screenFar(t, fmt.Sprintf("scale %g", scale), byteRows(rows, d), anchor, log2m, p, score, q)
			if out < far*9/10 {
				t.Errorf("scale %g: %d of %d rows above 2·q ruled out", scale, out, far)
			}
		}
	})
}

// TestByteRowsConstantColumn: a coordinate of one value at any scale
// leaves the screen working: rows of scale 2⁷⁰ or 2⁻⁷⁰ with a constant
// coordinate, the anchor off it by the rows' scale, still get a screen
// that rules out far rows and keeps those within q.
func TestByteRowsConstantColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	const d, n = 4, 64
	for _, scale := range []float64{0x1p70, 0x1p-70, 1} {
		rows := make([]float32, n*d)
		for i := range rows {
			rows[i] = float32(scale * rng.NormFloat64())
			if i%d == 0 {
				rows[i] = float32(3 * scale)
			}
		}
		anchor := []float32{float32(4 * scale), 0, 0, 0}
		log2m, p := make([]float64, d), make([]float64, d)
		score := make([]float64, n)
		for j := range d {
			log2m[j], p[j] = -math.Log2(scale), 2
		}
		for i := range n {
			for j := range d {
				x := (float64(rows[i*d+j]) - float64(anchor[j])) / scale
				score[i] += x * x
			}
		}
		sorted := slices.Clone(score)
		slices.Sort(sorted)
		q := sorted[n/4]
		out, far := screenFar(t, fmt.Sprintf("scale %g", scale), byteRows(rows, d), anchor, log2m, p, score, q)
		if far == 0 || out < far*9/10 {
			t.Errorf("scale %g: %d of %d rows above 2·q ruled out", scale, out, far)
		}
	}
}

// screenFar runs h's screens about anchor for q (by arithmetic, and by
// table at the level in use: the portable loop, or the vector kernel
// where the processor has one) on rows scoring score, fails the test
// where one is missing or rules out a row within q, and reports how many
// of the rows scoring above 2·q the arithmetic one rules out (out) of how
// many there are (far); the table's rules out at least as many.
func screenFar(t *testing.T, name string, h *ByteRows, anchor []float32, log2m, p, score []float64, q float64) (out, far int) {
	t.Helper()
	var outs [2]int
	for k, screen := range []func(int, []uint16){h.powScreen(anchor, log2m, p, q), h.lutScreen(anchor, log2m, p, q)} {
		if screen == nil {
			t.Fatalf("%s: screen %d: none", name, k)
		}
		masks := make([]uint16, (h.N+HalfBlock-1)/HalfBlock)
		screen(0, masks)
		far, outs[k] = checkMasks(t, fmt.Sprintf("%s: screen %d", name, k), masks, score, q, 2)
	}
	out, lutOut := outs[0], outs[1]
	if lutOut < out {
		t.Errorf("%s: the table rules out %d of %d rows above 2·q, the arithmetic %d", name, lutOut, far, out)
	}
	return out, far
}

// TestLUTMask: the screen by table never rules out a row whose exact
// score is at most q (over the cases of TestPowByteMask, screened from a
// random first block and then the blocks before it, so that the vector
// kernel's groups leave it tails),
// rules out at least 99% of rows scoring above 1.5·q, and its vector
// kernel's masks are the portable loop's bit for bit.
func TestLUTMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var far, farOut, vec int
	for _, d := range []int{1, 2, 7, 16, 33, 128, 300} {
		for trial := range 20 {
			n := 1 + rng.IntN(200)
			_, p, log2m, anchor, rows, score := powCase(rng, n, d, trial%5 == 4, true)
			q := score[rng.IntN(n)]
			if q == 0 {
				continue // no table for q = 0
			}
			h := byteRows(rows, d)
			screen := h.lutScreen(anchor, log2m, p, q)
			if screen == nil {
				t.Fatalf("d %d trial %d: no screen", d, trial)
			}
			nb := (n + HalfBlock - 1) / HalfBlock
			b0 := rng.IntN(nb)
			masks := make([]uint16, nb)
			screen(b0, masks[b0:])
			screen(0, masks[:b0])
			if lutByteV != nil {
				// The portable loop on the same tables (made again: the
				// same bits).
				want := make([]uint16, nb)
				tab := h.lutTables(anchor, log2m, p, q)
				lutMask(want, tab, h.blocks, lutLimit)
				if !slices.Equal(masks, want) {
					t.Fatalf("d %d trial %d: masks %x, the portable loop's %x", d, trial, masks, want)
				}
				vec++
			}
			f, out := checkMasks(t, fmt.Sprintf("d %d trial %d", d, trial), masks, score, q, 1.5)
			far, farOut = far+f, farOut+out
		}
	}
	if farOut < far*99/100 {
		t.Errorf("%d of %d rows scoring above 1.5·q ruled out, want ≥ 99%%", farOut, far)
	}
	t.Logf("%d of %d rows above 1.5·q ruled out; %d cases on the vector kernel", farOut, far, vec)
}

// checkMasks fails the test where masks rule out a row scoring at most q,
// and reports how many rows score above farAt·q (far) and how many of
// those the masks rule out (out).
func checkMasks(t *testing.T, name string, masks []uint16, score []float64, q, farAt float64) (far, out int) {
	t.Helper()
	for i, sc := range score {
		kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
		switch {
		case sc <= q && !kept:
			t.Fatalf("%s: row %d scoring %v ≤ q = %v ruled out", name, i, sc, q)
		case sc > farAt*q:
			far++
			if !kept {
				out++
			}
		}
	}
	return far, out
}

// TestLUTSkip: groups of eight blocks whose rows are all far from the
// anchor stop at the vector kernel's first look and skip the rest of
// their codes; the groups after them, of rows near the anchor, are still
// read from their own codes (near rows kept, far ruled out, the portable
// loop's masks).
func TestLUTSkip(t *testing.T) {
	const d, groups = 128, 6
	n := groups * 8 * HalfBlock
	rng := rand.New(rand.NewPCG(17, 18))
	rows := make([]float32, n*d)
	anchor := make([]float32, d)
	for i := range n {
		far := i/(8*HalfBlock)%2 == 0
		for j := range d {
			v := 0.01 * rng.NormFloat64()
			if far {
				v += 10
			}
			rows[i*d+j] = float32(v)
		}
	}
	log2m, p := make([]float64, d), make([]float64, d)
	for j := range p {
		p[j] = 2
	}
	h := byteRows(rows, d)
	masks := make([]uint16, n/HalfBlock)
	h.lutScreen(anchor, log2m, p, 1)(0, masks)
	want := make([]uint16, len(masks))
	lutMask(want, h.lutTables(anchor, log2m, p, 1), h.blocks, lutLimit)
	for b, m := range masks {
		in := uint16(0xffff)
		if b/8%2 == 0 {
			in = 0
		}
		if m != in || want[b] != in {
			t.Fatalf("block %d: mask %x, portable %x, want %x", b, m, want[b], in)
		}
	}
}
