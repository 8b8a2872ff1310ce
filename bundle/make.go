package bundle

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/parallel"
)

// Items are the data a user brings, to be made into bundles (Make): n
// rows of embeddings, and what makes two rows positives of each other —
// a class label per row, a group per row (the rows of one group are views
// of one item: the augmentation setting), or relevance pairs between
// queries and rows (the retrieval setting). Only indices live here; the
// embeddings are given when the bundles are built (Plan.Bundle,
// Plan.Write).
type Items struct {
	N int // rows of embeddings
	// Labels is each row's class (or nil). Positives are rows of the
	// anchor's class, negatives rows of other classes. With Groups, a
	// group's rows must share their label.
	Labels []int64
	// Groups is each row's item (or nil): a group's first row is its
	// item's anchor and its other rows the anchor's positives; negatives
	// are other items' anchors (of other classes, with Labels).
	Groups []int64
	// Queries and Pairs, for relevance judgements (BEIR-style qrels): the
	// anchors are Queries query rows (embedded apart), and pair p says
	// that row Pairs[p][1] is relevant to query Pairs[p][0]. Positives
	// are a query's relevant rows, negatives rows relevant to none of
	// its.
	Queries int
	Pairs   [][2]int
	// Negatives, with MakeConfig.JudgedNegatives, are pairs judged not
	// relevant (a qrels file's pairs scored 0 or less, a pair
	// classification's 0-labelled pairs, a triplet's negative): negative
	// p says that row Negatives[p][1] is not relevant to query
	// Negatives[p][0]. They are then a query's only negatives.
	Negatives [][2]int
	// Graded are pairs relevant at a lower grade than Pairs' (graded
	// judgements read with a least relevant score: a qrels file's 1s
	// where 2 is asked): pair p says that row Graded[p][1] is relevant
	// to query Graded[p][0], though not enough to be its positive. It is
	// never drawn as that query's negative (random or hard).
	Graded [][2]int
	// SelfQueries says that the queries are the rows themselves (query q
	// is row q: papers as their own queries, multi-label data given as
	// pairs of rows that share a category). A query's own row is then
	// never its positive (a pair (q, q) is left out, with a warning) nor
	// its negative (at distance 0 it is inside every set).
	SelfQueries bool
	// LabelSets, if not nil, are several labels per row (multi-label
	// data: row i's labels, LabelSets[i]). The rows are then their own
	// queries (Queries = N, SelfQueries) and a row's relevant rows those
	// that share a label with it, given by no Pairs; a row of no label is
	// no query, though it stays a row every query can draw as a negative.
	LabelSets [][]int32
	// OneLabel, if not nil, with LabelSets, bundles that label's rows
	// alone as relevance pairs (OneLabel): its rows are the queries, the
	// other rows carrying it their positives. The bundles carry no labels.
	OneLabel *OneLabel
	// oneLabelSets are OneLabel's rows as label sets of it alone (nil
	// for the others), which make the relevant rows (Make sets them).
	oneLabelSets [][]int32
	// QueryIDs, if not nil, are the queries' ids (query q's is
	// QueryIDs[q]): messages name a query by its id, as the pairs did.
	QueryIDs []string
	// QueryLabels, if not nil, with Queries, are each query's class — an
	// attribute of the query, such as its language, that says nothing of
	// which rows are its positives: the queries are split stratified by
	// it, and each split's anchors carry it as their labels, so that a
	// set can be calibrated per class (conformal.Class) and evaluated
	// class by class. A negative label marks a missing one: refused.
	QueryLabels []int64
	// GroupNames, if not nil, are string group ids' values (group g is
	// GroupNames[g]); ViewItems says the groups are the items of an
	// (n, v, d) views array. Messages name a group by them.
	GroupNames []string
	ViewItems  bool
	// Sessions, if not nil, with Groups, are each row's session (a
	// speaker's recording): an anchor's positives are then the rows of its
	// group in other sessions than its own, so that calibration and
	// evaluation speak of cross-session pairs, as a verification trial
	// list's are; a group without such a row has no positive.
	Sessions []int64
	// SessionNames, if not nil, are string session ids' values (session s
	// is SessionNames[s]), for messages.
	SessionNames []string
	// Blocks, if not nil, with Labels, are each row's block: the unit the
	// rows are split by (a recording of overlapping windows, a patient, a
	// site). A block's rows go to one split together — the OOD
	// calibration's included — so that no calibration row is a near-copy
	// of a test row, and the calibration and test blocks are exchangeable;
	// positives are still rows of the anchor's class in its split.
	Blocks []int64
	// Rows (N×D) and QueryRows (Queries×D) are the embeddings, which only
	// MakeConfig.HardNegatives reads: it finds each anchor's nearest
	// negatives among them. Inputs.Items sets them.
	Rows, QueryRows []float32
	D               int
}

// groupName names group g in messages: "item 5" of views, "group "s1"" of
// string ids, "group 12" otherwise.
func (items Items) groupName(g int64) string {
	switch {
	case items.ViewItems:
		return fmt.Sprintf("item %d", g)
	case g >= 0 && g < int64(len(items.GroupNames)):
		return fmt.Sprintf("group %q", items.GroupNames[g])
	}
	return fmt.Sprintf("group %d", g)
}

// queryName names query q in messages: by its id and row when the queries
// have ids, by its row otherwise.
func (items Items) queryName(q int) string {
	if q >= 0 && q < len(items.QueryIDs) {
		return fmt.Sprintf("query %q (row %d of the queries)", items.QueryIDs[q], q)
	}
	return fmt.Sprintf("query %d", q)
}

// DefaultSplit is the fit, validation, calibration and test shares of the
// items when MakeConfig.Split is zero: ccs bundle's -split.
var DefaultSplit = [4]float64{0.5, 0.1, 0.2, 0.2}

// MakeConfig configures Make. K has no default here (the command line's
// is 20).
type MakeConfig struct {
	// ctx is MakeContext's, looked at between splits (stopped).
	ctx     context.Context
	K, KNeg int // positives and negatives per anchor (KNeg 0: K)
	// Split are the shares of the items in the fit, validation,
	// calibration and test splits, each 0 to 1, summing to at most 1
	// (items beyond are left out), each split stratified by label; a
	// share of 0 makes no such split (SplitPlan.Omitted: an ℓ2 ball
	// trains nothing, a set calibrated elsewhere needs a test split
	// alone); all four 0 means DefaultSplit.
	Split [4]float64
	Seed  uint64
	// OODClasses are labels whose rows are held out of every split as an
	// out-of-distribution sample (the OOD split).
	OODClasses []int64
	// OODCalShare is the share of the in-distribution items set aside,
	// before the splits, as held-out inputs that calibrate a per-input OOD
	// test (the OODCal split); 0 for none.
	OODCalShare float64
	// AllowFewer lets an anchor with fewer than K possible positives
	// repeat them (drawn without replacement until none is left, then
	// again): it weighs its few positives more in training and
	// evaluation, while calibration, one positive per anchor drawn
	// uniformly, is unchanged. Without it such an anchor is an error.
	AllowFewer bool
	// LabelNames, for labels that were strings (LabelCodes), are their
	// values: label i is LabelNames[i]. Messages name classes by them.
	LabelNames []string
	// MissingLabels says what a label that marks a missing value means
	// (a negative integer; a string label MissingStrings made negative);
	// by default it is refused.
	MissingLabels MissingLabels
	// MissingNames names the negative labels MissingStrings gave string
	// labels that mark a missing value: label c < 0 is MissingNames[c].
	MissingNames map[int64]string
	// MissingGroupNames likewise names the negative group ids
	// MissingStrings gave string group ids ("", "nan"). MissingLabels
	// applies to group ids as to labels.
	MissingGroupNames map[int64]string
	// MissingSessionNames likewise names the negative session ids
	// (Items.Sessions) that MissingStrings gave string session ids or a
	// table's nulls. MissingLabels applies to session ids as to group
	// ids: refused, left out (drop), or each such id a session of its own
	// (class: the rows it marks are one session, never one another's
	// positives, and positives of their group's anchors in other sessions).
	MissingSessionNames map[int64]string
	// HardNegatives, when above 0, makes that many of each anchor's KNeg
	// negatives hard: the nearest to it (ℓ2 on the embeddings,
	// Items.Rows) among HardCandidates of its possible negatives drawn at
	// random (0: DefaultHardCandidates; all of them where there are
	// fewer); its other negatives are random among the rest of those
	// candidates. Random negatives are far from most anchors, and a set
	// excludes them whatever its shape: training has nothing to choose
	// by, and exclusion says little.
	HardNegatives, HardCandidates int
	// JudgedNegatives, for relevance pairs, takes each query's KNeg
	// negatives from its pairs judged not relevant (Items.Negatives),
	// drawn without replacement and repeated where it has fewer (a
	// warning counts those queries), instead of at random among the rows
	// relevant to none of its: exclusion is then measured on the data
	// set's own hard negatives. A query with no such pair is left out,
	// and counted in a warning.
	JudgedNegatives bool
}

// DefaultHardCandidates is how many of an anchor's possible negatives,
// drawn at random, its hard negatives are the nearest of, when
// MakeConfig.HardCandidates is 0: ccs bundle's -hard-candidates.
const DefaultHardCandidates = 256

// MissingLabels says what a label that marks a missing value means: a
// negative integer — Hugging Face datasets (a test split without labels)
// and scikit-learn mark a row that has no label -1 — or, for string
// labels, "" or "nan" (pandas' missing value once a column is converted
// with astype(str)); MissingStrings finds those. Taken as a class, such
// rows would be one another's positives; but ±1 binary labels are
// classes.
type MissingLabels int

const (
	// MissingRefused makes a missing label an error naming the labels
	// and how many rows have each.
	MissingRefused MissingLabels = iota
	// MissingDropped takes a missing label for no label: the row (in
	// Make's groups mode, its group) is left out of every split, and a
	// warning counts them.
	MissingDropped
	// MissingClass takes each for a class like any other.
	MissingClass
)

// missingLabelNames are MissingLabels' names, as ccs bundle's
// -missing-labels and Python's missing_labels take them.
var missingLabelNames = []string{"error", "drop", "class"}

// String is the value's name: error, drop or class.
func (n MissingLabels) String() string {
	if n < 0 || int(n) >= len(missingLabelNames) {
		return fmt.Sprintf("MissingLabels(%d)", int(n))
	}
	return missingLabelNames[n]
}

// ParseMissingLabels reads error, drop or class ("": error).
func ParseMissingLabels(s string) (MissingLabels, error) {
	if s == "" {
		return MissingRefused, nil
	}
	if i := slices.Index(missingLabelNames, s); i >= 0 {
		return MissingLabels(i), nil
	}
	return 0, fmt.Errorf("%q: want error, drop or class", s)
}

// MissingString says whether a string label marks a missing value: empty
// or blanks alone, "nan" in any case (what pandas' NaN becomes in astype(str)), "None"
// (what Python's None becomes: an object array's astype(str), as ccs's
// own error for a pickled object array advises), "<NA>" (pandas' pd.NA in
// astype(str)), "NA" and "N/A" (R's and spreadsheets' missing value), or,
// in any case, "unknown", "unassigned", "unannotated", "unlabeled" and
// "unlabelled" — what annotation tools write where no one gave a row its
// class (a single-cell atlas's unannotated cells, 632 of 62 317 in a user's,
// were a class of their own, one another's positives). Blanks around them
// are ignored.
func MissingString(s string) bool {
	s = strings.TrimSpace(s) // a label of blanks alone is none: not a class of its own
	switch s {
	case "", "None", "<NA>", "NA", "N/A", NullMark:
		return true
	}
	for _, m := range []string{"nan", "unknown", "unassigned", "unannotated", "unlabeled", "unlabelled"} {
		if strings.EqualFold(s, m) {
			return true
		}
	}
	return false
}

// NullMark names the missing label of a table's null rows (a Parquet or
// Arrow column's nulls) in MakeConfig's MissingNames and
// MissingGroupNames; messages write it null, unquoted. Python's package
// passes a pandas column's nulls (None, NaN, pd.NA) as this string, which
// MissingString counts as missing.
const NullMark = "\x00null"

// NamedNull renames the null mark (NullMark) among names, LabelCodes'
// sorted names, to "null" — "(null)" while a label has that name — in its
// sorted place, renumbering codes to match: with MissingClass the nulls
// are a class like any other, named as ccs bundle names a table's. Codes
// and names without it are returned as they are. The mark sorts first
// but for the empty string, which sorts before it.
func NamedNull(codes []int64, names []string) ([]int64, []string) {
	z, ok := slices.BinarySearch(names, NullMark)
	if !ok {
		return codes, names
	}
	// The mark's rows out of names, under a code below every other one
	// (InsertClass's from), the codes after it one less.
	from := int64(-1)
	for _, c := range codes {
		from = min(from, c-1)
	}
	out := make([]int64, len(codes))
	for i, c := range codes {
		switch {
		case c == int64(z):
			out[i] = from
		case c > int64(z):
			out[i] = c - 1
		default:
			out[i] = c
		}
	}
	return InsertClass(out, slices.Delete(slices.Clone(names), z, z+1), from, "null", false)
}

// FreeName is name, in parentheses as often as one of names is it: the
// name of a class that ccs names rather than the data (a table's nulls
// "null", a ClassLabel's -1 "-1"), which names no class of the data's.
func FreeName(names []string, name string) string {
	for slices.Contains(names, name) {
		name = "(" + name + ")"
	}
	return name
}

// InsertClass makes the rows of code from (a code outside names: a
// missing value's negative mark) a class of their own, named name
// (FreeName: in parentheses while one of names is it), in its sorted
// place among names (sorted names, LabelCodes'), or last (names in an
// order of their own, a ClassLabel's, whose ids stay the dataset's). It
// returns the codes renumbered to match — the class's rows its place,
// the codes at or after it one more, other negative codes as they are —
// and the names with it; codes and names are not changed.
func InsertClass(codes []int64, names []string, from int64, name string, last bool) ([]int64, []string) {
	name = FreeName(names, name)
	j := len(names)
	if !last {
		j, _ = slices.BinarySearch(names, name)
	}
	out := make([]int64, len(codes))
	for i, c := range codes {
		switch {
		case c == from:
			out[i] = int64(j)
		case c >= int64(j):
			out[i] = c + 1
		default:
			out[i] = c
		}
	}
	return out, slices.Insert(slices.Clone(names), j, name)
}

// MissingStrings takes the string labels that mark a missing value
// (MissingString) out of names (LabelCodes' sorted names): their rows get
// the labels −1, −2, … in their order among names (what MakeConfig's
// MissingLabels then applies to), missing names them, and the other
// names keep their order, numbered anew from 0. A negative code (a
// table's null row) stays as it is, and the labels it takes are below
// it. Without such a name, codes and names are returned as they are and
// missing is nil.
func MissingStrings(codes []int64, names []string) (newCodes []int64, newNames []string, missing map[int64]string) {
	if !slices.ContainsFunc(names, MissingString) {
		return codes, names, nil
	}
	below := int64(0)
	for _, c := range codes {
		below = min(below, c)
	}
	to := make([]int64, len(names))
	missing = map[int64]string{}
	for i, name := range names {
		if MissingString(name) {
			to[i] = below - int64(len(missing)) - 1
			missing[to[i]] = name
		} else {
			to[i] = int64(len(newNames))
			newNames = append(newNames, name)
		}
	}
	newCodes = make([]int64, len(codes))
	for i, c := range codes {
		if c < 0 {
			newCodes[i] = c
			continue
		}
		newCodes[i] = to[c]
	}
	return newCodes, newNames, missing
}

// markName is a missing mark as messages write it: quoted, or null.
func markName(s string) string {
	if s == NullMark {
		return "null"
	}
	return strconv.Quote(s)
}

// missingValues counts the negative values of ids (labels or group ids
// that mark a missing value) as "n of N rows have a KIND that marks a
// missing value (-1: 5, …)", each named by name; "" for none.
func missingValues(ids []int64, kind string, name func(int64) string) string {
	count := map[int64]int{}
	n := 0
	for _, l := range ids {
		if l < 0 {
			count[l]++
			n++
		}
	}
	if n == 0 {
		return ""
	}
	var each []string
	for _, l := range slices.Sorted(maps.Keys(count)) {
		if len(each) == 5 {
			each = append(each, "…")
			break
		}
		each = append(each, fmt.Sprintf("%s: %d", name(l), count[l]))
	}
	return fmt.Sprintf("%d of %d rows have a %s that marks a missing value (%s)", n, len(ids), kind, strings.Join(each, ", "))
}

// unlabeled applies MissingLabels to labels: whether a label is taken
// for none (nil: every label is a class), the warning that counts the
// rows left out, or the error that refuses them.
func (c MakeConfig) unlabeled(labels []int64) (none func(int64) bool, warning string, err error) {
	what := missingValues(labels, "label", c.class)
	if what == "" || c.MissingLabels == MissingClass {
		return nil, "", nil
	}
	if c.MissingLabels == MissingRefused {
		return nil, "", fmt.Errorf("bundle: %s: Hugging Face datasets and scikit-learn label a row without a label -1, and pandas' missing value becomes \"nan\" in astype(str); as a class those rows would be one another's positives: leave them out (-missing-labels drop; missing_labels=\"drop\" in Python), or take each such label for a class (-missing-labels class, as ±1 binary labels)", what)
	}
	return func(l int64) bool { return l < 0 }, what + ", taken for no label: left out of every split", nil
}

// idName names an id that marks a missing value in messages: its string
// mark (names, MissingStrings'), or its number.
func idName(names map[int64]string) func(int64) string {
	return func(id int64) string {
		if s, ok := names[id]; ok {
			return markName(s)
		}
		return strconv.FormatInt(id, 10)
	}
}

// ungrouped applies MissingLabels to group ids, as unlabeled to labels: a
// negative id (or a string id "" or "nan", which MissingStrings made
// negative, named by names) marks a row without a group. Refused, those
// rows would have made one group, one another's positives; dropped, they
// are left out.
func (c MakeConfig) ungrouped(groups []int64, names map[int64]string) (none func(int64) bool, warning string, err error) {
	return c.missingIDs(groups, "group", names, func(what string) error {
		return fmt.Errorf("bundle: %s: as one group those rows would be one another's positives; leave them out (-missing-labels drop; missing_labels=\"drop\" in Python), or take each such id for a group (-missing-labels class)", what)
	})
}

// missingIDs applies MissingLabels to ids of a kind (noun: "group",
// "session"), whose negative values mark a missing id (named by names):
// nothing to do where none is missing or each such id is taken for one of
// its own; refuse's error, given the count of what is missing, where they
// are refused; else whether an id is left out, and the warning that says
// so.
func (c MakeConfig) missingIDs(ids []int64, noun string, names map[int64]string, refuse func(what string) error) (none func(int64) bool, warning string, err error) {
	what := missingValues(ids, noun+" id", idName(names))
	if what == "" || c.MissingLabels == MissingClass {
		return nil, "", nil
	}
	if c.MissingLabels == MissingRefused {
		return nil, "", refuse(what)
	}
	return func(id int64) bool { return id < 0 }, what + ", taken for no " + noun + ": left out of every split", nil
}

