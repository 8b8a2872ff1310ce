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
// stream these p-values are independent and uniform. The martingale bets
// with the power functions f_ε(p) = ε·p^{ε−1}, ε on a grid in (0, 1), and
// with f = 1 (sleeping), its capital spread over them and moved between
// them as Vovk's Simple Jumper moves it: before each bet, a share J of
// every bet's capital is pooled and shared out equally (Vovk, Testing
// randomness online, Statistical Science 2021, §7). Four such jumpers,
// J = 10⁻², 10⁻³, 10⁻⁴ and 10⁻⁵, share the starting capital of 1. Each
// is a test martingale (every bet has mean 1 under a uniform p), so their
// sum is one, and by Ville's inequality it ever reaches 1/δ with
// probability at most δ on an in-distribution stream. The jumps are what
// keep it quick after a long in-distribution stream: a plain mixture of
// power martingales loses capital at every uniform p-value, and after
// 20 000 of them a stream with 20% OOD inputs took 531–1 060 inputs to
// raise the alarm, against 4–86 from the start; the jumpers' sleeping
// capital keeps it within 3–104 after 200 000 (docs/ood.md). It is a monitor of the stream as a whole,
// not a per-input test: it says the stream has changed, not which input is
// OOD. Its memory grows with the stream (8 bytes a score, 16 at most with
// its buckets' slack) up to its limit: a full monitor observes nothing
// more until Reset. Stopping at a fixed count keeps Ville's bound (the
// martingale stopped is still one), so an alarm raised before is valid and
// a full monitor's state is that of the stream's first Limit scores.
type Monitor struct {
	mu     sync.Mutex
	cal    []float64 // the calibration scores, sorted
	bag    bag
	rng    *rand.Rand
	seed   uint64
	resets uint64 // Resets so far: each draws the smoothing from its own stream
	// capital holds each jumper's capital on each bet (the power bets,
	// then the sleeping one), in units of exp(logScale).
	capital  [][]float64
	logScale float64
	f        []float64 // scratch: each power bet's f_ε(p)/exp(its largest log)
	n        int       // scores seen
	limit    int       // the most scores seen before it is full; 0: none
	delta    float64
	max      float64 // the largest value reached
	alarmN   int     // the first n at which the martingale reached 1/δ; 0: none
}

// MonitorOptions are a monitor's alarm level, seed and limit.
type MonitorOptions struct {
	// Delta is the alarm level: the alarm is raised at 1/Delta, in (0, 1).
	Delta float64
	// Seed draws the p-values' smoothing: the θ_n of the monitor's first
	// run from one stream of it, those after each Reset from the next
	// (a fixed draw that every run repeated would make the first bets
	// slightly favourable or unfavourable, run after run: Ville's bound
	// holds over the draw). A service draws it at start.
	Seed uint64
	// Limit is the number of scores observed (and kept) before the
	// monitor is full; 0: no limit.
	Limit int
}

// epsilons is the mixture's grid: 100 midpoints of (0, 1).
var epsilons = func() []float64 {
	e := make([]float64, 100)
	for i := range e {
		e[i] = (float64(i) + 0.5) / 100
	}
	return e
}()

// jumps are the jumpers' rates J: the share of capital pooled and shared
// out again before each bet, 10⁻² to 10⁻⁵ (a stream's history of length
// about 1/J is what each forgets over).
var jumps = []float64{1e-2, 1e-3, 1e-4, 1e-5}

// logEpsilons are the logarithms of epsilons.
var logEpsilons = func() []float64 {
	l := make([]float64, len(epsilons))
	for i, e := range epsilons {
		l[i] = math.Log(e)
	}
	return l
}()

// NewMonitor starts a monitor over the calibration scores c.
func NewMonitor(c *Calibration, o MonitorOptions) (*Monitor, error) {
	if !(o.Delta > 0 && o.Delta < 1) {
		return nil, fmt.Errorf("ood: monitor δ = %v, want 0 < δ < 1", o.Delta)
	}
	if o.Limit < 0 {
		return nil, fmt.Errorf("ood: monitor limit %d, want ≥ 0", o.Limit)
	}
	m := &Monitor{cal: c.Scores(), delta: o.Delta, seed: o.Seed, limit: o.Limit}
	m.Reset()
	return m, nil
}

