// Package bundle holds embedding bundles: n anchors, k positives for each,
// and negatives, as an encoder or a simulation produced them (docs/design.md §8).
//
// On disk a bundle is a NumPy .npz archive with these arrays (what
// numpy.savez writes from PyTorch code; float32 and int64, C order):
//
//	anchors         (n, d)      float32
//	positives       (n, k, d)   float32
//	negatives       (n, kn, d)  float32   } one of the two, or neither
//	negative_index  (n, kn)     int64     } (a positives-only bundle)
//	negative_pool   (m, d)      float32   rows negative_index points into;
//	                                      absent: the anchors themselves
//	labels          (n,)        int64     optional
//	logits          (n, C)      float32   optional
//	activations     (n, L)      float32   optional: per-layer activation
//	                                      summaries (the COMBOOD baseline)
//	index           (n,)        int64     optional: each anchor's source row
//	                                      in its data set (traceability)
//
// Embeddings stay float32 in memory (half the bandwidth, what encoders emit);
// every score computed from them is float64.
package bundle

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/percent"
)

// Bundle is an embedding bundle. Arrays are flat and row-major.
type Bundle struct {
	N, K, D int // anchors, positives per anchor, embedding dimension

	Anchors []float32 // N×D
	// Positives are the K positives of each anchor, written out (N×K×D),
	// or nil when PositiveIndex is used.
	Positives []float32
	// PositiveIndex holds each anchor's K positives as rows of
	// PositivePool (N×K), or nil: a bundle of n items with k positives
	// each then costs n·k indices, not n·k·d values.
	PositiveIndex []int64
	// PositivePool holds the rows PositiveIndex points into; nil means
	// Anchors.
	PositivePool []float32

	KNeg          int       // negatives per anchor (0: none)
	Negatives     []float32 // N×KNeg×D, or nil when NegativeIndex is used
	NegativeIndex []int64   // N×KNeg rows of Pool, or nil
	// Pool holds the rows NegativeIndex points into; nil means Anchors.
	Pool []float32

	Labels []int64 // optional, N
	// PositiveLabels, in a bundle of several labels a row (label sets),
	// are the labels each positive shares with its anchor, ascending:
	// positive j of anchor i shares PositiveLabels[s[i·K+j]:s[i·K+j+1]],
	// s = PositiveLabelStart (N×K+1). Nil otherwise. They say which
	// labels a positive stands for, for coverage by label (eval.ByLabel).
	PositiveLabelStart []int64
	PositiveLabels     []int64
	C                  int       // logit classes (0: no logits)
	Logits             []float32 // optional, N×C
	A                  int       // activation summaries per anchor (0: none)
	// Activations are optional per-layer summaries of the encoder's
	// activations for each anchor (N×A), e.g. each ReLU layer's maximum.
	Activations []float32
	Index       []int64 // optional, N: where each anchor came from (e.g. its image's row in the data set)
	// Blocks, optional (N), is each anchor's block where the rows were
	// split by block (ccs bundle -blocks: a patient, a recording, a
	// site): resplits of the bundle (eval's, ccs coverage-check) keep a
	// block's anchors together, as the split did. Nil otherwise.
	Blocks []int64
	// Embeddings names the rows Index numbers: "sha256:" and the digest
	// of those rows as ccs bundle's manifest records it (rows_sha256, the
	// same from the command and Python on the same values), set where a
	// bundle is read beside its manifest or made in memory; "" where
	// unknown. Two bundles' Index values name the same rows only under
	// one Embeddings.
	Embeddings string
	// AnchorsFrom names the file's array the anchors were read from when
	// it is not "anchors" ("embeddings" in a features file), for messages.
	AnchorsFrom string
	// Converted lists the arrays converted on reading, one "name: how"
	// each ("anchors: float64 → float32"), in name order; nil when every
	// array was read as stored.
	Converted []string
}

// AnchorsArray is the name of the file's array that holds the anchors:
// "anchors", or what AnchorsFrom says.
func (b *Bundle) AnchorsArray() string {
	if b.AnchorsFrom != "" {
		return b.AnchorsFrom
	}
	return "anchors"
}

// HasNegatives reports whether the bundle carries negatives.
func (b *Bundle) HasNegatives() bool { return b.KNeg > 0 }