// unsessioned applies MissingLabels to session ids, as ungrouped to
// group ids: a negative id (a string id "" or "nan" MissingStrings made
// negative, a table's null; named by names) marks a row without a
// session. Only rows that keep their group count (kept: nil, all).
// Refused, those rows would have made one session, one another's
// same-session rows and every other session's positives; dropped, they
// are left out; as a class, each such id is a session of its own.
func (c MakeConfig) unsessioned(sessions []int64, kept func(r int) bool, names map[int64]string) (none func(int64) bool, warning string, err error) {
	counted, first := make([]int64, len(sessions)), -1
	for r, s := range sessions {
		if s < 0 && (kept == nil || kept(r)) {
			counted[r] = s
			if first < 0 {
				first = r
			}
		}
	}
	return c.missingIDs(counted, "session", names, func(what string) error {
		return &InputError{InputSessions, fmt.Errorf("bundle: %s; the first: row %d: as one session, those rows would be one another's same-session rows and every other session's positives; give each row its session, leave those rows out (-missing-labels drop; missing_labels=\"drop\" in Python), or take each such id for a session of its own (-missing-labels class)", what, first)}
	})
}

// class names class c in messages: its string (quoted) when the labels
// were strings, else its number.
func (cfg MakeConfig) class(c int64) string {
	if c >= 0 && c < int64(len(cfg.LabelNames)) {
		return strconv.Quote(cfg.LabelNames[c])
	}
	if name, ok := cfg.MissingNames[c]; ok {
		return markName(name)
	}
	return strconv.FormatInt(c, 10)
}

// The splits a plan makes, in order: each names its split wherever a
// split is taken by number (Plan.Splits, Plan.Bundle, Plan.Arrays,
// Plan.Indexed).
const (
	Fit = iota
	Val
	Cal
	Test
	OODCal // held-out in-distribution inputs for a per-input OOD test
	OOD    // the held-out classes
)

// SplitNames are the splits' names, as their files are named (NAME.npz).
var SplitNames = [...]string{"fit", "val", "cal", "test", "ood-cal", "ood"}

// SplitPlan is one split of a Plan: its anchors as rows of the source,
// and each anchor's positives and negatives as rows of the split (indices
// into its pools). The OOD and OODCal splits hold anchors alone.
type SplitPlan struct {
	Name string
	// Omitted says the split's share was 0: it has no anchors, and no
	// bundle is made of it (Write and the manifest leave it out).
	Omitted bool
	// Anchors are the source rows of the split's anchors (rows of the
	// queries for relevance pairs), in the split's order.
	Anchors []int
	// PositivePool, if not nil, are the source rows positive_index points
	// into; nil means the split's anchors. NegativePool likewise for
	// negative_index.
	PositivePool, NegativePool []int
	K, KNeg                    int
	PositiveIndex              []int64 // len(Anchors)×K
	NegativeIndex              []int64 // len(Anchors)×KNeg
	Labels                     []int64 // the anchors' labels, or nil
	// PositiveLabelStart and PositiveLabels, with several labels a row,
	// are the labels each positive shares with its anchor
	// (Bundle.PositiveLabels); nil otherwise.
	PositiveLabelStart, PositiveLabels []int64
}

// Plan is how Items become bundles: the splits, indices only.
type Plan struct {
	// Splits are indexed by the constants Fit, Val, Cal, Test, OODCal
	// and OOD: Fit to Test always, then OODCal and OOD when made. A split
	// not made before one that is (a share of 0, or the OODCal split
	// when only OOD classes are held out) is there, Omitted.
	Splits []SplitPlan
	// Classes counts each split's anchors by label (nil without labels).
	Classes  []map[int64]int
	Warnings []string
	queries  bool // anchors are query rows
	// selfQueries says the query rows are the rows themselves
	// (Items.SelfQueries).
	selfQueries bool
	// rows and nQueries are the numbers of source rows (and query rows)
	// the plan was made for, which CheckRows holds the embeddings to;
	// mode is what made the positives: "labels", "label sets" (several
	// a row), "groups", "views" or "pairs".
	rows, nQueries int
	mode           string
	// views is each item's views, in mode "views".
	views int
	// oneLabelRows counts the rows carrying Items.OneLabel (0 without):
	// the queries of its bundles.
	oneLabelRows int
	// sessions says the groups' positives are their rows of other
	// sessions (Items.Sessions).
	sessions bool
	// blocks says the rows were split by block (Items.Blocks), and
	// blockOf is each row's block, which every split's bundle carries for
	// its anchors (Bundle.Blocks).
	blocks  bool
	blockOf []int64
	// logits and activations, when set, are each source row's classifier
	// logits and per-layer activation summaries, which every split's
	// bundle carries for its anchors (SetLogits, SetActivations).
	logits, activations perRow
}

// perRow is an array of values a source row, width a row: nil values
// when it was not given.
type perRow struct {
	values []float32
	width  int
}

// gathered is the rows of the split's anchors, as a bundle holds them.
func (a perRow) gathered(anchors []int) []float32 { return gather(a.values, anchors, a.width) }

// setPerRow checks values, width a row, as the source rows' what: the
// rows' own, so that relevance pairs' anchors, queries, have none, and
// one for every row that a split holds as an anchor.
func (p *Plan) setPerRow(what string, values []float32, width int) (perRow, error) {
	if p.queries {
		return perRow{}, fmt.Errorf("bundle: %s are for the rows' anchors, and relevance pairs' anchors are queries", what)
	}
	if width < 1 || len(values)%width != 0 {
		return perRow{}, fmt.Errorf("bundle: %d %s are not rows of %d", len(values), what, width)
	}
	n := len(values) / width
	for _, sp := range p.Splits {
		for _, r := range sp.Anchors {
			if r >= n {
				return perRow{}, fmt.Errorf("bundle: %s for %d rows, and the %s split has row %d", what, n, sp.Name, r)
			}
		}
	}
	return perRow{values, width}, nil
}

// SetLogits gives the plan each source row's classifier logits, c a row
// (n·c values for the n rows of embeddings), so that every split's bundle
// carries its anchors' (the OOD baselines' MSP, Energy and ViM read them).
// Relevance pairs' anchors are queries, whose logits these are not: an
// error there.
func (p *Plan) SetLogits(logits []float32, c int) (err error) {
	p.logits, err = p.setPerRow("logits", logits, c)
	return err
}

// WarnLogits adds to the plan's warnings what says that logits (c a row,
// SetLogits') are not a classifier's over the labels: the embeddings
// themselves (rows, of dimension d), fewer columns than the labels have
// classes, or an argmax that follows the labels no better than chance
// (each class read as the column its rows' argmax most often is, so
// that a classifier's own class order does not matter; with more columns
// than classes, each column read as its rows' most frequent label, against
// the same with the labels shuffled) — features given as logits, or rows
// in another order, whose MSP and Energy a table would then print as the
// baselines'.
func (p *Plan) WarnLogits(logits []float32, c int, rows []float32, d int) {
	if c <= 0 || len(logits) == 0 {
		return
	}
	n := len(logits) / c
	if c == d && len(rows) >= len(logits) && slices.Equal(logits[:min(len(logits), 100*c)], rows[:min(len(logits), 100*c)]) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("logits: the first rows of the logits (%d columns) are the embeddings' own: features given as logits? MSP, Energy and ViM read a classifier's logits, a column a class", c))
		return
	}
	var pairs [][2]int64 // (label, argmax) of the in-distribution anchors
	classes := map[int64]bool{}
	for _, sp := range p.Splits[:min(len(p.Splits), Test+1)] {
		if sp.Labels == nil {
			continue
		}
		for a, r := range sp.Anchors {
			if r >= n {
				continue
			}
			row := logits[r*c : (r+1)*c]
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			pairs = append(pairs, [2]int64{sp.Labels[a], int64(best)})
			classes[sp.Labels[a]] = true
		}
	}
	k, seen := len(classes), len(pairs)
	if k < 2 || seen == 0 {
		return
	}
	if c < k {
		p.Warnings = append(p.Warnings, fmt.Sprintf("logits: %d columns for the %d classes of the labels: a classifier's logits have a column a class — features given as logits, or another model's?", c, k))
		return
	}
	if c > k {
		// A finer classifier (40 classes, labels of their 4 groups): its
		// argmax splits each label, but each column's rows are mostly of
		// one label. Chance is what the same rows give with their labels
		// shuffled (seeded): rows in another order give no more.
		if seen < 20*k {
			return
		}
		share := agreeShare(pairs, 1)
		shuffled := slices.Clone(pairs)
		r := rand.New(rand.NewPCG(1, 2))
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i][0], shuffled[j][0] = shuffled[j][0], shuffled[i][0] })
		if chance := agreeShare(shuffled, 1); share < chance+0.1 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("logits: each of their %d columns holds rows of one label in %.1f%% of %d rows (each column read as its rows' most frequent label), where labels in a shuffled order give %.1f%%: logits of other rows, rows in another order, or a classifier of classes unrelated to the labels? MSP, Energy and ViM read them as the classifier's", c, 100*share, seen, 100*chance))
		}
		return
	}
	share := agreeShare(pairs, 0)
	if k >= 3 && seen >= 20*k && share < 1/float64(k)+0.1 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("logits: their argmax follows the labels in %.1f%% of %d rows (each class read as its rows' most frequent column), where chance gives %.1f%%: not this classifier's logits of these rows, or rows in another order? MSP, Energy and ViM read them as the classifier's", 100*share, seen, 100/float64(k)))
	}
}

// agreeShare is the share of pairs (label, argmax) that agree with their
// group's most frequent pair, the groups by pair[by]: by 0, each label
// read as its rows' most frequent column; by 1, each column as its rows'
// most frequent label.
func agreeShare(pairs [][2]int64, by int) float64 {
	count := map[[2]int64]int{}
	for _, q := range pairs {
		count[q]++
	}
	top := map[int64]int{}
	for key, v := range count {
		top[key[by]] = max(top[key[by]], v)
	}
	agree := 0
	for _, v := range top {
		agree += v
	}
	return float64(agree) / float64(len(pairs))
}

// SetActivations gives the plan each source row's per-layer activation
// summaries, a of them a row (each ReLU layer's maximum, say: what ccs
// embed's activations output holds), so that every split's bundle carries
// its anchors' (COMBOOD reads them). Relevance pairs' anchors are queries,
// whose activations these are not: an error there.
func (p *Plan) SetActivations(activations []float32, a int) (err error) {
	p.activations, err = p.setPerRow("activations", activations, a)
	return err
}

// Make plans the bundles of items: the items (rows, groups or queries)
// are split at random, seeded, into the fit, validation, calibration and
// test splits, stratified by label, so that no item is in two splits and
// the calibration and test anchors are exchangeable (what the guarantee
// needs); then each anchor gets K positives drawn without replacement
// from its own split (same class, same group, or relevant rows), never
// itself, and KNeg negatives from its split's anchors of other classes
// (or groups; or, for queries, from the rows relevant to none of its).
// The draws depend only on the seed and the anchor, not on the number of
// goroutines. Make reads no embeddings: Plan.Inspect checks them against
// the plan and warns of what ccs bundle warns of (rows copied across
// splits, positives no nearer than negatives, rows of zeros), and
// Plan.Bundle and Plan.Write gather the splits from them.
func Make(items Items, cfg MakeConfig) (*Plan, error) {
	return MakeContext(context.Background(), items, cfg)
}

// MakeContext is Make, stopping with ctx's error when ctx is done: it
// looks between splits and after the draws (a table of 1.5 million
// rows took seconds between them).
func MakeContext(ctx context.Context, items Items, cfg MakeConfig) (*Plan, error) {
	cfg.ctx = ctx
	if cfg.Split == ([4]float64{}) {
		cfg.Split = DefaultSplit
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.KNeg == 0 {
		cfg.KNeg = cfg.K
	}
	oneLabelRows := 0
	if items.OneLabel != nil {
		var err error
		if items, oneLabelRows, err = items.oneLabel(cfg); err != nil {
			return nil, err
		}
	}
	hd, err := newHardDraw(items, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.JudgedNegatives && items.Pairs == nil && items.Queries == 0 {
		return nil, fmt.Errorf("bundle: judged negatives are a query's pairs judged not relevant (scored 0 or less): give queries and scored relevance pairs")
	}
	if items.Blocks != nil {
		switch {
		case items.Pairs != nil || items.Queries > 0 || items.LabelSets != nil || items.Groups != nil || items.Labels == nil:
			return nil, fmt.Errorf("bundle: blocks split rows of one class label a row: give them with labels alone (groups and views already lie whole in one split; relevance pairs split by query)")
		case len(items.Blocks) != items.N:
			return nil, fmt.Errorf("bundle: %d block ids for %d rows", len(items.Blocks), items.N)
		}
	}
	var p *Plan
	switch {
	case items.Pairs != nil || items.Queries > 0 || items.LabelSets != nil:
		p, err = makePairs(items, cfg, hd)
	case items.Groups != nil:
		p, err = makeGroups(items, cfg, hd)
	case items.Labels != nil:
		p, err = makeLabels(items, cfg, hd)
	default:
		return nil, fmt.Errorf("bundle: nothing says which rows are positives of each other: give labels, groups or relevance pairs")
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.rows, p.nQueries, p.oneLabelRows = items.N, items.Queries, oneLabelRows
	switch {
	case items.LabelSets != nil:
		p.mode = "label sets"
	case p.queries:
		p.mode = "pairs"
	case items.ViewItems:
		p.mode = "views"
		p.views = slices.IndexFunc(items.Groups, func(g int64) bool { return g != 0 }) // item 0's rows
	case items.Groups != nil:
		p.mode = "groups"
		p.sessions = items.Sessions != nil
	default:
		p.mode = "labels"
		p.blocks, p.blockOf = items.Blocks != nil, items.Blocks
	}
	if cfg.AllowFewer {
		p.warnRepeats(cfg.K)
	}
	if w := alikeNames(cfg.LabelNames); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	return p, nil
}

// CheckRows returns an error unless rows hold the embeddings of the rows
// the plan was made for (Items.N rows of d values) and, for relevance
// pairs, queries those of its queries (Items.Queries rows of d): what
// Bundle, Arrays, Write and Inspect take.
func (p *Plan) CheckRows(rows, queries []float32, d int) error {
	if d < 1 {
		return fmt.Errorf("bundle: dimension %d: want at least 1", d)
	}
	if len(rows) != p.rows*d {
		return fmt.Errorf("bundle: %d embedding values are not the plan's %d rows of dimension %d (%d values)", len(rows), p.rows, d, p.rows*d)
	}
	if p.queries && len(queries) != p.nQueries*d {
		return fmt.Errorf("bundle: %d query embedding values are not the plan's %d queries of dimension %d (%d values)", len(queries), p.nQueries, d, p.nQueries*d)
	}
	return nil
}

// warnRepeats adds a warning counting, split by split, the anchors whose
// k positives repeat one (AllowFewer: fewer than k were there to draw),
// so that a bundle made with -allow-fewer says what it changed.
func (p *Plan) warnRepeats(k int) {
	var parts []string
	total, anchors := 0, 0
	row := make([]int64, k)
	var distinct []int // each anchor's distinct positives: all it has where it repeats
	for _, sp := range p.Splits {
		if sp.PositiveIndex == nil || sp.K != k {
			continue
		}
		n := 0
		for a := range len(sp.Anchors) {
			copy(row, sp.PositiveIndex[a*k:(a+1)*k])
			slices.Sort(row)
			m := len(slices.Compact(row))
			distinct = append(distinct, m)
			if m < k {
				n++
			}
		}
		anchors += len(sp.Anchors)
		if n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%s %d", sp.Name, n))
		}
	}
	if total > 0 {
		// The k that gives nine anchors in ten (and every anchor) distinct
		// positives: the 10th percentile of the distinct counts (nearest
		// rank), and their least.
		slices.Sort(distinct)
		k90 := distinct[max(0, int(math.Ceil(0.1*float64(len(distinct))))-1)]
		lower := fmt.Sprintf("-k %d draws distinct ones for nine anchors in ten, -k %d for every anchor (k= in Python)", k90, distinct[0])
		switch {
		case k90 == distinct[0]:
			lower = fmt.Sprintf("-k %d draws distinct ones for every anchor (k=%d in Python)", k90, k90)
		case k90 >= k: // a short tail: advising this k would say nothing
			lower = fmt.Sprintf("the other %d (%.3g%%) draw k distinct ones already; -k %d draws distinct ones for every anchor (k=%d in Python)", anchors-total, 100*float64(anchors-total)/float64(anchors), distinct[0], distinct[0])
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("allow fewer: %d of %d anchors had fewer than k = %d distinct positives and repeat some (%s): %s", total, anchors, k, strings.Join(parts, ", "), lower))
	}
}

// alikeNames warns of label names that differ only by case or by spaces
// around them ("Sky" and "sky", "dog " and "dog"): each is a label of its
// own, which a tagging export's inconsistent spelling splits in two; ""
// when there are none.
func alikeNames(names []string) string {
	byKey := map[string][]string{}
	var keys []string
	for _, n := range names {
		k := strings.ToLower(strings.TrimSpace(n))
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], n)
	}
	var alike []string
	groups := 0
	for _, k := range keys {
		if ns := byKey[k]; len(ns) > 1 {
			groups++
			if len(alike) < 3 {
				q := make([]string, len(ns))
				for i, n := range ns {
					q[i] = strconv.Quote(n)
				}
				alike = append(alike, strings.Join(q, " and "))
			}
		}
	}
	if groups == 0 {
		return ""
	}
	more := ""
	if groups > len(alike) {
		more = fmt.Sprintf(", … %d in all", groups)
	}
	what := "names differ"
	if groups > 1 {
		what = fmt.Sprintf("%d sets of names differ", groups)
	}
	return fmt.Sprintf("labels: %s only by case or by spaces around them (%s%s): each is a label of its own, its rows apart from the other's; if they mean one label, write them alike first (labels.str.strip().str.lower() in pandas, np.char.lower(np.char.strip(labels)) in NumPy)",
		what, strings.Join(alike, "; "), more)
}

// Check validates the configuration: what Make refuses before reading any item.
func (c MakeConfig) Check() error {
	sum := 0.0
	for _, f := range c.Split {
		sum += f
	}
	for i, f := range c.Split {
		if !(f >= 0 && f <= 1) {
			hint := ""
			if math.Abs(sum-100) < 1e-9 {
				frac := make([]string, len(c.Split))
				for j, g := range c.Split {
					frac[j] = strconv.FormatFloat(g/100, 'g', -1, 64)
				}
				hint = fmt.Sprintf(" (percentages? as shares: %s)", strings.Join(frac, ","))
			}
			return fmt.Errorf("bundle: split share %v of %s: want 0 to 1%s", f, SplitNames[i], hint)
		}
	}
	switch {
	case sum > 1+1e-9:
		return fmt.Errorf("bundle: the split shares %v sum to %.4g, more than 1", c.Split, sum)
	case sum == 0:
		return fmt.Errorf("bundle: the split shares %v are all 0: give at least one split a share (fit trains, val picks the epoch, cal calibrates, test evaluates; 0,0,0,1 makes test.npz alone)", c.Split)
	case c.K < 1:
		return fmt.Errorf("bundle: k = %d positives per anchor: want at least 1", c.K)
	case c.KNeg < 0:
		return fmt.Errorf("bundle: %d negatives per anchor: want 0 (as many as positives) or more", c.KNeg)
	case !(c.OODCalShare >= 0 && c.OODCalShare < 1):
		return fmt.Errorf("bundle: OOD calibration share %v: want 0 ≤ share < 1", c.OODCalShare)
	}
	return nil
}

