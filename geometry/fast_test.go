package geometry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/race"
)

// wideGenBall draws a generalized ball with exponents in [0.1, 10] and
// scales log-uniform in [1e-3, 1e3].
func wideGenBall(t *testing.T, rng *rand.Rand, d int) *GenBall {
	t.Helper()
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j] = math.Exp((2*rng.Float64() - 1) * math.Log(1e3))
		p[j] = 0.1 + 9.9*rng.Float64()
	}
	g, err := NewGenBall(m, p)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// heavyDiffs draws rows with log-uniform magnitudes over [1e-6, 1e2], random
// signs and one zero in ten.
func heavyDiffs(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		if rng.IntN(10) == 0 {
			continue
		}
		v := float32(math.Exp(math.Log(1e-6) + rng.Float64()*math.Log(1e8)))
		if rng.IntN(2) == 0 {
			v = -v
		}
		x[i] = v
	}
	return x
}

// TestScoresFastWithinTolerance: the fast generalized-ball scores stay within
// FastTolerance of the exact ones on 200 random balls × 64 rows per
// dimension, including dimensions around the vector width.
func TestScoresFastWithinTolerance(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 31))
	worst := 0.0
	for _, d := range []int{1, 3, 15, 16, 17, 33, 128, 1408} {
		trials := 200
		if d == 1408 {
			trials = 20
		}
		for range trials {
			g := wideGenBall(t, rng, d)
			x := heavyDiffs(rng, 64*d)
			exact := g.Scores(nil, x)
			fast := g.ScoresFast(nil, x)
			rel, abs := g.FastTolerance()
			for i := range exact {
				if math.IsInf(exact[i], 1) {
					continue // beyond float64: the fast score is +Inf too
				}
				diff := math.Abs(fast[i] - exact[i])
				if diff > rel*exact[i]+abs && !(math.IsInf(fast[i], 1) && exact[i] >= 0.99*math.Exp(kernel.ExpMax)) {
					t.Fatalf("d=%d row %d: fast %v, exact %v: error %.3g > bound %.3g", d, i, fast[i], exact[i], diff, rel*exact[i]+abs)
				}
				if exact[i] > 1e-30 && !math.IsInf(fast[i], 0) {
					worst = math.Max(worst, diff/exact[i]/rel)
				}
			}
		}
	}
	t.Logf("%s: worst relative error %.3g of the bound", kernel.Describe(), worst)
}

// TestScoresFastSpecialRows: an all-zero row scores 0; a row with a NaN, an
// overflowing term or an m·|x| below float32's normal range scores +Inf (for
// Members to rescore exactly) — in the vector build also when the special
// coordinate sits in the zero-padded tail. Members then decides them as the
// exact scores do (NaN: outside).
func TestScoresFastSpecialRows(t *testing.T) {
	t.Parallel()
	for _, d := range []int{3, 16, 21} {
		g := UnitGenBall(d, 0.5)
		x := make([]float32, 4*d)
		x[d+d-1] = float32(math.NaN())
		x[2*d+d-1] = float32(math.Inf(1))
		x[3*d+d-1] = 1e-40 // subnormal: its power 1e-20 still counts
		got := g.ScoresFast(nil, x)
		if got[0] != 0 || !math.IsInf(got[1], 1) || !math.IsInf(got[2], 1) || !math.IsInf(got[3], 1) {
			t.Errorf("d=%d: zero, NaN, +Inf, subnormal rows score %v, want [0 +Inf +Inf +Inf]", d, got)
		}
		exact := g.Scores(nil, x)
		for _, q := range []float64{1e-21, 1e-19} {
			in := members(g, q, nil, nil, x, true)
			for i := range in {
				if in[i] != (exact[i] <= q) {
					t.Errorf("d=%d q=%v row %d: member %v, exact score %v", d, q, i, in[i], exact[i])
				}
			}
		}
	}
}

