package conformal

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
)

// What a set file keeps for per-input OOD tests (package ood computes the
// scores; this package stores and checks them): a reference pool of
// in-distribution embeddings and the calibration of the per-input score.

// Caps on what a set file stores for OOD tests. MaxReferenceValues
// bounds the reference pool a set is built with (NewReference,
// NewReferenceRows; rows × dimension: 13 107 rows at d = 1 280, a
// 10 000-row pool of protein embeddings kept whole), which sets the file's
// size and the time every command that opens it takes to read it (about
// 190 MB of JSON at the cap). It is no bound on what is read: a file's pool
// is read from its bytes, at most one value for every two (a digit and a
// comma), so reading it takes memory of the order of the file's own size,
// and it must hold the n × dim values it claims; a file with a larger
// pool (written by hand, or by another version) is read. At most
// MaxOODScores calibration scores are kept, built, saved and read.
const (
	MaxReferenceValues = 1 << 24
	MaxOODScores       = 1 << 20
)

// CalibrationAnchors is a reference pool's Source where its rows are the
// calibration split's anchors (of a class: "calibration anchors of class
// …"): calibrate's pool of -reference N.
const CalibrationAnchors = "calibration anchors"

// Reference is a pool of in-distribution embeddings stored with a set, so
// that a single query can get its OOD score alone.
type Reference struct {
	Source string    `json:"source"` // where the rows came from, e.g. CalibrationAnchors
	Seed   uint64    `json:"seed"`   // the draw that picked them
	N      int       `json:"n"`
	Rows   []float32 `json:"rows"` // N×dim, row-major
	// Index is each row's source row (Bundle.Index: its row of the
	// embeddings), where the bundle it was drawn from records them (ccs
	// bundle's do): an OOD calibration input equal to a pool row from
	// another source row is one of the data's own exact copies, not a pool
	// row given again. Absent for a pool of rows given whole.
	Index []int64 `json:"index,omitempty"`
	// Embeddings names the embeddings Index numbers the rows of
	// (bundle.Bundle.Embeddings); "" where unknown.
	Embeddings string `json:"embeddings,omitempty"`
}

// NewReference draws n distinct anchors of b (seeded) as a reference pool.
// It checks b as Calibrate checks its bundle (a bundle of anchors alone,
// features, is taken too): one whose arrays are not the sizes its N, K and
// D say, or hold a NaN or ±Inf, is refused, naming the array.
func NewReference(b *bundle.Bundle, n int, seed uint64, source string) (*Reference, error) {
	if b == nil {
		return nil, errors.New("conformal: no bundle for the reference pool (nil)")
	}
	// A bundle built by hand (bundle.Read and Plan.Bundle check theirs),
	// checked as Calibrate checks it: Anchor(i) would slice past a short
	// Anchors.
	if err := b.ValidateFeatures(); err != nil {
		return nil, fmt.Errorf("conformal: reference pool bundle: %w", err)
	}
	if n < 1 || n > b.N {
		return nil, fmt.Errorf("conformal: reference pool of %d rows from %d anchors: want 1 to %d", n, b.N, b.N)
	}
	if n*b.D > MaxReferenceValues {
		return nil, fmt.Errorf("conformal: a reference pool of %d rows of dimension %d is %d values, more than a set file keeps (%d): at most %d rows at this dimension", n, b.D, n*b.D, MaxReferenceValues, MaxReferenceValues/b.D)
	}
	perm := rand.New(rand.NewPCG(seed, 0x726566)).Perm(b.N) // "ref"
	r := &Reference{Source: source, Seed: seed, N: n, Rows: make([]float32, 0, n*b.D)}
	for _, i := range perm[:n] {
		r.Rows = append(r.Rows, b.Anchor(i)...)
	}
	if len(b.Index) == b.N && b.Embeddings != "" {
		r.Embeddings = b.Embeddings
		r.Index = make([]int64, n)
		for j, i := range perm[:n] {
			r.Index[j] = b.Index[i]
		}
	}
	return r, nil
}

