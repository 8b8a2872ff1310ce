package hull

import (
	"errors"
	"math"
)

// errInfeasible and errUnbounded are the simplex's outcomes without an
// optimum.
var (
	errInfeasible = errors.New("infeasible")
	errUnbounded  = errors.New("unbounded")
	errStalled    = errors.New("no progress within the iteration limit (rounding)")
)

// simplex minimises cᵀx subject to A·x = b, x ≥ 0 (A is r×n, row-major) by
// the two-phase tableau method with Bland's rule, which cannot cycle. It is
// here because gonum's lp.Simplex cycles or panics on the hull's degenerate
// programmes (a point on a face of the hull, artificial starting bases);
// these programmes are tiny (a few dozen columns), so a dense tableau serves.
func simplex(a []float64, r, n int, b, c []float64) ([]float64, float64, error) {
	const eps = 1e-9
	w := n + r + 1 // columns: x, artificials, right-hand side
	t := make([]float64, (r+1)*w)
	row := func(i int) []float64 { return t[i*w : (i+1)*w] }
	basis := make([]int, r)
	for i := range r {
		s := 1.0
		if b[i] < 0 {
			s = -1
		}
		ri := row(i)
		for j := range n {
			ri[j] = s * a[i*n+j]
		}
		ri[n+i] = 1
		ri[w-1] = s * b[i]
		basis[i] = n + i
	}
	pivot := func(pr, pc int) {
		p := row(pr)
		inv := 1 / p[pc]
		for j := range p {
			p[j] *= inv
		}
		for i := 0; i <= r; i++ {
			if i == pr {
				continue
			}
			ri := row(i)
			if f := ri[pc]; f != 0 {
				for j := range ri {
					ri[j] -= f * p[j]
				}
			}
		}
		basis[pr] = pc
	}
	// run optimises the objective in the last row over columns < limit.
	// Bland's rule cannot cycle in exact arithmetic; with rounding it can
	// stall, so the pivots are capped.
	run := func(limit int) error {
		obj := row(r)
		for it := 0; ; it++ {
			if it > 50*(n+r) {
				return errStalled
			}
			enter := -1
			for j := range limit {
				if obj[j] < -eps {
					enter = j // Bland: the smallest improving index
					break
				}
			}
			if enter < 0 {
				return nil
			}
			leave, best := -1, math.Inf(1)
			for i := range r {
				if v := row(i)[enter]; v > eps {
					ratio := row(i)[w-1] / v
					if ratio < best-eps || (ratio <= best+eps && leave >= 0 && basis[i] < basis[leave]) {
						leave, best = i, ratio
					}
				}
			}
			if leave < 0 {
				return errUnbounded
			}
			pivot(leave, enter)
		}
	}
	// Phase 1: minimise the sum of the artificials.
	obj := row(r)
	for i := range r {
		for j, v := range row(i) {
			if j < n || j == w-1 {
				obj[j] -= v
			}
		}
	}
	if err := run(n + r); err != nil {
		return nil, 0, err
	}
	if -obj[w-1] > 1e-9 {
		return nil, 0, errInfeasible
	}
	// Drive the artificials out of the basis (a row with no x-column left
	// is redundant: it stays, with its artificial at zero).
	for i := range r {
		if basis[i] < n {
			continue
		}
		for j := range n {
			if math.Abs(row(i)[j]) > 1e-9 {
				pivot(i, j)
				break
			}
		}
	}
	// Phase 2: the real objective, in terms of the non-basic columns.
	clear(obj)
	copy(obj, c)
	for i, bv := range basis {
		if bv < n && c[bv] != 0 {
			f := c[bv]
			for j, v := range row(i) {
				obj[j] -= f * v
			}
		}
	}
	for j := n; j < n+r; j++ {
		obj[j] = 0 // artificials may not re-enter
	}
	if err := run(n); err != nil {
		return nil, 0, err
	}
	x := make([]float64, n)
	for i, bv := range basis {
		if bv < n {
			x[bv] = row(i)[w-1]
		}
	}
	var v float64
	for j := range n {
		v += c[j] * x[j]
	}
	return x, v, nil
}
