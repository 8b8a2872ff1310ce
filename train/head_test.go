package train

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/gradcheck"
	"github.com/ccsets/ccs/objective"
)

// TestEmbeddingGrads checks the gradient of the head's loss — set objective
// on the projected differences plus λ·InfoNCE — with respect to every
// projected embedding, against central differences, for both learnable
// families and every objective. With head.TestAddGrads (the linear layer's
// backward pass) and head.TestLogAbsDet it covers the whole composite.
func TestEmbeddingGrads(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(21, 1))
	const B, K, Kn, d = 4, 5, 6, 3
	gb, _ := geometry.NewGenBall([]float64{1.2, 0.8, 1.1}, []float64{1.6, 2.3, 1.2})
	m := []float64{1.1, 0.2, -0.1, 0.3, 0.9, 0.2, 0, -0.2, 1.3}
	nm, _ := geometry.NewNorm(d, m, 1.7)
	for _, g := range []geometry.Learnable{gb, nm} {
		for _, o := range []objective.Objective{objective.Neg, objective.Vol, objective.NegVol} {
			cfg := Config{Objective: objective.Config{Objective: o, Lambda: 0.3}, InfoNCE: &InfoNCE{Weight: 0.7, Tau: 0.2}}.WithDefaults()
			ev, err := objective.New(cfg.Objective)
			if err != nil {
				t.Fatal(err)
			}
			tr := &trainer{g: g, fit: &bundle.Bundle{K: K, KNeg: Kn, D: d}, cfg: cfg, ev: ev}
			grid := func(n int) []float32 {
				x := make([]float32, n)
				for i := range x {
					x[i] = gradcheck.OnGrid(rng.NormFloat64())
				}
				return x
			}
			za, zp, zn := grid(B*d), grid(B*K*d), grid(B*Kn*d)
			loss := func() float64 {
				tr.hb.za, tr.hb.zp, tr.hb.zn = za, zp, zn
				v, nce, err := tr.embeddingGrads(B)
				if err != nil {
					t.Fatal(err)
				}
				return v.Loss + cfg.InfoNCE.Weight*nce
			}
			loss()
			ga, gp, gn := slices.Clone(tr.hb.ga), slices.Clone(tr.hb.gp), slices.Clone(tr.hb.gn)
			for _, tc := range []struct {
				name string
				z    *[]float32
				g    []float64
			}{{"anchors", &za, ga}, {"positives", &zp, gp}, {"negatives", &zn, gn}} {
				orig := *tc.z
				f := func(x []float32) float64 {
					*tc.z = x
					defer func() { *tc.z = orig }()
					return loss()
				}
				gradcheck.CheckFloat32(t, g.Kind().String()+" "+o.String()+" "+tc.name, f, tc.g, orig, 1e-4, 1e-2)
			}
		}
	}
}

// clusters returns labelled points in d dimensions whose class is carried by
// the first two coordinates (unit-circle directions) and drowned by strong
// isotropic noise in the others: the identity head's cosine similarities
// barely see the classes, a trained head can.
func clusters(seed uint64, perClass, classes, d int) ([]float32, []int64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	n := perClass * classes
	x := make([]float32, n*d)
	lab := make([]int64, n)
	for i := range n {
		c := i % classes
		lab[i] = int64(c)
		ang := 2 * math.Pi * float64(c) / float64(classes)
		x[i*d] = float32(2*math.Cos(ang) + 0.3*rng.NormFloat64())
		x[i*d+1] = float32(2*math.Sin(ang) + 0.3*rng.NormFloat64())
		for j := 2; j < d; j++ {
			x[i*d+j] = float32(2 * rng.NormFloat64())
		}
	}
	return x, lab
}

// cosineGap is mean cos(anchor, positive) − mean cos(anchor, negative) of
// the bundle's embeddings under the head.
func cosineGap(t *testing.T, h *head.Linear, b *bundle.Bundle) float64 {
	t.Helper()
	p, err := h.Project(b)
	if err != nil {
		t.Fatal(err)
	}
	cos := func(u, v []float32) float64 {
		var uv, uu, vv float64
		for j := range u {
			uv += float64(u[j]) * float64(v[j])
			uu += float64(u[j]) * float64(u[j])
			vv += float64(v[j]) * float64(v[j])
		}
		return uv / math.Sqrt(uu*vv)
	}
	var pos, neg float64
	nb := p.NegativeRows(nil, 0)
	for i := range p.N {
		a := p.Anchor(i)
		for j := range p.K {
			pos += cos(a, p.Positives[(i*p.K+j)*p.D:(i*p.K+j+1)*p.D])
		}
		p.NegativeRows(nb, i)
		for j := range p.KNeg {
			neg += cos(a, nb[j*p.D:(j+1)*p.D])
		}
	}
	return pos/float64(p.N*p.K) - neg/float64(p.N*p.KNeg)
}

