package kernel

import "math"

// The generalized ball's kernels, φ = Σ_j (m_j·|x_j|)^{p_j}: their portable
// forms, which the vector forms are tested against.

// expRowPortable writes c_j = log m_j + L_j and e_j = exp(p_j·c_j) for one
// row of prepared logarithms L and returns Σ_j e_j in float64.
func expRowPortable(logm, p, row, e, c []float32) float64 {
	var phi float64
	for j, l := range row {
		cj := logm[j] + l
		ej := Exp32(p[j] * cj)
		e[j], c[j] = ej, cj
		phi += float64(ej)
	}
	return phi
}

// addWeightedPortable adds w·e_j to sumE_j and w·e_j·c_j to sumEC_j.
func addWeightedPortable(sumE, sumEC []float64, w float64, e, c []float32) {
	for j := range e {
		we := w * float64(e[j])
		sumE[j] += we
		sumEC[j] += we * float64(c[j])
	}
}

// fastPowRow is the portable fast score of one row,
// Σ_j 2^(p_j·log2(m_j·|x_j|)) by Log2Poly and Exp2Poly in float32, summed in
// float64; +Inf when an m_j·|x_j| is neither 0 nor a normal float32 (or is
// NaN), for the caller to rescore exactly.
func fastPowRow(m, p, x []float32) float64 {
	var phi float64
	for j, v := range x {
		t, special := powTerm(m[j], p[j], v)
		if special {
			t = math.Inf(1)
		}
		phi += t
	}
	return phi
}

// powTerm is one coordinate's term of the fast score, 2^(p·log2(m·|v|)) by
// Log2Poly and Exp2Poly; 0 for m·|v| = 0; special (and 0) where m·|v| is
// subnormal, +Inf or NaN, for the exact score.
func powTerm(m, p, v float32) (term float64, special bool) {
	y := m * math.Float32frombits(math.Float32bits(v)&0x7fffffff)
	switch {
	case y == 0:
		return 0, false
	case y >= MinNormal32 && y <= math.MaxFloat32:
		return float64(Exp2Poly(p * Log2Poly(y))), false
	}
	return 0, true
}

// fastPowRowsPortable is FastPowRows row by row.
func fastPowRowsPortable(dst []float64, m, p, diffs []float32) {
	d := len(m)
	for i := range dst {
		dst[i] = fastPowRow(m, p, diffs[i*d:(i+1)*d])
	}
}

// ExpRow writes c_j = log m_j + L_j and e_j = exp(p_j·c_j) (Exp32) for one
// row of prepared logarithms L and returns Σ_j e_j in float64: a vector at
// a time with the vector kernels (the tail shorter than a vector, and every
// row at the portable level, by the portable kernel).
func ExpRow(logm, p, row, e, c []float32) float64 {
	d := len(row)
	if expRowV == nil || d < lanes {
		return expRowPortable(logm, p, row, e, c)
	}
	_, _, _, _ = logm[d-1], p[d-1], e[d-1], c[d-1] // the assembly does not check
	j := d &^ (lanes - 1)
	phi := expRowV(logm, p, row[:j], e, c)
	if j < d {
		phi += expRowPortable(logm[j:], p[j:], row[j:], e[j:], c[j:])
	}
	return phi
}

// AddWeighted adds w·e_j to sumE_j and w·e_j·c_j to sumEC_j (the same
// float64 products and sums at every level, so the same results to the
// bit).
func AddWeighted(sumE, sumEC []float64, w float64, e, c []float32) {
	d := len(e)
	if addWeightedV == nil || d < lanes/2 {
		addWeightedPortable(sumE, sumEC, w, e, c)
		return
	}
	_, _, _ = sumE[d-1], sumEC[d-1], c[d-1]
	j := d &^ (lanes/2 - 1)
	addWeightedV(sumE, sumEC, w, e[:j], c)
	if j < d {
		addWeightedPortable(sumE[j:], sumEC[j:], w, e[j:], c[j:])
	}
}

