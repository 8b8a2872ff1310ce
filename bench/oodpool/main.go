// Command oodpool times the per-input OOD score of a set file on real
// embeddings: one input at a time against the set's reference pool (what
// a service pays per request), and all the inputs of a file at once (what
// calibrating the test costs).
//
//	go run ./bench/oodpool -set SET.json -queries FILE.npz [-one 200] [-k 1]
//
// SET.json is a set calibrated with a reference pool (ccs calibrate
// -reference-db POOL.npz); FILE.npz holds "embeddings" or "anchors". It
// prints one JSON line: the pool's size, the median and 90th percentile of
// the one-input times in milliseconds, and the seconds for the whole file.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/ood"
)

func main() {
	setPath := flag.String("set", "", "calibrated set file with a reference pool")
	queries := flag.String("queries", "", "embeddings to score (.npz)")
	one := flag.Int("one", 200, "inputs timed one at a time")
	k := flag.Int("k", 1, "the score's neighbour")
	flag.Parse()
	if err := run(*setPath, *queries, *one, *k); err != nil {
		fmt.Fprintln(os.Stderr, "oodpool:", err)
		os.Exit(1)
	}
}

func run(setPath, queries string, one, k int) error {
	set, err := conformal.Load(setPath)
	if err != nil {
		return err
	}
	q, err := bundle.ReadFeatures(queries)
	if err != nil {
		return err
	}
	near, err := ood.NewNearest(set, nil, k)
	if err != nil {
		return err
	}
	d := q.D
	if _, err := near.Scores(q.Anchors[:d]); err != nil { // warm up
		return err
	}
	times := make([]float64, 0, one)
	for i := range min(one, q.N) {
		start := time.Now()
		if _, err := near.Scores(q.Anchors[i*d : (i+1)*d]); err != nil {
			return err
		}
		times = append(times, float64(time.Since(start).Nanoseconds())/1e6)
	}
	slices.Sort(times)
	start := time.Now()
	if _, err := near.Scores(q.Anchors); err != nil {
		return err
	}
	all := time.Since(start).Seconds()
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"geometry": geometry.Describe(set.Geometry).Kind.String(), "pool": set.Reference.N, "dim": d, "cores": runtime.GOMAXPROCS(0),
		"one_median_ms": times[len(times)/2], "one_p90_ms": times[len(times)*9/10],
		"queries": q.N, "all_seconds": all,
	})
}
