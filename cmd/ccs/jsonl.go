package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/jsonscan"
	"github.com/ccsets/ccs/internal/suggest"
)

// JSON Lines — one JSON object a line — is how Hugging Face datasets'
// to_json, pandas' to_json(orient="records", lines=True) and embedding
// APIs' batch files write rows: {"id": …, "label": …, "embedding": [0.1,
// …]}. ccs reads a field of each line: the embedding (a list of numbers),
// or labels and ids (a string or a number).

// jsonlRecord is a line's object: its members, by key.
type jsonlRecord []jsonscan.Member

// get is the value of the member key, or nil where there is none.
func (r jsonlRecord) get(key string) []byte {
	for _, m := range r {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// keys are the record's keys, in order.
func (r jsonlRecord) keys() []string {
	k := make([]string, len(r))
	for i, m := range r {
		k[i] = m.Key
	}
	return k
}

// parseJSONLine reads one line of a JSON-lines file: an object. An
// object that is not one to jsonscan (an escape in a key, a key twice) is
// read by encoding/json, whose error, for a line that is no JSON object,
// says why, with what a writer of such lines most likely did.
//
// b is the line with its line break, where it has one: the file's last
// line, cut short, is told from a line broken in two.
func parseJSONLine(p string, line int, b []byte) (jsonlRecord, error) {
	if m, ok := jsonscan.Members(b); ok {
		return m, nil
	}
	return parseJSONSlow(p, line, b)
}

// parseJSONLineNear is parseJSONLine, the member key's list of numbers
// read as jsonscan.Near reads it, into dst[:0], in the same pass (near:
// nil where the line has no such member, or where encoding/json read it).
func parseJSONLineNear(p string, line int, b []byte, key string, dst []float64) (rec jsonlRecord, near []float64, err error) {
	if m, near, ok := jsonscan.MembersNear(b, key, dst); ok {
		return m, near, nil
	}
	rec, err = parseJSONSlow(p, line, b)
	return rec, nil, err
}

// parseJSONSlow is parseJSONLine by encoding/json: a line jsonscan does
// not read, or no JSON object, whose error says why.
func parseJSONSlow(p string, line int, b []byte) (jsonlRecord, error) {
	var m map[string]json.RawMessage
	err := json.Unmarshal(b, &m)
	if err == nil {
		r := make(jsonlRecord, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			r = append(r, jsonscan.Member{Key: k, Value: m[k]})
		}
		return r, nil
	}
	t := bytes.TrimSpace(b)
	hint := ""
	switch {
	case bytes.HasSuffix(t, []byte("},")) || bytes.HasSuffix(t, []byte("}]")):
		hint = ": a line ending in a comma or a bracket — a JSON array's elements, one a line? JSON lines hold one object a line, nothing between (pandas' to_json(orient=\"records\", lines=True), datasets' to_json)"
	case bytes.Contains(t, []byte("}{")) || bytes.Contains(t, []byte("} {")):
		hint = ": objects one after another on a line — JSON lines hold one object a line (write \"\\n\" after each)"
	case line > 1 && len(t) > 1 && t[0] == '{' && !bytes.HasSuffix(t, []byte("}")) && !bytes.HasSuffix(b, []byte("\n")):
		hint = ": the file's last line ends before its object does — a file cut short (an export, a download or a copy stopped before its end; the lines above it read): write or copy it again"
	case line > 1 && len(t) > 1 && t[0] == '{' && !bytes.HasSuffix(t, []byte("}")):
		hint = ": the line ends before its object does — an object over several lines, or a line break inside a string (JSON lines hold one object a line, a line break in a string written \\n)"
	case bytes.Equal(t, []byte("{")) || len(t) > 0 && t[0] == '{' && !bytes.HasSuffix(t, []byte("}")):
		hint = ": an object over several lines — a JSON file, not JSON lines (one object a line: pandas' to_json(orient=\"records\", lines=True), datasets' to_json)"
	case len(t) > 0 && t[0] == '[':
		hint = ": a JSON array, not JSON lines (one object a line: pandas' to_json(orient=\"records\", lines=True), datasets' to_json)"
	case nonFiniteLiteral.Match(t):
		in := ""
		if m := nonFiniteField.FindSubmatch(t); m != nil {
			in = fmt.Sprintf(" (in %q)", m[1])
		}
		hint = ": NaN or Infinity" + in + ", which Python's json writes and JSON has not — a row with no finite embedding: drop it (and its label)"
	}
	return nil, fmt.Errorf("%s:%d: not a JSON object (%v)%s", p, line, err, hint)
}

// nonFiniteLiteral finds Python's json's NaN, Infinity and -Infinity
// where a value starts (not inside a string, mostly).
var nonFiniteLiteral = regexp.MustCompile(`[:\[,]\s*-?(NaN|Infinity)\s*[,\]}]`)

// nonFiniteField finds the key whose value (a number, or a list of them)
// holds the first NaN or Infinity.
var nonFiniteField = regexp.MustCompile(`"([^"\\]+)"\s*:\s*(?:\[[^\]"{]*?)?-?(?:NaN|Infinity)\b`)

// jsonlFirst reads a JSON-lines file's first object, past blank lines,
// from r; line is its line. A file that begins with "[" (a JSON array:
// json.dump of a list) is refused before it is read.
func jsonlFirst(p string, r *bufio.Reader) (rec jsonlRecord, line int, err error) {
	for {
		peek, _ := r.Peek(512)
		if t := bytes.TrimLeft(peek, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			line += bytes.Count(peek[:len(peek)-len(t)], []byte("\n"))
			return nil, line + 1, fmt.Errorf("%s:%d: a JSON array (json.dump of a list), not JSON lines: write one object a line (for row in rows: f.write(json.dumps(row) + \"\\n\"); pandas' to_json(orient=\"records\", lines=True); datasets' to_json)", p, line+1)
		}
		if bytes.IndexByte(peek, 0) >= 0 {
			return nil, line + 1, fmt.Errorf("%s:%d: not UTF-8 but UTF-16 (NUL bytes between the characters: PowerShell's Out-File, Windows' \"Unicode\"): save it as UTF-8 (iconv -f utf-16 -t utf-8 FILE)", p, line+1)
		}
		b, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			line++
			rec, err := parseJSONLine(p, line, b)
			return rec, line, err
		}
		if err == io.EOF {
			if line == 0 {
				return nil, line, fmt.Errorf("%s: empty: no JSON object in it", p)
			}
			return nil, line, fmt.Errorf("%s: %d blank lines and no JSON object", p, line)
		}
		if err != nil {
			return nil, line, fmt.Errorf("%s: %w", p, err)
		}
		line++
	}
}

// pandasColumns says whether rec is pandas' to_json() of a frame by
// default (orient="columns"): each member an object keyed by row
// numbers.
func pandasColumns(rec jsonlRecord) bool {
	if len(rec) == 0 {
		return false
	}
	for _, m := range rec {
		rows, ok := jsonscan.Members(m.Value)
		if !ok || len(rows) == 0 {
			return false
		}
		for _, r := range rows {
			if _, err := strconv.Atoi(r.Key); err != nil {
				return false
			}
		}
	}
	return true
}

// numberLists are the paths (key.key.0.key) below v, prefix's, to lists
// of numbers, as deep as 6 levels: where an API's batch output keeps an
// embedding ({"response": {"body": {"data": [{"embedding": […]}]}}}).
func numberLists(v []byte, prefix string, depth int) []string {
	if depth > 6 {
		return nil
	}
	if l, ok := jsonscan.Floats[float64](nil, v); ok && len(l) > 0 {
		return []string{prefix}
	}
	var out []string
	if m, ok := jsonscan.Members(v); ok {
		for _, x := range m {
			out = append(out, numberLists(x.Value, prefix+"."+x.Key, depth+1)...)
		}
		return out
	}
	var a []json.RawMessage
	if json.Unmarshal(v, &a) == nil {
		for k, x := range a {
			out = append(out, numberLists(x, prefix+"."+strconv.Itoa(k), depth+1)...)
		}
	}
	return out
}

// lookup is the value at path below a line's object rec (keys of
// objects, each the longest that matches — a key may hold a dot —,
// indices of arrays), or nil where there is none; at is then the path to
// the value that was null or absent, null whether it was null. top is
// the member of rec the value is in.
func lookup(rec jsonlRecord, path []string) (out []byte, at string, null bool, top string) {
	var v []byte
	done := 0
	for k := len(path); k > 0 && v == nil; k-- {
		v, done = rec.get(strings.Join(path[:k], ".")), k
	}
	if v == nil {
		return nil, path[0], false, ""
	}
	top = strings.Join(path[:done], ".")
	nested := done < len(path)
	for done < len(path) {
		if string(bytes.TrimSpace(v)) == "null" {
			return nil, strings.Join(path[:done], "."), true, top
		}
		if m, ok := jsonscan.Members(v); ok {
			var x []byte
			k := len(path)
			for ; k > done && x == nil; k-- {
				x = jsonlRecord(m).get(strings.Join(path[done:k], "."))
			}
			if x == nil {
				return nil, strings.Join(path[:done+1], "."), false, top
			}
			v, done = x, k+1
			continue
		}
		var a []json.RawMessage
		k, err := strconv.Atoi(path[done])
		if json.Unmarshal(v, &a) != nil || err != nil || k < 0 || k >= len(a) {
			return nil, strings.Join(path[:done+1], "."), false, top
		}
		v, done = a[k], done+1
	}
	if string(bytes.TrimSpace(v)) == "null" && nested {
		return nil, strings.Join(path, "."), true, top
	}
	return v, "", false, top
}

// noField is the error of a line without the field.
func noField(p string, line int, field string, rec jsonlRecord) error {
	hint := ""
	if near, ok := suggest.Nearest(field, rec.keys()); ok {
		hint = fmt.Sprintf(": did you mean %q?", near)
	}
	return fmt.Errorf("%s:%d: no field %q (the fields: %s)%s", p, line, field, strings.Join(rec.keys(), ", "), hint)
}

// jsonlLines calls each for every non-blank line of data, the first of
// them line, in order, stopping at its first error; a line is given with
// its line break, so that the last, without one, is known (parseJSONLine).
func jsonlLines(data []byte, line int, each func(b []byte, line int) error) error {
	for ln := line; len(data) > 0; ln++ {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if err := each(l, ln); err != nil {
			return err
		}
	}
	return nil
}

// cutLines is where a block of JSON lines may be cut: past its last line
// break (JSON strings hold no raw line break), −1 where there is none.
func cutLines(b []byte) int {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	return -1
}

// readJSONLEmbeddings reads the embeddings of a JSON-lines file: each
// line's field, a list of d numbers — the field named, or the one field
// of the first line that holds a list of numbers — as float32, in blocks
// on every core. A line without it, or with another length, null, a
// string, or a number float32 cannot hold is refused naming its line.
//
// A field another flag names in the same file (-labels emb.jsonl:labels,
// or -labels emb.jsonl, the field label or labels) is that flag's: no
// embedding, said so in the note.
func readJSONLEmbeddings(p, field string, others ...otherColumn) (e bundle.Embeddings, note string, err error) {
	r, c, err := openText(p)
	if err != nil {
		return e, "", err
	}
	defer c.Close()
	br := r.(*bufio.Reader)
	first, line, err := jsonlFirst(p, br)
	if err != nil {
		return e, "", err
	}
	otherOf := func(key string) *otherColumn { // the other column key is, or nil
		for i, o := range others {
			names := o.names
			if o.column != "" {
				names = []string{o.column}
			}
			if slices.Contains(names, key) {
				return &others[i]
			}
		}
		return nil
	}
	if field == "" {
		var lists []string
		longest := 0
		for _, m := range first {
			if v, ok := jsonscan.Floats[float64](nil, m.Value); ok && len(v) > 0 && otherOf(m.Key) == nil {
				lists = append(lists, m.Key)
				if len(v) > longest {
					longest = len(v)
					lists[0], lists[len(lists)-1] = lists[len(lists)-1], lists[0] // the longest first: the likelier embedding
				}
			}
		}
		if len(lists) == 0 && pandasColumns(first) {
			return e, "", fmt.Errorf("%s:%d: an object of columns, each an object of rows (\"0\", \"1\", …) — pandas' to_json() by default: write orient=\"records\", lines=True, one row a line", p, line)
		}
		if len(lists) == 0 { // nested: an API's batch output, response.body.data.0.embedding
			for _, m := range first {
				lists = append(lists, numberLists(m.Value, m.Key, 0)...)
			}
		}
		switch len(lists) {
		case 0:
			hint := ""
			if len(first) > 0 && bytes.HasPrefix(bytes.TrimSpace(first[0].Value), []byte("{")) && len(first) >= 2 {
				hint = ": an object of columns, each an object of rows — pandas' to_json() by default? write orient=\"records\", lines=True"
			}
			return e, "", fmt.Errorf("%s:%d: no field holds a list of numbers, an embedding (the fields: %s)%s", p, line, strings.Join(first.keys(), ", "), hint)
		case 1:
			field = lists[0]
		default:
			return e, "", fmt.Errorf("%s:%d: %s each hold a list of numbers: which is the embedding? name it, %s:%s", p, line, strings.Join(sortedKeys(first, lists), " and "), p, lists[0])
		}
	}
	path := strings.Split(field, ".")
	d := 0
	var rows []float32
	// row appends the line's embedding to out: near, where the line's
	// scan read it, else its value parsed into *scratch.
	row := func(rec jsonlRecord, line int, out []float32, near []float64, scratch *[]float64) ([]float32, error) {
		v, at, null, _ := lookup(rec, path)
		if null && at != field {
			return nil, fmt.Errorf("%s:%d: %q is null, so no %q: a failed request? drop its line (and its label)", p, line, at, field)
		}
		if v == nil {
			return nil, noField(p, line, field, rec)
		}
		l, ok := near, near != nil
		if !ok {
			l, ok = jsonscan.Near(*scratch, v) // float32s kept, as a float64 .npy's
		}
		if ok {
			*scratch = l // the next line's, a line's numbers parsed into it
		}
		var big []json.Number
		switch {
		case string(bytes.TrimSpace(v)) == "null":
			return nil, fmt.Errorf("%s:%d: %q is null: a row without an embedding — drop it (and its label, in the same order)", p, line, field)
		case !ok && json.Unmarshal(v, &big) == nil:
			for k, x := range big { // numbers, one beyond float64
				if _, err := strconv.ParseFloat(string(x), 64); err != nil {
					return nil, fmt.Errorf("%s:%d: %q's number %d, %s, %v", p, line, field, k+1, x, map[bool]error{true: errUnderflow, false: errOverflow}[nonzeroText(string(x)) && strings.Contains(strings.ToLower(string(x)), "e-")])
				}
			}
			fallthrough
		case !ok:
			return nil, fmt.Errorf("%s:%d: %q holds %s, not a list of numbers", p, line, field, clipValue(string(v)))
		case len(l) == 0:
			return nil, fmt.Errorf("%s:%d: %q is an empty list", p, line, field)
		case d != 0 && len(l) != d:
			return nil, fmt.Errorf("%s:%d: %q holds %d numbers, and the first line's %d: every embedding one length", p, line, field, len(l), d)
		}
		for k, x := range l {
			f := float32(x)
			switch {
			case f == 0 && x != 0:
				return nil, fmt.Errorf("%s:%d: %q's number %d, %g, %v", p, line, field, k+1, x, errUnderflow)
			case math.IsInf(float64(f), 0):
				return nil, fmt.Errorf("%s:%d: %q's number %d, %g, %v", p, line, field, k+1, x, errOverflow)
			}
			out = append(out, f)
		}
		return out, nil
	}
	_, _, _, top := lookup(first, path) // the line's member the embedding is in
	var scratch []float64
	if rows, err = row(first, line, nil, nil, &scratch); err != nil {
		return e, "", err
	}
	d = len(rows)
	n := 1
	blocks := [][]float32{rows} // the first line's, then each block's
	type block struct {
		vals []float32
		n    int
	}
	err = inBlocks(br, p, line+1, cutLines, func(data []byte, line int) (block, error) {
		b := block{vals: make([]float32, 0, (bytes.Count(data, []byte("\n"))+1)*d)}
		scratch := make([]float64, 0, d)
		err := jsonlLines(data, line, func(l []byte, line int) error {
			var rec jsonlRecord
			var near []float64
			var err error
			if len(path) == 1 { // a top-level field: its numbers read in the line's scan
				rec, near, err = parseJSONLineNear(p, line, l, field, scratch)
			} else {
				rec, err = parseJSONLine(p, line, l)
			}
			if err != nil {
				return err
			}
			if b.vals, err = row(rec, line, b.vals, near, &scratch); err != nil {
				return err
			}
			b.n++
			return nil
		})
		return b, err
	}, func(b block) error {
		blocks = append(blocks, b.vals) // put together once, at the end: no doubling of the rows as they come
		n += b.n
		return nil
	})
	if err != nil {
		return e, "", err
	}
	rows = slices.Concat(blocks...)
	var left []string
	for _, k := range first.keys() {
		switch o := otherOf(k); {
		case k == top:
		case o != nil:
			left = append(left, fmt.Sprintf("%q (%s)", k, o.flag))
			o.found(k)
		default:
			left = append(left, strconv.Quote(k))
		}
	}
	note = fmt.Sprintf("JSON lines: %d rows; the field %q read as the embedding (%d numbers a row), as float32", n, field, d)
	if len(left) > 0 {
		note += "; left out: " + strings.Join(left, ", ")
	}
	if top != field && first.get("custom_id") != nil {
		note += "; an API's batch output lists requests in the order they finished, not the order sent: labels of another file pair by position — take them from this file, or sort it by custom_id first (jq -c -s 'sort_by(.custom_id)[]')"
	}
	return bundle.Embeddings{Source: p, Rows: rows, N: n, D: d}, note, nil
}

// jsonlValue is a line's value of a field, as JSON typed it: a string
// (kind 's'), a number as written ('n'), true or false ('b'), or null
// (0).
type jsonlValue struct {
	text string
	kind byte
	line int
}

// typed writes v as a message names it: the string "x", or true.
func (v jsonlValue) typed() string {
	switch v.kind {
	case 'b':
		return v.text
	case 'n':
		return "the number " + v.text
	}
	return fmt.Sprintf("the string %q", v.text)
}

// readJSONLValues reads a field of every line of a JSON-lines file: the
// field named, else the one named as what is (label or labels; both is
// asked about). An object is refused; so is a list (several labels a
// row), unless lists: then its JSON text is the value, of kind 'l'.
// Where skim, every line of the file is read whole by another reader (the
// embeddings' of the same file, which refuses a line that is not JSON):
// a line's other arrays are passed over, not checked (jsonscan.MembersSkim).
func readJSONLValues(p, field, what string, lists, skim bool) (values []jsonlValue, name string, err error) {
	r, c, err := openText(p)
	if err != nil {
		return nil, "", err
	}
	defer c.Close()
	br := r.(*bufio.Reader)
	first, line, err := jsonlFirst(p, br)
	if err != nil {
		return nil, "", err
	}
	if field == "" {
		var named []string
		for _, k := range first.keys() {
			if slices.Contains(columnNames("", what), k) {
				named = append(named, k)
			}
		}
		switch len(named) {
		case 0:
			return nil, "", fmt.Errorf("%s: which field holds the %s? give %s:FIELD (the fields: %s)", p, what, p, strings.Join(first.keys(), ", "))
		case 1:
			field = named[0]
		default:
			return nil, "", fmt.Errorf("%s:%d: both %q and %q could hold the %s: name one, %s:%s", p, line, named[0], named[1], what, p, named[0])
		}
	}
	values, err = jsonlRows(p, br, first, line, []string{field}, nil, what, lists, skim)
	return values, field, err
}

// jsonlRows reads fields of every line of a JSON-lines file in one pass,
// the first line (first, read at line) its reader's last, the rest from
// br in blocks on every core: the fields' values a line after another
// (len(fields) a line).
// Where optional[i], field i may be missing from a line (kind 'm');
// otherwise a line without it is refused. A list is a value of kind 'l'
// where lists, else refused; an object always. Where skim, a line's
// other arrays are passed over (readJSONLValues).
func jsonlRows(p string, br *bufio.Reader, first jsonlRecord, line int, fields []string, optional []bool, what string, lists, skim bool) ([]jsonlValue, error) {
	value := func(rec jsonlRecord, line int, field string, optional bool) (jsonlValue, error) {
		v := rec.get(field)
		switch {
		case v == nil && optional:
			return jsonlValue{"", 'm', line}, nil
		case v == nil:
			return jsonlValue{}, noField(p, line, field, rec)
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
			return jsonlValue{string(v[1 : len(v)-1]), 's', line}, nil // a string without escapes: as it is (no decoder a line)
		}
		var x any
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if err := d.Decode(&x); err != nil {
			return jsonlValue{}, fmt.Errorf("%s:%d: %q: %v", p, line, field, err)
		}
		switch x := x.(type) {
		case string:
			return jsonlValue{x, 's', line}, nil
		case json.Number:
			return jsonlValue{x.String(), 'n', line}, nil
		case nil:
			return jsonlValue{"", 0, line}, nil
		case bool:
			return jsonlValue{strconv.FormatBool(x), 'b', line}, nil
		case []any:
			if lists {
				return jsonlValue{string(bytes.TrimSpace(v)), 'l', line}, nil
			}
			return jsonlValue{}, fmt.Errorf("%s:%d: %q holds a list (%s): several %s a row, which ccs reads as bundle's -labels only", p, line, field, clipValue(string(v)), what)
		}
		return jsonlValue{}, fmt.Errorf("%s:%d: %q holds an object (%s), not one of the %s", p, line, field, clipValue(string(v)), what)
	}
	row := func(rec jsonlRecord, line int, out []jsonlValue) ([]jsonlValue, error) {
		for i, f := range fields {
			v, err := value(rec, line, f, i < len(optional) && optional[i])
			if err != nil {
				return out, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	rows, err := row(first, line, nil)
	if err != nil {
		return nil, err
	}
	err = inBlocks(br, p, line+1, cutLines, func(data []byte, line int) ([]jsonlValue, error) {
		var out []jsonlValue
		err := jsonlLines(data, line, func(l []byte, line int) error {
			var rec jsonlRecord
			var err error
			if m, ok := jsonscan.MembersSkim(l, fields); skim && ok {
				rec = m
			} else if rec, err = parseJSONLine(p, line, l); err != nil {
				return err
			}
			out, err = row(rec, line, out)
			return err
		})
		return out, err
	}, func(b []jsonlValue) error {
		rows = append(rows, b...)
		return nil
	})
	return rows, err
}

// jsonlIDs numbers a JSON-lines field's labels as a Parquet column's
// are: strings by their sorted order, as written ("007" and "7", "cat"
// and "cat " are each their own); integers as they are (1e0 is 1); a
// real number, or strings and numbers mixed, refused naming the lines;
// nulls one missing label (bundle.NullMark, which messages write null).
func jsonlIDs(p, field, what string, values []jsonlValue) (ids []int64, names []string, missing map[int64]string, err error) {
	var str, num, boolean *jsonlValue
	for i := range values {
		switch v := &values[i]; v.kind {
		case 's':
			if str == nil {
				str = v
			}
		case 'b':
			if boolean == nil {
				boolean = v
			}
		case 'n':
			if num == nil {
				num = v
			}
		}
	}
	if boolean != nil && (str != nil || num != nil) {
		other := str
		if other == nil {
			other = num
		}
		first, second := boolean, other
		if other.line < boolean.line {
			first, second = other, boolean
		}
		return nil, nil, nil, fmt.Errorf("%s:%d: %q holds %s, and line %d %s: %s of one kind", p, first.line, field, first.typed(), second.line, second.typed(), what)
	}
	if str == nil {
		str = boolean // true and false: two names
	}
	switch {
	case str != nil && num != nil && str.line < num.line:
		return nil, nil, nil, fmt.Errorf("%s:%d: %q holds %s, and line %d the number %s: %s of one kind, integers or names", p, str.line, field, str.typed(), num.line, num.text, what)
	case str != nil && num != nil:
		return nil, nil, nil, fmt.Errorf("%s:%d: %q holds the number %s, and line %d %s: %s of one kind, integers or names", p, num.line, field, num.text, str.line, str.typed(), what)
	}
	ids = make([]int64, len(values))
	nulls := false
	if str != nil {
		present := make([]string, 0, len(values))
		for _, v := range values {
			if v.kind != 0 {
				present = append(present, v.text)
			}
		}
		codes, n := bundle.LabelCodes(present)
		names = n
		for i, j := 0, 0; i < len(values); i++ {
			if values[i].kind == 0 {
				ids[i], nulls = -1, true
				continue
			}
			ids[i], j = codes[j], j+1
		}
		if nulls {
			missing = map[int64]string{-1: bundle.NullMark}
		}
		return ids, names, missing, nil
	}
	lowest := int64(0)
	for i, v := range values {
		if v.kind == 0 {
			nulls = true
			continue
		}
		k, err := strconv.ParseInt(v.text, 10, 64) // a 64-bit id exactly
		if err != nil {
			f, ferr := strconv.ParseFloat(v.text, 64) // 1e0, 3.0
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, nil, nil, fmt.Errorf("%s:%d: %q holds %s, no integer ccs can read exactly: %s are integers or names (a coordinate picked by mistake?)", p, v.line, field, v.text, what)
			}
			k = int64(f)
		}
		ids[i] = k
		lowest = min(lowest, ids[i])
	}
	if nulls {
		code := lowest - 1
		for i, v := range values {
			if v.kind == 0 {
				ids[i] = code
			}
		}
		missing = map[int64]string{code: bundle.NullMark}
	}
	return ids, nil, missing, nil
}

// jsonlLabelLists reads a JSON-lines field whose values are lists as
// several labels a row (ok; false where no value is a list): lists of
// names (["joy", "love"]), numbered in their sorted order as a Parquet
// list column's are, or of integers ([3, 16]; 3.0 and 1e0 too, as one
// label a row reads them), label numbers as they are (a -1 among them a
// missing label's mark, for -missing-labels); null and [] no label; a
// null among names or numbers a missing label's mark too (-missing-labels
// drop leaves it out). Lists all of one length C ≥ 2 holding 0s and 1s
// alone (1.0 and true too) — null and [] rows none of the C labels — are
// a multi-hot matrix's rows, as Python's ccs.bundle reads M.tolist() and
// a Parquet column of them: one label a row where each holds one 1. A
// value that is no list among lists, an item that is neither a name nor
// an integer, names and integers mixed, and a label number far beyond
// the labels a matrix of these rows could have are refused naming their
// lines.
func jsonlLabelLists(p, field string, values []jsonlValue) (li labelsInput, ok bool, err error) {
	first := slices.IndexFunc(values, func(v jsonlValue) bool { return v.kind == 'l' })
	if first < 0 {
		return labelsInput{}, false, nil
	}
	lists := make([][]any, len(values))
	var str, num *jsonlValue // the first line listing a name, a number
	width, binary := -1, true
	for i := range values {
		v := &values[i]
		switch v.kind {
		case 'l':
		case 0:
			continue
		default:
			return labelsInput{}, false, fmt.Errorf("%s:%d: %q holds %s, and line %d a list (%s): with several labels a row, every row's a list ([] or null for none)", p, v.line, field, v.typed(), values[first].line, clipJSON(values[first].text))
		}
		d := json.NewDecoder(strings.NewReader(v.text))
		d.UseNumber()
		if err := d.Decode(&lists[i]); err != nil {
			return labelsInput{}, false, fmt.Errorf("%s:%d: %q: %v", p, v.line, field, err)
		}
		switch {
		case len(lists[i]) == 0: // no label: a multi-hot row of none too
		case width == -1:
			width = len(lists[i])
		case width != len(lists[i]):
			width = -2
		}
		for _, x := range lists[i] {
			switch x := x.(type) {
			case string:
				if str == nil {
					str = v
				}
				binary = false
			case json.Number:
				if num == nil {
					num = v
				}
				f, err := x.Float64()
				binary = binary && err == nil && (f == 0 || f == 1)
			case bool:
			case nil: // a missing label's mark
				binary = false
			default:
				return labelsInput{}, false, fmt.Errorf("%s:%d: %q lists %s: labels are names or integers", p, v.line, field, clipJSON(jsonText(x)))
			}
		}
	}
	if binary && width >= 2 { // a multi-hot matrix's rows
		m := make([]int64, 0, len(values)*width)
		for _, l := range lists {
			if len(l) == 0 {
				m = append(m, make([]int64, width)...)
			}
			for _, x := range l {
				m = append(m, bit(x))
			}
		}
		li, err := multiHotLabels(m, width, fmt.Sprintf("%s:%s", p, field))
		return li, true, err
	}
	for i := range values {
		for _, x := range lists[i] {
			if _, isBool := x.(bool); isBool {
				return labelsInput{}, false, fmt.Errorf("%s:%d: %q lists %v among lists that are no multi-hot rows (one length, 0s and 1s): labels are names or integers", p, values[i].line, field, x)
			}
		}
	}
	if str != nil && num != nil {
		a, b := str, num
		if b.line < a.line {
			a, b = b, a
		}
		if a == b {
			return labelsInput{}, false, fmt.Errorf("%s:%d: %q lists %s, names and numbers: labels of one kind, integers or names", p, a.line, field, clipJSON(a.text))
		}
		return labelsInput{}, false, fmt.Errorf("%s:%d: %q lists %s, and line %d %s: labels of one kind, integers or names", p, a.line, field, clipJSON(a.text), b.line, clipJSON(b.text))
	}
	if str != nil {
		var flat []string
		for _, l := range lists {
			for _, x := range l {
				name, _ := x.(string)
				if x == nil {
					name = bundle.NullMark // -missing-labels's to read
				}
				flat = append(flat, name)
			}
		}
		codes, names := bundle.LabelCodes(flat)
		return labelsInput{sets: listSets(lists, codes), names: names, strs: true, c: max(2, len(names))}, true, nil
	}
	null := int64(-1) // a null's mark: below every number listed, named null (labelsInput.nullID)
	for _, l := range lists {
		for _, x := range l {
			if x != nil {
				if f, err := x.(json.Number).Float64(); err == nil && f <= float64(null) {
					null = int64(math.Floor(f)) - 1
				}
			}
		}
	}
	c, items, top, nulls := 2, 0, -1, false // top: the row listing the highest number
	var codes []int64
	for i, l := range lists {
		for _, x := range l {
			n := null
			nulls = nulls || x == nil
			if x != nil {
				var ok bool
				if n, ok = listID(x.(json.Number).String()); !ok { // as a CSV list's: 3, 3.0, 1e0
					return labelsInput{}, false, fmt.Errorf("%s:%d: %q lists %s, which is no label number: label numbers are integers below 2^31, names strings; lists of 0s and 1s of one length a row are a multi-hot matrix's rows", p, values[i].line, field, x)
				}
			}
			codes = append(codes, n)
			if int(n)+1 > c {
				c, top = int(n)+1, i
			}
			items++
		}
	}
	sets := listSets(lists, codes)
	if c > maxListLabels(items) {
		return labelsInput{}, false, fmt.Errorf("%s:%d: %q lists %d, a label number far beyond the others' (label numbers are a multi-hot matrix's columns, %d of them here for %d labels listed in all): a typo? ids as large as these are names — write them as strings", p, values[top].line, field, c-1, c, items)
	}
	li = labelsInput{sets: sets, c: c, listIDs: true}
	if nulls {
		li.nullID = int32(null)
	}
	return li, true, nil
}

// maxListLabels is the most label numbers lists of items labels in all
// may span: a label number is a column of the multi-hot matrix bundle
// sizes its tables by, and one typo of 2·10^9 asked for 48 GB. A million
// labels (24 MB of tables) always pass: a sample of extreme multi-label
// data (670 000 labels) keeps its ids.
func maxListLabels(items int) int { return max(1<<20, 64*items) }

// sortedKeys is keys in the order of rec's members.
func sortedKeys(rec jsonlRecord, keys []string) []string {
	var out []string
	for _, k := range rec.keys() {
		if slices.Contains(keys, k) {
			out = append(out, k)
		}
	}
	return out
}

// bit is a multi-hot row's item, a number exactly 0 or 1 or a boolean,
// as 0 or 1.
func bit(x any) int64 {
	switch x := x.(type) {
	case bool:
		if x {
			return 1
		}
	case json.Number:
		if f, _ := x.Float64(); f == 1 {
			return 1
		}
	}
	return 0
}

// clipJSON is a JSON value's text for a message, cut past 60 bytes as
// clipValue cuts a table's, unquoted: JSON is quoted as it is.
func clipJSON(v string) string {
	if head, cut := clipText(v); cut {
		return fmt.Sprintf("%s… (%d bytes)", head, len(v))
	}
	return v
}

// jsonText writes a decoded JSON value back as JSON, for a message.
func jsonText(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

// The names a JSON-lines file of relevance pairs gives its fields (BEIR's
// qrels' columns, and the spellings pipelines write), in the order looked
// for.
var (
	pairQueryFields = []string{"query-id", "query_id", "queryid", "qid", "query"}
	pairRowFields   = []string{"corpus-id", "corpus_id", "doc-id", "doc_id", "docid", "pid", "passage_id", "item_id", "doc"}
	pairScoreFields = []string{"score", "relevance", "rel", "label"}
)

// readJSONLPairs reads relevance pairs from JSON lines, a pair a line —
// {"query-id": "q1", "corpus-id": "d7", "score": 1} — as a qrels TSV of the
// same is read (bundle.ReadQrels: scores of 0 or less not relevant, ids
// resolved by ids), every line a pair: the fields named (FILE:QUERY,ROW
// or FILE:QUERY,ROW,SCORE), else those named as qrels name them, the
// score's optional. Messages give the file's lines.
func readJSONLPairs(p, columns string, ids *bundle.PairIDs) ([][2]int, error) {
	r, c, err := openText(p)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	br := r.(*bufio.Reader)
	first, line, err := jsonlFirst(p, br)
	if err != nil {
		return nil, err
	}
	var fields []string
	var optional []bool // the score's candidates, where no field is named: a first line may lack its score (Spark's write.json drops a null)
	if columns != "" {
		fields = strings.Split(columns, ",")
		if len(fields) != 2 && len(fields) != 3 {
			return nil, fmt.Errorf("%s:%s: want the pairs' fields QUERY,ROW or QUERY,ROW,SCORE", p, columns)
		}
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
	} else {
		keys := first.keys()
		pick := func(names []string) string {
			for _, n := range names {
				if slices.Contains(keys, n) {
					return n
				}
			}
			return ""
		}
		q, row := pick(pairQueryFields), pick(pairRowFields)
		if q == "" || row == "" {
			return nil, fmt.Errorf("%s:%d: which fields hold the query's id and the relevant row's? name them, %s:QUERY,ROW[,SCORE] (the fields: %s)", p, line, p, strings.Join(keys, ", "))
		}
		fields, optional = append([]string{q, row}, pairScoreFields...), []bool{false, false}
		for range pairScoreFields {
			optional = append(optional, true)
		}
	}
	values, err := jsonlRows(p, br, first, line, fields, optional, "pairs", false, false)
	if err != nil {
		return nil, err
	}
	k := len(fields)
	cols := []int{0, 1} // the fields read: query, row and, where some line has one, the score
	if columns != "" {
		cols = cols[:0]
		for i := range fields {
			cols = append(cols, i)
		}
	} else {
	score:
		for i := 2; i < k; i++ { // the first score field a line has, which every line must have
			for j := i; j < len(values); j += k {
				if values[j].kind != 'm' {
					cols = append(cols, i)
					break score
				}
			}
		}
		if len(cols) == 3 {
			for j := cols[2]; j < len(values); j += k {
				if values[j].kind == 'm' {
					return nil, fmt.Errorf("%s:%d: no field %q, which other lines score their pairs with: score every pair, or none", p, values[j].line, fields[cols[2]])
				}
			}
		}
	}
	var b strings.Builder // the pairs as a qrels TSV, each on its line of the file
	at := 1
	for base := 0; base < len(values); base += k {
		line := values[base].line
		for ; at < line; at++ {
			b.WriteByte('\n')
		}
		for n, i := range cols {
			v := values[base+i]
			switch {
			case v.kind == 0:
				return nil, fmt.Errorf("%s:%d: %q is null: every pair names its query and its row", p, v.line, fields[i])
			case v.kind == 'b' || strings.ContainsAny(v.text, "\t\n\r"):
				return nil, fmt.Errorf("%s:%d: %q holds %s: want an id (a string or an integer)%s", p, v.line, fields[i], v.typed(), map[bool]string{true: " or a score", false: ""}[n == 2])
			}
			if n > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(v.text)
		}
		b.WriteByte('\n')
		at++
	}
	ids.NoHeader = true
	return bundle.ReadQrels(strings.NewReader(b.String()), p, ids)
}
