package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// isa is one instruction set the kernels are generated for: AVX-512F
// (sixteen float32 lanes, mask registers, VSCALEFPS) or AVX2 with FMA (eight
// lanes, vector masks, 2ⁿ built in the exponent bits). Each method emits the
// instructions of one vector operation; the kernels are written once,
// against these.
type isa struct {
	suffix string // of the generated functions: "512" or "256"
	w      int    // float32 lanes per vector
	avx512 bool
}

var (
	avx512 = isa{suffix: "512", w: 16, avx512: true}
	avx2   = isa{suffix: "256", w: 8}
)

// bytes is a vector's size.
func (s isa) bytes() int { return 4 * s.w }

// vec allocates a vector register.
func (s isa) vec() VecVirtual {
	if s.avx512 {
		return ZMM()
	}
	return YMM()
}

// half is the register of half a vector (float32 lanes to widen to float64).
func (s isa) half(v Register) Register {
	if s.avx512 {
		return v.(VecVirtual).AsY()
	}
	return v.(VecVirtual).AsX()
}

// mask is a lane mask: a K register (AVX-512) or a vector of all-ones and
// all-zeros lanes (AVX2).
type mask = Register

func (s isa) zero(v Register) {
	if s.avx512 {
		VPXORD(v, v, v)
	} else {
		VXORPS(v, v, v)
	}
}

// konst returns the operand of constant name: the replicated vector in
// memory (a load folded into the instruction; AVX2's sixteen registers would
// not hold the polynomials' constants besides the working values).
func (s isa) konst(name string) Op { return c32(name) }

func (s isa) and(b, a Op, dst Register) {
	if s.avx512 {
		VPANDD(b, a, dst)
	} else {
		VPAND(b, a, dst)
	}
}

func (s isa) or(b, a Op, dst Register) {
	if s.avx512 {
		VPORD(b, a, dst)
	} else {
		VPOR(b, a, dst)
	}
}

// newMask allocates a mask: a K register (AVX-512) or a vector (AVX2). The
// compare instructions take either as their destination.
func (s isa) newMask() mask {
	if s.avx512 {
		return K()
	}
	return YMM()
}

// cmp returns the mask of a <pred> b (VCMPPS predicates).
func (s isa) cmp(pred uint8, b Op, a Register) mask {
	m := s.newMask()
	VCMPPS(U8(pred), b, a, m)
	return m
}

// Comparison predicates.
const (
	cmpEQ  = 0x00 // ordered, quiet
	cmpLT  = 0x11 // ordered, quiet
	cmpLE  = 0x12
	cmpNEQ = 0x04 // unordered or not equal
	cmpGE  = 0x1d
	cmpGT  = 0x1e
)

// gtI returns the mask of a > b as signed int32 lanes.
func (s isa) gtI(b Op, a Register) mask {
	m := s.newMask()
	VPCMPGTD(b, a, m)
	return m
}

// eqI returns the mask of a == b as int32 lanes.
func (s isa) eqI(b Op, a Register) mask {
	m := s.newMask()
	VPCMPEQD(b, a, m)
	return m
}

// andM returns a ∧ b; andNotM a ∧ ¬b (orM, below, a ∨ b).
func (s isa) andM(a, b mask) mask {
	if s.avx512 {
		k := K()
		KANDW(a, b, k)
		return k
	}
	m := YMM()
	VANDPS(a, b, m)
	return m
}

// orM returns a ∨ b.
func (s isa) orM(a, b mask) mask {
	if s.avx512 {
		k := K()
		KORW(a, b, k)
		return k
	}
	m := YMM()
	VORPS(a, b, m)
	return m
}

func (s isa) andNotM(a, b mask) mask {
	if s.avx512 {
		k := K()
		KANDNW(a, b, k) // ¬b ∧ a: KANDNW src2, src1, dst = ¬src1 ∧ src2
		return k
	}
	m := YMM()
	VANDNPS(a, b, m) // ¬b ∧ a
	return m
}

// bits moves a mask into the low bits of a general register.
func (s isa) bits(m mask) GPVirtual {
	r := GP32()
	if s.avx512 {
		KMOVW(m, r)
	} else {
		VMOVMSKPS(m, r)
	}
	return r
}

// keep zeroes the lanes of v outside m, in place.
func (s isa) keep(m mask, v Register) {
	if s.avx512 {
		VMOVAPS_Z(v, m, v)
	} else {
		VANDPS(m, v, v)
	}
}

// sel sets v to b in the lanes of m, in place.
func (s isa) sel(m mask, b Op, v Register) {
	if s.avx512 {
		VBLENDMPS(b, v, m, v)
	} else {
		VBLENDVPS(m, b, v, v)
	}
}