// NewReferenceRows takes every row of rows (n×d) as the pool.
func NewReferenceRows(rows []float32, d int, source string) (*Reference, error) {
	if d < 1 || len(rows) == 0 || len(rows)%d != 0 {
		return nil, fmt.Errorf("conformal: %d reference values are not a positive number of rows of dimension %d", len(rows), d)
	}
	if len(rows) > MaxReferenceValues {
		return nil, fmt.Errorf("conformal: a reference pool of %d rows of dimension %d is %d values, more than a set file keeps (%d): at most %d rows at this dimension (-reference %d draws them from the calibration split)", len(rows)/d, d, len(rows), MaxReferenceValues, MaxReferenceValues/d, MaxReferenceValues/d)
	}
	r := &Reference{Source: source, N: len(rows) / d, Rows: slices.Clone(rows)}
	return r, r.check(d)
}

// check validates the pool against the set's dimension: its n rows of
// dim values are what its rows hold. It sets no cap on the pool's size
// (MaxReferenceValues is checked where a pool is built): what a file
// holds was read from it.
func (r *Reference) check(dim int) error {
	if r.N < 1 || r.N > len(r.Rows) || len(r.Rows) != r.N*dim {
		return fmt.Errorf("ood_reference: n = %d rows of dimension %d are %.0f values, but its rows hold %d: a pool's n is its number of rows", r.N, dim, float64(r.N)*float64(dim), len(r.Rows))
	}
	if r.Index != nil && len(r.Index) != r.N {
		return fmt.Errorf("ood_reference: index has %d source rows for its %d rows", len(r.Index), r.N)
	}
	for i, v := range r.Rows {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("ood_reference: row %d, coordinate %d is %v", i/dim, i%dim, v)
		}
	}
	return nil
}

// OODThresholdRule is why a set's OOD test needs its threshold positive
// and finite, as Load and package ood say it.
const OODThresholdRule = "the set's OOD scores divide by its threshold q̂ (the per-input test's K-th smallest φ(a − x)/q̂ over the pool) and need a positive, finite q̂"

// OODCalibration is the per-input OOD score's calibration: the score of
// each of N held-out in-distribution inputs, disjoint from the reference
// pool and from everything the set was fitted and calibrated on. The score
// (package ood) is the K-th smallest φ(a_i − x)/q̂ over the pool's rows a_i.
type OODCalibration struct {
	K      int       `json:"k"`
	Source string    `json:"source"` // where the calibration inputs came from
	N      int       `json:"n"`
	Scores []float64 `json:"scores"` // sorted ascending
	// Rows holds the calibration inputs' rows, so that scoring them again
	// as test inputs is warned of (OODTestWarning); nil in files made
	// before it was kept.
	Rows *bundle.RowFilter `json:"rows,omitempty"`
	// Sources holds those inputs each with its source row, and Embeddings
	// names the embeddings they number, where the inputs record them (ccs
	// bundle's splits do; ood.Nearest.CalibrateIndexed): a test input
	// equal to a calibration input from another source row is one of the
	// data's own exact copies, not warned of.
	Sources    *bundle.RowFilter `json:"sources,omitempty"`
	Embeddings string            `json:"embeddings,omitempty"`
	// Class, for the test of one class alone (ccs calibrate -ood-class:
	// its pool and calibration inputs of that class), names it: its
	// false-alarm rate is bounded over that class's inputs, not over
	// all. nil for the test over all in-distribution inputs.
	Class *OODClass `json:"class,omitempty"`
}

// OODClass is the class an OODCalibration's test is of: its label and,
// for string labels, its name.
type OODClass struct {
	Label int64  `json:"label"`
	Name  string `json:"name,omitempty"`
}

// String is the class as messages quote it: its name, else its label.
func (c OODClass) String() string {
	if c.Name != "" {
		return strconv.Quote(c.Name)
	}
	return strconv.Quote(strconv.FormatInt(c.Label, 10))
}

// NewOODCalibration keeps scores (sorted) as the calibration of the K-th
// nearest score.
func NewOODCalibration(k int, scores []float64, source string) (*OODCalibration, error) {
	c := &OODCalibration{K: k, Source: source, N: len(scores), Scores: slices.Clone(scores)}
	slices.SortFunc(c.Scores, cmp.Compare[float64])
	return c, c.check()
}

