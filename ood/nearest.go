package ood

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// Nearest is the per-input CCS OOD score of a fitted set: for an input
// embedding x, the K-th smallest φ(a_i − x)/q̂ over a reference pool of
// in-distribution anchors a_i (through the set's projection head when it
// has one). A score of at most 1 says x is inside the certified set of K
// pool anchors; above 1, how far outside the nearest ones it is, in units
// of the threshold. It is the deep-nearest-neighbour detector of Sun et al.
// (KNN) with the set's learned, calibrated metric in place of the
// Euclidean distance between normalised features. Unlike the paper's score
// (CCSBatch) it needs nothing but the input, and it is exact (Pool).
type Nearest struct {
	set  *conformal.Set
	pool *Pool
	k    int
	// index is the pool rows' source rows where the pool is the set's
	// reference and it records them (conformal.Reference.Index), in the
	// embeddings named embeddings.
	index      []int64
	embeddings string
}

// NewNearest prepares the score of the calibrated set s over the pool rows
// (rows of the set's dimension; nil: the set's reference pool), the k-th
// nearest.
func NewNearest(s *conformal.Set, rows []float32, k int) (*Nearest, error) {
	if s == nil {
		return nil, errors.New("ood: no set (nil)")
	}
	if err := checkSet(s, s.Geometry.Dim()); err != nil {
		return nil, err
	}
	var index []int64
	var embeddings string
	if rows == nil {
		if s.Reference == nil {
			return nil, errors.New("ood: the set has no reference pool (ccs calibrate -reference N or -reference-db FILE; reference= in Python; conformal.NewReference in Go)")
		}
		rows, index, embeddings = s.Reference.Rows, s.Reference.Index, s.Reference.Embeddings
	}
	p, err := NewPool(s.Geometry, rows)
	if err != nil {
		return nil, err
	}
	if k < 1 || k > p.N() {
		return nil, fmt.Errorf("ood: k = %d nearest of a pool of %d rows: want 1 ≤ k ≤ %d", k, p.N(), p.N())
	}
	return &Nearest{set: s, pool: p, k: k, index: index, embeddings: embeddings}, nil
}

// K is the neighbour the score takes.
func (n *Nearest) K() int { return n.k }

// Scores returns the score of each query row (rows of the set's
// dimension). Values that are not rows of it match
// conformal.ErrDimension; for a set calibrated on unit-norm embeddings
// (or around unit-norm anchors) a query whose norm is not 1 is a
// *conformal.NormError naming it, as ccs ood refuses its inputs (an
// unnormalised in-distribution input would be flagged, with no hint why),
// and a NaN or infinite coordinate is named as such
// (conformal.Set.CheckAnchorRows).
func (n *Nearest) Scores(queries []float32) ([]float64, error) {
	if err := checkRows(n.set, "query", "queries", queries); err != nil {
		return nil, err
	}
	return n.scores(queries)
}

// scoreChunk is the number of inputs the per-input score of a CCS row
// (CCS's PerInput) scores between two looks at its context: a fourth of
// Answer's chunk, for ccs ood's progress lines and Ctrl-C.
const scoreChunk = 256

// scoresContext is Scores a chunk of per queries at a time (scoreChunk
// for a CCS row, chunk for Conformal.Answer), stopping with ctx's error
// when ctx is done and telling progress (when not nil) the queries scored
// after each chunk: each query's score is its own, whatever chunk it is
// scored in.
func (n *Nearest) scoresContext(ctx context.Context, queries []float32, per int, progress func(done, total int)) ([]float64, error) {
	if err := checkRows(n.set, "query", "queries", queries); err != nil {
		return nil, err
	}
	d := n.pool.d
	m := len(queries) / d
	out := make([]float64, 0, m)
	for lo := 0; lo < m; lo += per {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(m, lo+per)
		s, err := n.scores(queries[lo*d : hi*d])
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
		if progress != nil {
			progress(hi, m)
		}
	}
	return out, nil
}

