//go:build !(goexperiment.simd && amd64)

package geometry

// pnormTrain is pnorm in this build (FastPays is false, so it is not reached).
var pnormTrain pnormFunc = pnorm
