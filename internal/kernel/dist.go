package kernel

// SqDist64 writes into dst[j] the squared ℓ2 distance between a and row
// idx[j] of rows (rows of len(a) float32, each value widened to float64),
// in float64, summed in four interleaved partial sums — the coordinates t
// ≡ 0, 1, 2, 3 mod 4 each in their order, the last len(a) mod 4 into the
// first — then added in that order: the same number at every level (the
// vector form keeps the four sums in a vector's four lanes, rounding each
// difference, square and sum as the portable form does). len(dst) must be
// len(idx) and every idx[j] a row of rows.
func SqDist64(dst, a []float64, rows []float32, idx []int32) {
	if len(dst) != len(idx) {
		panic("ccs/kernel: slice length mismatch")
	}
	d := len(a)
	if d == 0 {
		clear(dst)
		return
	}
	for _, r := range idx {
		if r < 0 || (int(r)+1)*d > len(rows) {
			panic("ccs/kernel: row index out of range")
		}
	}
	if sqDistParts64V == nil || d < 4 {
		for j, r := range idx {
			dst[j] = sqDist64(a, rows[int(r)*d:int(r+1)*d])
		}
		return
	}
	const block = 256 // rows a call: their partial sums on the stack
	var parts [4 * block]float64
	for lo := 0; lo < len(idx); lo += block {
		ids := idx[lo:min(len(idx), lo+block)]
		p := parts[:4*len(ids)]
		sqDistParts64V(p, a, rows, ids)
		for j, r := range ids {
			s0, s1, s2, s3 := p[4*j], p[4*j+1], p[4*j+2], p[4*j+3]
			row := rows[int(r)*d : int(r+1)*d]
			for t := d &^ 3; t < d; t++ {
				v := a[t] - float64(row[t])
				s0 += float64(v * v)
			}
			dst[lo+j] = s0 + s1 + s2 + s3
		}
	}
}

// sqDist64 is SqDist64's portable form for one row b. The explicit
// conversions keep each square rounded before its sum, as the vector form
// does (a compiler may otherwise fuse them into one multiply-add).
func sqDist64(a []float64, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	t := 0
	for ; t+4 <= len(a); t += 4 {
		v0 := a[t] - float64(b[t])
		v1 := a[t+1] - float64(b[t+1])
		v2 := a[t+2] - float64(b[t+2])
		v3 := a[t+3] - float64(b[t+3])
		s0 += float64(v0 * v0)
		s1 += float64(v1 * v1)
		s2 += float64(v2 * v2)
		s3 += float64(v3 * v3)
	}
	for ; t < len(a); t++ {
		v := a[t] - float64(b[t])
		s0 += float64(v * v)
	}
	return s0 + s1 + s2 + s3
}
