package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The half-precision screens on one goroutine over 2¹⁶ blocks (2²⁰ rows of
// d = 128: 256 MB, from memory) of standard normal rows around the origin,
// the limit at the 0.1% quantile of the rows' scores, as retrieval's
// (rare hits among many near misses: the scores concentrate near their
// mean); "Far", that of the rows halved, as if every row were twice as
// far: powHalf's pairs then stop at their first look.
func BenchmarkSqHalf(b *testing.B)     { benchHalf(b, true, 1) }
func BenchmarkSqHalfFar(b *testing.B)  { benchHalf(b, true, 2) }
func BenchmarkPowHalf(b *testing.B)    { benchHalf(b, false, 1) }
func BenchmarkPowHalfFar(b *testing.B) { benchHalf(b, false, 2) }

// The 8-bit screen by arithmetic (ByteRows.powScreen) on the same rows, m,
// p and limits: a quarter of float32's bytes (128 MB).
func BenchmarkPowByte(b *testing.B)    { benchByte(b, 1) }
func BenchmarkPowByteFar(b *testing.B) { benchByte(b, 2) }

// The 8-bit screen by table (ByteRows.lutScreen, with the vector kernel
// where the processor has it), the same rows and limits; the table's
// making is inside each query.
func BenchmarkLUTByte(b *testing.B)    { benchScreen(b, false, true, 1, true) }
func BenchmarkLUTByteFar(b *testing.B) { benchScreen(b, false, true, 2, true) }

// BenchmarkLUTTables: making one query's tables (d = 128).
func BenchmarkLUTTables(b *testing.B) {
	const d = 128
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]float32, 64*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	h := NewByteRows(rows, d, func(nb int, fill func(b0, b1 int)) { fill(0, nb) })
	log2m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		log2m[j], p[j] = math.Log2(0.5+rng.Float64()), 1.5+rng.Float64()
	}
	for b.Loop() {
		h.lutTables(rows[:d], log2m, p, 50)
	}
}

var halfBench struct {
	h    *HalfRows
	rows []float32
	by   *ByteRows
}

func benchHalf(b *testing.B, sq bool, far float32) { benchScreen(b, sq, false, far, false) }

func benchByte(b *testing.B, far float32) { benchScreen(b, false, true, far, false) }

func benchScreen(b *testing.B, sq, byteRows bool, far float32, lut bool) {
	const d, nb = 128, 1 << 16
	if halfBench.h == nil {
		rng := rand.New(rand.NewPCG(1, 2))
		rows := make([]float32, nb*HalfBlock*d)
		for i := range rows {
			rows[i] = float32(rng.NormFloat64())
		}
		halfBench.rows = rows
		halfBench.h = NewHalfRows(rows, d, func(nb int, fill func(b0, b1 int)) { fill(0, nb) })
	}
	h := halfBench.h
	a := make([]float32, d) // the origin
	// The same m and p whichever benchmark made the rows.
	rng := rand.New(rand.NewPCG(3, 4))
	log2m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		log2m[j], p[j] = math.Log2(0.5+rng.Float64()), 1.5+rng.Float64()
	}
	// The 0.1% quantile of the first 10⁴ rows' scores, rows scaled by
	// 1/far (the same as the anchor's scale by far: the limit shrinks).
	sc := make([]float64, 10000)
	for i := range sc {
		for j, v := range halfBench.rows[i*d : (i+1)*d] {
			x := float64(v / far)
			if sq {
				sc[i] += x * x
			} else {
				sc[i] += math.Pow(math.Exp2(log2m[j])*math.Abs(x), p[j])
			}
		}
	}
	slices.Sort(sc)
	q := sc[10]
	var f func(b0 int, masks []uint16)
	switch {
	case byteRows:
		if halfBench.by == nil {
			halfBench.by = NewByteRows(halfBench.rows, d, func(nb int, fill func(b0, b1 int)) { fill(0, nb) })
		}
		if !lut { // the tables are made inside each query
			f = halfBench.by.powScreen(make([]float32, d), log2m, p, q)
		}
	case sq:
		f = h.SqScreen(a, math.Sqrt(q))
	default:
		f = h.PowScreen(a, log2m, p, q)
	}
	masks := make([]uint16, 64)
	kept := 0
	valueBytes := 2
	if byteRows {
		valueBytes = 1
	}
	b.SetBytes(int64(nb * HalfBlock * d * valueBytes))
	for b.Loop() {
		kept = 0
		if lut {
			f = halfBench.by.lutScreen(make([]float32, d), log2m, p, q)
		}
		for b0 := 0; b0 < nb; b0 += len(masks) {
			f(b0, masks)
			for _, m := range masks {
				for ; m != 0; m &= m - 1 {
					kept++
				}
			}
		}
	}
	b.ReportMetric(float64(kept)/float64(nb*HalfBlock), "kept/row")
}
