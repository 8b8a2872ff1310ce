package train

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/objective"
	"github.com/ccsets/ccs/sim"
)

// smallSim returns the fit and validation bundles of a small simulation.
func smallSim(t *testing.T, perClass, k int, seed uint64) (fit, val *bundle.Bundle) {
	t.Helper()
	data := sim.Mixed(sim.PaperDataSeed, perClass)
	sp := data.Split(seed)
	var err error
	if fit, err = data.Pairs(sp.Fit, k, seed, "fit"); err != nil {
		t.Fatal(err)
	}
	if val, err = data.Pairs(sp.Val, k, seed, "val"); err != nil {
		t.Fatal(err)
	}
	return fit, val
}

// TestDeterministic: the same seed gives the same parameters and history,
// to the bit, for 1 and 3 goroutines.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 600, 40, 1)
	for _, g0 := range []func() geometry.Learnable{
		func() geometry.Learnable { return geometry.UnitGenBall(3, 2) },
		func() geometry.Learnable { return geometry.IdentityNorm(3, 2) },
	} {
		var ref []float64
		var refRes *Result
		for _, w := range []int{1, 3} {
			g := g0()
			cfg := Config{Objective: objective.Config{Objective: objective.NegVol}, MaxEpochs: 6, BatchSize: 64, Seed: 9, Workers: w}
			res, err := Train(context.Background(), g, fit, val, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref, refRes = g.Params(nil), res
				continue
			}
			if !slices.Equal(g.Params(nil), ref) || !slices.Equal(res.ValHistory, refRes.ValHistory) || !slices.Equal(res.LossHistory, refRes.LossHistory) {
				t.Errorf("%v: training differs between 1 and %d goroutines", g.Kind(), w)
			}
		}
	}
}

