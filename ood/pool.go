package ood

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// A Pool is a reference pool of in-distribution embeddings a_1..a_N ready
// for exact nearest-neighbour queries under a set's score: for a query x,
// the k-th smallest φ(a_i − x), as the geometry's Scores computes it on the
// float32 difference a_i − x.
//
// The search is exact and fast. A geometry that decomposes
// (geometry.Decomposer: every family, and a set behind a head) has its pool
// mapped by T once; a query sums the per-coordinate terms of T·a_i − T·x,
// the coordinates whose terms are largest between pool rows first, and
// stops a row once its partial sum passes the k-th best so far (with a
// relative margin for rounding); for the generalized ball a block's rows
// are first screened in half precision against that bound
// (kernel.PowScreener). The few rows that survive are rescored
// exactly with Scores, so the result is Scores' to the last bit. Many
// queries run on all cores, one query per task; a single query splits the
// pool. Results do not depend on the number of goroutines.
type Pool struct {
	g            geometry.Geometry
	d, n         int
	rows         []float32 // n×d, as given
	dec          geometry.Decomposition
	ok           bool      // dec applies
	t            []float64 // n×dec.Out: T·a_i (nil through the identity)
	logm         []float64 // the generalized ball's log m_j
	p32, log2m32 []float32 // its p_j and log2 m_j in float32
	rho          float64   // relative margin of the scan's sums
	abs          float64   // and absolute margin
	// The screen on vectors (kernel.SqRowsBound, kernel.FastPowRowsBound)
	// over a block of rows at a time: m and p of each term in float32
	// (powers other than 2).
	vm, vp []float32
	// The scans take the terms in the order perm (perm[j] is the j-th
	// output coordinate summed): those with the largest terms between pool
	// rows first, so that a far row's partial sum passes the bound after
	// few of them. t, logm, p32, log2m32, vm, vp and pexp are in that
	// order; rowsP is rows in it (through the identity; nil otherwise).
	perm  []int
	rowsP []float32
	pexp  []float64 // the generalized ball's p_j
	// half is rowsP in half precision for the generalized ball through the
	// identity: once a scan has a bound, each block's rows go through the
	// half-precision screen (kernel.PowScreener) first, and the float32
	// screen sums only the rows it leaves in (halfRows are the half rows);
	// qScale turns a bound on the exact scores into one on the rows' true
	// terms (as geometry's filter does).
	half     *kernel.PowScreens
	halfRows *kernel.HalfRows
	qScale   float64
	// scans are the scans of past queries (and chunks), kept with their
	// buffers between queries and calls.
	scans sync.Pool
}

