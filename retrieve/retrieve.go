// Package retrieve finds every item of a collection of embeddings that lies
// inside a fitted set around a query anchor, by an exact scan over all
// cores: retrieval whose expected recall of the anchor's positives is at
// least 1−α — in expectation over query anchors and calibration draws,
// when the query and the calibration anchors are exchangeable. One query's
// recall can be lower, even 0.
package retrieve

import (
	"archive/zip"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// Collection is a searchable set of n embeddings of dimension d, each with
// an id.
type Collection struct {
	N, D int
	IDs  []int64   // N
	Rows []float32 // N×D
	// Keys are the items' string ids (N, none empty, no two equal), as a
	// RAG index names its passages; nil where the ids are IDs. A hit
	// carries its item's key beside its id. Set them with SetKeys.
	Keys []string
	// Converted says what its reader converted, as "float64 → float32";
	// empty when nothing was.
	Converted string

	// NoHalf keeps Search from making the collection's compact copies
	// (set it before the first Search): the half-precision copy the ℓ2
	// ball screens (HalfBytes more memory: half the rows') and the 8-bit
	// copy the generalized ball screens (ByteBytes: a quarter of the
	// rows'). By default the second search with such a set over at least
	// HalfMinRows items starts making its copy on a goroutine of its own
	// (a one-off query scans plainly, since making a copy costs more than
	// one scan; no search waits for it), and every search from when it is
	// made screens the items there first. PrepareHalf and PrepareBytes
	// make them at once.
	NoHalf bool

	mu          sync.Mutex
	transforms  map[geometry.Geometry]transform // see Transform: by the set's geometry
	batchGroup  int                             // batch's chunks a group; 0: batchGroup (tests set fewer)
	anchorBlock int                             // batch's anchors a block; 0: anchors() (tests set fewer)
	half        lazyCopy[kernel.HalfRows]
	bytes       lazyCopy[kernel.ByteRows]
	offUnit     offUnit // rows not of unit norm (OffUnit), counted once
}

// A lazyCopy is one of a collection's compact copies: started in the
// background by the second search that would screen it (no search waits
// for it: searches scan without it until it is made, with the same
// answers), or made at once by make; then kept.
type lazyCopy[T any] struct {
	searches atomic.Int64 // searches, until the copy is started
	started  atomic.Bool
	mu       sync.Mutex // held while the copy is made
	made     sync.WaitGroup
	p        atomic.Pointer[T]
}

// get returns the copy for a search, or nil: where ok is false, and until
// it is made, which the second call starts on a goroutine of its own.
func (l *lazyCopy[T]) get(ok bool, mk func() *T) *T {
	if h := l.p.Load(); h != nil {
		return h
	}
	if !ok || l.searches.Add(1) < 2 || !l.started.CompareAndSwap(false, true) {
		return nil
	}
	l.made.Add(1)
	go func() {
		defer l.made.Done()
		l.build(mk)
	}()
	return nil
}

// make returns the copy, made now (by mk, or waited for where a search
// started it) if it is not yet; nil where ok is false.
func (l *lazyCopy[T]) make(ok bool, mk func() *T) *T {
	if !ok {
		return nil
	}
	l.started.Store(true)
	l.build(mk)
	return l.p.Load()
}

// build makes the copy unless it is made.
func (l *lazyCopy[T]) build(mk func() *T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p.Load() == nil {
		l.p.Store(mk())
	}
}

// wait waits for a copy a search started (tests).
func (l *lazyCopy[T]) wait() { l.made.Wait() }

// HalfMinRows is the smallest collection Search makes a compact copy
// (half-precision or 8-bit) of.
const HalfMinRows = 4096

// HalfBytes is the memory of a collection's half-precision copy: n rows
// of dimension d, two bytes a value (rounded up to whole blocks of 16 rows).
func HalfBytes(n, d int) int64 { return kernel.HalfBytes(n, d) }

// ByteBytes is the memory of a collection's 8-bit copy: n rows of
// dimension d, one byte a value (rounded up to whole blocks of 16 rows),
// and each coordinate's offset and step.
func ByteBytes(n, d int) int64 { return kernel.ByteRowsBytes(n, d) }

// copies reports whether c makes compact copies.
func (c *Collection) copies() bool { return !c.NoHalf && c.N >= HalfMinRows }

// PrepareHalf makes c's half-precision copy now (the second search with
// an ℓ2 ball starts it in the background), so that every query has it:
// 0.33 s for 10⁶ items of dimension 128 on 2 cores. It reports the bytes
// the copy takes (HalfBytes; 0 where c makes none: NoHalf, or fewer than
// HalfMinRows items).
func (c *Collection) PrepareHalf() int64 {
	if c.half.make(c.copies(), c.newHalf) == nil {
		return 0
	}
	return HalfBytes(c.N, c.D)
}

// PrepareBytes makes c's 8-bit copy now (the second search with a
// generalized ball starts it in the background), so that every query has
// it. It reports the bytes the copy takes (ByteBytes; 0 where c makes
// none: NoHalf, or fewer than HalfMinRows items).
func (c *Collection) PrepareBytes() int64 {
	if c.bytes.make(c.copies(), c.newBytes) == nil {
		return 0
	}
	return ByteBytes(c.N, c.D)
}

func (c *Collection) newHalf() *kernel.HalfRows { return newHalf(c.Rows, c.D) }

func (c *Collection) newBytes() *kernel.ByteRows { return newBytes(c.Rows, c.D) }

// newHalf makes the half-precision copy of rows (n×d) on all cores.
func newHalf(rows []float32, d int) *kernel.HalfRows {
	return kernel.NewHalfRows(rows, d, func(nb int, fill func(b0, b1 int)) {
		parallel.For(nb, 256, 0, func(_, b0, b1 int) { fill(b0, b1) })
	})
}

// newBytes makes the 8-bit copy of rows (n×d) on all cores.
func newBytes(rows []float32, d int) *kernel.ByteRows {
	return kernel.NewByteRows(rows, d, func(nb int, fill func(b0, b1 int)) {
		parallel.For(nb, 256, 0, func(_, b0, b1 int) { fill(b0, b1) })
	})
}

// NewCollection checks rows (n×d) and ids (nil: the row numbers).
func NewCollection(rows []float32, d int, ids []int64) (*Collection, error) {
	if d < 1 || len(rows)%d != 0 {
		return nil, fmt.Errorf("retrieve: collection: %d values are not rows of dimension %d", len(rows), d)
	}
	n := len(rows) / d
	if ids == nil { // the row numbers: distinct, nothing to check
		ids = make([]int64, n)
		for i := range ids {
			ids[i] = int64(i)
		}
	} else if len(ids) != n {
		return nil, fmt.Errorf("retrieve: collection: %d ids for %d rows", len(ids), n)
	} else if err := UniqueIDs(ids); err != nil {
		return nil, fmt.Errorf("retrieve: collection: %w", err)
	}
	if n > 0 { // the rows holding NaN or ±Inf counted, and how to leave them out
		if err := bundle.CheckEmbeddings(bundle.Embeddings{Source: "collection", N: n, D: d, Rows: rows}); err != nil {
			// Wrapped as the other refusals of the rows, so that a caller
			// naming the collection itself unwraps "row 0, …" (capi).
			return nil, fmt.Errorf("retrieve: collection: %w", errors.New(strings.TrimPrefix(err.Error(), "collection: ")))
		}
	}
	return &Collection{N: n, D: d, IDs: ids, Rows: rows}, nil
}

// UniqueIDs refuses ids with a repeat, naming the first two rows that
// share one: a hit must name one item. NewCollection's and SetKeys's
// errors wrap this one's kind of message (errors.Unwrap gives it without
// the package's prefix, for a caller naming the ids its own way).
func UniqueIDs(ids []int64) error {
	sorted := slices.Sorted(slices.Values(ids))
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			first := slices.Index(ids, sorted[i])
			second := first + 1 + slices.Index(ids[first+1:], sorted[i])
			return fmt.Errorf("rows %d and %d have the same id %d", first, second, sorted[i])
		}
	}
	return nil
}