// TestBestCheckpointRestored: the returned geometry has the best validation
// exclusion of the run, early stopping ends the run after Patience epochs
// without improvement, and every epoch's exclusion is recorded.
func TestBestCheckpointRestored(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 600, 40, 2)
	g := geometry.UnitGenBall(3, 2)
	var seen []Progress
	res, err := Train(context.Background(), g, fit, val, Config{Objective: objective.Config{Objective: objective.Neg}, MaxEpochs: 60, Patience: 3, BatchSize: 64},
		ObserverFunc(func(p Progress) { seen = append(seen, p) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ValHistory) != res.Epochs+1 {
		t.Fatalf("%d validation figures for %d epochs (+ the initial one)", len(res.ValHistory), res.Epochs)
	}
	best := slices.Max(res.ValHistory)
	if res.ValExclusion != best || res.ValHistory[res.BestEpoch] != best {
		t.Errorf("best exclusion %v at epoch %d, history max %v", res.ValExclusion, res.BestEpoch, best)
	}
	rows, err := prepareSplit(context.Background(), g, val, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := (&validator{rows: rows, alpha: 0.05}).exclusion(g); got != best {
		t.Errorf("restored geometry has validation exclusion %v, want the best %v", got, best)
	}
	switch res.StopReason {
	case EarlyStop:
		if res.Epochs-res.BestEpoch != 3 {
			t.Errorf("early stop at epoch %d with best at %d, patience 3", res.Epochs, res.BestEpoch)
		}
	case MaxEpochs:
		if res.Epochs != 60 || res.Epochs-res.BestEpoch >= 3 {
			t.Errorf("stopped at max epochs after %d epochs, best at %d, patience 3", res.Epochs, res.BestEpoch)
		}
	default:
		t.Errorf("stop reason %v", res.StopReason)
	}
	if len(seen) == 0 {
		t.Fatal("the observer saw no reports")
	}
	if last := seen[len(seen)-1]; !last.Done || last.StopReason != res.StopReason || seen[0].Epoch != 0 {
		t.Errorf("observer saw %d reports, first epoch %d, last %+v", len(seen), seen[0].Epoch, last)
	}
	if best <= res.ValHistory[0] {
		t.Errorf("training did not improve on the initial ball: %v", res.ValHistory)
	}
}

// TestStep checks one SGD update against PyTorch's formulas by hand.
func TestStep(t *testing.T) {
	t.Parallel()
	cfg := Config{ClipNorm: 1, SGD: SGD{LR: 0.5, Momentum: 0.9, WeightDecay: 0.1}}
	theta := []float64{1, 2}
	grad := []float64{3, 4} // norm 5: clipped to (0.6, 0.8)·(1/(5+1e-6))·5
	vel := make([]float64, 2)
	step(theta, grad, vel, cfg, 0.5, true)
	s := 1 / (5 + 1e-6)
	g0, g1 := 3*s+0.1*1, 4*s+0.1*2
	want := []float64{1 - 0.5*g0, 2 - 0.5*g1}
	if math.Abs(theta[0]-want[0]) > 1e-15 || math.Abs(theta[1]-want[1]) > 1e-15 {
		t.Fatalf("first step: %v, want %v", theta, want)
	}
	grad = []float64{0.1, 0}
	prev := slices.Clone(theta)
	step(theta, grad, vel, cfg, 0.5, false)
	v0 := 0.9*g0 + 0.1 + 0.1*prev[0]
	if math.Abs(theta[0]-(prev[0]-0.5*v0)) > 1e-15 {
		t.Errorf("momentum step: %v, want %v", theta[0], prev[0]-0.5*v0)
	}
}

// TestBadInput: errors, not panics or NaN.
func TestBadInput(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 300, 20, 3)
	cfg := Config{Objective: objective.Config{Objective: objective.Neg}, MaxEpochs: 2}
	nan := *fit
	nan.Positives = slices.Clone(fit.Positives)
	nan.Positives[7] = float32(math.NaN())
	if _, err := Train(context.Background(), geometry.UnitGenBall(3, 2), &nan, val, cfg, nil); err == nil || !strings.Contains(err.Error(), "training bundle: positives[0][2][1] is NaN") {
		t.Errorf("NaN in a training positive: error %v", err)
	}
	// A geometry that overflows: scores of +Inf give a non-finite loss.
	huge := geometry.UnitGenBall(3, 2)
	huge.SetParams([]float64{1e200, 1e200, 1e200, 10, 10, 10})
	if _, err := Train(context.Background(), huge, fit, val, Config{Objective: objective.Config{Objective: objective.Vol}, MaxEpochs: 2, Bounds: geometry.Bounds{PMax: 10}}, nil); !errors.Is(err, objective.ErrNonFinite) {
		t.Errorf("overflowing scores: error %v, want ErrNonFinite", err)
	}
	other := &bundle.Bundle{N: val.N, K: 1, D: 2, KNeg: 1, Anchors: make([]float32, 2*val.N), Positives: make([]float32, 2*val.N), Negatives: make([]float32, 2*val.N)}
	for _, c := range []struct {
		name string
		g    geometry.Learnable
		val  *bundle.Bundle
		cfg  Config
		want string
	}{
		{"geometry dim", geometry.UnitGenBall(4, 2), val, cfg, "dimension 3, the geometry 4"},
		{"val dim", geometry.UnitGenBall(3, 2), other, cfg, "validation embeddings have dimension 2"},
		{"alpha", geometry.UnitGenBall(3, 2), val, Config{Objective: objective.Config{Objective: objective.Neg, Alpha: 1.2}}, "alpha"},
		{"small val", geometry.UnitGenBall(3, 2), val.Subset([]int{0, 1, 2}), cfg, "fewer than 1/α = 20"},
		{"lr", geometry.UnitGenBall(3, 2), val, Config{Objective: objective.Config{Objective: objective.Neg}, SGD: SGD{LR: -1}}, "learning rate"},
	} {
		if _, err := Train(context.Background(), c.g, fit, c.val, c.cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestMemoryCheck: a training whose difference rows cannot fit in memory
// streams them, a batch at a time, instead of refusing; rows that fit are
// kept; a head whose projected splits cannot fit is an error naming the
// size.
func TestMemoryCheck(t *testing.T) {
	t.Parallel()
	if _, ok := availableMemory(); !ok {
		t.Skip("/proc/meminfo has no MemAvailable on this system: training does not check memory here")
	}
	huge := &bundle.Bundle{N: 1 << 30, K: 500, KNeg: 500, D: 128}
	small := &bundle.Bundle{N: 10, K: 5, KNeg: 5, D: 128}
	for _, c := range []struct {
		name     string
		h        *head.Linear
		fit      *bundle.Bundle
		stream   bool
		errorHas string
	}{
		{"small", nil, small, false, ""},
		{"huge", nil, huge, true, ""},
		{"huge with a head", &head.Linear{In: 128, Out: 128}, huge, false, "projected fit and validation splits need"},
		{"small under a memory limit", nil, &bundle.Bundle{N: 20000, K: 50, KNeg: 50, D: 128}, true, ""},
	} {
		if c.name == "small under a memory limit" {
			// 2·10⁶ rows of 128 float32 (1 GB) under a limit of 64 MiB
			// beside the heap: streamed, as a GOMEMLIMIT asks.
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			old := debug.SetMemoryLimit(int64(ms.HeapAlloc) + 64<<20)
			stream, _, _, err := checkMemory(geometry.UnitGenBall(128, 2), c.h, c.fit, small)
			debug.SetMemoryLimit(old)
			if err != nil || !stream {
				t.Errorf("%s: stream %v, error %v", c.name, stream, err)
			}
			continue
		}
		stream, _, _, err := checkMemory(geometry.UnitGenBall(128, 2), c.h, c.fit, small)
		if c.errorHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errorHas) {
				t.Errorf("%s: error %v, want one with %q", c.name, err, c.errorHas)
			}
			continue
		}
		if err != nil || stream != c.stream {
			t.Errorf("%s: stream %v, error %v; want stream %v", c.name, stream, err, c.stream)
		}
	}
}

// TestStreamedRows: rows computed a batch at a time train exactly as rows
// kept in memory — the same parameters and histories, to the bit — for
// every objective, both prepared geometries, 1 and 3 goroutines.
func TestStreamedRows(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 400, 30, 2)
	for _, mk := range []func() geometry.Learnable{
		func() geometry.Learnable { return geometry.UnitGenBall(3, 2) },
		func() geometry.Learnable { return geometry.IdentityNorm(3, 2) },
	} {
		for _, obj := range []objective.Objective{objective.Neg, objective.Vol, objective.NegVol} {
			var ref, refVal, refLoss []float64
			for _, c := range []struct {
				stream  bool
				workers int
			}{{false, 2}, {true, 1}, {true, 3}} {
				g := mk()
				cfg := Config{Objective: objective.Config{Objective: obj}, MaxEpochs: 4, BatchSize: 64, Seed: 3, Workers: c.workers, stream: c.stream}
				res, err := Train(context.Background(), g, fit, val, cfg, nil)
				if err != nil {
					t.Fatal(err)
				}
				if ref == nil {
					ref, refVal, refLoss = g.Params(nil), res.ValHistory, res.LossHistory
					continue
				}
				if !slices.Equal(g.Params(nil), ref) || !slices.Equal(res.ValHistory, refVal) || !slices.Equal(res.LossHistory, refLoss) {
					t.Errorf("%v %v, streamed on %d goroutines: θ %v, validation %v; kept: θ %v, validation %v",
						g.Kind(), obj, c.workers, g.Params(nil), res.ValHistory, ref, refVal)
				}
			}
		}
	}
}

// TestStopReasonText: the stop reasons read back as they are written, in
// the words a fitted-set file keeps.
func TestStopReasonText(t *testing.T) {
	t.Parallel()
	for r, want := range map[StopReason]string{MaxEpochs: "max epochs", EarlyStop: "early stop"} {
		b, err := r.MarshalText()
		if err != nil || string(b) != want || r.String() != want {
			t.Errorf("%d: %q, %v; want %q", int(r), b, err, want)
		}
		var back StopReason
		if err := back.UnmarshalText(b); err != nil || back != r {
			t.Errorf("%q read back as %v, %v", b, back, err)
		}
	}
	if _, err := StopReason(0).MarshalText(); err == nil {
		t.Error("the zero stop reason marshalled")
	}
	var r StopReason
	if err := r.UnmarshalText([]byte("tired")); err == nil {
		t.Error(`"tired" read as a stop reason`)
	}
}

// TestRecipes: the paper's recipes validate, differ only in the optimiser,
// and are what a zero Config's fields default to.
func TestRecipes(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]Config{"sim": SimRecipe, "embedding": EmbeddingRecipe} {
		if err := r.Validate(); err != nil {
			t.Errorf("%s recipe: %v", name, err)
		}
	}
	if a, b := SimRecipe, EmbeddingRecipe; a.WithSGD(SGD{}) != b.WithSGD(SGD{}) || a.SGD == b.SGD {
		t.Errorf("the recipes differ beyond the optimiser (or not in it): %+v, %+v", a, b)
	}
	if got := (Config{}).WithDefaults(); got != SimRecipe {
		t.Errorf("a zero Config defaults to %+v, want SimRecipe %+v", got, SimRecipe)
	}
	n := (Config{InfoNCE: &InfoNCE{}}).WithDefaults().InfoNCE
	if n == nil || *n != PaperInfoNCE {
		t.Errorf("a zero InfoNCE defaults to %+v, want %+v", n, PaperInfoNCE)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.Objective.T = 0 },
		func(c *Config) { c.Objective.Lambda = 0 },
		func(c *Config) { c.BatchSize = 0 },
		func(c *Config) { c.ClipNorm = 0 },
		func(c *Config) { c.InfoNCE = &InfoNCE{Weight: 1, Tau: 0} },
	} {
		c := SimRecipe
		bad(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%+v validates", c)
		}
	}
}