// counted is "1 relevant row" or "3 relevant rows".
func counted(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// unsplit is the warning for the items that split shares summing below 1
// leave out of every split (what stratify leaves), or "" when none is.
func unsplit(shares [4]float64, strata map[int64][]int, parts [][]int, unit string) string {
	total, placed := 0, 0
	for _, m := range strata {
		total += len(m)
	}
	for _, p := range parts {
		placed += len(p)
	}
	if placed == total {
		return ""
	}
	return fmt.Sprintf("the split shares %v sum to %.4g: %d of %d %s are in no split, left out (shares that sum to 1 use them all)",
		shares, shares[0]+shares[1]+shares[2]+shares[3], total-placed, total, unit)
}

// stratify splits the items of each stratum (in index order) at random
// into the parts whose shares are given, each stratum's counts rounded by
// largest remainder; items beyond the shares' sum are left out. It
// returns each part's items, sorted.
func stratify(strata map[int64][]int, shares []float64, rng *rand.Rand) [][]int {
	parts := make([][]int, len(shares))
	for _, s := range slices.Sorted(maps.Keys(strata)) {
		members := slices.Clone(strata[s])
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		counts := shareOut(len(members), shares)
		off := 0
		for p, c := range counts {
			parts[p] = append(parts[p], members[off:off+c]...)
			off += c
		}
	}
	for _, p := range parts {
		slices.Sort(p)
	}
	return parts
}

// shareOut divides n by shares (summing to at most 1): each part's floor,
// then the remainder, up to the shares' total, to the parts with the
// largest fractional parts (the earlier part on a tie).
func shareOut(n int, shares []float64) []int {
	counts := make([]int, len(shares))
	total := 0.0
	given := 0
	for i, f := range shares {
		counts[i] = int(math.Floor(f * float64(n)))
		given += counts[i]
		total += f
	}
	want := min(n, int(math.Round(total*float64(n))))
	order := make([]int, len(shares))
	for i := range order {
		order[i] = i
	}
	frac := func(i int) float64 { return shares[i]*float64(n) - float64(counts[i]) }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(frac(b), frac(a)) })
	for _, i := range order {
		if given >= want {
			break
		}
		if shares[i] > 0 {
			counts[i]++
			given++
		}
	}
	return counts
}

// drawer draws an anchor's positives and negatives with a generator of
// its own (the seed, the split and the anchor), so that the draws do not
// depend on the order anchors are processed in.
func drawer(seed uint64, split, anchor int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x62756e646c65, uint64(split)<<40|uint64(anchor))) // "bundle"
}

// distinct draws k distinct members of from (skip excluded, when it is
// one of them) into dst; when from holds fewer, all of them, then again
// (the caller allowed it: AllowFewer).
func distinct(dst []int64, from []int, skip int, k int, rng *rand.Rand) {
	n := len(from)
	avail := n
	if skip >= 0 {
		avail--
	}
	if avail >= 4*k {
		// Rejection: few collisions among many.
		for c := 0; c < k; {
			v := from[rng.IntN(n)]
			if v == skip || slices.Contains(dst[:c], int64(v)) {
				continue
			}
			dst[c] = int64(v)
			c++
		}
		return
	}
	// A partial Fisher–Yates over a copy: uniform k-subsets of few.
	pool := make([]int, 0, avail)
	for _, v := range from {
		if v != skip {
			pool = append(pool, v)
		}
	}
	for c := 0; c < k; c++ {
		j := c % len(pool) // past the end: every one drawn, draw them again (AllowFewer)
		r := j + rng.IntN(len(pool)-j)
		pool[j], pool[r] = pool[r], pool[j]
		dst[c] = int64(pool[j])
	}
}

// labelMembers groups positions 0..n−1 by label.
func labelMembers(labels []int64, pos []int) map[int64][]int {
	m := map[int64][]int{}
	for i, p := range pos {
		m[labels[p]] = append(m[labels[p]], i)
	}
	return m
}

// heldOut takes the OOD classes' rows out of strata and, with a share,
// the OOD calibration items; it returns the split plans of both (nil when
// not asked for) and the strata left.
func heldOut(strata map[int64][]int, cfg MakeConfig, rng *rand.Rand) (oodCal, ood []int, left map[int64][]int, err error) {
	left = map[int64][]int{}
	for s, m := range strata {
		left[s] = m
	}
	for _, c := range uniq(cfg.OODClasses) {
		m, ok := left[c]
		if !ok {
			return nil, nil, nil, fmt.Errorf("bundle: OOD class %s is not among the labels (%s)", cfg.class(c), labelList(slices.Sorted(maps.Keys(strata)), cfg))
		}
		ood = append(ood, m...)
		delete(left, c)
	}
	if len(cfg.OODClasses) > 0 && len(left) == 0 {
		return nil, nil, nil, fmt.Errorf("bundle: every class is an OOD class: nothing is left in distribution")
	}
	slices.Sort(ood)
	if cfg.OODCalShare > 0 {
		parts := stratify(left, []float64{cfg.OODCalShare}, rng)
		oodCal = parts[0]
		taken := map[int]bool{}
		for _, i := range oodCal {
			taken[i] = true
		}
		for s, m := range left {
			left[s] = slices.DeleteFunc(slices.Clone(m), func(i int) bool { return taken[i] })
		}
	}
	return oodCal, ood, left, nil
}

// InputError is a refusal of Make that one of its inputs causes rather
// than the rows it splits by (labels, groups, views or pairs): Input
// names it, InputBlocks, InputQueryLabels or InputSessions. A command names that
// input's file with it, not the labels' or the pairs'.
type InputError struct {
	// Input is the input at fault: InputBlocks (Items.Blocks: too few
	// blocks for a share, or none left to split) or InputQueryLabels
	// (Items.QueryLabels: a query label that marks a missing value) or
	// InputSessions (Items.Sessions: a session id that marks one).
	Input string
	// Err is the refusal.
	Err error
}

// The inputs an InputError names, as ccs bundle's roles and Python's
// keywords spell them.
const (
	// InputBlocks is Items.Blocks (-blocks; blocks= in Python).
	InputBlocks = "blocks"
	// InputQueryLabels is Items.QueryLabels (-query-labels;
	// query_labels= in Python).
	InputQueryLabels = "query_labels"
	// InputSessions is Items.Sessions (-sessions; sessions= in Python).
	InputSessions = "sessions"
	// InputKNeg is no input but MakeConfig.KNeg (-kneg; kneg= in
	// Python): more negatives asked for than there are rows.
	InputKNeg = "kneg"
)

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// splitBlocks splits labelled rows by block (Items.Blocks): the blocks,
// shuffled, are shared out whole — first -ood-cal-share of them to the OOD
// calibration, then the split shares of the rest — by their number, not
// their rows, so that a block's split depends on the seed alone, never on
// its rows (the calibration and test blocks are exchangeable). Rows of the
// OOD classes go to the OOD split whatever their block; rows of a missing
// label (left out of strata) to none. It returns the OOD calibration's
// rows, the OOD split's and the four splits', each sorted, and adds to p
// the warnings of what it left out.
func splitBlocks(items Items, strata map[int64][]int, cfg MakeConfig, rng *rand.Rand, p *Plan) (oodCal, ood []int, parts [][]int, err error) {
	isOOD := map[int64]bool{}
	for _, c := range uniq(cfg.OODClasses) {
		if _, ok := strata[c]; !ok {
			return nil, nil, nil, fmt.Errorf("bundle: OOD class %s is not among the labels (%s)", cfg.class(c), labelList(slices.Sorted(maps.Keys(strata)), cfg))
		}
		isOOD[c] = true
		ood = append(ood, strata[c]...)
	}
	if len(isOOD) > 0 && len(isOOD) == len(strata) {
		return nil, nil, nil, fmt.Errorf("bundle: every class is an OOD class: nothing is left in distribution")
	}
	slices.Sort(ood)
	// The in-distribution rows of each block; the blocks sorted by id,
	// then shuffled by the seed.
	rowsOf := map[int64][]int{}
	var order []int64
	for _, c := range slices.Sorted(maps.Keys(strata)) {
		if isOOD[c] {
			continue
		}
		for _, r := range strata[c] {
			b := items.Blocks[r]
			if b < 0 {
				return nil, nil, nil, fmt.Errorf("bundle: row %d has a block id that marks a missing value (a negative integer, \"\" or \"nan\"): as one block, such rows would be split together as one recording; give each row its block, or leave those rows out", r)
			}
			if _, ok := rowsOf[b]; !ok {
				order = append(order, b)
			}
			rowsOf[b] = append(rowsOf[b], r)
		}
	}
	slices.Sort(order)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	short := func(what string, share float64, blocks int) error {
		return &InputError{InputBlocks, fmt.Errorf("bundle: %d blocks are too few for the %s share %v: blocks lie whole in one split, and the shares are shared out by blocks; give more blocks (more recordings), fewer splits (a share of 0: -split 0,0,0.5,0.5, split=(0, 0, 0.5, 0.5) in Python, for the ℓ2 ball, which trains nothing) or a larger share", blocks, what, share)}
	}
	if len(order) == 0 {
		return nil, nil, nil, &InputError{InputBlocks, fmt.Errorf("bundle: no in-distribution rows are left to split by block")}
	}
	left := order
	if cfg.OODCalShare > 0 {
		nb := shareOut(len(order), []float64{cfg.OODCalShare})[0]
		if nb == 0 {
			return nil, nil, nil, short("ood-cal", cfg.OODCalShare, len(order))
		}
		for _, b := range order[:nb] {
			oodCal = append(oodCal, rowsOf[b]...)
		}
		slices.Sort(oodCal)
		left = order[nb:]
	}
	counts := shareOut(len(left), cfg.Split[:])
	parts = make([][]int, len(counts))
	off := 0
	for s, c := range counts {
		if cfg.Split[s] > 0 && c == 0 {
			return nil, nil, nil, short(SplitNames[s], cfg.Split[s], len(left))
		}
		for _, b := range left[off : off+c] {
			parts[s] = append(parts[s], rowsOf[b]...)
		}
		slices.Sort(parts[s])
		off += c
	}
	if off < len(left) {
		rows := 0
		for _, b := range left[off:] {
			rows += len(rowsOf[b])
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("the split shares %v sum to %.4g: %d of %d blocks (%d rows) are in no split, left out (shares that sum to 1 use them all)",
			cfg.Split, cfg.Split[0]+cfg.Split[1]+cfg.Split[2]+cfg.Split[3], len(left)-off, len(left), rows))
	}
	if w := classesMissing(items, strata, isOOD, parts, cfg); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	return oodCal, ood, parts, nil
}

// classesMissing says which in-distribution classes have no row in a
// split of a positive share once the blocks are shared out ("" when
// every class is in every such split): blocks lie whole in one split, so
// a class of few blocks misses some, which calibration by class and
// evaluation class by class would otherwise find only later.
func classesMissing(items Items, strata map[int64][]int, isOOD map[int64]bool, parts [][]int, cfg MakeConfig) string {
	// Each row's split (-1: none), a byte a row: a map of millions of rows
	// cost seconds.
	splitOf := make([]int8, items.N)
	for i := range splitOf {
		splitOf[i] = -1
	}
	for s, rows := range parts {
		for _, r := range rows {
			splitOf[r] = int8(s)
		}
	}
	var missing []string
	classes := 0
	for _, c := range slices.Sorted(maps.Keys(strata)) {
		if isOOD[c] {
			continue
		}
		var in [4]bool
		for _, r := range strata[c] {
			if s := splitOf[r]; s >= 0 {
				in[s] = true
			}
		}
		var lacks []string
		for s := range in {
			if cfg.Split[s] > 0 && !in[s] {
				lacks = append(lacks, SplitNames[s])
			}
		}
		if lacks == nil {
			continue
		}
		if classes++; classes <= 5 {
			blocks := map[int64]bool{}
			for _, r := range strata[c] {
				blocks[items.Blocks[r]] = true
			}
			in := fmt.Sprintf("%d blocks", len(blocks))
			if len(blocks) == 1 {
				in = "one block"
			}
			missing = append(missing, fmt.Sprintf("class %s (%d rows in %s) has none in %s", cfg.class(c), len(strata[c]), in, strings.Join(lacks, ", ")))
		}
	}
	if classes == 0 {
		return ""
	}
	more := ""
	if classes > 5 {
		more = fmt.Sprintf("; %d classes in all", classes)
	}
	return fmt.Sprintf("blocks lie whole in one split, so some classes miss a split: %s%s. A class without calibration rows has no threshold of its own in a class-conditional set, and one without test rows no coverage figure; give more blocks of those classes, or try another -seed", strings.Join(missing, "; "), more)
}

// labelList writes labels as "0, 1, …" (the first twenty), by name when
// they were strings.
func labelList(l []int64, cfg MakeConfig) string {
	var s []string
	for i, v := range l {
		if i == 20 {
			s = append(s, fmt.Sprintf("… %d in all", len(l)))
			break
		}
		s = append(s, cfg.class(v))
	}
	return strings.Join(s, ", ")
}

// transposedHint is what a count of labels more than the rows may mean:
// the rows counted of a (d, n) array (Items.N is an (n, d) array's n).
func transposedHint(labels, rows int) string {
	if labels <= rows {
		return ""
	}
	return fmt.Sprintf(" (Items.N is the embeddings' rows, n of an (n, d) array: are %d of them your dimension? %s)", rows, Transposed)
}

// makeLabels plans bundles whose items are rows with class labels.
func makeLabels(items Items, cfg MakeConfig, hd *hardDraw) (*Plan, error) {
	if len(items.Labels) != items.N {
		return nil, fmt.Errorf("bundle: %d labels for %d rows of embeddings%s", len(items.Labels), items.N, transposedHint(len(items.Labels), items.N))
	}
	none, warning, err := cfg.unlabeled(items.Labels)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x73706c6974)) // "split"
	strata := map[int64][]int{}
	for i, l := range items.Labels {
		if none == nil || !none(l) {
			strata[l] = append(strata[l], i)
		}
	}
	var oodCal, ood []int
	var parts [][]int
	p := &Plan{}
	if warning != "" {
		p.Warnings = append(p.Warnings, warning)
	}
	if items.Blocks != nil {
		oodCal, ood, parts, err = splitBlocks(items, strata, cfg, rng, p)
		if err != nil {
			return nil, err
		}
	} else {
		var left map[int64][]int
		oodCal, ood, left, err = heldOut(strata, cfg, rng)
		if err != nil {
			return nil, err
		}
		if err := checkClassSplits(left, cfg); err != nil {
			return nil, err
		}
		parts = stratify(left, cfg.Split[:], rng)
		if w := unsplit(cfg.Split, left, parts, "rows"); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	// The largest k every class of every split can give (k from its
	// other items), for a refusal's "-k N keeps them all".
	kAll := math.MaxInt
	for _, rows := range parts {
		count := map[int64]int{}
		for _, r := range rows {
			count[items.Labels[r]]++
		}
		for _, m := range count {
			kAll = min(kAll, max(1, m-1))
		}
	}
	for s, rows := range parts {
		if err := cfg.stopped(); err != nil {
			return nil, err
		}
		if cfg.Split[s] == 0 {
			p.Splits = append(p.Splits, omitted(s, cfg))
			continue
		}
		sp, err := labelSplit(SplitNames[s], s, rows, items.Labels, cfg, kAll, hd)
		if err != nil {
			return nil, err
		}
		p.Splits = append(p.Splits, sp)
	}
	p.addHeldOut(oodCal, ood, cfg, func(r int) int64 { return items.Labels[r] })
	if name, sep := joinedLabels(cfg.LabelNames); name != "" {
		p.Warnings = append(p.Warnings, fmt.Sprintf("labels such as %q look like lists of labels joined by %q: each combination is a class of its own, and rows that share one label but not the whole list are negatives of each other; %s", name, sep, MultiLabel))
	}
	p.count()
	return p, nil
}

// omitted is split s of a share of 0: no anchors, no bundle.
func omitted(s int, cfg MakeConfig) SplitPlan {
	return SplitPlan{Name: SplitNames[s], Omitted: true, K: cfg.K, KNeg: cfg.KNeg}
}

// Made are the names of the splits the plan makes bundles of (those of a
// share of 0 are not made), in its order.
func (p *Plan) Made() []string {
	var names []string
	for _, sp := range p.Splits {
		if !sp.Omitted {
			names = append(names, sp.Name)
		}
	}
	return names
}

// loneSplit is the first split that a class of m items gets exactly one
// of (stratify's counts: that item would have no positive), or −1.
func loneSplit(m int, shares []float64) int {
	return slices.Index(shareOut(m, shares), 1)
}

// cleanFrom is the class size from which every class splits without a
// lone item (searched up to a bound: shares of a few hundredths need
// classes of hundreds), counted before a held-out share (the OOD
// calibration's, stratified as the splits are) is set aside.
func cleanFrom(shares []float64, heldOut float64) int {
	from := 2
	for m := 2; m <= 100_000; m++ {
		left := m
		if heldOut > 0 {
			left -= shareOut(m, []float64{heldOut})[0]
		}
		if loneSplit(left, shares) >= 0 {
			from = m + 1
		}
	}
	return from
}

// classes is "1 class" or "3 classes".
func classes(n int) string {
	if n == 1 {
		return "1 class"
	}
	return fmt.Sprintf("%d classes", n)
}