func (c *OODCalibration) check() error {
	switch {
	case c.K < 1:
		return fmt.Errorf("ood_calibration: k = %d, want ≥ 1", c.K)
	case c.N < 1 || len(c.Scores) != c.N:
		return fmt.Errorf("ood_calibration: %d scores for n = %d (want n ≥ 1 scores)", len(c.Scores), c.N)
	case c.N > MaxOODScores:
		return fmt.Errorf("ood_calibration: %d scores, more than a set file keeps (%d)", c.N, MaxOODScores)
	case (c.Sources == nil) != (c.Embeddings == ""):
		return fmt.Errorf("ood_calibration: sources and embeddings come together: one is given without the other")
	}
	for i, v := range c.Scores {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("ood_calibration: score %d is %v", i, v)
		}
		if v < 0 {
			return fmt.Errorf("ood_calibration: score %d is %v: the per-input OOD test's score, the K-th smallest φ(a − x)/q̂ over the pool, is never negative", i, v)
		}
		if i > 0 && v < c.Scores[i-1] {
			return fmt.Errorf("ood_calibration: scores are not sorted (score %d < score %d)", i, i-1)
		}
	}
	return nil
}

// checkOOD validates a set's reference pool and OOD calibration together.
func checkOOD(r *Reference, c *OODCalibration, dim int) error {
	if r != nil {
		if err := r.check(dim); err != nil {
			return err
		}
	}
	if c == nil {
		return nil
	}
	if r == nil {
		return fmt.Errorf("ood_calibration without an ood_reference pool")
	}
	if err := c.check(); err != nil {
		return err
	}
	if c.K > r.N {
		return fmt.Errorf("ood_calibration: k = %d nearest of a pool of %d rows", c.K, r.N)
	}
	return nil
}

// OODTestWarning is what a reader of the per-input OOD test's figures on
// the in-distribution test inputs b must know when a tenth of them or
// more (two at least) are inputs the set has seen, or "": the inputs its
// OOD calibration scored (their p-values are not a new input's), rows of
// its reference pool (each its own nearest pool row, at score 0: a
// calibration split that the pool was drawn from), or rows its geometry
// was fitted or validated on. The AUROC and false-alarm rate measured on
// them are no test.
func (s *Set) OODTestWarning(b *bundle.Bundle) string {
	if s.OOD != nil {
		if m := manyOf(s.OOD.Rows, b); m > 0 && !copiesOnly(s.OOD.Sources, s.OOD.Embeddings, b, m) {
			return fmt.Sprintf("about %d of its %d inputs are the inputs the set's OOD test was calibrated on (%s): their p-values are not a new input's, so the false-alarm rate measured on them is no test of the guarantee; give in-distribution inputs held out from that calibration (ccs bundle's test.npz)", m, b.N, s.OOD.Source)
		}
	}
	const fix = "so the AUROC and false-alarm rate measured on them are optimistic, no test; give in-distribution inputs held out from them (ccs bundle's test.npz)"
	if r := s.Reference; r != nil && r.N > 0 && len(r.Rows) == r.N*b.D {
		pb := &bundle.Bundle{N: r.N, D: b.D, Anchors: r.Rows, Index: r.Index}
		var sources *bundle.RowFilter
		if r.Embeddings != "" && len(r.Index) == r.N {
			sources = bundle.NewSourceFilter(pb)
		}
		if m := manyOf(bundle.NewRowFilter(pb), b); m > 0 && !copiesOnly(sources, r.Embeddings, b, m) {
			return fmt.Sprintf("about %d of its %d inputs are rows of the set's reference pool (%s): each one's nearest pool row is itself, at OOD score 0, %s", m, b.N, r.Source, fix)
		}
	}
	switch role := s.OwnSplit(b); role {
	case "fit", "validation":
		return fmt.Sprintf("this is the %s split the set's geometry was fitted on: its inputs' scores are not a new input's, %s", role, fix)
	}
	if m := s.Fit.seenRows(b); m > 0 {
		return fmt.Sprintf("about %d of its %d inputs are rows the set's geometry was fitted or validated on: their scores are not a new input's, %s", m, b.N, fix)
	}
	return ""
}