// TestFit: the pipeline starts from the paper's initial geometry, trains a
// head only when asked (and records its InfoNCE settings only then), and
// refuses families that are not learned and a head dimension without a
// head.
func TestFit(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 200, 10, 4)
	cfg := SimRecipe
	cfg.Objective.Objective, cfg.MaxEpochs, cfg.InfoNCE = objective.Neg, 2, &PaperInfoNCE
	for _, c := range []struct {
		spec       Spec
		head       bool
		dim, inner int
	}{
		{Spec{Kind: geometry.KindGenBall, Config: cfg}, false, 3, 3},
		{Spec{Kind: geometry.KindNorm, Head: true, Config: cfg}, true, 3, 3},
		{Spec{Kind: geometry.KindNorm, Head: true, HeadDim: 2, Config: cfg}, true, 3, 2},
	} {
		f, err := Fit(context.Background(), c.spec, fit, val, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := geometry.Describe(f.Geometry)
		if d.Head() != c.head || d.Dim != c.dim || (c.head && d.HeadOut != c.inner) || d.Kind != c.spec.Kind {
			t.Errorf("%+v: fitted %+v", c.spec, d)
		}
		var rec Record
		if err := json.Unmarshal(f.Info.Training, &rec); err != nil {
			t.Fatal(err)
		}
		if (rec.Recipe.InfoNCE != nil) != c.head || rec.Recipe.Init == "" || rec.Epochs != f.Result.Epochs || rec.Kernels != kernel.LevelName() {
			t.Errorf("%+v: recorded %+v", c.spec, rec)
		}
	}
	// A head wider than MaxHeadWiden times the dimension (a typo's
	// 100000 ran out of memory).
	if _, err := Fit(context.Background(), Spec{Kind: geometry.KindNorm, Head: true, HeadDim: MaxHeadWiden*fit.D + 1, Config: cfg}, fit, val, nil); err == nil || !strings.Contains(err.Error(), "at most 12") {
		t.Errorf("a head of %d outputs over %d: %v", MaxHeadWiden*fit.D+1, fit.D, err)
	}
	for _, s := range []Spec{{Kind: geometry.KindBall, Config: cfg}, {Kind: geometry.KindNorm, HeadDim: 2, Config: cfg}} {
		if _, err := Fit(context.Background(), s, fit, val, nil); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	// A validation split that is the training split would choose the
	// checkpoint on what it trained on; a bundle of anchors alone has no
	// positives to train or validate on.
	spec := Spec{Kind: geometry.KindGenBall, Config: cfg}
	features := &bundle.Bundle{N: val.N, D: val.D, Anchors: val.Anchors}
	for _, c := range []struct {
		fit, val *bundle.Bundle
		want     string
	}{
		{fit, fit, "the validation split is the training split"},
		{features, val, "train: fit: anchors only, no positives"},
		{fit, features, "train: validation: anchors only, no positives"},
	} {
		if _, err := Fit(context.Background(), spec, c.fit, c.val, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

// TestTrainCancelled: a cancelled context stops training before its next
// epoch with the context's error.
func TestTrainCancelled(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 200, 5, 9)
	ctx, cancel := context.WithCancel(context.Background())
	epochs := 0
	obs := ObserverFunc(func(p Progress) {
		if epochs = p.Epoch; p.Epoch == 2 {
			cancel()
		}
	})
	_, err := Train(ctx, geometry.UnitGenBall(3, 2), fit, val, Config{Objective: objective.Config{Objective: objective.Neg}, MaxEpochs: 50, Patience: 50, BatchSize: 64}, obs)
	if !errors.Is(err, context.Canceled) || epochs != 2 {
		t.Errorf("cancelled after epoch 2: %v after epoch %d", err, epochs)
	}
	// Cancelled before it starts: no epoch 0, no validation pass.
	epochs = -1
	if _, err := Fit(ctx, Spec{Kind: geometry.KindGenBall, Config: Config{Objective: objective.Config{Objective: objective.Neg}}}, fit, val, obs); !errors.Is(err, context.Canceled) || epochs != -1 {
		t.Errorf("cancelled before: %v, epoch %d reported", err, epochs)
	}
	// No validation split: an error saying what to give, not a panic.
	if _, err := Fit(context.Background(), Spec{Kind: geometry.KindGenBall}, fit, nil, nil); err == nil || !strings.Contains(err.Error(), "a training and a validation split are needed") {
		t.Errorf("no validation split: %v", err)
	}
}

// countdown is a context whose Err is nil for its first n calls and
// context.Canceled after.
type countdown struct {
	context.Context
	mu sync.Mutex
	n  int
}

func (c *countdown) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestCancelledWithinEpoch: a cancelled context stops training before
// its next batch, not at the end of the epoch (a 400 000-item split's
// epoch takes minutes): cancelled after the start's and the epoch's
// checks and two batches, a one-epoch run of many batches returns
// context.Canceled instead of finishing.
func TestCancelledWithinEpoch(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 200, 5, 9)
	if fit.N < 4*16 {
		t.Fatalf("%d fit anchors: too few batches of 16", fit.N)
	}
	for _, stream := range []bool{false, true} {
		ctx := &countdown{Context: context.Background(), n: 4}
		cfg := Config{Objective: objective.Config{Objective: objective.Neg}, MaxEpochs: 1, BatchSize: 16, stream: stream}
		res, err := Train(ctx, geometry.UnitGenBall(3, 2), fit, val, cfg, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("stream %v: cancelled within the epoch: %v, result %+v", stream, err, res)
		}
	}
}

// TestSharedRows: runs given one Rows, at once, end where runs that prepare
// their own rows do, and the Rows holds one preparation per bundle and
// geometry type.
func TestSharedRows(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 400, 30, 2)
	geoms := []func() geometry.Learnable{
		func() geometry.Learnable { return geometry.UnitGenBall(3, 2) },
		func() geometry.Learnable { return geometry.IdentityNorm(3, 2) },
	}
	objs := []objective.Objective{objective.Neg, objective.Vol, objective.NegVol}
	run := func(mk func() geometry.Learnable, obj objective.Objective, rows *Rows) ([]float64, []float64, error) {
		g := mk()
		cfg := Config{Objective: objective.Config{Objective: obj}, MaxEpochs: 4, BatchSize: 64, Seed: 3, Workers: 2, Rows: rows}
		res, err := Train(context.Background(), g, fit, val, cfg, nil)
		if err != nil {
			return nil, nil, err
		}
		return g.Params(nil), res.ValHistory, nil
	}
	type out struct{ params, hist []float64 }
	want := make([]out, len(geoms)*len(objs))
	for i := range want {
		p, h, err := run(geoms[i/len(objs)], objs[i%len(objs)], nil)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = out{p, h}
	}
	rows := new(Rows)
	got := make([]out, len(want))
	errs := make([]error, len(want))
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i].params, got[i].hist, errs[i] = run(geoms[i/len(objs)], objs[i%len(objs)], rows)
		})
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !slices.Equal(got[i].params, want[i].params) || !slices.Equal(got[i].hist, want[i].hist) {
			t.Errorf("run %d with shared rows: θ %v, validation %v; alone θ %v, validation %v", i, got[i].params, got[i].hist, want[i].params, want[i].hist)
		}
	}
	if len(rows.m) != 4 { // (fit, val) × (generalized ball, single-norm)
		t.Errorf("%d preparations kept, want 4", len(rows.m))
	}
}

