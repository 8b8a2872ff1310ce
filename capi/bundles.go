package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/table"
)

// newBundle builds a bundle from named arrays, as bundle.Read builds one
// from a file's: the same names, conversions, checks and messages.
func newBundle(arrays []rawArray) (*bundle.Bundle, error) {
	m := make(map[string]bundle.Array, len(arrays))
	for _, r := range arrays {
		if _, dup := m[r.Name]; dup {
			return nil, fmt.Errorf("array %q given twice", r.Name)
		}
		a, err := decode(r)
		if err != nil {
			return nil, err
		}
		m[r.Name] = a
	}
	given := func(names ...string) bool {
		return slices.ContainsFunc(names, func(n string) bool { _, ok := m[n]; return ok })
	}
	if !given("positives", "positive_index", "negatives", "negative_index") {
		// Anchors alone: a features bundle (what ccs.bundle's OOD splits
		// are, and ccs ood reads), refused by name where positives are
		// needed.
		return bundle.FeaturesFromArrays(m)
	}
	return bundle.FromArrays(m)
}

// loadBundle reads a bundle file as the CLI does: bundle.Read, or with
// features bundle.ReadFeatures (anchors alone, as ccs ood and calibrate
// -ood-cal read them), and the manifest.json beside it, once: the handle's
// label names, split and the rest are what it said when the file was read.
func loadBundle(path string, features bool) (*bundleObj, error) {
	read := bundle.Read
	if features {
		read = bundle.ReadFeatures
	}
	b, err := read(path)
	if errors.Is(err, bundle.ErrNoPositives) && !features {
		return nil, fmt.Errorf("%w; ccs.Bundle.load(path, features=True) reads it so", err)
	}
	if err != nil {
		return nil, err
	}
	m := bundle.ReadManifest(filepath.Dir(path)) // once: what it says of the file is kept
	return &bundleObj{b: b, path: path, names: manifestNames(m, path, b), oneLabel: m.OneLabelNameOf(path, b), manifest: m, blocks: m.BlocksOf(path, b), provenance: m.Provenance()}, nil
}

