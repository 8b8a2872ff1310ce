package bundle

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccsets/ccs/internal/suggest"
)

// ErrNoPositives reports a bundle file without its anchors' positives
// (errors.Is): a file of anchors alone, which only the readers of
// features take.
var ErrNoPositives = errors.New("array \"positives\" (or \"positive_index\") is missing: a bundle needs each anchor's positives")

// ErrFeatures reports a bundle of anchors alone (K = 0: features, as ccs
// bundle's ood and ood-cal splits are) given where each anchor's
// positives are needed (errors.Is).
var ErrFeatures = errors.New("anchors only, no positives: a features bundle (as the ood and ood-cal splits are: the OOD test's inputs) where each anchor's positives are needed; give the cal (or test, fit) split")

// NeedPositives refuses a bundle of anchors alone (ErrFeatures): what
// calibrates, evaluates or trains a set reads each anchor's positives.
func (b *Bundle) NeedPositives() error {
	if b.K < 1 {
		return ErrFeatures
	}
	return nil
}

// PickleFile refuses a file that its extension (.pt, .pth, .bin, .ckpt,
// .pkl, .pickle) says is a Python pickle — torch.save's, pickle.dump's —
// saying how to save the tensor instead; nil for any other.
func PickleFile(path string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle":
		return fmt.Errorf("%s: a %s file is a Python pickle, which ccs does not read (unpickling runs the file's code): %s", path, ext, savePickled)
	}
	return nil
}

// savePickled is how to save a tensor that a pickle holds.
const savePickled = `save the tensor with safetensors (save_file({"embeddings": t}, "emb.safetensors")) or NumPy (np.save("emb.npy", t.cpu().numpy()))`

// Read reads and validates a bundle .npz file. Errors name the file and the
// array.
func Read(path string) (*Bundle, error) {
	if err := PickleFile(path); err != nil {
		return nil, err
	}
	arrays, err := ReadNPZ(path)
	if errors.Is(err, zip.ErrFormat) {
		if what := notBundle(path); what != "" {
			emb := "EMB.npy"
			if strings.HasPrefix(what, "a .npy") {
				emb = path
			}
			return nil, fmt.Errorf("%s: %s, not a bundle: a bundle is a .npz of anchors and their positives (positives, or positive_index), as ccs bundle -out writes one from embeddings and labels, groups or pairs (ccs bundle -embeddings %s -labels FILE -out DIR; ccs.bundle in Python)", path, what, emb)
		}
	}
	if err != nil {
		return nil, err
	}
	b, err := FromArrays(arrays)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b.Embeddings = ReadManifest(filepath.Dir(path)).EmbeddingsOf(path, b)
	return b, nil
}