// checkClassSplits refuses, before splitting, the classes that the
// stratified split would leave with exactly one item in a split, where it
// has no other of its class to be its positive: all of them counted, the
// first and the smallest named, the class size that splits cleanly, and
// what many small classes — identities, products — are: groups.
func checkClassSplits(strata map[int64][]int, cfg MakeConfig) error {
	var lone []int64
	for _, c := range slices.Sorted(maps.Keys(strata)) {
		if loneSplit(len(strata[c]), cfg.Split[:]) >= 0 {
			lone = append(lone, c)
		}
	}
	if len(lone) == 0 {
		return nil
	}
	size := func(c int64) int { return len(strata[c]) }
	first := lone[0]
	smallest := slices.MinFunc(lone, func(a, b int64) int { return size(a) - size(b) })
	after := ""
	if cfg.OODCalShare > 0 {
		after = fmt.Sprintf(" once -ood-cal-share %v set its share aside", cfg.OODCalShare)
	}
	named := fmt.Sprintf("class %s, %s%s, would have 1 in the %s split", cfg.class(first), counted(size(first), "item"), after, SplitNames[loneSplit(size(first), cfg.Split[:])])
	if size(smallest) < size(first) {
		named += fmt.Sprintf("; the smallest, class %s, has %s", cfg.class(smallest), counted(size(smallest), "item"))
	}
	from, given := cleanFrom(cfg.Split[:], 0), cleanFrom(cfg.Split[:], cfg.OODCalShare)
	clean := fmt.Sprintf("a class splits without a lone item from %d items", from)
	if given != from {
		clean += fmt.Sprintf(", %d before -ood-cal-share %v takes its share", given, cfg.OODCalShare)
	}
	if cfg.AllowFewer {
		// -allow-fewer repeats an anchor's few positives; a lone item has
		// none to repeat, and a user who passed it is told so.
		clean += " (-allow-fewer does not help: it repeats an anchor's few positives, and a lone item has none)"
	}
	// Groups suit many small classes (identities, products); where most
	// classes are large enough, leaving the small ones out keeps the rest.
	keep := fmt.Sprintf("ids, counts = np.unique(labels, return_counts=True); keep = np.isin(labels, ids[counts >= %d])", given)
	advice := fmt.Sprintf("Many small classes — people's identities, products, a few photos each — are groups, not labels: give them as groups (-groups FILE; groups= in Python), so that each lies whole in one split and its rows are one another's positives; or leave the small classes out (%s)", keep)
	if 2*len(lone) < len(strata) {
		advice = fmt.Sprintf("Leave the small classes out (%s), or hold them out as OOD inputs (-ood-classes; ood_classes= in Python); where most classes are small (identities, products), they are groups, not labels (-groups FILE; groups= in Python)", keep)
	}
	// Paths as labels are each their own class: all but a few lone. Where
	// most classes are not, the '/' is part of their names ("animal/cat").
	// Re-ID image names first: under a query and a gallery directory they
	// are file paths too, whose first directory is no person.
	if reid := reidNames(cfg.LabelNames, "class"); reid != "" && 10*len(lone) >= 9*len(strata) {
		advice = strings.ToUpper(reid[:1]) + reid[1:]
	} else if paths := pathNames(cfg.LabelNames, "class"); paths != "" && 10*len(lone) >= 9*len(strata) {
		advice = strings.ToUpper(paths[:1]) + paths[1:]
	} else if name, sep := joinedLabels(cfg.LabelNames); name != "" {
		// Lists of labels joined into one string are every combination a
		// class: neither classes nor groups say "shares a label".
		advice = fmt.Sprintf("Names such as %q look like lists of labels joined by %q, each combination a class of its own (lists = [s.split(%q) for s in labels]): %s", name, sep, sep, MultiLabel)
	}
	cause := ""
	if alike := alikeNames(cfg.LabelNames); alike != "" {
		// A spelling split one label in two: a likelier cause than small
		// classes (a researcher's "Sports" and "sports", 30 classes of 15),
		// said first.
		cause = "perhaps the cause — " + alike + ". "
	}
	return fmt.Errorf("bundle: %s%d of %s would have exactly 1 item in a split, with no other of its class there to be its positive (%s): a class's items are split by the shares %v, and %s. %s",
		cause, len(lone), classes(len(strata)), named, cfg.Split, clean, advice)
}

// pathNames says, for string labels or group ids (what: "class" or
// "group") of which nine in ten or more are file paths (a speaker
// corpus's utt.txt: speaker/session/utterance, each path its own class),
// how many classes the first directory and the first two make, after the
// directories every path shares, and how to keep one; "" otherwise.
func pathNames(names []string, what string) string {
	sep := ""
	for _, s := range []string{"/", `\`} {
		with := 0
		for _, n := range names {
			if strings.Contains(n, s) {
				with++
			}
		}
		if len(names) > 0 && 10*with >= 9*len(names) {
			sep = s
			break
		}
	}
	if sep == "" {
		return ""
	}
	// Leading directories every name shares ("/data/voxceleb/wav/") make
	// one class: the classes start after them.
	split := make([][]string, len(names))
	for i, n := range names {
		split[i] = strings.Split(n, sep)
	}
	skip := 0
	for ; ; skip++ {
		same := true
		for _, parts := range split {
			if len(parts) <= skip+1 || parts[skip] != split[0][skip] {
				same = false
				break
			}
		}
		if !same {
			break
		}
	}
	var counts []string
	for depth := 1; depth <= 2; depth++ {
		seen := map[string]struct{}{}
		for i, parts := range split {
			if len(parts) <= skip+depth { // no directory this deep: the whole path
				seen[names[i]] = struct{}{}
				continue
			}
			seen[strings.Join(parts[skip:skip+depth], sep)] = struct{}{}
		}
		if len(seen) == len(names) && depth > 1 {
			break // the first two directories are each path's own
		}
		if len(seen) == len(names) && depth == 1 {
			return "" // no directory is shared by two names: cutting one merges nothing
		}
		counts = append(counts, strconv.Itoa(len(seen)))
	}
	made := "its first directory makes " + counts[0] + " classes"
	if skip > 0 {
		made = fmt.Sprintf("after the directories all share (%q), the next makes %s classes", strings.Join(split[0][:skip], sep)+sep, counts[0])
	}
	if len(counts) > 1 {
		made += ", the next two " + counts[1]
		if skip == 0 {
			made = strings.Replace(made, ", the next two ", ", its first two ", 1)
		}
	}
	cut := fmt.Sprintf("cut -d/ -f%d FILE > classes.txt", skip+1)
	if sep != "/" {
		cut = fmt.Sprintf(`cut -d'\' -f%d FILE > classes.txt`, skip+1)
	}
	return fmt.Sprintf("names such as %q are file paths, each its own %s: %s — keep one (%s; [p.split(%q)[%d] for p in paths] in Python), as labels, or as groups (-groups) where they are identities such as speakers (docs/your-data.md §7)",
		names[0], what, made, cut, sep, skip)
}

// reidName matches a person re-identification image's name as
// Market-1501 and DukeMTMC-reID write them (after any directory): the
// person id (-1: junk, which Market-1501's protocol ignores; 0: a false
// detection, a distractor), "c" and the camera, then the
// sequence and frame ("0002_c1s1_000451_03.jpg", "0005_c2_f0046985.jpg").
var reidName = regexp.MustCompile(`^(-?\d+)_c(\d+)(?:s\d+)?_[^/\\]*\.(?i:jpe?g|png|bmp)$`)

