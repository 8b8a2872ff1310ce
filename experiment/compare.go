package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ccsets/ccs/internal/percent"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/train"
)

// CompareData are a user's bundles, as ccs bundle writes them: the fit,
// validation, calibration and test splits, and optionally an OOD sample and
// held-out in-distribution inputs that calibrate a per-input OOD test.
type CompareData struct {
	Name                string // for the title: the bundles' directory
	Fit, Val, Cal, Test *bundle.Bundle
	OOD, OODCal         *bundle.Bundle // nil when absent
	// LabelNames, for string labels (ccs bundle's manifest), name the
	// classes: label i is LabelNames[i].
	LabelNames []string
	// OneLabel, for the bundles of one label's rows alone (ccs bundle
	// -one-label; the manifest's one_label), names that label: the
	// guarantee is for anchors carrying it. "" otherwise.
	OneLabel string
	// Provenance says what data the bundles are (bundle.Manifest's
	// Provenance: the inputs' SHA-256, the seed, a split by blocks), for
	// the protocol line; "" where no manifest says.
	Provenance string
	// TestBlocks is the number of blocks the test split's rows are (ccs
	// bundle -blocks), 0 for rows split one by one: the resplits' column
	// is then warned of (BlocksResplits).
	TestBlocks int
}

// CompareConfig configures Compare. Zero fields take the defaults: 3
// seeds, α = 0.05, the embedding recipe (train.EmbeddingRecipe), 200
// resplits.
type CompareConfig struct {
	Config
	// Resplits is the number of random calibration/test halvings of the
	// test split behind each row's share of resplits below 1−α.
	Resplits int
	// Reference is the number of fit anchors, drawn once (seeded), in the
	// per-input OOD score's pool. 0 takes 2000, or every fit anchor of a
	// smaller fit split, or as many as a set file keeps at a large
	// dimension; more than the fit split is an error.
	Reference int
	// Sizes, when not nil, is a collection whose items each row's set
	// holds around the test split's first anchors are counted
	// (eval.SetSizes): the table's Size column.
	Sizes *CompareSizes
}

// CompareSizes is the collection behind Compare's Size column: its rows
// (N×D, as retrieve.NewCollection takes them), its name for the table, and
// how many of the test split's anchors, first first, to search around
// (0: eval.DefaultSizeAnchors; at most the test split's).
type CompareSizes struct {
	Rows    []float32
	N, D    int
	Name    string
	Anchors int
	// shared is the collection the ball and generalized-ball rows search
	// (safe for concurrent searches); each cell whose set is transformed
	// (retrieve.Transformable: a single-norm, an ellipsoid, a set behind a
	// head) transforms a view of its own.
	shared *retrieve.Collection
}

// reseeded says what a seed changes in a comparison: it refits the
// learned rows, and recalibrates every row unless the calibration takes
// no draw: pooled calibration (every positive), or a label bundle's
// (positives that are other anchors: disjoint pairs, fixed by the
// bundle).
func reseeded(cal *bundle.Bundle, m conformal.Mode, trains bool) string {
	refits := "each seed refits the learned rows; "
	if !trains {
		refits = "no row is trained; "
	}
	switch {
	case m == conformal.Pooled:
		return refits + "pooled calibration takes every positive, the same for every seed"
	case conformal.DisjointPairs(cal) != nil:
		return refits + "calibration takes disjoint pairs of these label bundles' anchors, the same for every seed"
	case !trains:
		return "each seed recalibrates"
	}
	return "each seed refits and recalibrates"
}

// testRoles are the splits a comparison's test split must not be: what
// its rows were fitted, validated or calibrated on.
func testRoles(data CompareData) []struct {
	role string
	b    *bundle.Bundle
} {
	return []struct {
		role string
		b    *bundle.Bundle
	}{{"calibration", data.Cal}, {"fit", data.Fit}, {"validation", data.Val}}
}

// sharedRows counts, exactly, the test split's anchors that are rows of
// the calibration, fit or validation split. It refuses a test split that
// is one of them — the same anchors, or every one of them a row of it
// (the split reordered or cut): its figures would be no test, and the
// table would not say so (a notebook's dict of splits with one key given
// twice). Where a tenth of its anchors or more are such rows — the test
// split of another bundling of the same embeddings (another seed or split
// shares), a data set's duplicated rows, or a split mixed into it — the
// warnings say so. (conformal.Set.OwnSplitWarning says as much to ccs
// evaluate.)
func sharedRows(data CompareData) (warnings []string, err error) {
	n := data.Test.N
	for _, s := range testRoles(data) {
		if s.b == nil {
			continue
		}
		switch m := bundle.SharedAnchors(data.Test, s.b); {
		case n > 0 && m == n && s.b.N == n && s.b.Digest() == data.Test.Digest():
			return nil, fmt.Errorf("the test split is the %s split (the same anchors): its figures would be no test of the sets; give the test split of the same bundles", s.role)
		case n > 0 && m == n:
			return nil, fmt.Errorf("every one of the test split's %d anchors is a row of the %s split (that split reordered, or a part of it): its figures would be no test of the sets; give the test split of the same bundles", n, s.role)
		case m >= 2 && 10*m >= n:
			warnings = append(warnings, fmt.Sprintf("%d of the test split's %d anchors are rows of the %s split — a split of another bundling of the same embeddings (another seed or split shares), rows the data set holds twice, or that split's rows mixed in: the figures are no clean test of the sets; compare the four splits of one ccs bundle run (one ccs.bundle call in Python)", m, n, s.role))
		}
	}
	return warnings, nil
}

// defaultReference is the reference pool Compare draws from fit when
// none is asked for: DefaultReference anchors, or every anchor of a
// smaller fit split, or as many as a set file keeps.
func defaultReference(fit *bundle.Bundle) int {
	return max(1, min(DefaultReference, fit.N, conformal.MaxReferenceValues/fit.D))
}

// CheckReference refuses a per-input OOD pool of n fit anchors that the
// fit split cannot give (more than it has) or that a set file cannot keep,
// saying how many would do; fit names the fit split and flag the option
// that sets n, in the message.
func CheckReference(n int, fit *bundle.Bundle, name, flag string) error {
	switch {
	case n > fit.N:
		return fmt.Errorf("%s has %d anchors; give at most %d, or leave %s out (%d, or every fit anchor of a smaller fit split)", name, fit.N, fit.N, flag, DefaultReference)
	case n*fit.D > conformal.MaxReferenceValues:
		return fmt.Errorf("%d anchors of dimension %d are %d values, more than a set file keeps (%d); give at most %d", n, fit.D, n*fit.D, conformal.MaxReferenceValues, conformal.MaxReferenceValues/fit.D)
	}
	return nil
}

// DefaultReference is the size of Compare's per-input OOD reference pool
// when CompareConfig.Reference is 0 and the fit split is as large.
const DefaultReference = 2000

func (c *CompareConfig) defaults() {
	c.Seeds = cmp.Or(c.Seeds, 3)
	c.Resplits = cmp.Or(c.Resplits, 200)
	if c.Train.SGD == (train.SGD{}) {
		c.Train.SGD = train.EmbeddingRecipe.SGD
	}
	c.Config.defaults()
}

