package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/jsonfloat"
	"github.com/ccsets/ccs/internal/jsonindent"
	"github.com/ccsets/ccs/retrieve"
)

// retrieveOptions are ccs retrieve's inputs.
type retrieveOptions struct {
	Set, DB     string // files
	IDs         string // the collection's string ids, in row order
	Labels      string // the collection's labels (classes, families), in row order
	LabelNames  string // the names of a multi-hot -labels matrix's columns
	AnchorIndex int    // the collection's row as the anchor; −1: none
	Anchor      string // the anchor's .npy file
	Limit       int    // hits printed, nearest first; 0: all
	JSON        bool
	// A class-conditional set's class: -label for every anchor,
	// -anchor-labels one a row of -anchor, or -unlabeled marginal for
	// none (the threshold over all classes).
	Label, AnchorLabels, Unlabeled string
	// anchorIndexSet says -anchor-index was given (-1 too).
	anchorIndexSet bool
}

func retrieveCommand() *command {
	return newCommand("retrieve", "-set SET.json -db FILE|clickhouse://HOST:PORT/DB.TABLE (-anchor-index I | -anchor FILE) [-label L | -anchor-labels FILE | -unlabeled marginal] [-ids FILE] [-labels FILE [-label-names FILE]] [-limit N] [-json]",
		"list the collection items inside a fitted set around an anchor, or around each of m anchors (retrieval with expected recall ≥ 1−α)",
		func(fs *flag.FlagSet, o *retrieveOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "calibrated set `file` (.json)")
			fs.StringVar(&o.DB, "db", "", "the collection: a `file` (.npz, .npy, .safetensors, .parquet, .arrow, a Hugging Face dataset's directory, or a text table or JSON lines as -embeddings of ccs bundle reads them, FILE?ids=COLUMN for its ids) or a ClickHouse table, clickhouse://[user[:password]@]host:port/database.table[?timeout=60s] (see docs/scale.md)")
			fs.IntVar(&o.AnchorIndex, "anchor-index", -1, "use the collection file's row `I` as the anchor")
			fs.StringVar(&o.Anchor, "anchor", "", "the anchor's embedding, shape (d,), or m anchors' rows, shape (m, d), answered each in turn: a `file` ccs bundle's -embeddings reads (.npy, .npz FILE:ARRAY, .safetensors, .parquet, a text table, JSON lines), any floating-point dtype")
			fs.StringVar(&o.IDs, "ids", "", "the collection file's ids, in row order, printed for its hits: `FILE` .txt (one per line), .npy/.npz (FILE:ARRAY) of strings or integers, or .parquet (FILE:COLUMN) — as ccs bundle's -ids (a collection .npz's \"ids\" or a Parquet \"id\" column of strings need none)")
			fs.StringVar(&o.LabelNames, "label-names", "", "a `FILE` of the names of a multi-hot -labels matrix's columns, in their order, as ccs bundle's -label-names reads them (mlb.classes_: .txt one a line, .npy/.npz, .parquet): the hits' labels and the counts by name")
			fs.StringVar(&o.Labels, "labels", "", "the collection file's labels (classes, families), in row order, as ccs bundle's -labels reads them (`FILE`: .txt, .npy, .npz FILE:ARRAY, .csv/.parquet FILE:COLUMN): each hit's is printed, and how many of the set's items each label has — all of them, not only the -limit printed")
			fs.StringVar(&o.Label, "label", "", "a class-conditional set's class of the anchor (every anchor of -anchor's): its integer `label`, or its class's name for a set calibrated on string labels (a query's language); the set around it is that class's threshold's")
			fs.StringVar(&o.AnchorLabels, "anchor-labels", "", "a class-conditional set's class of each of -anchor's m anchors, in row order, as ccs bundle's -labels reads labels (`FILE`: .txt, .npy, .npz FILE:ARRAY, .csv/.parquet FILE:COLUMN; integer labels, or strings naming the set's classes — a Hugging Face ClassLabel column's by its names): each anchor's set is its class's threshold's; -anchor test.npz, a bundle (or an .npz of embeddings and labels), gives its own")
			fs.StringVar(&o.Unlabeled, "unlabeled", "error", "a class-conditional set without -label or -anchor-labels: error, or marginal (every anchor's set is the threshold over all classes', which has no class-conditional guarantee)")
			fs.IntVar(&o.Limit, "limit", 0, "print at most `N` hits, nearest first (0: all)")
			fs.BoolVar(&o.JSON, "json", false, "print JSON")
			return func() error {
				fs.Visit(func(f *flag.Flag) { o.anchorIndexSet = o.anchorIndexSet || f.Name == "anchor-index" })
				return nil
			}
		}, runRetrieve)
}

