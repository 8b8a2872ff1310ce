package bundle

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Trial is one line of a speaker-verification trial list: the rows of its
// enrolment and test utterances in the embeddings, and whether it is a
// target trial (both of one speaker).
type Trial struct {
	Enrol, Test int
	Target      bool
}

// IndexIDs maps each id to its row, in row order; an id given twice is an
// error naming both rows, counting every repeat (what names the ids in
// it: "utterance").
func IndexIDs(ids []string, what string) (map[string]int, error) {
	return indexIDs(ids, what)
}

// IndexUtterances maps each utterance id to its row, as IndexIDs, where
// an id listed twice with the same embedding (an export that wrote a row
// twice) is no ambiguity: its first row is taken, and warning counts such
// ids. An id listed twice with different embeddings is an error naming
// both rows. rows are the embeddings, d a row.
func IndexUtterances(ids []string, rows []float32, d int) (m map[string]int, warning string, err error) {
	m = make(map[string]int, len(ids))
	repeats, first := 0, ""
	repeated := map[string]struct{}{} // the ids repeats counts rows of
	for i, id := range ids {
		j, dup := m[id]
		if !dup {
			m[id] = i
			continue
		}
		if !slices.Equal(rows[i*d:(i+1)*d], rows[j*d:(j+1)*d]) {
			return nil, "", fmt.Errorf("utterance id %q is given twice (rows %d and %d, numbered from 0 — in a text file, its lines %d and %d) with different embeddings: which is it? give each utterance once", id, j, i, j+1, i+1)
		}
		if repeats++; first == "" {
			first = fmt.Sprintf("%q, rows %d and %d", id, j, i)
		}
		repeated[id] = struct{}{}
	}
	if repeats > 0 {
		listed := "listed twice"
		if repeats > len(repeated) {
			listed = fmt.Sprintf("listed more than once (%s beyond each one's first)", counted(repeats, "row"))
		}
		warning = fmt.Sprintf("%s %s with the same embedding (the first: %s): each one's first row is taken", counted(len(repeated), "utterance"), listed, first)
	}
	return m, warning, nil
}

// ReadTrials reads a speaker-verification trial list, one trial a line,
// fields separated by spaces or tabs: VoxCeleb's form (target 1 or 0,
// enrolment, test) or Kaldi's and NIST's (enrolment, test, target or
// nontarget), the form of the first line (trialForm) holding for every
// line. ids maps each utterance's id to its row (IndexIDs). A trial that
// names an utterance ids lacks is an error — a list judged on some of its
// trials would say nothing of the rest —, counted, the first named with
// its line. A first line that is not a trial, names no utterance among
// the ids, and is followed by a trial is a header (pandas' to_csv writes
// one): it is skipped, and said (TrialRead.Header). name names the list
// in errors (NAME:LINE).
func ReadTrials(in io.Reader, name string, ids map[string]int) (TrialRead, error) {
	r := trialReader{name: name, ids: ids}
	sc := bufio.NewScanner(in)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), " \t\r")
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff") // Excel's and Notepad's UTF-8 mark
		}
		if fields := strings.Fields(text); len(fields) > 0 {
			if err := r.add(line, text, fields); err != nil {
				return TrialRead{}, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return TrialRead{}, fmt.Errorf("%s: %w", name, err)
	}
	return r.done()
}

// TrialRead is a trial list as read: its trials, in the list's order;
// its form, "voxceleb" or "kaldi"; and the header line skipped, "" for
// none.
type TrialRead struct {
	Trials []Trial
	Form   string
	Header string
}

// TrialFields reads a trial list given as its lines' fields, as
// ReadTrials reads its text: rows[i] is line i+1's fields (three; none,
// or only empty ones, a blank line), each taken whole, so that an id may
// hold a space, as a text line's cannot; a header row is skipped as a
// header line is.
func TrialFields(rows [][]string, name string, ids map[string]int) (TrialRead, error) {
	r := trialReader{name: name, ids: ids}
	for i, row := range rows {
		fields := make([]string, len(row))
		blank := true
		for j, f := range row {
			fields[j] = strings.TrimSpace(f)
			blank = blank && fields[j] == ""
		}
		if blank {
			continue
		}
		if slices.Contains(fields, "") {
			return TrialRead{}, fmt.Errorf("%s:%d: an empty field (%q)", name, i+1, row)
		}
		if err := r.add(i+1, strings.Join(fields, " "), fields); err != nil {
			return TrialRead{}, err
		}
	}
	return r.done()
}

// trialReader reads a trial list line by line (add), for ReadTrials and
// TrialFields, and says what it read (done).
type trialReader struct {
	name         string
	ids          map[string]int
	trials       []Trial
	form         string
	missing      int
	firstMissing string
	// header is the first line, not a trial, held until the next line
	// says whether it heads a list (headerLine its number); read says a
	// line was read.
	header     string
	headerLine int
	read       bool
}