// NewPool prepares rows (n×d, row-major, finite) as a pool for g. It keeps
// rows; the caller must not change them.
func NewPool(g geometry.Geometry, rows []float32) (*Pool, error) {
	d := g.Dim()
	if len(rows) == 0 || len(rows)%d != 0 {
		return nil, fmt.Errorf("ood: %d pool values are not a positive number of rows of dimension %d", len(rows), d)
	}
	for i, v := range rows {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("ood: pool row %d, coordinate %d is %v", i/d, i%d, v)
		}
	}
	p := &Pool{g: g, d: d, n: len(rows) / d, rows: rows}
	if dc, ok := g.(geometry.Decomposer); ok {
		p.dec, p.ok = dc.Decompose()
	}
	if !p.ok {
		return p, nil
	}
	out := p.dec.Out
	if p.dec.T == nil {
		// The scans take the float32 rows themselves (in their order).
		p.perm = termOrder(&p.dec, p.n, func(i, j int) float64 { return float64(rows[i*d+j]) })
		p.rowsP = make([]float32, len(rows))
		for i := range p.n {
			permute(p.rowsP[i*d:(i+1)*d], rows[i*d:(i+1)*d], p.perm)
		}
	} else {
		p.t = make([]float64, p.n*out)
		parallel.For(p.n, 256, 0, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				p.dec.Apply(p.t[i*out:(i+1)*out], rows[i*d:(i+1)*d])
			}
		})
		p.perm = termOrder(&p.dec, p.n, func(i, j int) float64 { return p.t[i*out+j] })
		parallel.For(p.n, 256, 0, func(_, lo, hi int) {
			tmp := make([]float64, out)
			for i := lo; i < hi; i++ {
				r := p.t[i*out : (i+1)*out]
				copy(tmp, r)
				permute(r, tmp, p.perm)
			}
		})
	}
	if p.dec.Power == 0 {
		p.logm, p.p32, p.log2m32, p.pexp = make([]float64, out), make([]float32, out), make([]float32, out), make([]float64, out)
		for j, k := range p.perm {
			m := p.dec.M[k]
			p.logm[j], p.p32[j], p.log2m32[j], p.pexp[j] = math.Log(m), float32(p.dec.P[k]), float32(math.Log2(m)), p.dec.P[k]
		}
	}
	if p.dec.Power == 0 && p.dec.T == nil {
		h := kernel.NewHalfRows(p.rowsP, d, func(nb int, fill func(b0, b1 int)) {
			parallel.For(nb, 64, 0, func(_, lo, hi int) { fill(lo, hi) })
		})
		log2m := make([]float64, out)
		pmax := 0.0
		for j, k := range p.perm {
			log2m[j], pmax = math.Log2(p.dec.M[k]), max(pmax, p.dec.P[k])
		}
		p.halfRows, p.half = h, h.PowScreens(log2m, p.pexp)
		p.qScale = 1 / (1 - (pmax+1)*0x1p-23)
	}
	// Through the identity the scan's differences are Scores' own (the
	// float32 difference, widened), and the ℓ2 terms too. Through a linear
	// map the differences are T·a − T·x instead of T applied to the rounded
	// difference: off by float32's rounding times T's condition. Powers
	// other than 2 are screened with float32 polynomials.
	switch {
	case p.dec.T != nil:
		p.rho = 1e-3
	case p.dec.Power != 2:
		p.rho = 1e-4
	default:
		p.rho = 1e-9
	}
	// The vector screen sums float32 lanes: its margin is its error bound
	// (twice, as the scalar screen's), at least the scalar's.
	if p.dec.Power == 2 {
		p.rho = max(p.rho, 2*kernel.SqRowsBoundErr(out)+0x1p-20)
		return p, nil
	}
	p.vm, p.vp = make([]float32, out), make([]float32, out)
	var fast *geometry.GenBall
	if p.dec.Power == 0 {
		fast, _ = geometry.NewGenBall(p.dec.M, p.dec.P)
	} else {
		fast = geometry.UnitGenBall(out, p.dec.Power)
	}
	for j, k := range p.perm {
		m, e := fast.Scales()[k], fast.Exponents()[k]
		p.vm[j], p.vp[j] = float32(m), float32(e)
	}
	rel, abs := fast.FastTolerance()
	if p.dec.T != nil {
		rel += 0x1p-22 // the differences rounded to float32
	}
	p.rho, p.abs = max(p.rho, 2*rel), 2*abs
	return p, nil
}

// N is the number of pool rows.
func (p *Pool) N() int { return p.n }

// Dim is the dimension of the rows.
func (p *Pool) Dim() int { return p.d }