// CompareRow is one method on the user's data, over seeds: the table's
// figures (Row), and beside them the worst class's coverage (with labels),
// the share of resplits of the test split whose coverage falls below 1−α,
// the time each fit took, and with an OOD sample the per-input OOD test's
// AUROC, FPR95 and false-alarm rate (percent).
type CompareRow struct {
	Row
	// WorstClass is the coverage of the class (or label) of lowest mean
	// coverage over seeds, its mean and spread over seeds: the class the
	// text's line below the table names for the row.
	WorstClass *eval.Summary `json:"worst_class_coverage,omitempty"`
	BelowShare *eval.Summary `json:"resplits_below,omitempty"`
	FitSeconds eval.Summary  `json:"fit_seconds"`
	OODAUROC   *eval.Summary `json:"ood_auroc,omitempty"`
	OODFPR95   *eval.Summary `json:"ood_fpr95,omitempty"`
	OODFAR     *eval.Summary `json:"ood_false_alarm_rate,omitempty"`
	// SetSize is the mean number of the Size column's collection items
	// the row's sets hold around the test anchors (items, over seeds).
	SetSize *eval.Summary `json:"set_size,omitempty"`
	// Classes are each test class's coverage (percent, over seeds), with
	// labels: the classes of CompareTable.MinClassAnchors test anchors or
	// more where the table sets it.
	Classes []ClassCoverage `json:"classes,omitempty"`
	// FewClasses are the other classes' (fewer test anchors than
	// MinClassAnchors), each with its count of test anchors: left out of
	// the worst class, whose figure they would make a step of a few
	// anchors, but not out of sight — a row can miss most of a rare
	// class's positives.
	FewClasses []ClassCoverage `json:"few_classes,omitempty"`
	// OODCurve is the OOD test's scores on seed 0: ROC and histograms.
	OODCurve *ScoreCurve `json:"ood_curve,omitempty"`
	// Set is the file name (without .json) under which a results
	// directory keeps the row's fitted, calibrated sets:
	// OutDir/seed-S/SET.json.
	Set string `json:"set,omitempty"`
}

// ClassCoverage is one class's coverage of its test positives (percent,
// over seeds).
type ClassCoverage struct {
	Label    int64        `json:"label"`
	Coverage eval.Summary `json:"coverage"`
	// Anchors is the class's count of test anchors (FewClasses'; 0
	// elsewhere).
	Anchors int `json:"anchors,omitempty"`
}

// CompareTable is the paper's Table 1 for a user's data.
type CompareTable struct {
	Title  string  `json:"title"`
	Config string  `json:"config"`
	Alpha  float64 `json:"alpha"`
	Seeds  int     `json:"seeds,omitempty"` // one: the text shows each mean alone
	// OODCal is the number of held-out ID inputs that calibrate the
	// per-input OOD test; 0: none.
	OODCal int `json:"ood_cal,omitempty"`
	// Calibration is the calibration mode ("one-per-anchor", "pac", …;
	// empty in documents made before it was kept: one-per-anchor), with
	// PAC's δ: what the footnote says the coverage promises.
	Calibration string       `json:"calibration,omitempty"`
	Delta       float64      `json:"delta,omitempty"`
	Rows        []CompareRow `json:"rows"`
	Warnings    []string     `json:"warnings,omitempty"`
	// LabelNames, for string labels, name the classes of the rows'
	// Classes: label i is LabelNames[i].
	LabelNames []string `json:"label_names,omitempty"`
	// SizeItems is the number of items of the collection behind the rows'
	// SetSize; 0 without one.
	SizeItems int `json:"size_items,omitempty"`
	// ByLabel says the test split holds several labels a row: the rows'
	// Classes and WorstClass are then labels' — each label's coverage of
	// the positives that share it, among labels of eval.MinLabelPositives
	// positives or more (all where none has that many) — and LabelNames
	// name them.
	ByLabel bool `json:"by_label,omitempty"`
	// MinClassAnchors, when not 0, is the fewest test anchors of the
	// classes the rows' Classes and WorstClass keep: a long tail's
	// classes of a few anchors each are left out of them
	// (eval.MinClassAnchors).
	MinClassAnchors int `json:"min_class_anchors,omitempty"`
	// OneLabel names the label whose rows alone the bundles hold (ccs
	// bundle -one-label; CompareData.OneLabel): every anchor carries it,
	// and the coverage, its guarantee, is that label's. "" otherwise.
	OneLabel string `json:"one_label,omitempty"`
}

// wholeSpaceClasses is the part of conformal.CheckClasses's refusal that
// names the classes too small (`class "yak" has 6 disjoint calibration
// pairs (…)`, and "; 3 more classes have too few too: …"), without the
// conformal reason between them, which the rows' own warnings give.
func wholeSpaceClasses(refusal string) string {
	head, rest, ok := strings.Cut(refusal, ": conformal: ")
	if !ok {
		return refusal
	}
	if m := moreTooFew.FindString(rest); m != "" {
		return head + m
	}
	return head
}

// moreTooFew matches conformal's count of the other classes too small.
var moreTooFew = regexp.MustCompile(`; \d+ more class(es have| has) too few too: .*$`)

// untrainedWarning says that the learned rows named kept their initial
// geometry, and why that may be: their epoch-0 validation exclusions lie
// in lo…hi (fractions; known false where some cell did not keep it).
// Below 90% the initial set is far from excluding every negative, so the
// far-negatives reason does not apply.
func untrainedWarning(rows []string, lo, hi float64, known bool) string {
	if known && hi < 0.9 {
		return fmt.Sprintf("%s kept the initial geometry at every seed: no epoch's validation exclusion beat epoch 0's (%s), so these rows measure untrained sets (the checkpoint is chosen on validation exclusion, a Vol row's too; a larger learning rate, another recipe or more patience may train them, and where ccs bundle warned that the positives are no closer to their anchors than the negatives, the embeddings are the cause: docs/your-data.md)",
			strings.Join(rows, ", "), percentRange(lo, hi))
	}
	return fmt.Sprintf("%s kept the initial geometry at every seed: no epoch's validation exclusion beat epoch 0's, so these rows measure untrained sets (the checkpoint is chosen on validation exclusion, a Vol row's too: where the initial set already excludes the validation negatives, a smaller volume at the same exclusion is not kept; nearer negatives, docs/your-data.md, give training something to choose by)",
		strings.Join(rows, ", "))
}

// percentRange writes fractions lo…hi as percentages: "0.7%" or
// "0.7–3.1%".
func percentRange(lo, hi float64) string {
	if fmt.Sprintf("%.1f", 100*lo) == fmt.Sprintf("%.1f", 100*hi) {
		return fmt.Sprintf("%.1f%%", 100*lo)
	}
	return fmt.Sprintf("%.1f–%.1f%%", 100*lo, 100*hi)
}

// compareCell is what each (seed, method) run of Compare measures beyond
// the test split's figures.
type compareCell struct {
	Classes    []ClassCoverage `json:"classes,omitempty"` // each class's coverage (fractions, one seed)
	Curve      *ScoreCurve     `json:"ood_curve,omitempty"`
	WorstClass *float64        `json:"worst_class,omitempty"` // fraction
	Below      *float64        `json:"below,omitempty"`       // fraction of resplits
	FitSeconds float64         `json:"fit_seconds"`
	AUROC      *float64        `json:"ood_auroc,omitempty"` // fractions
	FPR95      *float64        `json:"ood_fpr95,omitempty"`
	FAR        *float64        `json:"ood_far,omitempty"`
	// FARTail is the chance that ID test inputs exchangeable with the
	// held-out inputs that calibrated the per-input test would be flagged
	// as often as these were (conformal.ExchangeableTail, over that draw
	// and the inputs).
	FARTail *float64 `json:"ood_far_tail,omitempty"`
	SetSize *float64 `json:"set_size,omitempty"` // mean items of the Size column's collection
	// NoResplits says why the resplits were left out: halves of the test
	// split too small for α (conformal.ErrTooFewCalibration).
	NoResplits string `json:"no_resplits,omitempty"`
	// Untrained says that a learned row's training kept its initial
	// geometry: no epoch's validation exclusion beat epoch 0's.
	Untrained bool `json:"untrained,omitempty"`
	// InitialExclusion is an untrained row's validation exclusion, epoch
	// 0's (a fraction; nil for a trained row, and in cells from before it
	// was kept).
	InitialExclusion *float64 `json:"initial_val_exclusion,omitempty"`
	// ClassShort are the test classes whose coverage falls short of 1 − α
	// beyond chance under this cell's set (ClassShortfalls' test: each
	// class's tail times the classes checked, below ShiftTail); none for
	// a class-conditional set or an unlabelled test split.
	ClassShort []conformal.ClassCheck `json:"class_short,omitempty"`
	// Warnings are the set's own (conformal.Set.Warnings: a class at rank
	// n, pairs left out to keep each class's share, a projected volume…),
	// less the pooled calibration's, which the table gives once.
	Warnings []string `json:"warnings,omitempty"`
}

