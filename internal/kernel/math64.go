package kernel

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

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

// DotMTRows is DotMT for each row of x (n rows of d, d×d mt) into the
// same row of y, several rows at a time where the build has vectors (4
// with AVX-512, 2 with AVX2), each vector of Mᵀ read once for them: every
// output has DotMT's bits. It returns how many outputs of each row it
// wrote (0 at the portable level).
func DotMTRows(y, x, mt []float64, d int) int {
	if d <= 0 || len(x)%d != 0 || len(y) != len(x) || len(mt) != d*d {
		panic("kernel: DotMTRows: lengths differ")
	}
	if dotMT64V == nil {
		return 0
	}
	n := len(x) / d
	rows := 4
	if lanes == 8 {
		rows = 2
	}
	i := 0
	for ; i+rows <= n; i += rows {
		dotMTRows64V(y[i*d:(i+rows)*d], x[i*d:(i+rows)*d], mt)
	}
	switch left := n - i; {
	case left == 1:
		dotMT64V(y[i*d:], x[i*d:], mt)
	case left > 1: // padded with zero rows: Mᵀ read once for the rows left
		xs, ys := make([]float64, rows*d), make([]float64, rows*d)
		copy(xs, x[i*d:])
		dotMTRows64V(ys, xs, mt)
		copy(y[i*d:], ys[:left*d])
	}
	return d - d%(lanes/2)
}

// SolveRows is how many rows SolveLower solves at once at the level in
// use: 32 with AVX-512, 16 with AVX2 (four vectors of float64 lanes), 0 at
// the portable level.
func SolveRows() int {
	if solveLower64V == nil {
		return 0
	}
	return 2 * lanes
}

// SolveLower solves L·y = x by forward substitution for SolveRows() rows at
// once, in place, each row with the bits of the scalar loop
//
//	for i := range d {
//		s := x[i]
//		for j := range i {
//			s -= float64(L[i][j] * y[j])
//		}
//		y[i] = s / L[i][i]
//	}
//
// (each product rounded before it is subtracted: no fused multiply-add), a
// lane of vectors a row. yt is d×SolveRows() row-major — entry i·w + r is
// coordinate i of row r — holding x on entry and y on return; l is L, d×d
// row-major, read on and below its diagonal. It panics at the portable
// level.
func SolveLower(yt, l []float64, d int) {
	w := SolveRows()
	if w == 0 {
		panic("kernel: SolveLower: no vector kernels")
	}
	if d < 0 || len(yt) != d*w || len(l) != d*d {
		panic("kernel: SolveLower: lengths differ")
	}
	if d > 0 {
		solveLower64V(yt, l, d)
	}
}

// RankUpdate adds the products x_t[r]·x_t[c] of the n rows x_t =
// x[t·d:(t+1)·d] into the rows r0 ≤ r < r1 of sig (d×d row-major), on and
// below the diagonal, each entry as
//
//	for t := range n {
//		floats.AddScaled(sig[r·d:r·d+r+1], x_t[r], x_t[:r+1])
//	}
//
// gives it — (x_t[c]·x_t[r]) + sig[r·d+c], the product rounded first, t in
// order: the same bits — a tile of 8 rows (4 with AVX2) by 2 vectors of
// columns at a time where the build has vector kernels: a caller sharing
// Σ's rows out gives each goroutine a multiple of 8 rows. Entries above the diagonal
// in those rows may be written too; their values are unspecified.
func RankUpdate(sig, x []float64, n, d, r0, r1 int) {
	if d < 0 || n < 0 || len(sig) != d*d || len(x) < n*d || r0 < 0 || r1 > d || r0 > r1 {
		panic("kernel: RankUpdate: lengths differ")
	}
	r := r0
	if rankTile64V != nil {
		rows, cols := lanes/2, lanes
		end := d / cols * cols // columns in whole tiles
		for ; r+rows <= r1; r += rows {
			covered := 0
			for c0 := 0; c0 < end && c0 < r+rows; c0 += cols {
				rankTile64V(sig[r*d+c0:], d, x[r:], x[c0:], d, n)
				covered = c0 + cols
			}
			for rr := r; rr < r+rows; rr++ {
				rankRow(sig, x, n, d, rr, covered)
			}
		}
	}
	for ; r < r1; r++ {
		rankRow(sig, x, n, d, r, 0)
	}
}