// Reset starts the monitor afresh: the stream seen so far is forgotten,
// and the smoothing is drawn anew (the seed's next stream).
func (m *Monitor) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bag = newBag(m.cal)
	m.rng = rand.New(rand.NewPCG(m.seed, 0x6d6f6e69746f72+m.resets)) // "monitor", then the next streams
	m.resets++
	bets := len(epsilons) + 1 // and sleeping
	m.capital = make([][]float64, len(jumps))
	for j := range m.capital {
		m.capital[j] = make([]float64, bets)
		for k := range m.capital[j] {
			m.capital[j][k] = 1 / float64(len(jumps)*bets)
		}
	}
	m.f = make([]float64, len(epsilons))
	m.logScale = 0
	m.n, m.max, m.alarmN = 0, 1, 0
}

// bet moves the capital by one p-value (the caller holds the lock): each
// jumper pools a share J of its capital and shares it out over its bets,
// then each bet's capital is multiplied by its f(p). The factors are taken
// in units of ε₀'s p^(ε₀−1), whose logarithm goes into logScale, so that a
// p-value near 0 (f up to about 10³⁰⁰) cannot overflow; the sum is
// rescaled to 1 whenever it leaves [10⁻¹⁰⁰, 10¹⁰⁰].
// It returns the logarithm of the martingale's new value.
func (m *Monitor) bet(p float64) float64 {
	// f_ε(p) = ε·p^(ε−1) = ε·e^hi·r^k for ε = epsilons[k] = (k + ½)/100:
	// hi = (1 − ε₀)·(−log p) ≥ 0, r = p^(1/100) ≤ 1. The factors go in
	// units of e^hi (into logScale): ε·r^k for the power bets, a product
	// a step (no exponential each), and e^(−hi) for the sleeping one.
	lp := math.Log(p)
	hi := (1 - epsilons[0]) * -lp
	r, t := math.Exp(lp/float64(len(epsilons))), 1.0
	for k, e := range epsilons {
		m.f[k] = e * t
		t *= r
	}
	sleep := math.Exp(-hi)
	total := 0.0
	for j, c := range m.capital {
		var sum float64
		for _, v := range c {
			sum += v
		}
		J := jumps[j]
		share := J * sum / float64(len(c))
		for k := range m.f {
			c[k] = ((1-J)*c[k] + share) * m.f[k]
			total += c[k]
		}
		last := len(c) - 1
		c[last] = ((1-J)*c[last] + share) * sleep
		total += c[last]
	}
	m.logScale += hi
	if total > 1e100 || total < 1e-100 {
		for _, c := range m.capital {
			for k := range c {
				c[k] /= total
			}
		}
		m.logScale += math.Log(total)
		total = 1
	}
	return m.logScale + math.Log(total)
}

// Observe adds scores to the stream and returns their online p-values:
// those of the scores it observed, fewer than given when it became full
// (State says so). Non-finite scores are an error and change nothing.
func (m *Monitor) Observe(scores []float64) ([]float64, error) {
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("ood: monitored score %d is %v", i, s)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.limit > 0 {
		scores = scores[:min(len(scores), m.limit-m.n)]
	}
	out := make([]float64, len(scores))
	for i, s := range scores {
		above, tied := m.bag.counts(s)
		p := (float64(above) + m.rng.Float64()*float64(tied+1)) / float64(m.bag.n+1)
		p = max(p, math.SmallestNonzeroFloat64)
		out[i] = p
		m.bag.insert(s)
		m.n++
		lv := m.bet(p)
		m.max = max(m.max, math.Exp(lv))
		if m.alarmN == 0 && lv >= -math.Log(m.delta) {
			m.alarmN = m.n
		}
	}
	return out, nil
}

// value is the martingale's current value, the capital of every bet of
// every jumper (the caller holds the lock).
func (m *Monitor) value() float64 {
	if m.n == 0 {
		return 1 // the starting capital, which the sum of its shares rounds
	}
	return math.Exp(m.logValue())
}

// logValue is the logarithm of the martingale's value, finite where the
// value itself overflows (the caller holds the lock).
func (m *Monitor) logValue() float64 {
	var s float64
	for _, c := range m.capital {
		for _, v := range c {
			s += v
		}
	}
	return m.logScale + math.Log(s)
}

