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
	"strings"
	"unicode/utf8"
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

// Read reads and validates a bundle .npz file. Errors name the file and the
// array.
func Read(path string) (*Bundle, error) {
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
	return b, nil
}

// ReadFeatures reads a file of embeddings that needs no positives: a
// bundle, or features alone — "anchors" (or "embeddings") (n, d) float32
// with optional "labels", "index", "logits" and "activations" (K = 0). It
// is what the OOD detectors read (training features, in-distribution and
// OOD samples); an .npy file is its anchors alone. Errors name the file
// and the array.
func ReadFeatures(path string) (*Bundle, error) {
	var arrays map[string]Array
	var err error
	if strings.EqualFold(filepath.Ext(path), ".npy") {
		var a Array
		if a, err = ReadNPY(path); err == nil {
			arrays = map[string]Array{"anchors": a}
		}
	} else {
		arrays, err = ReadNPZ(path)
	}
	if err != nil {
		return nil, err
	}
	from := "anchors"
	if _, ok := arrays["anchors"]; !ok {
		if e, ok := arrays["embeddings"]; ok {
			arrays["anchors"] = e
			delete(arrays, "embeddings")
			from = "embeddings"
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
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// FromArrays builds and validates a bundle from named arrays.
func FromArrays(arrays map[string]Array) (*Bundle, error) { return fromArrays(arrays, true) }

// FeaturesFromArrays is FromArrays for a bundle that needs no positives:
// anchors with optional labels, index, logits and activations (K = 0), as
// ReadFeatures reads a file of them.
func FeaturesFromArrays(arrays map[string]Array) (*Bundle, error) { return fromArrays(arrays, false) }

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
			return a, true, fmt.Errorf("array %q: shape %s, want %d dimensions%s", name, FormatShape(a.Shape), ndim, hint)
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
		return nil, fmt.Errorf("array \"anchors\" is missing (have %v): a bundle holds anchors with their positives; ccs bundle makes bundles from embeddings and labels", slices.Sorted(maps.Keys(arrays)))
	}
	pos, hasPos, err := get("positives", false, 3)
	if err != nil {
		return nil, err
	}
	pidx, hasPIdx, err := get("positive_index", true, 2)
	if err != nil {
		return nil, err
	}
	ppool, hasPPool, err := get("positive_pool", false, 2)
	if err != nil {
		return nil, err
	}
	if !hasPos && !hasPIdx && needPositives {
		return nil, fmt.Errorf("%w; ccs bundle makes them from embeddings and labels (a file of anchors alone, as its ood.npz and ood-cal.npz, is what ccs ood and calibrate -ood-cal read)", ErrNoPositives)
	}
	b := &Bundle{N: anchors.Shape[0], D: anchors.Shape[1], Anchors: anchors.F32}
	for _, name := range slices.Sorted(maps.Keys(arrays)) {
		if c := arrays[name].Converted; c != "" {
			b.Converted = append(b.Converted, name+": "+c)
		}
	}
	switch {
	case hasPos && hasPIdx:
		return nil, fmt.Errorf("both \"positives\" and \"positive_index\" are present; give one")
	case hasPos:
		b.K, b.Positives = pos.Shape[1], pos.F32
		if pos.Shape[0] != b.N || pos.Shape[2] != b.D {
			return nil, fmt.Errorf("array \"positives\": shape %s, want (%d, k, %d) to match anchors %s", FormatShape(pos.Shape), b.N, b.D, FormatShape(anchors.Shape))
		}
	case hasPIdx:
		if pidx.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"positive_index\": shape %s, want (%d, k) to match anchors %s", FormatShape(pidx.Shape), b.N, FormatShape(anchors.Shape))
		}
		b.K, b.PositiveIndex = pidx.Shape[1], pidx.I64
		if hasPPool {
			if ppool.Shape[1] != b.D {
				return nil, fmt.Errorf("array \"positive_pool\": shape %s, want (m, %d)", FormatShape(ppool.Shape), b.D)
			}
			b.PositivePool = ppool.F32
		}
	case hasPPool:
		return nil, fmt.Errorf("array \"positive_pool\" is present without \"positive_index\"")
	}
	neg, hasNeg, err := get("negatives", false, 3)
	if err != nil {
		return nil, err
	}
	idx, hasIdx, err := get("negative_index", true, 2)
	if err != nil {
		return nil, err
	}
	pool, hasPool, err := get("negative_pool", false, 2)
	if err != nil {
		return nil, err
	}
	switch {
	case hasNeg && hasIdx:
		return nil, fmt.Errorf("both \"negatives\" and \"negative_index\" are present; give one")
	case hasNeg:
		if neg.Shape[0] != b.N || neg.Shape[2] != b.D {
			return nil, fmt.Errorf("array \"negatives\": shape %s, want (%d, kn, %d) to match anchors %s", FormatShape(neg.Shape), b.N, b.D, FormatShape(anchors.Shape))
		}
		b.KNeg, b.Negatives = neg.Shape[1], neg.F32
	case hasIdx:
		if idx.Shape[0] != b.N {
			return nil, fmt.Errorf("array \"negative_index\": shape %s, want (%d, kn) to match anchors %s", FormatShape(idx.Shape), b.N, FormatShape(anchors.Shape))
		}
		b.KNeg, b.NegativeIndex = idx.Shape[1], idx.I64
		if hasPool {
			if pool.Shape[1] != b.D {
				return nil, fmt.Errorf("array \"negative_pool\": shape %s, want (m, %d)", FormatShape(pool.Shape), b.D)
			}
			b.Pool = pool.F32
		}
	case hasPool:
		return nil, fmt.Errorf("array \"negative_pool\" is present without \"negative_index\"")
	}
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

// IsTable says whether path names a columnar file, which package table
// reads (table.ReadTable): Parquet (.parquet), Arrow IPC (.arrow,
// .feather), or a directory a Hugging Face Dataset's save_to_disk wrote
// (its state.json lists the shards) or a DatasetDict's (its
// dataset_dict.json lists the splits' directories).
func IsTable(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
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
	return fmt.Sprintf("a text file (%q)", strings.TrimRight(string(line), "\r"))
}
