package conformal

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// TestUser49OwnSplitCountIsAnEstimate (a RAG user, forty-ninth round;
// failed at c4cca8c): a set calibrated on one bundling's queries,
// evaluated on another bundling's test split, warned "92 of its 486
// anchors are queries of the set's calibration split" where 91 were. The
// count is the calibration rows' Bloom filter's (16 bits a row, false
// positives about 5·10⁻⁴ a row), which the warning printed as exact: it
// says "about" now, and the estimate is within the filter's false
// positives of the truth.
func TestUser49OwnSplitCountIsAnEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 2))
	cal := synthetic(rng, 2000, 1)
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.KeepRows(cal)
	test := synthetic(rng, 20000, 1)
	copy(test.Anchors, cal.Anchors) // the first 2 000 anchors are calibration queries
	w := s.OwnSplitWarning(test, false)
	m := regexp.MustCompile(`^about (\d+) of its 20000 anchors`).FindStringSubmatch(w)
	if m == nil {
		t.Fatalf("the warning does not give its count as an estimate: %q", w)
	}
	// 18 000 others at 5·10⁻⁴: about 9 false positives; 30 is far beyond.
	if n, _ := strconv.Atoi(m[1]); n < 2000 || n > 2030 {
		t.Errorf("the warning counts about %d calibration queries among the test anchors, where 2000 are: %q", n, w)
	}
}
