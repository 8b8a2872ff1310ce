package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
)

// csvLabelLists reads a CSV column's values as several labels a row where
// every value is a list, as pandas writes a column of lists
// (['joy', 'love']) or json.dumps does (["joy", "love"]): "[]" and an
// empty cell are no label. ok is false where a value is no list, or none
// reads as one ("[CLS]"): one label a row; a value that does not read as
// a list among values that do is an error naming its row. Lists of integers ([3, 16]) are label numbers (names
// nil); lists of strings are names, numbered in their sorted order, as a
// Parquet list column's are. Lists all of one length c ≥ 2 of 0s and 1s
// alone, no cell empty, are a multi-hot matrix's rows: hot is then that
// (n, c) matrix, row-major (multiHotLabels reads it), sets nil.
func csvLabelLists(values []string, source string) (sets [][]int32, names []string, hot []int64, ok bool, err error) {
	lists := make([][]string, len(values))
	realRow, boolean := -1, -1 // the first row listing a number that is no integer literal (0.0, 2.5), True or False
	number, quoted := -1, -1   // the first row listing an unquoted number, a quoted string
	seen, bad := false, -1
	var badErr error
	for i, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
			return nil, nil, nil, false, nil
		}
		var err error
		var kinds int
		if lists[i], kinds, err = listItems(v[1 : len(v)-1]); err != nil {
			if bad < 0 {
				bad, badErr = i, err
			}
			continue
		}
		if kinds&itemReal != 0 && realRow < 0 {
			realRow = i
		}
		if kinds&itemBool != 0 && boolean < 0 {
			boolean = i
		}
		if kinds&itemNumber != 0 && number < 0 {
			number = i
		}
		if kinds&itemQuoted != 0 && quoted < 0 {
			quoted = i
		}
		seen = true
	}
	switch {
	case !seen: // no value a list: names in brackets, one a row ("[CLS]")
		return nil, nil, nil, false, nil
	case bad >= 0:
		return nil, nil, nil, false, fmt.Errorf("%s: row %d, %s: %v: want a list of labels, such as [\"joy\", \"love\"] or ['joy', 'love']", source, bad, strings.TrimSpace(values[bad]), badErr)
	}
	bit := func(x string) int64 { // 0 or 1 (0.0, 1e0, True too, as a BCE target or a mask is written), else -1
		switch f, err := strconv.ParseFloat(x, 64); {
		case err == nil && f == 0 || x == unquotedBool+"False" || x == unquotedBool+"false":
			return 0
		case err == nil && f == 1 || x == unquotedBool+"True" || x == unquotedBool+"true":
			return 1
		}
		return -1
	}
	width, binary := -1, true
	for _, l := range lists {
		switch {
		case len(l) == 0: // no label ([] or an empty cell): a row of none
		case width == -1:
			width = len(l)
		case width != len(l):
			binary = false
		}
		for _, x := range l {
			binary = binary && bit(x) >= 0
		}
	}
	if binary && width >= 2 {
		hot = make([]int64, 0, len(lists)*width)
		for _, l := range lists {
			if len(l) == 0 {
				hot = append(hot, make([]int64, width)...)
			}
			for _, x := range l {
				hot = append(hot, bit(x))
			}
		}
		return nil, nil, hot, true, nil
	}
	if boolean >= 0 {
		return nil, nil, nil, false, fmt.Errorf("%s: row %d (counted from 0), %s: True or False among lists that are no multi-hot rows (one length, 0s and 1s): labels are names or integers", source, boolean, strings.TrimSpace(values[boolean]))
	}
	if number >= 0 && quoted >= 0 { // ['joy'] and [3]: which are names?
		a, b := min(number, quoted), max(number, quoted)
		if a == b {
			return nil, nil, nil, false, fmt.Errorf("%s: row %d (counted from 0), %s: quoted names and unquoted numbers in one list: labels of one kind, names or integers", source, a, strings.TrimSpace(values[a]))
		}
		return nil, nil, nil, false, fmt.Errorf("%s: row %d (counted from 0), %s, and row %d, %s: quoted names and unquoted numbers: labels of one kind, names or integers", source, a, strings.TrimSpace(values[a]), b, strings.TrimSpace(values[b]))
	}
	var flat []string
	ints := true
	for _, l := range lists {
		for _, s := range l {
			flat = append(flat, s)
			if _, ok := listID(s); !ok {
				ints = false
			}
		}
	}
	if realRow >= 0 && !ints { // the first row of a real number that is no integer
		row := slices.IndexFunc(lists, func(l []string) bool {
			return slices.ContainsFunc(l, func(s string) bool {
				_, id := listID(s)
				_, err := strconv.ParseFloat(s, 64)
				return !id && err == nil
			})
		})
		if row >= 0 {
			return nil, nil, nil, false, fmt.Errorf("%s: row %d, %s: a number that is no integer, where a list's numbers are label numbers (integers); lists of 0s and 1s of one length a row are a multi-hot matrix's rows", source, row, strings.TrimSpace(values[row]))
		}
	}
	var codes []int64
	if ints {
		top := 0
		for _, s := range flat {
			n, _ := listID(s)
			codes = append(codes, n)
			top = max(top, int(n))
		}
		if top+1 > maxListLabels(len(flat)) {
			row := slices.IndexFunc(lists, func(l []string) bool {
				return slices.ContainsFunc(l, func(s string) bool { n, _ := listID(s); return int(n) == top })
			})
			return nil, nil, nil, false, fmt.Errorf("%s: row %d, %s: the label number %d, far beyond the others' (label numbers are a multi-hot matrix's columns, %d of them here for %d labels listed in all): a typo? ids as large as these are names — write them as strings", source, row, strings.TrimSpace(values[row]), top, top+1, len(flat))
		}
	} else {
		codes, names = bundle.LabelCodes(flat)
	}
	return listSets(lists, codes), names, nil, true, nil
}

