package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSqDist64: SqDist64 at every level gives the bits of the four partial
// sums written out one coordinate at a time, for d = 0…40 and 257, rows
// picked in any order and more than once, counts of rows around the
// vector form's four at a time and its blocks of 256; and is within
// rounding of the sequential sum.
func TestSqDist64(t *testing.T) {
	atLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		dims := []int{257}
		for d := range 41 {
			dims = append(dims, d)
		}
		for _, d := range dims {
			const n = 40
			rows := make([]float32, n*d)
			for i := range rows {
				rows[i] = float32(rng.NormFloat64() * math.Exp(3*rng.NormFloat64()))
			}
			a := make([]float64, d)
			for i := range a {
				a[i] = float64(float32(rng.NormFloat64()))
			}
			for _, m := range []int{0, 1, 3, 4, 5, 8, 11, 255, 256, 257, 600} {
				idx := make([]int32, m)
				for j := range idx {
					idx[j] = int32(rng.IntN(n))
				}
				got := make([]float64, m)
				SqDist64(got, a, rows, idx)
				for j, r := range idx {
					row := rows[int(r)*d : int(r+1)*d]
					var s [4]float64
					var seq float64
					for t := range d {
						v := a[t] - float64(row[t])
						sq := float64(v * v)
						if t < d&^3 {
							s[t%4] += sq
						} else {
							s[0] += sq
						}
						seq += sq
					}
					want := s[0] + s[1] + s[2] + s[3]
					if math.Float64bits(got[j]) != math.Float64bits(want) {
						t.Fatalf("d=%d, %d rows: distance %d (row %d) is %v, want %v", d, m, j, r, got[j], want)
					}
					if math.Abs(got[j]-seq) > 1e-14*seq {
						t.Fatalf("d=%d: distance %v, sequential %v", d, got[j], seq)
					}
				}
			}
		}
	})
}

// BenchmarkSqDist64: 20 000 rows of 256, read in order (a hard-negative
// draw among every passage of a RAG user's bundle, one query).
func BenchmarkSqDist64(b *testing.B) {
	const n, d = 20000, 256
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	a := make([]float64, d)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	dst := make([]float64, n)
	b.SetBytes(n * d * 4)
	for b.Loop() {
		SqDist64(dst, a, rows, idx)
	}
}
