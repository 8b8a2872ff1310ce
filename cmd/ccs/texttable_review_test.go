package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func reviewRead(t *testing.T, name, text, spec string) (n, d int, rows []float32, note string, err error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	e, note, _, err := readTextEmbeddings(p, spec)
	return e.N, e.D, e.Rows, note, err
}

// Regressions from a review of the block reader, lists and separators
// (each failed before its fix).

// R1: Excel's "sep=;" line: every line number is one too small.
func TestReviewSepLineLineNumbers(t *testing.T) {
	// line 1: sep=;  line 2: header  line 3: row  line 4: row with NA
	_, _, _, _, err := reviewRead(t, "s.csv", "sep=;\nx;y\n1,5;2\n3;NA\n", "")
	if err == nil || !strings.Contains(err.Error(), "s.csv:4:") {
		t.Errorf("missing value on file line 4: got %v", err)
	}
	// the NA in the first data row (line 3, read by the head)
	_, _, _, _, err = reviewRead(t, "s2.csv", "sep=;\nx;y\n3;NA\n1;2\n", "")
	if err == nil || !strings.Contains(err.Error(), "s2.csv:3:") {
		t.Errorf("missing value on file line 3: got %v", err)
	}
	// a ragged row far below (read by the blocks)
	_, _, _, _, err = reviewRead(t, "s3.csv", "sep=;\nx;y\n1;2\n3;4\n5;6;7\n", "")
	if err == nil || !strings.Contains(err.Error(), "s3.csv:5:") {
		t.Errorf("ragged row on file line 5: got %v", err)
	}
}

// R2: the second record's last field spanning lines: the rest's lines
// are numbered from the field's first line, not past the record.
func TestReviewRestLineQuotedLastField(t *testing.T) {
	text := "a,b,note\n1,2,\"two\nlines\"\n3,NA,z\n" // NA on line 4
	_, _, _, _, err := reviewRead(t, "q.csv", text, "")
	if err == nil || !strings.Contains(err.Error(), "q.csv:4:") {
		t.Errorf("missing value on file line 4: got %v", err)
	}
	// NumPy's printed arrays over lines, the list column last: every
	// line number below the first two rows is off by the array's lines.
	text = "id,embedding\n0,\"[1 2\n 3]\"\n1,\"[4 5\n 6]\"\n2,\"[7 8]\"\n" // 2 numbers on line 6
	_, _, _, _, err = reviewRead(t, "np.csv", text, "")
	if err == nil || !strings.Contains(err.Error(), "np.csv:6:") {
		t.Errorf("short list on file line 6: got %v", err)
	}
	text = "a,b,note\n1,2,\"x\ny\nz\"\n3,4,p\n5,6,q\n7,8,r,s\n" // ragged on line 7
	_, _, _, _, err = reviewRead(t, "q2.csv", text, "")
	if err == nil || !strings.Contains(err.Error(), "q2.csv:7:") {
		t.Errorf("ragged row on file line 7: got %v", err)
	}
}

// R3: a headerless column of lists: the first row is taken as a header
// and silently dropped.
func TestReviewHeaderlessLists(t *testing.T) {
	for name, text := range map[string]string{
		"pandas.csv": "\"[0.1, 0.2]\"\n\"[0.3, 0.4]\"\n\"[0.5, 0.6]\"\n",
		"fwrite.csv": "0.1|0.2\n0.3|0.4\n0.5|0.6\n",
		"index.csv":  "0,\"[0.1, 0.2]\"\n1,\"[0.3, 0.4]\"\n2,\"[0.5, 0.6]\"\n",
	} {
		n, d, rows, note, err := reviewRead(t, name, text, "")
		if err != nil || n != 3 || d != 2 {
			t.Errorf("%s: n=%d d=%d rows=%v err=%v note=%q; want 3 rows of 2 (or a refusal), not a row dropped", name, n, d, rows, err, note)
		}
	}
}

