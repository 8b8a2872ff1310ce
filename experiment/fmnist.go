package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/train"
)

// Embedded is one encoder's embeddings of the real-image protocol (paper
// §5): the anchors drawn from the training split (the paper: a random 20%)
// and the whole test split, each anchor with K augmented views; negatives
// are drawn per seed within each split.
type Embedded struct {
	Encoder     string         // name for the table
	Train, Test *bundle.Bundle // anchors with their views, labels and index
}

// RealConfig configures a real-image table. Zero fields take the paper's
// values: 6 seeds, the embedding recipe (train.EmbeddingRecipe), k from the
// bundles.
type RealConfig struct {
	Config
	FitFraction float64 // share of the training anchors that fit (the rest validate); 0 means 0.8
	KNeg        int     // negatives per anchor; 0 means K
}

// RealMethods are the paper's Table 2 rows: the two baselines, the six
// learned rows and the six with the InfoNCE head.
func RealMethods() []Method { return append(SimMethods(), InfoNCERows()...) }

// Real runs methods on one encoder's embeddings over cfg.Seeds seeds. Seed s
// splits the training anchors into fit and validation (FitFraction) and the
// test anchors into calibration and test halves, draws each split's
// negatives among its own anchors, and builds the class test split: the
// test half's anchors with K positives of their own class and KNeg
// negatives of other classes, all from the test half (the class-consistent
// coverage transfer: sets calibrated with augmentation positives, coverage
// measured on same-class positives).
func Real(ctx context.Context, e *Embedded, cfg RealConfig, methods []Method, progress func(done, total int, what string)) (*Table, error) {
	cfg.realDefaults(e.Test.K)
	// The paper's figures are for other data (CIFAR100, STL10); the README
	// sets them side by side.
	methods = slices.Clone(methods)
	for i := range methods {
		methods[i].Paper = nil
	}
	if !(cfg.FitFraction > 0 && cfg.FitFraction < 1) {
		return nil, fmt.Errorf("experiment: fit fraction %v, want 0 < f < 1", cfg.FitFraction)
	}
	if e.Test.Labels == nil {
		return nil, fmt.Errorf("experiment: %s: the test bundle has no labels, needed for the class-consistent coverage", e.Encoder)
	}
	results, err := runTable(ctx, cfg.Config, "fmnist-"+e.Encoder, methods, func(seed uint64, trains bool, workers int) (*Splits, error) {
		return realSplits(e, cfg, seed, trains, true, workers)
	}, progress)
	if err != nil {
		return nil, err
	}
	tc := cfg.Train.WithDefaults()
	t := &Table{
		Title: "Fashion-MNIST, " + e.Encoder,
		Config: fmt.Sprintf("%d training anchors (fit %.0f%%, the rest validation), %d test anchors halved into calibration and test, k=%d augmented views, %d negatives, α=%v, %s, calibration %v; %s",
			e.Train.N, 100*cfg.FitFraction, e.Test.N, cfg.K, cfg.KNeg, cfg.Alpha, seedRange(cfg.Seeds), cfg.calibrationName(),
			recipeLine(tc, recipeShown{optimiser: true, objective: true})),
		Rows: rows(methods, results),
	}
	return t, nil
}

// realDefaults fills the real-image protocol's defaults: 6 seeds (the
// paper's), 80% of the training anchors to fit, the paper's embedding
// recipe, k from the bundles and as many negatives.
func (cfg *RealConfig) realDefaults(k int) {
	if cfg.Seeds == 0 {
		cfg.Seeds = 6
	}
	if cfg.FitFraction == 0 {
		cfg.FitFraction = 0.8
	}
	if cfg.Train.SGD == (train.SGD{}) {
		cfg.Train.SGD = train.EmbeddingRecipe.SGD
	}
	cfg.K = k
	cfg.Config.defaults()
	if cfg.KNeg == 0 {
		cfg.KNeg = cfg.K
	}
}

// seedOrder returns seed's generator of the real-image splits and its
// first draw, the order of the n test anchors (calibration: the first half).
func seedOrder(seed uint64, n int) (*rand.Rand, []int) {
	rng := rand.New(rand.NewPCG(seed, 0x7265616c)) // "real"
	return rng, rng.Perm(n)
}

// realSplits builds seed's splits from the embeddings; without testSplits
// only the fit and validation splits (the caller makes its own test halves
// from seedOrder).
func realSplits(e *Embedded, cfg RealConfig, seed uint64, trains, testSplits bool, workers int) (*Splits, error) {
	rng, test := seedOrder(seed, e.Test.N)
	sp := &Splits{Workers: workers, Rows: new(train.Rows)}
	half := e.Test.N / 2
	var err error
	if testSplits {
		if sp.Cal, err = withNegatives(e.Test, test[:half], cfg.KNeg, seed, 1); err != nil {
			return nil, fmt.Errorf("calibration split: %w", err)
		}
		if sp.Test, err = withNegatives(e.Test, test[half:], cfg.KNeg, seed, 2); err != nil {
			return nil, fmt.Errorf("test split: %w", err)
		}
		// The class test split: same-class positives from the test half.
		sp.ClassTest, err = bundle.FromLabels(e.Test.Anchors, e.Test.D, e.Test.Labels, slices.Sorted(slices.Values(test[half:])), cfg.K,
			rand.New(rand.NewPCG(seed, 0x636c617373))) // "class"
		if err != nil {
			return nil, fmt.Errorf("class test split: %w", err)
		}
	}
	if trains {
		tr := rng.Perm(e.Train.N)
		nf := int(cfg.FitFraction * float64(e.Train.N))
		if sp.Fit, err = withNegatives(e.Train, tr[:nf], cfg.KNeg, seed, 3); err != nil {
			return nil, fmt.Errorf("fit split: %w", err)
		}
		if sp.Val, err = withNegatives(e.Train, tr[nf:], cfg.KNeg, seed, 4); err != nil {
			return nil, fmt.Errorf("validation split: %w", err)
		}
	}
	return sp, nil
}

// withNegatives returns the anchors idx of b with kneg negatives each drawn
// among those anchors only (never the anchor itself).
func withNegatives(b *bundle.Bundle, idx []int, kneg int, seed, stream uint64) (*bundle.Bundle, error) {
	if len(idx) < kneg+1 {
		return nil, fmt.Errorf("experiment: %d anchors, too few for %d negatives each", len(idx), kneg)
	}
	s, err := b.Subset(idx).WithNegatives(kneg, seed*8+stream)
	if err != nil {
		return nil, err
	}
	return s, s.Validate()
}
