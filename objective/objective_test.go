package objective

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/gradcheck"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

func randRows(rng *rand.Rand, n, d int, scale float64) []float32 {
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(scale * rng.NormFloat64())
	}
	return x
}

func learnables(rng *rand.Rand, d int) []geometry.Learnable {
	m := make([]float64, d*d)
	for i := range m {
		m[i] = 0.3 * rng.NormFloat64()
	}
	for i := range d {
		m[i*d+i] += 1
	}
	nm, _ := geometry.NewNorm(d, m, 1.7)
	sc, ex := make([]float64, d), make([]float64, d)
	for j := range d {
		sc[j] = math.Exp(0.5 * rng.NormFloat64())
		ex[j] = 0.8 + 2*rng.Float64()
	}
	gb, _ := geometry.NewGenBall(sc, ex)
	return []geometry.Learnable{nm, gb}
}

// frozenLoss is the loss with t held fixed: what the Detached gradient is the
// gradient of.
func frozenLoss(g geometry.Learnable, cfg Config, b Batch, t float64) float64 {
	a, bv := cfg.Weights()
	loss := bv * g.LogVolume(t)
	if a != 0 {
		s := g.Scores(nil, b.Neg)
		var m float64
		for _, v := range s {
			m += kernel.Sigmoid(cfg.T * (v - t))
		}
		loss -= a * m / float64(len(s))
	}
	return loss
}

// TestGradients checks every objective in every threshold mode, for both
// learnable families, against central finite differences (positive scores
// of a random batch have no ties, so the ordering is locally constant).
func TestGradients(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, d := range []int{2, 5} {
		b := Batch{Pos: randRows(rng, 60, d, 1), Neg: randRows(rng, 50, d, 2)}
		for _, g := range learnables(rng, d) {
			theta := g.Params(nil)
			for _, obj := range []Objective{Neg, Vol, NegVol} {
				for _, mode := range []ThresholdMode{Soft, OrderStatistic, Detached} {
					// λ = 0.3 so both NegVol terms matter at this scale.
					cfg := Config{Objective: obj, Alpha: 0.1, Threshold: mode, Lambda: 0.3, Workers: 3}
					e, err := New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					grad := make([]float64, len(theta))
					v, err := e.Eval(g, b, Grads{Params: grad})
					if err != nil {
						t.Fatal(err)
					}
					name := g.Kind().String() + " " + obj.String() + " " + mode.String()
					var f func([]float64) float64
					if mode == Detached {
						f = func(th []float64) float64 {
							g.SetParams(th)
							defer g.SetParams(theta)
							return frozenLoss(g, e.Config(), b, v.T)
						}
					} else {
						f = func(th []float64) float64 {
							g.SetParams(th)
							defer g.SetParams(theta)
							val, err := e.Eval(g, b, Grads{})
							if err != nil {
								t.Fatal(err)
							}
							return val.Loss
						}
					}
					gradcheck.Check(t, name, f, grad, theta, gradcheck.Tol, 1e-3)
				}
			}
		}
	}
}

