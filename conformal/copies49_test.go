package conformal

// The warnings of evaluate and the OOD test on a test split that shares
// rows with the set's calibration split, its OOD calibration inputs or its
// reference pool counted the rows by value alone: on data whose rows are
// a third exact copies (customers who came twice) the right test split of
// the same bundling was warned of as "another bundling" although none of
// its anchors is a calibration row given again (each test failed before
// the calibration kept its source rows).

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
)

// copiesBundling splits x's n rows at random (seed) 60/20/20: fit, cal,
// test, each anchor with its source row (h4Split).
func copiesBundling(rng *rand.Rand, x []float32, n int, seed uint64) (fit, cal, test *bundle.Bundle) {
	perm := rand.New(rand.NewPCG(seed, 1)).Perm(n)
	nf, nc := 6*n/10, 2*n/10
	return h4Split(rng, x, perm[:nf]), h4Split(rng, x, perm[nf:nf+nc]), h4Split(rng, x, perm[nf+nc:])
}

// copiesData is 6 000 rows of d = 2 of which a third copy the row before.
func copiesData(rng *rand.Rand) ([]float32, int) {
	const n = 6000
	return h4Rows(rng, n, func(i int) int {
		if i%3 == 1 {
			return i - 1
		}
		return -1
	}), n
}

func TestCopies49TestSplitNotWarnedOfCalibrationCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 1))
	x, n := copiesData(rng)
	_, calA, testA := copiesBundling(rng, x, n, 1)
	_, _, testB := copiesBundling(rng, x, n, 2)
	s, err := Calibrate(geometry.Ball{D: 2}, calA, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.KeepRows(calA)
	if m := manyOf(s.Calibration.Rows, testA); m == 0 {
		t.Fatalf("premise: the test split shares few calibration rows by value (%d of %d)", s.Calibration.Rows.Count(testA), testA.N)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	read, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Set{"in memory": s, "read from its file": read} {
		if w := s.OwnSplitWarning(testA, false); w != "" {
			t.Errorf("%s: the same bundling's test split (%d of %d anchors copies of calibration rows, none the same source row): warned %q",
				name, s.Calibration.Rows.Count(testA), testA.N, w)
		}
		if w := s.OwnSplitWarning(testB, false); w == "" {
			t.Errorf("%s: another bundling's test split (%d of %d anchors calibration rows): not warned", name, s.Calibration.Rows.Count(testB), testB.N)
		}
		// Where the test split records no source rows, or other
		// embeddings, nothing tells copies from rows given again.
		other := *testA
		other.Embeddings = "sha256:another-export"
		if w := s.OwnSplitWarning(&other, false); w == "" {
			t.Errorf("%s: the test split numbering other embeddings: not warned", name)
		}
		bare := *testA
		bare.Index, bare.Embeddings = nil, ""
		if w := s.OwnSplitWarning(&bare, false); w == "" {
			t.Errorf("%s: the test split without source rows: not warned", name)
		}
	}
}

func TestCopies49OODTestNotWarnedOfCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 2))
	x, n := copiesData(rng)
	fitA, calA, testA := copiesBundling(rng, x, n, 1)
	_, _, testB := copiesBundling(rng, x, n, 2)
	s, err := Calibrate(geometry.Ball{D: 2}, calA, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The pool drawn from the fit split, the OOD test calibrated on the
	// calibration split's anchors with their source rows, as ccs
	// calibrate -reference does with ccs bundle's splits.
	if s.Reference, err = NewReference(fitA, fitA.N, 7, "fit anchors"); err != nil {
		t.Fatal(err)
	}
	if s.OOD, err = NewOODCalibration(1, make([]float64, calA.N), CalibrationAnchors); err != nil {
		t.Fatal(err)
	}
	s.OOD.Rows = bundle.NewRowFilter(calA)
	s.OOD.Sources, s.OOD.Embeddings = bundle.NewSourceFilter(calA), calA.Embeddings
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	read, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Set{"in memory": s, "read from its file": read} {
		if w := s.OODTestWarning(testA); w != "" {
			t.Errorf("%s: the same bundling's test split: warned %q", name, w)
		}
		if w := s.OODTestWarning(testB); w == "" {
			t.Errorf("%s: another bundling's test split: not warned", name)
		}
	}
	// The reference pool alone (the fit split's rows, a fifth of the test
	// split's anchors their copies).
	pooled := *s
	pooled.OOD = nil
	if w := pooled.OODTestWarning(testA); w != "" {
		t.Errorf("the pool alone, the same bundling's test split: warned %q", w)
	}
	if w := pooled.OODTestWarning(testB); w == "" {
		t.Errorf("the pool alone, another bundling's test split: not warned")
	}
	// Without the calibration inputs' source rows, the same split is
	// warned of (what the check did before, and still does for files
	// made before).
	s.OOD.Sources, s.OOD.Embeddings = nil, ""
	if w := s.OODTestWarning(testA); w == "" {
		t.Errorf("without source rows: not warned")
	}
}

func TestCopies49SourcesComeTogether(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 3))
	x, n := copiesData(rng)
	_, calA, _ := copiesBundling(rng, x, n, 1)
	s, err := Calibrate(geometry.Ball{D: 2}, calA, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.KeepRows(calA)
	s.Calibration.Embeddings = ""
	var buf bytes.Buffer
	if err := s.writeJSON(&buf, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSON(&buf); err == nil {
		t.Errorf("calibration_sources without calibration_embeddings read")
	}
}
