package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/fastfloat"
	"github.com/ccsets/ccs/internal/suggest"
)

// textExt is a text file's extension, past a .gz: ".csv" of x.csv.gz.
func textExt(p string) string {
	ext := strings.ToLower(filepath.Ext(p))
	if ext == ".gz" {
		ext = strings.ToLower(filepath.Ext(strings.TrimSuffix(p, filepath.Ext(p))))
	}
	return ext
}

// openText opens a text file, decompressing a .gz (pandas' to_csv of
// "x.csv.gz"), past a UTF-8 byte-order mark (Excel's "CSV UTF-8",
// pandas' utf-8-sig).
func openText(p string) (io.Reader, io.Closer, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	var r io.Reader = f
	if strings.EqualFold(filepath.Ext(p), ".gz") {
		z, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: not gzip-compressed: %w", p, err)
		}
		r = gzipText{z}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	return br, f, nil
}

// gzipText is a .gz's text, whose faults say what they mean: gzip's own
// "unexpected EOF" named no gzip and no truncation.
type gzipText struct{ z *gzip.Reader }

func (g gzipText) Read(b []byte) (int, error) {
	n, err := g.z.Read(b)
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = gzipFault{"the gzip stream stops before its end: the file is cut short (a download, a copy or the compression stopped; gzip -t says so) — write or copy it again", err}
	case errors.Is(err, gzip.ErrChecksum) || errors.As(err, &corrupt):
		err = gzipFault{fmt.Sprintf("the gzip data is damaged (%v; gzip -t says so) — write or copy it again", err), err}
	}
	return n, err
}

// gzipFault is a fault of a .gz, said as what it means; it unwraps to
// gzip's own error.
type gzipFault struct {
	msg string
	err error
}

func (f gzipFault) Error() string { return f.msg }
func (f gzipFault) Unwrap() error { return f.err }

// naValue says whether a field of a table of numbers marks a missing
// value, as pandas, R and spreadsheets write one.
func naValue(s string) bool {
	switch strings.TrimSpace(s) {
	case "", "NA", "N/A", "NaN", "nan", "None", "<NA>", "null", "NULL", "#N/A":
		return true
	}
	return false
}

// parseNumber reads a field of a table of numbers: blanks around it
// ignored, and a decimal comma (0,125: a spreadsheet's in much of
// Europe) read as a point, which comma reports. v is ParseFloat's value,
// or (a number of more digits than float64 reads exactly) one that rounds
// to the same float32 and is an integer where it is: what a table's
// readers keep of it.
func parseNumber(s string) (v float64, comma, ok bool) {
	if v, _, ok := fastfloat.Narrow(s); ok {
		return v, false, true // most of a table's numbers
	}
	s = strings.TrimSpace(s)
	if goOnly(s) {
		return 0, false, false // Go's hex floats and 1_000, which NumPy reads as no number
	}
	if v, err := strconv.ParseFloat(s, 64); (err == nil || errors.Is(err, strconv.ErrRange)) && !(v != v && naValue(s)) {
		return v, false, true // beyond float64: ±Inf, refused as out of range by the table's reader
	}
	if strings.Count(s, ",") == 1 && !strings.Contains(s, ".") {
		if v, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64); err == nil {
			return v, true, true
		}
	}
	return 0, false, false
}

