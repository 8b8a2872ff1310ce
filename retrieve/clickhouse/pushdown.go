package clickhouse

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/ccsets/ccs/geometry"
)

// A filter is the SQL that keeps a superset of the items inside a set: the
// engine evaluates it on the exact float64 differences of the float32
// embeddings, ccs decides on their float32 rounding (retrieve.Search), so
// the filter is loosened by a margin that covers the difference (see
// margin); the hits are then rescored in Go.
type filter struct {
	pre   string // cheap test on the first coordinates (PREWHERE), or ""
	where string // the whole test
}

// prefixDims is how many leading coordinates the cheap test reads.
func prefixDims(d int) int { return min(d, max(4, d/8)) }

// Rounding units of float32 and float64.
const (
	u32 = 0x1p-24
	u64 = 0x1p-53
)

// plan builds the filter of the set {x : g(anchor − x) ≤ q}, over the
// column emb. Every geometry whose score decomposes (geometry.Decomposer)
// has one: with the identity map (the ℓ2 and the generalized ball) the
// engine sums the score's own terms; with a square invertible map T (the
// ellipsoid, the single-norm, a square head) it tests a box that contains
// the set. A head that reduces the dimension leaves the set unbounded
// along T's null space and has no filter here.
func plan(g geometry.Geometry, q float64, anchor []float32, lit *consts) (filter, error) {
	if math.IsInf(q, 1) {
		return filter{where: "1"}, nil
	}
	dc, ok := g.(geometry.Decomposer)
	if !ok {
		return filter{}, fmt.Errorf("no push-down for a %T set", g)
	}
	dec, ok := dc.Decompose()
	if !ok {
		return filter{}, fmt.Errorf("no push-down for a %T set: its score does not decompose", g)
	}
	if dec.T == nil {
		return sumFilter(&dec, q, anchor, lit), nil
	}
	if dec.Out != dec.In {
		return filter{}, fmt.Errorf("no push-down for a set behind a %d→%d head: the set is unbounded along the head's null space; search a collection file instead", dec.In, dec.Out)
	}
	b, err := box(&dec, q)
	if err != nil {
		return filter{}, err
	}
	return boxFilter(b, anchor, lit), nil
}

// margin returns the bound the engine's sum of terms is compared with:
// every item ccs counts inside has engine sum ≤ the bound.
//
// ccs scores t_j(fl32(a_j − x_j)) in float64; the engine t_j(a_j − x_j),
// the difference of two float32 exact in float64. A normal float32
// rounding is fl32(δ) = δ(1+e), |e| ≤ u32, and a term, homogeneous of
// degree P_j in |δ|, moves by a factor ≤ (1+u32)^P_j; a difference below
// float32's normal range moves by at most 2^-149 absolutely, its term by
// at most t_j(2^-148). Both sums round in float64 and compute powers
// through exp and log: relative errors ≤ (d+4)·u64 and |P_j·log(·)|·u64
// (≤ 1e-12 for arguments in float64's range), which the 1e-9 covers many
// times over. So an item ccs keeps (its sum ≤ Inner(q)) has engine sum ≤
// Inner(q)·(1+u32)^Pmax·(1+1e-9) + Σ_j t_j(2^-148).
func margin(dec *geometry.Decomposition, q float64) float64 {
	pmax := dec.Power
	tiny := 0.0
	for j := range dec.Out {
		if dec.Power == 0 {
			pmax = math.Max(pmax, dec.P[j])
		}
		tiny += dec.Term(j, 0x1p-148)
	}
	return dec.Inner(q)*math.Pow(1+u32, pmax)*(1+1e-9) + tiny
}