// saveBundle writes b as an .npz, atomically: bundle.Write, or for a
// bundle of anchors alone (an OOD split of ccs.bundle) its arrays as ccs
// bundle writes them.
func saveBundle(path string, b *bundle.Bundle) error {
	arrays, err := savedArrays(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return bundle.WriteNPZ(path, arrays)
}

// savedArrays are b's arrays as saveBundle and writeBundles write them:
// validated first (bundle.Write), unless b has no positives (a file of
// anchors alone, as ood.npz and ood-cal.npz).
func savedArrays(b *bundle.Bundle) (map[string]bundle.Array, error) {
	if b.K > 0 {
		if err := b.Validate(); err != nil {
			return nil, err
		}
	}
	return b.Arrays(), nil
}

// arrayInfo describes one of a bundle's arrays for the caller, who
// allocates its copy (bundleArray).
type arrayInfo struct {
	Dtype string `json:"dtype"` // "float32" or "int64"
	Shape []int  `json:"shape"`
}

// bundleInfo is what the caller learns of a bundle: its sizes and arrays.
type bundleInfo struct {
	N         int                  `json:"n"`
	K         int                  `json:"k"`
	D         int                  `json:"d"`
	KNeg      int                  `json:"kneg"`
	Arrays    map[string]arrayInfo `json:"arrays"`
	Converted []string             `json:"converted"`
	Path      string               `json:"path,omitempty"`
	// LabelNames name string labels (label i is LabelNames[i]): ccs.bundle's,
	// or read from the manifest.json beside a loaded file.
	LabelNames []string `json:"label_names,omitempty"`
	// Split is the split the manifest.json beside a loaded file names it
	// ("fit", "ood", …; bundle.ManifestSplit).
	Split string `json:"split,omitempty"`
	// OneLabel is the label whose rows alone the bundle holds (ccs.bundle's
	// one_label, or the manifest's beside a loaded file), its anchors
	// carrying no labels.
	OneLabel string `json:"one_label,omitempty"`
	// Warnings are what the bundle's own arrays contradict
	// (Bundle.PairingWarning), as the commands warn on reading it.
	Warnings []string `json:"warnings"`
}

func infoOf(o *bundleObj) bundleInfo {
	b := o.b
	info := bundleInfo{N: b.N, K: b.K, D: b.D, KNeg: b.KNeg, Arrays: map[string]arrayInfo{},
		Converted: b.Converted, Path: o.path, LabelNames: o.names, OneLabel: o.oneLabel, Split: o.manifest.SplitOf(o.path, b)}
	if info.Converted == nil {
		info.Converted = []string{}
	}
	info.Warnings = warningsOf(b.PairingWarning())
	if o.path != "" {
		info.Warnings = append(info.Warnings, warningsOf(bundle.ManifestWarning(o.path, b))...)
	}
	for name, a := range b.Arrays() {
		info.Arrays[name] = arrayInfo{Dtype: a.Kind(), Shape: a.Shape}
	}
	return info
}

// bundleArray copies the bundle's array name into dst, which must have
// exactly its size in bytes.
func bundleArray(b *bundle.Bundle, name string, dst []byte) error {
	a, ok := b.Arrays()[name]
	if !ok {
		return fmt.Errorf("the bundle has no array %q (have %s)", name, strings.Join(slices.Sorted(maps.Keys(b.Arrays())), ", "))
	}
	var src []byte
	switch {
	case a.F32 != nil:
		src = bytesOf(a.F32)
	default:
		src = bytesOf(a.I64)
	}
	if len(src) != len(dst) {
		return fmt.Errorf("array %q: %d bytes, the buffer has %d", name, len(src), len(dst))
	}
	copy(dst, src)
	return nil
}

// makeOptions are ccs.bundle's keywords (ccs bundle's flags).
type makeOptions struct {
	K           int        `json:"k"`
	KNeg        int        `json:"kneg"`
	Split       [4]float64 `json:"split"`
	Seed        uint64     `json:"seed"`
	OODClasses  classList  `json:"ood_classes"`
	OODCalShare float64    `json:"ood_cal_share"`
	AllowFewer  bool       `json:"allow_fewer"`
	// PairsFile is a relevance-pairs file (BEIR's qrels: a text of query,
	// row [, score], a header allowed; or a Parquet or Arrow table of
	// query-id, corpus-id and score), read as ccs bundle -pairs reads one,
	// instead of a pairs array.
	PairsFile string `json:"pairs_file"`
	// MissingLabels: "error" (or none), "drop" or "class".
	MissingLabels string `json:"missing_labels"`
	// LabelSetNames name the columns of a multi-hot labels matrix that
	// Python made of lists of labels (column j is label LabelSetNames[j]):
	// the manifest and the bundles carry them, as a list column's.
	LabelSetNames []string `json:"label_set_names"`
	// LabelNames name the columns of a multi-hot labels matrix as the
	// caller gave them (label_names=mlb.classes_): one a column, none
	// empty, none twice (bundle.MatrixNames), read as a list column's
	// values are, missing-label marks ("Unknown") included.
	LabelNames []string `json:"label_names"`
	// OneLabel, with several labels a row, is the one label whose rows
	// alone are bundled (ccs bundle -one-label): a list of it alone, an
	// integer or a string, named as ood_classes are; empty: every label.
	OneLabel classList `json:"one_label"`
	// MinScore is the least score of a relevant pair (-min-score); nil:
	// any score above 0.
	MinScore *float64 `json:"min_score"`
	// KNegHard and HardCandidates are -kneg-hard and -hard-candidates
	// (nil: bundle.DefaultHardCandidates).
	KNegHard       int  `json:"kneg_hard"`
	HardCandidates *int `json:"hard_candidates"`
	// JudgedNegatives is -judged-negatives: each query's negatives are
	// its pairs scored 0 or less (judged not relevant).
	JudgedNegatives bool `json:"judged_negatives"`
	// Out, if set, is a directory the bundles are written to as ccs
	// bundle -out writes them: NAME.npz and manifest.json, whose command
	// is Command.
	Out     string `json:"out"`
	Command string `json:"command"`
}

// classList are held-out classes as the caller names them: integers, or
// strings when the labels are strings.
type classList []string

// UnmarshalJSON takes a list of integers and strings.
func (c *classList) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("want a list of labels: %w", err)
	}
	out := make(classList, 0, len(raw))
	for _, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			out = append(out, s)
			continue
		}
		var n json.Number
		if err := json.Unmarshal(r, &n); err != nil {
			return fmt.Errorf("label %s: want an integer or a string", r)
		}
		out = append(out, n.String())
	}
	*c = out
	return nil
}

// defaultMake are ccs bundle's defaults.
var defaultMake = makeOptions{K: 20, Split: bundle.DefaultSplit}

