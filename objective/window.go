package objective

import (
	"math"
	"slices"

	"github.com/ccsets/ccs/conformal"
)

// The batch threshold t and the positive rows it is made of: the r-th
// smallest of the batch's N positive scores, r = ⌈(1−α)(N+1)⌉, and in Soft
// mode its ±Window neighbours in sorted order.

// threshold returns t from e.pos and the positive rows it is made of, with
// their weights (one row of weight 1 except in Soft mode).
func (e *Evaluator) threshold(n int) (float64, []int32, []float64) {
	if n != e.rankN {
		// Exact rational arithmetic: a few microseconds, once per batch
		// size rather than per batch (the serial part of a step).
		r, err := conformal.Rank(n, e.cfg.Alpha)
		if err != nil || r > n {
			r = n // a batch smaller than the rank needs: its largest score
		}
		e.rankN, e.rank = n, r
	}
	r := e.rank
	lo, hi := r, r
	if e.cfg.Threshold == Soft {
		lo, hi = max(1, r-e.cfg.Window), min(n, r+e.cfg.Window)
	}
	win, ok := e.fromChunks(lo, hi)
	if ok {
		e.hits++
	} else {
		win = e.window(n, lo, hi)
	}
	e.guess.set(e.pos, win, ok)
	rows := slices.Clone(win)
	wts := make([]float64, len(rows))
	var z, t float64
	for k := range rows {
		wts[k] = math.Exp(-math.Abs(float64(lo + k - r)))
		z += wts[k]
	}
	for k, i := range rows {
		wts[k] /= z
		t += wts[k] * e.pos[i]
	}
	return t, rows, wts
}

