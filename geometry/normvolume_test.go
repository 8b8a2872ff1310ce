package geometry

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// TestNormVolumeStaged checks the single-norm's volume gradient: −w·M⁻ᵀ
// against gonum's mat.Inverse, the same bits whether its tasks (the
// condition check and the solves) ran first (concurrently, in any order) or
// LogVolumeGrad did the work, and a fresh
// factorisation after SetParams.
func TestNormVolumeStaged(t *testing.T) {
	for _, d := range []int{1, 3, 16, 37, 128} {
		rng := rand.New(rand.NewPCG(uint64(d), 7))
		serial := randNorm(rng, d, 1.5)
		staged, err := NewNorm(d, serial.M(), serial.P())
		if err != nil {
			t.Fatal(err)
		}
		staged.PrepareVolume()
		tasks := staged.VolumeGradTasks()
		if want := 1 + len(staged.volume().blocks); len(tasks) != want { // the condition check and the solves
			t.Fatalf("d=%d: %d tasks, want %d", d, len(tasks), want)
		}
		var wg sync.WaitGroup
		for i := len(tasks) - 1; i >= 0; i-- {
			wg.Go(tasks[i])
		}
		wg.Wait()
		const w = 0.25
		g1 := make([]float64, serial.NumParams())
		g2 := make([]float64, staged.NumParams())
		r1 := serial.LogVolumeGrad(g1, 2, w)
		r2 := staged.LogVolumeGrad(g2, 2, w)
		for i := range g1 {
			if math.Float64bits(g1[i]) != math.Float64bits(g2[i]) {
				t.Fatalf("d=%d: gradient[%d] %v serially, %v staged", d, i, g1[i], g2[i])
			}
		}
		if r1 != r2 || serial.LogVolume(2) != staged.LogVolume(2) {
			t.Fatalf("d=%d: ∂logVol/∂t or logVol differ", d)
		}
		var inv mat.Dense
		if err := inv.Inverse(mat.NewDense(d, d, serial.M())); err != nil {
			t.Fatal(err)
		}
		for k := range d {
			for l := range d {
				want := -w * inv.At(l, k)
				if got := g1[k*d+l]; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("d=%d: ∂logVol/∂M[%d][%d] = %v, want −w·(M⁻¹)[%d][%d] = %v", d, k, l, got, l, k, want)
				}
			}
		}
		var lu mat.LU
		lu.Factorize(mat.NewDense(d, d, serial.M()))
		if ld, _ := lu.LogDet(); math.Abs(staged.logAbsDet()-ld) > 1e-12*(1+math.Abs(ld)) {
			t.Fatalf("d=%d: log|det M| = %v, gonum's %v", d, staged.logAbsDet(), ld)
		}

		// A new M: the factorisation and the inverse follow it.
		other := randNorm(rng, d, 1.5)
		staged.SetParams(other.Params(nil))
		g3 := make([]float64, d*d+1)
		g4 := make([]float64, d*d+1)
		staged.LogVolumeGrad(g3, 2, w)
		other.LogVolumeGrad(g4, 2, w)
		for i := range g3 {
			if g3[i] != g4[i] {
				t.Fatalf("d=%d: after SetParams, gradient[%d] = %v, a fresh norm's %v", d, i, g3[i], g4[i])
			}
		}
	}
}

// TestNormInverseBlocks checks that M⁻ᵀ has the same bits however many
// blocks its columns are solved in (their number follows GOMAXPROCS), and
// that the blocks, solved concurrently, fill all of it.
func TestNormInverseBlocks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, d := range []int{7, 37, 128} {
		rng := rand.New(rand.NewPCG(uint64(d), 9))
		m := randNorm(rng, d, 1.5).M()
		var want []float64
		var nb []int
		for _, procs := range []int{1, 3, 16, 64} {
			runtime.GOMAXPROCS(procs)
			n, err := NewNorm(d, m, 1.5)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, task := range n.VolumeGradTasks() {
				wg.Go(task)
			}
			wg.Wait()
			nb = append(nb, len(n.volume().blocks))
			g := make([]float64, n.NumParams())
			n.LogVolumeGrad(g, 1, 1)
			if want == nil {
				want = g
				continue
			}
			for i := range g {
				if math.Float64bits(g[i]) != math.Float64bits(want[i]) {
					t.Fatalf("d=%d, GOMAXPROCS %d (%d blocks): gradient[%d] = %v, %v in one block", d, procs, nb[len(nb)-1], i, g[i], want[i])
				}
			}
		}
		if d >= 2*minInvBlock && (nb[0] != 1 || nb[1] == 1 || nb[2] == nb[1]) {
			t.Errorf("d=%d: blocks %v at GOMAXPROCS 1, 3, 16, 64: the test compares no different blockings", d, nb)
		}
	}
}

