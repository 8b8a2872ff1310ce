//go:build openblas

package kernel

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// With -tags openblas (and CGO_LDFLAGS=-lopenblas, Debian's
// libopenblas-dev), the single-norm's float64 matrix products (the exact
// kernels: calibration, evaluation, the portable level's training) go
// through OpenBLAS instead of gonum's pure-Go BLAS; the float32 training
// products are Gemm's either way. Run with OPENBLAS_NUM_THREADS=1: the
// objective already spreads its chunks over all cores.
func init() {
	blas64.Use(netlib.Implementation{})
}

// BLAS names the BLAS implementation this build uses for the single-norm's
// matrix products.
const BLAS = "OpenBLAS (gonum.org/v1/netlib)"

// gonumBLAS reports whether the float64 BLAS is gonum's (whose bits TrsmT
// has).
const gonumBLAS = false
