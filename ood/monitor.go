package ood

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
)

// A Monitor watches a stream of anomaly scores for a change away from the
// in-distribution data: a conformal test martingale (Vovk, Nouretdinov and
// Gammerman 2003; Vovk's "Testing randomness online", Statistical Science
// 2021). Each score gets the smoothed conformal p-value of the online mode,
//
//	p_n = (#{b ∈ bag : b > s_n} + θ_n·#{b ∈ bag ∪ {s_n} : b = s_n}) / (|bag| + 1),
//
// the bag holding the calibration scores and every score seen before, θ_n
// uniform (seeded); under exchangeability of the calibration inputs and the
// stream these p-values are independent and uniform. The martingale is the
// mixture of power martingales Π_i ε·p_i^{ε−1} over ε on a grid in (0, 1),
// so by Ville's inequality it ever reaches 1/δ with probability at most δ
// on an in-distribution stream. It is a monitor of the stream as a whole,
// not a per-input test: it says the stream has changed, not which input is
// OOD. Its memory grows with the stream (8 bytes a score).
type Monitor struct {
	mu     sync.Mutex
	cal    []float64 // the calibration scores, sorted
	bag    bag
	rng    *rand.Rand
	seed   uint64
	logM   []float64 // log of each power martingale
	n      int       // scores seen
	delta  float64
	max    float64 // the largest value reached
	alarmN int     // the first n at which the martingale reached 1/δ; 0: none
}

// epsilons is the mixture's grid: 100 midpoints of (0, 1).
var epsilons = func() []float64 {
	e := make([]float64, 100)
	for i := range e {
		e[i] = (float64(i) + 0.5) / 100
	}
	return e
}()

// NewMonitor starts a monitor over the calibration scores c, raising its
// alarm at 1/delta; seed draws the smoothing.
func NewMonitor(c *Calibration, delta float64, seed uint64) (*Monitor, error) {
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("ood: monitor δ = %v, want 0 < δ < 1", delta)
	}
	m := &Monitor{cal: c.Scores(), delta: delta, seed: seed}
	m.Reset()
	return m, nil
}

// Reset starts the monitor afresh: the stream seen so far is forgotten.
func (m *Monitor) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bag = newBag(m.cal)
	m.rng = rand.New(rand.NewPCG(m.seed, 0x6d6f6e69746f72)) // "monitor"
	m.logM = make([]float64, len(epsilons))
	m.n, m.max, m.alarmN = 0, 1, 0
}

// Observe adds scores to the stream and returns their online p-values.
// Non-finite scores are an error and change nothing.
func (m *Monitor) Observe(scores []float64) ([]float64, error) {
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("ood: monitored score %d is %v", i, s)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]float64, len(scores))
	for i, s := range scores {
		above, tied := m.bag.counts(s)
		p := (float64(above) + m.rng.Float64()*float64(tied+1)) / float64(m.bag.n+1)
		p = max(p, math.SmallestNonzeroFloat64)
		out[i] = p
		m.bag.insert(s)
		m.n++
		lp := math.Log(p)
		for k, e := range epsilons {
			m.logM[k] += math.Log(e) + (e-1)*lp
		}
		v := m.value()
		m.max = max(m.max, v)
		if m.alarmN == 0 && v >= 1/m.delta {
			m.alarmN = m.n
		}
	}
	return out, nil
}

// value is the mixture's current value (the caller holds the lock).
func (m *Monitor) value() float64 {
	hi := slices.Max(m.logM)
	var s float64
	for _, l := range m.logM {
		s += math.Exp(l - hi)
	}
	return math.Exp(hi) * s / float64(len(m.logM))
}

// MonitorState is what a monitor says of the stream so far.
type MonitorState struct {
	N          int     `json:"n"`          // scores seen since the last reset
	Martingale float64 `json:"martingale"` // its current value (1 at the start)
	Max        float64 `json:"max"`        // the largest value it reached
	Delta      float64 `json:"delta"`      // the alarm is at 1/δ
	Alarm      bool    `json:"alarm"`      // it reached 1/δ
	AlarmAt    int     `json:"alarm_at,omitempty"`
}

// State returns the monitor's state.
func (m *Monitor) State() MonitorState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MonitorState{N: m.n, Martingale: m.value(), Max: m.max, Delta: m.delta, Alarm: m.alarmN > 0, AlarmAt: m.alarmN}
}

// bag is a multiset of scores with insertions and counts above and at a
// value in O(√n): sorted buckets of at most bucketSize.
type bag struct {
	buckets [][]float64
	n       int
}

const bucketSize = 1024

func newBag(sorted []float64) bag {
	var b bag
	for lo := 0; lo < len(sorted); lo += bucketSize / 2 {
		b.buckets = append(b.buckets, slices.Clone(sorted[lo:min(len(sorted), lo+bucketSize/2)]))
	}
	b.n = len(sorted)
	return b
}

// counts returns #{b > s} and #{b = s}.
func (b *bag) counts(s float64) (above, tied int) {
	for _, k := range b.buckets {
		if len(k) == 0 || k[len(k)-1] < s {
			continue
		}
		lo := sort.SearchFloat64s(k, s)
		hi := lo
		for hi < len(k) && k[hi] == s {
			hi++
		}
		above += len(k) - hi
		tied += hi - lo
	}
	return above, tied
}

func (b *bag) insert(s float64) {
	b.n++
	if len(b.buckets) == 0 {
		b.buckets = [][]float64{{s}}
		return
	}
	i := sort.Search(len(b.buckets), func(i int) bool {
		k := b.buckets[i]
		return len(k) > 0 && k[len(k)-1] >= s
	})
	if i == len(b.buckets) {
		i--
	}
	k := b.buckets[i]
	j := sort.SearchFloat64s(k, s)
	k = slices.Insert(k, j, s)
	if len(k) > bucketSize { // split
		half := slices.Clone(k[len(k)/2:])
		k = k[:len(k)/2]
		b.buckets = slices.Insert(b.buckets, i+1, half)
	}
	b.buckets[i] = k
}
