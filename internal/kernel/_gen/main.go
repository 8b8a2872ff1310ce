// Command _gen writes internal/kernel's assembly kernels (vec_amd64.s) and
// their Go declarations (vec_amd64.go) with avo: each kernel in an AVX-512F
// form (suffix 512, sixteen float32 lanes) and an AVX2+FMA form (suffix 256,
// eight lanes), written once against isa. Run by go generate in
// internal/kernel.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	defineConsts()
	for _, s := range []isa{avx512, avx2} {
		sqRowsBound(s)
		expRow(s)
		addWeighted(s)
		powRows(s, false)
		powRows(s, true)
		powRowsOf(s, true, false)
		sigmoids(s)
		pnormRow(s)
		transposeBlock(s)
		normSmallFwd(s, true)
		normSmallFwd(s, false)
		normSmallBwd(s)
		mulDiv(s)
		addWiden(s)
		expSmall(s)
		addSmall(s)
		gemmTile(s)
		maxAbs(s)
		gradRow(s)
		subRows64(s)
		screenMask(s)
		sqHalf(s)
		powHalf(s, false)
		powHalf(s, true)
		prefetch(s)
		log64(s)
		exp64(s)
		sub32(s)
		absDiv64(s)
		dotMT64(s)
		dotMTRows64(s)
		solveLower64(s)
		rankTile64(s)
		trsmT64(s, true)
		trsmT64(s, false)
		gemmSub64(s)
	}
	sqDistParts64(avx2) // 256-bit vectors at both levels: one form
	lutByte(avx512)
	Generate()
}

// text starts a function and its doc comment.
func text(s isa, name, sig string, doc ...string) {
	TEXT(name+s.suffix, NOSPLIT, sig)
	doc[0] = name + s.suffix + " " + doc[0]
	Doc(doc...)
}

func expRow(s isa) {
	text(s, "expRow", "func(logm, p, row, e, c []float32) float64",
		fmt.Sprintf("is ExpRow on the first len(row) − len(row) mod %d coordinates.", s.w))
	logm, p, row, e, c := ptr("logm"), ptr("p"), ptr("row"), ptr("e"), ptr("c")
	n := length("row")
	SHRQ(U8(log2w(s)), n)
	acc := s.vec()
	s.zero(acc)
	vecLoop(n, every(s.bytes(), logm, p, row, e, c), func() {
		cj := s.vec()
		VMOVUPS(mem(logm), cj)
		VADDPS(mem(row), cj, cj)
		x := s.vec()
		VMULPS(mem(p), cj, x)
		ej := s.exp32(x)
		VMOVUPS(ej, mem(e))
		VMOVUPS(cj, mem(c))
		s.widen(ej, acc)
	})
	sum := s.hsum64(acc)
	VZEROUPPER()
	Store(sum, ReturnIndex(0))
	RET()
}

func log2w(s isa) int {
	if s.w == 16 {
		return 4
	}
	return 3
}

func addWeighted(s isa) {
	text(s, "addWeighted", "func(sumE, sumEC []float64, w float64, e, c []float32)",
		fmt.Sprintf("is AddWeighted on the first len(e) − len(e) mod %d coordinates.", s.w/2))
	sumE, sumEC, e, c := ptr("sumE"), ptr("sumEC"), ptr("e"), ptr("c")
	n := length("e")
	SHRQ(U8(log2w(s)-1), n)
	wv := s.bcastParam64("w")
	vecLoop(n, append(every(s.bytes(), sumE, sumEC), every(s.bytes()/2, e, c)...), func() {
		we, ce, se := s.vec(), s.vec(), s.vec()
		VCVTPS2PD(mem(e), we)
		VMULPD(wv, we, we)
		VCVTPS2PD(mem(c), ce)
		VADDPD(mem(sumE), we, se)
		VMOVUPD(se, mem(sumE))
		VMULPD(ce, we, we)
		VADDPD(mem(sumEC), we, we)
		VMOVUPD(we, mem(sumEC))
	})
	VZEROUPPER()
	RET()
}

// powRows is FastPowRows (bound false) or, for retrieval, the same scores of
// anchor − item with an early exit (bound true): once a row's partial sum
// passes limit its scan stops and the partial sum is its score; the lanes
// outside float32's normal range add 0 to the sum, and a row that had any
// and did not stop scores +Inf (to be rescored exactly).
func powRows(s isa, bound bool) { powRowsOf(s, bound, bound) }