// TestMembersExact: Members' fast path decides as the exact scores do, also for rows
// placed within 1e-7 (relative) of the threshold on either side, where the
// fast score alone cannot decide; and it reports the exact score there.
func TestMembersExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(32, 32))
	for _, d := range []int{3, 17, 128} {
		for range trials(20) {
			g := wideGenBall(t, rng, d)
			const n = 400
			x := heavyDiffs(rng, n*d)
			exact := g.Scores(nil, x)
			q := exact[0]
			// Rescale rows 1..99 so that their exact score is q·(1 ± 1e-7):
			// the score is Σ_j (m_j|t·x_j|)^{p_j}, monotone in t; bisect t.
			for i := 1; i < 100; i++ {
				target := q * (1 + 1e-7*float64(2*(i%2)-1))
				row := x[i*d : (i+1)*d]
				base := append([]float32(nil), row...)
				lo, hi := 0.0, 1.0
				for g.Scores(nil, scaled(row, base, hi))[0] < target {
					hi *= 2
				}
				for range 100 {
					mid := (lo + hi) / 2
					if g.Scores(nil, scaled(row, base, mid))[0] < target {
						lo = mid
					} else {
						hi = mid
					}
				}
				scaled(row, base, lo)
			}
			checkMembers(t, g, q, x, true)
		}
	}
}

func scaled(row, base []float32, t float64) []float32 {
	for j, v := range base {
		row[j] = float32(float64(v) * t)
	}
	return row
}

// TestMembersNonFast: a geometry without a fast score is decided by Scores.
func TestMembersNonFast(t *testing.T) {
	t.Parallel()
	x := []float32{3, 4, 0, 1}
	if got := Members(Ball{D: 2}, 1, nil, nil, x); got[0] || !got[1] {
		t.Errorf("Members(ℓ2, 1) = %v, want [false true]", got)
	}
}

// checkMembers fails t unless Members' fast path on the rows of x decides
// as their exact scores do and at least 50 rows lie within 1e-6 of q (so
// that the band is exercised); with exactNear, the scores it reports
// there must be the exact ones.
func checkMembers(t *testing.T, g Geometry, q float64, x []float32, exactNear bool) {
	t.Helper()
	d := g.Dim()
	exact := g.Scores(nil, x)
	scores := make([]float64, len(exact))
	in := members(g, q, nil, scores, x, true)
	near := 0
	for i := range exact {
		if in[i] != (exact[i] <= q) {
			t.Fatalf("d=%d row %d: member %v, exact score %v vs q %v", d, i, in[i], exact[i], q)
		}
		if math.Abs(exact[i]-q) <= 1e-6*q {
			near++
			if exactNear && scores[i] != exact[i] {
				t.Fatalf("d=%d row %d near q: score %v, want the exact %v", d, i, scores[i], exact[i])
			}
		}
	}
	if near < 50 {
		t.Fatalf("d=%d: only %d rows near the threshold; the test does not exercise the band", d, near)
	}
}

// wideNorm draws a single-norm with exponent p and entries of M log-uniform
// in [1e-2, 1e2] with random signs.
func wideNorm(t *testing.T, rng *rand.Rand, d int, p float64) *Norm {
	t.Helper()
	m := make([]float64, d*d)
	for i := range m {
		m[i] = math.Exp((2*rng.Float64() - 1) * math.Log(1e2))
		if rng.IntN(2) == 0 {
			m[i] = -m[i]
		}
	}
	n, err := NewNorm(d, m, p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNormScoresFastWithinTolerance: the single-norm's fast scores stay
// within FastTolerance of the exact ones — exponents from 0.2 to 8, M over
// four orders of magnitude, rows over eight — and the bound is not idle
// (the worst error is logged).
func TestNormScoresFastWithinTolerance(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(41, 41))
	worst := 0.0
	for _, d := range []int{1, 2, 3, 7, 15, 16} {
		for trial := range 150 {
			p := 0.2 + 7.8*rng.Float64()
			if trial%10 == 0 {
				p = 2
			}
			g := wideNorm(t, rng, d, p)
			x := heavyDiffs(rng, 64*d)
			exact := g.Scores(nil, x)
			fast := g.ScoresFast(nil, x)
			rel, abs := g.FastTolerance()
			if d < 16 && (p == 2) != (rel == 0) || d >= 16 && g.fastLarge().ok != (rel > 0) {
				t.Fatalf("d=%d p=%v: tolerance %v", d, p, rel)
			}
			worst = max(worst, within(t, fmt.Sprintf("d=%d p=%v", d, p), fast, exact, rel, abs))
		}
	}
	t.Logf("%s: worst relative error %.3g of the bound", kernel.Describe(), worst)
}

// TestNormMembersExact: Members decides as the exact single-norm scores do,
// also for rows scaled to within 1e-7 of the threshold on either side.
func TestNormMembersExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(42, 42))
	for _, d := range []int{2, 3, 9} {
		for range 20 {
			g := wideNorm(t, rng, d, 0.3+5*rng.Float64())
			x, q := nearThreshold(rng, g, 400)
			checkMembers(t, g, q, x, false)
		}
	}
}

