package main

// A review of d0de70e..5138705: each test failed at 5138705 for the
// reason its comment gives.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestH7ClassTestOneClassAlarm: a set whose per-input test is class 4's
// (calibrate -ood-class 4) is judged by ccs ood on -id's class-4 inputs
// alone (1ac9c7d). When those are shifted, classAlarms — run on that
// one-class sample — adds, beside shiftAlarm's warning of the same
// inputs, "its false-alarm rate is guaranteed over all in-distribution
// inputs, not class by class": false of a class's test, and the same
// alarm twice.
func TestReview46bClassTestOneClassAlarm(t *testing.T) {
	dir := t.TempDir()
	b, _ := h5Setup(t, dir)
	set4 := filepath.Join(dir, "ball4.json")
	h5Run(t, "calibrate", "-geometry", "ball", "-cal", filepath.Join(b, "cal.npz"), "-reference", "20",
		"-ood-cal", filepath.Join(b, "ood-cal.npz"), "-ood-class", "4", "-out", set4)
	test, err := bundle.Read(filepath.Join(b, "test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range test.Labels { // class 4's test inputs shifted
		if l == 4 {
			for k := range test.D {
				test.Anchors[i*test.D+k] += 3
			}
		}
	}
	shifted := filepath.Join(dir, "shifted.npz")
	if err := bundle.Write(shifted, test); err != nil {
		t.Fatal(err)
	}
	_, errOut := h5Run(t, "ood", "-set", set4, "-id", shifted, "-ood", "x="+filepath.Join(b, "val.npz"))
	if !strings.Contains(errOut, "above α_ood") {
		t.Fatalf("setup: no shift warning:\n%s", errOut)
	}
	if strings.Contains(errOut, "not class by class") {
		t.Errorf("a class's own test told it is guaranteed over all inputs, not class by class:\n%s", errOut)
	}
}

// TestH7BaselinesJudgedOnClassSubset: with a class's set (-ood-class 4)
// DetectOOD swaps d.ID for class 4's inputs before the baselines run, but
// the baselines' conformal tests are still calibrated on every class of
// -ood-cal. On the same files where the whole -id raises no baseline
// alarm, the class-4 subset makes the table print "FAR@0.05 (≤ 5%)"
// 20–61% for MSP, Mahalanobis, KNN, D-KNN, and stderr call it "a shift:
// another batch, donor, site or time" — inputs drawn exactly as the
// calibration's, only one class of them.
func TestReview46bBaselinesJudgedOnClassSubset(t *testing.T) {
	dir := t.TempDir()
	b, _ := h5Setup(t, dir)
	set4 := filepath.Join(dir, "ball4.json")
	h5Run(t, "calibrate", "-geometry", "ball", "-cal", filepath.Join(b, "cal.npz"), "-reference", "20",
		"-ood-cal", filepath.Join(b, "ood-cal.npz"), "-ood-class", "4", "-out", set4)
	_, errOut := h5Run(t, "ood", "-set", set4, "-id", filepath.Join(b, "test.npz"), "-ood", "x="+filepath.Join(b, "val.npz"),
		"-train", filepath.Join(b, "fit.npz"), "-ood-cal", filepath.Join(b, "ood-cal.npz"), "-cider-epochs", "0", "-quiet")
	if strings.Contains(errOut, "conformal tests of the baselines flagged more") {
		t.Errorf("baselines calibrated on every class, judged on class 4's inputs, called a shift:\n%s", errOut)
	}
}