// powRowsOf is powRows on anchor − item (anchored) with or without the
// early exit (bound): powRows, powRowsBound, and powRowsAnchor (anchored,
// every row to its end, no partial sums checked).
func powRowsOf(s isa, anchored, bound bool) {
	switch {
	case bound:
		text(s, "powRowsBound", "func(dst []float64, m, p, anchor, items []float32, limit float32)",
			"writes the fast score of anchor − item for each row of items into dst,",
			"stopping a row once a partial sum (every other vector) passes limit.")
	case anchored:
		text(s, "powRowsAnchor", "func(dst []float64, m, p, anchor, items []float32)",
			"writes the fast score of anchor − item for each row of items into dst",
			"(a coordinate outside float32's normal range makes the row's +Inf).")
	default:
		text(s, "powRows", "func(dst []float64, m, p, diffs []float32)", "is FastPowRows.")
	}
	dst := ptr("dst")
	rows := length("dst")
	d := length("m")
	var x, anchor Register
	var limit VecVirtual
	if anchored {
		x = ptr("items")
		anchor = ptr("anchor")
	} else {
		x = ptr("diffs")
	}
	if bound {
		limit = XMM()
		VMOVSS(paramAddr("limit"), limit)
	}
	mBase, pBase := ptr("m"), ptr("p")
	r, tailK, tailV := s.tailMask(d)
	nb := GP64()
	MOVQ(d, nb)
	SHRQ(U8(log2w(s)), nb)
	var ahead Register
	if anchored {
		ahead = prefetchDistance(d)
	}

	Label("row")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	acc := s.vec()
	s.zero(acc)
	spec := GP32()
	XORL(spec, spec)
	var kspec Register
	if bound && s.avx512 {
		kspec = K()
		KXORW(kspec, kspec, kspec)
	}
	mp, pp, ap := GP64(), GP64(), GP64()
	MOVQ(mBase, mp)
	MOVQ(pBase, pp)
	if anchored {
		MOVQ(anchor, ap)
	}
	j := GP64()
	MOVQ(nb, j)

	term := func(xv VecVirtual, mv, pv Op) {
		y := s.vec()
		s.and(s.konst("absMask"), xv, y)
		VMULPS(mv, y, y)
		l2 := s.log2(y)
		VMULPS(pv, l2, l2)
		e := s.exp2(l2)
		normal, special := s.classes(y)
		s.keep(normal, e)
		if bound && s.avx512 {
			KORW(special, kspec, kspec)
		} else if bound {
			s.orBits(special, spec)
		} else {
			s.sel(special, s.konst("inf"), e)
		}
		VADDPS(e, acc, acc)
	}
	load := func(xv VecVirtual, full bool) {
		switch {
		case full && anchored:
			VMOVUPS(mem(ap), xv)
			VSUBPS(mem(x), xv, xv)
		case full:
			VMOVUPS(mem(x), xv)
		case s.avx512 && anchored:
			t := s.vec()
			VMOVUPS_Z(mem(ap), tailK, xv)
			VMOVUPS_Z(mem(x), tailK, t)
			VSUBPS(t, xv, xv)
		case s.avx512:
			VMOVUPS_Z(mem(x), tailK, xv)
		case anchored:
			t := s.vec()
			VMASKMOVPS(mem(ap), tailV, xv)
			VMASKMOVPS(mem(x), tailV, t)
			VSUBPS(t, xv, xv)
		default:
			VMASKMOVPS(mem(x), tailV, xv)
		}
	}
	Label("chunk")
	TESTQ(j, j)
	JZ(LabelRef("tail"))
	if anchored {
		// The rows ahead: a row that stops mispredicts its branch and
		// would leave the loads of the next ones unissued (and the
		// hardware prefetchers stop at pages).
		PREFETCHT0(Mem{Base: x, Index: ahead, Scale: 1})
	}
	xv := s.vec()
	load(xv, true)
	term(xv, mem(mp), mem(pp))
	for _, q := range []Register{mp, pp, x} {
		ADDQ(U32(s.bytes()), q)
	}
	if anchored {
		ADDQ(U32(s.bytes()), ap)
	}
	DECQ(j)
	if bound {
		// The partial sum, every other vector (a float32 horizontal sum).
		TESTQ(U32(1), j)
		JNZ(LabelRef("chunk"))
		VUCOMISS(limit, s.hsumPS(acc))
		JA(LabelRef("exit"))
	}
	JMP(LabelRef("chunk"))

	Label("tail")
	TESTQ(r, r)
	JZ(LabelRef("sum"))
	tv := s.vec()
	load(tv, false)
	mv, pv := s.vec(), s.vec()
	if s.avx512 {
		VMOVUPS_Z(mem(mp), tailK, mv)
		VMOVUPS_Z(mem(pp), tailK, pv)
	} else {
		VMASKMOVPS(mem(mp), tailV, mv)
		VMASKMOVPS(mem(pp), tailV, pv)
	}
	term(tv, mv, pv)
	LEAQ(Mem{Base: x, Index: r, Scale: 4}, x)

	Label("sum")
	sum := s.hsum32(acc)
	if bound {
		if s.avx512 {
			KMOVW(kspec, spec)
		}
		TESTL(spec, spec)
		JZ(LabelRef("store"))
		VMOVSD(c32("inf64"), sum)
		JMP(LabelRef("store"))
		Label("exit")
		// The row's remaining coordinates are not read: skip to the next row.
		VMOVAPD(s.hsum32(acc), sum) // the partial sum (its register is not live here)
		rest := GP64()
		MOVQ(j, rest)
		SHLQ(U8(log2w(s)+2), rest)
		ADDQ(rest, x)
		LEAQ(Mem{Base: x, Index: r, Scale: 4}, x)
		Label("store")
	}
	VMOVSD(sum, mem(dst))
	ADDQ(U32(8), dst)
	DECQ(rows)
	JMP(LabelRef("row"))
	Label("done")
	VZEROUPPER()
	RET()
}

