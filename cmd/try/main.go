package main

import (
	"fmt"
	"os"
	"time"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

func main() {
	data := sim.Mixed(sim.PaperDataSeed, sim.PerClass)
	sp := data.Split(0)
	fit, _ := data.Pairs(sp.Fit, 500, 0, "fit")
	val, _ := data.Pairs(sp.Val, 500, 0, "val")
	cal, _ := data.Pairs(sp.Cal, 500, 0, "cal")
	test, _ := data.Pairs(sp.Test, 500, 0, "test")
	for _, kind := range []string{os.Args[1]} {
		for _, obj := range []objective.Objective{objective.Neg, objective.Vol, objective.NegVol} {
			var g geometry.Learnable
			if kind == "single" {
				g = geometry.IdentityNorm(3, 2)
			} else {
				g = geometry.UnitGenBall(3, 2)
			}
			t0 := time.Now()
			res, err := train.Train(g, fit, val, train.Config{Objective: objective.Config{Objective: obj}}, nil)
			if err != nil {
				fmt.Println(err)
				continue
			}
			set, _ := conformal.Calibrate(g, cal, 0.05, conformal.Options{})
			r, _ := eval.Evaluate(set, test)
			el := time.Since(t0)
			fmt.Printf("%s %v: epochs %d best %d val %.3f | cov %.3f exc %.3f logvol/d %.2f | %v (%.2fs/epoch) params %.3v\n", kind, obj, res.Epochs, res.BestEpoch, res.ValExclusion, r.Coverage, r.Exclusion, r.LogVolPerDim, el.Round(time.Millisecond), el.Seconds()/float64(res.Epochs), g.Params(nil))
		}
	}
}