// WithKeptRows is asked and, in the order of from, every other method of
// from whose comparison cells c keeps for each of seeds seeds under c's
// key, and that data can run (the learned rows need fit and validation
// bundles): the rows a results directory holds from earlier runs of the
// same comparison with other -rows. kept names those others.
func WithKeptRows(c *Cells, data CompareData, asked, from []Method, seeds int) (all []Method, kept []string) {
	for _, m := range from {
		if slices.ContainsFunc(asked, func(a Method) bool { return a.File == m.File }) {
			all = append(all, m)
			continue
		}
		if c == nil || m.Trains && (data.Fit == nil || data.Val == nil) || m.NeedsFit && data.Fit == nil {
			continue
		}
		complete := seeds > 0
		for s := range seeds {
			complete = complete && c.Has("compare", m.File, uint64(s), m.Trains)
		}
		if complete {
			all, kept = append(all, m), append(kept, m.Name)
		}
	}
	for _, a := range asked { // not among from: kept as asked
		if !slices.ContainsFunc(all, func(m Method) bool { return m.File == a.File }) {
			all = append(all, a)
		}
	}
	return all, kept
}

// CompareKept is the comparison a results directory keeps after a run of
// asked (cfg.Cells, opened on dir with the code version code): asked and
// the rows earlier runs with other rows left cells for (WithKeptRows), all
// read back; nil when there are none of those. kept names them.
func CompareKept(ctx context.Context, data CompareData, cfg CompareConfig, asked []Method, dir, code string) (t *CompareTable, kept []string, err error) {
	all, kept := WithKeptRows(cfg.Cells, data, asked, ForCompare(RowSets["all+infonce"]()), cfg.Seeds)
	if len(kept) == 0 {
		return nil, nil, nil
	}
	// Counted apart from the run's own cells; their sets are there from
	// their runs.
	if cfg.Cells, err = NewCompareCells(dir, cfg, data, code); err != nil {
		return nil, nil, err
	}
	cfg.OutDir = ""
	if t, err = Compare(ctx, data, cfg, all, nil); err != nil {
		return nil, nil, err
	}
	return t, kept, nil
}

