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

// TestPowByteMask: the 8-bit screen never rules out a row whose exact
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
				screen := h.PowScreen(anchor, log2m, p, q)
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
				for i := range n {
					kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
					switch {
					case score[i] <= q && !kept:
						t.Fatalf("d %d trial %d: row %d scoring %v ≤ q = %v ruled out", d, trial, i, score[i], q)
					case score[i] > 1.5*q:
						far++
						if !kept {
							farOut++
						}
					}
				}
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

// screenFar runs h's screen about anchor for q on rows scoring score,
// fails the test where it has none or rules out a row within q, and
// reports how many of the rows scoring above 2·q it rules out (out) of
// how many there are (far).
func screenFar(t *testing.T, name string, h *ByteRows, anchor []float32, log2m, p, score []float64, q float64) (out, far int) {
	t.Helper()
	screen := h.PowScreen(anchor, log2m, p, q)
	if screen == nil {
		t.Fatalf("%s: no screen", name)
	}
	masks := make([]uint16, (h.N+HalfBlock-1)/HalfBlock)
	screen(0, masks)
	for i, sc := range score {
		kept := masks[i/HalfBlock]>>(i%HalfBlock)&1 == 1
		if sc <= q && !kept {
			t.Fatalf("%s: row %d scoring %v ≤ q = %v ruled out", name, i, sc, q)
		}
		if sc > 2*q {
			far++
			if !kept {
				out++
			}
		}
	}
	return out, far
}
