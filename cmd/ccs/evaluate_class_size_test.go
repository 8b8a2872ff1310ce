package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/eval"
	"github.com/ccsets/ccs/retrieve"
)

// TestEvaluateClassSetSizes: evaluate -db on a class-conditional set
// counts the collection's items inside each test anchor's set at its
// class's threshold — the set's membership test with the anchor's label,
// one anchor at a time — overall and with -per-class class by class; and
// refuses, naming the flag, a test bundle without labels (no
// -unlabeled marginal) and -baseline.
func TestEvaluateClassSetSizes(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := run(io.Discard, io.Discard, []string{"simulate", "-out", dir, "-per-class", "60", "-k", "4", "-seed", "7"}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-alpha", "0.2", "-calibration", "class", "-allow-infinite", "-out", p("class.json")}); err != nil {
		t.Fatal(err)
	}
	set, err := conformal.Load(p("class.json"))
	if err != nil {
		t.Fatal(err)
	}
	test, err := bundle.Read(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	fit, err := bundle.Read(p("fit.npz"))
	if err != nil {
		t.Fatal(err)
	}
	const m = 30
	d := test.D
	want := make([]int, m)
	for i := range m {
		in, err := set.Members(nil, test.Anchors[i*d:(i+1)*d], fit.Anchors, &test.Labels[i])
		if err != nil {
			t.Fatal(err)
		}
		for _, ok := range in {
			if ok {
				want[i]++
			}
		}
	}
	wantSizes := eval.SummarizeSizes(want, fit.N)
	wantClasses, err := eval.SizesByClass(want, test.Labels, fit.N)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantClasses) < 2 {
		t.Fatalf("%d classes among the first %d test anchors", len(wantClasses), m)
	}
	// The thresholds differ: a set at the threshold over all classes
	// counts otherwise.
	coll, err := retrieve.NewCollection(fit.Anchors, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	over, _, err := eval.AnchorSizes(t.Context(), set.OverAllClasses(), test, coll, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(over, want) {
		t.Fatalf("the classes' sets hold what the set over all classes holds: %v", want)
	}

	var stdout strings.Builder
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("class.json"), "-test", p("test.npz"), "-db", p("fit.npz") + ":anchors", "-size-anchors", "30", "-per-class", "-json"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Sizes      *eval.Sizes       `json:"set_sizes"`
		ClassSizes []eval.ClassSizes `json:"class_set_sizes"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil || got.Sizes == nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if *got.Sizes != wantSizes || !reflect.DeepEqual(got.ClassSizes, wantClasses) {
		t.Errorf("set_sizes %+v, class_set_sizes %+v; counted one by one %+v, %+v", *got.Sizes, got.ClassSizes, wantSizes, wantClasses)
	}
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("class.json"), "-test", p("test.npz"), "-db", p("fit.npz") + ":anchors", "-size-anchors", "30"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "each anchor's set at its class's threshold") {
		t.Errorf("the text does not say each set is its class's:\n%s", stdout.String())
	}

	unlabeled := *test
	unlabeled.Labels = nil
	if err := bundle.Write(p("nolabels.npz"), &unlabeled); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"a test bundle without labels", []string{"-set", p("class.json"), "-test", p("nolabels.npz"), "-db", p("fit.npz") + ":anchors"}, false, "-unlabeled marginal"},
		{"-baseline", []string{"-set", p("class.json"), "-test", p("test.npz"), "-db", p("fit.npz") + ":anchors", "-baseline", "topk", "-cal", p("cal.npz")}, true, "-baseline: " + p("class.json") + " is class-conditional"},
	} {
		err := run(io.Discard, io.Discard, append([]string{"evaluate"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != map[bool]int{true: 2, false: 1}[c.usage] {
			t.Errorf("%s: %v (exit %d), want %q", c.name, err, exitCode(err), c.want)
		}
	}
	// -unlabeled marginal: every set at the threshold over all classes.
	stdout.Reset()
	if err := run(&stdout, io.Discard, []string{"evaluate", "-set", p("class.json"), "-test", p("nolabels.npz"), "-db", p("fit.npz") + ":anchors", "-size-anchors", "30", "-unlabeled", "marginal", "-json"}); err != nil {
		t.Fatal(err)
	}
	got.Sizes = nil
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil || got.Sizes == nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if w := eval.SummarizeSizes(over, fit.N); *got.Sizes != w {
		t.Errorf("-unlabeled marginal: set_sizes %+v; the set over all classes' %+v", *got.Sizes, w)
	}
}
