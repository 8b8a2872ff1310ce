package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccsets/ccs/baseline"
	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/report"
	"github.com/ccsets/ccs/sim"
	"github.com/ccsets/ccs/train"
)

// raw is the rawArray of a float32 or int64 array in C order.
func raw[T float32 | int64](name string, x []T, shape ...int) rawArray {
	dtype := "<f4"
	var z T
	if _, ok := any(z).(int64); ok {
		dtype = "<i8"
	}
	return rawArray{Name: name, Data: bytesOf(x), Dtype: dtype, Shape: shape}
}

func TestHandles(t *testing.T) {
	t.Parallel()
	b := &bundleObj{b: &bundle.Bundle{N: 1}}
	h := newHandle(b)
	if got, err := lookup[*bundleObj](h, "a bundle"); err != nil || got != b {
		t.Fatalf("lookup: %v, %v", got, err)
	}
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"another kind", func() error { _, err := lookup[*setObj](h, "a set"); return err }, "holds a bundle, not a set"},
		{"zero", func() error { _, err := lookup[*setObj](0, "a set"); return err }, "no a set: the handle is 0"},
		{"never made", func() error { _, err := lookup[*setObj](h+1000, "a set"); return err }, "closed, or never made"},
		{"close", func() error { return closeHandle(h) }, ""},
		{"closed", func() error { _, err := lookup[*bundleObj](h, "a bundle"); return err }, "closed, or never made"},
		{"closed twice", func() error { return closeHandle(h) }, "closed, or never made"},
	}
	for _, tt := range tests {
		err := tt.err()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || statusOf(err) != statusHandle {
			t.Errorf("%s: %v (status %d), want %q, status %d", tt.name, err, statusOf(err), tt.want, statusHandle)
		}
	}
}