// SeveralLabels reports whether the bundle gives several labels a row: no
// one label an anchor (Labels is nil), and the labels each positive
// shares with its anchor (PositiveLabelStart, PositiveLabels).
func (b *Bundle) SeveralLabels() bool { return b.Labels == nil && b.PositiveLabelStart != nil }

// Digest names the bundle's anchors: the SHA-256 of their float32 values,
// little-endian, row by row, after their shape. A set records the digests
// of the splits it was fitted and calibrated on, so that evaluating it on
// one of them can be told apart from a test (a file passed to the wrong
// flag).
func (b *Bundle) Digest() string {
	h := sha256.New()
	var buf [8 << 10]byte
	n := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(buf[:0], uint64(b.N)), uint64(b.D))
	h.Write(n)
	for i := 0; i < len(b.Anchors); {
		m := min(len(b.Anchors)-i, len(buf)/4)
		for j, v := range b.Anchors[i : i+m] {
			binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(v))
		}
		h.Write(buf[:4*m])
		i += m
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (b *Bundle) pool() []float32 {
	if b.Pool != nil {
		return b.Pool
	}
	return b.Anchors
}

// Pools are the rows PositiveIndex and NegativeIndex point into (the
// anchors where the bundle names no pool of its own).
func (b *Bundle) Pools() (positives, negatives []float32) { return b.positivePool(), b.pool() }

func (b *Bundle) positivePool() []float32 {
	if b.PositivePool != nil {
		return b.PositivePool
	}
	return b.Anchors
}

// Positive returns the j-th positive of anchor i (a view, not a copy),
// whichever form the bundle holds its positives in.
func (b *Bundle) Positive(i, j int) []float32 {
	d := b.D
	if b.PositiveIndex != nil {
		r := int(b.PositiveIndex[i*b.K+j])
		return b.positivePool()[r*d : (r+1)*d]
	}
	off := (i*b.K + j) * d
	return b.Positives[off : off+d]
}

// PositiveRows writes the K positives of anchor i (not their differences)
// into dst (K×D values, allocated when nil) and returns it.
func (b *Bundle) PositiveRows(dst []float32, i int) []float32 {
	dst = need(dst, b.K*b.D)
	for j := range b.K {
		copy(dst[j*b.D:(j+1)*b.D], b.Positive(i, j))
	}
	return dst
}

// Explicit returns b with its positives and negatives written out
// (Positives and Negatives), for code that reads them as arrays; b itself
// when they already are.
func (b *Bundle) Explicit() *Bundle {
	if b.PositiveIndex == nil && (b.KNeg == 0 || b.Negatives != nil) {
		return b
	}
	s := *b
	if b.PositiveIndex != nil {
		s.Positives = make([]float32, b.N*b.K*b.D)
		for i := range b.N {
			b.PositiveRows(s.Positives[i*b.K*b.D:(i+1)*b.K*b.D], i)
		}
		s.PositiveIndex, s.PositivePool = nil, nil
	}
	if b.KNeg > 0 && b.Negatives == nil {
		s.Negatives = make([]float32, b.N*b.KNeg*b.D)
		for i := range b.N {
			b.NegativeRows(s.Negatives[i*b.KNeg*b.D:(i+1)*b.KNeg*b.D], i)
		}
		s.NegativeIndex, s.Pool = nil, nil
	}
	return &s
}

// Anchor returns anchor i's embedding (a view, not a copy).
func (b *Bundle) Anchor(i int) []float32 { return b.Anchors[i*b.D : (i+1)*b.D] }

// PositiveDiffs writes the K difference vectors anchor_i − positive_ij into
// dst (K×D values, allocated when nil) and returns it.
func (b *Bundle) PositiveDiffs(dst []float32, i int) []float32 {
	dst = need(dst, b.K*b.D)
	a := b.Anchor(i)
	for j := range b.K {
		kernel.Sub(dst[j*b.D:(j+1)*b.D], a, b.Positive(i, j))
	}
	return dst
}

// PositiveDiff writes the single difference anchor_i − positive_ij into dst.
func (b *Bundle) PositiveDiff(dst []float32, i, j int) []float32 {
	dst = need(dst, b.D)
	kernel.Sub(dst, b.Anchor(i), b.Positive(i, j))
	return dst
}