// ExpRowsSmall is the generalized ball's prepared kernel for d < 16 with the
// vector kernels, where a vector along a row would be mostly empty: a
// vector's worth of rows at a time, one per lane. Each row's e and c are
// ExpRow's and its sum is taken in float64 in coordinate order;
// Σ_i w_i·e_ij and Σ_i w_i·e_ij·c_ij (into sumE and sumEC, when not nil) are
// summed in float64 lanes. weights is called once per group of blocks
// (smallGroup). The rows are those of logs, read in place (a block that
// straddles two spans is copied). It reports false, doing nothing, where it
// does not apply (d ≥ 16, or the portable level).
func ExpRowsSmall(logm, p []float32, sumE, sumEC, scores []float64, logs Spans, weights func(lo int, phi, w []float64)) bool {
	d := len(logm)
	if expSmallV == nil || d >= 16 || d < 1 {
		return false
	}
	W := lanes
	n := len(scores)
	if len(p) != d || logs.Len() != n*d {
		panic("kernel: ExpRowsSmall: lengths differ")
	}
	grads := sumE != nil
	// A group of blocks at a time (smallGroup): every block's kernel, then
	// the group's weights in one call, then the weighted sums in block
	// order, as normSmall32.
	G := smallGroup(d, W)
	dw := d * W
	sc := smallPool.Get().(*smallScratch)
	defer sc.put()
	es, cs, pads := sc.f32(0, G*dw), sc.f32(1, G*dw), sc.f32(2, G*dw)
	f64 := sc.f64(2*d*W + 2*G*W)
	acc := f64[:2*d*W]                            // Σ w·e and Σ w·e·c per coordinate and lane, at (2j+0|1)·W
	phis, w := f64[2*d*W:][:G*W], f64[2*d*W+G*W:] // the group's scores; its weights, then 0 to the end of its last block
	clear(acc)
	blks, _, _ := sc.blocks(G)
	cur := cursor{s: logs}
	for glo := 0; glo < n; glo += G * W {
		ghi := min(n, glo+G*W)
		nb := (ghi - glo + W - 1) / W
		cur.blocks(blks[:nb], ghi-glo, W, d, pads) // a block's own pad: the kernel reads them all at once
		if ghi-glo < nb*W {
			blks[nb-1] = padded(blks[nb-1], pads[(nb-1)*dw:nb*dw], LogZero) // e = 0
		}
		expSmallV(blks[:nb], d, logm, p, phis, es, cs, transposeTabs[d])
		copy(scores[glo:ghi], phis)
		if !grads {
			continue
		}
		clear(w[ghi-glo:])
		weights(glo, scores[glo:ghi], w[:ghi-glo])
		for b := range nb {
			addSmallV(acc, w[b*W:(b+1)*W], es[b*dw:(b+1)*dw], cs[b*dw:(b+1)*dw], d)
		}
	}
	for j := range sumE {
		for l := range W {
			sumE[j] += acc[2*j*W+l]
			sumEC[j] += acc[(2*j+1)*W+l]
		}
	}
	return true
}

// Prefetch asks the processor to bring x's cache lines into its caches
// (a row about to be read, that lies apart from the one being read: the
// hardware's prefetchers stop at each page); nothing with the portable
// kernels.
func Prefetch(x []float32) {
	if prefetchV != nil && len(x) > 0 {
		prefetchV(x)
	}
}

// FastPowRows writes Σ_j 2^(p_j·log2(m_j·|x_j|)) of each row of diffs into
// dst (Log2Poly and Exp2Poly in float32, summed in float32 lanes and then
// float64; a vector at a time with the vector kernels); a row with an
// m_j·|x_j| outside float32's normal range (other than 0) or a NaN scores
// +Inf.
func FastPowRows(dst []float64, m, p, diffs []float32) {
	d := len(m)
	if len(p) != d || len(diffs) != len(dst)*d {
		panic("kernel: FastPowRows: lengths differ")
	}
	if powRowsV == nil {
		fastPowRowsPortable(dst, m, p, diffs)
		return
	}
	powRowsV(dst, m, p, diffs)
}

