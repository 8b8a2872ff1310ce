package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
)

// collectionTransform is ccs_collection_transform: it prepares the
// collection of handle h for searches with the set of handle setH, a
// single-norm or ellipsoid set, or a single-norm or generalized ball
// behind a head (of a shifted set, its inner one):
// retrieve.Collection.Transform, within maxBytes (≤ 0: no limit). A
// class-conditional set is transformed for too: the transform is kept by
// the geometry, which its one-class sets (ForClass: retrieve(label=),
// retrieve_many(labels=), for_class) share, so each of them searches it.
// It refuses, with the reason, a set of another family or a transform
// over the limit; the searches then scan plainly, with the same hits.
func collectionTransform(h, setH uintptr, maxBytes int64) error {
	o, err := lookup[*collectionObj](h, "a collection")
	if err != nil {
		return err
	}
	s, err := lookup[*setObj](setH, "a set")
	if err != nil {
		return err
	}
	return o.c.Transform(s.s, maxBytes)
}

// newCollection makes a collection of rows ((n, d), floating point) and
// ids ((n,) integers or strings — the collection's Keys —, or nil: the row
// numbers). With view, rows of
// float32 in C order are the caller's memory (a collection for one call);
// otherwise they are copied (a collection kept in a handle).
func newCollection(rows rawArray, ids *rawArray, view bool) (*retrieve.Collection, error) {
	rows.Name = "collection"
	x, err := decodeF32(rows, view)
	if err != nil {
		return nil, err
	}
	if len(rows.Shape) != 2 || rows.Shape[0] < 1 || rows.Shape[1] < 1 {
		return nil, fmt.Errorf("collection: shape %s: want (n, d), n, d ≥ 1", bundle.FormatShape(rows.Shape))
	}
	var id []int64
	var keys []string
	if ids != nil {
		ids.Name = "ids"
		a, err := decode(*ids)
		if err != nil {
			return nil, err
		}
		switch {
		case a.I64 == nil && a.Str == nil || len(a.Shape) != 1:
			return nil, fmt.Errorf("ids: dtype %s, shape %s: want integers or strings (%d,)", a.Kind(), bundle.FormatShape(a.Shape), rows.Shape[0])
		case a.Shape[0] != rows.Shape[0] && a.Shape[0] == rows.Shape[1]:
			return nil, fmt.Errorf("ids: %d ids for the %d rows of the collection, shape %s: the collection %s", a.Shape[0], rows.Shape[0], bundle.FormatShape(rows.Shape), bundle.Transposed)
		case a.Shape[0] != rows.Shape[0]:
			return nil, fmt.Errorf("ids: %d ids for the %d rows of the collection", a.Shape[0], rows.Shape[0])
		}
		id, keys = a.I64, a.Str
		if err := retrieve.UniqueIDs(id); err != nil {
			return nil, fmt.Errorf("ids: %w", err)
		}
	}
	// The package's errors less its prefix: the arguments' names say
	// what is wrong here.
	c, err := retrieve.NewCollection(x, rows.Shape[1], id)
	if err != nil {
		return nil, fmt.Errorf("collection: %w", cmp.Or(errors.Unwrap(err), err))
	}
	if keys != nil {
		if err := c.SetKeys(keys); err != nil {
			return nil, fmt.Errorf("ids: %w", cmp.Or(errors.Unwrap(err), err))
		}
	}
	return c, nil
}

// noLabel is a class-conditional set's refusal (conformal.ErrNoLabel) of
// what takes no label, saying what does.
func noLabel(err error, what string) error {
	if what == "retrieve" {
		return fmt.Errorf("%w: give it, retrieve(anchor, collection, label=L) (its integer label or its class's name) or retrieve_many(anchors, collection, labels=[...]), which retrieve with its class's threshold", err)
	}
	return fmt.Errorf("%w; %s takes none: calibrate the set with one threshold for it (calibration=\"one\" or \"pac\"), or ask contains(anchor, points, label=L)", err, what)
}

// hits are a retrieval's answer: the items inside, nearest first (at most
// the limit asked for), and how many are inside in all.
type hits struct {
	IDs    []int64
	Rows   []int64
	Scores []float64
	Total  int
}