// NegativeDiffs writes the KNeg difference vectors anchor_i − negative_ij
// into dst (KNeg×D values, allocated when nil) and returns it.
func (b *Bundle) NegativeDiffs(dst []float32, i int) []float32 {
	dst = need(dst, b.KNeg*b.D)
	a := b.Anchor(i)
	d := b.D
	if b.Negatives != nil {
		neg := b.Negatives[i*b.KNeg*d : (i+1)*b.KNeg*d]
		for j := range b.KNeg {
			kernel.Sub(dst[j*d:(j+1)*d], a, neg[j*d:(j+1)*d])
		}
		return dst
	}
	pool := b.pool()
	for j, r := range b.NegativeIndex[i*b.KNeg : (i+1)*b.KNeg] {
		kernel.Sub(dst[j*d:(j+1)*d], a, pool[int(r)*d:(int(r)+1)*d])
	}
	return dst
}

// NegativeRows writes the KNeg negative embeddings of anchor i (not their
// differences) into dst (KNeg×D values, allocated when nil) and returns it.
func (b *Bundle) NegativeRows(dst []float32, i int) []float32 {
	dst = need(dst, b.KNeg*b.D)
	d := b.D
	if b.Negatives != nil {
		copy(dst, b.Negatives[i*b.KNeg*d:(i+1)*b.KNeg*d])
		return dst
	}
	pool := b.pool()
	for j, r := range b.NegativeIndex[i*b.KNeg : (i+1)*b.KNeg] {
		copy(dst[j*d:(j+1)*d], pool[int(r)*d:(int(r)+1)*d])
	}
	return dst
}

func need(dst []float32, n int) []float32 {
	if dst == nil {
		return make([]float32, n)
	}
	if len(dst) != n {
		panic("ccs/bundle: slice length mismatch")
	}
	return dst
}

// WithNegatives returns b with other negatives: kneg for each anchor drawn
// among b's anchors (never the anchor itself; Negatives), as
// negative_index into them. Every other array is b's (not copied).
func (b *Bundle) WithNegatives(kneg int, seed uint64) (*Bundle, error) {
	if kneg < 1 || kneg > b.N-1 {
		return nil, fmt.Errorf("bundle: %d negatives per anchor among %d anchors: want 1 to %d", kneg, b.N, b.N-1)
	}
	s := *b
	s.Negatives, s.Pool = nil, nil
	s.KNeg, s.NegativeIndex = kneg, Negatives(b.N, kneg, seed)
	return &s, nil
}

// Subset returns the bundle of the anchors idx (in that order). Arrays are
// copied; positive and negative indices keep pointing into the original
// pools (the original anchors when the bundle had no explicit pool).
func (b *Bundle) Subset(idx []int) *Bundle {
	s := &Bundle{N: len(idx), K: b.K, D: b.D, KNeg: b.KNeg, C: b.C, A: b.A}
	s.Anchors = gather(b.Anchors, idx, b.D)
	if b.PositiveIndex != nil {
		s.PositiveIndex = gather(b.PositiveIndex, idx, b.K)
		s.PositivePool = b.positivePool()
	} else {
		s.Positives = gather(b.Positives, idx, b.K*b.D)
	}
	if b.Negatives != nil {
		s.Negatives = gather(b.Negatives, idx, b.KNeg*b.D)
	}
	if b.NegativeIndex != nil {
		s.NegativeIndex = gather(b.NegativeIndex, idx, b.KNeg)
		s.Pool = b.pool()
	}
	if b.Labels != nil {
		s.Labels = gather(b.Labels, idx, 1)
	}
	if b.Blocks != nil {
		s.Blocks = gather(b.Blocks, idx, 1)
	}
	if b.PositiveLabelStart != nil {
		s.PositiveLabelStart = []int64{0}
		for _, i := range idx {
			for j := i * b.K; j < (i+1)*b.K; j++ {
				s.PositiveLabels = append(s.PositiveLabels, b.PositiveLabels[b.PositiveLabelStart[j]:b.PositiveLabelStart[j+1]]...)
				s.PositiveLabelStart = append(s.PositiveLabelStart, int64(len(s.PositiveLabels)))
			}
		}
	}
	if b.Index != nil {
		s.Index = gather(b.Index, idx, 1)
	}
	s.Embeddings = b.Embeddings
	if b.Logits != nil {
		s.Logits = gather(b.Logits, idx, b.C)
	}
	if b.Activations != nil {
		s.Activations = gather(b.Activations, idx, b.A)
	}
	return s
}

