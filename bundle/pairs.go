package bundle

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SplitIndices shuffles 0..n−1 with rng and cuts the permutation into
// consecutive parts of the given sizes, which must add up to at most n.
func SplitIndices(n int, rng *rand.Rand, sizes ...int) ([][]int, error) {
	total := 0
	for _, s := range sizes {
		if s < 0 {
			return nil, fmt.Errorf("split: negative part size %d", s)
		}
		total += s
	}
	if total > n {
		return nil, fmt.Errorf("split: parts of %v need %d points, have %d", sizes, total, n)
	}
	perm := rng.Perm(n)
	parts := make([][]int, len(sizes))
	off := 0
	for i, s := range sizes {
		parts[i] = perm[off : off+s : off+s]
		off += s
	}
	return parts, nil
}

// HoldOut splits b's anchors into the rest and a seeded held-out share of
// round(share·N) of them, each side in b's order: the anchors that select
// the checkpoint when a training has no validation bundle (ccs fit
// without -val, the Python package's fit without val). It returns nil
// bundles, and no error, when the share leaves either side empty.
func HoldOut(b *Bundle, share float64, seed uint64) (rest, held *Bundle, err error) {
	nv := int(math.Round(share * float64(b.N)))
	if nv < 1 || nv >= b.N {
		return nil, nil, nil
	}
	parts, err := SplitIndices(b.N, rand.New(rand.NewPCG(seed, 0x76616c)), b.N-nv, nv) // "val"
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(parts[0])
	slices.Sort(parts[1])
	return b.Subset(parts[0]), b.Subset(parts[1]), nil
}

// FromLabels builds the bundle of the labelled points idx (rows of d in
// points): each becomes an anchor with k positives drawn without replacement
// from the other points of idx with its label, and k negatives drawn without
// replacement from the points of idx with another label, stored as
// negative_index into the returned bundle's own anchors. An anchor is never
// its own positive or negative. Pairs depend only on rng, so a seed fixes them.
func FromLabels(points []float32, d int, labels []int64, idx []int, k int, rng *rand.Rand) (*Bundle, error) {
	if k < 1 {
		return nil, fmt.Errorf("pairs: k = %d, want at least 1", k)
	}
	n := len(idx)
	// Positions (within idx) of each label's members.
	byLabel := map[int64][]int{}
	for pos, i := range idx {
		byLabel[labels[i]] = append(byLabel[labels[i]], pos)
	}
	for lab, members := range byLabel {
		if len(members)-1 < k {
			return nil, fmt.Errorf("pairs: label %d has %d points, too few for %d positives per anchor", lab, len(members), k)
		}
		if n-len(members) < k {
			return nil, fmt.Errorf("pairs: only %d points lie outside label %d, too few for %d negatives per anchor", n-len(members), lab, k)
		}
	}
	b := &Bundle{N: n, K: k, D: d, KNeg: k}
	b.Anchors = gather(points, idx, d)
	b.Labels = make([]int64, n)
	for pos, i := range idx {
		b.Labels[pos] = labels[i]
	}
	b.Positives = make([]float32, 0, n*k*d)
	b.NegativeIndex = make([]int64, 0, n*k)

	// where[pos] is pos's place in its label's member list, kept up to date
	// under the partial Fisher–Yates swaps below.
	where := make([]int, n)
	for _, members := range byLabel {
		for w, pos := range members {
			where[pos] = w
		}
	}
	stamp := make([]int, n) // stamp[pos] == a+1: pos already drawn for anchor a
	for a := range n {
		members := byLabel[b.Labels[a]]
		// Move the anchor to the end, then draw k from the rest: a partial
		// Fisher–Yates gives a uniform k-subset from any starting order.
		last := len(members) - 1
		swap(members, where, where[a], last)
		for j := range k {
			r := j + rng.IntN(last-j)
			swap(members, where, j, r)
			pos := members[j]
			b.Positives = append(b.Positives, b.Anchors[pos*d:(pos+1)*d]...)
		}
		// Negatives by rejection: uniform over points of other labels,
		// without replacement.
		for drawn := 0; drawn < k; {
			pos := rng.IntN(n)
			if b.Labels[pos] == b.Labels[a] || stamp[pos] == a+1 {
				continue
			}
			stamp[pos] = a + 1
			b.NegativeIndex = append(b.NegativeIndex, int64(pos))
			drawn++
		}
	}
	return b, nil
}

func swap(members, where []int, i, j int) {
	members[i], members[j] = members[j], members[i]
	where[members[i]], where[members[j]] = i, j
}

// Negatives draws, for each of n anchors, k others without replacement
// (never the anchor itself): n×k indices into the anchors, seeded.
func Negatives(n, k int, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 0x6e65676174697665)) // "negative"
	out := make([]int64, 0, n*k)
	stamp := make([]int, n)
	for a := range n {
		stamp[a] = a + 1
		for c := 0; c < k; {
			j := rng.IntN(n)
			if stamp[j] == a+1 {
				continue
			}
			stamp[j] = a + 1
			out = append(out, int64(j))
			c++
		}
	}
	return out
}