// floor and round to nearest even, float32 lanes.
func (s isa) floor(src, dst Register) {
	if s.avx512 {
		VRNDSCALEPS(U8(1), src, dst)
	} else {
		VROUNDPS(U8(1), src, dst)
	}
}

func (s isa) round(src, dst Register) {
	if s.avx512 {
		VRNDSCALEPS(U8(0), src, dst)
	} else {
		VROUNDPS(U8(0), src, dst)
	}
}

// pow2 multiplies v by 2ⁿ for integral float32 n. AVX-512: VSCALEFPS (0 far
// below, +Inf far above). AVX2: the caller guarantees n in [−127, 127]; n =
// −127 gives 0.
func (s isa) pow2(n, v Register) {
	if s.avx512 {
		VSCALEFPS(n, v, v)
		return
	}
	t := YMM()
	VCVTPS2DQ(n, t)
	VPADDD(c32("bias"), t, t)
	VPSLLD(U8(23), t, t)
	VMULPS(t, v, v)
}

// halves returns the float32 lanes of v widened to float64: lanes
// 0…w/2−1 and w/2…w−1.
func (s isa) halves(v Register) (lo, hi VecVirtual) {
	lo, hi = s.vec(), s.vec()
	VCVTPS2PD(s.half(v), lo)
	if s.avx512 {
		VEXTRACTF64X4(U8(1), v, hi.AsY())
		VCVTPS2PD(hi.AsY(), hi)
	} else {
		VEXTRACTF128(U8(1), v, hi.AsX())
		VCVTPS2PD(hi.AsX(), hi)
	}
	return lo, hi
}

// widen adds the float32 lanes of v, as float64, into the float64
// accumulator acc: first the low half, then the high half.
func (s isa) widen(v Register, acc Register) {
	lo, hi := s.halves(v)
	VADDPD(lo, acc, acc)
	VADDPD(hi, acc, acc)
}

// hsum64 returns the sum of the float64 lanes of v in an XMM register's low
// lane, in a fixed order.
func (s isa) hsum64(v Register) Register {
	x := XMM()
	if s.avx512 {
		y := YMM()
		VEXTRACTF64X4(U8(1), v, y)
		VADDPD(y, v.(VecVirtual).AsY(), y)
		VEXTRACTF128(U8(1), y, x)
		VADDPD(x, y.AsX(), x)
	} else {
		VEXTRACTF128(U8(1), v, x)
		VADDPD(x, v.(VecVirtual).AsX(), x)
	}
	h := XMM()
	VPERMILPD(U8(1), x, h)
	VADDSD(h, x, x)
	return x
}

// hsum32 returns the float64 sum of the float32 lanes of v (widened, then
// hsum64).
func (s isa) hsum32(v Register) Register {
	lo, hi := s.halves(v)
	VADDPD(hi, lo, lo)
	return s.hsum64(lo)
}

// The constants: each float32 or int32 replicated in sixteen lanes (64
// bytes), so that AVX2 can use them as memory operands and AVX-512 can
// broadcast them.
var (
	constTab  Mem
	constOffs = map[string]int{}
)

