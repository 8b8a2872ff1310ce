package bundle

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Embeddings are a user's embeddings as Make's bundles are built from
// them: N rows of dimension D in Rows, or with Views > 0, N items of Views
// views each (N·Views rows, item-major).
type Embeddings struct {
	Source string    // the file, array or argument they came from, for messages
	Rows   []float32 // N×D, or N·Views×D
	N, D   int
	Views  int // v of an (n, v, d) array; 0 otherwise
}

// Transposed is what every message that suspects an array saved
// transposed ((d, n) for (n, d)) ends with.
const Transposed = "transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file)"

// TransposedHint is what a count of ids (or labels) that does not match n
// rows of d values adds when it matches d instead: the array is likely
// transposed; "" otherwise.
func TransposedHint(count, n, d int) string {
	if count != d || count == n {
		return ""
	}
	return fmt.Sprintf(" (the embeddings are %d rows of %d values, and %d is their columns' count: %s)", n, d, count, Transposed)
}

// EmbeddingsOf checks a decoded array as embeddings: floating point (any
// dtype Array decodes), shape (n, d) — or (n, v, d) views when views is
// true, and only then — with n, d ≥ 1, every value finite. Errors name
// source.
func EmbeddingsOf(a Array, source string, views bool) (Embeddings, error) {
	e := Embeddings{Source: source}
	if a.F32 == nil {
		return e, fmt.Errorf("%s: dtype %s, want floating point (float16, float32 or float64) embeddings", source, a.Kind())
	}
	switch {
	case len(a.Shape) == 2 && !views:
		e.N, e.D = a.Shape[0], a.Shape[1]
	case len(a.Shape) == 3 && views:
		e.N, e.Views, e.D = a.Shape[0], a.Shape[1], a.Shape[2]
	default:
		want := "(n, d)"
		if views {
			want = "(n, v, d) views"
		}
		hint := ""
		if len(a.Shape) == 3 && !views {
			// Each item's views (-views), or a triplet export, which is
			// no views: its negative would be taken for a positive.
			hint = ": an (n, v, d) array of each item's v views goes as -views (views= in Python); triplets, (anchor, positive, negative) along the second axis, are no views but relevance pairs (docs/your-data.md, §6 \"Your data set's own negatives\")"
		}
		return e, fmt.Errorf("%s: shape %s, want %s%s", source, FormatShape(a.Shape), want, hint)
	}
	e.Rows = a.F32
	return e, e.check()
}

// check refuses no rows and non-finite values, naming the row and
// coordinate.
func (e Embeddings) check() error {
	if e.N < 1 || e.D < 1 {
		return fmt.Errorf("%s: no embeddings (%d rows of dimension %d)", e.Source, e.N, e.D)
	}
	if i := FirstNonFinite(e.Rows); i >= 0 {
		at := fmt.Sprintf("row %d", i/e.D)
		if e.Views > 0 {
			at = fmt.Sprintf("item %d, view %d", i/e.D/e.Views, i/e.D%e.Views)
		}
		return fmt.Errorf("%s: %s, coordinate %d is %v%s", e.Source, at, i%e.D, e.Rows[i], e.nonFinite(i/e.D))
	}
	return nil
}

// nonFinite counts the rows (the items, with views) that hold NaN or ±Inf,
// from row first, which does, and says how to leave them out: a failed
// encoding is seldom alone.
func (e Embeddings) nonFinite(first int) string {
	unit, per := "row", e.D
	if e.Views > 0 {
		unit, per = "item", e.Views*e.D
	}
	var bad []int
	for r := first / (per / e.D); r*per < len(e.Rows); r++ {
		if FirstNonFinite(e.Rows[r*per:(r+1)*per]) >= 0 {
			bad = append(bad, r)
		}
	}
	keep := "np.isfinite(X).all(axis=1)"
	if e.Views > 0 {
		keep = "np.isfinite(X).all(axis=(1, 2))"
	}
	if len(bad) == 1 && bad[0] == 0 && e.Views == 0 && allNaN(e.Rows[:e.D]) {
		// np.genfromtxt of a table with a header reads its names as a
		// first row of NaN: no row of data to leave out with its label.
		return fmt.Sprintf(" (row 0 alone, every coordinate NaN, of %d rows): a header line read as numbers? np.genfromtxt reads a header as a row of NaN — skip it (skip_header=1), or give ccs the text table itself (-embeddings FILE.csv, which reads the header as names)", len(e.Rows)/per)
	}
	if len(bad) == 1 {
		return fmt.Sprintf(" (1 %s of %d holds NaN or ±Inf): leave it out first, with its label (or id, and pairs renumbered), keep = %s; X, y = X[keep], y[keep]",
			unit, len(e.Rows)/per, keep)
	}
	list := make([]string, 0, 6)
	for i, r := range bad {
		if i == 5 {
			list = append(list, "…")
			break
		}
		list = append(list, fmt.Sprint(r))
	}
	return fmt.Sprintf("; %d %ss of %d hold NaN or ±Inf (%ss %s): leave them out first, with their labels (or ids, and pairs renumbered), keep = %s; X, y = X[keep], y[keep]",
		len(bad), unit, len(e.Rows)/per, unit, strings.Join(list, ", "), keep)
}

