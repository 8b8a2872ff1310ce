package main

// Regressions from a new user's trial and review of the JSON-lines reader
// (each failed at d9e5802): a .gz cut short, labels merged or chosen in
// silence, lines misnamed, misleading hints.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"
)

// reproLines is n lines of line(i), each ended by a line break.
func reproLines(n int, line func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i) + "\n")
	}
	return b.String()
}

// reproWrite writes text to a file name in a test's directory.
func reproWrite(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// R1 (wrong-number): JSON strings are typed; "007" and "7" are two labels,
// "cat" and "cat " too. idsOfText's text-table rules (TrimSpace, "3.0" is
// 3, "007" is 7) merge them without a word.
func TestJSONLinesReproStringLabelsMerged(t *testing.T) {
	for _, c := range []struct {
		name string
		vals []string
	}{
		{"zero-padded", []string{`"007"`, `"7"`, `"8"`}},
		{"trailing space", []string{`"cat"`, `"cat "`, `"dog"`}},
	} {
		p := reproWrite(t, "l.jsonl", reproLines(30, func(i int) string {
			return fmt.Sprintf(`{"label": %s, "emb": [%d, 1]}`, c.vals[i%3], i)
		}))
		ids, names, _, _, err := readIDs(p+":label", "labels")
		if err != nil {
			t.Fatal(err)
		}
		distinct := map[int64]bool{}
		for _, id := range ids {
			distinct[id] = true
		}
		if len(distinct) != 3 {
			t.Errorf("%s: labels %v read as %d classes (names %q), want 3", c.name, c.vals, len(distinct), names)
		}
	}
}

// R2 (wrong-number, silent pick): -labels FILE with no field named, where a
// line holds both "label" and "labels": the later key wins, by key order,
// without a word (the embeddings' reader asks "which?" for two lists).
func TestJSONLinesReproTwoLabelFields(t *testing.T) {
	p := reproWrite(t, "both.jsonl", reproLines(30, func(i int) string {
		return fmt.Sprintf(`{"label": "%c", "labels": "%c", "emb": [%d, 1]}`, "ab"[i%2], "xyz"[i%3], i)
	}))
	_, names, _, _, err := readIDs(p, "labels")
	if err == nil {
		t.Errorf("both \"label\" and \"labels\": read %q without asking which", names)
	}
}

// R3 (bad-message): a null id is named "the 5-th object", not its line
// (7: two blank lines above it), unlike every other JSON-lines message.
func TestJSONLinesReproIDLine(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		id := fmt.Sprintf(`"p%d"`, i)
		if i == 4 {
			id = "null"
		}
		fmt.Fprintf(&b, `{"_id": %s, "emb": [%d, 1]}`+"\n", id, i)
		if i == 0 {
			b.WriteString("\n\n")
		}
	}
	p := reproWrite(t, "p.jsonl", b.String())
	_, err := readIDStrings(p+":_id", "ids", 10, 2)
	if err == nil || !strings.Contains(err.Error(), "p.jsonl:7:") {
		t.Errorf("got %v, want it to name p.jsonl:7", err)
	}
}

// R4 (bad-message): a first label that is not an integer above integers is
// named at line 1 whatever its line (3 here, below two blank lines).
func TestJSONLinesReproHeaderLine(t *testing.T) {
	p := reproWrite(t, "h.jsonl", "\n\n"+reproLines(30, func(i int) string {
		l := fmt.Sprint(i % 3)
		if i == 0 {
			l = `"cat"`
		}
		return fmt.Sprintf(`{"label": %s, "emb": [%d, 1]}`, l, i)
	}))
	_, _, _, _, err := readIDs(p+":label", "labels")
	if err == nil || !strings.Contains(err.Error(), "h.jsonl:3:") {
		t.Errorf("got %v, want it to name h.jsonl:3", err)
	}
}

