package main

/*
#include <stdint.h>
*/
import "C"

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/internal/jsonindent"
	"github.com/ccsets/ccs/ood"
)

// detectOptions are ccs.ood_detection's keywords: ccs ood's flags, and
// the names of its inputs (files, as the command names them, or "id",
// "train", …).
type detectOptions struct {
	SetName    string   `json:"set_name"`
	LabelNames []string `json:"label_names"` // the ID inputs' string labels' names
	IDName     string   `json:"id_name"`
	OODNames   []string `json:"ood_names"`
	ByClass    bool     `json:"by_class"` // each OOD input one sample per label, as -ood-by-class
	TrainName  string   `json:"train_name"`
	OODCalName string   `json:"ood_cal_name"`
	// OODCalLabelNames are ood_cal's string labels' names (Bundle.label_names).
	OODCalLabelNames []string `json:"ood_cal_label_names"`
	Classifier       string   `json:"classifier"` // FILE.npz with weight and bias, for ViM
	Mode             string   `json:"mode"`
	AlphaOOD         *float64 `json:"alpha_ood"`
	Delta            float64  `json:"delta"`
	Simultaneous     bool     `json:"simultaneous"`
	FDR              float64  `json:"fdr"`
	FPR              string   `json:"fpr"`
	CiderEpochs      *int     `json:"cider_epochs"`
	Seed             uint64   `json:"seed"`
	Command          string   `json:"command"`
}

// detect is ccs ood on bundles in memory: its document (ccs ood -json's,
// laid out as the command lays it out) and its text, and the warnings.
func detect(ctx context.Context, d experiment.OODDetection, o detectOptions) (doc []byte, text string, warnings []string, err error) {
	t, warnings, err := experiment.DetectOOD(ctx, d)
	if err != nil {
		return nil, "", nil, err
	}
	dc, err := newDocument("ood-detection", cmp.Or(o.Command, "ccs.ood_detection"))
	if err != nil {
		return nil, "", nil, err
	}
	dc.Result = t
	var laid bytes.Buffer
	if err := jsonindent.Encode(&laid, dc, "  "); err != nil {
		return nil, "", nil, err
	}
	var b strings.Builder
	shown := *t // the warnings are raised as CCSWarnings: not again in the text, as ccs ood's
	shown.Warnings = nil
	if err := shown.WriteText(&b); err != nil {
		return nil, "", nil, err
	}
	return bytes.TrimSuffix(laid.Bytes(), []byte("\n")), b.String(), warnings, nil
}

