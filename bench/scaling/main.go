// Command scaling measures how ccs's hot paths scale with the number of
// threads, on generated data, in one process:
//
//   - the steady training epoch (Neg+Vol, batch 256) of the generalized
//     ball and the single-norm at 1, 2, 4, … NumCPU threads (GOMAXPROCS
//     and the trainer's workers both set to the count);
//   - one retrieval query over a collection (ℓ2 ball, generalized ball,
//     single-norm after its transform, a generalized ball behind a head
//     after its) at 2 and NumCPU threads (or the
//     -threads counts), with the rate at which it read the compact copy
//     it screens;
//   - one per-input OOD query (the k-th nearest pool row under each
//     geometry's score) at 2 and NumCPU threads (or the -threads counts);
//   - the machine's own ceilings for the training's speedup (-parts
//     ceiling): the generalized epoch's kernel on data each thread keeps in
//     its L1 cache, the memory's read rate over as many bytes as the
//     training's rows, and each geometry's training steps on threads that
//     share nothing (each its own batches), at the -threads counts.
//
// It prints a table and, with -json FILE, writes the figures as JSON.
//
//	go run ./bench/scaling                        # everything, the sizes
//	go run ./bench/scaling -parts train -epochs 8 -threads 1,2
//
// Each figure is the median over repetitions in the same process (epochs
// after the first, which prepares the split; queries after a warm-up), with
// the minimum beside it: on a shared machine the minimum is the better
// estimate of the cost, the median of what a user sees.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/hugepage"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/ood"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

func main() {
	o := options{}
	flag.IntVar(&o.n, "n", 10000, "training anchors")
	flag.IntVar(&o.k, "k", 50, "positives and negatives per anchor")
	flag.IntVar(&o.d, "d", 128, "dimension")
	flag.IntVar(&o.epochs, "epochs", 5, "steady epochs per thread count (after the first)")
	flag.IntVar(&o.items, "items", 1_000_000, "retrieval collection size")
	flag.IntVar(&o.pool, "pool", 10000, "OOD reference pool size")
	flag.IntVar(&o.reps, "reps", 30, "queries per figure (retrieval and OOD)")
	flag.BoolVar(&o.interleave, "interleave", false, "train: switch the thread count every epoch, cycling through -threads in one run (on a shared machine the others' load then falls on every count alike)")
	threads := flag.String("threads", "", "thread counts, comma-separated (default: training and ceiling 1, 2, 4, … NumCPU; queries 2 and NumCPU)")
	parts := flag.String("parts", "train,retrieve,ood", "what to measure: train, retrieve, ood, ceiling")
	geoms := flag.String("geometries", "genball,single", "training geometries")
	jsonOut := flag.String("json", "", "write the figures as JSON to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	traceOut := flag.String("trace", "", "write an execution trace (runtime/trace) of the steady epochs of the first geometry at the first thread count to this file (-parts train, without -interleave)")
	flag.Parse()
	var err error
	if o.threads, err = parseThreads(*threads); err != nil {
		fmt.Fprintln(os.Stderr, "scaling: -threads:", err)
		os.Exit(2)
	}
	o.threadsGiven = *threads != ""
	o.parts, o.geometries = strings.Split(*parts, ","), strings.Split(*geoms, ",")
	for _, p := range o.parts {
		if !slices.Contains([]string{"train", "retrieve", "ood", "ceiling"}, p) {
			fmt.Fprintf(os.Stderr, "scaling: -parts: unknown part %q (train, retrieve, ood, ceiling)\n", p)
			os.Exit(2)
		}
	}
	if *traceOut != "" && (!slices.Contains(o.parts, "train") || o.interleave) {
		fmt.Fprintln(os.Stderr, "scaling: -trace traces training epochs: it needs -parts train, without -interleave")
		os.Exit(2)
	}
	if *traceOut != "" {
		f, err := os.Create(*traceOut)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scaling: -trace:", err)
			os.Exit(1)
		}
		defer f.Close()
		o.trace = f
	}
	if err := profiled(*cpuProfile, func() error { return run(os.Stdout, o, *jsonOut) }); err != nil {
		fmt.Fprintln(os.Stderr, "scaling:", err)
		os.Exit(1)
	}
}