// R4: a column of "a|b" values beside real coordinate columns is read
// as the embedding, the coordinates left out.
func TestReviewPipeColumnHijacksEmbedding(t *testing.T) {
	var b strings.Builder
	b.WriteString("dim_0,dim_1,dim_2,version\n")
	for i := range 10 {
		fmt.Fprintf(&b, "%g,%g,%g,1.%d|3\n", 0.1*float64(i), 0.2, 0.3, i%3)
	}
	n, d, _, note, err := reviewRead(t, "v.csv", b.String(), "")
	if err != nil || d != 3 {
		t.Errorf("n=%d d=%d err=%v note=%q; want the 3 dim columns", n, d, err, note)
	}
	b.Reset()
	// A box's 4 numbers beside 8 coordinates: the coordinates (a column
	// of lists is the embedding where its lists are longer than the
	// table's columns of numbers are many).
	b.WriteString("dim_0,dim_1,dim_2,dim_3,dim_4,dim_5,dim_6,dim_7,bbox\n")
	for i := range 10 {
		fmt.Fprintf(&b, "%g,0.2,0.3,0.4,0.5,0.6,0.7,0.8,\"[10, 20, 30, %d]\"\n", 0.1*float64(i), i)
	}
	n, d, _, note, err = reviewRead(t, "bbox.csv", b.String(), "")
	if err != nil || d != 8 || !strings.Contains(note, `"bbox" (text)`) {
		t.Errorf("bbox: n=%d d=%d err=%v note=%q; want the 8 dim columns", n, d, err, note)
	}
}

// R5: ordinary text columns refused as broken columns of lists.
func TestReviewTextColumnsNotLists(t *testing.T) {
	for name, col := range map[string][2]string{
		"cite.csv":    {"[1]", "see above"},
		"cites.csv":   {`"[1, 2]"`, "n/a here"},
		"json.csv":    {`"{""page"": 3}"`, `"{""page"": 4, ""x"": ""y""}"`},
		"verse.csv":   {"3|16", "intro"},
		"version.csv": {"1.2|3", "1.2|3|4"},
		"ids.csv":     {`"[3, 5]"`, "[7]"},
	} {
		text := "x,y,note\n0.1,0.2," + col[0] + "\n0.3,0.4," + col[1] + "\n0.5,0.6,plain\n"
		n, d, _, note, err := reviewRead(t, name, text, "")
		if err != nil || n != 3 || d != 2 {
			t.Errorf("%s: n=%d d=%d err=%v note=%q; want x,y read and note left out as text", name, n, d, err, note)
		}
	}
}

func strip(s string) string { return s[strings.Index(s, "odd.csv"):] }

// R6: blocks vs one pass: a listish value that is no list before the
// block's first list of another length: merge names the later line.
func TestReviewListOddMerge(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,emb\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,\"[1, 2]\"\n", i)
	}
	b.WriteString("40,\"[1, x]\"\n") // line 42: one pass refuses this line
	b.WriteString("41,\"[1, 2, 3]\"\n")
	for i := 42; i < 60; i++ {
		fmt.Fprintf(&b, "%d,\"[1, 2]\"\n", i)
	}
	defer func(size, workers int) { textBlockSize, textWorkers = size, workers }(textBlockSize, textWorkers)
	textBlockSize, textWorkers = 1<<20, 1
	_, _, _, _, want := reviewRead(t, "odd.csv", b.String(), "")
	if want == nil {
		t.Fatal("no error")
	}
	for size := 1; size < 400; size += 3 {
		textBlockSize, textWorkers = size, 2
		_, _, _, _, got := reviewRead(t, "odd.csv", b.String(), "")
		if got == nil || strip(got.Error()) != strip(want.Error()) {
			t.Errorf("blocks of %d: %v\nwant (one block) %v", size, got, want)
			return
		}
	}
}

