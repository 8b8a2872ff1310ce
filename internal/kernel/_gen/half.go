package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The half-precision screens read a copy of a collection stored as IEEE
// half floats in blocks of sixteen rows, coordinate-major (block b holds
// the 16 values of coordinate j at b·16·d + 16·j): one vector load is one
// coordinate of sixteen rows (AVX2: two loads of eight), so a row's sum
// needs no horizontal adds. Each block's result is a 16-bit mask of the
// rows that are not ruled out (bit l: row l of the block).

// halfAhead is how far ahead the half-precision screens prefetch, in bytes:
// two blocks of sixteen rows of d coordinates (the next block's page, and
// the one after, before the hardware prefetcher, which stops at pages,
// would reach them).
func halfAhead(d Register) Register {
	r := GP64()
	MOVQ(d, r)
	SHLQ(U8(6), r) // 2 blocks × 16 rows × 2 bytes
	return r
}

// halfParts is the number of vectors a block's sixteen rows take.
func halfParts(s isa) int { return 16 / s.w }

// halfLoad widens part k of coordinate j's sixteen halves (at p) to float32.
func halfLoad(s isa, p Register, k int, dst VecVirtual) {
	VCVTPH2PS(Mem{Base: p, Disp: 2 * s.w * k}, dst)
}

// halfMask stores the bits of the lanes of the block's sums that are not
// above limit (NaN included: kept) at mp.
func halfMask(s isa, sums []VecVirtual, limit Op, mp Register) {
	const cmpNGTUQ = 0x1a // not greater than, unordered, quiet
	if s.avx512 {
		m := s.cmp(cmpNGTUQ, limit, sums[0])
		MOVW(s.bits(m).As16(), mem(mp))
		return
	}
	lo := s.bits(s.cmp(cmpNGTUQ, limit, sums[0]))
	hi := s.bits(s.cmp(cmpNGTUQ, limit, sums[1]))
	SHLL(U8(8), hi)
	ORL(hi, lo)
	MOVW(lo.As16(), mem(mp))
}

// halfEvery is how many coordinates powHalf adds between two looks at a
// pair's sums (halfDone): once every lane is above the limit the rest of
// the pair's coordinates are skipped, their bytes unread. The sums only
// grow (every term is > 0, and a float32 sum of such terms never falls as
// terms are added, each addition rounding a larger exact sum), so a row
// above the limit part way is above it at the end: the masks are those of
// the whole sums. sqHalf does not look: reading a block's first
// coordinates and skipping the rest broke the hardware prefetcher's
// stream, and where every block stopped at its first look (the rows far
// from the anchor) one goroutine's screen of 256 MB took 16.7–17.8 ms
// against 12.6–21.0 reading it all (a 2-core AMD EPYC, three runs each);
// powHalf, bound by its arithmetic (23–25 ms on the same bytes), took
// 13.6–14.0 ms against 23.2–26.0, and as long as before where the rows'
// scores concentrate near the limit and few pairs stop (BenchmarkPowHalf).
const halfEvery = 16

// halfDone jumps to done when no lane of sums (one block's or several
// blocks' parts) is at or below limit (nor NaN).
func halfDone(s isa, sums []VecVirtual, limit Op, done string) {
	const cmpNGTUQ = 0x1a
	var all mask
	for _, v := range sums {
		m := s.cmp(cmpNGTUQ, limit, v)
		if all != nil {
			m = s.orM(all, m)
		}
		all = m
	}
	if s.avx512 {
		KORTESTW(all, all)
	} else {
		VTESTPS(all, all) // ZF: no sign bit set, no lane kept
	}
	JZ(LabelRef(done))
}

