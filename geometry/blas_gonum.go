//go:build !openblas

package geometry

// BLAS names the BLAS implementation this build uses.
const BLAS = "gonum (pure Go)"
