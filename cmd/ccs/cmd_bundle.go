package main

import (
	"archive/zip"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/ccsets/ccs/internal/textclip"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/table"
)

// bundleOptions are ccs bundle's inputs.
type bundleOptions struct {
	Embeddings, Labels, Groups, Views string // files (FILE or FILE:NAME)
	Sessions                          string // each row's session, with -groups
	Blocks                            string // each row's block (a recording), with -labels: the unit of the split
	Queries, Pairs                    string // relevance pairs
	IDs, QueryIDs                     string // the rows' and the queries' ids, as the pairs name them
	QueryLabels                       string // one label a query (its language): strata and classes
	Out                               string // directory
	K, KNeg                           int
	KNegHard, HardCandidates          int
	Split                             string // fit,val,cal,test shares
	Seed                              uint64
	OODClasses                        string // comma-separated labels
	OODRows                           string // each row's OOD value (a fault), empty for in-distribution rows
	OODCalShare                       float64
	AllowFewer                        bool
	MissingLabels                     string // error, drop or class
	kSet                              bool   // -k given
	MinScore                          float64
	minScoreSet                       bool   // -min-score given
	JudgedNegatives                   bool   // pairs scored 0 or less: the queries' negatives
	Logits                            string // the rows' classifier logits, carried into the bundles
	Activations                       string // the rows' per-layer activation summaries, carried into the bundles
	LabelNames                        string // the names of a multi-hot -labels matrix's columns
	OneLabel                          string // several labels a row: bundle this label's rows alone
}

func bundleCommand() *command {
	return newCommand("bundle", "(-embeddings FILE (-labels FILE [-label-names FILE] [-one-label NAME | -blocks FILE] | -groups FILE [-sessions FILE] [-labels FILE]) | -views FILE [-labels FILE] | -embeddings FILE -queries FILE -pairs FILE [-ids FILE] [-query-ids FILE] [-query-labels FILE]) -out DIR [-k 20] [-kneg K] [-kneg-hard H [-hard-candidates 256]] [-split 0.5,0.1,0.2,0.2] [-seed S] [-ood-classes LIST] [-ood-rows FILE] [-ood-cal-share F] [-allow-fewer] [-missing-labels error|drop|class] [-min-score S] [-judged-negatives] [-logits FILE] [-activations FILE]",
		"make bundles of your own embeddings: split them into DIR/{fit,val,cal,test}.npz with positives and negatives by index, and DIR/manifest.json",
		func(fs *flag.FlagSet, o *bundleOptions) func() error {
			fs.StringVar(&o.Embeddings, "embeddings", "", "embeddings `FILE`: .npy (n, d), .npz (FILE:ARRAY picks an array), .safetensors (FILE:TENSOR), or .parquet/.arrow, or the directory a Hugging Face dataset's save_to_disk writes (FILE:COLUMN, a column of float16, float32 or float64 lists); float16, bfloat16, float32 or float64, either order; or a text table, .csv, .tsv or .txt (.gz too), its columns of numbers (FILE:dim_* names them) or its column of lists; or JSON lines, .jsonl or .json (.gz too), a field of lists of numbers (FILE:FIELD names it)")
			fs.StringVar(&o.Labels, "labels", "", "class labels `FILE`, one per row: .npy, .npz (FILE:ARRAY), .safetensors (FILE:TENSOR), .parquet/.arrow (FILE:COLUMN), .csv/.tsv with a header (FILE:COLUMN: obs.csv:cell_type, as pandas and AnnData write it), JSON lines (FILE:FIELD) or .txt (one a line), of any integer type or strings (numbered in their sorted order; the manifest's label_names); positives are rows of the anchor's class")
			fs.StringVar(&o.LabelNames, "label-names", "", "a `FILE` of the names of a multi-hot -labels matrix's columns, in their order (mlb.classes_, mlb the MultiLabelBinarizer), or of the ids 0, 1, … of a CSV column's integer lists (a -1 among them a missing label's mark): .txt (one a line), .npy/.npz (FILE:ARRAY) of strings or integers, or .parquet/.arrow (FILE:COLUMN); one a column, none empty, none twice. The labels are then named as a list column's values are: in manifest.json, the per-label tables, -ood-classes by name")
			fs.Var((*oneLabelFlag)(&o.OneLabel), "one-label", "with several -labels a row (a multi-hot matrix, a column of lists), bundle the rows carrying the label `NAME` alone, for that label's own guarantee (what -calibration class cannot give there): they are the queries, each one's positives the other rows carrying it, its negatives rows that do not, drawn from all rows; NAME as the manifest names labels (a list column's value, a -label-names name, a matrix column's number when unnamed). The bundles carry no labels: calibrate one set a label on each label's bundle (docs/your-data.md, \"Several labels per row\")")
			fs.StringVar(&o.Groups, "groups", "", "group ids `FILE`, one per row (as -labels): the rows of one group are views of one item; its first row is the anchor, its other rows the positives")
			fs.StringVar(&o.Sessions, "sessions", "", "session ids `FILE`, one per row (as -labels), with -groups: an anchor's positives are its group's rows of other sessions (a speaker's other recordings)")
			fs.StringVar(&o.Blocks, "blocks", "", "block ids `FILE`, one per row (as -labels), with -labels: the unit of the split — a recording of overlapping windows, a patient, a site —, each block whole in one split (ood-cal included) and the shares shared out by blocks, so that calibration and test are new blocks to each other; positives are still rows of the anchor's class")
			fs.StringVar(&o.Views, "views", "", "views `FILE`: an (n, v, d) array, v views of each of n items (view 0 the anchor, the others its positives)")
			fs.StringVar(&o.Queries, "queries", "", "query embeddings `FILE` (as -embeddings): the anchors of relevance pairs; -embeddings are the rows they retrieve")
			fs.StringVar(&o.Pairs, "pairs", "", "relevance pairs `FILE`: (query, relevant row), an (m, 2) .npy/.npz or a two-column .tsv/.csv (a header and a third column of scores allowed, as BEIR's qrels have them; FILE:QUERY,ROW[,SCORE] names a text table's columns by its header), or a Parquet/Arrow table, Hugging Face dataset directory or directory of Parquet parts (x.parquet/, as Dask and Spark write) of query-id, corpus-id[, score] columns (FILE:QUERY,ROW[,SCORE] names them); 0-based row numbers, or ids with -query-ids and -ids")
			fs.StringVar(&o.IDs, "ids", "", "the ids of -embeddings' rows, in row order, as -pairs names them: `FILE` .txt (one per line), a .csv/.tsv's column (FILE:COLUMN), .npy/.npz (FILE:ARRAY) of strings or integers, or .parquet/.arrow (FILE:COLUMN); pairs naming other ids are left out, with a warning")
			fs.StringVar(&o.QueryIDs, "query-ids", "", "the ids of -queries' rows, in row order, as -pairs names them: a `FILE` as -ids")
			fs.StringVar(&o.QueryLabels, "query-labels", "", "one label a query `FILE` (as -labels: queries.csv:language), with -queries: an attribute of the query — its language, its domain —, not of which rows are its positives: the queries are split stratified by it and the bundles carry it as their labels, for -calibration class and -per-class; in -queries' row order, or matched by id where the first column of a .csv/.tsv holds the -query-ids")
			fs.StringVar(&o.Out, "out", "", "output `directory` (created if missing)")
			fs.IntVar(&o.K, "k", 20, "positives per anchor, drawn without replacement from its class (group, relevant rows) within its split, never itself; with -views, by default v−1 (every other view, at most 20)")
			fs.IntVar(&o.KNeg, "kneg", 0, "negatives per anchor, from other classes (groups; rows relevant to none of its) within its split (0: as many as -k)")
			fs.IntVar(&o.KNegHard, "kneg-hard", 0, "of an anchor's -kneg negatives, `H` are hard: the nearest to it (ℓ2) among -hard-candidates of its possible negatives drawn at random; the rest random among those candidates")
			fs.IntVar(&o.HardCandidates, "hard-candidates", bundle.DefaultHardCandidates, "`N` possible negatives of an anchor, drawn at random, of which its -kneg-hard negatives are the nearest (all of them where fewer)")
			fs.StringVar(&o.Split, "split", "0.5,0.1,0.2,0.2", "the fit,validation,calibration,test `shares` of the items (each 0 to 1, summing to at most 1; stratified by label); a share of 0 makes no such split: 0,0,0.5,0.5 for sets that train nothing (the ℓ2 ball), 0,0,0,1 to judge a set calibrated on other data")
			fs.Uint64Var(&o.Seed, "seed", 0, "`seed` of the splits and the draws")
			fs.StringVar(&o.OODClasses, "ood-classes", "", "comma-separated `labels` held out of every split as an OOD sample (DIR/ood.npz): integers, or names for string labels; @FILE reads them from FILE, one a line; with several labels a row (a multi-hot matrix's columns, or a list column's values), every row that carries one")
			fs.StringVar(&o.OODRows, "ood-rows", "", "one value a row `FILE` (as -labels: windows.csv:fault), with string -labels: a row with a value — a fault's name — is held out as an OOD sample labelled by it, as if -labels held the value and -ood-classes named it; a row with none (an empty cell, NaN) keeps its -labels class")
			fs.Float64Var(&o.OODCalShare, "ood-cal-share", 0, "`share` of the in-distribution items held out before the splits as DIR/ood-cal.npz: the inputs that calibrate a per-input OOD test (calibrate -ood-cal)")
			fs.BoolVar(&o.AllowFewer, "allow-fewer", false, "let an anchor with fewer than -k possible positives repeat them (they weigh more in training and evaluation; calibration, one positive per anchor, is unchanged) instead of refusing")
			fs.StringVar(&o.MissingLabels, "missing-labels", "error", "what a label (a group id, a session id, a query label) that marks a missing value means — a negative integer (Hugging Face and scikit-learn write -1) or the string \"\" or \"nan\" (pandas' missing value after astype(str)), \"None\", \"<NA>\", \"NA\", \"N/A\", or \"Unknown\", \"Unassigned\", \"Unannotated\", \"Unlabeled\" in any case (annotation tools' marks): error (refuse it), drop (no label: the row is left out of every split, counted in a warning) or class (a class like any other, as ±1 binary labels; a session of its own)")
			fs.StringVar(&o.Logits, "logits", "", "the rows' classifier logits `FILE` (n, C), read as -embeddings: each bundle carries its anchors' (what ccs ood's MSP, Energy and ViM read); with -labels or -groups")
			fs.StringVar(&o.Activations, "activations", "", "the rows' per-layer activation summaries `FILE` (n, L) — each ReLU layer's maximum, as ccs embed's activations output holds —, read as -embeddings: each bundle carries its anchors' (what ccs ood's COMBOOD reads); with -labels or -groups")
			fs.Float64Var(&o.MinScore, "min-score", 0, "the least `score` of a relevant pair, for -pairs with scores (graded judgements: 2 keeps the highly relevant alone); default: any score above 0")
			fs.BoolVar(&o.JudgedNegatives, "judged-negatives", false, "for -pairs with scores: each query's -kneg negatives are its pairs judged not relevant (scored 0 or less: a qrels file's 0s, a pair classification's label 0, a triplet's negative), repeated where it has fewer, instead of random rows; a query with none is left out (counted in a warning)")
			return func() error {
				fs.Visit(func(f *flag.Flag) {
					o.kSet = o.kSet || f.Name == "k"
					o.minScoreSet = o.minScoreSet || f.Name == "min-score"
				})
				return nil
			}
		}, runBundle)
}

