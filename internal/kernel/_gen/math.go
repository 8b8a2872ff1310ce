package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The vector forms of the package's scalar polynomials, on float32 lanes.

// load copies a constant into a new register.
func (s isa) load(name string) VecVirtual {
	v := s.vec()
	VMOVUPS(s.konst(name), v)
	return v
}

// exp32 returns Exp32 of the lanes of x (clobbered): x = n·ln2 + r
// (Cody–Waite), Cephes' polynomial, 2ⁿ; exactly 0 below ExpMin, +Inf above
// ExpMax, NaN for NaN.
func (s isa) exp32(x Register) Register {
	inRange := s.cmp(cmpGE, s.konst("expMin"), x)
	big := s.cmp(cmpGT, s.konst("expMax"), x)
	nan := s.cmp(0x03, x, x) // unordered: NaN, which stays NaN as in Exp32
	VMAXPS(s.konst("expMin"), x, x)
	VMINPS(s.konst("expMax"), x, x)
	n := s.vec()
	VMULPS(s.konst("log2e"), x, n)
	s.round(n, n)
	VFMADD231PS(s.konst("c1"), n, x) // x − n·0.693359375
	VFMADD231PS(s.konst("c2"), n, x) // − n·(−2.12194440e-4)
	q := s.load("k0")
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		VFMADD213PS(s.konst(k), x, q)
	}
	VMULPS(x, q, q)
	VFMADD213PS(x, x, q) // q·r·r + r
	VADDPS(s.konst("one"), q, q)
	s.pow2(n, q)
	s.keep(inRange, q)
	s.sel(big, s.konst("inf"), q)
	s.sel(nan, s.konst("nan"), q)
	return q
}

// log2 returns Log2Poly of the lanes whose bits (int32 lanes, a positive
// normal float32) are bits: k + f·Q(f).
func (s isa) log2(bits Register) Register {
	if s.avx512 {
		// VGETEXPPS and VGETMANTPS give k and 1 + f of a normal y exactly.
		k, f := s.vec(), s.vec()
		VGETEXPPS(bits, k)
		VGETMANTPS(U8(0), bits, f) // [1, 2), the source's sign
		VSUBPS(s.konst("one"), f, f)
		q := s.load("q6")
		for _, c := range []string{"q5", "q4", "q3", "q2", "q1", "q0"} {
			VFMADD213PS(s.konst(c), f, q)
		}
		VFMADD213PS(k, q, f)
		return f
	}
	k := s.vec()
	VPSRLD(U8(23), bits, k)
	VPSUBD(s.konst("bias"), k, k)
	VCVTDQ2PS(k, k)
	f := s.vec()
	s.and(s.konst("mantMask"), bits, f)
	s.or(s.konst("oneBits"), f, f)
	VSUBPS(s.konst("one"), f, f)
	q := s.load("q6")
	for _, c := range []string{"q5", "q4", "q3", "q2", "q1", "q0"} {
		VFMADD213PS(s.konst(c), f, q)
	}
	VFMADD213PS(k, q, f) // f·Q(f) + k
	return f
}

// exp2 returns Exp2Poly's 2^a of the lanes of a (clobbered): P(a − ⌊a⌋)·2^⌊a⌋,
// 0 below −126 and +Inf from 128 on.
func (s isa) exp2(a Register) Register {
	var big, low mask
	if s.avx512 {
		// Below −126, 0 as Exp2Poly has it (VSCALEFPS would give
		// subnormals, which cost microcode assists wherever they go next).
		low = s.cmp(cmpGE, s.konst("m126"), a)
	} else {
		big = s.cmp(cmpGE, s.konst("p128"), a)
		VMAXPS(s.konst("m127"), a, a)
		VMINPS(s.konst("p127"), a, a)
	}
	fl := s.vec()
	s.floor(a, fl)
	VSUBPS(fl, a, a)
	e := s.load("p5")
	for _, c := range []string{"p4", "p3", "p2", "p1", "p0"} {
		VFMADD213PS(s.konst(c), a, e)
	}
	s.pow2(fl, e)
	if s.avx512 {
		s.keep(low, e)
	} else {
		s.sel(big, s.konst("inf"), e)
	}
	return e
}

