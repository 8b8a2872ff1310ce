//go:build goexperiment.simd && amd64

package kernel

import "simd/archsimd"

var (
	useAVX512 = archsimd.X86.AVX512()
	useAVX2   = archsimd.X86.AVX2() && archsimd.X86.FMA()
)

// Zero vectors, loaded from memory. The compiler makes a broadcast 0 with
// the legacy-SSE XORPS, and may schedule it after AVX-512 instructions,
// where it pays the AVX–SSE transition penalty (measured: 0.5 µs per
// sixteen-row block in normSmall32's backward pass).
var (
	zero32   archsimd.Float32x16
	zero64   archsimd.Float64x8
	zero64x4 archsimd.Float64x4
)

func level() string {
	switch {
	case useAVX512:
		return "vector kernels (GOEXPERIMENT=simd): AVX-512"
	case useAVX2:
		return "vector kernels (GOEXPERIMENT=simd): AVX2+FMA for the generalized ball's prepared rows, portable Go for the rest"
	}
	return "portable Go kernels (a GOEXPERIMENT=simd build on a processor without AVX2)"
}

// Vector reports whether training runs on the float32 vector kernels: in
// this build, when the processor has AVX-512.
func Vector() bool { return useAVX512 }