func sigmoids(s isa) {
	text(s, "sigmoids", "func(T, t float64, phi, sig, der []float64) bool",
		fmt.Sprintf("is Sigmoids on the first len(phi) − len(phi) mod %d scores; it", s.w/2),
		"reports whether any has |T·(φ − t)| > 708 or not finite: those are for",
		"the caller to recompute.")
	phi, sig, der := ptr("phi"), ptr("sig"), ptr("der")
	n := length("phi")
	SHRQ(U8(log2w(s)-1), n)
	tv := s.bcastParam64("T")
	t0 := s.bcastParam64("t")
	one := s.vec()
	VMOVUPD(c32("one64"), one)
	zero := s.vec()
	s.zero(zero)
	bad := GP32()
	XORL(bad, bad)
	vecLoop(n, every(s.bytes(), phi, sig, der), func() {
		u := s.vec()
		VMOVUPD(mem(phi), u)
		VSUBPD(t0, u, u)
		VMULPD(tv, u, u) // T·(φ − t), as the scalar form
		au := s.vec()
		if s.avx512 {
			VPANDQ(c32("absMask64"), u, au)
		} else {
			VPAND(c32("absMask64"), u, au)
		}
		b := s.bitsPD(s.cmpPD(0x16, c32("highX"), au)) // not |u| ≤ 708
		ORL(b, bad)
		x := s.vec()
		VSUBPD(au, zero, x)
		VMAXPD(c32("lowX"), x, x)
		k := s.vec()
		VMULPD(c32("log2e64"), x, k)
		if s.avx512 {
			VRNDSCALEPD(U8(0), k, k)
		} else {
			VROUNDPD(U8(0), k, k)
		}
		VFMADD231PD(c32("ln2hi"), k, x)
		VFMADD231PD(c32("ln2lo"), k, x)
		e := s.vec()
		VMOVUPD(c32("t12"), e)
		for i := 11; i >= 0; i-- {
			VFMADD213PD(c32("t"+itoa(i)), x, e)
		}
		if s.avx512 {
			VSCALEFPD(k, e, e)
		} else {
			ki := XMM()
			VCVTPD2DQY(k, ki)
			kq := YMM()
			VPMOVSXDQ(ki, kq)
			VPADDQ(c32("bias64"), kq, kq)
			VPSLLQ(U8(52), kq, kq)
			VMULPD(kq, e, e)
		}
		// e = z = e^{−|u|}.
		den := s.vec()
		VADDPD(one, e, den)
		inv := s.vec()
		VDIVPD(den, one, inv)
		sv := s.vec()
		VMOVUPD(one, sv)
		s.selPD(s.cmpPD(cmpLT, zero, u), e, sv)
		VMULPD(inv, sv, sv)
		VMOVUPD(sv, mem(sig))
		dv := s.vec()
		VMULPD(e, tv, dv)
		VMULPD(inv, dv, dv)
		VMULPD(inv, dv, dv)
		VMOVUPD(dv, mem(der))
	})
	VZEROUPPER()
	TESTL(bad, bad)
	SETNE(AL)
	Store(AL, ReturnIndex(0))
	RET()
}

func pnormRow(s isa) {
	text(s, "pnormRow", "func(y []float32, inv, p float32, up []float32) (sum, t float64, special bool)",
		fmt.Sprintf("sums u^p and u^p·ln u, u = |y|·inv, over the first len(y) − len(y) mod %d", s.w),
		"coordinates (writing u^p into up unless it is empty); special reports a u",
		"outside float32's normal range other than 0.")
	y, up := ptr("y"), ptr("up")
	n := length("y")
	store := length("up")
	SHRQ(U8(log2w(s)), n)
	inv := s.bcastParam32("inv")
	pv := s.bcastParam32("p")
	sAcc, tAcc := s.vec(), s.vec()
	s.zero(sAcc)
	s.zero(tAcc)
	spec := GP32()
	XORL(spec, spec)
	vecLoop(n, every(s.bytes(), y), func() {
		u := s.vec()
		VMULPS(mem(y), inv, u)
		s.and(s.konst("absMask"), u, u)
		l2 := s.log2(u)
		a := s.vec()
		VMULPS(pv, l2, a)
		e := s.exp2(a)
		normal, special := s.classes(u)
		s.orBits(special, spec)
		s.keep(normal, e)
		VADDPS(e, sAcc, sAcc)
		VMULPS(s.konst("ln2"), l2, l2)
		s.keep(normal, l2)
		VMULPS(e, l2, l2)
		VADDPS(l2, tAcc, tAcc)
		TESTQ(store, store)
		JZ(LabelRef("next"))
		VMOVUPS(e, mem(up))
		ADDQ(U32(s.bytes()), up)
		Label("next")
	})
	sum := s.hsum32(sAcc)
	t := s.hsum32(tAcc)
	VZEROUPPER()
	Store(sum, ReturnIndex(0))
	Store(t, ReturnIndex(1))
	TESTL(spec, spec)
	SETNE(AL)
	Store(AL, ReturnIndex(2))
	RET()
}

