package main

// A fraud-analytics user's session (a forty-eighth round's user):
// tabular-autoencoder embeddings with heavy tails, merchant categories of
// very unequal sizes, and about 15% of the rows exact copies of another
// row of their class (repeat customers). Each TestH2 failed at 22a3ce9 for
// the reason its comment gives.

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// h2Data writes x.npy (n × d float32, Student-t with 3 degrees of
// freedom around a mean per class), y.npy (the classes, 8 of very unequal
// sizes) and groups.npy (one id per distinct row: a row and its copies
// share one), with 15% of the rows replaced by exact copies of another row
// of their class.
func h2Data(t *testing.T, copies bool) {
	t.Helper()
	sizes := []int{1200, 500, 300, 180, 120, 60, 40, 30}
	const d = 8
	r := rand.New(rand.NewPCG(7, 48))
	tdraw := func() float64 { // Student-t, 3 degrees of freedom
		z := r.NormFloat64()
		c := 0.0
		for range 3 {
			g := r.NormFloat64()
			c += g * g
		}
		return z / math.Sqrt(c/3)
	}
	var x []float32
	var y []int64
	for c, s := range sizes {
		mean := make([]float64, d)
		for j := range mean {
			mean[j] = 1.2 * r.NormFloat64()
		}
		for range s {
			for j := range d {
				x = append(x, float32(mean[j]+tdraw()))
			}
			y = append(y, int64(c))
		}
	}
	n := len(y)
	// 15% of the rows: exact copies of another row of their class.
	isCopy := make([]bool, n)
	share := 15
	if !copies {
		share = 0
	}
	for _, i := range r.Perm(n)[:n*share/100] {
		isCopy[i] = true
	}
	group := make([]int64, n)
	for i := range group {
		group[i] = int64(i)
	}
	for i := range n {
		if !isCopy[i] {
			continue
		}
		for {
			j := r.IntN(n)
			if !isCopy[j] && y[j] == y[i] {
				copy(x[i*d:(i+1)*d], x[j*d:(j+1)*d])
				group[i] = group[j]
				break
			}
		}
	}
	if err := bundle.WriteNPY("x.npy", bundle.Float32(x, n, d)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY("y.npy", bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY("groups.npy", bundle.Int64(group, n)); err != nil {
		t.Fatal(err)
	}
}

// TestH2CopiesAdviceGroups: ccs bundle warns of the exact copies and
// advises "give each row and its copies one group (-groups) to keep them
// in one split". Following it with labelled data — one group id per
// distinct row, beside -labels — is refused: most groups have one row
// ("N groups of the splits have one row … leave their rows out first",
// which would drop most of the data), and as groups the copies would be
// one another's positives, not the class's rows. The advice, which the
// per-input OOD calibration's refusal repeats, is a dead end for labels:
// it should be one that works (or not be given).
func TestH2CopiesAdviceGroups(t *testing.T) {
	t.Chdir(t.TempDir())
	h2Data(t, true)
	var out, errb bytes.Buffer
	if err := run(&out, &errb, []string{"bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-out", "b", "-k", "5", "-allow-fewer"}); err != nil {
		t.Fatalf("bundle: %v\n%s", err, errb.String())
	}
	// With labels the advice is one that works: remove a record exported
	// twice, keep the data's own copies; not groups, which beside labels
	// would make a row's copies its positives (and are refused here: most
	// groups have one row).
	if w := errb.String(); !strings.Contains(w, "are exact copies of an earlier row") || strings.Contains(w, "(-groups)") ||
		!strings.Contains(w, "np.unique(x, axis=0, return_index=True)") || !strings.Contains(w, "may stay") {
		t.Errorf("the copies warning with labels: %s", w)
	}
	err := run(&out, &errb, []string{"bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-groups", "groups.npy", "-out", "g", "-k", "5", "-allow-fewer"})
	if err == nil {
		t.Errorf("labels with groups of one row each: accepted")
	}
}

// TestH2EllipsoidSameBundlingCopies: the ellipsoid (Σ from the fit split)
// calibrated on the calibration split of the same ccs bundle run is
// refused when 15% of the rows are copies: "N of the M calibration anchors
// are rows it was fitted or validated on — the fit split of another
// bundling of the same embeddings (another seed or split), or those rows
// given again". It is the same bundling; the copies are the data's own
// (which bundle warned of). ccs compare then stops at its ellipsoid row,
// so the user gets no comparison at all. Either the copies should be
// accepted (calibration and test share them alike), or the refusal should
// say what happened: the data's copies, not another bundling.
func TestH2EllipsoidSameBundlingCopies(t *testing.T) {
	t.Chdir(t.TempDir())
	h2Data(t, true)
	var out, errb bytes.Buffer
	if err := run(&out, &errb, []string{"bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-out", "b", "-k", "5", "-allow-fewer"}); err != nil {
		t.Fatalf("bundle: %v\n%s", err, errb.String())
	}
	out.Reset()
	errb.Reset()
	err := run(&out, &errb, []string{"calibrate", "-geometry", "ellipsoid", "-fit", "b/fit.npz", "-cal", "b/cal.npz", "-alpha", "0.1", "-out", "e.json"})
	if err != nil && strings.Contains(err.Error(), "another bundling") {
		t.Errorf("the fit and calibration splits of one ccs bundle run, refused as if of another bundling: %v", err)
	}
}

// TestH2OODShiftCheckWithoutOODSample: docs/your-data.md ("Another
// donor, batch or site") tells the user to "check with ccs ood -id on
// held-out … inputs of the new source" whether the shift warning is gone,
// and docs/ood.md describes that warning as the check of whether a new
// month's inputs are still exchangeable with the calibration. A user with
// next month's embeddings and no OOD sample runs ccs ood -set S -id
// next.npy: refused as a usage error ("give at least one -ood FILE"), so
// the check needs a made-up OOD file.
func TestH2OODShiftCheckWithoutOODSample(t *testing.T) {
	t.Chdir(t.TempDir())
	h2Data(t, false)
	var out, errb bytes.Buffer
	if err := run(&out, &errb, []string{"bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-out", "b", "-k", "5", "-allow-fewer", "-split", "0,0,0.5,0.5", "-ood-cal-share", "0.2"}); err != nil {
		t.Fatalf("bundle: %v\n%s", err, errb.String())
	}
	out.Reset()
	errb.Reset()
	if err := run(&out, &errb, []string{"calibrate", "-geometry", "ball", "-cal", "b/cal.npz", "-alpha", "0.1", "-reference", "200", "-ood-cal", "b/ood-cal.npz", "-out", "s.json"}); err != nil {
		t.Fatalf("calibrate: %v", err)
	}
	out.Reset()
	errb.Reset()
	err := run(&out, &errb, []string{"ood", "-set", "s.json", "-id", "b/ood-cal.npz", "-mode", "conformal"})
	if err != nil {
		t.Errorf("ccs ood -id alone (the shift check on a new month's inputs, no OOD sample): %v", err)
	}
}

// TestCopiesAnotherBundlingRefused: on the same data with its copies, the
// ellipsoid fitted on one bundling's fit split and calibrated on another
// bundling's (another seed) is still refused: its calibration anchors are
// the fit split's rows from the same source rows (ccs bundle's splits
// record them), not copies.
func TestCopiesAnotherBundlingRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	h2Data(t, true)
	var out, errb bytes.Buffer
	for _, c := range []struct{ dir, seed string }{{"a", "1"}, {"b", "2"}} {
		if err := run(&out, &errb, []string{"bundle", "-embeddings", "x.npy", "-labels", "y.npy", "-out", c.dir, "-k", "5", "-allow-fewer", "-seed", c.seed}); err != nil {
			t.Fatalf("bundle: %v\n%s", err, errb.String())
		}
	}
	err := run(&out, &errb, []string{"calibrate", "-geometry", "ellipsoid", "-fit", "a/fit.npz", "-cal", "b/cal.npz", "-alpha", "0.1", "-out", "e.json"})
	if err == nil || !strings.Contains(err.Error(), "another bundling") || !strings.Contains(err.Error(), "from the same source rows of the same embeddings as the rows it was fitted on") {
		t.Errorf("the ellipsoid of one bundling's fit split calibrated on another's: %v, want refused", err)
	}
	if err := run(&out, &errb, []string{"calibrate", "-geometry", "ellipsoid", "-fit", "a/fit.npz", "-cal", "a/cal.npz", "-alpha", "0.1", "-out", "e.json"}); err != nil {
		t.Errorf("the ellipsoid of one bundling's own splits: %v", err)
	}
}