// Compare runs methods on the user's bundles over cfg.Seeds seeds. The
// splits are those of the bundles (ccs bundle drew them once, seeded); each
// seed refits the learned rows (the training's seed) and recalibrates every
// row (which positive of each calibration anchor scores, and the
// ellipsoid's halving), so the spread over seeds is the method's, not the
// split's. Each row is evaluated on the test split: coverage, exclusion,
// LogVol/d, with labels the worst class's coverage, the share of
// cfg.Resplits random halvings of the test split (recalibrated on one half,
// tested on the other) that cover less than 1−α, and with an OOD sample the
// per-input OOD test (the k-th nearest fit anchor under the set's score;
// its false-alarm rate calibrated on the held-out ID inputs when given).
func Compare(ctx context.Context, data CompareData, cfg CompareConfig, methods []Method, progress func(done, total int, what string)) (*CompareTable, error) {
	cfg.defaults()
	if err := conformal.CheckAlpha(cfg.Alpha); err != nil {
		return nil, err
	}
	if data.Cal == nil || data.Test == nil {
		return nil, fmt.Errorf("experiment: compare needs calibration and test bundles")
	}
	sharedWarnings, err := sharedRows(data)
	if err != nil {
		return nil, err
	}
	trains := slices.ContainsFunc(methods, func(m Method) bool { return m.Trains })
	if trains && (data.Fit == nil || data.Val == nil) {
		return nil, fmt.Errorf("experiment: the learned rows need fit and validation bundles")
	}
	heads := slices.ContainsFunc(methods, func(m Method) bool { return m.Head })
	if cfg.HeadDim < 0 || (cfg.HeadDim > 0 && !heads) {
		return nil, fmt.Errorf("experiment: head of %d outputs: want a positive dimension, with rows that train the InfoNCE head", cfg.HeadDim)
	}
	if cfg.HeadDim > train.MaxHeadWiden*data.Test.D {
		return nil, fmt.Errorf("experiment: a head of %d outputs over %d-dimensional embeddings: at most %d (%d× their dimension)", cfg.HeadDim, data.Test.D, train.MaxHeadWiden*data.Test.D, train.MaxHeadWiden)
	}
	needsFit := slices.ContainsFunc(methods, func(m Method) bool { return m.NeedsFit })
	if needsFit && data.Fit == nil {
		return nil, fmt.Errorf("experiment: the ellipsoid's Σ needs the fit bundle")
	}
	if cfg.Reference < 0 {
		return nil, fmt.Errorf("experiment: reference pool of %d fit anchors: want at least 1 (0: the default)", cfg.Reference)
	}
	if data.OOD != nil && data.Fit != nil {
		switch {
		case cfg.Reference == 0:
			cfg.Reference = defaultReference(data.Fit)
		case cfg.Reference > data.Fit.N:
			return nil, fmt.Errorf("experiment: reference pool of %d fit anchors: the fit split has %d", cfg.Reference, data.Fit.N)
		case cfg.Reference*data.Fit.D > conformal.MaxReferenceValues:
			// Refused now, not by each row's set file after its training.
			return nil, fmt.Errorf("experiment: reference pool of %d fit anchors of dimension %d: %d values, more than a set file keeps (%d): at most %d anchors",
				cfg.Reference, data.Fit.D, cfg.Reference*data.Fit.D, conformal.MaxReferenceValues, conformal.MaxReferenceValues/data.Fit.D)
		}
	}
	var wholeSpace string // classes too small for a threshold, kept as the whole space
	if cfg.Calibration == conformal.Class {
		// Every row would fail on it, the first after its training.
		switch err := conformal.CheckClasses(data.Cal, cfg.Alpha, cfg.Delta, data.LabelNames); {
		case errors.Is(err, conformal.ErrTooFewCalibration) && cfg.AllowInfinite:
			wholeSpace = err.Error()
		case errors.Is(err, conformal.ErrTooFewCalibration):
			return nil, fmt.Errorf("experiment: class-conditional calibration: %w; every class needs that many: calibrate over every class (-calibration one; calibration=\"one\" in Python), take a larger α, bundle with a larger calibration share, hold the small classes out of the bundles as OOD inputs (ccs bundle -ood-classes NAME,…; ood_classes= in Python), or keep their sets the whole space (-allow-infinite; allow_infinite=True)", err)
		case err != nil:
			return nil, fmt.Errorf("experiment: %w", err)
		}
	}
	if z := cfg.Sizes; z != nil {
		if z.D != data.Test.D {
			return nil, fmt.Errorf("experiment: the Size column's collection %s has dimension %d, the bundles %d", z.Name, z.D, data.Test.D)
		}
		if z.Anchors < 0 {
			return nil, fmt.Errorf("experiment: the Size column: %d test anchors: want ≥ 0 (0: %d)", z.Anchors, eval.DefaultSizeAnchors)
		}
		c, err := retrieve.NewCollection(z.Rows, z.D, nil)
		if err != nil {
			return nil, fmt.Errorf("experiment: the Size column's collection %s: %w", z.Name, err)
		}
		sizes := *z
		sizes.shared, sizes.Anchors = c, min(cmp.Or(z.Anchors, eval.DefaultSizeAnchors), data.Test.N)
		cfg.Sizes = &sizes
	}
	cfg.compare = &cfg
	cfg.compareData = &data
	shared := new(train.Rows) // every seed trains on the same bundles
	results, err := runTable(ctx, cfg.Config, "compare", methods, func(seed uint64, trains bool, workers int) (*Splits, error) {
		return &Splits{Fit: data.Fit, Val: data.Val, Cal: data.Cal, Test: data.Test, Workers: workers, Rows: shared}, nil
	}, progress)
	if err != nil {
		return nil, err
	}
	t := &CompareTable{
		Title: "Your data: " + data.Name, Alpha: cfg.Alpha, Seeds: cfg.Seeds, LabelNames: data.LabelNames,
		ByLabel:     data.Test.SeveralLabels(),
		OneLabel:    data.OneLabel,
		Calibration: cfg.Calibration.String(), Delta: cfg.Delta,
		Config: fmt.Sprintf("%d calibration and %d test anchors, d=%d, k=%d, α=%v, %s (the splits are the bundles'; %s), calibration %v; resplits: %d halvings of the test split",
			data.Cal.N, data.Test.N, data.Test.D, data.Test.K, cfg.Alpha, seedRange(cfg.Seeds), reseeded(data.Cal, cfg.Calibration, trains), cfg.calibrationName(), cfg.Resplits),
	}
	if trains {
		t.Config = fmt.Sprintf("%d fit, %d validation, ", nOf(data.Fit), nOf(data.Val)) + t.Config
		t.Config += "; " + recipeLine(cfg.Train.WithDefaults(), recipeShown{optimiser: true, objective: true})
	}
	if heads && cfg.HeadDim > 0 && cfg.HeadDim != data.Test.D {
		t.Config += fmt.Sprintf("; the InfoNCE rows' heads map the %d dimensions to %d, their LogVol/d per output", data.Test.D, cfg.HeadDim)
		if cfg.HeadDim > data.Test.D {
			t.Warnings = append(t.Warnings, "-head-dim: "+train.WideHeadWarning(cfg.HeadDim, data.Test.D))
		}
	}
	if needsFit {
		t.Config += fmt.Sprintf("; the ellipsoid's Σ from the %d fit anchors' differences, its threshold from the whole calibration split", data.Fit.N)
	}
	if data.Provenance != "" {
		t.Config += "; data: " + data.Provenance
	}
	t.Warnings = append(t.Warnings, sharedWarnings...)
	if cfg.Shift {
		note := ""
		if c, err := bundle.MeanOffset(data.Fit); err == nil {
			note = ": " + bundle.ShiftNote(data.Fit, c)
		}
		t.Config += fmt.Sprintf("; every set centred at anchor + c, the %d fit anchors' mean offset of positive − anchor (-shift)%s", data.Fit.N, note)
	}
	if data.OOD != nil && cfg.Calibration == conformal.Class {
		t.Warnings = append(t.Warnings, fmt.Sprintf("the OOD columns are left out although the bundles hold %d OOD inputs: the per-input OOD score divides an input's score by the set's one threshold, and class-conditional sets have one per class, none without the input's class; compare with -calibration one or pac for them", data.OOD.N))
	} else if data.OOD != nil {
		t.Config += fmt.Sprintf("; OOD: %d inputs, per-input score against %d fit anchors", data.OOD.N, cfg.Reference)
		if data.OODCal != nil {
			t.OODCal = data.OODCal.N
			t.Config += fmt.Sprintf(", calibrated on %d held-out ID inputs at α_ood = %v", data.OODCal.N, ood.DefaultAlpha)
		}
	}
	if z := cfg.Sizes; z != nil {
		t.SizeItems = z.N
		t.Config += fmt.Sprintf("; Size: the items of %s (%d) each set holds around the first %d test anchors, an anchor's own counted where the collection holds it", z.Name, z.N, z.Anchors)
		if cfg.Calibration == conformal.Class {
			t.Config += ", each anchor's set at its class's threshold"
		}
	}
	if cfg.Calibration == conformal.Pooled {
		t.Warnings = append(t.Warnings, "pooled calibration: coverage is approximate, not guaranteed")
	}
	if wholeSpace != "" {
		t.Warnings = append(t.Warnings, fmt.Sprintf("-allow-infinite: %s — each such class's set is the whole space in every row (the rows' warnings name each): its test anchors' positives are all covered and their negatives none excluded, which raises every row's coverage and lowers its exclusion alike, and LogVol/d is +Inf (a whole space has no finite volume): compare the rows by coverage, exclusion and the worst class (docs/calibration.md)", wholeSpaceClasses(wholeSpace)))
	}
	base := rows(methods, results)
	untrained, partly, lo, hi, known := untrainedRows(methods, results, base)
	var judged map[int64]bool
	if data.Test.Labels != nil && !t.ByLabel {
		var fewer int
		if judged, fewer = eval.JudgedClasses(data.Test.Labels, eval.MinClassAnchors); fewer > 0 {
			t.MinClassAnchors = eval.MinClassAnchors
		}
	}
	anchors := map[int64]int{}
	if judged != nil {
		for _, l := range data.Test.Labels {
			anchors[l]++
		}
	}
	summarized, noResplits := compareRows(methods, results, base, judged, anchors)
	if !slices.ContainsFunc(summarized, func(r CompareRow) bool { return r.BelowShare != nil }) {
		// No row has the column (a class-conditional or PAC calibration's
		// table, or resplits left out): the protocol does not announce it.
		t.Config = strings.Replace(t.Config, fmt.Sprintf("; resplits: %d halvings of the test split", cfg.Resplits), "", 1)
	} else {
		for _, w := range []string{BlocksResplits("the test split", data.Test, data.TestBlocks), DividedBlockResplits("the test split", data.Test)} {
			if w != "" {
				t.Warnings = append(t.Warnings, w)
			}
		}
	}
	t.Rows = append(t.Rows, summarized...)
	// Every row's sets are calibrated on the calibration split: where it
	// is of unit norm, corpus rows that are not fall outside every set (a
	// corpus saved without its normalisation: Size 0.0 in every row).
	if z := cfg.Sizes; z != nil && z.shared != nil && conformal.UnitNorm(data.Cal) {
		if w := retrieve.UnitNormWarningOf(z.Name, z.shared, "the rows' sets were"); w != "" {
			t.Warnings = append(t.Warnings, w)
		}
	}
	if w := classShortWarning(results, base, data.Test); w != "" {
		t.Warnings = append(t.Warnings, w)
	}
	if len(untrained) > 0 {
		t.Warnings = append(t.Warnings, untrainedWarning(untrained, lo, hi, known))
	}
	if len(partly) > 0 {
		t.Warnings = append(t.Warnings, partlyUntrainedWarning(partly))
	}
	if noResplits != "" {
		t.Warnings = append(t.Warnings, "resplits left out: "+noResplits+" (a larger test split, or a larger -alpha, gives them)")
	}
	t.Warnings = append(t.Warnings, setWarnings(methods, results)...)
	if w := farWarning(methods, results, data.Test.N); w != "" {
		t.Warnings = append(t.Warnings, w)
	}
	return t, nil
}

// compareRows are the table's rows over seeds: base (the table's figures)
// with each method's cells' columns summarised, and the first reason a
// cell gave for leaving its resplits out ("" for none). judged, when not
// nil, are the classes whose coverage the rows' Classes keep (the Worst
// class column's and line's).
// anchors counts each class's test anchors (for FewClasses).
func compareRows(methods []Method, results [][]cellResult, base []Row, judged map[int64]bool, anchors map[int64]int) (out []CompareRow, noResplits string) {
	for m, r := range base {
		cr := CompareRow{Row: r, Set: methods[m].File}
		var worst, below, secs, auroc, fpr, far, size []float64
		for s := range results {
			c := results[s][m].Compare
			if c == nil {
				continue
			}
			secs = append(secs, c.FitSeconds)
			noResplits = cmp.Or(noResplits, c.NoResplits)
			for _, v := range []struct {
				p   *float64
				dst *[]float64
			}{{c.WorstClass, &worst}, {c.Below, &below}, {c.AUROC, &auroc}, {c.FPR95, &fpr}, {c.FAR, &far}} {
				if v.p != nil {
					*v.dst = append(*v.dst, 100**v.p)
				}
			}
			if c.SetSize != nil {
				size = append(size, *c.SetSize) // items, not a fraction
			}
		}
		cr.FitSeconds = eval.Summarize(secs)
		summary := func(x []float64) *eval.Summary {
			if len(x) == 0 {
				return nil
			}
			s := eval.Summarize(x)
			return &s
		}
		cr.WorstClass, cr.BelowShare = summary(worst), summary(below)
		cr.OODAUROC, cr.OODFPR95, cr.OODFAR = summary(auroc), summary(fpr), summary(far)
		cr.SetSize = summary(size)
		byClass := map[int64][]float64{}
		var labels []int64
		for s := range results {
			c := results[s][m].Compare
			if c == nil {
				continue
			}
			if s == 0 {
				cr.OODCurve = c.Curve
			}
			for _, k := range c.Classes {
				if _, ok := byClass[k.Label]; !ok {
					labels = append(labels, k.Label)
				}
				byClass[k.Label] = append(byClass[k.Label], 100*k.Coverage.Mean)
			}
		}
		for _, l := range labels {
			c := ClassCoverage{Label: l, Coverage: eval.Summarize(byClass[l])}
			if judged != nil && !judged[l] {
				c.Anchors = anchors[l]
				cr.FewClasses = append(cr.FewClasses, c)
				continue
			}
			cr.Classes = append(cr.Classes, c)
		}
		if w := worstOnAverage(cr.Classes); w != nil {
			// The column is the class the line below the table names: the
			// lowest mean over seeds, with its spread over seeds (the mean
			// of each seed's worst can be another class's, and lower).
			cr.WorstClass = &w.Coverage
		}
		out = append(out, cr)
	}
	return out, noResplits
}