func runBundle(ctx context.Context, o bundleOptions, out *output) error {
	if err := required("bundle", "out", o.Out); err != nil {
		return err
	}
	mode := ""
	switch {
	case o.Views != "":
		mode = "views"
		if o.Embeddings != "" || o.Groups != "" || o.Queries != "" || o.Pairs != "" {
			return usagef("bundle: -views holds the embeddings: give it without -embeddings, -groups, -queries or -pairs")
		}
	case o.Queries != "" || o.Pairs != "":
		mode = "pairs"
		if o.Labels != "" || o.Groups != "" {
			return usagef("bundle: relevance pairs (-queries with -pairs) say which rows are positives, as -labels and -groups do: give one of the three (a label of each query, such as its language, is -query-labels)")
		}
		if err := required("bundle", "embeddings", o.Embeddings, "queries", o.Queries, "pairs", o.Pairs); err != nil {
			return err
		}
	case o.IDs != "" || o.QueryIDs != "" || o.QueryLabels != "":
		return usagef("bundle: -ids, -query-ids and -query-labels are of relevance pairs' rows and queries: give them with -queries and -pairs")
	default:
		if err := required("bundle", "embeddings", o.Embeddings); err != nil {
			return err
		}
		switch {
		case o.Groups != "":
			mode = "groups"
		case o.Labels != "":
			mode = "labels"
		default:
			return usagef("bundle: say which rows are positives of each other: give -labels FILE, -groups FILE, or -queries FILE with -pairs FILE")
		}
	}
	if o.Sessions != "" && mode != "groups" {
		return usagef("bundle: -sessions are a group's recordings: give them with -groups (a speaker's id a row, and its session's)")
	}
	if o.Blocks != "" && mode != "labels" {
		return usagef("bundle: -blocks split rows of one class label a row: give them with -labels (groups and views already lie whole in one split; relevance pairs split by query)")
	}
	cfg := bundle.MakeConfig{K: o.K, KNeg: o.KNeg, Seed: o.Seed, OODCalShare: o.OODCalShare, AllowFewer: o.AllowFewer,
		HardNegatives: o.KNegHard, HardCandidates: o.HardCandidates}
	var err error
	if cfg.MissingLabels, err = bundle.ParseMissingLabels(o.MissingLabels); err != nil {
		return usagef("bundle: -missing-labels %v", err)
	}
	if cfg.MissingLabels != bundle.MissingRefused && o.Labels == "" && o.Groups == "" && o.QueryLabels == "" {
		return usagef("bundle: -missing-labels %s: there are no labels or group ids for it to apply to", o.MissingLabels)
	}
	shares := strings.Split(o.Split, ",")
	if len(shares) != 4 {
		return usagef("bundle: -split %q: want four shares, fit,val,cal,test", o.Split)
	}
	for i, s := range shares {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return usagef("bundle: -split %q: %q is not a number", o.Split, s)
		}
		cfg.Split[i] = f
	}
	if o.K < 1 {
		return usagef("bundle: -k %d: want at least 1 positive per anchor", o.K)
	}
	switch {
	case o.KNegHard < 0:
		return usagef("bundle: -kneg-hard %d: want 0 (none) or more", o.KNegHard)
	case o.HardCandidates < 1:
		return usagef("bundle: -hard-candidates %d: want at least 1", o.HardCandidates)
	}
	if o.KNeg < 0 {
		return usagef("bundle: -kneg %d: want 0 (as many as -k) or more", o.KNeg)
	}
	if kneg := cmp.Or(o.KNeg, o.K); o.KNegHard > kneg {
		return usagef("bundle: -kneg-hard %d: more than an anchor's %d negatives (-kneg, which is -k unless given)", o.KNegHard, kneg)
	}
	if !(o.OODCalShare >= 0 && o.OODCalShare < 1) {
		return usagef("bundle: -ood-cal-share %v: want 0 ≤ share < 1", o.OODCalShare)
	}
	if o.minScoreSet && (mode != "pairs" || !(o.MinScore > 0) || math.IsInf(o.MinScore, 1)) {
		if mode != "pairs" {
			return usagef("bundle: -min-score is the least score of a relevant pair: give it with -queries and -pairs")
		}
		return usagef("bundle: -min-score %v: want a finite score above 0 (0 or less marks a pair judged not relevant)", o.MinScore)
	}
	if o.JudgedNegatives {
		switch {
		case mode != "pairs":
			return usagef("bundle: -judged-negatives are a query's pairs judged not relevant (scored 0 or less): give them with -queries and -pairs, whose third column scores each pair")
		case o.KNegHard > 0:
			return usagef("bundle: -judged-negatives and -kneg-hard both choose the negatives: give one (the judged ones are the data set's own hard negatives)")
		}
		cfg.JudgedNegatives = true
	}
	for _, r := range [][2]string{{"logits", o.Logits}, {"activations", o.Activations}} {
		if r[1] != "" && mode != "labels" && mode != "groups" {
			return usagef("bundle: -%s are the rows' own, for bundles of -labels or -groups: a view's or a query's are not the rows'", r[0])
		}
	}
	if o.OODRows != "" && (o.Labels == "" || mode != "labels") {
		return usagef("bundle: -ood-rows %s marks rows of -labels as OOD: give it with -labels (and no -groups)", o.OODRows)
	}
	if o.LabelNames != "" && (o.Labels == "" || mode != "labels") {
		return usagef("bundle: -label-names %s names the columns of a multi-hot -labels matrix: give it with -labels (and no -groups)", o.LabelNames)
	}
	if o.OneLabel != "" {
		switch {
		case o.Labels == "" || mode != "labels":
			return usagef("bundle: -one-label %s names one of several labels a row: give it with -labels (a multi-hot matrix or a column of lists) and no -groups, -views or -pairs", o.OneLabel)
		case o.OODClasses != "" || o.OODCalShare > 0:
			return usagef("bundle: -one-label %s bundles that label's rows for its own threshold: -ood-classes and -ood-cal-share hold rows out of the bundles of every label — make those without -one-label", o.OneLabel)
		}
	}
	if o.OODClasses != "" && o.Labels == "" {
		return usagef("bundle: -ood-classes %s: the classes are labels: give -labels FILE too", o.OODClasses)
	}
	// The held-out classes: integers, or the labels' own strings when
	// they are strings (known once the labels are read).
	var oodClasses []string
	if file, ok := strings.CutPrefix(o.OODClasses, "@"); ok {
		// One class a line: a long list (120 novel protein families), or
		// names with commas; blank lines are skipped.
		lines, err := readLines(file)
		if err != nil {
			return fmt.Errorf("bundle: -ood-classes %s: %w", o.OODClasses, err)
		}
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" {
				oodClasses = append(oodClasses, l)
			}
		}
		if oodClasses == nil {
			return fmt.Errorf("bundle: -ood-classes %s: no labels in it (one a line)", o.OODClasses)
		}
	} else if o.OODClasses != "" {
		for _, s := range strings.Split(o.OODClasses, ",") {
			if s = strings.TrimSpace(s); s == "" {
				return usagef("bundle: -ood-classes %q: an empty label", o.OODClasses)
			}
			oodClasses = append(oodClasses, s)
		}
	}
	if err := cfg.Check(); err != nil {
		return usagef("bundle: %v", strings.TrimPrefix(err.Error(), "bundle: "))
	}

	// The manifest's inputs, and notes of the reading for its warnings.
	inputs := map[string]bundle.ManifestInput{}
	var notes []string
	// Each input's SHA-256 in the background while it is read (on another
	// core: 0.5 s of a 4 s bundle of 800 MB), checked to be of the file as
	// it was throughout the read.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hashes := map[string]*fileHash{}
	for _, arg := range []string{o.Views, o.Embeddings, o.Labels, o.OODRows, o.Groups, o.Sessions, o.Blocks, o.Queries, o.Pairs, o.IDs, o.QueryIDs, o.QueryLabels, o.Logits, o.Activations, o.LabelNames} {
		if path, _ := bundle.SplitInput(arg); arg != "" && hashes[path] == nil {
			hashes[path] = hashFile(ctx, path)
		}
	}
	input := func(role, arg string, shape []int) error {
		path, _ := bundle.SplitInput(arg)
		h, err := hashes[path].wait()
		if err != nil {
			return err
		}
		inputs[role] = bundle.ManifestInput{Path: arg, SHA256: h, Shape: shape}
		return nil
	}
	// The labels are read while the embeddings are, on the cores their
	// reading leaves: a .gz is decompressed on one, and a table's labels
	// column in the embeddings' own file is a second pass over it.
	type labelsRead struct {
		li  labelsInput
		err error
	}
	labelsDone := make(chan labelsRead, 1)
	if o.Labels != "" {
		// The embeddings' own JSON lines: their reader checks each line
		// whole (and its error is the one said: below).
		lpath, _ := bundle.SplitInput(o.Labels)
		epath, _ := bundle.SplitInput(o.Embeddings)
		checked := mode != "views" && o.Embeddings != "" && sameFile(lpath, epath)
		go func() {
			li, err := readLabels(o.Labels, checked)
			labelsDone <- labelsRead{li, err}
		}()
	}
	var in bundle.Inputs
	var emb, queries *embeddingsFile
	switch mode {
	case "views":
		if emb, err = readEmbeddingsCtx(ctx, o.Views, true); err != nil {
			return err
		}
		if err := input("views", o.Views, []int{emb.N, emb.Views, emb.D}); err != nil {
			return err
		}
	default:
		// Columns of the embeddings' own table that -labels, -groups,
		// -blocks, -ids name are theirs, no coordinates.
		var others []otherColumn
		epath, _ := bundle.SplitInput(o.Embeddings)
		for _, f := range []struct{ flag, arg, what string }{{"-labels", o.Labels, "labels"}, {"-groups", o.Groups, "groups"}, {"-sessions", o.Sessions, "sessions"}, {"-blocks", o.Blocks, "blocks"}, {"-ids", o.IDs, "ids"}} {
			if p, col := bundle.SplitInput(f.arg); f.arg != "" && sameFile(p, epath) && (col != "" || f.what != "") {
				others = append(others, otherColumn{column: col, flag: f.flag, names: columnNames("", f.what)})
			}
		}
		if emb, err = readEmbeddingsCtx(ctx, o.Embeddings, false, others...); err != nil {
			return err
		}
		if err := input("embeddings", o.Embeddings, []int{emb.N, emb.D}); err != nil {
			return err
		}
	}
	in.Embeddings = emb.Embeddings
	noteInput(out, emb)
	if mode == "views" && !o.kSet {
		// Every other view, which -k 20 exceeds for v ≤ 21.
		cfg.K = max(1, min(cfg.K, emb.Views-1))
	}
	// One label a row: classes, with names for strings.
	labelsInputs := func(li labelsInput) error {
		labels, names, warn := li.ids, li.names, li.warn
		if err := rowsLineUp(out, o.Labels, "labels", len(labels), emb, warn); err != nil {
			return err
		}
		if li.note != "" {
			out.warn(li.note)
		}
		if li.classLabel && oodClasses != nil {
			oodClasses = classLabelIDs(oodClasses, names)
		}
		if o.OODRows != "" {
			// A ClassLabel column of faults (-1: none) is named, as
			// -labels is: its names are the faults.
			ri, err := readNamedIDs(o.OODRows, "ood-rows")
			if err != nil {
				return err
			}
			rows, rowNames, marks := ri.ids, ri.names, ri.missing
			if ri.note != "" {
				out.warn(ri.note)
			}
			var faults []string
			if labels, names, faults, err = oodRowLabels(labels, names, li.classLabel, rows, rowNames, marks, o.Labels, o.OODRows); err != nil {
				return err
			}
			for _, f := range faults {
				if !slices.Contains(oodClasses, f) {
					oodClasses = append(oodClasses, f)
				}
			}
			if err := input("ood_rows", o.OODRows, []int{len(rows)}); err != nil {
				return err
			}
		}
		switch {
		case li.classLabel && cfg.MissingLabels != bundle.MissingClass:
			// A ClassLabel's names are classes (its -1 marks no label):
			// the ids stay the dataset's.
		case cfg.MissingLabels != bundle.MissingClass: // "" and "nan" mark no label, as -1 does
			labels, names, cfg.MissingNames = bundle.MissingStrings(labels, names)
		case names != nil:
			// A class of its own: named, as the other string labels are.
			labels, names, li.missing = nullClass(labels, names, li.missing, li.classLabel)
			if li.classLabel {
				labels, names = classLabelMarks(labels, names)
			}
		}
		// A text file's integers' missing marks as written, a table's nulls.
		cfg.MissingNames = mergeMissing(cfg.MissingNames, li.missing)
		in.Labels, in.LabelsSource = labels, o.Labels
		cfg.LabelNames = names
		if oodClasses != nil {
			var err error
			if cfg.OODClasses, err = bundle.ClassesNamed(oodClasses, names); err != nil {
				if names == nil {
					return usagef("bundle: -ood-classes %q: %v", o.OODClasses, err)
				}
				return fmt.Errorf("bundle: -ood-classes %q: %v", o.OODClasses, err)
			}
		}
		if err := input("labels", o.Labels, []int{len(labels)}); err != nil {
			return err
		}
		return nil
	}
	var sets [][]int32 // several labels a row: a multi-hot matrix or a list column as -labels
	if o.Labels != "" {
		var r labelsRead
		select {
		case r = <-labelsDone:
		case <-ctx.Done(): // Ctrl-C: the read is left to finish, as readEmbeddingsCtx leaves its own
			return ctx.Err()
		}
		li, err := r.li, r.err
		if err != nil {
			return err
		}
		if li.sets == nil && o.OneLabel != "" {
			return usagef("bundle: -one-label %s: %s holds one label a row (a class a row), whose bundles calibrate each label's threshold already: bundle without -one-label and calibrate with -calibration class", o.OneLabel, o.Labels)
		}
		if li.sets != nil && mode != "labels" {
			return fmt.Errorf("%s: several labels a row (a multi-hot matrix or a list column) make the rows their own queries, related by the labels they share: give them as the labels of rows alone, without -%s", o.Labels, mode)
		}
		if li.note != "" && li.sets != nil { // one label a row: labelsInputs warns of it
			out.warn(li.note)
		}
		if o.LabelNames != "" {
			if err := nameMatrix(&li, o.Labels, o.LabelNames); err != nil {
				return err
			}
			if err := input("label_names", o.LabelNames, []int{len(li.names)}); err != nil {
				return err
			}
		}
		if li.listIDs && li.names != nil { // ids named by -label-names or a Sequence(ClassLabel): a -1 marks a missing label
			if li.sets, li.names, err = missingNamedIDs(li.sets, li.names, cfg.MissingLabels, o.Labels, li.nullID); err != nil {
				return err
			}
			li.c = len(li.names)
		}
		if li.listIDs && li.names == nil { // a CSV column's integer lists with a -1: named, for -missing-labels
			li.sets, li.names = namedNegativeIDs(li.sets) // li.c follows below
			li.names = nameNull(li.names, li.nullID)      // as the file writes it: null
		}
		// A list column's values (or a matrix's named columns): -1,
		// "Unknown" mark no label; a Sequence(ClassLabel)'s names are
		// classes, its -1 read above, as a ClassLabel's are.
		if li.sets != nil && li.names != nil && !li.classLabel {
			if li.sets, li.names, err = bundle.MissingInLabelSets(li.sets, li.names, li.strs, cfg.MissingLabels, o.Labels); err != nil {
				return err
			}
			li.c = max(2, len(li.names)) // drop leaves the marker out of the labels
		}
		if sets = li.sets; sets != nil {
			switch {
			case o.Logits != "" || o.Activations != "":
				return usagef("bundle: -logits and -activations are for one label a row, and %s holds several a row: its bundles' anchors are the rows as queries", o.Labels)
			case o.OODRows != "":
				return usagef("bundle: -ood-rows %s folds faults into one label a row, and %s holds several a row: hold the faulty rows out yourself", o.OODRows, o.Labels)
			}
			in.LabelSets, in.LabelsSource = sets, o.Labels
			cfg.LabelNames = li.names // a list column's values, which the positives' labels number (nil: a matrix's columns)
			if oodClasses != nil {    // a row carrying any of them is held out
				if li.classLabel { // a Sequence(ClassLabel)'s id names its class, as -ood-classes 1 does beside a ClassLabel
					oodClasses = classLabelIDs(oodClasses, li.names)
				}
				// A column's number names its column's name.
				if cfg.OODClasses, err = bundle.LabelsNamed(oodClasses, li.names, li.c, o.LabelNames != "" || li.classLabel); err != nil {
					if li.names == nil {
						return usagef("bundle: -ood-classes %q: %v", o.OODClasses, err)
					}
					return fmt.Errorf("bundle: -ood-classes %q: %v", o.OODClasses, err)
				}
			}
			if err := input("labels", o.Labels, []int{len(sets), li.c}); err != nil {
				return err
			}
			if o.OneLabel != "" {
				one := o.OneLabel
				if li.classLabel { // a Sequence(ClassLabel)'s id names its class, as in -ood-classes
					one = classLabelIDs([]string{one}, li.names)[0]
				}
				l, err := bundle.LabelsNamed([]string{one}, li.names, li.c, o.LabelNames != "" || li.classLabel)
				if err != nil {
					if li.names == nil {
						return usagef("bundle: -one-label %q: %v", o.OneLabel, err)
					}
					return fmt.Errorf("bundle: -one-label %q: %v", o.OneLabel, err)
				}
				in.OneLabel = bundle.NewOneLabel(l[0], li.names)
				cfg.LabelNames = nil // its bundles carry no labels; the manifest's one_label names it
				fmt.Fprintf(out.stderr, "note: %s: %s alone (-one-label): its %d of %d rows are the queries, each one's positives the other rows carrying it, its negatives among the rows that do not (docs/your-data.md, \"Several labels per row\")\n", o.Labels, in.OneLabel, in.OneLabel.Rows(sets), len(sets))
			} else {
				fmt.Fprintf(out.stderr, "note: %s: %d labels, several a row: rows that share a label are one another's positives (the rows are their own queries; docs/your-data.md, \"Several labels per row\")\n", o.Labels, li.c)
				if li.listIDs && o.LabelNames == "" {
					if msg := unlistedLabels(sets, li.c); msg != "" {
						out.warn(fmt.Sprintf("%s: %s", o.Labels, msg))
					}
				}
			}
		} else if err := labelsInputs(li); err != nil {
			return err
		}
	}
	if o.Groups != "" {
		// A ClassLabel column's names (a speaker's) name its groups in
		// messages; its ids are the groups either way, the bundles the
		// same (metadata that lies leaves them numbered, unsaid).
		gi, err := readNamedIDs(o.Groups, "groups")
		if err != nil {
			return err
		}
		groups, gnames, missing := gi.ids, gi.names, gi.missing
		if err := rowsLineUp(out, o.Groups, "group ids", len(groups), emb, gi.warn); err != nil {
			return err
		}
		if gnames != nil && !gi.classLabel && cfg.MissingLabels != bundle.MissingClass { // "" and "nan" mark no group, as -1 does
			groups, gnames, cfg.MissingGroupNames = bundle.MissingStrings(groups, gnames)
		}
		// A text file's integers' missing marks as written, a table's nulls.
		cfg.MissingGroupNames = mergeMissing(cfg.MissingGroupNames, missing)
		in.GroupNames = gnames
		in.Groups, in.GroupsSource = groups, o.Groups
		if err := input("groups", o.Groups, []int{len(groups)}); err != nil {
			return err
		}
	}
	if o.Sessions != "" {
		// Named as -groups are: for messages alone.
		si, err := readNamedIDs(o.Sessions, "sessions")
		if err != nil {
			return err
		}
		sessions, names := si.ids, si.names
		if names != nil && !si.classLabel && cfg.MissingLabels != bundle.MissingClass { // "" and "nan" mark no session, as -1 does
			sessions, names, cfg.MissingSessionNames = bundle.MissingStrings(sessions, names)
		}
		cfg.MissingSessionNames = mergeMissing(cfg.MissingSessionNames, si.missing)
		in.SessionNames = names
		if err := rowsLineUp(out, o.Sessions, "session ids", len(sessions), emb, si.warn); err != nil {
			return err
		}
		in.Sessions, in.SessionsSource = sessions, o.Sessions
		if err := input("sessions", o.Sessions, []int{len(sessions)}); err != nil {
			return err
		}
	}
	if o.Blocks != "" {
		// Bare ids, a ClassLabel's too: a block's name is in no message,
		// the blocks the same by id or by name.
		blocks, names, _, warn, err := readIDs(o.Blocks, "blocks")
		if err != nil {
			return err
		}
		blocks, _, _ = bundle.MissingStrings(blocks, names) // "" and "nan": refused by Inputs.Items
		if err := rowsLineUp(out, o.Blocks, "block ids", len(blocks), emb, warn); err != nil {
			return err
		}
		in.Blocks, in.BlocksSource = blocks, o.Blocks
		if err := input("blocks", o.Blocks, []int{len(blocks)}); err != nil {
			return err
		}
	}
	if mode == "pairs" {
		// Columns of the queries' own table that -query-ids and
		// -query-labels name are theirs, as the embeddings' are.
		var others []otherColumn
		qpath, _ := bundle.SplitInput(o.Queries)
		for _, f := range []struct{ flag, arg, what string }{{"-query-ids", o.QueryIDs, "query ids"}, {"-query-labels", o.QueryLabels, "labels"}} {
			// what: the names the flag's own reader looks for
			// (readIDStrings' "query ids", readNamedIDs' "labels").
			if p, col := bundle.SplitInput(f.arg); f.arg != "" && sameFile(p, qpath) {
				others = append(others, otherColumn{column: col, flag: f.flag, names: columnNames("", f.what)})
			}
		}
		if queries, err = readEmbeddingsCtx(ctx, o.Queries, false, others...); err != nil {
			return err
		}
		noteInput(out, queries)
		// An .npz of embeddings with string ids beside them (what ccs serve
		// reads as a collection) names its rows by them. Integer ids are
		// not taken so: pairs of row numbers would read as ids.
		for _, side := range []struct {
			ids  *string
			flag string
			emb  string
		}{{&o.QueryIDs, "-query-ids", o.Queries}, {&o.IDs, "-ids", o.Embeddings}} {
			if path, name := bundle.SplitInput(side.emb); *side.ids == "" && name != "ids" && npzHas(path, "ids") {
				if a, _, err := readArray(path, "ids"); err == nil && a.Str != nil {
					*side.ids = path + ":ids"
					fmt.Fprintf(out.stderr, "note: %s %s: the rows' string ids, beside them\n", side.flag, *side.ids)
				}
			}
		}
		ids := &bundle.PairIDs{Judged: o.JudgedNegatives, NQueries: queries.N, NRows: emb.N}
		if o.minScoreSet {
			ids.MinScore = &o.MinScore
		}
		for _, side := range []struct {
			arg, what string
			n, d      int
			set       func([]string) error
			rows      string // whose rows they name
			other     int    // the other side's rows
		}{{o.QueryIDs, "query ids", queries.N, queries.D, ids.SetQueries, "-queries " + o.Queries, emb.N}, {o.IDs, "ids", emb.N, emb.D, ids.SetRows, "-embeddings " + o.Embeddings, queries.N}} {
			if side.arg == "" {
				continue
			}
			list, err := readIDStrings(side.arg, side.what, side.n, side.d)
			if e := (*idCountError)(nil); errors.As(err, &e) {
				swapped := ""
				if e.got == side.other && side.other != side.n {
					swapped = ": as many as the other side's rows — -ids and -query-ids swapped?"
				}
				return fmt.Errorf("%s (the rows of %s)%s", e.msg, side.rows, swapped)
			}
			if err != nil {
				return err
			}
			if err := side.set(list); err != nil {
				path, _ := bundle.SplitInput(side.arg)
				return fmt.Errorf("%s: %w", path, err)
			}
			if side.what == "query ids" {
				in.QueryIDs = list
			}
		}
		if in.Pairs, err = readPairs(o.Pairs, ids); err != nil {
			return err
		}
		pairsPath, _ := bundle.SplitInput(o.Pairs)
		if note := table.DatasetDictPairsNote(pairsPath, len(in.Pairs)); note != "" {
			fmt.Fprintf(out.stderr, "note: %s\n", note)
		}
		in.Negatives, in.Graded = ids.Negatives, ids.Graded
		if note := ids.Note(); note != "" {
			notes = append(notes, o.Pairs+": "+note) // printed with the plan's
		}
		if w := ids.ReversedWarning(in.Pairs, queries.Rows, emb.Rows, emb.D); w != "" {
			notes = append(notes, o.Pairs+": "+w)
		}
		unscored := ids.UnscoredNote()
		if unscored != "" && !ids.Judged && ids.MinScore == nil {
			unscored += " (-judged-negatives makes them the queries' negatives)"
		}
		for _, note := range []string{ids.ScoreNote(), unscored} {
			if note != "" {
				fmt.Fprintf(out.stderr, "note: %s: %s\n", o.Pairs, note)
			}
		}
		in.Queries = &queries.Embeddings
		if o.QueryLabels != "" {
			// A ClassLabel column's names name the labels, in the
			// dataset's id order, as -labels' do.
			li, err := readNamedIDs(o.QueryLabels, "labels")
			if err != nil {
				return err
			}
			labels, names, missing := li.ids, li.names, li.missing
			path, _ := bundle.SplitInput(o.QueryLabels)
			if li.warn != "" {
				out.warn(path + ": " + li.warn)
			}
			if li.note != "" {
				out.warn(li.note)
			}
			if in.QueryIDs != nil {
				var note string
				if labels, note, err = labelsByQueryID(o.QueryLabels, labels, in.QueryIDs, o.QueryIDs); err != nil {
					return err
				}
				if note != "" {
					fmt.Fprintf(out.stderr, "note: %s: %s\n", path, note)
				}
			}
			// "" and "nan" mark no label, as -1 does: refused by Make,
			// counted and named, or left out with -missing-labels drop;
			// with class, the strings are classes as any other. A
			// ClassLabel's names are classes (its -1 marks no label).
			switch {
			case cfg.MissingLabels != bundle.MissingClass && !li.classLabel:
				var marks map[int64]string
				labels, names, marks = bundle.MissingStrings(labels, names)
				missing = mergeMissing(marks, missing)
			case cfg.MissingLabels == bundle.MissingClass && li.classLabel:
				labels, names = classLabelMarks(labels, names)
			}
			cfg.MissingNames = missing
			in.QueryLabels, in.QueryLabelsSource = labels, o.QueryLabels
			cfg.LabelNames = names
		}
		for _, r := range []struct{ role, arg string }{{"queries", o.Queries}, {"pairs", o.Pairs}, {"query_ids", o.QueryIDs}, {"ids", o.IDs}, {"query_labels", o.QueryLabels}} {
			if r.arg == "" {
				continue
			}
			if err := input(r.role, r.arg, nil); err != nil {
				return err
			}
		}
	}
	items, err := in.Items()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	plan, err := bundle.MakeContext(ctx, items, cfg)
	if err != nil {
		// Make's refusals are about which rows go together: the file that
		// says so.
		source := mode
		if ie := (*bundle.InputError)(nil); errors.As(err, &ie) {
			source = ie.Input
		}
		if source == bundle.InputKNeg { // no file's fault: the flag's
			return err
		}
		file := map[string]string{"views": o.Views, "pairs": o.Pairs, "groups": o.Groups, "labels": o.Labels,
			bundle.InputBlocks: o.Blocks, bundle.InputQueryLabels: o.QueryLabels, bundle.InputSessions: o.Sessions}[source]
		return fmt.Errorf("%s: %w", file, err)
	}
	var qrows []float32
	switch {
	case queries != nil:
		qrows = queries.Rows
	case sets != nil: // the rows are their own queries
		qrows = emb.Rows
	}
	if err := conformal.Inspect(plan, emb.Rows, qrows, emb.D); err != nil {
		return err
	}
	// The rows' logits and activations, each bundle carrying its anchors':
	// an .npz of embeddings with them beside gives them, as -logits
	// FILE:logits would.
	for _, r := range []struct {
		name string
		arg  *string
		set  func([]float32, int) error
	}{{"logits", &o.Logits, plan.SetLogits}, {"activations", &o.Activations, plan.SetActivations}} {
		if path, name := bundle.SplitInput(o.Embeddings); *r.arg == "" && (mode == "labels" && sets == nil || mode == "groups") && name != r.name && npzHas(path, r.name) {
			*r.arg = path + ":" + r.name
			fmt.Fprintf(out.stderr, "note: -%s %s: the rows' %s, beside them\n", r.name, *r.arg, r.name)
		}
		if *r.arg == "" {
			continue
		}
		v, err := readEmbeddings(*r.arg, false)
		if err != nil {
			return fmt.Errorf("-%s %w", r.name, err)
		}
		if v.N != emb.N {
			transposed := ""
			if v.D == emb.N {
				transposed = fmt.Sprintf(": transposed? a (%d, %d) array, its columns the rows' count: give its .T", v.N, v.D)
			}
			return fmt.Errorf("%s: %s of %d rows for the %d rows of %s%s", *r.arg, r.name, v.N, emb.N, o.Embeddings, transposed)
		}
		noteInput(out, v)
		if err := r.set(v.Rows, v.D); err != nil {
			return fmt.Errorf("%s: %w", *r.arg, err)
		}
		if r.name == "logits" {
			plan.WarnLogits(v.Rows, v.D, emb.Rows, emb.D)
		}
		if err := input(r.name, *r.arg, []int{v.N, v.D}); err != nil {
			return err
		}
	}
	// Every file under a temporary name first, then all put in place: an
	// error or an interruption leaves the directory's earlier bundling
	// whole (bundle.Staging).
	stage, err := bundle.NewStaging(o.Out)
	if err != nil {
		return err
	}
	defer stage.Abort()
	m := bundle.NewManifest(out.command, in, cfg, plan)
	m.Inputs, m.Warnings = inputs, append(notes, m.Warnings...)
	m.RowsSHA256 = bundle.RowsDigest(emb.Rows, qrows)
	for i, w := range m.Warnings {
		m.Warnings[i] = textclip.Message(w) // a label quoted whole, cut
	}
	if o.minScoreSet {
		m.MinScore = &o.MinScore
	}
	files := m.Files
	var wrote []string // "wrote PATH: …", said once the files are in place
	for s, sp := range plan.Splits {
		if err := ctx.Err(); err != nil {
			return err
		}
		if sp.Omitted {
			continue
		}
		arrays, err := plan.Arrays(s, emb.Rows, qrows, emb.D)
		if err != nil {
			return err
		}
		path, err := stage.NPZ(sp.Name, arrays)
		if err != nil {
			return err
		}
		f := files[0]
		files = files[1:]
		line := fmt.Sprintf("wrote %s: %d anchors", path, f.Anchors)
		if sp.K > 0 {
			line += fmt.Sprintf(", %s and %s each, by index", plural(sp.K, "positive", "positives"), plural(sp.KNeg, "negative", "negatives"))
		}
		if f.Classes != nil {
			line += fmt.Sprintf(", %s", plural(len(f.Classes), "class", "classes"))
		}
		wrote = append(wrote, line)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	removed, path, err := stage.Commit(m)
	for _, line := range wrote {
		fmt.Fprintln(out.stdout, line)
	}
	for _, path := range removed {
		fmt.Fprintf(out.stdout, "removed %s: an earlier run's, not made by this one\n", path)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out.stdout, "wrote %s\n", path)
	for _, w := range m.Warnings {
		if rest, ok := strings.CutPrefix(w, "labels: "); ok && o.Labels != "" {
			w = o.Labels + ": " + rest // the file the labels came from
		}
		out.warn(w)
	}
	return nil
}

