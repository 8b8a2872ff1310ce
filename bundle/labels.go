package bundle

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/internal/suggest"
)

// LabelCodes numbers string labels (or group ids) 0, 1, … in the sorted
// order of their distinct values: row i's label is codes[i], and its
// string names[codes[i]]. Labels from a NumPy string array and from a
// Parquet string column get the same codes.
func LabelCodes(labels []string) (codes []int64, names []string) {
	names = slices.Compact(slices.Sorted(slices.Values(labels)))
	codes = make([]int64, len(labels))
	for i, s := range labels {
		j, _ := slices.BinarySearch(names, s)
		codes[i] = int64(j)
	}
	return codes, names
}

// ClassesNamed resolves held-out classes as a user names them (ccs bundle's
// -ood-classes): with names (string labels, LabelCodes, or a Hugging Face
// ClassLabel's, label j is names[j]), each must be one of them, and
// becomes its code; without, each must be an integer.
func ClassesNamed(classes []string, names []string) ([]int64, error) {
	out := make([]int64, 0, len(classes))
	for _, c := range classes {
		if names == nil {
			v, err := strconv.ParseInt(c, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer label", c)
			}
			out = append(out, v)
			continue
		}
		j := slices.Index(names, c) // sorted (LabelCodes), or a ClassLabel's in id order
		if j < 0 {
			if err := joinedClass(c, names); err != nil {
				return nil, err
			}
			if v, err := strconv.ParseInt(c, 10, 64); err == nil && v >= 0 && v < int64(len(names)) {
				// A label's number where the labels are names (ood_classes=[1]
				// in Python, the labels strings): name the class.
				return nil, fmt.Errorf("%s is not among the labels (%s): the labels are names, so name the class; by number, %d is %q", c, labelList(seq64(len(names)), MakeConfig{LabelNames: names}), v, names[v])
			}
			return nil, notAmong(c, names)
		}
		out = append(out, int64(j))
	}
	return uniq(out), nil
}

// SetLabelsNamed reads held-out labels of several labels a row (OOD
// labels, classes as a user names them) as the label sets number them: a
// multi-hot matrix's columns, 0 to c−1, when names is nil; else the
// label named so in names (label j is names[j], in any order: a list
// column's values, or the lists' labels in Python). Each once.
func SetLabelsNamed(classes, names []string, c int) ([]int64, error) {
	out := make([]int64, 0, len(classes))
	for _, s := range classes {
		if names == nil {
			v, err := strconv.ParseInt(s, 10, 64)
			switch {
			case err != nil:
				return nil, fmt.Errorf("%q is not an integer label (a multi-hot matrix's labels are its columns, 0 to %d): give its column's number (list(mlb.classes_).index(%q), mlb the MultiLabelBinarizer), name the matrix's columns (-label-names FILE; label_names=mlb.classes_ in Python), or give the labels as lists of names — a CSV or Parquet column of lists, a JSON-lines field of lists, or lists in Python — to name them", s, c-1, s)
			case v < 0 || v >= int64(c):
				return nil, fmt.Errorf("label %d is not a column of the multi-hot matrix (0 to %d)", v, c-1)
			}
			out = append(out, v)
			continue
		}
		j := slices.Index(names, s)
		if j < 0 {
			if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= 0 && v < int64(len(names)) {
				// A column's number, as a multi-hot matrix has them:
				// MultiLabelBinarizer numbers names in sorted order.
				return nil, fmt.Errorf("%q is not among the labels (%s): the labels are names, and a multi-hot matrix of them (MultiLabelBinarizer) numbers them in sorted order, in which %d is %q",
					s, labelList(seq64(len(names)), MakeConfig{LabelNames: names}), v, slices.Sorted(slices.Values(names))[v])
			}
			return nil, notAmong(s, names)
		}
		out = append(out, int64(j))
	}
	return uniq(out), nil
}

// MatrixNames checks names given for the c columns of a multi-hot
// matrix (column j is label names[j], as mlb.classes_ names a
// MultiLabelBinarizer's columns): one a column, none empty, none twice —
// names that would put a label's rows under another's name are refused.
// strs reports whether they are names rather than integers (every name
// an integer: mlb.classes_ of integer labels), which says, as for a list
// column's values, which of them mark a missing label (MissingInLabelSets).
func MatrixNames(names []string, c int) (strs bool, err error) {
	if len(names) != c {
		return false, fmt.Errorf("%d names for the %d columns of the multi-hot matrix: want one a column, in the columns' order (mlb.classes_)", len(names), c)
	}
	first := make(map[string]int, len(names))
	for j, name := range names {
		if strings.TrimSpace(name) == "" {
			return false, fmt.Errorf("column %d's name is empty: every column needs a name", j)
		}
		if i, ok := first[name]; ok {
			return false, fmt.Errorf("%q names columns %d and %d: two labels under one name would read as one", name, i, j)
		}
		first[name] = j
		if _, err := strconv.ParseInt(name, 10, 64); err != nil {
			strs = true
		}
	}
	return strs, nil
}

// LabelsNamed reads labels of several a row named as a user names them
// (-ood-classes, -one-label): SetLabelsNamed's way, or, where columns
// says a multi-hot matrix's columns are named (-label-names,
// label_names=), ColumnsNamed's, a column's number naming its column's
// name.
func LabelsNamed(classes, names []string, c int, columns bool) ([]int64, error) {
	if columns {
		return ColumnsNamed(classes, names)
	}
	return SetLabelsNamed(classes, names, c)
}

// ColumnsNamed reads held-out labels of a multi-hot matrix whose columns
// are named (MatrixNames: column j is names[j]) as SetLabelsNamed does, by
// name; a column's number, not among the names, is refused naming the
// column's name, which the matrix's order (not the sorted one) gives.
func ColumnsNamed(classes, names []string) ([]int64, error) {
	for _, s := range classes {
		v, err := strconv.ParseInt(s, 10, 64)
		if err == nil && v >= 0 && v < int64(len(names)) && !slices.Contains(names, s) {
			return nil, fmt.Errorf("%q is not among the labels (%s): the matrix's columns are named, and column %d is %q", s, labelList(seq64(len(names)), MakeConfig{LabelNames: names}), v, names[v])
		}
	}
	return SetLabelsNamed(classes, names, len(names))
}

// notAmong refuses c, named as a label and not among names (label j is
// names[j]), listing them and naming the nearest when one is near.
func notAmong(c string, names []string) error {
	mean := ""
	if near, ok := suggest.Nearest(c, names); ok {
		mean = fmt.Sprintf(": did you mean %q?", near)
	}
	return fmt.Errorf("%q is not among the labels (%s)%s", c, labelList(seq64(len(names)), MakeConfig{LabelNames: names}), mean)
}

// joinedClass says why c, not a label itself, cannot be held out when
// some labels are lists that hold it, joined by ",", ";" or "|" (a
// multi-domain protein's "PF00069.28;PF07714.20"): such a name is a class
// of its own, and c's rows are in several of them. nil when no label
// holds c as a piece.
func joinedClass(c string, names []string) error {
	for _, sep := range []string{";", ",", "|"} {
		var in []string
		for _, n := range names {
			if !strings.Contains(n, sep) {
				continue
			}
			for p := range strings.SplitSeq(n, sep) {
				if strings.TrimSpace(p) == c {
					in = append(in, n)
					break
				}
			}
		}
		if len(in) == 0 {
			continue
		}
		ex := fmt.Sprintf("%q", in[0])
		if len(in) > 1 {
			ex = fmt.Sprintf("%q, …", in[0])
		}
		return fmt.Errorf("%q is not a label on its own: %d of the labels are lists that hold it, joined by %q (%s), each list a class of its own; "+
			"to hold it out, give the labels as lists — [s.split(%q) for s in labels] — or a multi-hot matrix, and name the label: every row that carries it is held out (docs/your-data.md, \"Several labels per row\")",
			c, len(in), sep, ex, sep)
	}
	return nil
}

// uniq is ls without repeats, in the order of their first occurrence: a
// class named twice is held out once.
func uniq(ls []int64) []int64 {
	out := ls[:0:0]
	for _, l := range ls {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// seq64 is 0, 1, … n−1.
func seq64(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i)
	}
	return s
}

