package bundle

// Review h6 (forty-ninth round): lower-grade pairs, the unscored note, the
// judged-negatives advice. Each test failed at b029d1a.

import (
	"fmt"
	"strings"
	"testing"
)

// TestReview49LowerGradeAlsoScoredZeroIsNoJudgedNegative: under -min-score 2
// -judged-negatives, a pair scored 1 on one line and 0 on another (two
// assessors, or qrels files put together) lands in both Graded and
// Negatives, and judgedNegatives removes only the relevant rows from a
// query's judged ones: the row relevant at a lower grade is drawn as the
// query's negative. A pair scored relevant and 0 stays relevant; one
// scored at a lower grade and 0 is, by the same rule, not irrelevant —
// and Items.Graded says it is "never drawn as that query's negative".
func TestReview49LowerGradeAlsoScoredZeroIsNoJudgedNegative(t *testing.T) {
	const nq, nr = 40, 200
	var qids, rids []string
	for q := range nq {
		qids = append(qids, fmt.Sprintf("q%d", q))
	}
	for r := range nr {
		rids = append(rids, fmt.Sprintf("d%d", r))
	}
	var b strings.Builder
	b.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range nq {
		fmt.Fprintf(&b, "q%d\td%d\t2\n", q, q)     // relevant
		fmt.Fprintf(&b, "q%d\td%d\t1\n", q, 40+q)  // relevant at a lower grade …
		fmt.Fprintf(&b, "q%d\td%d\t0\n", q, 40+q)  // … and judged 0 by another line
		fmt.Fprintf(&b, "q%d\td%d\t0\n", q, 100+q) // judged not relevant
	}
	ids, err := NewPairIDs(qids, rids)
	if err != nil {
		t.Fatal(err)
	}
	two := 2.0
	ids.MinScore, ids.Judged = &two, true
	pairs, err := ReadQrels(strings.NewReader(b.String()), "qrels.tsv", ids)
	if err != nil {
		t.Fatal(err)
	}
	items := Items{N: nr, Queries: nq, Pairs: pairs, Negatives: ids.Negatives, Graded: ids.Graded}
	p, err := Make(items, MakeConfig{K: 1, KNeg: 2, Split: testSplit, Seed: 1, JudgedNegatives: true})
	if err != nil {
		t.Fatal(err)
	}
	bad, drawn := 0, 0
	for _, sp := range p.Splits {
		for a, q := range sp.Anchors {
			for _, l := range sp.NegativeIndex[a*2 : (a+1)*2] {
				drawn++
				if sp.NegativePool[l] == 40+q {
					bad++
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d judged negatives are their query's row relevant at a lower grade (scored 1, and 0 on another line)", bad, drawn)
	}
}

// TestReview49UnknownIDsScoredZeroAreCounted: without -judged-negatives, a pair
// scored 0 (or below -min-score) naming an id not given is never resolved,
// so the unknown-ids warning (Note) does not count it, and the unscored
// note (leftOut) skips it as naming an unknown id: it is counted nowhere.
// leftOut's comment says "one naming an unknown id (which Note counts)",
// and TestPairIDsJudged's "left out" case says "the fourth names row d9,
// not given: counted apart" — it is not. (Before the change the note
// counted lines, so every line was counted somewhere.) A pair scored 1
// under -min-score 2 naming an unknown id is now counted by Note, one
// scored 0 is not: the same file's unknown ids counted by their score.
func TestReview49UnknownIDsScoredZeroAreCounted(t *testing.T) {
	two := 2.0
	for _, c := range []struct {
		name string
		min  *float64
		text string
		want int // pairs scored below, each counted in one note or the other
	}{
		{"scored 0", nil, "query-id\tcorpus-id\tscore\nq0\td1\t2\nq1\td2\t0\nq0\td9\t0\n", 2},
		{"scored 0, least score 2", &two, "query-id\tcorpus-id\tscore\nq0\td1\t2\nq1\td2\t0\nq0\td8\t1\nq0\td9\t0\n", 3},
	} {
		ids, err := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1", "d2"})
		if err != nil {
			t.Fatal(err)
		}
		ids.MinScore = c.min
		if _, err := ReadQrels(strings.NewReader(c.text), "qrels.tsv", ids); err != nil {
			t.Fatal(err)
		}
		// The unscored note counts them all: those of given ids, "and M
		// more naming ids not given".
		var left, more int
		note := ids.UnscoredNote()
		fmt.Sscanf(note, "%d", &left)
		if i := strings.Index(note, "(and "); i >= 0 {
			fmt.Sscanf(note[i+len("(and "):], "%d", &more)
		}
		if got := ids.Unknown + left + more; got != c.want {
			t.Errorf("%s: %d pairs scored below the least relevant score, %d counted (the pair (q0, d9) scored 0 naming a row not given is in neither note): %q, %q", c.name, c.want, got, ids.Note(), ids.UnscoredNote())
		}
	}
}

// TestReview49TooFewOthersNamesLowerGrade: a query whose other rows are all
// relevant at a lower grade is refused as having "N rows relevant to it",
// N counting its one relevant row and its lower-grade ones alike: the user
// asked -min-score 2 and sees 19 "relevant" rows where the qrels score one
// at 2. The message should say how many are at a lower grade (and that
// they are never negatives).
func TestReview49TooFewOthersNamesLowerGrade(t *testing.T) {
	const nq, nr = 20, 60
	var pairs, graded [][2]int
	for q := range nq {
		pairs = append(pairs, [2]int{q, q})
		for r := 20; r < 38; r++ {
			graded = append(graded, [2]int{q, r})
		}
	}
	_, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, Graded: graded}, MakeConfig{K: 1, KNeg: 45, Split: testSplit, Seed: 3})
	if err == nil || !strings.Contains(err.Error(), "lower grade") {
		t.Errorf("the refusal does not say 18 of the rows are relevant at a lower grade: %v", err)
	}
}

// TestReview49JudgedRepeatsAdviceNeverRaisesKNeg: the repeats warning advises
// the -kneg that draws distinct negatives for nine queries in ten (the
// judged counts' 10th percentile). Where fewer than a tenth repeat, that
// is above the -kneg given: with -kneg 2, 10 of 200 queries with one
// judged negative and 190 with three, it advises "-kneg 3 … draws distinct
// ones for 190 of the 200 queries (95%)" — what -kneg 2 already does. The
// advice should never be a larger -kneg than the one given.
func TestReview49JudgedRepeatsAdviceNeverRaisesKNeg(t *testing.T) {
	const nq, nr = 200, 401
	var pairs, negs [][2]int
	for q := range nq {
		pairs = append(pairs, [2]int{q, q})
		n := 3
		if q < 10 {
			n = 1
		}
		for j := range n {
			negs = append(negs, [2]int{q, 201 + (q*13+j*37)%200})
		}
	}
	p, err := Make(Items{N: nr, Queries: nq, Pairs: pairs, Negatives: negs}, MakeConfig{K: 1, KNeg: 2, Split: testSplit, Seed: 9, JudgedNegatives: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "-kneg 3 ") {
			t.Errorf("with -kneg 2 the warning advises a larger -kneg, which draws distinct negatives for no more queries: %q", w)
		}
	}
}

// TestReview49UnscoredNoteCallsLowerGradeNotRelevant: with -min-score 2
// -judged-negatives the note says "N pairs scored below the least relevant
// score 2: not relevant, and those scored 0 or less … judged not
// relevant", N counting the pairs scored 1 — which PairIDs.Graded, the
// manifest ("neither positives nor negatives") and docs/decisions.md call
// relevant at a lower grade, and which are now kept out of the negatives.
// Without -judged-negatives it says they were "left out", where they are
// also kept out of every query's negatives. Neither says so.
func TestReview49UnscoredNoteCallsLowerGradeNotRelevant(t *testing.T) {
	two := 2.0
	for _, judged := range []bool{false, true} {
		ids, err := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1", "d2"})
		if err != nil {
			t.Fatal(err)
		}
		ids.MinScore, ids.Judged = &two, judged
		if _, err := ReadQrels(strings.NewReader("query-id\tcorpus-id\tscore\nq0\td0\t2\nq0\td1\t1\nq1\td2\t2\nq1\td0\t0\n"), "qrels.tsv", ids); err != nil {
			t.Fatal(err)
		}
		if note := ids.UnscoredNote(); !strings.Contains(note, "lower grade") {
			t.Errorf("judged %v: the note does not say the pair scored 1 is relevant at a lower grade, kept out of the negatives: %q", judged, note)
		}
	}
}

// TestReview49MinScoreTooHighNotBlamedOnIDs: every pair scored below -min-score
// (3, on qrels graded 0–2) is refused as "no pairs: all N are scored below
// the least relevant score 3" — unless one pair scored above 0 names an id
// not given (a corpus cut down: common), which the lower grades' resolving
// now counts in Unknown: then the refusal blames the ids, "no pairs: all 1
// name ids that are not among the given ids", where 4 pairs name given ids
// and the least score is the cause. (Without -judged-negatives this passed
// before the change, which did not resolve lower-grade pairs.)
func TestReview49MinScoreTooHighNotBlamedOnIDs(t *testing.T) {
	ids, err := NewPairIDs([]string{"q0", "q1"}, []string{"d0", "d1", "d2"})
	if err != nil {
		t.Fatal(err)
	}
	three := 3.0
	ids.MinScore = &three
	_, err = ReadQrels(strings.NewReader("query-id\tcorpus-id\tscore\nq0\td0\t2\nq0\td1\t1\nq1\td2\t2\nq1\td0\t1\nq1\tgone\t1\n"), "qrels.tsv", ids)
	if err == nil || !strings.Contains(err.Error(), "least relevant score 3") {
		t.Errorf("all pairs below -min-score 3, one naming an id not given: %v; want the refusal to name the least score", err)
	}
}
