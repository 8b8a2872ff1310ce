package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/experiment"
)

// TestConformalOOD: calibrate a set for per-input OOD tests (a reference
// pool and held-out ID inputs), then ccs ood -mode conformal with the
// baselines fitted on a file of features alone: every test keeps its
// false-alarm rate near α_ood on the ID test inputs and flags a shifted
// sample; Benjamini–Hochberg reports its rates; bad requests are clear
// errors.
func TestConformalOOD(t *testing.T) {
	dir := t.TempDir()
	var sink bytes.Buffer
	run1 := func(args ...string) (string, error) {
		var stdout bytes.Buffer
		err := run(&stdout, &sink, args)
		return stdout.String(), err
	}
	if _, err := run1("simulate", "-out", dir, "-per-class", "300", "-k", "5", "-seed", "2"); err != nil {
		t.Fatal(err)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	// Features alone: the training anchors with their labels (no
	// positives), and the test anchors shifted far away.
	fit, err := bundle.Read(p("fit.npz"))
	if err != nil {
		t.Fatal(err)
	}
	test, err := bundle.Read(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(p("feats.npz"), map[string]bundle.Array{"embeddings": bundle.Float32(fit.Anchors, fit.N, fit.D),
		"labels": bundle.Int64(fit.Labels, fit.N)}); err != nil {
		t.Fatal(err)
	}
	far := make([]float32, len(test.Anchors))
	for i, v := range test.Anchors {
		far[i] = v + 8
	}
	if err := bundle.WriteNPZ(p("far.npz"), map[string]bundle.Array{"anchors": bundle.Float32(far, test.N, test.D)}); err != nil {
		t.Fatal(err)
	}
	out, err := run1("calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference", "150", "-ood-cal", p("val.npz"), "-out", p("set.json"))
	if err != nil || !strings.Contains(out, "per-input OOD test: the 1st nearest of 150 pool rows") {
		t.Fatalf("calibrate: %v\n%s", err, out)
	}
	out, err = run1("ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", "far="+p("far.npz"), "-train", p("feats.npz"),
		"-ood-cal", p("val.npz"), "-fdr", "0.1", "-cider-epochs", "2", "-quiet", "-json")
	if err != nil {
		t.Fatal(err)
	}
	var tab experiment.OODTable
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	if tab.AlphaOOD != 0.05 || tab.FDRLevel != 0.1 || len(tab.Rows) < 2 || !strings.HasPrefix(tab.Rows[0].Method, "CCS (per input") {
		t.Fatalf("table: %s", out)
	}
	tested := 0
	for _, r := range tab.Rows {
		if r.Unavailable != "" {
			continue // the logit baselines: the features have no logits
		}
		if r.FAR == nil {
			t.Errorf("%s: no conformal test", r.Method)
			continue
		}
		tested++
		// ~300 ID test inputs: the rate's standard error is about 1.3
		// points. The per-input CCS score must see the shift; the
		// baselines (normalised features, a 2-epoch CIDER) may not.
		ccs := strings.HasPrefix(r.Method, "CCS")
		if r.FAR.Mean > 10 || len(r.FDP) != 1 || r.FDP[0].Mean > 20 || (ccs && (r.TAR[0].Mean < 90 || r.Power[0].Mean < 80)) {
			t.Errorf("%s: FAR %v, TAR %v, FDP %v, power %v", r.Method, r.FAR.Mean, r.TAR[0].Mean, r.FDP, r.Power)
		}
	}
	if tested < 3 {
		t.Errorf("only %d detectors were tested:\n%s", tested, out)
	}
	var text bytes.Buffer
	if err := tab.WriteText(&text); err != nil || !strings.Contains(text.String(), "FAR@0.05 (≤ 5%)") || !strings.Contains(text.String(), "Benjamini–Hochberg at q = 0.1") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
	// Logits of another classifier than -train's, as -id.
	logits := func(n, c int) bundle.Array {
		x := make([]float32, n*c)
		for i := range x {
			x[i] = float32(i%7) / 7
		}
		return bundle.Float32(x, n, c)
	}
	if err := bundle.WriteNPZ(p("feats3.npz"), map[string]bundle.Array{"embeddings": bundle.Float32(fit.Anchors, fit.N, fit.D),
		"labels": bundle.Int64(fit.Labels, fit.N), "logits": logits(fit.N, 5)}); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(p("id2.npz"), map[string]bundle.Array{"embeddings": bundle.Float32(test.Anchors, test.N, test.D), "logits": logits(test.N, 2)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-train", p("feats.npz"), "-ood-cal", p("feats.npz"), "-quiet"},
			p("feats.npz") + ": about 750 of its 750 inputs are rows of -train " + p("feats.npz") + ", which the baselines are fitted on", false},
		{[]string{"ood", "-set", p("set.json"), "-id", p("id2.npz"), "-ood", p("far.npz"), "-train", p("feats3.npz"), "-quiet"},
			p("id2.npz") + ": logits of 2 classes, and -train " + p("feats3.npz") + " has 5", false},
		{[]string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-delta", "0.9"}, "not a confidence level", true},
		{[]string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-alpha-ood", "0.001"}, "needs at least", false},
		{[]string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-alpha-ood", "1.5"}, "α_ood", true},
		{[]string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-fdr", "2"}, "-fdr 2", true},
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-ood-cal", p("val.npz"), "-out", p("x.json")}, "needs a reference pool", true},
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference", "20", "-ood-cal", "../../bundle/testdata/explicit.npz", "-out", p("x.json")}, `explicit.npz: array "anchors": embeddings of shape (4, 5), dimension 5; the set's dimension is 3`, false},
		{[]string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference-db", p("cal.npz"), "-ood-cal", p("cal.npz"), "-out", p("x.json")}, "disjoint from the reference pool", false},
	} {
		_, err := run1(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || isUsage(err) != c.usage {
			t.Errorf("%v: error %v, want %q (usage %v)", c.args, err, c.want, c.usage)
		}
	}
	// An OOD sample without the logits -train and -id have: the logit
	// baselines' rows say so once each, and a warning says what to give.
	if err := bundle.WriteNPZ(p("id3.npz"), map[string]bundle.Array{"embeddings": bundle.Float32(test.Anchors, test.N, test.D), "logits": logits(test.N, 5)}); err != nil {
		t.Fatal(err)
	}
	sink.Reset()
	if out, err := run1("ood", "-set", p("set.json"), "-id", p("id3.npz"), "-ood", "far="+p("far.npz"), "-train", p("feats3.npz"), "-cider-epochs", "0", "-quiet"); err != nil ||
		!strings.Contains(sink.String(), "far: no logits, and -train "+p("feats3.npz")+" has logits of 5 classes: MSP, Energy and ViM are not available on inputs without them; give the classifier's logits with each") ||
		!strings.Contains(out, "MSP: on far: not available: needs logits") || strings.Contains(out, "MSP: on far: MSP:") {
		t.Errorf("an OOD sample without logits: %v\n%s\n%s", err, sink.String(), out)
	}
	// -train's own rows as the ID inputs: warned of.
	sink.Reset()
	if _, err := run1("ood", "-set", p("set.json"), "-id", p("feats.npz"), "-ood", p("far.npz"), "-train", p("feats.npz"), "-cider-epochs", "1", "-quiet"); err != nil ||
		!strings.Contains(sink.String(), p("feats.npz")+": about 750 of its 750 inputs are rows of -train "+p("feats.npz")+", which the baselines are fitted on: the baselines' figures on them are optimistic") {
		t.Errorf("-id the -train features: %v\n%s", err, sink.String())
	}
	// An α_ood above one half is legal, and warned of; 0.5 is not.
	for _, a := range []string{"0.9", "0.5"} {
		sink.Reset()
		if _, err := run1("ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-alpha-ood", a, "-quiet"); err != nil ||
			strings.Contains(sink.String(), "the test may flag up to 90% of in-distribution inputs; α_ood is the false-alarm rate it allows") != (a == "0.9") {
			t.Errorf("-alpha-ood %s: %v\n%s", a, err, sink.String())
		}
	}
	// -cider-epochs 0 leaves CIDER out, saying so; the other baselines run.
	if out, err := run1("ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-train", p("feats.npz"), "-cider-epochs", "0", "-quiet"); err != nil ||
		!strings.Contains(out, "CIDER: not available: left out (-cider-epochs 0)") || !regexp.MustCompile(`\| Mahalanobis +\| \d`).MatchString(out) {
		t.Errorf("-cider-epochs 0: %v\n%s", err, out)
	}
	// Several OOD files joined by commas in one -ood: repeat the flag.
	if _, err := run1("ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", "far="+p("far.npz")+",near="+p("near.npz")); err == nil || !isUsage(err) ||
		!strings.Contains(err.Error(), "one file a flag: repeat -ood for each (-ood far="+p("far.npz")+" -ood near="+p("near.npz")+")") {
		t.Errorf("a comma-joined -ood: %v", err)
	}
	if _, err := run1("ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-train", p("feats.npz"), "-cider-epochs", "-1"); err == nil || !strings.Contains(err.Error(), "or 0 to leave CIDER out") || !isUsage(err) {
		t.Errorf("-cider-epochs -1: %v", err)
	}
	// Five calibration inputs give p-values of at least 1/6: BH at 0.1 can
	// flag nothing, and ood says so rather than print FDP and power 0.
	val, err := bundle.Read(p("val.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(p("five.npz"), map[string]bundle.Array{"anchors": bundle.Float32(val.Anchors[:5*val.D], 5, val.D)}); err != nil {
		t.Fatal(err)
	}
	if _, err := run1("calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference", "20", "-ood-cal", p("five.npz"), "-out", p("five.json")); err != nil {
		t.Fatal(err)
	}
	sink.Reset()
	if _, err := run1("ood", "-set", p("five.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-alpha-ood", "0.2", "-fdr", "0.1"); err != nil || !strings.Contains(sink.String(), "-fdr 0.1: the set's OOD calibration has 5 inputs, so the smallest p-value is 1/(n+1) = 0.167, above Q: nothing can be flagged (FDP and power read 0); calibrate on at least 9 held-out inputs") {
		t.Errorf("-fdr with 5 calibration inputs: %v\n%s", err, sink.String())
	}
	if _, err := run1("calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference", "20", "-out", p("pool.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := run1("ood", "-set", p("pool.json"), "-id", p("test.npz"), "-ood", p("far.npz"), "-mode", "conformal"); err == nil || !strings.Contains(err.Error(), "-ood-cal") {
		t.Errorf("-mode conformal without an OOD calibration: %v", err)
	}
}
