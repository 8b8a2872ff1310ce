package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/ood"
)

// OODModes are the CCS rows each mode of DetectOOD scores with.
var OODModes = map[string][]string{
	"conformal": {"conformal"},
	"batch":     {"batch"},
	"reference": {"reference"},
	"both":      {"batch", "reference"},
	"all":       {"batch", "reference", "conformal"},
}

// OODDetection is what ccs ood (and the Python package's ood_detection)
// scores: a calibrated set's OOD scores, and with training features the
// eight baselines, on in-distribution inputs and OOD samples, each input
// read and of the set's dimension. The names name the inputs in messages
// and the table.
type OODDetection struct {
	Set     *conformal.Set
	SetName string
	ID      *bundle.Bundle
	IDName  string
	// LabelNames name the ID inputs' string labels (label i is
	// LabelNames[i]; nil: integer labels, or the set's class names).
	LabelNames []string
	// IDBlocks is the number of blocks (recordings) the ID inputs are
	// rows of, when ccs bundle split them by block (bundle.ManifestBlocks;
	// 0: not known): the shift checks then say that they counted the rows
	// as independent inputs.
	IDBlocks int
	OOD      []*bundle.Bundle
	// OODNames name the OOD samples' columns.
	OODNames []string
	// Train fits the baselines (nil: none); OODCal, held-out ID inputs,
	// calibrates their conformal tests (nil: none); Classifier is the
	// encoder's last layer, for ViM (nil: ViM "not available").
	Train *bundle.Bundle
	// TrainName is how messages name Train: "-train FILE" (the command's
	// flag), "train" or "train=NAME" (Python's keyword).
	TrainName  string
	OODCal     *bundle.Bundle
	OODCalName string
	// OODCalLabelNames name OODCal's string labels (label i is
	// OODCalLabelNames[i]; nil: integer labels), as LabelNames the ID
	// inputs'.
	OODCalLabelNames []string
	Classifier       *ood.Classifier
	// ClassifierName is how messages name Classifier: "-classifier FILE"
	// or Python's "classifier=FILE".
	ClassifierName string
	Mode           string // an OODModes key; "": conformal where the set has an OOD calibration, else both where it has a pool, else batch
	Test           ood.Test
	FDR            float64 // Benjamini–Hochberg level over each OOD sample mixed with the ID inputs; 0: none
	Convention     ood.Convention
	CiderEpochs    int // CIDER's epochs; 0 leaves it out
	Seed           uint64
	// Progress, if not nil, hears the end of each of CIDER's epochs.
	Progress func(epoch, epochs int)
	// Steps, if not nil, hears the long steps: each CCS row's scoring of
	// the inputs (its name and " score": "CCS (reference) score"), the
	// baselines' k-NN searches of KNN, COMBOOD and D-KNN (ood.Steps), and
	// "baselines": 0 of them before the first, then done of them after
	// each (what: the one done).
	Steps func(step string, done, total int, what string)
}