// classes returns the masks of the lanes whose bits (|y|, int32) are a
// normal float32, and of those that are neither normal nor 0 (subnormal,
// +Inf, NaN).
func (s isa) classes(bits Register) (normal, special mask) {
	if s.avx512 {
		// VFPCLASSPS: 0x01 QNaN, 0x02 +0, 0x04 −0, 0x08 +Inf, 0x10 −Inf,
		// 0x20 subnormal, 0x80 SNaN.
		other, sp := K(), K()
		VFPCLASSPSZ(U8(0xbf), bits, other)
		VFPCLASSPSZ(U8(0xb9), bits, sp)
		normal = K()
		KNOTW(other, normal)
		return normal, sp
	}
	atLeast := s.gtI(s.konst("mantMask"), bits) // normal or above
	above := s.gtI(s.konst("maxNormal"), bits)  // +Inf or NaN
	normal = s.andNotM(atLeast, above)
	nonzero := s.gtI(s.konst("zeroI"), bits)
	special = s.andNotM(nonzero, normal)
	return normal, special
}

// Float64 lanes.

func (s isa) cmpPD(pred uint8, b Op, a Register) mask {
	m := s.newMask()
	VCMPPD(U8(pred), b, a, m)
	return m
}

func (s isa) selPD(m mask, b Op, v Register) {
	if s.avx512 {
		VBLENDMPD(b, v, m, v)
	} else {
		VBLENDVPD(m, b, v, v)
	}
}

func (s isa) keepPD(m mask, v Register) {
	if s.avx512 {
		VMOVAPD_Z(v, m, v)
	} else {
		VANDPD(m, v, v)
	}
}

// paramAddr is the address of a scalar parameter. Scalars are read from
// it by VEX instructions: avo's Load of a float emits the legacy-SSE MOVSS
// or MOVSD, which after vector code pays the AVX–SSE transition (measured:
// it made normSmallFwd twice as slow).
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// bcastParam32 broadcasts a float32 parameter into a new register.
func (s isa) bcastParam32(name string) VecVirtual {
	v := s.vec()
	VBROADCASTSS(paramAddr(name), v)
	return v
}

// bcastParam64 broadcasts a float64 parameter into a new register.
func (s isa) bcastParam64(name string) VecVirtual {
	v := s.vec()
	VBROADCASTSD(paramAddr(name), v)
	return v
}

// orBits ORs the mask's lane bits into the general register acc.
func (s isa) orBits(m mask, acc Register) {
	b := s.bits(m)
	ORL(b, acc)
}

// bitsPD moves a float64 lane mask into a general register.
func (s isa) bitsPD(m mask) GPVirtual {
	r := GP32()
	if s.avx512 {
		KMOVW(m, r)
	} else {
		VMOVMSKPD(m, r)
	}
	return r
}

// mem is a memory operand at the address in a general register.
func mem(r Register) Mem { return Mem{Base: r} }

// ptr loads a slice parameter's base address.
func ptr(name string) Register { return Load(Param(name).Base(), GP64()) }

// length loads a slice parameter's length.
func length(name string) Register { return Load(Param(name).Len(), GP64()) }

// step is a pointer a vector loop advances by so many bytes a turn.
type step struct {
	r  Register
	by int
}

// every is each of rs advanced by the same number of bytes.
func every(by int, rs ...Register) []step {
	st := make([]step, len(rs))
	for i, r := range rs {
		st[i] = step{r, by}
	}
	return st
}

// vecLoop emits the kernels' loop over n vectors (n counted down): body,
// then each pointer advanced by its step, between the labels loop and
// done.
func vecLoop(n Register, steps []step, body func()) {
	Label("loop")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	body()
	for _, st := range steps {
		ADDQ(U32(st.by), st.r)
	}
	DECQ(n)
	JMP(LabelRef("loop"))
	Label("done")
}
