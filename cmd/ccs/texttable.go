package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/fastfloat"
)

// textBlockSize is the size of the blocks of whole lines in which a text
// table's rows are parsed, one block a core at a time (tests make it
// small, to put block boundaries everywhere).
var textBlockSize = 1 << 20

// textWorkers is how many goroutines parse a text table's blocks; 0:
// GOMAXPROCS (tests set others: the result is the same).
var textWorkers = 0

// tableParse parses the rows of a text table of width fields a line: the
// first two by the caller, which reads the header, the rest in blocks of
// whole lines on every core (parseBlock), merged in the file's order, so
// that what it finds — the values, each column's first word, missing or
// out-of-range value and its line — is what one pass from the top finds.
type tableParse struct {
	path   string
	sep    rune // the separator; 0: blanks
	width  int
	header bool
	// headerRec is the header's fields, blanks trimmed, where its line is
	// the table's first: a line repeating it (part files joined with cat)
	// is refused, even where its names are numbers (pandas' 0, 1, …),
	// which would read as a row.
	headerRec []string

	n      int         // rows merged
	blocks [][]float32 // the merged blocks' values, row-major
	lists  [][]float32 // a column of lists' values, row after row
	stats  []colStats  // what the merged blocks hold, a column each
}

// colStats is what the lines of a block, or of the blocks merged so far,
// hold in one column: the lines of its first number, first word, first
// missing value and first number float32 cannot hold or no finite one
// (0 where none).
type colStats struct {
	firstNum, firstWord, firstNA, over int
	wordValue, naValue, overValue      string
	overErr                            error
	fraction                           bool // a number that is no integer
	lo, hi                             float64
	commas                             int // numbers written with a decimal comma
	// firstComma is the line of the first number written with a decimal
	// comma, commaValue it; firstPoint the line of the first written
	// with a decimal point (a table with both is refused: "1,500" among
	// points is a thousands separator, not 1.5).
	firstComma, firstPoint int
	commaValue             string
	// A column of lists, one a row ("[0.1, 0.2, …]" as Polars, DuckDB,
	// Spark and Hugging Face datasets write an embedding column, NumPy's
	// printed array, Postgres' {…}, data.table's a|b|c): lists counts
	// them, firstList is the line of the first, listLen its length;
	// firstBracket is the line of the first value written as a list of
	// numbers, read or not (parseList's listish); listOdd the first that
	// is no list of listLen numbers, listOddValue it and listOddWhy why.
	lists, firstList, listLen, firstBracket int
	firstListValue                          string
	listOdd                                 int
	listOddValue, listOddWhy                string
	listOddLen                              int // listOdd's length, where it is a list of another length
	listOddN                                int // the numbers of the first value written as a list that is none
}

// What a number that float32 cannot hold is refused with: the table's
// other readers (.npy, Parquet) refuse the same, as bundle.Narrow does.
var (
	errOverflow  = fmt.Errorf("beyond float32's range (largest %.2g), in which ccs reads embeddings: fix or drop the row (and its label)", math.MaxFloat32)
	errUnderflow = fmt.Errorf("which rounds to 0 in float32 (smallest %.2g), in which ccs reads embeddings: if flushing such values to 0 is what you mean, round them before writing the table (pandas: df.astype(\"float32\"); R: x[abs(x) < 1e-40] <- 0; NumPy: x.astype(np.float32))", math.SmallestNonzeroFloat32)
	errNotFinite = errors.New("no finite number: ccs reads finite coordinates only — drop the row (and its label, in the same order), or fill it in")
)

// block is what parseBlock made of a block of lines.
type block struct {
	t     *tableParse
	rows  int
	vals  []float32
	lists [][]float32 // a column's lists' values, row after row; nil for most
	stats []colStats
	err   error
}

func (t *tableParse) block() *block {
	b := &block{t: t, stats: make([]colStats, t.width)}
	for i := range b.stats {
		b.stats[i].lo, b.stats[i].hi = math.Inf(1), math.Inf(-1)
	}
	return b
}