// sumFilter compares the engine's sum of the terms — over the first
// coordinates (which can only grow) and over all — with margin.
func sumFilter(dec *geometry.Decomposition, q float64, anchor []float32, lit *consts) filter {
	limit := margin(dec, q)
	k := prefixDims(len(anchor))
	sum := func(emb string, n int) string {
		a := lit.f32s(anchor[:n])
		switch {
		case dec.Power == 2:
			return fmt.Sprintf("arraySum(arrayMap((x, a) -> (x - a) * (x - a), %s, %s))", emb, a)
		case dec.Power > 0:
			return fmt.Sprintf("arraySum(arrayMap((x, a) -> pow(abs(x - a), %s), %s, %s))", lit.f64(dec.Power), emb, a)
		}
		return fmt.Sprintf("arraySum(arrayMap((x, a, m, p) -> pow(m * abs(x - a), p), %s, %s, %s, %s))",
			emb, a, lit.f64s(dec.M[:n]), lit.f64s(dec.P[:n]))
	}
	// NOT (s > limit) rather than s <= limit: a NaN sum is kept, for the
	// rescoring to report.
	f := filter{where: fmt.Sprintf("NOT (%s > %s)", sum("emb", len(anchor)), lit.f64(limit))}
	if k < len(anchor) {
		f.pre = fmt.Sprintf("NOT (%s > %s)", sum(fmt.Sprintf("arraySlice(emb, 1, %d)", k), k), lit.f64(limit))
	}
	return f
}

// box returns, for each coordinate k, a bound b_k with |x_k| ≤ b_k for
// every x in the set of a square invertible T: x = T⁻¹y, and
//   - Power p ≥ 1: ‖y‖_p ≤ q, so |x_k| ≤ ‖row_k(T⁻¹)‖_{p*}·q (Hölder,
//     1/p + 1/p* = 1);
//   - Power p < 1: ‖y‖_1 ≤ ‖y‖_p ≤ q, so |x_k| ≤ max_j |T⁻¹_kj|·q;
//   - the generalized-ball terms: |y_j| ≤ q^{1/P_j}/M_j, so
//     |x_k| ≤ Σ_j |T⁻¹_kj|·q^{1/P_j}/M_j.
//
// T⁻¹ is computed, with its residual r = ‖I − T·T⁻¹‖_∞ bounding its error;
// the bounds are widened by (1 + 1e-6 + 4r·κ_∞) — the float32 rounding of
// the differences and ccs's own arithmetic are far inside 1e-6 — and by
// 2^-148 absolutely. A T whose widening would pass 1% is refused as too
// ill-conditioned to bound.
func box(dec *geometry.Decomposition, q float64) ([]float64, error) {
	n := dec.In
	t := mat.NewDense(n, n, append([]float64(nil), dec.T...))
	var inv mat.Dense
	if err := inv.Inverse(t); err != nil {
		return nil, fmt.Errorf("the set's linear map is not invertible (%v): no box bounds it", err)
	}
	var prod mat.Dense
	prod.Mul(t, &inv)
	r := 0.0
	for i := range n {
		row := 0.0
		for j := range n {
			v := prod.At(i, j)
			if i == j {
				v--
			}
			row += math.Abs(v)
		}
		r = math.Max(r, row)
	}
	kappa := mat.Norm(t, math.Inf(1)) * mat.Norm(&inv, math.Inf(1))
	widen := 1 + 1e-6 + 4*r*kappa
	if !(widen < 1.01) {
		return nil, fmt.Errorf("the set's linear map is too ill-conditioned to bound by a box (condition number %.3g)", kappa)
	}
	b := make([]float64, n)
	for k := range n {
		var s float64
		switch p := dec.Power; {
		case p == 0:
			for j := range n {
				s += math.Abs(inv.At(k, j)) * math.Pow(q, 1/dec.P[j]) / dec.M[j]
			}
		case p <= 1:
			for j := range n {
				s = math.Max(s, math.Abs(inv.At(k, j)))
			}
			s *= q
		default:
			ps := p / (p - 1)
			for j := range n {
				s += math.Pow(math.Abs(inv.At(k, j)), ps)
			}
			s = math.Pow(s, 1/ps) * q
		}
		b[k] = s*widen + 0x1p-148
	}
	return b, nil
}

