package geometry

import (
	"math"
	"math/rand/v2"
	"testing"
)

var sink []float64

// benchScores times Scores (or ScoreGrads with grads) over 4096 rows of d.
func benchScores(b *testing.B, g Geometry, grads bool) {
	const rows = 4096
	d := g.Dim()
	rng := rand.New(rand.NewPCG(1, 1))
	x := randDiffs32(rng, rows, d)
	dst := make([]float64, rows)
	var dtheta []float64
	l, _ := g.(Learnable)
	if grads {
		dtheta = make([]float64, l.NumParams())
	}
	b.SetBytes(int64(rows * d * 4))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if grads {
			sink = l.ScoreGrads(dtheta, dst, x, nil)
		} else {
			sink = g.Scores(dst, x)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*d), "ns/element")
}

func BenchmarkScoresBallD3(b *testing.B)   { benchScores(b, Ball{D: 3}, false) }
func BenchmarkScoresBallD128(b *testing.B) { benchScores(b, Ball{D: 128}, false) }
func BenchmarkScoresBallD512(b *testing.B) { benchScores(b, Ball{D: 512}, false) }
func BenchmarkScoresEllipsoidD3(b *testing.B) {
	benchScores(b, randEllipsoid(rand.New(rand.NewPCG(2, 2)), 3), false)
}
func BenchmarkScoresEllipsoidD128(b *testing.B) {
	benchScores(b, randEllipsoid(rand.New(rand.NewPCG(2, 2)), 128), false)
}
func BenchmarkScoresEllipsoidD768(b *testing.B) {
	benchScores(b, randEllipsoid(rand.New(rand.NewPCG(2, 2)), 768), false)
}

// BenchmarkScoresEllipsoidFew scores 4 rows at d = 384 a call, as a
// retrieval's exact re-score of a chunk's few uncertain rows does
// thousands of times a search.
func BenchmarkScoresEllipsoidFew(b *testing.B) {
	const rows, d = 4, 384
	rng := rand.New(rand.NewPCG(3, 3))
	e := randEllipsoid(rng, d)
	x := randDiffs32(rng, rows, d)
	dst := make([]float64, rows)
	b.ReportAllocs()
	for b.Loop() {
		sink = e.Scores(dst, x)
	}
}

func BenchmarkScoresNormD3(b *testing.B)      { benchScores(b, IdentityNorm(3, 1.5), false) }
func BenchmarkScoresNormD128(b *testing.B)    { benchScores(b, IdentityNorm(128, 1.5), false) }
func BenchmarkGradsNormD128(b *testing.B)     { benchScores(b, IdentityNorm(128, 1.5), true) }
func BenchmarkScoresGenBallD3(b *testing.B)   { benchScores(b, UnitGenBall(3, 1.5), false) }
func BenchmarkScoresGenBallD128(b *testing.B) { benchScores(b, UnitGenBall(128, 1.5), false) }
func BenchmarkScoresGenBallD512(b *testing.B) { benchScores(b, UnitGenBall(512, 1.5), false) }
func BenchmarkGradsGenBallD128(b *testing.B)  { benchScores(b, UnitGenBall(128, 1.5), true) }
func BenchmarkGradsGenBallD3(b *testing.B)    { benchScores(b, UnitGenBall(3, 1.5), true) }
func BenchmarkGradsGenBallD512(b *testing.B)  { benchScores(b, UnitGenBall(512, 1.5), true) }
func BenchmarkGradsGenBallD1408(b *testing.B) { benchScores(b, UnitGenBall(1408, 1.5), true) }
func BenchmarkGradsNormD3(b *testing.B)       { benchScores(b, IdentityNorm(3, 1.5), true) }
func BenchmarkGradsNormD512(b *testing.B)     { benchScores(b, IdentityNorm(512, 1.5), true) }
func BenchmarkGradsNormD1408(b *testing.B)    { benchScores(b, IdentityNorm(1408, 1.5), true) }
func BenchmarkScoresBallD1408(b *testing.B)   { benchScores(b, Ball{D: 1408}, false) }

// benchPrepared times the generalized ball's prepared kernel (precomputed
// log|x|, float32 exp) with gradients: what training runs.
func benchPrepared(b *testing.B, d int) {
	const rows = 4096
	g := UnitGenBall(d, 1.5)
	prep := g.Prepare(nil, randDiffs32(rand.New(rand.NewPCG(1, 1)), rows, d))
	dst := make([]float64, rows)
	dtheta := make([]float64, g.NumParams())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sink = g.ScoreGradsPrepared(dtheta, dst, prep, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*d), "ns/element")
}

func BenchmarkGradsPreparedGenBallD3(b *testing.B)    { benchPrepared(b, 3) }
func BenchmarkGradsPreparedGenBallD128(b *testing.B)  { benchPrepared(b, 128) }
func BenchmarkGradsPreparedGenBallD512(b *testing.B)  { benchPrepared(b, 512) }
func BenchmarkGradsPreparedGenBallD1408(b *testing.B) { benchPrepared(b, 1408) }

