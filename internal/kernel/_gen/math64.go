package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The float64 logarithm and exponential of Go's math package on amd64
// (math/log_amd64.s, and math/exp_amd64.s's path for processors with FMA),
// the same operations in the same order a vector of lanes at a time: each
// lane's result has the bits math.Log or math.Exp gives, wherever the
// scalar code takes its main path (a positive, normal, finite x for the
// logarithm; x in [−708, 709] for the exponential, whose result is then
// normal). The Go side (kernel/math64.go) recomputes every other lane with
// the math package.

// defineMath64Consts adds log64's and exp64's constants: the decimal
// literals of math/log_amd64.s and math/exp_amd64.s, which the Go assembler
// and the Go compiler both round to the nearest float64.
func defineMath64Consts(f64 func(string, float64), i64 func(string, uint64)) {
	i64("mant64", 0x000FFFFFFFFFFFFF)
	i64("kMagic", 0x4338000000000000-0x3FE) // 1.5·2⁵² + e − 1022
	f64("magic64", 0x1p52*1.5)
	f64("half64", 0.5)
	f64("two64", 2)
	f64("hSqrt2", 7.07106781186547524401e-01)
	f64("logL1", 6.666666666666735130e-01)
	f64("logL2", 3.999999999940941908e-01)
	f64("logL3", 2.857142874366239149e-01)
	f64("logL4", 2.222219843214978396e-01)
	f64("logL5", 1.818357216161805012e-01)
	f64("logL6", 1.531383769920937332e-01)
	f64("logL7", 1.479819860511658591e-01)
	f64("logLn2Hi", 6.93147180369123816490e-01)
	f64("logLn2Lo", 1.90821492927058770002e-10)
	f64("expLog2e", 1.4426950408889634073599246810018920)
	f64("expLn2U", 0.69314718055966295651160180568695068359375)
	f64("expLn2L", 0.28235290563031577122588448175013436025525412068e-12)
	f64("sixteenth", 0.0625)
	f64("exp24", 1.6666666666666666667e-1)
	f64("exp32", 4.1666666666666666667e-2)
	f64("exp40", 8.3333333333333333333e-3)
	f64("exp48", 1.3888888888888888889e-3)
	f64("exp56", 1.9841269841269841270e-4)
	f64("exp64", 2.4801587301587301587e-5)
}

// log64 is math/log_amd64.s's main path on float64 lanes.
func log64(s isa) {
	text(s, "log64", "func(dst, x []float64)",
		fmt.Sprintf("writes math.Log's amd64 main path for the first len(x) − len(x) mod %d", s.w/2),
		"values of x into dst: right where a value is positive, normal and finite.")
	dst, x := ptr("dst"), ptr("x")
	n := length("x")
	SHRQ(U8(log2w(s)-1), n)
	vecLoop(n, every(s.bytes(), dst, x), func() {
		bits := s.vec()
		VMOVUPD(mem(x), bits)
		// f1, k := Frexp(x): f1 ∈ [0.5, 1), k = e − 1022, as a float.
		f := s.vec()
		s.and(c32("mant64"), bits, f)
		s.or(c32("half64"), f, f)
		k := s.vec()
		VPSRLQ(U8(52), bits, k)
		VPADDQ(c32("kMagic"), k, k)
		VSUBPD(c32("magic64"), k, k)
		// if f1 ≤ √2/2 { k −= 1; f1 *= 2 }, as 1 or 0, then 2 or 1.
		m := s.cmpPD(cmpLE, c32("hSqrt2"), f)
		c := s.vec()
		VMOVUPD(c32("one64"), c)
		s.keepPD(m, c)
		VSUBPD(c, k, k)
		VADDPD(c32("one64"), c, c)
		VMULPD(c, f, f)
		VSUBPD(c32("one64"), f, f) // f = f1 − 1
		sv := s.vec()
		VADDPD(c32("two64"), f, sv)
		VDIVPD(sv, f, sv) // s = f/(2 + f)
		s2, s4 := s.vec(), s.vec()
		VMULPD(sv, sv, s2)
		VMULPD(s2, s2, s4)
		// t1 = s2·(L1 + s4·(L3 + s4·(L5 + s4·L7))), without FMA.
		t := s.vec()
		VMULPD(c32("logL7"), s4, t)
		VADDPD(c32("logL5"), t, t)
		VMULPD(s4, t, t)
		VADDPD(c32("logL3"), t, t)
		VMULPD(s4, t, t)
		VADDPD(c32("logL1"), t, t)
		VMULPD(t, s2, s2) // t1
		// t2 = s4·(L2 + s4·(L4 + s4·L6)).
		VMULPD(c32("logL6"), s4, t)
		VADDPD(c32("logL4"), t, t)
		VMULPD(s4, t, t)
		VADDPD(c32("logL2"), t, t)
		VMULPD(t, s4, s4)  // t2
		VADDPD(s4, s2, s2) // R = t1 + t2
		h := s.vec()
		VMULPD(c32("half64"), f, h)
		VMULPD(f, h, h)    // hfsq = 0.5·f·f
		VADDPD(h, s2, s2)  // hfsq + R
		VMULPD(s2, sv, sv) // s·(hfsq + R)
		VMULPD(c32("logLn2Lo"), k, t)
		VADDPD(t, sv, sv) // s·(hfsq + R) + k·Ln2Lo
		VSUBPD(sv, h, h)  // hfsq − (…)
		VSUBPD(f, h, h)   // (hfsq − (…)) − f
		VMULPD(c32("logLn2Hi"), k, k)
		VSUBPD(h, k, k) // k·Ln2Hi − ((hfsq − (…)) − f)
		VMOVUPD(k, mem(dst))
	})
	VZEROUPPER()
	RET()
}