// transposeLoop writes the vectors of a block of w rows of d float32 (x,
// w·d values, row-major: d vectors) transposed into xt: vector l holds
// coordinate l of each row. Lane r of vector l is value r·d + l of the
// block, lane (r·d + l) mod w of source vector ⌊(r·d + l)/w⌋: for each l, one
// permute of each source vector by tab's index vector l, merged into the
// lanes whose source it is (tab, kernel.transposeTab: d index vectors, then
// the d·d masks — 16-bit masks in int32 slots for AVX-512, vectors for
// AVX2). Permutes, not gathers: a gather is slow on some processors (eight
// or more cycles a vector on AMD's).
func transposeLoop(s isa, x, d, xt, tab Register) {
	B := s.bytes()
	maskStride := 4
	if !s.avx512 {
		maskStride = B
	}
	mb := GP64()
	MOVQ(d, mb)
	SHLQ(U8(log2w(s)+2), mb)
	ADDQ(tab, mb) // the masks follow the d index vectors
	ip, out, l := GP64(), GP64(), GP64()
	MOVQ(tab, ip)
	MOVQ(xt, out)
	MOVQ(d, l)
	Label("tl")
	idx, acc := s.vec(), s.vec()
	VMOVUPS(mem(ip), idx)
	s.zero(acc)
	src, sc := GP64(), GP64()
	MOVQ(x, src)
	MOVQ(d, sc)
	Label("ts")
	if s.avx512 {
		k := K()
		KMOVW(mem(mb), k)
		VPERMPS(mem(src), idx, k, acc)
	} else {
		pv, m := s.vec(), s.vec()
		VPERMPS(mem(src), idx, pv)
		VMOVUPS(mem(mb), m)
		VBLENDVPS(m, pv, acc, acc)
	}
	ADDQ(U32(B), src)
	ADDQ(U32(maskStride), mb)
	DECQ(sc)
	JNZ(LabelRef("ts"))
	VMOVUPS(acc, mem(out))
	ADDQ(U32(B), out)
	ADDQ(U32(B), ip)
	DECQ(l)
	JNZ(LabelRef("tl"))
}

// transposeBlock is the kernel around transposeLoop.
func transposeBlock(s isa) {
	text(s, "transposeBlock", "func(xt, x []float32, d int, tab []int32)",
		fmt.Sprintf("writes the %d rows of d values in x transposed into xt: vector l", s.w),
		"of xt holds coordinate l of each row (tab: kernel.transposeTab).")
	xt, x, tab := ptr("xt"), ptr("x"), ptr("tab")
	d := Load(Param("d"), GP64())
	transposeLoop(s, x, d, xt, tab)
	VZEROUPPER()
	RET()
}

// normSmallFwd writes normSmallFwd or, without grads, normSmallScore: the
// same scores (the same operations, in the same order) with nothing kept
// for a backward pass.
func normSmallFwd(s isa, grads bool) {
	name := "normSmallFwd"
	if !grads {
		name = "normSmallScore"
	}
	text(s, name, "func(blks [][]float32, d int, m []float32, p, invP, cpE float32, xt, y, up, out []float32, tab []int32, scores []float64, special []uint16)",
		fmt.Sprintf("is the single-norm's forward pass on len(special) blocks of %d rows of", s.w),
		"d < 16 (blks, each row-major), block b's arrays at b times their size:",
		"xt the block transposed, y = M·x, up = u^p (d vectors each), in out",
		"(7 vectors, the last left alone) max|y|, S'^{1/p}, S', T, log2 S',",
		fmt.Sprintf("S'^{(1−p)/p}, and into scores (%d float64s) each row's max|y|·S'^{1/p}", s.w),
		"in float64. special[b] gets block b's lanes with a u outside float32's",
		"normal range other than 0 (whose scores are not meaningful). One call",
		"for a group of blocks: a call per block, with its 27 argument words,",
		"had been 7% of the AVX2 simulation's time.")
	if !grads {
		Doc(name+s.suffix+" is normSmallFwd"+s.suffix+" without what the backward pass reads",
			"(up and out), for scores alone.")
	}
	B := s.bytes()
	// The loop's state lives in the frame: the block's own work needs every
	// general register but two.
	f := inFrame("blks", "xt", "y", "up", "out", "scores", "special")
	blkL, xtL, yL, upL, outL, scL, spL, nL := f[0], f[1], f[2], f[3], f[4], f[5], f[6], AllocLocal(8)
	n := length("special")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	MOVQ(n, nL)
	Label("block")
	x, xt, y, up, out := GP64(), GP64(), GP64(), GP64(), GP64()
	MOVQ(blkL, x)
	MOVQ(Mem{Base: x}, x)
	MOVQ(xtL, xt)
	MOVQ(yL, y)
	MOVQ(upL, up)
	MOVQ(outL, out)
	m := ptr("m")
	d := Load(Param("d"), GP64())
	transposeLoop(s, x, d, xt, ptr("tab"))
	// y = M·x, a = max|y|.
	absR := s.load("absMask")
	a := s.vec()
	s.zero(a)
	mp, yp := GP64(), GP64()
	MOVQ(m, mp)
	MOVQ(y, yp)
	kk := GP64()
	MOVQ(d, kk)
	Label("yk")
	yk := s.vec()
	s.zero(yk)
	xtp, l := GP64(), GP64()
	MOVQ(xt, xtp)
	MOVQ(d, l)
	Label("yl")
	mb := s.vec()
	VBROADCASTSS(mem(mp), mb)
	VFMADD231PS(mem(xtp), mb, yk)
	ADDQ(U32(4), mp)
	ADDQ(U32(B), xtp)
	DECQ(l)
	JNZ(LabelRef("yl"))
	VMOVUPS(yk, mem(yp))
	ADDQ(U32(B), yp)
	s.and(absR, yk, yk)
	VMAXPS(yk, a, a)
	DECQ(kk)
	JNZ(LabelRef("yk"))
	if grads {
		VMOVUPS(a, mem(out))
	}
	zero := s.vec()
	s.zero(zero)
	live := s.cmp(cmpNEQ, zero, a)
	one := s.load("one")
	inv := s.vec()
	VDIVPS(a, one, inv)
	s.keep(live, inv)
	pv := s.bcastParam32("p")
	sv, tv := s.vec(), s.vec()
	s.zero(sv)
	spec := GP32()
	XORL(spec, spec)
	upp := GP64()
	if grads {
		s.zero(tv)
		MOVQ(up, upp)
	}
	MOVQ(y, yp)
	MOVQ(d, kk)
	Label("uk")
	u := s.vec()
	VMULPS(mem(yp), inv, u)
	s.and(absR, u, u)
	l2 := s.log2(u)
	ap := s.vec()
	VMULPS(pv, l2, ap)
	e := s.exp2(ap)
	// u = 1 (the largest |y_k|): u^p = 1 exactly, as the exact kernel has
	// it, so that S' = 1 exactly when the other u_k are 0.
	s.sel(s.eqI(s.konst("oneBits"), u), one, e)
	normal, special := s.classes(u)
	s.orBits(special, spec)
	s.keep(normal, e)
	VADDPS(e, sv, sv)
	if grads {
		VMOVUPS(e, mem(upp))
		VMULPS(s.konst("ln2"), l2, l2)
		VMULPS(e, l2, l2)
		s.keep(normal, l2)
		VADDPS(l2, tv, tv)
	}
	ADDQ(U32(B), yp)
	if grads {
		ADDQ(U32(B), upp)
	}
	DECQ(kk)
	JNZ(LabelRef("uk"))
	s.sel(s.cmp(cmpEQ, zero, a), one, sv) // S' = 1 where a = 0
	if grads {
		VMOVUPS(sv, mem(out).Offset(2*B))
		VMOVUPS(tv, mem(out).Offset(3*B))
	}
	l2s := s.log2(sv)
	if grads {
		VMOVUPS(l2s, mem(out).Offset(4*B))
	}
	a1 := s.bcastParam32("invP")
	VMULPS(l2s, a1, a1)
	pow := s.exp2(a1)
	if grads {
		VMOVUPS(pow, mem(out).Offset(B))
	}
	// The scores, float64(a)·float64(S'^{1/p}) as Go would have them.
	scp := GP64()
	MOVQ(scL, scp)
	aLo, aHi := s.halves(a)
	pLo, pHi := s.halves(pow)
	VMULPD(pLo, aLo, aLo)
	VMULPD(pHi, aHi, aHi)
	VMOVUPD(aLo, mem(scp))
	VMOVUPD(aHi, mem(scp).Offset(B))
	if grads {
		a2 := s.bcastParam32("cpE")
		VMULPS(l2s, a2, a2)
		VMOVUPS(s.exp2(a2), mem(out).Offset(5*B))
	}
	ANDL(s.bits(live), spec)
	spp := GP64()
	MOVQ(spL, spp)
	MOVW(spec.As16(), Mem{Base: spp})
	// The next block.
	ADDQ(U32(24), blkL)
	byBlock(s, xtL, yL, upL)
	ADDQ(U32(7*B), outL)
	ADDQ(U32(2*B), scL)
	ADDQ(U32(2), spL)
	DECQ(nL)
	JNZ(LabelRef("block"))
	Label("done")
	VZEROUPPER()
	RET()
}