// goOnly says whether s is a number only Go's ParseFloat reads, NumPy
// not: a hex float (0x1p-3) or digits separated by _ (1_000).
func goOnly(s string) bool {
	if strings.IndexByte(s, '_') >= 0 {
		return true
	}
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

// textColumn is what a pass over a table learned of one column.
type textColumn struct {
	name   string
	values []float32
	// text is the line of its first value that is no number, where that
	// came before any number (a column of ids or labels), or 0; textValue
	// is that value.
	text      int
	textValue string
	numbers   bool // a number seen
	// bad is the line of a value that is no number below numbers (an
	// Excel error "#DIV/0!" in a coordinate), refused where the column is
	// read; badValue is that value.
	bad       int
	badValue  string
	missing   int // the line of its first missing value, or 0
	missValue string
	// over is the line of its first number that float32 cannot hold
	// (1e300; 1e-50, which would round to 0), or 0; overValue is that
	// number, overErr what is wrong with it.
	over      int
	overValue string
	overErr   error
	// comma is the line of its first number written with a decimal comma,
	// commaValue it, and point the line of its first written with a
	// decimal point, or 0.
	comma      int
	commaValue string
	point      int
	// list is the length of the lists of a column of lists, one a row, or
	// 0; listOdd is the line of a value of a column written as lists that
	// is no list of that many numbers, listOddValue it, listOddWhy why.
	list         int
	listOdd      int
	listOddValue string
	listOddWhy   string
	listOddLen   int // listOdd's list's length, where that is what is wrong
	listN        int // the length of its lists (of the first, where none is read)
	// other names the flag that reads the column as something else (the
	// labels of -labels FILE:COLUMN, of this file): no coordinate.
	other    string
	integers bool // every value an integer
	lo, hi   float64
}

// sniffSeparator is the separator of a table's first line: a .tsv's tab,
// else the most frequent of comma, semicolon and tab outside quoted
// fields (a comma where none is, or where a comma ties), or for a .txt
// none of them: blanks, as np.savetxt writes. The embeddings' and the
// labels' readers both use it, so a file is read alike as either.
func sniffSeparator(first, ext string) rune {
	if ext == ".tsv" {
		return '\t'
	}
	var count [3]int
	quoted := false
	for _, c := range first {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ',':
			count[0]++
		case c == ';':
			count[1]++
		case c == '\t':
			count[2]++
		}
	}
	best, n := rune(0), 0
	for i, c := range []rune{',', ';', '\t'} {
		if count[i] > n {
			best, n = c, count[i]
		}
	}
	if count[0] > 0 && count[1] > 0 && numbersSplit(first, ';') >= numbersSplit(first, ',') {
		// "-0,80;-1,32;0,25": a spreadsheet's row of decimal commas
		// without a header: more numbers at its semicolons than at its
		// commas, whichever are more.
		best = ';'
	}
	if best == 0 && ext != ".txt" {
		best = ','
	}
	return best
}

// badValueHint is what a value among a column's numbers that is no
// number likely is: a line repeating the header (files joined with their
// headers: Spark's part files, cat), a number written with thousands
// separators, or a spreadsheet's error value.
func badValueHint(v string, first []string, header bool) string {
	t := strings.TrimSpace(v)
	if header && slices.Contains(first, t) {
		return "the header's name: a line repeating the header, as files joined with their headers have (cat part-*.csv)? keep the first file's header only (tail -n +2 for the others)"
	}
	digits, marks := 0, 0
	for _, c := range t {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == ',' || c == '.' || c == '\'' || c == '\u00a0' || c == '\u202f' || c == ' ':
			marks++
		case c == '-' || c == '+' || c == 'e' || c == 'E':
		default:
			return "a spreadsheet's error value? fix or drop the row, and its label"
		}
	}
	if digits > 0 && marks >= 2 || digits > 0 && strings.ContainsAny(t, "'\u00a0\u202f ") {
		return "a number written with thousands separators? write the numbers without them (Excel: untick \"Use 1000 separator\"; R: format(x, big.mark = \"\"))"
	}
	return "a spreadsheet's error value? fix or drop the row, and its label"
}

// tableTop reads a table's top from br: its separator (sniffSeparator's
// of the first line, or that Excel's "sep=;" line names, which it
// consumes) and, in a table of separated fields, the comment lines above
// the first record (np.savetxt's header= and comments=, at the top only:
// a "#N/A" row below is a row). skipped counts the lines consumed,
// comment is the last comment's text. Both readers of a table, the
// embeddings' and the labels', start here, so they see one file alike.
func tableTop(br *bufio.Reader, ext string) (sep rune, skipped int, comment string) {
	peek, _ := br.Peek(64 << 10)
	first, _, _ := bytes.Cut(peek, []byte("\n"))
	sep = sniffSeparator(strings.TrimSuffix(string(first), "\r"), ext)
	if s, ok := sepLine(first); ok {
		sep, skipped = s, 1
		br.Discard(len(first) + 1)
	}
	for sep != 0 {
		if b, _ := br.Peek(2); !commentStart(b) {
			break
		}
		c, err := br.ReadString('\n')
		if err != nil {
			break
		}
		skipped, comment = skipped+1, c
	}
	return sep, skipped, comment
}

// commentStart says whether a line that begins with b is a comment at a
// table's top: "# " (np.savetxt's header= and comments= lines) or "#"
// alone — not "#news" or "#FF0000", a label a hash begins.
func commentStart(b []byte) bool {
	return len(b) > 0 && b[0] == '#' && (len(b) == 1 || b[1] == ' ' || b[1] == '\n' || b[1] == '\r' || b[1] == '\t')
}