// add parses one line's fields.
func (b *block) add(rec []string, line int) error {
	t := b.t
	if len(rec) != t.width {
		what := "the first line has"
		if t.header {
			what = "the header has"
		}
		return fmt.Errorf("%s:%d: %d fields, and %s %d (a separator %q inside a field that is not quoted?)", t.path, line, len(rec), what, t.width, string(sepOrBlank(t.sep)))
	}
	if h := t.headerRec; h != nil && strings.TrimSpace(rec[0]) == h[0] && slices.EqualFunc(rec, h, func(a, b string) bool { return strings.TrimSpace(a) == b }) {
		return fmt.Errorf("%s:%d: a line repeating the header (%s): files joined with their headers (cat part-*.csv)? keep the first file's header only (tail -n +2 for the others): read as a row, it would pair every row below with the label of the one above", t.path, line, clipValue(strings.Join(h, string(sepOrBlank(t.sep)))))
	}
	for i, f := range rec {
		s := &b.stats[i]
		v, comma, ok := parseNumber(f)
		switch {
		case ok && v == 0 && nonzeroText(f): // 1e-400: below float64's range, read as 0
			if s.over == 0 {
				s.over, s.overValue, s.overErr = line, strings.Clone(strings.TrimSpace(f)), errUnderflow
			}
			if s.firstNum == 0 {
				s.firstNum = line
			}
			b.vals = append(b.vals, 0)
		case ok:
			x, err := float32(v), error(nil)
			if x == 0 && v != 0 || math.IsInf(float64(x), 0) {
				x, err = bundle.Narrow(v)
			}
			switch {
			case err == nil && math.IsInf(v, 0) && !strings.Contains(strings.ToLower(f), "inf"): // 1e400
				err = errOverflow
			case err == nil && (math.IsInf(v, 0) || v != v):
				err = errNotFinite // inf, -Infinity, NAN
			case err != nil && math.IsInf(float64(float32(v)), 0):
				err = errOverflow
			case err != nil:
				err = errUnderflow
			}
			if err != nil && s.over == 0 {
				s.over, s.overValue, s.overErr = line, strings.Clone(strings.TrimSpace(f)), err
			}
			if s.firstNum == 0 {
				s.firstNum = line
			}
			if comma {
				s.commas++
				if s.firstComma == 0 {
					s.firstComma, s.commaValue = line, strings.Clone(strings.TrimSpace(f))
				}
			} else if s.firstPoint == 0 && strings.IndexByte(f, '.') >= 0 {
				s.firstPoint = line
			}
			if v != math.Trunc(v) {
				s.fraction = true
			}
			s.lo, s.hi = min(s.lo, v), max(s.hi, v)
			b.vals = append(b.vals, x)
		case naValue(f):
			if s.firstNA == 0 {
				s.firstNA, s.naValue = line, strings.Clone(f)
			}
			b.vals = append(b.vals, float32(math.NaN()))
		case emptyList(f): // [] or {}: no embedding, as a missing value
			if s.firstNA == 0 {
				s.firstNA, s.naValue = line, strings.Clone(f)
			}
			b.vals = append(b.vals, float32(math.NaN()))
		default:
			b.vals = append(b.vals, float32(math.NaN()))
			l, numbers, why, listish := parseListN(f)
			if listish && s.firstBracket == 0 {
				s.firstBracket = line
			}
			if why == "" && s.listLen != 0 && len(l) != s.listLen {
				if s.listOdd == 0 {
					s.listOdd, s.listOddValue, s.listOddLen = line, strings.Clone(f), len(l)
				}
				why = "another length"
			}
			if why != "" {
				if listish && s.listOdd == 0 {
					s.listOdd, s.listOddValue, s.listOddWhy = line, strings.Clone(f), why
				}
				if listish && s.listOddN == 0 {
					s.listOddN = numbers // how long a list was meant
				}
				if s.firstWord == 0 {
					s.firstWord, s.wordValue = line, strings.Clone(f)
				}
				continue
			}
			if s.lists == 0 {
				s.firstList, s.listLen, s.firstListValue = line, len(l), strings.Clone(f)
			}
			s.lists++
			if b.lists == nil {
				b.lists = make([][]float32, t.width)
			}
			for _, v := range l {
				x, err := float32(v), error(nil)
				switch {
				case x == 0 && v != 0:
					err = errUnderflow
				case math.IsInf(float64(x), 0) && !math.IsInf(v, 0):
					err = errOverflow
				case math.IsInf(v, 0):
					err = errNotFinite // inf written as such: beyond float64 is parseList's to refuse
				}
				if err != nil && s.over == 0 {
					s.over, s.overValue, s.overErr = line, strconv.FormatFloat(v, 'g', -1, 64)+" (in a list)", err
				}
				b.lists[i] = append(b.lists[i], x)
			}
		}
	}
	b.rows++
	return nil
}

