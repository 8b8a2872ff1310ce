package main

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"
)

// block is the number of points whose differences a worker holds at a
// time: 1024 rows of d = 128 are 512 KiB, within a core's L2 cache.
const block = 1024

// query is one anchor and m points (rows of d), as the caller gave them:
// views of its memory when they are float32 in C order, valid during the
// call only.
type query struct {
	anchor []float32
	points []float32
	m      int
}

// newQuery reads an anchor ((d,) or (1, d)) and points ((m, d), or (d,)
// for one point) for set s.
func newQuery(s *conformal.Set, anchor, points rawArray) (query, error) {
	d := s.Geometry.Dim()
	anchor.Name, points.Name = "anchor", "points"
	a, err := decodeF32(anchor, true)
	if err != nil {
		return query{}, err
	}
	if err := s.CheckDim("anchor", anchor.Shape...); err != nil {
		return query{}, err
	}
	if len(anchor.Shape) > 2 || len(anchor.Shape) == 2 && anchor.Shape[0] != 1 {
		return query{}, fmt.Errorf("anchor: shape %s: want one anchor, (%d,) or (1, %d)", bundle.FormatShape(anchor.Shape), d, d)
	}
	for j, v := range a {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return query{}, fmt.Errorf("anchor: coordinate %d is %v", j, v)
		}
	}
	p, err := decodeF32(points, true)
	if err != nil {
		return query{}, err
	}
	if err := s.CheckDim("points", points.Shape...); err != nil {
		return query{}, err
	}
	if len(points.Shape) > 2 {
		return query{}, fmt.Errorf("points: shape %s: want (m, %d), or (%d,) for one point", bundle.FormatShape(points.Shape), d, d)
	}
	return query{anchor: a, points: p, m: len(p) / d}, nil
}

// scratch holds a worker's differences and scores for one block.
type scratch struct {
	diffs  []float32
	scores []float64
}

var scratches sync.Pool

func getScratch(d int) *scratch {
	if s, ok := scratches.Get().(*scratch); ok && len(s.diffs) == block*d {
		return s
	}
	return &scratch{diffs: make([]float32, block*d), scores: make([]float64, block)}
}

// each runs f on every block of the query's points, on all cores, with
// the block's differences anchor − point in diffs and room for its scores;
// then it checks that every score f left in scores is a number, else it
// reports the first point with a NaN or ±Inf coordinate (a non-finite
// score from finite points is a point far outside, not an error).
func (qr query) each(d int, f func(lo, hi int, diffs []float32, scores []float64)) error {
	var bad atomic.Int64
	bad.Store(math.MaxInt64)
	parallel.For(qr.m, block, 0, func(_, lo, hi int) {
		s := getScratch(d)
		defer scratches.Put(s)
		n := hi - lo
		diffs, scores := s.diffs[:n*d], s.scores[:n]
		pts := qr.points[lo*d : hi*d]
		for i := range n {
			x, p := diffs[i*d:(i+1)*d], pts[i*d:(i+1)*d]
			for j, a := range qr.anchor {
				x[j] = a - p[j]
			}
		}
		f(lo, hi, diffs, scores)
		for i, sc := range scores {
			if math.IsNaN(sc) || math.IsInf(sc, 0) {
				if !finite(pts[i*d : (i+1)*d]) {
					for r := bad.Load(); int64(lo+i) < r && !bad.CompareAndSwap(r, int64(lo+i)); r = bad.Load() {
					}
					break
				}
			}
		}
	})
	if r := bad.Load(); r != math.MaxInt64 {
		row := qr.points[int(r)*d : (int(r)+1)*d]
		for j, v := range row {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("points[%d][%d] is %v", r, j, v)
			}
		}
	}
	return nil
}

func finite(x []float32) bool {
	for _, v := range x {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

// contains writes into dst whether each point is inside the set around
// the anchor (of class *label for a class-conditional set): Set.Members's
// decisions, the differences made a block at a time on all cores.
func contains(s *conformal.Set, qr query, label *int64, dst []bool) error {
	if !s.Calibrated() {
		return conformal.ErrNotCalibrated
	}
	q, err := s.ThresholdOf(label)
	if err != nil {
		return err
	}
	if len(dst) != qr.m {
		return fmt.Errorf("contains: an output of %d for %d points", len(dst), qr.m)
	}
	return qr.each(s.Geometry.Dim(), func(lo, hi int, diffs []float32, scores []float64) {
		geometry.Members(s.Geometry, q, dst[lo:hi], scores, diffs)
	})
}

// scores writes into dst the score φ(anchor − point) of each point.
func scores(s *conformal.Set, qr query, dst []float64) error {
	if len(dst) != qr.m {
		return fmt.Errorf("scores: an output of %d for %d points", len(dst), qr.m)
	}
	g := s.Geometry
	return qr.each(g.Dim(), func(lo, hi int, diffs []float32, scores []float64) {
		g.Scores(scores, diffs)
		copy(dst[lo:hi], scores)
	})
}
