package experiment

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/objective"
)

// NewCompareCells keeps Compare's cells under dir/cells, keyed on what
// may change a cell — cfg's level, calibration mode and δ, resplits,
// reference pool and training recipe, with their defaults filled in, and
// the Size column's collection (by its rows) and anchors;
// data's bundles, by their arrays (bundle.SHA256: a bundle read from its
// file and the same bundle made in memory are one); the classes' names,
// which class-conditional sets keep; and code, the engine that computes
// them (buildinfo.CodeVersion). Nothing that says where results go or
// which cells run (seeds, rows, workers) enters it, so ccs compare -out
// and the Python package's compare(out=) on the same bundles, built from
// one revision, read back each other's cells. The baselines, which train
// nothing, are keyed without the recipe, so that a comparison with other
// training flags reads them back.
func NewCompareCells(dir string, cfg CompareConfig, data CompareData, code string) (*Cells, error) {
	heads := cfg
	if data.Test != nil && heads.HeadDim == data.Test.D {
		heads.HeadDim = 0 // the default's outputs: the default's cells
	}
	cfg.HeadDim = 0 // the rows without a head: their cells whatever the heads'
	trained, err := compareKey(cfg, data, code, true)
	if err != nil {
		return nil, err
	}
	headKey, err := compareKey(heads, data, code, true)
	if err != nil {
		return nil, err
	}
	untrained, err := compareKey(cfg, data, code, false)
	if err != nil {
		return nil, err
	}
	c, err := NewCells(dir, trained)
	if err != nil {
		return nil, err
	}
	c.untrained = untrained
	c.SetCode(code)
	if headKey != trained {
		c.heads, c.headRows = headKey, map[string]bool{}
		for _, m := range RowSets["infonce"]() {
			c.headRows[m.File] = true
		}
	}
	return c, nil
}

// compareKey is a comparison's cell key (NewCompareCells), with the
// training recipe or without it.
func compareKey(cfg CompareConfig, data CompareData, code string, recipe bool) (string, error) {
	cfg.defaults()
	if cfg.Reference == 0 && data.OOD != nil && data.Fit != nil {
		cfg.Reference = defaultReference(data.Fit)
	}
	var train any = "none: the rows that train nothing"
	head := 0
	if recipe {
		head = cfg.HeadDim
		r := cfg.Train.WithDefaults()
		r.Objective.Objective = objective.NegVol // each row sets its own: a placeholder
		train = r
	}
	sizes := ""
	if z := cfg.Sizes; z != nil && data.Test != nil { // the collection by its rows, and how many anchors
		sum := sha256.Sum256(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(z.Rows))), 4*len(z.Rows)))
		sizes = fmt.Sprintf("%d×%d %x, %d anchors", z.N, z.D, sum, min(cmp.Or(z.Anchors, eval.DefaultSizeAnchors), data.Test.N))
	}
	key, err := json.Marshal(struct {
		Alpha       float64
		Calibration string
		Delta       float64
		Resplits    int
		Reference   int
		Train       any
		LabelNames  []string
		Shift       bool   `json:",omitempty"` // absent unless asked: earlier cells keep their keys
		Sizes       string `json:",omitempty"`
		HeadDim     int    `json:",omitempty"` // likewise
	}{cfg.Alpha, cfg.Calibration.String(), cfg.Delta, cfg.Resplits, cfg.Reference, train, data.LabelNames, cfg.Shift, sizes, head})
	if err != nil {
		return "", fmt.Errorf("experiment: compare key: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "ccs compare\n%s\n%s\n", key, code)
	for _, b := range []struct {
		name string
		b    *bundle.Bundle
	}{{"fit", data.Fit}, {"val", data.Val}, {"cal", data.Cal}, {"test", data.Test}, {"ood", data.OOD}, {"ood-cal", data.OODCal}} {
		sum := "-"
		if b.b != nil {
			if sum, err = b.b.SHA256(); err != nil {
				return "", fmt.Errorf("experiment: compare key: the %s bundle: %w", b.name, err)
			}
		}
		fmt.Fprintf(h, "%s %s\n", b.name, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