// oneLabelFlag is -one-label's value: one label, named once. A second
// -one-label would silently replace the first (one run bundles one label's
// rows), and an empty one (-one-label "$LABEL" of an unset variable)
// silently bundle every label's.
type oneLabelFlag string

func (f *oneLabelFlag) String() string { return string(*f) }

func (f *oneLabelFlag) Set(s string) error {
	switch {
	case *f != "":
		return fmt.Errorf("given twice (%q, then %q): a run bundles one label's rows — run ccs bundle once a label, each with its own -out", string(*f), s)
	case s == "":
		return errors.New("empty: want a label's name (a list column's value, a -label-names name, or a matrix column's number)")
	}
	*f = oneLabelFlag(s)
	return nil
}

// npzHas reports whether path is an .npz holding an array name.
func npzHas(path, name string) bool {
	if strings.ToLower(filepath.Ext(path)) != ".npz" {
		return false
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		return false
	}
	defer z.Close()
	return slices.ContainsFunc(z.File, func(f *zip.File) bool { return f.Name == name+".npy" })
}

// noteInput says once how a file of embeddings was converted on reading,
// and that a DatasetDict's splits were read as one table.
func noteInput(out *output, e *embeddingsFile) {
	if e.conv != "" {
		fmt.Fprintf(out.stderr, "note: %s: converted on reading: %s\n", e.Source, e.conv)
	}
	if len(e.splits) > 0 {
		fmt.Fprintf(out.stderr, "note: %s: a DatasetDict: its splits %s read as one table of %d rows, in that order, which ccs bundle splits anew (%s reads one split)\n",
			e.Source, strings.Join(e.splits, ", "), e.N, filepath.Join(e.Source, e.splits[0]))
	}
}

