package kernel

// NormTrainTol bounds the relative difference between NormTrain's scores and
// gradients and the exact ones (geometry's TestNormTrainKernels).
const NormTrainTol = 1e-4

// NormExact computes, in float64, the rows the single-norm's float32 kernel
// declines (a coordinate below float32's normal range, y near its largest
// value, a gradient that would overflow it).
type NormExact struct {
	// Scores writes the exact scores of the rows x into dst.
	Scores func(dst []float64, x []float32)
	// Grad adds w·∂φ/∂θ of the row x into dtheta.
	Grad func(dtheta []float64, x []float32, w float64)
}