// listSets is each list's labels from codes, the lists' items' codes in
// the lists' order, a row's sorted and each once.
func listSets[T any](lists [][]T, codes []int64) [][]int32 {
	sets := make([][]int32, len(lists))
	k := 0
	for i, l := range lists {
		for range l {
			sets[i] = append(sets[i], int32(codes[k]))
			k++
		}
		slices.Sort(sets[i])
		sets[i] = slices.Compact(sets[i])
	}
	return sets
}

// listID reads a list's item as a label number: an integer below 2^31 in
// magnitude, written so or as an integer-valued float (3.0, 1e0), as one
// label a line is read.
func listID(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f >= 1<<31 || f < -(1<<31) || strings.ContainsAny(s, "xXpP_") {
		return 0, false
	}
	return int64(f), true
}

// multiHotLabels reads hot, the rows of a multi-hot matrix of width
// columns given as lists (a CSV column's, a JSON-lines field's), as
// bundle.LabelSets reads an .npy's: several labels a row, or one where
// each row holds one 1 (a one-hot matrix's classes).
func multiHotLabels(hot []int64, width int, source string) (labelsInput, error) {
	a := bundle.Array{Shape: []int{len(hot) / width, width}, I64: hot}
	sets, ok, err := bundle.LabelSets(a, source)
	switch {
	case err != nil:
		return labelsInput{}, err
	case ok:
		return labelsInput{sets: sets, c: width}, nil
	}
	ids, names, err := bundle.Labels(a, source, "labels") // one-hot: one label a row
	return labelsInput{ids: ids, names: names}, err
}

// What listItems found among a list's items.
const (
	itemReal   = 1 << iota // an unquoted number written otherwise than as an integer (0.0, 2.5)
	itemBool               // Python's True or False, JSON's true or false, unquoted
	itemNumber             // an unquoted number
	itemQuoted             // a quoted string
)

// unquotedBool marks an unquoted True or False among listItems' items,
// which no quoted item can begin with.
const unquotedBool = "\x00bool:"

// listItems splits the inside of a list literal — "'joy', 'love'",
// "\"joy\", \"love\"", "3, 16" — into its items, unquoted; kinds says
// what else than integers it holds unquoted (itemReal, itemBool).
func listItems(s string) (items []string, kinds int, err error) {
	s = strings.TrimSpace(s)
	for s != "" {
		var item string
		switch q := s[0]; q {
		case '"', '\'':
			end := 1
			for end < len(s) && s[end] != q {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, 0, fmt.Errorf("a quote not closed")
			}
			item = s[1:end]
			if q == '"' {
				if u, err := strconv.Unquote(s[:end+1]); err == nil {
					item = u
				}
			}
			kinds |= itemQuoted
			s = strings.TrimSpace(s[end+1:])
		default:
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			item = strings.TrimSpace(s[:end])
			if _, err := strconv.ParseInt(item, 10, 32); err != nil {
				switch f, ferr := strconv.ParseFloat(item, 64); {
				case item == "True" || item == "False" || item == "true" || item == "false":
					kinds |= itemBool
					item = unquotedBool + item // no name: True quoted ('True') is one
				case ferr != nil || math.IsInf(f, 0) || f != f:
					return nil, 0, fmt.Errorf("%q is neither a quoted string nor an integer", item)
				default:
					kinds |= itemReal | itemNumber
				}
			} else {
				kinds |= itemNumber
			}
			s = s[end:]
		}
		items = append(items, item)
		if s == "" {
			break
		}
		if s[0] != ',' {
			return nil, 0, fmt.Errorf("%q follows an item, where a comma should", s[:1])
		}
		s = strings.TrimSpace(s[1:])
	}
	return items, kinds, nil
}