// ReadFeatures reads a file of embeddings that needs no positives: a
// bundle, or features alone — "anchors" (or "embeddings") (n, d) float32
// with optional "labels", "index", "logits" and "activations" (K = 0). It
// is what the OOD detectors read (training features, in-distribution and
// OOD samples); an .npy file is its anchors alone. Errors name the file
// and the array.
func ReadFeatures(path string) (*Bundle, error) {
	if err := PickleFile(path); err != nil {
		return nil, err
	}
	var arrays map[string]Array
	var err error
	if strings.EqualFold(filepath.Ext(path), ".npy") {
		var a Array
		if a, err = ReadNPY(path); err == nil {
			arrays = map[string]Array{"anchors": a}
		}
	} else if arrays, err = ReadNPZ(path); errors.Is(err, zip.ErrFormat) {
		if what := notBundle(path); strings.HasPrefix(what, "a text file") {
			return nil, fmt.Errorf("%s: %s, not embeddings: want .npy (n, d) or .npz (\"embeddings\" or \"anchors\"); %s", path, what, LoadText(path))
		}
	}
	if err != nil {
		return nil, err
	}
	from := "anchors"
	if _, ok := arrays["anchors"]; !ok {
		e, ok := arrays["embeddings"]
		if !ok {
			return nil, fmt.Errorf("%s: no \"embeddings\" (or \"anchors\") array (have %s): a file of inputs holds embeddings (n, d), with optional labels, logits and activations (np.savez(path, embeddings=X, labels=y, logits=L)), or is an .npy of embeddings",
				path, haveArrays(arrays))
		}
		arrays["anchors"] = e
		delete(arrays, "embeddings")
		from = "embeddings"
	}
	if a := arrays["anchors"]; len(a.Shape) >= 1 && a.Shape[0] == 0 {
		return nil, fmt.Errorf("%s: %s: shape %s: the file holds no inputs (0 rows)", path, from, FormatShape(a.Shape))
	}
	// Non-finite features are named by row and coordinate, as ccs bundle
	// names them, and counted; an .npy's by the file alone (its "anchors"
	// are no array the user named).
	if a, ok := arrays["anchors"]; ok && a.F32 != nil && len(a.Shape) == 2 && a.Shape[0] > 0 && a.Shape[1] > 0 {
		source := path + ": " + from
		if strings.EqualFold(filepath.Ext(path), ".npy") {
			source = path
		}
		e := Embeddings{Source: source, Rows: a.F32, N: a.Shape[0], D: a.Shape[1]}
		if err := e.check(); err != nil {
			return nil, err
		}
	}
	b, err := fromArrays(arrays, false)
	if err == nil && from != "anchors" {
		b.AnchorsFrom = from
		for i, c := range b.Converted {
			if rest, ok := strings.CutPrefix(c, "anchors: "); ok {
				b.Converted[i] = from + ": " + rest
			}
		}
	}
	if err != nil {
		if from != "anchors" && strings.Contains(err.Error(), `array "anchors"`) { // the array the file names
			return nil, fmt.Errorf("%s: %s", path, strings.ReplaceAll(err.Error(), `array "anchors"`, fmt.Sprintf("array %q", from)))
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b.Embeddings = ReadManifest(filepath.Dir(path)).EmbeddingsOf(path, b)
	return b, nil
}

// haveArrays lists an archive's arrays for a message: "W, b", or "none".
func haveArrays(arrays map[string]Array) string {
	if len(arrays) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(arrays)), ", ")
}

// FromArrays builds and validates a bundle from named arrays.
func FromArrays(arrays map[string]Array) (*Bundle, error) { return fromArrays(arrays, true) }

// FeaturesFromArrays is FromArrays for a bundle that needs no positives:
// anchors with optional labels, index, logits and activations (K = 0), as
// ReadFeatures reads a file of them.
func FeaturesFromArrays(arrays map[string]Array) (*Bundle, error) { return fromArrays(arrays, false) }

// bundleArrays are the names of the arrays a bundle file holds.
var bundleArrays = []string{"anchors", "positives", "positive_index", "positive_pool",
	"negatives", "negative_index", "negative_pool", "labels", "positive_label_start",
	"positive_labels", "index", "blocks", "logits", "activations"}

// misnamed is the did-you-mean of a missing array's message: the array
// of the file, of a name no bundle holds, nearest one of wanted's
// ("anchor" for "anchors"), or "" when none is near.
func misnamed(arrays map[string]Array, wanted ...string) string {
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(arrays)) {
		if !slices.Contains(bundleArrays, name) {
			unknown = append(unknown, name)
		}
	}
	var near, meant []string
	for _, w := range wanted {
		for _, n := range suggest.Near(w, unknown) {
			if !slices.Contains(near, n) {
				near, meant = append(near, n), append(meant, w)
			}
		}
	}
	if len(near) != 1 {
		return ""
	}
	return fmt.Sprintf("; %q is no bundle's array: did you mean %q?", near[0], meant[0])
}

// sideArrays are one side of a bundle, its positives or its negatives,
// as fromArrays reads them: k a row, embedded in rows, or by index into
// the anchors or into pool's rows.
type sideArrays struct {
	k     int
	rows  []float32
	index []int64
	pool  []float32
}