// profiled runs f, under a CPU profile written to file when file is not
// empty.
func profiled(file string, f func() error) error {
	if file == "" {
		return f()
	}
	out, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	err = f()
	pprof.StopCPUProfile()
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("-cpuprofile: %w", cerr)
	}
	return err
}

type options struct {
	n, k, d, epochs, items, pool, reps int
	threads                            []int
	parts, geometries                  []string
	interleave, threadsGiven           bool
	trace                              io.Writer // where the steady epochs' trace goes, if anywhere
}

// parseThreads reads "1,2,4"; empty means 1, 2, 4, … up to NumCPU (and
// NumCPU itself).
func parseThreads(s string) ([]int, error) {
	if s == "" {
		var t []int
		for c := 1; c < runtime.NumCPU(); c *= 2 {
			t = append(t, c)
		}
		return append(t, runtime.NumCPU()), nil
	}
	var t []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(f)
		if err != nil || c < 1 {
			return nil, fmt.Errorf("%q is not a thread count", f)
		}
		t = append(t, c)
	}
	return t, nil
}

// Figure is one measurement: the median and minimum over its repetitions.
type Figure struct {
	Part     string  `json:"part"`     // train, retrieve, ood or ceiling
	Name     string  `json:"name"`     // geometry (and variant)
	Threads  int     `json:"threads"`  // GOMAXPROCS and workers
	MedianS  float64 `json:"median_s"` // seconds
	MinS     float64 `json:"min_s"`
	Reps     int     `json:"reps"`
	Speedup  float64 `json:"speedup,omitempty"`    // over 1 thread (training, ceiling)
	Efficacy float64 `json:"efficiency,omitempty"` // speedup / threads
	Bytes    int64   `json:"bytes,omitempty"`      // read once a repetition (the memory's read rate)
}

// Report is what -json writes.
type Report struct {
	Date    string   `json:"date"`
	CPUs    int      `json:"num_cpu"`
	Kernels string   `json:"kernels"`
	Sizes   string   `json:"sizes"`
	Figures []Figure `json:"figures"`
}

