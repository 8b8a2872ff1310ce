package kernel

import (
	"fmt"
	"os"
	"strings"
)

// A level is a set of kernels: the portable Go ones, or the assembly ones
// for AVX2 with FMA (eight float32 lanes) or AVX-512 (sixteen).
type level int

const (
	portable level = iota
	avx2
	avx512
)

var levelNames = [...]string{portable: "portable", avx2: "avx2", avx512: "avx512"}

func (l level) String() string { return levelNames[l] }

// EnvLevel is the environment variable that forces a lower level than the
// processor has: "portable", "avx2" or "avx512" (for tests and side-by-side
// comparisons). A level the processor lacks falls back to the best it has;
// Level says so.
const EnvLevel = "CCS_KERNELS"

var (
	detected = detect() // the best level the processor runs
	current  level      // the level in use
	note     string     // why current is not detected, if it is not
)

func init() {
	current, note = choose(detected, os.Getenv(EnvLevel))
	setLevel(current)
}

// choose returns the level to use given the processor's best and the
// environment's request (empty: the best).
func choose(best level, want string) (level, string) {
	if want == "" {
		return best, ""
	}
	for l, name := range levelNames {
		if strings.EqualFold(want, name) {
			if level(l) > best {
				return best, fmt.Sprintf("%s=%s asked for, the processor has %s", EnvLevel, want, best)
			}
			if level(l) < best {
				return level(l), fmt.Sprintf("%s=%s; the processor has %s", EnvLevel, want, best)
			}
			return best, ""
		}
	}
	return best, fmt.Sprintf("%s=%q not understood (portable, avx2 or avx512)", EnvLevel, want)
}

// lanes is the number of float32 lanes of the vector kernels in use (0:
// the portable kernels).
var lanes int

// The vector kernels in use, nil at the portable level (setLevel assigns
// them; vec_amd64.go declares the assembly).
var (
	expRowV       func(logm, p, row, e, c []float32) float64
	addWeightedV  func(sumE, sumEC []float64, w float64, e, c []float32)
	powRowsV      func(dst []float64, m, p, diffs []float32)
	powRowsBoundV func(dst []float64, m, p, anchor, items []float32, limit float32)
	powRowsAncV   func(dst []float64, m, p, anchor, items []float32)
	sqRowsBoundV  func(dst []float64, anchor, items []float32, limit float32)
	gemmTileV     func(c []float32, ldc int, a []float32, si, sk int, b []float32, ldb, k int)
	maxAbsV       func(x []float32) float32
	gradRowV      func(g, y, up []float32, a, cw, thr float32) float32
	subRows64V    func(dst []float32, a, y []float64)
	screenMaskV   func(masks []uint16, prod, norms []float32, bound float32)
	sigmoidsV     func(T, t float64, phi, sig, der []float64) bool
	pnormRowV     func(y []float32, inv, p float32, up []float32) (sum, t float64, special bool)
	transposeV    func(xt, x []float32, d int, tab []int32)
	normSmallFwdV func(blks [][]float32, d int, m []float32, p, invP, cpE float32, xt, y, up, out []float32, tab []int32, scores []float64, special []uint16)
	// normSmallScoreV is normSmallFwdV for scores alone.
	normSmallScoreV func(blks [][]float32, d int, m []float32, p, invP, cpE float32, xt, y, up, out []float32, tab []int32, scores []float64, special []uint16)
	normSmallBwdV   func(xt, y, up []float32, d int, out, acc []float32, w, phi []float64, p, pp float64, dp []float64, over []uint16)
	mulDivV         func(dst, x []float64, c, n float64)
	addWidenV       func(dst []float64, x []float32)
	expSmallV       func(blks [][]float32, d int, logm, p []float32, scores []float64, e, c []float32, tab []int32)
	addSmallV       func(acc, w []float64, e, c []float32, d int)
	sqHalfV         func(masks []uint16, anchor []float32, blocks []uint16, errs []float32, r, c float32)
	powHalfV        func(masks []uint16, consts []float32, blocks []uint16, limit float32)
	powByteV        func(masks []uint16, consts []float32, blocks []uint8, limit float32)
	prefetchV       func(x []float32)
	log64V, exp64V  func(dst, x []float64)
	sub32V          func(dst, a, b []float32)
	absDiv64V       func(dst, x []float64, a float64)
	dotMT64V        func(y, x, mt []float64)
	dotMTRows64V    func(y, x, mt []float64)
	solveLower64V   func(yt, l []float64, d int)
	rankTile64V     func(sig []float64, lds int, xr, xc []float64, ldx, n int)
	trsmUpperT64V   func(yt, a []float64, d int)
	trsmLowerT64V   func(yt, a []float64, d int)
	gemmSub64V      func(c []float64, ldc int, a []float64, lda int, b []float64, ldb, k int)
	sqDistParts64V  func(parts, a []float64, rows []float32, idx []int32)

	// lutByteV is the 8-bit copy's screen by table: at the AVX-512 level
	// on processors with AVX512BW and AVX512VBMI (VPERMT2B), else nil.
	lutByteV func(masks []uint16, tables []uint8, blocks []uint8, limit uint64)
)

