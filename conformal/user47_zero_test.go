package conformal_test

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestUser47GoZeroSetNotCalibrated (a Go library user, failed at a9ad8e8): Contains is documented "An uncalibrated set
// is ErrNotCalibrated", and Members on a zero Set says so; Contains and
// Scores on the zero Set panic (nil Geometry) instead.
func TestUser47GoZeroSetNotCalibrated(t *testing.T) {
	a := make([]float32, 4)
	call := func(name string, f func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s on a zero Set panics: %v", name, r)
			}
		}()
		if err := f(); err == nil {
			t.Errorf("%s on a zero Set: no error", name)
		}
	}
	call("Members", func() error { _, err := (&conformal.Set{}).Members(nil, a, a, nil); return err })
	call("Contains", func() error {
		_, err := (&conformal.Set{}).Contains(a, a, nil)
		if err != nil && !errors.Is(err, conformal.ErrNotCalibrated) {
			t.Errorf("Contains on a zero Set: %v, want ErrNotCalibrated", err)
		}
		return err
	})
	call("Scores", func() error { _, err := (&conformal.Set{}).Scores(nil, a, a); return err })
}

// TestUser47GoSaveWritesWhatLoadReads: a set whose Alpha was changed after
// calibration (a user "tightening" it in memory) is saved without an
// error, and Load then refuses the file ("calibration.rank 459, but n =
// 508 and alpha = 0.01 give 504"). Save should refuse what Load refuses.
func TestUser47GoSaveWritesWhatLoadReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 500, 2
	b := &bundle.Bundle{N: n, K: 1, D: d, Anchors: make([]float32, n*d), Positives: make([]float32, n*d)}
	for i := range b.Anchors {
		b.Anchors[i] = float32(rng.NormFloat64())
		b.Positives[i] = b.Anchors[i] + float32(rng.NormFloat64())
	}
	set, err := conformal.Calibrate(geometry.Ball{D: d}, b, 0.1, conformal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set.Alpha = 0.01
	path := filepath.Join(t.TempDir(), "set.json")
	if err := set.Save(path); err != nil {
		return // refused: fine
	}
	if _, err := conformal.Load(path); err != nil {
		t.Errorf("Save wrote a file without an error that Load refuses: %v", err)
	}
}