// namedNegativeIDs names the labels of a CSV column's integer lists (sets,
// the integers as they are) where one is negative — a missing label's
// mark, Hugging Face's -1 — so that -missing-labels applies to the mark
// (bundle.MissingInLabelSets) as it does to a Parquet column's integer
// lists, rather than a negative label number reaching the bundles: the
// negative values first, in sorted order, then 0 … the highest id, each
// named by its decimal form. With the marks dropped, label j is then id j
// again, named "j", as without them. names is nil, sets untouched, where
// none is negative.
func namedNegativeIDs(sets [][]int32) (named [][]int32, names []string) {
	var negative []int32
	top := int32(-1)
	for _, s := range sets {
		for _, l := range s {
			if l < 0 {
				negative = append(negative, l)
			}
			top = max(top, l)
		}
	}
	if negative == nil {
		return sets, nil
	}
	negative = slices.Compact(slices.Sorted(slices.Values(negative)))
	code := make(map[int32]int32, len(negative))
	for j, v := range negative {
		code[v] = int32(j)
		names = append(names, strconv.Itoa(int(v)))
	}
	shift := int32(len(negative))
	for v := range top + 1 {
		names = append(names, strconv.Itoa(int(v)))
	}
	named = make([][]int32, len(sets))
	for i, s := range sets {
		named[i] = make([]int32, len(s))
		for j, l := range s {
			if l < 0 {
				named[i][j] = code[l]
			} else {
				named[i][j] = l + shift
			}
		}
	}
	return named, names
}

// missingNamedIDs applies -missing-labels (mode) to the negative values of
// a CSV column's integer lists or a Sequence(ClassLabel)'s (sets, read
// from labels; ids 0 and up named by names, -label-names' or the
// dataset's): a missing label's mark, Hugging Face's -1, which no name
// names. The default refuses it, counting its rows, as without the names;
// drop leaves it out of each row's labels; class makes each negative
// value a label after the names, named by its decimal form (in
// parentheses while a name has it), as a ClassLabel column's -1 is one
// (classLabelMarks). Label j stays names[j] either way.
func missingNamedIDs(sets [][]int32, names []string, mode bundle.MissingLabels, labels string, nullID int32) ([][]int32, []string, error) {
	var marks []int64 // the negative values, distinct, sorted
	for _, s := range sets {
		for _, l := range s {
			if l < 0 && !slices.Contains(marks, int64(l)) {
				marks = append(marks, int64(l))
			}
		}
	}
	if marks == nil {
		return sets, names, nil
	}
	if mode == bundle.MissingRefused {
		named, markNames := namedNegativeIDs(sets)
		_, _, err := bundle.MissingInLabelSets(named, nameNull(markNames, nullID), false, mode, labels)
		return nil, nil, err
	}
	slices.Sort(marks)
	var code map[int64]int64
	if mode == bundle.MissingClass {
		names, code = appendMarks(names, marks)
		if c, ok := code[int64(nullID)]; nullID != 0 && ok { // JSON's null, named so
			names[c] = bundle.FreeName(names, "null")
		}
	}
	out := make([][]int32, len(sets))
	for i, s := range sets {
		row := make([]int32, 0, len(s))
		for _, l := range s {
			switch c, ok := code[int64(l)]; {
			case ok:
				row = append(row, int32(c))
			case l >= 0:
				row = append(row, l)
			}
		}
		slices.Sort(row)
		out[i] = row
	}
	return out, names, nil
}

// nameNull renames, among names of label numbers (namedNegativeIDs'), the
// number a JSON-lines null was read as (nullID; 0: none) to
// bundle.NullMark, which messages write null: the file holds no -2.
func nameNull(names []string, nullID int32) []string {
	if i := slices.Index(names, strconv.Itoa(int(nullID))); nullID != 0 && i >= 0 {
		names = slices.Clone(names)
		names[i] = bundle.NullMark
	}
	return names
}