// TestThresholdValue: order-statistic and detached t is the conformal rank's
// score; soft t is the weighted window average.
func TestThresholdValue(t *testing.T) {
	t.Parallel()
	// Scores 1..20 in a scrambled order: rank ⌈0.9·21⌉ = 19.
	pos := make([]float32, 20)
	for i, v := range rand.New(rand.NewPCG(2, 2)).Perm(20) {
		pos[i] = float32(v + 1)
	}
	gb := geometry.UnitGenBall(1, 1) // φ(x) = |x|
	for _, c := range []struct {
		mode ThresholdMode
		want float64
	}{
		{OrderStatistic, 19}, {Detached, 19},
		// Window 14..20 around 19: weights e^{−|i−19|}.
		{Soft, func() float64 {
			var z, s float64
			for i := 14; i <= 20; i++ {
				w := math.Exp(-math.Abs(float64(i - 19)))
				z += w
				s += w * float64(i)
			}
			return s / z
		}()},
	} {
		e, _ := New(Config{Objective: Vol, Alpha: 0.1, Threshold: c.mode})
		v, err := e.Eval(gb, Batch{Pos: pos}, Grads{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(v.T-c.want) > 1e-12 {
			t.Errorf("%v: t = %v, want %v", c.mode, v.T, c.want)
		}
	}
}

// TestWindow: the threshold's window (ranks lo..hi under score, then row)
// is the one a full sort gives, with ties across and inside the window, a
// window of one rank and windows at both ends.
func TestWindow(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	var e Evaluator
	for trial := range 2000 {
		n := 1 + rng.IntN(300)
		levels := 1 + rng.IntN(2*n) // few levels: many ties
		e.pos = make([]float64, n)
		for i := range e.pos {
			e.pos[i] = float64(rng.IntN(levels))
		}
		lo := 1 + rng.IntN(n)
		hi := lo + rng.IntN(min(n-lo+1, 12))
		ref := make([]int32, n)
		for i := range ref {
			ref[i] = int32(i)
		}
		slices.SortFunc(ref, func(x, y int32) int { return cmpKey(e.pos, x, y) })
		got := e.window(n, lo, hi)
		if !slices.Equal(got, ref[lo-1:hi]) {
			t.Fatalf("trial %d (n=%d, ranks %d..%d): window %v, want %v", trial, n, lo, hi, got, ref[lo-1:hi])
		}
	}
}

// TestWindowBracketed: on batches large enough for the sampled bracket the
// window is still a full sort's — with few and with many ties, at the batch
// threshold's ranks and at both ends — and the bracket is what finds it;
// scores arranged so that the strided sample misses the window fall back to
// the exact selection, with the same answer.
func TestWindowBracketed(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(10, 10))
	var e Evaluator
	check := func(name string, lo, hi int, wantBracket bool) {
		t.Helper()
		n := len(e.pos)
		ref := make([]int32, n)
		for i := range ref {
			ref[i] = int32(i)
		}
		slices.SortFunc(ref, func(x, y int32) int { return cmpKey(e.pos, x, y) })
		_, ok := e.bracketed(e.pos, lo, hi)
		if ok != wantBracket {
			t.Errorf("%s (n=%d, ranks %d..%d): bracket found the window: %v, want %v", name, n, lo, hi, ok, wantBracket)
		}
		if got := e.window(n, lo, hi); !slices.Equal(got, ref[lo-1:hi]) {
			t.Fatalf("%s (n=%d, ranks %d..%d): window %v, want %v", name, n, lo, hi, got, ref[lo-1:hi])
		}
	}
	for trial := range 30 {
		n := 8*bracketSample + rng.IntN(40000)
		levels := []int{3, 50, n, 1 << 30}[trial%4]
		e.pos = make([]float64, n)
		for i := range e.pos {
			e.pos[i] = float64(rng.IntN(levels))
		}
		r := (95*(n+1) + 99) / 100
		check("threshold's ranks", r-3, min(n, r+3), true)
		check("the smallest", 1, 2, true)
		check("the largest", n-1, n, true)
	}
	// Every sampled row (i·n/1024) is small, every other one large: the
	// sample says the window is among the small ones; it is not.
	n := 16 * bracketSample
	e.pos = make([]float64, n)
	for i := range e.pos {
		e.pos[i] = float64(1000 + rng.IntN(1000))
	}
	for j := range bracketSample {
		e.pos[j*n/bracketSample] = float64(rng.IntN(10))
	}
	check("a sample that misleads", n/2, n/2+5, false)
}

// TestDeterministicAcrossWorkers: the same loss and gradient, to the bit,
// for 1 to 7 goroutines, over batches of many parallel chunks (and a
// volume term computed beside them); at d = 128 the single-norm's
// partial gradients are summed in 4 to 16 ranges of entries.
func TestDeterministicAcrossWorkers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	for _, d := range []int{3, 40, 128} {
		b := Batch{Pos: randRows(rng, 9000, d, 1), Neg: randRows(rng, 13000, d, 2)}
		for _, g := range learnables(rng, d) {
			var ref []float64
			var refLoss float64
			for _, w := range []int{1, 2, 4, 7} {
				e, _ := New(Config{Objective: NegVol, Workers: w})
				grad := make([]float64, g.NumParams())
				v, err := e.Eval(g, b, Grads{Params: grad})
				if err != nil {
					t.Fatal(err)
				}
				if ref == nil {
					ref, refLoss = grad, v.Loss
					continue
				}
				if v.Loss != refLoss {
					t.Errorf("d=%d %v: loss %v with %d workers, %v with 1", d, g.Kind(), v.Loss, w, refLoss)
				}
				if !slices.Equal(grad, ref) {
					t.Errorf("d=%d %v: the gradient differs between 1 and %d workers", d, g.Kind(), w)
				}
			}
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{Objective: 0}, {Objective: Neg, Alpha: 1.5}, {Objective: Neg, T: -1}, {Objective: NegVol, Lambda: 2}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	e, _ := New(Config{Objective: Neg})
	g := geometry.UnitGenBall(2, 2)
	if _, err := e.Eval(g, Batch{Pos: []float32{1, 2}}, Grads{}); err == nil {
		t.Error("Neg without negatives: no error")
	}
	if _, err := e.Eval(g, Batch{Pos: []float32{1, 2, 3}, Neg: []float32{1, 2}}, Grads{}); err == nil {
		t.Error("a partial row: no error")
	}
	// All positive scores 0: t = 0, log-volume −Inf.
	ev, _ := New(Config{Objective: Vol})
	if _, err := ev.Eval(g, Batch{Pos: make([]float32, 8)}, Grads{Params: make([]float64, 4)}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("t = 0: error %v, want ErrNonFinite", err)
	}
}

// TestFirstNonFinite: the first NaN or ±Inf wherever it lies (in the
// four-lane part, in the tail, first among several), none in finite values
// up to float64's largest, which the check multiplies by 0.
func TestFirstNonFinite(t *testing.T) {
	t.Parallel()
	inf, nan := math.Inf(1), math.NaN()
	for _, n := range []int{0, 1, 3, 4, 7, 16385} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i%5-2) * (math.MaxFloat64 / 2)
		}
		if got := firstNonFinite(x); got != -1 {
			t.Fatalf("n=%d finite: %d, want -1", n, got)
		}
		for _, at := range []int{0, n / 2, n - 1} {
			for _, v := range []float64{nan, inf, -inf} {
				if n == 0 {
					continue
				}
				y := slices.Clone(x)
				y[at] = v
				if at+1 < n {
					y[n-1] = nan // a later one
				}
				if got := firstNonFinite(y); got != at {
					t.Errorf("n=%d %v at %d: %d", n, v, at, got)
				}
			}
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"neg", "vol", "neg,vol"} {
		o, err := ParseObjective(s)
		if err != nil || o.String() != s {
			t.Errorf("%q: %v %v", s, o, err)
		}
	}
	for _, s := range []string{"soft", "order-statistic", "detached"} {
		m, err := ParseThresholdMode(s)
		if err != nil || m.String() != s {
			t.Errorf("%q: %v %v", s, m, err)
		}
	}
	if _, err := ParseObjective("infonce"); err == nil {
		t.Error("unknown objective: no error")
	}
}