func defineConsts() {
	constTab = GLOBL("ccsconst", RODATA|NOPTR)
	off := 0
	f32 := func(name string, v float32) {
		constOffs[name] = off
		for l := range 16 {
			DATA(off+4*l, U32(math.Float32bits(v)))
		}
		off += 64
	}
	i32 := func(name string, v uint32) {
		constOffs[name] = off
		for l := range 16 {
			DATA(off+4*l, U32(v))
		}
		off += 64
	}
	f64 := func(name string, v float64) {
		constOffs[name] = off
		for l := range 8 {
			DATA(off+8*l, U64(math.Float64bits(v)))
		}
		off += 64
	}
	i64 := func(name string, v uint64) {
		constOffs[name] = off
		for l := range 8 {
			DATA(off+8*l, U64(v))
		}
		off += 64
	}
	// Exp32 (kernel/exp.go).
	f32("expMin", -87)
	f32("expMax", 88)
	f32("log2e", 1.44269504088896341)
	f32("c1", -0.693359375)
	f32("c2", 2.12194440e-4)
	for i, v := range []float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1} {
		f32("k"+string(rune('0'+i)), v)
	}
	f32("one", 1)
	f32("inf", float32(math.Inf(1)))
	f32("nan", float32(math.NaN()))
	f32("ln2", math.Ln2)
	f32("m127", -127)
	f32("m126", -126)
	f32("p127", math.Nextafter32(128, 0)) // the largest float32 below 128
	f32("p128", 128)
	f32("big", 0x1p100)
	// The half-precision screens (kernel/half.go).
	f32("halfKeep", 1-0x1p-11*(1+0x1p-8)-0x1p-24) // below 1 − HalfRel
	// Log2Poly and Exp2Poly (kernel/pow.go).
	for i, v := range []float32{1.4426765441894531, -0.720753014087677, 0.474651575088501, -0.3292442262172699, 0.19945797324180603, -0.08348825573921204, 0.016700226813554764} {
		f32("q"+string(rune('0'+i)), v)
	}
	for i, v := range []float32{0.9999998211860657, 0.6931546926498413, 0.24014484882354736, 0.05584478750824928, 0.00897328369319439, 0.0018823161954060197} {
		f32("p"+string(rune('0'+i)), v)
	}
	i32("absMask", 0x7fffffff)
	i32("mantMask", 0x007fffff)
	i32("oneBits", 0x3f800000)
	i32("bias", 127)
	i32("infBits", 0x7f800000)
	i32("allOnes", 0xffffffff)
	i32("zeroI", 0)
	i32("maxNormal", 0x7f7fffff)
	i32("minNormal", 0x00800000) // 2⁻¹²⁶'s bits: the half screen's least term
	// The lane numbers 0…15 and, for AVX2 tails, eight all-ones lanes then
	// eight zero lanes.
	constOffs["lanes"] = off
	for l := range 16 {
		DATA(off+4*l, U32(uint32(l)))
	}
	off += 64
	constOffs["tail"] = off
	for l := range 16 {
		v := uint32(0)
		if l < 8 {
			v = 0xffffffff
		}
		DATA(off+4*l, U32(v))
	}
	off += 64
	// The sigmoid (float64).
	f64("one64", 1)
	f64("log2e64", math.Log2E)
	f64("ln2hi", -6.93147180369123816490e-01)
	f64("ln2lo", -1.90821492927058770002e-10)
	f64("lowX", -708)
	f64("highX", 708)
	f64("zero64", 0)
	f64("ln2d", math.Ln2)
	f64("inf64", math.Inf(1))
	i64("absMask64", math.MaxInt64)
	i64("bias64", 1023)
	defineMath64Consts(f64, i64)
	fact := 1.0
	for k := 2; k <= 12; k++ {
		fact *= float64(k)
	}
	for k := 12; k >= 0; k-- {
		f64("t"+itoa(k), 1/fact)
		if k > 0 {
			fact /= float64(k)
		}
	}
}

func itoa(k int) string {
	if k < 10 {
		return string(rune('0' + k))
	}
	return string(rune('0'+k/10)) + string(rune('0'+k%10))
}

// c32 is the memory operand of a constant.
func c32(name string) Mem {
	off, ok := constOffs[name]
	if !ok {
		panic("no constant " + name)
	}
	return constTab.Offset(off)
}

// tailMask returns d mod w (in a new register) and the mask of that many
// leading lanes: a K register (AVX-512) or a vector (AVX2, for VMASKMOVPS).
func (s isa) tailMask(d Register) (r Register, k Register, v VecVirtual) {
	r = GP64()
	MOVQ(d, r)
	ANDQ(U32(s.w-1), r)
	if s.avx512 {
		k = K()
		all, bits := GP64(), GP64()
		MOVQ(U32(0xffff), all)
		BZHIQ(r, all, bits) // (1 << r) − 1
		KMOVW(bits.As32(), k)
		return r, k, nil
	}
	v = YMM()
	off, tab := GP64(), GP64()
	MOVQ(U32(8), off)
	SUBQ(r, off)
	LEAQ(c32("tail"), tab)
	VMOVUPS(Mem{Base: tab, Index: off, Scale: 4}, v)
	return r, nil, v
}

// hsumPS returns the float32 sum of the lanes of v in an XMM register's
// low lane.
func (s isa) hsumPS(v Register) Register { return s.hfoldPS(v, VADDPS, VADDSS) }

// hmaxPS returns the largest float32 lane of v in an XMM register's low
// lane.
func (s isa) hmaxPS(v Register) Register { return s.hfoldPS(v, VMAXPS, VMAXSS) }

// hfoldPS folds the float32 lanes of v with op (ps on vectors, ss on the
// last pair) into an XMM register's low lane, halving in a fixed order.
func (s isa) hfoldPS(v Register, ps, ss func(...Op)) Register {
	x := XMM()
	if s.avx512 {
		y := YMM()
		VEXTRACTF64X4(U8(1), v, y)
		ps(y, v.(VecVirtual).AsY(), y)
		VEXTRACTF128(U8(1), y, x)
		ps(x, y.AsX(), x)
	} else {
		VEXTRACTF128(U8(1), v, x)
		ps(x, v.(VecVirtual).AsX(), x)
	}
	h := XMM()
	VMOVHLPS(x, x, h)
	ps(h, x, x)
	VMOVSHDUP(x, h)
	ss(h, x, x)
	return x
}