// fromArrays is FromArrays; without needPositives "positives" may be
// missing (features alone).
func fromArrays(arrays map[string]Array, needPositives bool) (*Bundle, error) {
	get := func(name string, i64 bool, ndim int) (Array, bool, error) {
		a, ok := arrays[name]
		if !ok {
			return a, false, nil
		}
		if i64 && a.I64 == nil {
			return a, true, fmt.Errorf("array %q: dtype %s, want an integer type (int64, int32, …)", name, a.Kind())
		}
		if !i64 && a.F32 == nil {
			return a, true, fmt.Errorf("array %q: dtype %s, want floating point (float32, float64 or float16)", name, a.Kind())
		}
		if len(a.Shape) != ndim {
			hint := ""
			if (name == "positives" || name == "negatives") && len(a.Shape) == 2 && ndim == 3 {
				// A triplet's column: one row per anchor, as
				// sentence-transformers' (anchor, positive, negative) give.
				hint = fmt.Sprintf(": (n, k, d), k per anchor; one per anchor, as a triplet's column, is (n, 1, d): %s[:, None]", name)
			}
			return a, true, fmt.Errorf("array %q: shape %s, want %d dimension%s%s", name, FormatShape(a.Shape), ndim, map[bool]string{true: "s"}[ndim != 1], hint)
		}
		return a, true, nil
	}
	anchors, ok, err := get("anchors", false, 2)
	if err != nil {
		return nil, err
	}
	if !ok {
		if _, raw := arrays["embeddings"]; raw {
			return nil, fmt.Errorf("array \"anchors\" is missing: this is a file of embeddings (array \"embeddings\"), not a bundle; make bundles from embeddings and labels with ccs bundle")
		}
		return nil, fmt.Errorf("array \"anchors\" is missing (have %v)%s: a bundle holds anchors with their positives; ccs bundle makes bundles from embeddings and labels", slices.Sorted(maps.Keys(arrays)), misnamed(arrays, "anchors"))
	}
	// side reads the positives or the negatives (rows, index and pool
	// their arrays, k their count in messages): embedded, rows of shape
	// (n, k, d), or an index, (n, k), into the anchors or into pool's
	// rows, (m, d). missing, unless nil, is the error where neither is.
	side := func(rows, index, pool, k string, missing error) (sideArrays, error) {
		emb, hasEmb, err := get(rows, false, 3)
		if err != nil {
			return sideArrays{}, err
		}
		idx, hasIdx, err := get(index, true, 2)
		if err != nil {
			return sideArrays{}, err
		}
		pl, hasPool, err := get(pool, false, 2)
		if err != nil {
			return sideArrays{}, err
		}
		if !hasEmb && !hasIdx && missing != nil {
			return sideArrays{}, missing
		}
		n, d := anchors.Shape[0], anchors.Shape[1]
		var s sideArrays
		switch {
		case hasEmb && hasIdx:
			return s, fmt.Errorf("both %q and %q are present; give one", rows, index)
		case hasPool && !hasIdx: // a pool is read through an index alone: beside embedded rows it would be ignored
			return s, fmt.Errorf("array %q is present without %q", pool, index)
		case hasEmb:
			if emb.Shape[0] != n || emb.Shape[2] != d {
				return s, fmt.Errorf("array %q: shape %s, want (%d, %s, %d) to match anchors %s", rows, FormatShape(emb.Shape), n, k, d, FormatShape(anchors.Shape))
			}
			s.k, s.rows = emb.Shape[1], emb.F32
		case hasIdx:
			if idx.Shape[0] != n {
				return s, fmt.Errorf("array %q: shape %s, want (%d, %s) to match anchors %s", index, FormatShape(idx.Shape), n, k, FormatShape(anchors.Shape))
			}
			s.k, s.index = idx.Shape[1], idx.I64
			if hasPool {
				if pl.Shape[1] != d {
					return s, fmt.Errorf("array %q: shape %s, want (m, %d)", pool, FormatShape(pl.Shape), d)
				}
				s.pool = pl.F32
			}
		}
		return s, nil
	}
	var noPositives error
	if needPositives {
		noPositives = fmt.Errorf("%w%s; ccs bundle makes them from embeddings and labels (a file of anchors alone, as its ood.npz and ood-cal.npz, is what ccs ood and calibrate -ood-cal read)", ErrNoPositives, misnamed(arrays, "positives", "positive_index"))
	}
	pos, err := side("positives", "positive_index", "positive_pool", "k", noPositives)
	if err != nil {
		return nil, err
	}
	b := &Bundle{N: anchors.Shape[0], D: anchors.Shape[1], Anchors: anchors.F32,
		K: pos.k, Positives: pos.rows, PositiveIndex: pos.index, PositivePool: pos.pool}
	for _, name := range slices.Sorted(maps.Keys(arrays)) {
		if c := arrays[name].Converted; c != "" {
			b.Converted = append(b.Converted, name+": "+c)
		}
	}
	neg, err := side("negatives", "negative_index", "negative_pool", "kn", nil)
	if err != nil {
		return nil, err
	}
	b.KNeg, b.Negatives, b.NegativeIndex, b.Pool = neg.k, neg.rows, neg.index, neg.pool
	if a, ok, err := get("labels", true, 1); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"labels\": shape %s, want (%d,)", FormatShape(a.Shape), b.N)
		}
		b.Labels = a.I64
	}
	if a, ok, err := get("positive_label_start", true, 1); err != nil {
		return nil, err
	} else if ok {
		b.PositiveLabelStart = a.I64
	}
	if a, ok, err := get("positive_labels", true, 1); err != nil {
		return nil, err
	} else if ok {
		b.PositiveLabels = a.I64
	}
	if a, ok, err := get("index", true, 1); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"index\": shape %s, want (%d,)", FormatShape(a.Shape), b.N)
		}
		b.Index = a.I64
	}
	if a, ok, err := get("blocks", true, 1); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"blocks\": shape %s, want (%d,): each anchor's block", FormatShape(a.Shape), b.N)
		}
		if i := slices.IndexFunc(a.I64, func(v int64) bool { return v < 0 }); i >= 0 {
			return nil, fmt.Errorf("array \"blocks\": anchor %d's block is %d: block ids are 0 or more, as ccs bundle numbers them (a missing block id, -1, is refused where the blocks are given)", i, a.I64[i])
		}
		b.Blocks = a.I64
	}
	if a, ok, err := get("logits", false, 2); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"logits\": shape %s, want (%d, C)", FormatShape(a.Shape), b.N)
		}
		b.C, b.Logits = a.Shape[1], a.F32
	}
	if a, ok, err := get("activations", false, 2); err != nil {
		return nil, err
	} else if ok {
		if a.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"activations\": shape %s, want (%d, L)", FormatShape(a.Shape), b.N)
		}
		b.A, b.Activations = a.Shape[1], a.F32
	}
	if err := b.validate(needPositives); err != nil {
		return nil, err
	}
	return b, nil
}