// TestMembersAround: MembersAround decides as Members on the differences
// does — the ℓ2 ball, generalized balls over wide scales and exponents, a
// single-norm (made differences), rows scaled to within 1e-7 of q, NaN and
// infinite coordinates (their scores NaN or infinite, as the exact ones) —
// and q of 0 and +Inf.
func TestMembersAround(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(51, 51))
	for _, d := range []int{1, 3, 16, 37, 128} {
		for trial := range trials(30) {
			var g Geometry
			switch trial % 3 {
			case 0:
				g = Ball{D: d}
			case 1:
				g = wideGenBall(t, rng, d)
			default:
				g = wideNorm(t, rng, d, 0.5+3*rng.Float64())
			}
			const n = 300
			anchor := heavyDiffs(rng, d)
			points := heavyDiffs(rng, n*d)
			diffs := func() []float32 {
				x := make([]float32, n*d)
				for i, v := range points {
					x[i] = anchor[i%d] - v
				}
				return x
			}
			exact := g.Scores(nil, diffs())
			q := exact[rng.IntN(n)]
			// Rows 1…60: moved towards the anchor until their exact score is
			// within 1e-7 of q (bisection on the step).
			for i := 1; i <= 60; i++ {
				row := points[i*d : (i+1)*d]
				base := append([]float32(nil), row...)
				target := q * (1 + 1e-7*float64(2*(i%2)-1))
				set := func(t float64) float64 {
					for j := range d {
						row[j] = anchor[j] + float32(t)*(base[j]-anchor[j])
					}
					x := make([]float32, d)
					for j := range d {
						x[j] = anchor[j] - row[j]
					}
					return g.Scores(nil, x)[0]
				}
				lo, hi := 0.0, 1.0
				for k := 0; set(hi) < target && k < 60; k++ {
					hi *= 2
				}
				for range 60 {
					if mid := (lo + hi) / 2; set(mid) < target {
						lo = mid
					} else {
						hi = mid
					}
				}
				set(lo)
			}
			points[70*d] = float32(math.NaN())
			points[71*d+d-1] = float32(math.Inf(1))
			for _, qq := range []float64{q, 0, math.Inf(1)} {
				want := members(g, qq, nil, nil, diffs(), false) // the exact scores' decisions
				sc := make([]float64, n)
				got := MembersAround(g, qq, anchor, points, nil, sc)
				for i := range n {
					if got[i] != want[i] {
						t.Fatalf("d=%d %v q=%v row %d: around %v, on differences %v", d, g.Kind(), qq, i, got[i], want[i])
					}
				}
				if !math.IsNaN(sc[70]) || !(math.IsInf(sc[71], 1) || math.IsNaN(sc[71])) {
					t.Fatalf("d=%d %v q=%v: rows with NaN and +Inf score %v and %v", d, g.Kind(), qq, sc[70], sc[71])
				}
			}
		}
	}
}