// parseList reads a field written as a list of numbers: "[0.1, 0.2]"
// (JSON, Python's repr, Polars, DuckDB, Spark), "[ 0.1  0.2\n 0.3]"
// (NumPy's printed array, over lines), "{0.1,0.2}" (Postgres) or
// "0.1|0.2" (data.table's fwrite). why says why it is no list of
// numbers; listish whether it is one all the same, or meant as one: a
// list with a number in it (NaN and inf too), NumPy's printed array cut
// short ("[sic]" is not, nor "a|b").
func parseList(f string) (l []float64, why string, listish bool) {
	l, _, why, listish = parseListN(f)
	return l, why, listish
}

// parseListN is parseList, n the list's elements that are numbers (NaN,
// inf and those beyond float32 too): its length, as meant.
func parseListN(f string) (l []float64, n int, why string, listish bool) {
	s := strings.TrimSpace(f)
	bracketed := false
	switch {
	case len(s) >= 2 && (s[0] == '[' && s[len(s)-1] == ']' || s[0] == '{' && s[len(s)-1] == '}'):
		s, bracketed = s[1:len(s)-1], true
	case strings.Contains(s, "|"):
	default:
		return nil, 0, "no list", false
	}
	var elems []string
	switch {
	case !bracketed:
		elems = strings.Split(s, "|")
	case strings.ContainsAny(s, "[{"):
		return nil, 0, "a list of lists", false
	case strings.Contains(s, "..."): // print cuts an array of more than 1000 numbers
		return nil, 1000, "NumPy's printed array, cut short with \"...\" (print drops all but the ends of a long one): save the array itself (np.save), or its rows as lists (x.tolist())", true
	case strings.Contains(s, ","):
		elems = strings.Split(s, ",")
	default:
		elems = strings.Fields(s)
	}
	if len(elems) == 0 || len(elems) == 1 && strings.TrimSpace(elems[0]) == "" {
		return nil, 0, "an empty list", false
	}
	l = make([]float64, 0, len(elems))
	numbers := 0 // elements ParseFloat reads, NaN and inf too
	for k, e := range elems {
		e = strings.TrimSpace(e)
		if v, _, ok := fastfloat.Narrow(e); ok { // its float32 strconv's: what is kept
			numbers++
			l = append(l, v)
			continue
		}
		v, err := strconv.ParseFloat(e, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange) || goOnly(e):
			if why == "" {
				why = fmt.Sprintf("its element %d, %q, is no number", k+1, e)
			}
			continue
		case errors.Is(err, strconv.ErrRange) && v == 0 || v == 0 && nonzeroText(e):
			err = errUnderflow
		case errors.Is(err, strconv.ErrRange):
			err = errOverflow
		case v != v:
			err = errNotFinite
		}
		numbers++
		if err != nil {
			if why == "" {
				why = fmt.Sprintf("its element %d, %s, %v", k+1, e, err)
			}
			continue
		}
		l = append(l, v)
	}
	switch {
	case why != "":
		return nil, numbers, why, bracketed && numbers > 0
	case !bracketed && len(l) < 2:
		return nil, 0, "no list", false
	}
	return l, numbers, "", true
}

// emptyList says whether a field is an empty list, [] or {}: a row's
// embedding missing, in a column of lists.
func emptyList(f string) bool {
	s := strings.Join(strings.Fields(f), "")
	return s == "[]" || s == "{}"
}