// byBlock advances the pointers in locals by a block's d vectors.
func byBlock(s isa, locals ...Mem) {
	stride := Load(Param("d"), GP64())
	SHLQ(U8(log2w(s)+2), stride)
	for _, at := range locals {
		ADDQ(stride, at)
	}
}

// inFrame copies the named slice parameters' pointers into locals of the
// frame, for a loop whose body needs the general registers.
func inFrame(names ...string) []Mem {
	at := make([]Mem, len(names))
	for i, name := range names {
		at[i] = AllocLocal(8)
		MOVQ(ptr(name), at[i])
	}
	return at
}

func mulDiv(s isa) {
	text(s, "mulDiv", "func(dst, x []float64, c, n float64)",
		fmt.Sprintf("is MulDiv on the first len(x) − len(x) mod %d values.", s.w/2))
	dst, x := ptr("dst"), ptr("x")
	cnt := length("x")
	SHRQ(U8(log2w(s)-1), cnt)
	cv, nv := s.bcastParam64("c"), s.bcastParam64("n")
	vecLoop(cnt, every(s.bytes(), x, dst), func() {
		v := s.vec()
		VMULPD(mem(x), cv, v)
		VDIVPD(nv, v, v)
		VMOVUPD(v, mem(dst))
	})
	VZEROUPPER()
	RET()
}

func addWiden(s isa) {
	text(s, "addWiden", "func(dst []float64, x []float32)",
		fmt.Sprintf("is AddWiden on the first len(x) − len(x) mod %d values.", s.w/2))
	dst, x := ptr("dst"), ptr("x")
	cnt := length("x")
	SHRQ(U8(log2w(s)-1), cnt)
	vecLoop(cnt, []step{{x, s.bytes() / 2}, {dst, s.bytes()}}, func() {
		v := s.vec()
		VCVTPS2PD(mem(x), v)
		VADDPD(mem(dst), v, v)
		VMOVUPD(v, mem(dst))
	})
	VZEROUPPER()
	RET()
}