// commentNames are the names of a header written as a comment line
// ("# x,y,label", np.savetxt's header=), split at sep (blanks where 0).
func commentNames(line string, sep rune) []string {
	l := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#"))
	if sep == 0 {
		return strings.Fields(l)
	}
	r := csv.NewReader(strings.NewReader(l))
	r.Comma, r.LazyQuotes = sep, true
	names, err := r.Read()
	if err != nil {
		return nil
	}
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	return names
}

// columnNames are the names a table's column of what is looked for by:
// the column named, else what's (labels, label; query ids, query id,
// query_ids, query_id; for ids, id and _id too, as BEIR's corpus and
// queries name theirs), in that order.
func columnNames(column, what string) []string {
	if column != "" {
		return []string{strings.TrimSpace(column)}
	}
	names := []string{what, strings.TrimSuffix(what, "s")}
	if strings.Contains(what, " ") { // "query ids": query_ids and query_id too, as tables name them
		u := strings.ReplaceAll(what, " ", "_")
		names = append(names, u, strings.TrimSuffix(u, "s"))
	}
	if strings.HasSuffix(what, "ids") {
		names = append(names, "id", "_id")
	}
	return slices.Compact(names) // "ids": "id" once
}

// columnIndex is the index of the first of header's names (blanks around
// them ignored) among names, or −1.
func columnIndex(header, names []string) int {
	return slices.IndexFunc(header, func(h string) bool { return slices.Contains(names, strings.TrimSpace(h)) })
}

// allNumbers says whether every field is a number.
func allNumbers(fields []string) bool {
	for _, f := range fields {
		if _, _, ok := parseNumber(f); !ok {
			return false
		}
	}
	return true
}

// sepLine says whether a table's first line is Excel's "sep=;", which
// names the separator (Excel writes it, and reads a file with it, where
// the locale's separator is not the file's), and which it names.
func sepLine(first []byte) (rune, bool) {
	l := strings.TrimSpace(string(first))
	if len(l) == 5 && strings.HasPrefix(strings.ToLower(l), "sep=") && strings.ContainsRune(",;|", rune(l[4])) {
		return rune(l[4]), true
	}
	if strings.EqualFold(l, "sep=") && strings.HasSuffix(strings.TrimRight(string(first), "\r\n"), "\t") {
		return '\t', true
	}
	return 0, false
}

// numbersSplit counts the fields of line split at sep that are numbers
// (a decimal comma's too).
func numbersSplit(line string, sep rune) int {
	n := 0
	for _, f := range strings.Split(line, string(sep)) {
		if _, _, ok := parseNumber(f); ok {
			n++
		}
	}
	return n
}

