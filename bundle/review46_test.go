package bundle

// A review of 73db2ef..603057f: each test failed at 603057f for the
// reason its comment gives.

import (
	"strings"
	"testing"
)

// TestH3ReadQrelsColumnsTwoOfThreeSaid: PairIDs.Columns naming two of a
// qrels file's three columns (qrels.tsv:query-id,corpus-id: the score
// column left unnamed) reads every pair as relevant — those scored 0,
// judged NOT relevant, too — and says nothing: ScoreNote's new
// "two columns …, no scores: every pair is taken as relevant (BEIR's
// qrels score each pair, 0 for one judged not relevant: keep that
// column)" fires only for a file whose header has two columns
// (twoColumns is never set on the Columns path), the case where the
// scores are actually being thrown away being the silent one.
func TestReview46ReadQrelsColumnsTwoOfThreeSaid(t *testing.T) {
	p, err := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1", "d2"})
	if err != nil {
		t.Fatal(err)
	}
	p.Columns = []string{"query-id", "corpus-id"}
	got, err := ReadQrels(strings.NewReader("query-id\tcorpus-id\tscore\nq0\td1\t1\nq0\td2\t0\nq1\td0\t0\n"), "qrels.tsv", p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("pairs %v: want all 3 (no score column named)", got)
	}
	if p.ScoreNote() == "" {
		t.Errorf("2 of 3 pairs scored 0 (judged not relevant) read as relevant, the score column left unnamed: no note")
	}
}

// TestH3ReadQrelsColumnsBOM: a qrels CSV saved with a UTF-8 byte-order
// mark (Excel's "CSV UTF-8", pandas' encoding="utf-8-sig") is read
// without Columns (its first line is a header either way), but with
// Columns its header's first name is "\ufeffquery-id", so
// "FILE:query-id,corpus-id,score" is refused with `no column "query-id"
// in the header line (its columns: query-id, …)`, a message that names
// the very column it says is missing. openCSV skips the mark for the
// other CSV readers.
func TestReview46ReadQrelsColumnsBOM(t *testing.T) {
	text := "\ufeffquery-id,corpus-id,score\nq0,d1,1\nq1,d0,1\n"
	p, _ := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1"})
	if got, err := ReadQrels(strings.NewReader(text), "qrels.csv", p); err != nil || len(got) != 2 {
		t.Fatalf("without Columns: %v, %v", got, err)
	}
	p, _ = NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1"})
	p.Columns = []string{"query-id", "corpus-id", "score"}
	if got, err := ReadQrels(strings.NewReader(text), "qrels.csv", p); err != nil || len(got) != 2 {
		t.Errorf("Columns query-id,corpus-id,score of a CSV with a BOM: %v, %v", got, err)
	}
}

// TestH3ReadQrelsOnePairUnknownNotHeader: a qrels text of one pair whose
// ids are not among the given ones (a typo, ids of another split) now
// says "a header line (line 1) and no pairs below it": Header takes a
// first line of unknown ids for a header whatever its third field, here
// the score 1, which no header names a column by. The new message
// states as fact what is a guess, and hides the unknown ids (0 counted
// as Unknown, no "not among the given ids" hint).
func TestReview46ReadQrelsOnePairUnknownNotHeader(t *testing.T) {
	p, _ := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1"})
	_, err := ReadQrels(strings.NewReader("q7\td9\t1\n"), "qrels.tsv", p)
	if err == nil || strings.Contains(err.Error(), "a header line") {
		t.Errorf("one pair of unknown ids, scored 1: %v", err)
	}
}