// TestBallScoresFast: the ball's fast scores (a float32 sum of squares)
// stay within FastTolerance of the exact ones, and Members with them
// decides as the exact scores do for rows within 1e-7 of q.
func TestBallScoresFast(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(52, 52))
	worst := 0.0
	for _, d := range []int{1, 3, 7, 16, 17, 128, 1408} {
		b := Ball{D: d}
		rel, abs := b.FastTolerance()
		for range 20 {
			x := heavyDiffs(rng, 64*d)
			exact, fast := b.Scores(nil, x), b.ScoresFast(nil, x)
			for i := range exact {
				if diff := math.Abs(fast[i] - exact[i]); diff > rel*exact[i]+abs {
					t.Fatalf("d=%d row %d: fast %v, exact %v", d, i, fast[i], exact[i])
				} else if exact[i] > 0 {
					worst = math.Max(worst, diff/exact[i]/rel)
				}
			}
			q := exact[0]
			for i := 1; i < 64; i++ { // homogeneous: rows scaled to q·(1 ± 1e-7)
				if exact[i] > 0 {
					f := float32(q * (1 + 1e-7*float64(2*(i%2)-1)) / exact[i])
					for j := range d {
						x[i*d+j] *= f
					}
				}
			}
			want := members(b, q, nil, nil, x, false)
			got := Members(b, q, nil, nil, x)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("d=%d row %d: fast path %v, exact %v", d, i, got[i], want[i])
				}
			}
		}
	}
	t.Logf("%s: worst relative error %.3g of the bound", kernel.Describe(), worst)
}

// TestNormScoresFastLarge: from d = 16 on, the single-norm's fast scores
// (a float32 product, bounded through M's condition) stay within
// FastTolerance of the exact ones — M near the identity, Gaussian, and with
// rows scaled over four orders of magnitude; p from 1 to 6 and 2; rows over
// forty orders of magnitude, sparse rows, rows with one large coordinate —
// and the fast path is on where M allows it: for M near the identity
// always, and the worst error is logged. Rows with a NaN or an infinite
// coordinate score NaN or +Inf (rescored).
func TestNormScoresFastLarge(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(43, 43))
	worst, on, trials := 0.0, 0, 0
	for _, d := range []int{16, 17, 40, 128} {
		for trial := range 24 {
			p := 1 + 5*rng.Float64()
			if trial%6 == 0 {
				p = 2
			}
			kind := trial % 3
			m := make([]float64, d*d)
			for i := range m {
				m[i] = rng.NormFloat64()
				switch kind {
				case 0: // near the identity
					m[i] *= 0.3 / math.Sqrt(float64(d))
				case 2: // rows over four orders of magnitude
					m[i] *= math.Pow(10, float64((i/d)%5)-2)
				}
			}
			if kind == 0 {
				for k := range d {
					m[k*d+k] += 1
				}
			}
			g, err := NewNorm(d, m, p)
			if err != nil {
				t.Fatal(err)
			}
			const n = 96
			x := make([]float32, n*d)
			for i := range n {
				row := x[i*d : (i+1)*d]
				scale := math.Pow(10, float64(i%9)*5-20)
				for j := range row {
					row[j] = float32(scale * rng.NormFloat64())
				}
				switch i % 7 {
				case 1: // sparse
					for j := range row {
						if j != i%d {
							row[j] = 0
						}
					}
				case 2: // one coordinate far larger
					row[i%d] *= 1e6
				case 3:
					clear(row)
				}
			}
			exact := g.Scores(nil, x)
			fast := g.ScoresFast(nil, x)
			rel, abs := g.FastTolerance()
			trials++
			if rel > 0 {
				on++
			} else if kind == 0 && kernel.Vector() {
				t.Errorf("d=%d p=%v: M near the identity has no fast score", d, p)
			}
			worst = max(worst, within(t, fmt.Sprintf("d=%d p=%v M kind %d", d, p, kind), fast, exact, rel, abs))
			x[0], x[d+1] = float32(math.NaN()), float32(math.Inf(-1))
			fast = g.ScoresFast(fast, x)
			if !math.IsNaN(fast[0]) && !math.IsInf(fast[0], 1) || !math.IsNaN(fast[1]) && !math.IsInf(fast[1], 1) {
				t.Fatalf("d=%d: rows with NaN and −Inf score %v and %v", d, fast[0], fast[1])
			}
		}
	}
	t.Logf("%s: fast path on in %d of %d; worst relative error %.3g of the bound", kernel.Describe(), on, trials, worst)
}

