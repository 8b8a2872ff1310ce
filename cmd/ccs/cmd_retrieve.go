package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/jsonfloat"
	"github.com/ccsets/ccs/retrieve"
)

// retrieveOptions are ccs retrieve's inputs.
type retrieveOptions struct {
	Set, DB     string // files
	IDs         string // the collection's string ids, in row order
	AnchorIndex int    // the collection's row as the anchor; −1: none
	Anchor      string // the anchor's .npy file
	Limit       int    // hits printed, nearest first; 0: all
	JSON        bool
	// anchorIndexSet says -anchor-index was given (-1 too).
	anchorIndexSet bool
}

func retrieveCommand() *command {
	return newCommand("retrieve", "-set SET.json -db FILE|clickhouse://HOST:PORT/DB.TABLE (-anchor-index I | -anchor FILE.npy) [-ids FILE] [-limit N] [-json]",
		"list the collection items inside a fitted set around an anchor (retrieval with expected recall ≥ 1−α)",
		func(fs *flag.FlagSet, o *retrieveOptions) func() error {
			fs.StringVar(&o.Set, "set", "", "calibrated set `file` (.json)")
			fs.StringVar(&o.DB, "db", "", "the collection: a `file` (.npz, .npy, .safetensors, .parquet, .arrow, or a Hugging Face dataset's directory) or a ClickHouse table, clickhouse://[user[:password]@]host:port/database.table[?timeout=60s] (see docs/scale.md)")
			fs.IntVar(&o.AnchorIndex, "anchor-index", -1, "use the collection file's row `I` as the anchor")
			fs.StringVar(&o.Anchor, "anchor", "", "anchor embedding `file` (.npy, float32, (d,) or (1, d))")
			fs.StringVar(&o.IDs, "ids", "", "the collection file's ids, in row order, printed for its hits: `FILE` .txt (one per line), .npy/.npz (FILE:ARRAY) of strings or integers, or .parquet (FILE:COLUMN) — as ccs bundle's -ids (a collection .npz's \"ids\" or a Parquet \"id\" column of strings need none)")
			fs.IntVar(&o.Limit, "limit", 0, "print at most `N` hits, nearest first (0: all)")
			fs.BoolVar(&o.JSON, "json", false, "print JSON")
			return func() error {
				fs.Visit(func(f *flag.Flag) { o.anchorIndexSet = o.anchorIndexSet || f.Name == "anchor-index" })
				return nil
			}
		}, runRetrieve)
}

func runRetrieve(ctx context.Context, o retrieveOptions, out *output) error {
	if err := required("retrieve", "set", o.Set, "db", o.DB); err != nil {
		return err
	}
	if o.anchorIndexSet && o.AnchorIndex < 0 {
		return usagef("retrieve: -anchor-index %d: want a row number ≥ 0", o.AnchorIndex)
	}
	if (o.AnchorIndex >= 0) == (o.Anchor != "") {
		return usagef("retrieve: give one of -anchor-index and -anchor")
	}
	if o.Limit < 0 {
		return usagef("retrieve: -limit %d: want ≥ 0", o.Limit)
	}
	if o.IDs != "" && retrieve.IsURL(o.DB) {
		return usagef("retrieve: -ids names a collection file's rows; a database table has its own ids")
	}
	set, err := conformal.Load(o.Set)
	if err != nil {
		return err
	}
	if err := set.OneThreshold(); err != nil { // before opening the database
		return fmt.Errorf("%s: %w", o.Set, err)
	}
	store, err := retrieve.Open(ctx, o.DB)
	if err != nil {
		return err
	}
	defer store.Close()
	n, err := store.Len(ctx)
	if err != nil {
		return err
	}
	if o.IDs != "" {
		c, ok := store.(*retrieve.Collection)
		if !ok { // a store of another kind, registered by URL
			return usagef("retrieve: -ids names a collection file's rows; %s has its own ids", o.DB)
		}
		ids, err := readIDStrings(o.IDs, "ids", n)
		if err != nil {
			return err
		}
		if err := c.SetKeys(ids); err != nil {
			return fmt.Errorf("%s: %w", o.IDs, err)
		}
	}
	if err := set.CheckDim(o.DB, n, store.Dim()); err != nil {
		return err
	}
	var anchor []float32
	if o.AnchorIndex >= 0 {
		c, ok := store.(retrieve.RowReader)
		if !ok {
			return usagef("retrieve: -anchor-index needs a collection file; give a database query's anchor with -anchor")
		}
		if anchor, err = c.Row(o.AnchorIndex); err != nil {
			return fmt.Errorf("%s: -anchor-index: %w", o.DB, err)
		}
	} else {
		a, err := bundle.ReadNPY(o.Anchor)
		if err != nil {
			return err
		}
		if err := set.CheckDim(o.Anchor, a.Shape...); err != nil {
			return err
		}
		if a.F32 == nil || len(a.Shape) > 2 || len(a.Shape) == 2 && a.Shape[0] != 1 {
			d := set.Geometry.Dim()
			if a.F32 != nil && len(a.Shape) == 2 {
				return fmt.Errorf("%s: %d anchors, shape %s: -anchor takes one, shape (%d,) or (1, %d) (-db FILE -anchor-index I takes a row of the collection)", o.Anchor, a.Shape[0], bundle.FormatShape(a.Shape), d, d)
			}
			return fmt.Errorf("%s: dtype %s, shape %s: want one anchor of floating point, shape (%d,) or (1, %d)", o.Anchor, a.Kind(), bundle.FormatShape(a.Shape), d, d)
		}
		anchor = a.F32
	}
	if err := set.CheckNorms(anchor); err != nil {
		src := o.Anchor
		if o.AnchorIndex >= 0 {
			src = fmt.Sprintf("%s: row %d", o.DB, o.AnchorIndex)
		}
		return fmt.Errorf("%s: the anchor's %w", src, err)
	}
	hits, total, err := store.Search(ctx, set, anchor, o.Limit)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", o.Set, o.DB, err)
	}
	if o.JSON {
		if hits == nil {
			hits = []retrieve.Hit{}
		}
		return writeJSON(out.stdout, map[string]any{"total": total, "hits": hits, "threshold": jsonfloat.Float(set.Threshold)})
	}
	fmt.Fprintf(out.stdout, "%d of %d items inside the set (threshold %.6g, α=%v)\n", total, n, set.Threshold, set.Alpha)
	if len(hits) > 0 {
		fmt.Fprintf(out.stdout, "id\trow\tscore\n")
	}
	for _, h := range hits {
		id := strconv.FormatInt(h.ID, 10)
		if h.Key != "" {
			id = h.Key
		}
		fmt.Fprintf(out.stdout, "%s\t%d\t%.6g\n", id, h.Row, h.Score)
	}
	for _, w := range set.Warnings() {
		out.warn(w)
	}
	return nil
}