// nonzeroText says whether a number's text has a nonzero digit before its
// exponent: one ParseFloat read as 0 (1e-400) was not 0.
func nonzeroText(s string) bool {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	return strings.ContainsAny(s, "123456789")
}

// merge adds the next block of the file.
func (t *tableParse) merge(b *block) {
	t.n += b.rows
	t.blocks = append(t.blocks, b.vals)
	if b.lists != nil {
		if t.lists == nil {
			t.lists = make([][]float32, t.width)
		}
		for i, l := range b.lists {
			t.lists[i] = append(t.lists[i], l...)
		}
	}
	if t.stats == nil {
		t.stats = b.stats
		return
	}
	for i := range t.stats {
		g, s := &t.stats[i], &b.stats[i]
		if g.listOdd == 0 {
			// The block's first fault, or its first list where its length
			// is not the file's first's, whichever comes first.
			g.listOdd, g.listOddValue, g.listOddWhy, g.listOddLen = s.listOdd, s.listOddValue, s.listOddWhy, s.listOddLen
			if g.listLen != 0 && s.listLen != 0 && s.listLen != g.listLen && (g.listOdd == 0 || s.firstList < g.listOdd) {
				g.listOdd, g.listOddValue, g.listOddWhy, g.listOddLen = s.firstList, s.firstListValue, "", s.listLen
			}
		}
		if g.lists == 0 {
			g.firstList, g.listLen, g.firstListValue = s.firstList, s.listLen, s.firstListValue
		}
		g.lists += s.lists
		if g.listOddN == 0 {
			g.listOddN = s.listOddN
		}
		if g.firstBracket == 0 {
			g.firstBracket = s.firstBracket
		}
		if g.firstNum == 0 {
			g.firstNum = s.firstNum
		}
		if g.firstWord == 0 {
			g.firstWord, g.wordValue = s.firstWord, s.wordValue
		}
		if g.firstNA == 0 {
			g.firstNA, g.naValue = s.firstNA, s.naValue
		}
		if g.over == 0 {
			g.over, g.overValue, g.overErr = s.over, s.overValue, s.overErr
		}
		g.fraction = g.fraction || s.fraction
		g.lo, g.hi = min(g.lo, s.lo), max(g.hi, s.hi)
		g.commas += s.commas
		if g.firstComma == 0 {
			g.firstComma, g.commaValue = s.firstComma, s.commaValue
		}
		if g.firstPoint == 0 {
			g.firstPoint = s.firstPoint
		}
	}
}

// columns says what each column holds, as one pass from the top sees
// it: a column whose first value that is no number comes before any
// number is text; below a number, such a value is a bad one.
func (t *tableParse) columns(cols []textColumn) {
	for i := range cols {
		s, c := &t.stats[i], &cols[i]
		if s.firstBracket != 0 && (s.firstWord == 0 || s.firstBracket <= s.firstWord) && (s.firstNum == 0 || s.firstBracket < s.firstNum) {
			// A column of lists: read as the embedding, or refused.
			c.missing, c.missValue = s.firstNA, s.naValue
			c.over, c.overValue, c.overErr = s.over, s.overValue, s.overErr
			c.listN = s.listLen
			if c.listN == 0 {
				c.listN = s.listOddN
			}
			switch {
			case s.listOdd != 0:
				c.listOdd, c.listOddValue, c.listOddWhy, c.listOddLen = s.listOdd, s.listOddValue, s.listOddWhy, s.listOddLen
				if s.listOddLen != 0 {
					c.listOddWhy = fmt.Sprintf("a list of %d numbers, where the column's first (line %d) has %d", s.listOddLen, s.firstList, s.listLen)
				}
			case s.firstWord != 0:
				c.listOdd, c.listOddValue, c.listOddWhy = s.firstWord, s.wordValue, "no list"
			case s.firstNum != 0:
				c.listOdd, c.listOddValue, c.listOddWhy = s.firstNum, "", "a number alone, no list"
			default:
				c.list = s.listLen
			}
			continue
		}
		switch {
		case s.firstWord != 0 && (s.firstNum == 0 || s.firstWord < s.firstNum):
			c.text, c.textValue = s.firstWord, s.wordValue
		case s.firstWord != 0:
			c.bad, c.badValue = s.firstWord, s.wordValue
		}
		if c.text != 0 {
			continue
		}
		c.numbers = s.firstNum != 0
		c.missing, c.missValue = s.firstNA, s.naValue
		c.over, c.overValue, c.overErr = s.over, s.overValue, s.overErr
		c.comma, c.commaValue, c.point = s.firstComma, s.commaValue, s.firstPoint
		c.integers = !s.fraction
		c.lo, c.hi = s.lo, s.hi
		if c.numbers && c.integers {
			c.values = t.column(i) // an index, or an id among reals?
		}
	}
}