// DetectOOD measures every row of d's table, and returns it with the
// warnings a reader should see (an input that is a row of what was fitted
// on, a batch score that certifies nothing, an FDR level the calibration
// cannot reach). Without an OOD sample it measures the set's per-input
// test on the ID inputs alone — its false-alarm rate and the shift check
// on a new source's inputs —, which needs the set's OOD calibration and
// no baselines.
func DetectOOD(ctx context.Context, d OODDetection) (*OODTable, []string, error) {
	var warnings []string
	set := d.Set
	if len(d.OODNames) != len(d.OOD) {
		return nil, nil, errNoInputs
	}
	for i, name := range d.OODNames {
		if slices.Contains(d.OODNames[:i], name) {
			return nil, nil, fmt.Errorf("two OOD samples named %q: the table's columns would not tell them apart; give each its own name", name)
		}
	}
	if d.ID == nil {
		return nil, nil, errors.New("no in-distribution inputs: give the ID inputs the test is measured on")
	}
	if err := set.OneThreshold(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %s", d.SetName, err, conformal.OODOneThreshold)
	}
	if d.CiderEpochs < 0 {
		return nil, nil, fmt.Errorf("cider epochs %d: want at least 1, or 0 to leave CIDER out", d.CiderEpochs)
	}
	mode := d.Mode
	if mode == "" {
		switch {
		case set.OOD != nil:
			mode = "conformal"
		case set.Reference != nil:
			mode = "both"
		default:
			mode = "batch"
			// Without a pool or its calibration there is no per-input
			// test: say what the table is, and how to get one.
			warnings = append(warnings, fmt.Sprintf("%s has no reference pool or OOD calibration: only the paper's batch score (how tightly each batch clusters), which certifies no input; for a per-input test with a false-alarm rate, calibrate with -reference N -ood-cal HELD-OUT-ID.npz", d.SetName))
		}
	}
	ms, ok := OODModes[mode]
	if !ok {
		return nil, nil, fmt.Errorf("mode %q: want conformal, batch, reference, both or all", mode)
	}
	if slices.Contains(ms, "reference") && set.Reference == nil {
		return nil, nil, fmt.Errorf("%s: no reference pool for -mode %s (calibrate with -reference N)", d.SetName, mode)
	}
	if len(d.OOD) == 0 {
		// The in-distribution side alone: the per-input test's false-alarm
		// rate and its shift check on a new source's inputs. Every other
		// row, and the baselines, are measured against an OOD sample.
		switch {
		case set.OOD == nil:
			return nil, nil, fmt.Errorf("%s: no OOD sample, and no per-input OOD test to check the in-distribution inputs alone with: give an OOD sample (-ood FILE), or calibrate the set with -reference N -ood-cal HELD-OUT-ID.npz", d.SetName)
		case d.Train != nil:
			return nil, nil, fmt.Errorf("the baselines (-train) are measured against an OOD sample: give one (-ood FILE), or leave -train out to check the in-distribution inputs alone")
		case d.Mode != "" && d.Mode != "conformal":
			return nil, nil, fmt.Errorf("mode %q without an OOD sample: its rows are AUROC and FPR95 against one; the in-distribution inputs alone are checked by the per-input test (mode conformal, or none)", d.Mode)
		case d.FDR > 0:
			return nil, nil, fmt.Errorf("an FDR level without an OOD sample: Benjamini–Hochberg's share of false discoveries is of inputs of both kinds; the in-distribution inputs alone give the false-alarm rate")
		}
		ms = []string{"conformal"}
	}
	var near *ood.Nearest
	if slices.Contains(ms, "conformal") {
		cc, err := ood.NewConformal(set, d.Test)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.SetName, err)
		}
		near = cc.Score
	}
	if w := set.OODTestWarning(d.ID); w != "" && (near != nil || d.OODCal != nil) {
		warnings = append(warnings, d.IDName+": "+w)
	}
	t := &OODTable{Title: "OOD detection", Runs: 1, Sets: []string{},
		Config: fmt.Sprintf("%s, ID %s, FPR95 %v", setNamed(d.SetName), d.IDName, d.Convention)}
	if len(d.OOD) == 0 {
		t.Config = fmt.Sprintf("%s, ID %s alone (no OOD sample: the per-input test's false-alarm rate)", setNamed(d.SetName), d.IDName)
	}
	if c := set.OOD; c != nil && c.Class != nil && near != nil {
		// The test of one class: its false-alarm rate is bounded over
		// that class's inputs, so the ID inputs are those.
		sub, err := inputsOfClass(d.SetName, d.ID, d.IDName, d.LabelNames, *c.Class)
		switch {
		case err != nil:
			return nil, nil, err
		case sub != nil:
			t.Config += fmt.Sprintf("; the per-input test is class %s's (-ood-class): the ID inputs are its %d of %d", c.Class, sub.N, d.ID.N)
			d.ID = sub
		default:
			warnings = append(warnings, fmt.Sprintf("%s: the set's per-input test is class %s's (-ood-class): its false-alarm rate is bounded over that class's inputs, and %s has no labels to pick them by, so FAR here is over every input, which the test does not bound", d.SetName, c.Class, d.IDName))
		}
		if d.OODCal != nil {
			// The baselines' tests calibrated on the same class's
			// held-out inputs, as the set's was: judged on one class,
			// calibrated on all, they would read as a shift. The class is
			// named by -ood-cal's own label names.
			cal, err := inputsOfClass(d.SetName, d.OODCal, d.OODCalName, d.OODCalLabelNames, *c.Class)
			switch {
			case err != nil:
				return nil, nil, err
			case cal != nil:
				d.OODCal = cal
			default:
				warnings = append(warnings, fmt.Sprintf("%s: the baselines' tests are calibrated on every one of its inputs, which have no labels to pick the set's class %s's by: judged on that class's inputs alone, their false-alarm rates may read as a shift", d.OODCalName, c.Class))
			}
		}
	}
	if near != nil || d.OODCal != nil {
		t.AlphaOOD, t.Guarantee, t.FDRLevel = d.Test.Alpha, d.Test.String(), d.FDR
		if w := d.Test.Warning(); w != "" {
			warnings = append(warnings, w)
		}
		if w := d.Test.TieWarning(set.OOD); near != nil && w != "" {
			warnings = append(warnings, d.SetName+": "+w)
		}
	}
	if c := set.OOD; c != nil && d.FDR > 0 && near != nil && 1/float64(c.N+1) > d.FDR {
		// Benjamini–Hochberg flags none when even the smallest p-value
		// the calibration can give is above Q.
		warnings = append(warnings, fmt.Sprintf("-fdr %v: the set's OOD calibration has %d inputs, so the smallest p-value is 1/(n+1) = %.3g, above Q: nothing can be flagged (FDP and power read 0); calibrate on at least %d held-out inputs",
			d.FDR, c.N, 1/float64(c.N+1), int(math.Ceil(1/d.FDR))-1))
	}
	ev := ood.Evaluation{ID: d.ID, Convention: d.Convention, Test: d.Test, FDR: d.FDR, OOD: d.OOD, Names: d.OODNames}
	t.Sets = append(t.Sets, d.OODNames...)
	for _, m := range ms {
		mode, err := ood.ParseMode(m)
		if err != nil {
			return nil, nil, err
		}
		score, err := ood.CCS(set, mode, near)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.SetName, err)
		}
		name := "CCS (" + m + ")"
		var cal []float64 // the per-input score's calibration, stored with the set
		if m == "conformal" {
			name = fmt.Sprintf("CCS (per input, %s nearest of %d)", Ordinal(near.K()), set.Reference.N)
			cal = set.OOD.Scores
		}
		start := time.Now()
		// Each row's scoring a part of Steps: the reference mode scores
		// every input against the whole pool (15 s for 7 451 inputs, which
		// said nothing).
		row := ev
		if d.Steps != nil {
			part := name + " score"
			row.Progress = func(done, total int) { d.Steps(part, done, total, "") }
		}
		r, err := row.Measure(ctx, score, cal)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := t.AddMeasured(name, r, nil); err != nil {
			return nil, nil, err
		}
		t.Rows[len(t.Rows)-1].Seconds = time.Since(start).Seconds()
		if cal != nil {
			w, err := shiftAlarm(d, cal, r.ID)
			if err != nil {
				return nil, nil, err
			}
			warnings = append(warnings, w...)
			if w, err = classAlarms(d, cal, r.ID); err != nil {
				return nil, nil, err
			}
			warnings = append(warnings, w...)
		}
	}
	if d.Train != nil {
		w, err := detectBaselines(ctx, d, t, ev)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, w...)
	}
	t.Warnings = warnings
	return t, warnings, nil
}