// TestNormMembersExactLarge: from d = 16 on, Members decides as the exact
// single-norm scores do with the float32 fast score on (M near the
// identity), for rows scaled to within 1e-7 of the threshold on either
// side, whose exact scores it must take.
func TestNormMembersExactLarge(t *testing.T) {
	t.Parallel()
	if !kernel.Vector() {
		t.Log("portable kernels: no fast score from d = 16 on; Members scores exactly")
	}
	rng := rand.New(rand.NewPCG(44, 44))
	for _, d := range []int{17, 64} {
		for _, p := range []float64{0.9, 1.5, 2, 3} {
			m := make([]float64, d*d)
			for i := range m {
				m[i] = 0.2 * rng.NormFloat64() / math.Sqrt(float64(d))
			}
			for k := range d {
				m[k*d+k] += 1
			}
			g, err := NewNorm(d, m, p)
			if err != nil {
				t.Fatal(err)
			}
			if rel, _ := g.FastTolerance(); (rel > 0) != kernel.Vector() {
				t.Fatalf("d=%d p=%v: tolerance %v with vector kernels %v", d, p, rel, kernel.Vector())
			}
			x, q := nearThreshold(rng, g, 400)
			checkMembers(t, g, q, x, true)
		}
	}
}

// nearThreshold draws n heavy rows for g (a score homogeneous of degree 1)
// and takes the first one's exact score as q: rows 1 to 99 are scaled to
// q·(1 ± 1e-7).
func nearThreshold(rng *rand.Rand, g Geometry, n int) ([]float32, float64) {
	d := g.Dim()
	x := heavyDiffs(rng, n*d)
	exact := g.Scores(nil, x)
	q := exact[0]
	for i := 1; i < 100; i++ {
		if exact[i] == 0 {
			continue
		}
		t := q * (1 + 1e-7*float64(2*(i%2)-1)) / exact[i]
		for j := range d {
			x[i*d+j] *= float32(t)
		}
	}
	return x, q
}

// TestEllipsoidScoresFast: from d = 16 on, the ellipsoid's fast score (a
// float32 product by L⁻¹) stays within FastTolerance of the exact forward
// substitution — Σ near the identity, a Wishart draw, and one with
// variances over four orders of magnitude; rows over forty orders of
// magnitude — is on for Σ near the identity, and Members decides rows
// within 1e-7 of the threshold as the exact scores do.
func TestEllipsoidScoresFast(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(45, 45))
	worst, on := 0.0, 0
	for _, d := range []int{16, 17, 64, 128} {
		for kind := range 3 {
			a := make([]float64, d*d)
			for i := range a {
				a[i] = rng.NormFloat64()
				switch kind {
				case 0:
					a[i] *= 0.2 / math.Sqrt(float64(d))
				case 2:
					a[i] *= math.Pow(10, float64((i/d)%5)-2) / math.Sqrt(float64(d))
				}
			}
			sigma := make([]float64, d*d) // A·Aᵀ (+ I near the identity)
			for i := range d {
				for j := range d {
					var s float64
					for k := range d {
						s += a[i*d+k] * a[j*d+k]
					}
					sigma[i*d+j] = s
				}
				if kind == 0 {
					sigma[i*d+i] += 1
				}
			}
			for i := range d { // exactly symmetric
				for j := range i {
					sigma[j*d+i] = sigma[i*d+j]
				}
			}
			e, err := NewEllipsoid(d, sigma)
			if err != nil {
				t.Fatal(err)
			}
			rel, abs := e.FastTolerance()
			if rel > 0 {
				on++
			} else if kind == 0 && kernel.Vector() {
				t.Errorf("d=%d: Σ near the identity has no fast score", d)
			}
			x := wideRows(rng, 96, d)
			exact := e.Scores(nil, x)
			fast := e.ScoresFast(nil, x)
			worst = max(worst, within(t, fmt.Sprintf("d=%d Σ kind %d", d, kind), fast, exact, rel, abs))
			if rel > 0 {
				x, q := nearThreshold(rng, e, 400)
				checkMembers(t, e, q, x, true)
			}
		}
	}
	t.Logf("%s: fast path on in %d of 12; worst relative error %.3g of the bound", kernel.Describe(), on, worst)
}