// commas counts the numbers written with a decimal comma in the
// columns that are not text.
func (t *tableParse) commas(cols []textColumn) int {
	n := 0
	for i := range cols {
		if cols[i].text == 0 {
			n += t.stats[i].commas
		}
	}
	return n
}

// column is column i's values.
func (t *tableParse) column(i int) []float32 {
	out := make([]float32, 0, t.n)
	for _, v := range t.blocks {
		for r := i; r < len(v); r += t.width {
			out = append(out, v[r])
		}
	}
	return out
}

// listRows is the (n, d) array of column i's lists.
func (t *tableParse) listRows(i int) []float32 { return t.lists[i] }

// rows is the (n, len(use)) array of the columns use, row-major.
func (t *tableParse) rows(use []int) []float32 {
	d := len(use)
	out := make([]float32, 0, t.n*d)
	for _, v := range t.blocks {
		for r := 0; r < len(v); r += t.width {
			for _, i := range use {
				out = append(out, v[r+i])
			}
		}
	}
	return out
}

// rest parses the table's lines from r's position, the first of them
// line, in blocks of whole lines (cut where no quoted field goes on past
// the cut) on every core, merging them in the file's order (inBlocks).
func (t *tableParse) rest(r *bufio.Reader, line int) error {
	return inBlocks(r, t.path, line, func(b []byte) int { return blockCut(b, t.sep != 0) },
		func(data []byte, line int) (*block, error) {
			b := t.parseBlock(data, line)
			return b, b.err
		},
		func(b *block) error {
			t.merge(b)
			return nil
		})
}

