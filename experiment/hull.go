package experiment

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/hull"
	"github.com/ccsets/ccs/internal/parallel"
	"github.com/ccsets/ccs/objective"
)

// HullConfig configures the convex-hull comparison (the paper's Table
// "hull-hib"): per test anchor, the hull of HullViews positives in a
// PCADim-dimensional PCA space, shrunk about its centroid until Level of
// those positives are inside, covering HeldOut further positives; against
// Single (Neg) and Generalized (Neg) calibrated with HullViews positives per
// calibration anchor and tested on the HeldOut ones.
type HullConfig struct {
	RealConfig
	HullViews, HeldOut int     // 0 means 25 and 50
	PCADim             int     // 0 means 8
	Level              float64 // 0 means 0.95
	Anchors            int     // test anchors whose hull is measured; 0 means 1000
}

// HullTable is the comparison's result: coverage of held-out positives.
type HullTable struct {
	Title  string       `json:"title"`
	Config string       `json:"config"`
	Hull   eval.Summary `json:"hull_coverage"` // percent
	// Failed counts held-out views whose gauge programme rounding defeated
	// (left out of the hull's coverage).
	Failed int   `json:"failed_programmes"`
	Rows   []Row `json:"rows"` // the CCS rows (coverage of the held-out positives)
}

// Hull runs the comparison. views holds the test split's anchors with at
// least HullViews+HeldOut views each; e.Train the training anchors (PCA,
// fit and validation).
func Hull(ctx context.Context, e *Embedded, views *bundle.Bundle, cfg HullConfig, progress func(done, total int, what string)) (*HullTable, error) {
	cfg.HullViews, cfg.HeldOut, cfg.PCADim = cmp.Or(cfg.HullViews, 25), cmp.Or(cfg.HeldOut, 50), cmp.Or(cfg.PCADim, 8)
	cfg.Level, cfg.Anchors = cmp.Or(cfg.Level, 0.95), cmp.Or(cfg.Anchors, 1000)
	if views.K < cfg.HullViews+cfg.HeldOut {
		return nil, fmt.Errorf("experiment: convex hull: %d views per test anchor, want %d + %d", views.K, cfg.HullViews, cfg.HeldOut)
	}
	proj, err := pca(e.Train.Anchors, e.Train.N, e.Train.D, cfg.PCADim)
	if err != nil {
		return nil, err
	}
	// The CCS rows through the shared runner: fit and validation as in
	// Real, calibration on HullViews views, test on the HeldOut others.
	methods := []Method{Learned(geometry.KindNorm, objective.Neg), Learned(geometry.KindGenBall, objective.Neg)}
	cfg.realDefaults(e.Train.K)
	rc := cfg.RealConfig
	var hullCov []float64
	failed := 0
	results, err := runTable(ctx, rc.Config, "hull-"+e.Encoder, methods, func(seed uint64, trains bool, workers int) (*Splits, error) {
		sp, err := realSplits(e, rc, seed, trains, false, workers)
		if err != nil {
			return nil, err
		}
		_, test := seedOrder(seed, views.N)
		half := views.N / 2
		sp.Cal = viewRange(views, test[:half], 0, cfg.HullViews)
		sp.Test = viewRange(views, test[half:], cfg.HullViews, cfg.HullViews+cfg.HeldOut)
		return sp, nil
	}, progress)
	if err != nil {
		return nil, err
	}
	for seed := range cfg.Seeds {
		_, order := seedOrder(uint64(seed), views.N)
		test := order[views.N/2:]
		c, nf, err := hullCoverage(views, test[:min(cfg.Anchors, len(test))], proj, cfg)
		if err != nil {
			return nil, err
		}
		hullCov = append(hullCov, 100*c)
		failed += nf
	}
	t := &HullTable{
		Title: "Fashion-MNIST, " + e.Encoder + ": coverage of held-out positives",
		Config: fmt.Sprintf("convex hull of %d views in a %d-D PCA space (fitted on the %d training anchors), shrunk to %.0f%% of them, %d test anchors; CCS calibrated with %d views per anchor (one per anchor); coverage of %d held-out views; %s",
			cfg.HullViews, cfg.PCADim, e.Train.N, 100*cfg.Level, min(cfg.Anchors, views.N-views.N/2), cfg.HullViews, cfg.HeldOut, seedRange(cfg.Seeds)),
		Hull:   eval.Summarize(hullCov),
		Failed: failed,
		Rows:   rows(methods, results),
	}
	return t, nil
}

