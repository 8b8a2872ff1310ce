package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/experiment"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/race"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden runs ccs with args and compares its stdout and stderr with
// testdata/NAME.stdout and .stderr (a missing file counts as empty). tmp, if
// not empty, is replaced by $TMP in the output, and a JSON document's build
// by "$BUILD". It returns run's error.
func golden(t *testing.T, name, tmp string, args ...string) error {
	t.Helper()
	return compareGolden(t, name, tmp, false, args...)
}

// goldenTrained is golden for output whose figures come from training. The
// golden files are the portable kernels'; where the training kernels are the
// vector ones (kernel.Vector: the AVX2 and AVX-512 levels)
// float32 rounding sends training down a slightly different path, so there
// only the text around the figures is compared.
func goldenTrained(t *testing.T, name, tmp string, args ...string) error {
	t.Helper()
	return compareGolden(t, name, tmp, kernel.Vector(), args...)
}

// buildField matches a JSON document's build (ccs version -json: the Go
// version, the platform, the kernels in use), which the golden files keep
// as "$BUILD".
var buildField = regexp.MustCompile(`"build": \{[^{}]*\}`)

// figures matches the numbers in an output, for goldenTrained.
var figures = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?`)

func compareGolden(t *testing.T, name, tmp string, textOnly bool, args ...string) error {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(&stdout, &stderr, args)
	if err != nil {
		// What main prints for an error.
		stderr.WriteString("ccs: " + err.Error() + "\n")
	}
	for _, out := range []struct {
		ext string
		got []byte
	}{{".stdout", stdout.Bytes()}, {".stderr", stderr.Bytes()}} {
		got := out.got
		if tmp != "" {
			got = bytes.ReplaceAll(got, []byte(tmp), []byte("$TMP"))
		}
		got = buildField.ReplaceAllLiteral(got, []byte(`"build": "$BUILD"`))
		path := filepath.Join("testdata", name+out.ext)
		if *update {
			if len(got) == 0 {
				os.Remove(path)
			} else if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, _ := os.ReadFile(path)
		g, w := got, want
		if textOnly {
			g, w = figures.ReplaceAll(got, []byte("#")), figures.ReplaceAll(want, []byte("#"))
		}
		if !bytes.Equal(g, w) {
			os.WriteFile(filepath.Join("testdata", name+".got"+out.ext), got, 0o644)
			t.Errorf("%s%s differs from the golden file (see testdata/%s.got%s):\n%s", name, out.ext, name, out.ext, got)
		}
	}
	return err
}

// hasRow says whether out holds a Markdown table row whose first cell is
// first, however the columns are padded.
func hasRow(out, first string) bool {
	return regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(first) + ` +\|`).MatchString(out)
}

func isUsage(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}

// TestUsageErrors: each is a one-line message and exit status 2.
func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"noargs", nil},
		{"unknown", []string{"frobnicate"}},
		{"unknown-swap", []string{"bundel"}},
		{"unknown-help", []string{"hlep"}},
		{"flag-tie", []string{"evaluate", "-tset", "t.npz"}},
		{"calibrate-missing", []string{"calibrate", "-geometry", "ball"}},
		{"calibrate-alpha", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-alpha", "1.5"}},
		{"calibrate-geometry", []string{"calibrate", "-geometry", "cube", "-cal", "x.npz", "-out", "s.json"}},
		{"calibrate-mode", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-calibration", "all"}},
		{"calibrate-pac-delta", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-calibration", "pac"}},
		{"calibrate-pac-tiny-delta", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-calibration", "pac", "-delta", "1e-13"}},
		{"calibrate-class-reference", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-calibration", "class", "-reference", "18"}},
		{"calibrate-ood-class", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-ood-class", "idle"}},
		{"calibrate-delta-mode", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-delta", "0.1"}},
		{"coverage-check-fraction", []string{"coverage-check", "-set", "s.json", "-test", "t.npz", "-cal-fraction", "1"}},
		{"reproduce-class", []string{"reproduce", "sim", "-calibration", "class"}},
		{"reproduce-per-class", []string{"reproduce", "sim", "-per-class", "10"}},
		{"compare-allow-infinite", []string{"compare", "-data", "d", "-allow-infinite"}},
		{"compare-head-dim-rows", []string{"compare", "-data", "d", "-head-dim", "4"}},
		{"compare-head-dim", []string{"compare", "-data", "d", "-rows", "infonce", "-head-dim", "-1"}},
		{"report-pdf", []string{"report", "-in", "results", "-out", "report.pdf"}},
		{"evaluate-unlabeled", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-unlabeled", "drop"}},
		{"bundle-kneg-hard", []string{"bundle", "-embeddings", "e.npy", "-labels", "l.npy", "-out", "d", "-k", "4", "-kneg-hard", "5"}},
		{"bundle-sessions-labels", []string{"bundle", "-embeddings", "e.npy", "-labels", "l.npy", "-sessions", "s.txt", "-out", "d"}},
		{"bundle-ood-rows-groups", []string{"bundle", "-embeddings", "e.npy", "-groups", "g.txt", "-ood-rows", "f.csv:fault", "-out", "d"}},
		{"bundle-blocks-groups", []string{"bundle", "-embeddings", "e.npy", "-groups", "g.txt", "-blocks", "b.txt", "-out", "d"}},
		{"bundle-one-label-groups", []string{"bundle", "-embeddings", "e.npy", "-groups", "g.txt", "-one-label", "joy", "-out", "d"}},
		{"bundle-one-label-ood", []string{"bundle", "-embeddings", "e.npy", "-labels", "m.npy", "-one-label", "joy", "-ood-classes", "grief", "-out", "d"}},
		{"bundle-hard-candidates", []string{"bundle", "-embeddings", "e.npy", "-labels", "l.npy", "-out", "d", "-kneg-hard", "1", "-hard-candidates", "0"}},
		{"evaluate-size-anchors", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-db", "c.npy", "-size-anchors", "-1"}},
		{"evaluate-size-nodb", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-size-anchors", "10"}},
		{"evaluate-baseline-nodb", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-baseline", "topk", "-cal", "c.npz"}},
		{"evaluate-baseline-nocal", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-db", "c.npy", "-baseline", "topk"}},
		{"evaluate-baseline-value", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-db", "c.npy", "-baseline", "topk,cosine", "-cal", "c.npz"}},
		{"evaluate-out-dir", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-out", "."}},
		{"coverage-check-out-dir", []string{"coverage-check", "-set", "s.json", "-test", "t.npz", "-out", "."}},
		{"ood-out-dir", []string{"ood", "-set", "s.json", "-id", "a.npz", "-ood", "b.npz", "-out", "."}},
		{"plot-dir", []string{"plot", "-out", "figs", "testdata"}},
		{"evaluate-cal-nobaseline", []string{"evaluate", "-set", "s.json", "-test", "t.npz", "-db", "c.npy", "-cal", "c.npz"}},
		{"fit-head-volume", []string{"fit", "-geometry", "genball", "-objective", "neg,infonce", "-head-volume", "projectd", "-train", "t.npz", "-out", "f.json"}},
		{"badflag", []string{"evaluate", "-bogus"}},
		{"badflag-swap", []string{"retrieve", "-lable", "sw"}},
		{"badflag-near", []string{"bundle", "--emebddings", "e.npy"}},
		{"reproduce-table", []string{"reproduce", "cifar"}},
		{"reproduce-table-swap", []string{"reproduce", "smi"}},
		{"reproduce-notable", []string{"reproduce", "-seeds", "2"}},
		{"extra-arg", []string{"evaluate", "-set", "a", "-test", "b", "c"}},
		{"calibrate-both", []string{"calibrate", "-geometry", "ball", "-set", "f.json", "-cal", "x.npz", "-out", "s.json"}},
		{"calibrate-learned", []string{"calibrate", "-geometry", "genball", "-cal", "x.npz", "-out", "s.json"}},
		{"fit-missing", []string{"fit", "-geometry", "genball", "-objective", "neg"}},
		{"fit-geometry", []string{"fit", "-geometry", "ball", "-objective", "neg", "-train", "a", "-val", "b", "-out", "c"}},
		{"fit-objective", []string{"fit", "-geometry", "single", "-objective", "infonce", "-train", "a", "-val", "b", "-out", "c"}},
		{"fit-infonce-only", []string{"fit", "-geometry", "single", "-objective", "infonce,infonce", "-train", "a", "-val", "b", "-out", "c"}},
		{"fit-head-dim", []string{"fit", "-geometry", "single", "-objective", "neg", "-head-dim", "4", "-train", "a", "-val", "b", "-out", "c"}},
		{"fit-fit", []string{"fit", "-geometry", "single", "-objective", "neg", "-fit", "a", "-val", "b", "-out", "c"}},
		{"fit-tau", []string{"fit", "-geometry", "single", "-objective", "neg,infonce", "-tau", "0", "-train", "a", "-val", "b", "-out", "c"}},
		{"embed-missing", []string{"embed", "-model", "m.onnx", "-images", "mnist"}},
		{"embed-images", []string{"embed", "-model", "../../encoders/fmnist-supervised.onnx", "-images", "cifar", "-out", "x.npz"}},
		{"embed-crop", []string{"embed", "-model", "m.onnx", "-images", "mnist", "-crop-scale", "0.5", "-out", "x.npz"}},
		{"reproduce-fmnist-rows", []string{"reproduce", "fmnist", "-rows", "some"}},
		{"fit-threshold", []string{"fit", "-geometry", "single", "-objective", "neg", "-threshold", "hard", "-train", "a", "-val", "b", "-out", "c"}},
		{"fit-lr", []string{"fit", "-geometry", "single", "-objective", "neg", "-lr", "-1", "-train", "a", "-val", "b", "-out", "c"}},
		{"fit-alpha", []string{"fit", "-geometry", "single", "-objective", "neg", "-alpha", "0", "-train", "a", "-val", "b", "-out", "c"}},
		{"ood-train-no-ood", []string{"ood", "-set", "s.json", "-id", "a.npz", "-train", "t.npz"}},
		{"ood-mode-no-ood", []string{"ood", "-set", "s.json", "-id", "a.npz", "-mode", "batch"}},
		{"ood-by-class-no-ood", []string{"ood", "-set", "s.json", "-id", "a.npz", "-ood-by-class"}},
		{"ood-fdr-no-ood", []string{"ood", "-set", "s.json", "-id", "a.npz", "-fdr", "0.1"}},
		{"ood-fpr", []string{"ood", "-set", "s.json", "-id", "a.npz", "-ood", "b.npz", "-fpr", "both"}},
		{"ood-classifier", []string{"ood", "-set", "s.json", "-id", "a.npz", "-ood", "b.npz", "-classifier", "c.npz"}},
		{"calibrate-reference", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-reference", "-3"}},
		{"calibrate-shift-set", []string{"calibrate", "-set", "f.json", "-cal", "x.npz", "-out", "s.json", "-shift"}},
		{"calibrate-shift-ball", []string{"calibrate", "-geometry", "ball", "-cal", "x.npz", "-out", "s.json", "-shift"}},
		{"calibrate-fit-ball", []string{"calibrate", "-geometry", "ball", "-fit", "f.npz", "-cal", "x.npz", "-out", "s.json"}},
		{"reproduce-ood-rows", []string{"reproduce", "ood", "-rows", "learned"}},
		{"serve-noset", []string{"serve", "-addr", "127.0.0.1:0"}},
		{"serve-setflag", []string{"serve", "-set", "noequals"}},
		{"serve-setname", []string{"serve", "-set", "a?b=x.json"}},
		{"serve-setdots", []string{"serve", "-set", "..=x.json"}},
		{"serve-maxbody", []string{"serve", "-set", "a=x.json", "-max-body", "0"}},
		{"retrieve-anchor", []string{"retrieve", "-set", "s.json", "-db", "d.npz"}},
		{"fit-val-both", []string{"fit", "-geometry", "single", "-objective", "neg", "-train", "a", "-val", "b", "-val-share", "0.2", "-out", "c"}},
		{"retrieve-anchor-index", []string{"retrieve", "-set", "s.json", "-db", "d.npz", "-anchor-index", "-1"}},
		{"retrieve-label-both", []string{"retrieve", "-set", "s.json", "-db", "d.npz", "-anchor", "a.npy", "-label", "sw", "-anchor-labels", "l.txt"}},
		{"retrieve-unlabeled", []string{"retrieve", "-set", "s.json", "-db", "d.npz", "-anchor", "a.npy", "-unlabeled", "drop"}},
		{"retrieve-anchor-labels-index", []string{"retrieve", "-set", "s.json", "-db", "d.npz", "-anchor-index", "3", "-anchor-labels", "l.txt"}},
		{"loadtest-unbounded", []string{"loadtest", "-url", "http://x", "-data", "{}", "-duration", "0"}},
		{"loadtest-noscheme", []string{"loadtest", "-url", "127.0.0.1:8080/v1/sets/a/score", "-data", "{}"}},
	} {
		err := golden(t, "usage-"+c.name, "", c.args...)
		if !isUsage(err) {
			t.Errorf("%s: error %v is not a usage error (exit 2)", c.name, err)
		}
	}
}

func TestHelp(t *testing.T) {
	if err := golden(t, "help", "", "help"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"calibrate", "bundle", "fit"} {
		if err := golden(t, "help-"+c, "", c, "-h"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPipeline: simulate → calibrate → evaluate on a small simulation, with
// golden outputs, then the errors that name a file.
func TestPipeline(t *testing.T) {
	dir := t.TempDir()
	if err := golden(t, "simulate", dir, "simulate", "-out", dir, "-per-class", "200", "-k", "20", "-seed", "3"); err != nil {
		t.Fatal(err)
	}
	cal, test := filepath.Join(dir, "cal.npz"), filepath.Join(dir, "test.npz")
	for _, g := range []string{"ball", "ellipsoid"} {
		set := filepath.Join(dir, g+".json")
		if err := golden(t, "calibrate-"+g, dir, "calibrate", "-geometry", g, "-cal", cal, "-alpha", "0.1", "-seed", "1", "-out", set); err != nil {
			t.Fatal(err)
		}
		if err := golden(t, "evaluate-"+g, dir, "evaluate", "-set", set, "-test", test); err != nil {
			t.Fatal(err)
		}
		if err := golden(t, "evaluate-"+g+"-json", dir, "evaluate", "-set", set, "-test", test, "-json"); err != nil {
			t.Fatal(err)
		}
		// -out writes the document -json prints, which ccs report reads.
		saved := filepath.Join(dir, "evaluate-"+g+".json")
		if err := golden(t, "evaluate-"+g+"-out", dir, "evaluate", "-set", set, "-test", test, "-per-class", "-out", saved); err != nil {
			t.Fatal(err)
		}
		var printed bytes.Buffer
		if err := run(&printed, io.Discard, []string{"evaluate", "-set", set, "-test", test, "-per-class", "-json", "-out", saved}); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(saved); err != nil || !bytes.Equal(data, printed.Bytes()) {
			t.Errorf("evaluate -json -out %s: the file differs from the JSON printed (%v)", saved, err)
		}
		var report bytes.Buffer
		if err := run(&report, io.Discard, []string{"report", "-out", filepath.Join(dir, "report-"+g+".html"), saved}); err != nil || !strings.Contains(report.String(), ": 1 result") {
			t.Errorf("report of evaluate -out's file: %v: %s", err, report.String())
		}
		// The sets' sizes on a collection (the fit split's anchors).
		if err := golden(t, "evaluate-"+g+"-sizes", dir, "evaluate", "-set", set, "-test", test, "-db", filepath.Join(dir, "fit.npz")+":anchors", "-size-anchors", "40"); err != nil {
			t.Fatal(err)
		}
		// Beside them, the certified top-k baselines calibrated on the
		// set's calibration split, and the sizes class by class.
		topk := []string{"evaluate", "-set", set, "-test", test, "-db", filepath.Join(dir, "fit.npz") + ":anchors", "-size-anchors", "40", "-baseline", "topk,topk-l2", "-cal", cal, "-per-class"}
		if err := golden(t, "evaluate-"+g+"-topk", dir, topk...); err != nil {
			t.Fatal(err)
		}
		if err := golden(t, "evaluate-"+g+"-topk-json", dir, append(topk, "-json")...); err != nil {
			t.Fatal(err)
		}
	}
	// A learned geometry: fit, calibrate the fitted set, evaluate.
	fitted := filepath.Join(dir, "fitted.json")
	if err := goldenTrained(t, "fit-genball", dir, "fit", "-geometry", "genball", "-objective", "neg,vol", "-train", filepath.Join(dir, "fit.npz"),
		"-val", filepath.Join(dir, "val.npz"), "-epochs", "12", "-quiet", "-out", fitted); err != nil {
		t.Fatal(err)
	}
	if err := goldenTrained(t, "evaluate-uncalibrated", dir, "evaluate", "-set", fitted, "-test", test); err == nil || isUsage(err) {
		t.Errorf("evaluating an uncalibrated set: error %v, want a data error", err)
	}
	learned := filepath.Join(dir, "learned.json")
	if err := goldenTrained(t, "calibrate-fitted", dir, "calibrate", "-set", fitted, "-cal", cal, "-alpha", "0.1", "-seed", "1", "-out", learned); err != nil {
		t.Fatal(err)
	}
	if err := goldenTrained(t, "evaluate-fitted", dir, "evaluate", "-set", learned, "-test", test); err != nil {
		t.Fatal(err)
	}
	// With the InfoNCE head: the set file stores it, calibrate keeps it,
	// evaluate scores through it, and the loaded set scores as the fitted one.
	headFit, headSet := filepath.Join(dir, "head-fitted.json"), filepath.Join(dir, "head.json")
	if err := goldenTrained(t, "fit-infonce", dir, "fit", "-geometry", "single", "-objective", "neg,infonce", "-train", filepath.Join(dir, "fit.npz"),
		"-val", filepath.Join(dir, "val.npz"), "-epochs", "6", "-quiet", "-out", headFit); err != nil {
		t.Fatal(err)
	}
	if err := goldenTrained(t, "calibrate-infonce", dir, "calibrate", "-set", headFit, "-cal", cal, "-alpha", "0.1", "-seed", "1", "-out", headSet); err != nil {
		t.Fatal(err)
	}
	if err := goldenTrained(t, "evaluate-infonce", dir, "evaluate", "-set", headSet, "-test", test); err != nil {
		t.Fatal(err)
	}
	checkHeadFile(t, headSet, 3, 3)
	if err := goldenTrained(t, "fit-infonce-dim", dir, "fit", "-geometry", "genball", "-objective", "neg,vol,infonce", "-head-dim", "2", "-train", filepath.Join(dir, "fit.npz"),
		"-val", filepath.Join(dir, "val.npz"), "-epochs", "4", "-quiet", "-out", headFit); err != nil {
		t.Fatal(err)
	}
	if err := goldenTrained(t, "calibrate-infonce-dim", dir, "calibrate", "-set", headFit, "-cal", cal, "-alpha", "0.1", "-seed", "1", "-out", headSet); err != nil {
		t.Fatal(err)
	}
	checkHeadFile(t, headSet, 3, 2)

	// Progress on a non-terminal: plain lines, no carriage returns.
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"fit", "-geometry", "single", "-objective", "vol", "-train", filepath.Join(dir, "fit.npz"),
		"-val", filepath.Join(dir, "val.npz"), "-epochs", "25", "-patience", "30", "-out", filepath.Join(dir, "f2.json")}); err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); !strings.Contains(got, "epoch  10/25") || !strings.Contains(got, "epoch  20/25") ||
		!strings.Contains(got, "trained 25 epochs (max epochs)") || strings.Count(got, "\n") != 4 || strings.Contains(got, "\r") {
		t.Errorf("progress on a non-terminal:\n%s", got)
	}

	pooled := filepath.Join(dir, "pooled.json")
	if err := golden(t, "calibrate-pooled", dir, "calibrate", "-geometry", "ball", "-cal", cal, "-calibration", "pooled", "-out", pooled); err != nil {
		t.Fatal(err)
	}
	pac := filepath.Join(dir, "pac.json")
	if err := golden(t, "calibrate-pac", dir, "calibrate", "-geometry", "ball", "-cal", cal, "-calibration", "pac", "-delta", "0.1", "-alpha", "0.1", "-out", pac); err != nil {
		t.Fatal(err)
	}
	if err := golden(t, "evaluate-pac", dir, "evaluate", "-set", pac, "-test", test); err != nil {
		t.Fatal(err)
	}
	class := filepath.Join(dir, "class.json")
	if err := golden(t, "calibrate-class", dir, "calibrate", "-geometry", "ball", "-cal", cal, "-calibration", "class", "-alpha", "0.2", "-out", class); err != nil {
		t.Fatal(err)
	}
	if err := golden(t, "evaluate-class", dir, "evaluate", "-set", class, "-test", test, "-per-class"); err != nil {
		t.Fatal(err)
	}
	// Its sets' sizes: each test anchor's at its class's threshold.
	if err := golden(t, "evaluate-class-sizes", dir, "evaluate", "-set", class, "-test", test, "-db", filepath.Join(dir, "fit.npz")+":anchors", "-size-anchors", "40", "-per-class"); err != nil {
		t.Fatal(err)
	}
	if err := golden(t, "evaluate-marginal-per-class", dir, "evaluate", "-set", filepath.Join(dir, "ball.json"), "-test", test, "-per-class"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ball", "pac"} {
		if err := golden(t, "coverage-check-"+s, dir, "coverage-check", "-set", filepath.Join(dir, s+".json"), "-test", test, "-resplits", "200", "-cal-fraction", "0.25"); err != nil {
			t.Fatal(err)
		}
	}
	// coverage-check's and ood's -out write the document -json prints
	// (evaluate's, above), which ccs report reads.
	ball := filepath.Join(dir, "ball.json")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"coverage-check", []string{"coverage-check", "-set", class, "-test", test, "-resplits", "50", "-per-class"}},
		{"ood", []string{"ood", "-set", ball, "-id", test, "-ood", "fit=" + filepath.Join(dir, "fit.npz"), "-mode", "batch"}},
	} {
		saved := filepath.Join(dir, c.name+"-out.json")
		if err := golden(t, c.name+"-out", dir, append(c.args, "-out", saved)...); err != nil {
			t.Fatal(err)
		}
		var printed bytes.Buffer
		if err := run(&printed, io.Discard, append(c.args, "-json", "-out", saved)); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(saved); err != nil || !bytes.Equal(data, printed.Bytes()) {
			t.Errorf("%s -json -out %s: the file differs from the JSON printed (%v)", c.name, saved, err)
		}
		var report bytes.Buffer
		if err := run(&report, io.Discard, []string{"report", "-out", filepath.Join(dir, c.name+"-report.html"), saved}); err != nil || !strings.Contains(report.String(), ": 1 result") {
			t.Errorf("report of %s -out's file: %v: %s", c.name, err, report.String())
		}
	}

	// Data errors: exit 1, a message naming the file and what is wrong.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": "ccs-set", "version": 9}`), 0o644)
	unlabeled := filepath.Join(dir, "unlabeled.npz")
	if b, err := bundle.Read(test); err != nil {
		t.Fatal(err)
	} else if b.Labels = nil; bundle.Write(unlabeled, b) != nil {
		t.Fatal("writing the unlabeled bundle")
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bad-set", []string{"evaluate", "-set", bad, "-test", test}, "bad.json: version 9"},
		{"nan-bundle", []string{"calibrate", "-geometry", "ball", "-cal", "../../bundle/testdata/nan.npz", "-out", filepath.Join(dir, "x.json")}, "nan.npz: positives[2][1][3] is NaN"},
		{"class-unlabeled", []string{"evaluate", "-set", filepath.Join(dir, "class.json"), "-test", unlabeled}, "needs the anchor's label"},
		{"class-unlabeled-db", []string{"evaluate", "-set", filepath.Join(dir, "class.json"), "-test", unlabeled, "-db", filepath.Join(dir, "fit.npz") + ":anchors"}, "-unlabeled marginal"},
		{"overflow64", []string{"evaluate", "-set", filepath.Join(dir, "ball.json"), "-test", "../../bundle/testdata/overflow64.npz"}, `overflow64.npz: array "anchors": element [1][2] = 1e+39 overflows float32`},
		{"dim-mismatch", []string{"evaluate", "-set", filepath.Join(dir, "ball.json"), "-test", "../../bundle/testdata/explicit.npz"}, `explicit.npz: array "anchors": embeddings of shape (4, 5), dimension 5; the set's dimension is 3`},
		{"missing", []string{"evaluate", "-set", filepath.Join(dir, "none.json"), "-test", test}, "none.json: no such file"},
		{"fit-k0", []string{"fit", "-geometry", "genball", "-objective", "neg", "-train", "../../bundle/testdata/k0.npz", "-val", filepath.Join(dir, "val.npz"), "-out", filepath.Join(dir, "x.json")}, "k0.npz: positives: 0 positives per anchor"},
		{"fit-dims", []string{"fit", "-geometry", "genball", "-objective", "neg", "-train", "../../bundle/testdata/explicit.npz", "-val", filepath.Join(dir, "val.npz"), "-out", filepath.Join(dir, "x.json")}, "validation embeddings have dimension 3, training embeddings 5"},
		{"fit-nan", []string{"fit", "-geometry", "genball", "-objective", "vol", "-train", "../../bundle/testdata/nan.npz", "-val", filepath.Join(dir, "val.npz"), "-out", filepath.Join(dir, "x.json")}, "nan.npz: positives[2][1][3] is NaN"},
		{"calibrate-dims", []string{"calibrate", "-set", filepath.Join(dir, "fitted.json"), "-cal", "../../bundle/testdata/explicit.npz", "-out", filepath.Join(dir, "x.json")}, `explicit.npz: array "anchors": embeddings of shape (4, 5), dimension 5; the set's dimension is 3`},
	} {
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, c.args)
		if err == nil || isUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want a data error saying %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.json")); !os.IsNotExist(err) {
		t.Error("a failed calibrate left its output file behind")
	}
}