// PairIDs resolves relevance pairs named by ids (BEIR's qrels name queries
// and passages by strings) to row numbers: a side given the ids of its
// rows, in row order, looks a pair's id up among them; a side without
// takes it as a 0-based row number. A pair naming an id that is not among
// its side's ids is left out (the rows embedded may be a part of the
// collection the judgements cover), and counted.
type PairIDs struct {
	queries, rows map[string]int // nil: row numbers
	// NoHeader says the text ReadQrels reads has no header line (pairs
	// from JSON lines): its first line is a pair, whatever its ids.
	NoHeader bool
	// Columns, where given, are the columns of the pairs ReadQrels reads
	// by the names its header line gives them: query, row and an
	// optional score ("FILE:QUERY,ROW[,SCORE]": a table of other columns
	// too, or of them in another order); the first line is then the
	// header.
	Columns []string
	// Unknown counts the pairs left out, and First names the first
	// unknown id ("query q7", "row doc184").
	Unknown int
	First   string
	// Unscored counts the pairs scored 0 or less (below MinScore), left
	// out of the relevant pairs: BEIR's qrels mark a pair judged not
	// relevant so.
	Unscored int
	// Judged, when set, keeps the pairs scored 0 or less — judged not
	// relevant; not those scored above 0 but below MinScore, relevant at
	// a lower grade — in Negatives, resolved as relevant pairs are, for
	// MakeConfig.JudgedNegatives.
	Judged    bool
	Negatives [][2]int
	// Graded are the pairs scored above 0 but below MinScore, resolved as
	// relevant pairs are: relevant at a lower grade, neither positives
	// nor ever drawn as their query's negatives (Items.Graded).
	Graded [][2]int
	// twoColumns is a text of pairs' header line of two columns, no
	// score, or the two Columns named (ScoreNote); nil otherwise.
	// unnamedScore is the score column the header has and Columns left
	// out.
	twoColumns   []string
	unnamedScore string
	// NQueries and NRows, where given (> 0), are the numbers of the
	// queries and of the rows: a pair that names one by a row number out
	// of range — scored relevant or not — is refused as the pairs are
	// read, numbered as the file numbers it, with what every pair of
	// the file spans (a corpus shorter than the one the pairs were made
	// for, ids counted from 1, the sides swapped).
	NQueries, NRows int
	ranges          pairRanges
	// zero are pairs judged not relevant (scored 0 or less), resolved
	// without counting an unknown id, the first maxZero of them, for
	// ReversedWarning.
	zero [][2]int
	// negKeys are Negatives' pairs as given, one for one: those also
	// scored relevant (scored, 3) stay relevant, no negative.
	negKeys [][2]string
	// Conflicts counts the pairs scored as relevant once and not another
	// time (kept relevant), and FirstConflict names the first.
	Conflicts     int
	FirstConflict string
	scored        map[[2]string]uint8 // each scored pair: 1 relevant, 2 not, 3 both
	// MinScore, when not nil, is the least score of a relevant pair
	// (graded judgements: 2 for "highly relevant" only); nil: any score
	// above 0. It is positive: 0 or less marks a pair judged not
	// relevant.
	MinScore *float64
	// swapped counts the pairs left out whose query id is a row's and
	// row id a query's: the columns given the other way round.
	swapped int
	// exampleQuery and exampleRow are the first given query id and row id
	// ("" for row numbers), shown when no pair names a given id.
	exampleQuery, exampleRow string
	// scoreColumn is the header's name of a text's third column, read as
	// the pairs' scores ("" without a header).
	scoreColumn string
	// header is the text's header line's fields, where it has one.
	header []string
	// unknownQueries and unknownRows are the distinct ids of the pairs
	// left out that no given id names, on each side (a pair of an unknown
	// query's row too): a recommender's pairs of 2 000 new users are tens
	// of thousands of pairs, and their new items missing rows.
	unknownQueries, unknownRows map[string]struct{}
	// caseOnly counts the pairs left out whose unknown id is a given one
	// but for case ("DOC-2053" for "doc-2053"), firstCase names the first;
	// folded maps each side's ids folded to lower case to the id, or to
	// "" where two fold alike (built at the first unknown id).
	caseOnly  int
	firstCase string
	folded    [2]map[string]string
}

// ScoreNote says, when a text of pairs had a header whose third column is
// not named as a score ("timestamp", "count"), that the column was read
// as each pair's relevance score, and when its header named two columns,
// that every pair was taken as relevant; "" otherwise.
func (p *PairIDs) ScoreNote() string {
	if p.twoColumns != nil && p.unnamedScore != "" {
		return fmt.Sprintf("the columns %s named, not %q: every pair is taken as relevant, those scored 0 (judged not relevant) too; name it third to read the scores (FILE:%s,%s)", strings.Join(p.twoColumns, " and "), p.unnamedScore, strings.Join(p.twoColumns, ","), p.unnamedScore)
	}
	if p.twoColumns != nil {
		return fmt.Sprintf("two columns (%s), no scores: every pair is taken as relevant (BEIR's qrels score each pair, 0 for one judged not relevant: keep that column)", strings.Join(p.twoColumns, ", "))
	}
	if p.scoreColumn == "" || scoreName(p.scoreColumn) {
		return ""
	}
	return fmt.Sprintf("the third column, %q, was read as each pair's relevance score (a pair scored %s is left out as not relevant); give two columns, query and row, where every pair is relevant", p.scoreColumn, p.below())
}

// scoreName says whether a column's name names relevance scores.
func scoreName(name string) bool {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "score", "scores", "relevance", "rel", "label", "grade", "judgment", "judgement", "rating", "relevant":
		return true
	}
	return false
}

// relevant reports whether a pair of this score is relevant.
func (p *PairIDs) relevant(score float64) bool {
	if p.MinScore != nil {
		return score >= *p.MinScore
	}
	return score > 0
}

// below is what a pair left out for its score was scored: "0 or less",
// or "below MinScore".
func (p *PairIDs) below() string {
	if p.MinScore != nil {
		return fmt.Sprintf("below the least relevant score %g", *p.MinScore)
	}
	return "0 or less"
}

// noScores is the error for pairs without scores given a MinScore.
func (p *PairIDs) noScores(name string) error {
	if p.MinScore == nil {
		return nil
	}
	return fmt.Errorf("%s: a least relevant score (%g) for pairs without scores: give (query, row, score) triples, or no least score", name, *p.MinScore)
}

// score records that the pair (query, row), as given, was scored
// relevant or not, counting the pairs scored both ways.
func (p *PairIDs) score(query, row string, relevant bool) {
	if p.scored == nil {
		p.scored = map[[2]string]uint8{}
	}
	k := [2]string{query, row}
	bit := uint8(2)
	if relevant {
		bit = 1
	} else {
		p.Unscored++
	}
	was := p.scored[k]
	if was|bit == 3 && was != 3 {
		if p.Conflicts++; p.FirstConflict == "" {
			p.FirstConflict = fmt.Sprintf("query %q, row %q", query, row)
		}
	}
	p.scored[k] = was | bit
}

// finiteScore parses a pair's relevance score: a finite number.
func finiteScore(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && s == "":
		return 0, errors.New("an empty score: want a number (BEIR's qrels score a relevant pair above 0, one judged not relevant 0)")
	case err != nil:
		return 0, fmt.Errorf("score %q is not a number", s)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("score %q is not a finite number: a missing score says nothing of the pair's relevance (BEIR's qrels score a relevant pair above 0, one judged not relevant 0): give it one, or leave the pair out", s)
	}
	return v, nil
}

// NewPairIDs is a PairIDs with the queries' ids and the rows' ids set
// (SetQueries, SetRows; nil: that side's pairs give row numbers).
func NewPairIDs(queryIDs, rowIDs []string) (*PairIDs, error) {
	p := &PairIDs{}
	if err := p.SetQueries(queryIDs); err != nil {
		return nil, err
	}
	if err := p.SetRows(rowIDs); err != nil {
		return nil, err
	}
	return p, nil
}

// SetQueries indexes the queries' ids, in row order (nil: row numbers).
// An id given twice is an error: a pair naming it would be ambiguous.
func (p *PairIDs) SetQueries(ids []string) (err error) {
	p.queries, err = indexIDs(ids, "query")
	p.exampleQuery = ""
	if len(ids) > 0 {
		p.exampleQuery = ids[0]
	}
	return err
}

// SetRows indexes the rows' ids, as SetQueries the queries'.
func (p *PairIDs) SetRows(ids []string) (err error) {
	p.rows, err = indexIDs(ids, "row")
	p.exampleRow = ""
	if len(ids) > 0 {
		p.exampleRow = ids[0]
	}
	return err
}

// indexIDs maps each id to its row; nil for nil ids.
func indexIDs(ids []string, what string) (map[string]int, error) {
	if ids == nil {
		return nil, nil
	}
	m := make(map[string]int, len(ids))
	var first [2]int
	var firstID string
	repeated := map[string]struct{}{}
	rows := 0
	for i, id := range ids {
		if j, dup := m[id]; dup {
			if rows == 0 {
				first, firstID = [2]int{j, i}, id
			}
			rows++
			repeated[id] = struct{}{}
			continue
		}
		m[id] = i
	}
	if rows > 0 {
		verb := "repeat"
		if len(repeated) == 1 {
			verb = "repeats"
		}
		of := "embeddings"
		if what == "query" {
			of = "queries"
		}
		return nil, fmt.Errorf("%s id %q is given twice (rows %d and %d, numbered from 0 — in a text file, its lines %d and %d); %s %s (%s beyond each one's first): keep each id's first row (_, first = np.unique(ids, return_index=True); keep = np.sort(first)) and the same rows of the %s",
			what, firstID, first[0], first[1], first[0]+1, first[1]+1, counted(len(repeated), "id"), verb, counted(rows, "row"), of)
	}
	return m, nil
}

// Named reports whether either side is named by ids.
func (p *PairIDs) Named() bool { return p.queries != nil || p.rows != nil }