// allNaN reports whether every value of row is NaN.
func allNaN(row []float32) bool {
	for _, v := range row {
		if v == v {
			return false
		}
	}
	return true
}

// CheckEmbeddings checks embeddings read otherwise (a Parquet column): at
// least one row, every value finite.
func CheckEmbeddings(e Embeddings) error { return e.check() }

// Inputs are what a user brings to Make, read and checked one by one
// (EmbeddingsOf and the readers of labels, groups and pairs): embeddings
// (with Views, each item's views), and what says which rows are positives
// of each other. Their Sources name them in errors.
type Inputs struct {
	Embeddings Embeddings
	// Labels are one class per row, or per item with views; nil: none.
	Labels       []int64
	LabelsSource string
	// Groups are one group id per row; nil: none. GroupNames, for string
	// ids, are their values (id g is GroupNames[g]), for messages.
	Groups       []int64
	GroupsSource string
	GroupNames   []string
	// Sessions, with Groups, are one session id per row (a recording, a
	// speaker's YouTube video); nil: none. An anchor's positives are then
	// its group's rows of other sessions (Items.Sessions).
	Sessions       []int64
	SessionsSource string
	// SessionNames, for string session ids, are their values (id s is
	// SessionNames[s]), for messages.
	SessionNames []string
	// Blocks, with Labels, are one block id per row (a recording, a
	// patient, a site): the unit the rows are split by (Items.Blocks);
	// nil: none.
	Blocks       []int64
	BlocksSource string
	// Queries and Pairs are relevance judgements (Items.Queries, Pairs);
	// Queries nil: none.
	Queries *Embeddings
	Pairs   [][2]int
	// Negatives are pairs judged not relevant (Items.Negatives), for
	// MakeConfig.JudgedNegatives; nil: none.
	Negatives [][2]int
	// Graded are pairs relevant at a lower grade (Items.Graded).
	Graded [][2]int
	// QueryIDs are the queries' ids, in row order (nil: none), for
	// messages (Items.QueryIDs).
	QueryIDs []string
	// QueryLabels, with Queries, are one label per query, in row order
	// (a query's language, its domain; Items.QueryLabels); nil: none.
	// QueryLabelsSource names them in errors.
	QueryLabels       []int64
	QueryLabelsSource string
	// LabelSets are several labels a row (LabelSets of a multi-hot
	// matrix; Items.LabelSets), instead of Labels: the rows become their
	// own queries, related when they share a label. LabelsSource names
	// them too.
	LabelSets [][]int32
	// OneLabel, with LabelSets, bundles that label's rows alone
	// (Items.OneLabel); nil: every label's.
	OneLabel *OneLabel
}

