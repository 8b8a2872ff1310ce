package kernel

import "sync"

// gemmMR is the rows of the product's micro-kernel tile (its columns:
// gemmCols).
const gemmMR = 6

// gemmCols is the columns of a micro-kernel tile at the level in use: four
// vectors with AVX-512 (64), two with AVX2 (16): 24 and 12 accumulators,
// which stay in registers over the whole sum.
func gemmCols() int {
	if lanes == 16 {
		return 4 * lanes
	}
	return 2 * lanes
}

// GemmErr bounds Gemm's error relative to Σ_l |a_il·b_lj|: each element is
// a float32 sum of k products, so within γ_k = k·u/(1 − k·u), u = 2⁻²⁴
// (one rounding per fused multiply-add; two per step at the portable
// level, where Go rounds the product: 2k·u/(1 − 2k·u) there).
func GemmErr(k int) float64 {
	u := 0x1p-24 * float64(k)
	if gemmTileV == nil {
		u *= 2
	}
	return u / (1 - u)
}

// Gemm writes C = A·B in float32: C is m×n with row i at c[i·ldc:]; A is
// m×k with element (i, l) at a[i·si + l·sk] (si = lda, sk = 1 for a
// row-major A; si = 1, sk = lda for a row-major Aᵀ); B is k×n row-major
// with row l at b[l·ldb:]. Each element is a float32 sum over l in order
// (fused multiply-adds on the vector kernels).
//
// With the vector kernels C goes a tile of 6 rows by 64 (AVX-512) or 16
// (AVX2) columns at a time, its sums in registers, B's tile (k rows of the
// tile's columns) reused by every row of A; tiles at C's right and bottom
// edges go through zero-padded copies. There is no blocking over k: a
// tile's k rows of B are read from the L1 or L2 cache for k up to a few
// thousand (k·256 bytes with AVX-512), which covers the single-norm's and
// the nearest-neighbour searches' products. At the portable level it is a
// Go loop.
func Gemm(m, n, k int, a []float32, si, sk int, b []float32, ldb int, c []float32, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	if ldc < n || ldb < n || (m-1)*ldc+n > len(c) || (k > 0 && ((k-1)*ldb+n > len(b) || (m-1)*si+(k-1)*sk >= len(a))) {
		panic("kernel: Gemm: slices shorter than the product's shapes")
	}
	if k == 0 {
		for i := range m {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	if gemmTileV == nil {
		gemmPortable(m, n, k, a, si, sk, b, ldb, c, ldc)
		return
	}
	nr := gemmCols()
	s := gemmPool.Get().(*gemmScratch)
	defer gemmPool.Put(s)
	full := m - m%gemmMR // rows in whole tiles
	var at []float32     // the last, partial row group of A, zero-padded (row-major MR×k)
	if full < m {
		s.a = grow32(s.a, gemmMR*k)
		at = s.a
		for i := range gemmMR {
			row := at[i*k : (i+1)*k]
			if full+i >= m {
				clear(row)
				continue
			}
			for l := range row {
				row[l] = a[(full+i)*si+l*sk]
			}
		}
	}
	s.c = grow32(s.c, gemmMR*nr)
	for j0 := 0; j0 < n; j0 += nr {
		jn := min(nr, n-j0)
		bb, lb := b[j0:], ldb
		if jn < nr { // B's last columns, zero-padded to a tile
			s.b = grow32(s.b, k*nr)
			for l := range k {
				row := s.b[l*nr : (l+1)*nr]
				copy(row, b[l*ldb+j0:l*ldb+j0+jn])
				clear(row[jn:])
			}
			bb, lb = s.b, nr
		}
		for i0 := 0; i0 < full; i0 += gemmMR {
			if jn == nr {
				gemmTileV(c[i0*ldc+j0:], ldc, a[i0*si:], si, sk, bb, lb, k)
				continue
			}
			gemmTileV(s.c, nr, a[i0*si:], si, sk, bb, lb, k)
			for i := range gemmMR {
				copy(c[(i0+i)*ldc+j0:(i0+i)*ldc+j0+jn], s.c[i*nr:i*nr+jn])
			}
		}
		if at != nil {
			gemmTileV(s.c, nr, at, k, 1, bb, lb, k)
			for i := range m - full {
				copy(c[(full+i)*ldc+j0:(full+i)*ldc+j0+jn], s.c[i*nr:i*nr+jn])
			}
		}
	}
}

// gemmScratch holds Gemm's padded copies for the edge tiles.
type gemmScratch struct{ a, b, c []float32 }

var gemmPool = sync.Pool{New: func() any { return new(gemmScratch) }}

// gemmPortable is Gemm's portable form: each element's sum over l in
// order, a row of C at a time.
func gemmPortable(m, n, k int, a []float32, si, sk int, b []float32, ldb int, c []float32, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		clear(row)
		for l := range k {
			av := a[i*si+l*sk]
			for j, bv := range b[l*ldb : l*ldb+n] {
				row[j] += av * bv
			}
		}
	}
}

// MaxAbs returns the largest |x_i| (0 for none; NaN values are passed
// over).
func MaxAbs(x []float32) float32 {
	var m float32
	j := 0
	if maxAbsV != nil {
		j = len(x) &^ (lanes - 1)
		if j > 0 {
			m = maxAbsV(x[:j])
		}
	}
	for _, v := range x[j:] {
		if a := abs32(v); a > m {
			m = a
		}
	}
	return m
}

// abs32 is |v| (a NaN's sign cleared, NaN compares false everywhere).
func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// SubRows64 writes a_i − y, rounded to float32, into dst for each row a_i
// of a (rows of len(y), float64; dst: rows of len(y)): float64
// differences rounded once, as float32(a_ij − y_j) gives them, a vector at
// a time with the vector kernels.
func SubRows64(dst []float32, a, y []float64) {
	d := len(y)
	if d == 0 || len(a)%d != 0 || len(dst) != len(a) {
		panic("kernel: SubRows64: lengths differ")
	}
	j := 0
	if subRows64V != nil {
		subRows64V(dst, a, y)
		j = d &^ (lanes/2 - 1)
	}
	if j == d {
		return
	}
	for r := range len(a) / d {
		row, out := a[r*d:(r+1)*d], dst[r*d:(r+1)*d]
		for k := j; k < d; k++ {
			out[k] = float32(row[k] - y[k])
		}
	}
}

// ScreenMask marks the values j of a row with norms[j] − 2·prod[j] ≤ bound
// (one rounding: 2·prod[j] is exact), a group of w values at a time: bit l
// of masks[g] is value g·w + l, for every group (the last may be partial).
// It returns w: the vector kernels' lanes, 16 at the portable level. A
// nearest-neighbour screen keeps few values, so its caller looks at the
// few groups whose mask is not 0 (masks must hold (len(prod)+7)/8 values,
// for the narrowest groups).
func ScreenMask(masks []uint16, prod, norms []float32, bound float32) (w int) {
	n := len(prod)
	if len(norms) != n {
		panic("kernel: ScreenMask: lengths differ")
	}
	w, j := 16, 0
	if screenMaskV != nil {
		w = lanes
		j = n &^ (lanes - 1)
		if j > 0 {
			screenMaskV(masks[:j/w], prod[:j], norms[:j], bound)
		}
	}
	for g := j / w; g*w < n; g++ {
		var m uint16
		for k := g * w; k < min(n, (g+1)*w); k++ {
			if v := norms[k] - 2*prod[k]; v <= bound {
				m |= 1 << (k - g*w)
			}
		}
		masks[g] = m
	}
	return w
}

// Sub writes a[i] − b[i] into dst[i] (float32, the same bits as the Go
// expression), on vectors where the build has them: a bundle's difference
// rows, anchor − positive, are made with it. The three may be the same
// slice, not otherwise overlap.
func Sub(dst, a, b []float32) {
	if len(a) != len(dst) || len(b) != len(dst) {
		panic("kernel: Sub: lengths differ")
	}
	n := 0
	if sub32V != nil {
		sub32V(dst, a, b)
		n = len(dst) - len(dst)%lanes
	}
	for i := n; i < len(dst); i++ {
		dst[i] = a[i] - b[i]
	}
}