// reidNames says, for string labels or group ids (what: "class" or
// "group") of which nine in ten or more are re-ID image names, each its
// own class, how many people and cameras they name and how to give them
// as groups and sessions (the re-ID protocol: a person's images from other
// cameras), and how many rows are of no person; "" otherwise.
func reidNames(names []string, what string) string {
	people, cams := map[string]struct{}{}, map[string]struct{}{}
	matched, junk, distractors := 0, 0, 0
	for _, n := range names {
		m := reidName.FindStringSubmatch(n[strings.LastIndexAny(n, `/\`)+1:])
		if m == nil {
			continue
		}
		matched++
		cams[strings.TrimLeft(m[2], "0")] = struct{}{}
		switch id, err := strconv.Atoi(m[1]); {
		case err == nil && id == -1:
			junk++
		case err == nil && id == 0:
			distractors++
		default:
			people[m[1]] = struct{}{}
		}
	}
	if len(names) == 0 || 10*matched < 9*len(names) {
		return ""
	}
	none := ""
	if junk+distractors > 0 {
		none = fmt.Sprintf(", besides %d images of person -1 (junk) and %d of person 0 (false detections, distractors)", junk, distractors)
	}
	return fmt.Sprintf("names such as %q are person re-identification image names (person id, camera, frame: Market-1501, DukeMTMC-reID), each its own %s: their person ids make %d people over %d cameras%s — "+
		"give the person as the group and the camera as the session, so that an anchor's positives are its person's images from other cameras, as the protocol counts them "+
		`(sed 's|.*[/\\]||; s/_.*//' FILE > pid.txt; sed 's|.*[/\\]||; s/^[^_]*_c\([0-9]*\).*/\1/' FILE > cam.txt; then -groups pid.txt -sessions cam.txt; in Python pid = np.array([int(re.split(r"[/\\]", n)[-1].split("_")[0]) for n in names]), cam = np.array([int(re.match(r"-?\d+_c(\d+)", re.split(r"[/\\]", n)[-1])[1]) for n in names])), `+
		"and leave the rows of no person out of the bundles (keep = pid > 0: -1 and 0; docs/your-data.md §8)",
		names[0], what, len(people), len(cams), none)
}

// joinedLabels finds string labels that are lists of labels joined by a
// separator (a multi-label export's "cs.LG,stat.ML"): a quarter of the
// names or more hold one of ",", ";", "|", and a piece recurs in two of
// them. It returns the first such name and its separator, or "".
func joinedLabels(names []string) (name, sep string) {
	for _, sep := range []string{",", ";", "|"} {
		var joined []string
		for _, n := range names {
			if strings.Contains(n, sep) {
				joined = append(joined, n)
			}
		}
		if len(joined) < 2 || 4*len(joined) < len(names) {
			continue
		}
		seen := map[string]bool{}
		for _, n := range joined {
			pieces := map[string]bool{}
			for _, p := range strings.Split(n, sep) {
				pieces[strings.TrimSpace(p)] = true
			}
			for p := range pieces {
				if p != "" && seen[p] {
					return joined[0], sep
				}
			}
			for p := range pieces {
				seen[p] = true
			}
		}
	}
	return "", ""
}

// labelSplit draws the positives (same class) and negatives (other
// classes) of a split's rows; kAll is the largest k every split allows,
// which a refusal names.
func labelSplit(name string, s int, rows []int, labels []int64, cfg MakeConfig, kAll int, hd *hardDraw) (SplitPlan, error) {
	n := len(rows)
	sp := SplitPlan{Name: name, Anchors: rows, K: cfg.K, KNeg: cfg.KNeg, Labels: make([]int64, n)}
	for i, r := range rows {
		sp.Labels[i] = labels[r]
	}
	if n == 0 {
		return sp, fmt.Errorf("bundle: the %s split is empty: too few items for its share %v", name, cfg.Split[s])
	}
	byClass := labelMembers(sp.Labels, seqFrom(0, n))
	for _, c := range slices.Sorted(maps.Keys(byClass)) {
		m := len(byClass[c])
		switch {
		case m-1 >= cfg.K:
		case m == 1:
			return sp, fmt.Errorf("bundle: class %s has 1 item in the %s split: no positive for it (a class needs at least 2 items per split; give it more items, or leave it out: -ood-classes holds a class out of the splits, as OOD inputs)", cfg.class(c), name)
		case !cfg.AllowFewer:
			// Every class short of k in this split, counted, the smallest
			// named, and the k that keeps them all in every split.
			short, smallest := 0, c
			for _, o := range slices.Sorted(maps.Keys(byClass)) {
				if mo := len(byClass[o]); mo-1 < cfg.K {
					short++
					if mo < len(byClass[smallest]) {
						smallest = o
					}
				}
			}
			more := ""
			if short > 1 {
				more = fmt.Sprintf("; %d classes are short of it there, the smallest class %s with %s", short, cfg.class(smallest), counted(len(byClass[smallest]), "item"))
			}
			more += fmt.Sprintf(" (k = %d keeps them all, in every split)", kAll)
			fix := fmt.Sprintf("lower k (-k; k= in Python), or allow fewer (-allow-fewer; allow_fewer=True in Python: its anchors repeat their %d positives)", m-1)
			if alike := alikeNames(cfg.LabelNames); alike != "" {
				// A spelling split a label in two: the likelier cause, which
				// a lower k would hide ("boot " beside "boot", 9 items).
				fix = "perhaps the cause — " + alike + "; otherwise " + fix
			}
			return sp, fmt.Errorf("bundle: class %s has %d items in the %s split, too few for k = %d positives per anchor (another of its class)%s: %s", cfg.class(c), m, name, cfg.K, more, fix)
		}
		if others := n - m; others < cfg.KNeg {
			held := ""
			if k := len(cfg.OODClasses); k > 0 && len(byClass) == 1 {
				// One class left: what the OOD classes took.
				held = fmt.Sprintf("; -ood-classes held out %s, leaving this one alone: hold out fewer", counted(k, "class"))
			}
			return sp, fmt.Errorf("bundle: the %s split has %d items outside class %s, too few for %d negatives per anchor (-kneg, which is -k unless given; kneg= in Python)%s", name, others, cfg.class(c), cfg.KNeg, held)
		}
	}
	sp.PositiveIndex = make([]int64, n*cfg.K)
	sp.NegativeIndex = make([]int64, n*cfg.KNeg)
	notOf := func(c int64) func(int) bool { return func(i int) bool { return sp.Labels[i] != c } }
	lists := map[int64][]int{} // the items outside a class, where rejection would be slow
	for c, m := range byClass {
		if l := listOthers(n, n-len(m), cfg.KNeg, notOf(c)); l != nil {
			lists[c] = l
		}
	}
	parallel.For(n, 256, 0, func(_, lo, hi int) {
		if cfg.stopped() != nil {
			return // the split is dropped below
		}
		for a := lo; a < hi; a++ {
			rng := drawer(cfg.Seed, s, a)
			c := sp.Labels[a]
			distinct(sp.PositiveIndex[a*cfg.K:(a+1)*cfg.K], byClass[c], a, cfg.K, rng)
			hd.draw(sp.NegativeIndex[a*cfg.KNeg:(a+1)*cfg.KNeg], n, notOf(c), lists[c], n-len(byClass[c]), rng, hd.row(rows[a]), func(i int) int { return rows[i] })
		}
	})
	if err := cfg.stopped(); err != nil {
		return sp, err
	}
	return sp, nil
}

// others draws len(dst) distinct members of 0..n−1 that ok accepts:
// from list when it is given (all of them, listed), else by rejection
// (when they are at least a quarter of n: few draws each; listOthers
// says when a list is needed).
func others(dst []int64, n int, ok func(int) bool, list []int, rng *rand.Rand) {
	if list != nil {
		distinct(dst, list, -1, len(dst), rng)
		return
	}
	if len(dst) <= othersScan {
		for c := 0; c < len(dst); {
			v := rng.IntN(n)
			if !ok(v) || slices.Contains(dst[:c], int64(v)) {
				continue
			}
			dst[c] = int64(v)
			c++
		}
		return
	}
	// Many draws (hard negatives' candidates: thousands an anchor): the
	// same draws, each checked against a bit set of those taken, not a
	// scan of them, which made the draw O(len(dst)²) — 5 min 42 s for
	// 60 000 anchors' 4 096 candidates.
	words := (n + 63) / 64
	bp, _ := othersBits.Get().(*[]uint64)
	if bp == nil || len(*bp) < words {
		b := make([]uint64, words)
		bp = &b
	}
	bits := *bp
	for c := 0; c < len(dst); {
		v := rng.IntN(n)
		if !ok(v) || bits[v>>6]&(1<<(v&63)) != 0 {
			continue
		}
		bits[v>>6] |= 1 << (v & 63)
		dst[c] = int64(v)
		c++
	}
	for _, v := range dst { // cleared for the next draw
		bits[v>>6] &^= 1 << (v & 63)
	}
	othersBits.Put(bp)
}

// othersScan is the most draws others checks by a scan of those taken.
const othersScan = 32

// othersBits holds others' bit sets of the members taken, cleared.
var othersBits sync.Pool

// stopped is the error of MakeContext's context once it is done, nil
// before and for Make.
func (c MakeConfig) stopped() error {
	if c.ctx == nil {
		return nil
	}
	return c.ctx.Err()
}

// listOthers returns the members of 0..n−1 that ok accepts, avail of
// them, when rejection would be slow for k draws (they are under a
// quarter of n, or under 2k); else nil.
func listOthers(n, avail, k int, ok func(int) bool) []int {
	if avail*4 >= n && avail >= 2*k {
		return nil
	}
	list := make([]int, 0, avail)
	for i := range n {
		if ok(i) {
			list = append(list, i)
		}
	}
	return list
}

// hardDraw draws an anchor's negatives (MakeConfig.HardNegatives): h of
// them the nearest to the anchor among c candidates drawn at random, the
// rest random among the other candidates. A nil hardDraw draws them all
// at random, as before hard negatives were made.
type hardDraw struct {
	h, c          int
	rows, queries []float32
	d             int
}

// newHardDraw checks cfg's hard negatives against items (KNeg filled in)
// and returns their draw, nil without them.
func newHardDraw(items Items, cfg MakeConfig) (*hardDraw, error) {
	h, c := cfg.HardNegatives, cfg.HardCandidates
	if c == 0 {
		c = DefaultHardCandidates
	}
	switch {
	case h < 0:
		return nil, fmt.Errorf("bundle: %d hard negatives per anchor: want 0 (none) or more", h)
	case cfg.HardCandidates < 0:
		return nil, fmt.Errorf("bundle: %d hard-negative candidates: want 0 (%d) or more", cfg.HardCandidates, DefaultHardCandidates)
	case h == 0:
		return nil, nil
	case h > cfg.KNeg:
		return nil, fmt.Errorf("bundle: %d hard negatives per anchor, more than its %d negatives (-kneg, which is -k unless given; kneg= in Python)", h, cfg.KNeg)
	case c < cfg.KNeg:
		return nil, fmt.Errorf("bundle: %d hard-negative candidates, fewer than the %d negatives an anchor takes from them: want at least kneg (-kneg; kneg= in Python)", c, cfg.KNeg)
	case items.D < 1 || len(items.Rows) != items.N*items.D || items.Queries > 0 && len(items.QueryRows) != items.Queries*items.D:
		return nil, fmt.Errorf("bundle: hard negatives are the nearest rows of embeddings: Items.Rows (and QueryRows) must hold them, N×D")
	}
	return &hardDraw{h: h, c: c, rows: items.Rows, queries: items.QueryRows, d: items.D}, nil
}

// row is source row r's embedding (nil without hard negatives).
func (hd *hardDraw) row(r int) []float32 {
	if hd == nil {
		return nil
	}
	return hd.rows[r*hd.d : (r+1)*hd.d]
}

// query is query q's embedding.
func (hd *hardDraw) query(q int) []float32 {
	if hd == nil {
		return nil
	}
	return hd.queries[q*hd.d : (q+1)*hd.d]
}

// draw fills dst with an anchor's negatives among 0..n−1 that ok accepts,
// avail of them (list, when given, all of them): at random (others)
// without hard negatives; else hd.h the nearest to anchor, by the exact
// float64 squared distance to hd.rows' row rowOf(i) (kernel.SqDist64;
// ties by draw order), among
// min(hd.c, avail) candidates drawn at random, then the other candidates
// in their draw order. The same numbers at any kernel level and number of
// goroutines.
func (hd *hardDraw) draw(dst []int64, n int, ok func(int) bool, list []int, avail int, rng *rand.Rand, anchor []float32, rowOf func(i int) int) {
	if hd == nil {
		others(dst, n, ok, list, rng)
		return
	}
	c := min(hd.c, avail)
	if list == nil && 2*c > avail { // rejection would redraw most picks: list them
		list = make([]int, 0, avail)
		for i := range n {
			if ok(i) {
				list = append(list, i)
			}
		}
	}
	cand := make([]int64, c)
	others(cand, n, ok, list, rng)
	// The distances are each candidate's own (kernel.SqDist64: the same
	// bits at every level), the same numbers at any number of goroutines:
	// split over idle workers where the anchors' own chunks (their
	// callers' parallel.For) leave cores free. Each candidate's row of
	// hd.rows is listed in the order it is read: the draw's where the
	// candidates are few, else row order, which the memory streams (a
	// RAG user's 3 000 queries among 20 000 passages: 1.75 times faster).
	idx := make([]int32, c)
	var slot []int32 // the candidate each read row is (nil: idx's order)
	if 4*c < n {
		for j, i := range cand {
			idx[j] = int32(rowOf(int(i)))
		}
	} else {
		at := make([]int32, n)
		for i := range at {
			at[i] = -1
		}
		for j, i := range cand {
			at[i] = int32(j)
		}
		slot = make([]int32, 0, c)
		for i, j := range at {
			if j >= 0 {
				idx[len(slot)] = int32(rowOf(i))
				slot = append(slot, j)
			}
		}
	}
	a64 := make([]float64, len(anchor)) // exact: widened once, not per candidate
	for t, v := range anchor {
		a64[t] = float64(v)
	}
	dist := make([]float64, c)
	chunk := max(64, (1<<15)/max(1, hd.d))
	parallel.For(c, chunk, 0, func(_, lo, hi int) {
		if slot == nil {
			kernel.SqDist64(dist[lo:hi], a64, hd.rows, idx[lo:hi])
			return
		}
		read := make([]float64, hi-lo)
		kernel.SqDist64(read, a64, hd.rows, idx[lo:hi])
		for k, v := range read {
			dist[slot[lo+k]] = v
		}
	})
	hard := nearest(dist, hd.h)
	for j, o := range hard {
		dst[j] = cand[o]
	}
	slices.Sort(hard)
	k := hd.h
	for j := range c {
		if k == len(dst) {
			break
		}
		if _, in := slices.BinarySearch(hard, j); !in {
			dst[k] = cand[j]
			k++
		}
	}
}

// nearest returns the indices of the h smallest of dist, nearest first,
// ties by index: the first h of the indices sorted stably by distance,
// found with a heap of h rather than a sort of all.
func nearest(dist []float64, h int) []int {
	h = min(h, len(dist))
	// before says whether index a comes before index b.
	before := func(a, b int) bool {
		if c := cmp.Compare(dist[a], dist[b]); c != 0 {
			return c < 0
		}
		return a < b
	}
	heap := make([]int, 0, h) // a max-heap under before: its root the last kept
	down := func(i int) {
		for {
			l, big := 2*i+1, i
			if l < len(heap) && before(heap[big], heap[l]) {
				big = l
			}
			if r := l + 1; r < len(heap) && before(heap[big], heap[r]) {
				big = r
			}
			if big == i {
				return
			}
			heap[i], heap[big] = heap[big], heap[i]
			i = big
		}
	}
	for i := range dist {
		switch {
		case len(heap) < h:
			heap = append(heap, i)
			for j := len(heap) - 1; j > 0 && before(heap[(j-1)/2], heap[j]); j = (j - 1) / 2 {
				heap[j], heap[(j-1)/2] = heap[(j-1)/2], heap[j]
			}
		case h > 0 && before(i, heap[0]):
			heap[0] = i
			down(0)
		}
	}
	slices.SortFunc(heap, func(a, b int) int {
		if before(a, b) {
			return -1
		}
		return 1
	})
	return heap
}

// addHeldOut adds the OOD calibration and OOD splits (anchors alone).
func (p *Plan) addHeldOut(oodCal, ood []int, cfg MakeConfig, label func(row int) int64) {
	add := func(name string, rows []int) {
		sp := SplitPlan{Name: name, Anchors: rows}
		if label != nil {
			sp.Labels = make([]int64, len(rows))
			for i, r := range rows {
				sp.Labels[i] = label(r)
			}
		}
		p.Splits = append(p.Splits, sp)
	}
	if cfg.OODCalShare > 0 {
		add(SplitNames[OODCal], oodCal)
		if len(oodCal) < oodCalFew {
			p.Warnings = append(p.Warnings, fmt.Sprintf("ood-cal holds %d in-distribution inputs: a per-input OOD test calibrated on them cannot certify a false-alarm rate of 0.05 (its smallest p-value is 1/(n+1) = %.3g; 0.05 needs at least %d); raise -ood-cal-share", len(oodCal), 1/float64(len(oodCal)+1), oodCalFew))
		}
	} else if len(cfg.OODClasses) > 0 {
		// Not made, but kept in its place: p.Splits[OOD] is the OOD
		// split (Plan.Splits).
		p.Splits = append(p.Splits, SplitPlan{Name: SplitNames[OODCal], Omitted: true})
	}
	if len(cfg.OODClasses) > 0 {
		add(SplitNames[OOD], ood)
	}
}

// oodCalFew is the fewest OOD calibration inputs that can certify the
// default α_ood = 0.05: ⌈1/α⌉ − 1.
const oodCalFew = 19

// count fills Classes.
func (p *Plan) count() {
	for _, sp := range p.Splits {
		var c map[int64]int
		if sp.Labels != nil {
			c = map[int64]int{}
			for _, l := range sp.Labels {
				c[l]++
			}
		}
		p.Classes = append(p.Classes, c)
	}
}

// checkGroupSizes refuses groups of the splits (parts: indices into
// groups) that have no positive (pos: a row besides their anchor, of
// another session with Sessions), or fewer than k without AllowFewer,
// counting them all and naming the first and the smallest, so that one
// run says what to change.
func (items Items) checkGroupSizes(groups, pos [][]int, parts [][]int, cfg MakeConfig) error {
	unit, rows := "group", "rows"
	if items.ViewItems {
		unit, rows = "item", "views"
	}
	var single, short []int
	for _, gs := range parts {
		for _, g := range gs {
			switch v := len(pos[g]); {
			case v == 0:
				single = append(single, g)
			case v < cfg.K && !cfg.AllowFewer:
				short = append(short, g)
			}
		}
	}
	slices.Sort(single)
	slices.Sort(short)
	name := func(g int) string { return items.groupName(items.Groups[groups[g][0]]) }
	if len(single) > 0 && items.Sessions != nil {
		return fmt.Errorf("bundle: %s of the splits have no row in another session than their anchor's (the first: %s, %s in one session): no cross-session positive; leave their rows out first, keeping the groups of two sessions or more (pairs = np.unique(np.stack([groups, sessions], 1), axis=0); g, n = np.unique(pairs[:, 0], return_counts=True); keep = np.isin(groups, g[n > 1]))",
			counted(len(single), unit), name(single[0]), counted(len(groups[single[0]]), "row"))
	}
	if len(single) > 0 {
		advice := "leave their rows out first (ids, counts = np.unique(groups, return_counts=True); keep = np.isin(groups, ids[counts > 1]))"
		inSplits := 0
		for _, gs := range parts {
			inSplits += len(gs)
		}
		// Paths as group ids are each their own group: all but a few of
		// one row. Where most groups have more, the '/' is part of their
		// ids ("vox1/id10001").
		// Re-ID image names first: under a query and a gallery directory
		// they are file paths too, whose first directory is no person.
		if reid := reidNames(items.GroupNames, "group"); reid != "" && !items.ViewItems && 10*len(single) >= 9*inSplits {
			advice = reid
		} else if paths := pathNames(items.GroupNames, "group"); paths != "" && !items.ViewItems && 10*len(single) >= 9*inSplits {
			advice = paths
		}
		return fmt.Errorf("bundle: %s of the splits have one row (the first: %s): no other row to be its anchor's positive; %s",
			counted(len(single), unit), name(single[0]), advice)
	}
	if len(short) > 0 {
		least := slices.MinFunc(short, func(a, b int) int { return len(pos[a]) - len(pos[b]) })
		fewest := ""
		if len(pos[least]) < len(pos[short[0]]) {
			fewest = fmt.Sprintf("; the fewest: %d, %s", len(pos[least]), name(least))
		}
		besides := "besides their anchor"
		if items.Sessions != nil {
			besides = "in other sessions than their anchor's"
		}
		return fmt.Errorf("bundle: %d %ss of the splits have fewer than k = %d %s %s (the first: %s, with %d%s): lower k (-k %d keeps them all), or allow fewer (-allow-fewer; allow_fewer=True in Python: their anchors repeat them)",
			len(short), unit, cfg.K, rows, besides, name(short[0]), len(pos[short[0]]), fewest, len(pos[least]))
	}
	return nil
}

// anchorSessionSkew warns when the groups' anchors (each group's first
// row) are far more often of one session than anchors drawn at random
// within their groups would be: rows sorted by session within each group,
// as a directory listing sorts a re-ID export's images by camera, make
// every anchor the first camera's, and the guarantee then speaks of such
// anchors alone. Only sessions that many groups share are compared (at
// most one for every four groups: cameras, not a speaker's own
// recordings), over 20 groups or more; the warning comes from a total
// variation distance of 0.2 between the two distributions, and of twice
// what anchors drawn at random would be expected to have at most.
func (items Items) anchorSessionSkew(groups, parts [][]int) string {
	if items.Sessions == nil || items.ViewItems {
		return ""
	}
	var gs []int
	for _, p := range parts {
		gs = append(gs, p...)
	}
	// variance: of each session's count of random anchors, Σ p(1 − p)
	// over the groups, p the group's share of the session's rows.
	anchors, random, variance := map[int64]float64{}, map[int64]float64{}, map[int64]float64{}
	for _, g := range gs {
		rows := groups[g]
		anchors[items.Sessions[rows[0]]]++
		count := map[int64]int{}
		for _, r := range rows {
			count[items.Sessions[r]]++
		}
		for s, c := range count {
			p := float64(c) / float64(len(rows))
			random[s] += p
			variance[s] += p * (1 - p)
		}
	}
	if len(gs) < 20 || 4*len(random) > len(gs) {
		return ""
	}
	sessions := slices.Sorted(maps.Keys(random))
	tv, noise, worst := 0.0, 0.0, sessions[0]
	for _, s := range sessions {
		tv += math.Abs(anchors[s] - random[s])
		noise += math.Sqrt(variance[s])
		if anchors[s]-random[s] > anchors[worst]-random[worst] {
			worst = s
		}
	}
	// noise bounds the distance's expectation for rows in a random order
	// (E|X − EX| ≤ σ): with many sessions a random order's distance is
	// itself near 0.2 (200 groups of 20 rows over 50 sessions: at 0.2 or
	// more in a third of random orders), and it must be twice that too.
	n := float64(len(gs))
	if tv/(2*n) < 0.2 || tv < 2*noise {
		return ""
	}
	name := strconv.FormatInt(worst, 10)
	if worst >= 0 && worst < int64(len(items.SessionNames)) {
		name = strconv.Quote(items.SessionNames[worst])
	}
	return fmt.Sprintf("the anchors (each group's first row) are %.1f%% session %s, where an anchor drawn at random within its group would be %.1f%% (%d groups): the rows look sorted by session within each group, as a directory listing sorts a re-ID export's images by camera, and the guarantee speaks of anchors drawn as the calibration anchors are — anchors of the other sessions may be covered less; shuffle the rows with their group and session ids before bundling (perm = np.random.default_rng(0).permutation(len(X)); X, groups, sessions = X[perm], groups[perm], sessions[perm])",
		100*anchors[worst]/n, name, 100*random[worst]/n, len(gs))
}

// catchAll warns of a group far larger than the others (100 rows or more,
// and 20 times the median group's or more): an id that marks rows of no
// item — a re-ID gallery's false detections (person 0000), an "unknown"
// speaker, a catch-all — makes them one another's positives, as a
// missing label's mark would. Views' items are left alone.
func (items Items) catchAll(groups [][]int) string {
	if items.ViewItems || len(groups) < 3 {
		return ""
	}
	sizes := make([]int, len(groups))
	largest := 0
	for g, rows := range groups {
		sizes[g] = len(rows)
		if len(rows) > len(groups[largest]) {
			largest = g
		}
	}
	slices.Sort(sizes)
	median, n := sizes[len(sizes)/2], len(groups[largest])
	if n < 100 || n < 20*median {
		return ""
	}
	id := items.Groups[groups[largest][0]]
	literal := strconv.FormatInt(id, 10)
	if id >= 0 && id < int64(len(items.GroupNames)) {
		literal = strconv.Quote(items.GroupNames[id])
	}
	return fmt.Sprintf("%s has %d rows, %d times the median group's %d: if its id marks rows of no one item — false detections (a re-ID gallery's person 0000), an unknown person or speaker, a catch-all — its rows are one another's positives; leave them out (keep = groups != %s)",
		items.groupName(id), n, n/median, median, literal)
}

// emptyGroupSplit says why a split of groups is empty: too few groups for
// its share, or, with labels, groups split label by label where no label
// has enough of them (labels as fine as the groups: each its own).
func (items Items) emptyGroupSplit(name string, share float64, strata map[int64][]int) error {
	unit := "groups"
	if items.ViewItems {
		unit = "items"
	}
	total, most := 0, 0
	for _, gs := range strata {
		total += len(gs)
		most = max(most, len(gs))
	}
	if items.Labels == nil || len(strata) == 1 {
		return fmt.Errorf("bundle: the %s split is empty: %d %s are too few for its share %v", name, total, unit, share)
	}
	return fmt.Errorf("bundle: the %s split is empty: the %d %s are split label by label, and no label has enough of them for its share %v (the most a label has: %d). Labels here are classes of whole %s, for class-conditional calibration; labels as fine as the %s themselves (an identity's label and group both) leave each label one: give the groups alone, or coarser labels",
		name, total, unit, share, most, unit, unit)
}

// makeGroups plans bundles whose items are groups of rows (views of one
// item): each group's first row is an anchor, its other rows the
// anchor's positives.
func makeGroups(items Items, cfg MakeConfig, hd *hardDraw) (*Plan, error) {
	if len(items.Groups) != items.N {
		return nil, fmt.Errorf("bundle: %d group ids for %d rows of embeddings", len(items.Groups), items.N)
	}
	if items.Labels != nil && len(items.Labels) != items.N {
		return nil, fmt.Errorf("bundle: %d labels for %d rows of embeddings%s", len(items.Labels), items.N, transposedHint(len(items.Labels), items.N))
	}
	gnone, gwarning, err := cfg.ungrouped(items.Groups, cfg.MissingGroupNames)
	if err != nil {
		return nil, err
	}
	var snone func(int64) bool
	swarning := ""
	if items.Sessions != nil {
		if len(items.Sessions) != items.N {
			return nil, fmt.Errorf("bundle: %d session ids for %d rows of embeddings", len(items.Sessions), items.N)
		}
		grouped := func(r int) bool { return gnone == nil || !gnone(items.Groups[r]) }
		if snone, swarning, err = cfg.unsessioned(items.Sessions, grouped, cfg.MissingSessionNames); err != nil {
			return nil, err
		}
	}
	// The groups, in order of their first row.
	index := map[int64]int{}
	var groups [][]int
	for r, g := range items.Groups {
		if gnone != nil && gnone(g) || snone != nil && snone(items.Sessions[r]) {
			continue
		}
		i, ok := index[g]
		if !ok {
			i = len(groups)
			index[g] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	// Each group's positives: its rows but the anchor, of other sessions
	// than the anchor's when sessions are given.
	pos := make([][]int, len(groups))
	for g, rows := range groups {
		if items.Sessions == nil {
			pos[g] = rows[1:]
			continue
		}
		for _, r := range rows[1:] {
			if items.Sessions[r] != items.Sessions[rows[0]] {
				pos[g] = append(pos[g], r)
			}
		}
	}
	label := func(g int) int64 { return 0 }
	if items.Labels != nil {
		for _, rows := range groups {
			for _, r := range rows[1:] {
				if items.Labels[r] != items.Labels[rows[0]] {
					return nil, fmt.Errorf("bundle: %s has rows of labels %s and %s: a group's rows are views of one item, of one class; where the groups are what the rows are to be split by — recordings of windows in several modes, patients, sites — and the labels the classes, give the groups as blocks (-blocks FILE; blocks= in Python): each block lies whole in one split, its rows positives of their own class", items.groupName(items.Groups[rows[0]]), cfg.class(items.Labels[rows[0]]), cfg.class(items.Labels[r]))
				}
			}
		}
		label = func(g int) int64 { return items.Labels[groups[g][0]] }
	}
	none, warning, err := cfg.unlabeled(items.Labels)
	if err != nil {
		return nil, err
	}
	strata := map[int64][]int{}
	for g := range groups {
		if none == nil || !none(label(g)) {
			strata[label(g)] = append(strata[label(g)], g)
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x73706c6974))
	if items.Labels == nil && len(cfg.OODClasses) > 0 {
		return nil, fmt.Errorf("bundle: OOD classes need labels")
	}
	oodCal, ood, left, err := heldOut(strata, cfg, rng)
	if err != nil {
		return nil, err
	}
	parts := stratify(left, cfg.Split[:], rng)
	if err := items.checkGroupSizes(groups, pos, parts, cfg); err != nil {
		if snone != nil {
			// Dropping the rows of no session can leave a group one
			// session: say so, and that the rows to count are the others.
			return nil, fmt.Errorf("%w; %s (-missing-labels drop), which the groups' sessions are counted without: count them among the rows kept (the NumPy lines above on groups[ok] and sessions[ok], ok the rows whose session id is no missing mark)", err, swarning)
		}
		return nil, err
	}
	p := &Plan{}
	for _, w := range []string{gwarning, swarning, warning} {
		if w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	if w := unsplit(cfg.Split, left, parts, "items"); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	if w := items.anchorSessionSkew(groups, parts); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	if w := items.catchAll(groups); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	for s, gs := range parts {
		if err := cfg.stopped(); err != nil {
			return nil, err
		}
		if cfg.Split[s] == 0 {
			p.Splits = append(p.Splits, omitted(s, cfg))
			continue
		}
		name := SplitNames[s]
		n := len(gs)
		if n == 0 {
			return nil, items.emptyGroupSplit(name, cfg.Split[s], left)
		}
		sp := SplitPlan{Name: name, K: cfg.K, KNeg: cfg.KNeg, Anchors: make([]int, n)}
		if items.Labels != nil {
			sp.Labels = make([]int64, n)
		}
		// The pool: every view of the split's items but their anchors.
		start := make([]int, n+1)
		for i, g := range gs {
			sp.Anchors[i] = groups[g][0]
			if sp.Labels != nil {
				sp.Labels[i] = label(g)
			}
			views := pos[g] // checkGroupSizes: enough
			sp.PositivePool = append(sp.PositivePool, views...)
			start[i+1] = len(sp.PositivePool)
		}
		sp.PositiveIndex = make([]int64, n*cfg.K)
		sp.NegativeIndex = make([]int64, n*cfg.KNeg)
		// Negatives: the other items' anchors, of other classes with labels.
		class := func(i int) int64 { return 0 }
		if sp.Labels != nil {
			class = func(i int) int64 { return sp.Labels[i] }
		}
		byClass := map[int64]int{}
		for i := range n {
			byClass[class(i)]++
		}
		lists := map[int64][]int{}
		for c, m := range byClass {
			avail := n - m
			if sp.Labels == nil {
				avail = n - 1
			}
			if avail < cfg.KNeg {
				return nil, fmt.Errorf("bundle: the %s split has %d items to be negatives, too few for %d negatives per anchor (-kneg, which is -k unless given; kneg= in Python)", name, avail, cfg.KNeg)
			}
			if sp.Labels != nil {
				if l := listOthers(n, avail, cfg.KNeg, func(i int) bool { return class(i) != c }); l != nil {
					lists[c] = l
				}
			}
		}
		parallel.For(n, 256, 0, func(_, lo, hi int) {
			for a := lo; a < hi; a++ {
				rng := drawer(cfg.Seed, s, a)
				distinct(sp.PositiveIndex[a*cfg.K:(a+1)*cfg.K], seqFrom(start[a], start[a+1]), -1, cfg.K, rng)
				ok := func(i int) bool { return i != a }
				if sp.Labels != nil {
					ok = func(i int) bool { return class(i) != class(a) }
				}
				list := lists[class(a)]
				if sp.Labels == nil && n-1 < 2*cfg.KNeg {
					list = slices.DeleteFunc(seqFrom(0, n), func(i int) bool { return i == a })
				}
				avail := n - 1
				if sp.Labels != nil {
					avail = n - byClass[class(a)]
				}
				hd.draw(sp.NegativeIndex[a*cfg.KNeg:(a+1)*cfg.KNeg], n, ok, list, avail, rng, hd.row(sp.Anchors[a]), func(i int) int { return int(sp.Anchors[i]) })
			}
		})
		p.Splits = append(p.Splits, sp)
	}
	rowsOf := func(gs []int) []int {
		var rows []int
		for _, g := range gs {
			rows = append(rows, groups[g][0])
		}
		return rows
	}
	var lab func(int) int64
	if items.Labels != nil {
		lab = func(r int) int64 { return items.Labels[r] }
	}
	p.addHeldOut(rowsOf(oodCal), rowsOf(ood), cfg, lab)
	p.count()
	return p, nil
}

func seqFrom(lo, hi int) []int {
	s := make([]int, hi-lo)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

// pairsOutOfRange says, for pairs of which one names a query or row out
// of range, how many do, and what the pairs' ranges suggest (OutOfRange).
func (items Items) pairsOutOfRange() string {
	bad := 0
	lo, hi := [2]int{math.MaxInt, math.MaxInt}, [2]int{math.MinInt, math.MinInt}
	for _, pr := range items.Pairs {
		if pr[0] < 0 || pr[0] >= items.Queries || pr[1] < 0 || pr[1] >= items.N {
			bad++
		}
		for c := range 2 {
			lo[c], hi[c] = min(lo[c], pr[c]), max(hi[c], pr[c])
		}
	}
	return OutOfRange(bad, len(items.Pairs), lo, hi, items.Queries, items.N)
}

// dedupeRelevant removes the repeats from each query's relevant rows
// (rows 0..n−1), keeping each row where it first appears, and returns how
// many it removed: O(pairs + n), where a search of the list for each pair
// was quadratic in a query's relevant rows (18 040 queries with a median
// of 3 940 relevant rows each took minutes).
func dedupeRelevant(relevant [][]int, n int) int {
	seen := make([]bool, n)
	removed := 0
	for q, rel := range relevant {
		kept := rel[:0]
		for _, r := range rel {
			if !seen[r] {
				seen[r] = true
				kept = append(kept, r)
			}
		}
		for _, r := range kept {
			seen[r] = false
		}
		removed += len(rel) - len(kept)
		relevant[q] = kept
	}
	return removed
}

// MaxRelated is the most (row, related row) pairs that several labels a
// row may make (Items.LabelSets): each is held as an int, 8 bytes.
const MaxRelated = 1 << 30

// sharedLabels is each row's related rows, in ascending order: the rows
// that share a label with it, never itself — the relevant rows of
// relevance pairs np.argwhere(M @ M.T > 0) would give, the diagonal left
// out. It refuses, before holding them, more than limit pairs.
func sharedLabels(sets [][]int32, limit int) ([][]int, error) {
	n := len(sets)
	labels := 0
	for _, ls := range sets {
		for _, l := range ls {
			labels = max(labels, int(l)+1)
		}
	}
	members := make([][]int, labels)
	for i, ls := range sets {
		for _, l := range ls {
			members[l] = append(members[l], i)
		}
	}
	// Count first (a row's related rows once each: stamped), then fill
	// one backing array.
	stamp := make([]int, n)
	for i := range stamp {
		stamp[i] = -1
	}
	total := 0
	for q, ls := range sets {
		stamp[q] = q
		for _, l := range ls {
			for _, r := range members[l] {
				if stamp[r] != q {
					stamp[r] = q
					total++
				}
			}
		}
		if total > limit {
			return nil, fmt.Errorf("bundle: the rows that share a label make over %d related pairs (the first %d rows already; 8 bytes each to hold): too many — give one label a row (such as each row's primary label), or leave the largest labels out", limit, q+1)
		}
	}
	for i := range stamp {
		stamp[i] = -1
	}
	all := make([]int, 0, total)
	related := make([][]int, n)
	for q, ls := range sets {
		start := len(all)
		stamp[q] = q
		for _, l := range ls {
			for _, r := range members[l] {
				if stamp[r] != q {
					stamp[r] = q
					all = append(all, r)
				}
			}
		}
		rel := all[start:len(all):len(all)]
		slices.Sort(rel)
		related[q] = rel
	}
	return related, nil
}

// heldOutSets holds the rows of several labels a row (sets) that carry
// one of cfg.OODClasses out: ood are those rows, sorted, and in sets
// they carry no label, so that they relate to no row (no query's
// positive; the caller keeps them out of the negatives too). An OOD
// label that no row carries is an error, as is every row held out.
func heldOutSets(sets [][]int32, cfg MakeConfig) (in [][]int32, ood []int, err error) {
	classes := uniq(cfg.OODClasses)
	held := map[int64]bool{}
	for _, c := range classes {
		held[c] = true
	}
	carried := map[int64]bool{}
	in = make([][]int32, len(sets))
	for r, ls := range sets {
		in[r] = ls
		out := false
		for _, l := range ls {
			carried[int64(l)] = true
			out = out || held[int64(l)]
		}
		if out {
			in[r] = nil
			ood = append(ood, r)
		}
	}
	for _, c := range classes {
		if !carried[c] {
			return nil, nil, fmt.Errorf("bundle: OOD label %s is carried by no row (the rows carry %s)", cfg.class(c), labelList(slices.Sorted(maps.Keys(carried)), cfg))
		}
	}
	if len(ood) == len(sets) {
		return nil, nil, fmt.Errorf("bundle: every row carries an OOD label (%s): nothing is left in distribution", labelList(classes, cfg))
	}
	return in, ood, nil
}

// inDistribution says, after a count of rows, that rows carrying an OOD
// label are left out of it (ood of them), or "" when none are.
func inDistribution(ood int) string {
	if ood == 0 {
		return ""
	}
	return fmt.Sprintf(" in distribution (%d carry an OOD label)", ood)
}

// sharedWith are the labels each positive shares with its anchor
// (Bundle.PositiveLabels): anchor a is row qs[a] and its k positives the
// rows pos[a·k:(a+1)·k], each row's labels sets[row]; ascending, each
// once.
func sharedWith(sets [][]int32, qs []int, pos []int64, k int) (start, labels []int64) {
	start = make([]int64, 1, len(pos)+1)
	for a, q := range qs {
		mine := slices.Compact(slices.Sorted(slices.Values(sets[q])))
		for _, r := range pos[a*k : (a+1)*k] {
			for _, l := range mine {
				if slices.Contains(sets[r], l) {
					labels = append(labels, int64(l))
				}
			}
			start = append(start, int64(len(labels)))
		}
	}
	return start, labels
}

// crowdedQueries warns of queries with more than ten times as many
// relevant rows as 99% of the queries (nearest rank), naming the most
// crowded, or is "": in a shop's interaction log they are bots and
// crawlers (a user's walk-through: 25 of 20 000 users with 2 800–8 900
// random views each, where users had 1 to 500 interactions), each one
// query like any user in the calibration and the coverage. relevant holds
// each query's distinct relevant rows. Under 100 queries with a relevant
// row, the 99th percentile is the largest, and nothing is said.
func crowdedQueries(relevant [][]int, items Items) string {
	var counts []int
	for _, rel := range relevant {
		if len(rel) > 0 {
			counts = append(counts, len(rel))
		}
	}
	if len(counts) < 100 {
		return ""
	}
	sorted := slices.Sorted(slices.Values(counts))
	rank := func(p float64) int { return sorted[int(math.Ceil(p*float64(len(sorted))))-1] }
	median, p99 := rank(0.5), rank(0.99)
	n, most := 0, -1
	for q, rel := range relevant {
		if len(rel) > 10*p99 {
			n++
			if most < 0 || len(rel) > len(relevant[most]) {
				most = q
			}
		}
	}
	if n == 0 {
		return ""
	}
	who := fmt.Sprintf("%d queries have", n)
	if n == 1 {
		who = "1 query has"
	}
	return fmt.Sprintf("%s more than ten times as many relevant rows as 99%% of the queries (the most: %s, %d; the median query %d, the 99th percentile %d): "+
		"bots or crawlers rather than users? Each query is one unit of the guarantee, whatever its count; leave out the queries that are not the users the sets are for (docs/your-data.md, \"Interaction logs\")",
		who, items.queryName(most), len(relevant[most]), median, p99)
}

// makePairs plans bundles whose anchors are queries and whose positives
// are the rows relevance pairs name for them, or, with several labels a
// row, the rows that share a label with the row.
func makePairs(items Items, cfg MakeConfig, hd *hardDraw) (*Plan, error) {
	sets := items.LabelSets // with OOD labels, the rows carrying one have none
	var ood []int           // the rows carrying an OOD label, sorted
	var isOOD []bool        // isOOD[r]: row r is one of them (nil without)
	if items.LabelSets != nil {
		if items.Queries != items.N || !items.SelfQueries || len(items.Pairs) > 0 {
			return nil, fmt.Errorf("bundle: several labels a row make the rows their own queries, related by the labels they share: give no queries or pairs with them")
		}
		if len(cfg.OODClasses) > 0 {
			var err error
			if sets, ood, err = heldOutSets(items.LabelSets, cfg); err != nil {
				return nil, err
			}
			isOOD = make([]bool, items.N)
			for _, r := range ood {
				isOOD[r] = true
			}
		}
	} else if items.oneLabelSets != nil {
		sets = items.oneLabelSets // the pairs of the label's rows, as the recipe's (Items.oneLabel refused any others)
	} else if items.Queries < 1 || len(items.Pairs) == 0 {
		return nil, fmt.Errorf("bundle: relevance pairs need query embeddings and at least one pair")
	} else if len(cfg.OODClasses) > 0 || cfg.OODCalShare > 0 {
		return nil, fmt.Errorf("bundle: OOD classes and an OOD calibration share are for labelled items, not relevance pairs")
	}
	relevant := make([][]int, items.Queries)
	if sets != nil {
		var err error
		if relevant, err = sharedLabels(sets, MaxRelated); err != nil {
			return nil, err
		}
	}
	self := 0 // pairs (q, q) of self-queries
	for i, pr := range items.Pairs {
		q, r := pr[0], pr[1]
		switch {
		case q < 0 || q >= items.Queries:
			return nil, fmt.Errorf("bundle: pair %d names query %d, there are %d queries%s", i, q, items.Queries, items.pairsOutOfRange())
		case r < 0 || r >= items.N:
			return nil, fmt.Errorf("bundle: pair %d names row %d, there are %d rows of embeddings%s", i, r, items.N, items.pairsOutOfRange())
		}
		if items.SelfQueries && q == r {
			self++
			continue
		}
		relevant[q] = append(relevant[q], r)
	}
	repeated := dedupeRelevant(relevant, items.N)
	lower, err := gradedRows(items, relevant)
	if err != nil {
		return nil, err
	}
	judged, unjudged, err := judgedNegatives(items, cfg, relevant, lower)
	if err != nil {
		return nil, err
	}
	queryDropped := "" // the warning of queries left out for a missing query label
	if items.QueryLabels != nil {
		if items.LabelSets != nil {
			return nil, fmt.Errorf("bundle: query labels are for relevance pairs between queries and rows, and several labels a row make their own pairs: give one or the other")
		}
		if len(items.QueryLabels) != items.Queries {
			return nil, fmt.Errorf("bundle: %d query labels for %d queries", len(items.QueryLabels), items.Queries)
		}
		missing, first := 0, -1
		marks := map[int64]int{}
		for q, l := range items.QueryLabels {
			if l < 0 && len(relevant[q]) > 0 {
				if missing++; first < 0 {
					first = q
				}
				marks[l]++
			}
		}
		if missing > 0 && cfg.MissingLabels != MissingClass {
			var each []string
			for _, l := range slices.Sorted(maps.Keys(marks)) {
				each = append(each, fmt.Sprintf("%s: %d", cfg.class(l), marks[l]))
			}
			what := fmt.Sprintf("%d of the queries with a relevant row have a query label that marks a missing value (%s; the first: %s)", missing, strings.Join(each, ", "), items.queryName(first))
			if cfg.MissingLabels == MissingRefused {
				return nil, &InputError{InputQueryLabels, fmt.Errorf("bundle: %s: as one class they would share a threshold with -calibration class; give each query its label, or leave those queries out (-missing-labels drop; missing_labels=\"drop\" in Python)", what)}
			}
			queryDropped = what + ": left out of every split"
		}
	}
	relevantQueries, droppedQueries := 0, 0
	strata := map[int64][]int{}
	for q, rel := range relevant {
		if len(rel) > 0 {
			var l int64
			if items.QueryLabels != nil {
				if l = items.QueryLabels[q]; l < 0 && queryDropped != "" {
					droppedQueries++
					continue
				}
			}
			strata[l] = append(strata[l], q)
			relevantQueries++
		}
	}
	if items.LabelSets != nil && relevantQueries == 0 {
		return nil, fmt.Errorf("bundle: no two of the %d rows share a label: with several labels a row, a row's positives are the rows that share one of its labels, and no row has any (a label held by one row alone relates it to none)", items.N)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x73706c6974))
	// With several labels a row, -ood-cal-share's queries (heldOutSets
	// has taken the OOD rows out already: no OOD class is left in strata).
	noOOD := cfg
	noOOD.OODClasses = nil
	oodCal, _, strata, err := heldOut(strata, noOOD, rng)
	if err != nil {
		return nil, err
	}
	parts := stratify(strata, cfg.Split[:], rng)
	p := &Plan{queries: true, selfQueries: items.SelfQueries}
	if n := items.Queries - relevantQueries - droppedQueries - len(ood); n > 0 && items.oneLabelSets == nil { // one label's: the manifest counts its rows
		first := 0 // the first query with no relevant row that no OOD label holds out
		for len(relevant[first]) > 0 || isOOD != nil && isOOD[first] {
			first++
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d of %d queries have no relevant row: left out (the first: %s)", n, items.Queries, items.queryName(first)))
	}
	if queryDropped != "" {
		p.Warnings = append(p.Warnings, queryDropped)
	}
	if unjudged > 0 {
		first := -1
		for q, rel := range relevant {
			if len(rel) > 0 && len(judged[q]) == 0 {
				first = q
				break
			}
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("judged negatives: %d of the %d queries with a relevant row have no pair judged not relevant: left out of their splits (the first: %s), so the bundles speak of queries with judged negatives; the splits are those of the same bundles without judged negatives, less those queries, and so is each query's positive draw: a set calibrated on those (all queries) may be evaluated on these", unjudged, relevantQueries, items.queryName(first)))
	}
	if repeated > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s given more than once: counted once", counted(repeated, "pair")))
	}
	if items.LabelSets == nil {
		if w := crowdedQueries(relevant, items); w != "" {
			p.Warnings = append(p.Warnings, w)
		}
	}
	if self > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s name a query's own row (the queries are the rows): left out, as a row is not its own positive (np.fill_diagonal(related, False) before taking the pairs)", counted(self, "pair")))
	}
	if w := unsplit(cfg.Split, strata, parts, "queries with a relevant row"); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	for s, qs := range parts {
		if err := cfg.stopped(); err != nil {
			return nil, err
		}
		if cfg.Split[s] == 0 {
			p.Splits = append(p.Splits, omitted(s, cfg))
			continue
		}
		name := SplitNames[s]
		// at[a] is anchor a's place among its split's queries before
		// those without judged negatives were left out: its draws'
		// generator, so that they are those of the bundles without.
		var at []int
		if judged != nil {
			kept := qs[:0:0]
			for a, q := range qs {
				if len(judged[q]) > 0 {
					kept, at = append(kept, q), append(at, a)
				}
			}
			if len(kept) == 0 && len(qs) > 0 {
				return nil, fmt.Errorf("bundle: the %s split is empty: none of its %d queries has a pair judged not relevant", name, len(qs))
			}
			qs = kept
		}
		n := len(qs)
		if n == 0 {
			which := ""
			switch {
			case items.LabelSets != nil:
				which = fmt.Sprintf(" (the queries are the rows that share a label with another: %d of the %d)", relevantQueries, items.N)
			case items.oneLabelSets != nil:
				which = fmt.Sprintf(" (the queries are the rows carrying %s: %d of the %d)", items.OneLabel, relevantQueries, items.N)
			}
			return nil, fmt.Errorf("bundle: the %s split is empty: too few queries for its share %v%s", name, cfg.Split[s], which)
		}
		sp := SplitPlan{Name: name, K: cfg.K, KNeg: cfg.KNeg, Anchors: qs}
		if items.QueryLabels != nil {
			sp.Labels = make([]int64, n)
			for a, q := range qs {
				sp.Labels[a] = items.QueryLabels[q]
			}
		}
		for _, q := range qs {
			if len(relevant[q]) < cfg.K && !cfg.AllowFewer {
				return nil, fmt.Errorf("bundle: %s has %s, too few for k = %d positives: lower k (-k; k= in Python), or allow fewer (-allow-fewer; allow_fewer=True in Python: it repeats them)", items.queryName(q), counted(len(relevant[q]), "relevant row"), cfg.K)
			}
		}
		if items.N-len(ood)-1 < cfg.KNeg {
			if len(ood) > 0 {
				return nil, &InputError{InputKNeg, fmt.Errorf("bundle: %d rows in distribution (%d of %d carry an OOD label), too few for %d negatives per query (-kneg, which is -k unless given; kneg= in Python): ask for fewer", items.N-len(ood), len(ood), items.N, cfg.KNeg)}
			}
			return nil, &InputError{InputKNeg, fmt.Errorf("bundle: %d rows, too few for %d negatives per query (-kneg, which is -k unless given; kneg= in Python): ask for fewer", items.N, cfg.KNeg)}
		}
		// Draw in the source's row numbers, then keep the rows drawn as the
		// split's pool (positives and negatives share it).
		pos := make([]int64, n*cfg.K)
		neg := make([]int64, n*cfg.KNeg)
		own := 0 // a self-query's own row is no candidate negative either
		if items.SelfQueries {
			own = 1
		}
		for _, q := range qs {
			if judged != nil {
				break // a query's negatives are its judged ones, repeated where fewer
			}
			if items.N-len(ood)-len(relevant[q])-len(lower(q))-own < cfg.KNeg {
				graded := ""
				if l := len(lower(q)); l > 0 {
					graded = fmt.Sprintf(" (%d of them at a lower grade than the least relevant score: no positives, and no negatives either)", l)
				}
				return nil, fmt.Errorf("bundle: %s has %d rows relevant to it%s among %d%s, too few others for %d negatives", items.queryName(q), len(relevant[q])+len(lower(q)), graded, items.N-len(ood), inDistribution(len(ood)), cfg.KNeg)
			}
		}
		parallel.For(n, 256, 0, func(_, lo, hi int) {
			for a := lo; a < hi; a++ {
				rel := relevant[qs[a]]
				rng := drawer(cfg.Seed, s, a)
				if at != nil {
					rng = drawer(cfg.Seed, s, at[a])
				}
				distinct(pos[a*cfg.K:(a+1)*cfg.K], rel, -1, cfg.K, rng)
				if judged != nil {
					distinct(neg[a*cfg.KNeg:(a+1)*cfg.KNeg], judged[qs[a]], -1, cfg.KNeg, rng)
					continue
				}
				// Membership by binary search in a sorted copy: rel keeps
				// the pairs' order, which the draws follow.
				srt := slices.Concat(rel, lower(qs[a])) // rows relevant at a lower grade are no negatives either
				slices.Sort(srt)
				self := -1
				if items.SelfQueries {
					self = qs[a]
				}
				ok := func(r int) bool {
					_, in := slices.BinarySearch(srt, r)
					return !in && r != self && (isOOD == nil || !isOOD[r])
				}
				avail := items.N - len(ood) - len(srt) - own
				hd.draw(neg[a*cfg.KNeg:(a+1)*cfg.KNeg], items.N, ok, listOthers(items.N, avail, cfg.KNeg, ok), avail, rng, hd.query(qs[a]), func(i int) int { return i })
			}
		})
		if items.LabelSets != nil {
			sp.PositiveLabelStart, sp.PositiveLabels = sharedWith(items.LabelSets, qs, pos, cfg.K)
		}
		local := map[int64]int64{}
		var pool []int
		remap := func(x []int64) {
			for i, r := range x {
				l, ok := local[r]
				if !ok {
					l = int64(len(pool))
					local[r] = l
					pool = append(pool, int(r))
				}
				x[i] = l
			}
		}
		remap(pos)
		remap(neg)
		sp.PositiveIndex, sp.NegativeIndex = pos, neg
		sp.PositivePool, sp.NegativePool = pool, pool
		p.Splits = append(p.Splits, sp)
	}
	if judged != nil {
		p.warnJudgedRepeats(judged, cfg.KNeg)
	}
	if items.LabelSets != nil {
		p.addHeldOut(oodCal, ood, cfg, nil)
	}
	p.count()
	if items.QueryLabels != nil {
		p.warnAbsentQueryLabels(strata, cfg)
	}
	return p, nil
}

// warnAbsentQueryLabels warns of query labels (classes of the strata)
// that have no query in the calibration or the test split: a
// class-conditional set then has no threshold for that class, or no test
// of it.
func (p *Plan) warnAbsentQueryLabels(strata map[int64][]int, cfg MakeConfig) {
	for _, s := range []int{Cal, Test} {
		if s >= len(p.Splits) || p.Splits[s].Omitted {
			continue
		}
		var absent []int64
		for _, l := range slices.Sorted(maps.Keys(strata)) {
			if p.Classes[s][l] == 0 {
				absent = append(absent, l)
			}
		}
		if len(absent) > 0 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("the %s split holds no query of the query label %s (too few queries for its share %v): -calibration class has no threshold for it, and -per-class no row", SplitNames[s], labelList(absent, cfg), cfg.Split[s]))
		}
	}
}

// gradedRows is each query's rows relevant to it at a lower grade
// (Items.Graded): in range, each once, none of its relevant rows nor, for
// self-queries, its own row; nil where none are given, and lowerOf's
// rows of a query then none.
func gradedRows(items Items, relevant [][]int) (lowerOf func(q int) []int, err error) {
	if len(items.Graded) == 0 {
		return func(int) []int { return nil }, nil
	}
	lower := make([][]int, items.Queries)
	for i, pr := range items.Graded {
		q, r := pr[0], pr[1]
		switch {
		case q < 0 || q >= items.Queries:
			return nil, fmt.Errorf("bundle: pair %d relevant at a lower grade names query %d, there are %d queries", i, q, items.Queries)
		case r < 0 || r >= items.N:
			return nil, fmt.Errorf("bundle: pair %d relevant at a lower grade names row %d, there are %d rows of embeddings", i, r, items.N)
		case items.SelfQueries && q == r:
			continue
		}
		lower[q] = append(lower[q], r)
	}
	for q, rows := range lower {
		if len(rows) == 0 {
			continue
		}
		slices.Sort(rows)
		rows = slices.Compact(rows)
		lower[q] = slices.DeleteFunc(rows, func(r int) bool { return slices.Contains(relevant[q], r) })
	}
	return func(q int) []int { return lower[q] }, nil
}

// judgedNegatives is each query's rows judged not relevant to it
// (Items.Negatives), with MakeConfig.JudgedNegatives (nil without): in
// range, each once, and none of its relevant rows (a pair judged both
// ways stays relevant) nor, for self-queries, its own row; unjudged
// counts the queries with a relevant row and none judged not relevant.
func judgedNegatives(items Items, cfg MakeConfig, relevant [][]int, lower func(q int) []int) (judged [][]int, unjudged int, err error) {
	if !cfg.JudgedNegatives {
		if len(items.Negatives) > 0 {
			return nil, 0, fmt.Errorf("bundle: %d pairs judged not relevant given without JudgedNegatives: say whether they are the queries' negatives", len(items.Negatives))
		}
		return nil, 0, nil
	}
	switch {
	case items.LabelSets != nil:
		return nil, 0, fmt.Errorf("bundle: judged negatives are pairs judged not relevant (scored 0 or less), which labels shared by rows do not give: give queries and scored pairs")
	case cfg.HardNegatives > 0:
		return nil, 0, fmt.Errorf("bundle: judged negatives and hard negatives (-kneg-hard) both choose the negatives: give one (the judged ones are the data set's own hard negatives)")
	case len(items.Negatives) == 0:
		return nil, 0, fmt.Errorf("bundle: judged negatives asked for, but no pair is judged not relevant: give pairs with a score each, 0 or less for a pair judged not relevant (a qrels file's third column; label 0 of a pair classification; a triplet's negative)")
	}
	judged = make([][]int, items.Queries)
	for i, pr := range items.Negatives {
		q, r := pr[0], pr[1]
		switch {
		case q < 0 || q >= items.Queries:
			return nil, 0, fmt.Errorf("bundle: pair %d judged not relevant names query %d, there are %d queries", i, q, items.Queries)
		case r < 0 || r >= items.N:
			return nil, 0, fmt.Errorf("bundle: pair %d judged not relevant names row %d, there are %d rows of embeddings", i, r, items.N)
		}
		if items.SelfQueries && q == r {
			continue
		}
		judged[q] = append(judged[q], r)
	}
	dedupeRelevant(judged, items.N)
	for q := range judged {
		if len(judged[q]) == 0 || len(relevant[q])+len(lower(q)) == 0 {
			continue
		}
		// A pair judged not relevant and also relevant — at the least
		// score or a lower grade (two assessors, merged qrels) — stays
		// relevant: no negative.
		srt := slices.Concat(relevant[q], lower(q))
		slices.Sort(srt)
		judged[q] = slices.DeleteFunc(judged[q], func(r int) bool { _, in := slices.BinarySearch(srt, r); return in })
	}
	for q, rel := range relevant {
		if len(rel) > 0 && len(judged[q]) == 0 {
			unjudged++
		}
	}
	return judged, unjudged, nil
}

// warnJudgedRepeats adds a warning counting the queries with fewer
// judged negatives than kneg, which repeat them: each query weighs alike
// in exclusion, its few judged negatives more.
func (p *Plan) warnJudgedRepeats(judged [][]int, kneg int) {
	total, anchors := 0, 0
	var counts []int
	for _, sp := range p.Splits {
		if sp.Omitted {
			continue
		}
		for _, q := range sp.Anchors {
			counts = append(counts, len(judged[q]))
			if len(judged[q]) < kneg {
				total++
			}
		}
		anchors += len(sp.Anchors)
	}
	if total == 0 {
		return
	}
	slices.Sort(counts)
	k90 := counts[max(0, int(math.Ceil(0.1*float64(len(counts))))-1)]
	msg := fmt.Sprintf("judged negatives: %d of %d queries have fewer than kneg = %d judged not relevant and repeat them (each query weighs alike in exclusion; from %d to %d a query)", total, anchors, kneg, counts[0], counts[len(counts)-1])
	if k90 < kneg { // else fewer than a tenth repeat them: no smaller -kneg to advise
		distinct := "every query"
		if first, _ := slices.BinarySearch(counts, k90); first > 0 {
			distinct = fmt.Sprintf("%d of the %d queries (%.0f%%)", len(counts)-first, len(counts), math.Floor(100*float64(len(counts)-first)/float64(len(counts))))
		}
		msg += fmt.Sprintf(": -kneg %d (kneg=%d in Python) draws distinct ones for %s", k90, k90, distinct)
	}
	p.Warnings = append(p.Warnings, msg)
}

// split is split s of the plan, made, and the rows its anchors are of
// (queries, for relevance pairs; rows otherwise), once rows and queries
// are checked against the plan (CheckRows): what Bundle and Arrays build
// from.
func (p *Plan) split(s int, rows, queries []float32, d int) (SplitPlan, []float32, error) {
	if err := p.CheckRows(rows, queries, d); err != nil {
		return SplitPlan{}, nil, err
	}
	if err := p.made(s); err != nil {
		return SplitPlan{}, nil, err
	}
	sp := p.Splits[s]
	if p.queries {
		return sp, queries, nil
	}
	return sp, rows, nil
}

// made returns an error unless the plan made split s (one of Fit, Val,
// Cal, Test, OODCal and OOD), naming the split and why it was not made.
func (p *Plan) made(s int) error {
	if s < 0 || s >= len(SplitNames) {
		return fmt.Errorf("bundle: split %d: want one of Fit (0) to OOD (%d); the plan made %s", s, OOD, strings.Join(p.Made(), ", "))
	}
	if s < len(p.Splits) && !p.Splits[s].Omitted {
		return nil
	}
	why := "its share is 0"
	switch s {
	case OODCal:
		why = "MakeConfig.OODCalShare is 0"
	case OOD:
		why = "no MakeConfig.OODClasses held out"
	}
	return fmt.Errorf("bundle: the %s split is not made: %s", SplitNames[s], why)
}

// Bundle builds split s of the plan in memory from the embeddings (rows
// of d) and, for relevance pairs, the queries' embeddings.
func (p *Plan) Bundle(s int, rows []float32, queries []float32, d int) (*Bundle, error) {
	sp, src, err := p.split(s, rows, queries, d)
	if err != nil {
		return nil, err
	}
	// The split's rows, named by their rows in the caller's arrays (a
	// bundle's own anchors[27][3] would name no row the caller knows).
	anchorsOf := "embeddings"
	if p.queries {
		anchorsOf = "queries"
	}
	for _, c := range []struct {
		what string
		src  []float32
		idx  []int
	}{{anchorsOf, src, sp.Anchors}, {"embeddings", rows, sp.PositivePool}, {"embeddings", rows, sp.NegativePool}} {
		for _, r := range c.idx {
			if j := FirstNonFinite(c.src[r*d : (r+1)*d]); j >= 0 {
				return nil, fmt.Errorf("bundle: %s: row %d, coordinate %d is %v (in the %s split): leave the rows that hold NaN or ±Inf out first, with their labels, keep = np.isfinite(X).all(axis=1); X, y = X[keep], y[keep]",
					c.what, r, j, c.src[r*d+j], sp.Name)
			}
		}
	}
	b := &Bundle{N: len(sp.Anchors), K: sp.K, D: d, KNeg: sp.KNeg, Labels: sp.Labels,
		Anchors: gather(src, sp.Anchors, d), PositiveIndex: sp.PositiveIndex, NegativeIndex: sp.NegativeIndex,
		PositiveLabelStart: sp.PositiveLabelStart, PositiveLabels: sp.PositiveLabels}
	b.Index = make([]int64, b.N)
	for i, r := range sp.Anchors {
		b.Index[i] = int64(r)
	}
	b.Blocks = p.blocksOf(sp.Anchors)
	if sp.PositivePool != nil {
		b.PositivePool = gather(rows, sp.PositivePool, d)
	}
	if sp.NegativePool != nil {
		b.Pool = gather(rows, sp.NegativePool, d)
	}
	if sp.K == 0 {
		b.PositiveIndex, b.NegativeIndex = nil, nil
	}
	if p.logits.values != nil {
		b.C, b.Logits = p.logits.width, p.logits.gathered(sp.Anchors)
	}
	if p.activations.values != nil {
		b.A, b.Activations = p.activations.width, p.activations.gathered(sp.Anchors)
	}
	if err := b.validate(sp.K > 0); err != nil {
		return nil, fmt.Errorf("bundle: the %s split: %w", sp.Name, err)
	}
	return b, nil
}

// blocksOf is the blocks of rows (Bundle.Blocks), nil where the rows
// were not split by block.
func (p *Plan) blocksOf(rows []int) []int64 {
	if p.blockOf == nil {
		return nil
	}
	blocks := make([]int64, len(rows))
	for i, r := range rows {
		blocks[i] = p.blockOf[r]
	}
	return blocks
}

// Indexed is split s's bundle without its embeddings: its counts,
// labels and positive and negative indices, its anchors empty and its
// pools empty too (but not nil where the split has pools of its own, as
// Bundle makes them): for what depends on the pairing alone
// (conformal.Units), without a copy of the rows. A split the plan did not
// make, or an s out of range, is an error naming it.
func (p *Plan) Indexed(s int) (*Bundle, error) {
	if err := p.made(s); err != nil {
		return nil, err
	}
	sp := p.Splits[s]
	b := &Bundle{N: len(sp.Anchors), K: sp.K, KNeg: sp.KNeg, Labels: sp.Labels, PositiveIndex: sp.PositiveIndex, NegativeIndex: sp.NegativeIndex}
	if sp.PositivePool != nil {
		b.PositivePool = []float32{}
	}
	if sp.NegativePool != nil {
		b.Pool = []float32{}
	}
	if sp.K == 0 {
		b.PositiveIndex, b.NegativeIndex = nil, nil
	}
	return b, nil
}

// Arrays are split s's arrays as Write stores them, its embeddings taken
// from rows (and, for relevance pairs, queries) by gathering as they are
// written.
func (p *Plan) Arrays(s int, rows, queries []float32, d int) (map[string]Array, error) {
	sp, src, err := p.split(s, rows, queries, d)
	if err != nil {
		return nil, err
	}
	n := len(sp.Anchors)
	m := map[string]Array{"anchors": Gathered(src, d, sp.Anchors)}
	index := make([]int64, n)
	for i, r := range sp.Anchors {
		index[i] = int64(r)
	}
	m["index"] = Int64(index, n)
	if blocks := p.blocksOf(sp.Anchors); blocks != nil {
		m["blocks"] = Int64(blocks, n)
	}
	if sp.Labels != nil {
		m["labels"] = Int64(sp.Labels, n)
	}
	if sp.PositiveLabelStart != nil {
		m["positive_label_start"] = Int64(sp.PositiveLabelStart, len(sp.PositiveLabelStart))
		m["positive_labels"] = Int64(sp.PositiveLabels, len(sp.PositiveLabels))
	}
	if p.logits.values != nil {
		m["logits"] = Gathered(p.logits.values, p.logits.width, sp.Anchors)
	}
	if p.activations.values != nil {
		m["activations"] = Gathered(p.activations.values, p.activations.width, sp.Anchors)
	}
	if sp.K > 0 {
		m["positive_index"] = Int64(sp.PositiveIndex, n, sp.K)
		if sp.PositivePool != nil {
			m["positive_pool"] = Gathered(rows, d, sp.PositivePool)
		}
	}
	if sp.KNeg > 0 {
		m["negative_index"] = Int64(sp.NegativeIndex, n, sp.KNeg)
		if sp.NegativePool != nil {
			m["negative_pool"] = Gathered(rows, d, sp.NegativePool)
		}
	}
	return m, nil
}

// Write writes every split of the plan as DIR/NAME.npz (fit.npz, val.npz,
// cal.npz, test.npz — those of a share above 0 — and ood-cal.npz and
// ood.npz when made), each
// atomically, its embeddings gathered from rows (and queries) as they are
// written: no split is copied in memory. It returns the files' paths.
func (p *Plan) Write(dir string, rows, queries []float32, d int) ([]string, error) {
	var paths []string
	for s, sp := range p.Splits {
		if sp.Omitted {
			continue
		}
		path := filepath.Join(dir, sp.Name+".npz")
		arrays, err := p.Arrays(s, rows, queries, d)
		if err != nil {
			return paths, err
		}
		if err := WriteNPZ(path, arrays); err != nil {
			if strings.HasPrefix(err.Error(), path+": ") { // named already ("…: no such directory …")
				return paths, fmt.Errorf("bundle: %w", err)
			}
			return paths, fmt.Errorf("bundle: %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// warnCopies adds a warning to p when rows that are exact copies of each
// other (the same d float32 values, bit for bit) lie in different splits:
// a test point that the fit split holds too, which no shuffle of items
// can keep apart; and, for labels and groups, when they all lie in one
// split (warnCopiesInSplit). An item's views alike are left alone. rows are the source rows the plan's splits index; for
// relevance pairs, the rows are a collection that every split shares, and
// the copies looked for are among queries, the split's anchors (the same
// question asked twice, under two ids).
func (p *Plan) warnCopies(rows, queries []float32, d int) {
	if d <= 0 {
		return
	}
	src, what, one := rows, "rows", "row"
	if p.queries {
		src, what, one = queries, "query rows", "query row"
	}
	split := make([]int8, len(src)/d) // 1 + the split of each row, 0 for none
	for s, sp := range p.Splits {
		pools := [][]int{sp.Anchors, sp.PositivePool, sp.NegativePool}
		if p.queries {
			pools = pools[:1] // positives and negatives are collection rows
		}
		for _, pool := range pools {
			for _, r := range pool {
				split[r] = int8(s + 1)
			}
		}
	}
	seed := maphash.MakeSeed()
	first := make(map[uint64]int, len(split)) // a row's hash: the first row with it
	copies, across := 0, 0
	var example, inSplit [2]int
	for r := range split {
		if split[r] == 0 {
			continue
		}
		row := src[r*d : (r+1)*d]
		h := maphash.Bytes(seed, unsafe.Slice((*byte)(unsafe.Pointer(&row[0])), 4*d))
		f, seen := first[h]
		if !seen {
			first[h] = r
			continue
		}
		if !slices.EqualFunc(row, src[f*d:(f+1)*d], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
			continue // a hash collision: not a copy (and not looked at further)
		}
		if copies++; copies == 1 {
			inSplit = [2]int{f, r}
		}
		if split[r] != split[f] {
			if across == 0 {
				example = [2]int{f, r}
			}
			across++
		}
	}
	if across == 0 {
		if copies > 0 && (p.mode == "labels" || p.mode == "groups") {
			p.warnCopiesInSplit(copies, inSplit, split)
		}
		return
	}
	f, r := example[0], example[1]
	fix := "remove the copies, or give each row and its copies one group (-groups) to keep them in one split"
	if p.mode == "labels" || p.mode == "label sets" {
		// Groups beside labels make a group's rows one another's
		// positives: a row's copies, not its class's rows.
		fix = "remove the copies (keep = np.sort(np.unique(x, axis=0, return_index=True)[1]), then x[keep] and labels[keep]) if they are one record exported twice; copies that are the data's own (a customer's repeat transactions) may stay: they fall in every split alike, the calibration and test splits too, which stay exchangeable"
	}
	if p.queries {
		fix = "remove the copies, or give each copy's relevance pairs to one query"
	}
	head := fmt.Sprintf("%d %s are exact copies of an earlier %s, and %d of them lie in another split than it (the first: %s %d and %d, in %s and %s)",
		copies, what, one, across, what, f, r, p.Splits[split[f]-1].Name, p.Splits[split[r]-1].Name)
	if copies == 1 {
		head = fmt.Sprintf("%s %d is an exact copy of %s %d, in another split (%s and %s)", one, r, one, f, p.Splits[split[r]-1].Name, p.Splits[split[f]-1].Name)
	}
	p.Warnings = append(p.Warnings, head+", so one point lies in two splits, which the splits are made to keep apart; "+fix)
}

// warnCopiesInSplit warns of copies rows that all lie in their first
// row's split (a path listed twice in an export, kept in one split by its
// group): a copy of an anchor is its positive at distance 0, inside every
// set, and a copy of another class's or group's row a negative inside
// every set. first is the first copy and the row it copies; split gives 1
// + each row's split.
func (p *Plan) warnCopiesInSplit(copies int, first [2]int, split []int8) {
	f, r := first[0], first[1]
	head := fmt.Sprintf("%d rows are exact copies of an earlier row of their split (the first: rows %d and %d, in %s)", copies, f, r, p.Splits[split[r]-1].Name)
	if copies == 1 {
		head = fmt.Sprintf("row %d is an exact copy of row %d, in the same split (%s)", r, f, p.Splits[split[r]-1].Name)
	}
	positive := "a copy of an anchor is its positive at distance 0, inside every set"
	if p.sessions {
		positive = "a copy of an anchor in another session of its group is its positive at distance 0, inside every set (in its own session, a row its positives never are: a duplicate the group's count holds twice)"
	}
	p.Warnings = append(p.Warnings, head+": "+positive+", and a copy of another "+map[string]string{"labels": "class's", "groups": "group's"}[p.mode]+
		" row a negative inside every set; remove the copies (_, keep = np.unique(X, axis=0, return_index=True); keep.sort(); then X[keep] and the labels' or groups' [keep])")
}

// alignedAnchors is how many anchors of each split warnUnaligned looks
// at, spread evenly over the split.
const alignedAnchors = 500

// warnUnaligned adds a warning to p when the bundles' positives are no
// closer to their anchors than their negatives: when, over up to
// alignedAnchors anchors a split, a positive is the closer of a positive
// and a negative of one anchor (in ℓ2) in less than 55% of such
// comparisons, where 50% is chance. That is what labels, ids or pairs
// that do not follow the embeddings' rows give (a file of ids one line
// off, labels of another ordering), and what embeddings that do not tell
// the positives apart give: either way, a set that covers the positives
// covers about as many negatives, and nothing says so until the numbers
// are read. Where the positives win by inner product instead (in 55% of
// comparisons or more, 10 points over ℓ2), the warning says that the
// embeddings look like a dot-product model's, whose positives are the
// longer rows, and how to map them; the hint follows what made the
// positives (the plan's mode). rows and queries are as for warnCopies.
func (p *Plan) warnUnaligned(rows, queries []float32, d int) {
	if d <= 0 {
		return
	}
	anchorRows := rows
	if p.queries {
		anchorRows = queries
	}
	dot := func(a, b []float32) float64 {
		var s float64
		for i, v := range a {
			s += float64(v) * float64(b[i])
		}
		return -s // as a distance: the larger product the nearer
	}
	// closer counts the comparisons a positive wins in ℓ2, closerDot by
	// inner product.
	var closer, closerDot, comparisons float64
	anchors := 0
	var dp, dn, ip, in []float64
	wins := func(pos, neg []float64) (w float64) {
		slices.Sort(neg)
		for _, v := range pos {
			// lo negatives are nearer than this positive, hi−lo as near
			// (a tie counts half), the rest farther.
			lo, _ := slices.BinarySearch(neg, v)
			hi, _ := slices.BinarySearch(neg, math.Nextafter(v, math.Inf(1)))
			w += float64(len(neg)-hi) + float64(hi-lo)/2
		}
		return w
	}
	for _, sp := range p.Splits[:min(len(p.Splits), Test+1)] {
		if sp.K == 0 || sp.KNeg == 0 || len(sp.Anchors) == 0 {
			continue
		}
		posPool, negPool := sp.PositivePool, sp.NegativePool
		if posPool == nil {
			posPool = sp.Anchors
		}
		if negPool == nil {
			negPool = sp.Anchors
		}
		step := max(1, len(sp.Anchors)/alignedAnchors)
		for a := 0; a < len(sp.Anchors); a += step {
			r := sp.Anchors[a]
			x := anchorRows[r*d : (r+1)*d]
			dp, dn, ip, in = dp[:0], dn[:0], ip[:0], in[:0]
			for _, i := range sp.PositiveIndex[a*sp.K : (a+1)*sp.K] {
				s := posPool[i]
				dp = append(dp, rowDist(x, rows[s*d:(s+1)*d]))
				ip = append(ip, dot(x, rows[s*d:(s+1)*d]))
			}
			for _, i := range sp.NegativeIndex[a*sp.KNeg : (a+1)*sp.KNeg] {
				s := negPool[i]
				dn = append(dn, rowDist(x, rows[s*d:(s+1)*d]))
				in = append(in, dot(x, rows[s*d:(s+1)*d]))
			}
			closer += wins(dp, dn)
			closerDot += wins(ip, in)
			comparisons += float64(len(dp) * len(dn))
			anchors++
		}
	}
	if comparisons == 0 || closer/comparisons >= 0.55 {
		return
	}
	hint := map[string]string{
		"labels":     "do the labels follow the embeddings' rows, in the same order?",
		"label sets": "do the rows of labels follow the embeddings' rows, in the same order?",
		"groups":     "do the group ids follow the embeddings' rows, in the same order?",
		"views":      "is the array (n, v, d), each item's views along its second axis?",
		"pairs":      "do the ids follow the rows of the embeddings and of the queries, in the same order? an ids file one line off does this, as do row numbers counted from 1; with judged negatives, well below 50% says the scores are reversed — a triplet's positive and negative columns swapped, or a label whose 0 is the relevant one read as a score (Hugging Face's NLI labels: 0 entailment, 2 contradiction)",
	}[p.mode]
	if share, dotShare := closer/comparisons, closerDot/comparisons; dotShare >= 0.55 && dotShare-share >= 0.1 {
		// A dot-product model: its positives are the larger products,
		// often with the longer rows, which lie farther in ℓ2.
		p.Warnings = append(p.Warnings, fmt.Sprintf("the positives are no closer to their anchors than the negatives in ℓ2 (over %d anchors, a positive was the nearer of a positive and a negative in %.1f%% of %.0f comparisons, where 50%% is chance), but they have the larger inner product with them in %.1f%%: the embeddings look like a dot-product model's, and the sets, around each anchor in a distance, cannot follow inner products. Normalise the rows to unit norm (cosine), or map inner products to distances (docs/your-data.md, \"Dot-product models\")",
			anchors, 100*share, comparisons, 100*dotShare))
		return
	}
	p.Warnings = append(p.Warnings, fmt.Sprintf("the positives are no closer to their anchors than the negatives: over %d anchors, a positive was the nearer of a positive and a negative in %.1f%% of %.0f comparisons, where 50%% is chance, so a set that covers the positives covers about as many negatives. Either the rows are paired wrongly (%s) or these embeddings do not tell the positives apart",
		anchors, 100*closer/comparisons, comparisons, hint))
}

// Inspect adds the warnings of the rows themselves to p: copies across
// splits, positives no nearer than negatives (in ℓ2, or by inner product:
// a dot-product model), and rows of all zeros; it returns CheckRows's
// error, or names the first row holding NaN or ±Inf. ccs bundle and ccs.bundle run it between Make and Write, with
// the calibration split's count of scores (conformal.Inspect).
func (p *Plan) Inspect(rows, queries []float32, d int) error {
	if err := p.CheckRows(rows, queries, d); err != nil {
		return err
	}
	if err := (Embeddings{Source: "bundle: embeddings", N: p.rows, D: d, Rows: rows}).check(); err != nil {
		return err
	}
	if p.queries {
		if err := (Embeddings{Source: "bundle: queries", N: p.nQueries, D: d, Rows: queries}).check(); err != nil {
			return err
		}
	}
	p.warnCopies(rows, queries, d)
	if w := IndexColumnWarning(rows, p.rows, d); w != "" {
		// Neighbouring rows then differ by 1 there, and the near-copy
		// warning would blame overlapping windows; the positives, no
		// nearer than the negatives along it, the labels.
		p.Warnings = append(p.Warnings, "embeddings: "+w)
	} else {
		p.warnNeighbours(rows, d)
		p.warnUnaligned(rows, queries, d)
	}
	p.warnZeroRows(rows, queries, d)
	p.warnTriplets(rows, d)
	return nil
}

// rowDist is the squared ℓ2 distance of two rows, each difference taken
// in float32 and summed in float64 (the warnings' comparisons).
func rowDist(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		x := float64(v - b[i])
		s += x * x
	}
	return s
}

// warnTriplets warns of views (mode "views", three or more an item) whose
// last lies farthest from the first in 80% of the items or more, where
// views alike give 1/(v−1): a triplet export, (anchor, positive,
// negative), given as views, its negative taken for a positive — on a
// user's triplets, a threshold of 1.15 against 0.75 and 76% of the hard
// negatives inside the ℓ2 ball against 30%.
func (p *Plan) warnTriplets(rows []float32, d int) {
	v := p.views
	if p.mode != "views" || v < 3 || d <= 0 {
		return
	}
	n := p.rows / v
	if n < 50 {
		return
	}
	step := max(1, n/4096)
	last, items := 0, 0
	for it := 0; it < n; it += step {
		base := it * v * d
		x := rows[base : base+d]
		far := rowDist(x, rows[base+(v-1)*d:base+v*d])
		farthest := true
		for j := 1; j < v-1 && farthest; j++ {
			farthest = rowDist(x, rows[base+j*d:base+(j+1)*d]) < far
		}
		if farthest {
			last++
		}
		items++
	}
	if 10*last < 8*items {
		return
	}
	p.Warnings = append(p.Warnings, fmt.Sprintf("views: the last of each item's %d views lies farthest from its first in %.1f%% of %d items, where views alike give %.0f%%: triplets, (anchor, positive, negative)? A triplet's negative given as a view is taken for a positive, a set around the anchor then covering it; give triplets as relevance pairs (docs/your-data.md, §6 \"Your data set's own negatives\"). Views of one item ordered by strength (the strongest augmentation last) are views, and give this too",
		v, 100*float64(last)/float64(items), items, 100/float64(v-1)))
}

// IndexColumnWarning says when a coordinate of rows (n rows of d) holds
// n distinct integers of a contiguous range — 0 … n−1
// in some order: a row index or an id saved with the embeddings (pandas'
// index read back as a column, np.genfromtxt of a table), which a set
// then measures as a distance (a user's ℓ2 ball excluded 87.3% of
// negatives for 99.8% without it). "" otherwise.
func IndexColumnWarning(rows []float32, n, d int) string {
	if n < 50 || d < 2 { // a few rows' count feature is a range by chance
		return ""
	}
	var v []float64
	for j := range d {
		// A pass for whole numbers and their range, most coordinates
		// leaving at their first row; a sort only for a range of n.
		lo, hi, whole := math.Inf(1), math.Inf(-1), true
		for i := range n {
			x := float64(rows[i*d+j])
			if x != math.Trunc(x) {
				whole = false
				break
			}
			lo, hi = min(lo, x), max(hi, x)
		}
		if !whole || hi-lo != float64(n-1) || lo > 1 && lo < 1000 {
			// An index counts from 0 or 1, an id from an offset; a range
			// from 3 is a feature's.
			continue
		}
		v = v[:0]
		for i := range n {
			v = append(v, float64(rows[i*d+j]))
		}
		slices.Sort(v)
		if v[n-1]-v[0] != float64(n-1) || v[n-1] > 1<<24 { // beyond float32's integers: not exact
			continue
		}
		distinct := true
		for i := 1; i < n && distinct; i++ {
			distinct = v[i] != v[i-1]
		}
		if distinct {
			keep := fmt.Sprintf("np.delete(X, %d, axis=1)", j)
			switch j {
			case 0:
				keep = "X[:, 1:]"
			case d - 1:
				keep = "X[:, :-1]"
			}
			return fmt.Sprintf("coordinate %d holds the integers %g … %g, each once: a row index or an id saved with the embeddings (pandas' index, np.genfromtxt of a table), or an unscaled rank or time step? A set measures it as a distance, and its range of %d outweighs the other coordinates: leave it out (%s; -embeddings FILE.csv leaves a table's index out), or standardise it", j, v[0], v[n-1], n-1, keep)
		}
	}
	return ""
}

// nearCopyRatio is the ratio of distances under which warnNeighbours
// takes neighbouring rows for near-copies: the median distance between
// rows i and i+1 against that between random rows of one class.
const nearCopyRatio = 0.25

// warnNeighbours adds a warning to p, for rows split at random by label
// (no blocks), when neighbouring rows of the file (i and i+1, of one
// class, in different splits) are far nearer to each other than random
// rows of one class in different splits are: overlapping windows of a
// recording, frames of a video, an export in time order. A random split
// then puts a row's near-copies in the calibration and the test splits —
// and in the OOD test's pool and its calibration inputs —, so that the
// guarantees speak of new rows of the recordings already seen, not of a
// new recording. Up to 2 000 pairs of each kind are measured, drawn with
// a fixed seed.
func (p *Plan) warnNeighbours(rows []float32, d int) {
	if p.mode != "labels" || p.blocks || p.rows < 4 || d < 1 {
		return
	}
	split := make([]int8, p.rows)
	label := make([]int64, p.rows)
	for i := range split {
		split[i] = -1
	}
	byClass := map[int64][]int{}
	for s, sp := range p.Splits {
		if sp.Labels == nil || sp.Name == SplitNames[OOD] {
			continue
		}
		for i, r := range sp.Anchors {
			split[r], label[r] = int8(s), sp.Labels[i]
			byClass[label[r]] = append(byClass[label[r]], r)
		}
	}
	dist := func(a, b int) float64 {
		x, y := rows[a*d:(a+1)*d], rows[b*d:(b+1)*d]
		sum := 0.0
		for j := range x {
			t := float64(x[j]) - float64(y[j])
			sum += t * t
		}
		return math.Sqrt(sum)
	}
	const want = 2000
	rng := rand.New(rand.NewPCG(0x6e656967, 0x68626f75)) // "neighbou"
	var near []float64
	for try := 0; try < 20*want && len(near) < want; try++ {
		i := rng.IntN(p.rows - 1)
		if split[i] >= 0 && split[i+1] >= 0 && split[i] != split[i+1] && label[i] == label[i+1] {
			near = append(near, dist(i, i+1))
		}
	}
	var far []float64
	classes := slices.Sorted(maps.Keys(byClass))
	for try := 0; try < 20*want && len(far) < want && len(classes) > 0; try++ {
		m := byClass[classes[rng.IntN(len(classes))]]
		a, b := m[rng.IntN(len(m))], m[rng.IntN(len(m))]
		if split[a] != split[b] {
			far = append(far, dist(a, b))
		}
	}
	if len(near) < 100 || len(far) < 100 {
		return
	}
	slices.Sort(near)
	slices.Sort(far)
	mn, mf := near[len(near)/2], far[len(far)/2]
	if !(mn < nearCopyRatio*mf) {
		return
	}
	p.Warnings = append(p.Warnings, fmt.Sprintf("neighbouring rows are near-copies: over %d pairs of rows i and i+1 of one class in different splits, the median distance is %.3g, against %.3g between random rows of one class in different splits — overlapping windows or frames of one recording? Split at random, a row's near-copies lie in the calibration and the test splits (and in the OOD test's pool and its calibration inputs), so the coverage and the false-alarm rate measured and certified are those of new rows of recordings already seen, not of a new recording; give each row's recording as -blocks FILE (blocks= in Python) to split by recording",
		len(near), mn, mf))
}

// warnZeroRows adds a warning to p counting the rows of the splits (and
// queries) that are all zeros: what an encoder gives for an input it
// failed on (an empty text, an unreadable image), or a row never filled.
// Such a row is a point like any other to the sets, and a query or
// passage of them is answered as if it meant something.
func (p *Plan) warnZeroRows(rows, queries []float32, d int) {
	if d <= 0 {
		return
	}
	zero := func(x []float32) bool {
		for _, v := range x {
			if v != 0 {
				return false
			}
		}
		return true
	}
	count := func(src []float32, used func(func(int))) (n, first int) {
		first = -1
		seen := make([]bool, len(src)/d)
		used(func(r int) {
			if r >= len(seen) || seen[r] {
				return
			}
			seen[r] = true
			if zero(src[r*d : (r+1)*d]) {
				if n++; first < 0 || r < first {
					first = r
				}
			}
		})
		return n, first
	}
	each := func(pools func(sp SplitPlan) [][]int) func(func(int)) {
		return func(f func(int)) {
			for _, sp := range p.Splits {
				for _, pool := range pools(sp) {
					for _, r := range pool {
						f(r)
					}
				}
			}
		}
	}
	var parts []string
	total := 0
	if p.queries {
		if n, first := count(queries, each(func(sp SplitPlan) [][]int { return [][]int{sp.Anchors} })); n > 0 {
			parts, total = append(parts, fmt.Sprintf("%s of the queries (the first: query row %d)", counted(n, "row"), first)), total+n
		}
		if n, first := count(rows, each(func(sp SplitPlan) [][]int { return [][]int{sp.PositivePool, sp.NegativePool} })); n > 0 {
			parts, total = append(parts, fmt.Sprintf("%s of the embeddings the queries retrieve (the first: row %d)", counted(n, "row"), first)), total+n
		}
	} else if n, first := count(rows, each(func(sp SplitPlan) [][]int { return [][]int{sp.Anchors, sp.PositivePool, sp.NegativePool} })); n > 0 {
		parts, total = append(parts, fmt.Sprintf("%s of the embeddings (the first: row %d)", counted(n, "row"), first)), total+n
	}
	if total > 0 {
		verb := " are all zeros"
		if total == 1 {
			verb = " is all zeros"
		}
		p.Warnings = append(p.Warnings, strings.Join(parts, " and ")+verb+": what an encoder gives for an input it failed on (an empty text, an unreadable image), or a row never filled; the sets take them for points like any other, so leave them out (keep = np.any(emb != 0, axis=1)) or embed those inputs again")
	}
}