// TestTooFewCalibration: the whole-space set is refused unless asked for,
// and then printed with a warning.
func TestTooFewCalibration(t *testing.T) {
	dir := t.TempDir()
	set := filepath.Join(dir, "s.json")
	err := golden(t, "calibrate-toofew", dir, "calibrate", "-geometry", "ball", "-cal", "../../bundle/testdata/explicit.npz", "-alpha", "0.1", "-out", set)
	if err == nil || isUsage(err) {
		t.Fatalf("n=4, α=0.1: error %v, want a data error", err)
	}
	if err := golden(t, "calibrate-infinite", dir, "calibrate", "-geometry", "ball", "-cal", "../../bundle/testdata/explicit.npz",
		"-alpha", "0.1", "-allow-infinite", "-out", set); err != nil {
		t.Fatal(err)
	}
	if err := golden(t, "evaluate-infinite", dir, "evaluate", "-set", set, "-test", "../../bundle/testdata/explicit.npz"); err != nil {
		t.Fatal(err)
	}
}

func TestReproduceSim(t *testing.T) {
	if err := goldenTrained(t, "reproduce-sim-small", "", "reproduce", "sim", "-seeds", "3", "-k", "20", "-per-class", "200", "-epochs", "3", "-quiet"); err != nil {
		t.Fatal(err)
	}
	if err := goldenTrained(t, "reproduce-sim-threshold-small", "", "reproduce", "sim-threshold", "-seeds", "2", "-k", "10", "-per-class", "100", "-epochs", "2", "-quiet"); err != nil {
		t.Fatal(err)
	}
	if err := golden(t, "reproduce-sim-draws-small", "", "reproduce", "sim-draws", "-draws", "3", "-k", "20", "-per-class", "200", "-quiet"); err != nil {
		t.Fatal(err)
	}
	if err := golden(t, "reproduce-pnorm-small", "", "reproduce", "pnorm", "-seeds", "2", "-k", "20", "-per-class", "200", "-quiet"); err != nil {
		t.Fatal(err)
	}
}

