package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestJSONLines: embeddings, labels and ids written as JSON lines — by
// Hugging Face datasets' to_json (to a .json), pandas' to_json(lines=True),
// an API's batch file; gzip-compressed; CRLF; a blank last line — read as
// the same float32 rows and labels as an .npy of them, in one block or in
// blocks of a few bytes on three goroutines.
func TestJSONLines(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	r := rand.New(rand.NewPCG(9, 10))
	const n, d = 90, 5
	names := []string{"gnu", "fox", "eel"}
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	var hf, crlf, api bytes.Buffer
	for i := range n {
		row := make([]float64, d)
		for j := range row {
			row[j] = float64(x[i*d+j]) // Python's float of a float32
		}
		b, _ := json.Marshal(map[string]any{"idx": i, "text": fmt.Sprintf("doc \"%d\"", i), "label": names[i%3], "embedding": row})
		hf.Write(append(b, '\n'))
		crlf.Write(append(b, '\r', '\n'))
		fmt.Fprintf(&api, `{"custom_id": "req-%d", "response": {"status_code": 200}, "class": %d, "vector": %s}`+"\n", i, i%3, mustJSON(row))
	}
	hf.WriteString("\n") // a blank last line
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(hf.Bytes())
	zw.Close()
	for name, b := range map[string][]byte{"hf.json": hf.Bytes(), "crlf.jsonl": crlf.Bytes(), "api.ndjson": api.Bytes(), "hf.jsonl.gz": gz.Bytes()} {
		if err := os.WriteFile(p(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(size, workers int) { textBlockSize, textWorkers = size, workers }(textBlockSize, textWorkers)
	for _, bw := range [][2]int{{1 << 20, 1}, {7, 3}, {200, 2}} {
		textBlockSize, textWorkers = bw[0], bw[1]
		for _, c := range []struct{ emb, labels, note string }{
			{"hf.json", "hf.json", `JSON lines: 90 rows; the field "embedding" read as the embedding (5 numbers a row), as float32; left out: "idx", "label", "text"`},
			{"crlf.jsonl:embedding", "crlf.jsonl:label", `the field "embedding" read as the embedding`},
			{"hf.jsonl.gz", "hf.jsonl.gz:label", `90 rows; the field "embedding"`},
			{"api.ndjson", "api.ndjson:class", `the field "vector" read as the embedding (5 numbers a row), as float32; left out: "custom_id", "response", "class"`},
		} {
			f, err := readEmbeddings(p(c.emb), false)
			if err != nil {
				t.Fatalf("%s: %v", c.emb, err)
			}
			if !strings.Contains(f.conv, c.note) {
				t.Errorf("%s: note %q, want %q", c.emb, f.conv, c.note)
			}
			if f.N != n || f.D != d || !sameBits(f.Rows, x) {
				t.Errorf("%s, blocks of %d: (%d, %d), rows equal %v", c.emb, bw[0], f.N, f.D, sameBits(f.Rows, x))
			}
			ids, lnames, _, _, err := readIDs(p(c.labels), "labels")
			if err != nil {
				t.Fatalf("%s: %v", c.labels, err)
			}
			for i, id := range ids {
				got := fmt.Sprint(id)
				if lnames != nil {
					got = lnames[id]
				}
				if want := []string{names[i%3], fmt.Sprint(i % 3)}; !slices.Contains(want, got) {
					t.Fatalf("%s: row %d: label %q, want %q", c.labels, i, got, want)
				}
			}
		}
		ids, err := readIDStrings(p("api.ndjson")+":custom_id", "ids", n, d)
		if err != nil || len(ids) != n || ids[17] != "req-17" {
			t.Errorf("ids: %v, %v", ids, err)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestJSONLinesBad: a JSON-lines file that cannot be read as it stands is
// refused, naming the file, the line and the field, and what to do.
func TestJSONLinesBad(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	defer func(size int) { textBlockSize = size }(textBlockSize)
	good := func(i int) string { return fmt.Sprintf(`{"id": %d, "label": "a", "emb": [0.5, %d.25, -1]}`, i, i) }
	lines := func(n int, edit func(i int, l string) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(edit(i, good(i)) + "\n")
		}
		return b.String()
	}
	at := func(k int, with string) func(int, string) string {
		return func(i int, l string) string {
			if i == k {
				return with
			}
			return l
		}
	}
	files := map[string]string{
		"pretty.json":     "{\n  \"emb\": [0.5, 1]\n}\n",
		"array.json":      `[{"emb": [0.5, 1]}, {"emb": [1, 2]}]` + "\n",
		"nan.jsonl":       lines(60, at(41, `{"id": 41, "label": "a", "emb": [0.5, NaN, -1]}`)),
		"cut.jsonl":       lines(60, at(57, `{"id": 57, "label": "a", "emb": [0.5, 1`)),
		"short.jsonl":     lines(60, at(30, `{"id": 30, "label": "a", "emb": [0.5, 1]}`)),
		"null.jsonl":      lines(60, at(12, `{"id": 12, "label": "a", "emb": null}`)),
		"string.jsonl":    lines(60, at(12, `{"id": 12, "label": "a", "emb": "[0.5, 1, 2]"}`)),
		"missing.jsonl":   lines(60, at(50, `{"id": 50, "label": "a", "embs": [0.5, 1, 2]}`)),
		"big.jsonl":       lines(60, at(5, `{"id": 5, "label": "a", "emb": [0.5, 1e39, 2]}`)),
		"tiny.jsonl":      lines(60, at(5, `{"id": 5, "label": "a", "emb": [0.5, 1e-50, 2]}`)),
		"two.jsonl":       `{"text_emb": [1, 2], "image_emb": [3, 4]}` + "\n",
		"none.jsonl":      `{"id": 1, "text": "x"}` + "\n",
		"empty.jsonl":     "\n\n",
		"labellist.jsonl": lines(60, at(3, `{"id": 3, "label": ["a", "b"], "emb": [0.5, 1, 2]}`)),
		"labelobj.jsonl":  lines(60, at(3, `{"id": 3, "label": {"name": "a"}, "emb": [0.5, 1, 2]}`)),
		"boolmix.jsonl":   lines(60, at(7, `{"id": 7, "label": true, "emb": [0.5, 7.25, -1]}`)),
	}
	for name, text := range files {
		os.WriteFile(p(name), []byte(text), 0o644)
	}
	for _, c := range []struct{ arg, want string }{
		{"pretty.json", `pretty.json:1: not a JSON object (unexpected end of JSON input): an object over several lines — a JSON file, not JSON lines (one object a line: pandas' to_json(orient="records", lines=True), datasets' to_json)`},
		{"array.json", `array.json:1: a JSON array (json.dump of a list), not JSON lines: write one object a line`},
		{"nan.jsonl", `nan.jsonl:42: not a JSON object (invalid character 'N' looking for beginning of value): NaN or Infinity (in "emb"), which Python's json writes and JSON has not`},
		{"cut.jsonl", `cut.jsonl:58: not a JSON object`},
		{"short.jsonl", `short.jsonl:31: "emb" holds 2 numbers, and the first line's 3: every embedding one length`},
		{"null.jsonl", `null.jsonl:13: "emb" is null: a row without an embedding — drop it (and its label, in the same order)`},
		{"string.jsonl", `string.jsonl:13: "emb" holds "\"[0.5, 1, 2]\"", not a list of numbers`},
		{"missing.jsonl", `missing.jsonl:51: no field "emb" (the fields: id, label, embs): did you mean "embs"?`},
		{"big.jsonl", `big.jsonl:6: "emb"'s number 2, 1e+39, beyond float32's range`},
		{"tiny.jsonl", `tiny.jsonl:6: "emb"'s number 2, 1e-50, which rounds to 0 in float32`},
		{"two.jsonl", `two.jsonl:1: text_emb and image_emb each hold a list of numbers: which is the embedding? name it, `},
		{"two.jsonl:image_emb", ``},
		{"none.jsonl", `none.jsonl:1: no field holds a list of numbers, an embedding (the fields: id, text)`},
		{"empty.jsonl", `empty.jsonl: 2 blank lines and no JSON object`},
		{"short.jsonl:label", `short.jsonl:1: "label" holds "\"a\"", not a list of numbers`},
	} {
		for _, size := range []int{1 << 20, 16} {
			textBlockSize = size
			_, err := readEmbeddings(p(c.arg), false)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s, blocks of %d: got %v, want %q", c.arg, size, err, c.want)
			}
		}
	}
	textBlockSize = 1 << 20
	for _, c := range []struct{ arg, want string }{
		{"labellist.jsonl:label", `labellist.jsonl:4: "label" holds a list ("[\"a\", \"b\"]"): several labels a row`},
		{"labelobj.jsonl:label", `labelobj.jsonl:4: "label" holds an object`},
		{"boolmix.jsonl:label", `boolmix.jsonl:1: "label" holds the string "a", and line 8 true: labels of one kind`},
		{"none.jsonl", `none.jsonl: which field holds the labels? give ` + p("none.jsonl") + `:FIELD (the fields: id, text)`},
		{"missing.jsonl:label", ``},
		{"missing.jsonl:lable", `missing.jsonl:1: no field "lable" (the fields: id, label, emb): did you mean "label"?`},
	} {
		_, _, _, _, err := readIDs(p(c.arg), "labels")
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("labels %s: got %v, want %q", c.arg, err, c.want)
		}
	}
}