// SetKeys gives the items string ids (see Collection.Keys), in row order:
// one a row, none empty, no two equal.
func (c *Collection) SetKeys(keys []string) error {
	if len(keys) != c.N {
		return fmt.Errorf("retrieve: collection: %d string ids for %d rows", len(keys), c.N)
	}
	seen := make(map[string]int, len(keys))
	for i, k := range keys {
		if k == "" {
			return fmt.Errorf("retrieve: collection: %w", fmt.Errorf("the string id of row %d is empty", i))
		}
		if j, ok := seen[k]; ok {
			return fmt.Errorf("retrieve: collection: %w", fmt.Errorf("rows %d and %d have the same id %q", j, i, k))
		}
		seen[k] = i
	}
	c.Keys = keys
	return nil
}

// ErrTable reports a Parquet or Arrow file, or a Hugging Face dataset's
// directory, given to ReadCollection in a program that does not import
// package table, which reads them (RegisterTables): a program that needs
// no tables does not link Apache Arrow.
var ErrTable = errors.New(`a Parquet or Arrow table: import package github.com/ccsets/ccs/table to read it (import _ "github.com/ccsets/ccs/table")`)

// tables reads tables for ReadCollection (RegisterTables).
var tables atomic.Pointer[func(path, column, ids string) (*Collection, error)]

// RegisterTables makes ReadCollection (and Open) read tables
// (bundle.IsTable: Parquet, Arrow, a Hugging Face dataset's directory) by
// read, given the path, the embeddings' column and the ids' ("" to
// choose): what package table does when it is imported, as a store
// package registers its scheme (Register).
func RegisterTables(read func(path, column, ids string) (*Collection, error)) { tables.Store(&read) }

// texts reads text tables and JSON lines for ReadCollection (RegisterText).
var texts atomic.Pointer[func(path, name, ids string) (*Collection, bool, error)]

// RegisterText makes ReadCollection (and Open) read text tables and JSON
// lines by read, given the path, the embedding's column or field and the
// ids' ("" to choose): what the ccs command does, whose readers of a
// user's text they are. read is given every file first, and says (ok)
// whether it took it: the files it reads, and those of formats it names
// to refuse (HDF5, a workbook …) as the command's other inputs do.
func RegisterText(read func(path, name, ids string) (c *Collection, ok bool, err error)) {
	texts.Store(&read)
}

// textFile says whether path names a text table or JSON lines by its
// extension (past a .gz), which a program without a RegisterText reader
// refuses saying so.
func textFile(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".gz" {
		ext = strings.ToLower(filepath.Ext(strings.TrimSuffix(path, filepath.Ext(path))))
	}
	switch ext {
	case ".csv", ".tsv", ".jsonl", ".ndjson", ".json": // a .txt of ids is told below
		return true
	}
	return false
}