func normSmallBwd(s isa) {
	text(s, "normSmallBwd", "func(xt, y, up []float32, d int, out, acc []float32, w, phi []float64, p, pp float64, dp []float64, over []uint16)",
		"is the single-norm's backward pass on len(over) blocks, laid out as",
		"normSmallFwd left them. First, for every block, in float64 as Go has",
		"them, each row's w·φ·(T/(p·S') − log2 S'·ln2/pp) into dp and float32(w)",
		"into out's vector 6, both 0 for a row whose φ (phi) is 0 (pp: p·p).",
		"Then, with flush-to-zero, it adds w·∂φ/∂M_kl = w·∂φ/∂y_k·x_l into the",
		"lane sums acc (at (k·d+l)·w), with ∂φ/∂y_k = sign(y_k)·(u_k^p/u_k)·S'^{(1−p)/p}",
		"(up is overwritten with it); lanes of weight 0 add 0. over[b] gets block",
		"b's lanes whose products are not finite in float32 or reach 2¹⁰⁰, which",
		"it leaves out.")
	B := s.bytes()
	n := length("over")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	// The weights and dp, a half-vector of float64 at a time.
	{
		out, w, phi, dp := ptr("out"), ptr("w"), ptr("phi"), ptr("dp")
		pv, ppv := s.bcastParam64("p"), s.bcastParam64("pp")
		zero := s.vec()
		s.zero(zero)
		k := GP64()
		MOVQ(n, k)
		SHLQ(U8(1), k) // two halves a block
		Label("weights")
		for h := range 2 {
			f := func(i int) Mem { return mem(out).Offset(i*B + h*B/2) }
			ph := s.vec()
			VMOVUPD(mem(phi).Offset(h*B), ph)
			m := s.cmpPD(cmpNEQ, zero, ph)
			sv, tv, lv := s.vec(), s.vec(), s.vec()
			VCVTPS2PD(f(2), sv)
			VCVTPS2PD(f(3), tv)
			VCVTPS2PD(f(4), lv)
			VMULPD(sv, pv, sv) // p·S'
			VDIVPD(sv, tv, tv) // T/(p·S')
			VMULPD(c32("ln2d"), lv, lv)
			VDIVPD(ppv, lv, lv) // log2 S'·ln2/(p·p)
			VSUBPD(lv, tv, tv)
			wh := s.vec()
			VMOVUPD(mem(w).Offset(h*B), wh)
			VMULPD(ph, wh, ph) // w·φ
			VMULPD(tv, ph, ph)
			s.keepPD(m, ph)
			VMOVUPD(ph, mem(dp).Offset(h*B))
			s.keepPD(m, wh)
			if s.avx512 {
				wf := YMM()
				VCVTPD2PS(wh, wf)
				VMOVUPS(wf, f(6))
			} else {
				wf := XMM()
				VCVTPD2PSY(wh, wf)
				VMOVUPS(wf, f(6))
			}
		}
		ADDQ(U32(7*B), out)
		ADDQ(U32(2*B), w)
		ADDQ(U32(2*B), phi)
		ADDQ(U32(2*B), dp)
		SUBQ(U32(2), k)
		JNZ(LabelRef("weights"))
	}
	f := inFrame("xt", "y", "up", "out", "over")
	xtL, yL, upL, ioL, ovL, nL := f[0], f[1], f[2], f[3], f[4], AllocLocal(8)
	MOVQ(n, nL)
	restore := flushSubnormals()
	Label("block")
	xt, y, up, io := GP64(), GP64(), GP64(), GP64()
	MOVQ(xtL, xt)
	MOVQ(yL, y)
	MOVQ(upL, up)
	MOVQ(ioL, io)
	acc := ptr("acc")
	d := Load(Param("d"), GP64())
	wv := s.vec()
	VMOVUPS(mem(io).Offset(6*B), wv)
	fv := s.vec()
	VMULPS(mem(io).Offset(5*B), wv, fv)
	VMULPS(mem(io), fv, fv)
	zero := s.vec()
	s.zero(zero)
	nonzero := s.cmp(cmpNEQ, zero, wv)
	absR := s.load("absMask")
	gmax, xmax := s.vec(), s.vec()
	s.zero(gmax)
	s.zero(xmax)
	yp, upp, xtp, kk := GP64(), GP64(), GP64(), GP64()
	MOVQ(y, yp)
	MOVQ(up, upp)
	MOVQ(xt, xtp)
	MOVQ(d, kk)
	Label("gk")
	yk, g := s.vec(), s.vec()
	VMOVUPS(mem(yp), yk)
	VMULPS(mem(upp), fv, g)
	VDIVPS(yk, g, g)
	s.keep(s.andM(s.cmp(cmpNEQ, zero, yk), nonzero), g)
	ga, xa := s.vec(), s.vec()
	s.and(absR, g, ga)
	VMAXPS(ga, gmax, gmax)
	s.and(mem(xtp), absR, xa)
	VMAXPS(xa, xmax, xmax)
	VMOVUPS(g, mem(upp))
	ADDQ(U32(B), yp)
	ADDQ(U32(B), upp)
	ADDQ(U32(B), xtp)
	DECQ(kk)
	JNZ(LabelRef("gk"))
	// Every product g_k·x_l below 2¹⁰⁰, so that the lane sums of many
	// blocks stay finite (a NaN fails the comparison too).
	VMULPS(xmax, gmax, gmax)
	finite := s.andM(nonzero, s.cmp(cmpLT, s.konst("big"), gmax))
	MOVQ(up, upp)
	accp := GP64()
	MOVQ(acc, accp)
	MOVQ(d, kk)
	Label("ak")
	gk := s.vec()
	VMOVUPS(mem(upp), gk)
	s.keep(finite, gk)
	l := GP64()
	MOVQ(d, l)
	MOVQ(xt, xtp)
	Label("al")
	av := s.vec()
	VMOVUPS(mem(accp), av)
	VFMADD231PS(mem(xtp), gk, av)
	VMOVUPS(av, mem(accp))
	ADDQ(U32(B), accp)
	ADDQ(U32(B), xtp)
	DECQ(l)
	JNZ(LabelRef("al"))
	ADDQ(U32(B), upp)
	DECQ(kk)
	JNZ(LabelRef("ak"))
	over := s.bits(nonzero)
	fb := s.bits(finite)
	NOTL(fb)
	ANDL(fb, over)
	ovp := GP64()
	MOVQ(ovL, ovp)
	MOVW(over.As16(), Mem{Base: ovp})
	// The next block.
	byBlock(s, xtL, yL, upL)
	ADDQ(U32(7*B), ioL)
	ADDQ(U32(2), ovL)
	DECQ(nL)
	JNZ(LabelRef("block"))
	restore()
	Label("done")
	VZEROUPPER()
	RET()
}

