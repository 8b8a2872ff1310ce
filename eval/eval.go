// Package eval measures fitted sets on test bundles: coverage of positives,
// exclusion of negatives and log-volume per dimension, and summaries over
// seeds.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"

	"github.com/ccsets/ccs/internal/jsonfloat"
)

// Result is a set's performance on one test bundle.
type Result struct {
	// Coverage is the fraction of all test positives (N·K) inside the set.
	Coverage float64 `json:"coverage"`
	// Exclusion is the fraction of all test negatives (N·KNeg) outside the
	// set; NaN when the bundle has no negatives.
	Exclusion float64 `json:"exclusion"`
	// LogVolPerDim is log Vol(N_q̂)/d, the paper's LogVol/d: d the
	// dimension of the space the volume is measured in (VolumeDim: a head
	// that is not square's output dimension).
	LogVolPerDim float64 `json:"logvol_per_dim"`
	Positives    int     `json:"positives"`
	Negatives    int     `json:"negatives"`
}

// Evaluate scores every positive and negative of test under s. It streams
// over anchors: at most one anchor's differences per worker are held at a
// time. A class-conditional set judges each anchor with its class's
// threshold (ByClass): the test bundle needs labels. A set calibrated on
// unit-norm embeddings refuses, as ccs evaluate does, a test bundle whose
// anchors are not of unit norm (conformal.Set.CheckBundleNorms: a
// *conformal.NormError naming the anchor), and so do ByClass, ByLabel,
// WithClasses, WithLabels, WithCurve, Recalibrated and a Scored's
// methods of the same names (Resplits, which recalibrates on the bundle
// itself, takes it); a bundle of another dimension matches
// conformal.ErrDimension.
func Evaluate(s *conformal.Set, test *bundle.Bundle) (Result, error) {
	return EvaluateContext(context.Background(), s, test)
}

// EvaluateContext is Evaluate, stopping with ctx's error when ctx is
// done: it looks every checkEvery anchors of each chunk (ccs evaluate
// went on for 4.5 s after Ctrl-C on 30 000 × 384 embeddings, and wrote
// its result). The numbers are Evaluate's.
func EvaluateContext(ctx context.Context, s *conformal.Set, test *bundle.Bundle) (Result, error) {
	if err := given(s, test); err != nil {
		return Result{}, err
	}
	if !s.Calibrated() {
		return Result{}, conformal.ErrNotCalibrated
	}

	if s.ClassConditional() {
		r, _, err := byClass(ctx, s, test, nil)
		return r, err
	}
	r, err := evaluateSet(ctx, s, []float64{s.Threshold}, test, nil)
	if err != nil {
		return Result{}, err
	}
	return r[0], nil
}

// Point is a geometry's result at one miscoverage level.
type Point struct {
	Alpha float64 `json:"alpha"`
	N     int     `json:"n"` // calibration scores behind the threshold
	Result
}

// Recalibrated calibrates s's geometry again at each α of alphas, on cal
// with s's calibration mode (and PAC's δ) and seed, and evaluates each set on test: the
// trade-off between coverage and exclusion one geometry offers as α varies
// (the geometry stays the one fitted for s.Alpha). cal must be the bundle
// s was calibrated on (disjoint from what chose the geometry: for an
// ellipsoid, the half that did not estimate Σ); a bundle giving another
// number of scores than s's calibration is refused. Each score is computed
// once. An α for which cal has too few scores is left out.
func Recalibrated(s *conformal.Set, cal, test *bundle.Bundle, alphas []float64) ([]Point, error) {
	_, pts, err := recalibrated(context.Background(), s, cal, test, alphas, false, nil)
	return pts, err
}

// WithCurve is Evaluate and Recalibrated in one pass over test: s's own
// result and its recalibrated points, each test difference scored once
// (the same numbers as the two calls, which score every difference twice).
func WithCurve(s *conformal.Set, cal, test *bundle.Bundle, alphas []float64) (Result, []Point, error) {
	return recalibrated(context.Background(), s, cal, test, alphas, true, nil)
}