// boxFilter keeps the items whose difference from the anchor is inside the
// box b — first on the first coordinates, then on all. NOT arrayExists(… >
// …) keeps a NaN coordinate for the rescoring to report.
func boxFilter(b []float64, anchor []float32, lit *consts) filter {
	test := func(emb string, n int) string {
		return fmt.Sprintf("NOT arrayExists((x, a, b) -> abs(x - a) > b, %s, %s, %s)", emb, lit.f32s(anchor[:n]), lit.f64s(b[:n]))
	}
	f := filter{where: test("emb", len(b))}
	if k := prefixDims(len(b)); k < len(b) {
		f.pre = test(fmt.Sprintf("arraySlice(emb, 1, %d)", k), k)
	}
	return f
}

// consts writes the filter's constants into SQL, and keeps what it wrote
// so that the engine's reading of them can be checked (see check). As
// decimals (shortest round-trip float64 text; a float32 through its
// float64 value, which CAST to Float32 then holds exactly) they cost the
// engine nothing; as the hexadecimal of their bytes they are exact whatever
// the engine's decimal parser, but 18.16 recomputes them on every block,
// three times slower on a generalized ball. A search writes decimals,
// checks them in one small query, and falls back to hexadecimal if any
// constant was read differently.
type consts struct {
	hex   bool
	exprs []string   // each decimal constant, as an Array(String) of its values' hex bytes
	want  [][]string // those hex bytes, as ccs holds them
}

func (c *consts) f64(v float64) string {
	if c.hex {
		return "reinterpretAsFloat64(unhex('" + hex.EncodeToString(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))) + "'))"
	}
	lit := "toFloat64(" + strconv.FormatFloat(v, 'g', -1, 64) + ")"
	c.record("["+lit+"]", 1, func(b []byte, _ int) []byte { return binary.LittleEndian.AppendUint64(b, math.Float64bits(v)) })
	return lit
}

func (c *consts) f64s(v []float64) string {
	bytes := func(b []byte, i int) []byte { return binary.LittleEndian.AppendUint64(b, math.Float64bits(v[i])) }
	if c.hex {
		return hexArray("Float64", len(v), bytes)
	}
	lit := decimalArray("Float64", len(v), func(i int) float64 { return v[i] })
	c.record(lit, len(v), bytes)
	return lit
}

func (c *consts) f32s(v []float32) string {
	bytes := func(b []byte, i int) []byte { return binary.LittleEndian.AppendUint32(b, math.Float32bits(v[i])) }
	if c.hex {
		return hexArray("Float32", len(v), bytes)
	}
	lit := decimalArray("Float32", len(v), func(i int) float64 { return float64(v[i]) })
	c.record(lit, len(v), bytes)
	return lit
}

// record keeps a decimal constant and its values' bytes, as the engine's
// hex(reinterpretAsString(x)) prints them: trailing zero bytes dropped.
func (c *consts) record(expr string, n int, bytes func(b []byte, i int) []byte) {
	want := make([]string, n)
	var b []byte
	for i := range n {
		b = bytes(b[:0], i)
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		want[i] = strings.ToUpper(hex.EncodeToString(b))
	}
	c.exprs = append(c.exprs, "arrayMap(x -> hex(reinterpretAsString(x)), "+expr+")")
	c.want = append(c.want, want)
}

// checkQuery is the query whose answer check compares.
func (c *consts) checkQuery() string {
	return "SELECT " + strings.Join(c.exprs, ", ")
}

// decimalArray writes CAST([v_0, …] AS Array(typ)).
func decimalArray(typ string, n int, v func(i int) float64) string {
	var sb strings.Builder
	sb.WriteString("CAST([")
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatFloat(v(i), 'g', -1, 64))
	}
	sb.WriteString("] AS Array(" + typ + "))")
	return sb.String()
}

// hexArray writes an Array(typ) of n values, value i's bytes from bytes.
func hexArray(typ string, n int, bytes func(b []byte, i int) []byte) string {
	var sb strings.Builder
	sb.WriteString("arrayMap(h -> reinterpretAs" + typ + "(unhex(h)), [")
	var b []byte
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		b = bytes(b[:0], i)
		sb.WriteString("'" + hex.EncodeToString(b) + "'")
	}
	sb.WriteString("])")
	return sb.String()
}
