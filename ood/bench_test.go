package ood

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// BenchmarkKNN is the exact search at the size: 10 000 queries
// against 60 000 training features (the whole Fashion-MNIST training set)
// at d = 128, k = 50. -short runs a tenth of the queries.
func BenchmarkKNN(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const d, n = 128, 60000
	m := 10000
	if testing.Short() {
		m = 1000
	}
	ref, q := randRows(rng, n, d), randRows(rng, m, d)
	x := newIndex(ref, d)
	b.Run(fmt.Sprintf("n=%d/m=%d/d=%d", n, m, d), func(b *testing.B) {
		for b.Loop() {
			x.kth(q, 50, false, nil)
		}
		b.ReportMetric(float64(n)*float64(m)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
	})
}

// BenchmarkKNNCollapsed is BenchmarkKNN on a collapsed projection's rows
// (CIDER's undertrained head): unit rows all within 10⁻² of one point, the
// queries among them.
func BenchmarkKNNCollapsed(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d, n, m = 128, 20000, 2000
	base := randRows(rng, 1, d)
	unit := func(rows []float64) []float64 {
		for i := range rows {
			rows[i] = base[i%d] + 1e-2*rows[i]
		}
		return normalized(rows, d)
	}
	ref, q := unit(randRows(rng, n, d)), unit(randRows(rng, m, d))
	x := newIndex(ref, d)
	for b.Loop() {
		x.kth(q, 50, false, nil)
	}
	b.ReportMetric(float64(n)*float64(m)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// clustered returns n rows of d around 10 cluster centres (centres spread
// 2, points 1 around them): embeddings with structure, where the nearest
// rows are much nearer than most.
func clustered(rng *rand.Rand, n, d int, centres []float32) []float32 {
	x := make([]float32, n*d)
	for i := range n {
		c := centres[rng.IntN(len(centres)/d)*d:]
		for j := range d {
			x[i*d+j] = c[j] + float32(rng.NormFloat64())
		}
	}
	return x
}

// benchPool times the per-input nearest score: one query (or, with many,
// 10 000 queries: calibrating an OOD detector) against a pool of 10 000
// rows of d = 128, k = 1.
func benchPool(b *testing.B, g geometry.Geometry, many bool) {
	rng := rand.New(rand.NewPCG(3, 3))
	const n, d = 10000, 128
	centres := make([]float32, 10*d)
	for i := range centres {
		centres[i] = float32(2 * rng.NormFloat64())
	}
	pool := clustered(rng, n, d, centres)
	m := 1
	if many {
		m = 10000
	}
	q := clustered(rng, m, d, centres)
	p, err := NewPool(g, pool)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float64, m)
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Kth(dst, q, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m)/1e6, "ms/query")
}

func benchGeometries(d int) map[string]geometry.Geometry {
	m := make([]float64, d*d)
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range d {
		for j := range d {
			m[i*d+j] = 0.1 * rng.NormFloat64() / 11
		}
		m[i*d+i] += 1
	}
	n2, _ := geometry.NewNorm(d, m, 2)
	n15, _ := geometry.NewNorm(d, m, 1.5)
	sc, ex := make([]float64, d), make([]float64, d)
	for j := range d {
		sc[j], ex[j] = 0.5+rng.Float64(), 1+rng.Float64()
	}
	gb, _ := geometry.NewGenBall(sc, ex)
	return map[string]geometry.Geometry{"Ball": geometry.Ball{D: d}, "NormP2": n2, "NormP1.5": n15, "GenBall": gb}
}

func BenchmarkPoolOneBall(b *testing.B)     { benchPool(b, benchGeometries(128)["Ball"], false) }
func BenchmarkPoolOneNormP2(b *testing.B)   { benchPool(b, benchGeometries(128)["NormP2"], false) }
func BenchmarkPoolOneNormP15(b *testing.B)  { benchPool(b, benchGeometries(128)["NormP1.5"], false) }
func BenchmarkPoolOneGenBall(b *testing.B)  { benchPool(b, benchGeometries(128)["GenBall"], false) }
func BenchmarkPoolManyBall(b *testing.B)    { benchPool(b, benchGeometries(128)["Ball"], true) }
func BenchmarkPoolManyGenBall(b *testing.B) { benchPool(b, benchGeometries(128)["GenBall"], true) }
func BenchmarkPoolManyNormP15(b *testing.B) { benchPool(b, benchGeometries(128)["NormP1.5"], true) }

// BenchmarkDKNNFit is D-KNN's fit at the size: each of 60 000
// normalised features' 50-th neighbour among the others, in the principal
// and the residual space (-short: 6 000 features).
func BenchmarkDKNNFit(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	n, d := 60000, 128
	if testing.Short() {
		n = 6000
	}
	train := Sample{N: n, D: d, Features: randRows(rng, n, d)}
	for b.Loop() {
		k := &DKNN{}
		if err := k.Fit(train); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// BenchmarkMonitorObserve: a monitor observing 1 000 scores a call (what
// a /ood request of 1 000 points adds to the drift monitor), over a
// calibration of 999, after a stream of 100 000.
func BenchmarkMonitorObserve(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	cal := make([]float64, 999)
	for i := range cal {
		cal[i] = rng.NormFloat64()
	}
	c, _ := NewCalibration(cal)
	m, _ := NewMonitor(c, MonitorOptions{Delta: 0.01})
	x := make([]float64, 1000)
	for range 100 {
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		m.Observe(x)
	}
	b.ResetTimer()
	for b.Loop() {
		m.Observe(x)
	}
}

// BenchmarkKNNAndCOMBOOD is Baselines' KNN and COMBOOD as ccs ood runs
// them (experiment.DetectOOD): each fitted on 60 000 training features at
// d = 128 with 4 activation summaries, then scoring 1 000 ID and 1 000 OOD
// inputs (-short: 6 000 training features), k = 50. COMBOOD's k-NN part
// is KNN's search.
func BenchmarkKNNAndCOMBOOD(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	const d, a, m = 128, 4, 1000
	n := 60000
	if testing.Short() {
		n = 6000
	}
	sample := func(n int, shift float64) Sample {
		s := Sample{N: n, D: d, Features: randRows(rng, n, d), A: a, Activations: make([]float64, n*a)}
		for i := range s.Features {
			s.Features[i] += shift
		}
		for i := range s.Activations {
			s.Activations[i] = math.Exp(0.3*rng.NormFloat64() + shift)
		}
		return s
	}
	train, id, ood := sample(n, 0), sample(m, 0), sample(m, 0.2)
	b.ReportAllocs()
	for b.Loop() {
		for _, det := range Baselines(BaselineOptions{})[3:5] { // KNN, COMBOOD
			if err := det.Fit(train); err != nil {
				b.Fatal(err)
			}
			for _, x := range []Sample{id, ood} {
				if _, err := det.Score(x); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkYeoJohnsonFit is COMBOOD's Yeo-Johnson fit alone: one λ for
// each of 4 activation summaries of 60 000 training features, as the
// paper's Fashion-MNIST encoder gives them (-short: 6 000).
func BenchmarkYeoJohnsonFit(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	const a = 4
	n := 60000
	if testing.Short() {
		n = 6000
	}
	act := make([]float64, n*a)
	for i := range act {
		act[i] = math.Exp(0.3*rng.NormFloat64() + float64(i%a))
	}
	b.ReportAllocs()
	for b.Loop() {
		yeoJohnsonFits(act, n, a)
	}
}