// inputsOfClass is b's inputs (named name in messages, their string
// labels named by names) of class c, the class of setName's per-input
// test (ccs calibrate -ood-class); nil where b has no labels to pick them
// by, and an error where it has none of c.
func inputsOfClass(setName string, b *bundle.Bundle, name string, names []string, c conformal.OODClass) (*bundle.Bundle, error) {
	if b.Labels == nil {
		return nil, nil
	}
	label := c.Label
	if c.Name != "" && names != nil {
		at := slices.Index(names, c.Name)
		if at < 0 {
			return nil, fmt.Errorf("%s: the set's per-input test is class %s's (-ood-class), which %s's labels do not name (%s)", setName, c, name, strings.Join(names, ", "))
		}
		label = int64(at)
	}
	rows, classes := bundle.ClassRows(b.Labels, label, names)
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: the set's per-input test is class %s's (-ood-class), and %s has no inputs of it (its classes: %s): give that class's inputs", setName, c, name, classes)
	}
	return b.Subset(rows), nil
}

// labelCounts writes labels' counts, the most frequent first: "−1 ×10,
// 10 ×50" (at most five, then how many more).
func labelCounts(counts map[int64]int) string {
	labels := slices.Collect(maps.Keys(counts))
	slices.SortFunc(labels, func(a, b int64) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	var parts []string
	for i, l := range labels {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d more", len(labels)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%d ×%d", l, counts[l]))
	}
	return strings.Join(parts, ", ")
}