// sqHalf writes the squared distances' mask: Σ_j (h_j − anchor_j)² ≤
// (r + errs[b])²·c.
func sqHalf(s isa) {
	text(s, "sqHalf", "func(masks []uint16, anchor []float32, blocks []uint16, errs []float32, r, c float32)",
		"sets bit l of masks[b] unless Σ_j (h − anchor_j)² > (r + errs[b])²·c for",
		"row l of block b of blocks (half floats, coordinate-major, 16 rows a",
		"block; float32 lanes, four partial sums a lane).")
	mp, bp, anchor, ep := ptr("masks"), ptr("blocks"), ptr("anchor"), ptr("errs")
	nb := length("masks")
	d := length("anchor")
	rr, cc := XMM(), XMM()
	VMOVSS(paramAddr("r"), rr)
	VMOVSS(paramAddr("c"), cc)
	P := halfParts(s)
	U := 4 / P // coordinates a step, so that four sums a lane run at once
	ahead := halfAhead(d)
	Label("block")
	TESTQ(nb, nb)
	JZ(LabelRef("done"))
	acc := make([][]VecVirtual, U)
	for u := range U {
		acc[u] = make([]VecVirtual, P)
		for k := range P {
			acc[u][k] = s.vec()
			s.zero(acc[u][k])
		}
	}
	ap, j := GP64(), GP64()
	MOVQ(anchor, ap)
	MOVQ(d, j)
	step := func(u int) {
		a := s.vec()
		VBROADCASTSS(Mem{Base: ap, Disp: 4 * u}, a)
		for k := range P {
			h := s.vec()
			VCVTPH2PS(Mem{Base: bp, Disp: 32*u + 2*s.w*k}, h)
			VSUBPS(a, h, h)
			VFMADD231PS(h, h, acc[u][k])
		}
	}
	Label("steps")
	CMPQ(j, U32(U))
	JB(LabelRef("rest"))
	PREFETCHT0(Mem{Base: bp, Index: ahead, Scale: 1})
	if U == 4 {
		PREFETCHT0(Mem{Base: bp, Index: ahead, Scale: 1, Disp: 64})
	}
	for u := range U {
		step(u)
	}
	ADDQ(U32(4*U), ap)
	ADDQ(U32(32*U), bp)
	SUBQ(U32(U), j)
	JMP(LabelRef("steps"))
	Label("rest")
	TESTQ(j, j)
	JZ(LabelRef("sum"))
	step(0)
	ADDQ(U32(4), ap)
	ADDQ(U32(32), bp)
	DECQ(j)
	JMP(LabelRef("rest"))
	Label("sum")
	for u := 1; u < U; u++ {
		for k := range P {
			VADDPS(acc[u][k], acc[0][k], acc[0][k])
		}
	}
	e := XMM()
	VMOVSS(mem(ep), e)
	VADDSS(rr, e, e)
	VMULSS(e, e, e)
	VMULSS(cc, e, e)
	limit := s.vec()
	VBROADCASTSS(e, limit)
	halfMask(s, acc[0], limit, mp)
	ADDQ(U32(4), ep)
	ADDQ(U32(2), mp)
	DECQ(nb)
	JMP(LabelRef("block"))
	Label("done")
	VZEROUPPER()
	RET()
}

