package kernel

import "math"

// Log64 writes math.Log(x[i]) into dst[i], bit for bit, on vectors where
// the build has them: the steps of the math package's amd64 assembly, a
// vector of lanes at a time, for the positive, normal, finite values, and
// math.Log itself for the others (zeros, subnormals, negatives, ±Inf,
// NaNs) and the tail. dst and x must not overlap.
func Log64(dst, x []float64) {
	if len(dst) != len(x) {
		panic("kernel: Log64: lengths differ")
	}
	n := 0
	if log64V != nil && len(x) > 0 {
		if &dst[0] == &x[0] {
			panic("kernel: Log64: dst is x")
		}
		log64V(dst, x)
		n = len(x) - len(x)%(lanes/2)
	}
	for i, v := range x[:n] {
		if !(v >= 0x1p-1022 && v <= math.MaxFloat64) {
			dst[i] = math.Log(v)
		}
	}
	for i := n; i < len(x); i++ {
		dst[i] = math.Log(x[i])
	}
}

// Exp64 writes math.Exp(x[i]) into dst[i], bit for bit, on vectors where
// the build has them: the steps of the math package's amd64 assembly (its
// path for processors with FMA, which every vector level has), a vector of
// lanes at a time, for x in [−708, 709], and math.Exp itself for the
// others (results that overflow, are subnormal or 0, ±Inf, NaNs) and the
// tail. dst and x must not overlap.
func Exp64(dst, x []float64) {
	if len(dst) != len(x) {
		panic("kernel: Exp64: lengths differ")
	}
	n := 0
	if exp64V != nil && len(x) > 0 {
		if &dst[0] == &x[0] {
			panic("kernel: Exp64: dst is x")
		}
		exp64V(dst, x)
		n = len(x) - len(x)%(lanes/2)
	}
	for i, v := range x[:n] {
		if !(v >= -708 && v <= 709) {
			dst[i] = math.Exp(v)
		}
	}
	for i := n; i < len(x); i++ {
		dst[i] = math.Exp(x[i])
	}
}

// AbsDiv writes |x[i]|/a into dst[i] (the same bits as math.Abs(x[i])/a),
// on vectors where the build has them. dst may be x, not otherwise overlap
// it.
func AbsDiv(dst, x []float64, a float64) {
	if len(dst) != len(x) {
		panic("kernel: AbsDiv: lengths differ")
	}
	n := 0
	if absDiv64V != nil {
		absDiv64V(dst, x, a)
		n = len(x) - len(x)%(lanes/2)
	}
	for i := n; i < len(x); i++ {
		dst[i] = math.Abs(x[i]) / a
	}
}

// DotMT writes into y[j], for the first d − d mod (a vector's float64
// lanes) outputs j, row x's entry of X·Mᵀ as gonum's Dgemm computes it a
// block of 64 columns at a time (geometry's exact single-norm products):
// the output, from 0, plus each block's DotUnitary(x[block], M_j[block])
// in turn, with DotUnitary's own order (partial sums of the coordinates 0,
// 1, 2 and 3 mod 4, products rounded before they are added, the block's
// last n mod 4 coordinates into the first, then (s1 + s3) + (s0 + s2)) —
// the same bits, on vectors. mt is Mᵀ (d×d row-major, mt[k·d + j] = M_jk,
// d = len(x)). It returns how many outputs it wrote (0 at the portable
// level); the caller computes the others.
func DotMT(y, x, mt []float64) int {
	d := len(x)
	if len(y) < d || len(mt) != d*d {
		panic("kernel: DotMT: lengths differ")
	}
	if dotMT64V == nil {
		return 0
	}
	dotMT64V(y, x, mt)
	return d - d%(lanes/2)
}
