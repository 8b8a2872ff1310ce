package geometry

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/ccsets/ccs/internal/kernel"
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
	invBuf []float64 // invT's memory, kept for the next M where M is singular
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
	// The last M's buffers, where SetParams left them: fresh ones are new
	// pages each step, and at d = 768 their faults and zeroing cost a
	// single-norm fit more than the solves.
	var lu, invT []float64
	var ipiv []int
	if old := n.spare.Swap(nil); old != nil && old.d == d {
		lu, invT, ipiv = old.lu, old.invBuf, old.ipiv
	}
	if lu == nil {
		lu, ipiv = make([]float64, d*d), make([]int, d)
	}
	copy(lu, n.m)
	v := &normVolume{d: d, lu: lu, ipiv: ipiv, invBuf: invT}
	a := blas64.General{Rows: d, Cols: d, Stride: d, Data: v.lu}
	v.anorm = lapack64.Lange(mat.CondNorm, a, make([]float64, d))
	ok := getrf(a, v.ipiv)
	for i := range d {
		v.logDet += math.Log(math.Abs(v.lu[i*d+i]))
	}
	if ok {
		if v.invBuf == nil {
			v.invBuf = make([]float64, d*d)
		}
		v.invT = v.invBuf // each block zeroed before its solve
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
		clear(x)
		for j := lo; j < hi; j++ {
			x[j*w+j-lo] = 1
		}
		getrsT(blas64.General{Rows: d, Cols: d, Stride: d, Data: v.lu},
			blas64.General{Rows: d, Cols: w, Stride: w, Data: x}, v.ipiv)
	})
}

// getrf is lapack64.Getrf(a, ipiv) — gonum's blocked LU factorisation:
// a panel of nb columns factorised unblocked (Dgetf2), its row swaps
// applied on either side, the block row solved (Dtrsm), the trailing
// matrix updated (Dgemm) — with its bits, the trailing updates
// kernel.GemmSub's where the build has it. Gonum's Dgemm adds each
// product a row of C at a time through memory: at d = 768 the updates
// took 18% of a single-norm fit's CPU. The steps are gonum's Dgetrf's, in
// its order (TestGetrf).
func getrf(a blas64.General, ipiv []int) bool {
	if !kernel.GemmSubReady() {
		return lapack64.Getrf(a, ipiv)
	}
	impl := gonumlapack.Implementation{}
	bi := blas64.Implementation()
	m, n, lda, data := a.Rows, a.Cols, max(1, a.Stride), a.Data
	mn := min(m, n)
	if mn == 0 {
		return true
	}
	nb := impl.Ilaenv(1, "DGETRF", " ", m, n, -1, -1)
	if nb <= 1 || mn <= nb {
		return impl.Dgetf2(m, n, data, lda, ipiv)
	}
	ok := true
	for j := 0; j < mn; j += nb {
		jb := min(mn-j, nb)
		if !impl.Dgetf2(m-j, jb, data[j*lda+j:], lda, ipiv[j:j+jb]) {
			ok = false
		}
		for i := j; i <= min(m-1, j+jb-1); i++ {
			ipiv[i] += j
		}
		impl.Dlaswp(j, data, lda, j, j+jb-1, ipiv[:j+jb], 1)
		if j+jb < n {
			impl.Dlaswp(n-j-jb, data[j+jb:], lda, j, j+jb-1, ipiv[:j+jb], 1)
			bi.Dtrsm(blas.Left, blas.Lower, blas.NoTrans, blas.Unit, jb, n-j-jb, 1, data[j*lda+j:], lda, data[j*lda+j+jb:], lda)
			if j+jb < m {
				kernel.GemmSub(m-j-jb, n-j-jb, jb, data[(j+jb)*lda+j:], lda, data[j*lda+j+jb:], lda, data[(j+jb)*lda+j+jb:], lda)
			}
		}
	}
	return ok
}

// getrsT is lapack64.Getrs(blas.Trans, lu, x, ipiv) — Uᵀ·Z = X, then
// Lᵀ·Y = Z, then the rows swapped back — with its bits, its two
// triangular solves kernel.TrsmT's a group of columns at a time where the
// build has it (gonum's for the columns left over). Gonum's Dtrsm updates
// every later row a row at a time (a vector of two columns at a time,
// through memory): at d = 768 these solves took 12% of a single-norm
// epoch's CPU (bench/epoch), about 25% of a three-epoch ccs fit's.
func getrsT(lu, x blas64.General, ipiv []int) {
	w := kernel.TrsmCols()
	if w == 0 {
		lapack64.Getrs(blas.Trans, lu, x, ipiv)
		return
	}
	d, cols := lu.Rows, x.Cols
	yt := make([]float64, d*w)
	c0 := 0
	for ; c0+w <= cols; c0 += w {
		for i := range d {
			copy(yt[i*w:(i+1)*w], x.Data[i*x.Stride+c0:])
		}
		kernel.TrsmT(true, yt, lu.Data, d)
		kernel.TrsmT(false, yt, lu.Data, d)
		for i := range d {
			copy(x.Data[i*x.Stride+c0:i*x.Stride+c0+w], yt[i*w:(i+1)*w])
		}
	}
	if c0 < cols {
		rest := blas64.General{Rows: d, Cols: cols - c0, Stride: x.Stride, Data: x.Data[c0:]}
		blas64.Trsm(blas.Left, blas.Trans, 1, blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: d, Stride: d, Data: lu.Data}, rest)
		blas64.Trsm(blas.Left, blas.Trans, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.Unit, N: d, Stride: d, Data: lu.Data}, rest)
	}
	gonumlapack.Implementation{}.Dlaswp(cols, x.Data, x.Stride, 0, d-1, ipiv, -1)
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
