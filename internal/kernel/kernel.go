// Package kernel holds ccs's fast numerical kernels and every build variant
// of them, so that the packages above it (geometry, objective) carry no
// build tags and export no build names (gonum keeps its internal/asm the
// same way).
//
// The kernels work on plain slices: the generalized ball's float32
// exponentials of prepared logarithms (ExpRow, ExpRowsSmall, AddWeighted),
// its fast membership score (FastPowRows), the single-norm's float32
// training kernel (NormTrain), the Neg term's sigmoids (Sigmoids), and the
// scalar polynomials they share (Exp32, Log2Poly, Exp2Poly) with tested
// error bounds.
//
// Each kernel has a portable Go version, the reference in tests. A build
// with GOEXPERIMENT=simd on amd64 adds vector versions (simd/archsimd),
// chosen at start-up by the processor: AVX-512 for all of them, AVX2+FMA for
// ExpRow. A build with -tags openblas links OpenBLAS for the single-norm's
// matrix products. Describe says which this build and processor use.
package kernel

// LogZero stands for log|0| in prepared logarithms: finite, and so far below
// any argument in use that exp(p·(log m + LogZero)) is exactly 0 and its
// products vanish (no 0·∞ = NaN).
const LogZero = -1e30

// Level says which kernels this build runs on this processor, e.g.
// "portable Go kernels".
func Level() string { return level() }

// Describe says which kernels this build runs on this processor and which
// BLAS it links, e.g. "portable Go kernels; BLAS: gonum (pure Go)".
func Describe() string {
	return level() + "; BLAS: " + BLAS
}