// R6c: the same with the default block size: a listish value that is
// no list (line 3) before a list of another length (line 4).
func TestReviewListOddDefaultBlock(t *testing.T) {
	_, _, _, _, err := reviewRead(t, "odd.csv", "id,e\n0,\"[1, 2]\"\n1,\"[1, x]\"\n2,\"[1, 2, 3]\"\n", "")
	if err == nil || !strings.Contains(err.Error(), "odd.csv:3:") {
		t.Errorf("want line 3 (\"[1, x]\"), got %v", err)
	}
}

// R6b: a list of another length in a later block is said to differ from
// "the column's first" at the block's first list's line, not the file's.
func TestReviewListOddMergeFirstLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,emb\n")
	for i := range 60 {
		fmt.Fprintf(&b, "%d,\"[1, 2]\"\n", i)
	}
	b.WriteString("60,\"[1, 2, 3]\"\n") // line 62
	defer func(size, workers int) { textBlockSize, textWorkers = size, workers }(textBlockSize, textWorkers)
	textBlockSize, textWorkers = 1<<20, 1
	_, _, _, _, want := reviewRead(t, "odd.csv", b.String(), "")
	if want == nil || !strings.Contains(want.Error(), "first (line 2)") {
		t.Errorf("one block: %v; want the file's first list, line 2", want)
	}
	textBlockSize, textWorkers = 64, 2
	_, _, _, _, got := reviewRead(t, "odd.csv", b.String(), "")
	if got == nil || !strings.Contains(got.Error(), "first (line 2)") {
		t.Errorf("blocks of 64: %v; want the file's first list, line 2", got)
	}
}

// R7 (pre-existing, kept by the change): a row whose first field is an
// Excel error value "#N/A" or "#DIV/0!" is read as a '#' comment and
// dropped silently: the rows below shift against their labels.
func TestReviewHashFirstFieldDropped(t *testing.T) {
	for name, text := range map[string]string{
		"na.csv":   "a,b\n0.5,0.25\n#N/A,0.75\n1,2\n",
		"div0.csv": "a,b\n0.5,0.25\n1.5,0.75\n#DIV/0!,0.5\n1,2\n",
	} {
		n, _, rows, note, err := reviewRead(t, name, text, "")
		if err == nil {
			t.Errorf("%s: n=%d rows=%v note=%q: a row dropped silently; want the missing/bad value refused at its line", name, n, rows, note)
		}
	}
}

// R8: a column of lists whose first value is "[]" or a list of NaN is
// left out as text, and the table's other numbers read as the embedding.
func TestReviewListColumnFirstEmpty(t *testing.T) {
	for name, first := range map[string]string{
		"empty.csv": `"[]"`,
		"nan.csv":   `"[nan, nan, nan, nan]"`,
	} {
		text := "score,weight,embedding\n0.5,0.25," + first + "\n1.5,0.75,\"[1, 2, 3, 4]\"\n2.5,0.5,\"[3, 4, 5, 6]\"\n"
		n, d, _, note, err := reviewRead(t, name, text, "")
		if err == nil {
			t.Errorf("%s: n=%d d=%d note=%q; want the embedding column refused at line 2, not score,weight read", name, n, d, note)
		}
	}
}

// R9: a file with Excel's "sep=;" line: its embeddings are read, its
// labels column (same file) refused.
func TestReviewSepLineLabels(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(p, []byte("sep=;\nx;y;label\n1,5;2;a\n3;4;b\n"), 0o644)
	if e, _, _, err := readTextEmbeddings(p, "x,y"); err != nil || e.N != 2 || e.Rows[0] != 1.5 {
		t.Errorf("embeddings: n=%d %v, err=%v", e.N, e.Rows, err)
	}
	ids, names, _, _, err := readCSVIDs(p, "label", "labels")
	if err != nil || len(ids) != 2 || names[ids[1]] != "b" {
		t.Errorf("labels of the same file: %v (ids %v names %v)", err, ids, names)
	}
}
