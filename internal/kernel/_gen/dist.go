package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// sqDistParts64 is SqDist64's vector part: for each row idx[j] of rows
// (rows of len(a) float32), the four float64 partial sums of (a_t −
// row_t)² over the coordinates t ≡ 0, 1, 2, 3 mod 4 of the first len(a) −
// len(a) mod 4, each in coordinate order, into parts[4j…4j+3]: a
// four-lane vector of float64 is the portable form's four sums, added
// lane by lane in the same order (no fused multiply-add), so the numbers
// are the same bits. Four rows at a time (their chains of additions
// apart), the rest one at a time. Generated once, in its AVX2 form, which
// the AVX-512 level runs too (four float64 lanes are what it needs).
func sqDistParts64(s isa) {
	text(s, "sqDistParts64", "func(parts, a []float64, rows []float32, idx []int32)",
		"writes the four partial sums of SqDist64 over the first len(a) − len(a) mod 4",
		"coordinates of each row idx[j] of rows into parts[4j:4j+4].")
	parts, a0, base, idx := ptr("parts"), ptr("a"), ptr("rows"), ptr("idx")
	steps := length("a")
	rowBytes := GP64()
	MOVQ(steps, rowBytes)
	SHLQ(U8(2), rowBytes) // float32 bytes a row
	SHRQ(U8(2), steps)    // four coordinates a step
	quads := length("idx")
	SHRQ(U8(2), quads)

	rowAt := func(k int) GPVirtual {
		p := GP64()
		MOVLQSX(Mem{Base: idx, Disp: 4 * k}, p)
		IMULQ(rowBytes, p)
		ADDQ(base, p)
		return p
	}
	// body accumulates rows ps over every step into accs (one each).
	body := func(name string, ps []GPVirtual, accs []VecVirtual) {
		for _, acc := range accs {
			VXORPD(acc, acc, acc)
		}
		ap, t := GP64(), GP64()
		MOVQ(a0, ap)
		MOVQ(steps, t)
		Label(name)
		TESTQ(t, t)
		JZ(LabelRef(name + "_end"))
		va := YMM()
		VMOVUPD(mem(ap), va)
		for k, p := range ps {
			x := YMM()
			VCVTPS2PD(mem(p), x)
			VSUBPD(x, va, x) // a − row, rounded
			VMULPD(x, x, x)  // squared, rounded
			VADDPD(x, accs[k], accs[k])
		}
		ADDQ(U32(32), ap)
		for _, p := range ps {
			ADDQ(U32(16), p)
		}
		DECQ(t)
		JMP(LabelRef(name))
		Label(name + "_end")
		for k, acc := range accs {
			VMOVUPD(acc, Mem{Base: parts, Disp: 32 * k})
		}
	}

	Label("quad")
	TESTQ(quads, quads)
	JZ(LabelRef("ones"))
	ps := []GPVirtual{rowAt(0), rowAt(1), rowAt(2), rowAt(3)}
	body("quadStep", ps, []VecVirtual{YMM(), YMM(), YMM(), YMM()})
	ADDQ(U32(4*32), parts)
	ADDQ(U32(4*4), idx)
	DECQ(quads)
	JMP(LabelRef("quad"))

	Label("ones")
	rest := length("idx")
	ANDQ(U32(3), rest)
	Label("one")
	TESTQ(rest, rest)
	JZ(LabelRef("done"))
	body("oneStep", []GPVirtual{rowAt(0)}, []VecVirtual{YMM()})
	ADDQ(U32(32), parts)
	ADDQ(U32(4), idx)
	DECQ(rest)
	JMP(LabelRef("one"))
	Label("done")
	VZEROUPPER()
	RET()
}