func TestStatusOf(t *testing.T) {
	t.Parallel()
	_, notFound := os.Open(filepath.Join(t.TempDir(), "absent"))
	tests := []struct {
		err  error
		want int
	}{
		{nil, statusOK},
		{errors.New("bad alpha"), statusValue},
		{notFound, statusNotFound},
		{fmt.Errorf("reading: %w", &os.PathError{Op: "write", Path: "x", Err: errors.New("disk full")}), statusOS},
		{fmt.Errorf("fit: %w", context.Canceled), statusCancelled},
		{&errHandle{"closed"}, statusHandle},
		// A recovered panic is ccs's bug, RuntimeError, also as a job's.
		{internalError("invalid argument to IntN"), statusInternal},
		{fmt.Errorf("compare: %w", internalError("index out of range")), statusInternal},
	}
	for _, tt := range tests {
		if got := statusOf(tt.err); got != tt.want {
			t.Errorf("statusOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// gauss is a small bundle of n anchors with k positives and negatives.
func gauss(seed uint64, n, k, d int) *bundle.Bundle {
	return sim.Gauss(rand.New(rand.NewPCG(seed, 1)), n, k, d)
}

func TestNewBundleIsWhatReadReads(t *testing.T) {
	t.Parallel()
	b := gauss(1, 20, 3, 4)
	b.Labels = make([]int64, b.N)
	path := filepath.Join(t.TempDir(), "b.npz")
	if err := bundle.Write(path, b); err != nil {
		t.Fatal(err)
	}
	want, err := bundle.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	arrays := []rawArray{raw("anchors", b.Anchors, 20, 4), raw("positives", b.Positives, 20, 3, 4),
		raw("negatives", b.Negatives, 20, 3, 4), raw("labels", b.Labels, 20)}
	got, err := newBundle(arrays)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Anchors, want.Anchors) || !slices.Equal(got.Positives, want.Positives) ||
		!slices.Equal(got.Negatives, want.Negatives) || !slices.Equal(got.Labels, want.Labels) || got.KNeg != 3 {
		t.Errorf("a bundle from arrays differs from the file's")
	}
	// Its arrays are its own: the caller's memory is not kept.
	b.Anchors[0] = 42
	if got.Anchors[0] == 42 {
		t.Errorf("the bundle kept the caller's memory")
	}

	bad := slices.Clone(b.Positives)
	bad[(2*3+1)*4+3] = float32(math.NaN())
	tests := []struct {
		name   string
		arrays []rawArray
		want   string
	}{
		{"NaN", []rawArray{arrays[0], raw("positives", bad, 20, 3, 4)}, "positives[2][1][3] is NaN"},
		{"rank", []rawArray{arrays[0], raw("positives", b.Positives, 20, 12)}, `array "positives": shape (20, 12), want 3 dimensions`},
		{"negatives without positives", []rawArray{arrays[0], arrays[2]}, `array "positives" (or "positive_index") is missing`},
		{"twice", []rawArray{arrays[0], arrays[0]}, `array "anchors" given twice`},
		{"labels of floats", []rawArray{arrays[0], arrays[1], raw("labels", make([]float32, 20), 20)}, `array "labels": dtype float32, want an integer type`},
	}
	for _, tt := range tests {
		if _, err := newBundle(tt.arrays); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// Anchors alone (with labels): a features bundle, as ReadFeatures
	// reads ccs bundle's ood.npz.
	f, err := newBundle([]rawArray{arrays[0], arrays[3]})
	if err != nil || f.K != 0 || f.N != 20 || !slices.Equal(f.Labels, want.Labels) {
		t.Errorf("anchors alone: %v, %+v", err, f)
	}
}

// calibrated returns a set of each kind calibrated on a small bundle.
func calibrated(t *testing.T, d int) map[string]*conformal.Set {
	t.Helper()
	cal := gauss(2, 400, 4, d)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 3)
	}
	sets := map[string]*conformal.Set{}
	var err error
	if sets["ball"], err = baseline.Ball(cal, 0.1, baseline.Options{}); err != nil {
		t.Fatal(err)
	}
	if sets["ellipsoid"], err = baseline.Ellipsoid(context.Background(), cal, 0.1, baseline.Options{}); err != nil {
		t.Fatal(err)
	}
	g := geometry.UnitGenBall(d, 1.5)
	if sets["genball"], err = conformal.Calibrate(g, cal, 0.1, conformal.Options{}); err != nil {
		t.Fatal(err)
	}
	if sets["class"], err = conformal.Calibrate(g, cal, 0.1, conformal.Options{Mode: conformal.Class}); err != nil {
		t.Fatal(err)
	}
	return sets
}

// normals are n seeded normal values of standard deviation sd.
func normals(seed uint64, n int, sd float64) []float32 {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(sd * rng.NormFloat64())
	}
	return x
}

func TestContainsIsMembers(t *testing.T) {
	t.Parallel()
	const d, m = 8, 5000 // several blocks, the last one partial
	anchor, points := normals(3, d, 1), normals(3, m*d, 1.5)
	diffs := make([]float32, m*d)
	for i := range diffs {
		diffs[i] = anchor[i%d] - points[i]
	}
	for name, s := range calibrated(t, d) {
		var label *int64
		if name == "class" {
			l := int64(1)
			label = &l
		}
		qr, err := newQuery(s, raw("anchor", anchor, 1, d), raw("points", points, m, d))
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.ThresholdOf(label)
		if err != nil {
			t.Fatal(err)
		}
		want := geometry.Members(s.Geometry, q, nil, nil, diffs) // the decisions on differences made by hand
		if lib, err := s.Members(nil, anchor, points, label); err != nil || !slices.Equal(lib, want) {
			t.Errorf("%s: Set.Members differs from geometry.Members on the differences (%v)", name, err)
		}
		got := make([]bool, m)
		if err := contains(s, qr, label, got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: contains differs from Members", name)
		}
		// float64 points, narrowed a block at a time: the same decisions.
		p64 := make([]float64, len(points))
		for i, v := range points {
			p64[i] = float64(v)
		}
		qr64, err := newQuery(s, raw("anchor", anchor, 1, d), rawArray{Name: "points", Data: bytesOf(p64), Dtype: "<f8", Shape: []int{m, d}})
		if err != nil {
			t.Fatal(err)
		}
		got64 := make([]bool, m)
		if err := contains(s, qr64, label, got64); err != nil || !slices.Equal(got64, want) {
			t.Errorf("%s: float64 points: %v, or other decisions", name, err)
		}
		sc := make([]float64, m)
		if err := scores(s, qr, sc); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sc, s.Geometry.Scores(nil, diffs)) {
			t.Errorf("%s: scores differ from the geometry's", name)
		}
		inside := 0
		for _, v := range got {
			if v {
				inside++
			}
		}
		if inside == 0 || inside == m {
			t.Errorf("%s: %d of %d inside: the test decides nothing", name, inside, m)
		}
	}
}