// readTextEmbeddings reads an (n, d) table of numbers from a text file —
// a .csv, .tsv or .txt, or one gzip-compressed — as pandas' to_csv, R's
// write.csv, a spreadsheet (semicolons, decimal commas, a byte-order
// mark, CRLF) or np.savetxt write one: a header line where its fields
// name the columns, the separator the first line's. spec, where given,
// names the embedding's columns by their header's names, shell patterns
// separated by commas (dim_*, or x,y,z); without it every column of
// numbers is read, the columns of text (ids, labels) left out and
// pandas' or R's unnamed index too, and a named column of integers among
// columns of real numbers (an id? a count? a label?) is refused. A
// missing value is refused, naming its line and column. note says what
// was read and what left out.
func readTextEmbeddings(p, spec string, others ...otherColumn) (e bundle.Embeddings, note string, index []int, err error) {
	r, c, err := openText(p)
	if err != nil {
		return e, "", nil, err
	}
	defer c.Close()
	br := r.(*bufio.Reader)
	peek, _ := br.Peek(64 << 10)
	top, _, _ := bytes.Cut(peek, []byte("\n"))
	switch {
	case bytes.IndexByte(top, 0) >= 0: // UTF-16 (Excel's "Unicode Text"), with its byte-order mark or without
		return e, "", nil, fmt.Errorf("%s:1: not UTF-8 but UTF-16 (NUL bytes between the characters: Excel's \"Unicode Text\", PowerShell's Out-File): save it as UTF-8 (Excel: CSV UTF-8; iconv -f utf-16 -t utf-8 FILE)", p)
	case bytes.Count(top, []byte("\r")) > 1 && len(top) == len(peek): // no \n in what was peeked, and several \r
		return e, "", nil, fmt.Errorf("%s: its lines end in a carriage return alone (classic Mac OS, Excel's \"CSV (Macintosh)\"): convert them, tr '\\r' '\\n' < FILE > FILE2, or save as CSV UTF-8", p)
	}
	// line is the last line read; lastComment np.savetxt's header line
	// ("# x,y,label"), the last "#" line at the top.
	sep, line, lastComment := tableTop(br, textExt(p))
	var next func() ([]string, int, error)
	comments := 0   // "#" lines at the start of a table of blanks, left out
	skipped := line // lines before the csv reader's first: its line numbers count from past them
	if sep == 0 {   // blanks, as np.savetxt and a .txt of numbers write them
		// Lines read from br itself (no scanner's read-ahead): the rows
		// past the first two are read from where these stop.
		next = func() ([]string, int, error) {
			for {
				s, err := br.ReadString('\n')
				if s == "" && err != nil {
					return nil, line, err
				}
				line++
				f := strings.Fields(s)
				if len(f) > 0 && line == comments+1 && strings.HasPrefix(f[0], "#") {
					comments++ // np.savetxt's header= line, as np.loadtxt skips it
					lastComment = s
					continue
				}
				if len(f) > 0 {
					return f, line, nil
				}
			}
		}
	} else {
		cr := csv.NewReader(br)
		cr.Comma = sep
		cr.FieldsPerRecord = -1
		cr.ReuseRecord = false
		next = func() ([]string, int, error) {
			rec, err := cr.Read()
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					return nil, pe.Line + skipped, fmt.Errorf("line %d: %w", pe.Line+skipped, pe.Err)
				}
				return nil, 0, err
			}
			start, _ := cr.FieldPos(0)
			// csv reads br a line at a time: the rest starts past the
			// record's last line, its last field's line and the line
			// breaks in it (a quoted field over lines).
			last, _ := cr.FieldPos(len(rec) - 1)
			line = skipped + last + strings.Count(rec[len(rec)-1], "\n")
			return rec, skipped + start, nil
		}
	}
	first, firstLine, err := next()
	if err == io.EOF {
		return e, "", nil, fmt.Errorf("%s: empty: no rows", p)
	}
	if err != nil {
		return e, "", nil, fmt.Errorf("%s: %w", p, err)
	}
	second, secondLine, err := next()
	if err != nil && err != io.EOF {
		return e, "", nil, fmt.Errorf("%s: %w", p, err)
	}
	restLine := line + 1 // the line the rest of the table starts on
	// A header: a field of the first line that is no number above a
	// number (a column of text has text in both).
	header := false
	for i, f := range first {
		if _, _, ok := parseNumber(f); ok || naValue(f) || i >= len(second) {
			continue
		}
		if _, _, ok := parseNumber(second[i]); ok {
			header = true
		}
		if _, why, _ := parseList(second[i]); why == "" {
			if _, _, listish := parseList(f); !listish {
				header = true // a name above a list of numbers: an embedding column
			}
		}
	}
	pandasIndex := len(first) > 1 && strings.TrimSpace(first[0]) == "" && second != nil && len(second) > 0 && allIntegers(second[:1]) && strings.TrimSpace(second[0]) != ""
	if !header && second != nil && (pandasIndex || (numberedColumns(first) || increasingIntegers(first)) && !allIntegers(second)) {
		// pandas' to_csv with its index: an empty name above the index's
		// integers, whatever the columns' names (0, 1, … of a frame of an
		// array; 0.5, 1.0, …); or names that are numbers above real
		// values: a spectrum's wavelengths 400, 410, …
		header = true
	}
	if second == nil && !header {
		for _, f := range first {
			if _, _, ok := parseNumber(f); !ok && !naValue(f) {
				header = true // a header alone: no rows
			}
		}
	}
	// Above a first line of data, np.savetxt's header line ("# x,y,label")
	// of as many names is the header (np.genfromtxt(names=True) reads it
	// so, and the labels' reader takes it as the names too).
	var dataFirst []string
	if !header && lastComment != "" {
		if names := commentNames(lastComment, sep); len(names) == len(first) && !allNumbers(names) {
			dataFirst, first, header = first, names, true
		}
	}
	if header {
		for i := range first {
			first[i] = strings.TrimSpace(first[i])
		}
	}
	cols := make([]textColumn, len(first))
	for i := range cols {
		cols[i].name = fmt.Sprintf("column %d", i+1)
		if header {
			cols[i].name = strconv.Quote(first[i])
		}
		cols[i].integers = true
		cols[i].lo, cols[i].hi = math.Inf(1), math.Inf(-1)
	}
	t := &tableParse{path: p, sep: sep, width: len(cols), header: header}
	if header && dataFirst == nil {
		t.headerRec = first // a line repeating it below is refused
	}
	head := t.block()
	switch {
	case !header:
		if err := head.add(first, firstLine); err != nil {
			return e, "", nil, err
		}
	case dataFirst != nil:
		if err := head.add(dataFirst, firstLine); err != nil {
			return e, "", nil, err
		}
	}
	if second != nil {
		if err := head.add(second, secondLine); err != nil {
			return e, "", nil, err
		}
	}
	t.merge(head)
	if second != nil {
		if err := t.rest(br, restLine); err != nil {
			return e, "", nil, err
		}
	}
	n := t.n
	if n == 0 {
		return e, "", nil, fmt.Errorf("%s: a header and no rows", p)
	}
	t.columns(cols)
	if header && spec == "" {
		for _, o := range others {
			for i, name := range first { // trimmed, as the labels' reader matches them
				if o.column != "" && name == strings.TrimSpace(o.column) || o.column == "" && name != "" && slices.Contains(o.names, name) {
					cols[i].other = o.flag
					o.found(name)
				}
			}
		}
	}
	use, left, listCol, err := chooseColumns(p, spec, header, first, cols)
	if err != nil {
		return e, "", nil, err
	}
	if header && !slices.Contains(use, 0) && cols[0].numbers && cols[0].text == 0 && cols[0].integers {
		// An index left out, kept: the table may have been sorted after it
		// was numbered, and labels of another file pair by position.
		index = make([]int, len(cols[0].values))
		for i, v := range cols[0].values {
			index[i] = int(v)
		}
	}
	// A decimal comma where the coordinates' other numbers have points:
	// "1,500" (a thousands separator, as a spreadsheet quotes it), not 1.5.
	point := 0
	for _, i := range use {
		if c := cols[i]; c.point != 0 && (point == 0 || c.point < point) {
			point = c.point
		}
	}
	// Of the values that are no coordinates, the first in the file.
	at := 0
	var what error
	for _, i := range use {
		c := cols[i]
		if point == 0 {
			c.comma = 0
		}
		for _, v := range []struct {
			line int
			err  error
		}{
			{c.comma, fmt.Errorf("%s:%d: %s holds %s, a comma in a number where the table's numbers are written with decimal points (line %d): a thousands separator? write the number without it (1500), or every number with decimal commas", p, c.comma, c.name, c.commaValue, point)},
			{c.bad, fmt.Errorf("%s:%d: %s holds %q among its numbers: a coordinate's every value must be a number (%s)", p, c.bad, c.name, c.badValue, badValueHint(c.badValue, first, header))},
			{c.missing, fmt.Errorf("%s:%d: %s holds a missing value (%q): ccs reads no missing values — drop the row (and its label, in the same order), or fill it in", p, c.missing, c.name, c.missValue)},
			{c.over, fmt.Errorf("%s:%d: %s holds %s, %v", p, c.over, c.name, c.overValue, c.overErr)},
		} {
			if v.line != 0 && (at == 0 || v.line < at) {
				at, what = v.line, v.err
			}
		}
	}
	if what != nil {
		return e, "", nil, what
	}
	d := len(use)
	var rows []float32
	if listCol >= 0 {
		d, rows = cols[listCol].list, t.listRows(listCol)
		if len(rows) != n*d {
			return e, "", nil, fmt.Errorf("%s: %s: %d numbers in its lists for %d rows of %d (a bug in ccs's reader)", p, cols[listCol].name, len(rows), n, d)
		}
		note = fmt.Sprintf("a text table: %d rows; the column of lists %s read as the embedding (%d numbers a row), as float32", n, cols[listCol].name, d)
	} else {
		rows = t.rows(use)
		names := make([]string, len(use))
		for j, i := range use {
			names[j] = cols[i].name
		}
		note = fmt.Sprintf("a text table: %d rows; %d columns of numbers read as the embedding (%s), as float32", n, d, span(names))
	}
	if t.commas(cols) > 0 {
		note += ", decimal commas read as points"
	}
	if len(left) > 0 {
		note += "; left out: " + strings.Join(left, ", ")
	}
	return bundle.Embeddings{Source: p, Rows: rows, N: n, D: d}, note, index, nil
}

