package train

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
)

// benchEpoch times one training epoch (Neg+Vol, batch 256) over n anchors
// with k positives and k negatives in d dimensions, plus one validation pass
// over n/10 anchors.
func benchEpoch(b *testing.B, g func(d int) geometry.Learnable, n, k, d int) {
	rng := rand.New(rand.NewPCG(1, 1))
	fit, val := sim.Gauss(rng, n, k, d), sim.Unseparated(sim.Gauss(rng, n/10, k, d))
	cfg := Config{Objective: objective.Config{Objective: objective.NegVol}, MaxEpochs: 1}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Train(context.Background(), g(d), fit, val, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*k*2*d), "ns/pair-dim")
}

func genBall(d int) geometry.Learnable { return geometry.UnitGenBall(d, 2) }
func single(d int) geometry.Learnable  { return geometry.IdentityNorm(d, 2) }

func BenchmarkEpochGenBallN10000K50D128(b *testing.B) { benchEpoch(b, genBall, 10000, 50, 128) }
func BenchmarkEpochSingleN10000K50D128(b *testing.B)  { benchEpoch(b, single, 10000, 50, 128) }
func BenchmarkEpochGenBallSimD3(b *testing.B)         { benchEpoch(b, genBall, 12500, 500, 3) }
func BenchmarkEpochSingleSimD3(b *testing.B)          { benchEpoch(b, single, 12500, 500, 3) }

// benchHead times two epochs with the InfoNCE head (one set epoch, one head
// epoch and the re-preparation of both splits that follows it).
func benchHead(b *testing.B, g func(d int) geometry.Learnable, n, k, d int) {
	rng := rand.New(rand.NewPCG(1, 1))
	fit, val := sim.Gauss(rng, n, k, d), sim.Unseparated(sim.Gauss(rng, n/10, k, d))
	cfg := Config{Objective: objective.Config{Objective: objective.NegVol}, MaxEpochs: 2, InfoNCE: &InfoNCE{}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := TrainHead(context.Background(), g(d), head.Identity(d, d), fit, val, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeadTwoEpochsGenBallN10000K50D128(b *testing.B) { benchHead(b, genBall, 10000, 50, 128) }
func BenchmarkHeadTwoEpochsSingleN10000K50D128(b *testing.B)  { benchHead(b, single, 10000, 50, 128) }
func BenchmarkHeadTwoEpochsGenBallSimD3(b *testing.B)         { benchHead(b, genBall, 12500, 500, 3) }

// BenchmarkRefresh times what follows every head epoch: projecting the fit
// and validation splits through the head and preparing the generalized
// ball's logarithms again.
func BenchmarkRefreshGenBallN10000K50D128(b *testing.B) {
	const n, k, d = 10000, 50, 128
	rng := rand.New(rand.NewPCG(1, 1))
	t := &trainer{ctx: context.Background(), g: genBall(d), h: head.Identity(d, d), fit: sim.Gauss(rng, n, k, d), val: sim.Unseparated(sim.Gauss(rng, n/10, k, d)),
		validator: &validator{}}
	for b.Loop() {
		if err := t.refresh(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*k*2*d*11/10), "ns/element")
}

// BenchmarkPrepareGenBallN10000K50D128 times making a split's rows before
// epoch 0 (prepareSplit): each anchor's differences, then the generalized
// ball's logarithms — what a fit of 150 000 CLIP embeddings spent two
// minutes on before its first epoch.
func BenchmarkPrepareGenBallN10000K50D128(b *testing.B) {
	const n, k, d = 10000, 50, 128
	rng := rand.New(rand.NewPCG(1, 1))
	fit := sim.Gauss(rng, n, k, d)
	g := genBall(d)
	for b.Loop() {
		if _, err := prepareSplit(context.Background(), g, fit, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*k*2*d), "ns/element")
}