func gather[T any](src []T, idx []int, w int) []T {
	out := make([]T, 0, len(idx)*w)
	for _, i := range idx {
		out = append(out, src[i*w:(i+1)*w]...)
	}
	return out
}

// Validate checks that every array has the size its shape fields say, that
// negative indices are in range, and that no embedding is NaN or ±Inf. Errors
// name the array and the first bad element.
func (b *Bundle) Validate() error { return b.validate(true) }

// ValidateFeatures is Validate for a bundle that may hold anchors alone
// (K = 0: features, as ReadFeatures reads them and the ood and ood-cal
// splits are): their arrays are checked as Validate checks them, and a
// bundle with positives is checked as Validate checks it.
func (b *Bundle) ValidateFeatures() error { return b.validate(false) }

// validate is Validate; without needPositives a bundle of anchors alone
// (K = 0: features) is valid too.
func (b *Bundle) validate(needPositives bool) error {
	if b.N < 1 {
		return fmt.Errorf("anchors: no anchors")
	}
	if b.D < 1 {
		return fmt.Errorf("anchors: dimension %d < 1", b.D)
	}
	if b.K < 1 && (needPositives || b.K < 0 || b.Positives != nil) {
		return fmt.Errorf("positives: %d positives per anchor, want at least 1", b.K)
	}
	if err := checkLen("anchors", len(b.Anchors), b.N, b.D); err != nil {
		return err
	}
	if err := finite("anchors", b.Anchors, b.N, b.D); err != nil {
		return err
	}
	if b.PositiveIndex != nil {
		if b.Positives != nil {
			return fmt.Errorf("positives: both positives and positive_index are present; give one")
		}
		if err := checkLen("positive_index", len(b.PositiveIndex), b.N, b.K); err != nil {
			return err
		}
		if err := checkIndex("positive_index", "positive_pool", b.PositiveIndex, b.PositivePool, b.positivePool(), b.K, b.D); err != nil {
			return err
		}
	} else {
		if err := checkLen("positives", len(b.Positives), b.N, b.K, b.D); err != nil {
			return err
		}
		if err := finite("positives", b.Positives, b.N, b.K, b.D); err != nil {
			return err
		}
	}
	if b.PositivePool != nil && b.PositiveIndex == nil {
		return fmt.Errorf("positive_pool: present without positive_index")
	}
	switch {
	case b.KNeg == 0:
		if b.Negatives != nil || b.NegativeIndex != nil {
			return fmt.Errorf("negatives: KNeg is 0 but negatives are present")
		}
	case b.Negatives != nil && b.NegativeIndex != nil:
		return fmt.Errorf("negatives: both negatives and negative_index are present; give one")
	case b.Negatives != nil:
		if err := checkLen("negatives", len(b.Negatives), b.N, b.KNeg, b.D); err != nil {
			return err
		}
		if err := finite("negatives", b.Negatives, b.N, b.KNeg, b.D); err != nil {
			return err
		}
	case b.NegativeIndex != nil:
		if err := checkLen("negative_index", len(b.NegativeIndex), b.N, b.KNeg); err != nil {
			return err
		}
		if err := checkIndex("negative_index", "negative_pool", b.NegativeIndex, b.Pool, b.pool(), b.KNeg, b.D); err != nil {
			return err
		}
	default:
		return fmt.Errorf("negatives: KNeg is %d but neither negatives nor negative_index is present", b.KNeg)
	}
	if b.Labels != nil {
		if err := checkLen("labels", len(b.Labels), b.N); err != nil {
			return err
		}
	}
	if b.Index != nil {
		if err := checkLen("index", len(b.Index), b.N); err != nil {
			return err
		}
	}
	if b.Blocks != nil {
		if err := checkLen("blocks", len(b.Blocks), b.N); err != nil {
			return err
		}
	}
	if err := b.checkPositiveLabels(); err != nil {
		return err
	}
	if b.Logits != nil || b.C != 0 {
		if b.C < 1 {
			return fmt.Errorf("logits: %d classes", b.C)
		}
		if err := checkLen("logits", len(b.Logits), b.N, b.C); err != nil {
			return err
		}
		if err := finite("logits", b.Logits, b.N, b.C); err != nil {
			return err
		}
	}
	if b.Activations != nil || b.A != 0 {
		if b.A < 1 {
			return fmt.Errorf("activations: %d per anchor", b.A)
		}
		if err := checkLen("activations", len(b.Activations), b.N, b.A); err != nil {
			return err
		}
		if err := finite("activations", b.Activations, b.N, b.A); err != nil {
			return err
		}
	}
	return nil
}

