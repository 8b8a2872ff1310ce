// Package head is the InfoNCE projection head of contrastive conformal sets
// (paper eq. (InfoNCE-objective), docs/design.md §4): a linear layer h ↦ W·h + b
// on frozen backbone features, trained jointly with a set geometry.
//
// The set lives in the projected space: a point z is in the set around
// anchor Z when φ(W·Z + b − (W·z + b)) = φ(W·(Z − z)) ≤ t. The bias cancels
// in every difference, so a set with a head is the geometry x ↦ φ(W·x) on
// the backbone's differences (Projected), and every command that scores
// (calibrate, evaluate, OOD, serving) applies it unchanged. The bias only
// matters to the InfoNCE loss, whose cosine similarities are taken between
// projected embeddings.
package head

import (
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/parallel"
)

// Linear is the projection h ↦ W·h + b from In to Out dimensions.
//
// As a parameter vector θ it is W row-major (Out×In values) followed by b
// (Out values).
type Linear struct {
	In, Out int
	W       []float64 // Out×In, row-major
	B       []float64 // Out
}

// Identity returns the head the paper starts from: W = I (ones on the
// diagonal when Out ≠ In) and b = 0.
func Identity(in, out int) *Linear {
	l := &Linear{In: in, Out: out, W: make([]float64, out*in), B: make([]float64, out)}
	for j := range min(in, out) {
		l.W[j*in+j] = 1
	}
	return l
}

// Clone returns a deep copy.
func (l *Linear) Clone() *Linear {
	return &Linear{In: l.In, Out: l.Out, W: append([]float64(nil), l.W...), B: append([]float64(nil), l.B...)}
}

// NumParams is Out·In + Out.
func (l *Linear) NumParams() int { return l.Out*l.In + l.Out }

// Params copies θ = (W, b) into dst (allocated when nil).
func (l *Linear) Params(dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, l.NumParams())
	}
	if len(dst) != l.NumParams() {
		panic("ccs/head: slice length mismatch")
	}
	copy(dst, l.W)
	copy(dst[len(l.W):], l.B)
	return dst
}

// SetParams sets θ = (W, b).
func (l *Linear) SetParams(theta []float64) {
	if len(theta) != l.NumParams() {
		panic("ccs/head: slice length mismatch")
	}
	copy(l.W, theta)
	copy(l.B, theta[len(l.W):])
}

// Validate checks the shapes and that every weight is finite.
func (l *Linear) Validate() error {
	switch {
	case l.In < 1 || l.Out < 1:
		return fmt.Errorf("head: dimensions %d→%d, want ≥ 1", l.In, l.Out)
	case len(l.W) != l.Out*l.In:
		return fmt.Errorf("head: w has %d values, want out×in = %d×%d", len(l.W), l.Out, l.In)
	case len(l.B) != l.Out:
		return fmt.Errorf("head: b has %d values, want out = %d", len(l.B), l.Out)
	}
	for i, v := range l.W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("head: w[%d][%d] = %v, want a finite weight", i/l.In, i%l.In, v)
		}
	}
	for i, v := range l.B {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("head: b[%d] = %v, want a finite weight", i, v)
		}
	}
	return nil
}

// block is the number of rows per matrix product: float64 scratch of
// block·(In+Out) values per goroutine.
const block = 1024

// Forward writes W·h + b for each row h of src (rows of In) into dst (rows
// of Out, allocated when nil). Products are float64; the result is rounded
// to float32 like the embeddings it replaces.
func (l *Linear) Forward(dst, src []float32) []float32 { return l.apply(dst, src, true) }

// Transform writes W·x for each row x of src: the head applied to a
// difference of embeddings, where the bias cancels.
func (l *Linear) Transform(dst, src []float32) []float32 { return l.apply(dst, src, false) }