// numberedColumns says whether a first line names its columns 0, 1, 2,
// … (or 1, 2, 3, …), past an empty first field (the index's): a header
// of a frame made of an array, which pandas writes as numbers.
func numberedColumns(first []string) bool {
	f := first
	if len(f) > 0 && strings.TrimSpace(f[0]) == "" {
		f = f[1:]
	}
	if len(f) < 2 {
		return false
	}
	start, err := strconv.Atoi(strings.TrimSpace(f[0]))
	if err != nil || (start != 0 && start != 1) {
		return false
	}
	for i, x := range f {
		if v, err := strconv.Atoi(strings.TrimSpace(x)); err != nil || v != start+i {
			return false
		}
	}
	return true
}

// increasingIntegers says whether a line's fields, past an empty first
// one (an index's name), are three or more integers, increasing.
func increasingIntegers(line []string) bool {
	f := line
	if len(f) > 0 && strings.TrimSpace(f[0]) == "" {
		f = f[1:]
	}
	if len(f) < 3 {
		return false
	}
	last := math.MinInt
	for _, x := range f {
		v, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil || v <= last {
			return false
		}
		last = v
	}
	return true
}

// allIntegers says whether every field of a line is an integer (or
// empty).
func allIntegers(line []string) bool {
	for _, x := range line {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		if _, err := strconv.Atoi(x); err != nil {
			return false
		}
	}
	return true
}