// Arrays returns the bundle's named arrays, as Write stores them.
func (b *Bundle) Arrays() map[string]Array {
	m := map[string]Array{"anchors": Float32(b.Anchors, b.N, b.D)}
	switch {
	case b.PositiveIndex != nil:
		m["positive_index"] = Int64(b.PositiveIndex, b.N, b.K)
		if b.PositivePool != nil {
			m["positive_pool"] = Float32(b.PositivePool, len(b.PositivePool)/b.D, b.D)
		}
	case b.Positives != nil || b.K > 0:
		m["positives"] = Float32(b.Positives, b.N, b.K, b.D)
	}
	if b.Negatives != nil {
		m["negatives"] = Float32(b.Negatives, b.N, b.KNeg, b.D)
	}
	if b.NegativeIndex != nil {
		m["negative_index"] = Int64(b.NegativeIndex, b.N, b.KNeg)
		if b.Pool != nil {
			m["negative_pool"] = Float32(b.Pool, len(b.Pool)/b.D, b.D)
		}
	}
	if b.Labels != nil {
		m["labels"] = Int64(b.Labels, b.N)
	}
	if b.PositiveLabelStart != nil {
		m["positive_label_start"] = Int64(b.PositiveLabelStart, len(b.PositiveLabelStart))
		m["positive_labels"] = Int64(b.PositiveLabels, len(b.PositiveLabels))
	}
	if b.Logits != nil {
		m["logits"] = Float32(b.Logits, b.N, b.C)
	}
	if b.Activations != nil {
		m["activations"] = Float32(b.Activations, b.N, b.A)
	}
	if b.Index != nil {
		m["index"] = Int64(b.Index, b.N)
	}
	if b.Blocks != nil {
		m["blocks"] = Int64(b.Blocks, b.N)
	}
	return m
}