// TestKeptInitial: a run whose best epoch is the initial one says so, and
// why it may be; a run that improved, or ran no epoch, says nothing.
func TestKeptInitial(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r    Result
		want string
	}{
		{Result{Epochs: 9, BestEpoch: 0, ValExclusion: 0.4}, "no epoch's validation exclusion beat epoch 0's (40.00%), so the set is untrained (a larger learning rate"},
		{Result{Epochs: 9, BestEpoch: 0, ValExclusion: 1}, "(100.00%), so the set is untrained (the initial geometry already excludes every validation negative)"},
		{Result{Epochs: 9, BestEpoch: 3, ValExclusion: 0.5}, ""},
		{Result{Epochs: 0, ValExclusion: 1, StopReason: AllExcluded}, "it already excludes every validation negative (100.00%), which no epoch can beat, so none ran"},
		{Result{}, ""},
	} {
		got := c.r.KeptInitial()
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

// TestAllExcluded: where the initial geometry already excludes every
// validation negative, no epoch can be kept (only a higher exclusion
// replaces the checkpoint), so none runs: the initial geometry returned
// as it was, the reason said.
func TestAllExcluded(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 200, 5, 4)
	far := *val // its negatives moved far from every anchor
	if far.Negatives != nil {
		far.Negatives = slices.Clone(val.Negatives)
		for i := range far.Negatives {
			far.Negatives[i] += 1000
		}
	} else { // indices into Pool, or into the anchors where it is nil
		far.Pool = slices.Clone(val.Pool)
		if far.Pool == nil {
			far.Pool = slices.Clone(val.Anchors)
		}
		for i := range far.Pool {
			far.Pool[i] += 1000
		}
	}
	g := geometry.UnitGenBall(3, 2)
	before := g.Params(nil)
	var last Progress
	res, err := Train(context.Background(), g, fit, &far, Config{Objective: objective.Config{Objective: objective.Neg}, MaxEpochs: 20, Patience: 20},
		ObserverFunc(func(p Progress) { last = p }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Epochs != 0 || res.BestEpoch != 0 || res.StopReason != AllExcluded || res.ValExclusion != 1 || !slices.Equal(g.Params(nil), before) ||
		!last.Done || last.StopReason != AllExcluded || res.KeptInitial() == "" {
		t.Errorf("result %+v, last progress %+v", res, last)
	}
	// The benchmarks' data: Gauss negatives are all excluded at d = 128,
	// and Unseparated keeps an epoch to time.
	rng := rand.New(rand.NewPCG(5, 5))
	gf := sim.Gauss(rng, 100, 5, 128)
	gv := func() *bundle.Bundle { return sim.Gauss(rand.New(rand.NewPCG(6, 6)), 40, 5, 128) }
	for _, c := range []struct {
		val    *bundle.Bundle
		epochs int
	}{{gv(), 0}, {sim.Unseparated(gv()), 1}} {
		res, err := Train(context.Background(), geometry.UnitGenBall(128, 2), gf, c.val, Config{Objective: objective.Config{Objective: objective.NegVol}, MaxEpochs: 1}, nil)
		if err != nil || res.Epochs != c.epochs {
			t.Errorf("Gauss at d = 128: %v, %d epochs, want %d", err, res.Epochs, c.epochs)
		}
	}
}

// TestAlphaWarning: a fit's α above one half (0.95 meant as 95%) is warned
// of, with the coverage it trains for; 0.5 and below are not.
func TestAlphaWarning(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		alpha float64
		want  string
	}{
		{0.95, "α = 0.95: the fit trains the set to hold 1 − α = 5% of the positives; α is the share a set may miss (0.05 for 95% coverage)"},
		{0.6, "1 − α = 40% of the positives"},
		{0.5, ""}, {0.05, ""},
	} {
		if got := AlphaWarning(c.alpha); (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("α = %v: %q, want %q", c.alpha, got, c.want)
		}
	}
}

// TestFitShift: Spec.Shift trains on the differences moved by the fit
// split's mean offset and returns the geometry centred there (behind a
// head too), its scores those of the geometry trained on a bundle shifted
// by hand; the record keeps the unshifted splits' digests and rows, so
// that evaluate and calibrate still know the fit split.
func TestFitShift(t *testing.T) {
	t.Parallel()
	fit, val := smallSim(t, 200, 10, 4)
	cfg := SimRecipe
	cfg.Objective.Objective, cfg.MaxEpochs, cfg.InfoNCE = objective.Neg, 3, &PaperInfoNCE
	c, err := bundle.MeanOffset(fit)
	if err != nil {
		t.Fatal(err)
	}
	sfit, _ := fit.Shifted(c)
	sval, _ := val.Shifted(c)
	for _, spec := range []Spec{{Kind: geometry.KindGenBall, Config: cfg}, {Kind: geometry.KindNorm, Head: true, Config: cfg}} {
		plain, err := Fit(context.Background(), spec, sfit, sval, nil)
		if err != nil {
			t.Fatal(err)
		}
		spec.Shift = true
		f, err := Fit(context.Background(), spec, fit, val, nil)
		if err != nil {
			t.Fatal(err)
		}
		sh, ok := f.Geometry.(*geometry.Shifted)
		if !ok {
			t.Fatalf("%v: fitted %T, want *geometry.Shifted", spec.Kind, f.Geometry)
		}
		for j, v := range sh.Shift {
			if v != float32(c[j]) {
				t.Fatalf("%v: shift %v, want the mean offset %v", spec.Kind, sh.Shift, c)
			}
		}
		diffs := fit.PositiveDiffs(nil, 0)
		moved := sfit.PositiveDiffs(nil, 0)
		got, want := f.Geometry.Scores(nil, diffs), plain.Geometry.Scores(nil, moved)
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-5*math.Abs(want[i]) {
				t.Fatalf("%v: score %v, the geometry fitted on the shifted bundle %v", spec.Kind, got[i], want[i])
			}
		}
		if f.Info.Splits["fit"] != fit.Digest() || f.Info.Splits["validation"] != val.Digest() || f.Info.Seen.Count(fit) != fit.N {
			t.Errorf("%v: the record names other splits than the ones given: %v", spec.Kind, f.Info.Splits)
		}
	}
}
