package retrieve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// A Store holds a collection of embeddings and finds the items inside a
// set: the in-memory Collection, or a table of a database (package
// retrieve/clickhouse). Every store answers exactly as Search does on the
// same items: the same hits, scores, order and total.
type Store interface {
	// Dim is the embeddings' dimension.
	Dim() int
	// Len counts the items.
	Len(ctx context.Context) (int, error)
	// Search returns the items inside s around anchor, nearest first, ties
	// by id, at most limit of them (limit ≤ 0: all), and how many are
	// inside in all. An error means no answer: a store never returns part
	// of the hits.
	Search(ctx context.Context, s *conformal.Set, anchor []float32, limit int) ([]Hit, int, error)
	// Close releases the store's resources.
	Close() error
}

// A RowReader is a store that reads an item's embedding by its row (a
// collection in memory; not a database, whose rows have no order).
type RowReader interface {
	Store
	Row(i int) ([]float32, error)
}

// A Transformer is a store that can prepare itself for a single-norm set's
// searches (Collection.Transform).
type Transformer interface {
	Store
	Transform(s *conformal.Set, maxBytes int64) error
}

// A HalfPreparer is a store that keeps compact copies of its items for
// the balls' searches — half-precision for the ℓ2 ball's, 8-bit for the
// generalized ball's — and can make them before the first search
// (Collection.PrepareHalf, Collection.PrepareBytes).
type HalfPreparer interface {
	Store
	PrepareHalf() int64
	PrepareBytes() int64
}

// Row implements RowReader: row i's embedding (a view, not a copy).
func (c *Collection) Row(i int) ([]float32, error) {
	if i < 0 || i >= c.N {
		if c.N == 0 {
			return nil, fmt.Errorf("retrieve: row %d: the collection has no rows", i)
		}
		return nil, fmt.Errorf("retrieve: row %d: the collection has %d rows (0 to %d)", i, c.N, c.N-1)
	}
	return c.Rows[i*c.D : (i+1)*c.D], nil
}

// Dim is the embeddings' dimension.
func (c *Collection) Dim() int { return c.D }

// Len is the number of items.
func (c *Collection) Len(context.Context) (int, error) { return c.N, nil }

// Search is the function Search on c.
func (c *Collection) Search(ctx context.Context, s *conformal.Set, anchor []float32, limit int) ([]Hit, int, error) {
	return Search(ctx, s, anchor, c, limit)
}

// Close does nothing: a collection is memory.
func (c *Collection) Close() error { return nil }

// ErrUnavailable marks a store's failure to answer — a server or shard
// down, a timeout, a table missing or holding bad rows — as opposed to a
// query the store refuses: the request was fine, the store was not (a
// service answers 502).
var ErrUnavailable = errors.New("retrieve: the collection's store did not answer")

// An Opener opens the store a URL names.
type Opener func(ctx context.Context, url string) (Store, error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// Register makes Open hand URLs of scheme ("scheme://…") to open, as
// database/sql's drivers register themselves: a store package registers in
// its init, and a program imports it for that effect.
func Register(scheme string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if _, dup := openers[scheme]; dup {
		panic("retrieve: Register twice for scheme " + scheme)
	}
	openers[scheme] = open
}

// IsURL reports whether spec names a store by URL ("scheme://…") rather
// than a file.
func IsURL(spec string) bool { return strings.Contains(spec, "://") }

// Open opens a collection: a URL of a registered scheme
// ("clickhouse://host:port/database.table" once package
// retrieve/clickhouse is imported), or else a file read by ReadCollection.
func Open(ctx context.Context, spec string) (Store, error) {
	if !IsURL(spec) {
		return ReadCollection(spec)
	}
	scheme, _, _ := strings.Cut(spec, "://")
	openersMu.Lock()
	open, ok := openers[scheme]
	var have []string
	for k := range openers {
		have = append(have, k)
	}
	openersMu.Unlock()
	if !ok {
		slices.Sort(have)
		return nil, fmt.Errorf("%s: no store for scheme %q (have %v)", spec, scheme, have)
	}
	return open(ctx, spec)
}

// AllZero reports whether an anchor is all zeros: what an encoder gives
// for an input it failed on (an unreadable image, an empty text).
func AllZero(anchor []float32) bool {
	return len(anchor) > 0 && !slices.ContainsFunc(anchor, func(v float32) bool { return v != 0 })
}

// ZeroCentre is where set centres its set around an all-zero anchor, as
// ZeroAnchor's callers name it: "the origin", or, for a set centred at
// anchor + c (geometry.Shifted), "c, the set's shift (…)".
func ZeroCentre(set *conformal.Set) string {
	if sh, ok := set.Geometry.(*geometry.Shifted); ok {
		return fmt.Sprintf("c, the set's shift (its sets are centred at anchor + c, ‖c‖ = %.3g)", sh.ShiftNorm())
	}
	return "the origin"
}

// ZeroAnchor is the warning of an answer around anchors that are all
// zeros (AllZero): who they are ("the anchor is all zeros", or how many
// of a batch's) and what the answer did with them (answered: "its set is
// answered like any other, …").
func ZeroAnchor(who, answered string) string {
	return who + ": what an encoder gives for an input it failed on (an unreadable image, an empty text); " +
		answered + ", which says nothing of the input: embed it again, or leave it out"
}