// Resolve gives the rows of a pair (query, relevant row); ok is false for
// a pair left out (an unknown id, counted), and err says why a side of row
// numbers is not one.
func (p *PairIDs) Resolve(query, row string) (q, r int, ok bool, err error) {
	side := func(id string, m map[string]int, what string) (int, bool, error) {
		if m == nil {
			v, err := strconv.Atoi(id)
			if f, ferr := strconv.ParseFloat(id, 64); err != nil && ferr == nil && f == math.Trunc(f) && !strings.ContainsAny(id, "eEnN") {
				// pandas writes an integer column as floats where it holds
				// a missing value: 1834.0.
				return 0, false, fmt.Errorf("%s %q is a row number written as a float (pandas writes an integer column so where it holds a missing value): write the ids as integers (drop the pairs without one, then df[column].astype(int)) and the file again", what, id)
			}
			if err != nil {
				return 0, false, fmt.Errorf("%s %q is not a row number: give the %s", what, id, map[string]string{"query": "queries' ids (-query-ids; query_ids= in Python) to name them by id", "row": "rows' ids (-ids; ids= in Python) to name them by id"}[what])
			}
			return v, true, nil
		}
		// Spaces around an id (a pandas column read with them, a list of
		// tuples) are no part of it, as a text file's fields are read
		// trimmed (lookup).
		if v, ok := p.lookup(id, m); ok {
			return v, true, nil
		}
		id = strings.TrimSpace(id)
		if given, near := p.foldedID(id, m, what); near && p.caseOnly == 0 {
			p.caseOnly, p.firstCase = 1, fmt.Sprintf("%s id %q, given as %q", what, id, given)
		} else if near {
			p.caseOnly++
		}
		if p.Unknown++; p.First == "" {
			p.First = what + " id " + strconv.Quote(id)
		}
		if what == "query" {
			p.unknownQuery(id)
		} else {
			p.unknownRow(id)
		}
		return 0, false, nil
	}
	q, okQ, err := side(query, p.queries, "query")
	if err == nil && !okQ && p.queries != nil && p.rows != nil {
		_, qRow := p.rows[query]
		_, rQuery := p.queries[row]
		if qRow && rQuery {
			p.swapped++
		}
	}
	if err != nil || !okQ {
		if err == nil && p.rows != nil {
			// The pair is left out for its query, but its row id is told
			// apart too: a new user's new item is missing from the rows
			// as much as the user is from the queries.
			if _, known := p.rows[row]; !known {
				p.unknownRow(row)
			}
		}
		return 0, 0, false, err
	}
	r, okR, err := side(row, p.rows, "row")
	return q, r, okR, err
}

// foldedID is the given id of side m (what: "query" or "row") that id
// names but for case, and whether there is exactly one.
func (p *PairIDs) foldedID(id string, m map[string]int, what string) (string, bool) {
	side := 0
	if what == "row" {
		side = 1
	}
	if p.folded[side] == nil {
		f := make(map[string]string, len(m))
		for given := range m {
			k := strings.ToLower(given)
			if _, two := f[k]; two {
				f[k] = ""
				continue
			}
			f[k] = given
		}
		p.folded[side] = f
	}
	given := p.folded[side][strings.ToLower(id)]
	return given, given != ""
}

// unknownQuery and unknownRow record an id missing from the queries' or
// the rows' ids, counted distinct in Note.
func (p *PairIDs) unknownQuery(id string) { p.unknownQueries = addID(p.unknownQueries, id) }
func (p *PairIDs) unknownRow(id string)   { p.unknownRows = addID(p.unknownRows, id) }

func addID(m map[string]struct{}, id string) map[string]struct{} {
	if m == nil {
		m = map[string]struct{}{}
	}
	m[id] = struct{}{}
	return m
}

// Header reports whether a text file's first line (query, row) reads as
// a header rather than a pair: a side of row numbers that is not one, or
// sides named by ids none of which knows its id.
func (p *PairIDs) Header(query, row string) bool {
	known := false
	for _, s := range []struct {
		id string
		m  map[string]int
	}{{query, p.queries}, {row, p.rows}} {
		if s.m == nil {
			if _, err := strconv.Atoi(s.id); err != nil {
				return true
			}
			continue
		}
		_, ok := s.m[s.id]
		known = known || ok
	}
	return p.Named() && !known
}

// Note warns of the pairs left out for their ids, and of pairs scored
// both ways, or is "" when there are none.
func (p *PairIDs) Note() string {
	var parts []string
	switch {
	case p.Unknown == 1:
		parts = append(parts, fmt.Sprintf("1 pair names an id that is not among the given ids (%s): left out", p.First))
	case p.Unknown > 1:
		parts = append(parts, fmt.Sprintf("%d pairs name ids that are not among the given ids (the first: %s): left out (%s, %s)", p.Unknown, p.First,
			distinctIDs(len(p.unknownQueries), "distinct query id"), distinctIDs(len(p.unknownRows), "row id")))
	}
	if h := p.caseHint(); h != "" {
		parts = append(parts, h)
	}
	if p.Conflicts > 0 {
		parts = append(parts, fmt.Sprintf("%s scored as relevant and also %s (the first: %s): kept relevant", counted(p.Conflicts, "pair"), p.below(), p.FirstConflict))
	}
	return strings.Join(parts, "; ")
}

// caseHint says how many of the pairs left out name a given id but for
// case, or is "" when none does.
func (p *PairIDs) caseHint() string {
	if p.caseOnly == 0 {
		return ""
	}
	verb := "name"
	if p.caseOnly == 1 {
		verb = "names"
	}
	return fmt.Sprintf("%d of them %s a given id but for case (the first: %s): ids are matched exactly; write both sides' ids in one case (ids.str.lower() in pandas)", p.caseOnly, verb, p.firstCase)
}

// distinctIDs is "N WHATs", or "no WHAT" for none.
func distinctIDs(n int, what string) string {
	if n == 0 {
		return "no " + strings.TrimPrefix(what, "distinct ")
	}
	return counted(n, what)
}

// wholeIDs reads a float array of pairs (m, 2 or 3): its id columns as
// integers where every one is a whole number below 2²⁴ (float32, which
// the reader made of it, holds those exactly, and no other rounds to
// one), the third column as the scores; nil ids (no error) where some id
// is not, for Rows's refusal; an error for a score that is not finite.
func wholeIDs(a Array, name string) (ids []int64, scores []float32, err error) {
	const exact = 1 << 24
	m, w := a.Shape[0], a.Shape[1]
	ids = make([]int64, m*w)
	if w == 3 {
		scores = make([]float32, m)
	}
	for i := range m {
		for j := range 2 {
			v := float64(a.F32[w*i+j])
			if v != math.Trunc(v) || math.Abs(v) >= exact {
				return nil, nil, nil
			}
			ids[w*i+j] = int64(v)
		}
		if w == 3 {
			s := a.F32[w*i+2]
			if f := float64(s); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, nil, fmt.Errorf("%s: pair %d: score %v is not a finite number", name, i, s)
			}
			scores[i] = s
		}
	}
	return ids, scores, nil
}