// powHalf writes the generalized ball's cheap lower bound's mask. Per
// coordinate, with consts (a_j, A_j, B_j, T_j) four float32 a coordinate:
// y = (1 − c)·|h − a_j| − T_j (at most the distance to the row's own
// coordinate: its half float's rounding c·|h| + t ≤ c·|h − a_j| + T_j),
// L = int(bits(y)) (≤ 2²³·(log2 y + 127)
// for a normal y), w = A_j·L + B_j (2²³·(z + 127)) and the float whose
// bits are max(int(w), 2²³) (one integer max where a float clamp to
// [2²³, 254·2²³] took two: powHalfMask says why the upper clamp is not
// needed); the lane sums those over j. With bytes, the same on a ByteRows
// copy: h is a row's 8-bit code, widened to float32 (an integer 0 … 255,
// exact), and a_j the anchor in the codes' units (powByteConsts).
func powHalf(s isa, bytes bool) {
	name, sig, es := "powHalf", "func(masks []uint16, consts []float32, blocks []uint16, limit float32)", 2
	if bytes {
		name, sig, es = "powByte", "func(masks []uint16, consts []float32, blocks []uint8, limit float32)", 1
	}
	text(s, name, sig,
		"sets bit l of masks[b] unless the sum over j of the float with bits",
		"max(int(A_j·int(bits((1 − c)·|h − a_j| − T_j)) + B_j), 2²³) is",
		"above limit for row l of block b (consts: a_j, A_j, B_j, T_j for each j);",
		"two blocks at a time, sharing each coordinate's constants; a pair whose",
		"rows are all above limit part way skips its remaining coordinates.")
	mp, bp, cp := ptr("masks"), ptr("blocks"), ptr("consts")
	nb := length("masks")
	d := length("consts")
	SHRQ(U8(2), d)
	limit := s.bcastParam32("limit")
	P := halfParts(s)
	keep := s.vec()
	VMOVUPS(s.konst("halfKeep"), keep)
	ahead := GP64() // two blocks ahead
	MOVQ(d, ahead)
	SHLQ(U8(4+uint8(es)), ahead) // 2 blocks × 16 rows × es bytes × d
	blockBytes := GP64()
	MOVQ(d, blockBytes)
	SHLQ(U8(3+uint8(es)), blockBytes) // 16 rows × es bytes × d
	// terms adds coordinate j's bound for the blocks at bases into accs.
	terms := func(kp Register, bases []Register, accs [][]VecVirtual) {
		a, A, B, T := s.vec(), s.vec(), s.vec(), s.vec()
		VBROADCASTSS(Mem{Base: kp}, a)
		VBROADCASTSS(Mem{Base: kp, Disp: 4}, A)
		VBROADCASTSS(Mem{Base: kp, Disp: 8}, B)
		VBROADCASTSS(Mem{Base: kp, Disp: 12}, T)
		for i, base := range bases {
			for k := range P {
				y := s.vec()
				if bytes {
					VPMOVZXBD(Mem{Base: base, Disp: s.w * k}, y)
					VCVTDQ2PS(y, y)
				} else {
					halfLoad(s, base, k, y)
				}
				VSUBPS(a, y, y)
				s.and(s.konst("absMask"), y, y)
				VFMSUB213PS(T, keep, y) // (1 − c)·|h − a_j| − T_j
				VCVTDQ2PS(y, y)
				VFMADD213PS(B, A, y) // w = A·L + B
				VCVTTPS2DQ(y, y)     // int(w); 0x80000000 beyond int32 (and for NaN)
				VPMAXSD(s.konst("minNormal"), y, y)
				VADDPS(y, accs[i][k], accs[i][k])
			}
		}
	}
	newAccs := func(n int) [][]VecVirtual {
		accs := make([][]VecVirtual, n)
		for i := range accs {
			accs[i] = make([]VecVirtual, P)
			for k := range P {
				accs[i][k] = s.vec()
				s.zero(accs[i][k])
			}
		}
		return accs
	}

	// loop runs the blocks k at a time (k = 2 while two are left, then 1),
	// each coordinate's constants broadcast once for the k blocks.
	loop := func(k int, name, after string) {
		Label(name)
		CMPQ(nb, U32(k))
		JB(LabelRef(after))
		accs := newAccs(k)
		kp, j, look := GP64(), GP64(), GP64()
		MOVQ(cp, kp)
		MOVQ(d, j)
		MOVQ(U32(halfEvery), look)
		bases := []Register{bp}
		for range k - 1 {
			next := GP64()
			MOVQ(bases[len(bases)-1], next)
			ADDQ(blockBytes, next)
			bases = append(bases, next)
		}
		Label(name + "Coord")
		TESTQ(j, j)
		JZ(LabelRef(name + "Sum"))
		for _, base := range bases {
			PREFETCHT0(Mem{Base: base, Index: ahead, Scale: uint8(k)}) // k groups ahead
		}
		terms(kp, bases, accs)
		ADDQ(U32(16), kp)
		for _, base := range bases {
			ADDQ(U32(16*es), base)
		}
		DECQ(j)
		DECQ(look)
		JNZ(LabelRef(name + "Coord"))
		MOVQ(U32(halfEvery), look)
		var sums []VecVirtual
		for i := range k {
			sums = append(sums, accs[i]...)
		}
		halfDone(s, sums, limit, name+"Sum")
		JMP(LabelRef(name + "Coord"))
		Label(name + "Sum")
		for i := range k {
			halfMask(s, accs[i], limit, mp)
			ADDQ(U32(2), mp)
		}
		SHLQ(U8(3+uint8(es)), j) // the coordinates a look skipped (none otherwise)
		ADDQ(j, bases[k-1])
		MOVQ(bases[k-1], bp) // past the k blocks
		SUBQ(U32(k), nb)
		JMP(LabelRef(name))
	}
	loop(2, "pair", "single")
	loop(1, "single", "done")
	Label("done")
	VZEROUPPER()
	RET()
}