// R5 (slow): json.dump(list_of_dicts) — one line, a JSON array — is read
// whole and decoded by encoding/json before it is refused as an array,
// though its first byte, '[', says so (816 MB: 11.5 s, 1.66 GB RSS).
func TestJSONLinesReproArrayReadWhole(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("[")
	for i := 0; b.Len() < 16<<20; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"label": "a", "emb": [0.123456789, %d.5, -1.25, 3.0e-2]}`, i)
	}
	b.WriteString("]")
	p := reproWrite(t, "array.json", b.String())
	b.Reset()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err := readEmbeddings(p, false)
	runtime.ReadMemStats(&m1)
	if err == nil || !strings.Contains(err.Error(), "a JSON array") {
		t.Fatalf("got %v", err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 4<<20 {
		t.Errorf("refusing a 16 MB one-line JSON array allocated %d MB: read whole before its '[' was looked at", alloc>>20)
	}
}

// R6 (false-refusal): docs/your-data.md says "an embedding API's batch
// output" is read; OpenAI's batch output nests the embedding at
// response.body.data[0].embedding, and ccs refuses it, without a word on
// where the embedding is or how to flatten it.
func TestJSONLinesReproOpenAIBatch(t *testing.T) {
	p := reproWrite(t, "batch_output.jsonl", reproLines(30, func(i int) string {
		return fmt.Sprintf(`{"id": "batch_req_%d", "custom_id": "req-%d", "response": {"status_code": 200, "request_id": "r%d", "body": {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.5, %d.25, -1]}], "model": "text-embedding-3-small", "usage": {"prompt_tokens": 3, "total_tokens": 3}}}, "error": null}`, i, i, i, i)
	}))
	_, err := readEmbeddings(p, false)
	if err != nil && !strings.Contains(err.Error(), "response.body") && !strings.Contains(err.Error(), "body.data") {
		t.Errorf("OpenAI batch output: %v (neither read nor told where its embedding is)", err)
	}
}

// R7 (bad-message): files that are plainly not JSON lines, each refused
// with a message that does not say what the file is.
func TestJSONLinesReproNotJSONLinesHints(t *testing.T) {
	row := func(i int) map[string]any {
		return map[string]any{"label": "ab"[i%2 : i%2+1], "embedding": []float64{0.5, float64(i)}}
	}
	// pandas' df.to_json("x.json"): orient="columns", its default.
	cols := map[string]map[string]any{"label": {}, "embedding": {}}
	for i := range 5 {
		cols["label"][fmt.Sprint(i)] = row(i)["label"]
		cols["embedding"][fmt.Sprint(i)] = row(i)["embedding"]
	}
	pandas, _ := json.Marshal(cols)
	// f.write(json.dumps(rec)) in a loop, no "\n": objects back to back.
	var concat bytes.Buffer
	for i := range 5 {
		b, _ := json.Marshal(row(i))
		concat.Write(b)
	}
	// PowerShell's Out-File: UTF-16LE with a BOM.
	var u16 bytes.Buffer
	for _, r := range utf16.Encode([]rune("\ufeff" + reproLines(5, func(i int) string { b, _ := json.Marshal(row(i)); return string(b) }))) {
		u16.WriteByte(byte(r))
		u16.WriteByte(byte(r >> 8))
	}
	for _, c := range []struct{ name, text, want string }{
		{"pandas.json", string(pandas) + "\n", `orient="records", lines=True`},
		{"concat.jsonl", concat.String(), "one object a line"},
		{"ps.jsonl", u16.String(), "UTF-16"},
	} {
		_, err := readEmbeddings(reproWrite(t, c.name, c.text), false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a message that says %q", c.name, err, c.want)
		}
	}
}

// R8 (bad-message, nit): a line that ends in "}," (an array's element) is
// called "an object over several lines"; a number beyond float64 (1e400) is
// "not a list of numbers", where 1e39 is named "beyond float32's range".
func TestJSONLinesReproMisleadingHints(t *testing.T) {
	good := func(i int) string { return fmt.Sprintf(`{"label": "a", "emb": [0.5, %d.25]}`, i) }
	comma := reproLines(10, func(i int) string {
		if i == 5 {
			return good(i) + ","
		}
		return good(i)
	})
	huge := reproLines(10, func(i int) string {
		if i == 5 {
			return `{"label": "a", "emb": [0.5, 1e400]}`
		}
		return good(i)
	})
	for _, c := range []struct{ name, text, notWant, want string }{
		{"comma.jsonl", comma, "over several lines", "comma.jsonl:6"},
		{"huge.jsonl", huge, "not a list of numbers", "huge.jsonl:6"},
	} {
		_, err := readEmbeddings(reproWrite(t, c.name, c.text)+":emb", false)
		if err == nil || strings.Contains(err.Error(), c.notWant) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
}

// R9 (bad-message, nit): a null label is named "" in the missing-label
// refusal, where the file says null.
func TestJSONLinesReproNullLabelNamed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	p := reproWrite(t, "n.jsonl", reproLines(300, func(i int) string {
		l := `"` + "abc"[i%3:i%3+1] + `"`
		if i%10 == 9 {
			l = "null"
		}
		return fmt.Sprintf(`{"label": %s, "emb": [%g, %g, %g]}`, l, r.NormFloat64(), r.NormFloat64(), r.NormFloat64())
	}))
	_, err := ccs("bundle", "-embeddings", p, "-labels", p+":label", "-k", "3", "-out", filepath.Join(t.TempDir(), "b"))
	if err == nil || strings.Contains(err.Error(), `("": 30)`) || !strings.Contains(err.Error(), "null") {
		t.Errorf("got %v, want the null labels named null", err)
	}
}

// Not a bug (passes): blocks of a few bytes on 3 workers, values with
// escapes (the slow path) and without, read as one pass reads them — no
// value kept pointing into a reused block buffer.
func TestJSONLinesReproBufferReuseStress(t *testing.T) {
	defer func(size, workers int) { textBlockSize, textWorkers = size, workers }(textBlockSize, textWorkers)
	r := rand.New(rand.NewPCG(3, 4))
	want := make([]string, 2000)
	var b strings.Builder
	for i := range want {
		want[i] = fmt.Sprintf("v%d-%x", i, r.Uint64())
		k := `"lab"`
		if i%7 == 0 {
			k = `"l\u0061b"`
		}
		fmt.Fprintf(&b, `{%s: %q, "emb": [%d, 1]}`+"\n", k, want[i], i)
	}
	p := reproWrite(t, "s.jsonl", b.String())
	for _, bw := range [][2]int{{5, 3}, {97, 2}, {4096, 3}} {
		textBlockSize, textWorkers = bw[0], bw[1]
		got, _, err := readJSONLValues(p, "lab", "labels", false, false)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		for i := range want {
			if got[i].text != want[i] {
				t.Fatalf("blocks %v: row %d: %q, want %q", bw, i, got[i].text, want[i])
			}
		}
	}
}

// R0 (wrong-number, silent truncation): a .gz cut short — a writer killed
// mid-file that flushed each line (gzip -t: "unexpected end of file") —
// is read as the rows before the cut, without a word: inBlocks takes the
// gzip reader's io.ErrUnexpectedEOF for the end of the file (ReadFull's
// own short-read signal). JSON lines and the text table alike.
func TestJSONLinesReproTruncatedGzip(t *testing.T) {
	for _, c := range []struct {
		name string
		line func(i int) string
	}{
		{"cut.jsonl.gz", func(i int) string { return fmt.Sprintf(`{"label": "a", "emb": [0.5, %d.25]}`, i) }},
		{"cut.csv.gz", func(i int) string {
			if i == 0 {
				return "x,y"
			}
			return fmt.Sprintf("0.5,%d.25", i)
		}},
	} {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		cut := 0
		for i := range 1000 {
			z.Write([]byte(c.line(i) + "\n"))
			z.Flush()
			if i == 599 {
				cut = b.Len() // a writer killed here: 600 whole lines, no trailer
			}
		}
		z.Close()
		p := reproWrite(t, c.name, string(b.Bytes()[:cut]))
		e, err := readEmbeddings(p, false)
		if err == nil {
			t.Errorf("%s: a truncated gzip stream read as %d rows without an error", c.name, e.N)
		}
	}
}

// R10 (bad-message): a .jsonl.gz whose compressed data is corrupt is "no
// JSON object in it": jsonlFirst drops the read error (gzip -t: "invalid
// compressed data--format violated").
func TestJSONLinesReproCorruptGzipFirstLine(t *testing.T) {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(bytes.Repeat([]byte(`{"a": [1, 2]}`+"\n"), 100))
	z.Close()
	g := b.Bytes()
	g[10], g[11] = g[10]^0xff, g[11]^0xff
	_, err := readEmbeddings(reproWrite(t, "c.jsonl.gz", string(g)), false)
	if err == nil || strings.Contains(err.Error(), "no JSON object in it") {
		t.Errorf("got %v, want the read's error (flate: corrupt input)", err)
	}
}

// R11 (bad-message): the NaN/Infinity hint is given for any bad line in
// which the text "NaN" appears, e.g. in a text field.
func TestJSONLinesReproNaNHintFalse(t *testing.T) {
	p := reproWrite(t, "t.jsonl", reproLines(10, func(i int) string {
		if i == 3 {
			return `{"text": "NaN handling", "emb": [0.5, 1], "x": tru}`
		}
		return fmt.Sprintf(`{"text": "NaN handling", "emb": [0.5, %d]}`, i)
	}))
	_, err := readEmbeddings(p, false)
	if err == nil || strings.Contains(err.Error(), "NaN or Infinity") {
		t.Errorf("got %v: the line's fault is `tru`, not a NaN", err)
	}
}

// R12 (nit, wrong-number in rare writers): the JSON numbers 1, 1.0 and 1e0
// are one number; 1 and 1.0 are one label, 1e0 another ("1e0" kept as text).
func TestJSONLinesReproExponentLabel(t *testing.T) {
	p := reproWrite(t, "e.jsonl", reproLines(30, func(i int) string {
		return fmt.Sprintf(`{"label": %s, "emb": [%d, 1]}`, []string{"1", "1.0", "1e0", "2"}[i%4], i)
	}))
	ids, names, _, _, err := readIDs(p+":label", "labels")
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[int64]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	if len(distinct) != 2 {
		t.Errorf("1, 1.0, 1e0, 2 read as %d labels (names %q), want 2", len(distinct), names)
	}
}