// fileHash is a file's SHA-256, computed in the background (hashFile)
// while the file is read for its values: a table.Digest, of a dataset's
// directory as its files.
type fileHash struct {
	done chan struct{}
	d    *table.Digest
	err  error
}

// hashFile starts hashing the file (or dataset directory) at path;
// cancelling ctx stops it.
func hashFile(ctx context.Context, path string) *fileHash {
	h := &fileHash{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		h.d, h.err = table.NewDigest(ctx, path)
	}()
	return h
}

// wait returns the file's SHA-256 once the caller has read the file: an
// error where a file's size or modification time changed since hashing
// began, for then the hash may not be of the bytes read.
func (h *fileHash) wait() (string, error) {
	<-h.done
	if h.err != nil {
		return "", h.err
	}
	if err := h.d.Unchanged("ccs bundle"); err != nil {
		return "", err
	}
	return h.d.Sum, nil
}

// plural is "1 class" or "n classes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// rowsLineUp says what readIDs warned of the rows of a table of labels or
// group ids (arg, n of them): an error, with the count, when they are not
// as many as the embeddings' rows (emb) — the repeated rows are the likely
// reason —, a warning otherwise.
func rowsLineUp(out *output, arg, what string, n int, emb *embeddingsFile, warn string) error {
	// A table's index out of order: its rows pair with the embeddings'
	// where both come from one table, or from tables of the same index
	// (one frame, shuffled, exported twice); otherwise they pair by
	// position, and the embeddings' own order says nothing of theirs.
	path, _ := bundle.SplitInput(arg)
	epath, _ := bundle.SplitInput(emb.Source)
	shuffled, embShuffled := strings.HasPrefix(warn, shuffledPrefix), emb.indexOrder != "" && !emb.orderWarned
	if shuffled || embShuffled { // else nothing out of order to judge, and the file is not read again
		paired := path == epath || emb.index != nil && slices.Equal(csvIndex(path), emb.index)
		switch {
		case paired && shuffled:
			warn = ""
		case !paired && embShuffled:
			emb.orderWarned = true
			head, _, _ := strings.Cut(emb.indexOrder, ": the table was sorted")
			out.warn(fmt.Sprintf("%s: %s: the table was sorted or filtered after its rows were numbered, and the %s of %s are matched to its rows by position — if they are in the order the rows had before, they belong to other rows: take them from the same table (%s:COLUMN), or export both from the frame as it is now", epath, head, what, path, epath))
		}
	}
	switch {
	case warn == "":
		return nil
	case emb.Views == 0 && n != emb.N:
		return fmt.Errorf("%s: %d %s for the %d rows of %s: %s", path, n, what, emb.N, emb.Source, warn)
	}
	out.warn(path + ": " + warn)
	return nil
}