// MonitorState is what a monitor says of the stream so far.
type MonitorState struct {
	N          int     `json:"n"`          // scores seen since the last reset
	Martingale float64 `json:"martingale"` // its current value (1 at the start)
	Max        float64 `json:"max"`        // the largest value it reached
	Delta      float64 `json:"delta"`      // the alarm is at 1/δ
	Alarm      bool    `json:"alarm"`      // it reached 1/δ
	AlarmAt    int     `json:"alarm_at,omitempty"`
	Limit      int     `json:"limit,omitempty"` // scores observed at most; 0: no limit
	Full       bool    `json:"full,omitempty"`  // it reached its limit and observes no more
}

// State returns the monitor's state.
func (m *Monitor) State() MonitorState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MonitorState{N: m.n, Martingale: m.value(), Max: m.max, Delta: m.delta, Alarm: m.alarmN > 0, AlarmAt: m.alarmN,
		Limit: m.limit, Full: m.limit > 0 && m.n >= m.limit}
}

// bag is a multiset of scores: sorted buckets of at most bucketSize,
// ordered (every score of a bucket is at most every score of the next),
// with a Fenwick tree over the buckets' sizes, so that counting the scores
// below or at a value and inserting one take O(log n) (a split, every
// bucketSize/2 insertions at least, rebuilds the tree in O(n/bucketSize)).
// Ties are counted by binary search, not one by one: a stream of 10⁵
// copies of one score costs what any other stream does.
type bag struct {
	buckets [][]float64
	tree    []int // Fenwick tree of len(buckets[i])
	n       int
}

const bucketSize = 1024

func newBag(sorted []float64) bag {
	var b bag
	for lo := 0; lo < len(sorted); lo += bucketSize / 2 {
		b.buckets = append(b.buckets, slices.Clone(sorted[lo:min(len(sorted), lo+bucketSize/2)]))
	}
	b.n = len(sorted)
	b.rebuild()
	return b
}

// rebuild makes the Fenwick tree of the buckets' sizes.
func (b *bag) rebuild() {
	b.tree = make([]int, len(b.buckets)+1)
	for i, k := range b.buckets {
		b.tree[i+1] += len(k)
		if j := i + 1 + (i+1)&-(i+1); j <= len(b.buckets) {
			b.tree[j] += b.tree[i+1]
		}
	}
}

// before is the number of scores in the buckets before bucket i.
func (b *bag) before(i int) int {
	c := 0
	for ; i > 0; i -= i & -i {
		c += b.tree[i]
	}
	return c
}

// rank returns #{b < s} (strict) or #{b ≤ s} (not strict).
func (b *bag) rank(s float64, strict bool) int {
	past := func(x float64) bool { return x > s || (strict && x == s) } // x is counted out
	i := sort.Search(len(b.buckets), func(i int) bool { return past(b.buckets[i][len(b.buckets[i])-1]) })
	if i == len(b.buckets) {
		return b.n
	}
	k := b.buckets[i]
	return b.before(i) + sort.Search(len(k), func(j int) bool { return past(k[j]) })
}

// counts returns #{b > s} and #{b = s}.
func (b *bag) counts(s float64) (above, tied int) {
	le := b.rank(s, false)
	return b.n - le, le - b.rank(s, true)
}

func (b *bag) insert(s float64) {
	b.n++
	if len(b.buckets) == 0 {
		b.buckets = [][]float64{{s}}
		b.rebuild()
		return
	}
	i := sort.Search(len(b.buckets), func(i int) bool {
		k := b.buckets[i]
		return k[len(k)-1] >= s
	})
	if i == len(b.buckets) {
		i--
	}
	k := b.buckets[i]
	j := sort.SearchFloat64s(k, s)
	k = slices.Insert(k, j, s)
	if len(k) > bucketSize { // split
		half := slices.Clone(k[len(k)/2:])
		b.buckets[i] = slices.Clip(k[:len(k)/2])
		b.buckets = slices.Insert(b.buckets, i+1, half)
		b.rebuild()
		return
	}
	b.buckets[i] = k
	for i++; i < len(b.tree); i += i & -i {
		b.tree[i]++
	}
}
