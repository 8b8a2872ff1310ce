package ood_test

import (
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/ood"
)

// TestCopies49CalibrationKeepsSources: the OOD calibration keeps its
// inputs with their source rows (conformal.OODCalibration.Sources), so
// that test inputs of the same bundling equal to calibration inputs by
// value — the data's recurring row, a twentieth of every split — are not
// taken for the calibration inputs given again; the calibration inputs
// themselves still are. (Before, a recurring value in a tenth of the rows
// warned the right test split.)
func TestCopies49CalibrationKeepsSources(t *testing.T) {
	x, set, rest := review48Data(t, 4400)
	nn, err := ood.NewNearest(set, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	in, index := rowsOf(x, rest[:1600])
	if set.OOD, err = nn.CalibrateIndexed(in, index, "sha256:review48", "inputs"); err != nil {
		t.Fatal(err)
	}
	if set.OOD.Sources == nil || set.OOD.Embeddings != "sha256:review48" {
		t.Fatalf("the calibration keeps no source rows: %+v", set.OOD.Embeddings)
	}
	// A test split: the recurring value (every 20th row) in a tenth of
	// its anchors and more, by making its rows those of the recurring
	// value and others.
	var idx []int
	for _, r := range rest[1600:] {
		if len(idx) < 400 && (r%20 == 0 || len(idx)%5 != 0) {
			idx = append(idx, r)
		}
	}
	rows, tindex := rowsOf(x, idx)
	test := &bundle.Bundle{N: len(idx), K: 1, D: 4, Anchors: rows, Positives: rows, Index: tindex, Embeddings: "sha256:review48"}
	if m := set.OOD.Rows.Count(test); 10*m < test.N {
		t.Fatalf("premise: %d of %d test inputs equal calibration inputs", m, test.N)
	}
	if w := set.OODTestWarning(test); w != "" {
		t.Errorf("the same bundling's test inputs (%d copies of calibration inputs): warned %q", set.OOD.Rows.Count(test), w)
	}
	again := &bundle.Bundle{N: len(in) / 4, K: 1, D: 4, Anchors: in, Positives: in, Index: index, Embeddings: "sha256:review48"}
	if w := set.OODTestWarning(again); w == "" {
		t.Errorf("the calibration inputs themselves as test inputs: not warned")
	}
}
