package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/buildinfo"
	"github.com/ccsets/ccs/internal/kernel"
	"github.com/ccsets/ccs/internal/race"
	"github.com/ccsets/ccs/internal/sttest"
)

// commandList is the package doc's list of the commands, generated from
// the one table of them (commands()): each name and its description, as
// 'ccs help' prints them.
func commandList() string {
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	var b strings.Builder
	for _, c := range cmds {
		fmt.Fprintf(&b, "//\t%-*s %s\n", width, c.name, c.short)
	}
	return b.String()
}

// TestDoc: the package doc (main.go) lists every command with its
// description, generated from commands() (go test -run TestDoc -update
// rewrites it), and its reproduce line names every table (benchstat's
// TestDoc keeps its doc true the same way).
func TestDoc(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "// (cmd_reproduce_TABLE.go):\n//\n", "//\n// Run 'ccs help'"
	i, j := bytes.Index(src, []byte(begin)), bytes.Index(src, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("main.go: the command list is not between %q and %q", begin, end)
	}
	i += len(begin)
	want := commandList()
	if got := string(src[i:j]); got != want {
		if !*update {
			t.Fatalf("main.go's command list differs from commands() (go test -run TestDoc -update rewrites it):\n%s\nwant:\n%s", got, want)
		}
		if err := os.WriteFile("main.go", append(append(append([]byte{}, src[:i]...), want...), src[j:]...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range commands() {
		if c.name != "reproduce" {
			continue
		}
		for _, s := range c.sub {
			if !strings.Contains(c.short, s.name) {
				t.Errorf("reproduce's description does not name the table %q", s.name)
			}
		}
	}
}

// TestRunFunctions: the commands' entry points called directly with their
// options do what the command line does.
func TestRunFunctions(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var sink bytes.Buffer
	out := &output{stdout: &sink, stderr: &sink}
	if err := runSimulate(ctx, simulateOptions{Out: dir, Seed: 2, DataSeed: 7, K: 5, PerClass: 60}, out); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(dir, "ball.json")
	if err := runCalibrate(ctx, calibrateOptions{Geometry: "ball", Cal: filepath.Join(dir, "cal.npz"), Out: set, Alpha: 0.1,
		Calibration: "one", Ridge: 1e-6}, out); err != nil {
		t.Fatal(err)
	}
	var direct bytes.Buffer
	args := []string{"evaluate", "-set", set, "-test", filepath.Join(dir, "test.npz"), "-json"}
	// The document names its command line: the direct call's is the one
	// the flags give.
	directOut := &output{stdout: &direct, stderr: &sink, command: "ccs " + strings.Join(args, " ")}
	if err := runEvaluate(ctx, evaluateOptions{Set: set, Test: filepath.Join(dir, "test.npz"), JSON: true}, directOut); err != nil {
		t.Fatal(err)
	}
	var viaFlags bytes.Buffer
	if err := run(&viaFlags, &sink, args); err != nil {
		t.Fatal(err)
	}
	if direct.String() != viaFlags.String() || !strings.Contains(direct.String(), `"coverage"`) {
		t.Errorf("runEvaluate printed\n%s\nccs evaluate printed\n%s", direct.String(), viaFlags.String())
	}
	if err := runCalibrate(ctx, calibrateOptions{Geometry: "cube", Cal: "x", Out: "y", Alpha: 0.1, Calibration: "one", Ridge: 1}, out); !isUsage(err) {
		t.Errorf("an unknown family: %v, want a usage error", err)
	}
}

// TestVersion: ccs version names the module and this build's kernels, as
// text and as JSON.
func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"version"}); err != nil {
		t.Fatal(err)
	}
	if s := stdout.String(); !strings.Contains(s, "github.com/ccsets/ccs") || !strings.Contains(s, "kernels: "+kernel.Level()) || !strings.Contains(s, "BLAS: "+kernel.BLAS) ||
		!strings.Contains(s, fmt.Sprintf("threads: %d (GOMAXPROCS; this process may use %d CPUs)", runtime.GOMAXPROCS(0), runtime.NumCPU())) {
		t.Errorf("ccs version printed\n%s", s)
	}
	stdout.Reset()
	if err := run(&stdout, &stderr, []string{"version", "-json"}); err != nil {
		t.Fatal(err)
	}
	var b buildinfo.Info
	if err := json.Unmarshal(stdout.Bytes(), &b); err != nil || b.Kernels != kernel.Level() || b.Go == "" || b.Version == "" {
		t.Errorf("ccs version -json: %+v, %v", b, err)
	}
}