// worstOnAverage is the class of lowest mean coverage over seeds, the
// first such; nil for none.
func worstOnAverage(classes []ClassCoverage) *ClassCoverage {
	if len(classes) == 0 {
		return nil
	}
	w := classes[0]
	for _, c := range classes[1:] {
		if c.Coverage.Mean < w.Coverage.Mean {
			w = c
		}
	}
	return &w
}

// untrainedRows names the learned rows whose fits kept their initial
// geometry: at every seed (untrained, with their epoch-0 validation
// exclusions' range lo…hi, known where every cell kept it), or at some
// ("Generalized (Neg,Vol) at seeds 0 and 2").
func untrainedRows(methods []Method, results [][]cellResult, base []Row) (untrained, partly []string, lo, hi float64, known bool) {
	lo, hi, known = math.Inf(1), math.Inf(-1), true
	for m, r := range base {
		var at []string // the seeds whose fit kept the initial geometry
		for s, seed := range results {
			if c := seed[m].Compare; methods[m].Trains && c != nil && c.Untrained {
				at = append(at, strconv.Itoa(s))
			}
		}
		switch {
		case len(at) > 0 && len(at) == len(results):
			untrained = append(untrained, r.Method)
			for _, seed := range results {
				if e := seed[m].Compare.InitialExclusion; e != nil {
					lo, hi = min(lo, *e), max(hi, *e)
				} else {
					known = false
				}
			}
		case len(at) == 1:
			partly = append(partly, r.Method+" at seed "+at[0])
		case len(at) > 1:
			partly = append(partly, r.Method+" at seeds "+strings.Join(at[:len(at)-1], ", ")+" and "+at[len(at)-1])
		}
	}
	return untrained, partly, lo, hi, known
}

// partlyUntrainedWarning says that the rows named kept their initial
// geometry at the seeds named.
func partlyUntrainedWarning(partly []string) string {
	return strings.Join(partly, "; ") + " kept the initial geometry: no epoch's validation exclusion beat epoch 0's, so those seeds' sets are untrained, and the row's mean and spread mix them with the trained seeds' (a larger learning rate, another recipe or more patience may train them)"
}

// farWarning names the rows whose per-input OOD test flagged more of the
// ID test inputs than α_ood by more than chance allows, at some seed (a
// tail below ShiftTail; a user weighing a FAR of 8.2% against 5% had only
// the footnote's standard deviation to judge it by); "" when none did.
// Such a row's sets score the test inputs otherwise than the held-out ones
// that calibrated the test: its false-alarm guarantee does not hold for
// them.
func farWarning(methods []Method, results [][]cellResult, m int) string {
	var parts []string
	for i, meth := range methods {
		worst, at := 1.0, -1
		for s := range results {
			if c := results[s][i].Compare; c != nil && c.FARTail != nil && *c.FARTail < worst {
				worst, at = *c.FARTail, s
			}
		}
		if at >= 0 && worst < ShiftTail {
			parts = append(parts, fmt.Sprintf("%s (seed %d: %.1f%% of the %d, probability %.2g)", meth.Name, at, 100**results[at][i].Compare.FAR, m, worst))
		}
	}
	if parts == nil {
		return ""
	}
	return fmt.Sprintf("FAR above α_ood = %v beyond chance — %s — where ID inputs drawn as the held-out inputs that calibrated the test were would be flagged that often with the probability given: those rows' sets score the test split otherwise than the ood-cal inputs, and their false-alarm guarantee does not hold for it (docs/ood.md)",
		ood.DefaultAlpha, strings.Join(parts, "; "))
}

// setWarnings are the sets' own warnings, each once: after the rows that
// gave it, and, where some seeds' sets did not, at how many seeds.
func setWarnings(methods []Method, results [][]cellResult) []string {
	type group struct {
		text  string
		seeds int
		rows  []string
	}
	var groups []*group
	for m := range methods {
		count := map[string]int{}
		var order []string
		for s := range results {
			c := results[s][m].Compare
			if c == nil {
				continue
			}
			for _, w := range c.Warnings {
				if count[w] == 0 {
					order = append(order, w)
				}
				count[w]++
			}
		}
		for _, w := range order {
			i := slices.IndexFunc(groups, func(g *group) bool { return g.text == w && g.seeds == count[w] })
			if i < 0 {
				groups = append(groups, &group{text: w, seeds: count[w]})
				i = len(groups) - 1
			}
			groups[i].rows = append(groups[i].rows, methods[m].Name)
		}
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		at := ""
		if g.seeds < len(results) {
			at = fmt.Sprintf(", at %d of %d seeds", g.seeds, len(results))
		}
		out[i] = fmt.Sprintf("%s%s: %s", strings.Join(g.rows, ", "), at, g.text)
	}
	return out
}

func nOf(b *bundle.Bundle) int {
	if b == nil {
		return 0
	}
	return b.N
}

// percentPrecision is the decimals a percentage v is shown with: one, or
// up to three where one would round it to 100.0 or 0.0 that it is not (a
// RAG user's exclusion of 99.966% read 100.0%).
func percentPrecision(v float64) int {
	p := 1
	for ; p < 3; p++ {
		if s := strconv.FormatFloat(v, 'f', p, 64); (v >= 100 || s != strconv.FormatFloat(100, 'f', p, 64)) && (v <= 0 || strings.Trim(s, "0.") != "") {
			break
		}
	}
	return p
}

// sizePrecision is the decimals a mean set size v is shown with: one
// under 10 items (a mean of 1.70 passages shown as 2 overstated it by a
// sixth), none above.
func sizePrecision(v float64) int {
	if v < 10 {
		return 1
	}
	return 0
}