// Rows resolves an (m, 2) array of pairs — integers or strings — named
// name in errors, or an (m, 3) one whose third column scores each pair as
// a qrels file does (pairs scored 0 or less are left out); an error too
// when no pair is left.
func (p *PairIDs) Rows(a Array, name string) ([][2]int, error) {
	// A numeric table's to_numpy() (ids and a float score: float64): its
	// ids taken where each is a whole number float32 holds exactly.
	var scores []float32
	if a.F32 != nil && len(a.Shape) == 2 && (a.Shape[1] == 2 || a.Shape[1] == 3) {
		ids, sc, err := wholeIDs(a, name)
		if err != nil {
			return nil, err
		}
		if ids != nil {
			a, scores = Array{Shape: a.Shape, I64: ids}, sc
		}
	}
	if a.I64 == nil && a.Str == nil || len(a.Shape) != 2 || a.Shape[1] != 2 && a.Shape[1] != 3 {
		hint := ""
		if a.F32 != nil && len(a.Shape) == 2 && (a.Shape[1] == 2 || a.Shape[1] == 3) {
			// A float array of pairs: ids as floats, which float32 would
			// round above 2²⁴.
			hint = "; a float array holds the ids as floats: give the relevant pairs as integers (p[p[:, 2] > 0, :2].astype(np.int64)), or the pairs as strings, or a .tsv"
		}
		if a.Str != nil && len(a.Shape) == 2 && a.Shape[1] > 3 {
			hint = "; an interaction log's columns? give the query's (the user's) and the row's (the item's) id columns, log[:, [0, 1]], after keeping the rows that count (a time window, the events)"
		}
		if len(a.Shape) == 2 && (a.Shape[0] == 2 || a.Shape[0] == 3) && a.Shape[1] > 3 && hint == "" {
			hint = fmt.Sprintf("; transposed? its %d rows would be the columns: give pairs.T", a.Shape[0])
		}
		return nil, fmt.Errorf("%s: dtype %s, shape %s: want pairs (m, 2) of integers or strings, or (m, 3) with a score each%s", name, a.Kind(), FormatShape(a.Shape), hint)
	}
	w := a.Shape[1]
	if w == 2 {
		if err := p.noScores(name); err != nil {
			return nil, err
		}
	}
	pairs := make([][2]int, 0, a.Shape[0])
	if w == 2 && a.I64 != nil && p.queries == nil && p.rows == nil {
		// Row numbers as integers: as they are, without the round trip
		// through strings that ids need (94.7 M pairs: 2 × 10⁸ strings).
		for i := range a.Shape[0] {
			pairs = append(pairs, [2]int{int(a.I64[2*i]), int(a.I64[2*i+1])})
		}
		return p.left(pairs, name, 0)
	}
	unscored := p.Unscored
	for i := range a.Shape[0] {
		var q, r string
		if a.Str != nil {
			q, r = a.Str[w*i], a.Str[w*i+1]
		} else {
			q, r = strconv.FormatInt(a.I64[w*i], 10), strconv.FormatInt(a.I64[w*i+1], 10)
		}
		p.checkRange(q, r, i, false)
		if w == 3 && i == 0 && a.Str != nil {
			if form := TrialList(a.Str[:3]); form != "" {
				return nil, fmt.Errorf("%s: pair 0: %w", name, trialListError(strings.Join(a.Str[:3], " "), form))
			}
		}
		if w == 3 {
			var score float64
			if a.Str != nil {
				s, err := finiteScore(a.Str[w*i+2])
				if err != nil && i == 0 && headerRow(a.Str[:3]) {
					// np.loadtxt(path, dtype=str) of a file with a header.
					return nil, fmt.Errorf("%s: pair 0: %q, %q, %q reads as a header row, not a pair: leave it out (np.loadtxt(..., skiprows=1), or pairs[1:])", name, a.Str[0], a.Str[1], a.Str[2])
				}
				if err != nil {
					return nil, fmt.Errorf("%s: pair %d: %w%s", name, i, err, wordScoreHint(a.Str[w*i+2], ""))
				}
				score = s
			} else if scores != nil {
				score = float64(scores[i])
			} else {
				score = float64(a.I64[w*i+2])
			}
			p.score(q, r, p.relevant(score))
			if !p.relevant(score) {
				if score <= 0 {
					p.keepZero(q, r)
				}
				if err := p.judged(q, r, score); err != nil {
					return nil, fmt.Errorf("%s: pair %d: %w", name, i, err)
				}
				continue
			}
		}
		qi, ri, ok, err := p.Resolve(q, r)
		if err != nil {
			return nil, fmt.Errorf("%s: pair %d: %w", name, i, err)
		}
		if ok {
			pairs = append(pairs, [2]int{qi, ri})
		}
	}
	if err := p.rangeError(name); err != nil {
		return nil, err
	}
	return p.left(pairs, name, p.Unscored-unscored)
}

// pairRanges is what the row numbers of the pairs read span, and the
// first pair that names one out of range.
type pairRanges struct {
	pairs, bad int
	lo, hi     [2]int
	first      string // "pair 160 names row 361, there are 360 rows of embeddings"
}

// checkRange records the row numbers of the pair (query, row), given at
// pair or line at ("pair 160", "line 5"), for PairIDs.rangeError: each
// side named by row numbers whose count is given.
func (p *PairIDs) checkRange(query, row string, at int, line bool) {
	if p.NQueries <= 0 && p.NRows <= 0 || p.queries != nil && p.rows != nil {
		return
	}
	rg := &p.ranges
	if rg.pairs == 0 {
		rg.lo, rg.hi = [2]int{math.MaxInt, math.MaxInt}, [2]int{math.MinInt, math.MinInt}
	}
	rg.pairs++
	bad := ""
	for c, side := range [2]struct {
		id    string
		named bool
		n     int
		what  string
	}{{query, p.queries != nil, p.NQueries, "queries"}, {row, p.rows != nil, p.NRows, "rows of embeddings"}} {
		v, err := strconv.Atoi(strings.TrimSpace(side.id))
		if side.named || side.n <= 0 || err != nil {
			continue
		}
		rg.lo[c], rg.hi[c] = min(rg.lo[c], v), max(rg.hi[c], v)
		if (v < 0 || v >= side.n) && bad == "" {
			bad = fmt.Sprintf("%s %d names %s %d, there are %d %s", map[bool]string{false: "pair", true: "line"}[line], at, [2]string{"query", "row"}[c], v, side.n, side.what)
		}
	}
	if bad != "" {
		if rg.bad++; rg.first == "" {
			rg.first = bad
		}
	}
}

// rangeError is the refusal of pairs of which one names a row number out
// of range (checkRange), nil where none does.
func (p *PairIDs) rangeError(name string) error {
	rg := p.ranges
	if rg.bad == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s%s", name, rg.first, OutOfRange(rg.bad, rg.pairs, rg.lo, rg.hi, p.NQueries, p.NRows))
}

// OutOfRange says, for pairs of which bad of all name a query or row out
// of range, spanning queries lo[0] … hi[0] and rows lo[1] … hi[1] of
// nQueries and nRows, what the ranges suggest: ids counted from 1, or the
// queries' and rows' files (or the pairs' columns) swapped, or ids where
// row numbers are read.
func OutOfRange(bad, all int, lo, hi [2]int, nQueries, nRows int) string {
	span := func(c int) string {
		if lo[c] > hi[c] {
			return "named by ids"
		}
		return fmt.Sprintf("%d … %d", lo[c], hi[c])
	}
	msg := fmt.Sprintf(" (%d of the %d pairs name a query or row out of range; queries %s, rows %s", bad, all, span(0), span(1))
	switch n := [2]int{nQueries, nRows}; {
	case lo[0] >= 0 && lo[1] >= 0 && hi[0] < n[1] && hi[1] < n[0]:
		msg += ": they fit the other way round — are -queries and -embeddings swapped, or the pairs' columns (query first, then row)?"
	case lo[0] >= 1 && lo[1] >= 1 && hi[0] <= n[0] && hi[1] <= n[1]:
		msg += ": ids counted from 1? Rows are numbered from 0: give pairs − 1"
	case hi[0] >= 10*n[0] || hi[1] >= 10*n[1]:
		// MS MARCO's and BEIR's ids are numbers far beyond the rows.
		msg += ": the columns are read as row numbers; ids as a qrels file names them (1000000, \"doc17\") need the rows' ids: -query-ids FILE and -ids FILE (query_ids= and ids= in Python), one a row in row order"
	case hi[0] < n[0] && hi[1] >= n[1] || hi[1] < n[1] && hi[0] >= n[0]:
		msg += ": a shorter file of embeddings than the pairs were made for?"
	}
	return msg + ")"
}

// maxZero bounds the pairs judged not relevant that PairIDs keeps for
// ReversedWarning.
const maxZero = 1 << 16

// keepZero keeps the pair (query, row), judged not relevant, for
// ReversedWarning, where its ids (or row numbers) name rows.
func (p *PairIDs) keepZero(query, row string) {
	if len(p.zero) >= maxZero {
		return
	}
	side := func(id string, m map[string]int, n int) (int, bool) {
		id = strings.TrimSpace(id)
		if m != nil {
			v, ok := m[id]
			return v, ok
		}
		v, err := strconv.Atoi(id)
		return v, err == nil && v >= 0 && (n <= 0 || v < n)
	}
	q, okQ := side(query, p.queries, p.NQueries)
	r, okR := side(row, p.rows, p.NRows)
	if okQ && okR {
		p.zero = append(p.zero, [2]int{q, r})
	}
}

// ReversedWarning says, where the pairs read hold pairs judged not
// relevant (scored 0 or less) beside relevant ones of the same queries,
// and the former lie nearer their queries than the latter in most
// comparisons, that the scores look reversed: the columns of a
// triplet's positive and negative swapped, or a label where 0 is the
// relevant one (Hugging Face's NLI labels: 0 entailment, 2 contradiction)
// read as a score. pairs are the relevant pairs; queries (nil: the rows
// are their own queries) and rows the embeddings, of dimension d. It is
// "" otherwise, and where Judged (the plan's own check then compares the
// same pairs: Plan.Inspect).
func (p *PairIDs) ReversedWarning(pairs [][2]int, queries, rows []float32, d int) string {
	if p.Judged || len(p.zero) == 0 || d <= 0 {
		return ""
	}
	if queries == nil {
		queries = rows
	}
	nq, nr := len(queries)/d, len(rows)/d
	rel := map[int][]int{}
	for _, pr := range pairs {
		if pr[0] >= 0 && pr[0] < nq && pr[1] >= 0 && pr[1] < nr {
			rel[pr[0]] = append(rel[pr[0]], pr[1])
		}
	}
	zero := map[int][]int{}
	for _, pr := range p.zero {
		if _, ok := rel[pr[0]]; ok && pr[1] < nr {
			zero[pr[0]] = append(zero[pr[0]], pr[1])
		}
	}
	var closer, comparisons float64
	qs := slices.Sorted(maps.Keys(zero))
	for _, q := range qs[:min(len(qs), 4096)] {
		x := queries[q*d : (q+1)*d]
		for _, r := range rel[q] {
			dr := rowDist(x, rows[r*d:(r+1)*d])
			for _, z := range zero[q] {
				switch dz := rowDist(x, rows[z*d:(z+1)*d]); {
				case dr < dz:
					closer++
				case dr == dz:
					closer += 0.5
				}
				comparisons++
			}
		}
	}
	if comparisons < 20 || closer/comparisons >= 0.4 {
		return ""
	}
	return fmt.Sprintf("the pairs scored 0 or less lie nearer their queries than the relevant pairs: of %.0f comparisons of a relevant row and a row judged not relevant of one query (%d queries), the relevant one was the nearer in %.1f%%, where 50%% is chance and a model's judgements give more — are the scores reversed? A triplet's positive and negative columns swapped, or a label whose 0 is the relevant one read as a score (Hugging Face's NLI labels: 0 entailment, 1 neutral, 2 contradiction: score entailment 1, the rest 0)",
		comparisons, min(len(qs), 4096), 100*closer/comparisons)
}