// TestPreparedBatch: a batch of prepared rows (the generalized ball's
// log|x|) gives the loss and gradient of the raw batch within the float32
// exp's accuracy.
func TestPreparedBatch(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	const d = 4
	b := Batch{Pos: randRows(rng, 3000, d, 1), Neg: randRows(rng, 2500, d, 2)}
	g := learnables(rng, d)[1].(geometry.Prepared)
	pb := Batch{Pos: g.Prepare(nil, b.Pos), Neg: g.Prepare(nil, b.Neg), Prepared: true}
	for _, obj := range []Objective{Neg, Vol, NegVol} {
		e, _ := New(Config{Objective: obj})
		ge, gp := make([]float64, g.NumParams()), make([]float64, g.NumParams())
		ve, err1 := e.Eval(g, b, Grads{Params: ge})
		vp, err2 := e.Eval(g, pb, Grads{Params: gp})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if math.Abs(vp.Loss-ve.Loss) > 1e-5*math.Max(1, math.Abs(ve.Loss)) {
			t.Errorf("%v: prepared loss %v, raw %v", obj, vp.Loss, ve.Loss)
		}
		for i := range ge {
			if math.Abs(gp[i]-ge[i]) > 1e-4*math.Max(1e-2, math.Abs(ge[i])) {
				t.Errorf("%v: prepared gradient[%d] %v, raw %v", obj, i, gp[i], ge[i])
			}
		}
	}
	// A learnable geometry without a prepared kernel (the wrapper hides
	// the single-norm's).
	nm := struct{ geometry.Learnable }{learnables(rng, d)[0]}
	e, _ := New(Config{Objective: Neg})
	if _, err := e.Eval(nm, pb, Grads{}); err == nil {
		t.Error("a prepared batch for a geometry without a prepared kernel: no error")
	}
}

