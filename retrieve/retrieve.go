// Package retrieve finds every item of a collection of embeddings that lies
// inside a fitted set around a query anchor: retrieval whose recall of the
// anchor's positives is guaranteed at 1−α (marginally over anchors, when
// the query and the calibration anchors are exchangeable), by an exact scan
// over all cores.
package retrieve

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/parallel"
)

// Collection is a searchable set of n embeddings of dimension d, each with
// an id.
type Collection struct {
	N, D int
	IDs  []int64   // N
	Rows []float32 // N×D
}

// NewCollection checks rows (n×d) and ids (nil: the row numbers).
func NewCollection(rows []float32, d int, ids []int64) (*Collection, error) {
	if d < 1 || len(rows)%d != 0 {
		return nil, fmt.Errorf("collection: %d values are not rows of dimension %d", len(rows), d)
	}
	n := len(rows) / d
	if ids == nil {
		ids = make([]int64, n)
		for i := range ids {
			ids[i] = int64(i)
		}
	}
	if len(ids) != n {
		return nil, fmt.Errorf("collection: %d ids for %d rows", len(ids), n)
	}
	for i, v := range rows {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("collection: row %d, coordinate %d is %v", i/d, i%d, v)
		}
	}
	return &Collection{N: n, D: d, IDs: ids, Rows: rows}, nil
}

// ReadCollection reads a collection file: a Parquet file (.parquet, see
// ReadParquet), a NumPy array (.npy, float32 (n, d), ids the row numbers)
// or an .npz archive: the embeddings as "embeddings" (n, d) float32 — or a
// bundle's "anchors" — and the ids as "ids" (n,) int64 — or a bundle's
// "index"; without either, the row numbers.
func ReadCollection(path string) (*Collection, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet":
		return ReadParquet(path)
	case ".npy":
		a, err := bundle.ReadNPY(path)
		if err != nil {
			return nil, err
		}
		if a.F32 == nil || len(a.Shape) != 2 || a.Shape[0] < 1 || a.Shape[1] < 1 {
			return nil, fmt.Errorf("%s: want float32 (n, d), n, d ≥ 1, got shape %v", path, a.Shape)
		}
		c, err := NewCollection(a.F32, a.Shape[1], nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return c, nil
	}
	arr, err := bundle.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	rows, ok := arr["embeddings"]
	name := "embeddings"
	if !ok {
		rows, name = arr["anchors"], "anchors"
	}
	if rows.F32 == nil || len(rows.Shape) != 2 || rows.Shape[0] < 1 || rows.Shape[1] < 1 {
		return nil, fmt.Errorf("%s: want an array \"embeddings\" (or \"anchors\") of float32 (n, d), n, d ≥ 1", path)
	}
	ids, idName := arr["ids"], "ids"
	if ids.Shape == nil {
		ids, idName = arr["index"], "index"
	}
	if ids.Shape != nil && (ids.I64 == nil || len(ids.Shape) != 1 || ids.Shape[0] != rows.Shape[0]) {
		return nil, fmt.Errorf("%s: array %q must be int64 (%d,)", path, idName, rows.Shape[0])
	}
	c, err := NewCollection(rows.F32, rows.Shape[1], ids.I64)
	if err != nil {
		return nil, fmt.Errorf("%s: array %q: %w", path, name, err)
	}
	return c, nil
}

// Hit is an item inside the set: its id, its row in the collection (−1
// when the store has no row order, as a database table) and its score
// φ(anchor − item) (≤ the set's threshold).
type Hit struct {
	ID    int64   `json:"id"`
	Row   int     `json:"row"`
	Score float64 `json:"score"`
}

// CheckQuery checks what every store checks before a search: s is
// calibrated, the anchor is finite and s, the anchor and the store (of
// dimension d) agree in dimension.
func CheckQuery(s *conformal.Set, anchor []float32, d int) error {
	if !s.Calibrated() {
		return conformal.ErrNotCalibrated
	}
	switch sd := s.Geometry.Dim(); {
	case sd != d:
		return fmt.Errorf("the set has dimension %d, the collection %d", sd, d)
	case len(anchor) != d:
		return fmt.Errorf("anchor of dimension %d, the set has %d", len(anchor), d)
	}
	for j, v := range anchor {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("anchor coordinate %d is %v", j, v)
		}
	}
	return nil
}

// chunk is the number of items a task scores; block the rows whose
// differences are held at a time.
const (
	chunk = 8192
	block = 256
)