// cmpKey orders rows by score, then by index: a total order, so the
// selection is deterministic under ties.
func cmpKey(s []float64, x, y int32) int {
	switch {
	case s[x] < s[y]:
		return -1
	case s[x] > s[y]:
		return 1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// window returns the rows of ranks lo..hi (1-based) of e.pos[:n] under
// cmpKey, in order: in one pass over the scores when a sample brackets the
// window (bracketed), else by selection among all rows (among).
func (e *Evaluator) window(n, lo, hi int) []int32 {
	pos := e.pos[:n]
	if w, ok := e.bracketed(pos, lo, hi); ok {
		return w
	}
	return e.among(pos, nil, lo, hi)
}

// among returns the rows of ranks lo..hi (1-based) under cmpKey among rows
// (ascending row indices; every row of pos when nil), in order. It selects
// the two scores by value (conformal.Select on a copy: contiguous,
// three-way) and then gathers the rows between them in one pass; only those
// few are sorted. With a NaN score, which has no place in the order, it
// sorts every row by cmpKey.
func (e *Evaluator) among(pos []float64, rows []int32, lo, hi int) []int32 {
	n := len(rows)
	if rows == nil {
		n = len(pos)
	}
	row := func(k int) int32 {
		if rows == nil {
			return int32(k)
		}
		return rows[k]
	}
	vals := grow(e.sel, n)
	e.sel = vals
	for k := range n {
		vals[k] = pos[row(k)]
	}
	vlo := conformal.Select(vals, lo)
	vhi := conformal.Select(vals[lo-1:], hi-lo+1)
	below := 0 // rows of score < vlo: they rank before the window
	e.idx = e.idx[:0]
	nan := math.IsNaN(vlo) || math.IsNaN(vhi)
	for k := range n {
		i := row(k)
		switch v := pos[i]; {
		case v < vlo:
			below++
		case v <= vhi:
			e.idx = append(e.idx, i)
		case v != v:
			nan = true
		}
	}
	if nan {
		e.idx = e.idx[:0]
		for k := range n {
			e.idx = append(e.idx, row(k))
		}
		below = 0
	}
	slices.SortFunc(e.idx, func(x, y int32) int { return cmpKey(pos, x, y) })
	return e.idx[lo-1-below : hi-below]
}

// bracketSample is the sample bracketed uses; below 8 samples' worth of
// rows it does not pay.
const bracketSample = 1024

// bracketed is window in one pass over the scores (Floyd–Rivest's idea): two
// order statistics of a fixed, evenly strided sample bracket the window's
// scores with high probability; one pass counts the rows below the bracket
// and gathers those inside it (a few percent of them), and the window is
// selected among those. It reports false — window then selects among all
// rows — when the bracket misses the window, for few rows, or with a NaN.
func (e *Evaluator) bracketed(pos []float64, lo, hi int) ([]int32, bool) {
	n, s := len(pos), bracketSample
	if n < 8*s {
		return nil, false
	}
	sample := grow(e.sel, s)
	e.sel = sample
	for j := range s {
		sample[j] = pos[j*n/s]
	}
	// The window's ranks in the sample, widened by three standard
	// deviations of a sample quantile and a little more.
	q := float64(lo) / float64(n)
	delta := int(3*math.Sqrt(float64(s)*q*(1-q))) + 8
	rl, rh := lo*s/n-delta, (hi*s+n-1)/n+delta
	a, b := math.Inf(-1), math.Inf(1)
	if rl >= 1 {
		a = conformal.Select(sample, rl)
	}
	if rh <= s {
		b = conformal.Select(sample, rh)
	}
	if math.IsNaN(a) || math.IsNaN(b) {
		return nil, false
	}
	below := 0 // rows of score < a: they rank before every row in the bracket
	cand := e.cand[:0]
	for i, v := range pos {
		switch {
		case v < a:
			below++
		case v <= b:
			cand = append(cand, int32(i))
		case v != v:
			e.cand = cand
			return nil, false
		}
	}
	e.cand = cand
	if below >= lo || below+len(cand) < hi {
		return nil, false
	}
	// Ranks lo..hi overall are ranks lo−below..hi−below among cand.
	return e.among(pos, cand, lo-below, hi-below), true
}

// The window on all cores. The scores are computed a parallel chunk at a
// time; each chunk also counts its rows below a bracket [a, b] and gathers
// those inside (brackets), guessed from the previous batch's window (which
// moves little between steps). When the bracket holds the window the
// selection is among the few gathered rows (fromChunks), with no pass of
// its own over the batch: the step's serial part is then a sort of a few
// hundred rows. When it does not, window runs as before. Either way the
// rows are those of ranks lo..hi under cmpKey: the bracket changes how
// they are found, never which.

// bracket is the guess of the next batch's window scores.
type bracket struct {
	a, b  float64 // rows with a ≤ score ≤ b are gathered
	ok    bool    // a guess is there
	widen float64 // slack in units of the window's spread, doubled on a miss
}

// set makes the guess from the window just found (rows win of pos): twice
// as wide when this batch's guess missed, a little narrower when it held.
func (g *bracket) set(pos []float64, win []int32, hit bool) {
	if len(win) == 0 {
		g.ok = false
		return
	}
	vlo, vhi := pos[win[0]], pos[win[len(win)-1]]
	if math.IsNaN(vlo) || math.IsNaN(vhi) || math.IsInf(vlo, 0) || math.IsInf(vhi, 0) {
		g.ok = false
		return
	}
	switch {
	case g.widen == 0:
		g.widen = 4
	case !hit:
		g.widen = min(2*g.widen, 1<<20)
	default:
		g.widen = max(0.9*g.widen, 4)
	}
	spread := max(vhi-vlo, 1e-6*max(math.Abs(vlo), math.Abs(vhi)))
	g.a, g.b, g.ok = vlo-g.widen*spread, vhi+g.widen*spread, true
}

// brackets is one chunk's count of rows below the bracket, its rows inside
// it (ascending), and whether it saw a NaN.
type brackets struct {
	below int
	rows  []int32
	nan   bool
}

// bracketChunk counts and gathers rows lo..hi−1 of e.pos against the
// guess into e.chunkRows[c] (a chunk's part of the scoring).
func (e *Evaluator) bracketChunk(c, lo, hi int) {
	br := &e.chunkRows[c]
	br.below, br.rows, br.nan = 0, br.rows[:0], false
	if !e.guess.ok {
		return
	}
	a, b := e.guess.a, e.guess.b
	below, rows, nan := 0, br.rows, false // in registers, not through br
	for i, v := range e.pos[lo:hi] {
		switch {
		case v < a:
			below++
		case v <= b:
			rows = append(rows, int32(lo+i))
		case v != v:
			nan = true
		}
	}
	br.below, br.rows, br.nan = below, rows, nan
}

// fromChunks is the window from the chunks' counts, when the guess
// brackets ranks lo..hi.
func (e *Evaluator) fromChunks(lo, hi int) ([]int32, bool) {
	if !e.guess.ok {
		return nil, false
	}
	below := 0
	cand := e.cand[:0]
	for c := range e.nChunks {
		br := &e.chunkRows[c]
		if br.nan {
			return nil, false
		}
		below += br.below
		cand = append(cand, br.rows...)
	}
	e.cand = cand
	if below >= lo || below+len(cand) < hi {
		return nil, false
	}
	return e.among(e.pos, cand, lo-below, hi-below), true
}