// trainLabelsCheck refuses training labels that are no class: negative
// (−1, scikit-learn's and Hugging Face's missing label), or, with logits
// of C classes, C or more. The baselines' class means (Mahalanobis, KNN's
// classes) would take each as a class of its own.
func trainLabelsCheck(tr *bundle.Bundle, name string) error {
	if tr.Labels == nil {
		return nil
	}
	bad, rows := map[int64]int{}, 0
	for _, l := range tr.Labels {
		if l < 0 || tr.C > 0 && l >= int64(tr.C) {
			bad[l]++
			rows++
		}
	}
	if rows == 0 {
		return nil
	}
	if tr.C == 0 {
		return fmt.Errorf("%s: %d of its %d rows have negative labels (%s), a missing label's mark: the baselines' class means would take each as a class of its own; drop those rows (keep = y >= 0; x, y = x[keep], y[keep])",
			name, rows, tr.N, labelCounts(bad))
	}
	return fmt.Errorf("%s: %d of its %d rows have labels outside 0…%d, its logits' %d classes (%s): the baselines' class means would take each as a class of its own (a negative label marks a missing one); drop those rows (keep = (y >= 0) & (y < %d); x, y, logits = x[keep], y[keep], logits[keep])",
		name, rows, tr.N, tr.C-1, tr.C, labelCounts(bad), tr.C)
}

// otherLabels warns of in-distribution inputs whose labels are no class of
// the training features' (the per-class false-alarm checks read them).
func otherLabels(b *bundle.Bundle, name string, tr *bundle.Bundle, trainName string) string {
	if b.Labels == nil || tr.Labels == nil {
		return ""
	}
	classes := map[int64]bool{}
	for _, l := range tr.Labels {
		classes[l] = true
	}
	bad, rows := map[int64]int{}, 0
	for _, l := range b.Labels {
		if !classes[l] {
			bad[l]++
			rows++
		}
	}
	if rows == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d of its %d inputs have labels no row of %s has (%s): the per-class false-alarm checks count them as classes of their own; are they the same classes, numbered alike?", name, rows, b.N, trainName, labelCounts(bad))
}

// classifierCheck refuses a classifier of other shapes than train's
// features and logits, naming its file (name), and warns where its W·x + b
// are not train's logits (the first 256 rows, the median row's relative
// difference above 1%): ViM reads both, as one classifier's.
func classifierCheck(cl *ood.Classifier, tr *bundle.Bundle, name, trainName string) (string, error) {
	switch {
	case cl.D != tr.D:
		return "", fmt.Errorf("%s: a classifier of %d×%d, and %s's features have dimension %d: the classifier's weight is (C, D), D the features' dimension", name, cl.C, cl.D, trainName, tr.D)
	case tr.C > 0 && cl.C != tr.C:
		return "", fmt.Errorf("%s: a classifier of %d classes, and %s's logits have %d: give the classifier that made the logits", name, cl.C, trainName, tr.C)
	case tr.C == 0:
		return "", nil
	}
	m := min(tr.N, 256)
	med := logitsDiffer(cl, tr, m, false)
	if med <= 0.01 {
		return "", nil
	}
	if cl.C == cl.D && logitsDiffer(cl, tr, m, true) <= 0.01 { // a square weight saved transposed fits
		return "", fmt.Errorf("%s: its weight is transposed: Wᵀ·x + b are %s's logits, W·x + b are not (save W.T: nn.Linear's weight is (C, D))", name, trainName)
	}
	return fmt.Sprintf("%s: its W·x + b differ from %s's logits by %.3g of their norm at the median of %d rows: ViM reads both as one classifier's, and its figures hold for the classifier that made the logits (is this its last layer, saved from the same checkpoint?)", name, trainName, med, m), nil
}