// checkPositiveLabels checks the labels positives share with their
// anchors: both arrays or neither, a start a positive (N×K+1) from 0 to
// the labels' count, increasing (each positive at least one label, within
// the labels), ascending and not negative.
func (b *Bundle) checkPositiveLabels() error {
	start, labels := b.PositiveLabelStart, b.PositiveLabels
	switch {
	case start == nil && labels == nil:
		return nil
	case start == nil:
		return fmt.Errorf("positive_labels: present without positive_label_start")
	case len(start) != b.N*b.K+1:
		return fmt.Errorf("positive_label_start: %d values, want %d (one a positive, %d×%d, and one more)", len(start), b.N*b.K+1, b.N, b.K)
	case start[0] != 0 || start[len(start)-1] != int64(len(labels)):
		return fmt.Errorf("positive_label_start: from %d to %d, want from 0 to %d (positive_labels' length)", start[0], start[len(start)-1], len(labels))
	}
	for u := range b.N * b.K {
		lo, hi := start[u], start[u+1]
		if hi <= lo {
			return fmt.Errorf("positive_label_start: positive %d of anchor %d shares no label with it (start %d, end %d)", u%b.K, u/b.K, lo, hi)
		}
		if hi > int64(len(labels)) {
			return fmt.Errorf("positive_label_start: positive %d of anchor %d ends at %d, past positive_labels' %d", u%b.K, u/b.K, hi, len(labels))
		}
		for v := lo; v < hi; v++ {
			if l := labels[v]; l < 0 || v > lo && l <= labels[v-1] {
				return fmt.Errorf("positive_labels[%d] = %d (positive %d of anchor %d): want labels ≥ 0, ascending", v, l, u%b.K, u/b.K)
			}
		}
	}
	return nil
}

// checkIndex checks an index array (k indices per anchor) into its pool
// (given, or the anchors when given is nil): the pool's rows whole and
// finite, every index within them and, into the anchors, none the
// anchor's own row.
func checkIndex(name, poolName string, idx []int64, given, pool []float32, k, d int) error {
	if k > 0 && len(idx)%k != 0 {
		return fmt.Errorf("%s: %d indices are not rows of %d", name, len(idx), k)
	}
	if len(pool)%d != 0 {
		return fmt.Errorf("%s: %d values is not a whole number of rows of %d", poolName, len(pool), d)
	}
	if given != nil {
		if err := finite(poolName, given, len(given)/d, d); err != nil {
			return err
		}
	}
	m := int64(len(pool) / d)
	for i, r := range idx {
		if r < 0 || r >= m {
			what := "the anchors'"
			if given != nil {
				what = "the pool's"
			}
			return fmt.Errorf("%s[%d][%d] = %d is outside %s %d rows", name, i/k, i%k, r, what, m)
		}
		if given == nil && r == int64(i/k) {
			return fmt.Errorf("%s[%d][%d] = %d names its own anchor: a row paired with itself is at distance 0 (pairs are of other rows)", name, i/k, i%k, r)
		}
	}
	return nil
}

func checkLen(name string, got int, shape ...int) error {
	want := 1
	for _, s := range shape {
		want *= s
	}
	if got != want {
		return fmt.Errorf("%s: %d values, want %v = %d", name, got, shape, want)
	}
	return nil
}

// DistinctPositives counts the distinct (anchor, positive) pairs of b:
// N·K but where an anchor lists a positive more than once (a bundle made
// with -allow-fewer: its anchors repeat their few positives), whose
// coverage then weighs the repeated ones more.
func (b *Bundle) DistinctPositives() int {
	if b.PositiveIndex == nil || b.K < 2 {
		return b.N * b.K
	}
	n := 0
	seen := make(map[int64]bool, b.K)
	for i := range b.N {
		clear(seen)
		for _, j := range b.PositiveIndex[i*b.K : (i+1)*b.K] {
			seen[j] = true
		}
		n += len(seen)
	}
	return n
}

// finite reports the first NaN or ±Inf in x, by its full index in shape.
func finite(name string, x []float32, shape ...int) error {
	i := FirstNonFinite(x)
	if i < 0 {
		return nil
	}
	idx := make([]string, len(shape))
	r := i
	for s := len(shape) - 1; s >= 0; s-- {
		idx[s] = fmt.Sprintf("[%d]", r%shape[s])
		r /= shape[s]
	}
	return fmt.Errorf("%s%s is %v", name, strings.Join(idx, ""), x[i])
}

