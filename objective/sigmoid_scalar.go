//go:build !(goexperiment.simd && amd64)

package objective

// sigmoids is sigmoidsScalar in this build.
func sigmoids(T, t float64, phi, sig, der []float64) { sigmoidsScalar(T, t, phi, sig, der) }