// Search returns the items of c inside s around anchor, nearest (lowest
// score) first, ties by id and then row, at most limit of them (limit ≤ 0:
// all), and how many are inside in all. It scans every item on all cores
// and stops early, returning ctx's error, when ctx is done.
func Search(ctx context.Context, s *conformal.Set, anchor []float32, c *Collection, limit int) ([]Hit, int, error) {
	if err := CheckQuery(s, anchor, c.D); err != nil {
		return nil, 0, err
	}
	d := c.D
	parts := make([][]Hit, parallel.Chunks(c.N, chunk))
	q := s.Threshold
	// With fast scores (a geometry.FastScorer) every item is scored fast and
	// decided exactly by geometry.Members, the hits rescored exactly;
	// otherwise a scalar prefilter stops each item's scan early.
	_, fast := s.Geometry.(geometry.FastScorer)
	var maybe func(anchor, row []float32) bool
	if !fast {
		maybe = prefilter(s.Geometry, q)
	}
	parallel.For(c.N, chunk, 0, func(ci, lo, hi int) {
		if ctx.Err() != nil {
			return
		}
		diffs := make([]float32, block*d)
		rows := make([]int, 0, block)
		scores := make([]float64, block)
		in := make([]bool, block)
		var one [1]float64
		flush := func() {
			n := len(rows)
			if fast {
				geometry.Members(s.Geometry, q, in[:n], scores[:n], diffs[:n*d])
				for i := range n {
					if in[i] {
						sc := s.Geometry.Scores(one[:], diffs[i*d:(i+1)*d])[0]
						parts[ci] = append(parts[ci], Hit{ID: c.IDs[rows[i]], Row: rows[i], Score: sc})
					}
				}
			} else {
				for i, sc := range s.Geometry.Scores(scores[:n], diffs[:n*d]) {
					if sc <= q {
						parts[ci] = append(parts[ci], Hit{ID: c.IDs[rows[i]], Row: rows[i], Score: sc})
					}
				}
			}
			rows = rows[:0]
		}
		for r := lo; r < hi; r++ {
			row := c.Rows[r*d : (r+1)*d]
			if maybe != nil && !maybe(anchor, row) {
				continue
			}
			dst := diffs[len(rows)*d : (len(rows)+1)*d]
			for j, v := range row {
				dst[j] = anchor[j] - v
			}
			if rows = append(rows, r); len(rows) == block {
				flush()
			}
		}
		if len(rows) > 0 {
			flush()
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	var hits []Hit
	for _, p := range parts {
		hits = append(hits, p...)
	}
	total := len(hits)
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(a.Score, b.Score), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Row, b.Row))
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, total, nil
}

// prefilter returns a quick test that rules items out — false means
// certainly outside — for the geometries whose score is a sum of
// non-negative per-coordinate terms (the ℓ2 ball and the generalized ball):
// the partial sum is checked every few coordinates and the scan of an item
// stops once it exceeds the threshold (with a relative margin of 1e-9 for
// rounding). Items it keeps are scored exactly by the geometry, so the hits
// are the same as without it. nil means no quick test.
func prefilter(g geometry.Geometry, q float64) func(anchor, row []float32) bool {
	const every = 8
	switch g := g.(type) {
	case geometry.Ball:
		limit := q * q * (1 + 1e-9)
		return func(anchor, row []float32) bool {
			var acc float64
			for j0 := 0; j0 < len(row); j0 += every {
				for j := j0; j < min(len(row), j0+every); j++ {
					x := float64(anchor[j] - row[j])
					acc += x * x
				}
				if acc > limit {
					return false
				}
			}
			return true
		}
	case *geometry.GenBall:
		m, p := g.Scales(), g.Exponents()
		logm := make([]float64, len(m))
		for j := range m {
			logm[j] = math.Log(m[j])
		}
		limit := q * (1 + 1e-9)
		return func(anchor, row []float32) bool {
			var acc float64
			for j0 := 0; j0 < len(row); j0 += every {
				for j := j0; j < min(len(row), j0+every); j++ {
					// Widen before the zero test: see geometry.genBallScoreGrads.
					if a := math.Abs(float64(anchor[j] - row[j])); a != 0 {
						acc += math.Exp(p[j] * (logm[j] + math.Log(a)))
					}
				}
				if acc > limit {
					return false
				}
			}
			return true
		}
	}
	return nil
}
