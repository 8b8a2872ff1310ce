package eval

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/parallel"
)

// ClassResult is a set's result on the test anchors of one class.
type ClassResult struct {
	Label   int64 `json:"label"`
	Anchors int   `json:"anchors"`
	// Threshold is the one the class's anchors were judged with.
	Threshold float64 `json:"threshold"`
	Result
}

// ByClass evaluates s on test class by class (test.Labels required): each
// anchor's positives and negatives are judged with the threshold of its
// class for a class-conditional set, with the set's threshold otherwise
// (which shows how a marginal set's coverage spreads over the classes).
// It returns the whole result (LogVol/d averaged over the anchors) and one
// per class, by increasing label. A class-conditional set refuses a test
// class its calibration never saw.
func ByClass(s *conformal.Set, test *bundle.Bundle) (Result, []ClassResult, error) {
	return byClass(context.Background(), s, test, nil)
}

// byClass is ByClass, with sc (test's scores under s) counted from it,
// stopped by ctx as EvaluateContext is.
func byClass(ctx context.Context, s *conformal.Set, test *bundle.Bundle, sc *Scored) (Result, []ClassResult, error) {
	if err := given(s, test); err != nil {
		return Result{}, nil, err
	}
	if !s.Calibrated() {
		return Result{}, nil, conformal.ErrNotCalibrated
	}
	if s.Geometry.Dim() != test.D {
		return Result{}, nil, dimError(s.Geometry.Dim(), test)
	}
	if err := test.NeedPositives(); err != nil { // before the classes: an OOD sample's are not the set's
		return Result{}, nil, err
	}
	if err := test.Validate(); err != nil {
		return Result{}, nil, fmt.Errorf("eval: test bundle: %w", err)
	}
	if err := checkNorms(s, test); err != nil {
		return Result{}, nil, err
	}
	if test.Labels == nil {
		return Result{}, nil, fmt.Errorf("%w: the test bundle has no labels", conformal.ErrNoLabel)
	}
	labels := slices.Compact(slices.Sorted(slices.Values(test.Labels)))
	thr := make(map[int64]float64, len(labels))
	for _, l := range labels {
		q, err := s.ThresholdFor(l)
		if err != nil {
			return Result{}, nil, err
		}
		thr[l] = q
	}
	// Per-anchor integer counts: the sums do not depend on the goroutines.
	in := make([]int, test.N)
	out := make([]int, test.N)
	// Each anchor's scores decide the side of its class's threshold as the
	// exact ones do (decisive): the fast scores where the geometry has them.
	per := func() func(i int, q float64) (pos, neg []float64) {
		if sc != nil {
			stored := sc.stored()
			return func(i int, _ float64) (pos, neg []float64) { return stored(i) }
		}
		score := decisiveAt(s.Geometry)
		if score == nil {
			scores := streamed(test, s.Geometry.Scores)()
			return func(i int, _ float64) (pos, neg []float64) { return scores(i) }
		}
		qs := make([]float64, 1)
		scores := streamed(test, func(dst []float64, diffs []float32) []float64 { return score(dst, diffs, qs) })()
		return func(i int, q float64) (pos, neg []float64) {
			qs[0] = q
			return scores(i)
		}
	}
	parallel.For(test.N, 64, 0, func(_, lo, hi int) {
		scores := per()
		for i := lo; i < hi; i++ {
			if stop(ctx, i, lo) {
				return
			}
			q := thr[test.Labels[i]]
			pos, neg := scores(i, q)
			for _, v := range pos {
				if v <= q {
					in[i]++
				}
			}
			for _, v := range neg {
				if v > q {
					out[i]++
				}
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return Result{}, nil, err
	}
	result := func(anchors, nin, nout int, logVol float64) Result {
		r := Result{Positives: anchors * test.K, Negatives: anchors * test.KNeg, LogVolPerDim: logVol / float64(VolumeDim(s.Geometry, test.D))}
		r.Coverage = float64(nin) / float64(r.Positives)
		r.Exclusion = math.NaN()
		if r.Negatives > 0 {
			r.Exclusion = float64(nout) / float64(r.Negatives)
		}
		return r
	}
	idx := map[int64]int{}
	classes := make([]ClassResult, len(labels))
	for k, l := range labels {
		idx[l] = k
		classes[k] = ClassResult{Label: l, Threshold: thr[l]}
	}
	cin, cout := make([]int, len(labels)), make([]int, len(labels))
	var tin, tout int
	var logVol float64
	for i, l := range test.Labels {
		k := idx[l]
		classes[k].Anchors++
		cin[k] += in[i]
		cout[k] += out[i]
		tin += in[i]
		tout += out[i]
	}
	for k := range classes {
		lv := s.Geometry.LogVolume(classes[k].Threshold)
		classes[k].Result = result(classes[k].Anchors, cin[k], cout[k], lv)
		logVol += float64(classes[k].Anchors) * lv
	}
	return result(test.N, tin, tout, logVol/float64(test.N)), classes, nil
}

// MinClassAnchors is the fewest test anchors of a class that the worst
// class is named among (WorstClass's min, as ccs evaluate and compare use
// it): a long tail of classes of a few anchors each — protein families of
// 17 members, 3 of them test anchors — moves in steps of a third, and
// the lowest of hundreds of such is 0% or 40% by chance alone.
const MinClassAnchors = 20

// WorstClass is the class of lowest coverage among classes (not empty),
// the first such by label, among those of at least min anchors where any
// has that many, and how many classes had fewer (JudgedClasses' rule).
func WorstClass(classes []ClassResult, min int) (worst ClassResult, fewer int) {
	anchors := make([]int, len(classes))
	for i, c := range classes {
		anchors[i] = c.Anchors
	}
	keep, fewer := judge(anchors, min)
	judged := classes[:0:0]
	for i, c := range classes {
		if keep[i] {
			judged = append(judged, c)
		}
	}
	return Worst(judged), fewer
}

// JudgedClasses are the classes of labels (the test anchors') that
// WorstClass judges at min, where their results are not yet at hand (ccs
// compare's Worst class column, over seeds): those of at least min
// anchors, and how many classes have fewer; nil and 0 where every class
// is judged (each has min or more, or none has).
func JudgedClasses(labels []int64, min int) (judged map[int64]bool, fewer int) {
	count := map[int64]int{}
	var order []int64
	for _, l := range labels {
		if count[l]++; count[l] == 1 {
			order = append(order, l)
		}
	}
	anchors := make([]int, len(order))
	for i, l := range order {
		anchors[i] = count[l]
	}
	keep, fewer := judge(anchors, min)
	if fewer == 0 {
		return nil, 0
	}
	judged = map[int64]bool{}
	for i, l := range order {
		if keep[i] {
			judged[l] = true
		}
	}
	return judged, fewer
}

// judge is WorstClass's and JudgedClasses' rule, on classes of anchors[i]
// test anchors each: those of min anchors or more are judged, and fewer
// counts the others; where none has that many, all are, fewer 0 (a long
// tail of small classes alone still has a worst).
func judge(anchors []int, min int) (judged []bool, fewer int) {
	judged = make([]bool, len(anchors))
	for i, n := range anchors {
		if judged[i] = n >= min; !judged[i] {
			fewer++
		}
	}
	if fewer == len(anchors) {
		for i := range judged {
			judged[i] = true
		}
		fewer = 0
	}
	return judged, fewer
}

// Worst is the class with the lowest coverage (the first such by label).
func Worst(classes []ClassResult) ClassResult {
	w := classes[0]
	for _, c := range classes[1:] {
		if c.Coverage < w.Coverage {
			w = c
		}
	}
	return w
}