// sepOrBlank is a separator for messages: a blank where fields are
// separated by blanks.
func sepOrBlank(sep rune) rune {
	if sep == 0 {
		return ' '
	}
	return sep
}

// span writes column names for a note: all of a few, the first two and
// the last of many.
func span(names []string) string {
	if len(names) <= 4 {
		return strings.Join(names, ", ")
	}
	return names[0] + ", " + names[1] + " … " + names[len(names)-1]
}

// otherColumn is a column of the embeddings' table that another flag
// reads (-labels emb.csv:label, -embeddings emb.csv): flag, no
// coordinate, left out of the embedding without being named.
type otherColumn struct {
	column, flag string
	names        []string // without a column named: the names the flag's reader looks for (label, labels)
	// leftOut, where not nil, is set to the name of the first column (or
	// field) the reading left out as the flag's: the one it found.
	leftOut *string
}

// found records, in o.leftOut, name as the column o's flag found.
func (o otherColumn) found(name string) {
	if o.leftOut != nil && *o.leftOut == "" {
		*o.leftOut = name
	}
}

// chooseColumns chooses the embedding's columns of a table, as
// textColumns does, or its column of lists (listCol, −1 where none): a
// column whose every value is a list of d numbers — an embedding column
// as Polars, DuckDB, Spark and Hugging Face datasets write one — is the
// embedding where its d is more than the table's columns of numbers
// (an id, a score beside it; a bounding box's 4 or a version's 1.2|3
// beside 32 coordinates are not), the others then left out. Such a
// column that cannot be read so (a word or NaN in a list, another
// length) is refused, naming the line, where it would have been chosen;
// otherwise it is left out as text, as is every column of lists not
// chosen.
func chooseColumns(p, spec string, header bool, first []string, cols []textColumn) (use []int, left []string, listCol int, err error) {
	scalars := 0
	for i, c := range cols {
		if c.numbers && c.text == 0 && c.other == "" && !(i == 0 && header && (first[0] == "" || strings.HasPrefix(first[0], "Unnamed:")) && c.integers && len(cols) > 1) {
			scalars++ // a column of numbers, not pandas' unnamed index
		}
	}
	var lists, odd []int
	for i, c := range cols {
		switch {
		case c.other != "": // -labels' column of lists: labels, no embedding
		case c.list > scalars:
			lists = append(lists, i)
		case c.listOdd != 0 && c.listN > scalars:
			odd = append(odd, i)
		}
	}
	oddErr := func(i int) error {
		c := cols[i]
		v := c.listOddValue
		if v == "" {
			v = "its value"
		} else {
			v = clipValue(v)
		}
		return fmt.Errorf("%s:%d: %s holds %s, %s: a column of lists is read as the embedding where every row's is a list of one length, of numbers", p, c.listOdd, c.name, v, c.listOddWhy)
	}
	asText := func() { // the columns of lists not read: text, left out
		for i := range cols {
			if c := &cols[i]; (c.list > 0 || c.listOdd != 0) && !slices.Contains(lists, i) && c.other == "" {
				c.text, c.textValue = max(c.listOdd, 1), c.listOddValue
			}
		}
	}
	if spec == "" {
		switch {
		case len(odd) > 0:
			slices.SortFunc(odd, func(a, b int) int { return cols[a].listOdd - cols[b].listOdd })
			return nil, nil, -1, oddErr(odd[0])
		case len(lists) > 1:
			var names []string
			for _, i := range lists {
				names = append(names, cols[i].name)
			}
			pick := "NAME"
			if header {
				pick = first[lists[0]]
			}
			return nil, nil, -1, fmt.Errorf("%s: %s each hold a list of numbers a row: which is the embedding? name it, %s:%s", p, strings.Join(names, " and "), p, pick)
		case len(lists) == 1:
			for i := range cols {
				if i != lists[0] {
					left = append(left, cols[i].name)
				}
			}
			return lists[:1], left, lists[0], nil
		}
		asText()
		use, left, err = textColumns(p, spec, header, first, cols)
		return use, left, -1, err
	}
	// Named: a column of lists alone, or columns of numbers.
	use, left, err = textColumns(p, spec, header, first, cols)
	if err != nil {
		return nil, nil, -1, err
	}
	for _, i := range use {
		if cols[i].list == 0 && cols[i].listOdd == 0 {
			continue
		}
		if len(use) > 1 {
			return nil, nil, -1, fmt.Errorf("%s: %s holds a list of numbers a row, the embedding by itself: name it alone, %s:%s", p, cols[i].name, p, first[i])
		}
		if cols[i].listOdd != 0 {
			return nil, nil, -1, oddErr(i)
		}
		return use, left, i, nil
	}
	return use, left, -1, nil
}