// ccs_ood_detect_start starts ccs ood as a job: set's OOD scores and,
// with train, the baselines', on the in-distribution bundle id and the n
// OOD bundles oods (handles), with ood_cal calibrating the baselines'
// tests (0: none). Its progress reports CIDER's epochs; once it is done,
// ccs_job_document gives the document and its text, ccs_job_warnings the
// warnings; ccs_job_cancel stops it (between CIDER's epochs and the
// baselines). The bundles and the set must stay open until it is done.
//
//export ccs_ood_detect_start
func ccs_ood_detect_start(setH, idH C.uintptr_t, oods *C.uintptr_t, n C.int64_t, trainH, calH C.uintptr_t, opts *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return onHandle(setH, errOut, func(s *setObj) error {
		var o detectOptions
		if err := options(opts, &o); err != nil {
			return err
		}
		conv, err := ood.ParseConvention(cmp.Or(o.FPR, "id-positive"))
		if err != nil {
			return fmt.Errorf("ood_detection: fpr: %w", err)
		}
		test := ood.Test{Alpha: ood.DefaultAlpha, Delta: o.Delta, Simultaneous: o.Simultaneous}
		if o.AlphaOOD != nil {
			test.Alpha = *o.AlphaOOD
		}
		if o.Simultaneous && o.Delta == 0 {
			return fmt.Errorf("ood_detection: simultaneous needs delta")
		}
		if err := test.Check(1 << 40); err != nil {
			return fmt.Errorf("ood_detection: %s", strings.TrimPrefix(err.Error(), "ood: "))
		}
		if o.FDR != 0 && !(o.FDR > 0 && o.FDR < 1) {
			return fmt.Errorf("ood_detection: fdr=%v: want 0 < Q < 1 (or 0: none)", o.FDR)
		}
		d := experiment.OODDetection{Set: s.s, SetName: cmp.Or(o.SetName, "the set"), IDName: cmp.Or(o.IDName, "id"),
			LabelNames: o.LabelNames, TrainName: "train", OODCalName: cmp.Or(o.OODCalName, "ood_cal"),
			Mode: o.Mode, Test: test, FDR: o.FDR, Convention: conv, CiderEpochs: 100, Seed: o.Seed}
		if o.CiderEpochs != nil {
			d.CiderEpochs = *o.CiderEpochs
		}
		features := func(h C.uintptr_t, name string) (*bundleObj, error) {
			b, err := lookup[*bundleObj](uintptr(h), "a bundle")
			if err != nil {
				return nil, err
			}
			if err := s.s.CheckDim(name, b.b.N, b.b.D); err != nil {
				return nil, err
			}
			// As ccs ood refuses them: unnormalised inputs against a set of
			// unit-norm embeddings are told apart by their norm alone.
			if err := s.s.CheckBundleNorms(b.b); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return b, nil
		}
		id, err := features(idH, d.IDName)
		if err != nil {
			return err
		}
		d.ID = id.b
		d.IDBlocks = id.manifest.BlocksOf(id.path, d.ID) // rows of a few recordings: the shift checks say so
		if n == 0 && o.ByClass {
			return fmt.Errorf("ood_detection: by_class splits an OOD sample by its labels: give one (ood=)")
		}
		if n > 0 && oods != nil {
			for i, h := range unsafe.Slice((*C.uintptr_t)(unsafe.Pointer(oods)), int(n)) {
				name := fmt.Sprintf("ood[%d]", i)
				if i < len(o.OODNames) {
					name = o.OODNames[i]
				}
				bo, err := features(h, name)
				if err != nil {
					return err
				}
				b := bo.b
				if !o.ByClass {
					d.OOD, d.OODNames = append(d.OOD, b), append(d.OODNames, name)
					continue
				}
				// As ccs ood -ood-by-class splits it: by the labels'
				// names (ccs.bundle's, or the manifest's beside a file),
				// an ood.npz of labels of several a row by the labels
				// its manifest says were held out.
				held, _ := bo.manifest.SeveralLabelsOODOf(bo.path, b)
				subs, names, err := experiment.OODByClass(b, name, bo.names, held, bo.name(name), "by_class")
				if err != nil {
					return fmt.Errorf("ood_detection: %w", err)
				}
				d.OOD, d.OODNames = append(d.OOD, subs...), append(d.OODNames, names...)
			}
		}
		if trainH != 0 {
			train, err := features(trainH, cmp.Or(o.TrainName, "train"))
			if err != nil {
				return err
			}
			d.Train = train.b
			if o.TrainName != "" && o.TrainName != "train" {
				d.TrainName = "train=" + o.TrainName // messages name the keyword and its file
			}
		}
		if calH != 0 {
			if d.Train == nil {
				return fmt.Errorf("ood_detection: ood_cal is for the baselines: give train too")
			}
			cal, err := features(calH, d.OODCalName)
			if err != nil {
				return err
			}
			d.OODCal, d.OODCalLabelNames = cal.b, o.OODCalLabelNames
			if d.OODCalLabelNames == nil {
				d.OODCalLabelNames = cal.names
			}
		}
		if o.Classifier != "" {
			if d.Train == nil {
				return fmt.Errorf("ood_detection: classifier is for the baselines: give train too")
			}
			if d.Classifier, err = ood.ReadClassifier(o.Classifier); err != nil {
				return err
			}
			d.ClassifierName = "classifier=" + o.Classifier
		}
		j := startJob("ood_detection", func(ctx context.Context, j *job) error {
			d.Progress = func(e, n int) {
				j.report(map[string]any{"part": "cider", "done": e, "total": n, "what": fmt.Sprintf("CIDER epoch %d/%d", e, n)})
			}
			// The k-NN searches report every 96 inputs: at most one report
			// of a part each 100 ms, and each part's end; every baseline's
			// end ("baselines", done of total).
			d.Steps = j.partReports("baselines")
			dj, t, w, err := detect(ctx, d, o)
			if err != nil {
				return err
			}
			j.mu.Lock()
			j.doc, j.text, j.warnings = dj, t, warningsOf(w...)
			j.mu.Unlock()
			return nil
		})
		*out = C.uintptr_t(newHandle(j))
		return nil
	})
}

// ccs_job_warnings writes a finished OOD detection's warnings (a JSON
// list).
//
//export ccs_job_warnings
func ccs_job_warnings(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		if err := j.finished(); err != nil {
			return err
		}
		if j.doc == nil {
			return fmt.Errorf("the job is a %s, not an OOD detection", j.what)
		}
		return jsonOut(out, warningsOf(j.warnings...))
	})
}
