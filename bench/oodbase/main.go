// Command oodbase times each OOD baseline's fit and scoring on feature
// files, as `ccs ood -train` runs them, and prints its AUROC (ID
// negative, OOD positive, ties ½) to compare with bench/oodnumpy:
//
//	go run ./bench/oodbase -train TRAIN.npz -id ID.npz -ood OOD.npz [-classifier CL.npz] [-cider-epochs 1]
//
// The files are bundles or features-only files ("embeddings" or
// "anchors", with labels, logits and activations where the baselines need
// them). It prints one JSON line per baseline: fit and score seconds and
// the AUROC in %, and progress on stderr (-quiet: none).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/ood"
)

func main() {
	trainPath := flag.String("train", "", "training features (.npz)")
	idPath := flag.String("id", "", "in-distribution test features (.npz)")
	oodPath := flag.String("ood", "", "OOD features (.npz)")
	clPath := flag.String("classifier", "", "the encoder's last layer (.npz), for ViM")
	ciderEpochs := flag.Int("cider-epochs", 1, "CIDER's training epochs")
	quiet := flag.Bool("quiet", false, "no progress on stderr")
	flag.Parse()
	if err := run(*trainPath, *idPath, *oodPath, *clPath, *ciderEpochs, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "oodbase:", err)
		os.Exit(1)
	}
}

func run(trainPath, idPath, oodPath, clPath string, ciderEpochs int, quiet bool) error {
	var samples [3]ood.Sample
	for i, p := range []string{trainPath, idPath, oodPath} {
		b, err := bundle.ReadFeatures(p)
		if err != nil {
			return err
		}
		samples[i] = ood.SampleOf(b)
	}
	var cl *ood.Classifier
	if clPath != "" {
		var err error
		if cl, err = ood.ReadClassifier(clPath); err != nil {
			return err
		}
	}
	steps := ood.Steps(func(step string, done, total int) {
		if !quiet {
			fmt.Fprintf(os.Stderr, "\r%s: %d/%d   ", step, done, total)
			if done == total {
				fmt.Fprintln(os.Stderr)
			}
		}
	})
	enc := json.NewEncoder(os.Stdout)
	for _, det := range ood.Baselines(ood.BaselineOptions{Classifier: cl, Epochs: ciderEpochs}) {
		switch d := det.(type) {
		case *ood.KNN:
			d.Progress = steps
		case *ood.DKNN:
			d.Progress = steps
		case *ood.COMBOOD:
			d.Progress = steps
		}
		out := map[string]any{"baseline": det.Name()}
		start := time.Now()
		err := det.Fit(samples[0])
		out["fit_s"] = time.Since(start).Seconds()
		if err == nil {
			start = time.Now()
			var id, od []float64
			if id, err = det.Score(samples[1]); err == nil {
				od, err = det.Score(samples[2])
			}
			out["score_s"] = time.Since(start).Seconds()
			if err == nil {
				out["auroc"] = 100 * ood.AUROC(id, od)
			}
		}
		if err != nil {
			out["error"] = err.Error()
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	return nil
}
