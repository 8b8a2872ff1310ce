package eval

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/parallel"
)

// LabelResult is a set's coverage, in a bundle of several labels a row,
// of the test positives that share one label with their anchor: how many
// anchors have such a positive, how many positives share it, and the
// fraction of those inside the set around their anchor. A positive that
// shares several labels counts for each.
type LabelResult struct {
	Label     int64   `json:"label"`
	Anchors   int     `json:"anchors"`
	Positives int     `json:"positives"`
	Coverage  float64 `json:"coverage"`
}

// ByLabel judges s on test label by label (test.PositiveLabels required:
// ccs bundle writes them for several labels a row), one result a label,
// by increasing label. The set's guarantee is over the calibration's
// units, not label by label: a rare label's coverage can fall short of
// 1 − α where the whole coverage does not. A class-conditional set is
// refused (its thresholds are by anchor label, which such bundles lack).
func ByLabel(s *conformal.Set, test *bundle.Bundle) ([]LabelResult, error) {
	return byLabel(context.Background(), s, test, nil)
}

// ByLabel is ByLabel(s, b), from the stored scores.
func (sc *Scored) ByLabel() ([]LabelResult, error) {
	return byLabel(context.Background(), sc.set, sc.b, sc)
}

// byLabel is ByLabel, with sc (test's scores under s) counted from it,
// stopped by ctx as EvaluateContext is.
func byLabel(ctx context.Context, s *conformal.Set, test *bundle.Bundle, sc *Scored) ([]LabelResult, error) {
	if err := given(s, test); err != nil {
		return nil, err
	}
	if !s.Calibrated() {
		return nil, conformal.ErrNotCalibrated
	}
	if s.ClassConditional() {
		return nil, fmt.Errorf("%w: a class-conditional set judges anchors by their label, and several labels a row give none", conformal.ErrNoLabel)
	}
	if s.Geometry.Dim() != test.D {
		return nil, dimError(s.Geometry.Dim(), test)
	}
	if err := test.NeedPositives(); err != nil {
		return nil, err
	}
	if err := test.Validate(); err != nil {
		return nil, fmt.Errorf("eval: test bundle: %w", err)
	}
	if err := checkNorms(s, test); err != nil {
		return nil, err
	}
	if test.PositiveLabelStart == nil {
		return nil, fmt.Errorf("eval: by label: the test bundle carries no labels of its positives (ccs bundle writes them for several labels a row)")
	}
	q := s.Threshold
	inside := make([]bool, test.N*test.K)
	if sc != nil {
		for u, v := range sc.pos {
			inside[u] = v <= q
		}
	} else {
		parallel.For(test.N, 64, 0, func(_, lo, hi int) {
			diffs := make([]float32, test.K*test.D)
			scores := make([]float64, test.K)
			for i := lo; i < hi; i++ {
				if stop(ctx, i, lo) {
					return
				}
				for j, v := range s.Geometry.Scores(scores, test.PositiveDiffs(diffs, i)) {
					inside[i*test.K+j] = v <= q
				}
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	type count struct{ anchors, positives, in, last int }
	counts := map[int64]*count{}
	start, labels := test.PositiveLabelStart, test.PositiveLabels
	for u := range test.N * test.K {
		for _, l := range labels[start[u]:start[u+1]] {
			c := counts[l]
			if c == nil {
				c = &count{last: -1}
				counts[l] = c
			}
			if a := u / test.K; c.last != a {
				c.anchors, c.last = c.anchors+1, a
			}
			c.positives++
			if inside[u] {
				c.in++
			}
		}
	}
	out := make([]LabelResult, 0, len(counts))
	for _, l := range slices.Sorted(maps.Keys(counts)) {
		c := counts[l]
		out = append(out, LabelResult{Label: l, Anchors: c.anchors, Positives: c.positives, Coverage: float64(c.in) / float64(c.positives)})
	}
	return out, nil
}

// WithLabels is Evaluate and ByLabel (test's positives' labels needed): s's
// result and each label's, the numbers of the two calls. As WithClasses:
// for a geometry with a fast score, the two calls; otherwise test is
// scored once, exactly (Score), for both.
func WithLabels(s *conformal.Set, test *bundle.Bundle) (Result, []LabelResult, error) {
	return WithLabelsContext(context.Background(), s, test)
}

// WithLabelsContext is WithLabels, stopping with ctx's error when ctx is
// done, as EvaluateContext does; the numbers are WithLabels'.
func WithLabelsContext(ctx context.Context, s *conformal.Set, test *bundle.Bundle) (Result, []LabelResult, error) {
	if err := given(s, test); err != nil {
		return Result{}, nil, err
	}
	if decisiveAt(s.Geometry) != nil || s.ClassConditional() {
		labels, err := byLabel(ctx, s, test, nil) // refuses a class-conditional set
		if err != nil {
			return Result{}, nil, err
		}
		r, err := EvaluateContext(ctx, s, test)
		return r, labels, err
	}
	sc, err := score(ctx, s, test)
	if err != nil {
		return Result{}, nil, err
	}
	labels, err := sc.ByLabel()
	if err != nil {
		return Result{}, nil, err
	}
	r, err := sc.Evaluate()
	return r, labels, err
}

// MinLabelPositives is the fewest positives of a label that the worst
// label is named among (WorstLabel's min, as ccs evaluate and compare
// use it): a label of a handful of positives says little.
const MinLabelPositives = 20

// WorstLabel is the label of lowest coverage among labels (not empty),
// the first such by label, among those of at least min positives where
// any has that many (a label of a handful of positives says little), and
// how many labels had fewer.
func WorstLabel(labels []LabelResult, min int) (worst LabelResult, fewer int) {
	judged := labels[:0:0]
	for _, l := range labels {
		if l.Positives >= min {
			judged = append(judged, l)
		} else {
			fewer++
		}
	}
	if len(judged) == 0 {
		judged, fewer = labels, 0
	}
	worst = judged[0]
	for _, l := range judged[1:] {
		if l.Coverage < worst.Coverage {
			worst = l
		}
	}
	return worst, fewer
}