// exp64 is math/exp_amd64.s's FMA path on float64 lanes.
func exp64(s isa) {
	text(s, "exp64", "func(dst, x []float64)",
		fmt.Sprintf("writes math.Exp's amd64 FMA path for the first len(x) − len(x) mod %d", s.w/2),
		"values of x into dst: right where a value is in [−708, 709].")
	dst, x := ptr("dst"), ptr("x")
	n := length("x")
	SHRQ(U8(log2w(s)-1), n)
	vecLoop(n, every(s.bytes(), dst, x), func() {
		v := s.vec()
		VMOVUPD(mem(x), v)
		// n = round(x·log2 e) (CVTSD2SL: to nearest, ties to even), as
		// the low bits of 1.5·2⁵² + n and as a float.
		r, nf := s.vec(), s.vec()
		VMULPD(c32("expLog2e"), v, r)
		VADDPD(c32("magic64"), r, r)
		VSUBPD(c32("magic64"), r, nf)
		VFNMADD231PD(c32("expLn2U"), nf, v) // x − n·Ln2U
		VFNMADD231PD(c32("expLn2L"), nf, v) // … − n·Ln2L
		VMULPD(c32("sixteenth"), v, v)
		p := s.vec()
		VMOVUPD(c32("exp64"), p)
		for _, c := range []string{"exp56", "exp48", "exp40", "exp32", "exp24", "half64", "one64"} {
			VFMADD213PD(c32(c), v, p) // p = p·x + c
		}
		VMULPD(p, v, v)
		for range 3 {
			VADDPD(c32("two64"), v, p)
			VMULPD(p, v, v)
		}
		VADDPD(c32("two64"), v, p)
		VFMADD213PD(c32("one64"), p, v) // v = p·v + 1
		// ·2ⁿ: the exponent bits n + 1023.
		VPADDQ(c32("bias64"), r, r)
		VPSLLQ(U8(52), r, r)
		VMULPD(r, v, v)
		VMOVUPD(v, mem(dst))
	})
	VZEROUPPER()
	RET()
}

// absDiv64 is AbsDiv a vector at a time.
func absDiv64(s isa) {
	text(s, "absDiv64", "func(dst, x []float64, a float64)",
		fmt.Sprintf("is AbsDiv on the first len(x) − len(x) mod %d values.", s.w/2))
	dst, x := ptr("dst"), ptr("x")
	n := length("x")
	SHRQ(U8(log2w(s)-1), n)
	av := s.bcastParam64("a")
	vecLoop(n, every(s.bytes(), dst, x), func() {
		v := s.vec()
		VMOVUPD(mem(x), v)
		s.and(c32("absMask64"), v, v)
		VDIVPD(av, v, v)
		VMOVUPD(v, mem(dst))
	})
	VZEROUPPER()
	RET()
}