// FirstNonFinite is the index of x's first NaN or ±Inf, or −1. Blocks
// whose largest exponent field is not all ones are finite: a branch-free
// pass (5.8× faster than math.IsNaN and math.IsInf per value, which were
// 2% of the simulation's CPU: every training and calibration validates
// its bundles).
func FirstNonFinite(x []float32) int {
	const allOnes = 0x7f800000 // the exponent field of ±Inf and NaN
	const block = 1024
	for lo := 0; lo < len(x); lo += block {
		b := x[lo:min(len(x), lo+block)]
		var m0, m1, m2, m3 uint32
		i := 0
		for ; i+4 <= len(b); i += 4 {
			m0 = max(m0, math.Float32bits(b[i])&allOnes)
			m1 = max(m1, math.Float32bits(b[i+1])&allOnes)
			m2 = max(m2, math.Float32bits(b[i+2])&allOnes)
			m3 = max(m3, math.Float32bits(b[i+3])&allOnes)
		}
		for ; i < len(b); i++ {
			m0 = max(m0, math.Float32bits(b[i])&allOnes)
		}
		if max(m0, m1, m2, m3) == allOnes {
			for i, v := range b {
				if math.Float32bits(v)&allOnes == allOnes {
					return lo + i
				}
			}
		}
	}
	return -1
}

// PairingWarning says when a bundle's labels contradict its positives:
// where the positives are rows of the anchors (PositiveIndex into them)
// and the anchors carry one label each, fewer than half of the positives
// sharing their anchor's label (ccs bundle makes every one of a label's
// positives of its class) is a bundle assembled wrongly — positive_index
// and negative_index swapped, or labels of other rows — and a set
// calibrated on it covers what it should exclude. Where the positives
// agree, half or more of the negatives (NegativeIndex into the anchors)
// of their anchor's label is said too: ccs bundle draws none, and the
// exclusion counts them (a few, as a few positives of other labels, may
// be rows labelled wrongly).
// "" otherwise, and for
// bundles whose positives are another pool's rows (relevance pairs) or
// written out (views).
func (b *Bundle) PairingWarning() string {
	if b.Labels == nil || b.PositiveIndex == nil || b.PositivePool != nil || b.K == 0 {
		return ""
	}
	share := func(index []int64, k int) (same, total int) {
		for i := range b.N {
			if b.Labels[i] < 0 {
				continue // no label: no class to agree with
			}
			for _, p := range index[i*k : (i+1)*k] {
				if p < 0 || p >= int64(b.N) || b.Labels[p] < 0 {
					continue
				}
				total++
				if b.Labels[p] == b.Labels[i] {
					same++
				}
			}
		}
		return same, total
	}
	same, total := share(b.PositiveIndex, b.K)
	if total == 0 || 2*same >= total {
		if b.NegativeIndex == nil || b.Pool != nil || b.KNeg == 0 {
			return ""
		}
		if nSame, nTotal := share(b.NegativeIndex, b.KNeg); nSame > 0 && 2*nSame >= nTotal {
			return fmt.Sprintf("%d of the %d negatives (%s, rows of the anchors by negative_index) share their anchor's label — the exclusion counts them as negatives and -objective neg trains to exclude the anchor's own class; ccs bundle draws each anchor's negatives from other labels: make the bundle again, or check negative_index and labels", nSame, nTotal, percent.Format(float64(nSame)/float64(nTotal), 1))
		}
		return ""
	}
	msg := fmt.Sprintf("only %.1f%% of the positives (%d of %d, rows of the anchors by positive_index) share their anchor's label", 100*float64(same)/float64(total), same, total)
	if b.NegativeIndex != nil && b.Pool == nil && b.KNeg > 0 {
		if nSame, nTotal := share(b.NegativeIndex, b.KNeg); nTotal > 0 && nSame*total > same*nTotal {
			msg += fmt.Sprintf(", and %.1f%% of the negatives do: positive_index and negative_index swapped?", 100*float64(nSame)/float64(nTotal))
		}
	}
	return msg + " — a set calibrated on these positives covers other classes' rows as if they were positives; ccs bundle makes each anchor's positives of its label: make the bundle again, or check its arrays"
}
