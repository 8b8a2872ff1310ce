package conformal

// Review h6 (forty-ninth round): the overlap counts said "about", the
// calibration's rows kept with their source rows. Each test fails on the
// code under review.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// TestReview49CheckOODInputsCountSaysAbout: the commit "overlap counts from row
// filters say about" gave "about" to every count of FitInfo.Seen in
// set.go and ood.go's warning, but CheckOODInputs — the refusal of OOD
// calibration inputs that are fit rows, the same seenRows count of the
// same Bloom filter — still prints it as exact ("conformal: 729 of its
// 1200 inputs are rows …"). (experiment/detect.go's two "N of its M inputs
// are rows of -train" messages count a RowFilter too.)
func TestReview49CheckOODInputsCountSaysAbout(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 6))
	const n = 6000
	x := h4Rows(rng, n, func(int) int { return -1 })
	fitA, _ := h4Bundling(rng, x, n, 1)
	_, calB := h4Bundling(rng, x, n, 2)
	s := &Set{Geometry: geometry.Ball{D: 2}, Fit: &FitInfo{Method: "test", Splits: map[string]string{"fit": fitA.Digest()},
		Seen: bundle.NewRowFilter(fitA), Sources: bundle.NewSourceFilter(fitA), Embeddings: fitA.Embeddings}}
	err := s.CheckOODInputs(calB)
	if err == nil {
		t.Fatal("premise: another bundling's split as OOD calibration inputs passes")
	}
	if !strings.Contains(err.Error(), "about ") {
		t.Errorf("the refusal states a Bloom filter's count as exact: %v", err)
	}
}

// TestReview49OlderSetWarnsOfCopiesAsAnotherBundling: a set file written before
// calibration_sources (or calibrated on a bundle without source rows: an
// older pickle, a Bundle of arrays) warns of its own bundling's test split
// on data whose rows are a third exact copies as "rows of the set's
// calibration split (another bundling of the same embeddings?)" — on the
// bundling it was calibrated with, where the advice "evaluate on the test
// split of the bundles it was calibrated with" is what was done. The fit
// check (checkRows) says in that case that copies cannot be told apart
// and how to make them so (calibrate again with this ccs, on ccs bundle's
// splits); this warning does not.
func TestReview49OlderSetWarnsOfCopiesAsAnotherBundling(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 1))
	x, n := copiesData(rng)
	_, calA, testA := copiesBundling(rng, x, n, 1)
	s, err := Calibrate(geometry.Ball{D: 2}, calA, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.KeepRows(calA)
	s.Calibration.Sources, s.Calibration.Embeddings = nil, "" // as read from a file made before
	w := s.OwnSplitWarning(testA, false)
	if w == "" {
		t.Fatal("premise: the older set does not warn")
	}
	if !strings.Contains(w, "copies") {
		t.Errorf("the warning names another bundling alone, not the data's copies the set cannot tell apart: %q", w)
	}
}