// CheckOODInputs refuses, as the in-distribution inputs that calibrate
// the per-input OOD test, a split the set's geometry was fitted or
// validated on (OwnSplit): their scores are not exchangeable with a new
// input's, so the false-alarm rate calibrated on them would not hold.
func (s *Set) CheckOODInputs(b *bundle.Bundle) error {
	switch role := s.OwnSplit(b); role {
	case "fit", "validation":
		return fmt.Errorf("conformal: this is the %s split the set's geometry was fitted on: its scores are not a new input's, so a false-alarm rate calibrated on them would not hold; give held-out in-distribution inputs (ccs bundle's ood-cal.npz)", role)
	case "calibration":
		if s.Reference == nil || !strings.HasPrefix(s.Reference.Source, CalibrationAnchors) {
			break // a pool of other rows: the calibration anchors are held-out inputs to it
		}
		// Its anchors are the pool's rows (a reference drawn from it):
		// said as the split it is, not as a copied row.
		return fmt.Errorf("conformal: this is the set's calibration split, whose anchors the OOD pool is drawn from: their scores are not a new input's; give held-out in-distribution inputs (ccs bundle's ood-cal.npz, -ood-cal-share; ood_cal_share= in Python)")
	}
	if m := s.Fit.seenRows(b); m > 0 {
		return fmt.Errorf("conformal: about %d of its %d inputs are rows the set's geometry was fitted or validated on: their scores are not a new input's, so a false-alarm rate calibrated on them would not hold; give held-out in-distribution inputs (ccs bundle's ood-cal.npz, of the bundles the set was fitted on)", m, b.N)
	}
	return nil
}

// DefaultOODAlpha is the level a per-input OOD test judges at unless told
// otherwise (package ood's DefaultAlpha), the level Warnings speaks of.
const DefaultOODAlpha = 0.05

// TieWarning says, of a per-input OOD test at level (in words: "α_ood =
// 0.05") that flags inputs scored above the l-th largest calibration
// score (ood.Test.FlaggedRank; ⌊α(n+1)⌋ for the marginal test), that the
// calibration's scores tie there: fewer than l of them — at most four
// fifths — lie above it, so the test flags about that share of
// in-distribution inputs, well under its level. Scores of few values
// (binary or quantised features: the k-th nearest distance a Hamming
// distance) make it; the guarantee holds, but the test is weak. "" where
// the ties cost less, or nothing is flagged.
func (c *OODCalibration) TieWarning(level string, l int) string {
	n := len(c.Scores)
	if l < 1 || l > n {
		return ""
	}
	above := c.flagged(l)
	if float64(above) > 0.8*float64(l) {
		return ""
	}
	v := c.Scores[n-l]
	distinct := 0
	for i, s := range c.Scores {
		if i == 0 || s != c.Scores[i-1] {
			distinct++
		}
	}
	at := n - above - sort.SearchFloat64s(c.Scores, v)
	return fmt.Sprintf("the per-input OOD test's %d calibration scores take %d values: at %s it flags only inputs scored above %.6g, and %d of them lie above it (%d at it), so it flags about %.2f%% of in-distribution inputs, not the %.2f%% that scores without ties allow — its p-values move in steps of the ties, not of 1/(n+1); the guarantee (at most α_ood) holds, but the test is weak: features whose scores take more values (float embeddings, not binary or quantised ones), or a larger α_ood, flag more",
		n, distinct, level, v, above, at, 100*float64(above)/float64(n), 100*float64(l)/float64(n+1))
}

// flagged is how many of the calibration inputs a test that flags above
// the l-th largest score (1 ≤ l ≤ n) flags when each is judged against
// the others — (1 + #{j ≠ i : s_j ≥ s_i})/(n+1) ≤ l/(n+1) —, the share of
// in-distribution inputs it flags as the calibration sees it: l without
// ties at the l-th largest score v, else only those above v.
func (c *OODCalibration) flagged(l int) int {
	n := len(c.Scores)
	v := c.Scores[n-l]
	if n-l == 0 || c.Scores[n-l-1] < v {
		return l
	}
	return n - sort.SearchFloat64s(c.Scores, math.Nextafter(v, math.Inf(1)))
}

// FlaggedRankAt is the marginal test's flagged rank at level alpha among
// n calibration scores, ⌊alpha·(n+1)⌋ (package ood's Test.FlaggedRank for
// δ = 0), for Warnings' TieWarning at DefaultOODAlpha.
func FlaggedRankAt(alpha float64, n int) int {
	j := min(n, max(0, int(math.Floor(alpha*float64(n+1)))))
	for j < n && float64(j+1)/float64(n+1) <= alpha { // p = j/(n+1) ≤ α, as the test compares it
		j++
	}
	for j > 0 && float64(j)/float64(n+1) > alpha {
		j--
	}
	return j
}
