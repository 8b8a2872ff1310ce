package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
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
func parseJSONLine(p string, line int, b []byte) (jsonlRecord, error) {
	if m, ok := jsonscan.Members(b); ok {
		return m, nil
	}
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
	case bytes.Equal(t, []byte("{")) || len(t) > 0 && t[0] == '{' && !bytes.HasSuffix(t, []byte("}")):
		hint = ": an object over several lines — a JSON file, not JSON Lines (one object a line: pandas' to_json(orient=\"records\", lines=True), datasets' to_json)"
	case len(t) > 0 && t[0] == '[':
		hint = ": a JSON array, not JSON Lines (one object a line: pandas' to_json(orient=\"records\", lines=True), datasets' to_json)"
	case bytes.Contains(t, []byte("NaN")) || bytes.Contains(t, []byte("Infinity")):
		hint = ": NaN or Infinity, which Python's json writes and JSON has not — a row with no finite embedding: drop it (and its label)"
	}
	return nil, fmt.Errorf("%s:%d: not a JSON object (%v)%s", p, line, err, hint)
}

// jsonlFirst reads a JSON-lines file's first object, past blank lines,
// from r; line is its line.
func jsonlFirst(p string, r *bufio.Reader) (rec jsonlRecord, line int, err error) {
	for {
		b, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			line++
			rec, err := parseJSONLine(p, line, b)
			return rec, line, err
		}
		if err != nil {
			return nil, line, fmt.Errorf("%s: no JSON object in it", p)
		}
		line++
	}
}

// jsonlLines calls each for every non-blank line of data, the first of
// them line, in order, stopping at its first error.
func jsonlLines(data []byte, line int, each func(b []byte, line int) error) error {
	for ln := line; len(data) > 0; ln++ {
		var l []byte
		l, data, _ = bytes.Cut(data, []byte("\n"))
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
func readJSONLEmbeddings(p, field string) (e bundle.Embeddings, note string, err error) {
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
	if field == "" {
		var lists []string
		for _, m := range first {
			if v, ok := jsonscan.Floats[float64](nil, m.Value); ok && len(v) > 0 {
				lists = append(lists, m.Key)
			}
		}
		switch len(lists) {
		case 0:
			return e, "", fmt.Errorf("%s:%d: no field holds a list of numbers, an embedding (the fields: %s)", p, line, strings.Join(first.keys(), ", "))
		case 1:
			field = lists[0]
		default:
			return e, "", fmt.Errorf("%s:%d: %s each hold a list of numbers: which is the embedding? name it, %s:%s", p, line, strings.Join(lists, " and "), p, lists[0])
		}
	}
	d := 0
	var rows []float32
	row := func(rec jsonlRecord, line int, out []float32, scratch *[]float64) ([]float32, error) {
		v := rec.get(field)
		if v == nil {
			hint := ""
			if near, ok := suggest.Nearest(field, rec.keys()); ok {
				hint = fmt.Sprintf(": did you mean %q?", near)
			}
			return nil, fmt.Errorf("%s:%d: no field %q (the fields: %s)%s", p, line, field, strings.Join(rec.keys(), ", "), hint)
		}
		l, ok := jsonscan.Floats(*scratch, v)
		if ok {
			*scratch = l // the next line's, a line's numbers parsed into it
		}
		switch {
		case string(bytes.TrimSpace(v)) == "null":
			return nil, fmt.Errorf("%s:%d: %q is null: a row without an embedding — drop it (and its label, in the same order)", p, line, field)
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
	var scratch []float64
	if rows, err = row(first, line, nil, &scratch); err != nil {
		return e, "", err
	}
	d = len(rows)
	n := 1
	type block struct {
		vals []float32
		n    int
	}
	err = inBlocks(br, p, line+1, cutLines, func(data []byte, line int) (block, error) {
		b := block{vals: make([]float32, 0, (bytes.Count(data, []byte("\n"))+1)*d)}
		scratch := make([]float64, 0, d)
		err := jsonlLines(data, line, func(l []byte, line int) error {
			rec, err := parseJSONLine(p, line, l)
			if err != nil {
				return err
			}
			if b.vals, err = row(rec, line, b.vals, &scratch); err != nil {
				return err
			}
			b.n++
			return nil
		})
		return b, err
	}, func(b block) error {
		rows = append(rows, b.vals...)
		n += b.n
		return nil
	})
	if err != nil {
		return e, "", err
	}
	var left []string
	for _, k := range first.keys() {
		if k != field {
			left = append(left, strconv.Quote(k))
		}
	}
	note = fmt.Sprintf("JSON lines: %d rows; the field %q read as the embedding (%d numbers a row), as float32", n, field, d)
	if len(left) > 0 {
		note += "; left out: " + strings.Join(left, ", ")
	}
	return bundle.Embeddings{Source: p, Rows: rows, N: n, D: d}, note, nil
}

// readJSONLValues reads a field of every line of a JSON-lines file as
// text: the field named, else one named as what is (label, labels); a
// string as it is, a number as written, null as "" (a missing value). A
// list (several labels a row) or an object is refused.
func readJSONLValues(p, field, what string) ([]string, error) {
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
	if field == "" {
		for _, k := range first.keys() {
			if k == what || k == strings.TrimSuffix(what, "s") {
				field = k
			}
		}
		if field == "" {
			return nil, fmt.Errorf("%s: which field holds the %s? give %s:FIELD (the fields: %s)", p, what, p, strings.Join(first.keys(), ", "))
		}
	}
	value := func(rec jsonlRecord, line int) (string, error) {
		v := rec.get(field)
		if v == nil {
			hint := ""
			if near, ok := suggest.Nearest(field, rec.keys()); ok {
				hint = fmt.Sprintf(": did you mean %q?", near)
			}
			return "", fmt.Errorf("%s:%d: no field %q (the fields: %s)%s", p, line, field, strings.Join(rec.keys(), ", "), hint)
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1]), nil // a string without escapes: as it is (no decoder a line)
		}
		var x any
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if err := d.Decode(&x); err != nil {
			return "", fmt.Errorf("%s:%d: %q: %v", p, line, field, err)
		}
		switch x := x.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		case nil:
			return "", nil
		case bool:
			return strconv.FormatBool(x), nil
		case []any:
			return "", fmt.Errorf("%s:%d: %q holds a list (%s): several %s a row, which ccs reads from a CSV column of lists or a Parquet list column (df.to_csv(\"labels.csv\"), -labels labels.csv:%s; ds.to_parquet(\"labels.parquet\"))", p, line, field, clipValue(string(v)), what, field)
		}
		return "", fmt.Errorf("%s:%d: %q holds an object (%s), not one of the %s", p, line, field, clipValue(string(v)), what)
	}
	v, err := value(first, line)
	if err != nil {
		return nil, err
	}
	values := []string{v}
	err = inBlocks(br, p, line+1, cutLines, func(data []byte, line int) ([]string, error) {
		var out []string
		err := jsonlLines(data, line, func(l []byte, line int) error {
			rec, err := parseJSONLine(p, line, l)
			if err != nil {
				return err
			}
			v, err := value(rec, line)
			out = append(out, v)
			return err
		})
		return out, err
	}, func(b []string) error {
		values = append(values, b...)
		return nil
	})
	return values, err
}
