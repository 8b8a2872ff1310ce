//go:build openblas

package kernel

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// With -tags openblas (and CGO_LDFLAGS=-lopenblas, Debian's
// libopenblas-dev), the single-norm's matrix products go through OpenBLAS
// instead of gonum's pure-Go BLAS. Run with OPENBLAS_NUM_THREADS=1: the
// objective already spreads its chunks over all cores.
func init() {
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{}) // the vector build's float32 training products
}

// BLAS names the BLAS implementation this build uses for the single-norm's
// matrix products.
const BLAS = "OpenBLAS (gonum.org/v1/netlib)"
