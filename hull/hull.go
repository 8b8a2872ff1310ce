// Package hull is the convex-hull baseline of the paper's Table "hull-hib":
// the convex hull of an anchor's positives, shrunk about their centroid until
// a given share of those positives is inside, then asked to cover held-out
// positives of the same anchor. It certifies nothing about held-out points —
// which is what the table shows.
package hull

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Hull is the convex hull of m points in d dimensions with their centroid.
type Hull struct {
	m, d     int
	points   []float64 // m×d
	centroid []float64
	v        []float64 // d×m: column i is p_i − c
	ones     []float64
}

// New returns the hull of points (m rows of d). It needs m > d (a hull of
// fewer points is flat and holds almost nothing).
func New(points []float64, m, d int) (*Hull, error) {
	if m <= d || len(points) != m*d {
		return nil, fmt.Errorf("hull: %d points in %d dimensions; want more points than dimensions", m, d)
	}
	h := &Hull{m: m, d: d, points: points, centroid: make([]float64, d), v: make([]float64, d*m), ones: make([]float64, m)}
	for i := range m {
		for j := range d {
			h.centroid[j] += points[i*d+j] / float64(m)
		}
		h.ones[i] = 1
	}
	for i := range m {
		for j := range d {
			h.v[j*m+i] = points[i*d+j] - h.centroid[j] // column i: p_i − c
		}
	}
	return h, nil
}

// Gauge returns the scale about the centroid c at which q reaches the hull's
// boundary, the gauge of q − c with respect to the hull − c:
// min{Σμ : Σ μ_i·(p_i − c) = q − c, μ ≥ 0}. q lies in the hull scaled by s
// about c exactly when Gauge(q) ≤ s; points of the hull have gauges ≤ 1, its
// vertices exactly 1. One small linear programme (simplex, Bland's rule). A
// direction the hull does not span (a flat hull) has gauge +Inf.
func (h *Hull) Gauge(q []float64) (float64, error) {
	u := make([]float64, h.d)
	var norm float64
	for j := range h.d {
		u[j] = q[j] - h.centroid[j]
		norm = math.Max(norm, math.Abs(u[j]))
	}
	if norm == 0 {
		return 0, nil
	}
	// A point on a face (a vertex, above all) makes a degenerate programme
	// whose rounding can defeat the tableau; a relative nudge of 1e-10 to
	// 1e-8 along a fixed pattern resolves it without changing any gauge
	// beyond that.
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			for j := range u {
				u[j] += norm * math.Pow(100, float64(attempt-1)) * 1e-10 * float64(1+j%3)
			}
		}
		var v float64
		_, v, err = simplex(h.v, h.d, h.m, u, h.ones)
		switch {
		case errors.Is(err, errInfeasible):
			return math.Inf(1), nil
		case err == nil:
			return v, nil
		}
	}
	return 0, fmt.Errorf("hull: gauge: %w", err)
}

// Gauges returns the gauge of each row of qs (rows of d).
func (h *Hull) Gauges(qs []float64) ([]float64, error) {
	out := make([]float64, len(qs)/h.d)
	for i := range out {
		g, err := h.Gauge(qs[i*h.d : (i+1)*h.d])
		if err != nil {
			return nil, err
		}
		out[i] = g
	}
	return out, nil
}

// Shrink returns the scale s ≤ 1 at which a share level of the hull's own
// points is inside: the ⌈level·m⌉-th smallest gauge of the points.
func (h *Hull) Shrink(level float64) (float64, error) {
	// The hull holds its own points: their gauges are at most 1, and where
	// rounding defeats the programme 1 is the bound to use.
	g := make([]float64, h.m)
	for i := range g {
		v, err := h.Gauge(h.points[i*h.d : (i+1)*h.d])
		if err != nil {
			v = 1
		}
		g[i] = math.Min(v, 1)
	}
	slices.Sort(g)
	r := int(math.Ceil(level*float64(h.m))) - 1
	return g[min(max(r, 0), h.m-1)], nil
}