// scores is Scores of rows checkRows has taken.
func (n *Nearest) scores(queries []float32) ([]float64, error) {
	kth, err := n.pool.Kth(nil, queries, n.k)
	if err != nil {
		return nil, err
	}
	q := n.set.Threshold
	for i := range kth {
		kth[i] /= q
	}
	return kth, nil
}

// Calibrate scores held-out in-distribution inputs (rows) for the set file:
// they must be disjoint from the pool and from everything the set was
// fitted and calibrated on. Rows the set's file records it was fitted or
// validated on (conformal.Set.CheckOODInputs: the splits' digests, and
// many rows of its filter of their rows) are refused, as is an input that
// is a row of the pool (its nearest score would be 0), and what Scores
// refuses: the test's queries are normalised as these inputs were.
func (n *Nearest) Calibrate(rows []float32, source string) (*conformal.OODCalibration, error) {
	return n.CalibrateIndexed(rows, nil, "", source)
}

// CalibrateIndexed is Calibrate for inputs whose source rows (their rows of
// the embeddings named embeddings, Bundle.Index and .Embeddings: ccs
// bundle's splits record them) are index: an input equal to a pool row
// from another source row of the same embeddings — the pool recording its
// own (conformal.Reference.Index) — is one of the data's own exact copies,
// which new inputs meet alike, and passes; one from the same source row,
// or where either side records none or they number other embeddings (a
// re-export in another order), is a pool row given again and refused.
func (n *Nearest) CalibrateIndexed(rows []float32, index []int64, embeddings, source string) (*conformal.OODCalibration, error) {
	d := n.pool.d
	if err := checkRows(n.set, "calibration input", "calibration inputs", rows); err != nil {
		return nil, err
	}
	if index != nil && len(index) != len(rows)/d {
		return nil, fmt.Errorf("ood: %d source rows for %d calibration inputs", len(index), len(rows)/d)
	}
	if err := n.set.CheckOODInputs(&bundle.Bundle{N: len(rows) / d, D: d, Anchors: rows, Index: index, Embeddings: embeddings}); err != nil {
		return nil, fmt.Errorf("ood: calibration inputs %s: %w", source, err)
	}
	inputs, poolIndex := index, n.index
	if embeddings == "" || embeddings != n.embeddings {
		index, poolIndex = nil, nil // source rows of other embeddings, or unknown: not comparable
	}
	if i, j, again, copies := sharedRows(rows, n.pool.rows, d, index, poolIndex); again > 0 {
		msg := fmt.Sprintf("ood: calibration input %d equals pool row %d (%d of the %d inputs are pool rows): the calibration inputs must be disjoint from the reference pool, whose rows score 0 — the pool's split given as calibration inputs, or another bundling's", i, j, again, len(rows)/d)
		if embeddings != "" && n.embeddings != "" && embeddings != n.embeddings {
			msg += "; the inputs number their rows in other embeddings than the pool's — another export of them? —, so equal rows cannot be told from pool rows given again"
		} else if index == nil || poolIndex == nil {
			msg += "; if they are the data's own exact copies of rows, make the splits with ccs bundle, whose splits record each row's source row so that copies are told from rows given again (and calibrate the pool with this ccs, which keeps it), or remove the copies (keep = np.sort(np.unique(x, axis=0, return_index=True)[1]), then x[keep] and labels[keep])"
		} else if copies > 0 {
			msg += fmt.Sprintf(" (%d more equal pool rows from other source rows: the data's copies, which pass)", copies)
		}
		return nil, errors.New(msg)
	}
	s, err := n.scores(rows)
	if err != nil {
		return nil, err
	}
	c, err := conformal.NewOODCalibration(n.k, s, source)
	if err != nil {
		return nil, err
	}
	c.Rows = bundle.RowFilterOf(rows, n.pool.d)
	if inputs != nil && embeddings != "" {
		c.Sources = bundle.NewSourceFilter(&bundle.Bundle{N: len(rows) / d, D: d, Anchors: rows, Index: inputs})
		c.Embeddings = embeddings
	}
	return c, nil
}