// measureCompare is what Compare adds to a run: the worst class, the
// resplits (both from the test split's scores under set, scored), and the
// per-input OOD test.
//
// served, for seed 0 with an OOD calibration, is set as a service would
// load it to answer /ood as the table measured: the fit anchors' pool and
// the held-out inputs' scores (seed 0 alone: a pool of 2 000 rows is
// megabytes of JSON in every file).
func measureCompare(ctx context.Context, cfg *CompareConfig, data *CompareData, set *conformal.Set, sp *Splits, scored *eval.Scored, row string, seed uint64, fit time.Duration) (c *compareCell, served *conformal.Set, err error) {
	c = &compareCell{FitSeconds: fit.Seconds()}
	if !sp.Test.SeveralLabels() {
		checks, err := classChecks(set, sp.Test, data.LabelNames)
		if err != nil {
			return nil, nil, fmt.Errorf("the classes' coverage check: %w", err)
		}
		c.ClassShort = shortClasses(checks)
	}
	for _, w := range set.Warnings() {
		if set.Calibration.Mode == conformal.Pooled && strings.HasPrefix(w, "pooled calibration") {
			continue
		}
		c.Warnings = append(c.Warnings, w)
	}
	if set.Fit != nil && set.Fit.Training != nil {
		var rec train.Record
		if err := json.Unmarshal(set.Fit.Training, &rec); err != nil {
			return nil, nil, fmt.Errorf("the set's training record: %w", err)
		}
		if c.Untrained = rec.BestEpoch == 0; c.Untrained {
			c.InitialExclusion = &rec.ValExclusion
		}
	}
	if sp.Test.SeveralLabels() && !set.ClassConditional() {
		labels, err := scored.ByLabel()
		if err != nil {
			return nil, nil, err
		}
		// The labels judged, the same every seed: those of
		// MinLabelPositives positives or more, or all where none has
		// that many (WorstLabel's fewer is then 0).
		w, fewer := eval.WorstLabel(labels, eval.MinLabelPositives)
		c.WorstClass = &w.Coverage
		for _, l := range labels {
			if l.Positives >= eval.MinLabelPositives || fewer == 0 {
				c.Classes = append(c.Classes, ClassCoverage{Label: l.Label, Coverage: eval.Summary{Mean: l.Coverage, N: 1}})
			}
		}
	}
	if sp.Test.Labels != nil {
		_, classes, err := scored.ByClass()
		if err != nil {
			return nil, nil, err
		}
		w := eval.Worst(classes).Coverage
		c.WorstClass = &w
		for _, k := range classes {
			c.Classes = append(c.Classes, ClassCoverage{Label: k.Label, Coverage: eval.Summary{Mean: k.Coverage, N: 1}})
		}
	}
	if set.OneThreshold() == nil {
		r, err := scored.Resplits(cfg.Resplits, 0.5, seed)
		var few *conformal.TooFewError
		switch {
		case errors.As(err, &few):
			// A small test split: its halves calibrate the whole space. The
			// table's other figures stand; this column is left out, saying
			// why.
			c.NoResplits = fmt.Sprintf("each resplit calibrates on half of the %d test anchors, and %s", sp.Test.N, few.Reason())
		case err != nil:
			return nil, nil, fmt.Errorf("resplits: %w", err)
		default:
			c.Below = &r.BelowShare
		}
	}
	if cfg.Sizes != nil {
		var progress func(done, total int)
		if f := cfg.SizeProgress; f != nil {
			progress = func(done, total int) { f(row, seed, done, total) }
		}
		z, err := cellSizes(ctx, cfg.Sizes, set, sp.Test, progress)
		if err != nil {
			return nil, nil, fmt.Errorf("set sizes on %s: %w", cfg.Sizes.Name, err)
		}
		c.SetSize = &z.Mean
	}
	if data.OOD != nil && set.OneThreshold() == nil && sp.Fit != nil {
		pool, err := conformal.NewReference(sp.Fit, cfg.Reference, 0, "fit anchors")
		if err != nil {
			return nil, nil, err
		}
		near, err := ood.NewNearest(set, pool.Rows, 1)
		if err != nil {
			return nil, nil, err
		}
		score, err := ood.CCS(set, ood.PerInput, near)
		if err != nil {
			return nil, nil, err
		}
		var cal []float64
		if data.OODCal != nil {
			if cal, err = score(ctx, data.OODCal, nil); err != nil {
				return nil, nil, err
			}
		}
		m, err := ood.Evaluation{ID: sp.Test, OOD: []*bundle.Bundle{data.OOD}, Names: []string{"ood"}}.Measure(ctx, score, cal)
		if err != nil {
			return nil, nil, fmt.Errorf("OOD: %w", err)
		}
		c.AUROC, c.FPR95 = &m.Metrics[0].AUROC, &m.Metrics[0].FPR95
		if seed == 0 {
			curve, err := NewScoreCurve("ood", m.ID, m.OOD[0])
			if err != nil {
				return nil, nil, err
			}
			c.Curve = &curve
		}
		if m.Alarms != nil {
			c.FAR = &m.Alarms.FAR
			n, flagged := len(cal), int(math.Round(m.Alarms.FAR*float64(len(m.ID))))
			tail := conformal.ExchangeableTail(flagged, len(m.ID), n, ood.Test{Alpha: ood.DefaultAlpha}.FlaggedRank(n))
			c.FARTail = &tail
		}
		if seed == 0 && cal != nil {
			s := *set
			s.Reference = pool
			if s.OOD, err = conformal.NewOODCalibration(1, cal, "held-out ID inputs (ood-cal)"); err != nil {
				return nil, nil, err
			}
			served = &s
		}
	}
	return c, served, nil
}

// cellSizes counts the items of z's collection set holds around the test
// split's first z.Anchors anchors: on the shared collection, or for a
// set retrieve transforms (a single-norm, an ellipsoid, a set behind a
// head) on a view of the same rows of its own, which
// eval.SetSizes transforms for set (the shared one is every cell's).
func cellSizes(ctx context.Context, z *CompareSizes, set *conformal.Set, test *bundle.Bundle, progress func(done, total int)) (eval.Sizes, error) {
	store := z.shared
	if retrieve.Transformable(set.Geometry) {
		view, err := retrieve.NewCollection(z.Rows, z.D, nil)
		if err != nil {
			return eval.Sizes{}, err
		}
		view.NoHalf = true // the transformed rows are scanned, not the compact copies
		store = view
	}
	return eval.SetSizes(ctx, set, test, store, z.Anchors, progress)
}

// WriteText renders the comparison: coverage, exclusion and LogVol/d as
// the paper's Table 1, then the worst class's coverage, the share of
// resplits below 1−α, the OOD test's figures when measured, and the fit
// time, each mean ± std over seeds (the mean alone for one seed: there is
// no spread to show).
// Grid is the table's cells as WriteText lays them out — its header,
// then a row a method, each figure "mean ± spread over seeds" (the mean
// alone where every seed gave it alike, which same then reports) — for
// WriteText, WriteMarkdown and WriteLaTeX.
func (t *CompareTable) Grid() (grid [][]string, same bool) {
	has := func(f func(CompareRow) bool) bool { return slices.ContainsFunc(t.Rows, f) }
	worst, below := has(func(r CompareRow) bool { return r.WorstClass != nil }), has(func(r CompareRow) bool { return r.BelowShare != nil })
	oodCols, far := has(func(r CompareRow) bool { return r.OODAUROC != nil }), has(func(r CompareRow) bool { return r.OODFAR != nil })
	size := has(func(r CompareRow) bool { return r.SetSize != nil })
	head := []string{"Method", "Coverage", "Exclusion↑", "LogVol/d↓"}
	if size {
		head = append(head, fmt.Sprintf("Size↓ of %d", t.SizeItems))
	}
	if worst && t.ByLabel {
		head = append(head, "Worst label")
	} else if worst {
		head = append(head, "Worst class")
	}
	if below {
		head = append(head, "Resplits < "+percentOf(1-t.Alpha))
	}
	if oodCols {
		head = append(head, "OOD AUROC↑", "OOD FPR95↓")
	}
	if far {
		head = append(head, fmt.Sprintf("FAR@%v", ood.DefaultAlpha))
	}
	head = append(head, "Fit s")
	// A figure every seed gave alike (a baseline on label bundles, whose
	// calibration takes no draw) has no ± — "± 0.0" would read as a
	// certainty the seeds do not measure —, and a note says so.
	// So has one whose spread rounds to 0 at the digits shown ("86.5 ±
	// 0.0%" beside a footnote saying such figures have none).
	alike := func(s *eval.Summary, digits int) bool {
		zero := fmt.Sprintf("%.*f", digits, s.Std) == fmt.Sprintf("%.*f", digits, 0.0) // as printed: 0.5 at no decimals is "0"
		if t.Seeds > 1 && zero {
			same = true
		}
		return t.Seeds == 1 || zero
	}
	pct := func(s *eval.Summary) string {
		if s == nil {
			return "—"
		}
		p := percentPrecision(s.Mean)
		if alike(s, p) {
			return fmt.Sprintf("%.*f%%", p, s.Mean)
		}
		return fmt.Sprintf("%.*f ± %.*f%%", p, s.Mean, p, s.Std)
	}
	grid = [][]string{head}
	for _, r := range t.Rows {
		logVol := fmt.Sprintf("%.2f ± %.2f", r.LogVolPerDim.Mean, r.LogVolPerDim.Std)
		if alike(&r.LogVolPerDim, 2) {
			logVol = fmt.Sprintf("%.2f", r.LogVolPerDim.Mean)
		}
		cells := []string{r.Method, pct(&r.Coverage), pct(&r.Exclusion), logVol}
		if size {
			switch z := r.SetSize; {
			case z == nil:
				cells = append(cells, "—")
			case alike(z, sizePrecision(z.Mean)):
				cells = append(cells, fmt.Sprintf("%.*f", sizePrecision(z.Mean), z.Mean))
			default:
				p := sizePrecision(z.Mean)
				cells = append(cells, fmt.Sprintf("%.*f ± %.*f", p, z.Mean, p, z.Std))
			}
		}
		if worst {
			cells = append(cells, pct(r.WorstClass))
		}
		if below {
			cells = append(cells, pct(r.BelowShare))
		}
		if oodCols {
			cells = append(cells, pct(r.OODAUROC), pct(r.OODFPR95))
		}
		if far {
			cells = append(cells, pct(r.OODFAR))
		}
		secs := "—"
		switch m := r.FitSeconds.Mean; {
		case math.IsNaN(m) || m <= 0:
		case m < 0.05: // two significant digits: a fit without training (the ball's) shown as 0.0 said it took no time
			secs = fmt.Sprintf("%.*f", 1-int(math.Floor(math.Log10(m))), m)
		default:
			secs = fmt.Sprintf("%.1f", m)
		}
		cells = append(cells, secs)
		grid = append(grid, cells)
	}
	return grid, same
}

