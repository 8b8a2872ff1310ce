package eval

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/jsonfloat"
)

// TrialResult is a set judged on a speaker-verification trial list (test
// utterance inside the set around the enrolment: accepted), beside the
// cosine scores of the same trials.
type TrialResult struct {
	Trials     int `json:"trials"`
	Targets    int `json:"targets"`
	NonTargets int `json:"non_targets"`
	// Miss is the share of target trials the set rejects (its test
	// utterance outside the set around the enrolment), and
	// FalseAcceptance the share of non-target trials it accepts.
	Miss            float64 `json:"miss"`
	FalseAcceptance float64 `json:"false_acceptance"`
	// CosineEER is the equal error rate of a cosine threshold on these
	// trials (accepting cos ≥ t), at CosineEERThreshold: the t, among the
	// trials' scores, at which the miss and false-acceptance rates are
	// nearest, and their mean there. Chosen on the trials themselves, it
	// is no certified threshold.
	CosineEER          float64 `json:"cosine_eer"`
	CosineEERThreshold float64 `json:"cosine_eer_threshold"`
	// CosineAtMiss is the cosine threshold that misses as many of these
	// target trials as the set does (the ⌊Miss·Targets⌋-th smallest
	// target score, fewer where scores tie; +Inf, accepting nothing, when
	// the set misses every target: "+Inf" in JSON, as jsonfloat writes
	// it), and CosineFalseAcceptance the share of non-target trials it
	// accepts.
	CosineAtMiss          jsonfloat.Float `json:"cosine_at_miss"`
	CosineFalseAcceptance float64         `json:"cosine_false_acceptance"`
}

// Trials judges set s on trials of the embeddings rows (d a row): each
// trial's test row inside the set around its enrolment row, as
// s.Members decides, and the same trials' cosine scores. A
// class-conditional set, which needs each enrolment's class, is an error,
// as is a trial list without target or without non-target trials, a row
// of norm 0 (no cosine), or, for a set calibrated on unit-norm embeddings,
// a row whose norm is not 1 (conformal.Set.CheckNorms).
func Trials(s *conformal.Set, rows []float32, d int, trials []bundle.Trial) (TrialResult, error) {
	var r TrialResult
	if d != s.Geometry.Dim() {
		return r, fmt.Errorf("embeddings of dimension %d; the set's dimension is %d", d, s.Geometry.Dim())
	}
	n := len(rows) / d
	for _, t := range trials {
		if t.Enrol < 0 || t.Enrol >= n || t.Test < 0 || t.Test >= n {
			return r, fmt.Errorf("a trial names row %d or %d, there are %d rows", t.Enrol, t.Test, n)
		}
		if t.Target {
			r.Targets++
		} else {
			r.NonTargets++
		}
	}
	r.Trials = len(trials)
	if r.Targets == 0 || r.NonTargets == 0 {
		return r, fmt.Errorf("%d target and %d non-target trials: a miss rate and a false-acceptance rate need both", r.Targets, r.NonTargets)
	}
	norms := make([]float64, n)
	for _, t := range trials {
		for _, i := range []int{t.Enrol, t.Test} {
			if norms[i] != 0 {
				continue
			}
			var ss float64
			for _, v := range rows[i*d : (i+1)*d] {
				ss += float64(v) * float64(v)
			}
			if ss == 0 {
				return r, fmt.Errorf("row %d is all zeros: no cosine score (an utterance that failed to embed?)", i)
			}
			if err := s.CheckNorms(rows[i*d : (i+1)*d]); err != nil {
				return r, fmt.Errorf("row %d: %w", i, err)
			}
			norms[i] = math.Sqrt(ss)
		}
	}
	// Each enrolment's trials in one call: its test rows gathered.
	order := make([]int, len(trials))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(trials[a].Enrol, trials[b].Enrol) })
	inside := make([]bool, len(trials))
	var points []float32
	var dst []bool
	for lo := 0; lo < len(order); {
		e := trials[order[lo]].Enrol
		hi := lo
		points = points[:0]
		for ; hi < len(order) && trials[order[hi]].Enrol == e; hi++ {
			t := trials[order[hi]].Test
			points = append(points, rows[t*d:(t+1)*d]...)
		}
		var err error
		if dst, err = s.Members(slices.Grow(dst[:0], hi-lo)[:hi-lo], rows[e*d:(e+1)*d], points, nil); err != nil {
			if errors.Is(err, conformal.ErrNoLabel) {
				return r, fmt.Errorf("%w: a class-conditional set judges an enrolment by its class, which a trial list does not give", err)
			}
			return r, err
		}
		for j := lo; j < hi; j++ {
			inside[order[j]] = dst[j-lo]
		}
		lo = hi
	}
	var tgt, non []float64
	missed, accepted := 0, 0
	for i, t := range trials {
		var dot float64
		a, b := rows[t.Enrol*d:(t.Enrol+1)*d], rows[t.Test*d:(t.Test+1)*d]
		for j := range a {
			dot += float64(a[j]) * float64(b[j])
		}
		c := dot / (norms[t.Enrol] * norms[t.Test])
		if t.Target {
			tgt = append(tgt, c)
			if !inside[i] {
				missed++
			}
		} else {
			non = append(non, c)
			if inside[i] {
				accepted++
			}
		}
	}
	r.Miss = float64(missed) / float64(r.Targets)
	r.FalseAcceptance = float64(accepted) / float64(r.NonTargets)
	slices.Sort(tgt)
	slices.Sort(non)
	// Accepting cos ≥ t: targets below t are missed, non-targets from t on
	// accepted.
	rates := func(t float64) (miss, fa float64) {
		below, _ := slices.BinarySearch(tgt, t)
		from, _ := slices.BinarySearch(non, t)
		return float64(below) / float64(len(tgt)), float64(len(non)-from) / float64(len(non))
	}
	best := math.Inf(1)
	for _, t := range slices.Concat(tgt, non) {
		miss, fa := rates(t)
		if gap := math.Abs(miss - fa); gap < best || gap == best && t < r.CosineEERThreshold {
			best, r.CosineEER, r.CosineEERThreshold = gap, (miss+fa)/2, t
		}
	}
	atMiss := math.Inf(1) // every target missed: accept nothing
	if missed < len(tgt) {
		atMiss = tgt[missed]
	}
	r.CosineAtMiss = jsonfloat.Float(atMiss)
	_, r.CosineFalseAcceptance = rates(atMiss)
	return r, nil
}