// flushSubnormals sets MXCSR's flush-to-zero and denormals-are-zero bits
// and returns what puts the caller's MXCSR back. A kernel whose weights or
// products fall below float32's normal range (2⁻¹²⁶) runs with them: an
// Intel core takes a microcode assist, about a hundred cycles, for each
// vector operation with a subnormal operand or result, which made the
// single-norm's small-d backward kernel as slow as its forward kernel on a
// Xeon (a tenth of it on an AMD Zen 4), nearly every block having one.
// What is flushed is below 2⁻¹²⁶, far under the float32 lane sums' own
// rounding. Go does not preempt assembly asynchronously, and a signal
// handler starts with the default MXCSR, so no Go code runs with these bits.
func flushSubnormals() (restore func()) {
	saved, set := AllocLocal(4), AllocLocal(4)
	STMXCSR(saved)
	r := GP32()
	MOVL(saved, r)
	ORL(U32(0x8040), r) // FTZ (bit 15), DAZ (bit 6)
	MOVL(r, set)
	LDMXCSR(set)
	return func() { LDMXCSR(saved) }
}

func expSmall(s isa) {
	text(s, "expSmall", "func(blks [][]float32, d int, logm, p []float32, scores []float64, e, c []float32, tab []int32)",
		fmt.Sprintf("is the generalized ball's prepared kernel on len(blks) blocks of %d rows", s.w),
		"of d < 16 prepared logarithms (each row-major), one row per lane: e and",
		"c (transposed: vector j holds coordinate j of each row; block b's at b",
		"times d vectors) and each row's Σ_j e_j, summed in float64 in",
		fmt.Sprintf("coordinate order, into scores (%d float64s a block).", s.w))
	B := s.bytes()
	f := inFrame("blks", "e", "c", "scores")
	blkL, eL, cL, scL, nL := f[0], f[1], f[2], f[3], AllocLocal(8)
	n := length("blks")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	MOVQ(n, nL)
	Label("block")
	logs, e, c := GP64(), GP64(), GP64()
	MOVQ(blkL, logs)
	MOVQ(Mem{Base: logs}, logs)
	MOVQ(eL, e)
	MOVQ(cL, c)
	logm, p := ptr("logm"), ptr("p")
	d := Load(Param("d"), GP64())
	transposeLoop(s, logs, d, c, ptr("tab")) // the logarithms, transposed, into c
	acc0, acc1 := s.vec(), s.vec()
	s.zero(acc0)
	s.zero(acc1)
	j := GP64()
	MOVQ(d, j)
	Label("coord")
	cj := s.vec()
	VBROADCASTSS(mem(logm), cj)
	VADDPS(mem(c), cj, cj)
	x := s.vec()
	VBROADCASTSS(mem(p), x)
	VMULPS(cj, x, x)
	ej := s.exp32(x)
	VMOVUPS(ej, mem(e))
	VMOVUPS(cj, mem(c))
	lo, hi := s.halves(ej)
	VADDPD(lo, acc0, acc0)
	VADDPD(hi, acc1, acc1)
	ADDQ(U32(4), logm)
	ADDQ(U32(4), p)
	ADDQ(U32(B), e)
	ADDQ(U32(B), c)
	DECQ(j)
	JNZ(LabelRef("coord"))
	scores := GP64()
	MOVQ(scL, scores)
	VMOVUPD(acc0, mem(scores))
	VMOVUPD(acc1, mem(scores).Offset(B))
	// The next block: e and c have moved on by d vectors.
	MOVQ(e, eL)
	MOVQ(c, cL)
	ADDQ(U32(24), blkL)
	ADDQ(U32(2*B), scL)
	DECQ(nL)
	JNZ(LabelRef("block"))
	Label("done")
	VZEROUPPER()
	RET()
}

