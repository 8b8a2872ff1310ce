//go:build !(goexperiment.simd && amd64)

package kernel

// ClearUpper marks the upper halves of the vector registers clean
// (VZEROUPPER) in a GOEXPERIMENT=simd build and does nothing otherwise. Go
// does not yet emit VZEROUPPER after vector code, and once those halves are
// dirty every call of math.Exp (legacy SSE mixed with one VEX instruction)
// pays an AVX–SSE transition: measured 123–730 ns a call instead of 6 ns on
// this project's machines. The exact kernels call it once per row.
func ClearUpper() {}