// Items checks that the inputs agree — a label or a group per row (a label
// per item with views), queries of the embeddings' dimension, at least two
// views per item — and returns Make's items: with views, every row's group
// is its item and its label its item's.
func (in Inputs) Items() (Items, error) {
	e := in.Embeddings
	it := Items{N: e.N, Rows: e.Rows, D: e.D}
	if e.Views > 0 {
		if e.Views < 2 {
			return Items{}, fmt.Errorf("%s: %d views per item: want at least 2 (the anchor and a positive)", e.Source, e.Views)
		}
		it.N, it.ViewItems = e.N*e.Views, true
		it.Groups = make([]int64, it.N)
		for i := range it.Groups {
			it.Groups[i] = int64(i / e.Views)
		}
	}
	if in.Labels != nil {
		switch {
		case e.Views > 0 && len(in.Labels) != e.N:
			return Items{}, fmt.Errorf("%s: %d labels for %d items of %s", in.LabelsSource, len(in.Labels), e.N, e.Source)
		case e.Views > 0:
			it.Labels = make([]int64, it.N)
			for i := range it.Labels {
				it.Labels[i] = in.Labels[i/e.Views]
			}
		case len(in.Labels) != e.N:
			hint := TransposedHint(len(in.Labels), e.N, e.D)
			if ext := strings.ToLower(filepath.Ext(in.LabelsSource)); (ext == ".txt" || ext == ".csv" || ext == ".tsv") && len(in.Labels) == e.N+1 {
				hint = " (one line too many: a header line, or a blank line at the end, is read as a label)"
			}
			if ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(e.Source, ".gz"))); (ext == ".txt" || ext == ".csv" || ext == ".tsv") && len(in.Labels) == e.N-1 {
				// A text table's first line of numbers read as a row.
				hint = " (one row too many in the table: its first line, read as a row, a header of numbers? ccs takes numbers for a header where they count up above real values or follow pandas' empty index name; give the header names of text, or leave the line out)"
			}
			if extra := len(in.Labels) - e.N; extra > 1 && !slices.ContainsFunc(in.Labels[e.N:], func(l int64) bool { return l >= 0 }) {
				// Blank lines at the end of a text: missing labels, each.
				hint = fmt.Sprintf(" (the last %d are missing labels: blank lines at the end of the file? remove them)", extra)
			}
			if hint == "" {
				// Nothing says which rows they are: ccs matches labels to
				// rows by position alone.
				hint = ": labels are matched to rows by position, one a row in the same order — save them from the same table as the embeddings, after the same filtering (np.save(\"labels.npy\", df.loc[kept, \"label\"].to_numpy()))"
			}
			return Items{}, fmt.Errorf("%s: %d labels for the %d rows of %s%s", in.LabelsSource, len(in.Labels), e.N, e.Source, hint)
		default:
			it.Labels = in.Labels
		}
	}
	if in.LabelSets != nil {
		switch {
		case e.Views > 0 || in.Labels != nil || in.Groups != nil || in.Queries != nil:
			return Items{}, fmt.Errorf("%s: several labels a row make the rows their own queries, related by the labels they share: give them with embeddings alone (no views, groups, queries or pairs)", in.LabelsSource)
		case len(in.LabelSets) != e.N:
			return Items{}, fmt.Errorf("%s: %d rows of labels for the %d rows of %s", in.LabelsSource, len(in.LabelSets), e.N, e.Source)
		}
		it.LabelSets, it.Queries, it.QueryRows, it.SelfQueries = in.LabelSets, e.N, e.Rows, true
	}
	if in.OneLabel != nil {
		if in.LabelSets == nil {
			return Items{}, fmt.Errorf("%s: one label's rows (%s) are of several labels a row: give a multi-hot matrix or a column of lists as the labels", in.LabelsSource, in.OneLabel)
		}
		it.OneLabel = in.OneLabel
	}
	if in.Groups != nil {
		if e.Views > 0 {
			return Items{}, fmt.Errorf("%s: views are their items' groups: give no group ids with them", in.GroupsSource)
		}
		if len(in.Groups) != e.N {
			return Items{}, fmt.Errorf("%s: %d group ids for the %d rows of %s%s", in.GroupsSource, len(in.Groups), e.N, e.Source, TransposedHint(len(in.Groups), e.N, e.D))
		}
		it.Groups, it.GroupNames = in.Groups, in.GroupNames
	}
	if in.Sessions != nil {
		switch {
		case in.Groups == nil:
			return Items{}, fmt.Errorf("%s: sessions are a group's recordings: give group ids with them (-groups)", in.SessionsSource)
		case len(in.Sessions) != e.N:
			return Items{}, fmt.Errorf("%s: %d session ids for the %d rows of %s%s", in.SessionsSource, len(in.Sessions), e.N, e.Source, TransposedHint(len(in.Sessions), e.N, e.D))
		}
		// A missing session (-1; "" or "nan", MissingStrings; a table's
		// null, below the column's values) is Make's to refuse, leave out
		// or keep (MakeConfig.MissingLabels).
		if err := sessionsOfRows(in.Groups, in.Sessions, in.SessionsSource); err != nil {
			return Items{}, err
		}
		it.Sessions, it.SessionNames = in.Sessions, in.SessionNames
	}
	if in.Blocks != nil {
		switch {
		case in.LabelSets != nil && e.Views == 0 && in.Groups == nil && in.Queries == nil:
			return Items{}, fmt.Errorf("%s: blocks split rows of one class a row, and %s gives several labels a row, which make the rows their own queries, related by the labels they share: give one class a row with the blocks, or no blocks", in.BlocksSource, in.LabelsSource)
		case e.Views > 0 || in.Groups != nil || in.Queries != nil || in.LabelSets != nil || in.Labels == nil:
			return Items{}, fmt.Errorf("%s: blocks split rows of one class label a row: give them with -labels alone (groups and views already lie whole in one split; relevance pairs split by query)", in.BlocksSource)
		case len(in.Blocks) != e.N:
			return Items{}, fmt.Errorf("%s: %d block ids for the %d rows of %s%s", in.BlocksSource, len(in.Blocks), e.N, e.Source, TransposedHint(len(in.Blocks), e.N, e.D))
		}
		missing, first := 0, -1
		for i, b := range in.Blocks {
			if b < 0 {
				if missing++; first < 0 {
					first = i
				}
			}
		}
		if missing > 0 {
			return Items{}, fmt.Errorf("%s: %d of %d rows have a block id that marks a missing value (a negative integer, \"\", \"nan\" or null; the first: row %d): as one block, those rows would be split together as if one recording; give each row its block, or leave those rows out", in.BlocksSource, missing, e.N, first)
		}
		it.Blocks = in.Blocks
	}
	if q := in.Queries; q != nil {
		if q.D != e.D {
			hint := ""
			switch {
			case q.N == e.D:
				hint = fmt.Sprintf(" (the queries' %d rows are the embeddings' dimension: %s)", q.N, Transposed)
			case e.N == q.D:
				hint = fmt.Sprintf(" (the embeddings' %d rows are the queries' dimension: %s)", e.N, Transposed)
			}
			return Items{}, fmt.Errorf("%s: queries of dimension %d; %s: embeddings of dimension %d%s", q.Source, q.D, e.Source, e.D, hint)
		}
		if in.QueryIDs != nil && len(in.QueryIDs) != q.N {
			return Items{}, fmt.Errorf("%s: %d query ids for %d queries", q.Source, len(in.QueryIDs), q.N)
		}
		it.Queries, it.Pairs, it.Negatives, it.Graded, it.QueryIDs, it.QueryRows = q.N, in.Pairs, in.Negatives, in.Graded, in.QueryIDs, q.Rows
		it.SelfQueries = in.selfQueries()
	}
	if in.QueryLabels != nil {
		switch {
		case in.Queries == nil:
			return Items{}, fmt.Errorf("%s: query labels are one label a query of relevance pairs: give them with queries and pairs", in.QueryLabelsSource)
		case len(in.QueryLabels) != in.Queries.N:
			hint := ""
			if ext := strings.ToLower(filepath.Ext(in.QueryLabelsSource)); (ext == ".txt" || ext == ".csv" || ext == ".tsv") && len(in.QueryLabels) == in.Queries.N+1 {
				hint = " (one line too many: a header line, or a blank line at the end, is read as a label)"
			}
			return Items{}, fmt.Errorf("%s: %d query labels for the %d queries of %s%s", in.QueryLabelsSource, len(in.QueryLabels), in.Queries.N, in.Queries.Source, hint)
		}
		it.QueryLabels = in.QueryLabels
	}
	return it, nil
}