// madeBundles are ccs.bundle's result: a bundle per split, in the plan's
// order, with their names, and the plan's warnings.
type madeBundles struct {
	Names    []string
	Bundles  []*bundle.Bundle
	Warnings []string
	// LabelNames are string labels' values (label i is LabelNames[i]),
	// nil for integer labels.
	LabelNames []string
	// OneLabel is the label whose rows alone the bundles hold (one_label,
	// by its name), "" otherwise: their anchors carry no labels.
	OneLabel string
	// Manifest is what ccs bundle -out's manifest.json says of them, kept
	// in memory (each split's blocks, the inputs' digests).
	Manifest *bundle.Manifest
	// Notes are what ccs bundle says as a note and the manifest does not
	// keep: a DatasetDict's splits pooled as one table of pairs, pairs
	// judged not relevant left out (Python warns of them, having no other
	// way to say it).
	Notes []string
}

// readQrels reads a file of relevance pairs as ccs bundle -pairs reads
// one (table.ReadQrels): text (BEIR's qrels), or a table of query-id,
// corpus-id and score columns — a Parquet or Arrow file, a Hugging Face
// dataset's directory, a directory of Parquet parts named *.parquet;
// "PATH:QUERY,ROW[,SCORE]" picks the columns —, and returns its SHA-256
// as the command's manifest records it (table.Digest: of a directory, as
// its files).
func readQrels(path string, ids *bundle.PairIDs) ([][2]int, string, error) {
	path, columns := bundle.SplitInput(path) // as ccs bundle -pairs splits it
	isTable := bundle.IsTable(path)          // as ccs bundle -pairs tells a table
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".gz" { // qrels.tsv.gz, which table.ReadQrels decompresses
		ext = strings.ToLower(filepath.Ext(strings.TrimSuffix(path, filepath.Ext(path))))
	}
	if ext == ".jsonl" || ext == ".ndjson" {
		return nil, "", fmt.Errorf("bundle: pairs %s: JSON lines of pairs are read by the command (ccs bundle -pairs %s), not here: pass them as BEIR's dict, {query id: {row id: score}} (json.loads of each line), or write them as a qrels .tsv", path, path)
	}
	if !isTable && ext != ".tsv" && ext != ".csv" && ext != ".txt" {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return nil, "", fmt.Errorf("bundle: pairs %s: a directory without state.json or dataset_dict.json: give a file of pairs (.tsv, .csv, .txt, .parquet, .arrow), a Hugging Face dataset's directory (save_to_disk), or a directory named *.parquet of Parquet parts (as Dask and Spark write one)", path)
		}
		return nil, "", fmt.Errorf("bundle: pairs %s: a file of pairs is text, .tsv, .csv or .txt (BEIR's qrels), or a table, .parquet or .arrow, or a dataset's directory; give an array of pairs as an array", path)
	}
	d, err := table.NewDigest(context.Background(), path)
	if err != nil {
		return nil, "", err
	}
	pairs, err := table.ReadQrels(path, columns, ids)
	if err != nil {
		return nil, "", err
	}
	if err := d.Unchanged("ccs.bundle"); err != nil {
		return nil, "", err
	}
	return pairs, d.Sum, nil
}