// Kth writes into dst (allocated when nil) the k-th smallest φ(a_i − x)
// over the pool for each query row x of queries (rows of Dim()).
func (p *Pool) Kth(dst []float64, queries []float32, k int) ([]float64, error) {
	if k < 1 || k > p.n {
		return nil, fmt.Errorf("ood: k = %d nearest of a pool of %d rows: want 1 ≤ k ≤ %d", k, p.n, p.n)
	}
	d := p.d
	if len(queries)%d != 0 {
		return nil, fmt.Errorf("ood: %d query values are not rows of dimension %d", len(queries), d)
	}
	m := len(queries) / d
	if dst == nil {
		dst = make([]float64, m)
	}
	if len(dst) != m {
		panic("ccs/ood: Kth: dst length mismatch")
	}
	for i, v := range queries {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("ood: query %d, coordinate %d is %v", i/d, i%d, v)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if m >= 2*workers || p.n < 2*minPoolChunk {
		// Many queries: one per task, each scanning the whole pool.
		parallel.For(m, 1, 0, func(_, lo, hi int) {
			s := p.ownScan()
			for q := lo; q < hi; q++ {
				x := queries[q*d : (q+1)*d]
				s.start(x, k)
				s.rows(0, p.n)
				dst[q] = s.finish(x, k)
			}
			s.y = nil
			p.scans.Put(s)
		})
		return dst, nil
	}
	// Few queries: each splits the pool into chunks scanned on all cores,
	// which share their bound (each chunk's k-th smallest sum is at least
	// the pool's), and whose candidates are merged.
	chunk := max(minPoolChunk, (p.n+4*workers-1)/(4*workers))
	var y, tmp []float64 // T·x, once per query for all its chunks
	var xp []float32     // x in the scans' order
	if p.ok {
		y, tmp, xp = make([]float64, p.dec.Out), make([]float64, p.dec.Out), make([]float32, d)
	}
	for q := range m {
		x := queries[q*d : (q+1)*d]
		xq := p.prepare(y, tmp, xp, x)
		parts := make([]*scan, parallel.Chunks(p.n, chunk))
		var shared atomic.Uint64
		shared.Store(math.Float64bits(math.Inf(1)))
		parallel.For(p.n, chunk, 0, func(c, lo, hi int) {
			s, _ := p.scans.Get().(*scan)
			if s == nil {
				s = &scan{p: p}
			}
			s.y, s.x32, s.given, s.shared = y, xq, true, &shared
			s.start(x, k)
			s.rows(lo, hi)
			parts[c] = s
		})
		all := parts[0]
		for _, s := range parts[1:] {
			all.cands = append(all.cands, s.cands...)
			all.special = append(all.special, s.special...)
		}
		dst[q] = all.finish(x, k)
		for _, s := range parts {
			s.y, s.shared = nil, nil
			p.scans.Put(s)
		}
	}
	return dst, nil
}

// minPoolChunk is the fewest pool rows one task scans for a single query.
const minPoolChunk = 512

// candidate is a pool row that may be among a query's k nearest: its row
// and the scan's sum of terms.
type candidate struct {
	row int
	sum float64
}

// scan is one query's pass over pool rows.
type scan struct {
	p     *Pool
	y     []float64 // T·x in the scans' order (through a linear map)
	x32   []float32 // x in the scans' order, for the identity's float32 differences
	best  []float64 // the k smallest sums so far (a max-heap of at most k)
	k     int
	cands []candidate // every row whose sum was within the margin of best's largest when scanned
	// special are the rows the vector screen could not sum (a term outside
	// float32's range): rescored exactly whatever the others' sums.
	special []int
	diffs   []float32
	exact   []float64
	sums    []float64 // a block's screened sums
	blk     []float32 // a block's differences in float32 (through a linear map)
	zero    []float32
	// shared, when not nil, holds the smallest bound of the scans of one
	// query's chunks (float64 bits).
	shared *atomic.Uint64
	half   *kernel.PowScreener // the half-precision screen about x (Pool.half), or nil
	hs     kernel.PowScreener  // half's memory
	masks  []uint16
	kept   []int     // a block's rows the half screen leaves in
	given  bool      // y and x32 are the query's already, shared by its chunks
	ownY   []float64 // y's memory where the scan computes it (ownScan)
	tmp    []float64 // T·x before it is put in the scans' order
	ownX   []float32 // x32's memory where the scan computes it
}

// prepare puts x into the scans' order and returns the x the scans take:
// through the identity x in that order (in xp), through a linear map x
// itself, with T·x in that order written into y (through tmp).
func (p *Pool) prepare(y, tmp []float64, xp, x []float32) []float32 {
	switch {
	case !p.ok:
		return x
	case p.dec.T == nil:
		permute(xp, x, p.perm)
		return xp
	}
	p.dec.Apply(tmp, x)
	permute(y, tmp, p.perm)
	return x
}

// permute sets dst[j] = src[perm[j]].
func permute[T any](dst, src []T, perm []int) {
	for j, k := range perm {
		dst[j] = src[k]
	}
}

// termOrder is the order in which the scans take the terms: the output
// coordinates by decreasing mean term between pool rows (over up to 1 024
// pairs of rows half the pool apart; ta(i, j) is (T·a_i)_j, n rows), ties
// by index. A row far from the query then passes the scan's bound after
// few terms.
func termOrder(dec *geometry.Decomposition, n int, ta func(i, j int) float64) []int {
	out := dec.Out
	mean := make([]float64, out)
	pairs := min(n/2, 1024)
	for s := range pairs {
		i := s * (n / 2) / pairs
		for j := range out {
			mean[j] += dec.Term(j, ta(i, j)-ta(i+n/2, j))
		}
	}
	perm := make([]int, out)
	for j := range perm {
		perm[j] = j
	}
	slices.SortStableFunc(perm, func(i, j int) int { return cmp.Compare(mean[j], mean[i]) })
	return perm
}

// ownScan is a scan from p's pool (or a new one) that takes its own T·x:
// a task a query, and a new scan's buffers a task (a block's differences,
// 64 KB at d = 128) had cost a quarter of the scans' time.
func (p *Pool) ownScan() *scan {
	s, _ := p.scans.Get().(*scan)
	if s == nil {
		s = &scan{p: p}
	}
	if p.ok {
		if len(s.ownY) != p.dec.Out {
			s.ownY, s.tmp, s.ownX = make([]float64, p.dec.Out), make([]float64, p.dec.Out), make([]float32, p.d)
		}
		s.y = s.ownY
	}
	s.given, s.shared = false, nil
	return s
}

func (s *scan) start(x []float32, k int) {
	s.best, s.cands, s.special, s.k = s.best[:0], s.cands[:0], s.special[:0], k
	if !s.given {
		s.x32 = s.p.prepare(s.y, s.tmp, s.ownX, x)
	}
}

// rows scans pool rows lo..hi−1. A row is left out once its partial sum
// passes the k-th smallest sum so far (times 1 + the margin): the final
// k-th smallest can only be smaller. With the vector kernels the rows go a
// block at a time against the bound as it stood before the block.
func (s *scan) rows(lo, hi int) {
	p := s.p
	if !p.ok {
		for i := lo; i < hi; i++ {
			s.cands = append(s.cands, candidate{row: i, sum: math.Inf(-1)})
		}
		return
	}
	if kernel.Vector() {
		s.blocks(lo, hi)
		return
	}
	out := p.dec.Out
	limit := math.Inf(1)
	for i := lo; i < hi; i++ {
		limit = s.bound(limit)
		var a []float64
		if p.t != nil {
			a = p.t[i*out : (i+1)*out]
		}
		var row32 []float32
		if p.rowsP != nil {
			row32 = p.rowsP[i*p.d : (i+1)*p.d]
		}
		sum, in := p.sum(a, s.y, s.x32, row32, limit)
		if in {
			limit = s.keep(i, sum, limit)
		}
	}
}

// bound is limit lowered to the bound the scans of one query share.
func (s *scan) bound(limit float64) float64 {
	if s.shared != nil {
		limit = min(limit, math.Float64frombits(s.shared.Load()))
	}
	return limit
}

// keep makes row i, of screened sum sum, a candidate and returns the
// scan's new limit (shared with the query's other scans).
func (s *scan) keep(i int, sum, limit float64) float64 {
	p := s.p
	s.cands = append(s.cands, candidate{row: i, sum: sum})
	s.push(sum)
	if len(s.best) == s.k {
		limit = min(limit, s.best[0]*(1+p.rho)+p.abs)
		if s.shared != nil {
			for old := s.shared.Load(); limit < math.Float64frombits(old) && !s.shared.CompareAndSwap(old, math.Float64bits(limit)); old = s.shared.Load() {
			}
		}
	}
	return limit
}

// screenBlock is the rows the vector screen sums at a time.
const screenBlock = 128

// blocks is rows on the vector kernels: through the identity the kernels
// take x and the pool's rows as they are (x − a_i in float32, as Scores
// takes it); through a linear map the float64 differences T·a_i − T·x are
// rounded to float32 first, as the scalar screen rounds them.
func (s *scan) blocks(lo, hi int) {
	p := s.p
	out := p.dec.Out
	s.sums = slices.Grow(s.sums[:0], screenBlock)[:screenBlock]
	anchor := s.x32
	if p.dec.T != nil || p.half != nil {
		s.blk = slices.Grow(s.blk[:0], screenBlock*out)[:screenBlock*out]
	}
	if p.dec.T != nil {
		if len(s.zero) != out {
			s.zero = make([]float32, out)
		}
		anchor = s.zero
	}
	s.half = nil
	if p.half != nil {
		if a, ok := p.halfRows.ScaleAnchor(s.x32); ok && p.half.At(&s.hs, a) {
			s.half = &s.hs
		}
	}
	limit := math.Inf(1)
	for b0 := lo; b0 < hi; b0 += screenBlock {
		b1 := min(hi, b0+screenBlock)
		limit = s.bound(limit)
		var items []float32
		if p.dec.T != nil {
			items = s.blk[:(b1-b0)*out]
			kernel.SubRows64(items, p.t[b0*out:b1*out], s.y)
		} else {
			items = p.rowsP[b0*p.d : b1*p.d]
		}
		sums := s.sums[:b1-b0]
		switch {
		case s.half != nil && !math.IsInf(limit, 1) && s.halfBlock(b0, b1, limit):
		case p.dec.Power == 2:
			kernel.SqRowsBound(sums, anchor, items, limit)
		default:
			kernel.FastPowRowsBound(sums, p.vm, p.vp, anchor, items, limit)
		}
		for i, sum := range sums {
			switch {
			case math.IsInf(sum, 1):
				// A term the float32 screen cannot hold: rescored exactly.
				s.special = append(s.special, b0+i)
			case sum <= limit:
				limit = s.keep(b0+i, sum, limit)
			}
		}
	}
}

// halfBlock writes the sums of rows b0 … b1−1 into s.sums as blocks
// would, screening them in half precision first: a row the half screen
// rules out (its exact score is above limit) gets math.MaxFloat64, and
// the float32 screen sums the others. False where the half screen has no
// bound for limit (s.sums unset).
func (s *scan) halfBlock(b0, b1 int, limit float64) bool {
	p := s.p
	d := p.d
	h0, h1 := b0/kernel.HalfBlock, (b1+kernel.HalfBlock-1)/kernel.HalfBlock
	s.masks = slices.Grow(s.masks[:0], h1-h0)[:h1-h0]
	if !s.half.Masks(h0, s.masks, limit*p.qScale+float64(d)*0x1p-1000) {
		return false
	}
	sums := s.sums[:b1-b0]
	for i := range sums {
		sums[i] = math.MaxFloat64
	}
	s.kept = s.kept[:0]
	for b, m := range s.masks {
		for ; m != 0; m &= m - 1 {
			r := (h0+b)*kernel.HalfBlock + bits.TrailingZeros16(m)
			if r < b0 || r >= b1 {
				continue
			}
			k := len(s.kept)
			copy(s.blk[k*d:(k+1)*d], p.rowsP[r*d:(r+1)*d])
			s.kept = append(s.kept, r-b0)
		}
	}
	if len(s.kept) == 0 {
		return true
	}
	ks := slices.Grow(s.exact[:0], len(s.kept))[:len(s.kept)]
	kernel.FastPowRowsBound(ks, p.vm, p.vp, s.x32, s.blk[:len(ks)*d], limit)
	for k, i := range s.kept {
		sums[i] = ks[k]
	}
	s.exact = ks[:0]
	return true
}

// push keeps the k smallest sums in a max-heap.
func (s *scan) push(v float64) {
	h := s.best
	if len(h) < s.k {
		h = append(h, v)
		for i := len(h) - 1; i > 0; {
			up := (i - 1) / 2
			if h[up] >= h[i] {
				break
			}
			h[up], h[i] = h[i], h[up]
			i = up
		}
		s.best = h
		return
	}
	if v >= h[0] {
		return
	}
	h[0] = v
	for i := 0; ; {
		l, r, big := 2*i+1, 2*i+2, i
		if l < len(h) && h[l] > h[big] {
			big = l
		}
		if r < len(h) && h[r] > h[big] {
			big = r
		}
		if big == i {
			break
		}
		h[i], h[big] = h[big], h[i]
		i = big
	}
}

// sum returns Σ_j term_j(a_j − y_j), stopping (in = false) once it passes
// limit; through the identity the difference is taken in float32 as
// Scores takes it. The powers other than 2 are screened with float32
// polynomials (kernel.Log2Poly and kernel.Exp2Poly, about 1e-6 per term
// and unit of the exponent), within the pool's margin.
func (p *Pool) sum(a, y []float64, x32, row32 []float32, limit float64) (float64, bool) {
	const every = 4
	var s float64
	n := len(a)
	ident, power := p.dec.T == nil, p.dec.Power
	for j0 := 0; j0 < n; j0 += every {
		j1 := min(n, j0+every)
		for j := j0; j < j1; j++ {
			var v float64
			if ident {
				v = float64(row32[j] - x32[j])
			} else {
				v = a[j] - y[j]
			}
			if power == 2 {
				s += v * v
				continue
			}
			if v == 0 {
				continue
			}
			u := math.Abs(v)
			e, c := float32(power), float32(0)
			if power == 0 {
				e, c = p.p32[j], p.log2m32[j]
			}
			if u32 := float32(u); u32 >= kernel.MinNormal32 && u32 <= math.MaxFloat32 {
				if r := kernel.Exp2Poly(e * (kernel.Log2Poly(u32) + c)); r != 0 && r <= math.MaxFloat32 {
					s += float64(r)
					continue
				}
			}
			// Beyond the polynomials' range: the exact term.
			if power > 0 {
				s += math.Pow(u, power)
			} else {
				s += math.Exp(p.pexp[j] * (p.logm[j] + math.Log(u)))
			}
		}
		if s > limit {
			return s, false
		}
	}
	return s, true
}

// finish rescores exactly the candidates within the margin of the k-th
// smallest sum (which the scan cannot have left out) and returns the k-th
// smallest exact score.
func (s *scan) finish(x []float32, k int) float64 {
	p := s.p
	if p.ok && len(s.cands) > k {
		sums := make([]float64, len(s.cands))
		for i, c := range s.cands {
			sums[i] = c.sum
		}
		cut := selectKth(sums, k)*(1+p.rho) + p.abs
		s.cands = slices.DeleteFunc(s.cands, func(c candidate) bool { return c.sum > cut })
	}
	for _, i := range s.special {
		s.cands = append(s.cands, candidate{row: i, sum: math.Inf(-1)})
	}
	d := p.d
	n := len(s.cands)
	s.diffs = slices.Grow(s.diffs[:0], n*d)[:n*d]
	for c, cd := range s.cands {
		a := p.rows[cd.row*d : (cd.row+1)*d]
		out := s.diffs[c*d : (c+1)*d]
		for j := range d {
			out[j] = a[j] - x[j]
		}
	}
	s.exact = slices.Grow(s.exact[:0], n)[:n]
	p.g.Scores(s.exact, s.diffs)
	return selectKth(s.exact, k)
}

// selectKth returns the k-th smallest of v (reordering it).
func selectKth(v []float64, k int) float64 {
	slices.SortFunc(v, cmp.Compare[float64])
	return v[k-1]
}
