package ood

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"sync"
)

// knnShare is what the KNN detector and COMBOOD's k-NN part, made together
// by Baselines, share: the index of the training features they were both
// fitted on, built once, and the k-th nearest distances of each sample
// scored, searched once (the search is most of either's time: ≈1.5 s each
// on Fashion-MNIST-sized features). Samples are known by their content
// (fingerprint), not their slices: SampleOf makes new ones each call.
type knnShare struct {
	mu    sync.Mutex
	train uint64 // the training features' fingerprint, with index
	index *index
	kth   map[knnKey][]float64 // by the sample's fingerprint and k, for index
}

type knnKey struct {
	sample uint64
	k      int
}

// knnShareMax bounds the samples a share keeps the distances of (a
// sample's are 8 bytes an input): past it, they are forgotten.
const knnShareMax = 64

// fitted returns the share's index of the training features whose
// fingerprint is fp, or nil.
func (s *knnShare) fitted(fp uint64) *index {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index != nil && s.train == fp {
		return s.index
	}
	return nil
}

// fit keeps x as the index of the training features of fingerprint fp,
// forgetting the distances found with another.
func (s *knnShare) fit(fp uint64, x *index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.train, s.index, s.kth = fp, x, nil
}

// scored returns a copy of the k-th nearest distances of the sample of
// fingerprint fp in x, if the share has them; x must be its index.
func (s *knnShare) scored(x *index, fp uint64, k int) []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.kth[knnKey{fp, k}]; ok && x == s.index {
		return slices.Clone(r)
	}
	return nil
}

// keep records r, the k-th nearest distances in x of the sample of
// fingerprint fp, if x is still the share's index.
func (s *knnShare) keep(x *index, fp uint64, k int, r []float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x != s.index {
		return
	}
	if s.kth == nil || len(s.kth) >= knnShareMax {
		s.kth = map[knnKey][]float64{}
	}
	s.kth[knnKey{fp, k}] = slices.Clone(r)
}

// fingerprintSeed is the process's seed of the fingerprints.
var fingerprintSeed = maphash.MakeSeed()

// fingerprint hashes rows of dimension d (their values' bits and their
// shape): equal rows have equal fingerprints, and different rows the same
// one with probability 2⁻⁶⁴. It reads 8 bytes a value, far less than a
// k-NN search of the rows (2·n·d a training row).
func fingerprint(x []float64, d int) uint64 {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	var buf [8 * 512]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(len(x)))
	binary.LittleEndian.PutUint64(buf[8:], uint64(d))
	h.Write(buf[:16])
	for len(x) > 0 {
		n := min(len(x), len(buf)/8)
		for i, v := range x[:n] {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
		}
		h.Write(buf[:8*n])
		x = x[n:]
	}
	return h.Sum64()
}