// TestAnchorsInPlace: a batch read in place (Batch.Anchors) gives the loss
// and gradients of the same rows gathered, to the bit, with 1 and 4
// goroutines, for raw and prepared rows, rows per anchor that do and do
// not divide the parallel chunks, and an anchor twice.
func TestAnchorsInPlace(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	for _, c := range []struct{ d, per, negPer int }{{3, 50, 70}, {3, 512, 512}, {20, 7, 13}} {
		const n = 120 // anchors in the split
		pos, neg := randRows(rng, n*c.per, c.d, 1), randRows(rng, n*c.negPer, c.d, 2)
		ids := rng.Perm(n)[:80]
		ids = append(ids, ids[3])
		gather := func(src []float32, per int) []float32 {
			var out []float32
			for _, a := range ids {
				out = append(out, src[a*per*c.d:(a+1)*per*c.d]...)
			}
			return out
		}
		for _, g := range learnables(rng, c.d) {
			for _, prep := range []bool{false, true} {
				p, q := pos, neg
				if gp, ok := g.(geometry.Prepared); ok && prep {
					p, q = gp.Prepare(nil, pos), gp.Prepare(nil, neg)
				} else if prep {
					continue
				}
				want := Batch{Pos: gather(p, c.per), Neg: gather(q, c.negPer), Prepared: prep}
				got := Batch{Pos: p, Neg: q, Prepared: prep, Anchors: ids, PosPer: c.per, NegPer: c.negPer}
				for _, w := range []int{1, 4} {
					e, _ := New(Config{Objective: NegVol, Workers: w})
					g1, g2 := make([]float64, g.NumParams()), make([]float64, g.NumParams())
					np, nn := len(ids)*c.per, len(ids)*c.negPer
					r1 := Grads{Params: g1, Pos: make([]float64, np), Neg: make([]float64, nn)}
					r2 := Grads{Params: g2, Pos: make([]float64, np), Neg: make([]float64, nn)}
					v1, err1 := e.Eval(g, want, r1)
					v2, err2 := e.Eval(g, got, r2)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					name := func() string {
						return fmt.Sprintf("d=%d per=%d %v prepared=%v workers=%d", c.d, c.per, g.Kind(), prep, w)
					}
					if v1 != v2 {
						t.Errorf("%s: value %+v in place, %+v gathered", name(), v2, v1)
					}
					if !slices.Equal(g1, g2) || !slices.Equal(r1.Pos, r2.Pos) || !slices.Equal(r1.Neg, r2.Neg) {
						t.Errorf("%s: gradients differ in place and gathered", name())
					}
				}
			}
		}
	}
	// Rows that are not there.
	e, _ := New(Config{Objective: NegVol})
	g := geometry.UnitGenBall(2, 2)
	b := Batch{Pos: make([]float32, 20), Neg: make([]float32, 20), Anchors: []int{0, 5}, PosPer: 2, NegPer: 2}
	if _, err := e.Eval(g, b, Grads{}); err == nil {
		t.Error("an anchor beyond the rows: no error")
	}
}