// judged keeps the pair (query, row), scored score, among Negatives
// when Judged and it is judged not relevant (0 or less).
func (p *PairIDs) judged(query, row string, score float64) error {
	if p.MinScore != nil && score > 0 && score < *p.MinScore { // relevant at a lower grade (Graded)
		// Looked up without counting an unknown id: such a pair is left
		// out of the positives, as one scored 0 is, and counted with them
		// (UnscoredNote), not among the unknown ids a refusal blames.
		if q, okQ := p.lookup(query, p.queries); okQ {
			if r, okR := p.lookup(row, p.rows); okR {
				p.Graded = append(p.Graded, [2]int{q, r})
			}
		}
		return nil
	}
	if !p.Judged || score > 0 {
		return nil
	}
	q, r, ok, err := p.Resolve(query, row)
	if err != nil || !ok {
		return err
	}
	p.Negatives = append(p.Negatives, [2]int{q, r})
	p.negKeys = append(p.negKeys, [2]string{query, row})
	return nil
}

// judgedCounts counts Negatives' pairs that become the queries' negatives
// and those also scored relevant, which stay relevant (Conflicts warns
// of them).
func (p *PairIDs) judgedCounts() (negatives, relevant int) {
	seen := make(map[[2]int]bool, len(p.Negatives))
	for i, pr := range p.Negatives {
		if seen[pr] {
			continue // a pair written twice counts once
		}
		seen[pr] = true
		if i < len(p.negKeys) && p.scored[p.negKeys[i]] == 3 {
			relevant++
		} else {
			negatives++
		}
	}
	return negatives, relevant
}

// UnscoredNote says how many pairs were left out as judged not relevant
// (scored 0 or less, as BEIR's qrels mark them: what a qrels file
// usually holds, a note rather than a warning), or is "".
func (p *PairIDs) UnscoredNote() string {
	unscored, unknown := p.leftOut(p.Judged)
	more := "" // the pairs of ids not given, which no other note counts
	switch {
	case unknown > 0 && unscored == 0:
		unscored, more = unknown, ", every one naming ids not given"
	case unknown == 1:
		more = " (and 1 more naming an id not given)"
	case unknown > 1:
		more = fmt.Sprintf(" (and %d more naming ids not given)", unknown)
	}
	if unscored == 0 && unknown == 0 {
		return "" // every one of them also scored relevant: the conflicts' note says so
	}
	if p.Judged {
		neg, rel := p.judgedCounts() // of the unscored pairs, those that are negatives
		given := fmt.Sprintf("%d naming given rows", neg)
		if rel > 0 {
			given += fmt.Sprintf(", besides %d also scored relevant, kept relevant", rel)
		}
		if p.MinScore != nil {
			return fmt.Sprintf("%s scored %s: no positives — those above 0 relevant at a lower grade, no query's negatives either —, and those scored 0 or less (%s) judged not relevant: the queries' negatives", counted(unscored, "pair"), p.below(), given)
		}
		return fmt.Sprintf("%s scored 0 or less, judged not relevant: the queries' negatives (%s)", counted(unscored, "pair"), given)
	}
	if p.MinScore != nil {
		return fmt.Sprintf("%s scored %s%s: left out of the positives (those scored above 0, relevant at a lower grade, are no query's negatives either)", counted(unscored, "pair"), p.below(), more)
	}
	return fmt.Sprintf("%s scored 0 or less%s, judged not relevant: left out", counted(unscored, "pair"), more)
}

// leftOut counts the distinct pairs of given ids scored as not relevant
// (0 or less, or below MinScore) and never as relevant: what UnscoredNote
// says were left out. Unscored counts their lines — a pair written twice
// twice, one naming an unknown id (which Note counts), one also scored
// relevant (kept relevant, which Note says) — and a BEIR export's 4 510
// lines were 4 507 pairs. With all, it counts every distinct pair scored
// as not relevant, which judged negatives break down by what became of
// them.
func (p *PairIDs) leftOut(all bool) (known, unknown int) {
	for k, bits := range p.scored {
		switch {
		case all && bits&2 != 0:
			known++
		case bits != 2:
		case p.has(k[0], p.queries) && p.has(k[1], p.rows):
			known++
		default:
			unknown++
		}
	}
	return known, unknown
}

// lookup is an id's row, without counting an unknown one (Resolve
// counts it): a row number where m is nil, else m's, blanks around the
// id not part of it.
func (p *PairIDs) lookup(id string, m map[string]int) (int, bool) {
	if m == nil {
		v, err := strconv.Atoi(id)
		return v, err == nil
	}
	v, ok := m[id]
	if !ok {
		v, ok = m[strings.TrimSpace(id)]
	}
	return v, ok
}

// has says lookup finds id.
func (p *PairIDs) has(id string, m map[string]int) bool {
	_, ok := p.lookup(id, m)
	return ok
}

// left is Left, saying when all of the call's pairs (unscored of them
// scored 0 or less) were judged not relevant.
func (p *PairIDs) left(pairs [][2]int, name string, unscored int) ([][2]int, error) {
	if len(pairs) == 0 && unscored > 0 && p.Unknown == 0 {
		if p.MinScore != nil {
			return nil, fmt.Errorf("%s: no pairs: all %d are scored %s", name, unscored, p.below())
		}
		return nil, fmt.Errorf("%s: no pairs: all %d are scored 0 or less, which marks a pair not relevant (BEIR's qrels); give the relevant pairs a positive score", name, unscored)
	}
	return p.Left(pairs, name)
}

// Left is pairs, or an error saying why none is left.
func (p *PairIDs) Left(pairs [][2]int, name string) ([][2]int, error) {
	if len(pairs) > 0 {
		return pairs, nil
	}
	if p.Unknown > 0 {
		swapped := ""
		if p.swapped == p.Unknown {
			swapped = ": every pair's query id is a row's and its row id a query's — are the columns swapped, or the queries and the rows (their embeddings and ids) each given in the other's place? A pair is the query's id, then the relevant row's (BEIR's qrels: query-id, corpus-id, score)"
		} else if 10*p.swapped >= 9*p.Unknown {
			swapped = fmt.Sprintf(": %d of them name a row's id as the query and a query's as the row — are the columns swapped, or the queries and the rows (their embeddings and ids) each given in the other's place? A pair is the query's id, then the relevant row's (BEIR's qrels: query-id, corpus-id, score)", p.swapped)
		} else {
			var like []string
			if p.exampleQuery != "" {
				like = append(like, fmt.Sprintf("the first given query id is %q", p.exampleQuery))
			}
			if p.exampleRow != "" {
				like = append(like, fmt.Sprintf("the first given row id %q", p.exampleRow))
			}
			if like != nil {
				swapped = "; " + strings.Join(like, ", ")
			}
		}
		if h := p.caseHint(); h != "" {
			swapped += "; " + h
		}
		return nil, fmt.Errorf("%s: no pairs: all %d name ids that are not among the given ids (the first: %s)%s", name, p.Unknown, p.First, swapped)
	}
	return nil, fmt.Errorf("%s: no pairs", name)
}

// Labels are an (n,) array of labels or group ids, or an (n, 1) column
// of them (what, in errors; name is the array's source): integers as they are, strings numbered in their
// sorted order (LabelCodes), with their names.
func Labels(a Array, name, what string) (ids []int64, names []string, err error) {
	if what == "labels" {
		a = zeroOne(a) // a float one-hot target
	}
	if a.I64 == nil && a.Str == nil {
		hint := ""
		if a.F32 != nil {
			// The array the message is about, named as a variable:
			// blocks.astype, not labels.astype, for -blocks.
			v := strings.ReplaceAll(what, "-", "_")
			if strings.ContainsAny(v, " ") || v == "" {
				v = "ids"
			}
			hint = fmt.Sprintf(" (whole numbers stored as floats: save them as integers, %s.astype(np.int64))", v)
			for i, x := range a.F32 {
				if x == x && x != float32(math.Trunc(float64(x))) {
					// astype would truncate it: a fraction is no label.
					at := fmt.Sprintf("element %d", i)
					if len(a.Shape) == 2 {
						at = fmt.Sprintf("row %d, column %d", i/a.Shape[1], i%a.Shape[1])
					}
					hint = fmt.Sprintf(" (%s is %v, which is no label: labels are integers — a multi-hot matrix's 0s and 1s — or strings)", at, x)
					break
				}
			}
			nan := 0
			for _, x := range a.F32 {
				if x != x {
					nan++
				}
			}
			if nan > 0 {
				// astype(np.int64) would make NaN a huge negative number:
				// pandas' integer column with missing values is this.
				hint = fmt.Sprintf(" (%d of them NaN, pandas' missing value: give those rows -1, %s.fillna(-1).astype(np.int64), and leave them out with -missing-labels drop; missing_labels=\"drop\" in Python)", nan, v)
			}
		}
		return nil, nil, fmt.Errorf("%s: dtype %s, want integer %s (any integer type) or strings%s", name, a.Kind(), what, hint)
	}
	if ids, ok := oneHot(a); ok && what == "labels" {
		return ids, nil, nil
	}
	a = column(a)
	if len(a.Shape) != 1 {
		return nil, nil, fmt.Errorf("%s: shape %s, want one %s per row, (n,)%s", name, FormatShape(a.Shape), strings.TrimSuffix(what, "s"), multiLabel(a, what))
	}
	if a.Str != nil {
		ids, names := LabelCodes(a.Str)
		return ids, names, nil
	}
	return a.I64, nil, nil
}

