package conformal

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// TestClassNames: a class-conditional set calibrated with string labels'
// names keeps them in its classes and its file, names its classes in
// warnings and errors by them, and CheckClasses refuses the class too
// small before any score is computed; without names, classes are numbered.
func TestClassNames(t *testing.T) {
	t.Parallel()
	cal := synthetic(rand.New(rand.NewPCG(1, 2)), 48, 3)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = []int64{0, 2}[min(i/40, 1)] // 40 of class 0, 8 of class 2 (none of 1)
	}
	names := []string{"coat", "shirt", "rare"}
	opt := Options{Mode: Class, LabelNames: names}

	_, err := Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
	if !errors.Is(err, ErrTooFewCalibration) || !strings.HasPrefix(err.Error(), `class "rare": `) {
		t.Errorf("too few in a named class: %v", err)
	}
	err = CheckClasses(cal, 0.05, 0, names)
	var tf *TooFewError
	if !errors.As(err, &tf) || tf.N != 8 || !strings.HasPrefix(err.Error(), `class "rare" has 8 calibration anchors: `) || !strings.Contains(err.Error(), "needs at least 19") {
		t.Errorf("CheckClasses: %v", err)
	}
	if err := CheckClasses(cal, 0.05, 0, nil); err == nil || !strings.HasPrefix(err.Error(), "class 2 has 8 calibration anchors") {
		t.Errorf("CheckClasses without names: %v", err)
	}
	if err := CheckClasses(cal, 0.2, 0, names); err != nil { // 0.2 needs 4
		t.Errorf("CheckClasses at α = 0.2: %v", err)
	}
	if err := CheckClasses(cal, 0.05, 0.1, names); !errors.Is(err, ErrTooFewCalibration) || !strings.Contains(err.Error(), `class "coat" has 40`) {
		t.Errorf("CheckClasses with PAC's δ (45 needed): %v", err)
	}

	opt.AllowInfinite = true
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Classes) != 2 || s.Classes[0].Name != "coat" || s.Classes[1].Name != "rare" || !math.IsInf(s.Classes[1].Threshold, 1) {
		t.Fatalf("classes %+v", s.Classes)
	}
	if w := strings.Join(s.Warnings(), "\n"); !strings.Contains(w, `class "rare": 8 calibration scores are too few`) {
		t.Errorf("warnings:\n%s", w)
	}
	// label 1 has no class of the set: numbered
	if got := s.ClassNames(); !slices.Equal(got, []string{"coat", "1", "rare"}) {
		t.Errorf("ClassNames %q", got)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.ClassNames(), s.ClassNames()) {
		t.Errorf("read back: classes %+v", back.Classes)
	}

	opt.LabelNames = nil
	s, err = Calibrate(geometry.Ball{D: 2}, cal, 0.05, opt)
	if err != nil {
		t.Fatal(err)
	}
	if s.ClassNames() != nil || !strings.Contains(strings.Join(s.Warnings(), "\n"), "class 2: 8 calibration scores") {
		t.Errorf("without names: %q, %q", s.ClassNames(), s.Warnings())
	}
}