func (l *Linear) apply(dst, src []float32, bias bool) []float32 {
	if len(src)%l.In != 0 {
		panic("ccs/head: src is not a whole number of rows")
	}
	n := len(src) / l.In
	if dst == nil {
		dst = make([]float32, n*l.Out)
	}
	if len(dst) != n*l.Out {
		panic("ccs/head: slice length mismatch")
	}
	w := blas64.General{Rows: l.Out, Cols: l.In, Data: l.W, Stride: l.In}
	parallel.For(n, block, 0, func(_, lo, hi int) {
		r := hi - lo
		x := make([]float64, r*l.In)
		y := make([]float64, r*l.Out)
		for i, v := range src[lo*l.In : hi*l.In] {
			x[i] = float64(v)
		}
		if bias {
			for i := range r {
				copy(y[i*l.Out:(i+1)*l.Out], l.B)
			}
		}
		// gonum splits a product only over its output, each part summed
		// in a fixed order: the result does not depend on goroutines.
		gemm(blas.NoTrans, blas.Trans, blas64.General{Rows: r, Cols: l.In, Data: x, Stride: l.In}, w,
			blas64.General{Rows: r, Cols: l.Out, Data: y, Stride: l.Out})
		for i, v := range y {
			dst[lo*l.Out+i] = float32(v)
		}
	})
	return dst
}

// gemm computes c += op(a)·op(b).
func gemm(ta, tb blas.Transpose, a, b, c blas64.General) {
	blas64.Gemm(ta, tb, 1, a, b, 1, c)
}

// AddGrads adds the gradient of a loss with respect to θ = (W, b) into
// dtheta, given the loss's gradient dout (rows of Out) with respect to the
// outputs Forward computed from src (rows of In): ∂W += Σ_r dout_r·src_rᵀ,
// ∂b += Σ_r dout_r. Blocks of rows are summed in parallel and reduced in a
// fixed order, so the result does not depend on the number of goroutines.
func (l *Linear) AddGrads(dtheta []float64, src []float32, dout []float64) {
	if len(dtheta) != l.NumParams() || len(src)%l.In != 0 || len(dout) != len(src)/l.In*l.Out {
		panic("ccs/head: slice length mismatch")
	}
	n := len(src) / l.In
	partial := make([][]float64, parallel.Chunks(n, block))
	parallel.For(n, block, 0, func(c, lo, hi int) {
		r := hi - lo
		// Both factors transposed, so that each weight's gradient is one
		// dot product over the block's rows (gonum's fastest layout).
		xt := make([]float64, l.In*r)
		gt := make([]float64, l.Out*r)
		for i := range r {
			for j, v := range src[(lo+i)*l.In : (lo+i+1)*l.In] {
				xt[j*r+i] = float64(v)
			}
			for j, v := range dout[(lo+i)*l.Out : (lo+i+1)*l.Out] {
				gt[j*r+i] = v
			}
		}
		p := make([]float64, l.NumParams())
		gemm(blas.NoTrans, blas.Trans, blas64.General{Rows: l.Out, Cols: r, Data: gt, Stride: r},
			blas64.General{Rows: l.In, Cols: r, Data: xt, Stride: r},
			blas64.General{Rows: l.Out, Cols: l.In, Data: p[:l.Out*l.In], Stride: l.In})
		db := p[l.Out*l.In:]
		for j := range l.Out {
			var s float64
			for _, v := range gt[j*r : (j+1)*r] {
				s += v
			}
			db[j] = s
		}
		partial[c] = p
	})
	for _, p := range partial {
		for i, v := range p {
			dtheta[i] += v
		}
	}
}

// InputGrads writes Wᵀ·dout_r for each row: the loss's gradient with
// respect to the head's inputs.
func (l *Linear) InputGrads(dst, dout []float64) []float64 {
	n := len(dout) / l.Out
	if dst == nil {
		dst = make([]float64, n*l.In)
	}
	if len(dout)%l.Out != 0 || len(dst) != n*l.In {
		panic("ccs/head: slice length mismatch")
	}
	clear(dst)
	gemm(blas.NoTrans, blas.NoTrans, blas64.General{Rows: n, Cols: l.Out, Data: dout, Stride: l.Out},
		blas64.General{Rows: l.Out, Cols: l.In, Data: l.W, Stride: l.In}, blas64.General{Rows: n, Cols: l.In, Data: dst, Stride: l.In})
	return dst
}

