package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// TestWrongDimension runs every command and endpoint that takes embeddings
// for a set of dimension 3 with embeddings of another dimension, and
// asserts the refusal: exit status 1 (an HTTP 422) with a message naming
// the file (or the request field), the shape found and the dimension
// wanted. A new reader of embeddings belongs in this table.
func TestWrongDimension(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var sink bytes.Buffer
	mustRun := func(args ...string) {
		t.Helper()
		if err := run(io.Discard, &sink, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	mustRun("simulate", "-out", dir, "-per-class", "60", "-k", "4", "-seed", "3")
	mustRun("calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference", "40", "-ood-cal", p("val.npz"), "-out", p("set.json"))
	mustRun("fit", "-geometry", "genball", "-objective", "vol", "-train", p("fit.npz"), "-val", p("val.npz"), "-epochs", "1", "-quiet", "-out", p("fitted.json"))

	// Embeddings of another dimension in every form a command reads: a
	// bundle, features alone, a collection (.npz and .npy), an anchor
	// (.npy); and one of dimension 3 given as a column (3, 1).
	wrong := "../../bundle/testdata/explicit.npz" // anchors (4, 5)
	five := make([]float32, 7*5)
	for i := range five {
		five[i] = float32(i%11) / 4
	}
	write := func(name string, arrays map[string]bundle.Array) {
		t.Helper()
		if err := bundle.WriteNPZ(p(name), arrays); err != nil {
			t.Fatal(err)
		}
	}
	// Features of dimension 6: a whole number of rows of 3, which the
	// per-input OOD score once took as twice as many inputs.
	six := make([]float32, 7*6)
	for i := range six {
		six[i] = float32(i%13) / 4
	}
	write("feats6.npz", map[string]bundle.Array{"embeddings": bundle.Float32(six, 7, 6)})
	write("coll5.npz", map[string]bundle.Array{"embeddings": bundle.Float32(five, 7, 5)})
	if err := bundle.WriteNPY(p("coll5.npy"), bundle.Float32(five, 7, 5)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("a5.npy"), bundle.Float32(five[:5], 5)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("a31.npy"), bundle.Float32(five[:3], 3, 1)); err != nil {
		t.Fatal(err)
	}
	test, err := bundle.Read(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	write("coll3.npz", map[string]bundle.Array{"embeddings": bundle.Float32(test.Anchors, test.N, test.D)})

	const want = "the set's dimension is 3"
	for _, c := range []struct {
		name string
		args []string
		file string // what the message must name
	}{
		{"calibrate -cal", []string{"calibrate", "-set", p("fitted.json"), "-cal", wrong, "-out", p("x.json")}, `explicit.npz: array "anchors": embeddings of shape (4, 5)`},
		{"calibrate -ood-cal", []string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference", "20", "-ood-cal", p("feats6.npz"), "-out", p("x.json")}, `feats6.npz: array "embeddings": embeddings of shape (7, 6)`},
		{"calibrate -reference-db .npz", []string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference-db", p("coll5.npz"), "-out", p("x.json")}, "coll5.npz: embeddings of shape (7, 5)"},
		{"calibrate -reference-db .npy", []string{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-reference-db", p("coll5.npy"), "-out", p("x.json")}, "coll5.npy: embeddings of shape (7, 5)"},
		{"evaluate", []string{"evaluate", "-set", p("set.json"), "-test", wrong}, `explicit.npz: array "anchors"`},
		{"coverage-check", []string{"coverage-check", "-set", p("set.json"), "-test", wrong}, `explicit.npz: array "anchors"`},
		{"ood conformal -id", []string{"ood", "-set", p("set.json"), "-id", p("feats6.npz"), "-ood", p("test.npz")}, `feats6.npz: array "embeddings"`},
		{"ood conformal -ood", []string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("feats6.npz")}, `feats6.npz: array "embeddings"`},
		{"ood batch", []string{"ood", "-set", p("set.json"), "-mode", "batch", "-id", wrong, "-ood", p("test.npz")}, `explicit.npz: array "anchors"`},
		{"ood reference", []string{"ood", "-set", p("set.json"), "-mode", "reference", "-id", p("test.npz"), "-ood", "x=" + wrong}, `explicit.npz: array "anchors"`},
		{"ood all", []string{"ood", "-set", p("set.json"), "-mode", "all", "-id", p("feats6.npz"), "-ood", p("test.npz")}, `feats6.npz`},
		{"ood -ood .npy", []string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("coll5.npy")}, `coll5.npy: array "anchors"`},
		{"ood -id .npy", []string{"ood", "-set", p("set.json"), "-id", p("coll5.npy"), "-ood", p("test.npz")}, `coll5.npy: array "anchors"`},
		{"ood -train", []string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("test.npz"), "-train", p("feats6.npz"), "-quiet"}, `feats6.npz: array "embeddings"`},
		{"ood -ood-cal", []string{"ood", "-set", p("set.json"), "-id", p("test.npz"), "-ood", p("test.npz"), "-train", p("test.npz"), "-ood-cal", p("feats6.npz"), "-quiet"}, `feats6.npz: array "embeddings"`},
		{"retrieve -db", []string{"retrieve", "-set", p("set.json"), "-db", p("coll5.npz"), "-anchor-index", "0"}, "coll5.npz: embeddings of shape (7, 5)"},
		{"retrieve -anchor", []string{"retrieve", "-set", p("set.json"), "-db", p("coll3.npz"), "-anchor", p("a5.npy")}, "a5.npy: embeddings of shape (5,)"},
		{"retrieve -anchor column", []string{"retrieve", "-set", p("set.json"), "-db", p("coll3.npz"), "-anchor", p("a31.npy")}, "a31.npy: embeddings of shape (3, 1), dimension 1; the set's dimension is 3 (its 3 rows are of the set's dimension: transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file))"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(&stdout, &stderr, c.args)
			if err == nil {
				t.Fatalf("accepted:\n%s", stdout.String())
			}
			if code := exitCode(err); code != 1 {
				t.Errorf("exit %d, want 1 (%v)", code, err)
			}
			if msg := err.Error(); !strings.Contains(msg, c.file) || !strings.Contains(msg, want) {
				t.Errorf("error %q, want it to name %q and say %q", msg, c.file, want)
			}
		})
	}

	// The service: each endpoint, with a JSON and an .npy body of
	// dimension 5 (and the anchor of /score and /retrieve alone).
	sv := startServe(t, "serve", "-set", "s="+p("set.json"), "-db", "c="+p("coll3.npz"), "-addr", "127.0.0.1:0")
	defer sv.stop(t)
	npy := func(rows, d int) []byte {
		path := p("body.npy")
		if err := bundle.WriteNPY(path, bundle.Float32(five[:rows*d], rows, d)); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, c := range []struct {
		name, path, ctype string
		body              []byte
		field             string
	}{
		{"score points", "/v1/sets/s/score", "application/json", []byte(`{"anchor":[0,0,0],"points":[[1,2,3,4,5]]}`), "points[0]"},
		{"score anchor", "/v1/sets/s/score", "application/json", []byte(`{"anchor":[0,0,0,0,0],"points":[[1,2,3]]}`), "anchor"},
		{"score .npy", "/v1/sets/s/score", "application/x-npy", npy(3, 5), ""},
		{"ood", "/v1/sets/s/ood", "application/json", []byte(`{"points":[[1,2,3,4,5]]}`), "points[0]"},
		{"ood .npy", "/v1/sets/s/ood", "application/x-npy", npy(2, 5), ""},
		{"retrieve", "/v1/sets/s/retrieve", "application/json", []byte(`{"anchor":[1,2,3,4,5],"collection":"c"}`), "anchor"},
		{"retrieve .npy", "/v1/sets/s/retrieve?collection=c", "application/x-npy", npy(1, 5), ""},
	} {
		t.Run("serve "+c.name, func(t *testing.T) {
			resp, err := http.Post(sv.base+c.path, c.ctype, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422: %s", resp.StatusCode, body)
			}
			if !strings.Contains(string(body), "5") || !strings.Contains(string(body), "dimension is 3") ||
				!strings.Contains(string(body), `"field": "`+c.field+`"`) && c.field != "" {
				t.Errorf("answer %s: want the field %q, the dimension found and the set's", body, c.field)
			}
		})
	}
}

// TestClassSetNeedsLabel: every command that judges with a set's threshold
// and has no anchor label to give refuses a class-conditional set, with
// conformal's one message (ErrNoLabel) and the set's file; coverage-check
// resplits class by class when the bundle has labels (TestCoverageCheckByClass).
func TestClassSetNeedsLabel(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var sink bytes.Buffer
	for _, args := range [][]string{
		{"simulate", "-out", dir, "-per-class", "60", "-k", "4", "-seed", "3"},
		{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-calibration", "class", "-alpha", "0.2", "-out", p("class.json")},
	} {
		if err := run(io.Discard, &sink, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	test, err := bundle.Read(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPZ(p("coll.npz"), map[string]bundle.Array{"embeddings": bundle.Float32(test.Anchors, test.N, test.D)}); err != nil {
		t.Fatal(err)
	}
	unlabeled := *test
	unlabeled.Labels = nil
	if err := bundle.Write(p("unlabeled.npz"), &unlabeled); err != nil {
		t.Fatal(err)
	}
	want := conformal.ErrNoLabel.Error()[len("conformal: "):]
	for _, args := range [][]string{
		{"ood", "-set", p("class.json"), "-id", p("test.npz"), "-ood", p("val.npz")},
		{"coverage-check", "-set", p("class.json"), "-test", p("unlabeled.npz")},
	} {
		err := run(io.Discard, io.Discard, args)
		if err == nil || exitCode(err) != 1 || !errors.Is(err, conformal.ErrNoLabel) ||
			!strings.Contains(err.Error(), "class.json") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrNoLabel naming class.json", args[0], err)
		}
		if args[0] == "ood" && !strings.HasSuffix(err.Error(), conformal.OODOneThreshold) {
			t.Errorf("ood: %v, want the way to a set of one threshold", err)
		}
	}
	// retrieve takes the class (-label), and without one is a usage
	// error that asks for it (TestRetrieveClassBadInput).
	err = run(io.Discard, io.Discard, []string{"retrieve", "-set", p("class.json"), "-db", p("coll.npz"), "-anchor-index", "0"})
	if !isUsage(err) || !strings.Contains(err.Error(), "class.json is class-conditional (a threshold a class: 0, 1, 2, 3, 4): give the anchor's class with -label") {
		t.Errorf("retrieve: %v, want a usage error asking for -label", err)
	}
}

// TestCoverageCheckByClass: coverage-check resplits a class-conditional set
// class by class, and with -per-class reports a marginal set's classes.
func TestCoverageCheckByClass(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"simulate", "-out", dir, "-per-class", "100", "-k", "4", "-seed", "3"},
		{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-calibration", "class", "-alpha", "0.2", "-out", p("class.json")},
		{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-alpha", "0.2", "-out", p("ball.json")},
		// At α = 0.02 a class needs 49 calibration anchors: a resplit's
		// half of the test split's class is the whole space.
		{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-calibration", "class", "-alpha", "0.02", "-allow-infinite", "-out", p("whole.json")},
	} {
		if err := run(io.Discard, io.Discard, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	for _, c := range []struct{ set, flag, want string }{
		{"class.json", "", "each class's mean coverage is guaranteed ≥ 1 − α"},
		{"ball.json", "-per-class", "| class | mean held out | coverage |"},
		{"whole.json", "", "whole 5 classes (class 0, class 1, class 2, class 3, class 4): the whole space in every resplit; their "},
		{"whole.json", "", "| the whole space | —"},
	} {
		args := []string{"coverage-check", "-set", p(c.set), "-test", p("test.npz"), "-resplits", "50"}
		if c.flag != "" {
			args = append(args, c.flag)
		}
		var stdout bytes.Buffer
		if err := run(&stdout, io.Discard, args); err != nil {
			t.Fatalf("%s: %v", c.set, err)
		}
		got := strings.Join(strings.Fields(stdout.String()), " ") // the table's columns without their padding
		if !strings.Contains(got, c.want) || strings.Count(stdout.String(), "\n| ") < 6 {
			t.Errorf("%s: want %q in:\n%s", c.set, c.want, stdout.String())
		}
	}
	// The whole-space warning says the level and what it needs; a
	// fraction that leaves a class no calibration anchor names the class
	// and the fraction that does.
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"coverage-check", "-set", p("whole.json"), "-test", p("test.npz"), "-resplits", "10"}); err != nil ||
		!strings.Contains(stderr.String(), "calibration anchors per resplit are too few at alpha 0.02 (49 needed)") {
		t.Errorf("whole space: %v\n%s", err, stderr.String())
	}
	err := run(io.Discard, io.Discard, []string{"coverage-check", "-set", p("class.json"), "-test", p("test.npz"), "-resplits", "10", "-cal-fraction", "0.005"})
	if err == nil || !strings.Contains(err.Error(), "class 0: calibration fraction 0.005 of its 20 anchors leaves no calibration or no held-out anchor: each class is resplit on its own, and a fraction of at least 0.07 (-cal-fraction; cal_fraction= in Python) leaves one of each in the smallest class (16 anchors)") {
		t.Errorf("-cal-fraction 0.005: %v", err)
	}
}

// TestRetrieveAnchorRows: -anchor with m rows answers each anchor as
// -anchor-index answers that row, in order, in text and JSON; float64 and
// an .npz's anchors are read; a non-float or 3-d anchor file names its
// dtype and shape, and a bad row is named.
func TestRetrieveAnchorRows(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var stdout, stderr bytes.Buffer
	for _, args := range [][]string{
		{"simulate", "-out", dir, "-per-class", "40", "-k", "2", "-seed", "2"},
		{"calibrate", "-geometry", "ball", "-cal", p("cal.npz"), "-alpha", "0.1", "-out", p("ball.json")},
	} {
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	test, err := bundle.Read(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	rows := []int{7, 0, 31}
	var f64 []float64
	for _, r := range rows {
		for _, v := range test.Anchors[r*3 : r*3+3] {
			f64 = append(f64, float64(v))
		}
	}
	f64[3] += 1e-9 // float64 → float32 rounds it away
	writeNPY64(t, p("three.npy"), f64, 3, 3)
	retrieve := func(args ...string) (string, error) {
		stdout.Reset()
		err := run(&stdout, &stderr, append([]string{"retrieve", "-set", p("ball.json"), "-db", p("test.npz"), "-limit", "5"}, args...))
		return stdout.String(), err
	}
	type answer struct {
		Total int
		Hits  []struct {
			ID    int64
			Score float64
		}
	}
	got, err := retrieve("-anchor", p("three.npy"), "-json")
	if err != nil {
		t.Fatal(err)
	}
	var batch struct {
		Anchors []struct {
			Anchor    int
			Truncated bool
			answer
		}
		Summary struct {
			Anchors, Empty int
			Mean, Median   float64
		}
	}
	if err := json.Unmarshal([]byte(got), &batch); err != nil || len(batch.Anchors) != len(rows) {
		t.Fatalf("-anchor three.npy -json: %v\n%s", err, got)
	}
	var totals []float64
	for _, a := range batch.Anchors {
		totals = append(totals, float64(a.Total))
		if a.Truncated != (a.Total > 5) {
			t.Errorf("anchor %d: truncated %v with %d inside and -limit 5", a.Anchor, a.Truncated, a.Total)
		}
	}
	slices.Sort(totals)
	if s := batch.Summary; s.Anchors != 3 || s.Median != totals[1] || math.Abs(s.Mean-(totals[0]+totals[1]+totals[2])/3) > 1e-12 {
		t.Errorf("summary %+v, totals %v", s, totals)
	}
	var text []string
	for i, r := range rows {
		one, err := retrieve("-anchor-index", fmt.Sprint(r), "-json")
		if err != nil {
			t.Fatal(err)
		}
		var want answer
		json.Unmarshal([]byte(one), &want)
		if g := batch.Anchors[i]; g.Anchor != i || len(want.Hits) == 0 || fmt.Sprint(g.answer) != fmt.Sprint(want) {
			t.Errorf("anchor %d: %+v, want row %d's %+v", i, g, r, want)
		}
		one, _ = retrieve("-anchor-index", fmt.Sprint(r))
		text = append(text, fmt.Sprintf("anchor %d: %s", i, one))
	}
	got, err = retrieve("-anchor", p("three.npy"))
	if want := strings.Join(text, "\n"); err != nil || !strings.HasPrefix(got, want) || !strings.Contains(got[len(want):], "3 anchors: ") {
		t.Errorf("-anchor three.npy: %v\n%s\nwant\n%s3 anchors: …", err, got, want)
	}
	if got, err := retrieve("-anchor", p("test.npz"), "-limit", "1"); err != nil || !strings.Contains(got, fmt.Sprintf("\n%d anchors: ", test.N)) {
		t.Errorf("-anchor test.npz (its anchors): %v\n%s", err, got)
	}

	if err := bundle.WriteNPY(p("ints.npy"), bundle.Int64([]int64{1, 2, 3}, 3)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY(p("cube.npy"), bundle.Float32(make([]float32, 6), 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	nan := slices.Clone(f64)
	nan[7] = math.NaN()
	writeNPY64(t, p("nan.npy"), nan, 3, 3)
	for file, want := range map[string]string{
		"ints.npy": "ints.npy: dtype int64, shape (3,): want floating point, one anchor of shape (3,) or m anchors of shape (m, 3)",
		"cube.npy": "cube.npy: dtype float32, shape (1, 2, 3): want floating point",
		"nan.npy":  "nan.npy: row 2, coordinate 1 is NaN",
	} {
		if _, err := retrieve("-anchor", p(file)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-anchor %s: %v, want %q", file, err, want)
		}
	}
}

// TestRetrieveBatchTransformed: from retrieveTransformMin anchors on,
// ccs retrieve scans an ellipsoid's collection transformed by its
// whitening (and a shifted one's, its anchors moved); each anchor's
// answer is the one a smaller batch, scanned plainly, gives it.
func TestRetrieveBatchTransformed(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var stdout, stderr bytes.Buffer
	for _, args := range [][]string{
		{"simulate", "-out", dir, "-per-class", "60", "-k", "2", "-seed", "3"},
		{"calibrate", "-geometry", "ellipsoid", "-fit", p("fit.npz"), "-cal", p("cal.npz"), "-alpha", "0.1", "-out", p("ell.json")},
		{"calibrate", "-geometry", "ellipsoid", "-fit", p("fit.npz"), "-shift", "-cal", p("cal.npz"), "-alpha", "0.1", "-out", p("shift.json")},
	} {
		if err := run(&stdout, &stderr, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	test, err := bundle.Read(p("test.npz"))
	if err != nil {
		t.Fatal(err)
	}
	m := retrieveTransformMin + 4
	if test.N < m {
		t.Fatalf("test split of %d anchors, want %d", test.N, m)
	}
	var f64 []float64
	for _, v := range test.Anchors[:m*test.D] {
		f64 = append(f64, float64(v))
	}
	writeNPY64(t, p("many.npy"), f64, m, test.D)
	writeNPY64(t, p("few.npy"), f64[:(retrieveTransformMin-1)*test.D], retrieveTransformMin-1, test.D)
	for _, set := range []string{"ell.json", "shift.json"} {
		answers := func(file string) []json.RawMessage {
			stdout.Reset()
			if err := run(&stdout, &stderr, []string{"retrieve", "-set", p(set), "-db", p("test.npz"), "-anchor", p(file), "-json"}); err != nil {
				t.Fatalf("%s -anchor %s: %v", set, file, err)
			}
			var out struct{ Anchors []json.RawMessage }
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			return out.Anchors
		}
		many, few := answers("many.npy"), answers("few.npy")
		var hits int
		for i, a := range few {
			if string(a) != string(many[i]) {
				t.Errorf("%s anchor %d: %s in a batch of %d (transformed), %s in one of %d", set, i, many[i], m, a, len(few))
			}
			hits += strings.Count(string(a), `"row"`)
		}
		if hits < len(few) {
			t.Errorf("%s: %d hits for %d anchors", set, hits, len(few))
		}
	}
}
