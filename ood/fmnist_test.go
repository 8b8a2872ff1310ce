package ood

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/encoder"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/images"
)

// embedImages returns the supervised encoder's features of the images idx
// of s (all of them when idx is nil).
func embedImages(t *testing.T, s *images.Set, idx []int) []float32 {
	t.Helper()
	if idx != nil {
		sub := &images.Set{Name: s.Name, N: len(idx), H: s.H, W: s.W}
		for _, i := range idx {
			sub.Pixels = append(sub.Pixels, s.Image(i)...)
		}
		s = sub
	}
	m, err := encoder.Open(filepath.Join("..", "encoders", "fmnist-supervised.onnx"), encoder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out, err := m.Embed(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out.Features
}

// TestGuaranteeFashionMNIST is the conformal OOD test's guarantee on real
// embeddings: the supervised encoder's features of the 10 000
// Fashion-MNIST test images, scored by the per-input CCS score (the ℓ2
// ball, the nearest of 2 000 training images as the pool). Over 1 000
// seeded resplits into n calibration inputs and the rest (held-out ID),
// the mean false-alarm rate is at most α_ood up to Monte-Carlo error, and
// with the calibration-conditional correction the share of resplits whose
// false-alarm rate exceeds α_ood is at most δ. Then the drift monitor:
// Fashion-MNIST streams raise its alarm with probability at most δ, and a
// stream that switches to MNIST digits raises it within a few inputs.
func TestGuaranteeFashionMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds 13 000 images (about a minute)")
	}
	train, err := images.FashionMNIST("", "train")
	if err != nil {
		t.Fatal(err)
	}
	test, err := images.FashionMNIST("", "test")
	if err != nil {
		t.Fatal(err)
	}
	digits, err := images.Load("mnist", 0)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(16, 16))
	pool := embedImages(t, train, rng.Perm(train.N)[:2000])
	id := embedImages(t, test, nil)
	mnist := embedImages(t, digits, rng.Perm(digits.N)[:1000])
	const d = 128
	if len(id) != test.N*d {
		t.Fatalf("%d features for %d images, want dimension %d", len(id), test.N, d)
	}
	set := &conformal.Set{Geometry: geometry.Ball{D: d}, Threshold: 1, Alpha: 0.05,
		Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 100, Rank: 96}}
	near, err := NewNearest(set, pool, 1)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := near.Scores(id)
	if err != nil {
		t.Fatal(err)
	}
	ood, err := near.Scores(mnist)
	if err != nil {
		t.Fatal(err)
	}

	const resplits, delta = 1000, 0.1
	for _, n := range []int{99, 999} {
		for _, alpha := range []float64{0.01, 0.05, 0.1} {
			for _, tc := range []Test{{Alpha: alpha}, {Alpha: alpha, Delta: delta}, {Alpha: alpha, Delta: delta, Simultaneous: true}} {
				if tc.Check(n) != nil {
					continue // α_ood below what n allows (with the correction)
				}
				var sum float64
				exceed := 0
				for r := range resplits {
					perm := rand.New(rand.NewPCG(uint64(n), uint64(r))).Perm(len(scores))
					cal := make([]float64, n)
					for i, j := range perm[:n] {
						cal[i] = scores[j]
					}
					c, err := NewCalibration(cal)
					if err != nil {
						t.Fatal(err)
					}
					held := make([]float64, 0, len(scores)-n)
					for _, j := range perm[n:] {
						held = append(held, scores[j])
					}
					far := rate(tc.Flags(tc.PValues(c, held)))
					sum += far
					if far > alpha {
						exceed++
					}
				}
				mean := sum / resplits
				share := float64(exceed) / resplits
				// The false-alarm rate of one resplit has standard
				// deviation ≈ √(α(1−α)/(n+2)) over calibration draws.
				mc := 3 * math.Sqrt(alpha*(1-alpha)/float64(n+2)/resplits)
				t.Logf("n = %3d, %v: mean false-alarm rate %.4f, share of resplits above α_ood %.3f", n, tc, mean, share)
				if mean > alpha+mc {
					t.Errorf("n = %d, %v: mean false-alarm rate %.4f > α_ood + %.4f", n, tc, mean, mc)
				}
				if tc.Delta > 0 && share > delta+3*math.Sqrt(delta*(1-delta)/resplits) {
					t.Errorf("n = %d, %v: %.3f of resplits exceed α_ood, want ≤ δ", n, tc, share)
				}
			}
		}
	}

	// The drift monitor, calibrated on 999 inputs; streams of 1 000 more.
	const streams, length, mdelta = 200, 1000, 0.05
	alarms := 0
	var after []int
	for s := range streams {
		perm := rand.New(rand.NewPCG(99, uint64(s))).Perm(len(scores))
		cal := make([]float64, 999)
		for i, j := range perm[:999] {
			cal[i] = scores[j]
		}
		c, _ := NewCalibration(cal)
		m, err := NewMonitor(c, MonitorOptions{Delta: mdelta, Seed: uint64(s)})
		if err != nil {
			t.Fatal(err)
		}
		stream := make([]float64, length)
		for i, j := range perm[999 : 999+length] {
			stream[i] = scores[j]
		}
		if _, err := m.Observe(stream); err != nil {
			t.Fatal(err)
		}
		if m.State().Alarm {
			alarms++
		}
		if s < 20 { // the same calibration, a stream switching to MNIST after 500
			m.Reset()
			m.Observe(stream[:500])
			if m.State().Alarm {
				continue
			}
			o := slices.Clone(ood)
			rand.New(rand.NewPCG(7, uint64(s))).Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
			m.Observe(o)
			st := m.State()
			if !st.Alarm {
				t.Errorf("stream %d: no alarm after %d MNIST digits (martingale max %.3g)", s, len(o), st.Max)
				continue
			}
			after = append(after, st.AlarmAt-500)
		}
	}
	share := float64(alarms) / streams
	slices.Sort(after)
	t.Logf("monitor: %d of %d Fashion-MNIST streams of %d raised the alarm at δ = %v; after a switch to MNIST it rang after %v digits (sorted)",
		alarms, streams, length, mdelta, after)
	if share > mdelta+3*math.Sqrt(mdelta*(1-mdelta)/streams) {
		t.Errorf("%.3f of in-distribution streams raised the alarm, want ≤ δ = %v", share, mdelta)
	}
	if len(after) > 0 && after[len(after)/2] > 20 {
		t.Errorf("median delay after the switch to MNIST %d inputs, want ≤ 20", after[len(after)/2])
	}
}

// rate is the share of true flags.
func rate(f []bool) float64 {
	n := 0
	for _, b := range f {
		if b {
			n++
		}
	}
	return float64(n) / float64(len(f))
}