// viewRange returns anchors idx of b with only their views lo..hi−1 as
// positives and no negatives.
func viewRange(b *bundle.Bundle, idx []int, lo, hi int) *bundle.Bundle {
	s := &bundle.Bundle{N: len(idx), K: hi - lo, D: b.D, Anchors: make([]float32, 0, len(idx)*b.D),
		Positives: make([]float32, 0, len(idx)*(hi-lo)*b.D)}
	for _, i := range idx {
		s.Anchors = append(s.Anchors, b.Anchor(i)...)
		s.Positives = append(s.Positives, b.Positives[(i*b.K+lo)*b.D:(i*b.K+hi)*b.D]...)
	}
	return s
}

// pca returns the map to the first k principal components of x (n rows of
// d): (x − mean)·V_k.
func pca(x []float32, n, d, k int) (func(dst []float64, row []float32), error) {
	data := make([]float64, len(x))
	for i, v := range x {
		data[i] = float64(v)
	}
	var pc stat.PC
	if !pc.PrincipalComponents(mat.NewDense(n, d, data), nil) {
		return nil, fmt.Errorf("experiment: convex hull: principal components of %d×%d features failed", n, d)
	}
	var vecs mat.Dense
	pc.VectorsTo(&vecs)
	mean := make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += data[i*d+j] / float64(n)
		}
	}
	return func(dst []float64, row []float32) {
		for c := range k {
			var s float64
			for j := range d {
				s += (float64(row[j]) - mean[j]) * vecs.At(j, c)
			}
			dst[c] = s
		}
	}, nil
}

// hullCoverage is the mean over anchors idx of the fraction of held-out
// views inside the shrunk hull of the first HullViews views.
func hullCoverage(b *bundle.Bundle, idx []int, proj func([]float64, []float32), cfg HullConfig) (float64, int, error) {
	k := cfg.PCADim
	cov := make([]float64, len(idx))
	errs := make([]error, len(idx))
	failed := make([]int, len(idx))
	parallel.For(len(idx), 8, cfg.Workers, func(_, lo, hi int) {
		for a := lo; a < hi; a++ {
			i := idx[a]
			pts := make([]float64, cfg.HullViews*k)
			for v := range cfg.HullViews {
				proj(pts[v*k:(v+1)*k], b.Positives[(i*b.K+v)*b.D:(i*b.K+v+1)*b.D])
			}
			h, err := hull.New(pts, cfg.HullViews, k)
			if err != nil {
				errs[a] = err
				return
			}
			s, err := h.Shrink(cfg.Level)
			if err != nil {
				errs[a] = err
				return
			}
			q := make([]float64, k)
			in, n := 0, 0
			for v := cfg.HullViews; v < cfg.HullViews+cfg.HeldOut; v++ {
				proj(q, b.Positives[(i*b.K+v)*b.D:(i*b.K+v+1)*b.D])
				g, err := h.Gauge(q)
				if err != nil {
					failed[a]++ // rounding defeated the programme: left out, and counted
					continue
				}
				n++
				if g <= s {
					in++
				}
			}
			if n > 0 {
				cov[a] = float64(in) / float64(n)
			}
		}
	})
	var sum float64
	nf := 0
	for a := range cov {
		if errs[a] != nil {
			return 0, 0, errs[a]
		}
		sum += cov[a]
		nf += failed[a]
	}
	return sum / float64(len(cov)), nf, nil
}

// WriteText renders the comparison in the paper's layout.
func (t *HullTable) WriteText(w io.Writer) error {
	rows := [][]string{{"Method", "Coverage"}, {"Convex Hull", meanPM("%.1f", "%.1f", t.Hull) + "%"}}
	for _, r := range t.Rows {
		rows = append(rows, []string{r.Method, meanPM("%.1f", "%.1f", r.Coverage) + "%"})
	}
	fmt.Fprintf(w, "%s: %s\n\n%s", t.Title, t.Config, Grid(rows))
	if t.Failed > 0 {
		fmt.Fprintf(w, "\n(%d held-out views left out of the hull's coverage: rounding defeated their programmes)\n", t.Failed)
	}
	return nil
}