// sessionSizes are the flags TestDocSessions adds to a documented command
// so that it runs in seconds (a flag given twice takes the last value):
// the same commands, on small data.
var sessionSizes = map[string][]string{
	"simulate":              {"-per-class", "150", "-k", "8"},
	"fit":                   {"-epochs", "3", "-quiet"},
	"compare":               {"-seeds", "1", "-epochs", "2", "-resplits", "20", "-quiet"},
	"coverage-check":        {"-resplits", "50"},
	"ood":                   {"-cider-epochs", "1", "-quiet"},
	"reproduce sim":         {"-seeds", "1", "-per-class", "150", "-k", "8", "-epochs", "2", "-quiet"},
	"reproduce pnorm":       {"-seeds", "1", "-per-class", "150", "-k", "8", "-quiet"},
	"reproduce sensitivity": {"-seeds", "1", "-per-class", "150", "-sweeps", "alpha", "-epochs", "2", "-quiet"},
	"reproduce fmnist": {"-seeds", "1", "-rows", "baselines", "-train-anchors", "200", "-test-anchors", "300", "-k", "4",
		"-hull=false", "-models", "supervised=" + encoderPath("fmnist-supervised.onnx"), "-quiet"},
	"reproduce ood": {"-seeds", "1", "-rows", "baselines", "-train-anchors", "100", "-test-anchors", "200", "-k", "4",
		"-ood-sets", "noise:100", "-baseline-train", "300", "-cider-epochs", "1", "-models", "supervised=" + encoderPath("fmnist-supervised.onnx"), "-quiet"},
}

// slowSessions are the documented commands TestDocSessions runs only in
// the long suite (they embed images).
var slowSessions = map[string]bool{"reproduce fmnist": true, "reproduce ood": true, "reproduce sensitivity": true}

func encoderPath(name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "encoders", name))
	if err != nil {
		panic(err)
	}
	return p
}

// sessions returns the commands of the sh blocks of a Markdown file: each
// line that runs ccs (or ./scripts/ccs) or curl, split into arguments as
// a shell splits them (quotes), comments dropped; a ccs command starts
// with "ccs".
func sessions(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	in := false
	for n, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		}
		if !in {
			continue
		}
		f, err := shellWords(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n+1, err)
		}
		switch {
		case len(f) > 1 && (f[0] == "ccs" || f[0] == "./scripts/ccs"):
			out = append(out, append([]string{"ccs"}, f[1:]...))
		case len(f) > 1 && f[0] == "curl":
			out = append(out, f)
		}
	}
	return out
}

// shellWords splits a command line as a shell does: words apart by
// spaces, 'single' and "double" quotes keeping theirs; a # starting a word
// starts a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c in %q", quote, line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// docFixtures make the files a page's session starts from, in the
// session's directory: for README.md and your-data.md, a user's embeddings (float64, d =
// 8, 10 classes) and labels, queries with relevance pairs, and the request
// bodies its curl commands send.
var docFixtures = map[string]func(t *testing.T){
	"README.md": userEmbeddings,
	"serve.md": func(t *testing.T) {
		for name, a := range map[string]bundle.Array{
			"score.npy":  bundle.Float32([]float32{0, 0, 0, 1, 0, 0, 0, 2, 0}, 3, 3),
			"points.npy": bundle.Float32([]float32{0, 0, 0, 30, 0, 0}, 2, 3),
			"anchor.npy": bundle.Float32([]float32{0, 0, 0}, 3),
		} {
			if err := bundle.WriteNPY(name, a); err != nil {
				t.Fatal(err)
			}
		}
	},
	"your-data.md": userEmbeddings,
	"ood.md":       oodExports,
}

