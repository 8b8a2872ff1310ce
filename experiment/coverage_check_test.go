package experiment

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/sim"
)

// TestCheckCoverageTooFew: resplits whose calibration share is too small
// for the set's α say which share would do, or that the bundle is too
// small even whole.
func TestCheckCoverageTooFew(t *testing.T) {
	t.Parallel()
	b := sim.Gauss(rand.New(rand.NewPCG(5, 50)), 300, 2, 3)
	for _, c := range []struct {
		alpha float64
		want  string
	}{
		{0.01, "a calibration fraction of 0.34 (-cal-fraction; cal_fraction= in Python) gives it 102"},
		{0.001, "the bundle's 300 anchors are too few at this α even all together"},
	} {
		s := &conformal.Set{Geometry: geometry.Ball{D: 3}, Threshold: 1, Alpha: c.alpha, Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 2000, Rank: 1990}}
		if _, _, err := CheckCoverage(context.Background(), s, b, 10, 0.2, 1, false, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("α = %v: %v, want %q", c.alpha, err, c.want)
		}
	}
}

// TestCoverageCheckClassNotes: a class-conditional check explains the
// class means the guarantee seems to contradict — above the class's band
// where its thresholds tie, below 1 − α within or beyond the resplits'
// Monte-Carlo error — and says nothing of the others.
func TestCoverageCheckClassNotes(t *testing.T) {
	t.Parallel()
	class := func(label int64, mean, std float64, tied float64, band bool) eval.ClassResplit {
		c := eval.ClassResplit{Label: label, NCal: 150, NTest: 150, Coverage: eval.Summary{Mean: mean, Std: std, N: 500}, TiedShare: tied}
		if band {
			c.Band = [2]float64{0.9, 0.9 + 1.0/151}
		}
		return c
	}
	c := &CoverageCheck{ResplitResult: eval.ResplitResult{Alpha: 0.1, Mode: conformal.Class.String()}, LabelNames: []string{"alpha", "bravo", "delta", "echo", "golf"},
		Classes: []eval.ClassResplit{
			class(0, 0.9020, 0.02, 0, true),    // in its band: no note
			class(1, 0.9414, 0.02, 1, true),    // above it, tied
			class(2, 0.8965, 0.03, 0, true),    // 2.6 standard errors (0.134%) below
			class(3, 0.8900, 0.02, 0, true),    // 11 below
			class(4, 0.9500, 0.02, 0.5, false), // PAC: no band, no note
		}}
	// A class of 10 calibration anchors, its ties lifting its mean within
	// its wide band [90%, 99.09%] above the 90.91% scores without ties
	// give; named with its own names too.
	small := class(5, 0.9220, 0.02, 0.15, false)
	small.NCal, small.Band = 10, [2]float64{0.9, 0.9 + 1.0/11}
	c.Classes = append(c.Classes, small)
	// A class above its band with ties in a few resplits, which can lift
	// its mean by 0.05 points at most: not the ties' (a reviewer's
	// resplits, 1.7 standard errors), and one of 28, beyond them.
	few := class(6, 0.9395, 0.13, 2.0/300, false)
	few.NCal, few.Band = 28, [2]float64{0.9, 0.9 + 1.0/29}
	far := class(7, 0.9500, 0.02, 2.0/300, false)
	far.NCal, far.Band = 28, [2]float64{0.9, 0.9 + 1.0/29}
	c.Classes = append(c.Classes, few, far)
	c.LabelNames = append(c.LabelNames, "hotel", "india", "juliet")
	var b strings.Builder
	if err := c.WriteClasses(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		`class "bravo": mean 94.14% above its band [90.00%, 90.66%] (n = 150), which holds for scores without ties: 100.00% of its resplits' thresholds tie`,
		`class "delta": mean 89.65%, 2.6 standard errors (0.13% each, over 500 resplits) below 1 − α: within the resplits' Monte-Carlo error`,
		`class "echo": mean 89.00%, 11.2 standard errors (0.09% each, over 500 resplits) below 1 − α: beyond the resplits' Monte-Carlo error`,
		`class "hotel": mean 92.20% above the 90.91% scores without ties give (n = 10; its band [90.00%, 99.09%]): 15.00% of its resplits' thresholds tie`,
		`class "india": mean 93.95% above its band [90.00%, 93.45%] (n = 28), 1.5 standard errors (0.58% each, over 500 resplits) above the 93.10% scores without ties give: within the resplits' Monte-Carlo error (more resplits, -resplits, narrow it; of 8 classes, some stand this far out by chance); ties in 0.67% of its resplits can lift it by 0.05% at most`,
		`class "juliet": mean 95.00% above its band [90.00%, 93.45%] (n = 28), 21.2 standard errors (0.09% each, over 500 resplits) above the 93.10% scores without ties give: beyond the resplits' Monte-Carlo error; ties in 0.67% of its resplits can lift it by 0.05% at most`,
		"each class's mean coverage is guaranteed ≥ 1 − α.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"alpha":`) || strings.Contains(got, `"golf":`) {
		t.Errorf("a note for a class the guarantee does not contradict:\n%s", got)
	}
	// PAC per class: the footnote states that guarantee, not the mean's.
	c.Delta = 0.1
	b.Reset()
	if err := c.WriteClasses(&b); err != nil || !strings.Contains(b.String(), "PAC per class: at most δ = 10.00% of calibration draws leave a class's true coverage below 1 − α") ||
		strings.Contains(b.String(), "mean coverage is guaranteed") {
		t.Errorf("PAC per class: %v\n%s", err, b.String())
	}
}

// TestBlocksResplitsWarning: a split of blocks whose anchors record their
// blocks is halved block by block and warned of no more; one bundled
// before the anchors' blocks were kept still is, saying to bundle again.
func TestBlocksResplitsWarning(t *testing.T) {
	kept := &bundle.Bundle{N: 2, Blocks: []int64{4, 4}}
	if w := BlocksResplits("test.npz", kept, 1); w != "" {
		t.Errorf("the anchors' blocks recorded: %q", w)
	}
	if w := BlocksResplits("test.npz", &bundle.Bundle{N: 2}, 1); !strings.Contains(w, "halve it row by row") || !strings.Contains(w, "Bundle again with this ccs") {
		t.Errorf("an older bundle of blocks: %q", w)
	}
	if w := BlocksResplits("test.npz", &bundle.Bundle{N: 2}, 0); w != "" {
		t.Errorf("no blocks: %q", w)
	}
	// An array that contradicts the manifest: said.
	if w := BlocksResplits("test.npz", &bundle.Bundle{N: 3, Blocks: []int64{0, 1, 2}}, 1); !strings.Contains(w, "names 3 blocks where its manifest says the split holds 1") {
		t.Errorf("contradicting blocks: %q", w)
	}
}
