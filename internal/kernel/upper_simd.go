//go:build goexperiment.simd && amd64

package kernel

import "simd/archsimd"

var hasAVX = archsimd.X86.AVX()

// ClearUpper issues VZEROUPPER; see upper.go.
func ClearUpper() {
	if hasAVX {
		archsimd.ClearAVXUpperBits()
	}
}