// mergeMissing is the names of two sets of missing marks' labels
// (MissingStrings' and a file's own: a text file's integers, a table's
// nulls), which share no label; nil when both are.
func mergeMissing(a, b map[int64]string) map[int64]string {
	if a == nil {
		return b
	}
	maps.Copy(a, b)
	return a
}

// nullClass makes the null rows of a table's string labels (their code
// missing names bundle.NullMark), with -missing-labels class, a class
// named "null" among names, in its sorted place ("(null)" where a label
// is "null"): a negative class among string labels left a class-
// conditional set without its classes' names (conformal.Set.ClassNames),
// every class then named by its number; last where names are a
// ClassLabel's (appended: the ids stay the dataset's). Without such
// rows, labels, names and missing are returned as they are.
func nullClass(labels []int64, names []string, missing map[int64]string, appended bool) ([]int64, []string, map[int64]string) {
	code, found := int64(0), false
	for c, m := range missing {
		if m == bundle.NullMark {
			code, found = c, true
		}
	}
	if !found {
		return labels, names, missing
	}
	labels, names = bundle.InsertClass(labels, names, code, "null", appended)
	rest := maps.Clone(missing)
	delete(rest, code)
	if len(rest) == 0 {
		rest = nil
	}
	return labels, names, rest
}