// recalibrated is Recalibrated, with s's own threshold evaluated in the
// same pass when own is set; with sc (test's scores under s), counted
// from them; stopped by ctx as EvaluateContext is.
func recalibrated(ctx context.Context, s *conformal.Set, cal, test *bundle.Bundle, alphas []float64, own bool, sc *Scored) (Result, []Point, error) {
	if err := given(s, test); err != nil {
		return Result{}, nil, err
	}
	if cal == nil {
		return Result{}, nil, errors.New("eval: no calibration bundle (nil)")
	}
	if !s.Calibrated() {
		return Result{}, nil, conformal.ErrNotCalibrated
	}
	if s.ClassConditional() {
		return Result{}, nil, fmt.Errorf("eval: recalibrating a class-conditional set is not supported")
	}
	scores, err := conformal.Scores(s.Geometry, cal, s.Calibration.Mode, s.Calibration.Seed)
	if err != nil {
		return Result{}, nil, err
	}
	if len(scores) != s.Calibration.N {
		return Result{}, nil, fmt.Errorf("eval: recalibrating on %d scores, but the set was calibrated on %d: not its calibration bundle", len(scores), s.Calibration.N)
	}
	var pts []Point
	var qs []float64
	if own {
		qs = append(qs, s.Threshold)
	}
	opt := conformal.Options{Mode: s.Calibration.Mode, Delta: s.Calibration.Delta}
	for _, a := range alphas {
		q, _, err := conformal.Quantile(scores, a, opt)
		if errors.Is(err, conformal.ErrTooFewCalibration) {
			continue
		}
		if err != nil {
			return Result{}, nil, err
		}
		pts = append(pts, Point{Alpha: a, N: len(scores)})
		qs = append(qs, q)
	}
	rs, err := evaluateSet(ctx, s, qs, test, sc)
	if err != nil {
		return Result{}, nil, err
	}
	var r Result
	if own {
		r, rs = rs[0], rs[1:]
	}
	for i := range pts {
		pts[i].Result = rs[i]
	}
	return r, pts, nil
}

// evaluateSet is evaluate of s's geometry, refusing first (checkNorms) a
// test bundle whose anchors are not normalised as s's calibration's were.
func evaluateSet(ctx context.Context, s *conformal.Set, qs []float64, test *bundle.Bundle, sc *Scored) ([]Result, error) {
	if err := checkNorms(s, test); err != nil {
		return nil, err
	}
	return evaluate(ctx, s.Geometry, qs, test, sc)
}

