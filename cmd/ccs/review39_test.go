package main

// Regressions from a third review (of the round's otherColumn rule, the
// CSV labels' blocks and the JSON-lines reader): each failed at 93de8e9.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// r39Table writes a table of three coordinates and an integer label,
// 200 rows, below top and header.
func r39Table(t *testing.T, dir, name, top, header string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(39, 0))
	var b strings.Builder
	b.WriteString(top)
	b.WriteString(header + "\n")
	for i := range 200 {
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,%d\n", rng.Float64(), rng.Float64(), rng.Float64(), i%4)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// 1. np.savetxt(..., delimiter=",", header="x,y,z,label") writes the names
// on a "# " line: the embeddings' reader skips it (no header: 4 columns),
// the labels' reader reads it as the header and finds "label". The label
// column becomes the embedding's 4th coordinate, in silence.
func TestReview39SavetxtHeaderLabelIsCoordinate(t *testing.T) {
	p := r39Table(t, t.TempDir(), "emb.csv", "", "# x,y,z,label")
	if _, _, _, _, err := readCSVIDs(p, "label", "labels"); err != nil {
		t.Fatalf("labels: %v", err)
	}
	e, note, _, err := readTextEmbeddings(p, "", otherColumn{column: "label", flag: "-labels"})
	if err == nil && e.D != 3 {
		t.Errorf("-labels %s:label read, and the embedding has %d columns, the labels among them: %s", p, e.D, note)
	}
}

// 2. A "#" comment line above the header: the embeddings' reader skips
// it and says "label" (-labels) was left out; the labels' reader takes the
// comment for the header and refuses.
func TestReview39CommentAboveHeaderLabels(t *testing.T) {
	p := r39Table(t, t.TempDir(), "emb.csv", "# exported by tool v1\n", "x,y,z,label")
	_, note, _, err := readTextEmbeddings(p, "", otherColumn{column: "label", flag: "-labels"})
	if err != nil || !strings.Contains(note, `"label" (-labels)`) {
		t.Fatalf("embeddings: %v %s", err, note)
	}
	if _, _, _, _, err := readCSVIDs(p, "label", "labels"); err != nil {
		t.Errorf("the embeddings' reader names the column \"label\"; the labels' reader: %v", err)
	}
}

// 3. A header with a blank after the comma ("x,y,z, label"): the
// embeddings' reader trims the names, the labels' reader does not — with
// ":label" the labels are refused, with ": label" the embedding is.
func TestReview39OtherColumnBlankName(t *testing.T) {
	p := r39Table(t, t.TempDir(), "emb.csv", "", "x,y,z, label")
	ok := 0
	for _, col := range []string{"label", " label"} {
		_, _, _, _, lerr := readCSVIDs(p, col, "labels")
		e, _, _, eerr := readTextEmbeddings(p, "", otherColumn{column: col, flag: "-labels"})
		if lerr == nil && eerr == nil && e.D == 3 {
			ok++
		} else {
			t.Logf("-labels %s:%q: labels: %v; embeddings: %v", p, col, lerr, eerr)
		}
	}
	if ok == 0 {
		t.Errorf("no spelling of the column reads both the labels and the embedding")
	}
}

// 4. -embeddings ./emb.csv -labels emb.csv:label (the same file, spelled
// two ways): the column is no longer left out, and the bundle refused.
func TestReview39OtherColumnSamePathSpelledTwice(t *testing.T) {
	dir := t.TempDir()
	r39Table(t, dir, "emb.csv", "", "x,y,z,label")
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", "./emb.csv", "-labels", "emb.csv:label", "-out", "b", "-k", "3"}); err != nil {
		t.Errorf("./emb.csv and emb.csv:label: %v", err)
	}
}

// 5. -labels emb.csv (its column found by its name, "label"): the labels'
// reader finds it, the embeddings' reader does not leave it out.
func TestReview39OtherColumnFoundByName(t *testing.T) {
	dir := t.TempDir()
	p := r39Table(t, dir, "emb.csv", "", "x,y,z,label")
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", p, "-labels", p, "-out", filepath.Join(dir, "b"), "-k", "3"}); err != nil {
		t.Errorf("-labels %s (its \"label\" column): %v", p, err)
	}
}

func r39JSONL(t *testing.T, label func(i int) string) string {
	t.Helper()
	var b strings.Builder
	for i := range 120 {
		fmt.Fprintf(&b, `{"emb": [0.%d, 0.5], "label": %s}`+"\n", i, label(i))
	}
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o644)
	return p
}

// 6. Integer labels and group ids past 2^53 (a snowflake user id, a
// 64-bit hash): read exactly by the parent commit (ParseInt); now
// 2^53+1 becomes 2^53 (two labels made one, in silence) and any larger
// one is refused as "no integer".
func TestReview39JSONLLargeIntegers(t *testing.T) {
	p := r39JSONL(t, func(i int) string {
		return []string{"9007199254740992", "9007199254740993", "5"}[i%3]
	})
	ids, _, _, _, err := readIDs(p, "labels")
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] == ids[1] {
		t.Errorf("9007199254740992 and 9007199254740993 read as one label: %d and %d", ids[0], ids[1])
	}
	p = r39JSONL(t, func(i int) string {
		return []string{"1234567890123456789", "1234567890123456790", "-1234567890123456789"}[i%3]
	})
	ids, _, _, _, err = readIDs(p+":label", "groups")
	if err != nil {
		t.Errorf("64-bit integer group ids: %v", err)
	} else if ids[0] != 1234567890123456789 || ids[2] != -1234567890123456789 {
		t.Errorf("ids %v", ids[:3])
	}
}

