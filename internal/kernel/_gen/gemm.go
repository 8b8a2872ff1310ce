package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// gemmMR is the micro-kernel's rows; gemmNV its vectors of columns per
// isa (the tile: 6 × 64 float32 with AVX-512, 24 accumulators of the 32
// registers; 6 × 16 with AVX2, 12 of the 16).
const gemmMR = 6

func gemmNV(s isa) int {
	if s.avx512 {
		return 4
	}
	return 2
}

// gemmTile is the matrix product's micro-kernel: one tile of C, gemmMR
// rows of gemmNV vectors, C = A·B over k steps. A's element (i, l) is at
// a[i·si + l·sk] — si = lda, sk = 1 for a row-major A; si = 1, sk = lda
// for a row-major Aᵀ — and is broadcast; B's row l is at b[l·ldb], read a
// tile's width of vectors. Each step: gemmNV loads of B, gemmMR broadcasts
// of A, gemmMR·gemmNV multiply-adds into accumulators that stay in
// registers for the k steps.
func gemmTile(s isa) {
	nv := gemmNV(s)
	text(s, "gemmTile", "func(c []float32, ldc int, a []float32, si, sk int, b []float32, ldb, k int)",
		fmt.Sprintf("writes the %d×%d tile C = A·B (row i of C at c[i·ldc:]) over k steps:", gemmMR, nv*s.w),
		"A's element (i, l) at a[i·si + l·sk], B's row l at b[l·ldb:].")
	cp, ap, bp := ptr("c"), ptr("a"), ptr("b")
	bytesOf := func(name string) Register {
		r := Load(Param(name), GP64())
		SHLQ(U8(2), r)
		return r
	}
	ldc, si, sk, ldb := bytesOf("ldc"), bytesOf("si"), bytesOf("sk"), bytesOf("ldb")
	k := Load(Param("k"), GP64())
	// Rows 3…5 of A from a second base: x86 addresses scale an index by
	// 1, 2, 4 or 8 only.
	a3 := GP64()
	LEAQ(Mem{Base: ap, Index: si, Scale: 2}, a3)
	ADDQ(si, a3)
	acc := make([][]VecVirtual, gemmMR)
	for i := range acc {
		acc[i] = make([]VecVirtual, nv)
		for v := range acc[i] {
			acc[i][v] = s.vec()
			s.zero(acc[i][v])
		}
	}
	rowA := func(i int) Mem {
		base := ap
		if i >= 3 {
			base, i = a3, i-3
		}
		if i == 0 {
			return mem(base)
		}
		return Mem{Base: base, Index: si, Scale: uint8(i)}
	}
	Label("step")
	TESTQ(k, k)
	JZ(LabelRef("store"))
	bv := make([]VecVirtual, nv)
	for v := range bv {
		bv[v] = s.vec()
		VMOVUPS(mem(bp).Offset(v*s.bytes()), bv[v])
	}
	for i := range gemmMR {
		t := s.vec()
		VBROADCASTSS(rowA(i), t)
		for v := range nv {
			VFMADD231PS(bv[v], t, acc[i][v])
		}
	}
	ADDQ(sk, ap)
	ADDQ(sk, a3)
	ADDQ(ldb, bp)
	DECQ(k)
	JMP(LabelRef("step"))
	Label("store")
	for i := range gemmMR {
		for v := range nv {
			VMOVUPS(acc[i][v], mem(cp).Offset(v*s.bytes()))
		}
		if i < gemmMR-1 {
			ADDQ(ldc, cp)
		}
	}
	VZEROUPPER()
	RET()
}

