package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestSmallGroups: the small-d kernels give the same bits whether a
// group holds one block or many (the weights drawn a group at a time, the
// backward passes in block order), at every vector level, for every d
// below 16 and row counts that end a group, a block or neither; and the
// weights are asked for every row once, in order; scores alone are the
// same bits as with gradients.
func TestSmallGroups(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		if lanes == 0 {
			t.Skip("the portable level has no small-d vector kernels") // atLevels runs the vector levels too
		}
		rng := rand.New(rand.NewPCG(7, 7))
		for trial := range 60 {
			d := 1 + trial%15
			n := 1 + rng.IntN(3*smallGroupRows)
			if trial%4 == 0 {
				n += 2 * normSmallFlush // lane sums flushed within a call
			}
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(rng.NormFloat64())
			}
			const big = float32(3e38)
			var odd []int // rows made special: y = M·x past float32's range (u = Inf·0)
			for range rng.IntN(4) {
				r := rng.IntN(n)
				odd = append(odd, r)
				rows[r*d] = big
			}
			spans := randSpans(rng, rows, d) // many blocks straddle two spans
			m := make([]float64, d*d)
			for i := range m {
				m[i] = rng.NormFloat64()
				if i%d == 0 {
					m[i] = 10 // every y_k of a special row overflows
				}
			}
			p := 1.2 + rng.Float64()
			logm, pv := make([]float32, d), make([]float32, d)
			for j := range d {
				logm[j], pv[j] = float32(rng.NormFloat64()), float32(1+rng.Float64())
			}
			run := func(group int) (norm, gen [][]float64) {
				saved := smallGroupRows
				smallGroupRows = group
				defer func() { smallGroupRows = saved }()
				next := 0
				weights := func(lo int, phi, w []float64) {
					if lo != next || len(phi) != len(w) {
						t.Fatalf("d %d: weights asked for rows %d+%d after %d", d, lo, len(w), next)
					}
					next = lo + len(w)
					for k, v := range phi {
						w[k] = math.Sin(float64(lo+k+1) + math.Tanh(v)) // depends on the row and its score
						if (lo+k)%97 == 5 {
							w[k] = 1e33 // w·∂φ/∂y·x past 2¹⁰⁰: the exact kernel's
						}
					}
				}
				// The exact kernel's stand-ins: a row's score is -(its first
				// value), to check that the right row went to it.
				exact := NormExact{Scores: func(dst []float64, x []float32) { dst[0] = -float64(x[0]) }, Grad: func(dt []float64, _ []float32, w float64) { dt[0] += w }}
				sc, dt := make([]float64, n), make([]float64, d*d+1)
				if !NormTrain(d, m, NormMatrix{}, p, dt, sc, spans, weights, exact) {
					t.Fatal("NormTrain declined")
				}
				if next != n {
					t.Fatalf("d %d: weights asked for %d of %d rows", d, next, n)
				}
				// Scores alone (normSmallScore): the same bits.
				alone := make([]float64, n)
				NormTrain(d, m, NormMatrix{}, p, nil, alone, spans, nil, exact)
				for i := range alone {
					if math.Float64bits(alone[i]) != math.Float64bits(sc[i]) {
						t.Fatalf("d %d: row %d scores %v alone, %v with gradients", d, i, alone[i], sc[i])
					}
				}
				if n > 5 && !(dt[0] > 1e32) {
					t.Fatalf("d %d: dtheta[0] = %v: the rows of huge weight did not go to the exact kernel", d, dt[0])
				}
				for _, r := range odd {
					if sc[r] != -float64(big) {
						t.Fatalf("d %d: row %d (special) scored %v, want the exact kernel's", d, r, sc[r])
					}
				}
				next = 0
				gsc, sumE, sumEC := make([]float64, n), make([]float64, d), make([]float64, d)
				if !ExpRowsSmall(logm, pv, sumE, sumEC, gsc, spans, weights) {
					t.Fatal("ExpRowsSmall declined")
				}
				return [][]float64{sc, dt}, [][]float64{gsc, sumE, sumEC}
			}
			n1, g1 := run(lanes)
			n2, g2 := run(smallGroupRows)
			for i, pair := range [][2][][]float64{{n1, n2}, {g1, g2}} {
				for a := range pair[0] {
					for k := range pair[0][a] {
						if math.Float64bits(pair[0][a][k]) != math.Float64bits(pair[1][a][k]) {
							t.Fatalf("d %d, n %d, kernel %d, output %d[%d]: %v a block at a time, %v grouped", d, n, i, a, k, pair[0][a][k], pair[1][a][k])
						}
					}
				}
			}
		}
	})
}

// TestSmallSpecialRows: rows the small-d kernel leaves to the exact one (a
// u_k below float32's normal range) add nothing to its own sums, at every
// vector level: with an exact kernel that adds nothing, ∂φ/∂θ stays 0.
func TestSmallSpecialRows(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		if lanes == 0 {
			t.Skip("the portable level has no small-d vector kernels")
		}
		const d, n = 3, 300
		rows := make([]float32, n*d)
		for i := range n {
			copy(rows[i*d:], []float32{1 + float32(i)/n, 1e-39, 0.5}) // u_1 subnormal
		}
		m := []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
		calls := 0
		exact := NormExact{Scores: func(dst []float64, _ []float32) { dst[0] = 1 }, Grad: func([]float64, []float32, float64) { calls++ }}
		sc, dt := make([]float64, n), make([]float64, d*d+1)
		ones := func(_ int, _, w []float64) {
			for k := range w {
				w[k] = 1
			}
		}
		NormTrain(d, m, NormMatrix{}, 1.5, dt, sc, Spans{rows}, ones, exact)
		if calls != n {
			t.Errorf("the exact gradient for %d of %d rows", calls, n)
		}
		for i, v := range dt {
			if v != 0 {
				t.Fatalf("dtheta[%d] = %v, want 0: a row left to the exact kernel added to the vector sums", i, v)
			}
		}
	})
}

// randSpans splits rows of d values into spans of 1 to 40 rows.
func randSpans(rng *rand.Rand, rows []float32, d int) Spans {
	var s Spans
	for len(rows) > 0 {
		r := min(len(rows), (1+rng.IntN(40))*d)
		s, rows = append(s, rows[:r]), rows[r:]
	}
	return s
}

// TestAligned: aligned's arrays start at a cache line.
func TestAligned(t *testing.T) {
	for n := range 200 {
		a, b := aligned[float32](n+1), aligned[float64](n+1)
		if len(a) != n+1 || len(b) != n+1 {
			t.Fatalf("n %d: lengths %d, %d", n+1, len(a), len(b))
		}
		if p, q := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0])); p%64 != 0 || q%64 != 0 {
			t.Fatalf("n %d: addresses %#x, %#x", n+1, p, q)
		}
	}
}
