package main

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas32"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"
)

// block is the number of points whose differences a worker holds at a
// time: 1024 rows of d = 128 are 512 KiB, within a core's L2 cache.
const block = 512

// query is one anchor and m points (rows of d), as the caller gave them:
// views of its memory when they are float32 or float64 in C order (p32 or
// p64), valid during the call only; a copy converted to float32 otherwise.
type query struct {
	anchor []float32
	p32    []float32
	p64    []float64
	m      int
	raw    rawArray // the points as given, for the decoder's messages
}

// newQuery reads an anchor ((d,) or (1, d)) and points ((m, d), or (d,)
// for one point) for set s.
// finiteAnchor refuses an anchor holding a NaN or ±Inf, naming the
// coordinate: a failed encoding, which the norm's refusal would tell to
// normalise.
func finiteAnchor(a []float32) error {
	for j, v := range a {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("anchor: coordinate %d is %v", j, v)
		}
	}
	return nil
}

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
	if err := finiteAnchor(a); err != nil {
		return query{}, err
	}
	if err := s.CheckAnchorNorms(a); err != nil {
		return query{}, fmt.Errorf("anchor: %w", err)
	}
	qr := query{anchor: a, raw: points}
	n, err := points.check()
	if err != nil {
		return query{}, err
	}
	if points.Dtype[1:] == "f8" && littleEndian(points.Dtype) && (!points.Fortran || len(points.Shape) < 2) {
		// NumPy's default dtype, narrowed a block at a time (each).
		qr.p64 = viewF64(points.Data)[:n:n]
	} else if qr.p32, err = decodeF32(points, true); err != nil {
		return query{}, err
	}
	if err := s.CheckDim("points", points.Shape...); err != nil {
		return query{}, err
	}
	if len(points.Shape) > 2 {
		return query{}, fmt.Errorf("points: shape %s: want (m, %d), or (%d,) for one point", bundle.FormatShape(points.Shape), d, d)
	}
	qr.m = n / d
	if s.Calibration.UnitNorm {
		for i := range qr.m {
			var ss float64
			for j := range d {
				x := qr.point(i, j, d)
				ss += x * x
			}
			if n := math.Sqrt(ss); conformal.NormRefused(n) {
				for j := range d { // a NaN is a failed encoding, not a norm
					if x := qr.point(i, j, d); math.IsNaN(x) || math.IsInf(x, 0) {
						return query{}, fmt.Errorf("points[%d][%d] is %v", i, j, float32(x))
					}
				}
				return query{}, fmt.Errorf("points[%d]: %w", i, &conformal.NormError{Row: i, Norm: n})
			}
		}
	}
	return qr, nil
}

// point is coordinate j of point i, as given.
func (qr query) point(i, j, d int) float64 {
	if qr.p64 != nil {
		return qr.p64[i*d+j]
	}
	return float64(qr.p32[i*d+j])
}

// scratch holds a worker's differences and scores for one block.
type scratch struct {
	diffs  []float32
	pts    []float32 // float64 points narrowed
	scores []float64
}

var scratches sync.Pool

func getScratch(d int) *scratch {
	if s, ok := scratches.Get().(*scratch); ok && len(s.diffs) == block*d {
		return s
	}
	return &scratch{diffs: make([]float32, block*d), pts: make([]float32, block*d), scores: make([]float64, block)}
}

// each runs f on every block of the query's points, on all cores, with
// the block's differences anchor − point in diffs and room for its scores;
// then it checks that every score f left in scores is a number, else it
// reports the first point with a NaN or ±Inf coordinate (a non-finite
// score from finite points is a point far outside, not an error). A
// float64 coordinate that float32 cannot hold is the decoder's error.
func (qr query) each(d int, f func(lo, hi int, diffs []float32, scores []float64)) error {
	return qr.blocks(d, true, f)
}

// blocks is each, with f given the block's points (as float32) instead of
// their differences where diffs is false.
func (qr query) blocks(d int, diffs bool, f func(lo, hi int, rows []float32, scores []float64)) error {
	var bad atomic.Int64
	bad.Store(math.MaxInt64)
	var narrow atomic.Bool
	parallel.For(qr.m, block, 0, func(_, lo, hi int) {
		s := getScratch(d)
		defer scratches.Put(s)
		n := hi - lo
		scores := s.scores[:n]
		var pts []float32
		if qr.p64 != nil {
			pts = s.pts[:n*d]
			if !narrowInto(pts, qr.p64[lo*d:hi*d]) {
				narrow.Store(true)
			}
		} else {
			pts = qr.p32[lo*d : hi*d]
		}
		rows := pts
		if diffs {
			rows = s.diffs[:n*d]
			sub(rows, qr.anchor, pts)
		}
		f(lo, hi, rows, scores)
		for i, sc := range scores {
			if math.IsNaN(sc) || math.IsInf(sc, 0) {
				if !qr.finite(lo+i, d) {
					for r := bad.Load(); int64(lo+i) < r && !bad.CompareAndSwap(r, int64(lo+i)); r = bad.Load() {
					}
					break
				}
			}
		}
	})
	if narrow.Load() {
		if _, err := decode(qr.raw); err != nil {
			return err
		}
	}
	if r := int(bad.Load()); r != math.MaxInt64 {
		for j := range d {
			if v := qr.point(r, j, d); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("points[%d][%d] is %v", r, j, float32(v))
			}
		}
	}
	return nil
}

// sub writes anchor − point into diffs for each point (rows of
// len(anchor)): the anchor copied into every row, then −1·points added by
// gonum's vector kernel (Axpy). −1·p is exact, so each difference is
// a − p, the same float32 as a scalar loop makes.
func sub(diffs, anchor, points []float32) {
	d := len(anchor)
	for i := 0; i < len(points); i += d {
		copy(diffs[i:i+d], anchor)
	}
	n := len(points)
	blas32.Axpy(-1, blas32.Vector{N: n, Data: points, Inc: 1}, blas32.Vector{N: n, Data: diffs[:n], Inc: 1})
}

// finite reports whether every coordinate of point i is a number.
func (qr query) finite(i, d int) bool {
	for j := range d {
		if v := qr.point(i, j, d); math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// contains writes into dst whether each point is inside the set around
// the anchor (of class *label for a class-conditional set): Set.Members's
// decisions, a block at a time on all cores, by geometry.MembersAround —
// for the balls, fast kernels that read the anchor and the points, no
// differences made but for the rows rescored exactly.
func contains(s *conformal.Set, qr query, label *int64, dst []bool) error {
	if !s.Calibrated() {
		return conformal.ErrNotCalibrated
	}
	q, err := s.ThresholdOf(label)
	if errors.Is(err, conformal.ErrNoLabel) {
		return fmt.Errorf("contains: %w: give it as label= — its class's name (the set's info[\"classes\"]) or its integer label", err)
	}
	if err != nil {
		return err
	}
	if len(dst) != qr.m {
		return fmt.Errorf("contains: an output of %d for %d points", len(dst), qr.m)
	}
	around := geometry.MembersAroundFor(s.Geometry, qr.m) // a few points: not worth an ellipsoid's L⁻¹
	return qr.blocks(s.Geometry.Dim(), false, func(lo, hi int, points []float32, scores []float64) {
		around(s.Geometry, q, qr.anchor, points, dst[lo:hi], scores)
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