// FastPowRowsBound writes the fast score (FastPowRows) of anchor − item for
// each row of items into dst, but stops a row once a partial sum passes
// limit (rounded up to float32; checked every other vector): such a row's
// score is then its partial sum (above limit, below its full score up to
// the fast score's rounding). A coordinate outside float32's normal range
// adds 0 to the partial sums, and a row that had one and did not stop
// scores +Inf. With the portable kernels the sum is checked every eight
// coordinates.
func FastPowRowsBound(dst []float64, m, p, anchor, items []float32, limit float64) {
	d := len(m)
	if len(p) != d || len(anchor) != d || len(items) != len(dst)*d {
		panic("kernel: FastPowRowsBound: lengths differ")
	}
	if powRowsBoundV != nil {
		powRowsBoundV(dst, m, p, anchor, items, up32(limit))
		return
	}
	for i := range dst {
		dst[i] = fastPowRowBound(m, p, anchor, items[i*d:(i+1)*d], limit)
	}
}

// FastPowRowsAround writes the fast score (FastPowRows) of anchor − item
// for each row of items into dst — the differences rounded to float32 as
// FastPowRows takes them, never made in memory; a row with a coordinate
// outside float32's normal range (other than 0) or a NaN scores +Inf.
func FastPowRowsAround(dst []float64, m, p, anchor, items []float32) {
	d := len(m)
	if len(p) != d || len(anchor) != d || len(items) != len(dst)*d {
		panic("kernel: FastPowRowsAround: lengths differ")
	}
	if powRowsAncV != nil {
		powRowsAncV(dst, m, p, anchor, items)
		return
	}
	for i := range dst {
		dst[i] = fastPowRowBound(m, p, anchor, items[i*d:(i+1)*d], math.Inf(1))
	}
}

// fastPowRowBound is FastPowRowsBound's portable form for one row.
func fastPowRowBound(m, p, anchor, item []float32, limit float64) float64 {
	const every = 8
	var phi float64
	special := false
	for j0 := 0; j0 < len(m); j0 += every {
		for j := j0; j < min(len(m), j0+every); j++ {
			t, sp := powTerm(m[j], p[j], anchor[j]-item[j])
			phi += t
			special = special || sp
		}
		if phi > limit {
			return phi
		}
	}
	if special {
		return math.Inf(1)
	}
	return phi
}

// up32 is x rounded up to float32 (+Inf beyond its range).
func up32(x float64) float32 {
	y := float32(x)
	if float64(y) < x {
		y = math.Nextafter32(y, float32(math.Inf(1)))
	}
	return y
}

// SqRowsBoundErr bounds the relative error of SqRowsBound's sums in d
// dimensions: each square and each of the at most d/8 additions into a
// float32 lane round by 2⁻²⁴ of at most the whole sum (doubled).
func SqRowsBoundErr(d int) float64 { return float64(d/8+2) * 0x1p-23 }

// SqRowsBound writes Σ_j (anchor_j − item_j)² of each row of items into dst
// — the differences in float32 as the exact scores take them, the squares
// and sums in float32 lanes, within SqRowsBoundErr(d) of the float64 sum —
// but stops a row once a partial sum (every other vector) passes limit;
// that row's value is then its partial sum. The portable form sums in
// float64 and checks every eight coordinates.
func SqRowsBound(dst []float64, anchor, items []float32, limit float64) {
	d := len(anchor)
	if len(items) != len(dst)*d {
		panic("kernel: SqRowsBound: lengths differ")
	}
	if sqRowsBoundV != nil {
		sqRowsBoundV(dst, anchor, items, up32(limit))
		return
	}
	const every = 8
	for i := range dst {
		row := items[i*d : (i+1)*d]
		var acc float64
		for j0 := 0; j0 < d && !(acc > limit); j0 += every {
			for j := j0; j < min(d, j0+every); j++ {
				x := float64(anchor[j] - row[j])
				acc += x * x
			}
		}
		dst[i] = acc
	}
}