// column is an (n, 1) array — a column vector, as scikit-learn's
// y.reshape(-1, 1) and pandas' df[["label"]].to_numpy() give one label or
// id a row — as the (n,) array of its values; a.Shape is not changed in
// place.
func column(a Array) Array {
	if len(a.Shape) == 2 && a.Shape[1] == 1 {
		a.Shape = []int{a.Shape[0]}
	}
	return a
}

// zeroOne is a floating-point (n, C) matrix of exactly 0s and 1s — a
// multi-hot or one-hot target as Keras and PyTorch keep one, float — as
// integers; any other array as it is.
func zeroOne(a Array) Array {
	if a.F32 == nil || len(a.Shape) != 2 || a.Shape[1] < 2 {
		return a
	}
	for _, v := range a.F32 {
		if v != 0 && v != 1 {
			return a
		}
	}
	ints := make([]int64, len(a.F32))
	for i, v := range a.F32 {
		ints[i] = int64(v)
	}
	return Array{Shape: a.Shape, I64: ints, Dtype: a.Dtype}
}

// oneHot reads a one-hot (n, C) matrix — 0s and 1s, exactly one 1 a row,
// as keras' to_categorical and pandas' get_dummies write one label a row
// — as the labels it encodes, each row's column of its 1; ok is false for
// any other array.
func oneHot(a Array) (ids []int64, ok bool) {
	if a.I64 == nil || len(a.Shape) != 2 || a.Shape[1] < 2 || a.Shape[0] < 1 {
		return nil, false
	}
	n, c := a.Shape[0], a.Shape[1]
	ids = make([]int64, n)
	for i := range n {
		ones := 0
		for j, v := range a.I64[i*c : (i+1)*c] {
			switch v {
			case 0:
			case 1:
				ones++
				ids[i] = int64(j)
			default:
				return nil, false
			}
		}
		if ones != 1 {
			return nil, false
		}
	}
	return ids, true
}

// LabelSets reads a multi-hot (n, C) matrix of 0s and 1s (integers or
// bool, as scikit-learn's MultiLabelBinarizer makes it, or floats that are
// exactly 0 and 1, as Keras' and PyTorch's targets are; name is its
// source) as several labels per row: row i's labels are the columns of
// its 1s. ok is false, with no error, for any other array, and for a
// one-hot matrix (exactly one 1 a row: one label a row, whose rows
// sharing a label are a class): Labels reads those.
func LabelSets(a Array, name string) (sets [][]int32, ok bool, err error) {
	a = zeroOne(a)
	if a.I64 == nil || len(a.Shape) != 2 || a.Shape[1] < 2 {
		return nil, false, nil
	}
	if _, one := oneHot(a); one {
		return nil, false, nil
	}
	n, c := a.Shape[0], a.Shape[1]
	if c > math.MaxInt32 {
		return nil, false, fmt.Errorf("%s: %d columns of labels: too many", name, c)
	}
	count := 0
	for _, v := range a.I64 {
		switch v {
		case 0:
		case 1:
			count++
		default:
			return nil, false, nil
		}
	}
	all := make([]int32, 0, count) // one backing array for every row's labels
	sets = make([][]int32, n)
	for i := range n {
		start := len(all)
		for j, v := range a.I64[i*c : (i+1)*c] {
			if v == 1 {
				all = append(all, int32(j))
			}
		}
		sets[i] = all[start:len(all):len(all)]
	}
	return sets, true, nil
}

// MissingInLabelSets applies mode to the values of several labels a row
// that mark a missing label — a negative integer (Hugging Face's -1 for a
// ClassLabel), or a string MissingString takes for one (strs: the labels
// are strings) — where sets number the values as names (a list column's,
// table.ColumnLabelSets). Such a value shared by rows would make them one
// another's positives: MissingRefused refuses it, naming how many rows
// list each (source names the labels); MissingDropped takes it for no
// label, left out of the row's labels (a row left with none is no query,
// as a row of no label) and of the names, the others renumbered in their
// order (the sets and names of lists without it); MissingClass keeps it, a
// label like any other. It returns the sets and their names.
func MissingInLabelSets(sets [][]int32, names []string, strs bool, mode MissingLabels, source string) ([][]int32, []string, error) {
	marks := make([]bool, len(names))
	found := false
	for j, name := range names {
		if strs {
			marks[j] = MissingString(name)
		} else {
			marks[j] = strings.HasPrefix(name, "-") || name == NullMark
		}
		found = found || marks[j]
	}
	if !found {
		return sets, names, nil
	}
	if mode == MissingClass { // a label like any other: a null named "null", in its sorted place
		if !slices.Contains(names, NullMark) {
			return sets, names, nil
		}
		if !strs { // numbers' names, in their numbers' order: renamed in place
			named := slices.Clone(names)
			named[slices.Index(named, NullMark)] = "null"
			return sets, named, nil
		}
		codes := make([]int64, len(names))
		for j := range codes {
			codes[j] = int64(j)
		}
		codes, named := NamedNull(codes, names)
		out := make([][]int32, len(sets))
		for i, ls := range sets {
			out[i] = make([]int32, len(ls))
			for k, l := range ls {
				out[i][k] = int32(codes[l])
			}
			slices.Sort(out[i])
		}
		return out, named, nil
	}
	if mode == MissingRefused {
		count := make([]int, len(names))
		firstRow := make([]int, len(names))
		for i, ls := range sets {
			for _, l := range ls {
				if marks[l] {
					if count[l] == 0 {
						firstRow[l] = i
					}
					count[l]++
				}
			}
		}
		var parts []string
		for j, c := range count {
			if c > 0 {
				name := strconv.Quote(names[j])
				if names[j] == NullMark {
					name = "null"
				}
				parts = append(parts, fmt.Sprintf("%s: %s, the first row %d", name, counted(c, "row"), firstRow[j]))
			}
		}
		return nil, nil, fmt.Errorf("%s: several labels a row, and some rows list a value that marks a missing label (%s; rows numbered from 0): shared, it would make those rows one another's positives; -missing-labels drop takes it for no label, left out of the row's labels, class for a label like any other", source, strings.Join(parts, "; "))
	}
	code := make([]int32, len(names)) // a kept name's new number
	var kept []string
	for j, name := range names {
		if !marks[j] {
			code[j] = int32(len(kept))
			kept = append(kept, name)
		}
	}
	out := make([][]int32, len(sets))
	for i, ls := range sets {
		row := make([]int32, 0, len(ls))
		for _, l := range ls {
			if !marks[l] {
				row = append(row, code[l])
			}
		}
		out[i] = row
	}
	return out, kept, nil
}

// MultiLabel is what to do with several labels per row (multi-label data:
// a paper's subject categories, an image's tags) given otherwise than as
// a multi-hot matrix, which ccs reads as label sets (LabelSets): the rows
// their own queries, related when they share a label; docs/your-data.md
// says what the guarantee then covers.
const MultiLabel = "several labels per row (multi-label) are not classes: give them as a multi-hot (n, C) matrix of 0s and 1s — " +
	"M = MultiLabelBinarizer().fit_transform(lists) (sklearn.preprocessing); np.save(\"labels.npy\", M) — " +
	"as -labels (labels=M, or labels=lists, in Python): rows that share a label are then one another's positives, the rows their own queries (-allow-fewer for labels of few rows); " +
	"or give one label per row, such as each row's primary label (docs/your-data.md, \"Several labels per row\")"