// clipValue quotes a value of a table for a message, a long one (a list
// of 768 numbers) cut to its start.
func clipValue(v string) string {
	if head, cut := clipText(v); cut {
		return fmt.Sprintf("%q… (%d bytes)", head, len(v))
	}
	return strconv.Quote(v)
}

// clipText is v's first 60 bytes, cut at a character's start, and
// whether that is less than v.
func clipText(v string) (head string, cut bool) {
	if len(v) <= 60 {
		return v, false
	}
	k := 60
	for k > 0 && !utf8.RuneStart(v[k]) {
		k--
	}
	return v[:k], true
}

// textColumns chooses the embedding's columns of a table: those spec
// names (patterns of the header's names, separated by commas), or every
// column of numbers but an unnamed index; left says what was left out.
func textColumns(p, spec string, header bool, first []string, cols []textColumn) (use []int, left []string, err error) {
	if spec != "" {
		if !header {
			return nil, nil, fmt.Errorf("%s:%s: the file has no header line, so its columns have no names to pick: give %s, every column read (or write it with a header)", p, spec, p)
		}
		for _, pat := range strings.Split(spec, ",") {
			pat = strings.TrimSpace(pat)
			found := false
			for i, h := range first {
				ok, err := path.Match(pat, h)
				if err != nil {
					return nil, nil, fmt.Errorf("%s:%s: %q: %w", p, spec, pat, err)
				}
				if ok && !slices.Contains(use, i) {
					use, found = append(use, i), true
				}
			}
			if !found {
				hint := ""
				if near, ok := suggest.Nearest(pat, first); ok {
					hint = fmt.Sprintf(": did you mean %q?", near)
				}
				return nil, nil, fmt.Errorf("%s: no column matches %q (the columns: %s)%s", p, pat, span(first), hint)
			}
		}
		slices.Sort(use) // the file's order, whatever the patterns' order
		if err := twiceNamed(p, header, first, use); err != nil {
			return nil, nil, err
		}
		for _, i := range use {
			if cols[i].text != 0 {
				return nil, nil, fmt.Errorf("%s:%d: %s holds %q, no number", p, cols[i].text, cols[i].name, cols[i].textValue)
			}
		}
		for i := range cols {
			if !slices.Contains(use, i) {
				left = append(left, cols[i].name)
			}
		}
		return use, left, nil
	}
	var text, index, empty, other []string
	for i, c := range cols {
		switch {
		case c.other != "":
			other = append(other, fmt.Sprintf("%s (%s)", c.name, c.other))
		case c.text != 0:
			text = append(text, c.name)
		case !c.numbers && (!header || strings.TrimSpace(first[i]) == ""):
			empty = append(empty, c.name) // a trailing separator's empty column
		case !c.numbers:
			return nil, nil, fmt.Errorf("%s: %s holds no value on any line", p, c.name)
		case i == 0 && header && (first[0] == "" || strings.HasPrefix(first[0], "Unnamed:")) && c.integers && len(cols) > 1:
			index = append(index, c.name)
		default:
			use = append(use, i)
		}
	}
	if len(use) == 0 {
		return nil, nil, fmt.Errorf("%s: no column of numbers (columns of text: %s)", p, span(text))
	}
	if err := twiceNamed(p, header, first, use); err != nil {
		return nil, nil, err
	}
	if len(use) == 1 && cols[use[0]].integers && len(cols) > 1 {
		// One column of integers and columns of text beside it: an id
		// read as a one-number embedding, the embedding elsewhere.
		c := cols[use[0]]
		why := ""
		switch {
		case header && idOrLabel(first[use[0]]):
			why = "named as ids or labels are"
		case distinct(c.values):
			why = "a different one each row"
		}
		if why != "" {
			return nil, nil, fmt.Errorf("%s: the one column of numbers, %s, holds integers (%g to %g), %s: an id, no embedding (left out as text: %s) — where is the embedding? a column of numbers each, or of lists a row, is what ccs reads", p, c.name, c.lo, c.hi, why, span(text))
		}
	}
	real := slices.ContainsFunc(use, func(i int) bool { return !cols[i].integers })
	for _, i := range use {
		// A column of integers among real numbers is refused where it is
		// an id or labels: named so, or each row's value its own. A
		// constant column (a dead unit's zeros), an indicator or a count
		// is a feature.
		c := cols[i]
		if !real || !c.integers {
			continue
		}
		why := ""
		switch {
		case header && idOrLabel(first[i]) && !(strings.EqualFold(first[i], "y") && slices.ContainsFunc(first, func(h string) bool { return strings.EqualFold(h, "x") })):
			why = "named as ids or labels are"
		case distinct(c.values):
			why = "a different one each row"
		default:
			continue
		}
		pick := "name the embedding's columns"
		if header {
			pick += ", " + p + ":" + patternOf(first, use, i) + " (to keep it as a feature, name it too)"
		}
		return nil, nil, fmt.Errorf("%s: %s holds integers (%g to %g), %s, among real numbers: an id or labels read as a coordinate? %s", p, c.name, c.lo, c.hi, why, pick)
	}
	if len(text) > 0 {
		left = append(left, fmt.Sprintf("%s (text)", strings.Join(text, ", ")))
	}
	left = append(left, other...)
	if len(index) > 0 {
		left = append(left, fmt.Sprintf("%s (an unnamed index of integers, pandas' or R's)", index[0]))
	}
	if len(empty) > 0 {
		left = append(left, fmt.Sprintf("%s (empty on every line: a separator at the lines' end?)", strings.Join(empty, ", ")))
	}
	return use, left, nil
}