// maxAbs returns the largest |x| over whole vectors of x.
func maxAbs(s isa) {
	text(s, "maxAbs", "func(x []float32) float32",
		fmt.Sprintf("returns the largest |x_i| over the first len(x) − len(x) mod %d values", s.w),
		"(0 for none; NaN lanes are passed over).")
	x := ptr("x")
	n := length("x")
	SHRQ(U8(log2w(s)), n)
	m := s.vec()
	s.zero(m)
	vecLoop(n, every(s.bytes(), x), func() {
		v := s.vec()
		VMOVUPS(mem(x), v)
		s.and(s.konst("absMask"), v, v)
		VMAXPS(m, v, m) // NaN in v: m stays
	})
	r := s.hmaxPS(m)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// gradRow is the single-norm's ∂φ/∂y for one row, weighted: with
// q_k = up_k·a/y_k (u_k^p/u_k with y_k's sign; 0 where y_k = 0) it writes
// g_k = q_k·cw where |q_k| ≥ thr and 0 elsewhere, and returns max_k |g_k|.
func gradRow(s isa) {
	text(s, "gradRow", "func(g, y, up []float32, a, cw, thr float32) float32",
		"writes g_k = (up_k·a/y_k)·cw where y_k ≠ 0 and |up_k·a/y_k| ≥ thr, else 0, over the",
		fmt.Sprintf("first len(y) − len(y) mod %d coordinates, and returns the largest |g_k|.", s.w))
	g, y, up := ptr("g"), ptr("y"), ptr("up")
	n := length("y")
	SHRQ(U8(log2w(s)), n)
	av, cw, thr := s.bcastParam32("a"), s.bcastParam32("cw"), s.bcastParam32("thr")
	zero := s.vec()
	s.zero(zero)
	m := s.vec()
	s.zero(m)
	vecLoop(n, every(s.bytes(), g, y, up), func() {
		yv, q := s.vec(), s.vec()
		VMOVUPS(mem(y), yv)
		VMULPS(mem(up), av, q)
		VDIVPS(yv, q, q)
		nz := s.cmp(cmpNEQ, zero, yv) // y ≠ 0 (0/0 and x/0 are dropped)
		s.keep(nz, q)
		aq := s.vec()
		s.and(s.konst("absMask"), q, aq)
		big := s.cmp(cmpGE, thr, aq)
		s.keep(big, q)
		VMULPS(cw, q, q)
		VMOVUPS(q, mem(g))
		s.and(s.konst("absMask"), q, q)
		VMAXPS(m, q, m)
	})
	r := s.hmaxPS(m)
	VZEROUPPER()
	Store(r, ReturnIndex(0))
	RET()
}

// subRows64 writes each row of a (rows of len(y) float64) minus y into dst
// as float32 (rows of len(y)): the float64 differences rounded once, a
// vector of float64 lanes at a time, over each row's first
// len(y) − len(y) mod (lanes/2) coordinates.
func subRows64(s isa) {
	text(s, "subRows64", "func(dst []float32, a, y []float64)",
		"writes (a_i − y) rounded to float32 into dst for each row a_i of a (rows of",
		fmt.Sprintf("len(y)), over each row's first len(y) − len(y) mod %d coordinates.", s.w/2))
	dst, a, yBase := ptr("dst"), ptr("a"), ptr("y")
	n := length("y")
	total := length("a")
	vecs := GP64()
	MOVQ(n, vecs)
	SHRQ(U8(log2w(s)-1), vecs)
	rowIn, rowOut := GP64(), GP64() // bytes per row of a and of dst
	MOVQ(n, rowIn)
	SHLQ(U8(3), rowIn)
	MOVQ(n, rowOut)
	SHLQ(U8(2), rowOut)
	rows := GP64()
	MOVQ(total, rows)
	Label("row")
	CMPQ(rows, n)
	JL(LabelRef("done"))
	ap, op, yp, j := GP64(), GP64(), GP64(), GP64()
	MOVQ(a, ap)
	MOVQ(dst, op)
	MOVQ(yBase, yp)
	MOVQ(vecs, j)
	Label("vec")
	TESTQ(j, j)
	JZ(LabelRef("next"))
	v := s.vec()
	VMOVUPD(mem(ap), v)
	VSUBPD(mem(yp), v, v)
	h := s.half(v)
	if s.avx512 {
		VCVTPD2PS(v, h) // zmm → ymm
	} else {
		VCVTPD2PSY(v, h) // ymm → xmm
	}
	VMOVUPS(h, mem(op))
	ADDQ(U32(s.bytes()), ap)
	ADDQ(U32(s.bytes()), yp)
	ADDQ(U32(s.bytes()/2), op)
	DECQ(j)
	JMP(LabelRef("vec"))
	Label("next")
	ADDQ(rowIn, a)
	ADDQ(rowOut, dst)
	SUBQ(n, rows)
	JMP(LabelRef("row"))
	Label("done")
	VZEROUPPER()
	RET()
}

// screenMask marks the lanes of v = norms − 2·prod that are ≤ bound: one
// mask of lane bits per vector, into masks (a nearest-neighbour search's
// screen, where a vector with a lane to keep is rare).
func screenMask(s isa) {
	text(s, "screenMask", "func(masks []uint16, prod, norms []float32, bound float32)",
		"writes, for each whole vector of prod, the bits of the lanes whose",
		fmt.Sprintf("norms − 2·prod ≤ bound into masks (one uint16 per %d values).", s.w))
	mp, pp, np := ptr("masks"), ptr("prod"), ptr("norms")
	n := length("prod")
	SHRQ(U8(log2w(s)), n)
	bv := s.bcastParam32("bound")
	two := s.load("one")
	VADDPS(two, two, two)
	vecLoop(n, append([]step{{mp, 2}}, every(s.bytes(), pp, np)...), func() {
		v := s.vec()
		VMOVUPS(mem(np), v)
		VFNMADD231PS(mem(pp), two, v) // norms − 2·prod, one rounding (2·prod is exact)
		m := s.cmp(cmpLE, bv, v)
		b := s.bits(m)
		MOVW(b.As16(), mem(mp))
	})
	VZEROUPPER()
	RET()
}