// evaluate counts test's positives inside and negatives outside the set
// {φ ≤ q} for each threshold q of qs, scoring each difference once (or,
// with sc, counting test's scores under g from it). It stops with ctx's
// error when ctx is done (looked at every checkEvery anchors).
func evaluate(ctx context.Context, g geometry.Geometry, qs []float64, test *bundle.Bundle, sc *Scored) ([]Result, error) {
	if err := test.NeedPositives(); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	if g.Dim() != test.D {
		return nil, dimError(g.Dim(), test)
	}
	if err := test.Validate(); err != nil {
		return nil, fmt.Errorf("eval: test bundle: %w", err)
	}
	// Counts per chunk of anchors, summed in chunk order: integers, so the
	// result does not depend on the number of goroutines. A score is
	// counted once, in the bin of the sorted thresholds it falls below
	// (sq[b-1] < v ≤ sq[b]); a threshold's count is then a prefix sum.
	const chunk = 64
	sq := slices.DeleteFunc(slices.Sorted(slices.Values(qs)), func(q float64) bool { return q != q })
	nq := len(sq)
	nb := nq + 1 // bin nq: above every threshold
	in := make([]int, parallel.Chunks(test.N, chunk)*nb)
	out := make([]int, len(in))
	var per func() anchorScores
	switch {
	case sc != nil:
		per = sc.stored
	default:
		if per = imaged(g, test, qs); per == nil {
			per = streamed(test, decisive(g, qs))
		}
	}
	bin := func(v float64) int {
		b := 0
		for b < nq && sq[b] < v {
			b++
		}
		return b
	}
	parallel.For(test.N, chunk, 0, func(c, lo, hi int) {
		scores := per()
		cin, cout := in[c*nb:(c+1)*nb], out[c*nb:(c+1)*nb]
		for i := lo; i < hi; i++ {
			if stop(ctx, i, lo) {
				return
			}
			pos, neg := scores(i)
			for _, v := range pos {
				if v == v { // a NaN is inside no set
					cin[bin(v)]++
				}
			}
			for _, v := range neg {
				if v == v { // nor excluded by one
					cout[bin(v)]++
				}
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	binIn, binOut := make([]int, nb), make([]int, nb)
	for c := 0; c < len(in); c += nb {
		for b := range nb {
			binIn[b] += in[c+b]
			binOut[b] += out[c+b]
		}
	}
	rs := make([]Result, len(qs))
	for j, q := range qs {
		// Positives with v ≤ q are those of the bins up to q's; negatives
		// with v > q those of the bins after it. Nothing is ≤ or > NaN.
		var nin, nout int
		if q == q {
			last, _ := slices.BinarySearch(sq, q)
			for b := range nb {
				if b <= last {
					nin += binIn[b]
				} else {
					nout += binOut[b]
				}
			}
		}
		r := Result{Positives: test.N * test.K, Negatives: test.N * test.KNeg,
			LogVolPerDim: g.LogVolume(q) / float64(VolumeDim(g, test.D))}
		r.Coverage = float64(nin) / float64(r.Positives)
		r.Exclusion = math.NaN()
		if r.Negatives > 0 {
			r.Exclusion = float64(nout) / float64(r.Negatives)
		}
		rs[j] = r
	}
	return rs, nil
}

// checkEvery is how many anchors a chunk of a judgement scores between
// two looks at its context: a chunk of 64 anchors of a single-norm set
// at d = 768 (each difference through its d × d matrix) is seconds of
// work, 16 of them a fraction of one.
const checkEvery = 16

// stop says whether a loop over a chunk's anchors from lo, at anchor i,
// is to stop: ctx is done, looked at on every checkEvery-th anchor.
func stop(ctx context.Context, i, lo int) bool {
	return (i-lo)%checkEvery == 0 && ctx.Err() != nil
}

// given refuses a nil set or test bundle, which would panic where first
// read.
func given(s *conformal.Set, test *bundle.Bundle) error {
	if s == nil || test == nil {
		return errors.New("eval: no set or no test bundle (nil)")
	}
	return nil
}

// dimError is the refusal of a test bundle of another dimension than the
// set's, d: it matches conformal.ErrDimension, and reads as a
// *conformal.DimError of the bundle's shape.
func dimError(d int, test *bundle.Bundle) error {
	return conformal.DimErrorf("test bundle", []int{test.N, test.D}, d, "eval: the set has dimension %d, the test embeddings %d", d, test.D)
}

// checkNorms refuses, for a set calibrated on unit-norm embeddings (or
// around unit-norm anchors), a test bundle whose anchors are not
// normalised alike, as ccs evaluate does (conformal.Set.CheckBundleNorms,
// a *conformal.NormError naming the anchor): the set would judge them as
// another set than its guarantee speaks of, and report a coverage near 0
// with no error. A NaN or infinite anchor is named as such, and a bundle
// of another dimension left to the caller's check of it.
func checkNorms(s *conformal.Set, test *bundle.Bundle) error {
	if err := s.CheckBundleNorms(test); err != nil {
		return fmt.Errorf("eval: test bundle: %w", err)
	}
	return nil
}

// decisive returns a scorer whose scores fall on the same side of every
// threshold in qs as the exact ones (Scores): for a geometry with a fast
// score (geometry.FastScorer), the fast scores, and the exact score of each
// row whose fast score lies within the fast score's error bound of some
// threshold (or is not finite) — as geometry.Members decides one threshold.
func decisive(g geometry.Geometry, qs []float64) func(dst []float64, diffs []float32) []float64 {
	score := decisiveAt(g)
	if score == nil {
		return g.Scores
	}
	return func(dst []float64, diffs []float32) []float64 { return score(dst, diffs, qs) }
}

// decisiveAt is decisive with the thresholds given at each call, or nil
// for a geometry without a fast score worth the pass.
func decisiveAt(g geometry.Geometry) func(dst []float64, diffs []float32, qs []float64) []float64 {
	f, ok := g.(geometry.FastScorer)
	if !ok {
		return nil
	}
	rel, abs := f.FastTolerance()
	if !(rel < 0.5) || rel == 0 && abs == 0 {
		return nil // no bound worth the fast pass, or ScoresFast is Scores
	}
	d := g.Dim()
	return func(dst []float64, diffs []float32, qs []float64) []float64 {
		dst = f.ScoresFast(dst, diffs)
		// The rows left undecided, rescored exactly in one call (at
		// d = 768 a single-norm's fast bound is loose, and most positives
		// lie near q).
		var near []int
		for i, s := range dst {
			// geometry.Undecided for each q, its finiteness test once.
			undecided := math.IsInf(s, 0) || math.IsNaN(s)
			for _, q := range qs {
				undecided = undecided || geometry.Near(s, q, rel, abs)
			}
			if undecided {
				near = append(near, i)
			}
		}
		geometry.Rescore(g, dst, near, func(i int) []float32 { return diffs[i*d : (i+1)*d] })
		return dst
	}
}

// Summary is the mean and standard deviation of a metric over seeds. Std is
// the population standard deviation (divisor n, numpy.std's default, which
// the paper's ± figures use); it is 0 for a single seed.
type Summary struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	N    int     `json:"n"`
}

// SE is the standard error of the mean, Std/√N (NaN for no values).
func (s Summary) SE() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.Std / math.Sqrt(float64(s.N))
}

// Summarize returns the mean and standard deviation of x.
func Summarize(x []float64) Summary {
	s := Summary{N: len(x)}
	if len(x) == 0 {
		return Summary{Mean: math.NaN(), Std: math.NaN()}
	}
	for _, v := range x {
		s.Mean += v
	}
	s.Mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - s.Mean) * (v - s.Mean)
	}
	s.Std = math.Sqrt(ss / float64(len(x)))
	return s
}