func (t *CompareTable) WriteText(w io.Writer) error {
	has := func(f func(CompareRow) bool) bool { return slices.ContainsFunc(t.Rows, f) }
	below, far := has(func(r CompareRow) bool { return r.BelowShare != nil }), has(func(r CompareRow) bool { return r.OODFAR != nil })
	grid, same := t.Grid()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", t.Title, t.Config)
	writeGrid(&b, grid)
	target := percentOf(1 - t.Alpha)
	switch t.Calibration {
	case conformal.PAC.String():
		fmt.Fprintf(&b, "\nCoverage is ≥ %s with probability ≥ 1 − δ = %s over the calibration draw, for every row", target, percentOf(1-t.Delta))
		if below {
			fmt.Fprintf(&b, "; the resplits column recalibrates the row's geometry on one half of a random halving of the test split and tests it on the other: the share of halvings whose coverage falls below it (at most about δ = %s, each half's held-out coverage adding its own sampling error)", percentOf(t.Delta))
		}
	case conformal.Class.String():
		fmt.Fprintf(&b, "\nEach class's coverage is guaranteed ≥ %s", target)
		if t.Delta > 0 {
			fmt.Fprintf(&b, " with probability ≥ 1 − δ = %s over the calibration draw", percentOf(1-t.Delta))
		} else {
			b.WriteString(" on average over calibration draws")
		}
		b.WriteString(", for every row")
	case conformal.Pooled.String():
		b.WriteString("\nCoverage is not guaranteed: pooled calibration is approximate")
		if below {
			fmt.Fprintf(&b, "; the resplits column recalibrates the row's geometry on one half of a random halving of the test split and tests it on the other: the share of halvings whose coverage falls below %s", target)
		}
	default:
		fmt.Fprintf(&b, "\nCoverage is guaranteed ≥ %s on average over calibration draws for every row", target)
		if below {
			b.WriteString("; the resplits column recalibrates the row's geometry on one half of a random halving of the test split and tests it on the other: the share of halvings whose coverage falls below it (about half is the guarantee working as stated: it is marginal, not conditional on the draw)")
		}
	}
	b.WriteString(".\n")
	b.WriteString("Fit s is a row's fitting and calibration in wall time, its cells run side by side (the ℓ2 ball fits nothing: its figure is its calibration alone); a cell's evaluation — resplits, the OOD test, set sizes — is not in it (the ellipsoid's at d = 768: 95 s of fitting in a cell of 217 s), the progress lines' elapsed time is.\n")
	if same {
		fmt.Fprintf(&b, "A figure without ± came out the same for all %d seeds, to the digits shown — where nothing a seed draws changes it (a baseline on label bundles, pooled calibration), or where the seeds' sets happen to count alike (± is the spread over seeds, not the calibration or test split's sampling error, which ccs coverage-check measures).\n", t.Seeds)
	}
	if t.OneLabel != "" {
		fmt.Fprintf(&b, "\nOne label: %s — the bundles hold the rows carrying it alone (ccs bundle -one-label): every anchor carries it, and the guarantee is for anchors carrying %[1]s, not for the other labels' rows.\n", strconv.Quote(t.OneLabel))
	}
	if line := t.worstClasses(); line != "" {
		b.WriteString("\n" + line + "\n")
	}
	if line := t.fewClasses(); line != "" {
		b.WriteString("\n" + line + "\n")
	}
	if far && t.OODCal > 0 {
		a := ood.DefaultAlpha
		fmt.Fprintf(&b, "\nFAR is the per-input OOD test's false-alarm rate on the ID test inputs: at most %s on average over the draw of the %d held-out inputs that calibrate it; the bundles fix that draw, so every seed shares it, and one draw's own rate has a standard deviation of about %.1f points (√(α(1−α)/n)) around that average.\n",
			percentOf(a), t.OODCal, 100*math.Sqrt(a*(1-a)/float64(t.OODCal)))
	}
	for _, warn := range t.Warnings {
		fmt.Fprintf(&b, "\nWARNING: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// classShortWarning names, row by row, the test classes whose coverage
// falls short of 1 − α beyond chance under the row's seed-0 set (the
// cells' ClassShort), the worst three each: the worst class column gives
// a figure, this whether chance explains it — a row can cover a rare
// class's positives 5% of the time, which no worst-class line of the
// classes of 20 anchors or more shows. "" when none falls short.
func classShortWarning(results [][]cellResult, base []Row, test *bundle.Bundle) string {
	if len(results) == 0 {
		return ""
	}
	units := "test anchors"
	if conformal.DisjointPairs(test) != nil {
		units = "disjoint test pairs"
	}
	var parts []string
	for m, r := range base {
		c := results[0][m].Compare
		if c == nil || len(c.ClassShort) == 0 {
			continue
		}
		var classes []string
		for _, k := range c.ClassShort[:min(3, len(c.ClassShort))] {
			classes = append(classes, fmt.Sprintf("%s %d of %d %s outside (%.0f%%), probability %.2g", checkedClass(&k), k.Outside, k.Units, units, 100*float64(k.Outside)/float64(k.Units), k.P))
		}
		if n := len(c.ClassShort); n > 3 {
			classes = append(classes, fmt.Sprintf("%d more", n-3))
		}
		parts = append(parts, r.Method+": "+strings.Join(classes, ", "))
	}
	if parts == nil {
		return ""
	}
	return fmt.Sprintf("classes short of 1−α beyond chance on the test split (seed 0's sets; each class's tail times the classes checked, below %v) — %s. A set's one threshold guarantees coverage over all classes, not each class's: -calibration class (calibration=\"class\" in Python) gives each class its own threshold and guarantee (docs/calibration.md)",
		ShiftTail, strings.Join(parts, "; "))
}

// fewClasses names, for each row, the lowest-covered of the classes of
// fewer than MinClassAnchors test anchors, with its count: the worst
// class leaves them out (a step of a few anchors), and a row that missed
// most of a rare class's positives would look well without this line. ""
// when no row has such classes.
func (t *CompareTable) fewClasses() string {
	var parts []string
	n := 0
	for _, r := range t.Rows {
		if w := worstOnAverage(r.FewClasses); w != nil {
			n = max(n, len(r.FewClasses))
			parts = append(parts, fmt.Sprintf("%s %s %.1f%% (%s)", r.Method, t.className(w.Label), w.Coverage.Mean, plural(w.Anchors, "anchor", "anchors")))
		}
	}
	if parts == nil {
		return ""
	}
	lowest := "at their lowest in each row"
	if n == 1 {
		lowest = "its coverage in each row"
	}
	return fmt.Sprintf("The %s of fewer than %d test anchors, left out above (the JSON's few_classes; a class's coverage moves in steps of a few anchors, so read it against its count), %s: ", plural(n, "class", "classes"), t.MinClassAnchors, lowest) + strings.Join(parts, "; ") + "."
}

// plural is "1 one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// className is label l as the table's lines name it: its string label,
// quoted, or "class l" ("label l" for a table by label).
func (t *CompareTable) className(l int64) string {
	if l >= 0 && l < int64(len(t.LabelNames)) {
		return strconv.Quote(t.LabelNames[l])
	}
	if t.ByLabel {
		return fmt.Sprintf("label %d", l)
	}
	return fmt.Sprintf("class %d", l)
}

// worstClasses names each row's worst class — the lowest mean coverage
// over seeds among its Classes — grouped by class, the worst first: the
// Worst class column's figure says how low, this line which class (a
// rare type, a spread-out one). "" when no row has classes.
func (t *CompareTable) worstClasses() string {
	type pick struct {
		method string
		cov    float64
	}
	byClass := map[int64][]pick{}
	var order []int64
	low := map[int64]float64{}
	for _, r := range t.Rows {
		if len(r.Classes) == 0 {
			continue
		}
		w := r.Classes[0]
		for _, c := range r.Classes[1:] {
			if c.Coverage.Mean < w.Coverage.Mean {
				w = c
			}
		}
		if _, ok := byClass[w.Label]; !ok {
			order = append(order, w.Label)
			low[w.Label] = w.Coverage.Mean
		}
		byClass[w.Label] = append(byClass[w.Label], pick{r.Method, w.Coverage.Mean})
		low[w.Label] = min(low[w.Label], w.Coverage.Mean)
	}
	if len(order) == 0 {
		return ""
	}
	slices.SortStableFunc(order, func(a, b int64) int { return cmp.Compare(low[a], low[b]) })
	var parts []string
	for _, l := range order {
		picks := byClass[l]
		slices.SortStableFunc(picks, func(a, b pick) int { return cmp.Compare(a.cov, b.cov) })
		var rows []string
		for _, p := range picks {
			rows = append(rows, fmt.Sprintf("%s %.1f%%", p.method, p.cov))
		}
		parts = append(parts, t.className(l)+": "+strings.Join(rows, ", "))
	}
	if t.ByLabel {
		return fmt.Sprintf("Worst label of each row (mean coverage over seeds of the positives that share it, among labels of %d positives or more where any has that many; guaranteed over all positives, not label by label): ", eval.MinLabelPositives) + strings.Join(parts, "; ") + "."
	}
	if t.MinClassAnchors > 0 {
		return fmt.Sprintf("Worst class of each row (mean coverage over seeds, among classes of %d test anchors or more; the fewer-anchored classes' coverage moves in steps of a few anchors): ", t.MinClassAnchors) + strings.Join(parts, "; ") + "."
	}
	return "Worst class of each row (mean coverage over seeds): " + strings.Join(parts, "; ") + "."
}

// percentOf writes a fraction as a percent, to six significant digits and
// without a float's last-place noise: 100·(1 − 0.07) is 93, not
// 92.99999999999999.
func percentOf(x float64) string {
	return strconv.FormatFloat(100*x, 'g', 6, 64) + "%"
}

// WriteMarkdown writes the table's grid alone (Grid: no title, notes or
// warnings) as a Markdown table, for a paper or a README: what WriteText
// prints between its title and its notes.
func (t *CompareTable) WriteMarkdown(w io.Writer) error {
	grid, _ := t.Grid()
	var b strings.Builder
	writeGrid(&b, grid)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteLaTeX writes the table's grid alone (Grid) as a LaTeX tabular
// (booktabs' rules): the method left, the figures right, ± and the
// arrows in math mode, % escaped. Its notes — what ± is, which split —
// are WriteText's, for the caption.
func (t *CompareTable) WriteLaTeX(w io.Writer) error {
	grid, _ := t.Grid()
	var b strings.Builder
	b.WriteString("\\begin{tabular}{l" + strings.Repeat("r", len(grid[0])-1) + "}\n\\toprule\n")
	for i, row := range grid {
		cells := make([]string, len(row))
		for c, cell := range row {
			cells[c] = LaTeXEscape(cell)
		}
		b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
		if i == 0 {
			b.WriteString("\\midrule\n")
		}
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// LaTeXEscape writes text of ccs's tables and notes as LaTeX for
// pdfLaTeX: its special characters escaped, and the symbols and Greek
// letters the tables and notes use in math mode (± as $\pm$, α as
// $\alpha$, ℓ2 as $\ell_2$); other characters are kept as they are.
func LaTeXEscape(s string) string { return latexReplacer.Replace(s) }

var latexReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `%`, `\%`, `&`, `\&`, `#`, `\#`, `_`, `\_`, `$`, `\$`, `{`, `\{`, `}`, `\}`,
	`~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
	"±", `$\pm$`, "↑", `$\uparrow$`, "↓", `$\downarrow$`, "—", `---`, "–", `--`, "≤", `$\le$`, "≥", `$\ge$`,
	"<", `$<$`, ">", `$>$`, "−", `$-$`, "×", `$\times$`, "·", `$\cdot$`, "…", `\ldots{}`, "→", `$\to$`,
	"≈", `$\approx$`, "≠", `$\neq$`, "∞", `$\infty$`, "‖", `$\|$`, "⌈", `$\lceil$`, "⌉", `$\rceil$`, "√", `$\surd$`,
	"ᵀ", `$^\top$`, "¹", `$^1$`, "²", `$^2$`, "³", `$^3$`, "⁴", `$^4$`, "⁵", `$^5$`, "⁶", `$^6$`, "⁻", `$^-$`, "§", `\S{}`,
	"’", `'`, "‘", "`", "“", "``", "”", `''`,
	"ℓ2", `$\ell_2$`, "ℓ", `$\ell$`, "α", `$\alpha$`, "δ", `$\delta$`, "λ", `$\lambda$`, "τ", `$\tau$`,
	"Σ", `$\Sigma$`, "φ", `$\varphi$`, "θ", `$\theta$`, "μ", `$\mu$`, "σ", `$\sigma$`, "ε", `$\varepsilon$`,
	"β", `$\beta$`, "γ", `$\gamma$`, "ζ", `$\zeta$`, "η", `$\eta$`, "ι", `$\iota$`, "κ", `$\kappa$`, "ν", `$\nu$`, "ξ", `$\xi$`,
	"π", `$\pi$`, "ρ", `$\rho$`, "ς", `$\varsigma$`, "υ", `$\upsilon$`, "χ", `$\chi$`, "ψ", `$\psi$`, "ω", `$\omega$`, "ϑ", `$\vartheta$`,
	"ϕ", `$\phi$`, "ϵ", `$\epsilon$`, "Γ", `$\Gamma$`, "Δ", `$\Delta$`, "Θ", `$\Theta$`, "Λ", `$\Lambda$`, "Ξ", `$\Xi$`, "Π", `$\Pi$`,
	"Υ", `$\Upsilon$`, "Φ", `$\Phi$`, "Ψ", `$\Psi$`, "Ω", `$\Omega$`, "Α", `A`, "Β", `B`, "Ε", `E`, "Ζ", `Z`,
	"Η", `H`, "Ι", `I`, "Κ", `K`, "Μ", `M`, "Ν", `N`, "Ο", `O`, "Ρ", `P`, "Τ", `T`,
	"Χ", `X`, "ο", `o`)

// Percent writes a fraction x as a percent with two decimals, or up to
// four where two would round it to 100.00% or 0.00% that it is not, and as
// ">99.9999%" or "<0.0001%" where four still would (percent.Format).
func Percent(x float64) string { return percent.Format(x, 2) }