// inBlocks reads r to its end in blocks of whole lines, the first line
// line — a block cut where cut says it may be (−1: nowhere yet, read on)
// —, parses them with parse on textWorkers goroutines (GOMAXPROCS where
// 0) and hands them to merge in the file's order: the first error in the
// file's order (a read's, named by path, a parse's or merge's) is
// returned, as one pass from the top would return it (parse returns what
// it read before its error, merged first). At most two blocks
// a worker are read ahead, and no goroutine is left once it returns.
// parse must keep nothing of data once it returns: the block's bytes are
// read into again (a 1 GB file is not 1 GB of garbage).
func inBlocks[B any](r io.Reader, path string, line int, cut func([]byte) int, parse func(data []byte, line int) (B, error), merge func(B) error) error {
	workers := textWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type result struct {
		b   B
		err error
	}
	type job struct {
		data []byte
		line int
		out  chan result
	}
	jobs := make(chan job)
	order := make(chan job, 2*workers)
	free := make(chan []byte, 2*workers+2) // parsed blocks' buffers, to read into again
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait() // no goroutine left reading r, or parsing, once returned
	defer close(done)
	size := textBlockSize
	wg.Add(1 + workers)
	go func() { // cuts the blocks, in order
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		var carry []byte
		for {
			need := len(carry) + max(size, len(carry)) // a long line (or a quote left open): doubled, not rescanned a block at a time
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			if cap(buf) < need {
				buf = make([]byte, need)
			}
			buf = buf[:need]
			copy(buf, carry)
			k, err := fill(r, buf[len(carry):])
			buf = buf[:len(carry)+k]
			eof := err == io.EOF
			if err != nil && !eof {
				j := job{out: make(chan result, 1)}
				j.out <- result{err: fmt.Errorf("%s: %w", path, err)}
				select {
				case order <- j:
				case <-done:
				}
				return
			}
			at := len(buf)
			if !eof {
				if at = cut(buf); at < 0 {
					carry = buf // no whole line yet: read on
					continue
				}
			}
			carry = append([]byte(nil), buf[at:]...)
			if at > 0 {
				j := job{data: buf[:at], line: line, out: make(chan result, 1)}
				line += bytes.Count(j.data, []byte("\n"))
				select {
				case order <- j:
				case <-done:
					return
				}
				select {
				case jobs <- j:
				case <-done:
					return
				}
			}
			if eof {
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer wg.Done()
			for j := range jobs {
				b, err := parse(j.data, j.line)
				j.out <- result{b, err}
				select {
				case free <- j.data[:0]:
				default:
				}
			}
		}()
	}
	for j := range order {
		r := <-j.out
		if j.data == nil { // a read's error
			return r.err
		}
		// What the block held before its error, then the error: a
		// record merge refuses there comes first in the file.
		if err := merge(r.b); err != nil {
			return err
		}
		if r.err != nil {
			return r.err
		}
	}
	return nil
}

// fill reads r into b until b is full (err nil), r ends (io.EOF) or r
// fails (its error). Not io.ReadFull, whose io.ErrUnexpectedEOF for a
// short last read is also gzip's for a file cut short: a .csv.gz whose
// writer was killed was read as its rows before the cut.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := r.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// blockCut is where a block of a table may be cut: past its last line
// break, or for a CSV (quotes) its last one outside a quoted field; −1
// where there is none.
func blockCut(b []byte, quotes bool) int {
	last := bytes.LastIndexByte(b, '\n')
	if last < 0 {
		return -1
	}
	if !quotes || bytes.IndexByte(b[:last], '"') < 0 {
		return last + 1
	}
	cut, quoted := -1, false
	for i, c := range b[:last+1] {
		switch c {
		case '"':
			quoted = !quoted // "" inside a quoted field toggles twice
		case '\n':
			if !quoted {
				cut = i + 1
			}
		}
	}
	return cut
}

// parseBlock parses a block of whole lines, the first of them line.
func (t *tableParse) parseBlock(data []byte, line int) *block {
	b := t.block()
	b.vals = make([]float32, 0, (bytes.Count(data, []byte("\n"))+1)*t.width)
	if t.sep == 0 {
		s := string(data)
		for ln := line; s != ""; ln++ {
			var l string
			l, s, _ = strings.Cut(s, "\n")
			if f := strings.Fields(l); len(f) > 0 {
				if b.err = b.add(f, ln); b.err != nil {
					return b
				}
			}
		}
		return b
	}
	if t.sep < utf8.RuneSelf && bytes.IndexByte(data, '"') < 0 {
		b.err = plainLines(data, byte(t.sep), line, t.width, b.add)
		return b
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = t.sep
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true // the fields are strings of their own; the slice is reused
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return b
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				err = fmt.Errorf("line %d: %w", pe.Line+line-1, pe.Err)
			}
			b.err = fmt.Errorf("%s: %w", t.path, err)
			return b
		}
		ln, _ := cr.FieldPos(0)
		if b.err = b.add(rec, ln+line-1); b.err != nil {
			return b
		}
	}
}

// plainLines calls add with each line of a block without quotes, split at
// sep, and its line number (the block's first is line): what encoding/csv
// reads there (a line's \r\n as \n, a last line's \r dropped, empty lines
// skipped, counted) at a third of its cost. Each line's fields share a
// string of its own, so a value kept for a message holds its line, not the
// block; the slice is reused.
func plainLines(data []byte, sep byte, line, width int, add func(rec []string, line int) error) error {
	rec := make([]string, 0, width)
	for ln := line; len(data) > 0; ln++ {
		end := bytes.IndexByte(data, '\n')
		l := data
		if end < 0 {
			data = nil
		} else {
			l, data = data[:end], data[end+1:]
		}
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		if len(l) == 0 {
			continue
		}
		s := string(l)
		rec = rec[:0]
		for {
			i := strings.IndexByte(s, sep)
			if i < 0 {
				break
			}
			rec = append(rec, s[:i])
			s = s[i+1:]
		}
		if err := add(append(rec, s), ln); err != nil {
			return err
		}
	}
	return nil
}