// nullable is a float64 in JSON: NaN (not measured) is null, ±Inf (a
// whole-space set's volume) "+Inf"/"-Inf" (jsonfloat).
type nullable = jsonfloat.Float

// resultJSON is Result with its NaN exclusion (no negatives) as null.
type resultJSON struct {
	Coverage     float64  `json:"coverage"`
	Exclusion    nullable `json:"exclusion"`
	LogVolPerDim nullable `json:"logvol_per_dim"`
	Positives    int      `json:"positives"`
	Negatives    int      `json:"negatives"`
}

// MarshalJSON writes a NaN exclusion (no negatives) as null.
func (r Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.jsonForm()) }

func (r Result) jsonForm() resultJSON {
	return resultJSON{r.Coverage, nullable(r.Exclusion), nullable(r.LogVolPerDim), r.Positives, r.Negatives}
}

// UnmarshalJSON reads a null exclusion as NaN.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Result{j.Coverage, float64(j.Exclusion), float64(j.LogVolPerDim), j.Positives, j.Negatives}
	return nil
}

// pointJSON is Point's JSON form: α, n and the result's fields.
type pointJSON struct {
	Alpha float64 `json:"alpha"`
	N     int     `json:"n"`
	resultJSON
}

// MarshalJSON writes the point flat, a NaN exclusion as null.
func (p Point) MarshalJSON() ([]byte, error) {
	return json.Marshal(pointJSON{p.Alpha, p.N, p.Result.jsonForm()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Point) UnmarshalJSON(b []byte) error {
	var j pointJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	r := j.resultJSON
	*p = Point{j.Alpha, j.N, Result{r.Coverage, float64(r.Exclusion), float64(r.LogVolPerDim), r.Positives, r.Negatives}}
	return nil
}

// summaryJSON is Summary with NaN (no values) as null.
type summaryJSON struct {
	Mean nullable `json:"mean"`
	Std  nullable `json:"std"`
	N    int      `json:"n"`
}

// MarshalJSON writes NaN (a summary of nothing, or of NaN) as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{nullable(s.Mean), nullable(s.Std), s.N})
}

// UnmarshalJSON reads null as NaN.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Summary{float64(j.Mean), float64(j.Std), j.N}
	return nil
}

// VolumeDim is the dimension of the space g's log-volumes are measured
// in, by which LogVol/d divides them: the embeddings' d, but behind a
// projection head that is not square its output dimension, where its
// volumes are measured (geometry.Description.ProjectedVolume; a trial's
// 384→64 head read −0.24 as −91.2/384 where the 64-dimensional figure is
// −1.43, beside −1.5 for every square row).
func VolumeDim(g geometry.Geometry, d int) int {
	if desc := geometry.Describe(g); desc.ProjectedVolume() {
		return desc.HeadOut
	}
	return d
}