// multiLabel is the advice for a 2-D labels array that looks like several
// labels per row: a multi-hot matrix of 0s and 1s, or rows of names;
// empty otherwise.
func multiLabel(a Array, what string) string {
	if what != "labels" || len(a.Shape) != 2 || a.Shape[1] < 2 {
		return ""
	}
	if a.Str != nil {
		return " (" + strconv.Itoa(a.Shape[1]) + " names a row: " + MultiLabel + ")"
	}
	other, at := 0, -1
	for i, v := range a.I64 {
		if v != 0 && v != 1 {
			if other++; at < 0 {
				at = i
			}
		}
	}
	if other > 0 {
		if 100*other > len(a.I64) { // not a matrix of tags
			return ""
		}
		// Mostly 0s and 1s: a multi-hot matrix with a stray value.
		c := a.Shape[1]
		return fmt.Sprintf(" (a multi-hot matrix, several labels a row, holds 0s and 1s; row %d, column %d is %d%s: mark each label 0 or 1, (M > 0).astype(np.int64))",
			at/c, at%c, a.I64[at], map[bool]string{true: "", false: fmt.Sprintf(", and %d more values are neither", other-1)}[other == 1])
	}
	return " (0s and 1s: a multi-hot matrix, several labels a row, which make the rows their own queries, related by the labels they share: give it as the labels of rows alone, without groups, views or pairs)"
}

// IDStrings are a (n,) array of ids, strings or integers (in decimal),
// or an (n, 1) column of them, named name in errors.
func IDStrings(a Array, name string) ([]string, error) {
	a = column(a)
	if a.I64 == nil && a.Str == nil || len(a.Shape) != 1 {
		return nil, fmt.Errorf("%s: dtype %s, shape %s: want one id per row, (n,) strings or integers", name, a.Kind(), FormatShape(a.Shape))
	}
	ids := a.Str
	for _, v := range a.I64 {
		ids = append(ids, strconv.FormatInt(v, 10))
	}
	return ids, nil
}

// TrialList reports whether three fields read as a line of a
// speaker-verification trial list rather than a relevance pair: "voxceleb"
// for VoxCeleb's (target 1 or 0, enrolment, test: "1 id10270/x6uYqmx31kE/00001.wav
// id10270/8jEAjG6SegY/00008.wav"), "kaldi" for Kaldi's and NIST's
// (enrolment, test, target or nontarget); "" otherwise. A pair's score
// column is a number, so neither form is one: read as pairs, the first
// line of VoxCeleb's would be taken for a header and the second refused
// for its score.
func TrialList(fields []string) string {
	if len(fields) != 3 {
		return ""
	}
	_, err0 := strconv.ParseFloat(fields[1], 64)
	_, err2 := strconv.ParseFloat(fields[2], 64)
	switch {
	case (fields[0] == "0" || fields[0] == "1") && err0 != nil && err2 != nil:
		return "voxceleb"
	}
	switch strings.ToLower(fields[2]) {
	case "nontarget", "non-target", "nontgt", "imp", "impostor":
		return "kaldi"
	case "target", "tgt":
		// A header may name its third column "target": utterance ids hold
		// digits, a header's names seldom do.
		if strings.ContainsAny(fields[0], "0123456789") && strings.ContainsAny(fields[1], "0123456789") {
			return "kaldi"
		}
	}
	return ""
}

// trialListError refuses a trial list given as relevance pairs, with the
// way to use one: its trials are a test of a set calibrated on other
// speakers, not pairs to split, fit and calibrate on.
func trialListError(line, form string) error {
	order := "target (1 or 0), enrolment, test, as VoxCeleb's lists"
	if form == "kaldi" {
		order = "enrolment, test, target or nontarget, as Kaldi's and NIST's"
	}
	return fmt.Errorf("%q reads as a speaker-verification trial (%s), not a relevance pair (query, relevant row[, score]): "+
		"a trial list is the test of a verification set, not pairs to split, fit and calibrate on (as pairs, its enrolments would be the only queries, "+
		"every split's anchors the trial speakers, and the non-target trials dropped). "+
		"Bundle the other speakers as groups — the speaker is the first component of a VoxCeleb path: cut -d/ -f1 utt.txt > spk.txt; "+
		"ccs bundle -embeddings emb.npy -groups spk.txt -allow-fewer, the trial speakers' rows left out — calibrate a set on them, "+
		"and judge the trials with it (ccs evaluate -set SET.json -trials FILE -embeddings emb.npy -ids utt.txt; s.contains(E[enrol], E[test]) in Python): docs/your-data.md, \"Speaker verification\"", line, order)
}

// ClassRows are the rows of labels of class c, and, where there are
// none, the classes labels hold, as a message lists them (named by
// names, where given: label i is names[i]).
func ClassRows(labels []int64, c int64, names []string) (rows []int, classes string) {
	for i, l := range labels {
		if l == c {
			rows = append(rows, i)
		}
	}
	if len(rows) > 0 {
		return rows, ""
	}
	present := map[int64]bool{}
	for _, l := range labels {
		present[l] = true
	}
	return nil, labelList(slices.Sorted(maps.Keys(present)), MakeConfig{LabelNames: names})
}

// ReadQrels reads relevance pairs from text, one a line, as BEIR's qrels
// files hold them: query, relevant row and an optional score, separated by
// tabs, commas or spaces (a line with tabs split on them alone, one with
// commas on commas: an id may hold a space; pairFields), with an optional
// header line (above pandas' unnamed index, which is left out); pairs
// scored 0 or less are left out. ids resolves the names (PairIDs: ids, or
// row numbers). name names the text in errors (NAME:LINE).
func ReadQrels(in io.Reader, name string, ids *PairIDs) ([][2]int, error) {
	var pairs [][2]int
	unscored := ids.Unscored
	cols, colsLine := 0, 0  // the columns of the first line, and its number
	index := false          // pandas' unnamed index first (to_csv's ",query,row" header): left out
	lines, headers := 0, 0  // lines not blank, and header lines among them
	var headerLine []string // the header's fields
	var picked []int        // with Columns: the header's columns they name
	width := 0              // with Columns: the header's columns
	sc := bufio.NewScanner(in)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), " \r")
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // a UTF-8 byte-order mark (Excel's "CSV UTF-8", pandas' utf-8-sig)
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		lines++
		if line == 1 && strings.HasPrefix(text, ",") && strings.Count(text, ",") >= 2 && !strings.Contains(text, "\t") {
			index = true
		}
		if index {
			_, text, _ = strings.Cut(text, ",")
		}
		fields, empty, err := pairFields(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if len(ids.Columns) > 0 { // the named columns alone, the header's first
			if picked == nil {
				if picked, err = pickPairColumns(name, line, fields, ids.Columns); err != nil {
					return nil, err
				}
				width, colsLine, cols = len(fields), line, len(picked)
				ids.header = slices.Clone(ids.Columns)
				if len(picked) == 3 {
					ids.scoreColumn = ids.Columns[2]
				} else if score := slices.IndexFunc(fields, func(f string) bool { return scoreName(f) }); score >= 0 {
					ids.unnamedScore = fields[score] // a score column left out: ScoreNote
					ids.twoColumns = slices.Clone(ids.Columns)
				}
				headers, headerLine = headers+1, fields
				continue
			}
			if len(fields) != width {
				return nil, fmt.Errorf("%s:%d: %d columns, and the header (line %d) has %d", name, line, len(fields), colsLine, width)
			}
			sel := make([]string, len(picked))
			for i, j := range picked {
				sel[i] = fields[j]
			}
			fields, empty = sel, slices.Contains(sel, "") // an empty field of another column is not the pairs'
		}
		if empty {
			hint := ""
			if strings.HasPrefix(text, ",") && line == 1 {
				hint = " (a pandas index column? write the file with df.to_csv(path, index=False))"
			}
			return nil, fmt.Errorf("%s:%d: an empty field (%q): want query, relevant row [, score], each given%s", name, line, text, hint)
		}
		if len(fields) < 2 || len(fields) > 3 {
			return nil, fmt.Errorf("%s:%d: %s, want query, relevant row [, score]%s", name, line, columnsOf(fields, line == 1 && len(fields) >= 2 && ids.Header(fields[0], fields[1])), wideHint(fields))
		}
		if cols == 0 {
			cols, colsLine = len(fields), line
		} else if len(fields) != cols {
			return nil, fmt.Errorf("%s:%d: %d columns, and line %d has %d: every line gives a query, a relevant row and, if one does, a score", name, line, len(fields), colsLine, cols)
		}
		if len(fields) == 3 && line == colsLine {
			if form := TrialList(fields); form != "" {
				return nil, fmt.Errorf("%s:%d: %w", name, line, trialListError(text, form))
			}
		}
		if len(fields) == 3 {
			// A first line whose ids read as a pair's, its score a word
			// ("u1,i2,view": an event), is a pair, not a header.
			if _, err := finiteScore(fields[2]); line == colsLine && !ids.NoHeader && err != nil && ids.Header(fields[0], fields[1]) {
				// A header names its third column (score): a number
				// there is a pair's score, whatever its ids.
				if err := swappedHeader(fields); err != nil {
					return nil, fmt.Errorf("%s:%d: %w", name, line, err)
				}
				ids.scoreColumn, ids.header = fields[2], slices.Clone(fields)
				headers, headerLine = headers+1, fields
				continue // a header
			}
			score, err := finiteScore(fields[2])
			if err != nil && slices.EqualFunc(fields, ids.header, strings.EqualFold) {
				return nil, fmt.Errorf("%s:%d: the header of line %d again (%s): files put together with their headers? remove the repeats (grep -v %q)", name, line, colsLine, strings.Join(fields, ", "), fields[0])
			}
			if err != nil {
				column := ids.scoreColumn
				if strings.EqualFold(column, fields[2]) {
					// The first line was taken for a header, its
					// score a word like this one: a pair, not a name.
					column = ""
				}
				return nil, fmt.Errorf("%s:%d: %w%s", name, line, err, wordScoreHint(fields[2], column))
			}
			ids.score(fields[0], fields[1], ids.relevant(score))
			if !ids.relevant(score) {
				ids.checkRange(fields[0], fields[1], line, true)
				if score <= 0 {
					ids.keepZero(fields[0], fields[1])
				}
				if err := ids.judged(fields[0], fields[1], score); err != nil {
					return nil, fmt.Errorf("%s:%d: %w", name, line, err)
				}
				continue
			}
		} else if err := ids.noScores(name); err != nil {
			return nil, err
		} else if line == colsLine && !ids.NoHeader && ids.Header(fields[0], fields[1]) {
			if err := swappedHeader(fields); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, line, err)
			}
			ids.twoColumns = slices.Clone(fields)
			headers, headerLine = headers+1, fields
			continue
		}
		ids.checkRange(fields[0], fields[1], line, true)
		q, r, ok, err := ids.Resolve(fields[0], fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if ok {
			pairs = append(pairs, [2]int{q, r})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := ids.rangeError(name); err != nil {
		return nil, err
	}
	switch {
	case lines == 0:
		return nil, fmt.Errorf("%s: empty: no pairs (a text of pairs holds one a line: query, relevant row [, score])", name)
	case lines == headers:
		return nil, fmt.Errorf("%s: a header line (line %d: %s) and no pairs below it", name, colsLine, strings.Join(headerLine, ", "))
	}
	return ids.left(pairs, name, ids.Unscored-unscored)
}

// pickPairColumns finds names — query, row and an optional score column
// — among a text of pairs' header line (fields, at line), in that order.
func pickPairColumns(name string, line int, fields, names []string) ([]int, error) {
	if len(names) != 2 && len(names) != 3 {
		return nil, fmt.Errorf("%s:%s: want the pairs' columns QUERY,ROW or QUERY,ROW,SCORE", name, strings.Join(names, ","))
	}
	var at []int
	for _, n := range names {
		j := slices.Index(fields, strings.TrimSpace(n))
		if j < 0 {
			return nil, fmt.Errorf("%s:%d: no column %q in the header line (its columns: %s)%s", name, line, n, strings.Join(fields, ", "), suggest.DidYouMean(n, fields))
		}
		if slices.Contains(at, j) {
			return nil, fmt.Errorf("%s:%s: the column %q named twice: want the query's, the relevant row's and the score's, each its own", name, strings.Join(names, ","), n)
		}
		at = append(at, j)
	}
	return at, nil
}

// swappedHeader refuses a header line that names the relevant row's
// column first and the query's second ("corpus-id, query-id, score"): the
// columns are read by position, the query first, and ids of numbers
// would read as pairs the other way round, no error.
func swappedHeader(fields []string) error {
	norm := func(s string) string {
		return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s))
	}
	query := func(s string) bool {
		s = norm(s)
		return strings.Contains(s, "query") || strings.Contains(s, "question") || s == "qid" || s == "userid" || s == "user"
	}
	row := func(s string) bool {
		s = norm(s)
		return strings.Contains(s, "corpus") || strings.Contains(s, "doc") || strings.Contains(s, "passage") || s == "pid" || s == "itemid" || s == "item"
	}
	if row(fields[0]) && query(fields[1]) {
		named := fields[1] + "," + fields[0]
		if len(fields) > 2 {
			named += "," + fields[2]
		}
		return fmt.Errorf("the header names the columns %q, %q: the relevant row's first, the query's second; a pair's columns are read in order, the query's id first (BEIR's qrels: query-id, corpus-id, score): name them in that order after the file (-pairs FILE:%s; pairs=\"FILE:%s\" in Python), or write them so (df[[%q, %q, …]].to_csv(path, sep=\"\\t\", index=False))", fields[0], fields[1], named, named, fields[1], fields[0])
	}
	return nil
}

