package main

import (
	"fmt"
	"os"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
)

// trialsOptions are s.trials's keywords: the trial list's file, or none
// when it comes as an array.
type trialsOptions struct {
	TrialsFile string `json:"trials_file"`
	// Unlabeled is what a class-conditional set does with the trials'
	// enrolments, whose classes no list gives: "error" (or none), or
	// "marginal", the threshold over all classes (ccs evaluate
	// -unlabeled).
	Unlabeled string `json:"unlabeled"`
}

// trialsResult is ccs evaluate -trials -json's figures: the list's form
// and what the set and a cosine threshold make of its trials.
type trialsResult struct {
	Form   string `json:"form"`
	Header string `json:"header"` // the header line skipped, "" for none
	eval.TrialResult
}

// setTrials is ccs evaluate -trials on arrays: the set judged on a
// speaker-verification trial list (trials_file, or a "trials" array of
// (m, 3) strings, a line's fields each) of the "embeddings" named by
// "ids", with the warnings to raise.
func setTrials(s *conformal.Set, arrays map[string]rawArray, o trialsOptions) (any, []string, error) {
	for name := range arrays {
		switch name {
		case "embeddings", "ids", "trials":
		default:
			return nil, nil, fmt.Errorf("trials: unknown array %q", name)
		}
	}
	er, ok := arrays["embeddings"]
	ir, okIDs := arrays["ids"]
	if !ok || !okIDs {
		return nil, nil, fmt.Errorf("trials: give the utterances' embeddings and their ids, as the trial list names them")
	}
	tr, hasTrials := arrays["trials"]
	if hasTrials == (o.TrialsFile != "") {
		return nil, nil, fmt.Errorf("trials: give the trial list as a file or as an array of its lines' fields, one of the two")
	}
	var warnings []string
	switch o.Unlabeled {
	case "", "error":
		if s.ClassConditional() {
			return nil, nil, fmt.Errorf("trials: %w: a class-conditional set judges an enrolment by its class, which a trial list does not give (its speakers are seldom the calibration's): unlabeled=\"marginal\" judges every enrolment with the threshold over all classes, which has no class-conditional guarantee", conformal.ErrNoLabel)
		}
	case "marginal":
		if s.ClassConditional() {
			warnings = append(warnings, "a trial list gives no enrolment's class: every enrolment is judged with the threshold over all classes, which has no class-conditional guarantee")
			s = s.OverAllClasses()
		}
	default:
		return nil, nil, fmt.Errorf("trials: unlabeled=%q: want error or marginal", o.Unlabeled)
	}
	e, err := readEmbeddings(er, false)
	if err != nil {
		return nil, nil, err
	}
	if err := s.CheckDim("embeddings", e.N, e.D); err != nil {
		return nil, nil, err
	}
	ids, err := readIDStrings(ir, e.N, e.D)
	if err != nil {
		return nil, nil, err
	}
	rows, warn, err := bundle.IndexUtterances(ids, e.Rows, e.D)
	if err != nil {
		return nil, nil, fmt.Errorf("ids: %w", err)
	}
	var list bundle.TrialRead
	if hasTrials {
		a, err := decode(tr)
		if err != nil {
			return nil, nil, err
		}
		if a.Str == nil || len(a.Shape) != 2 || a.Shape[1] != 3 {
			return nil, nil, fmt.Errorf("trials: dtype %s, shape %s: want (m, 3) strings, a trial's fields each (target, enrolment, test; or enrolment, test, target)", a.Kind(), bundle.FormatShape(a.Shape))
		}
		lines := make([][]string, a.Shape[0])
		for i := range lines {
			lines[i] = a.Str[3*i : 3*i+3]
		}
		list, err = bundle.TrialFields(lines, "trials", rows)
		if err != nil {
			return nil, nil, err
		}
	} else {
		f, err := os.Open(o.TrialsFile)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		if list, err = bundle.ReadTrials(f, o.TrialsFile, rows); err != nil {
			return nil, nil, err
		}
	}
	r, err := eval.Trials(s, e.Rows, e.D, list.Trials)
	if err != nil {
		return nil, nil, fmt.Errorf("trials: %w", err)
	}
	if warn != "" {
		warnings = append(warnings, "ids: "+warn)
	}
	return trialsResult{Form: list.Form, Header: list.Header, TrialResult: r}, append(warnings, s.Warnings()...), nil
}
