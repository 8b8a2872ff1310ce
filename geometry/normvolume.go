package geometry

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// VolumeStaged is implemented by learnable geometries whose volume term
// costs work that depends on the parameters alone, not on the threshold: a
// factorisation, then independent pieces of the gradient. An objective runs
// PrepareVolume as a task beside one parallel pass and the VolumeGradTasks
// beside the next, so that LogVolume and LogVolumeGrad find the work done
// instead of doing it serially. Running them is optional: LogVolume and
// LogVolumeGrad do what was not done. The results are the same either way,
// whatever the number of goroutines.
type VolumeStaged interface {
	Learnable
	// PrepareVolume does the volume term's first part for the current
	// parameters (one task).
	PrepareVolume()
	// VolumeGradTasks returns the gradient's independent parts, each safe
	// to run concurrently with the others, after PrepareVolume.
	VolumeGradTasks() []func()
}

var _ VolumeStaged = (*Norm)(nil)

// invBlock is the number of columns of M⁻ᵀ one task solves for: fixed, so
// that the inverse is the same however the tasks are shared out.
const invBlock = 32

// normVolume is what the single-norm's volume term needs, computed once per
// M: M's LU factors, log|det M|, and M⁻ᵀ a block of columns at a time.
type normVolume struct {
	d      int
	logDet float64
	lu     []float64 // LU factors of M (LAPACK's layout), row-major
	ipiv   []int
	invT   []float64 // nil: M is singular, or too ill-conditioned to invert
	blocks []sync.Once
}

// volume returns M's factorisation, computing it the first time after a
// change (concurrent first calls compute the same one; one is kept).
func (n *Norm) volume() *normVolume {
	if v := n.vol.Load(); v != nil {
		return v
	}
	d := n.d
	v := &normVolume{d: d, lu: append([]float64(nil), n.m...), ipiv: make([]int, d)}
	a := blas64.General{Rows: d, Cols: d, Stride: d, Data: v.lu}
	anorm := lapack64.Lange(mat.CondNorm, a, make([]float64, d))
	ok := lapack64.Getrf(a, v.ipiv)
	for i := range d {
		v.logDet += math.Log(math.Abs(v.lu[i*d+i]))
	}
	if ok {
		// As gonum's mat.Inverse: a matrix whose condition number exceeds
		// mat.ConditionTolerance has no trustworthy inverse.
		rcond := lapack64.Gecon(mat.CondNorm, a, anorm, make([]float64, 4*d), make([]int, d))
		ok = rcond*mat.ConditionTolerance >= 1
	}
	if ok {
		v.invT = make([]float64, d*d)
		v.blocks = make([]sync.Once, (d+invBlock-1)/invBlock)
	}
	if !n.vol.CompareAndSwap(nil, v) {
		return n.vol.Load()
	}
	return v
}

// solve writes block b of M⁻ᵀ's columns: the solution X of Mᵀ X = I
// restricted to those columns.
func (v *normVolume) solve(b int) {
	v.blocks[b].Do(func() {
		d := v.d
		lo, hi := b*invBlock, min(d, (b+1)*invBlock)
		x := v.invT[lo:]
		for j := lo; j < hi; j++ {
			x[j*d+j-lo] = 1
		}
		lapack64.Getrs(blas.Trans, blas64.General{Rows: d, Cols: d, Stride: d, Data: v.lu},
			blas64.General{Rows: d, Cols: hi - lo, Stride: d, Data: x}, v.ipiv)
	})
}

// logAbsDet returns log|det M|.
func (n *Norm) logAbsDet() float64 { return n.volume().logDet }

// PrepareVolume factorises M.
func (n *Norm) PrepareVolume() { n.volume() }

// VolumeGradTasks returns the solves for M⁻ᵀ, a block of columns each
// (none for a singular M).
func (n *Norm) VolumeGradTasks() []func() {
	v := n.volume()
	tasks := make([]func(), len(v.blocks))
	for b := range tasks {
		tasks[b] = func() { v.solve(b) }
	}
	return tasks
}