// search is ccs retrieve: the items of c inside s around anchor ((d,) or
// (1, d)), nearest first, at most limit (0: all).
func search(ctx context.Context, s *conformal.Set, c *retrieve.Collection, anchor rawArray, limit int) (*hits, error) {
	if limit < 0 {
		return nil, fmt.Errorf("retrieve: limit=%d: want ≥ 1, or None for all", limit)
	}
	anchor.Name = "anchor"
	a, err := decodeF32(anchor, true)
	if err != nil {
		return nil, err
	}
	if err := s.CheckDim("anchor", anchor.Shape...); err != nil {
		return nil, err
	}
	if len(anchor.Shape) > 2 || len(anchor.Shape) == 2 && anchor.Shape[0] != 1 {
		d := s.Geometry.Dim()
		return nil, fmt.Errorf("anchor: shape %s: want one anchor, (%d,) or (1, %d)", bundle.FormatShape(anchor.Shape), d, d)
	}
	if err := finiteAnchor(a); err != nil {
		return nil, err
	}
	if err := s.CheckAnchorNorms(a); err != nil {
		return nil, fmt.Errorf("anchor: %w", err)
	}
	if err := s.CheckDim("collection", c.N, c.D); err != nil {
		return nil, err
	}
	if err := s.OneThreshold(); err != nil {
		return nil, noLabel(err, "retrieve")
	}
	hs, total, err := retrieve.Search(ctx, s, a, c, limit)
	if err != nil {
		return nil, err
	}
	h := &hits{Total: total, IDs: make([]int64, len(hs)), Rows: make([]int64, len(hs)), Scores: make([]float64, len(hs))}
	for i, x := range hs {
		h.IDs[i], h.Rows[i], h.Scores[i] = x.ID, int64(x.Row), x.Score
	}
	return h, nil
}

// searchMany is Set.retrieve_many: the items of c inside s around each
// row of anchors ((m, d)), nearest first, at most limit each (0: all), in
// one pass over c (retrieve.SearchBatch: the same hits as search on each
// row, without reading c once a row). A row search refuses is named by
// its index (anchors[i]: and search's message).
func searchMany(ctx context.Context, s *conformal.Set, c *retrieve.Collection, anchors rawArray, limit int) ([]*hits, error) {
	if limit < 0 {
		return nil, fmt.Errorf("retrieve: limit=%d: want ≥ 1, or None for all", limit)
	}
	anchors.Name = "anchors"
	a, err := decodeF32(anchors, true)
	if err != nil {
		return nil, err
	}
	if len(anchors.Shape) != 2 {
		d := s.Geometry.Dim()
		return nil, fmt.Errorf("anchors: shape %s: want (m, %d), one anchor a row", bundle.FormatShape(anchors.Shape), d)
	}
	if err := s.CheckDim("anchors", anchors.Shape...); err != nil {
		return nil, err
	}
	if err := s.CheckDim("collection", c.N, c.D); err != nil {
		return nil, err
	}
	if err := s.OneThreshold(); err != nil {
		return nil, noLabel(err, "retrieve")
	}
	m, d := anchors.Shape[0], anchors.Shape[1]
	for i := range m {
		row := a[i*d : (i+1)*d]
		if err := finiteAnchor(row); err != nil {
			return nil, fmt.Errorf("anchors[%d]: %w", i, err)
		}
		if err := s.CheckAnchorNorms(row); err != nil {
			return nil, fmt.Errorf("anchors[%d]: anchor: %w", i, err)
		}
		if err := retrieve.CheckQuery(s, row, c.D); err != nil {
			return nil, fmt.Errorf("anchors[%d]: %w", i, err)
		}
	}
	found, totals, err := retrieve.SearchBatch(ctx, s, a, c, limit, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*hits, m)
	for i, hs := range found {
		h := &hits{Total: totals[i], IDs: make([]int64, len(hs)), Rows: make([]int64, len(hs)), Scores: make([]float64, len(hs))}
		for j, x := range hs {
			h.IDs[j], h.Rows[j], h.Scores[j] = x.ID, int64(x.Row), x.Score
		}
		out[i] = h
	}
	return out, nil
}

// oodCache is a set's per-input OOD test, built once (its pool is
// prepared for scoring) on first use.
type oodCache struct {
	once sync.Once
	test *ood.Conformal
	err  error
	// pool indexes the reference pool's rows (Known), made on first use.
	poolOnce sync.Once
	pool     *bundle.RowIndex
}

// oodTie is ccs_set_ood_tie: the warning of a per-input OOD test at
// opt's level whose calibration scores tie where it flags
// (ood.Test.TieWarning), or "" (none, or a level the test refuses, which
// ccs_set_ood says).
func oodTie(o *setObj, opt oodOptions) string {
	test := ood.Test{Alpha: ood.DefaultAlpha, Delta: opt.Delta, Simultaneous: opt.Simultaneous}
	if opt.Alpha != nil {
		test.Alpha = *opt.Alpha
	}
	if o.s.OOD == nil || test.Check(o.s.OOD.N) != nil {
		return ""
	}
	return test.TieWarning(o.s.OOD)
}