func addSmall(s isa) {
	text(s, "addSmall", "func(acc, w []float64, e, c []float32, d int)",
		"adds w_r·e_jr into acc at 2j·w + r and w_r·e_jr·c_jr at (2j+1)·w + r, for",
		"the transposed e and c of expSmall; lanes of weight 0 add 0 (not 0·∞).")
	acc, w, e, c := ptr("acc"), ptr("w"), ptr("e"), ptr("c")
	d := Load(Param("d"), GP64())
	B := s.bytes()
	w0, w1 := s.vec(), s.vec()
	VMOVUPD(mem(w), w0)
	VMOVUPD(mem(w).Offset(B), w1)
	zero := s.vec()
	s.zero(zero)
	m0 := s.cmpPD(cmpNEQ, zero, w0)
	m1 := s.cmpPD(cmpNEQ, zero, w1)
	Label("coord")
	for h, wh := range []VecVirtual{w0, w1} {
		m := []mask{m0, m1}[h]
		we, ce, t := s.vec(), s.vec(), s.vec()
		VCVTPS2PD(mem(e).Offset(h*B/2), we)
		VMULPD(wh, we, we)
		s.keepPD(m, we)
		VADDPD(mem(acc).Offset(h*B), we, t)
		VMOVUPD(t, mem(acc).Offset(h*B))
		VCVTPS2PD(mem(c).Offset(h*B/2), ce)
		VMULPD(ce, we, ce)
		s.keepPD(m, ce)
		VADDPD(mem(acc).Offset(2*B+h*B), ce, ce)
		VMOVUPD(ce, mem(acc).Offset(2*B+h*B))
	}
	ADDQ(U32(4*B), acc)
	ADDQ(U32(B), e)
	ADDQ(U32(B), c)
	DECQ(d)
	JNZ(LabelRef("coord"))
	VZEROUPPER()
	RET()
}

// sqRowsBound is the ℓ2 ball's filter: Σ_j (anchor_j − item_j)² of each row
// of items in float32 lanes, stopping a row once a partial sum (every other
// vector) passes limit; the sum (or the partial one) into dst.
func sqRowsBound(s isa) {
	text(s, "sqRowsBound", "func(dst []float64, anchor, items []float32, limit float32)",
		"writes Σ_j (anchor_j − item_j)² of each row of items into dst (float32",
		"lanes), stopping a row once a partial sum (every other vector) passes",
		"limit.")
	dst, x, anchor := ptr("dst"), ptr("items"), ptr("anchor")
	rows := length("dst")
	d := length("anchor")
	limit := XMM()
	VMOVSS(paramAddr("limit"), limit)
	r, tailK, tailV := s.tailMask(d)
	nb := GP64()
	MOVQ(d, nb)
	SHRQ(U8(log2w(s)), nb)
	ahead := prefetchDistance(d)
	Label("row")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	acc := s.vec()
	s.zero(acc)
	ap, j := GP64(), GP64()
	MOVQ(anchor, ap)
	MOVQ(nb, j)
	Label("chunk")
	TESTQ(j, j)
	JZ(LabelRef("tail"))
	PREFETCHT0(Mem{Base: x, Index: ahead, Scale: 1})
	v := s.vec()
	VMOVUPS(mem(ap), v)
	VSUBPS(mem(x), v, v)
	VFMADD231PS(v, v, acc)
	ADDQ(U32(s.bytes()), ap)
	ADDQ(U32(s.bytes()), x)
	DECQ(j)
	TESTQ(U32(1), j)
	JNZ(LabelRef("chunk"))
	VUCOMISS(limit, s.hsumPS(acc))
	JA(LabelRef("exit"))
	JMP(LabelRef("chunk"))
	Label("tail")
	TESTQ(r, r)
	JZ(LabelRef("sum"))
	t, u := s.vec(), s.vec()
	if s.avx512 {
		VMOVUPS_Z(mem(ap), tailK, t)
		VMOVUPS_Z(mem(x), tailK, u)
	} else {
		VMASKMOVPS(mem(ap), tailV, t)
		VMASKMOVPS(mem(x), tailV, u)
	}
	VSUBPS(u, t, t)
	VFMADD231PS(t, t, acc)
	LEAQ(Mem{Base: x, Index: r, Scale: 4}, x)
	JMP(LabelRef("sum"))
	Label("exit")
	rest := GP64()
	MOVQ(j, rest)
	SHLQ(U8(log2w(s)+2), rest)
	ADDQ(rest, x)
	LEAQ(Mem{Base: x, Index: r, Scale: 4}, x)
	Label("sum")
	VMOVSD(s.hsum32(acc), mem(dst))
	ADDQ(U32(8), dst)
	DECQ(rows)
	JMP(LabelRef("row"))
	Label("done")
	VZEROUPPER()
	RET()
}

// prefetchRows is how many rows ahead the bounded scans prefetch.
const prefetchRows = 8 // measured: 4 rows 44 ms, 8 rows 41 ms, 16 rows 44 ms (genball, 10⁶ × 128)

// prefetchDistance returns prefetchRows rows of d float32, in bytes.
func prefetchDistance(d Register) Register {
	r := GP64()
	MOVQ(d, r)
	SHLQ(U8(2+3), r) // 4 bytes × 8 rows
	return r
}

// sub32 is Sub a vector at a time.
func sub32(s isa) {
	text(s, "sub32", "func(dst, a, b []float32)",
		fmt.Sprintf("is Sub on the first len(dst) − len(dst) mod %d values.", s.w))
	dst, a, b := ptr("dst"), ptr("a"), ptr("b")
	n := length("dst")
	SHRQ(U8(log2w(s)), n)
	vecLoop(n, every(s.bytes(), dst, a, b), func() {
		v := s.vec()
		VMOVUPS(mem(a), v)
		VSUBPS(mem(b), v, v)
		VMOVUPS(v, mem(dst))
	})
	VZEROUPPER()
	RET()
}