// oodExports writes "From your exports"'s files: a classifier's features
// (d = 8) and logits (5 classes) for training and ID test rows, with
// labels, and two OOD samples without.
func oodExports(t *testing.T) {
	t.Helper()
	const d, c = 8, 5
	r := rand.New(rand.NewPCG(46, 5))
	means := make([]float64, c*d)
	for i := range means {
		means[i] = 2 * r.NormFloat64()
	}
	write := func(name string, n int, labelled bool, row func(i int) ([]float64, int64)) {
		feats, logits, labels := make([]float32, 0, n*d), make([]float32, 0, n*c), make([]int64, n)
		for i := range n {
			x, y := row(i)
			labels[i] = y
			for _, v := range x {
				feats = append(feats, float32(v))
			}
			for k := range c {
				var z float64
				for j := range d {
					z += x[j] * means[k*d+j] / 4
				}
				logits = append(logits, float32(z+0.5*r.NormFloat64()))
			}
		}
		arrays := map[string]bundle.Array{"embeddings": bundle.Float32(feats, n, d), "logits": bundle.Float32(logits, n, c)}
		if labelled {
			arrays["labels"] = bundle.Int64(labels, n)
		}
		if err := bundle.WriteNPZ(name, arrays); err != nil {
			t.Fatal(err)
		}
	}
	class := func(i int) ([]float64, int64) {
		y := int64(i % c)
		x := make([]float64, d)
		for j := range x {
			x[j] = means[int(y)*d+j] + r.NormFloat64()
		}
		return x, y
	}
	write("train.npz", 6000, true, class)
	write("test.npz", 1000, true, class)
	write("near.npz", 500, false, func(int) ([]float64, int64) {
		x := make([]float64, d)
		for j := range x {
			x[j] = (means[j]+means[d+j])/2 + r.NormFloat64()
		}
		return x, 0
	})
	write("far.npz", 500, false, func(int) ([]float64, int64) {
		x := make([]float64, d)
		for j := range x {
			x[j] = 3 * r.NormFloat64()
		}
		return x, 0
	})
}