// oodKnown is ccs_set_ood_known: the warning of the points (finite rows
// of the set's dimension, as Set.ood checked them) that are rows of the
// set's reference pool or match the filter of its OOD calibration's
// inputs, as ccs serve's /ood answers it (ood.KnownWarning, without the
// monitor: the set has none), or "".
func oodKnown(o *setObj, points rawArray) (string, error) {
	s := o.s
	if s.OOD == nil || s.Reference == nil {
		return "", nil
	}
	points.Name = "points"
	p, err := decodeF32(points, true)
	if err != nil {
		return "", err
	}
	d := s.Geometry.Dim()
	if len(p)%d != 0 {
		return "", fmt.Errorf("points: %d values are not rows of dimension %d", len(p), d)
	}
	o.oods.poolOnce.Do(func() { o.oods.pool = bundle.RowIndexOf(s.Reference.Rows, d) })
	pooled, calibrated := ood.Known(o.oods.pool, s.OOD.Rows, p, d)
	return ood.KnownWarning(pooled, calibrated, len(p)/d, false), nil
}

// oodOptions are the keywords of Set.ood: the test's level (ccs serve's
// ?alpha_ood, ?delta and ?fdr; ccs ood's -simultaneous).
type oodOptions struct {
	Alpha        *float64 `json:"alpha_ood"`
	Delta        float64  `json:"delta"`
	Simultaneous bool     `json:"simultaneous"`
	FDR          float64  `json:"fdr"`
}

// oodResult is the per-input test's answer for m points, in the caller's
// buffers: scores, p-values, flags, and with an FDR level the points
// Benjamini–Hochberg flags as one batch; Marginal, when not nil, the
// marginal p-values (those Benjamini–Hochberg runs on: with δ > 0 the
// PValues are adjusted, without they are these).
type oodResult struct {
	Scores, PValues []float64
	OOD, Flagged    []bool
	Marginal        []float64
}

// oodAnswer is the set's per-input OOD test on points ((m, d)): package
// ood's pipeline, the one ccs serve's /ood answers with.
func oodAnswer(ctx context.Context, o *setObj, points rawArray, opt oodOptions, out oodResult) error {
	s := o.s
	if !s.Calibrated() {
		return fmt.Errorf("ood: %w", conformal.ErrNotCalibrated) // before its OOD calibration: it has no threshold yet
	}
	if err := s.OneThreshold(); err != nil {
		return noLabel(err, "ood")
	}
	o.oods.once.Do(func() {
		if s.OOD == nil {
			o.oods.err = fmt.Errorf("the set has no OOD calibration, so its per-input OOD answers would carry no guarantee: calibrate it with reference= and ood_cal=")
			return
		}
		o.oods.test, o.oods.err = ood.NewConformal(s, ood.Test{})
	})
	if o.oods.err != nil {
		return o.oods.err
	}
	test := ood.Test{Alpha: ood.DefaultAlpha, Delta: opt.Delta, Simultaneous: opt.Simultaneous}
	if opt.Alpha != nil {
		test.Alpha = *opt.Alpha
	}
	if opt.Simultaneous && opt.Delta == 0 {
		return fmt.Errorf("ood: simultaneous needs delta")
	}
	if opt.FDR != 0 && !(opt.FDR > 0 && opt.FDR < 1) {
		return fmt.Errorf("ood: fdr=%v: want 0 < Q < 1 (or 0: none)", opt.FDR)
	}
	c, err := o.oods.test.With(test)
	if err != nil {
		return err // "ood: α_ood = 2, want 0 < α_ood < 1", and the like
	}
	points.Name = "points"
	p, err := decodeF32(points, true)
	if err != nil {
		return err
	}
	if err := s.CheckDim("points", points.Shape...); err != nil {
		return err
	}
	d := s.Geometry.Dim()
	if len(points.Shape) > 2 {
		return fmt.Errorf("points: shape %s: want (m, %d), or (%d,) for one point", bundle.FormatShape(points.Shape), d, d)
	}
	if err := finiteRows("points", p, d); err != nil {
		return err
	}
	m := len(p) / d
	if len(out.Scores) != m || len(out.PValues) != m || len(out.OOD) != m || len(out.Flagged) != m || out.Marginal != nil && len(out.Marginal) != m {
		return fmt.Errorf("ood: outputs of %d for %d points", len(out.Scores), m)
	}
	ans, err := c.Answer(ctx, p, opt.FDR)
	if err != nil {
		return err
	}
	for i, r := range ans.Results {
		out.Scores[i], out.PValues[i], out.OOD[i] = r.Score, r.PValue, r.OOD
		out.Flagged[i] = false
	}
	for _, i := range ans.Flagged {
		out.Flagged[i] = true
	}
	if out.Marginal != nil {
		if ans.Marginal != nil {
			copy(out.Marginal, ans.Marginal)
		} else if opt.Delta == 0 {
			copy(out.Marginal, out.PValues)
		} else { // δ > 0 without fdr: the marginal p-values, as the test computes them
			copy(out.Marginal, c.Cal.PValues(out.Scores))
		}
	}
	return nil
}