func runRetrieve(ctx context.Context, o retrieveOptions, out *output) error {
	if err := required("retrieve", "set", o.Set, "db", o.DB); err != nil {
		return err
	}
	if o.anchorIndexSet && o.AnchorIndex < 0 {
		return usagef("retrieve: -anchor-index %d: want a row number ≥ 0", o.AnchorIndex)
	}
	if (o.AnchorIndex >= 0) == (o.Anchor != "") {
		return usagef("retrieve: give one of -anchor-index and -anchor")
	}
	if o.Limit < 0 {
		return usagef("retrieve: -limit %d: want ≥ 0", o.Limit)
	}
	if o.IDs != "" && retrieve.IsURL(o.DB) {
		return usagef("retrieve: -ids names a collection file's rows; a database table has its own ids")
	}
	if o.LabelNames != "" && o.Labels == "" {
		return usagef("retrieve: -label-names %s names the columns of a multi-hot -labels matrix: give it with -labels", o.LabelNames)
	}
	if o.Labels != "" && retrieve.IsURL(o.DB) {
		return usagef("retrieve: -labels names a collection file's rows; a database table's rows are not in a file's order")
	}
	if o.Unlabeled != "" && o.Unlabeled != "error" && o.Unlabeled != "marginal" { // "": as error
		return usagef("retrieve: -unlabeled %q: want error or marginal", o.Unlabeled)
	}
	if o.Label != "" && o.AnchorLabels != "" {
		return usagef("retrieve: -label gives every anchor one class, -anchor-labels each its own: give one of them")
	}
	if o.AnchorLabels != "" && o.Anchor == "" {
		return usagef("retrieve: -anchor-labels labels -anchor's rows; the collection's row of -anchor-index is one anchor: give its class with -label")
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	// A class-conditional set's anchors from a bundle (or an .npz of
	// embeddings and labels): the labels beside them are their classes,
	// as -anchor-labels FILE:labels would give them.
	path, name := bundle.SplitInput(o.Anchor)
	beside := set.ClassConditional() && (name == "" || name == "anchors" || name == "embeddings") && npzHas(path, "labels")
	switch {
	case beside && o.Label == "" && o.AnchorLabels == "" && o.Unlabeled != "marginal":
		o.AnchorLabels = path + ":labels"
		fmt.Fprintf(out.stderr, "note: -anchor-labels %s: each anchor's class, beside the anchors\n", o.AnchorLabels)
	case beside && o.Label != "":
		fmt.Fprintf(out.stderr, "note: -label %s: every anchor's class, whatever %s's labels say (-anchor-labels %s:labels takes each anchor's own)\n", o.Label, path, path)
	}
	// The set of one threshold each anchor is searched with: a class's
	// (-label, -anchor-labels) for a class-conditional set; before opening
	// the database.
	one, classWarning, err := retrieveClass(o, set)
	if err != nil {
		return err
	}
	store, err := retrieve.Open(ctx, o.DB)
	if err != nil {
		return err
	}
	defer store.Close()
	noteStore(out, o.DB, store)
	n, err := store.Len(ctx)
	if err != nil {
		return err
	}
	if o.IDs != "" {
		c, ok := store.(*retrieve.Collection)
		if !ok { // a store of another kind, registered by URL
			return usagef("retrieve: -ids names a collection file's rows; %s has its own ids", o.DB)
		}
		ids, err := readIDStrings(o.IDs, "ids", n, store.Dim())
		if err != nil {
			return err
		}
		// Distinct ids, sorted, from 0 to n−1: the row numbers, no ids of
		// the file's own.
		rowNumbers := len(c.IDs) > 0 && slices.IsSorted(c.IDs) && c.IDs[0] == 0 && c.IDs[len(c.IDs)-1] == int64(len(c.IDs)-1)
		own := c.Keys != nil || !rowNumbers
		if _, err := bundle.NewPairIDs(nil, ids); err != nil { // a repeat, said with its lines and the way out, as ccs bundle says it
			return fmt.Errorf("%s: %w", o.IDs, err)
		}
		if err := c.SetKeys(ids); err != nil {
			return fmt.Errorf("%s: %w", o.IDs, err)
		}
		if own { // the file's own ids: a row's id is -ids', said once
			fmt.Fprintf(out.stderr, "note: -ids %s: the hits' ids, in place of the ids %s holds\n", o.IDs, o.DB)
		}
	}
	if err := set.CheckDim(o.DB, n, store.Dim()); err != nil {
		return err
	}
	var labels []string // each row's label, with -labels
	var several labelSets
	if o.Labels != "" {
		if labels, several, err = readRowLabels(o.Labels, o.LabelNames, n, o.DB); err != nil {
			return err
		}
	}
	// With -labels every hit is counted by its label: a batch's pass over
	// a collection counts them as it goes, keeping the nearest -limit; a
	// search of one anchor at a time keeps them all, then cuts them to
	// -limit (labelled) before the next.
	var codes []int32     // each row's label's number, with -labels
	var distinct []string // the labels codes number
	if labels != nil {
		codes, distinct = labelNumbers(labels)
	}
	var q anchors
	if o.AnchorIndex >= 0 {
		c, ok := store.(retrieve.RowReader)
		if !ok {
			return usagef("retrieve: -anchor-index needs a collection file; give a database query's anchor with -anchor")
		}
		switch { // a row the collection does not have: the flag's value out of its range
		case n == 0:
			return usagef("retrieve: -anchor-index %d: %s: the collection has no rows", o.AnchorIndex, o.DB)
		case o.AnchorIndex >= n:
			return usagef("retrieve: -anchor-index %d: %s: the collection has %d rows (0 to %d)", o.AnchorIndex, o.DB, n, n-1)
		}
		row, err := c.Row(o.AnchorIndex)
		if err != nil {
			return fmt.Errorf("%s: -anchor-index: %w", o.DB, err)
		}
		q = anchors{rows: row, m: 1, d: len(row), src: fmt.Sprintf("%s: row %d", o.DB, o.AnchorIndex)}
	} else if q, err = readAnchors(o.Anchor, set); err != nil {
		return err
	}
	if q.conv != "" {
		fmt.Fprintf(out.stderr, "note: %s: converted on reading: %s\n", q.src, q.conv)
	}
	var sets []*conformal.Set // each anchor's
	if one == nil {
		if sets, err = anchorSets(out, set, o.AnchorLabels, q.m, q.src); err != nil {
			return err
		}
	} else {
		sets = slices.Repeat([]*conformal.Set{one}, q.m)
	}
	check := set.CheckAnchorNorms
	if o.AnchorIndex >= 0 {
		// A collection row: of the collection's norms, not the anchors'
		// (a set around users is wide around an item, as said below).
		check = set.CheckNorms
	}
	for i := range q.m {
		if err := check(q.row(i)); err != nil {
			return fmt.Errorf("%s: %s's %w", q.src, q.name(i), err)
		}
	}
	if c, ok := store.(*retrieve.Collection); ok && set.Calibration.UnitNorm {
		if w := retrieve.UnitNormWarning(o.DB, c); w != "" {
			out.warn(w)
		}
	}
	results := make([]retrieveResult, q.m)
	// A batch of thousands of anchors takes minutes over a large
	// collection (1 000 over 400 000 × 512: 48 s on 2 cores, 26 s in one
	// pass): its progress on stderr, once it has taken 10 seconds.
	prog := newProgress(out, false, "anchor")
	prog.lazy = true
	batchTransform(store, set, q.m)
	// The anchors of each set (one, or a class's with -anchor-labels), in
	// the order of their first anchor, are a batch of their own.
	for _, group := range bySet(sets) {
		s := sets[group[0]]
		c, ok := store.(*retrieve.Collection)
		if !ok || len(group) < 2 {
			continue
		}
		// A collection file: one pass, a chunk of it for every anchor
		// while it is in cache.
		prog.unit = "chunk"
		rows := q.rows
		if len(group) < q.m {
			rows = make([]float32, 0, len(group)*q.d)
			for _, i := range group {
				rows = append(rows, q.row(i)...)
			}
		}
		hits, totals, byLabel, err := retrieve.SearchBatchLabels(ctx, s, rows, c, o.Limit, codes, func(done, total int) { prog.step(done, total, "") })
		if err != nil {
			return fmt.Errorf("%s on %s: %s: %w", o.Set, o.DB, q.src, err)
		}
		for k, i := range group {
			if hits[k] == nil {
				hits[k] = []retrieve.Hit{}
			}
			results[i] = retrieveResult{Anchor: i, Total: totals[k], Hits: hits[k], Truncated: len(hits[k]) < totals[k]}
			if labels != nil {
				results[i].counted(byLabel[k], distinct, labels, several)
			}
		}
	}
	for i := range q.m {
		if results[i].Hits != nil {
			continue // answered in the batch's pass
		}
		limit := o.Limit
		if labels != nil {
			limit = 0 // every hit, to count
		}
		hits, total, err := store.Search(ctx, sets[i], q.row(i), limit)
		if err != nil {
			return fmt.Errorf("%s on %s: %s: %w", o.Set, o.DB, q.name(i), err)
		}
		if hits == nil {
			hits = []retrieve.Hit{}
		}
		results[i] = retrieveResult{Anchor: i, Total: total, Hits: hits, Truncated: len(hits) < total}
		if labels != nil {
			results[i].labelled(labels, several, o.Limit)
		}
		if q.m > 1 {
			prog.step(i+1, q.m, "")
		}
	}
	for i := range results {
		results[i].class(sets[i])
	}
	if err := printRetrieved(out, q, results, n, o.JSON); err != nil {
		return err
	}
	if classWarning != "" {
		out.warn(classWarning)
	}
	if w := wholeCollection(q, results, n); w != "" {
		out.warn(w)
	}
	if w := zeroAnchors(set, q, results, n); w != "" {
		out.warn(w)
	}
	for _, w := range setWarnings(sets) {
		out.warn(w)
	}
	return nil
}

// batchTransform transforms store, where it is a collection in memory, for
// a batch of m anchors searched with set or with sets sharing its geometry
// (a class-conditional set's ForClass sets, -anchor-labels' groups; its
// OverAllClasses, -unlabeled marginal's): a single-norm's, an ellipsoid's
// or a head's set's searches then scan it in O(d) a row, against O(d²),
// from as many
// anchors as the transform costs plain scans. The one transform is kept
// by the geometry, so every class's group searches it; it is made for set
// itself, as ccs serve makes it (a class's smaller threshold can have the
// transform take the float64 product, not float32's: 10⁵ × 384, 16
// anchors of -anchor-labels, 12.5–21.3 s in all against 5.5–8.5 s).
// Where it is refused (memory), the plain scan gives the same hits.
func batchTransform(store retrieve.Store, set *conformal.Set, m int) {
	if c, ok := store.(retrieve.Transformer); ok && m >= retrieve.TransformMin(set.Geometry) && retrieve.Transformable(set.Geometry) {
		_ = c.Transform(set, retrieveTransformBytes)
	}
}

// retrieveTransformMin is the batch from which ccs retrieve transforms
// the collection (a set behind a head's: retrieve.HeadTransformMin), and
// retrieveTransformBytes the memory it may take (retrieve.TransformMin,
// retrieve.BatchTransformBytes).
const (
	retrieveTransformMin   = retrieve.BatchTransformMin
	retrieveTransformBytes = retrieve.BatchTransformBytes
)

// anchors are ccs retrieve's queries: one anchor, from -anchor-index or a
// (d,) file, or a batch, an (m, d) file's rows.
type anchors struct {
	rows  []float32
	m, d  int
	batch bool   // an (m, d) file: answered as a list, each named by its row
	src   string // the file (and array), or the collection's row
	conv  string // how a text table or a Parquet column was read, for a note
}

func (q anchors) row(i int) []float32 { return q.rows[i*q.d : (i+1)*q.d] }

// name is anchor i as messages name it.
func (q anchors) name(i int) string {
	if q.batch {
		return fmt.Sprintf("anchor %d", i)
	}
	return "the anchor"
}

// readAnchors reads -anchor: one anchor, shape (d,), or m anchors, shape
// (m, d), of any floating-point dtype, from a file ccs bundle's
// -embeddings reads (a table's or JSON lines' rows: m anchors).
func readAnchors(arg string, set *conformal.Set) (anchors, error) {
	d := set.Geometry.Dim()
	path, name := bundle.SplitInput(arg)
	kind, err := inputKind(path)
	if err != nil {
		return anchors{}, err
	}
	if kind == ".parquet" || kind == ".txt" || kind == ".jsonl" {
		e, err := readEmbeddings(arg, false)
		if err != nil {
			return anchors{}, err
		}
		if err := set.CheckDim(e.Source, e.N, e.D); err != nil {
			return anchors{}, err
		}
		return anchors{rows: e.Rows, m: e.N, d: e.D, batch: true, src: e.Source, conv: e.conv}, nil
	}
	a, got, err := readArray(path, name, "anchors", "queries", "embeddings")
	if err != nil {
		return anchors{}, err
	}
	src := arraySource(path, kind, got)
	if err := set.CheckDim(src, a.Shape...); err != nil {
		return anchors{}, err
	}
	if a.F32 == nil || len(a.Shape) > 2 {
		return anchors{}, fmt.Errorf("%s: dtype %s, shape %s: want floating point, one anchor of shape (%d,) or m anchors of shape (m, %d)", src, a.Kind(), bundle.FormatShape(a.Shape), d, d)
	}
	batch := len(a.Shape) == 2
	if !batch {
		a.Shape = []int{1, d}
	}
	e, err := bundle.EmbeddingsOf(a, src, false)
	if err != nil {
		return anchors{}, err
	}
	return anchors{rows: e.Rows, m: e.N, d: e.D, batch: batch, src: src}, nil
}

// wholeCollection warns of anchors whose set holds 99% or more of a
// collection of 100 items or more: seldom an answer, often an anchor of
// another kind than the calibration's — a passage or an image where the
// set was calibrated around queries (-anchor-index takes a row of the
// collection) — or embeddings whose positives are no nearer to their
// anchors than the rest (a dot-product model's). An anchor whose set is
// the whole space (threshold +Inf) is not counted: the set's own warning
// says why it holds everything.
func wholeCollection(q anchors, results []retrieveResult, n int) string {
	full, every, least := 0, 0, n
	for _, r := range results {
		if r.set != nil && math.IsInf(r.set.Threshold, 1) {
			continue
		}
		if 100*r.Total >= 99*n {
			full++
			least = min(least, r.Total)
			if r.Total >= n {
				every++
			}
		}
	}
	if n < 100 || full == 0 {
		return ""
	}
	what := "every one" // what each of the full sets holds, the least of them
	switch {
	case every == full:
	case full == 1:
		what = fmt.Sprintf("%d", least)
	case every > 0:
		what = fmt.Sprintf("99%% or more (%d of them every one)", every)
	default:
		what = "99% or more"
	}
	who := "the anchor's set holds"
	if q.batch {
		who = fmt.Sprintf("%d of %d anchors' sets hold", full, len(results))
	}
	return fmt.Sprintf("%s %s of the collection's %d items: is the anchor of the kind the set was calibrated around? A set calibrated around queries (captions, questions) is wide for a row of the collection itself (an image, a passage), which -anchor-index takes; and one of embeddings whose positives are no nearer than the rest (a dot-product model's, docs/your-data.md) holds nearly everything", who, what, n)
}

// zeroAnchors warns of anchors that are all zeros — what an encoder gives
// for an input it failed on (an unreadable image, an empty text), as ccs
// bundle warns of such rows — whose sets are answered like any other's:
// the items nearest the origin, or c for a set centred at anchor + c (a marketplace user's failed download held
// 8 177 of 400 000 products in its ℓ2 ball's set); "" where there are none.
func zeroAnchors(set *conformal.Set, q anchors, results []retrieveResult, n int) string {
	var zero []int
	for i := range q.m {
		if retrieve.AllZero(q.row(i)) {
			zero = append(zero, i)
		}
	}
	if len(zero) == 0 {
		return ""
	}
	first := zero[0]
	who := "the anchor is all zeros"
	if q.batch {
		who = fmt.Sprintf("%d of %d anchors are all zeros (the first: %s)", len(zero), q.m, q.name(first))
	}
	return retrieve.ZeroAnchor(who, fmt.Sprintf("its set is answered like any other, the items nearest %s (%d of the collection's %d items)", retrieve.ZeroCentre(set), results[first].Total, n))
}

// retrieveResult is one anchor's answer.
type retrieveResult struct {
	Anchor    int            `json:"anchor"`    // the row of -anchor's (m, d) array
	Total     int            `json:"total"`     // items inside the set
	Hits      []retrieve.Hit `json:"hits"`      // nearest first, at most -limit
	Truncated bool           `json:"truncated"` // -limit left hits out
	// With -labels: each printed hit's label, and every hit's labels
	// counted, most first.
	HitLabels rowLabels    `json:"hit_labels,omitempty"`
	Labels    []labelCount `json:"labels,omitempty"`
	// The class whose threshold the anchor's set is (a class-conditional
	// set's with -label or -anchor-labels, or a set calibrated on one
	// class's anchors): its label, and name if any; and its threshold,
	// where the anchors' thresholds differ (-anchor-labels).
	Label     *int64           `json:"label,omitempty"`
	Class     string           `json:"class,omitempty"`
	Threshold *jsonfloat.Float `json:"threshold,omitempty"`
	set       *conformal.Set
}

// class keeps s, the set r's anchor was searched with, and its class.
func (r *retrieveResult) class(s *conformal.Set) {
	r.set = s
	r.Label, r.Class = s.Calibration.Class.LabelAndName()
}

// setWhat is how the text output says which threshold r's set is: the
// class's where it is one class's.
func (r retrieveResult) setWhat() string {
	if c := r.set.Calibration.Class; c != nil {
		return fmt.Sprintf("%v's threshold %.6g, α=%v", c, r.set.Threshold, r.set.Alpha)
	}
	return fmt.Sprintf("threshold %.6g, α=%v", r.set.Threshold, r.set.Alpha)
}

// bySet groups the anchors by the set they are searched with, in the
// order of each set's first anchor.
func bySet(sets []*conformal.Set) [][]int {
	index := map[*conformal.Set]int{}
	var groups [][]int
	for i, s := range sets {
		g, ok := index[s]
		if !ok {
			g = len(groups)
			index[s] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// setWarnings are the warnings of the sets searched with, each once, but
// the one of log-volumes, which retrieval prints none of.
func setWarnings(sets []*conformal.Set) []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range bySet(sets) {
		vol := sets[g[0]].VolumeWarning()
		for _, w := range sets[g[0]].Warnings() {
			if w != vol && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// labelCount is how many of a set's items have a label.
type labelCount struct {
	Label string `json:"label"` // bundle.NullMark for a table's null: JSON null
	Count int    `json:"count"`
}

// MarshalJSON writes a table's null label (bundle.NullMark) as null.
func (c labelCount) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Label *string `json:"label"`
		Count int     `json:"count"`
	}{nullable(c.Label), c.Count})
}

// rowLabels are rows' labels, a table's null (bundle.NullMark) among them
// written null in JSON.
type rowLabels []string

// MarshalJSON writes the labels, a table's null as null.
func (ls rowLabels) MarshalJSON() ([]byte, error) {
	out := make([]*string, len(ls))
	for i, l := range ls {
		out[i] = nullable(l)
	}
	return json.Marshal(out)
}

// nullable is l, or nil for a table's null (bundle.NullMark).
func nullable(l string) *string {
	if l == bundle.NullMark {
		return nil
	}
	return &l
}

// labelText is a label as the text output writes it: a table's null as
// null, anything else as it is.
func labelText(l string) string {
	if l == bundle.NullMark {
		return "null"
	}
	return l
}

// labelled counts r's hits (all of them) by their rows' labels, most
// first (ties by label), then cuts the hits to limit (0: all) and keeps
// the printed hits' labels.
func (r *retrieveResult) labelled(labels []string, several labelSets, limit int) {
	count := map[string]int{}
	for _, h := range r.Hits {
		count[labels[h.Row]]++
	}
	if limit > 0 && len(r.Hits) > limit {
		r.Hits = slices.Clone(r.Hits[:limit]) // not the whole set's array
	}
	r.Truncated = len(r.Hits) < r.Total
	r.setLabels(count, labels, several)
}

// counted keeps r's label counts, byLabel (label numbers of distinct,
// as labelNumbers gives them), and its hits' labels.
func (r *retrieveResult) counted(byLabel map[int32]int, distinct, labels []string, several labelSets) {
	count := make(map[string]int, len(byLabel))
	for l, c := range byLabel {
		count[distinct[l]] = c
	}
	r.setLabels(count, labels, several)
}

// setLabels keeps count as r's labels, most first (ties by label), and
// the labels of r's hits; with several labels a row, count's keys are
// rows' labels together, counted for each of their labels.
func (r *retrieveResult) setLabels(count map[string]int, labels []string, several labelSets) {
	if several != nil { // by label, not by a row's labels together
		each := map[string]int{}
		for l, c := range count {
			for _, name := range several[l] {
				each[name] += c
			}
		}
		count = each
	}
	r.Labels = make([]labelCount, 0, len(count))
	for l, c := range count {
		r.Labels = append(r.Labels, labelCount{l, c})
	}
	slices.SortFunc(r.Labels, func(a, b labelCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Label, b.Label))
	})
	r.HitLabels = make(rowLabels, len(r.Hits))
	for i, h := range r.Hits {
		r.HitLabels[i] = labels[h.Row]
	}
}

// labelNumbers numbers the distinct labels, in order of first
// occurrence: row i's label is distinct[codes[i]].
func labelNumbers(labels []string) (codes []int32, distinct []string) {
	codes = make([]int32, len(labels))
	index := map[string]int32{}
	for i, l := range labels {
		c, ok := index[l]
		if !ok {
			c = int32(len(distinct))
			index[l] = c
			distinct = append(distinct, l)
		}
		codes[i] = c
	}
	return codes, distinct
}

// labelsLine is "labels  3 among its 103 items: "a" 95, "b" 6, "c" 2",
// the first ten named.
func (r retrieveResult) labelsLine() string {
	var each []string
	for i, l := range r.Labels {
		if i == 10 {
			each = append(each, "…")
			break
		}
		name := "null"
		if l.Label != bundle.NullMark {
			name = strconv.Quote(l.Label)
		}
		each = append(each, fmt.Sprintf("%s %d", name, l.Count))
	}
	return fmt.Sprintf("labels     %d among its %d items: %s", r.labelCount(), r.Total, strings.Join(each, ", "))
}

// labelCount is how many labels r's items have: a table's null, or a
// string that marks a missing value ("", "nan": bundle.MissingString, as
// ccs bundle takes them), is no label, though its items are counted beside
// the labels'.
func (r retrieveResult) labelCount() int {
	n := len(r.Labels)
	for _, l := range r.Labels {
		if bundle.MissingString(l.Label) { // NullMark among them
			n--
		}
	}
	return n
}

// labelsMismatch is the error of a labels file arg that gives got labels for
// the n rows (or anchors: noun) of src, with what readIDs warned of.
func labelsMismatch(arg string, got, n int, noun, src, warn string) error {
	msg := fmt.Sprintf("%s: %d labels for the %d %s of %s", arg, got, n, noun, src)
	if warn != "" {
		msg += " (" + warn + ")"
	}
	return errors.New(msg)
}

// readRowLabels reads -labels for the collection db of n rows, as names:
// strings as they are (a missing mark too), a table's null as
// bundle.NullMark, integers in decimal. Several labels a row (a multi-hot
// matrix, its columns named by namesArg, -label-names, where given, or a
// list column) give each row its labels joined, and the labelSets that
// maps a joined string back to its labels, to count hits label by label.
func readRowLabels(arg, namesArg string, n int, db string) ([]string, labelSets, error) {
	li, err := readLabels(arg, false)
	if err != nil {
		return nil, nil, err
	}
	if namesArg != "" {
		if err := nameMatrix(&li, arg, namesArg); err != nil {
			return nil, nil, err
		}
	}
	if li.sets != nil { // several labels a row: a multi-hot matrix or a list column
		if len(li.sets) != n {
			return nil, nil, labelsMismatch(arg, len(li.sets), n, "rows", db, "")
		}
		out, sets := make([]string, n), labelSets{}
		for i, s := range li.sets {
			names := make([]string, len(s))
			for j, l := range s {
				names[j] = strconv.Itoa(int(l))
				switch {
				case li.names != nil && l >= 0 && int(l) < len(li.names): // a -1 marks no label
					names[j] = li.names[l]
				case li.nullID != 0 && l == li.nullID: // a JSON-lines null
					names[j] = "null"
				}
			}
			out[i] = strings.Join(names, ", ")
			sets[out[i]] = names
		}
		return out, sets, nil
	}
	ids, names, missing, warn := li.ids, li.names, li.missing, li.warn
	if len(ids) != n {
		return nil, nil, labelsMismatch(arg, len(ids), n, "rows", db, warn)
	}
	out := make([]string, n)
	for i, c := range ids {
		switch m, ok := missing[c]; {
		case ok:
			out[i] = m
		case names != nil && c >= 0 && c < int64(len(names)): // a ClassLabel's -1 is no name's
			out[i] = names[c]
		default:
			out[i] = strconv.FormatInt(c, 10)
		}
	}
	return out, nil, nil
}

// labelSets are the labels of each row's label string, for labels of
// several a row (readRowLabels: "joy, love" is joy and love), so that a
// set's items are counted label by label, an item of two labels for each.
type labelSets map[string][]string

// retrieveSummary is a batch's set sizes.
type retrieveSummary struct {
	Anchors int     `json:"anchors"`
	Mean    float64 `json:"mean"`   // items inside a set, on average
	Median  float64 `json:"median"` // the lower median
	Empty   int     `json:"empty"`  // sets holding no item
	// Labels is how many labels a set's items have, on average (with
	// -labels; a table's null is none).
	Labels *float64 `json:"labels,omitempty"`
}

// summarize is the batch's set sizes.
func summarize(results []retrieveResult) retrieveSummary {
	sizes := make([]float64, len(results))
	sum := retrieveSummary{Anchors: len(results)}
	labels := 0
	for i, r := range results {
		sizes[i] = float64(r.Total)
		if r.Total == 0 {
			sum.Empty++
		}
		labels += r.labelCount()
	}
	if len(results) > 0 && results[0].Labels != nil {
		mean := float64(labels) / float64(len(results))
		sum.Labels = &mean // 0 when every item is unlabelled: still written
	}
	slices.Sort(sizes)
	sum.Mean, sum.Median = stat.Mean(sizes, nil), stat.Quantile(0.5, stat.Empirical, sizes, nil)
	return sum
}

// printRetrieved prints the answers: for one anchor its hits, for a batch
// each anchor's, then the set sizes' summary.
func printRetrieved(out *output, q anchors, results []retrieveResult, n int, asJSON bool) error {
	if asJSON {
		if !q.batch {
			r := results[0]
			doc := map[string]any{"total": r.Total, "hits": r.Hits, "truncated": r.Truncated, "threshold": jsonfloat.Float(r.set.Threshold)}
			if r.Labels != nil {
				doc["hit_labels"], doc["labels"] = r.HitLabels, r.Labels
			}
			if r.Label != nil {
				doc["label"] = *r.Label
			}
			if r.Class != "" {
				doc["class"] = r.Class
			}
			return writeJSON(out.stdout, doc)
		}
		var threshold *jsonfloat.Float
		if len(bySet(setsOf(results))) == 1 { // one threshold for all: the document's
			t := jsonfloat.Float(results[0].set.Threshold)
			threshold = &t
		} else {
			for i := range results {
				t := jsonfloat.Float(results[i].set.Threshold)
				results[i].Threshold = &t
			}
		}
		return writeBatchJSON(out, results, threshold)
	}
	w := bufio.NewWriterSize(out.stdout, 1<<16)
	for i, r := range results {
		if q.batch {
			fmt.Fprintf(w, "anchor %d: ", i)
		}
		fmt.Fprintf(w, "%d of %d items inside the set (%s)\n", r.Total, n, r.setWhat())
		if r.Labels != nil && r.Total > 0 {
			fmt.Fprintln(w, r.labelsLine())
		}
		if len(r.Hits) > 0 {
			if r.Labels != nil {
				fmt.Fprintf(w, "id\trow\tscore\tlabel\n")
			} else {
				fmt.Fprintf(w, "id\trow\tscore\n")
			}
		}
		for j, h := range r.Hits {
			id := strconv.FormatInt(h.ID, 10)
			if h.Key != "" {
				id = h.Key
			}
			if r.Labels != nil {
				fmt.Fprintf(w, "%s\t%d\t%.6g\t%s\n", id, h.Row, h.Score, labelText(r.HitLabels[j]))
				continue
			}
			fmt.Fprintf(w, "%s\t%d\t%.6g\n", id, h.Row, h.Score)
		}
		if q.batch && i < len(results)-1 {
			fmt.Fprintln(w)
		}
	}
	if q.batch {
		sum := summarize(results)
		labels := ""
		if results[0].Labels != nil {
			labels = fmt.Sprintf("; their items have %s labels on average", count(*sum.Labels))
		}
		rank := ""
		if sum.Anchors%2 == 0 {
			rank = " (nearest rank: the lower of the middle two)"
		}
		fmt.Fprintf(w, "\n%d anchors: %s items inside the set on average, median %s%s, %d with none%s\n", sum.Anchors, count(sum.Mean), count(sum.Median), rank, sum.Empty, labels)
	}
	return w.Flush()
}

// writeBatchJSON writes a batch's JSON document, {"anchors": [...],
// "summary": {...}, "threshold": t} (threshold where the anchors share
// one), as writeJSON would write it, an anchor at a time: 200 anchors'
// 2.4 million hits are 300 MB of JSON, which the whole document marshalled
// at once held three times over (2.7 GB) and wrote in 35 s, silent.
func writeBatchJSON(out *output, results []retrieveResult, threshold *jsonfloat.Float) error {
	w := bufio.NewWriterSize(out.stdout, 1<<20)
	prog := newProgress(out, false, "anchor written")
	prog.lazy = true
	w.WriteString("{\n  \"anchors\": [")
	for i := range results {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		if err := jsonindent.EncodeAt(w, results[i], "  ", 2); err != nil {
			return err
		}
		prog.step(i+1, len(results), "")
	}
	if len(results) > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("],\n  \"summary\": ")
	if err := jsonindent.EncodeAt(w, summarize(results), "  ", 1); err != nil {
		return err
	}
	if threshold != nil {
		w.WriteString(",\n  \"threshold\": ")
		if err := jsonindent.EncodeAt(w, threshold, "  ", 1); err != nil {
			return err
		}
	}
	w.WriteString("\n}\n")
	return w.Flush()
}

// setsOf are the sets results were searched with.
func setsOf(results []retrieveResult) []*conformal.Set {
	out := make([]*conformal.Set, len(results))
	for i, r := range results {
		out[i] = r.set
	}
	return out
}

// count writes a mean or median count: four significant digits, in
// plain decimals (17 660, not 1.766e+04).
func count(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