// emotions writes "Several labels per row"'s walk-through's export:
// emotions.npy, and emotions.csv, whose labels column holds each row's
// emotions as pandas writes a column of lists, grief (the last, shifted
// apart) among them; enough rows for its -reference 2000.
func emotions(t *testing.T) {
	t.Helper()
	const n, c = 16000, 5
	if err := os.MkdirAll("emo-src", 0o755); err != nil {
		t.Fatal(err)
	}
	m := multiLabelOOD(t, "emo-src", 8, n, 8, c, 6)
	if err := os.Rename(filepath.Join("emo-src", "x.npy"), "emotions.npy"); err != nil {
		t.Fatal(err)
	}
	names := []string{"anger", "fear", "joy", "love", "grief"}
	var csv strings.Builder
	csv.WriteString(",text,labels\n")
	for i := range n {
		var ls []string
		for j := range c {
			if m[i*c+j] == 1 {
				ls = append(ls, "'"+names[j]+"'")
			}
		}
		fmt.Fprintf(&csv, "%d,\"text %d, as written\",\"[%s]\"\n", i, i, strings.Join(ls, ", "))
	}
	if err := os.WriteFile("emotions.csv", []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// userEmbeddings is what a user brings: embeddings (float64, d = 8, 10
// classes) and labels, queries with relevance pairs, and request bodies.
func userEmbeddings(t *testing.T) {
	emotions(t)
	const n, d = 4000, 8
	x32, x64, y := mixture(11, n, d, 10)
	writeNPY64(t, "embeddings.npy", x64, n, d)
	pdmWindows(t, 40, 300) // §9: windows of recordings
	writeNPY64(t, "passages.npy", x64, n, d)
	if err := bundle.WriteNPY("labels.npy", bundle.Int64(y, n)); err != nil {
		t.Fatal(err)
	}
	// A Hugging Face dataset saved to disk: an Arrow stream of embeddings
	// and string labels.
	names := make([]string, n)
	for i, l := range y {
		names[i] = fmt.Sprintf("class-%d", l)
	}
	if err := os.MkdirAll("ds", 0o755); err != nil {
		t.Fatal(err)
	}
	writeArrowStream(t, filepath.Join("ds", "data-00000-of-00001.arrow"), x32, names, d)
	if err := os.WriteFile(filepath.Join("ds", "state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same as pandas' to_csv writes a frame of ids, coordinates and
	// labels: its unnamed index first (§1, "A text table").
	var tickets strings.Builder
	tickets.WriteString(",ticket_id")
	for j := range d {
		fmt.Fprintf(&tickets, ",dim_%d", j)
	}
	tickets.WriteString(",label\n")
	for i := range n {
		fmt.Fprintf(&tickets, "%d,T%d", i, 100000+i)
		for j := range d {
			fmt.Fprintf(&tickets, ",%v", x64[i*d+j])
		}
		fmt.Fprintf(&tickets, ",%s\n", names[i])
	}
	if err := os.WriteFile("tickets.csv", []byte(tickets.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same as datasets' to_json writes them: JSON lines (§1).
	var docs strings.Builder
	for i := range n {
		emb := make([]string, d)
		for j := range emb {
			emb[j] = fmt.Sprint(x32[i*d+j])
		}
		fmt.Fprintf(&docs, `{"idx": %d, "text": "ticket %d", "label": %q, "embedding": [%s]}`+"\n", i, i, names[i], strings.Join(emb, ", "))
	}
	if err := os.WriteFile("docs.jsonl", []byte(docs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same as safetensors' save_file writes them from PyTorch
	// (float32 embeddings, int64 labels).
	sttest.Write(t, "emb.safetensors", sttest.T("embeddings", "F32", []int{n, d}, sttest.LE(x32...)), sttest.T("labels", "I64", []int{n}, sttest.LE(y...)))
	const nq = 300
	q := make([]float32, nq*d)
	var qrels strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range nq {
		// A query near item 7i, relevant: it and the next item of its class.
		r := (7 * i) % n
		for j := range d {
			q[i*d+j] = x32[r*d+j] + 0.1
		}
		fmt.Fprintf(&qrels, "q%d\tdoc%d\t1\n", i, r)
		for s := r + 1; s < n; s++ {
			if y[s] == y[r] {
				fmt.Fprintf(&qrels, "q%d\tdoc%d\t1\n", i, s)
				break
			}
		}
		// Judged not relevant (score 0, as BEIR marks them): the next
		// items of other classes, for -judged-negatives.
		for s, m := r+1, 0; s < n && m < 2; s++ {
			if y[s] != y[r] {
				fmt.Fprintf(&qrels, "q%d\tdoc%d\t0\n", i, s)
				m++
			}
		}
	}
	var ids, qids strings.Builder
	for i := range n {
		fmt.Fprintf(&ids, "doc%d\n", i)
	}
	for i := range nq {
		fmt.Fprintf(&qids, "q%d\n", i)
	}
	// The queries' languages, as a database export writes them: by query
	// id, not in row order (§6, "Coverage per language").
	var langs strings.Builder
	langs.WriteString("query-id,language\n")
	for j := range nq {
		i := (j * 7) % nq // 7 is prime to 300: every query once
		fmt.Fprintf(&langs, "q%d,%s\n", i, []string{"en", "en", "en", "en", "en", "de", "de", "de", "sw", "sw"}[i%10])
	}
	if err := bundle.WriteNPY("queries.npy", bundle.Float32(q, nq, d)); err != nil {
		t.Fatal(err)
	}
	// §10: protein embeddings as float32 rows and Pfam families as a
	// text file of names, one family held out as a novel fold.
	// Enough calibration anchors (about 3 400) for the page's -reference
	// 3000.
	const np = 20000
	e32, _, ey := mixture(12, np, d, 10)
	if err := bundle.WriteNPY("esm.npy", bundle.Float32(e32, np, d)); err != nil {
		t.Fatal(err)
	}
	var pfam strings.Builder
	for _, l := range ey {
		fmt.Fprintf(&pfam, "PF%05d.%d\n", 100+l, 10+l)
	}
	if err := os.WriteFile("pfam.txt", []byte(pfam.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("novel.txt", []byte("PF00109.19\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY("query.npy", bundle.Float32(q[:d], d)); err != nil {
		t.Fatal(err)
	}
	if err := bundle.WriteNPY("anchor.npy", bundle.Float32(x32[:d], d)); err != nil {
		t.Fatal(err)
	}
	// A batch of queries and their languages, one a line (§6's ccs retrieve
	// -anchor-labels).
	if err := bundle.WriteNPY("queries-today.npy", bundle.Float32(q[:4*d], 4, d)); err != nil {
		t.Fatal(err)
	}
	vec := func(i int) string {
		b, _ := json.Marshal(x32[i*d : (i+1)*d])
		return string(b)
	}
	for name, body := range map[string]string{
		"qrels.tsv":           qrels.String(),
		"passage-ids.txt":     ids.String(),
		"query-ids.txt":       qids.String(),
		"queries.csv":         langs.String(),
		"languages-today.txt": "en\nsw\nde\nen\n",
		"score.json":          `{"anchor": ` + vec(0) + `, "points": [` + vec(1) + `, ` + vec(2) + `]}`,
		"points.json":         `{"points": [` + vec(3) + `, ` + vec(4) + `]}`,
		"query.json":          `{"anchor": ` + vec(5) + `, "collection": "corpus", "limit": 10}`,
	} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocSessions runs the command sessions of README.md and docs/*.md —
// every ccs and curl command of their sh blocks, in order, each file in a
// directory of its own — on small data (sessionSizes, docFixtures): the
// documented commands exist, take the flags shown and work together. A
// ccs serve runs in the test's process on a free port, and the page's curl
// commands go to it.
func TestDocSessions(t *testing.T) {
	if race.Enabled {
		// 122 of this package's 236 s under the race detector, checking no
		// concurrency that the packages' own tests and the service's tests
		// here do not. It runs in the suite's other three phases.
		t.Skip("no concurrency of its own under the race detector: run without -race")
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	ran := 0
	for _, file := range files {
		cmds := sessions(t, file)
		if len(cmds) == 0 {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Chdir(t.TempDir())
			if f := docFixtures[filepath.Base(file)]; f != nil {
				f(t)
			}
			var sv *served
			defer func() {
				if sv != nil {
					sv.stop(t)
				}
			}()
			for _, args := range cmds {
				if args[0] == "curl" {
					if sv == nil {
						t.Fatalf("%v: no ccs serve before it", args)
					}
					curl(t, sv.base, args[1:])
					ran++
					continue
				}
				args = args[1:]
				path := args[0]
				if len(args) > 1 && args[0] == "reproduce" {
					path += " " + args[1]
				}
				if slowSessions[path] && testing.Short() {
					continue
				}
				if path == "serve" {
					if sv != nil { // a page's second service (your-data.md §10)
						sv.stop(t)
					}
					// On a free port: the page's address is the curl commands'.
					full := slices.Clone(args)
					if i := slices.Index(full, "-addr"); i >= 0 {
						full = slices.Delete(full, i, i+2)
					}
					sv = startServe(t, append(full, "-addr", "127.0.0.1:0")...)
					ran++
					continue
				}
				// "> FILE": standard output into FILE, as a shell would.
				redirect := ""
				if i := slices.Index(args, ">"); i >= 0 && i == len(args)-2 {
					args, redirect = args[:i], args[i+1]
				}
				full := append(slices.Clone(args), sessionSizes[path]...)
				var stdout, stderr bytes.Buffer
				if err := run(&stdout, &stderr, full); err != nil {
					t.Fatalf("ccs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
				}
				if redirect != "" {
					if err := os.WriteFile(redirect, stdout.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				ran++
			}
		})
	}
	if ran == 0 {
		t.Fatal("no documented session ran")
	}
}

// curl does what curl does with the arguments the docs use (-s, -H,
// -d/--data-binary with @FILE, -X), sending to base instead of the
// documented address, and fails unless the answer is 200.
func curl(t *testing.T, base string, args []string) {
	t.Helper()
	var url, method string
	var body []byte
	header := http.Header{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-s", "--silent":
		case "-H", "-d", "--data-binary", "-X":
			if i+1 == len(args) {
				t.Fatalf("curl %v: %s without its value", args, a)
			}
			v := args[i+1]
			i++
			switch a {
			case "-H":
				k, val, _ := strings.Cut(v, ":")
				header.Add(strings.TrimSpace(k), strings.TrimSpace(val))
			case "-X":
				method = v
			default:
				if f, ok := strings.CutPrefix(v, "@"); ok {
					data, err := os.ReadFile(f)
					if err != nil {
						t.Fatalf("curl %v: %v", args, err)
					}
					body = data
				} else {
					body = []byte(v)
				}
			}
		default:
			if strings.HasPrefix(a, "-") {
				t.Fatalf("curl %v: the test does not know %s", args, a)
			}
			u, ok := strings.CutPrefix(a, "http://127.0.0.1:8080")
			if !ok {
				t.Fatalf("curl %v: want a URL at http://127.0.0.1:8080", args)
			}
			url = base + u
		}
	}
	if method == "" {
		method = "GET"
		if body != nil {
			method = "POST"
		}
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	if body != nil && header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // curl's default
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("curl %v: %s\n%s", args, resp.Status, got)
	}
}
