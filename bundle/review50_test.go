package bundle

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReview50SplitConstantsIndexThePlan checks that the constants OODCal
// and OOD name their splits when a plan holds OOD classes out but makes
// no OOD calibration split: Bundle(OODCal) is refused by name and
// Bundle(OOD) is the OOD split (failed at 1c23c4e: Plan.Splits put the
// OOD split in OODCal's place, so Bundle(OODCal) returned the held-out
// OOD class's rows without an error, and Bundle(OOD) was refused: "split
// 5: the plan made 5").
func TestReview50SplitConstantsIndexThePlan(t *testing.T) {
	const n, d = 1000, 4
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([]float32, n*d)
	for i := range rows {
		rows[i] = float32(rng.NormFloat64())
	}
	labels := make([]int64, n)
	for i := range labels {
		labels[i] = int64(i % 5)
	}
	plan, err := Make(Items{N: n, Labels: labels}, MakeConfig{K: 3, Seed: 1, OODClasses: []int64{4}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := plan.Bundle(OODCal, rows, nil, d); err == nil {
		t.Errorf("Plan.Bundle(OODCal) without an OOD calibration split returned %d rows (labels %v…), no error", b.N, b.Labels[:min(5, len(b.Labels))])
	} else if want := "bundle: the ood-cal split is not made"; !strings.Contains(err.Error(), want) {
		t.Errorf("Plan.Bundle(OODCal): %v, want %q", err, want)
	}
	b, err := plan.Bundle(OOD, rows, nil, d)
	if err != nil {
		t.Fatalf("Plan.Bundle(OOD) with MakeConfig.OODClasses: %v", err)
	}
	if b.N != n/5 || slices.ContainsFunc(b.Labels, func(l int64) bool { return l != 4 }) {
		t.Errorf("Plan.Bundle(OOD): %d rows, labels %v…; want the %d rows of the OOD class 4", b.N, b.Labels[:min(5, len(b.Labels))], n/5)
	}
	if got := plan.Made(); !slices.Equal(got, []string{"fit", "val", "cal", "test", "ood"}) {
		t.Errorf("Made() = %q", got)
	}
	for s, sp := range plan.Splits {
		if sp.Name != SplitNames[s] {
			t.Errorf("Plan.Splits[%d] is the %s split, want %s", s, sp.Name, SplitNames[s])
		}
	}
	arrays, err := plan.Arrays(OOD, rows, nil, d)
	if a := arrays["anchors"]; err != nil || len(a.Shape) == 0 || a.Shape[0] != n/5 {
		t.Errorf("Plan.Arrays(OOD): %v, anchors of shape %v; want %d rows", err, a.Shape, n/5)
	}
	paths, err := plan.Write(t.TempDir(), rows, nil, d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	if !slices.Equal(names, []string{"fit.npz", "val.npz", "cal.npz", "test.npz", "ood.npz"}) {
		t.Errorf("Write wrote %q", names)
	}
}