// classLabelMarks names the negative ids of a Hugging Face ClassLabel
// column (labels; names its names) — -1, its missing label's mark — kept
// as classes (-missing-labels class): each comes after the names, in
// sorted order, named by its decimal form (in parentheses while a name
// has it), so that the dataset's ids stay its own and every class of the
// bundles has a name, as a null's class has one (nullClass). Without a
// negative id the labels and names are returned as they are.
func classLabelMarks(labels []int64, names []string) ([]int64, []string) {
	var marks []int64
	for _, l := range labels {
		if l < 0 && !slices.Contains(marks, l) {
			marks = append(marks, l)
		}
	}
	if marks == nil {
		return labels, names
	}
	slices.Sort(marks)
	names, code := appendMarks(names, marks)
	out := make([]int64, len(labels))
	for i, l := range labels {
		if c, ok := code[l]; ok {
			l = c
		}
		out[i] = l
	}
	return out, names
}

// appendMarks makes each of marks (missing labels' marks kept as classes,
// a ClassLabel's -1; distinct, in order) a label after names, named by
// its decimal form (in parentheses while a name has it): the names
// extended, and each mark's label.
func appendMarks(names []string, marks []int64) ([]string, map[int64]int64) {
	names = slices.Clone(names)
	code := make(map[int64]int64, len(marks))
	for _, m := range marks {
		name := bundle.FreeName(names, strconv.FormatInt(m, 10))
		code[m] = int64(len(names))
		names = append(names, name)
	}
	return names, code
}