// idOrLabel says whether a column's name is an id's or labels' (ticket_id,
// label, class, y …).
func idOrLabel(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	return headerLike(n) || columnName(n, "labels") || strings.HasSuffix(n, "_id") || strings.HasSuffix(n, "_no")
}

// distinct says whether the values are each other than the rest (an id
// per row); values of fewer than 50 rows say nothing either way.
func distinct(values []float32) bool {
	if len(values) < 50 {
		return false
	}
	seen := make(map[float32]bool, len(values))
	for _, v := range values {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// twiceNamed refuses two columns of the embedding of one name: which is
// which, a reader of the header cannot tell (ccs's labels refuse it too).
func twiceNamed(p string, header bool, first []string, use []int) error {
	if !header {
		return nil
	}
	seen := map[string]bool{}
	for _, i := range use {
		if seen[first[i]] {
			return fmt.Errorf("%s: two columns are named %q: rename one, or pick the columns by other names", p, first[i])
		}
		seen[first[i]] = true
	}
	return nil
}

// patternOf suggests a pattern for the columns of use but skip: their
// names' common prefix and a star ("dim_*"), or their names.
func patternOf(names []string, use []int, skip int) string {
	var keep []string
	for _, i := range use {
		if i != skip {
			keep = append(keep, names[i])
		}
	}
	if len(keep) == 0 {
		return "COLUMNS"
	}
	prefix := keep[0]
	for _, k := range keep[1:] {
		for !strings.HasPrefix(k, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if prefix != "" && !strings.HasPrefix(names[skip], prefix) {
		return prefix + "*"
	}
	if len(keep) <= 6 {
		return strings.Join(keep, ",")
	}
	return "NAME,NAME,… (their names, or shell patterns such as dim_*)"
}