// TestNormVolumeSingular: a singular or numerically singular M has an
// infinite (or meaningless) volume; its gradient is NaN, which training
// reports, whether or not its tasks ran first.
func TestNormVolumeSingular(t *testing.T) {
	// Ones in row 0 and ε in the last diagonal entry: a condition number
	// over mat.ConditionTolerance in the ∞-norm mat.Inverse uses, but not
	// in the 1-norm.
	onesRow := func(d int, eps float64) []float64 {
		m := make([]float64, d*d)
		for i := range d {
			m[i*d+i] = 1
			m[i] = 1
		}
		m[d*d-1] = eps
		return m
	}
	for _, tc := range []struct {
		name string
		d    int
		m    []float64
	}{
		{"zero row", 4, []float64{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
		{"repeated row", 4, []float64{1, 2, 3, 4, 1, 2, 3, 4, 0, 0, 1, 0, 0, 0, 0, 1}},
		{"condition 1e18", 4, []float64{1, 0, 0, 0, 0, 1e-18, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
		{"row of ones, ε = 1e-15", 64, onesRow(64, 1e-15)},
	} {
		d := tc.d
		var inv mat.Dense
		if err := inv.Inverse(mat.NewDense(d, d, tc.m)); err == nil {
			t.Fatalf("%s: mat.Inverse inverts it: not a case for this test", tc.name)
		}
		n := IdentityNorm(d, 2)
		n.SetParams(append(append([]float64(nil), tc.m...), 2))
		// The tasks (none where a pivot is exactly zero; the condition
		// check and solves whose results are dropped otherwise) run as an
		// objective runs them, before the gradient.
		for _, task := range n.VolumeGradTasks() {
			task()
		}
		g := make([]float64, d*d+1)
		n.LogVolumeGrad(g, 1, 1)
		for i := range d * d {
			if !math.IsNaN(g[i]) {
				t.Fatalf("%s: gradient[%d] = %v, want NaN (mat.Inverse refuses M)", tc.name, i, g[i])
			}
		}
	}
}

// TestGetrsT: the single-norm's solves for M⁻ᵀ (getrsT: kernel.TrsmT a
// group of columns at a time where the build has it) have the bits of
// lapack64.Getrs(blas.Trans), for block widths below, at and around the
// kernel's group of columns, on LU factors of random matrices with zero
// entries.
func TestGetrsT(t *testing.T) {
	rng := rand.New(rand.NewPCG(48, 48))
	for _, d := range []int{1, 5, 16, 37, 70} {
		m := make([]float64, d*d)
		for i := range m {
			m[i] = rng.NormFloat64()
			if rng.IntN(5) == 0 {
				m[i] = 0
			}
		}
		for i := range d {
			m[i*d+i] += 3
		}
		ipiv := make([]int, d)
		lu := blas64.General{Rows: d, Cols: d, Stride: d, Data: m}
		if !lapack64.Getrf(lu, ipiv) {
			t.Fatalf("d=%d: singular", d)
		}
		for _, cols := range []int{1, 7, 16, 31, 32, 33, 70} {
			want := make([]float64, d*cols)
			for i := range want {
				want[i] = rng.NormFloat64()
			}
			got := slices.Clone(want)
			lapack64.Getrs(blas.Trans, lu, blas64.General{Rows: d, Cols: cols, Stride: cols, Data: want}, ipiv)
			getrsT(lu, blas64.General{Rows: d, Cols: cols, Stride: cols, Data: got}, ipiv)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("d=%d, %d columns: entry (%d, %d) is %v, Getrs's %v", d, cols, i/cols, i%cols, got[i], want[i])
				}
			}
		}
	}
}

// TestGetrf: the single-norm's LU factorisation (getrf: gonum's blocked
// Dgetrf with kernel.GemmSub's trailing updates where the build has it)
// has the bits of lapack64.Getrf, factors and pivots, for sizes below, at
// and above gonum's block of 64 columns, square and not, on matrices with
// zero entries, and says the same of a singular one.
func TestGetrf(t *testing.T) {
	rng := rand.New(rand.NewPCG(49, 49))
	for _, mn := range [][2]int{{1, 1}, {5, 5}, {64, 64}, {65, 65}, {100, 100}, {130, 97}, {97, 130}, {200, 200}} {
		m, n := mn[0], mn[1]
		for _, singular := range []bool{false, true} {
			x := make([]float64, m*n)
			for i := range x {
				x[i] = rng.NormFloat64()
				if rng.IntN(5) == 0 {
					x[i] = 0
				}
			}
			if singular {
				for i := range m {
					x[i*n+n/2] = 0 // a zero column
				}
			}
			y := slices.Clone(x)
			wantPiv, gotPiv := make([]int, min(m, n)), make([]int, min(m, n))
			wantOK := lapack64.Getrf(blas64.General{Rows: m, Cols: n, Stride: n, Data: x}, wantPiv)
			gotOK := getrf(blas64.General{Rows: m, Cols: n, Stride: n, Data: y}, gotPiv)
			if gotOK != wantOK || !slices.Equal(gotPiv, wantPiv) {
				t.Fatalf("%d×%d (singular %v): ok %v, pivots %v; Getrf's %v, %v", m, n, singular, gotOK, gotPiv[:min(8, len(gotPiv))], wantOK, wantPiv[:min(8, len(wantPiv))])
			}
			for i := range x {
				if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
					t.Fatalf("%d×%d (singular %v): entry (%d, %d) is %v, Getrf's %v", m, n, singular, i/n, i%n, y[i], x[i])
				}
			}
		}
	}
}