// dotMT64 is DotMT's vector part: gonum's DotUnitary (4 partial sums:
// coordinates 0, 1, 2, 3 mod 4, products rounded then added, the block's
// last n mod 4 coordinates into the first sum, then (s1 + s3) + (s0 + s2))
// for a lane of outputs each, over blocks of 64 coordinates added in turn
// into the output (from 0), as Dgemm computes X·Mᵀ a block of 64 columns
// at a time.
func dotMT64(s isa) { dotMTOf(s, 1) }

// dotMTRows64 is DotMTRows's vector part: dotMT64 for several rows of X
// at once (4 with AVX-512's 32 registers, 2 with AVX2's 16), each vector
// of Mᵀ loaded once for all of them.
func dotMTRows64(s isa) {
	rows := 4
	if !s.avx512 {
		rows = 2
	}
	dotMTOf(s, rows)
}

func dotMTOf(s isa, rows int) {
	if rows == 1 {
		text(s, "dotMT64", "func(y, x, mt []float64)",
			fmt.Sprintf("writes y[j] = Σ over 64-coordinate blocks of DotUnitary(x[block], M_j[block]) for the first len(x) − len(x) mod %d", s.w/2),
			"outputs j (mt is Mᵀ, d×d row-major: mt[k·d + j] = M_jk; d = len(x)).")
	} else {
		text(s, "dotMTRows64", "func(y, x, mt []float64)",
			fmt.Sprintf("is dotMT64%s on the %d rows of x (d×d mt, d = len(mt)/d: len(x) = %d·d), into the %d rows of y.", s.suffix, rows, rows, rows))
	}
	yp, xp, mtp := ptr("y"), ptr("x"), ptr("mt")
	d := length("x")
	if rows > 1 {
		SHRQ(U8(log2(rows)), d)
	}
	groups := GP64()
	MOVQ(d, groups)
	SHRQ(U8(log2w(s)-1), groups)
	rowBytes := GP64()
	MOVQ(d, rowBytes)
	SHLQ(U8(3), rowBytes)
	var rb3 Register
	if rows > 3 {
		rb3 = GP64()
		IMUL3Q(U32(3), rowBytes, rb3)
	}
	// row r of x or y from base.
	row := func(base Register, r, disp int) Mem {
		switch r {
		case 0:
			return Mem{Base: base, Disp: disp}
		case 1, 2:
			return Mem{Base: base, Index: rowBytes, Scale: uint8(r), Disp: disp}
		}
		return Mem{Base: base, Index: rb3, Scale: 1, Disp: disp}
	}
	colp := GP64()
	MOVQ(mtp, colp)
	Label("group")
	TESTQ(groups, groups)
	JZ(LabelRef("done"))
	res := make([]VecVirtual, rows)
	for r := range res {
		res[r] = s.vec()
		s.zero(res[r])
	}
	k0 := GP64()
	XORQ(k0, k0)
	Label("block")
	CMPQ(k0, d)
	JAE(LabelRef("store"))
	n := GP64()
	MOVQ(d, n)
	SUBQ(k0, n)
	CMPQ(n, U32(64))
	JBE(LabelRef("sized"))
	MOVQ(U32(64), n)
	Label("sized")
	acc := make([][]VecVirtual, rows)
	for r := range acc {
		acc[r] = []VecVirtual{s.vec(), s.vec(), s.vec(), s.vec()}
		for _, a := range acc[r] {
			s.zero(a)
		}
	}
	xk, mk := GP64(), GP64()
	LEAQ(Mem{Base: xp, Index: k0, Scale: 8}, xk)
	MOVQ(k0, mk)
	IMULQ(rowBytes, mk)
	ADDQ(colp, mk)
	q := GP64()
	MOVQ(n, q)
	SHRQ(U8(2), q)
	term := func(t int, disp int) {
		if rows == 1 {
			b, p := s.vec(), s.vec()
			VBROADCASTSD(Mem{Base: xk, Disp: disp}, b)
			VMULPD(Mem{Base: mk}, b, p)
			VADDPD(p, acc[0][t], acc[0][t])
		} else {
			m := s.vec()
			VMOVUPD(Mem{Base: mk}, m)
			for r := range rows {
				b, p := s.vec(), s.vec()
				VBROADCASTSD(row(xk, r, disp), b)
				VMULPD(m, b, p)
				VADDPD(p, acc[r][t], acc[r][t])
			}
		}
		ADDQ(rowBytes, mk)
	}
	Label("quad")
	TESTQ(q, q)
	JZ(LabelRef("tail"))
	for t := range 4 {
		term(t, 8*t)
	}
	ADDQ(U32(32), xk)
	DECQ(q)
	JMP(LabelRef("quad"))
	Label("tail")
	ANDQ(U32(3), n)
	Label("one")
	TESTQ(n, n)
	JZ(LabelRef("sum"))
	term(0, 0)
	ADDQ(U32(8), xk)
	DECQ(n)
	JMP(LabelRef("one"))
	Label("sum")
	for r := range rows {
		a := acc[r]
		VADDPD(a[3], a[1], a[1])     // s1 + s3
		VADDPD(a[2], a[0], a[0])     // s0 + s2
		VADDPD(a[0], a[1], a[1])     // (s1 + s3) + (s0 + s2)
		VADDPD(res[r], a[1], res[r]) // the output += the block's dot product, the latter first (so a NaN's payload is as the compiled gonum's)
	}
	ADDQ(U32(64), k0)
	JMP(LabelRef("block"))
	Label("store")
	for r := range rows {
		VMOVUPD(res[r], row(yp, r, 0))
	}
	ADDQ(U32(s.bytes()), yp)
	ADDQ(U32(s.bytes()), colp)
	DECQ(groups)
	JMP(LabelRef("group"))
	Label("done")
	VZEROUPPER()
	RET()
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// solveLower64 is SolveLower's vector part: 4 vectors of rows (2·w rows of
// float64, w the float32 lanes) solved at once, each lane with the scalar
// loop's operations in its order — s = x_i, then s = s − (L_ij·y_j) for j =
// 0 … i−1, each product rounded before it is subtracted, then y_i = s/L_ii
// — so that every lane has the bits of the scalar solve. Outputs go a few
// at a time (4 with AVX-512's 32 registers, 2 with AVX2's 16): the terms
// j below the first of them once for all (each y_j loaded once for them),
// then the triangle among them in order, then the lone outputs left.
func solveLower64(s isa) {
	const groups = 4
	outs := 4
	if !s.avx512 {
		outs = 2
	}
	text(s, "solveLower64", "func(yt, l []float64, d int)",
		fmt.Sprintf("solves L·y = x for %d rows at once, in place: yt is d×%d row-major", groups*s.w/2, groups*s.w/2),
		"(row i, the rows' coordinates i), x on entry and y on return; l is L, d×d row-major,",
		"read on and below the diagonal.")
	yt, l := ptr("yt"), ptr("l")
	d := Load(Param("d"), GP64())
	rowBytes := groups * s.bytes()
	lRow := make([]Register, outs) // ii rows of L, in bytes (none for ii = 0)
	for ii := 1; ii < outs; ii++ {
		lRow[ii] = GP64()
		IMUL3Q(U32(8*ii), d, lRow[ii])
	}
	// at is L's entry ii rows below base, disp bytes on.
	at := func(base Register, ii, disp int) Mem {
		if ii == 0 {
			return Mem{Base: base, Disp: disp}
		}
		return Mem{Base: base, Index: lRow[ii], Scale: 1, Disp: disp}
	}
	yi := GP64() // row i of yt
	MOVQ(yt, yi)
	li := GP64() // row i of L
	MOVQ(l, li)
	i := GP64()
	XORQ(i, i)
	last := GP64() // d − outs: the last i that starts a group of outputs
	MOVQ(d, last)
	SUBQ(U32(outs), last)
	yj, lij, n := GP64(), GP64(), GP64()

	Label("group")
	CMPQ(i, last)
	JG(LabelRef("lone"))
	acc := make([][]VecVirtual, outs)
	for ii := range acc {
		acc[ii] = make([]VecVirtual, groups)
		for g := range groups {
			acc[ii][g] = s.vec()
			VMOVUPD(Mem{Base: yi, Disp: ii*rowBytes + g*s.bytes()}, acc[ii][g])
		}
	}
	MOVQ(yt, yj)
	MOVQ(li, lij)
	MOVQ(i, n)
	Label("groupTerm")
	TESTQ(n, n)
	JZ(LabelRef("triangle"))
	y := make([]VecVirtual, groups)
	for g := range y {
		y[g] = s.vec()
		VMOVUPD(Mem{Base: yj, Disp: g * s.bytes()}, y[g])
	}
	for ii := range outs {
		b := s.vec()
		VBROADCASTSD(at(lij, ii, 0), b)
		for g := range groups {
			p := s.vec()
			VMULPD(y[g], b, p)
			VSUBPD(p, acc[ii][g], acc[ii][g])
		}
	}
	ADDQ(U32(8), lij)
	ADDQ(U32(rowBytes), yj)
	DECQ(n)
	JMP(LabelRef("groupTerm"))
	Label("triangle")
	// lij is at L_ii for the group's first i: output ii's terms jj < ii,
	// from the outputs just solved, then its division.
	for ii := range outs {
		for jj := range ii {
			b := s.vec()
			VBROADCASTSD(at(lij, ii, 8*jj), b)
			for g := range groups {
				p := s.vec()
				VMULPD(acc[jj][g], b, p)
				VSUBPD(p, acc[ii][g], acc[ii][g])
			}
		}
		diag := s.vec()
		VBROADCASTSD(at(lij, ii, 8*ii), diag)
		for g := range groups {
			VDIVPD(diag, acc[ii][g], acc[ii][g])
			VMOVUPD(acc[ii][g], Mem{Base: yi, Disp: ii*rowBytes + g*s.bytes()})
		}
	}
	ADDQ(U32(outs*rowBytes), yi)
	ADDQ(lRow[outs-1], li)
	ADDQ(lRow[1], li)
	ADDQ(U32(outs), i)
	JMP(LabelRef("group"))

	Label("lone")
	CMPQ(i, d)
	JAE(LabelRef("done"))
	one := make([]VecVirtual, groups)
	for g := range one {
		one[g] = s.vec()
		VMOVUPD(Mem{Base: yi, Disp: g * s.bytes()}, one[g])
	}
	MOVQ(yt, yj)
	MOVQ(li, lij)
	MOVQ(i, n)
	Label("term")
	TESTQ(n, n)
	JZ(LabelRef("diag"))
	b := s.vec()
	VBROADCASTSD(mem(lij), b)
	for g := range one {
		p := s.vec()
		VMULPD(Mem{Base: yj, Disp: g * s.bytes()}, b, p)
		VSUBPD(p, one[g], one[g])
	}
	ADDQ(U32(8), lij)
	ADDQ(U32(rowBytes), yj)
	DECQ(n)
	JMP(LabelRef("term"))
	Label("diag")
	diag := s.vec()
	VBROADCASTSD(mem(lij), diag) // L_ii: where the terms stopped
	for g := range one {
		VDIVPD(diag, one[g], one[g])
		VMOVUPD(one[g], Mem{Base: yi, Disp: g * s.bytes()})
	}
	ADDQ(U32(rowBytes), yi)
	ADDQ(lRow[1], li)
	INCQ(i)
	JMP(LabelRef("lone"))
	Label("done")
	VZEROUPPER()
	RET()
}

// rankTile64 is RankUpdate's vector part: a tile of R rows (8 with
// AVX-512's 32 registers, 4 with AVX2's 16) by 2 vectors of columns, held
// in registers while the n rows x_t stream by, each entry updated as
// gonum's AxpyUnitaryTo updates it — s_rc = (x_tc·x_tr) + s_rc, the product
// rounded first, t in order — so that every entry has the bits of
// floats.AddScaled a row at a time.
func rankTile64(s isa) {
	const vecs = 2
	rows := 8
	if !s.avx512 {
		rows = 4
	}
	text(s, "rankTile64", "func(sig []float64, lds int, xr, xc []float64, ldx, n int)",
		fmt.Sprintf("adds Σ_t x_t[r]·x_t[c] into the %d×%d tile sig (rows lds apart) for r < %d,", rows, vecs*s.w/2, rows),
		fmt.Sprintf("c < %d, t < n: x_t[r] = xr[t·ldx + r], x_t[c] = xc[t·ldx + c].", vecs*s.w/2))
	sig, xr, xc := ptr("sig"), ptr("xr"), ptr("xc")
	lds := Load(Param("lds"), GP64())
	SHLQ(U8(3), lds)
	ldx := Load(Param("ldx"), GP64())
	SHLQ(U8(3), ldx)
	n := Load(Param("n"), GP64())
	acc := s.loadTile(sig, lds, rows, vecs)
	Label("t")
	TESTQ(n, n)
	JZ(LabelRef("store"))
	c := make([]VecVirtual, vecs)
	for v := range c {
		c[v] = s.vec()
		VMOVUPD(Mem{Base: xc, Disp: v * s.bytes()}, c[v])
	}
	for r := range rows {
		b := s.vec()
		VBROADCASTSD(Mem{Base: xr, Disp: 8 * r}, b)
		for v := range vecs {
			p := s.vec()
			VMULPD(b, c[v], p)              // x_tc·x_tr, AxpyUnitaryTo's MULPD
			VADDPD(acc[r][v], p, acc[r][v]) // then + s_rc, its ADDPD
		}
	}
	ADDQ(ldx, xr)
	ADDQ(ldx, xc)
	DECQ(n)
	JMP(LabelRef("t"))
	Label("store")
	s.storeTile(acc, sig, lds)
	VZEROUPPER()
	RET()
}

// trsmT64 is TrsmT's vector part: gonum's Dtrsm(Left, Upper, Trans,
// NonUnit) (upper) or Dtrsm(Left, Lower, Trans, Unit) on 4 vectors of
// columns, each lane with the operations gonum gives its element, in its
// order. Gonum goes a row k at a time: y_k = b_k·(1/a_kk) (NonUnit), then
// b_i = (y_k·(−a_ki)) + b_i for every later row i (ascending k for the
// upper triangle, descending for the lower) where a_ki is not ±0. Row i's
// element thus takes its terms in k's order, then its scaling: computed
// here a few rows i at a time (4 with AVX-512, 2 with AVX2), the terms of
// the rows before them once for all, then the triangle among them, then
// the lone rows left. A term y·(−a) added is y·a subtracted, bit for bit.
func trsmT64(s isa, upper bool) {
	const groups = 4
	outs := 4
	if !s.avx512 {
		outs = 2
	}
	name, which := "trsmLowerT64", "Dtrsm(Left, Lower, Trans, Unit)"
	if upper {
		name, which = "trsmUpperT64", "Dtrsm(Left, Upper, Trans, NonUnit)"
	}
	text(s, name, "func(yt, a []float64, d int)",
		fmt.Sprintf("is gonum's %s of the d×d matrix a (row-major) on yt,", which),
		fmt.Sprintf("d rows of %d columns (row-major), in place.", groups*s.w/2))
	yt, a := ptr("yt"), ptr("a")
	d := Load(Param("d"), GP64())
	rowBytes := groups * s.bytes()
	lda := make([]Register, outs) // ii rows of a, in bytes
	for ii := 1; ii < outs; ii++ {
		lda[ii] = GP64()
		IMUL3Q(U32(8*ii), d, lda[ii])
	}
	at := func(base Register, ii, disp int) Mem {
		if ii == 0 {
			return Mem{Base: base, Disp: disp}
		}
		return Mem{Base: base, Index: lda[ii], Scale: 1, Disp: disp}
	}
	coef := GP64()
	label := 0
	// sub subtracts y·a_m from acc unless a_m is ±0 (gonum's va != 0).
	sub := func(acc, y []VecVirtual, m Mem) {
		label++
		skip := fmt.Sprintf("zero%d", label)
		MOVQ(m, coef)
		ADDQ(coef, coef) // zero without the sign bit: ±0
		JZ(LabelRef(skip))
		b := s.vec()
		VBROADCASTSD(m, b)
		for g := range acc {
			p := s.vec()
			VMULPD(b, y[g], p)
			VSUBPD(p, acc[g], acc[g])
		}
		Label(skip)
	}
	scale := func(acc []VecVirtual, m Mem) {
		if !upper {
			return // unit diagonal
		}
		r, one := s.vec(), s.vec()
		VBROADCASTSD(m, r)
		VMOVUPD(c32("one64"), one)
		VDIVPD(r, one, r) // 1/a_ii, as gonum's tmp
		for g := range acc {
			VMULPD(r, acc[g], acc[g])
		}
	}
	loadRows := func(base Register, n int) [][]VecVirtual {
		acc := make([][]VecVirtual, n)
		for ii := range acc {
			acc[ii] = make([]VecVirtual, groups)
			for g := range groups {
				acc[ii][g] = s.vec()
				VMOVUPD(Mem{Base: base, Disp: ii*rowBytes + g*s.bytes()}, acc[ii][g])
			}
		}
		return acc
	}
	store := func(acc []VecVirtual, base Register, ii int) {
		for g := range acc {
			VMOVUPD(acc[g], Mem{Base: base, Disp: ii*rowBytes + g*s.bytes()})
		}
	}
	ldaBytes := GP64()
	MOVQ(d, ldaBytes)
	SHLQ(U8(3), ldaBytes)
	lo := GP64() // the first row of the rows being solved
	yi := GP64() // yt's row lo
	yk, ak, n := GP64(), GP64(), GP64()
	// terms runs the k loop for n rows of the rows before (upper: from row
	// 0 up; lower: from row d−1 down), acc the rows' sums.
	terms := func(acc [][]VecVirtual, tag string) {
		Label("terms" + tag)
		TESTQ(n, n)
		JZ(LabelRef("termsDone" + tag))
		y := make([]VecVirtual, groups)
		for g := range y {
			y[g] = s.vec()
			VMOVUPD(Mem{Base: yk, Disp: g * s.bytes()}, y[g])
		}
		for ii := range acc {
			sub(acc[ii], y, Mem{Base: ak, Disp: 8 * ii})
		}
		if upper {
			ADDQ(U32(rowBytes), yk)
			ADDQ(ldaBytes, ak)
		} else {
			SUBQ(U32(rowBytes), yk)
			SUBQ(ldaBytes, ak)
		}
		DECQ(n)
		JMP(LabelRef("terms" + tag))
		Label("termsDone" + tag)
	}
	// start points yk and ak at the first of the rows before lo (a_k's
	// entries for the rows from lo), n at their count; hi is lo + rows.
	start := func(rows int) {
		if upper {
			MOVQ(yt, yk)
			MOVQ(a, ak)
			LEAQ(Mem{Base: ak, Index: lo, Scale: 8}, ak)
			MOVQ(lo, n)
			return
		}
		// Rows d−1 down to lo + rows.
		MOVQ(d, n)
		SUBQ(lo, n)
		SUBQ(U32(rows), n)
		MOVQ(d, ak)
		DECQ(ak)
		IMUL3Q(U32(rowBytes), ak, yk)
		ADDQ(yt, yk)
		IMULQ(ldaBytes, ak)
		ADDQ(a, ak)
		LEAQ(Mem{Base: ak, Index: lo, Scale: 8}, ak)
	}
	// diagBase points ak at a's entry (lo, lo).
	diagBase := func() {
		MOVQ(lo, ak)
		IMULQ(ldaBytes, ak)
		ADDQ(a, ak)
		LEAQ(Mem{Base: ak, Index: lo, Scale: 8}, ak)
	}
	// block solves rows lo … lo+rows−1, yi at row lo.
	block := func(rows int, tag string) {
		acc := loadRows(yi, rows)
		start(rows)
		terms(acc, tag)
		diagBase()
		if upper {
			for ii := range rows {
				for jj := range ii {
					sub(acc[ii], acc[jj], at(ak, jj, 8*ii)) // a(lo+jj, lo+ii)
				}
				scale(acc[ii], at(ak, ii, 8*ii))
				store(acc[ii], yi, ii)
			}
			return
		}
		for ii := rows - 1; ii >= 0; ii-- {
			for kk := rows - 1; kk > ii; kk-- {
				sub(acc[ii], acc[kk], at(ak, kk, 8*ii)) // a(lo+kk, lo+ii)
			}
			store(acc[ii], yi, ii)
		}
	}
	if upper {
		XORQ(lo, lo)
		MOVQ(yt, yi)
		last := GP64() // d − outs: the last lo of a whole group
		MOVQ(d, last)
		SUBQ(U32(outs), last)
		Label("group")
		CMPQ(lo, last)
		JG(LabelRef("lone"))
		block(outs, "G")
		ADDQ(U32(outs), lo)
		ADDQ(U32(outs*rowBytes), yi)
		JMP(LabelRef("group"))
		Label("lone")
		CMPQ(lo, d)
		JAE(LabelRef("done"))
		block(1, "L")
		INCQ(lo)
		ADDQ(U32(rowBytes), yi)
		JMP(LabelRef("lone"))
	} else {
		MOVQ(d, lo)
		Label("group")
		CMPQ(lo, U32(outs))
		JL(LabelRef("lone"))
		SUBQ(U32(outs), lo)
		IMUL3Q(U32(rowBytes), lo, yi)
		ADDQ(yt, yi)
		block(outs, "G")
		JMP(LabelRef("group"))
		Label("lone")
		TESTQ(lo, lo)
		JZ(LabelRef("done"))
		DECQ(lo)
		IMUL3Q(U32(rowBytes), lo, yi)
		ADDQ(yt, yi)
		block(1, "L")
		JMP(LabelRef("lone"))
	}
	Label("done")
	VZEROUPPER()
	RET()
}

// gemmSub64 is GemmSub's vector part: a tile of C, R rows (8 with
// AVX-512, 4 with AVX2) by 2 vectors of columns, held in registers while
// the k rows of B stream by, each element updated as gonum's
// dgemmSerialNotNot updates it with alpha = −1: c_ij = (b_lj·(−a_il)) +
// c_ij for l in order, where a_il is not ±0 (a product by −a subtracted
// is the same bits).
func gemmSub64(s isa) {
	const vecs = 2
	rows := 8
	if !s.avx512 {
		rows = 4
	}
	text(s, "gemmSub64", "func(c []float64, ldc int, a []float64, lda int, b []float64, ldb, k int)",
		fmt.Sprintf("subtracts A·B from the %d×%d tile c (rows ldc apart), A %d×k (rows lda apart),", rows, vecs*s.w/2, rows),
		fmt.Sprintf("B k×%d (rows ldb apart), passing over A's ±0 entries as gonum's Dgemm does.", vecs*s.w/2))
	cp, a0, bp := ptr("c"), ptr("a"), ptr("b")
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(3), ldc)
	lda := Load(Param("lda"), GP64())
	SHLQ(U8(3), lda)
	ldb := Load(Param("ldb"), GP64())
	SHLQ(U8(3), ldb)
	k := Load(Param("k"), GP64())
	lda3 := GP64()
	IMUL3Q(U32(3), lda, lda3)
	var a4 Register
	if rows > 4 {
		a4 = GP64()
		LEAQ(Mem{Base: a0, Index: lda, Scale: 4}, a4)
	}
	// row r's entry of A at the current l.
	entry := func(r int) Mem {
		base := a0
		if r >= 4 {
			base, r = a4, r-4
		}
		switch r {
		case 0:
			return Mem{Base: base}
		case 1:
			return Mem{Base: base, Index: lda, Scale: 1}
		case 2:
			return Mem{Base: base, Index: lda, Scale: 2}
		}
		return Mem{Base: base, Index: lda3, Scale: 1}
	}
	acc := s.loadTile(cp, ldc, rows, vecs)
	coef := GP64()
	Label("l")
	TESTQ(k, k)
	JZ(LabelRef("store"))
	bv := make([]VecVirtual, vecs)
	for v := range bv {
		bv[v] = s.vec()
		VMOVUPD(Mem{Base: bp, Disp: v * s.bytes()}, bv[v])
	}
	for r := range rows {
		skip := fmt.Sprintf("zero%d", r)
		MOVQ(entry(r), coef)
		ADDQ(coef, coef) // zero without the sign bit: ±0
		JZ(LabelRef(skip))
		bc := s.vec()
		VBROADCASTSD(entry(r), bc)
		for v := range vecs {
			p := s.vec()
			VMULPD(bc, bv[v], p)
			VSUBPD(p, acc[r][v], acc[r][v])
		}
		Label(skip)
	}
	ADDQ(U32(8), a0)
	if rows > 4 {
		ADDQ(U32(8), a4)
	}
	ADDQ(ldb, bp)
	DECQ(k)
	JMP(LabelRef("l"))
	Label("store")
	s.storeTile(acc, cp, ldc)
	VZEROUPPER()
	RET()
}

// loadTile loads a tile of float64 rows (rows of vecs vectors, ld bytes
// apart from base) into registers.
func (s isa) loadTile(base, ld Register, rows, vecs int) [][]VecVirtual {
	acc := make([][]VecVirtual, rows)
	row := GP64()
	MOVQ(base, row)
	for r := range acc {
		acc[r] = make([]VecVirtual, vecs)
		for v := range vecs {
			acc[r][v] = s.vec()
			VMOVUPD(Mem{Base: row, Disp: v * s.bytes()}, acc[r][v])
		}
		if r < rows-1 {
			ADDQ(ld, row)
		}
	}
	return acc
}

// storeTile stores loadTile's registers back.
func (s isa) storeTile(acc [][]VecVirtual, base, ld Register) {
	row := GP64()
	MOVQ(base, row)
	for r := range acc {
		for v := range acc[r] {
			VMOVUPD(acc[r][v], Mem{Base: row, Disp: v * s.bytes()})
		}
		if r < len(acc)-1 {
			ADDQ(ld, row)
		}
	}
}
