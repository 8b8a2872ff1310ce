package geometry

// Weights writes the weights of a block of rows from their scores: w[k] is
// the weight of row lo+k, whose score is phi[k] (len(w) = len(phi) ≥ 1).
// A kernel calls it once for every row, in row order, a block of rows at a
// time (also for rows whose gradient it does not use, such as φ = 0), so
// that a caller may sum over the rows it sees and a weight's own arithmetic
// (a sigmoid per row, say) can run on vectors. A nil Weights gives every
// row the weight 1.
type Weights func(lo int, phi, w []float64)

// Fixed returns the Weights that give row i the weight w[i], whatever its
// score. A kernel that asks for a row beyond w panics.
func Fixed(w []float64) Weights {
	return func(lo int, _, out []float64) {
		if lo+len(out) > len(w) {
			panic(errLength)
		}
		copy(out, w[lo:])
	}
}

// orOnes returns w, or the weights that are all 1 when w is nil.
func orOnes(w Weights) Weights {
	if w != nil {
		return w
	}
	return func(_ int, _, out []float64) {
		for k := range out {
			out[k] = 1
		}
	}
}

// weightBlock is how many rows the exact kernels score before drawing
// their weights: 16, fewer from d = 128 on, so that a block's per-row
// values stay in the L1 cache.
func weightBlock(d int) int { return min(16, max(1, 2048/d)) }