// oodRowLabels folds an -ood-rows column into string labels: a row with a
// value (a fault's name; "", "nan" and null mark none) is labelled by it,
// the others keep their class; the names are renumbered in sorted order,
// as a column holding both would be — unless ordered (a ClassLabel's
// names, in the dataset's id order), when the classes keep their ids and
// the values come after them, in sorted order, as a ClassLabel naming
// them last would number them. marks are readIDs' missing marks of the
// column as written. It returns the labels, their names and the values
// found, sorted: the OOD classes. A value that is also a class, a missing
// label's mark that names something ("unknown"), or integer labels (no
// names to fold into), are refused.
func oodRowLabels(labels []int64, names []string, ordered bool, rows []int64, rowNames []string, marks map[int64]string, labelsSource, source string) ([]int64, []string, []string, error) {
	// An empty cell, NaN or null is no fault; a mark of a missing label
	// that names something ("unknown", "unassigned": a fault of unknown
	// cause?) is refused rather than read as none, which would put a
	// faulty row in the calibration.
	named := map[string]int{}
	for _, r := range rows {
		value := marks[r]
		if r >= 0 && rowNames != nil {
			value = rowNames[r]
		}
		switch strings.ToLower(value) {
		case "", "nan", "none", "<na>", "na", "n/a", strings.ToLower(bundle.NullMark):
			continue
		}
		if bundle.MissingString(value) {
			named[value]++
		}
	}
	if len(named) > 0 {
		value := slices.Sorted(maps.Keys(named))[0]
		return nil, nil, nil, fmt.Errorf("%s: -ood-rows: the value %q (%d rows) marks a missing label to annotation tools: is it a fault (of unknown cause)? Name it (a value holds the row out as OOD) or empty its cells (the row keeps its class)", source, value, named[value])
	}
	switch {
	case names == nil:
		return nil, nil, nil, fmt.Errorf("%s: -ood-rows: %s holds integer labels; give the classes as strings (a CSV or Parquet column of names), into which the OOD rows' values fold", source, labelsSource)
	case len(rows) != len(labels):
		return nil, nil, nil, fmt.Errorf("%s: %d values for the %d labels of %s", source, len(rows), len(labels), labelsSource)
	case rowNames == nil:
		// A column of empty cells alone (no row has a fault) reads as
		// integers, every one missing: no row is held out.
		if slices.ContainsFunc(rows, func(r int64) bool { return r >= 0 }) {
			return nil, nil, nil, fmt.Errorf("%s: -ood-rows: integers, where names (a fault a row, empty for none) are wanted", source)
		}
		return labels, names, nil, nil
	}
	rows, rowNames, _ = bundle.MissingStrings(rows, rowNames)
	classes := map[string]bool{}
	for _, n := range names {
		classes[n] = true
	}
	seen := map[string]bool{}
	var faults []string
	for _, r := range rows {
		if r < 0 || seen[rowNames[r]] {
			continue
		}
		f := rowNames[r]
		if classes[f] {
			return nil, nil, nil, fmt.Errorf("%s: -ood-rows: the value %q is also a class of %s: an OOD row's value must name no class", source, f, labelsSource)
		}
		seen[f] = true
		faults = append(faults, f)
	}
	slices.Sort(faults)
	all := append(slices.Clone(names), faults...) // names are distinct (LabelCodes', or a ClassLabel's checked)
	if !ordered {
		slices.Sort(all)
	}
	index := map[string]int64{}
	for i, n := range all {
		index[n] = int64(i)
	}
	out := make([]int64, len(labels))
	for i, l := range labels {
		switch {
		case rows[i] >= 0:
			out[i] = index[rowNames[rows[i]]]
		case l >= 0:
			out[i] = index[names[l]]
		default:
			out[i] = l // a table's null: missing, as before
		}
	}
	return out, all, faults, nil
}

// unlistedLabels says, for lists of label numbers (a matrix's columns)
// that leave more of the c numbers unlisted than they list, how many and
// which is the highest listed — one typo of 99 among ids below 28 makes
// "100 labels" — or "" where they do not.
func unlistedLabels(sets [][]int32, c int) string {
	listed := make([]bool, c)
	n, top, row := 0, int32(-1), 0
	for i, s := range sets {
		for _, l := range s {
			if l < 0 || int(l) >= c {
				continue
			}
			if !listed[l] {
				listed[l] = true
				n++
			}
			if l > top {
				top, row = l, i
			}
		}
	}
	if n == 0 || c-n <= n {
		return ""
	}
	return fmt.Sprintf("%d of the %d label numbers (0 to %d) are listed by no row: a label number is a column of the multi-hot matrix the lists make, so the highest, %d (row %d, counted from 0), makes %d labels — a typo? (labels no row lists change no bundle; -label-names names the ids)", c-n, c, c-1, top, row, c)
}