// logitsDiffer is the median over train's first m rows of ‖W·x + b − l‖ /
// ‖l‖ (with transposed, of Wᵀ·x + b: a square weight saved the other way).
func logitsDiffer(cl *ood.Classifier, tr *bundle.Bundle, m int, transposed bool) float64 {
	rel := make([]float64, m)
	for i := range m {
		x, l := tr.Anchors[i*tr.D:(i+1)*tr.D], tr.Logits[i*tr.C:(i+1)*tr.C]
		var diff, norm float64
		for c := range cl.C {
			z := cl.B[c]
			for j, v := range x {
				w := cl.W[c*cl.D+j]
				if transposed {
					w = cl.W[j*cl.D+c]
				}
				z += w * float64(v)
			}
			diff += (z - float64(l[c])) * (z - float64(l[c]))
			norm += float64(l[c]) * float64(l[c])
		}
		rel[i] = math.Sqrt(diff / max(norm, math.SmallestNonzeroFloat64))
	}
	slices.Sort(rel)
	return rel[m/2]
}

// perInputTest is d's per-input test (α_ood its default where d leaves
// it 0) and its calibration on the scores cal.
func perInputTest(d OODDetection, cal []float64) (*ood.Calibration, ood.Test, error) {
	c, err := ood.NewCalibration(cal)
	test := d.Test
	if test.Alpha == 0 {
		test.Alpha = ood.DefaultAlpha
	}
	return c, test, err
}

// ShiftTail is the tail probability below which shiftAlarm and
// CheckShift warn: the chance that inputs exchangeable with the
// calibration's would be flagged (or left outside the set) as often as
// the inputs were.
const ShiftTail = 1e-3

// shiftAlarm warns when the set's per-input test (calibrated on cal; id
// the ID inputs' scores) flags more of d's in-distribution inputs than
// inputs exchangeable with its calibration inputs would be, but for a
// chance below ShiftTail (conformal.ExchangeableTail, over the
// calibration draw and the inputs): they are not drawn as the calibration inputs were.
func shiftAlarm(d OODDetection, cal, id []float64) ([]string, error) {
	k, p, err := shiftTail(d, cal, id)
	if err != nil || p >= ShiftTail {
		return nil, err
	}
	return []string{fmt.Sprintf("%s: the per-input test flagged %.1f%% of these %d in-distribution inputs, above α_ood = %v by more than chance allows: inputs drawn as its %d calibration inputs were would be flagged that often with probability %.2g (over the calibration draw and the inputs). They are not exchangeable with them — a shift: another batch, donor, site or time — and neither the test's false-alarm guarantee nor the set's coverage guarantee covers them; calibrate on inputs drawn as these are (docs/ood.md)",
		d.IDName, 100*float64(k)/float64(len(id)), len(id), cmp.Or(d.Test.Alpha, ood.DefaultAlpha), len(cal), p) + blocksCaveat(d)}, nil
}

// blocksCaveat qualifies a shift check's probability when d's ID inputs
// are rows of a few blocks (recordings of overlapping windows): the
// beta-binomial law counts them as independent inputs, which they are
// not, so the probability understates chance.
func blocksCaveat(d OODDetection) string {
	if d.IDBlocks <= 0 {
		return ""
	}
	blocks := fmt.Sprintf("%d blocks", d.IDBlocks)
	if d.IDBlocks == 1 {
		blocks = "1 block"
	}
	return fmt.Sprintf(". But these inputs are the rows of %s (ccs bundle -blocks), not independent inputs, and the probability counts them as independent: it understates chance, most where the calibration inputs, too, are the rows of a few blocks; judge the rate block by block, on more blocks (docs/your-data.md §9)", blocks)
}

// shiftTail counts the inputs (scores id) that d's conformal test,
// calibrated on the scores cal, flags, and the chance that as many or more
// of inputs exchangeable with the calibration's would be flagged
// (conformal.ExchangeableTail, over the calibration draw and the inputs).
func shiftTail(d OODDetection, cal, id []float64) (flagged int, p float64, err error) {
	c, test, err := perInputTest(d, cal)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range test.Flags(test.PValues(c, id)) {
		if f {
			flagged++
		}
	}
	// The rank the test flags from, δ or not: its count's law.
	return flagged, conformal.ExchangeableTail(flagged, len(id), len(cal), test.FlaggedRank(len(cal))), nil
}

