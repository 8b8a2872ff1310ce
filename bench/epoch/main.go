// Command epoch times training epochs of ccs on generated data, for the
// side-by-side comparison with PyTorch (bench/run.sh).
//
//	go run ./bench/epoch -gen data.npz -n 10000 -k 50 -d 128      # write the data
//	go run ./bench/epoch -data data.npz -geometry genball          # time 2 epochs
//
// It prints one JSON line: the seconds of epoch 1 (which includes preparing
// the split once) and of epoch 2 (steady state).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

func main() {
	gen := flag.String("gen", "", "write generated data to this .npz and exit")
	data := flag.String("data", "", "bundle .npz to train on")
	n := flag.Int("n", 10000, "anchors (with -gen)")
	k := flag.Int("k", 50, "positives and negatives per anchor (with -gen)")
	d := flag.Int("d", 128, "dimension (with -gen)")
	geom := flag.String("geometry", "genball", "single or genball")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the epochs after the first (the steady ones) to this file")
	flag.Parse()
	if err := run(*gen, *data, *n, *k, *d, *geom, *cpuProfile); err != nil {
		fmt.Fprintln(os.Stderr, "epoch:", err)
		os.Exit(1)
	}
}

func run(gen, data string, n, k, d int, geom, cpuProfile string) error {
	if gen != "" {
		return bundle.Write(gen, sim.Gauss(rand.New(rand.NewPCG(1, 1)), n, k, d))
	}
	fit, err := bundle.Read(data)
	if err != nil {
		return err
	}
	kind, err := geometry.ParseKind(geom)
	if err != nil {
		return err
	}
	val := sim.Unseparated(sim.Gauss(rand.New(rand.NewPCG(2, 2)), 200, fit.K, fit.D))
	var marks []time.Duration
	epochs := 2
	var prof *os.File
	if cpuProfile != "" {
		epochs = 6 // five steady epochs in the profile
		if prof, err = os.Create(cpuProfile); err != nil {
			return err
		}
		defer prof.Close()
	}
	cfg := train.Config{Objective: objective.Config{Objective: objective.NegVol}, MaxEpochs: epochs, Patience: 10}
	start := time.Now()
	_, err = train.Fit(context.Background(), train.Spec{Kind: kind, Config: cfg}, fit, val, train.ObserverFunc(func(p train.Progress) {
		if !p.Done {
			marks = append(marks, time.Since(start))
			if prof != nil && len(marks) == 2 {
				if err := pprof.StartCPUProfile(prof); err != nil {
					fmt.Fprintln(os.Stderr, "epoch:", err)
				}
			}
		}
	}))
	total := time.Since(start)
	if prof != nil {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	// marks: after epoch 0 (preparation + initial validation) and epoch 1.
	out := map[string]any{"impl": "ccs", "geometry": geom, "kernels": kernel.Describe(), "threads": runtime.GOMAXPROCS(0),
		"n": fit.N, "k": fit.K, "d": fit.D,
		"epoch1_s": marks[1].Seconds(), "epoch2_s": (total - marks[1]).Seconds() / float64(epochs-1)}
	return json.NewEncoder(os.Stdout).Encode(out)
}
