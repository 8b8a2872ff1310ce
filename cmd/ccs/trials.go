package main

import (
	"fmt"
	"os"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/experiment"
)

// trialsDocument is ccs evaluate -trials -json's document: the set, the
// list and what the set and a cosine threshold make of its trials.
type trialsDocument struct {
	Set    string `json:"set"`
	Trials string `json:"trials_file"`
	Form   string `json:"form"`
	Header string `json:"header"` // the header line skipped, "" for none
	eval.TrialResult
	Alpha    float64  `json:"alpha"`
	Warnings []string `json:"warnings"`
}

// runEvaluateTrials is ccs evaluate -trials: the set judged on a
// speaker-verification trial list of utterances of -embeddings, named by
// -ids, beside a cosine threshold on the same trials.
func runEvaluateTrials(o evaluateOptions, out *output) error {
	switch {
	case o.Test != "":
		return usagef("evaluate: -trials judges the set on a trial list; -test on a bundle: give one of the two")
	case o.PerClass || o.DB != "" || o.anchorsSet || o.Baseline != "" || o.Cal != "":
		return usagef("evaluate: -per-class, -db, -size-anchors, -baseline and -cal read a test bundle (-test), not a trial list")
	}
	if err := required("evaluate", "set", o.Set, "trials", o.Trials, "embeddings", o.Embeddings, "ids", o.IDs); err != nil {
		return err
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	var warnings []string
	if set.ClassConditional() {
		if o.Unlabeled != "marginal" {
			return fmt.Errorf("%s: %w: a class-conditional set judges an enrolment by its class, which a trial list does not give (its speakers are seldom the calibration's): -unlabeled marginal judges every enrolment with the threshold over all classes, which has no class-conditional guarantee", o.Set, conformal.ErrNoLabel)
		}
		w := "a trial list gives no enrolment's class: every enrolment is judged with the threshold over all classes, which has no class-conditional guarantee"
		warnings = append(warnings, w)
		out.warn(w)
		set = set.OverAllClasses()
	}
	emb, err := readEmbeddings(o.Embeddings, false)
	if err != nil {
		return err
	}
	noteInput(out, emb)
	if err := set.CheckDim(o.Embeddings, emb.N, emb.D); err != nil {
		return err
	}
	ids, err := readIDStrings(o.IDs, "ids", emb.N, emb.D)
	if err != nil {
		return err
	}
	rows, warn, err := bundle.IndexUtterances(ids, emb.Rows, emb.D)
	if err != nil {
		return fmt.Errorf("%s: %w", o.IDs, err)
	}
	if warn != "" {
		warnings = append(warnings, o.IDs+": "+warn)
		out.warn(o.IDs + ": " + warn)
	}
	f, err := os.Open(o.Trials)
	if err != nil {
		return err
	}
	defer f.Close()
	list, err := bundle.ReadTrials(f, o.Trials, rows)
	if err != nil {
		return err
	}
	form := list.Form
	r, err := eval.Trials(set, emb.Rows, emb.D, list.Trials)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", o.Set, o.Trials, err)
	}
	warnings = append(warnings, set.Warnings()...)
	doc := trialsDocument{Set: o.Set, Trials: o.Trials, Form: form, Header: list.Header, TrialResult: r, Alpha: set.Alpha, Warnings: append([]string{}, warnings...)}
	if err := saveJSON(out, "evaluate", doc, o.JSON, o.Out); err != nil || o.JSON {
		return err
	}
	forms := map[string]string{"voxceleb": "VoxCeleb's form", "kaldi": "Kaldi's form"}
	fmt.Fprintf(out.stdout, "set        %s\n", describe(set))
	header := ""
	if list.Header != "" {
		header = fmt.Sprintf(", its header line %q skipped", list.Header)
	}
	fmt.Fprintf(out.stdout, "trials     %d of %s (%s%s): %d target, %d non-target, utterances of %s\n", r.Trials, o.Trials, forms[form], header, r.Targets, r.NonTargets, o.Embeddings)
	fmt.Fprintf(out.stdout, "miss       %s of the target trials outside the set around their enrolment (%s)\n", experiment.Percent(r.Miss), missGuarantee(set))
	fmt.Fprintf(out.stdout, "false acc  %s of the non-target trials inside it (exclusion %s)\n", experiment.Percent(r.FalseAcceptance), experiment.Percent(1-r.FalseAcceptance))
	fmt.Fprintf(out.stdout, "cosine     EER %s at cos %.4f; missing as many targets as the set, cos ≥ %.4f accepts %s of the non-targets (thresholds chosen on these trials: no guarantee)\n",
		experiment.Percent(r.CosineEER), r.CosineEERThreshold, r.CosineAtMiss, experiment.Percent(r.CosineFalseAcceptance))
	wroteOut(out, o.Out)
	for _, w := range set.Warnings() {
		out.warn(w)
	}
	return nil
}

// missGuarantee says what the set promises of a trial list's misses: at
// most α on average over the calibration draw, or for PAC's threshold
// with probability 1 − δ; a pooled threshold, nothing exact.
func missGuarantee(set *conformal.Set) string {
	switch c := set.Calibration; c.Mode {
	case conformal.PAC:
		return fmt.Sprintf("α = %.2f%%: at most that, with probability ≥ %.4g%% over the calibration draw, for enrolments drawn as the calibration anchors were", 100*set.Alpha, 100*(1-c.Delta))
	case conformal.Pooled:
		return fmt.Sprintf("α = %.2f%%: approximately — a pooled calibration guarantees nothing exact", 100*set.Alpha)
	}
	return fmt.Sprintf("α = %.2f%%: on average over enrolments drawn as the calibration anchors were", 100*set.Alpha)
}