// 7. An auto-detected nested path through a key with a dot in it: found,
// named, then refused ("no field") — and naming it cannot help.
func TestReview39JSONLNestedDottedKey(t *testing.T) {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, `{"id": "%d", "model.v1": {"embedding": [0.%d, 1.5]}}`+"\n", i, i)
	}
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o644)
	if _, _, err := readJSONLEmbeddings(p, ""); err != nil {
		t.Errorf("auto: %v", err)
	}
	if _, _, err := readJSONLEmbeddings(p, "model.v1.embedding"); err != nil {
		t.Errorf("named: %v", err)
	}
}

// 8. An API's batch output, the embedding nested in "response": the note
// says "response" was left out; and the output's lines are not in the
// requests' order (OpenAI's Batch API: "the output line order may not
// match the input line order … use custom_id"): read by position, paired
// with labels by position, without a word.
func TestReview39JSONLBatchOutput(t *testing.T) {
	var b strings.Builder
	for _, i := range []int{2, 0, 1, 4, 3} {
		fmt.Fprintf(&b, `{"id": "batch_req_%d", "custom_id": "req-%d", "response": {"status_code": 200, "body": {"data": [{"embedding": [0.%d, 1.5]}]}}, "error": null}`+"\n", i, i, i)
	}
	p := filepath.Join(t.TempDir(), "out.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o644)
	_, note, err := readJSONLEmbeddings(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(note, `"response"`) && strings.Contains(note, "left out") {
		t.Errorf("the note says the field the embedding came from was left out: %s", note)
	}
	if !strings.Contains(note, "custom_id") || !strings.Contains(note, "order") {
		t.Errorf("custom_id out of order (req-2, req-0, …), rows read in the file's order, no word of it: %s", note)
	}
}

// 9. A failed request in an API's batch output ("response": null, "error":
// {…}) below good ones: refused as "no field", the path's first key
// listed among the fields.
func TestReview39JSONLBatchFailedRequest(t *testing.T) {
	var b strings.Builder
	for i := range 5 {
		if i == 3 {
			fmt.Fprintf(&b, `{"id": "batch_req_%d", "custom_id": "req-%d", "response": null, "error": {"code": "server_error", "message": "x"}}`+"\n", i, i)
			continue
		}
		fmt.Fprintf(&b, `{"id": "batch_req_%d", "custom_id": "req-%d", "response": {"status_code": 200, "body": {"data": [{"embedding": [0.%d, 1.5]}]}}, "error": null}`+"\n", i, i, i)
	}
	p := filepath.Join(t.TempDir(), "out.jsonl")
	os.WriteFile(p, []byte(b.String()), 0o644)
	_, _, err := readJSONLEmbeddings(p, "")
	if err == nil || strings.Contains(err.Error(), "no field") {
		t.Errorf("a failed request's line: %v", err)
	}
}

// 10. A column of label lists (several labels a row) in the embeddings'
// own table, named by -labels: still taken for a broken embedding column
// (ragged lists) or a second one (multi-hot lists), the bundle refused —
// the otherColumn rule does not reach chooseColumns' lists.
func TestReview39OtherColumnOfLists(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	for _, multiHot := range []bool{false, true} {
		var b strings.Builder
		b.WriteString("text,emb,labels\n")
		for i := range 60 {
			var e []string
			for range 8 {
				e = append(e, fmt.Sprintf("%.4f", rng.Float64()))
			}
			labs := "[" + fmt.Sprint(i%5) + map[bool]string{true: ", 4", false: ""}[i%3 == 0] + "]"
			if multiHot {
				labs = fmt.Sprintf("[%d, %d, 1, 0]", i%2, (i/2)%2)
			}
			fmt.Fprintf(&b, "doc %d,\"[%s]\",\"%s\"\n", i, strings.Join(e, ", "), labs)
		}
		p := filepath.Join(t.TempDir(), "ml.csv")
		os.WriteFile(p, []byte(b.String()), 0o644)
		e, _, _, err := readTextEmbeddings(p, "", otherColumn{column: "labels", flag: "-labels"})
		if err != nil || e.D != 8 {
			t.Errorf("multi-hot %v: -labels %s:labels: %v", multiHot, p, err)
		}
	}
}

// 11. Nit: a boolean label beside numbers is refused as "the string
// \"true\"" — it is no string.
func TestReview39JSONLBooleanCalledString(t *testing.T) {
	p := r39JSONL(t, func(i int) string { return []string{"true", "1", "0"}[i%3] })
	_, _, _, _, err := readIDs(p, "labels")
	if err == nil || strings.Contains(err.Error(), `the string "true"`) {
		t.Errorf("%v", err)
	}
}

// 12. Nit: a JSON array below a blank line is named on line 1.
func TestReview39JSONLArrayLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.json")
	os.WriteFile(p, []byte("\n[{\"emb\": [1, 2]},\n{\"emb\": [3, 4]}]\n"), 0o644)
	_, _, err := readJSONLEmbeddings(p, "")
	if err == nil || !strings.Contains(err.Error(), "a.json:2:") {
		t.Errorf("%v", err)
	}
}