// TestWindowFromChunks: an evaluator that guesses each batch's window from
// the last (and finds it in the scoring chunks' counts) gives a sequence of
// batches — drifting, with a jump the guess misses, ties, and a NaN — the
// value and gradient of a fresh evaluator, to the bit.
func TestWindowFromChunks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(12, 12))
	const d = 3
	g := learnables(rng, d)[1]
	kept, _ := New(Config{Objective: NegVol, Workers: 3})
	for step := range 12 {
		scale := 1 + 0.002*float64(step)
		if step == 7 {
			scale = 5 // the guess misses
		}
		b := Batch{Pos: randRows(rng, 9000+37*step, d, scale), Neg: randRows(rng, 5000, d, 2)}
		if step == 4 { // ties
			for i := 0; i < len(b.Pos); i += 2 * d {
				copy(b.Pos[i+d:i+2*d], b.Pos[i:i+d])
			}
		}
		if step == 10 {
			b.Pos[5*d] = float32(math.NaN())
		}
		fresh, _ := New(Config{Objective: NegVol, Workers: 3})
		g1, g2 := make([]float64, g.NumParams()), make([]float64, g.NumParams())
		v1, err1 := kept.Eval(g, b, Grads{Params: g1})
		v2, err2 := fresh.Eval(g, b, Grads{Params: g2})
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("step %d: errors %v and %v", step, err1, err2)
		}
		same := v1 == v2 || (math.IsNaN(v1.Loss) && math.IsNaN(v2.Loss))
		if !same || (err1 == nil && !slices.Equal(g1, g2)) {
			t.Fatalf("step %d: value %+v with the guess, %+v fresh (or the gradients differ)", step, v1, v2)
		}
	}
	// Steps 1–6, 8–9 and 11 should find their window from the guess (the
	// first has none, 7 jumps, 10 has a NaN): the fast path is exercised.
	if kept.hits < 8 {
		t.Errorf("the guess bracketed %d of 12 windows, want at least 8", kept.hits)
	}
}

// TestChunking: the chunks cover a call's rows in order, each a non-empty
// run of whole 16-row blocks (but the last), their number a multiple of 16
// where there are more than eight of chunkRows, and their lengths within
// a block of each other there; a geometry of many parameters gets chunks
// long enough for its partial gradients.
func TestChunking(t *testing.T) {
	t.Parallel()
	for _, d := range []int{3, 40, 128, 1000} {
		for _, params := range []int{2 * d, d*d + 1} {
			if r := chunkRows(d, params); r%16 != 0 || r < 256 || r > 4096 || (r < 4096 && r*d < 4*params) {
				t.Errorf("d=%d params=%d: chunks of %d rows", d, params, r)
			}
			for _, n := range []int{1, 15, 16, 17, 255, 256, 257, 2000, 9 * 256, 12800, 12801, 50000, 1 << 20} {
				checkChunking(t, n, d, params)
			}
		}
	}
	if p := chunksOf(12800, 128, 256); p.nc != 48 {
		t.Errorf("a step of the paper's batch at d = 128, a generalized ball: %d chunks, want 48", p.nc)
	}
	if p := chunksOf(12800, 128, 128*128+1); p.nc != 32 {
		t.Errorf("a step of the paper's batch at d = 128, a single-norm: %d chunks, want 32", p.nc)
	}
}

func checkChunking(t *testing.T, n, d, params int) {
	t.Helper()
	p := chunksOf(n, d, params)
	next, short, long := 0, n, 0
	for c := range p.nc {
		lo, hi := p.bounds(c)
		if lo != next || hi <= lo || lo%16 != 0 || (hi%16 != 0 && hi != n) {
			t.Fatalf("n=%d d=%d params=%d: chunk %d of %d is [%d, %d) after %d", n, d, params, c, p.nc, lo, hi, next)
		}
		if hi < n || n%16 == 0 {
			short, long = min(short, hi-lo), max(long, hi-lo)
		}
		next = hi
	}
	if next != n {
		t.Fatalf("n=%d d=%d params=%d: the chunks end at %d", n, d, params, next)
	}
	if parallel.Chunks(n, chunkRows(d, params)) > 8 && (p.nc%16 != 0 || long-short > 16) {
		t.Errorf("n=%d d=%d params=%d: %d chunks of %d to %d rows", n, d, params, p.nc, short, long)
	}
}