// within fails the test where a fast score is farther from the exact one
// than rel·exact + abs, and returns the largest error as a share of rel
// (0 where rel is 0).
func within(t *testing.T, name string, fast, exact []float64, rel, abs float64) float64 {
	t.Helper()
	var worst float64
	for i := range exact {
		diff := math.Abs(fast[i] - exact[i])
		if diff > rel*exact[i]+abs {
			t.Fatalf("%s row %d: fast %v, exact %v: error %.3g > bound %.3g (rel %.3g)", name, i, fast[i], exact[i], diff, rel*exact[i]+abs, rel)
		}
		if rel > 0 && exact[i] > 0 {
			worst = math.Max(worst, diff/exact[i]/rel)
		}
	}
	return worst
}

// TestEllipsoidScoresBlocks: many rows, scored in blocks on all cores,
// score as each row alone does, with 1 and 4 goroutines.
func TestEllipsoidScoresBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 46))
	const d, n = 20, 1500
	sigma := make([]float64, d*d)
	for k := range d {
		sigma[k*d+k] = 0.5 + rng.Float64()
	}
	e, err := NewEllipsoid(d, sigma)
	if err != nil {
		t.Fatal(err)
	}
	x := heavyDiffs(rng, n*d)
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		got := e.Scores(nil, x)
		runtime.GOMAXPROCS(prev)
		for i := range n {
			if want := ellipsoidScores(e, nil, x[i*d:(i+1)*d])[0]; math.Float64bits(got[i]) != math.Float64bits(want) {
				t.Fatalf("%d goroutines: row %d scores %v, alone %v", procs, i, got[i], want)
			}
		}
	}
}

// TestEllipsoidScoresSolve: the ellipsoid's scores, solved a block of rows
// at a time where the build has vector kernels (kernel.SolveLower), have
// each row's bits from the one-row loop (forward, then norm2), for
// dimensions and row counts around the blocks' width (the last block
// padded), rows of heavy-tailed values with zeros, and rows with a NaN,
// an infinity and a subnormal coordinate.
func TestEllipsoidScoresSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 47))
	for _, d := range []int{1, 2, 5, 16, 33, 128} {
		e := randEllipsoid(rng, d)
		for _, n := range []int{1, 15, 16, 17, 31, 32, 33, 100} {
			x := heavyDiffs(rng, n*d)
			if n > 3 {
				x[d] = float32(math.NaN())
				x[2*d+d-1] = float32(math.Inf(-1))
				x[3*d] = 1e-42
			}
			got := ellipsoidScores(e, nil, x)
			y := make([]float64, d)
			for i := range n {
				forward(e, y, x[i*d:(i+1)*d])
				want := norm2(y)
				if math.Float64bits(got[i]) != math.Float64bits(want) && !(got[i] != got[i] && want != want) {
					t.Fatalf("d=%d, %d rows: row %d scores %v, alone %v", d, n, i, got[i], want)
				}
			}
		}
	}
}

// trials is n, or a fifth of it (at least 3) under the race detector: the
// trials are numbers, run whole in the suite's other phases, and a fifth
// still goes through every path of the code (the trials take the
// geometries in turn).
func trials(n int) int {
	if race.Enabled {
		return max(3, n/5)
	}
	return n
}

