package geometry

import (
	"math"
	"runtime"
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

// invBlocks is how many blocks of M⁻ᵀ's columns the solves are shared out
// in: one per goroutine the caller may run them on, each at least
// minInvBlock columns wide. Each column's arithmetic is the same however
// wide its block (the triangular solves and row swaps treat the columns
// independently), so the inverse has the same bits for any number of
// blocks; only the time changes. Few wide blocks cost the least in all
// (the solves' inner loops run along a block's rows); at 16 threads, on a
// lent 16-core Xeon, four blocks of 32 were the training step's critical
// path.
func invBlocks(d int) int {
	return max(1, min(runtime.GOMAXPROCS(0), d/minInvBlock))
}

const minInvBlock = 8

// normVolume is what the single-norm's volume term needs, computed once per
// M: M's LU factors and log|det M| first; then, as independent tasks, the
// check of M's condition number and M⁻ᵀ a block of columns at a time.
type normVolume struct {
	d      int
	logDet float64
	lu     []float64 // LU factors of M (LAPACK's layout), row-major
	ipiv   []int
	anorm  float64   // ‖M‖₁, for the condition number
	invT   []float64 // nil: M is singular (an exact zero pivot); else block after block
	blocks []sync.Once
	width  int // columns in each block but the last

	cond   sync.Once
	condOK bool // M's condition number is within mat.ConditionTolerance
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
	v.anorm = lapack64.Lange(mat.CondNorm, a, make([]float64, d))
	ok := lapack64.Getrf(a, v.ipiv)
	for i := range d {
		v.logDet += math.Log(math.Abs(v.lu[i*d+i]))
	}
	if ok {
		v.invT = make([]float64, d*d)
		nb := invBlocks(d)
		v.width = (d + nb - 1) / nb
		v.blocks = make([]sync.Once, (d+v.width-1)/v.width)
	}
	if !n.vol.CompareAndSwap(nil, v) {
		return n.vol.Load()
	}
	return v
}

// conditioned reports whether M has a trustworthy inverse, as gonum's
// mat.Inverse decides: a factorised M (no zero pivot) whose estimated
// condition number is within mat.ConditionTolerance. The estimate is made
// once, as a task of its own beside the solves for M⁻ᵀ (whose results are
// dropped when it fails): it costs about as much as the factorisation,
// which is on a training step's critical path.
func (v *normVolume) conditioned() bool {
	if v.invT == nil {
		return false
	}
	v.cond.Do(func() {
		d := v.d
		a := blas64.General{Rows: d, Cols: d, Stride: d, Data: v.lu}
		rcond := lapack64.Gecon(mat.CondNorm, a, v.anorm, make([]float64, 4*d), make([]int, d))
		v.condOK = rcond*mat.ConditionTolerance >= 1
	})
	return v.condOK
}

// block returns block b's columns [lo, hi) of M⁻ᵀ and where it lies in
// invT: d rows of hi − lo values each.
func (v *normVolume) block(b int) (lo, hi int, x []float64) {
	lo, hi = b*v.width, min(v.d, (b+1)*v.width)
	return lo, hi, v.invT[lo*v.d : hi*v.d]
}

// solve writes block b of M⁻ᵀ's columns: the solution X of Mᵀ X = I
// restricted to those columns. The block is stored on its own (not as
// columns of a d × d matrix), so that blocks solved at once on different
// cores share no cache lines: stored as columns of one matrix, each of four
// blocks of 32 took 4.7 times its one-thread CPU time when solved at once
// at 16 threads (CPU profiles on a lent 16-core Xeon; lines the cores'
// prefetchers fetch beside their own are the likely cause, not measured).
func (v *normVolume) solve(b int) {
	v.blocks[b].Do(func() {
		d := v.d
		lo, hi, x := v.block(b)
		w := hi - lo
		for j := lo; j < hi; j++ {
			x[j*w+j-lo] = 1
		}
		lapack64.Getrs(blas.Trans, blas64.General{Rows: d, Cols: d, Stride: d, Data: v.lu},
			blas64.General{Rows: d, Cols: w, Stride: w, Data: x}, v.ipiv)
	})
}

// subInvT adds −w·M⁻ᵀ into dst (d × d, row-major), once every block is
// solved.
func (v *normVolume) subInvT(dst []float64, w float64) {
	d := v.d
	for b := range v.blocks {
		lo, hi, x := v.block(b)
		bw := hi - lo
		for i := range d {
			row := dst[i*d+lo : i*d+hi]
			for j, y := range x[i*bw : (i+1)*bw] {
				row[j] -= w * y
			}
		}
	}
}

// logAbsDet returns log|det M|.
func (n *Norm) logAbsDet() float64 { return n.volume().logDet }

// PrepareVolume factorises M.
func (n *Norm) PrepareVolume() { n.volume() }

// VolumeGradTasks returns the check of M's condition number and the solves
// for M⁻ᵀ, a block of columns each (none for a singular M).
func (n *Norm) VolumeGradTasks() []func() {
	v := n.volume()
	if v.invT == nil {
		return nil
	}
	tasks := []func(){func() { v.conditioned() }}
	for b := range v.blocks {
		tasks = append(tasks, func() { v.solve(b) })
	}
	return tasks
}
