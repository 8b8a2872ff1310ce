package train

import (
	"encoding/json"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/kernel"
)

// Record is what a fitted-set file keeps about its training: the whole
// recipe (every number a flag can change) and the outcome.
type Record struct {
	Recipe       Config     `json:"recipe"`
	FitAnchors   int        `json:"fit_anchors"`
	ValAnchors   int        `json:"val_anchors"`
	Epochs       int        `json:"epochs"`
	BestEpoch    int        `json:"best_epoch"`
	ValExclusion float64    `json:"val_exclusion"`
	StopReason   StopReason `json:"stop_reason"`
	// Kernels is the kernel level the training ran on (kernel.LevelName:
	// "portable", "avx2", "avx512"): the levels round differently, so
	// the same recipe and seed give the same set at the same level, and
	// sets a few thousandths apart at two. "" in files made before
	// 2026-12-05.
	Kernels string `json:"kernels,omitempty"`
}

// FitInfo returns the fitted-set record of a training run.
func FitInfo(cfg Config, res *Result, fitN, valN int) *conformal.FitInfo {
	rec := Record{Recipe: cfg.WithDefaults(), FitAnchors: fitN, ValAnchors: valN, Epochs: res.Epochs,
		BestEpoch: res.BestEpoch, ValExclusion: res.ValExclusion, StopReason: res.StopReason,
		Kernels: kernel.LevelName()}
	raw, err := json.Marshal(rec)
	if err != nil {
		panic("ccs/train: " + err.Error()) // a Record always marshals
	}
	return &conformal.FitInfo{Method: "trained on the fit split, checkpoint chosen on the validation split",
		N: fitN, Seed: cfg.Seed, Training: raw}
}