// TestEllipsoidWhitening: the exact score of every row is at least
// ‖W·x‖₂/κ and at most λ·‖W·x‖₂ (W = L⁻¹ in float64, the product taken in
// float64 and rounded down, or up, by its own bound), κ and λ within 10⁻⁶
// of 1 for Σ near the identity, a Wishart draw and variances over eight
// orders of magnitude; rows over forty orders of magnitude.
func TestEllipsoidWhitening(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(46, 46))
	for _, d := range []int{1, 3, 17, 64} {
		for kind := range 3 {
			sigma := make([]float64, d*d)
			a := make([]float64, d*d)
			for i := range a {
				a[i] = rng.NormFloat64() / math.Sqrt(float64(d))
				if kind == 2 {
					a[i] *= math.Pow(10, float64((i/d)%9)-4)
				}
			}
			for i := range d {
				for j := 0; j <= i; j++ {
					var s float64
					for k := range d {
						s += a[i*d+k] * a[j*d+k]
					}
					sigma[i*d+j], sigma[j*d+i] = s, s
				}
				if kind == 0 {
					sigma[i*d+i] += 1
				}
			}
			e, err := NewEllipsoid(d, sigma)
			if err != nil {
				t.Fatal(err)
			}
			w, kappa, lambda, ok := e.Whitening()
			if !ok || !(kappa >= 1 && kappa < 1+1e-6) || !(lambda >= 1 && lambda < 1+1e-6) {
				t.Fatalf("d=%d Σ kind %d: Whitening ok=%v κ=%v λ=%v", d, kind, ok, kappa, lambda)
			}
			const n = 200
			x := wideRows(rng, n, d)
			exact := e.Scores(nil, x)
			for i := range n {
				var s, abs float64
				for k := range d {
					var v, av float64
					for l := range d {
						v += w[k*d+l] * float64(x[i*d+l])
						av += math.Abs(w[k*d+l] * float64(x[i*d+l]))
					}
					s += v * v
					abs += av * av
				}
				// ‖W·x‖₂ in float64, within (d + 2)·2⁻⁵² of ‖|W|·|x|‖₂.
				lo := math.Sqrt(s) - float64(d+2)*0x1p-52*math.Sqrt(abs)
				if exact[i] < lo/kappa {
					t.Fatalf("d=%d Σ kind %d row %d: score %v < ‖W·x‖/κ = %v", d, kind, i, exact[i], lo/kappa)
				}
				if hi := math.Sqrt(s) + float64(d+2)*0x1p-52*math.Sqrt(abs); exact[i] > hi*lambda {
					t.Fatalf("d=%d Σ kind %d row %d: score %v > λ·‖W·x‖ = %v", d, kind, i, exact[i], hi*lambda)
				}
			}
		}
	}
}

// wideRows are n Gaussian rows of dimension d, scaled by 10⁻²⁰ … 10²⁰ in
// turn: forty orders of magnitude.
func wideRows(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	for i := range n {
		scale := math.Pow(10, float64(i%9)*5-20)
		for j := range d {
			x[i*d+j] = float32(scale * rng.NormFloat64())
		}
	}
	return x
}

// TestFastWorth: an ellipsoid's fast score, prepared at the cost of some
// 4·d/3 exact rows, is worth it from 2·d rows until it is made, and from
// then on for any call, behind a shift too; membersAroundExact decides as
// MembersAround does without preparing it.
func TestFastWorth(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	const d = 24
	sigma := make([]float64, d*d)
	for i := range d {
		for j := range d {
			sigma[i*d+j] = 0.3
		}
		sigma[i*d+i] = 1 + rng.Float64()
	}
	e, err := NewEllipsoid(d, sigma)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := NewShifted(e, make([]float64, d))
	if err != nil {
		t.Fatal(err)
	}
	anchor, points := make([]float32, d), make([]float32, 100*d)
	for i := range points {
		points[i] = float32(2 * rng.NormFloat64())
	}
	q := e.Scores(nil, points[:d])[0]
	exact := membersAroundExact(e, q, anchor, points, nil, nil)
	if e.fast.Load() != nil || fastWorth(e, 2*d-1) || fastWorth(sh, 3) || !fastWorth(e, 2*d) || !fastWorth(Ball{D: d}, 1) {
		t.Fatalf("before: prepared %v, worth %v at %d rows", e.fast.Load() != nil, fastWorth(e, 2*d-1), 2*d-1)
	}
	if got := MembersAround(e, q, anchor, points, nil, nil); !slices.Equal(got, exact) || !exact[0] || slices.Index(exact, false) < 0 {
		t.Errorf("MembersAround %v, exact %v", got, exact)
	}
	if kernel.Vector() && (e.fast.Load() == nil || !fastWorth(e, 1) || !fastWorth(sh, 1)) {
		t.Errorf("after a call: prepared %v, worth %v", e.fast.Load() != nil, fastWorth(e, 1))
	}
}
