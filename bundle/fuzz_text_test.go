package bundle

import (
	"bytes"
	"testing"
)

// FuzzReadQrels: any text is pairs or an error naming the text, never a
// panic, with ids as row numbers or as names; every pair read names rows
// that exist.
func FuzzReadQrels(f *testing.F) {
	for _, s := range []string{
		"query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td1\t0\n",
		",query,row\n0,q1,d1\n1,q2,d2\n",
		"0 1\n1 0 2\n\n2 2\n",
		"q1,d1,1\nq1,d3,2\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, text []byte, named bool) {
		ids := &PairIDs{}
		if named {
			var err error
			if ids, err = NewPairIDs([]string{"q1", "q2", "q3"}, []string{"d1", "d2", "d3"}); err != nil {
				t.Fatal(err)
			}
		}
		pairs, err := ReadQrels(bytes.NewReader(text), "qrels.tsv", ids)
		if err != nil {
			return
		}
		for _, p := range pairs {
			if p[0] < 0 || p[1] < 0 || named && (p[0] >= 3 || p[1] >= 3) {
				t.Fatalf("pair %v out of range", p)
			}
		}
	})
}

// FuzzReadTrials: any text is a trial list or an error, never a panic;
// every trial read names utterances among the ids.
func FuzzReadTrials(f *testing.F) {
	for _, s := range []string{
		"1 a b\n0 a c\n",
		"a b target\nb c nontarget\n",
		"label,enrol,test\n1,a,b\n",
		"\ufeff1\ta\tc\n",
	} {
		f.Add([]byte(s))
	}
	ids := map[string]int{"a": 0, "b": 1, "c": 2}
	f.Fuzz(func(t *testing.T, text []byte) {
		r, err := ReadTrials(bytes.NewReader(text), "trials.txt", ids)
		if err != nil {
			return
		}
		for _, tr := range r.Trials {
			if tr.Enrol < 0 || tr.Enrol > 2 || tr.Test < 0 || tr.Test > 2 {
				t.Fatalf("trial %+v names no utterance among the ids", tr)
			}
		}
	})
}