// baselineScores are a baseline's scores of the held-out calibration
// inputs and of the ID test inputs, for baselineShiftAlarm.
type baselineScores struct {
	name    string
	cal, id []float64
}

// baselineShiftAlarm warns, in one line, of the baselines whose conformal
// tests flag more of d's in-distribution inputs than inputs exchangeable
// with their calibration inputs would be, but for a chance below
// ShiftTail, as shiftAlarm does for the set's own test: the table's FAR
// column does not hold for those inputs, whichever detector it is.
func baselineShiftAlarm(d OODDetection, scores []baselineScores) (string, error) {
	var parts []string
	n, test := 0, d.Test
	if test.Alpha == 0 {
		test.Alpha = ood.DefaultAlpha
	}
	for _, b := range scores {
		k, p, err := shiftTail(d, b.cal, b.id)
		if err != nil {
			return "", fmt.Errorf("%s: %w", b.name, err)
		}
		if p < ShiftTail {
			parts = append(parts, fmt.Sprintf("%s %.1f%% (probability %.2g)", b.name, 100*float64(k)/float64(len(b.id)), p))
			n = len(b.cal)
		}
	}
	if len(parts) == 0 {
		return "", nil
	}
	return fmt.Sprintf("%s: the conformal tests of the baselines flagged more of these %d in-distribution inputs than chance allows at α_ood = %v — %s — where inputs drawn as their %d calibration inputs (%s) were would be flagged as often with the probability given. They are not exchangeable with them — a shift: another batch, donor, site or time, or rows of other recordings than the calibration's — and those rows' FAR is no guaranteed rate for them; calibrate on inputs drawn as these are (docs/ood.md)",
		d.IDName, len(scores[0].id), test.Alpha, strings.Join(parts, ", "), n, d.OODCalName) + blocksCaveat(d), nil
}

// setNamed is "set FILE" for a set named by its file, or a description
// as given ("the set", Python's Set in memory) alone.
func setNamed(name string) string {
	if strings.HasPrefix(name, "the ") {
		return name
	}
	return "set " + name
}

// classAlarms warns of the classes of d's labelled ID inputs whose share
// flagged by the set's per-input test (calibrated on cal; id their
// scores) is over twice α_ood and beyond chance (its tail times the
// classes checked below ShiftTail): the false-alarm rate is guaranteed
// over all inputs, not class by class. The classes checked are those a
// count could show beyond chance (Tarone's count): a class of 7 inputs,
// all flagged, is named; one of 2 cannot be, and costs the others nothing.
func classAlarms(d OODDetection, cal, id []float64) ([]string, error) {
	if d.ID.Labels == nil || d.Set.OOD != nil && d.Set.OOD.Class != nil {
		return nil, nil // a class's own test: its inputs are that class's, its bound theirs
	}
	c, test, err := perInputTest(d, cal)
	if err != nil {
		return nil, err
	}
	byClass := map[int64][]float64{}
	for i, l := range d.ID.Labels {
		byClass[l] = append(byClass[l], id[i])
	}
	type class struct {
		label int64
		n     int
		rate  float64
	}
	// A class is named when its share is beyond chance too: among a long
	// tail's classes of 20-odd inputs some are flagged at twice α_ood by
	// chance alone (a protein user's family of 24 inputs, 3 flagged, had a
	// tail of 0.12), so each class's tail of its count, times the classes
	// checked (Bonferroni), must be below ShiftTail.
	//
	// Which classes are checked is Tarone's (Biometrics 1990): a class of
	// m inputs cannot show a tail below that of all m flagged, so the
	// classes checked are the K whose least tail is below ShiftTail/K, K
	// the least count for which at most K are; a class too small to be
	// named does not widen the others' factor. (A floor of 20 inputs had
	// left a 40-row class's 7 test inputs, all flagged, unsaid.)
	least := map[int64]float64{}
	for l, s := range byClass {
		least[l] = conformal.ExchangeableTail(len(s), len(s), len(cal), test.FlaggedRank(len(cal)))
	}
	checked := taroneCount(slices.Collect(maps.Values(least)), ShiftTail)
	var high []class
	for _, l := range slices.Sorted(maps.Keys(byClass)) {
		if s := byClass[l]; checked > 0 && least[l] < ShiftTail/float64(checked) {
			if r := test.Rate(c, s); r > 2*test.Alpha {
				k := int(math.Round(r * float64(len(s))))
				p := conformal.ExchangeableTail(k, len(s), len(cal), test.FlaggedRank(len(cal)))
				if p*float64(checked) < ShiftTail {
					high = append(high, class{l, len(s), r})
				}
			}
		}
	}
	if len(high) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(high, func(a, b class) int { return cmp.Compare(b.rate, a.rate) })
	names := d.LabelNames
	if names == nil {
		names = d.Set.ClassNames()
	}
	var parts []string
	for i, h := range high {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d more", len(high)-5))
			break
		}
		who := fmt.Sprintf("class %d", h.label)
		if h.label >= 0 && h.label < int64(len(names)) && names[h.label] != strconv.FormatInt(h.label, 10) {
			who = fmt.Sprintf("class %d (%q)", h.label, names[h.label])
		}
		parts = append(parts, fmt.Sprintf("%.1f%% of %s's %d inputs", 100*h.rate, who, h.n))
	}
	return []string{fmt.Sprintf("%s: the per-input test flagged %s, beyond chance, against α_ood = %v over all: its false-alarm rate is guaranteed over all in-distribution inputs, not class by class (docs/ood.md)",
		d.IDName, strings.Join(parts, ", "), test.Alpha)}, nil
}