// prefetch asks for the cache lines of x (a row read soon, not yet): a
// scan of rows that lie apart (a batch's spans, read in place) would
// otherwise wait on memory at each one's start and each page it crosses,
// where the hardware's prefetchers stop.
func prefetch(s isa) {
	text(s, "prefetch", "func(x []float32)", "prefetches the cache lines of x into every level.")
	x := ptr("x")
	n := length("x")
	end := GP64()
	LEAQ(Mem{Base: x, Index: n, Scale: 4}, end)
	Label("line")
	CMPQ(x, end)
	JAE(LabelRef("done"))
	PREFETCHT0(mem(x))
	ADDQ(U32(64), x)
	JMP(LabelRef("line"))
	Label("done")
	RET()
}

// lutByte is the 8-bit copy's screen by table (AVX-512 with BW and VBMI
// only): each coordinate's bound is looked up, for a code c, in that
// coordinate's table of 256 entries of 16 bits, kept as two tables of
// bytes (the low bytes, then the high), and summed in 16 bits,
// saturating. Eight blocks at a time, in two halves of four sharing each
// coordinate's tables (held in registers: 512 bytes a coordinate, read
// from L2 where d·512 outgrows L1): a half's 16 codes of coordinate j make
// one vector of 64 byte indexes; for each table two VPERMT2B look up the
// entries below and above 128, and the index's top bit picks one; the
// low and high bytes, interleaved, are the entries of rows 0–7 and 8–15
// of each block. Every 32 coordinates a group whose 128 rows are all
// above limit skips its remaining coordinates.
func lutByte(s isa) {
	text(s, "lutByte", "func(masks []uint16, tables []uint8, blocks []uint8, limit uint64)",
		"sets bit l of masks[b] unless the sum over j of the entries",
		"tables[512·j + c] + 256·tables[512·j + 256 + c], for code c of row l",
		"of block b at coordinate j, is above limit (the blocks eight at a",
		"time: len(masks) a multiple of 8, limit below 2¹⁶ − 1).")
	mp, bp, tab := ptr("masks"), ptr("blocks"), ptr("tables")
	ng := length("masks")
	SHRQ(U8(3), ng)
	d := length("tables")
	SHRQ(U8(9), d)
	lim := GP64()
	Load(Param("limit"), lim)
	limit := s.vec()
	VPBROADCASTW(lim.As32(), limit)
	bb := GP64() // a block's bytes: 16 rows × d
	MOVQ(d, bb)
	SHLQ(U8(4), bb)
	bb3 := GP64()
	LEAQ(Mem{Base: bb, Index: bb, Scale: 2}, bb3)
	rows0, rows8 := GP64(), GP64()
	MOVQ(U64(0x00ff00ff00ff00ff), rows0)
	MOVQ(U64(0xff00ff00ff00ff00), rows8)
	// in returns the mask of the sums at most limit.
	in := func(acc VecVirtual) Register {
		k := K()
		VPCMPUW(U8(2), limit, acc, k)
		return k
	}

	Label("group")
	TESTQ(ng, ng)
	JZ(LabelRef("done"))
	// acc[g] holds half g's sums: rows 0–7 of each block, rows 8–15.
	var acc [2][2]VecVirtual
	for g := range acc {
		for k := range acc[g] {
			acc[g][k] = s.vec()
			s.zero(acc[g][k])
		}
	}
	tp, j, look := GP64(), GP64(), GP64()
	MOVQ(tab, tp)
	MOVQ(d, j)
	MOVQ(U32(32), look)
	bp4 := GP64() // the second half's first block
	LEAQ(Mem{Base: bp, Index: bb, Scale: 4}, bp4)
	// pf walks the group two ahead, two cache lines a coordinate (a group
	// is 128·d bytes): the eight blocks' reads, 16 bytes each a coordinate
	// and 16·d bytes apart, are too scattered for the hardware's
	// prefetchers.
	pf := GP64()
	MOVQ(bb, pf)
	SHLQ(U8(4), pf)
	ADDQ(bp, pf)
	Label("coord")
	TESTQ(j, j)
	JZ(LabelRef("sum"))
	PREFETCHT0(Mem{Base: pf})
	PREFETCHT0(Mem{Base: pf, Disp: 64})
	ADDQ(U32(128), pf)
	var idx [2]VecVirtual
	var top [2]Register
	for g, base := range []Register{bp, bp4} {
		idx[g] = s.vec()
		VMOVDQU(Mem{Base: base}, idx[g].AsX())
		VINSERTI32X4(U8(1), Mem{Base: base, Index: bb, Scale: 1}, idx[g], idx[g])
		VINSERTI32X4(U8(2), Mem{Base: base, Index: bb, Scale: 2}, idx[g], idx[g])
		VINSERTI32X4(U8(3), Mem{Base: base, Index: bb3, Scale: 1}, idx[g], idx[g])
		top[g] = K()
		VPMOVB2M(idx[g], top[g])
	}
	var r [2][2]VecVirtual // r[g][k]: half g's bytes of table k
	for k := range 2 {     // the low bytes' table, then the high bytes'
		var T [4]VecVirtual
		for q := range T {
			T[q] = s.vec()
			VMOVDQU64(Mem{Base: tp, Disp: 256*k + 64*q}, T[q])
		}
		for g := range 2 {
			t1, t2 := s.vec(), s.vec()
			VMOVDQA64(T[0], t1)
			VPERMT2B(T[1], idx[g], t1) // entries 0 … 127
			VMOVDQA64(T[2], t2)
			VPERMT2B(T[3], idx[g], t2) // 128 … 255
			VPBLENDMB(t2, t1, top[g], t1)
			r[g][k] = t1
		}
	}
	for g := range 2 {
		e := s.vec()
		VPUNPCKLBW(r[g][1], r[g][0], e) // rows 0–7 of each block
		VPADDUSW(e, acc[g][0], acc[g][0])
		VPUNPCKHBW(r[g][1], r[g][0], e) // rows 8–15
		VPADDUSW(e, acc[g][1], acc[g][1])
	}
	ADDQ(U32(512), tp)
	ADDQ(U32(16), bp)
	ADDQ(U32(16), bp4)
	DECQ(j)
	DECQ(look)
	JNZ(LabelRef("coord"))
	MOVQ(U32(32), look)
	all := K()
	KORD(in(acc[0][0]), in(acc[0][1]), all)
	KORD(in(acc[1][0]), all, all)
	KORTESTD(in(acc[1][1]), all)
	JNZ(LabelRef("coord"))
	SHLQ(U8(4), j) // every row is out: skip the coordinates left
	ADDQ(j, bp)
	XORQ(j, j)
	Label("sum")
	for g := range 2 {
		r0, r8 := GP32(), GP32()
		KMOVD(in(acc[g][0]), r0)
		KMOVD(in(acc[g][1]), r8)
		q0, q8 := GP64(), GP64()
		PDEPQ(rows0, r0.As64(), q0)
		PDEPQ(rows8, r8.As64(), q8)
		ORQ(q8, q0)
		MOVQ(q0, Mem{Base: mp, Disp: 8 * g})
	}
	ADDQ(U32(16), mp)
	// Past the eight blocks (the loop passed the first).
	ADDQ(bb3, bp)
	LEAQ(Mem{Base: bp, Index: bb, Scale: 4}, bp)
	DECQ(ng)
	JMP(LabelRef("group"))
	Label("done")
	VZEROUPPER()
	RET()
}