// setLevel puts the kernels of level l in use. Not safe while kernels run:
// init and the package's tests call it.
func setLevel(l level) {
	current = l
	lanes = 0
	expRowV, addWeightedV, powRowsV, powRowsBoundV, sqRowsBoundV, sigmoidsV = nil, nil, nil, nil, nil, nil
	pnormRowV, transposeV, normSmallFwdV, normSmallBwdV, expSmallV, addSmallV = nil, nil, nil, nil, nil, nil
	gemmTileV, maxAbsV, gradRowV, subRows64V, screenMaskV = nil, nil, nil, nil, nil
	sqHalfV, powHalfV, powByteV, prefetchV, powRowsAncV = nil, nil, nil, nil, nil
	mulDivV, normSmallScoreV, addWidenV = nil, nil, nil
	log64V, exp64V, sub32V, absDiv64V, dotMT64V, solveLower64V = nil, nil, nil, nil, nil, nil
	rankTile64V, trsmUpperT64V, trsmLowerT64V, gemmSub64V, dotMTRows64V = nil, nil, nil, nil, nil
	sqDistParts64V = nil
	lutByteV = nil
	setVector(l)
	transposeTabs = [16][]int32{}
	if lanes > 0 {
		for d := 1; d < 16; d++ {
			transposeTabs[d] = transposeTab(d, lanes)
		}
	}
}

// transposeTabs holds transposeTab(d, lanes) for d = 1…15 at the level in
// use.
var transposeTabs [16][]int32

// transposeTab is the assembly transpose's table for blocks of w rows of
// d < 16 values (the vector kernels' width w): index vector l (lane r: (r·d
// + l) mod w), then for each l and source vector s the lanes r with ⌊(r·d +
// l)/w⌋ = s — a 16-bit mask in an int32 slot for w = 16, a vector of
// all-ones and zero lanes for w = 8.
func transposeTab(d, w int) []int32 {
	words := 1
	if w == 8 {
		words = 8
	}
	tab := make([]int32, d*w+d*d*words)
	masks := tab[d*w:]
	for l := range d {
		for r := range w {
			v := r*d + l
			tab[l*w+r] = int32(v % w)
			s := v / w
			if words == 1 {
				masks[l*d+s] |= 1 << r
			} else {
				masks[(l*d+s)*w+r] = -1
			}
		}
	}
	return tab
}

// Level says which kernels run, e.g. "avx512: AVX-512 assembly kernels"
// (with "VBMI tables" where the 8-bit copy's screen looks its bounds up in
// tables).
func Level() string {
	s := current.String()
	switch current {
	case avx512:
		s += ": AVX-512 assembly kernels"
		if lutByteV != nil {
			s += ", VBMI tables"
		}
	case avx2:
		s += ": AVX2+FMA assembly kernels"
	default:
		s += ": portable Go kernels"
	}
	if note != "" {
		s += " (" + note + ")"
	}
	return s
}

// EnvUnknown reports whether CCS_KERNELS is set to a value that names no
// level (then the processor's best runs; EnvNote says so).
func EnvUnknown() bool {
	want := os.Getenv(EnvLevel)
	if want == "" {
		return false
	}
	for _, name := range levelNames {
		if strings.EqualFold(want, name) {
			return false
		}
	}
	return true
}

// LevelName is the level in use: "portable", "avx2" or "avx512".
func LevelName() string { return current.String() }

// EnvNote says why the level in use is not the processor's best, from
// CCS_KERNELS (a lower level asked for, a level the processor lacks, a
// value not understood), or "".
func EnvNote() string { return note }

// Describe says which kernels run and which BLAS is linked, e.g.
// "avx512: AVX-512 assembly kernels; BLAS: gonum (pure Go)".
func Describe() string { return Level() + "; BLAS: " + BLAS }

// Vector reports whether the vector kernels run (then training uses the
// float32 kernels: the single-norm's products and ‖y‖_p, the generalized
// ball's rows sixteen or eight at a time below d = 16).
func Vector() bool { return lanes > 0 }
