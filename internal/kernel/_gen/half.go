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
