package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// TestBundleBlocks: a predictive-maintenance export — overlapping
// windows in time order, a pandas CSV of machine_id, recording_id,
// start_s, mode — bundled with -labels w.csv:mode is warned of (the
// windows' neighbours are near-copies, naming -blocks); with -blocks
// w.csv:recording_id every recording lies whole in one file, ood-cal.npz
// included, the manifest says so and counts each file's recordings, and
// no warning is given.
func TestBundleBlocks(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const recs, per, d = 30, 80, 6
	rng := rand.New(rand.NewPCG(9, 9))
	var x []float64
	var csv strings.Builder
	csv.WriteString("machine_id,recording_id,start_s,mode,fault\n")
	modes := []string{"idle", "low", "high"}
	recOf := []string{}
	for r := range recs {
		z := make([]float64, d)
		for j := range z {
			z[j] = 3 * rng.NormFloat64()
		}
		for i := range per {
			m := ((i/20)*5 + r) % 3
			for j := range z {
				z[j] = 0.99*z[j] + 0.1*rng.NormFloat64()
				x = append(x, z[j]+4*float64(m))
			}
			rid := fmt.Sprintf("P-%02d_2026-%02d-01T0800", r%12+1, r/12+1)
			fmt.Fprintf(&csv, "P-%02d,%s,%.1f,%s,\n", r%12+1, rid, 0.5*float64(i), modes[m])
			recOf = append(recOf, rid)
		}
	}
	n := recs * per
	writeNPY64(t, p("w.npy"), x, n, d)
	os.WriteFile(p("w.csv"), []byte(csv.String()), 0o644)
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"bundle", "-embeddings", p("w.npy"), "-labels", p("w.csv") + ":mode", "-k", "5", "-ood-cal-share", "0.1", "-out", p("rows")}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "neighbouring rows are near-copies") || !strings.Contains(stderr.String(), "-blocks FILE") {
		t.Errorf("windows split one by one: no warning naming -blocks:\n%s", stderr.String())
	}
	stderr.Reset()
	if err := run(&stdout, &stderr, []string{"bundle", "-embeddings", p("w.npy"), "-labels", p("w.csv") + ":mode", "-blocks", p("w.csv") + ":recording_id", "-k", "5", "-ood-cal-share", "0.1", "-out", p("b")}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "near-copies") {
		t.Errorf("split by recording: warned\n%s", stderr.String())
	}
	where := map[string]string{}
	files := map[string]map[string]bool{}
	for _, f := range []string{"fit", "val", "cal", "test", "ood-cal"} {
		b, err := bundle.ReadFeatures(p("b/" + f + ".npz"))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = map[string]bool{}
		for _, r := range b.Index {
			rid := recOf[r]
			if w, ok := where[rid]; ok && w != f {
				t.Fatalf("recording %s lies in %s and %s", rid, w, f)
			}
			where[rid] = f
			files[f][rid] = true
		}
	}
	if len(where) != recs {
		t.Errorf("%d recordings in the files, want %d", len(where), recs)
	}
	var m bundle.Manifest
	data, err := os.ReadFile(p("b/manifest.json"))
	if err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatalf("manifest: %v", err)
	}
	if m.SplitBy != "blocks" || m.Inputs["blocks"].Path != p("w.csv")+":recording_id" {
		t.Errorf("manifest: split_by %q, blocks input %+v", m.SplitBy, m.Inputs["blocks"])
	}
	for _, f := range m.Files {
		if f.Blocks != len(files[f.Split]) {
			t.Errorf("manifest: %s counts %d blocks, its anchors are of %d", f.Split, f.Blocks, len(files[f.Split]))
		}
	}
	// ccs ood reads the test file's blocks back (its shift check says the
	// rows are no independent inputs); a bundle split by rows has none.
	tb, err := bundle.ReadFeatures(p("b/test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if got := bundle.ManifestBlocks(p("b/test.npz"), tb); got != len(files["test"]) || got == 0 {
		t.Errorf("ManifestBlocks: %d, want %d", got, len(files["test"]))
	}
	rb, err := bundle.ReadFeatures(p("rows/test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if got := bundle.ManifestBlocks(p("rows/test.npz"), rb); got != 0 {
		t.Errorf("ManifestBlocks of a bundle split by rows: %d", got)
	}
	// coverage-check halves a test split split by blocks block by block:
	// its bundles keep each anchor's block (a forty-eighth round's
	// medical-imaging user had patients on both sides of every halving,
	// warned of then), the JSON says how many, and nothing is warned of;
	// one split by rows is halved row by row.
	for _, c := range []struct {
		dir    string
		blocks bool
	}{{"b", true}, {"rows", false}} {
		stderr.Reset()
		set := p(c.dir + "/ball.json")
		if err := run(&stdout, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", p(c.dir + "/cal.npz"), "-alpha", "0.1", "-out", set}); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		stderr.Reset()
		if err := run(&stdout, &stderr, []string{"coverage-check", "-set", set, "-test", p(c.dir + "/test.npz"), "-resplits", "20", "-json"}); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		if strings.Contains(stderr.String(), "row by row") {
			t.Errorf("coverage-check of %s: warned of blocks:\n%s", c.dir, stderr.String())
		}
		if got := regexp.MustCompile(`"blocks": [1-9]`).MatchString(stdout.String()); got != c.blocks {
			t.Errorf("coverage-check of %s -json: says it halved by blocks %v, want %v:\n%s", c.dir, got, c.blocks, stdout.String())
		}
		stdout.Reset()
	}
	// The recordings' ids with one row too few: named, as -labels' are.
	short := strings.Join(strings.Split(csv.String(), "\n")[:n], "\n") + "\n"
	os.WriteFile(p("short.csv"), []byte(short), 0o644)
	err = run(&stdout, &stderr, []string{"bundle", "-embeddings", p("w.npy"), "-labels", p("w.csv") + ":mode", "-blocks", p("short.csv") + ":recording_id", "-k", "5", "-out", p("c")})
	if err == nil || !strings.Contains(err.Error(), "short.csv:recording_id") {
		t.Errorf("short block ids: %v", err)
	}
	// Too few blocks for a share: the -blocks file is what says so, not
	// -labels.
	err = run(&stdout, &stderr, []string{"bundle", "-embeddings", p("w.npy"), "-labels", p("w.csv") + ":mode", "-blocks", p("w.csv") + ":machine_id", "-split", "0.5,0.02,0.2,0.2", "-k", "5", "-out", p("few")})
	if want := p("w.csv") + ":machine_id: bundle: 12 blocks are too few"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("too few blocks: %v, want it to begin %q", err, want)
	}
}

// pdmWindows writes what a predictive-maintenance user exports:
// windows.npy, overlapping windows of recs recordings in time order (d =
// 8), and windows.csv, pandas' to_csv of machine_id, recording_id,
// start_s, mode, fault (empty for a normal window) and state (the fault,
// or the mode of a normal window) — docs/your-data.md §9.
func pdmWindows(t *testing.T, recs, per int) {
	t.Helper()
	const d = 8
	rng := rand.New(rand.NewPCG(12, 12))
	modes, faults := []string{"idle", "low", "high"}, []string{"bearing", "misalignment", "cavitation"}
	var x []float64
	var csv strings.Builder
	csv.WriteString("machine_id,recording_id,start_s,mode,fault,state\n")
	for r := range recs {
		z := make([]float64, d)
		for j := range z {
			z[j] = 2 * rng.NormFloat64()
		}
		fault := -1
		if r%4 == 0 {
			fault = r / 4 % 3
		}
		for i := range per {
			m := []int{0, 0, 0, 1, 1, 2}[(i/25+r)%6] // idle 50%, low 33%, high 17%
			f, state := "", modes[m]
			for j := range z {
				z[j] = 0.99*z[j] + 0.1*rng.NormFloat64()
			}
			grow := 0.0
			if fault >= 0 && i >= per*9/10 {
				f, state = faults[fault], faults[fault]
				grow = 3 * float64(i-per*9/10) / float64(per/10)
			}
			for j := range z {
				v := z[j] + 4*float64(m)
				if j == fault {
					v += grow
				}
				x = append(x, v)
			}
			fmt.Fprintf(&csv, "P-%02d,P-%02d_rec%02d,%.1f,%s,%s,%s\n", r%12+1, r%12+1, r, 0.5*float64(i), modes[m], f, state)
		}
	}
	writeNPY64(t, "windows.npy", x, recs*per, d)
	if err := os.WriteFile("windows.csv", []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOODByClass: ccs ood -ood-by-class judges each label of an OOD file
// apart — ccs bundle's ood.npz of three fault types becomes three samples,
// named by the manifest's names, each with its own AUROC and true-alarm
// rate, equal to those of the fault's rows given as a file of their own;
// a file without labels is refused, naming it.
func TestOODByClass(t *testing.T) {
	t.Chdir(t.TempDir())
	pdmWindows(t, 40, 300)
	for _, args := range [][]string{
		{"bundle", "-embeddings", "windows.npy", "-labels", "windows.csv:state", "-blocks", "windows.csv:recording_id", "-ood-classes", "bearing,misalignment,cavitation", "-ood-cal-share", "0.1", "-allow-fewer", "-out", "pdm"},
		{"calibrate", "-geometry", "ball", "-cal", "pdm/cal.npz", "-reference", "500", "-ood-cal", "pdm/ood-cal.npz", "-out", "ball.json"},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	var stdout bytes.Buffer
	if err := run(&stdout, io.Discard, []string{"ood", "-set", "ball.json", "-id", "pdm/test.npz", "-ood", "faults=pdm/ood.npz", "-ood-by-class", "-json"}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sets []string `json:"ood_sets"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if want := []string{"faults:bearing", "faults:cavitation", "faults:misalignment"}; !slices.Equal(doc.Sets, want) {
		t.Errorf("samples %q, want %q", doc.Sets, want)
	}
	// The bearing column equals bearing's rows as a file of their own.
	b, err := bundle.ReadFeatures("pdm/ood.npz")
	if err != nil {
		t.Fatal(err)
	}
	var rows []int
	for i, l := range b.Labels {
		if l == 0 { // "bearing", the first name in sorted order
			rows = append(rows, i)
		}
	}
	sub := b.Subset(rows)
	if err := bundle.WriteNPY("bearing.npy", bundle.Float32(sub.Anchors, sub.N, sub.D)); err != nil {
		t.Fatal(err)
	}
	var split, apart bytes.Buffer
	run(&split, io.Discard, []string{"ood", "-set", "ball.json", "-id", "pdm/test.npz", "-ood", "faults=pdm/ood.npz", "-ood-by-class"})
	run(&apart, io.Discard, []string{"ood", "-set", "ball.json", "-id", "pdm/test.npz", "-ood", "faults:bearing=bearing.npy"})
	cell := func(s string, col int) string { // the CCS row's col-th cell
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "| CCS") {
				return strings.TrimSpace(strings.Split(line, "|")[col+1])
			}
		}
		return ""
	}
	if a, b := cell(split.String(), 1), cell(apart.String(), 1); a == "" || a != b {
		t.Errorf("bearing's AUROC split %q, apart %q", a, b)
	}
	writeNPY64(t, "plain.npy", make([]float64, 16), 2, 8)
	err = run(io.Discard, io.Discard, []string{"ood", "-set", "ball.json", "-id", "pdm/test.npz", "-ood", "plain.npy", "-ood-by-class"})
	if err == nil || !strings.Contains(err.Error(), "plain.npy: -ood-by-class: it has no labels to split its inputs by") {
		t.Errorf("no labels: %v", err)
	}
}

// TestOODRows: -ood-rows windows.csv:fault holds the rows with a fault
// out as the OOD sample, labelled by it, with no state column made by
// hand: the same bundles, byte for byte, as -labels of a column holding
// the fault or else the mode with -ood-classes naming the faults; a fault
// named as a class, integer labels, and a missing -labels are refused.
func TestOODRows(t *testing.T) {
	t.Chdir(t.TempDir())
	pdmWindows(t, 40, 300)
	base := []string{"bundle", "-embeddings", "windows.npy", "-blocks", "windows.csv:recording_id", "-ood-cal-share", "0.1", "-allow-fewer"}
	if err := run(io.Discard, io.Discard, append(slices.Clone(base), "-labels", "windows.csv:mode", "-ood-rows", "windows.csv:fault", "-out", "rows")); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, append(slices.Clone(base), "-labels", "windows.csv:state", "-ood-classes", "bearing,misalignment,cavitation", "-out", "state")); err != nil {
		t.Fatal(err)
	}
	// The faults in a file of their own, not the labels': the manifest
	// hashes it as it hashes every input.
	csv, err := os.ReadFile("windows.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("faults.csv", csv, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, append(slices.Clone(base), "-labels", "windows.csv:mode", "-ood-rows", "faults.csv:fault", "-out", "own")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test", "ood-cal", "ood"} {
		a, err := os.ReadFile(filepath.Join("rows", f+".npz"))
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{"state", "own"} {
			b, err := os.ReadFile(filepath.Join(dir, f+".npz"))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s/%s.npz differs from rows/%[2]s.npz (%v)", dir, f, err)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join("own", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m bundle.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if in := m.Inputs["ood_rows"]; in.Path != "faults.csv:fault" || len(in.SHA256) != 64 {
		t.Errorf("manifest's ood_rows input %+v, want faults.csv:fault with its SHA-256", in)
	}
	// A column with no fault at all (every cell empty: a healthy fleet's
	// export, which pandas reads as NaN floats) holds no row out.
	var healthy strings.Builder
	healthy.WriteString("start_s,fault\n")
	for i := range 12000 {
		fmt.Fprintf(&healthy, "%d,\n", i)
	}
	if err := os.WriteFile("healthy.csv", []byte(healthy.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, append(slices.Clone(base), "-labels", "windows.csv:mode", "-ood-rows", "healthy.csv:fault", "-out", "healthy")); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, append(slices.Clone(base), "-labels", "windows.csv:mode", "-out", "plain")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fit", "val", "cal", "test", "ood-cal"} {
		a, err := os.ReadFile(filepath.Join("plain", f+".npz"))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join("healthy", f+".npz")); err != nil || !bytes.Equal(a, b) {
			t.Errorf("healthy/%s.npz differs from plain/%[1]s.npz (%v)", f, err)
		}
	}
	// A fault of unknown cause, "unknown": a missing label's mark to
	// annotation tools, which must not make the row a normal one.
	var unknown strings.Builder
	unknown.WriteString("start_s,fault\n")
	for i, line := range strings.Split(strings.TrimSpace(string(csv)), "\n")[1:] {
		f := ""
		if strings.Split(line, ",")[4] != "" {
			f = "unknown"
		}
		fmt.Fprintf(&unknown, "%d,%s\n", i, f)
	}
	if err := os.WriteFile("unknown.csv", []byte(unknown.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY("modes.npy", bundle.Int64(make([]int64, 12000), 12000)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-labels", "windows.csv:mode", "-ood-rows", "windows.csv:mode"}, `windows.csv:mode: -ood-rows: the value "idle" is also a class of windows.csv:mode`},
		{[]string{"-labels", "windows.csv:mode", "-ood-rows", "unknown.csv:fault"}, `unknown.csv:fault: -ood-rows: the value "unknown" (300 rows) marks a missing label to annotation tools`},
		{[]string{"-labels", "modes.npy", "-ood-rows", "windows.csv:fault"}, "windows.csv:fault: -ood-rows: modes.npy holds integer labels; give the classes as strings"},
		{[]string{"-groups", "windows.csv:recording_id", "-ood-rows", "windows.csv:fault"}, "-ood-rows windows.csv:fault marks rows of -labels as OOD: give it with -labels"},
	} {
		args := []string{"bundle", "-embeddings", "windows.npy", "-out", "bad"}
		if err := run(io.Discard, io.Discard, append(args, c.args...)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestOODClass: calibrate -ood-class idle makes the per-input test of the
// idle windows alone — its pool is -reference N of the calibration
// split's idle anchors, its calibration the idle inputs of ood-cal.npz —,
// and the set file says so; a class not among the labels, a pool larger
// than the class and -ood-class without -ood-cal are refused.
func TestOODClass(t *testing.T) {
	t.Chdir(t.TempDir())
	pdmWindows(t, 40, 300)
	if err := run(io.Discard, io.Discard, []string{"bundle", "-embeddings", "windows.npy", "-labels", "windows.csv:mode", "-ood-rows", "windows.csv:fault", "-blocks", "windows.csv:recording_id", "-ood-cal-share", "0.1", "-allow-fewer", "-out", "pdm"}); err != nil {
		t.Fatal(err)
	}
	if err := run(io.Discard, io.Discard, []string{"calibrate", "-geometry", "ball", "-cal", "pdm/cal.npz", "-reference", "200", "-ood-cal", "pdm/ood-cal.npz", "-ood-class", "idle", "-out", "idle.json"}); err != nil {
		t.Fatal(err)
	}
	set, err := conformal.Load("idle.json")
	if err != nil {
		t.Fatal(err)
	}
	names := bundle.ManifestLabelNames("pdm/cal.npz", mustFeatures(t, "pdm/cal.npz"))
	idle := int64(slices.Index(names, "idle"))
	cal, oc := mustFeatures(t, "pdm/cal.npz"), mustFeatures(t, "pdm/ood-cal.npz")
	isIdle := map[string]bool{}
	for i, l := range cal.Labels {
		if l == idle {
			isIdle[fmt.Sprint(cal.Anchor(i))] = true
		}
	}
	for i := range set.Reference.N {
		if row := set.Reference.Rows[i*cal.D : (i+1)*cal.D]; !isIdle[fmt.Sprint(row)] {
			t.Fatalf("pool row %d is no idle calibration anchor", i)
		}
	}
	n := 0
	for _, l := range oc.Labels {
		if l == idle {
			n++
		}
	}
	if set.OOD.N != n || set.Reference.N != 200 || set.Reference.Source != `calibration anchors of class "idle"` || set.OOD.Source != `pdm/ood-cal.npz (class "idle")` {
		t.Errorf("pool %d rows (%q), calibration %d inputs (%q); want 200 idle anchors and the %d idle inputs", set.Reference.N, set.Reference.Source, set.OOD.N, set.OOD.Source, n)
	}
	if err := os.Mkdir("bare", 0o755); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile("pdm/ood-cal.npz"); err != nil || os.WriteFile("bare/ood-cal.npz", raw, 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-reference", "200", "-ood-cal", "pdm/ood-cal.npz", "-ood-class", "idel"}, `calibrate: -ood-class: pdm/cal.npz: "idel" is not among the labels`},
		{[]string{"-reference", "100000", "-ood-cal", "pdm/ood-cal.npz", "-ood-class", "high"}, `calibrate: -reference 100000: pdm/cal.npz has `},
		{[]string{"-reference", "200", "-ood-cal", "pdm/ood-cal.npz", "-ood-class", "bearing"}, `calibrate: -ood-class bearing: pdm/cal.npz has no anchors of it`},
		{[]string{"-ood-class", "idle"}, "calibrate: -ood-class idle picks a class's pool and calibration inputs: give -reference N and -ood-cal FILE with it"},
		// Saved apart from its manifest, the file's labels are numbers.
		{[]string{"-reference", "200", "-ood-cal", "bare/ood-cal.npz", "-ood-class", "idle"}, `calibrate: -ood-class: bare/ood-cal.npz: "idle" is not an integer label: its labels are numbers, named by no manifest.json beside it (ccs bundle -out and ccs.bundle(out=) write one; Bundle.save does not)`},
	} {
		args := append([]string{"calibrate", "-geometry", "ball", "-cal", "pdm/cal.npz", "-out", "bad.json"}, c.args...)
		if err := run(io.Discard, io.Discard, args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// mustFeatures reads a bundle file's anchors (and labels) or fails.
func mustFeatures(t *testing.T, path string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.ReadFeatures(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