// LogAbsDet returns log|det W| for a square head: the set's log-volume in
// the backbone's space is its log-volume in the projected space minus this.
// It is −Inf for a singular W; it panics if W is not square.
func (l *Linear) LogAbsDet() float64 {
	if l.In != l.Out {
		panic("ccs/head: determinant of a non-square head")
	}
	var lu mat.LU
	lu.Factorize(mat.NewDense(l.Out, l.In, l.W))
	v, _ := lu.LogDet()
	return v
}

// AddLogAbsDetGrad adds w·∂log|det W|/∂W = w·W⁻ᵀ into dtheta's W part. It
// returns an error when W is singular (the gradient does not exist).
func (l *Linear) AddLogAbsDetGrad(dtheta []float64, w float64) error {
	if l.In != l.Out {
		panic("ccs/head: determinant of a non-square head")
	}
	var inv mat.Dense
	if err := inv.Inverse(mat.NewDense(l.Out, l.In, l.W)); err != nil {
		return fmt.Errorf("head: W is singular: %w", err)
	}
	for i := range l.Out {
		for j := range l.In {
			dtheta[i*l.In+j] += w * inv.At(j, i)
		}
	}
	return nil
}

// Project returns b with every embedding projected by the head (anchors,
// positives or their pool, negatives or their pool; indices are kept). Labels and logits are shared with b.
// A non-finite projected value is an error naming its array and row.
func (l *Linear) Project(b *bundle.Bundle) (*bundle.Bundle, error) {
	if b.D != l.In {
		return nil, fmt.Errorf("head: embeddings have dimension %d, the head takes %d", b.D, l.In)
	}
	p := &bundle.Bundle{N: b.N, K: b.K, D: l.Out, KNeg: b.KNeg, NegativeIndex: b.NegativeIndex,
		PositiveIndex: b.PositiveIndex, Labels: b.Labels, C: b.C, Logits: b.Logits}
	var err error
	forward := func(name string, src []float32) []float32 {
		if src == nil || err != nil {
			return nil
		}
		out := l.Forward(nil, src)
		err = finiteRows(name, out, l.Out)
		return out
	}
	p.Anchors = forward("projected anchors", b.Anchors)
	p.Positives = forward("projected positives", b.Positives)
	p.PositivePool = forward("projected positive pool", b.PositivePool)
	p.Negatives = forward("projected negatives", b.Negatives)
	p.Pool = forward("projected pool", b.Pool)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// finiteRows names the first non-finite value of x (rows of d).
func finiteRows(name string, x []float32, d int) error {
	for i, v := range x {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("head: %s: row %d, coordinate %d is %v (the head's weights or the embeddings overflow)", name, i/d, i%d, v)
		}
	}
	return nil
}

// fileLinear is the head's JSON layout: W as rows.
type fileLinear struct {
	In  int         `json:"in"`
	Out int         `json:"out"`
	W   [][]float64 `json:"w"`
	B   []float64   `json:"b"`
}

// MarshalJSON writes {"in", "out", "w": rows, "b"}.
func (l *Linear) MarshalJSON() ([]byte, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	f := fileLinear{In: l.In, Out: l.Out, B: l.B, W: make([][]float64, l.Out)}
	for i := range f.W {
		f.W[i] = l.W[i*l.In : (i+1)*l.In]
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads and validates a head.
func (l *Linear) UnmarshalJSON(b []byte) error {
	var f fileLinear
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	if len(f.W) != f.Out {
		return fmt.Errorf("head: w has %d rows, want out = %d", len(f.W), f.Out)
	}
	h := Linear{In: f.In, Out: f.Out, B: f.B}
	for i, row := range f.W {
		if len(row) != f.In {
			return fmt.Errorf("head: w[%d] has %d values, want in = %d", i, len(row), f.In)
		}
		h.W = append(h.W, row...)
	}
	if h.W == nil {
		h.W = []float64{}
	}
	if err := h.Validate(); err != nil {
		return err
	}
	*l = h
	return nil
}