// columnsOf is "N columns" for a line of a text of pairs, with the
// columns' names when the line is a header.
func columnsOf(fields []string, header bool) string {
	if !header {
		return fmt.Sprintf("%d columns", len(fields))
	}
	return fmt.Sprintf("%d columns (%s)", len(fields), strings.Join(fields, ", "))
}

// wideHint is the way out for a line of a text of pairs with more than
// three columns: TREC's qrels (query, iteration 0, document, relevance),
// or a table of several columns — a recommender's interaction log, as
// pandas writes one (user_id, item_id, timestamp, event) — whose pairs
// are two of its columns; "" for fewer columns.
func wideHint(fields []string) string {
	switch {
	case len(fields) <= 3:
		return ""
	case len(fields) == 4 && (fields[1] == "0" || strings.EqualFold(fields[1], "Q0")):
		return `: TREC's qrels (query, iteration, document, relevance)? keep the first, third and fourth: awk '{print $1"\t"$3"\t"$4}'`
	}
	return `: a table of several columns, such as an interaction log, gives its pairs as two of them — the query's (the user's) id and the row's (the item's) — and a number scoring each pair, if any: keep the rows that count (a time window, the events) and those columns (docs/your-data.md, "Interaction logs")`
}

// wordScoreHint is the way out for a pair's score that is a word, not a
// number (an interaction log's event, "view"): column names the column
// the scores were read from, when a header named it.
// headerRow reports whether a row of a pairs array is a table's header:
// a score column named as qrels files and tables name it.
func headerRow(row []string) bool {
	switch strings.ToLower(strings.TrimSpace(row[2])) {
	case "score", "relevance", "label", "rel", "grade":
		return true
	}
	return false
}

func wordScoreHint(score, column string) string {
	if _, err := strconv.ParseFloat(score, 64); err == nil || score == "" {
		return ""
	}
	col := "the third column"
	if column != "" {
		col = fmt.Sprintf("the third column, %q,", column)
	}
	return ": " + col + " is read as each pair's relevance score; map its values to numbers (an interaction log's events: view 1, cart 2, purchase 3; an NLI label: entailment 1, neutral and contradiction 0 — pairs scored 0 or less are left out, -min-score, min_score= in Python, keeps the higher) or give two columns"
}

// unquote is a field of a text of pairs without the double quotes around
// it that a CSV writer puts around every field (csv.QUOTE_ALL, R's
// write.csv), "" inside it read as ".
func unquote(f string) string {
	if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
		return strings.ReplaceAll(f[1:len(f)-1], `""`, `"`)
	}
	return f
}

// pairFields splits a line of a text of pairs into its fields, without
// the double quotes a CSV writer puts around a field: on tabs where the
// line has any (BEIR's qrels are tab-separated, and an id may hold a
// space or a comma: "p 115"), else as a line of CSV where it has commas
// (encoding/csv: a quoted field may hold a comma or a doubled quote,
// "doc, 12"), else on runs of spaces (TREC's qrels, VoxCeleb's trial
// lists), the spaces around a tab- or comma-separated field trimmed.
// empty reports a tab- or comma-separated field left empty: read field by
// field, "q1<TAB>doc7<TAB>" would be the pair (q1, doc7) without its
// score, relevant. A quote opened and not closed on the line is an error.
func pairFields(line string) (fields []string, empty bool, err error) {
	switch {
	case strings.Contains(line, "\t"):
		fields = strings.Split(line, "\t")
	case strings.Contains(line, ",") && !strings.Contains(line, `"`):
		fields = strings.Split(line, ",") // CSV without quotes: no reader a line
	case strings.Contains(line, ","):
		if fields, err = csvFields(line); err != nil {
			return nil, false, err
		}
	default:
		fields = strings.Fields(line)
	}
	csvLine := !strings.Contains(line, "\t") && strings.Contains(line, ",")
	for i, f := range fields {
		if fields[i] = strings.TrimSpace(f); !csvLine { // csvFields took the quotes off
			fields[i] = unquote(fields[i])
		}
		empty = empty || fields[i] == ""
	}
	return fields, empty, nil
}

// csvFields reads a line of comma-separated fields as CSV (encoding/csv).
// A quote within an unquoted field (5" screen) is read as a character of
// it; a quoted field followed by spaces ("q0" , "d1") is split on its
// commas, its quotes taken off; a quote left open is an error.
func csvFields(line string) ([]string, error) {
	read := func(lazy bool) ([]string, error) {
		r := csv.NewReader(strings.NewReader(line))
		r.FieldsPerRecord, r.TrimLeadingSpace, r.LazyQuotes = -1, true, lazy
		return r.Read()
	}
	fields, err := read(false)
	switch {
	case err == nil:
		return fields, nil
	case errors.Is(err, csv.ErrBareQuote):
		return read(true)
	case strings.Count(line, `"`)%2 == 1:
		return nil, fmt.Errorf("an unterminated quote (%q): a field opened with \" must close with \" on its line, a quote inside it doubled (\"\"), as a CSV writer writes it", line)
	}
	fields = strings.Split(line, ",")
	for i, f := range fields {
		fields[i] = unquote(strings.TrimSpace(f))
	}
	return fields, nil
}