// ReadCollection reads a collection file: a Parquet or Arrow table (where
// package table is imported: RegisterTables), a NumPy array (.npy,
// float32 (n, d), ids the row numbers) or an .npz archive: the embeddings
// as "embeddings" (n, d) float32 — or a bundle's "anchors", or else the
// archive's only two-dimensional floating-point array — and the ids as
// "ids" (n,) int64 or strings (then the collection's Keys, its IDs the
// row numbers) — or a bundle's "index"; without either, the row numbers;
// or a .safetensors file, its tensors named as an .npz's arrays (a file of
// one tensor: the embeddings). FILE:NAME names the embeddings' array,
// tensor or column (when FILE exists and FILE:NAME does not), as ccs
// bundle's -embeddings takes them. A suffix ?ids=NAME (or ?id=NAME)
// names the ids' array, tensor or column instead of "ids" (a table's
// "id", "ids" or "_id"): corpus.parquet?ids=doc_id, emb.npz:vectors?ids=keys.
// A text table or JSON lines is read where a reader is registered
// (RegisterText: the ccs command's).
func ReadCollection(spec string) (*Collection, error) {
	spec, idName, err := splitIDs(spec)
	if err != nil {
		return nil, err
	}
	path, name := splitSpec(spec)
	if bundle.IsTable(path) { // Parquet, Arrow, a Hugging Face dataset's directory
		if read := tables.Load(); read != nil {
			return (*read)(path, name, idName)
		}
		return nil, fmt.Errorf("%s: %w", path, ErrTable)
	}
	if err := bundle.PickleFile(path); err != nil {
		return nil, err
	}
	if read := texts.Load(); read != nil {
		if c, ok, err := (*read)(path, name, idName); ok {
			return c, err
		}
	} else if textFile(path) {
		return nil, fmt.Errorf("%s: a text table or JSON lines, which the ccs command reads as a collection (ccs retrieve -db, ccs serve -db) and the library alone (Python's ccs.Collection.load) does not: give the rows and ids as arrays, ccs.Collection(rows, ids), or write them as an .npy (np.save) or a Parquet table", path)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".npy" {
		if name != "" {
			return nil, fmt.Errorf("%s: an .npy file holds one array: give the file without :%s", path, name)
		}
		if idName != "" {
			return nil, fmt.Errorf("%s: an .npy file holds one array, the embeddings, and no ids: give the file without ?ids=%s, and the ids in an .npz beside the embeddings (or ccs retrieve's -ids FILE)", path, idName)
		}
		a, err := bundle.ReadNPY(path)
		if err != nil {
			return nil, err
		}
		if a.F32 == nil {
			return nil, fmt.Errorf("%s: dtype %s %s: want floating-point embeddings (float16, float32 or float64), (n, d): convert them, x.astype(np.float32)", path, a.Kind(), bundle.FormatShape(a.Shape))
		}
		if len(a.Shape) != 2 || a.Shape[0] < 1 || a.Shape[1] < 1 {
			return nil, fmt.Errorf("%s: want float32 (n, d), n, d ≥ 1, got shape %s", path, bundle.FormatShape(a.Shape))
		}
		c, err := NewCollection(a.F32, a.Shape[1], nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.Converted = a.Converted
		return c, nil
	}
	var arr map[string]bundle.Array
	if ext == ".safetensors" {
		arr, err = readSafetensors(path, name, idName)
	} else {
		arr, err = bundle.ReadNPZ(path)
		if err != nil && ext != ".npz" && errors.Is(err, zip.ErrFormat) {
			// Not a zip archive, nor by its name: a text file of ids given
			// for the rows is the usual case. An archive's own errors (an
			// .npz under another name) and the file's (missing, not
			// readable) are reported as they are.
			return nil, fmt.Errorf("%s: not a collection file: a collection is an (n, d) float array in a .npy, .npz or .safetensors file, or a Parquet or Arrow table (a text file of ids goes with ccs retrieve -ids FILE; serve and Collection.load take the ids from the collection file, FILE?ids=NAME)", path)
		}
	}
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = embeddingsArray(arr)
	}
	rows, ok := arr[name]
	if !ok {
		what := fmt.Sprintf("no array %q", name)
		if name == "" {
			what = `want an array "embeddings" (or "anchors") of float32 (n, d), or name it (FILE:ARRAY)`
		}
		return nil, fmt.Errorf("%s: %s; have %s", path, what, arrayList(arr))
	}
	if rows.F32 == nil || len(rows.Shape) != 2 || rows.Shape[0] < 1 || rows.Shape[1] < 1 {
		return nil, fmt.Errorf("%s: array %q is %s %s: want float32 (n, d), n, d ≥ 1 (the embeddings)", path, name, rows.Kind(), bundle.FormatShape(rows.Shape))
	}
	var ids bundle.Array
	switch {
	case idName != "":
		var ok bool
		if ids, ok = arr[idName]; !ok {
			return nil, fmt.Errorf("%s: no array %q for the ids (?ids=%s); have %s", path, idName, idName, arrayList(arr))
		}
	case arr["ids"].Shape != nil:
		ids, idName = arr["ids"], "ids"
	default:
		ids, idName = arr["index"], "index"
	}
	if ids.Shape != nil && (ids.I64 != nil || ids.Str != nil) && len(ids.Shape) == 1 && ids.Shape[0] != rows.Shape[0] {
		return nil, fmt.Errorf("%s: array %q: %d ids for the %d rows of the collection%s", path, idName, ids.Shape[0], rows.Shape[0], bundle.TransposedHint(ids.Shape[0], rows.Shape[0], rows.Shape[1]))
	}
	if ids.Shape != nil && ((ids.I64 == nil && ids.Str == nil) || len(ids.Shape) != 1) {
		return nil, fmt.Errorf("%s: array %q must be int64 or strings (%d,), got %s %s", path, idName, rows.Shape[0], ids.Kind(), bundle.FormatShape(ids.Shape))
	}
	c, err := NewCollection(rows.F32, rows.Shape[1], ids.I64)
	if err != nil {
		what := name
		if ids.I64 != nil && UniqueIDs(ids.I64) != nil {
			// NewCollection checks the ids before the rows: its error
			// is the ids', named by their array as SetKeys's are below
			// (checked again here, on the way out, not before every
			// load: 1.5 M ids took 0.5 s).
			what = idName
		}
		return nil, fmt.Errorf("%s: array %q: %w", path, what, err)
	}
	c.Converted = rows.Converted
	if ids.Str != nil {
		if err := c.SetKeys(ids.Str); err != nil {
			return nil, fmt.Errorf("%s: array %q: %w", path, idName, err)
		}
	}
	return c, nil
}

// splitIDs splits a collection's spec SPEC?ids=NAME (or ?id=NAME) into
// SPEC and the ids' array, tensor or column NAME, unless a file is named
// by the whole spec; ids is "" without the suffix.
func splitIDs(spec string) (rest, ids string, err error) {
	i := strings.LastIndex(spec, "?")
	if i <= 0 {
		return spec, "", nil
	}
	if _, err := os.Stat(spec); err == nil {
		return spec, "", nil
	}
	key, value, _ := strings.Cut(spec[i+1:], "=")
	switch {
	case key != "ids" && key != "id":
		return spec, "", nil // not ours: the file's error names it
	case value == "":
		return "", "", fmt.Errorf("%s: ?%s= names no column: want ?ids=NAME, the ids' array or column", spec, key)
	}
	return spec[:i], value, nil
}

// splitSpec splits FILE:NAME into the file and the name of its array,
// tensor or column, when FILE exists and FILE:NAME does not; else spec is
// the file.
func splitSpec(spec string) (path, name string) {
	i := strings.LastIndex(spec, ":")
	if i <= 0 {
		return spec, ""
	}
	if _, err := os.Stat(spec); err == nil {
		return spec, ""
	}
	if _, err := os.Stat(spec[:i]); err != nil {
		return spec, ""
	}
	return spec[:i], spec[i+1:]
}

// embeddingsArray is the name of an archive's embeddings: "embeddings",
// a bundle's "anchors", or the only two-dimensional floating-point array;
// "" when none is.
func embeddingsArray(arr map[string]bundle.Array) string {
	for _, n := range []string{"embeddings", "anchors"} {
		if _, ok := arr[n]; ok {
			return n
		}
	}
	var only []string
	for n, a := range arr {
		if a.F32 != nil && len(a.Shape) == 2 {
			only = append(only, n)
		}
	}
	if len(only) == 1 {
		return only[0]
	}
	return ""
}

// arrayList lists an archive's arrays for a message: "emb float32 (3, 4),
// ids <U5 (3,)", sorted by name.
func arrayList(arr map[string]bundle.Array) string {
	if len(arr) == 0 {
		return "none"
	}
	var s []string
	for _, n := range slices.Sorted(maps.Keys(arr)) {
		s = append(s, fmt.Sprintf("%s %s %s", n, arr[n].Kind(), bundle.FormatShape(arr[n].Shape)))
	}
	return strings.Join(s, ", ")
}

// readSafetensors reads the tensors of a .safetensors file that a
// collection takes, by the names of an .npz's arrays (and the tensor
// named, if any); a lone tensor is the embeddings.
func readSafetensors(path, named, ids string) (map[string]bundle.Array, error) {
	st, err := bundle.OpenSafetensors(path)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	names := st.Names()
	arr := map[string]bundle.Array{}
	for _, name := range names {
		as := name
		switch {
		case len(names) == 1 && named == "":
			as = "embeddings"
		case name != named && name != ids && !slices.Contains([]string{"embeddings", "anchors", "ids", "index"}, name):
			continue
		}
		if arr[as], err = st.Read(name); err != nil {
			return nil, err
		}
	}
	if named != "" && !slices.Contains(names, named) {
		return nil, fmt.Errorf("%s: no tensor %q; have %s", path, named, strings.Join(names, ", "))
	}
	return arr, nil
}

// Hit is an item inside the set: its id, its string id where the
// collection has them (Collection.Keys), its row in the collection (−1
// when the store has no row order, as a database table) and its score
// φ(anchor − item) (≤ the set's threshold).
type Hit struct {
	ID    int64   `json:"id"`
	Key   string  `json:"key,omitempty"`
	Row   int     `json:"row"`
	Score float64 `json:"score"`
}

// Centred returns the set and anchor a search scans with: for a set
// centred off its anchors (geometry.Shifted, score φ(x + c) of x = a − z),
// a copy of s with the inner geometry and the anchor moved by the shift,
// fl32(a + c), so that the inner family's filters, screens and transforms
// apply; otherwise s and anchor themselves. A hit's score is then φ of
// fl32(fl32(a + c) − z) where the set's own Scores take fl32(fl32(a − z)
// + c): the two differ in a coordinate's last float32 bit at most, which
// decides nothing but an item at the threshold to a relative 10⁻⁷.
func Centred(s *conformal.Set, anchor []float32) (*conformal.Set, []float32) {
	sh, ok := s.Geometry.(*geometry.Shifted)
	if !ok {
		return s, anchor
	}
	moved := make([]float32, len(anchor))
	for j, v := range anchor {
		moved[j] = v + sh.Shift[j]
	}
	t := *s
	t.Geometry = sh.Inner
	return &t, moved
}

// CheckQuery checks what every store checks before a search: s is
// calibrated, the anchor is finite, s, the anchor and the store (of
// dimension d) agree in dimension (errors matching
// conformal.ErrDimension), and, for a set calibrated on unit-norm
// embeddings, the anchor is of unit norm (conformal.Set.CheckNorms: a
// *conformal.NormError; a set around unit-norm anchors alone takes an
// item of its own norm as an anchor, which ccs retrieve -anchor-index
// searches around).
func CheckQuery(s *conformal.Set, anchor []float32, d int) error {
	if err := checkSet(s, d); err != nil {
		return err
	}
	return checkAnchor(s, anchor, d)
}

// checkAnchor is CheckQuery's checks of the anchor, for a set checkSet
// has taken: its dimension, finite coordinates and norm.
func checkAnchor(s *conformal.Set, anchor []float32, d int) error {
	if len(anchor) != d {
		return conformal.DimErrorf("anchor", []int{len(anchor)}, d, "retrieve: anchor of dimension %d, the set has %d", len(anchor), d)
	}
	for j, v := range anchor {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("retrieve: anchor coordinate %d is %v", j, v)
		}
	}
	if err := s.CheckNorms(anchor); err != nil {
		return fmt.Errorf("retrieve: the anchor: %w", err)
	}
	return nil
}