// benchFast times the fast scores of 4096 rows of d (one goroutine).
func benchFast(b *testing.B, d int) {
	const rows = 4096
	g := UnitGenBall(d, 1.5)
	x := randDiffs32(rand.New(rand.NewPCG(1, 1)), rows, d)
	dst := make([]float64, rows)
	b.ResetTimer()
	for b.Loop() {
		sink = g.ScoresFast(dst, x)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*d), "ns/element")
}

func BenchmarkScoresFastGenBallD3(b *testing.B)    { benchFast(b, 3) }
func BenchmarkScoresFastGenBallD128(b *testing.B)  { benchFast(b, 128) }
func BenchmarkScoresFastGenBallD1408(b *testing.B) { benchFast(b, 1408) }

// benchMembersNorm times Members of 4096 rows of d for a single-norm with M
// near the identity and p = 1.5, the threshold at the rows' median score
// (one goroutine): from d = 16 on, the float32 fast score and the rows
// within its bound rescored; with exact, Scores alone, as before it.
func benchMembersNorm(b *testing.B, d int, exact bool) {
	const rows = 4096
	rng := rand.New(rand.NewPCG(1, 1))
	m := make([]float64, d*d)
	for i := range m {
		m[i] = 0.2 * rng.NormFloat64() / math.Sqrt(float64(d))
	}
	for k := range d {
		m[k*d+k] += 1
	}
	g, err := NewNorm(d, m, 1.5)
	if err != nil {
		b.Fatal(err)
	}
	x := randDiffs32(rng, rows, d)
	scores := g.Scores(nil, x)
	q := scores[rows/2]
	in := make([]bool, rows)
	b.ResetTimer()
	for b.Loop() {
		members(g, q, in, scores, x, !exact)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*d), "ns/element")
}

func BenchmarkMembersNormD128(b *testing.B)      { benchMembersNorm(b, 128, false) }
func BenchmarkMembersNormD128Exact(b *testing.B) { benchMembersNorm(b, 128, true) }
func BenchmarkMembersNormD768(b *testing.B)      { benchMembersNorm(b, 768, false) }
func BenchmarkMembersNormD768Exact(b *testing.B) { benchMembersNorm(b, 768, true) }

// benchNormTrain times the single-norm's training kernel
// (ScoreGradsPrepared: float32 vector kernels where the build has them)
// on 4096 rows of d with a random M.
func benchNormTrain(b *testing.B, d int) {
	const rows = 4096
	rng := rand.New(rand.NewPCG(1, 1))
	m := make([]float64, d*d)
	for i := range m {
		m[i] = rng.NormFloat64() / math.Sqrt(float64(d))
	}
	n, err := NewNorm(d, m, 1.5)
	if err != nil {
		b.Fatal(err)
	}
	x := randDiffs32(rng, rows, d)
	dst, dtheta := make([]float64, rows), make([]float64, n.NumParams())
	b.ResetTimer()
	for b.Loop() {
		sink = n.ScoreGradsPrepared(dtheta, dst, x, nil)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows*d), "ns/element")
}

func BenchmarkGradsNormTrainD3(b *testing.B)   { benchNormTrain(b, 3) }
func BenchmarkGradsNormTrainD128(b *testing.B) { benchNormTrain(b, 128) }

// benchSpans times a training batch's kernel on rows of a split far larger
// than the caches (anchors × per rows of d, prepared): the rows of 256
// random anchors read in place (ScoreGradsSpans) or first gathered into
// one slice (what training did before). Per element of the batch.
func benchSpans(b *testing.B, g Streamed, per int, gathered bool) {
	const anchors, batch = 20000, 256
	d := g.Dim()
	rng := rand.New(rand.NewPCG(1, 1))
	split := g.Prepare(nil, randDiffs32(rng, anchors*per, d))
	dtheta := make([]float64, g.NumParams())
	scores := make([]float64, batch*per)
	buf := make([]float32, batch*per*d)
	b.ResetTimer()
	for b.Loop() {
		spans := make([][]float32, batch)
		for i := range spans {
			a := rng.IntN(anchors)
			spans[i] = split[a*per*d : (a+1)*per*d]
		}
		if gathered {
			k := 0
			for _, s := range spans {
				k += copy(buf[k:], s)
			}
			sink = g.ScoreGradsPrepared(dtheta, scores, buf, nil)
		} else {
			sink = g.ScoreGradsSpans(dtheta, scores, spans, nil)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(batch*per*d), "ns/element")
}

func BenchmarkSpansGenBallD128(b *testing.B)         { benchSpans(b, UnitGenBall(128, 1.5), 50, false) }
func BenchmarkSpansGatheredGenBallD128(b *testing.B) { benchSpans(b, UnitGenBall(128, 1.5), 50, true) }
func BenchmarkSpansNormD128(b *testing.B)            { benchSpans(b, IdentityNorm(128, 1.5), 50, false) }
func BenchmarkSpansGatheredNormD128(b *testing.B)    { benchSpans(b, IdentityNorm(128, 1.5), 50, true) }