// checkRows checks rows given to the set s as inputs, one and many naming
// one and several of them: rows of s's dimension (conformal.ErrDimension),
// finite (the first NaN or infinite coordinate named by its row in the
// whole batch, which Answer scores a chunk at a time), and, for a set
// calibrated on unit-norm embeddings or around unit-norm anchors, of norm
// 1 (conformal.Set.CheckAnchorRows: a *conformal.NormError naming the
// row).
func checkRows(s *conformal.Set, one, many string, rows []float32) error {
	d := s.Geometry.Dim()
	if d == 0 || len(rows)%d != 0 {
		return conformal.DimensionErrorf("ood: %d %s values are not rows of dimension %d", len(rows), one, d)
	}
	if i := bundle.FirstNonFinite(rows); i >= 0 {
		return fmt.Errorf("ood: %s[%d][%d] is %v", many, i/d, i%d, rows[i])
	}
	if err := s.CheckAnchorRows(many, rows); err != nil {
		var ne *conformal.NormError
		if errors.As(err, &ne) {
			return fmt.Errorf("ood: %s %d: %w", one, ne.Row, err)
		}
		return fmt.Errorf("ood: %w", err)
	}
	return nil
}

// sharedRows counts the rows of a (rows of d) equal to a row of b: again,
// those that are b's rows given again — from the same source row, by
// their source rows ai and bi, or all where either is nil — naming the
// first (row i of a equal to row j of b), and copies, those equal from
// another source row.
func sharedRows(a, b []float32, d int, ai, bi []int64) (i, j, again, copies int) {
	seen := make(map[string][]int, len(b)/d)
	key := func(r []float32) string {
		buf := make([]byte, 0, 4*d)
		for _, v := range r {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		return string(buf)
	}
	for r := range len(b) / d {
		k := key(b[r*d : (r+1)*d])
		seen[k] = append(seen[k], r)
	}
	for r := range len(a) / d {
		rs, ok := seen[key(a[r*d:(r+1)*d])]
		if !ok {
			continue
		}
		at := rs[0]
		if ai != nil && bi != nil {
			at = -1
			for _, x := range rs {
				if bi[x] == ai[r] {
					at = x
				}
			}
			if at < 0 {
				copies++
				continue
			}
		}
		if again == 0 {
			i, j = r, at
		}
		again++
	}
	return i, j, again, copies
}

// Conformal is a set's certified per-input OOD test: its Nearest score,
// the calibration stored with it, and the test's level.
type Conformal struct {
	Score *Nearest
	Cal   *Calibration
	Test  Test
}

// NewConformal builds the test a set file holds (its reference pool and
// its OOD calibration) at level test, refusing a level the calibration
// cannot reach; a zero test leaves the level to With (a service that takes
// it from each request), and Answer refuses it (ErrNoLevel) until then.
func NewConformal(s *conformal.Set, test Test) (*Conformal, error) {
	if s == nil {
		return nil, errors.New("ood: no set (nil)")
	}
	if s.OOD == nil {
		return nil, errors.New("ood: the set has no OOD calibration (ccs calibrate -ood-cal FILE; ood_cal= in Python; Nearest.Calibrate in Go)")
	}
	n, err := NewNearest(s, nil, s.OOD.K)
	if err != nil {
		return nil, err
	}
	c, err := NewCalibration(s.OOD.Scores)
	if err != nil {
		return nil, err
	}
	if test != (Test{}) {
		if err := test.Check(c.N()); err != nil {
			return nil, err
		}
	}
	return &Conformal{Score: n, Cal: c, Test: test}, nil
}

// Result is the test's answer for one input.
type Result struct {
	Score  float64 `json:"score"`   // the Nearest score
	PValue float64 `json:"p_value"` // its conformal p-value (with the calibration-conditional slack, if any)
	OOD    bool    `json:"ood"`     // p ≤ α_ood
}