// checkSet is CheckQuery's checks of the set against a store of dimension
// d, before any anchor's: s is calibrated, of one threshold, and of the
// store's dimension.
func checkSet(s *conformal.Set, d int) error {
	if s == nil {
		return errors.New("retrieve: no set (nil)")
	}
	if !s.Calibrated() {
		return conformal.ErrNotCalibrated
	}
	if err := s.OneThreshold(); err != nil {
		return err
	}
	if sd := s.Geometry.Dim(); sd != d {
		return conformal.DimensionErrorf("retrieve: the set has dimension %d, the collection %d", sd, d)
	}
	return nil
}

// chunk is the number of items a task scores; block the rows filtered, and
// whose differences are held, at a time.
const (
	chunk = 8192
	block = 256
	ahead = 8 // rows the screen keeps asked for ahead of their filter
)

// scratch is a task's buffers: a block's differences, scores, filter
// decisions and filtered sums, and the rows kept. Tasks take them from a
// pool (a query over 10⁶ items has 123 tasks; allocating each one's made
// 17 MB of garbage a query).
type scratch struct {
	diffs            []float32
	scores, filtered []float64
	kept             []bool
	rows             []int
	masks            []uint16 // the half screen's, a chunk's
	cand             []int    // the rows the screen keeps
	// held are the rows inside a scan holds back with their bounds' lows
	// and highs (ups: the highs in order).
	held             []int
	lows, highs, ups []float64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (s *scratch) size(d int) (diffs []float32, scores []float64, kept []bool, filtered []float64) {
	if len(s.diffs) != block*d {
		s.diffs = make([]float32, block*d)
	}
	if s.scores == nil {
		s.scores, s.filtered, s.kept, s.rows = make([]float64, block), make([]float64, block), make([]bool, block), make([]int, 0, block)
	}
	return s.diffs, s.scores, s.kept, s.filtered
}

// errNoCollection refuses a nil collection.
var errNoCollection = errors.New("retrieve: no collection (nil)")

// Search returns the items of c inside s around anchor, nearest (lowest
// score) first, ties by id and then row, at most limit of them (limit ≤ 0:
// all), and how many are inside in all. It scans every item on all cores
// and stops early, returning ctx's error, when ctx is done.
func Search(ctx context.Context, s *conformal.Set, anchor []float32, c *Collection, limit int) ([]Hit, int, error) {
	if c == nil {
		return nil, 0, errNoCollection
	}
	if err := CheckQuery(s, anchor, c.D); err != nil {
		return nil, 0, err
	}
	nc := parallel.Chunks(c.N, chunk)
	parts, counts := make([][]Hit, nc), make([]int, nc)
	// A screen of the half-precision copy and a filter rule most items out
	// fast (bounds that pass the threshold, with margins for their
	// rounding); the items they keep are scored exactly, a block at a time,
	// so the hits are those of an exact scan (with a limit, on a
	// transformed collection, but those its bounds show to be inside and
	// farther than limit others).
	pr := c.probe(s, anchor)
	parallel.For(c.N, chunk, 0, func(ci, lo, hi int) {
		if ctx.Err() != nil {
			return
		}
		parts[ci], counts[ci] = c.scan(&pr, lo, hi, limit, false, nil)
	})
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	hits := sorted(parts, limit)
	total := 0
	for _, n := range counts {
		total += n
	}
	return hits, total, nil
}

// sorted joins parts' hits, nearest first (nearer), and keeps at most
// limit of them (≤ 0: all), in an array of their own: a slice of the
// joined array would keep every hit's memory for as long as the limit's
// are held.
func sorted(parts [][]Hit, limit int) (hits []Hit) {
	for _, p := range parts {
		hits = append(hits, p...)
	}
	slices.SortFunc(hits, nearer)
	if limit > 0 && len(hits) > limit {
		hits = slices.Clone(hits[:limit])
	}
	return hits
}

// nearer orders hits nearest (lowest score) first, ties by id and then
// row.
func nearer(a, b Hit) int {
	return cmp.Or(cmp.Compare(a.Score, b.Score), cmp.Compare(a.ID, b.ID), cmp.Compare(a.Row, b.Row))
}

// batchChunk is the rows SearchBatch scores for every anchor in turn
// while they are in cache: 512 rows of d = 512 are 512 KB of half
// floats.
const batchChunk = 512

// batchGroup is the chunks SearchBatch scans before it keeps each
// anchor's nearest limit hits of them: 64 chunks of 512 rows.
const batchGroup = 64

// batchProbeBytes bounds the memory of the probes a batch holds at once.
// A generalized ball's probe holds a table of 512 bytes a coordinate
// (kernel.ByteRows' screen by table), 1 MiB at d = 2048: 3 328 anchors at
// once held 3.3 GB of tables (4.9 GB at the peak, for a gallery of 133 MB).
const batchProbeBytes = 256 << 20

// anchors is how many anchors batch probes at once: batchProbeBytes of
// generalized-ball tables (256 at d = 2048, 4 096 at d = 128), at least
// one.
func (c *Collection) anchors() int {
	if c.anchorBlock > 0 {
		return c.anchorBlock
	}
	return max(1, batchProbeBytes/(512*max(1, c.D)))
}

// SearchBatch is Search for each of the m anchors (rows of c.D in
// anchors), with the same hits and totals, in a pass over the collection
// that scores a chunk of it for every anchor in turn while the chunk is
// in cache (m Searches read the whole collection m times: 400 000 × 512
// half floats are 400 MB a query) — a pass for each block of anchors
// whose probes fit batchProbeBytes (256 anchors at d = 2048). It makes the collection's compact copy
// for s first (PrepareHalf or PrepareBytes, as the second Search would).
// progress, if not nil, is told the chunks done of all, from any
// goroutine. It stops early, returning ctx's error, when ctx is done.
func SearchBatch(ctx context.Context, s *conformal.Set, anchors []float32, c *Collection, limit int, progress func(done, total int)) (hits [][]Hit, totals []int, err error) {
	hits, totals, _, err = SearchBatchLabels(ctx, s, anchors, c, limit, nil, progress)
	return hits, totals, err
}

// SearchBatchLabels is SearchBatch that also counts each anchor's hits by
// their rows' labels (row r's is labels[r]): all of them, not only the
// nearest limit it returns, while holding no more hits than SearchBatch
// (a batch of 20 000 anchors' nearest 5 among sets of 2 000 items each
// held every hit, 6.8 GB against 0.5 GB, to count them). counts[i] maps
// a label to the number of anchor i's hits with it; nil without labels.
func SearchBatchLabels(ctx context.Context, s *conformal.Set, anchors []float32, c *Collection, limit int, labels []int32, progress func(done, total int)) (hits [][]Hit, totals []int, counts []map[int32]int, err error) {
	if c == nil {
		return nil, nil, nil, errNoCollection
	}
	if labels != nil && len(labels) != c.N {
		return nil, nil, nil, fmt.Errorf("retrieve: %d labels for the %d rows of the collection", len(labels), c.N)
	}
	parts, totals, counts, err := c.batch(ctx, s, anchors, nil, false, limit, labels, progress)
	if err != nil {
		return nil, nil, nil, err
	}
	m, nc := len(anchors)/c.D, parallel.Chunks(c.N, batchChunk)
	hits = make([][]Hit, m)
	for i := range m {
		hits[i] = sorted(parts[i*nc:(i+1)*nc], limit)
	}
	return hits, totals, counts, nil
}

// CountBatch is SearchBatch's totals alone: how many items of c are inside
// s around each of the anchors. An item that a transformed collection's
// bound (Transform) puts inside by more than its rounding could move it is
// counted without its exact score, which for a single-norm, an ellipsoid or
// a set behind a head is O(d²): the counts are SearchBatch's, in O(d) an item where the sets
// hold most of the collection.
func CountBatch(ctx context.Context, s *conformal.Set, anchors []float32, c *Collection, progress func(done, total int)) ([]int, error) {
	_, counts, _, err := c.batch(ctx, s, anchors, nil, true, 0, nil, progress)
	return counts, err
}

// CountWithin is CountBatch with a threshold of each anchor's own: how
// many items of c score at most thresholds[i] around anchor i by s's
// geometry (s's own threshold is not used). c's transform for s
// (Transform) serves every anchor, so a certified top-k's ranks
// (eval.TopKBaseline: how many items are nearer an anchor than its
// positive) take one pass over the collection, in O(d) an item for an
// ellipsoid, not one O(d²) scan a positive. s may be class-conditional,
// its thresholds unused too: the set sizes of its anchors at each one's
// class's threshold (eval.AnchorSizes), on its own transform.
func CountWithin(ctx context.Context, s *conformal.Set, anchors []float32, thresholds []float64, c *Collection, progress func(done, total int)) ([]int, error) {
	if c == nil {
		return nil, errNoCollection
	}
	if thresholds == nil {
		thresholds = []float64{} // no anchors: still not s's own threshold (batch)
	}
	if err := checkSet(batchSet(s, thresholds), c.D); err != nil { // as batch: the set and the collection first
		return nil, err
	}
	if c.D < 1 || len(anchors) != len(thresholds)*c.D {
		return nil, conformal.DimensionErrorf("retrieve: %d anchor values for %d thresholds of dimension %d", len(anchors), len(thresholds), c.D)
	}
	for i, q := range thresholds {
		if math.IsNaN(q) {
			return nil, fmt.Errorf("retrieve: threshold %d is NaN", i)
		}
	}
	_, counts, _, err := c.batch(ctx, s, anchors, thresholds, true, 0, nil, progress)
	return counts, err
}

// batchSet is the set batch checks its anchors against: s, or with
// thresholds (CountWithin's, one an anchor) a class-conditional s over
// all its classes.
func batchSet(s *conformal.Set, thresholds []float64) *conformal.Set {
	if s != nil && thresholds != nil && s.ClassConditional() {
		return s.OverAllClasses()
	}
	return s
}

// batch searches c around each of anchors a chunk of batchChunk items at
// a time for every anchor in turn: the hits of anchor i in chunk ci in
// parts[i·chunks + ci], the nearest limit of them where limit > 0 (the
// nearest limit of all are among those), unless counting; and the number
// inside around each anchor; with labels (row r's labels[r]), each
// anchor's hits counted by label, every hit before limit cuts them.
// With thresholds (nil: s's), anchor i's set takes thresholds[i].
func (c *Collection) batch(ctx context.Context, s *conformal.Set, anchors []float32, thresholds []float64, count bool, limit int, labels []int32, progress func(done, total int)) (parts [][]Hit, counts []int, byLabel []map[int32]int, err error) {
	if c == nil {
		return nil, nil, nil, errNoCollection
	}
	d := c.D
	check := batchSet(s, thresholds)
	// The set against the collection first, as Search checks them: the
	// anchors' length is then checked against a dimension both share.
	if err := checkSet(check, d); err != nil {
		return nil, nil, nil, err
	}
	if d < 1 || len(anchors)%d != 0 {
		return nil, nil, nil, conformal.DimensionErrorf("retrieve: %d anchor values are not rows of dimension %d", len(anchors), d)
	}
	m := len(anchors) / d
	for i := range m { // the set checked above, once
		if err := checkAnchor(check, anchors[i*d:(i+1)*d], d); err != nil {
			if ne := (*conformal.NormError)(nil); errors.As(err, &ne) {
				at := *ne // the anchor's row of the batch, not of its one row
				at.Row = i
				return nil, nil, nil, fmt.Errorf("anchor %d: retrieve: the anchor: %w", i, &at)
			}
			return nil, nil, nil, fmt.Errorf("anchor %d: %w", i, err)
		}
	}
	if m > 1 {
		if err := c.prepareFor(ctx, s); err != nil {
			return nil, nil, nil, err
		}
	}
	nc := parallel.Chunks(c.N, batchChunk)
	chunkCounts := make([]int, m*nc)
	if !count {
		parts = make([][]Hit, m*nc)
	}
	var mu []sync.Mutex // byLabel[i]'s, written by its chunks in parallel
	if labels != nil && !count {
		byLabel, mu = make([]map[int32]int, m), make([]sync.Mutex, m)
		for i := range byLabel {
			byLabel[i] = map[int32]int{}
		}
	}
	var done atomic.Int64
	// The anchors a block at a time, so that their probes' tables are
	// bounded (anchors); each block scans the collection once.
	block := c.anchors()
	blocks := (m + block - 1) / block
	for a0 := 0; a0 < m; a0 += block {
		a1 := min(m, a0+block)
		prs := make([]probe, a1-a0)
		// The probes on all cores, looking at ctx a chunk at a time: a
		// generalized ball's is a byte table an anchor, and a block's
		// (16 384 anchors at d = 32) took seconds on one core, a cancel
		// waiting for them all.
		parallel.For(len(prs), probeChunk, 0, func(_, lo, hi int) {
			if ctx.Err() != nil {
				return
			}
			for i := lo; i < hi; i++ {
				a := anchors[(a0+i)*d : (a0+i+1)*d]
				if thresholds != nil {
					prs[i] = c.probeAt(s, thresholds[a0+i], a)
				} else {
					prs[i] = c.probe(s, a)
				}
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		if err := c.batchBlock(ctx, prs, a0, nc, count, limit, parts, chunkCounts, labels, byLabel, mu, &done, blocks*nc, progress); err != nil {
			return nil, nil, nil, err
		}
	}
	counts = make([]int, m)
	for i := range counts {
		for _, n := range chunkCounts[i*nc : (i+1)*nc] {
			counts[i] += n
		}
	}
	return parts, counts, byLabel, nil
}

// probeChunk is the anchors whose probes a parallel chunk of a batch
// prepares.
const probeChunk = 64

// prepareFor makes the compact copy a batch with s scans (PrepareBytes or
// PrepareHalf), waiting for it while ctx is not done: a batch cancelled
// meanwhile returns ctx's error at once (a trial's 1.5 M × 96 collection
// took 1.2–3 s to copy, past a service's deadline), and the copy goes on
// for the next batch.
func (c *Collection) prepareFor(ctx context.Context, s *conformal.Set) error {
	var prepare func() int64
	switch s.Geometry.(type) {
	case geometry.ByteScreener:
		prepare = c.PrepareBytes
	case geometry.HalfScreener:
		prepare = c.PrepareHalf
	default:
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	made := make(chan struct{})
	go func() {
		prepare()
		close(made)
	}()
	select {
	case <-made:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// batchBlock is batch's pass over the collection for the anchors a0… of
// prs (their probes): it fills their parts and chunkCounts, and with
// labels their byLabel counts (each under its mu), and tells progress
// each chunk done of total.
func (c *Collection) batchBlock(ctx context.Context, prs []probe, a0, nc int, count bool, limit int, parts [][]Hit, chunkCounts []int,
	labels []int32, byLabel []map[int32]int, mu []sync.Mutex, done *atomic.Int64, total int, progress func(done, total int)) error {
	// The chunks a group at a time: after each group, an anchor's nearest
	// limit of its hits so far are kept in its first part, so that the
	// hits held are bounded by a group's, not the collection's (1 000
	// anchors' nearest 10 around sets of 8 000 items each held the
	// chunks' nearest 10, nearly every hit, 190 MB).
	group := cmp.Or(c.batchGroup, batchGroup)
	for g0 := 0; g0 < nc; g0 += group {
		g1 := min(nc, g0+group)
		base := g0 * batchChunk
		parallel.For(min(c.N, g1*batchChunk)-base, batchChunk, 0, func(cj, lo, hi int) {
			if ctx.Err() != nil {
				return
			}
			ci, lo, hi := g0+cj, base+lo, base+hi
			for i := range prs {
				// A chunk for a block of a thousand anchors can take seconds
				// (a projection head's set: every row through W for each
				// anchor): Ctrl-C is looked for between anchors too.
				if i%16 == 15 && ctx.Err() != nil {
					return
				}
				k := (a0+i)*nc + ci
				if count {
					_, chunkCounts[k] = c.scan(&prs[i], lo, hi, 0, true, nil)
					continue
				}
				var part []Hit
				var n int
				if byLabel != nil {
					// Every hit, to count; then the nearest limit kept.
					part, n = c.scan(&prs[i], lo, hi, 0, false, nil)
					mu[a0+i].Lock()
					for _, h := range part {
						byLabel[a0+i][labels[h.Row]]++
					}
					mu[a0+i].Unlock()
				} else {
					part, n = c.scan(&prs[i], lo, hi, limit, false, nil)
				}
				if limit > 0 && len(part) > limit {
					// Only the nearest limit can be among the anchor's
					// nearest: m sets holding most of a large collection
					// would otherwise be held whole until sorted.
					slices.SortFunc(part, nearer)
					part = slices.Clone(part[:limit]) // not the whole chunk's array
				}
				parts[k], chunkCounts[k] = part, n
			}
			if progress != nil {
				progress(int(done.Add(1)), total)
			}
		})
		if err := ctx.Err(); err != nil {
			return err
		}
		if count || limit <= 0 {
			continue
		}
		// Each anchor's nearest limit so far, in its first part; the
		// group's other parts freed.
		parallel.For(len(prs), 64, 0, func(_, i0, i1 int) {
			for i := a0 + i0; i < a0+i1; i++ {
				ps := parts[i*nc : (i+1)*nc]
				ps[0] = sorted(append([][]Hit{ps[0]}, ps[max(g0, 1):g1]...), limit)
				clear(ps[max(g0, 1):g1])
			}
		})
	}
	return nil
}

// probe is a search around one anchor: the set and the anchor as scanned
// (Centred) and c.filter's quick tests of its rows.
type probe struct {
	s      *conformal.Set
	anchor []float32
	keep   func(lo, hi int, keep []bool, scratch []float64)
	screen func(b0 int, masks []uint16)
	// bounds, where not nil, bounds the exact score of row r, which keep
	// kept leaving v in its scratch (ok false: no bounds).
	bounds func(r int, v float64) (lo, hi float64, ok bool)
}

// probe prepares a search of c with s around anchor.
func (c *Collection) probe(s0 *conformal.Set, anchor []float32) probe {
	return c.probeWith(s0, s0, anchor)
}

// probeAt is probe with threshold q instead of s0's, and c's transform
// for s0 (CountWithin).
func (c *Collection) probeAt(s0 *conformal.Set, q float64, anchor []float32) probe {
	t := *s0
	t.Threshold = q
	return c.probeWith(s0, &t, anchor)
}

// probeWith prepares a search with t (s0, or s0 at another threshold),
// filtered by c's transform for s0.
func (c *Collection) probeWith(s0, t *conformal.Set, anchor []float32) probe {
	s, a := Centred(t, anchor)
	pr := probe{s: s, anchor: a}
	pr.keep, pr.screen, pr.bounds = c.filter(s0, s, a)
	return pr
}

// scan appends to hits the items of rows lo…hi−1 of c (lo a multiple of
// kernel.HalfBlock) inside pr's set around its anchor, and returns how
// many there are: the screen and the filter of c.filter first, then the
// exact score, a block at a time. Where pr has bounds, two kinds of item
// inside are counted without their exact score (O(d²) for a single-norm
// or an ellipsoid): counting, every item whose upper bound is at most the
// threshold (nothing is appended); with a limit, those of them whose
// lower bound exceeds the limit-th smallest upper bound of such items,
// which are then not among the chunk's nearest limit, nor so among the
// whole collection's (hits then holds all of the chunk's nearest limit,
// not all its items inside).
func (c *Collection) scan(pr *probe, lo, hi, limit int, count bool, hits []Hit) ([]Hit, int) {
	s, anchor, keep, screen, bounds := pr.s, pr.anchor, pr.keep, pr.screen, pr.bounds
	d, q := c.D, s.Threshold
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	diffs, scores, kept, filtered := sc.size(d)
	rows := sc.rows[:0]
	found := 0
	flush := func() {
		n := len(rows)
		for i, v := range s.Geometry.Scores(scores[:n], diffs[:n*d]) {
			if v <= q {
				found++
				if count {
					continue
				}
				h := Hit{ID: c.IDs[rows[i]], Row: rows[i], Score: v}
				if c.Keys != nil {
					h.Key = c.Keys[rows[i]]
				}
				hits = append(hits, h)
			}
		}
		rows = rows[:0]
	}
	add := func(r int) { // row r for the exact score
		kernel.Sub(diffs[len(rows)*d:(len(rows)+1)*d], anchor, c.Rows[r*d:(r+1)*d])
		if rows = append(rows, r); len(rows) == block {
			flush()
		}
	}
	// A row keep kept with v: counted, held back until the chunk's bounds
	// are known (with a limit), or scored.
	held, lows, highs := sc.held[:0], sc.lows[:0], sc.highs[:0]
	hold := bounds != nil && !count && limit > 0
	consider := func(r int, v float64) {
		if bounds != nil && count {
			if _, up, ok := bounds(r, v); ok && up <= q {
				found++
				return
			}
		}
		if hold {
			if low, up, ok := bounds(r, v); ok && up <= q {
				held, lows, highs = append(held, r), append(lows, low), append(highs, up)
				return
			}
		}
		add(r)
	}
	switch {
	case screen != nil:
		// The half floats first, the whole chunk (lo is a multiple of
		// the chunk); then the rows they keep, found from the masks'
		// set bits (most masks are 0), each asked for from memory
		// ahead rows before it is read (they lie apart: read one at
		// a time, each waited on the memory), then the filter and the
		// exact score for those.
		nb := (hi - lo + kernel.HalfBlock - 1) / kernel.HalfBlock
		masks := slices.Grow(sc.masks[:0], nb)[:nb]
		sc.masks = masks
		screen(lo/kernel.HalfBlock, masks)
		cand := sc.cand[:0]
		for k, m := range masks {
			for ; m != 0; m &= m - 1 {
				r := lo + k*kernel.HalfBlock + bits.TrailingZeros16(m)
				if r >= hi {
					break // the last block's padding
				}
				cand = append(cand, r)
			}
		}
		sc.cand = cand
		for _, r := range cand[:min(ahead, len(cand))] {
			kernel.Prefetch(c.Rows[r*d : (r+1)*d])
		}
		for i, r := range cand {
			if i+ahead < len(cand) {
				r := cand[i+ahead]
				kernel.Prefetch(c.Rows[r*d : (r+1)*d])
			}
			if keep == nil {
				add(r)
				continue
			}
			if keep(r, r+1, kept[:1], filtered[:1]); kept[0] {
				consider(r, filtered[0])
			}
		}
	case keep != nil:
		for b0 := lo; b0 < hi; b0 += block {
			b1 := min(hi, b0+block)
			keep(b0, b1, kept[:b1-b0], filtered[:b1-b0])
			for r := b0; r < b1; r++ {
				if kept[r-b0] {
					consider(r, filtered[r-b0])
				}
			}
		}
	default:
		for r := lo; r < hi; r++ {
			add(r)
		}
	}
	if len(held) > 0 {
		// The limit-th smallest upper bound: limit items inside score at
		// most that; an item whose lower bound exceeds it is farther than
		// all of them.
		cut := math.Inf(1)
		if len(held) >= limit {
			ups := append(sc.ups[:0], highs...)
			slices.Sort(ups)
			cut, sc.ups = ups[limit-1], ups
		}
		for i, r := range held {
			if lows[i] > cut {
				found++
			} else {
				add(r)
			}
		}
	}
	if len(rows) > 0 {
		flush()
	}
	sc.rows, sc.held, sc.lows, sc.highs = rows, held, lows, highs
	return hits, found
}

// filter returns a quick test of the rows lo…hi−1 of c that sets keep[i]
// false where row lo+i is certainly outside s around anchor (scratch: one
// float64 per row), or nil where there is none: for a single-norm set
// (geometry.LinearNorm) or an ellipsoid once c is transformed for it
// (Transform), the fast p-th power kernel on M·anchor − M·item; for a geometry that filters rows
// itself (geometry.Filterer: the ℓ2 ball, the generalized ball), its
// filter. And, where there is one, the screen that runs before it on the
// half-precision copy (of the rows, or of the transformed rows):
// screen(b0, masks) writes the masks of the copy's blocks b0 … (each of
// kernel.HalfBlock rows; a clear bit rules its row out), and only the rows
// it keeps go on to keep. For a transformed collection, bounds bounds the
// exact score of the rows keep kept (probe.bounds); otherwise it is nil.
// s is the set scanned (Centred), s0 the set as the caller gave it, by
// whose geometry c keeps its transforms.
func (c *Collection) filter(s0, s *conformal.Set, anchor []float32) (keep func(lo, hi int, keep []bool, scratch []float64), screen func(b0 int, masks []uint16), bounds func(r int, v float64) (lo, hi float64, ok bool)) {
	q, d := s.Threshold, c.D
	if t := c.transformFor(s0, s); t != nil {
		return t.filter(q, anchor)
	}
	if bs, ok := s.Geometry.(geometry.ByteScreener); ok {
		if by := c.bytes.get(c.copies(), c.newBytes); by != nil {
			screen = bs.ScreenBytes(anchor, q, by)
		}
	} else if hs, ok := s.Geometry.(geometry.HalfScreener); ok {
		if half := c.half.get(c.copies(), c.newHalf); half != nil {
			screen = hs.ScreenHalf(anchor, q, half)
		}
	}
	if f, ok := s.Geometry.(geometry.Filterer); ok {
		if rows := f.Filter(anchor, q); rows != nil {
			keep = func(lo, hi int, keep []bool, sc []float64) { rows(c.Rows[lo*d:hi*d], keep, sc) }
		}
	}
	return keep, screen, nil
}
