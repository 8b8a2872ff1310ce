package bundle

import (
	"slices"
	"strings"
	"testing"
)

// TestReadTrials: both forms of a trial list read into rows; lines that
// break the first line's form, and utterances the ids lack, are refused
// by line.
func TestReadTrials(t *testing.T) {
	ids, err := IndexIDs([]string{"id1/a/1.wav", "id1/b/2.wav", "id2/c/1.wav", "id2/c/2.wav"}, "utterance")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, text, form string
		want             []Trial
	}{
		{"VoxCeleb", "1 id1/a/1.wav id1/b/2.wav\n0 id1/a/1.wav id2/c/1.wav\r\n\n1\tid2/c/1.wav\tid2/c/2.wav\n", "voxceleb", []Trial{{0, 1, true}, {0, 2, false}, {2, 3, true}}},
		{"VoxCeleb, a UTF-8 mark first", "\ufeff1 id1/a/1.wav id1/b/2.wav\n", "voxceleb", []Trial{{0, 1, true}}},
		{"Kaldi", "id1/a/1.wav id1/b/2.wav target\nid1/a/1.wav id2/c/1.wav nontarget\n", "kaldi", []Trial{{0, 1, true}, {0, 2, false}}},
	} {
		r, err := ReadTrials(strings.NewReader(c.text), "trials.txt", ids)
		got, form := r.Trials, r.Form
		if err != nil || form != c.form || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %q, %v; want %v, %q", c.name, got, form, err, c.want, c.form)
		}
	}
	// A header line (pandas' to_csv writes one) is skipped, and said; in
	// Python's rows too.
	for _, c := range []struct{ name, text, header, form string }{
		{"VoxCeleb, a header", "label enrol test\n1 id1/a/1.wav id1/b/2.wav\n0 id1/a/1.wav id2/c/1.wav\n", "label enrol test", "voxceleb"},
		{"Kaldi, a header after a blank line", "\nenrolment test target\nid1/a/1.wav id1/b/2.wav target\nid1/a/1.wav id2/c/1.wav nontarget\n", "enrolment test target", "kaldi"},
	} {
		r, err := ReadTrials(strings.NewReader(c.text), "trials.txt", ids)
		if err != nil || r.Header != c.header || r.Form != c.form || !slices.Equal(r.Trials, []Trial{{0, 1, true}, {0, 2, false}}) {
			t.Errorf("%s: %+v, %v", c.name, r, err)
		}
	}
	if r, err := TrialFields([][]string{{"target", "enrol", "test"}, {"1", "id1/a/1.wav", "id1/b/2.wav"}}, "trials", ids); err != nil || r.Header != "target enrol test" || len(r.Trials) != 1 {
		t.Errorf("Python's rows, a header: %+v, %v", r, err)
	}
	// Kaldi's ids without digits, a target trial first: Kaldi's form, not
	// a header.
	letters, _ := IndexIDs([]string{"spkA-uttX", "spkA-uttY", "spkB-uttZ"}, "utterance")
	if r, err := ReadTrials(strings.NewReader("spkA-uttX spkA-uttY target\nspkA-uttX spkB-uttZ nontarget\n"), "trials.txt", letters); err != nil || r.Form != "kaldi" || r.Header != "" || !slices.Equal(r.Trials, []Trial{{0, 1, true}, {0, 2, false}}) {
		t.Errorf("Kaldi, ids without digits: %+v, %v", r, err)
	}
	// Row numbers as utterance ids: VoxCeleb's form all the same, and
	// Kaldi's.
	nums, _ := IndexIDs([]string{"0", "1", "2", "3"}, "utterance")
	for _, c := range []struct {
		name, text, form string
		want             []Trial
	}{
		{"VoxCeleb, numbers", "1 0 1\n0 0 2\n", "voxceleb", []Trial{{0, 1, true}, {0, 2, false}}},
		{"Kaldi, numbers", "0 1 target\n0 3 nontarget\n", "kaldi", []Trial{{0, 1, true}, {0, 3, false}}},
	} {
		r, err := ReadTrials(strings.NewReader(c.text), "trials.txt", nums)
		got, form := r.Trials, r.Form
		if err != nil || form != c.form || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %q, %v; want %v, %q", c.name, got, form, err, c.want, c.form)
		}
	}
	// A list's fields, as Python gives them: each taken whole, so that an
	// id may hold a space; a row of empty fields is a blank line.
	spaced, _ := IndexIDs([]string{"spk 1/utt 1.wav", "spk 1/utt 2.wav", "spk 2/utt 1.wav"}, "utterance")
	r, err := TrialFields([][]string{{"1", "spk 1/utt 1.wav", "spk 1/utt 2.wav"}, {"", "", ""}, {"0", " spk 1/utt 1.wav", "spk 2/utt 1.wav"}}, "trials", spaced)
	if want := []Trial{{0, 1, true}, {0, 2, false}}; err != nil || r.Form != "voxceleb" || !slices.Equal(r.Trials, want) {
		t.Errorf("fields with spaces: %+v, %v; want %v", r, err, want)
	}
	for _, c := range []struct {
		name string
		rows [][]string
		want string
	}{
		{"an empty field", [][]string{{"1", "spk 1/utt 1.wav", "spk 1/utt 2.wav"}, {"0", "", "spk 2/utt 1.wav"}}, `trials:2: an empty field (["0" "" "spk 2/utt 1.wav"])`},
		{"another form's verdict", [][]string{{"1", "spk 1/utt 1.wav", "spk 1/utt 2.wav"}, {"spk 1/utt 1.wav", "spk 2/utt 1.wav", "nontarget"}}, `trials:2: "spk 1/utt 1.wav" is not a trial's verdict`},
		{"no trials", [][]string{{"", "", ""}}, "trials: no trials"},
	} {
		if _, err := TrialFields(c.rows, "trials", spaced); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct{ name, text, want string }{
		{"not a trial", "query-id corpus-id score\n", `trials.txt:1: "query-id corpus-id score" is not a trial: want target (1 or 0), enrolment, test, as VoxCeleb's lists`},
		{"a verdict of another form", "1 id1/a/1.wav id1/b/2.wav\nid1/a/1.wav id2/c/1.wav nontarget\n", `trials.txt:2: "id1/a/1.wav" is not a trial's verdict: want 1 or 0, as line 1's form (target (1 or 0), enrolment, test)`},
		{"two fields", "1 id1/a/1.wav id1/b/2.wav\n0 id1/a/1.wav\n", "trials.txt:2: 2 fields, want 3 (target (1 or 0), enrolment, test)"},
		{"an utterance not among the ids", "1 id1/a/1.wav id1/b/2.wav\n0 id1/a/1.wav id9/z/1.wav\n1 id8/a/1.wav id8/a/2.wav\n", `trials.txt: 2 trials of 3 name an utterance that is not among the ids (the first: line 2, "id9/z/1.wav")`},
		{"empty", "\n\n", "trials.txt: no trials"},
		{"a header alone", "label enrol test\n", `trials.txt:1: "label enrol test" is not a trial`},
		{"a header, then no trial", "label enrol test\nquery-id corpus-id score\n", `trials.txt:1: "label enrol test" is not a trial`},
		{"a first line naming an utterance is no header", "x id1/a/1.wav id1/b/2.wav\n1 id1/a/1.wav id1/b/2.wav\n", `trials.txt:1: "x id1/a/1.wav id1/b/2.wav" is not a trial`},
		{"a second line that is not a trial", "1 id1/a/1.wav id1/b/2.wav\nlabel enrol test\n", `trials.txt:2: "label" is not a trial's verdict`},
	} {
		if _, err := ReadTrials(strings.NewReader(c.text), "trials.txt", ids); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestIndexUtterances: an utterance listed twice with the same embedding
// (an export that wrote its row twice) is read once, and said; twice with
// different embeddings, refused.
func TestIndexUtterances(t *testing.T) {
	rows := []float32{1, 2, 3, 4, 3, 4, 5, 6}
	m, warn, err := IndexUtterances([]string{"a", "b", "b", "c"}, rows, 2)
	if err != nil || len(m) != 3 || m["b"] != 1 || m["c"] != 3 || warn != `1 utterance listed twice with the same embedding (the first: "b", rows 1 and 2): each one's first row is taken` {
		t.Errorf("%v, %q, %v", m, warn, err)
	}
	// One utterance listed three times is one utterance, with 2 rows more.
	if m, warn, err := IndexUtterances([]string{"a", "b", "b", "b"}, []float32{1, 2, 3, 4, 3, 4, 3, 4}, 2); err != nil || len(m) != 2 || warn != `1 utterance listed more than once (2 rows beyond each one's first) with the same embedding (the first: "b", rows 1 and 2): each one's first row is taken` {
		t.Errorf("three times: %v, %q, %v", m, warn, err)
	}
	if m, warn, err := IndexUtterances([]string{"a", "b", "c", "d"}, rows, 2); err != nil || len(m) != 4 || warn != "" {
		t.Errorf("distinct: %v, %q, %v", m, warn, err)
	}
	if _, _, err := IndexUtterances([]string{"a", "b", "c", "a"}, rows, 2); err == nil || err.Error() != `utterance id "a" is given twice (rows 0 and 3, numbered from 0 — in a text file, its lines 1 and 4) with different embeddings: which is it? give each utterance once` {
		t.Errorf("different embeddings: %v", err)
	}
}