func labelled(t *testing.T, seed uint64, perClass, d, k int) *bundle.Bundle {
	t.Helper()
	x, lab := clusters(seed, perClass, 4, d)
	idx := make([]int, len(lab))
	for i := range idx {
		idx[i] = i
	}
	b, err := bundle.FromLabels(x, d, lab, idx, k, rand.New(rand.NewPCG(seed, 4)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInfoNCEHeadSeparates: joint training with the InfoNCE head pulls
// positives closer than negatives in cosine similarity on held-out
// clusters, and the run is deterministic across goroutine counts.
func TestInfoNCEHeadSeparates(t *testing.T) {
	t.Parallel()
	const d = 6
	fit, val := labelled(t, 1, 100, d, 10), labelled(t, 2, 60, d, 10)
	before := cosineGap(t, head.Identity(d, d), val)
	var ref []float64
	for _, w := range []int{1, 2} {
		h := head.Identity(d, d)
		g := geometry.UnitGenBall(d, 2)
		cfg := Config{Objective: objective.Config{Objective: objective.Neg}, InfoNCE: &InfoNCE{}, MaxEpochs: 12, Patience: 12,
			BatchSize: 64, SGD: EmbeddingRecipe.SGD, Seed: 5, Workers: w}
		res, err := TrainHead(context.Background(), g, h, fit, val, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.HeadEpochs, []int{2, 4, 6, 8, 10, 12}) || len(res.InfoNCEHist) != 6 {
			t.Fatalf("head epochs %v (InfoNCE history %v), want the even epochs", res.HeadEpochs, res.InfoNCEHist)
		}
		if res.InfoNCEHist[5] >= res.InfoNCEHist[0] {
			t.Errorf("InfoNCE loss did not fall: %v", res.InfoNCEHist)
		}
		// The last head epoch's gap, measured on the head at the end of
		// training (the best checkpoint may be earlier).
		after := cosineGap(t, h, val)
		if w == 1 {
			t.Logf("cosine gap on validation clusters: identity head %.3f, trained head %.3f; validation exclusion %v", before, after, res.ValHistory)
			if !(after > before+0.1) {
				t.Errorf("cosine gap %.3f → %.3f: InfoNCE training did not separate positives from negatives", before, after)
			}
			ref = append(h.Params(nil), g.Params(nil)...)
		} else if got := append(h.Params(nil), g.Params(nil)...); !slices.Equal(got, ref) {
			t.Errorf("%d goroutines: head and set differ from 1 goroutine", w)
		}
	}
}

func TestTrainHeadErrors(t *testing.T) {
	t.Parallel()
	fit, val := labelled(t, 1, 30, 4, 5), labelled(t, 2, 30, 4, 5)
	cfg := Config{Objective: objective.Config{Objective: objective.Neg}, InfoNCE: &InfoNCE{}, MaxEpochs: 2}
	g := func() geometry.Learnable { return geometry.UnitGenBall(4, 2) }
	if _, err := TrainHead(context.Background(), g(), nil, fit, val, cfg, nil); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("InfoNCE without a head: error %v", err)
	}
	if _, err := TrainHead(context.Background(), g(), head.Identity(4, 3), fit, val, cfg, nil); err == nil || !strings.Contains(err.Error(), "outputs 3 dimensions") {
		t.Errorf("head/geometry mismatch: error %v", err)
	}
	h := head.Identity(4, 4)
	h.W[5] = math.NaN()
	if _, err := TrainHead(context.Background(), g(), h, fit, val, cfg, nil); err == nil || !strings.Contains(err.Error(), "w[1][1] = NaN") {
		t.Errorf("NaN head: error %v", err)
	}
	// A head that maps an embedding to zero: InfoNCE has no direction.
	h = head.Identity(4, 4)
	for j := range 4 {
		fit.Anchors[3*4+j] = 0
	}
	_, err := TrainHead(context.Background(), g(), h, fit, val, cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "projected anchor 3 is zero") {
		t.Errorf("zero embedding: error %v", err)
	}
	if errors.Is(err, objective.ErrNonFinite) {
		t.Errorf("zero embedding reported as a non-finite objective: %v", err)
	}
}