func TestQueryRefuses(t *testing.T) {
	t.Parallel()
	sets := calibrated(t, 3)
	s := sets["genball"]
	nan := []float32{0, 0, 0, 1, 2, 3, 4, float32(math.Inf(1)), 6}
	tests := []struct {
		name    string
		s       *conformal.Set
		anchor  rawArray
		points  rawArray
		label   *int64
		want    string
		inQuery bool // refused when the query is read
	}{
		{"dimension", s, raw("anchor", []float32{1, 2}, 2), raw("points", make([]float32, 6), 2, 3), nil,
			"anchor: embeddings of shape (2,), dimension 2; the set's dimension is 3", true},
		{"points rank", s, raw("anchor", []float32{1, 2, 3}, 3), raw("points", make([]float32, 12), 2, 2, 3), nil,
			"points: shape (2, 2, 3): want (m, 3), or (3,) for one point", true},
		{"two anchors", s, raw("anchor", make([]float32, 6), 2, 3), raw("points", make([]float32, 6), 2, 3), nil,
			"anchor: shape (2, 3): want one anchor, (3,) or (1, 3)", true},
		{"NaN anchor", s, raw("anchor", []float32{1, float32(math.NaN()), 3}, 3), raw("points", make([]float32, 3), 3), nil,
			"anchor: coordinate 1 is NaN", true},
		{"Inf point", s, raw("anchor", []float32{1, 2, 3}, 3), raw("points", nan, 3, 3), nil, "points[2][1] is +Inf", false},
		{"float64 overflow", s, raw("anchor", []float32{1, 2, 3}, 3), rawArray{Name: "points", Dtype: "<f8", Shape: []int{2, 3},
			Data: encode([]float64{1, 2, 3, 4, 5, -1e39}, 'f', 8, false)}, nil, `array "points": element [1][2] = -1e+39 overflows float32`, false},
		{"NaN float64 point", s, raw("anchor", []float32{1, 2, 3}, 3), rawArray{Name: "points", Dtype: "<f8", Shape: []int{2, 3},
			Data: encode([]float64{1, 2, 3, 4, math.NaN(), 6}, 'f', 8, false)}, nil, "points[1][1] is NaN", false},
		// The ball reads points in its own kernel (geometry.MembersAround).
		{"Inf point, ball", sets["ball"], raw("anchor", []float32{1, 2, 3}, 3), raw("points", nan, 3, 3), nil, "points[2][1] is +Inf", false},
		{"NaN float64 point, ball", sets["ball"], raw("anchor", []float32{1, 2, 3}, 3), rawArray{Name: "points", Dtype: "<f8", Shape: []int{2, 3},
			Data: encode([]float64{1, 2, 3, 4, math.NaN(), 6}, 'f', 8, false)}, nil, "points[1][1] is NaN", false},
		{"no label", sets["class"], raw("anchor", []float32{1, 2, 3}, 3), raw("points", make([]float32, 3), 1, 3), nil,
			conformal.ErrNoLabel.Error(), false},
		{"uncalibrated", conformal.Uncalibrated(s.Geometry, nil), raw("anchor", []float32{1, 2, 3}, 3), raw("points", make([]float32, 3), 1, 3), nil,
			conformal.ErrNotCalibrated.Error(), false},
	}
	for _, tt := range tests {
		qr, err := newQuery(tt.s, tt.anchor, tt.points)
		if (err != nil) != tt.inQuery {
			t.Errorf("%s: reading the query: %v", tt.name, err)
			continue
		}
		if err == nil {
			err = contains(tt.s, qr, tt.label, make([]bool, qr.m))
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	var o calibrateOptions
	if err := parseOptions(`{"alpha": 0.1, "calibration": "pac", "delta": 0.05}`, &o); err != nil || *o.Alpha != 0.1 || o.Delta != 0.05 {
		t.Errorf("parseOptions: %+v, %v", o, err)
	}
	for _, s := range []string{`{"alpah": 0.1}`, `{} {}`, `[`} {
		if err := parseOptions(s, &o); err == nil || !strings.HasPrefix(err.Error(), "keywords: ") || statusOf(err) != statusValue {
			t.Errorf("parseOptions(%s): %v", s, err)
		}
	}
	// A keyword of the wrong type: TypeError, in Python's words.
	var m makeOptions
	for _, c := range []struct {
		keywords string
		dst      any
		want     string
	}{
		{`{"alpha": "x"}`, &o, "alpha: got a str, want a number"},
		{`{"k": "20"}`, &m, "k: got a str, want an int"},
		{`{"seed": 2.5}`, &m, "seed: got 2.5, want an int ≥ 0"},
		{`{"allow_fewer": "yes"}`, &m, "allow_fewer: got a str, want a bool"},
		{`{"split": [0.5, "a", 0.2, 0.2]}`, &m, "split: got a str, want a number"}, // an element of it
		{`{"split": 0.5}`, &m, "split: got a number, want a list of numbers"},
		// A recipe keyword: its own name, not the embedded struct's.
		{`{"T": "7"}`, &fitOptions{}, "T: got a str, want a number"},
	} {
		err := parseOptions(c.keywords, c.dst)
		if err == nil || err.Error() != c.want || statusOf(fmt.Errorf("bundle: %w", err)) != statusType {
			t.Errorf("parseOptions(%s): %v (status %d), want %q", c.keywords, err, statusOf(err), c.want)
		}
	}
	// An int out of range: the right type, a wrong value — ValueError.
	for _, c := range []struct{ keywords, want string }{
		{`{"seed": -1}`, "seed: got -1, want an int from 0 to 2**64 - 1"},
		{`{"k": 99999999999999999999}`, "k: got 99999999999999999999, want an int from -2**63 to 2**63 - 1"},
		{`{"seed": 18446744073709551616}`, "seed: got 18446744073709551616, want an int from 0 to 2**64 - 1"},
	} {
		err := parseOptions(c.keywords, &m)
		if err == nil || err.Error() != c.want || statusOf(fmt.Errorf("bundle: %w", err)) != statusValue {
			t.Errorf("parseOptions(%s): %v (status %d), want %q, a ValueError", c.keywords, err, statusOf(err), c.want)
		}
	}
}

func TestFitOptions(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	tests := []struct {
		name string
		o    fitOptions
		want string // an error, or "" for a valid spec
	}{
		{"paper", fitOptions{Geometry: "genball", Objective: "neg,vol"}, ""},
		{"embedding", fitOptions{Geometry: "single", Objective: "vol", recipeOptions: recipeOptions{Recipe: "embedding", LR: f(0.05), Batch: n(64)}}, ""},
		{"ball", fitOptions{Geometry: "ball", Objective: "neg"}, `fit: geometry "ball": want single or genball`},
		{"objective", fitOptions{Geometry: "genball", Objective: "volume"}, "fit: objective:"},
		{"alpha", fitOptions{Geometry: "genball", Objective: "neg", Alpha: f(1.5)}, "fit: alpha=1.5: want 0 < α < 1"},
		{"recipe", fitOptions{Geometry: "genball", Objective: "neg", recipeOptions: recipeOptions{Recipe: "adam"}}, `fit: recipe "adam": want sim or embedding`},
		{"lr", fitOptions{Geometry: "genball", Objective: "neg", recipeOptions: recipeOptions{LR: f(-1)}}, "fit: train: learning rate -1, want > 0"},
		{"head", fitOptions{Geometry: "genball", Objective: "neg", HeadDim: 4}, "fit: head_dim=4: want a positive dimension, with an objective that includes infonce"},
	}
	for _, tt := range tests {
		spec, _, err := tt.o.spec()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if tt.name == "embedding" && (spec.Config.SGD.LR != 0.05 || spec.Config.SGD.Momentum != 0.9 || spec.Config.BatchSize != 64) {
			t.Errorf("embedding: %+v", spec.Config)
		}
	}
}

func TestFitJob(t *testing.T) {
	t.Parallel()
	data := sim.Mixed(1, 200)
	split := data.Split(1)
	fit, err := data.Pairs(split.Fit, 10, 1, "fit")
	if err != nil {
		t.Fatal(err)
	}
	val, err := data.Pairs(split.Val, 10, 1, "val")
	if err != nil {
		t.Fatal(err)
	}
	epochs := 3
	j, err := startFit(fit, val, fitOptions{Geometry: "genball", Objective: "neg,vol", recipeOptions: recipeOptions{Epochs: &epochs, Patience: &epochs}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := j.outcome(); err == nil && !j.wait(0) {
		t.Errorf("a running job has an outcome")
	}
	var reports []progressReport
	take := func() {
		for _, r := range j.progress() {
			reports = append(reports, r.(progressReport))
		}
	}
	for !j.wait(10 * time.Millisecond) {
		take()
	}
	take()
	s, res, _, err := j.outcome()
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != res.Epochs+1 || !reports[len(reports)-1].Done || reports[0].Epoch != 0 || s.Calibrated() {
		t.Errorf("%d reports for %d epochs (the initial geometry, then each epoch, the last done): %+v", len(reports), res.Epochs, reports)
	}

	// Cancelled: the job ends with context.Canceled, the status the
	// Python side turns into KeyboardInterrupt.
	epochs = 150
	j, err = startFit(fit, val, fitOptions{Geometry: "genball", Objective: "neg", recipeOptions: recipeOptions{Epochs: &epochs, Patience: &epochs}})
	if err != nil {
		t.Fatal(err)
	}
	j.cancel()
	if !j.wait(time.Minute) {
		t.Fatal("a cancelled job did not stop")
	}
	if _, _, _, err := j.outcome(); statusOf(err) != statusCancelled {
		t.Errorf("cancelled: %v (status %d)", err, statusOf(err))
	}
}

// TestFitObserverStreamed: a training whose rows are streamed says so in
// its first report, and the fit's warnings repeat it (Python warns of
// it; the command prints it as a note).
func TestFitObserverStreamed(t *testing.T) {
	j := startJob("fit", func(ctx context.Context, j *job) error { return nil })
	o := &fitObserver{j: j}
	o.Observe(train.Progress{Epoch: 0, MaxEpochs: 5, Streamed: "rows computed a batch at a time"})
	o.Observe(train.Progress{Epoch: 1, MaxEpochs: 5})
	j.wait(time.Minute)
	reports := j.progress()
	if len(reports) != 2 || reports[0].(progressReport).Streamed != "rows computed a batch at a time" || reports[1].(progressReport).Streamed != "" {
		t.Errorf("reports %+v", reports)
	}
	if got := warningsOf("", o.streamed); len(got) != 1 || got[0] != "rows computed a batch at a time" {
		t.Errorf("warnings %q", got)
	}
	// Rows kept in memory: no report or warning says otherwise.
	kept := &fitObserver{j: j}
	kept.Observe(train.Progress{Epoch: 0, MaxEpochs: 5})
	if kept.streamed != "" || len(warningsOf("", kept.streamed)) != 0 {
		t.Errorf("kept rows: %q", kept.streamed)
	}
}

func TestMakeBundlesIsThePlan(t *testing.T) {
	t.Parallel()
	data := sim.Mixed(2, 100)
	items := bundle.Items{N: data.N, Labels: data.Labels}
	cfg := bundle.MakeConfig{K: 5, KNeg: 5, Split: defaultMake.Split, Seed: 9}
	plan, err := bundle.Make(items, cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := defaultMake
	o.K, o.KNeg, o.Seed = 5, 5, 9
	got, err := makeBundles(map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim),
		"labels": raw("labels", data.Labels, data.N)}, o)
	if err != nil {
		t.Fatal(err)
	}
	for s, sp := range plan.Splits {
		want, err := plan.Bundle(s, data.Points, nil, sim.Dim)
		if err != nil {
			t.Fatal(err)
		}
		b := got.Bundles[s]
		if got.Names[s] != sp.Name || !slices.Equal(b.Anchors, want.Anchors) || !slices.Equal(b.PositiveIndex, want.PositiveIndex) ||
			!slices.Equal(b.NegativeIndex, want.NegativeIndex) || !slices.Equal(b.Labels, want.Labels) {
			t.Errorf("split %s differs from the plan's", sp.Name)
		}
	}
	// The same labels as strings (NumPy's '<U…', UTF-32), named in the
	// codes' sorted order: the same bundles, the names returned, the
	// held-out class by its name.
	names := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	strs := make([]byte, 0, 4*5*data.N)
	for _, l := range data.Labels {
		var units [5]uint32
		for i, r := range names[l] {
			units[i] = uint32(r)
		}
		for _, u := range units {
			strs = binary.LittleEndian.AppendUint32(strs, u)
		}
	}
	strLabels := rawArray{Name: "labels", Dtype: "<U5", Data: strs, Shape: []int{data.N}}
	byName, err := makeBundles(map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim), "labels": strLabels}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(byName.LabelNames, names[:slices.Max(data.Labels)+1]) || got.LabelNames != nil {
		t.Errorf("label names %q (integer labels: %q)", byName.LabelNames, got.LabelNames)
	}
	for s := range got.Bundles {
		a, b := got.Bundles[s], byName.Bundles[s]
		if !slices.Equal(a.Anchors, b.Anchors) || !slices.Equal(a.PositiveIndex, b.PositiveIndex) || !slices.Equal(a.Labels, b.Labels) {
			t.Errorf("split %s of string labels differs from the integer labels'", got.Names[s])
		}
	}
	held := o
	held.OODClasses = classList{"bb"}
	if h, err := makeBundles(map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim), "labels": strLabels}, held); err != nil || h.Names[len(h.Names)-1] != "ood" || h.Bundles[len(h.Bundles)-1].Labels[0] != 1 {
		t.Errorf("OOD class by name: %v", err)
	}
	var opts makeOptions
	if err := json.Unmarshal([]byte(`{"ood_classes": [3, "bb", -1]}`), &opts); err != nil || !slices.Equal(opts.OODClasses, classList{"3", "bb", "-1"}) {
		t.Errorf("ood_classes of integers and strings: %q, %v", opts.OODClasses, err)
	}
	if err := json.Unmarshal([]byte(`{"ood_classes": [true]}`), &opts); err == nil || !strings.Contains(err.Error(), "label true: want an integer or a string") {
		t.Errorf("ood_classes [true]: %v", err)
	}
	nan := slices.Clone(data.Points)
	nan[7] = float32(math.NaN())
	tests := []struct {
		name   string
		arrays map[string]rawArray
		o      makeOptions
		want   string
	}{
		{"NaN", map[string]rawArray{"embeddings": raw("embeddings", nan, data.N, sim.Dim), "labels": raw("labels", data.Labels, data.N)},
			defaultMake, "embeddings: row 2, coordinate 1 is NaN"},
		{"no labels", map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim)},
			defaultMake, "bundle: say which rows are positives of each other"},
		{"k", map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim), "labels": raw("labels", data.Labels, data.N)},
			makeOptions{K: 0, Split: defaultMake.Split}, "bundle: k=0, kneg=0: want k at least 1"},
		{"labels", map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim), "labels": raw("labels", data.Labels[:10], 10)},
			defaultMake, "labels: 10 labels for the 500 rows of embeddings"},
		{"OOD class not a label name", map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim), "labels": strLabels},
			makeOptions{K: 5, Split: defaultMake.Split, OODClasses: classList{"b"}}, `bundle: ood_classes: "b" is not among the labels ("a", "bb"`},
		{"OOD class by name, integer labels", map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim), "labels": raw("labels", data.Labels, data.N)},
			makeOptions{K: 5, Split: defaultMake.Split, OODClasses: classList{"bb"}}, `bundle: ood_classes: "bb" is not an integer label`},
		{"OOD classes without labels", map[string]rawArray{"embeddings": raw("embeddings", data.Points, data.N, sim.Dim), "groups": raw("groups", data.Labels, data.N)},
			makeOptions{K: 5, Split: defaultMake.Split, OODClasses: classList{"1"}}, "bundle: ood_classes=[1]: the classes are labels: give labels too"},
		{"string embeddings", map[string]rawArray{"embeddings": {Name: "embeddings", Dtype: "<U5", Data: strs, Shape: []int{data.N / 5, 5}}, "labels": raw("labels", data.Labels[:data.N/5], data.N/5)},
			defaultMake, "embeddings: dtype <U5, want floating point"},
	}
	for _, tt := range tests {
		if _, err := makeBundles(tt.arrays, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestMakeBundlesMissingSessions: sessions= follows missing_labels as
// ccs bundle -sessions does: a session id that marks a missing value
// ("nan", Python's None as the null mark) is refused naming sessions and
// the first row, left out with a warning (drop), or a session of its own
// (class) whose rows are anchors too.
func TestMakeBundlesMissingSessions(t *testing.T) {
	t.Parallel()
	const n, d = 600, 4
	points := make([]float32, n*d)
	for i := range points {
		points[i] = float32(i*7%13) + float32(i%d)
	}
	groups := make([]int64, n)
	marked := func(i int) bool { return i%12 == 4 || i%48 == 0 }
	for _, c := range []struct{ mark, named string }{{"nan", `"nan"`}, {bundle.NullMark, "null"}} {
		var strs []byte
		for i := range n {
			groups[i] = int64(i / 12)
			s := fmt.Sprintf("s%d", i%12%3)
			if marked(i) {
				s = c.mark
			}
			var units [5]uint32
			for j, r := range []rune(s) {
				units[j] = uint32(r)
			}
			for _, u := range units {
				strs = binary.LittleEndian.AppendUint32(strs, u)
			}
		}
		arrays := map[string]rawArray{"embeddings": raw("embeddings", points, n, d), "groups": raw("groups", groups, n),
			"sessions": {Name: "sessions", Dtype: "<U5", Data: strs, Shape: []int{n}}}
		o := defaultMake
		o.K, o.KNeg = 3, 3
		want := fmt.Sprintf("sessions: 63 of 600 rows have a session id that marks a missing value (%s: 63); the first: row 0", c.named)
		if _, err := makeBundles(arrays, o); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", c.named, err, want)
		}
		for _, mode := range []string{"drop", "class"} {
			o.MissingLabels = mode
			got, err := makeBundles(arrays, o)
			if err != nil {
				t.Fatalf("%s, %s: %v", c.named, mode, err)
			}
			warning := fmt.Sprintf("63 of 600 rows have a session id that marks a missing value (%s: 63), taken for no session: left out of every split", c.named)
			if has := slices.Contains(got.Warnings, warning); has != (mode == "drop") {
				t.Errorf("%s, %s: warnings %q", c.named, mode, got.Warnings)
			}
			anchors := 0
			for _, b := range got.Bundles {
				for _, r := range b.Index {
					if marked(int(r)) {
						anchors++
					}
				}
			}
			if want := map[string]int{"drop": 0, "class": (n + 47) / 48}[mode]; anchors != want {
				t.Errorf("%s, %s: %d anchors of a missing session, want %d", c.named, mode, anchors, want)
			}
		}
	}
}

// TestLibraryVersion: a test binary is not stamped with a revision, so
// the code that keys a comparison's cells (experiment.CompareKey) is named
// by its file's hash, which dladdr found.
func TestLibraryVersion(t *testing.T) {
	t.Parallel()
	if v := libraryVersion(); !strings.Contains(v, "+sha256:") {
		t.Errorf("libraryVersion %q: want the file's SHA-256", v)
	}
}

// TestCompareJob: a comparison runs as a job whose document is ccs compare
// -json's kind, table and rows, and reports into a page; a fit's outcome
// is not asked of it, nor its document of a fit; bad keywords and bad
// documents are refused.
func TestCompareJob(t *testing.T) {
	t.Parallel()
	data := sim.Mixed(1, 200)
	split := data.Split(1)
	var in compareInputs
	for _, b := range []struct {
		dst  **bundle.Bundle
		idx  []int
		name string
	}{{&in.Fit, split.Fit, "fit"}, {&in.Cal, split.Cal, "cal"}, {&in.Test, split.Test, "test"}} {
		var err error
		if *b.dst, err = data.Pairs(b.idx, 10, 1, b.name); err != nil {
			t.Fatal(err)
		}
	}
	one := 1
	j, err := startCompare(in, compareOptions{Rows: "baselines", Seeds: &one, Resplits: &one})
	if err != nil {
		t.Fatal(err)
	}
	j.wait(time.Minute)
	doc, text, err := j.document()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(doc), "{\n  \"kind\": \"compare\",\n  \"command\": \"ccs.compare\"") || !strings.Contains(text, "| Conformal Ball (ℓ2) ") {
		t.Errorf("document %.80s…, text %.200s…", doc, text)
	}
	if _, _, _, err := j.outcome(); err == nil || !strings.Contains(err.Error(), "the job is a compare, not a fit") {
		t.Errorf("a fit's outcome of a comparison: %v", err)
	}
	if strings.Contains(string(doc), "one_label") || strings.Contains(text, "One label") {
		t.Errorf("bundles of no one label: document or text names one")
	}
	// Bundles of one label's rows (a loaded cal.npz's manifest, ccs.bundle's
	// one_label): the document and the text say whose they are.
	oneIn := in
	oneIn.CalOneLabel = "joy"
	j1, err := startCompare(oneIn, compareOptions{Rows: "baselines", Seeds: &one, Resplits: &one})
	if err != nil {
		t.Fatal(err)
	}
	j1.wait(time.Minute)
	doc1, text1, err := j1.document()
	if err != nil || !strings.Contains(string(doc1), `"one_label": "joy"`) || !strings.Contains(text1, `One label: "joy"`) {
		t.Errorf("one label: %v; document has one_label %v, text %v", err, strings.Contains(string(doc1), `"one_label": "joy"`), strings.Contains(text1, `One label: "joy"`))
	}
	var page strings.Builder
	if err := writeReport(&page, report.HTML, "", [][]byte{doc}); err != nil || !strings.Contains(page.String(), "<html") {
		t.Errorf("report: %v", err)
	}
	zero := 0
	for _, tc := range []struct {
		in   compareInputs
		o    compareOptions
		want string
	}{
		{in, compareOptions{Seeds: &zero}, "compare: seeds=0: want at least 1"},
		{in, compareOptions{Rows: "learned"}, `compare: no val bundle: the rows "learned" need it`},
		{compareInputs{Cal: in.Cal}, compareOptions{Rows: "baselines"}, `compare: no fit bundle: the rows "baselines" need it`},
		{in, compareOptions{Rows: "baselines", LabelNames: []string{"a"}}, "compare: label_names: 1 names, the test bundle has label 1"},
		{in, compareOptions{Calibration: "class", Delta: 2}, "compare: delta=2: want 0 < δ < 0.5"},
	} {
		if _, err := startCompare(tc.in, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	for _, tc := range []struct {
		docs [][]byte
		want string
	}{{nil, "report: no results"}, {[][]byte{[]byte(`{"kind": "nope"}`)}, "report: result 0: "}} {
		if err := writeReport(io.Discard, report.HTML, "", tc.docs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("report of %q: %v, want %q", tc.docs, err, tc.want)
		}
	}
}

// TestServer: ccs.serve's server listens once startServer returns, on
// the port bound; reloads; stops cleanly when cancelled, its port free;
// refuses what ccs serve refuses.
func TestServer(t *testing.T) {
	t.Parallel()
	data := sim.Mixed(1, 100)
	cal, err := data.Pairs(data.Split(1).Cal, 5, 1, "cal")
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.Ball(cal, 0.1, baseline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ball.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	j, info, err := startServer(serveOptions{Sets: map[string]string{"ball": path}, Addr: "127.0.0.1:0", Grace: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.URL, "http://127.0.0.1:") || info.Sets != 1 {
		t.Errorf("info %+v", info)
	}
	resp, err := http.Get(info.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := j.reload(); err != nil || j.srv.Generation() != 2 {
		t.Errorf("reload: %v, generation %d", err, j.srv.Generation())
	}
	j.cancel()
	if !j.wait(10 * time.Second) {
		t.Fatal("the server did not stop")
	}
	if err := j.finished(); err != nil {
		t.Errorf("stopped with %v", err)
	}
	if err := j.reload(); err == nil || !strings.Contains(err.Error(), "the server has stopped") {
		t.Errorf("reload after the stop: %v", err)
	}
	ln, err := net.Listen("tcp", strings.TrimPrefix(info.URL, "http://"))
	if err != nil {
		t.Errorf("the port is not free after the stop: %v", err)
	} else {
		ln.Close()
	}
	for _, tc := range []struct {
		o    serveOptions
		want string
	}{
		{serveOptions{}, "serve: give at least one set"},
		{serveOptions{Sets: map[string]string{"ball": path}, Addr: "0.0.0.0:0"}, "beyond this machine, where without auth_tokens"},
		{serveOptions{Sets: map[string]string{"ball": path}, TLSKey: "k.pem"}, "serve: give tls_cert and tls_key together"},
		{serveOptions{Sets: map[string]string{"ball": path}, MaxBody: -1}, "must not be negative"},
		{serveOptions{Sets: map[string]string{"ball": path}, Collections: map[string]string{"c": "clickhouse://h:9000/db.t"}}, `serve: collection "c": clickhouse://h:9000/db.t: this library serves collection files`},
		{serveOptions{Sets: map[string]string{"ball": path}, Metrics: "all"}, "serve: metrics: "},
		{serveOptions{Sets: map[string]string{"ball": path + ".missing"}, Addr: "127.0.0.1:0"}, "no such file"},
	} {
		if _, _, err := startServer(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	c := &job{what: "compare"}
	if err := c.reload(); err == nil || err.Error() != "the job is a compare, not a server" {
		t.Errorf("reload of a comparison: %v", err)
	}
}

// TestMakeBundlesOut: with out, the bundles are written as ccs bundle
// -out writes them — the same arrays as in memory, and a manifest that
// names the string labels (read back beside the test file), records the
// call, and hashes each array given in memory as NumPy's bytes in C
// order, whatever order it was given in.
func TestMakeBundlesOut(t *testing.T) {
	t.Parallel()
	data := sim.Mixed(3, 60)
	labels := make([]byte, 0, 4*data.N)
	for _, l := range data.Labels {
		labels = binary.LittleEndian.AppendUint32(labels, uint32('a'+l))
	}
	dir := filepath.Join(t.TempDir(), "b")
	o := defaultMake
	o.K, o.Seed, o.Out, o.Command = 4, 2, dir, "ccs.bundle(embeddings, labels, k=4, seed=2)"
	// The embeddings in Fortran order.
	n, d := data.N, sim.Dim
	f := make([]float32, n*d)
	for i := range n {
		for j := range d {
			f[j*n+i] = data.Points[i*d+j]
		}
	}
	emb := raw("embeddings", f, n, d)
	emb.Fortran = true
	made, err := makeBundles(map[string]rawArray{"embeddings": emb, "labels": {Name: "labels", Dtype: "<U1", Data: labels, Shape: []int{n}}}, o)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range made.Names {
		read := bundle.Read
		if made.Bundles[i].K == 0 {
			read = bundle.ReadFeatures
		}
		b, err := read(filepath.Join(dir, name+".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.Anchors, made.Bundles[i].Anchors) || !slices.Equal(b.PositiveIndex, made.Bundles[i].PositiveIndex) || !slices.Equal(b.Labels, made.Bundles[i].Labels) {
			t.Errorf("%s.npz differs from the bundle in memory", name)
		}
	}
	test := filepath.Join(dir, "test.npz")
	b, _ := bundle.Read(test)
	if names := bundle.ManifestLabelNames(test, b); !slices.Equal(names, made.LabelNames) || len(names) == 0 {
		t.Errorf("label names beside the files %q, made %q", names, made.LabelNames)
	}
	// A loaded file's handle keeps what the manifest said of it when it was
	// read (loadBundle reads it once): its names and split outlive the
	// manifest, which a file loaded after is without.
	loaded, err := loadBundle(test, false)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "manifest.json"))
	if info := infoOf(loaded); info.Split != "test" || !slices.Equal(info.LabelNames, made.LabelNames) {
		t.Errorf("a loaded test.npz, its manifest then removed: split %q, label names %q, want \"test\", %q", info.Split, info.LabelNames, made.LabelNames)
	}
	if again, err := loadBundle(test, false); err != nil || infoOf(again).Split != "" || again.names != nil {
		t.Errorf("test.npz loaded without its manifest: %+v, %v", again, err)
	}
	if !strings.Contains(string(doc), `"dtype": "<f4"`) {
		t.Errorf("the manifest does not write the dtype as NumPy does:\n%s", doc)
	}
	var m bundle.Manifest
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(bytesOf(data.Points)) // C order
	if in := m.Inputs["embeddings"]; in.SHA256 != hex.EncodeToString(want[:]) || in.Dtype != "<f4" || !slices.Equal(in.Shape, []int{n, d}) || in.Path != "" {
		t.Errorf("embeddings input %+v, want the SHA-256 of the C-order bytes %x", in, want)
	}
	if lab := sha256.Sum256(labels); m.Inputs["labels"].SHA256 != hex.EncodeToString(lab[:]) {
		t.Errorf("labels input %+v", m.Inputs["labels"])
	}
	if m.Command != o.Command || m.K != 4 || m.Seed != 2 || len(m.Files) != len(made.Names) || m.Positives == "" {
		t.Errorf("manifest %+v", m)
	}
	// A 3-D Fortran array: C order is the last index fastest.
	x := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11} // shape (2, 3, 2), Fortran: element (i, j, k) at i + 2j + 6k
	got := bundle.COrderBytes(x, []int{2, 3, 2}, 1)
	var c []byte
	for i := range 2 {
		for j := range 3 {
			for k := range 2 {
				c = append(c, x[i+2*j+6*k])
			}
		}
	}
	if !slices.Equal(got, c) || slices.Equal(got, x) {
		t.Errorf("bundle.COrderBytes: %v, want %v", got, c)
	}
}

// TestOneLabelRefusals: ccs.calibrate, Set.evaluate, Set.coverage_check
// and ccs.compare refuse classes of the bundles of one label's rows (a
// loaded bundle's oneLabel) as ccs calibrate, evaluate, coverage-check
// and compare do, the keyword that asked for them first, wrapping
// bundle.ErrOneLabel.
func TestOneLabelRefusals(t *testing.T) {
	t.Parallel()
	const d = 4
	b := gauss(5, 200, 4, d) // no labels: every anchor carries the one label
	joy := &bundleObj{b: b, path: "joy/cal.npz", oneLabel: "joy"}
	ball := calibrated(t, d)["ball"]
	calibrateErr := func(o calibrateOptions) error {
		_, err := calibrate(nil, joy, o, calibrateInputs{})
		return err
	}
	const class = `the bundles of label "joy" alone (ccs bundle -one-label; one_label= in Python): every anchor carries it, and the bundles carry no labels — one threshold over every anchor (calibration="one") is that label's`
	const perClass = `per_class=True: the bundles of label "joy" alone (ccs bundle -one-label; one_label= in Python) carry no labels to split by`
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"calibrate class", calibrateErr(calibrateOptions{Geometry: "ball", Calibration: "class"}), `calibrate: calibration="class": joy/cal.npz: ` + class},
		{"calibrate label", calibrateErr(calibrateOptions{Geometry: "ball", Label: "joy"}), "calibrate: label=joy: joy/cal.npz: " + class},
		{"evaluate", func() error {
			_, _, err := evaluate(context.Background(), ball, joy, evaluateOptions{PerClass: true}, nil)
			return err
		}(), "joy/cal.npz: " + perClass},
		{"coverage check", func() error {
			_, _, err := coverageCheck(context.Background(), ball, joy, coverageCheckOptions{PerClass: true})
			return err
		}(), "coverage_check: joy/cal.npz: " + perClass},
		{"compare", func() error {
			_, err := startCompare(compareInputs{Fit: b, Val: b, Cal: b, Test: b, CalOneLabel: "joy"}, compareOptions{Rows: "baselines", Calibration: "class"})
			return err
		}(), `compare: calibration="class": ` + class},
	} {
		if !errors.Is(c.err, bundle.ErrOneLabel) || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want bundle.ErrOneLabel, saying %q", c.name, c.err, c.want)
		}
	}
	// A bundle of no one label: no such refusal.
	if _, err := calibrate(nil, &bundleObj{b: b}, calibrateOptions{Geometry: "ball"}, calibrateInputs{}); err != nil {
		t.Errorf("calibrate, no one label: %v", err)
	}
}
