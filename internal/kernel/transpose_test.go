//go:build goexperiment.simd && amd64

package kernel

import (
	"testing"
)

// TestTranspose: the vector transposer puts coordinate l of row r at l·16+r
// for every d below 16 and every number of rows up to 16, zero for the
// missing rows.
func TestTranspose(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this processor: the transposer is not used")
	}
	for d := 1; d < 16; d++ {
		tr := newTransposer(d)
		for rows := 0; rows <= 16; rows++ {
			x := make([]float32, rows*d)
			for i := range x {
				x[i] = float32(i + 1)
			}
			got := make([]float32, 16*d)
			tr.transpose(got, x)
			for l := range d {
				for r := range 16 {
					want := float32(0)
					if r < rows {
						want = x[r*d+l]
					}
					if got[l*16+r] != want {
						t.Fatalf("d=%d, %d rows: coordinate %d of row %d is %v, want %v", d, rows, l, r, got[l*16+r], want)
					}
				}
			}
		}
	}
}