// rankRow is RankUpdate's row r from column c0 to the diagonal, with
// gonum's AddScaled (nothing where c0 > r).
func rankRow(sig, x []float64, n, d, r, c0 int) {
	if c0 > r {
		return
	}
	row := sig[r*d+c0 : r*d+r+1]
	for t := range n {
		xt := x[t*d : (t+1)*d]
		floats.AddScaled(row, xt[r], xt[c0:r+1])
	}
}

// TrsmCols is how many columns TrsmT solves at once: 32 with AVX-512, 16
// with AVX2, 0 at the portable level and where the float64 BLAS is not
// gonum's (-tags openblas: Getrs's solves are OpenBLAS's, whose bits
// TrsmT does not have).
func TrsmCols() int {
	if trsmUpperT64V == nil || !gonumBLAS {
		return 0
	}
	return 2 * lanes
}

// TrsmT is gonum's Dtrsm(Left, Upper, Trans, NonUnit) (upper) or
// Dtrsm(Left, Lower, Trans, Unit) (lower), with alpha 1, of a (d×d,
// row-major) on yt (d rows of TrsmCols() values, row-major), in place —
// the two solves of LAPACK's Getrs for Aᵀ·X = B — with the bits of gonum's
// pure-Go BLAS: every element's operations are gonum's, in its order (the
// terms (y_k·(−a_ki)) added in k's order where a_ki is not ±0, then the
// scaling by 1/a_ii), a few rows at a time with each y_k read once for
// them. It panics at the portable level.
func TrsmT(upper bool, yt, a []float64, d int) {
	w := TrsmCols()
	if w == 0 {
		panic("kernel: TrsmT: no vector kernels")
	}
	if d < 0 || len(yt) != d*w || len(a) != d*d {
		panic("kernel: TrsmT: lengths differ")
	}
	switch {
	case d == 0:
	case upper:
		trsmUpperT64V(yt, a, d)
	default:
		trsmLowerT64V(yt, a, d)
	}
}

// GemmSubReady reports whether GemmSub runs here (a vector level, and
// gonum's float64 BLAS).
func GemmSubReady() bool { return gemmSub64V != nil && gonumBLAS }

// GemmSub computes C −= A·B (A m×k, B k×n, C m×n, row-major with strides
// lda, ldb, ldc) with the bits of gonum's Dgemm(NoTrans, NoTrans, m, n, k,
// −1, a, lda, b, ldb, 1, c, ldc), LAPACK's Getrf's update of its trailing
// matrix: every element c_ij = (b_lj·(−a_il)) + c_ij for l in order, where
// a_il is not ±0, as gonum's dgemmSerialNotNot has it whatever its
// blocking. Tiles of C on vectors, the rows and columns left over a row at
// a time (floats.AddScaled, gonum's AxpyUnitary). It reports false, and
// does nothing, at the portable level and where the float64 BLAS is not
// gonum's.
func GemmSub(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) bool {
	if !GemmSubReady() {
		return false
	}
	if m < 0 || n < 0 || k < 0 || lda < max(1, k) || ldb < max(1, n) || ldc < max(1, n) ||
		m > 0 && k > 0 && len(a) < (m-1)*lda+k || k > 0 && n > 0 && len(b) < (k-1)*ldb+n || m > 0 && n > 0 && len(c) < (m-1)*ldc+n {
		panic("kernel: GemmSub: lengths differ")
	}
	if m == 0 || n == 0 || k == 0 {
		return true
	}
	rows, cols := lanes/2, lanes
	mt, nt := m/rows*rows, n/cols*cols
	for i := 0; i < mt; i += rows {
		for j := 0; j < nt; j += cols {
			gemmSub64V(c[i*ldc+j:], ldc, a[i*lda:], lda, b[j:], ldb, k)
		}
	}
	for i := range m {
		j0 := nt // the columns left over, and every column of the rows left over
		if i >= mt {
			j0 = 0
		}
		if j0 == n {
			continue
		}
		ci := c[i*ldc+j0 : i*ldc+n]
		for l, v := range a[i*lda : i*lda+k] {
			if tmp := -v; tmp != 0 {
				floats.AddScaled(ci, tmp, b[l*ldb+j0:l*ldb+n])
			}
		}
	}
	return true
}