func run(w io.Writer, o options, jsonOut string) error {
	rep := Report{Date: time.Now().Format(time.DateOnly), CPUs: runtime.NumCPU(), Kernels: kernel.Describe(),
		Sizes: fmt.Sprintf("train n=%d k=%d d=%d; retrieval %d items; OOD pool %d", o.n, o.k, o.d, o.items, o.pool)}
	saved := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(saved)
	for _, p := range o.parts {
		var figs []Figure
		var err error
		switch p {
		case "train":
			figs, err = trainFigures(o)
		case "retrieve":
			figs, err = retrieveFigures(o)
		case "ood":
			figs, err = oodFigures(o)
		case "ceiling":
			figs, err = ceilingFigures(o)
		default:
			err = fmt.Errorf("unknown part %q (train, retrieve, ood, ceiling)", p)
		}
		if err != nil {
			return err
		}
		rep.Figures = append(rep.Figures, figs...)
	}
	fmt.Fprintf(w, "%s, %d CPUs, %s; %s\n", rep.Date, rep.CPUs, rep.Kernels, rep.Sizes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "part\tname\tthreads\tmedian\tmin\treps\tspeedup\tefficiency\trate\t")
	for _, f := range rep.Figures {
		sp, ef, rate := "", "", ""
		if f.Speedup > 0 {
			sp, ef = fmt.Sprintf("%.2f×", f.Speedup), fmt.Sprintf("%.0f%%", 100*f.Efficacy)
		}
		if f.Bytes > 0 {
			rate = fmt.Sprintf("%.1f GB/s", float64(f.Bytes)/f.MedianS/1e9)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\t\n", f.Part, f.Name, f.Threads, dur(f.MedianS), dur(f.MinS), f.Reps, sp, ef, rate)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if jsonOut == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(jsonOut, append(b, '\n'), 0o644)
}

func dur(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.2f ms", s*1e3)
	}
	return fmt.Sprintf("%.1f µs", s*1e6)
}

func figure(part, name string, threads int, times []float64) Figure {
	s := slices.Clone(times)
	slices.Sort(s)
	return Figure{Part: part, Name: name, Threads: threads, MedianS: s[len(s)/2], MinS: s[0], Reps: len(s)}
}

// trainFigures times the steady epochs at each thread count.
func trainFigures(o options) ([]Figure, error) {
	fit := sim.Gauss(rand.New(rand.NewPCG(1, 1)), o.n, o.k, o.d)
	val := sim.Unseparated(sim.Gauss(rand.New(rand.NewPCG(2, 2)), 200, o.k, o.d))
	var figs []Figure
	for _, g := range o.geometries {
		kind, err := geometry.ParseKind(g)
		if err != nil {
			return nil, err
		}
		var one float64
		byThreads := map[int][]float64{}
		if o.interleave {
			var err error
			if byThreads, err = interleaved(kind, fit, val, o.threads, o.epochs); err != nil {
				return nil, fmt.Errorf("%s: %w", g, err)
			}
		}
		for _, t := range o.threads {
			times := byThreads[t]
			if !o.interleave {
				var err error
				if times, err = epochs(kind, fit, val, t, o.epochs, o.trace); err != nil {
					return nil, fmt.Errorf("%s at %d threads: %w", g, t, err)
				}
				o.trace = nil // the first geometry and thread count only
			}
			f := figure("train", g, t, times)
			if t == 1 {
				one = f.MedianS
			}
			if one > 0 {
				f.Speedup = one / f.MedianS
				f.Efficacy = f.Speedup / float64(t)
			}
			figs = append(figs, f)
		}
	}
	return figs, nil
}

// epochs trains for 1 + steady epochs on threads threads and returns the
// steady epochs' seconds (each with its validation pass), writing an
// execution trace of them to tr when it is not nil.
func epochs(kind geometry.Kind, fit, val *bundle.Bundle, threads, steady int, tr io.Writer) ([]float64, error) {
	runtime.GOMAXPROCS(threads)
	cfg := train.Config{Objective: objective.Config{Objective: objective.NegVol}, MaxEpochs: steady + 1,
		Patience: steady + 2, Workers: threads}
	var marks []time.Time
	var traceErr error
	_, err := train.Fit(context.Background(), train.Spec{Kind: kind, Config: cfg}, fit, val, train.ObserverFunc(func(p train.Progress) {
		marks = append(marks, time.Now())
		if tr != nil && len(marks) == 2 {
			traceErr = trace.Start(tr)
		}
	}))
	if tr != nil && traceErr == nil {
		trace.Stop()
	}
	if err == nil && traceErr != nil {
		err = fmt.Errorf("-trace: %w", traceErr)
	}
	if err != nil {
		return nil, err
	}
	// marks: epoch 0 (preparation), epochs 1…steady+1 (the last one's
	// report is the Done one).
	var times []float64
	for e := 2; e < len(marks); e++ {
		times = append(times, marks[e].Sub(marks[e-1]).Seconds())
	}
	return times, nil
}

// interleaved trains for 1 + steady·len(threads) epochs, switching
// GOMAXPROCS (the trainer's workers follow it) to the next of threads
// before every epoch, and returns the steady epochs' seconds by thread
// count.
func interleaved(kind geometry.Kind, fit, val *bundle.Bundle, threads []int, steady int) (map[int][]float64, error) {
	cfg := train.Config{Objective: objective.Config{Objective: objective.NegVol}, MaxEpochs: 1 + steady*len(threads),
		Patience: 2 + steady*len(threads)}
	out := map[int][]float64{}
	last, epoch := time.Now(), 0
	runtime.GOMAXPROCS(threads[0])
	_, err := train.Fit(context.Background(), train.Spec{Kind: kind, Config: cfg}, fit, val, train.ObserverFunc(func(p train.Progress) {
		now := time.Now()
		if epoch >= 2 { // epoch 0 is the preparation, epoch 1 the first
			t := threads[(epoch-1)%len(threads)]
			out[t] = append(out[t], now.Sub(last).Seconds())
		}
		epoch++
		runtime.GOMAXPROCS(threads[(epoch-1)%len(threads)])
		last = time.Now()
	}))
	return out, err
}

// queryThreads are the -threads counts when they were given, else 2 and
// NumCPU (once when they are the same).
func (o options) queryThreads() []int {
	if o.threadsGiven {
		return o.threads
	}
	if runtime.NumCPU() <= 2 {
		return []int{2}
	}
	return []int{2, runtime.NumCPU()}
}

// sets returns an ℓ2 ball, a generalized ball, a single-norm and a
// generalized ball behind a square head near the identity (an InfoNCE
// row's set) at d with thresholds that keep about a fraction keep of rows
// (scored on the first 10 000).
func sets(rng *rand.Rand, rows []float32, d int, keep float64) ([]*conformal.Set, error) {
	m, p := make([]float64, d), make([]float64, d)
	for j := range d {
		m[j], p[j] = 0.5+rng.Float64(), 1.5+rng.Float64()
	}
	gb, err := geometry.NewGenBall(m, p)
	if err != nil {
		return nil, err
	}
	mm := make([]float64, d*d)
	for i := range mm {
		mm[i] = 0.05 * rng.NormFloat64()
	}
	for j := range d {
		mm[j*d+j] += 1
	}
	nm, err := geometry.NewNorm(d, mm, 1.5)
	if err != nil {
		return nil, err
	}
	w := make([]float64, d*d)
	for i := range w {
		w[i] = 0.05 * rng.NormFloat64()
	}
	for j := range d {
		w[j*d+j] += 1
	}
	hg, err := head.NewProjected(&head.Linear{In: d, Out: d, W: w, B: make([]float64, d)}, gb)
	if err != nil {
		return nil, err
	}
	var out []*conformal.Set
	for _, g := range []geometry.Geometry{geometry.Ball{D: d}, gb, nm, hg} {
		n := min(10000, len(rows)/d)
		sc := g.Scores(make([]float64, n), rows[:n*d])
		slices.Sort(sc)
		out = append(out, &conformal.Set{Geometry: g, Threshold: sc[int(keep*float64(n))], Alpha: 0.05,
			Calibration: conformal.Info{Mode: conformal.OnePerAnchor, N: 100, Rank: 96}})
	}
	return out, nil
}

func gaussRows(rng *rand.Rand, n, d int) []float32 {
	x := make([]float32, n*d)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// retrieveFigures times one query over the collection per geometry, the
// single-norm and the head's set after their one-time transforms (the
// head's: W·z of every item) and the balls after the
// collection's half-precision copy (as retrieve's BenchmarkSearch).
func retrieveFigures(o options) ([]Figure, error) {
	rng := rand.New(rand.NewPCG(1, 1))
	rows := gaussRows(rng, o.items, o.d)
	c, err := retrieve.NewCollection(rows, o.d, nil)
	if err != nil {
		return nil, err
	}
	ss, err := sets(rng, rows, o.d, 0.001)
	if err != nil {
		return nil, err
	}
	for _, s := range ss[2:] {
		if err := c.Transform(s, 0); err != nil {
			return nil, err
		}
	}
	// The compact copies, as the second search of each kind would start
	// them (ccs serve: at load): the ℓ2 ball screens the half floats, the
	// generalized ball the 8-bit codes, the transformed single-norm (p =
	// 1.5) its M·z's 8-bit codes. The rate column is those bytes over
	// the query's median, a lower bound of the memory's read rate.
	c.PrepareHalf()
	c.PrepareBytes()
	anchor := make([]float32, o.d)
	names := []string{"ball", "genball", "single (transformed)", "genball+head (transformed)"}
	screened := []int64{retrieve.HalfBytes(o.items, o.d), retrieve.ByteBytes(o.items, o.d), retrieve.ByteBytes(o.items, o.d), retrieve.ByteBytes(o.items, o.d)}
	var figs []Figure
	for _, t := range o.queryThreads() {
		runtime.GOMAXPROCS(t)
		for i, s := range ss {
			times, err := repeat(o.reps, func() error {
				_, _, err := retrieve.Search(context.Background(), s, anchor, c, 100)
				return err
			})
			if err != nil {
				return nil, err
			}
			f := figure("retrieve", names[i], t, times)
			f.Bytes = screened[i]
			figs = append(figs, f)
		}
	}
	return figs, nil
}

// oodFigures times one per-input query (k = 1) against a pool per
// geometry (as ood's BenchmarkPoolOne*).
func oodFigures(o options) ([]Figure, error) {
	rng := rand.New(rand.NewPCG(3, 3))
	pool := gaussRows(rng, o.pool, o.d)
	ss, err := sets(rng, pool, o.d, 0.05)
	if err != nil {
		return nil, err
	}
	n2, err := geometry.NewNorm(o.d, ss[2].Geometry.(*geometry.Norm).M(), 2)
	if err != nil {
		return nil, err
	}
	geoms := []geometry.Geometry{ss[0].Geometry, ss[1].Geometry, n2, ss[2].Geometry}
	names := []string{"ball", "genball", "single p=2", "single p=1.5"}
	queries := gaussRows(rng, o.reps, o.d)
	var figs []Figure
	for _, t := range o.queryThreads() {
		runtime.GOMAXPROCS(t)
		for i, g := range geoms {
			p, err := ood.NewPool(g, pool)
			if err != nil {
				return nil, err
			}
			dst := make([]float64, 1)
			q := 0
			times, err := repeat(o.reps, func() error {
				_, err := p.Kth(dst, queries[q*o.d:(q+1)*o.d], 1)
				q = (q + 1) % o.reps
				return err
			})
			if err != nil {
				return nil, err
			}
			figs = append(figs, figure("ood", names[i], t, times))
		}
	}
	return figs, nil
}

// ceilingFigures measures what the training's speedup cannot beat on this
// machine: the generalized epoch's kernel (kernel.ExpRow at d) on one row
// that each thread keeps in its L1 cache, so that the threads share no
// data and read no memory. T threads each do the work one does alone; the
// figure is the wall time, and the speedup the throughput's, T × one
// thread's median / T threads' median. Below T× it says that the threads
// share a core's units (SMT, or a hypervisor's vCPUs on one physical core)
// or its clock. The thread counts take turns, rep by rep, so that a shared
// machine's load falls on all alike.
func ceilingFigures(o options) ([]Figure, error) {
	const calls = 500_000 // about 50 ms at d = 128 on one Zen 4 core
	d := o.d
	rows := make([][5][]float32, slices.Max(o.threads))
	for i := range rows {
		for j := range rows[i] {
			rows[i][j] = make([]float32, d)
		}
		for j := range d {
			rows[i][0][j], rows[i][1][j], rows[i][2][j] = 0.1, 1.5, float32(j%7)-3.1
		}
	}
	sink := make([]float64, len(rows))
	figs := inTurns(o.threads, o.reps, func(t int) float64 {
		return onGoroutines(t, func(g int) {
			r := rows[g]
			var s float64
			for range calls {
				s += kernel.ExpRow(r[0], r[1], r[2], r[3], r[4])
			}
			sink[g] = s
		})
	}, fmt.Sprintf("ExpRow d=%d in L1", d), true)
	figs = append(figs, readFigures(o)...)
	steps, err := stepsFigures(o)
	return append(figs, steps...), err
}

// stepsFigures measures each training geometry's steps on threads that
// share nothing: T goroutines, each with its own objective.Evaluator of
// one worker, run every T-th batch of an epoch (batch 256, Neg+Vol, the
// prepared rows of the training figures' split, the parameters held
// fixed), so that the T threads do one epoch's steps between them without
// a hand-over inside a step. The speedup over one thread is what the
// training's epoch could reach on this machine; the gap between it and
// the train figure's is what sharing each step costs (the calls' hand-
// overs, the step's serial part), the gap below T× what the machine does
// (cores sharing units, caches or memory).
func stepsFigures(o options) ([]Figure, error) {
	fit := sim.Gauss(rand.New(rand.NewPCG(1, 1)), o.n, o.k, o.d)
	order := rand.New(rand.NewPCG(3, 3)).Perm(fit.N)
	const batch = 256
	var figs []Figure
	for _, name := range o.geometries {
		kind, err := geometry.ParseKind(name)
		if err != nil {
			return nil, err
		}
		g, _, err := geometry.Initial(kind, o.d)
		if err != nil {
			return nil, err
		}
		pos, neg := make([]float32, fit.N*fit.K*fit.D), make([]float32, fit.N*fit.KNeg*fit.D)
		hugepage.Advise(pos) // as the trainer's prepared rows are
		hugepage.Advise(neg)
		pw, nw := fit.K*fit.D, fit.KNeg*fit.D
		for i := range fit.N {
			fit.PositiveDiffs(pos[i*pw:(i+1)*pw], i)
			fit.NegativeDiffs(neg[i*nw:(i+1)*nw], i)
		}
		gp, prepared := g.(geometry.Prepared)
		if prepared {
			gp.Prepare(pos, pos)
			gp.Prepare(neg, neg)
		}
		most := slices.Max(o.threads)
		evs, grads, errs := make([]*objective.Evaluator, most), make([][]float64, most), make([]error, most)
		for w := range evs {
			if evs[w], err = objective.New(objective.Config{Objective: objective.NegVol, Workers: 1}); err != nil {
				return nil, err
			}
			grads[w] = make([]float64, g.NumParams())
		}
		figs = append(figs, inTurns(o.threads, o.epochs, func(t int) float64 {
			return onGoroutines(t, func(w int) {
				for b := w; b*batch < fit.N; b += t {
					bt := objective.Batch{Pos: pos, Neg: neg, Prepared: prepared, Anchors: order[b*batch : min(fit.N, (b+1)*batch)],
						PosPer: fit.K, NegPer: fit.KNeg}
					if _, err := evs[w].Eval(g, bt, objective.Grads{Params: grads[w]}); err != nil && errs[w] == nil {
						errs[w] = err
					}
				}
			})
		}, name+" steps apart", false)...)
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("%s steps: %w", name, err)
		}
	}
	return figs, nil
}

// readFigures measures the memory's read rate at the -threads counts: one
// pass of kernel.MaxAbs (a vector compare a cache line) over as many
// float32s as the training's prepared rows (n·2k·d), each thread its own
// contiguous part. A training epoch that streams its rows at this rate is
// bound by the memory, not the threads. The speedup is one thread's time
// over T threads' (the same bytes in all).
func readFigures(o options) []Figure {
	x := make([]float32, o.n*2*o.k*o.d)
	for i := range x {
		x[i] = float32(i & 1023)
	}
	bytes := int64(len(x)) * 4
	sink := make([]float32, slices.Max(o.threads))
	figs := inTurns(o.threads, min(o.reps, 10), func(t int) float64 {
		part := (len(x)/t + 15) &^ 15
		return onGoroutines(t, func(g int) {
			lo := min(len(x), g*part)
			sink[g] = kernel.MaxAbs(x[lo:min(len(x), lo+part)])
		})
	}, fmt.Sprintf("read %d MB", bytes/1e6), false)
	for i := range figs {
		figs[i].Bytes = bytes
	}
	return figs
}

// onGoroutines runs f(0) … f(t−1) on t goroutines and returns the wall
// seconds until the last returns.
func onGoroutines(t int, f func(g int)) float64 {
	start := time.Now()
	var wg sync.WaitGroup
	for g := range t {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(g)
		}()
	}
	wg.Wait()
	return time.Since(start).Seconds()
}