// selfQueries says whether the queries are the embeddings' rows, value for
// value (the same file given as -queries and -embeddings: items that are
// their own queries, as multi-label data given as pairs of rows sharing a
// category are).
func (in Inputs) selfQueries() bool {
	q := in.Queries
	return q != nil && in.Embeddings.Views == 0 && q.N == in.Embeddings.N && q.D == in.Embeddings.D && slices.Equal(q.Rows, in.Embeddings.Rows)
}

// sessionsOfRows refuses session ids that no two rows share (the rows'
// own names given as sessions), where a group has two rows: every other
// row of a group is then of another session, and -sessions excludes no
// positive. Sessions that rows of different groups share pass, even where
// no two rows of a group share one (a camera that sees each person once).
// Rows of no group or no session (a negative id) are left aside.
func sessionsOfRows(groups, sessions []int64, source string) error {
	type key struct{ g, s int64 }
	seen := map[key]struct{}{}
	perGroup := map[int64]int{}
	distinct := map[int64]struct{}{}
	rows, several := 0, false
	for i, s := range sessions {
		g := groups[i]
		if g < 0 || s < 0 {
			continue
		}
		if _, dup := seen[key{g, s}]; dup {
			return nil
		}
		seen[key{g, s}] = struct{}{}
		distinct[s] = struct{}{}
		rows++
		if perGroup[g]++; perGroup[g] > 1 {
			several = true
		}
	}
	if !several || len(distinct) < rows {
		// No group of two rows: the groups' own check says so. Or
		// sessions that rows of different groups share: cameras or
		// recordings, each seen once by a group's rows (VIPeR's two
		// cameras, an image of each person each), which exclude no
		// positive by the data, not by a mistake.
		return nil
	}
	return fmt.Errorf("%s: no two rows of a group share a session (%d sessions for %d rows): the sessions then exclude no positive, as if none were given — "+
		"ids of the rows themselves (their file names) are no sessions: give each row's recording or camera "+
		`(from re-ID image names, sed 's|.*[/\\]||; s/^[^_]*_c\([0-9]*\).*/\1/' FILE > cam.txt), or give none (no -sessions; no sessions= in Python)`, source, len(distinct), rows)
}