// add reads line number line, text, of fields (not none).
func (r *trialReader) add(line int, text string, fields []string) error {
	first := !r.read
	r.read = true
	if r.form == "" {
		if first && TrialList(fields) == "" && !r.namesID(fields) {
			r.header, r.headerLine = text, line // a header, if a trial follows
			return nil
		}
		if r.form = trialForm(fields); r.form == "" {
			if r.header != "" {
				line, text = r.headerLine, r.header
			}
			return fmt.Errorf("%s:%d: %q is not a trial: want target (1 or 0), enrolment, test, as VoxCeleb's lists, or enrolment, test, target or nontarget, as Kaldi's and NIST's", r.name, line, text)
		}
	}
	form := r.form
	if len(fields) != 3 {
		return fmt.Errorf("%s:%d: %d fields, want 3 (%s)", r.name, line, len(fields), trialOrder(form))
	}
	var enrol, test, verdict string
	if form == "voxceleb" {
		verdict, enrol, test = fields[0], fields[1], fields[2]
	} else {
		enrol, test, verdict = fields[0], fields[1], fields[2]
	}
	target, ok := trialVerdict(verdict, form)
	if !ok {
		return fmt.Errorf("%s:%d: %q is not a trial's verdict: want %s, as line 1's form (%s)", r.name, line, verdict, map[string]string{"voxceleb": "1 or 0", "kaldi": "target or nontarget"}[form], trialOrder(form))
	}
	e, okE := r.ids[enrol]
	t, okT := r.ids[test]
	if !okE || !okT {
		if r.missing++; r.firstMissing == "" {
			id := enrol
			if okE {
				id = test
			}
			r.firstMissing = fmt.Sprintf("line %d, %q", line, id)
		}
		return nil
	}
	r.trials = append(r.trials, Trial{Enrol: e, Test: t, Target: target})
	return nil
}

// namesID reports whether a line's fields name an utterance among the
// ids: such a line is no header.
func (r *trialReader) namesID(fields []string) bool {
	for _, f := range fields {
		if _, ok := r.ids[f]; ok {
			return true
		}
	}
	return false
}

// done returns the trials read, or the error that refuses them:
// utterances not among the ids, or no trial at all.
func (r *trialReader) done() (TrialRead, error) {
	if r.form == "" && r.header != "" { // a first line alone, not a trial
		return TrialRead{}, fmt.Errorf("%s:%d: %q is not a trial: want target (1 or 0), enrolment, test, as VoxCeleb's lists, or enrolment, test, target or nontarget, as Kaldi's and NIST's", r.name, r.headerLine, r.header)
	}
	if r.missing > 0 {
		return TrialRead{}, fmt.Errorf("%s: %s of %d name an utterance that is not among the ids (the first: %s): give the ids of every utterance the list names, in the embeddings' row order", r.name, counted(r.missing, "trial"), r.missing+len(r.trials), r.firstMissing)
	}
	if len(r.trials) == 0 {
		return TrialRead{}, fmt.Errorf("%s: no trials", r.name)
	}
	return TrialRead{Trials: r.trials, Form: r.form, Header: r.header}, nil
}

// trialForm is the form of a trial list's first line: TrialList's, or
// what TrialList, telling a trial list from relevance pairs, does not
// take for a trial: Kaldi's with a target trial of ids without digits
// ("spkA-utt1 spkA-utt2 target", which a header might read as), and
// VoxCeleb's where its utterance ids are numbers ("1 17 42": row numbers
// as ids).
func trialForm(fields []string) string {
	if form := TrialList(fields); form != "" || len(fields) != 3 {
		return form
	}
	if _, kaldi := trialVerdict(fields[2], "kaldi"); kaldi {
		return "kaldi"
	}
	if fields[0] == "0" || fields[0] == "1" {
		return "voxceleb"
	}
	return ""
}

// trialOrder is the order of a trial list's fields in form.
func trialOrder(form string) string {
	if form == "kaldi" {
		return "enrolment, test, target or nontarget"
	}
	return "target (1 or 0), enrolment, test"
}

// trialVerdict reads a trial's verdict in form: whether it is a target
// trial, and whether the field is a verdict at all.
func trialVerdict(v, form string) (target, ok bool) {
	if form == "voxceleb" {
		return v == "1", v == "1" || v == "0"
	}
	switch strings.ToLower(v) {
	case "target", "tgt":
		return true, true
	case "nontarget", "non-target", "nontgt", "imp", "impostor":
		return false, true
	}
	return false, false
}