// checkHeadFile loads a set file with a head and checks its dimensions and
// that it scores through the head: φ(W·x) of the stored geometry.
func checkHeadFile(t *testing.T, path string, in, out int) {
	t.Helper()
	set, err := conformal.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := set.Geometry.(*head.Projected)
	if !ok {
		t.Fatalf("%s: geometry %T, want a set behind a head", path, set.Geometry)
	}
	if p.Head.In != in || p.Head.Out != out || p.Inner.Dim() != out {
		t.Fatalf("%s: head %d→%d, geometry dimension %d; want %d→%d", path, p.Head.In, p.Head.Out, p.Inner.Dim(), in, out)
	}
	x := []float32{0.3, -1.2, 0.8, 2, 0.1, -0.4}
	got := set.Geometry.Scores(nil, x)
	want := p.Inner.Scores(nil, p.Head.Transform(nil, x))
	if got[0] != want[0] || got[1] != want[1] {
		t.Errorf("%s: scores %v, want φ(W·x) = %v", path, got, want)
	}
	if in == out && set.Geometry.LogVolume(1) != p.Inner.LogVolume(1)-p.Head.LogAbsDet() {
		t.Errorf("%s: the log-volume is not measured in the embeddings' space", path)
	}
}

// TestEmbedAndFMNIST runs the real-image pipeline on small slices with the
// project's encoders: ccs embed into a bundle that the rest of the commands
// read, and reproduce fmnist's baseline rows (golden output).
func TestEmbedAndFMNIST(t *testing.T) {
	if race.Enabled {
		// 73 s of the race detector's 120 s on this package: ONNX Runtime
		// (C, which it does not see) and the pipeline whose packages are
		// race-checked on their own. It runs in the suite's other phases.
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "e.npz")
	if err := golden(t, "embed", dir, "embed", "-model", "../../encoders/fmnist-supervised.onnx", "-images", "fashion-mnist:test",
		"-anchors", "300", "-k", "5", "-seed", "3", "-quiet", "-out", out); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if b.N != 300 || b.K != 5 || b.KNeg != 5 || b.D != 128 || b.C != 10 || len(b.Index) != 300 || len(b.Labels) != 300 {
		t.Errorf("bundle N %d K %d KNeg %d D %d C %d, %d indices, %d labels", b.N, b.K, b.KNeg, b.D, b.C, len(b.Index), len(b.Labels))
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"calibrate", "-geometry", "ball", "-cal", out, "-out", filepath.Join(dir, "ball.json")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"embed-model", []string{"embed", "-model", filepath.Join(dir, "none.onnx"), "-images", "noise:10", "-out", out}, "none.onnx"},
		{"embed-anchors", []string{"embed", "-model", "../../encoders/fmnist-supervised.onnx", "-images", "noise:10", "-anchors", "11", "-out", out}, "has 10 images"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, c.args); err == nil || isUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want a data error saying %q", c.name, err, c.want)
		}
	}
	// The table's numbers come from ONNX Runtime's floating point, which
	// may differ in the last bits between CPUs: checked by range, not golden.
	stdout.Reset()
	if err := run(&stdout, &stderr, []string{"reproduce", "fmnist", "-models", "supervised=../../encoders/fmnist-supervised.onnx", "-rows", "baselines",
		"-train-anchors", "100", "-test-anchors", "1000", "-k", "10", "-seeds", "2", "-cache", filepath.Join(dir, "cache"), "-quiet", "-json", "-hull=false"}); err != nil {
		t.Fatal(err)
	}
	var doc experiment.Document
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	tables := doc.Result.(*experiment.FMNISTResult).Tables
	if doc.Kind != "fmnist" || len(tables) != 1 || len(tables[0].Rows) != 2 {
		t.Fatalf("%d tables, want one of two rows:\n%s", len(tables), stdout.String())
	}
	for _, r := range tables[0].Rows {
		if r.Coverage.Mean < 90 || r.Coverage.Mean > 99.5 || r.ClassCoverage == nil || r.Exclusion.Mean < 20 || len(r.PerSeed) != 2 {
			t.Errorf("%s: coverage %v, exclusion %v, class coverage %v, %d seeds", r.Method, r.Coverage, r.Exclusion, r.ClassCoverage, len(r.PerSeed))
		}
	}
	testOOD(t, dir, out)
	// A second run reads the embeddings from the cache.
	stderr.Reset()
	if err := run(&stdout, &stderr, []string{"reproduce", "fmnist", "-models", "supervised=../../encoders/fmnist-supervised.onnx", "-rows", "baselines",
		"-train-anchors", "100", "-test-anchors", "1000", "-k", "10", "-seeds", "1", "-cache", filepath.Join(dir, "cache"), "-hull=false"}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(stderr.String(), "using cached embeddings") != 2 {
		t.Errorf("second run did not use the cache:\n%s", stderr.String())
	}
}

