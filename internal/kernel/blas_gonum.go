//go:build !openblas

package kernel

// BLAS names the BLAS implementation this build uses for the single-norm's
// matrix products.
const BLAS = "gonum (pure Go)"

// gonumBLAS reports whether the float64 BLAS is gonum's (whose bits TrsmT
// has).
const gonumBLAS = true