// makeBundles is ccs bundle on arrays: embeddings (n, d) with labels
// and/or groups, or views (n, v, d) with optional labels, or embeddings
// with queries and relevance pairs. Arrays absent are nil.
func makeBundles(arrays map[string]rawArray, o makeOptions) (*madeBundles, error) {
	for name := range arrays {
		switch name {
		case "embeddings", "views", "labels", "groups", "sessions", "blocks", "queries", "pairs", "ids", "query_ids", "query_labels", "logits", "activations":
		default:
			return nil, fmt.Errorf("bundle: unknown array %q", name)
		}
	}
	_, hasEmb := arrays["embeddings"]
	_, hasViews := arrays["views"]
	_, hasLabels := arrays["labels"]
	_, hasGroups := arrays["groups"]
	_, hasQueries := arrays["queries"]
	_, hasPairs := arrays["pairs"]
	if hasPairs && o.PairsFile != "" {
		return nil, fmt.Errorf("bundle: pairs: give an array or a file, not both")
	}
	hasPairs = hasPairs || o.PairsFile != ""
	_, hasIDs := arrays["ids"]
	_, hasQueryIDs := arrays["query_ids"]
	_, hasQueryLabels := arrays["query_labels"]
	mode := ""
	switch {
	case hasViews:
		mode = "views"
		if hasEmb || hasGroups || hasQueries || hasPairs {
			return nil, fmt.Errorf("bundle: views hold the embeddings: give them without embeddings, groups, queries or pairs")
		}
	case hasQueries || hasPairs:
		mode = "pairs"
		if !hasEmb || !hasQueries || !hasPairs {
			return nil, fmt.Errorf("bundle: relevance pairs need embeddings, queries and pairs")
		}
		if hasLabels || hasGroups {
			return nil, fmt.Errorf("bundle: relevance pairs say which rows are positives: give no labels or groups (a label of each query, such as its language, is query_labels)")
		}
	case hasIDs || hasQueryIDs || hasQueryLabels:
		return nil, fmt.Errorf("bundle: ids, query_ids and query_labels are of relevance pairs' rows and queries: give them with queries and pairs")
	default:
		if !hasEmb {
			return nil, fmt.Errorf("bundle: give embeddings (or views)")
		}
		switch {
		case hasGroups:
			mode = "groups"
		case hasLabels:
			mode = "labels"
		default:
			return nil, fmt.Errorf("bundle: say which rows are positives of each other: give labels, groups, or queries with pairs")
		}
	}
	if _, has := arrays["sessions"]; has && mode != "groups" {
		return nil, fmt.Errorf("bundle: sessions are a group's recordings: give them with groups (a speaker's id a row, and its session's)")
	}
	if _, has := arrays["blocks"]; has && mode != "labels" {
		return nil, fmt.Errorf("bundle: blocks split rows of one class label a row: give them with labels (groups and views already lie whole in one split; relevance pairs split by query)")
	}
	if o.K < 1 || o.KNeg < 0 {
		return nil, fmt.Errorf("bundle: k=%d, kneg=%d: want k at least 1 and kneg ≥ 0", o.K, o.KNeg)
	}
	if m := o.MinScore; m != nil && (mode != "pairs" || !(*m > 0) || math.IsInf(*m, 1)) {
		if mode != "pairs" {
			return nil, fmt.Errorf("bundle: min_score is the least score of a relevant pair: give it with queries and pairs")
		}
		return nil, fmt.Errorf("bundle: min_score=%v: want a finite score above 0 (0 or less marks a pair judged not relevant)", *m)
	}
	for _, name := range []string{"logits", "activations"} {
		if _, has := arrays[name]; has && mode != "labels" && mode != "groups" {
			return nil, fmt.Errorf("bundle: %s are the rows' own, for bundles of labels or groups: a view's or a query's are not the rows'", name)
		}
	}
	if !(o.OODCalShare >= 0 && o.OODCalShare < 1) {
		return nil, fmt.Errorf("bundle: ood_cal_share=%v: want 0 ≤ share < 1", o.OODCalShare)
	}
	switch {
	case len(o.OneLabel) > 1:
		return nil, fmt.Errorf("bundle: one_label=%v: want one label", []string(o.OneLabel))
	case len(o.OneLabel) == 0:
	case !hasLabels || mode != "labels":
		return nil, fmt.Errorf("bundle: one_label=%q names one of several labels a row: give it with labels (a multi-hot matrix or lists of labels) and no groups, views or pairs", o.OneLabel[0])
	case len(o.OODClasses) > 0 || o.OODCalShare > 0:
		return nil, fmt.Errorf("bundle: one_label=%q bundles that label's rows for its own threshold: ood_classes and ood_cal_share hold rows out of the bundles of every label — make those without one_label", o.OneLabel[0])
	}
	if len(o.OODClasses) > 0 && !hasLabels {
		return nil, fmt.Errorf("bundle: ood_classes=%v: the classes are labels: give labels too", []string(o.OODClasses))
	}
	switch kneg := cmp.Or(o.KNeg, o.K); {
	case o.KNegHard < 0:
		return nil, fmt.Errorf("bundle: kneg_hard=%d: want 0 (none) or more", o.KNegHard)
	case o.KNegHard > kneg:
		return nil, fmt.Errorf("bundle: kneg_hard=%d: more than an anchor's %d negatives (kneg, which is k unless given)", o.KNegHard, kneg)
	case o.HardCandidates != nil && *o.HardCandidates < 1:
		return nil, fmt.Errorf("bundle: hard_candidates=%d: want at least 1", *o.HardCandidates)
	}
	if o.JudgedNegatives {
		switch {
		case mode != "pairs":
			return nil, fmt.Errorf("bundle: judged_negatives are a query's pairs judged not relevant (scored 0 or less): give them with queries and pairs, a score each")
		case o.KNegHard > 0:
			return nil, fmt.Errorf("bundle: judged_negatives and kneg_hard both choose the negatives: give one (the judged ones are the data set's own hard negatives)")
		}
	}
	cfg := bundle.MakeConfig{K: o.K, KNeg: o.KNeg, Split: o.Split, Seed: o.Seed,
		OODCalShare: o.OODCalShare, AllowFewer: o.AllowFewer, HardNegatives: o.KNegHard, JudgedNegatives: o.JudgedNegatives}
	if o.HardCandidates != nil {
		cfg.HardCandidates = *o.HardCandidates
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	var in bundle.Inputs
	var err error
	if cfg.MissingLabels, err = bundle.ParseMissingLabels(o.MissingLabels); err != nil {
		return nil, fmt.Errorf("bundle: missing_labels=%v", err)
	}
	name := "embeddings"
	if mode == "views" {
		name = "views"
	}
	if in.Embeddings, err = readEmbeddings(arrays[name], mode == "views"); err != nil {
		return nil, err
	}
	var names []string
	var qrows []float32
	_, hasLogits := arrays["logits"]
	_, hasActivations := arrays["activations"]
	multi := false          // several labels a row (a multi-hot matrix)
	var labels bundle.Array // decoded once, for label sets or one label a row
	if hasLabels {
		if labels, err = decode(arrays["labels"]); err != nil {
			return nil, err
		}
	}
	if hasLabels && mode == "labels" {
		sets, ok, err := bundle.LabelSets(labels, "labels")
		switch {
		case err != nil:
			return nil, err
		case ok && (hasLogits || hasActivations):
			return nil, fmt.Errorf("bundle: logits and activations are for one label a row, and labels hold several a row (a multi-hot matrix): its bundles' anchors are the rows as queries")
		}
		if ok {
			in.LabelSets, in.LabelsSource, hasLabels, multi = sets, "labels", false, true
			qrows = in.Embeddings.Rows // the rows are their own queries
			if len(o.LabelSetNames) > labels.Shape[1] {
				return nil, fmt.Errorf("bundle: label_set_names: %d names for the %d columns of labels", len(o.LabelSetNames), labels.Shape[1])
			}
			names = o.LabelSetNames
			if o.LabelNames != nil {
				strs, err := bundle.MatrixNames(o.LabelNames, labels.Shape[1])
				if err != nil {
					return nil, fmt.Errorf("bundle: label_names: %w", err)
				}
				if sets, names, err = bundle.MissingInLabelSets(sets, o.LabelNames, strs, cfg.MissingLabels, "labels"); err != nil {
					// In Python's words, as ccs.bundle's lists of labels say it.
					return nil, errors.New(strings.Replace(err.Error(), "-missing-labels drop takes it for no label, left out of the row's labels, class for",
						`missing_labels="drop" takes it for no label, left out of the row's labels, "class" for`, 1))
				}
				in.LabelSets = sets
			}
			cfg.LabelNames = names
			columns := o.LabelNames != nil                                                                           // a column's number names its column's name
			if cfg.OODClasses, err = bundle.LabelsNamed(o.OODClasses, names, labels.Shape[1], columns); err != nil { // a row carrying any is held out
				return nil, fmt.Errorf("bundle: ood_classes: %w", err)
			}
			if len(o.OneLabel) > 0 {
				l, err := bundle.LabelsNamed(o.OneLabel, names, labels.Shape[1], columns)
				if err != nil {
					return nil, fmt.Errorf("bundle: one_label: %w", err)
				}
				in.OneLabel = bundle.NewOneLabel(l[0], names)
				names, cfg.LabelNames = nil, nil // its bundles carry no labels; the manifest's one_label names it
			}
		}
	}
	// (Labels of another mode are refused below, as a matrix is.)
	if !multi && len(o.OneLabel) > 0 {
		return nil, fmt.Errorf("bundle: one_label=%q: labels hold one label a row (a class a row), whose bundles calibrate each label's threshold already: bundle without one_label and calibrate with calibration=\"class\"", o.OneLabel[0])
	}
	if !multi && o.LabelNames != nil && hasLabels && len(labels.Shape) == 2 && labels.Shape[1] >= 2 {
		// A matrix meant as multi-hot that is not one (a stray 2, floats
		// not 0 or 1): its own fault said, not taken for one label a row.
		if _, _, err := bundle.Labels(labels, "labels", "labels"); err != nil {
			return nil, err
		}
	}
	if !multi && o.LabelNames != nil {
		return nil, fmt.Errorf("bundle: label_names name the columns of a multi-hot labels matrix (several labels a row), and labels hold one label a row: give those labels as names instead (mlb.classes_[M.argmax(1)] for a one-hot matrix M)")
	}
	if !multi && len(o.LabelSetNames) > 0 && mode == "labels" {
		return nil, fmt.Errorf("bundle: label_set_names name the columns of a multi-hot labels matrix, and labels are not one")
	}
	if hasLabels {
		if in.Labels, names, err = bundle.Labels(labels, arrays["labels"].Name, "labels"); err != nil {
			return nil, err
		}
		if cfg.MissingLabels != bundle.MissingClass { // "" and "nan" mark no label, as -1 does
			in.Labels, names, cfg.MissingNames = bundle.MissingStrings(in.Labels, names)
		} else { // pandas' nulls a class named "null", as a table's in ccs bundle
			in.Labels, names = bundle.NamedNull(in.Labels, names)
		}
		in.LabelsSource = "labels"
		cfg.LabelNames = names
		if cfg.OODClasses, err = bundle.ClassesNamed(o.OODClasses, names); err != nil {
			return nil, fmt.Errorf("bundle: ood_classes: %w", err)
		}
	}
	if cfg.MissingLabels != bundle.MissingRefused && !hasLabels && !hasGroups && !multi && !hasQueryLabels {
		return nil, fmt.Errorf("bundle: missing_labels=%q: there are no labels or group ids for it to apply to", o.MissingLabels)
	}
	if hasGroups {
		var gnames []string
		if in.Groups, gnames, err = readIDs(arrays["groups"], "groups"); err != nil {
			return nil, err
		}
		if gnames != nil && cfg.MissingLabels != bundle.MissingClass { // "" and "nan" mark no group, as -1 does
			in.Groups, gnames, cfg.MissingGroupNames = bundle.MissingStrings(in.Groups, gnames)
		} else {
			in.Groups, gnames = bundle.NamedNull(in.Groups, gnames)
		}
		in.GroupNames = gnames
		in.GroupsSource = "groups"
		if a, has := arrays["sessions"]; has {
			sessions, names, err := readIDs(a, "sessions")
			if err != nil {
				return nil, err
			}
			if names != nil && cfg.MissingLabels != bundle.MissingClass { // "" and "nan" mark no session, as -1 does
				sessions, names, cfg.MissingSessionNames = bundle.MissingStrings(sessions, names)
			} else {
				sessions, names = bundle.NamedNull(sessions, names)
			}
			in.Sessions, in.SessionNames = sessions, names
			in.SessionsSource = "sessions"
		}
	}
	if a, has := arrays["blocks"]; has {
		blocks, names, err := readIDs(a, "blocks")
		if err != nil {
			return nil, err
		}
		in.Blocks, _, _ = bundle.MissingStrings(blocks, names) // "" and "nan": refused by Inputs.Items
		in.BlocksSource = "blocks"
	}
	var pairNote, pairsHash, unscoredNote, ddNote, reversedNote string
	if mode == "pairs" {
		q, err := readEmbeddings(arrays["queries"], false)
		if err != nil {
			return nil, err
		}
		var queryIDs, rowIDs []string
		if hasQueryIDs {
			if queryIDs, err = readIDStrings(arrays["query_ids"], q.N, q.D); err != nil {
				return nil, err
			}
		}
		if hasIDs {
			if rowIDs, err = readIDStrings(arrays["ids"], in.Embeddings.N, in.Embeddings.D); err != nil {
				return nil, err
			}
		}
		ids, err := bundle.NewPairIDs(queryIDs, rowIDs)
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		ids.MinScore, ids.Judged = o.MinScore, o.JudgedNegatives
		ids.NQueries, ids.NRows = q.N, in.Embeddings.N
		if o.PairsFile != "" {
			if in.Pairs, pairsHash, err = readQrels(o.PairsFile, ids); err != nil {
				return nil, err
			}
			path, _ := bundle.SplitInput(o.PairsFile)
			ddNote = table.DatasetDictPairsNote(path, len(in.Pairs)) // as ccs bundle notes it
		} else {
			a, err := decode(arrays["pairs"])
			if err != nil {
				return nil, err
			}
			if in.Pairs, err = ids.Rows(a, "pairs"); err != nil {
				return nil, err
			}
		}
		in.Negatives, in.Graded = ids.Negatives, ids.Graded
		says := cmp.Or(o.PairsFile, "pairs")        // the file, as ccs bundle names it, or the keyword
		if note := ids.UnscoredNote(); note != "" { // as ccs bundle notes them
			unscoredNote = says + ": " + note
			if !ids.Judged && ids.MinScore == nil {
				unscoredNote += " (judged_negatives=True makes them the queries' negatives)"
			}
		}
		if note := ids.Note(); note != "" {
			pairNote = says + ": " + note
		}
		if note := ids.ScoreNote(); note != "" {
			pairNote = strings.TrimPrefix(pairNote+"; ", "; ")
			pairNote += says + ": " + note
		}
		if w := ids.ReversedWarning(in.Pairs, q.Rows, in.Embeddings.Rows, in.Embeddings.D); w != "" {
			reversedNote = says + ": " + w
		}
		in.Queries, in.QueryIDs, qrows = &q, queryIDs, q.Rows
		if hasQueryLabels {
			ql, qnames, err := readIDs(arrays["query_labels"], "query_labels")
			if err != nil {
				return nil, err
			}
			// "" and "nan" mark no label, as -1 does: refused by Make, or
			// left out with missing_labels="drop"; with "class", classes.
			in.QueryLabels, names = ql, qnames
			if cfg.MissingLabels != bundle.MissingClass {
				in.QueryLabels, names, cfg.MissingNames = bundle.MissingStrings(ql, qnames)
			}
			in.QueryLabelsSource = "query_labels"
			cfg.LabelNames = names
		}
	}
	items, err := in.Items()
	if err != nil {
		return nil, err
	}
	emb := in.Embeddings
	plan, err := bundle.Make(items, cfg)
	if err != nil {
		// Make's refusals are about which rows go together: the argument
		// that says so, as ccs bundle names its file.
		says := map[string]string{"views": "views", "pairs": "pairs", "groups": "groups", "labels": "labels"}[mode]
		if mode == "pairs" && o.PairsFile != "" {
			says = o.PairsFile
		}
		if ie := (*bundle.InputError)(nil); errors.As(err, &ie) {
			says = ie.Input // Python's keyword: blocks, query_labels, sessions
		}
		// "labels: class …", not "labels: bundle: class …": the
		// package's prefix says nothing in Python.
		return nil, &renamed{msg: says + ": " + strings.TrimPrefix(err.Error(), "bundle: "), err: err}
	}
	if err := conformal.Inspect(plan, emb.Rows, qrows, emb.D); err != nil {
		return nil, err
	}
	for _, r := range []struct {
		name string
		set  func([]float32, int) error
	}{{"logits", plan.SetLogits}, {"activations", plan.SetActivations}} {
		raw, has := arrays[r.name]
		if !has {
			continue
		}
		v, err := readEmbeddings(raw, false)
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		if v.N != emb.N {
			transposed := ""
			if v.D == emb.N {
				transposed = fmt.Sprintf(": transposed? a (%d, %d) array, its columns the rows' count: give %s.T", v.N, v.D, r.name)
			}
			return nil, fmt.Errorf("bundle: %s of %d rows for %d rows of embeddings%s", r.name, v.N, emb.N, transposed)
		}
		if err := r.set(v.Rows, v.D); err != nil {
			return nil, err
		}
		if r.name == "logits" {
			plan.WarnLogits(v.Rows, v.D, emb.Rows, emb.D)
		}
	}
	out := &madeBundles{Warnings: plan.Warnings, LabelNames: names}
	if in.OneLabel != nil {
		out.OneLabel = in.OneLabel.Name
	}
	for _, note := range []string{ddNote, unscoredNote} {
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
	}
	if reversedNote != "" {
		out.Warnings = append([]string{reversedNote}, out.Warnings...)
	}
	if pairNote != "" {
		out.Warnings = append([]string{pairNote}, out.Warnings...)
	}
	for s, sp := range plan.Splits {
		if sp.Omitted {
			continue
		}
		b, err := plan.Bundle(s, emb.Rows, qrows, emb.D)
		if err != nil {
			return nil, err
		}
		// What was converted on reading, as ccs bundle notes it and a
		// Bundle of float64 arrays says (Bundle.converted).
		for _, name := range []string{name, "queries"} {
			if r, ok := arrays[name]; ok {
				if from := map[string]string{"f8": "float64", "f2": "float16"}[r.Dtype[1:]]; from != "" { // checked: "<f8", ">f2", …
					b.Converted = append(b.Converted, name+": "+from+" → float32")
				}
			}
		}
		out.Names, out.Bundles = append(out.Names, sp.Name), append(out.Bundles, b)
	}
	m := bundle.NewManifest(o.Command, in, cfg, plan)
	m.Warnings, m.MinScore = out.Warnings, o.MinScore
	m.RowsSHA256 = bundle.RowsDigest(emb.Rows, qrows)
	for name, r := range arrays {
		m.Inputs[name] = memoryInput(r)
	}
	if o.PairsFile != "" {
		m.Inputs["pairs"] = bundle.ManifestInput{Path: o.PairsFile, SHA256: pairsHash}
	}
	out.Manifest = m
	if o.Out != "" {
		if err := writeBundles(o.Out, out, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeBundles writes made's bundles into dir as ccs bundle -out does:
// NAME.npz each, then m as manifest.json, all put in place together
// (bundle.Staging).
func writeBundles(dir string, made *madeBundles, m *bundle.Manifest) error {
	stage, err := bundle.NewStaging(dir) // all in place at the end, or none
	if err != nil {
		return fmt.Errorf("bundle: out: %w", err)
	}
	defer stage.Abort()
	for i, b := range made.Bundles {
		arrays, err := savedArrays(b)
		if err != nil {
			return fmt.Errorf("bundle: out: %s: %w", filepath.Join(dir, made.Names[i]+".npz"), err)
		}
		if _, err := stage.NPZ(made.Names[i], arrays); err != nil {
			return fmt.Errorf("bundle: out: %w", err)
		}
	}
	if _, _, err := stage.Commit(m); err != nil { // an earlier run's ood.npz, ood-cal.npz removed
		return fmt.Errorf("bundle: out: %w", err)
	}
	return nil
}

// memoryInput describes an array given in memory for a manifest: its
// dtype, shape, and the SHA-256 of its bytes in C order (NumPy's
// np.ascontiguousarray(a).tobytes(), whatever order it was given in).
func memoryInput(r rawArray) bundle.ManifestInput {
	data := r.Data
	if r.Fortran && len(r.Shape) > 1 {
		size, _ := dtypeSize(r.Dtype) // checked when decoded
		data = bundle.COrderBytes(r.Data, r.Shape, size)
	}
	sum := sha256.Sum256(data)
	return bundle.ManifestInput{Dtype: r.Dtype, SHA256: hex.EncodeToString(sum[:]), Shape: clone(r.Shape)}
}

// readEmbeddings reads embeddings as ccs bundle reads a file of them
// (bundle.EmbeddingsOf). The rows are a copy: the bundles made from them
// keep parts of them.
func readEmbeddings(r rawArray, allowViews bool) (bundle.Embeddings, error) {
	a, err := decode(r)
	if err != nil {
		return bundle.Embeddings{}, err
	}
	return bundle.EmbeddingsOf(a, r.Name, allowViews)
}

// readIDs reads one label or group id per row: integers, or strings
// numbered in their sorted order (bundle.LabelCodes), their names
// returned.
func readIDs(r rawArray, what string) ([]int64, []string, error) {
	a, err := decode(r)
	if err != nil {
		return nil, nil, err
	}
	return bundle.Labels(a, r.Name, what)
}

// readIDStrings reads the ids of n rows (of d values): (n,) strings or
// integers.
func readIDStrings(r rawArray, n, d int) ([]string, error) {
	a, err := decode(r)
	if err != nil {
		return nil, err
	}
	ids, err := bundle.IDStrings(a, r.Name)
	if err == nil && len(ids) != n {
		err = fmt.Errorf("%s: %d ids for %d rows%s", r.Name, len(ids), n, bundle.TransposedHint(len(ids), n, d))
	}
	return ids, err
}

// simulateOptions are ccs.simulate's keywords (ccs simulate's flags).
type simulateOptions struct {
	Seed     uint64 `json:"seed"`
	DataSeed uint64 `json:"data_seed"`
	K        int    `json:"k"`
	PerClass int    `json:"per_class"`
}

// defaultSimulate are ccs simulate's defaults.
var defaultSimulate = simulateOptions{DataSeed: sim.PaperDataSeed, K: sim.K, PerClass: sim.PerClass}

// simulate is ccs simulate: the paper's 3-D mixed simulation, split into
// the fit, validation, calibration and test bundles.
func simulate(o simulateOptions) (*madeBundles, error) {
	if o.K < 1 || o.PerClass < 2 {
		return nil, fmt.Errorf("simulate: k=%d and per_class=%d: want k at least 1 and per_class at least 2", o.K, o.PerClass)
	}
	data := sim.Mixed(o.DataSeed, o.PerClass)
	split := data.Split(o.Seed)
	out := &madeBundles{}
	for _, part := range []struct {
		name string
		idx  []int
	}{{"fit", split.Fit}, {"val", split.Val}, {"cal", split.Cal}, {"test", split.Test}} {
		b, err := data.Pairs(part.idx, o.K, o.Seed, part.name)
		if err != nil {
			return nil, err
		}
		out.Names, out.Bundles = append(out.Names, part.name), append(out.Bundles, b)
	}
	return out, nil
}

// renamed is err with another message (its prefixes said in Python's
// terms), still err to errors.Is and errors.As.
type renamed struct {
	msg string
	err error
}

func (r *renamed) Error() string { return r.msg }
func (r *renamed) Unwrap() error { return r.err }
