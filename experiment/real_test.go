package experiment

import (
	"bytes"
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/train"
)

// views returns a labelled bundle of n anchors in d dimensions with k
// positives each, spread around class centres: what an encoder and its
// augmented views give, in miniature.
func views(seed uint64, n, k, d int) *bundle.Bundle {
	rng := rand.New(rand.NewPCG(seed, 9))
	b := &bundle.Bundle{N: n, K: k, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*k*d),
		Labels: make([]int64, n), Index: make([]int64, n)}
	for i := range n {
		c := i % 4
		b.Labels[i], b.Index[i] = int64(c), int64(i)
		for j := range d {
			centre := 0.0
			if j == c {
				centre = 3
			}
			b.Anchors[i*d+j] = float32(centre + rng.NormFloat64())
		}
		for v := range k {
			for j := range d {
				b.Positives[(i*k+v)*d+j] = b.Anchors[i*d+j] + float32(0.3*rng.NormFloat64())
			}
		}
	}
	return b
}

// TestRealAndHull runs the real-image tables on miniature embeddings: every
// row's coverage is near 1−α, the class-consistent columns are filled, the
// hull covers far less than its level, and the tables do not depend on the
// number of workers.
func TestRealAndHull(t *testing.T) {
	t.Parallel()
	e := &Embedded{Encoder: "toy", Train: views(1, 300, 6, 5), Test: views(2, 800, 6, 5)}
	cfg := RealConfig{Config: Config{Seeds: 2, Train: train.Config{MaxEpochs: 3}, Workers: 1}}
	methods := append(Baselines(), Learned(geometry.KindNorm, objective.Neg), Learned(geometry.KindGenBall, objective.Neg),
		LearnedInfoNCE(geometry.KindNorm, objective.Vol))
	a, err := Real(context.Background(), e, cfg, methods, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range a.Rows {
		if r.Coverage.Mean < 90 || r.Coverage.Mean > 99 || r.ClassCoverage == nil {
			t.Errorf("%s: coverage %.1f%%, class coverage %v", r.Method, r.Coverage.Mean, r.ClassCoverage)
		}
	}
	cfg.Workers = 3
	b, err := Real(context.Background(), e, cfg, methods, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("1 and 3 workers gave different tables")
	}
	var buf bytes.Buffer
	a.WriteText(&buf)
	if !strings.Contains(buf.String(), "Same-class coverage") {
		t.Errorf("the table has no class-consistent columns:\n%s", buf.String())
	}

	hv := views(2, 800, 12, 5) // the test anchors again, with 12 views
	hv.Anchors = e.Test.Anchors
	ht, err := Hull(context.Background(), e, hv, HullConfig{RealConfig: cfg, HullViews: 6, HeldOut: 6, PCADim: 3, Anchors: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hull coverage %.1f%%, CCS %.1f%% and %.1f%%", ht.Hull.Mean, ht.Rows[0].Coverage.Mean, ht.Rows[1].Coverage.Mean)
	if ht.Hull.Mean > 60 || ht.Rows[0].Coverage.Mean < 90 || ht.Rows[1].Coverage.Mean < 90 {
		t.Errorf("hull %.1f%%, CCS %.1f%% / %.1f%%: want a hull far below its 95%% level and CCS near it",
			ht.Hull.Mean, ht.Rows[0].Coverage.Mean, ht.Rows[1].Coverage.Mean)
	}
}
