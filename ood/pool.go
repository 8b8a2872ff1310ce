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

	"github.com/ccsets/ccs/conformal"
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
// mapped by T once; a query sums the per-coordinate terms of T·a_i − T·x
// (each rounded to float32), the coordinates whose terms are largest
// between pool rows first, and stops a row once its partial sum passes the
// k-th best so far (with margins for rounding); for the generalized ball a
// block's rows are first screened in half precision against that bound
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
	// few of them. rowsP, logm, p32, log2m32, vm, vp, pexp and tmax are in
	// that order.
	perm []int
	// rowsP are the rows the scans take (n×dec.Out, float32): through the
	// identity the pool's rows, through a linear map T·a_i rounded to
	// float32, which the scans take as the identity's rows, against T·x
	// rounded (so a block needs no differences made in memory). That
	// rounding moves a coordinate of the difference by at most
	// 2⁻²⁴·(|T·a_i| + |T·x|): the scans' margin takes it in, through tmax
	// and termErr (roundMargin). Where that margin would be wide against
	// the pool's distances (small powers, whose terms grow steeply from 0),
	// the pool keeps T·a_i in float64 in t instead, and a block's float64
	// differences T·a_i − T·x are rounded to float32 (kernel.SubRows64):
	// then off by a relative 2⁻²⁴ only.
	rowsP []float32
	t     []float64
	pexp  []float64 // the generalized ball's p_j
	// tmax[j] is the largest |(T·a_i)_j| (through a linear map); termErr
	// and pmin, pmax bound what a coordinate's error e adds to a term
	// (roundMargin); rhoT is the relative part.
	tmax             []float64
	termErr          float64
	pmin, pmax, rhoT float64
	// tT is T transposed where T is square, for T·x on the vector kernels
	// (kernel.DotMT); nil otherwise.
	tT []float64
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
		return nil, conformal.DimensionErrorf("ood: %d pool values are not a positive number of rows of dimension %d", len(rows), d)
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
		p.perm, _ = termOrder(&p.dec, p.n, func(i, j int) float64 { return float64(rows[i*d+j]) })
		p.rowsP = make([]float32, len(rows))
		for i := range p.n {
			permute(p.rowsP[i*d:(i+1)*d], rows[i*d:(i+1)*d], p.perm)
		}
	} else {
		t := make([]float64, p.n*out)
		parallel.For(p.n, 256, 0, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				p.dec.Apply(t[i*out:(i+1)*out], rows[i*d:(i+1)*d])
			}
		})
		var pairSum float64
		p.perm, pairSum = termOrder(&p.dec, p.n, func(i, j int) float64 { return t[i*out+j] })
		p.tmax = make([]float64, out)
		for i := range p.n {
			for j, k := range p.perm {
				p.tmax[j] = max(p.tmax[j], math.Abs(t[i*out+k]))
			}
		}
		p.roundTerms()
		// The float32 rows where a query within the pool's range would get
		// a margin under 2⁻¹⁰ of a pair of rows' mean sum (p.rho is still 0
		// here: its factor 1 + rho is left out of this choice alone).
		if p.roundMargin(2*slices.Max(p.tmax)) <= pairSum*0x1p-10 {
			p.rowsP = make([]float32, p.n*out)
			parallel.For(p.n, 256, 0, func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					r, dst := t[i*out:(i+1)*out], p.rowsP[i*out:(i+1)*out]
					for j, k := range p.perm {
						dst[j] = float32(r[k])
					}
				}
			})
		} else { // the margin would be too wide: float64 rows, in place
			p.t = t
			parallel.For(p.n, 256, 0, func(_, lo, hi int) {
				tmp := make([]float64, out)
				for i := lo; i < hi; i++ {
					r := t[i*out : (i+1)*out]
					copy(tmp, r)
					permute(r, tmp, p.perm)
				}
			})
		}
		if p.dec.Out == d && kernel.Vector() {
			p.tT = make([]float64, d*d)
			for k := range d {
				for l := range d {
					p.tT[l*d+k] = p.dec.T[k*d+l]
				}
			}
		}
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
	// difference: off by float32's rounding times T's condition (and by the
	// rounding of T·a and T·x to float32, roundMargin). Powers other than 2
	// are screened with float32 polynomials.
	switch {
	case p.dec.T != nil:
		p.rho = 1e-3 + 2*p.rhoT
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

// transform writes T·x into y, through x64 (x widened): on the vector
// kernels where T is square, else as Decomposition.Apply. Only the scans
// take it, within their margin, so its rounding need not be Apply's.
func (p *Pool) transform(y, x64 []float64, x []float32) {
	if p.tT == nil {
		p.dec.Apply(y, x)
		return
	}
	for l, v := range x {
		x64[l] = float64(v)
	}
	for k := kernel.DotMT(y, x64, p.tT); k < len(y); k++ {
		var s float64
		for l, v := range x64 {
			s += p.dec.T[k*p.d+l] * v
		}
		y[k] = s
	}
}

// roundEps is the ε of roundMargin's bound for powers above 1: a relative
// margin of (1+ε)^(p−1) − 1 on the sums, and an absolute one that grows
// as (1 + 1/ε)^(p−1).
const roundEps = 0x1p-12

// roundTerms sets what roundMargin needs: for each term, whose exponent
// is p_j and scale m_j (1 for a single power), an error e in the
// coordinate moves the term by at most (m_j·e)^p_j where p_j ≤ 1 (a
// concave power is subadditive), and where p_j > 1 the term of |v| + e is
// at most (1+ε)^(p_j−1) times the term of |v| plus (1 + 1/ε)^(p_j−1)·
// (m_j·e)^p_j (and the same the other way); termErr is the sum over j of
// those factors times m_j^p_j, rhoT the largest relative part.
func (p *Pool) roundTerms() {
	out := p.dec.Out
	p.pmin, p.pmax = math.Inf(1), 0
	for j := range out {
		e, m := p.dec.Power, 1.0
		if e == 0 {
			e, m = p.dec.P[j], p.dec.M[j]
		}
		c := 1.0
		if e > 1 {
			c = math.Pow(1+1/roundEps, e-1)
		}
		p.termErr += c * math.Pow(m, e)
		p.pmin, p.pmax = min(p.pmin, e), max(p.pmax, e)
	}
	if p.pmax > 1 {
		p.rhoT = math.Pow(1+roundEps, p.pmax-1) - 1
	}
}

// roundMargin is the absolute margin a query's scans add to the pool's,
// through a linear map, for big the largest tmax_j + |y_j| over the
// coordinates j of y = T·x: every coordinate of the float32 difference the
// scans take is within e = 2⁻²⁴·big + 2⁻¹⁴⁹ of T·a_i − T·x's (T·a_i and
// T·x each rounded once to float32), so a row's sum of terms is within
// rhoT (relative) and termErr·max(e^pmin, e^pmax) (absolute) of its true
// one. Doubled, as the pool's margins are, since both the bound and a
// row's sum may be off.
func (p *Pool) roundMargin(big float64) float64 {
	e := big*0x1p-24*(1+0x1p-20) + 0x1p-149
	return 2 * (1 + p.rho) * p.termErr * max(math.Pow(e, p.pmin), math.Pow(e, p.pmax))
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
			return nil, fmt.Errorf("ood: queries[%d][%d] is %v", i/d, i%d, v)
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
			p.scans.Put(s)
		})
		return dst, nil
	}
	// Few queries: each splits the pool into chunks scanned on all cores,
	// which share their bound (each chunk's k-th smallest sum is at least
	// the pool's), and whose candidates are merged.
	chunk := max(minPoolChunk, (p.n+4*workers-1)/(4*workers))
	var tmp []float64 // T·x
	var xp []float32  // x as the scans take it, once per query for all its chunks
	if p.ok {
		tmp, xp = make([]float64, 2*p.dec.Out+d), make([]float32, p.dec.Out)
	}
	for q := range m {
		x := queries[q*d : (q+1)*d]
		xq, y, abs := p.prepare(tmp, xp, x)
		parts := make([]*scan, parallel.Chunks(p.n, chunk))
		var shared atomic.Uint64
		shared.Store(math.Float64bits(math.Inf(1)))
		parallel.For(p.n, chunk, 0, func(c, lo, hi int) {
			s, _ := p.scans.Get().(*scan)
			if s == nil {
				s = &scan{p: p}
			}
			s.x32, s.y, s.abs, s.given, s.shared = xq, y, abs, true, &shared
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
			s.x32, s.y, s.shared = nil, nil, nil
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
	x32   []float32 // x as the scans take it (Pool.prepare)
	y     []float64 // T·x in the scans' order, where the pool keeps T·a_i in float64
	abs   float64   // the absolute margin of its sums (Pool.prepare)
	best  []float64 // the k smallest sums so far (a max-heap of at most k)
	k     int
	cands []candidate // every row whose sum was within the margin of best's largest when scanned
	// special are the rows the vector screen could not sum (a term outside
	// float32's range): rescored exactly whatever the others' sums.
	special []int
	diffs   []float32
	exact   []float64
	sums    []float64 // a block's screened sums
	blk     []float32 // a block's float32 differences (Pool.t), or the rows the half screen leaves in
	// shared, when not nil, holds the smallest bound of the scans of one
	// query's chunks (float64 bits).
	shared *atomic.Uint64
	half   *kernel.PowScreener // the half-precision screen about x (Pool.half), or nil
	hs     kernel.PowScreener  // half's memory
	masks  []uint16
	kept   []int     // a block's rows the half screen leaves in
	given  bool      // x32 and abs are the query's already, shared by its chunks
	tmp    []float64 // T·x before it is put in the scans' order, and x widened
	ownX   []float32 // x32's memory where the scan computes it
}

// prepare returns x as the scans take it, in the scans' order (written
// into xp, of dec.Out values), and the absolute margin of the scans' sums:
// through the identity x itself, through a linear map T·x rounded to
// float32, whose margin takes in that rounding (roundMargin) — or, where
// the pool keeps T·a_i in float64, zeros and T·x in float64 (y, in the
// scans' order: the block's differences are made from it). tmp holds
// 2·dec.Out + Dim() values.
func (p *Pool) prepare(tmp []float64, xp, x []float32) (x32 []float32, y []float64, abs float64) {
	switch {
	case !p.ok:
		return x, nil, p.abs
	case p.dec.T == nil:
		permute(xp, x, p.perm)
		return xp, nil, p.abs
	}
	out := p.dec.Out
	tx := tmp[:out]
	p.transform(tx, tmp[2*out:], x)
	if p.t != nil {
		y = tmp[out : 2*out]
		permute(y, tx, p.perm)
		clear(xp)
		return xp, y, p.abs
	}
	big := 0.0 // the largest tmax_j + |y_j|
	for j, k := range p.perm {
		v := tx[k]
		xp[j] = float32(v)
		big = max(big, p.tmax[j]+math.Abs(v))
	}
	return xp, nil, p.abs + p.roundMargin(big)
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
// few terms. It also returns the sum of the mean terms, a pair of rows'
// mean sum.
func termOrder(dec *geometry.Decomposition, n int, ta func(i, j int) float64) ([]int, float64) {
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
	var sum float64
	for _, v := range mean {
		sum += v
	}
	return perm, sum / float64(max(1, pairs))
}

// ownScan is a scan from p's pool (or a new one) that takes its own T·x:
// a task a query, and a new scan's buffers a task (a block's differences,
// 64 KB at d = 128) had cost a quarter of the scans' time.
func (p *Pool) ownScan() *scan {
	s, _ := p.scans.Get().(*scan)
	if s == nil {
		s = &scan{p: p}
	}
	if p.ok && len(s.ownX) != p.dec.Out {
		s.tmp, s.ownX = make([]float64, 2*p.dec.Out+p.d), make([]float32, p.dec.Out)
	}
	s.given, s.shared = false, nil
	return s
}

func (s *scan) start(x []float32, k int) {
	s.best, s.cands, s.special, s.k = s.best[:0], s.cands[:0], s.special[:0], k
	if !s.given {
		s.x32, s.y, s.abs = s.p.prepare(s.tmp, s.ownX, x)
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
		var sum float64
		var in bool
		if p.t != nil {
			sum, in = p.sum(nil, s.x32, p.t[i*out:(i+1)*out], s.y, limit)
		} else {
			sum, in = p.sum(p.rowsP[i*out:(i+1)*out], s.x32, nil, nil, limit)
		}
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
		limit = min(limit, s.best[0]*(1+p.rho)+s.abs)
		if s.shared != nil {
			for old := s.shared.Load(); limit < math.Float64frombits(old) && !s.shared.CompareAndSwap(old, math.Float64bits(limit)); old = s.shared.Load() {
			}
		}
	}
	return limit
}

// screenBlock is the rows the vector screen sums at a time.
const screenBlock = 128

// blocks is rows on the vector kernels, which take x and the scans' rows
// as they are: through the identity x − a_i in float32, as Scores takes
// it, through a linear map the float32 difference of T·x and T·a_i
// rounded (Pool.rowsP) — or, where the pool keeps T·a_i in float64, the
// float64 differences rounded to float32, against zeros.
func (s *scan) blocks(lo, hi int) {
	p := s.p
	out := p.dec.Out
	s.sums = slices.Grow(s.sums[:0], screenBlock)[:screenBlock]
	anchor := s.x32
	if p.half != nil || p.t != nil {
		s.blk = slices.Grow(s.blk[:0], screenBlock*out)[:screenBlock*out]
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
		if p.t != nil {
			items = s.blk[:(b1-b0)*out]
			kernel.SubRows64(items, p.t[b0*out:b1*out], s.y)
		} else {
			items = p.rowsP[b0*out : b1*out]
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

// sum returns Σ_j term_j(row_j − x_j), stopping (in = false) once it
// passes limit, the difference taken in float32 (through the identity as
// Scores takes it) — or, given a (T·a_i in float64), that of a and y in
// float64. The powers other than 2 are screened with float32 polynomials
// (kernel.Log2Poly and kernel.Exp2Poly, about 1e-6 per term and unit of
// the exponent), within the pool's margin.
func (p *Pool) sum(row32, x32 []float32, a, y []float64, limit float64) (float64, bool) {
	const every = 4
	var s float64
	n := len(x32)
	power := p.dec.Power
	for j0 := 0; j0 < n; j0 += every {
		j1 := min(n, j0+every)
		for j := j0; j < j1; j++ {
			var v float64
			if a != nil {
				v = a[j] - y[j]
			} else {
				v = float64(row32[j] - x32[j])
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
		cut := selectKth(sums, k)*(1+p.rho) + s.abs
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