// inTurns times run(t) reps times at each thread count of threads, the
// counts taking turns (after a first round that warms up), GOMAXPROCS set
// to each, and returns a ceiling figure per count: the speedup over one
// thread is the throughput's (T threads doing T times one's work) with
// scaled, else the time's.
func inTurns(threads []int, reps int, run func(t int) float64, name string, scaled bool) []Figure {
	times := map[int][]float64{}
	for range reps + 1 {
		for _, t := range threads {
			runtime.GOMAXPROCS(t)
			times[t] = append(times[t], run(t))
		}
	}
	var figs []Figure
	var one float64
	for _, t := range threads {
		f := figure("ceiling", name, t, times[t][1:])
		if t == 1 {
			one = f.MedianS
		}
		if one > 0 {
			f.Speedup = one / f.MedianS
			if scaled {
				f.Speedup *= float64(t)
			}
			f.Efficacy = f.Speedup / float64(t)
		}
		figs = append(figs, f)
	}
	return figs
}

// repeat runs f once to warm up, then reps times, and returns the seconds
// of each.
func repeat(reps int, f func() error) ([]float64, error) {
	if err := f(); err != nil {
		return nil, err
	}
	times := make([]float64, reps)
	for r := range times {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		times[r] = time.Since(start).Seconds()
	}
	return times, nil
}