// SHA256 is the hex SHA-256 of b's arrays as Write stores them: each
// array's name and .npy encoding, in the order of their names. A bundle
// made in memory and the same bundle read from its file hash alike.
func (b *Bundle) SHA256() (string, error) {
	h := sha256.New()
	arrays := b.Arrays()
	for _, name := range slices.Sorted(maps.Keys(arrays)) {
		fmt.Fprintf(h, "%s\n", name)
		if err := writeArray(h, arrays[name]); err != nil {
			return "", fmt.Errorf("array %q: %w", name, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Write validates b and writes it to path as an .npz archive, atomically.
func Write(path string, b *Bundle) error {
	if err := b.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteNPZ(path, b.Arrays())
}

// SplitInput reads an input argument, FILE or FILE:NAME — NAME an array
// of an .npz, a tensor of a .safetensors, a column of a .csv, .tsv or
// table (IsTable), or a table's columns ("QUERY,ROW,SCORE") — as ccs's
// commands and the C API read their files: the name is what follows the
// last colon when the part before it is a file that exists, or has the
// extension of a file that holds several arrays or columns, so that a
// missing one is said to be missing. Otherwise the whole of arg is the
// file (a colon of a file's own name, a Windows drive's), name "".
func SplitInput(arg string) (path, name string) {
	if i := strings.LastIndex(arg, ":"); i > 0 {
		ext := strings.ToLower(filepath.Ext(arg[:i]))
		if _, err := os.Stat(arg[:i]); err == nil || ext == ".npz" || ext == ".safetensors" || ext == ".csv" || ext == ".tsv" || IsTable(arg[:i]) {
			return arg[:i], arg[i+1:]
		}
	}
	return arg, ""
}

// IsTable says whether path names a columnar file, which package table
// reads (table.ReadTable): Parquet (.parquet), Arrow IPC (.arrow,
// .feather), or a directory a Hugging Face Dataset's save_to_disk wrote
// (its state.json lists the shards) or a DatasetDict's (its
// dataset_dict.json lists the splits' directories). A directory named
// *.parquet is a Parquet dataset of parts, as Dask and Spark write one;
// a separator after the name ("qrels.parquet/") changes nothing.
func IsTable(path string) bool {
	switch strings.ToLower(filepath.Ext(filepath.Clean(path))) {
	case ".parquet", ".arrow", ".feather":
		return true
	}
	for _, name := range []string{"state.json", "dataset_dict.json"} {
		if st, err := os.Stat(filepath.Join(path, name)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// notBundle says what a file that is no .npz archive is, when it is one a
// user may give for a bundle: the embeddings' .npy ("a .npy array of shape
// (n, d)"), or a text file (its first line); "" otherwise.
func notBundle(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if bytes.HasPrefix(head, []byte("\x93NUMPY")) {
		// The header alone: a cap of one value stops before the data.
		if _, err := f.Seek(0, io.SeekStart); err == nil {
			var big *TooLargeError
			a, err := DecodeNPY(f, "x", 1)
			switch {
			case errors.As(err, &big):
				return "a .npy array of shape " + FormatShape(big.Shape)
			case err == nil:
				return "a .npy array of shape " + FormatShape(a.Shape)
			}
		}
		return "a .npy array"
	}
	if n == 512 { // a rune the read cut in two
		for i := 0; i < utf8.UTFMax-1 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	if len(head) == 0 || !utf8.Valid(head) || bytes.IndexByte(head, 0) >= 0 {
		return ""
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	text := strings.TrimRight(string(line), "\r")
	if r := []rune(text); len(r) > 60 {
		text = string(r[:60]) + "…"
	}
	return fmt.Sprintf("a text file (%q)", text)
}

// LoadText is how to turn a text table of numbers (path) into an .npy:
// `np.save("emb.npy", np.loadtxt("emb.csv", delimiter=",")) converts it`,
// with skiprows=1 where the file's first line is a header (a field that
// is no number: np.loadtxt refuses it).
func LoadText(path string) string {
	sep, args := "", ""
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		sep, args = ",", `, delimiter=","`
	case ".tsv":
		sep, args = "\t", `, delimiter="\t"`
	}
	if textHeader(path, sep) {
		args += ", skiprows=1"
	}
	return fmt.Sprintf("np.save(\"emb.npy\", np.loadtxt(%q%s)) converts it", filepath.Base(path), args)
}

// textHeader says whether the text file at path (its first 64 KiB)
// starts with a header: a first line with a field that is no number,
// above a line of numbers; fields separated by sep ("" for spaces).
func textHeader(path, sep string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	first, rest, _ := bytes.Cut(head[:n], []byte("\n"))
	second, _, _ := bytes.Cut(rest, []byte("\n"))
	numbers := func(line []byte) bool {
		text := strings.TrimSpace(strings.TrimPrefix(string(line), "\ufeff"))
		fields := strings.Fields(text)
		if sep != "" {
			fields = strings.Split(text, sep)
		}
		for _, f := range fields {
			if _, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(f), `"`), 64); err != nil {
				return false
			}
		}
		return len(fields) > 0
	}
	return !numbers(first) && numbers(second)
}