// testOOD runs ccs ood on the embedded Fashion-MNIST slice against noise:
// every row present, both CCS modes, every baseline measured (the bundles
// have labels, logits and activations), and a training bundle without
// logits turning the logit baselines into "not available"; then reproduce
// ood's baseline rows on small slices.
func testOOD(t *testing.T, dir, idPath string) {
	t.Helper()
	noise := filepath.Join(dir, "noise.npz")
	set := filepath.Join(dir, "ball-ref.json")
	for _, args := range [][]string{
		{"embed", "-model", "../../encoders/fmnist-supervised.onnx", "-images", "noise:120", "-k", "1", "-seed", "4", "-quiet", "-out", noise},
		{"calibrate", "-geometry", "ball", "-cal", idPath, "-reference", "50", "-out", set},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	b, err := bundle.Read(idPath)
	if err != nil {
		t.Fatal(err)
	}
	if b.A != 5 || len(b.Activations) != 5*b.N {
		t.Fatalf("ccs embed kept %d activation summaries per anchor, want 5", b.A)
	}
	ood := func(id, train string) experiment.OODTable {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(&stdout, &stderr, []string{"ood", "-set", set, "-id", id, "-ood", "noise=" + noise, "-train", train,
			"-classifier", "../../encoders/fmnist-supervised-classifier.npz", "-cider-epochs", "3", "-json"}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ood-detection.json"), stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := experiment.ReadDocument(&stdout)
		if err != nil {
			t.Fatal(err)
		}
		tab, ok := doc.Result.(*experiment.OODTable)
		if doc.Kind != "ood-detection" || !ok {
			t.Fatalf("ccs ood -json: a document of kind %q holding a %T", doc.Kind, doc.Result)
		}
		return *tab
	}
	tab := ood(idPath, idPath)
	var names []string
	for _, r := range tab.Rows {
		names = append(names, r.Method)
		if r.Unavailable != "" || len(r.AUROC) != 1 || r.AUROC[0].Mean < 0 || r.AUROC[0].Mean > 100 || r.FPR95[0].Mean < 0 || r.FPR95[0].Mean > 100 || len(r.Curves) != 1 {
			t.Errorf("%s: %+v", r.Method, r)
		}
	}
	want := []string{"CCS (batch)", "CCS (reference)", "MSP", "Energy", "Mahalanobis", "KNN", "COMBOOD", "D-KNN", "CIDER", "ViM"}
	if !slices.Equal(names, want) {
		t.Errorf("rows %v, want %v", names, want)
	}
	// ccs plot draws ccs ood's document as reproduce ood's tables.
	if out, err := ccs("plot", "-out", filepath.Join(dir, "plots"), filepath.Join(dir, "ood-detection.json")); err != nil ||
		!strings.Contains(out, "ood-detection-roc.png") || !strings.Contains(out, "ood-detection-histograms.svg") {
		t.Errorf("ccs plot of ccs ood -json: %v\n%s", err, out)
	}
	// ID and training bundles without logits: MSP, Energy and ViM are not
	// available, the rest run.
	b.C, b.Logits = 0, nil
	noLogits := filepath.Join(dir, "nologits.npz")
	if err := bundle.Write(noLogits, b); err != nil {
		t.Fatal(err)
	}
	for _, r := range ood(noLogits, noLogits).Rows {
		na := r.Unavailable != ""
		if na != (r.Method == "MSP" || r.Method == "Energy" || r.Method == "ViM") {
			t.Errorf("without logits, %s: unavailable %q", r.Method, r.Unavailable)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"reproduce", "ood", "-models", "supervised=../../encoders/fmnist-supervised.onnx", "-rows", "baselines",
		"-train-anchors", "200", "-test-anchors", "400", "-k", "5", "-seeds", "2", "-ood-sets", "noise:300", "-cider-epochs", "2", "-baseline-train", "500",
		"-cache", filepath.Join(dir, "cache"), "-out", filepath.Join(dir, "sets"), "-quiet", "-json"}); err != nil {
		t.Fatal(err)
	}
	// -out keeps each seed's set as a service would load it: the fit
	// anchors (80% of 200) as the pool, the calibration half's scores.
	kept, err := conformal.Load(filepath.Join(dir, "sets", "sets", "ood", "supervised", "seed-1", "ball.json"))
	if err != nil || kept.Reference == nil || kept.Reference.N != 160 || kept.OOD == nil || kept.OOD.N != 200 {
		t.Fatalf("reproduce ood -out: %+v, %v", kept, err)
	}
	var doc experiment.Document
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	tabs := doc.Result.(*experiment.OODResult).OOD
	if len(tabs) != 1 || len(tabs[0].Rows) != 11 || tabs[0].Runs != 2 || tabs[0].AlphaOOD != 0.05 {
		t.Fatalf("reproduce ood: %s", stdout.String())
	}
	for _, r := range tabs[0].Rows {
		if r.Unavailable != "" || len(r.AUROC) != 1 || !(r.AUROC[0].Mean >= 0 && r.AUROC[0].Mean <= 100) {
			t.Errorf("reproduce ood, %s: %+v", r.Method, r)
		}
		// Every row but the paper's two modes has a conformal test, whose
		// false-alarm rate on 200 ID test inputs stays near its bound.
		paper := strings.HasSuffix(r.Method, ", batch") || strings.HasSuffix(r.Method, ", reference")
		if paper != (r.FAR == nil) || (r.FAR != nil && (r.FAR.Mean > 15 || len(r.TAR) != 1)) {
			t.Errorf("reproduce ood, %s: false-alarm rate %+v, true-alarm rates %+v", r.Method, r.FAR, r.TAR)
		}
	}
}