// taroneCount is the number of tests a Bonferroni correction at level
// alpha counts when test i cannot reach a p-value below least[i]: the
// least K ≥ 1 for which at most K have least[i] < alpha/K (Tarone 1990).
// It is at most the number of tests, and each test counted is one with
// least[i] < alpha/K.
func taroneCount(least []float64, alpha float64) int {
	for k := 1; ; k++ {
		m := 0
		for _, p := range least {
			if p < alpha/float64(k) {
				m++
			}
		}
		if m <= k {
			return k
		}
	}
}

// detectBaselines fits the baselines on d.Train and adds their rows, with
// their conformal tests calibrated on d.OODCal when it is given.
func detectBaselines(ctx context.Context, d OODDetection, t *OODTable, ev ood.Evaluation) ([]string, error) {
	var warnings []string
	tr, calB := d.Train, d.OODCal
	// The baselines' inputs against their training features: the logits
	// (and activations) of one classifier, and the calibration inputs
	// held out from what the baselines were fitted on.
	inputs := append([]*bundle.Bundle{ev.ID, calB}, ev.OOD...)
	names := append([]string{d.IDName, d.OODCalName}, ev.Names...)
	for i, b := range inputs {
		switch {
		case b == nil:
		case b.C > 0 && tr.C > 0 && b.C != tr.C:
			return nil, fmt.Errorf("%s: logits of %d classes, and %s has %d: the baselines read one classifier's logits", names[i], b.C, d.TrainName, tr.C)
		case b.A > 0 && tr.A > 0 && b.A != tr.A:
			return nil, fmt.Errorf("%s: %d activation summaries a row, and %s has %d: the baselines read one encoder's", names[i], b.A, d.TrainName, tr.A)
		}
	}
	// Inputs without the logits train has: the logit baselines (MSP,
	// Energy, ViM) are then unavailable on them, which their rows say;
	// this says which input to give them with.
	if tr.C > 0 {
		var none []string
		for i, b := range inputs {
			if b != nil && b.C == 0 && b != calB {
				none = append(none, names[i])
			}
		}
		if len(none) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: no logits, and %s has logits of %d classes: MSP, Energy and ViM are not available on inputs without them; give the classifier's logits with each (a file with a logits array; ccs.Bundle(x, logits=L) in Python)",
				strings.Join(none, ", "), d.TrainName, tr.C))
		}
		if calB != nil && calB.C == 0 {
			warnings = append(warnings, fmt.Sprintf("%s: no logits, and %s has logits of %d classes: MSP, Energy and ViM have no conformal test (their FAR and TAR columns are empty; their AUROC and FPR95 stand); give the classifier's logits with the calibration inputs for it",
				d.OODCalName, d.TrainName, tr.C))
		}
	}
	if err := trainLabelsCheck(tr, d.TrainName); err != nil {
		return nil, err
	}
	if w := otherLabels(ev.ID, d.IDName, tr, d.TrainName); w != "" {
		warnings = append(warnings, w)
	}
	if cl := d.Classifier; cl != nil {
		w, err := classifierCheck(cl, tr, d.ClassifierName, d.TrainName)
		if err != nil {
			return nil, err
		}
		if w != "" {
			warnings = append(warnings, w)
		}
	}
	// Rows of the training bundle given again, counted by value (a row
	// filter: "about"), but for the data's own exact copies, which the
	// splits of one ccs bundle run tell apart by their source rows.
	seen := bundle.NewRowFilter(tr)
	var sources *bundle.RowFilter
	if tr.Embeddings != "" && len(tr.Index) == tr.N {
		sources = bundle.NewSourceFilter(tr)
	}
	if calB != nil {
		if m := seen.Count(calB); m >= 2 && 10*m >= calB.N && !sources.OnlyCopies(tr.Embeddings, calB, m) {
			return nil, fmt.Errorf("%s: about %d of its %d inputs are rows of %s, which the baselines are fitted on: their scores are not a new input's, so a false-alarm rate calibrated on them would not hold; give held-out in-distribution inputs (ccs bundle's ood-cal.npz of the bundles %s is of)", d.OODCalName, m, calB.N, d.TrainName, d.TrainName)
		}
	}
	if m := seen.Count(ev.ID); m >= 2 && 10*m >= ev.ID.N && !sources.OnlyCopies(tr.Embeddings, ev.ID, m) {
		warnings = append(warnings, fmt.Sprintf("%s: about %d of its %d inputs are rows of %s, which the baselines are fitted on: the baselines' figures on them are optimistic, no test; give in-distribution inputs held out from it (ccs bundle's test.npz of the bundles %s is of)", d.IDName, m, ev.ID.N, d.TrainName, d.TrainName))
	}
	train := ood.SampleOf(tr)
	var shifted []baselineScores
	var steps ood.Steps
	if d.Steps != nil {
		steps = func(step string, done, total int) { d.Steps(step, done, total, "") }
	}
	dets := ood.Baselines(ood.BaselineOptions{Classifier: d.Classifier, Epochs: d.CiderEpochs, Seed: d.Seed, Progress: d.Progress, Steps: steps})
	done := func(i int) {
		if d.Steps != nil {
			d.Steps("baselines", i+1, len(dets), dets[i].Name())
		}
	}
	if d.Steps != nil {
		d.Steps("baselines", 0, len(dets), "")
	}
	for i, det := range dets {
		if _, ok := det.(*ood.CIDER); ok && d.CiderEpochs == 0 {
			if err := t.AddMeasured(det.Name(), nil, fmt.Errorf("%s: %w: left out (-cider-epochs 0)", det.Name(), ood.ErrUnavailable)); err != nil {
				return nil, err
			}
			done(i)
			continue
		}
		var r *ood.Measured
		var cal []float64
		start := time.Now()
		err := ood.Fit(ctx, det, train)
		if err == nil {
			score := ood.DetectorScore(det)
			if calB != nil {
				if cal, err = score(ctx, calB, nil); errors.Is(err, ood.ErrUnavailable) {
					// The calibration inputs lack what the score reads (their
					// logits, said above): its AUROC and FPR95 stand, without
					// the conformal test's columns.
					cal, err = nil, nil
				}
			}
			if err == nil {
				r, err = ev.Measure(ctx, score, cal)
			}
		}
		if err := t.AddMeasured(det.Name(), r, err); err != nil {
			if strings.HasPrefix(err.Error(), det.Name()+": ") { // "ViM: …" named already
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", det.Name(), err)
		}
		if r != nil {
			t.Rows[len(t.Rows)-1].Seconds = time.Since(start).Seconds()
		}
		if r != nil && r.Alarms != nil {
			shifted = append(shifted, baselineScores{det.Name(), cal, r.ID})
		}
		done(i)
	}
	w, err := baselineShiftAlarm(d, shifted)
	if err != nil {
		return nil, err
	}
	if w != "" {
		warnings = append(warnings, w)
	}
	return warnings, nil
}

// errNoInputs is DetectOOD's refusal of OOD samples without a name each.
var errNoInputs = errors.New("give each OOD sample its name")
