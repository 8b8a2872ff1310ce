package conformal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/internal/jsonerr"
	"github.com/ccsets/ccs/internal/jsonfloat"
	"github.com/ccsets/ccs/internal/jsonindent"
	"github.com/ccsets/ccs/internal/jsonscan"
)

// File format identifiers.
const (
	FileFormat  = "ccs-set"
	FileVersion = 1
)

// fileSet is the file's layout. An uncalibrated set (a fitted geometry)
// omits alpha, threshold, guarantee and calibration.
type fileSet struct {
	Format    string        `json:"format"`
	Version   int           `json:"version"`
	Dim       int           `json:"dim"`
	Alpha     *float64      `json:"alpha,omitempty"`
	Threshold *threshold    `json:"threshold,omitempty"`
	Guarantee string        `json:"guarantee,omitempty"`
	Geometry  geometry.Spec `json:"geometry"`
	Head      *head.Linear  `json:"head,omitempty"` // dim → geometry.dim; scores are φ(W·x)
	// Shift, when given, centres the sets off their anchors: scores are
	// φ(W·(x + shift)) on the differences x = anchor − point
	// (geometry.Shifted).
	Shift       []float64         `json:"shift,omitempty"`
	Calibration *Info             `json:"calibration,omitempty"`
	Rows        *bundle.RowFilter `json:"calibration_rows,omitempty"` // Info.Rows
	// Info.Sources and .Embeddings.
	Sources    *bundle.RowFilter `json:"calibration_sources,omitempty"`
	Embeddings string            `json:"calibration_embeddings,omitempty"`
	Classes    []classFile       `json:"classes,omitempty"` // class-conditional thresholds
	Fit        *FitInfo          `json:"fit,omitempty"`
	Reference  *Reference        `json:"ood_reference,omitempty"`
	OOD        *OODCalibration   `json:"ood_calibration,omitempty"`
	// Checksum is "sha256:" and the SHA-256 of the file as written
	// without it (the field comes last, so that is the file's bytes up to
	// it, closed): a file changed after ccs wrote it — a threshold edited
	// by hand — is refused. Files written before it was kept have none.
	Checksum string `json:"checksum,omitempty"`
}

// checksumField is how the checksum field begins in a file ccs wrote.
const checksumField = ",\n  \"checksum\": \"sha256:"

// withChecksum is body, a set file's JSON without its checksum ending
// "\n}\n", with the checksum field added last.
func withChecksum(body []byte) ([]byte, error) {
	if !bytes.HasSuffix(body, []byte("\n}\n")) {
		return nil, fmt.Errorf("conformal: the file's JSON does not end as expected")
	}
	sum := sha256.Sum256(body)
	out := append(body[:len(body)-3:len(body)-3], checksumField...)
	return fmt.Appendf(out, "%x\"\n}\n", sum), nil
}

// checkChecksum verifies the checksum of a file that has one (sum, as
// read): the bytes before its field, closed, hash to it.
func checkChecksum(data []byte, sum string) error {
	const changed = "the file was changed after ccs wrote it (a value edited, or the file reformatted): a set's numbers are its calibration's, and one edited by hand certifies nothing; calibrate the set again"
	i := bytes.LastIndex(data, []byte(checksumField))
	hexSum, ok := strings.CutPrefix(sum, "sha256:")
	if i < 0 || !ok || len(hexSum) != 64 || !bytes.Equal(data[i:], fmt.Appendf(nil, "%s%s\"\n}\n", checksumField, hexSum)) {
		return fmt.Errorf("checksum %q: %s", clipSum(sum), changed)
	}
	h := sha256.New() // not append(data[:i:i], …): a copy of the whole file
	h.Write(data[:i])
	h.Write([]byte("\n}\n"))
	if hex.EncodeToString(h.Sum(nil)) != hexSum {
		return fmt.Errorf("checksum: %s", changed)
	}
	return nil
}

// clipSum is a checksum as read, cut for a message.
func clipSum(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// classFile is a class's threshold in the file.
type classFile struct {
	Label     int64      `json:"label"`
	Name      string     `json:"name,omitempty"`
	N         int        `json:"n"`
	Rank      int        `json:"rank"`
	Threshold *threshold `json:"threshold"`
	Tie       *Tie       `json:"tie,omitempty"`
	Copies    int        `json:"copies,omitempty"`
}

// threshold is a threshold in the file: +Inf (a whole-space set) is the
// string "+Inf" (jsonfloat).
type threshold = jsonfloat.Float

// WriteJSON writes the set as an indented, versioned JSON document, each
// array of numbers on one line, its checksum last (ReadJSON refuses the
// file changed after). It refuses, writing nothing, a set ReadJSON would
// refuse: fields changed in memory after calibration that contradict each
// other (an Alpha its rank was not taken at). The checksum is of the bytes
// written: a threshold changed in memory before them is not the one its
// calibration gave, and nothing can tell.
func (s *Set) WriteJSON(w io.Writer) error { return s.writeJSON(w, true) }

// EmbedJSON is WriteJSON without the checksum, for a document that embeds
// the set and lays it out anew, which a checksum of its bytes would not
// survive (a table's figures of its sets).
func (s *Set) EmbedJSON(w io.Writer) error { return s.writeJSON(w, false) }

func (s *Set) writeJSON(w io.Writer, sum bool) error {
	if err := s.hasGeometry(); err != nil {
		return err
	}
	unshifted, shift := geometry.Unshift(s.Geometry)
	g, h := head.Split(unshifted)
	spec, err := geometry.Encode(g)
	if err != nil {
		return err
	}
	f := fileSet{Format: FileFormat, Version: FileVersion, Dim: s.Geometry.Dim(), Geometry: spec, Head: h, Fit: s.Fit,
		Reference: s.Reference, OOD: s.OOD}
	for _, c := range shift {
		f.Shift = append(f.Shift, float64(c))
	}
	if err := checkOOD(s.Reference, s.OOD, s.Geometry.Dim()); err != nil {
		return fmt.Errorf("conformal: %w", err)
	}
	if s.Calibrated() {
		alpha, t, c := s.Alpha, threshold(s.Threshold), s.Calibration
		f.Alpha, f.Threshold, f.Calibration, f.Rows = &alpha, &t, &c, c.Rows
		f.Sources, f.Embeddings = c.Sources, c.Embeddings
		f.Guarantee = guaranteeOf(c.Mode, c.Delta)
		for _, k := range s.Classes {
			t := threshold(k.Threshold)
			f.Classes = append(f.Classes, classFile{Label: k.Label, Name: k.Name, N: k.N, Rank: k.Rank, Threshold: &t, Tie: k.Tie, Copies: k.Copies})
		}
	}
	// Arrays of numbers (Σ, M, a reference pool) on one line each: d²
	// numbers a line each would be half again as large.
	var body bytes.Buffer
	if err := jsonindent.Encode(&body, f, "  "); err != nil {
		return err
	}
	out := body.Bytes()
	if sum {
		if out, err = withChecksum(out); err != nil {
			return err
		}
		// What Load would refuse is refused here, in the program that
		// made it, not at the next start of a service that reads it.
		if _, err := readJSON(bytes.NewReader(out)); err != nil {
			return fmt.Errorf("conformal: the set would not load again: %w (fields changed after calibration?)", err)
		}
	}
	_, err = w.Write(out)
	return err
}

// Save writes the set to path atomically.
func (s *Set) Save(path string) error {
	return atomicfile.Write(path, s.WriteJSON)
}

// ReadJSON reads and validates a set document: format and version, known
// fields only, the geometry's parameters, α, the rank against n and α, and
// the threshold against the rank.
func ReadJSON(r io.Reader) (*Set, error) {
	s, err := readJSON(r)
	if err != nil {
		return nil, fmt.Errorf("conformal: %w", err)
	}
	return s, nil
}

// readJSON is ReadJSON without its errors' prefix. A file's checksum is
// verified after its fields, so that a malformed value is named as such.
func readJSON(r io.Reader) (*Set, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return readBytes(data)
}

// readBytes is readJSON of a document read. A UTF-8 byte-order mark
// before it (as Windows editors save) is skipped.
func readBytes(data []byte) (*Set, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	s, f, err := parseFields(data)
	if err != nil {
		return nil, err
	}
	if f.Checksum != "" {
		if err := checkChecksum(data, f.Checksum); err != nil {
			return nil, err
		}
		s.file = f.Checksum
	} else {
		s.unchecked = true // said by Warnings
		sum := sha256.Sum256(data)
		s.file = "sha256:" + hex.EncodeToString(sum[:])
	}
	return s, nil
}

// parseFields reads and validates a set file's fields: the set, and the
// file's fields as read.
func parseFields(data []byte) (*Set, *fileSet, error) {
	var err error
	// Binary files a set's flag is given by mistake (-set and -test swapped).
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return nil, nil, fmt.Errorf("not a ccs set file: a zip archive, as an .npz bundle is (a set file is the JSON ccs calibrate writes)")
	case bytes.HasPrefix(data, []byte("\x93NUMPY")):
		return nil, nil, fmt.Errorf("not a ccs set file: a NumPy .npy array (a set file is the JSON ccs calibrate writes)")
	}
	if err := refuseNull(data); err != nil {
		if err := otherFormat(data); err != nil {
			return nil, nil, err
		}
		return nil, nil, err
	}
	f, err := decodeFile(data)
	if err != nil {
		err = jsonerr.Explain(err, data) // the field as the file names it, not Go's
		if err := otherFormat(data); err != nil {
			return nil, nil, err
		}
		// A file that says it is a set, whose fields do not decode (a
		// head's W of the wrong shape, hand-edited): a damaged set file,
		// not another kind of file.
		var head struct {
			Format string `json:"format"`
		}
		var syntax *json.SyntaxError
		if json.Unmarshal(data, &head) == nil && head.Format == FileFormat ||
			errors.As(err, &syntax) && bytes.Contains(data, []byte(`"format": `+strconv.Quote(FileFormat))) {
			if strings.Contains(err.Error(), "unknown field") {
				// A field this ccs does not know: a newer ccs's (files keep
				// their version while fields are added), or an edit.
				return nil, nil, fmt.Errorf("a ccs set file with a field this ccs does not know (%w): written by a newer ccs — update this one (ccs version says which it is) — or edited by hand", err)
			}
			return nil, nil, fmt.Errorf("a damaged ccs set file: %w: fit or calibrate the set again, or restore the file as ccs wrote it", err)
		}
		return nil, nil, fmt.Errorf("not a ccs set file: %w", err)
	}
	if f.Format != FileFormat {
		return nil, nil, notASet(f.Format)
	}
	if f.Version != FileVersion {
		return nil, nil, fmt.Errorf("version %d; this ccs reads version %d", f.Version, FileVersion)
	}
	if f.Geometry.Kind == 0 || f.Geometry.Dim < 1 {
		// A geometry, its kind or its dim missing, named so: not as a
		// dimension that differs ("dim 3, but the geometry takes 0").
		if _, err := geometry.Decode(f.Geometry); err != nil {
			return nil, nil, err
		}
	}
	inDim := f.Geometry.Dim
	if f.Head != nil {
		if f.Head.Out != f.Geometry.Dim {
			return nil, nil, fmt.Errorf("head.out %d differs from geometry.dim %d", f.Head.Out, f.Geometry.Dim)
		}
		inDim = f.Head.In
	}
	if inDim != f.Dim {
		return nil, nil, fmt.Errorf("dim %d, but the geometry (and head) take %d", f.Dim, inDim)
	}
	var g geometry.Geometry
	g, err = geometry.Decode(f.Geometry)
	if err != nil {
		return nil, nil, err // it names the geometry
	}
	if f.Head != nil {
		if g, err = head.NewProjected(f.Head, g); err != nil {
			return nil, nil, err
		}
	}
	if f.Shift != nil {
		if g, err = geometry.NewShifted(g, f.Shift); err != nil {
			return nil, nil, fmt.Errorf("shift: %w", err)
		}
	}
	if err := checkOOD(f.Reference, f.OOD, f.Dim); err != nil {
		return nil, nil, err
	}
	if f.Calibration == nil {
		if f.Alpha != nil || f.Threshold != nil || f.Guarantee != "" || f.Rows != nil || f.Sources != nil || f.Embeddings != "" {
			return nil, nil, fmt.Errorf("alpha, threshold, guarantee or calibration_rows, _sources or _embeddings given without calibration")
		}
		if f.OOD != nil {
			return nil, nil, fmt.Errorf("ood_calibration given without calibration: the OOD score is normalised by the threshold")
		}
		s := Uncalibrated(g, f.Fit)
		s.Reference = f.Reference
		return s, &f, nil
	}
	if f.Alpha == nil || f.Threshold == nil {
		return nil, nil, fmt.Errorf("a calibrated set needs alpha and threshold")
	}
	alpha := *f.Alpha
	if !(alpha > 0 && alpha < 1) {
		return nil, nil, &fieldError{fmt.Sprintf("alpha %v, want 0 < alpha < 1", alpha), ErrAlpha}
	}
	c := *f.Calibration
	c.Rows, c.Sources, c.Embeddings = f.Rows, f.Sources, f.Embeddings
	if (c.Sources == nil) != (c.Embeddings == "") {
		return nil, nil, fmt.Errorf("calibration_sources and calibration_embeddings come together: one is given without the other")
	}
	if !c.Mode.Valid() {
		return nil, nil, fmt.Errorf("calibration.mode is missing")
	}
	switch {
	case c.Mode == PAC || (c.Mode == Class && c.Delta != 0):
		if err := CheckDelta(c.Delta); err != nil {
			return nil, nil, fmt.Errorf("calibration.delta: %w", err)
		}
	case c.Mode != Class && c.Delta != 0:
		return nil, nil, fmt.Errorf("calibration.delta %v given for mode %v (only pac and class have one)", c.Delta, c.Mode)
	}
	var classes []ClassThreshold
	for i, k := range f.Classes {
		if k.Threshold == nil {
			return nil, nil, fmt.Errorf("classes[%d] (label %d): threshold is missing", i, k.Label)
		}
		if err := checkTie(fmt.Sprintf("classes[%d].tie", i), k.Tie, k.N, k.Rank); err != nil {
			return nil, nil, err
		}
		if k.Copies < 0 || k.Copies >= max(k.N, 1) {
			return nil, nil, fmt.Errorf("classes[%d].copies %d: want 0 ≤ copies < n = %d", i, k.Copies, k.N)
		}
		classes = append(classes, ClassThreshold{Label: k.Label, Name: k.Name, N: k.N, Rank: k.Rank, Threshold: float64(*k.Threshold), Tie: k.Tie, Copies: k.Copies})
	}
	if c.Mode == Class {
		if err := checkClasses(classes, alpha, c.Delta); err != nil {
			return nil, nil, err
		}
		total := 0
		for _, k := range classes {
			if total += k.N; total > MaxCalibration { // each k.N ≤ 2⁵³: no overflow
				return nil, nil, fmt.Errorf("classes hold more than 2⁵³ calibration anchors in all")
			}
		}
		if total != c.N {
			return nil, nil, fmt.Errorf("classes hold %d calibration units in all, but calibration.n is %d", total, c.N)
		}
	} else if f.Classes != nil {
		return nil, nil, fmt.Errorf("classes given for calibration mode %v (only class has them)", c.Mode)
	}
	if k := c.Class; k != nil {
		switch {
		case c.Mode != OnePerAnchor && c.Mode != PAC:
			return nil, nil, fmt.Errorf("calibration.class (label %d) given for mode %v: a set for one class's anchors has one threshold, from one positive each (mode one or pac)", k.Label, c.Mode)
		case c.Trim != nil || c.OverAll != nil:
			return nil, nil, fmt.Errorf("calibration.class (label %d) given with a trim or over_all: one class's threshold keeps all its units", k.Label)
		}
	}
	if c.Pairs && c.Mode == Pooled {
		return nil, nil, fmt.Errorf("calibration.pairs given for mode pooled (which pools every positive)")
	}
	if t := c.Trim; t != nil {
		switch {
		case !c.Pairs || c.Mode == Class:
			return nil, nil, fmt.Errorf("calibration.trim given without pairs, or for mode class (which keeps every pair)")
		case t.Pairs <= c.N || t.Pairs > MaxCalibration:
			return nil, nil, fmt.Errorf("calibration.trim.pairs %d: want more than n = %d", t.Pairs, c.N)
		case t.Anchors < 1 || t.ClassPairs < 1 || 2*t.ClassPairs > t.Anchors || t.ClassPairs > t.Pairs:
			return nil, nil, fmt.Errorf("calibration.trim: %d pairs of %d anchors in class %d: want 1 ≤ pairs ≤ anchors/2, and no more than the %d pairs in all", t.ClassPairs, t.Anchors, t.Class, t.Pairs)
		}
	}
	if want := guaranteeOf(c.Mode, c.Delta); f.Guarantee != want {
		return nil, nil, fmt.Errorf("guarantee %q contradicts calibration mode %v (%q)", f.Guarantee, c.Mode, want)
	}
	if c.N < 1 {
		return nil, nil, fmt.Errorf("calibration.n %d, want at least 1", c.N)
	}
	r0, err := RankOf(c.Mode, c.N, alpha, c.Delta)
	if err != nil {
		return nil, nil, err
	}
	if r0 != c.Rank {
		return nil, nil, fmt.Errorf("calibration.rank %d, but n = %d and alpha = %v give %d (mode %v)", c.Rank, c.N, alpha, r0, c.Mode)
	}
	if err := checkTie("calibration.tie", c.Tie, c.N, c.Rank); err != nil {
		return nil, nil, err
	}
	if c.Tie != nil && (c.Mode == Class || c.Mode == Pooled) {
		return nil, nil, fmt.Errorf("calibration.tie given for mode %v (a class set's classes each say their own; a pooled set has no guarantee to qualify)", c.Mode)
	}
	if c.Copies < 0 || c.Copies >= c.N {
		return nil, nil, fmt.Errorf("calibration.copies %d: want 0 ≤ copies < n = %d", c.Copies, c.N)
	}
	n, rank := c.N, c.Rank // the threshold's own
	if o := c.OverAll; o != nil {
		if err := checkOverAll(c, alpha); err != nil {
			return nil, nil, err
		}
		n, rank = o.N, o.Rank
	}
	t := float64(*f.Threshold)
	switch {
	case math.IsNaN(t) || t < 0:
		return nil, nil, fmt.Errorf("threshold %v, want ≥ 0", t)
	case math.IsInf(t, 1) != (rank > n):
		return nil, nil, fmt.Errorf("threshold %v contradicts rank %d of n = %d", t, rank, n)
	case f.OOD != nil && !(t > 0 && !math.IsInf(t, 1)):
		// Refused here, not by the next service that starts with it.
		return nil, nil, fmt.Errorf("threshold %v with an ood_calibration: %s", t, OODThresholdRule)
	}
	return &Set{Geometry: g, Threshold: t, Alpha: alpha, Calibration: c, Classes: classes, Fit: f.Fit, Reference: f.Reference, OOD: f.OOD}, &f, nil
}

// decodeFile decodes a set file's fields as encoding/json does, unknown
// fields refused. A well-formed file's geometry and OOD reference pool —
// d² numbers, or the pool's n × d — are read in one pass
// (decodeFast): a d = 1536 ellipsoid's file in 0.3 s where encoding/json
// alone took 1.6 s. Anything decodeFast does not read is decoded by
// encoding/json, whose error names what is wrong.
func decodeFile(data []byte) (fileSet, error) {
	if f, ok := decodeFast(data); ok {
		return f, nil
	}
	return decodeSlow(data)
}

// decodeSlow is decodeFile by encoding/json alone: the reading decodeFast
// must agree with. A key given twice in an object, at any level, is
// refused (repeatedKey), where encoding/json would keep the last copy.
func decodeSlow(data []byte) (fileSet, error) {
	if at, earlier := repeatedKey(data, ""); at != "" {
		return fileSet{}, repeatedError(at, earlier)
	}
	var f fileSet
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f)
	return f, err
}

// repeatedKey is the path under path of the first key that an object in
// the JSON value b gives twice ("threshold", "calibration.n",
// "classes[1].name"), and the key it repeats: the same, or the same in
// another case, which encoding/json reads into the same field. A set file
// with a field twice was read with the last copy — "threshold": 9.48,
// then "threshold": 0.5, served at 0.5 — while a reader of the file sees
// the first, and other parsers take that one. It is "" where no key
// repeats, and where b is not well formed (its decoding says what is
// wrong). An array without an object in it (Σ's, a pool's rows) is
// passed over at the cost of looking for a '{'.
func repeatedKey(b []byte, path string) (at, earlier string) {
	b = bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(b) > 0 && b[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(b))
		if _, err := dec.Token(); err != nil {
			return "", ""
		}
		var keys []string
		for dec.More() {
			tok, err := dec.Token()
			k, ok := tok.(string)
			if err != nil || !ok {
				return "", ""
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			for _, o := range keys {
				if strings.EqualFold(o, k) {
					return p, o
				}
			}
			keys = append(keys, k)
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return "", ""
			}
			if at, earlier := repeatedKey(v, p); at != "" {
				return at, earlier
			}
		}
	case len(b) > 0 && b[0] == '[' && bytes.IndexByte(b, '{') >= 0:
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil {
			return "", ""
		}
		for i, e := range elems {
			if at, earlier := repeatedKey(e, fmt.Sprintf("%s[%d]", path, i)); at != "" {
				return at, earlier
			}
		}
	}
	return "", ""
}

// distinctKeys reports that no object in the JSON value b gives a key
// twice, the same or in another case, as decodeFast's check: in one pass
// over the bytes where jsonscan reads them, an array of numbers (a head's
// weights, the OOD calibration's scores) passed over to its bracket, so
// that an ordinary file's reading takes no longer (repeatedKey, by
// encoding/json, added a fifth to a file with a 768 × 256 head and 200 000
// scores). It is false also where jsonscan does not read b (an escaped
// key): decodeSlow then reads the file, and names a key repeated.
func distinctKeys(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(b) > 0 && b[0] == '{':
		members, ok := jsonscan.MembersSkim(b, []string{}) // keeping no member's numbers
		if !ok {
			return false
		}
		for i, m := range members {
			for _, o := range members[:i] {
				if strings.EqualFold(o.Key, m.Key) {
					return false
				}
			}
			if !distinctKeys(m.Value) {
				return false
			}
		}
	case len(b) > 0 && b[0] == '[' && bytes.IndexByte(b, '{') >= 0: // the classes, a few
		at, _ := repeatedKey(b, "")
		return at == ""
	}
	return true
}

// repeatedError is the refusal of a key at (repeatedKey's path) that
// repeats earlier.
func repeatedError(at, earlier string) error {
	if at == earlier || strings.HasSuffix(at, "."+earlier) {
		return fmt.Errorf("%s is given twice (parsers disagree on which copy wins)", at)
	}
	return fmt.Errorf("%s repeats %q in another case (keys are read without case, and parsers disagree on which copy wins)", at, earlier)
}

// decodeFast is decodeFile's reading of a well-formed file whose keys are
// distinct, unescaped and ASCII: the geometry and the reference pool by
// jsonscan, the other members, a few hundred bytes, by encoding/json. ok is
// false for anything else — a key repeated at any level included, which
// decodeSlow refuses —; it is never true where encoding/json would read
// the file differently (FuzzDecodeFast).
func decodeFast(data []byte) (f fileSet, ok bool) {
	members, ok := jsonscan.Members(data)
	if !ok {
		return fileSet{}, false
	}
	var (
		rest      = []byte{'{'} // the other members, for encoding/json
		geom      geometry.Spec
		reference *Reference
	)
	for _, m := range members {
		switch {
		case m.Key == "geometry":
			if geom.UnmarshalJSON(m.Value) != nil {
				return fileSet{}, false
			}
		case m.Key == "ood_reference":
			if reference, ok = referenceFast(m.Value); !ok {
				return fileSet{}, false
			}
		case strings.EqualFold(m.Key, "geometry") || strings.EqualFold(m.Key, "ood_reference") || !ascii(m.Key):
			return fileSet{}, false // encoding/json matches keys without case
		default:
			if len(rest) > 1 {
				rest = append(rest, ',')
			}
			rest = append(append(append(append(rest, '"'), m.Key...), '"', ':'), m.Value...)
		}
	}
	rest = append(rest, '}')
	if !distinctKeys(rest) {
		return fileSet{}, false
	}
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	if dec.Decode(&f) != nil {
		return fileSet{}, false
	}
	f.Geometry, f.Reference = geom, reference
	return f, true
}

// referenceFast reads an ood_reference member as decodeFast does: its rows
// by jsonscan, its other fields by encoding/json.
func referenceFast(b []byte) (*Reference, bool) {
	members, ok := jsonscan.Members(b)
	if !ok {
		return nil, false
	}
	r := new(Reference)
	for _, m := range members {
		var err error
		switch m.Key {
		case "source":
			err = json.Unmarshal(m.Value, &r.Source)
		case "seed":
			err = json.Unmarshal(m.Value, &r.Seed)
		case "n":
			err = json.Unmarshal(m.Value, &r.N)
		case "index":
			err = json.Unmarshal(m.Value, &r.Index)
		case "embeddings":
			err = json.Unmarshal(m.Value, &r.Embeddings)
		case "rows":
			// Made once at its size, one value a comma and one: the pool
			// is most of a large file, and growing it by doubling kept up
			// to twice its values (a 10 000 × 1280 pool: 100 MB for 51).
			rows := make([]float32, 0, bytes.Count(m.Value, []byte{','})+1)
			if r.Rows, ok = jsonscan.Floats(rows, m.Value); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
		if err != nil {
			return nil, false
		}
	}
	return r, true
}

// ascii says s is all ASCII.
func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Load reads and validates a set file. Errors name the file.
func Load(path string) (*Set, error) {
	data, err := os.ReadFile(path) // sized by the file's: io.ReadAll's doublings copied 50 MB files 0.25 s
	if err != nil {
		return nil, err
	}
	s, err := readBytes(data)
	if err != nil {
		return nil, fmt.Errorf("conformal: %s: %w", path, err)
	}
	return s, nil
}

// otherFormat is notASet for a JSON object whose "format" names another
// file (a bundles' manifest.json), nil otherwise: its nulls or fields are
// then not what is wrong with it.
func otherFormat(data []byte) error {
	var head struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(data, &head) != nil || head.Format == "" || head.Format == FileFormat {
		return nil
	}
	return notASet(head.Format)
}

// notASet is the error for a JSON document of another format.
func notASet(format string) error {
	if format == "" {
		return fmt.Errorf("not a ccs set file: no \"format\" (want %q)", FileFormat)
	}
	return fmt.Errorf("not a ccs set file: format %q, want %q", format, FileFormat)
}

// refuseNull refuses a JSON null anywhere in a set file: encoding/json
// reads a null number as 0 and a null array as absent, so a NaN that a
// JavaScript writer turned into null would become a coordinate, a score or
// a parameter of 0. The error names where the null is
// ("ood_reference.rows[3]"). A document without the bytes "null" has none,
// and is not walked token by token (a d = 768 single-norm's 590 000
// parameters took 0.4 s).
func refuseNull(data []byte) error {
	if !bytes.Contains(data, []byte("null")) {
		return nil
	}
	type frame struct {
		array bool
		key   string // an object's current key
		i     int    // an array's current index
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			switch {
			case f.array:
				fmt.Fprintf(&b, "[%d]", f.i)
			case b.Len() > 0:
				b.WriteString("." + f.key)
			default:
				b.WriteString(f.key)
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	expectKey := false // the next token is an object's key (or its end)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("not a ccs set file: %w", jsonerr.ExplainStream(err, data))
		}
		if expectKey {
			if k, ok := tok.(string); ok {
				stack[len(stack)-1].key = k
				expectKey = false
				continue
			}
		}
		if tok == json.Delim('}') || tok == json.Delim(']') {
			stack = stack[:len(stack)-1]
			expectKey = len(stack) > 0 && !stack[len(stack)-1].array
			continue
		}
		// A value: an array's next element, or an object's member.
		if len(stack) > 0 && stack[len(stack)-1].array {
			stack[len(stack)-1].i++
		}
		switch tok {
		case nil:
			if len(stack) == 0 {
				return fmt.Errorf("not a ccs set file: the document is null")
			}
			return fmt.Errorf("%s is null: a set file holds no nulls (a NaN written by JavaScript becomes null)", path())
		case json.Delim('{'):
			stack = append(stack, frame{})
			expectKey = true
		case json.Delim('['):
			stack = append(stack, frame{array: true, i: -1})
		default:
			expectKey = len(stack) > 0 && !stack[len(stack)-1].array
		}
	}
}

// fieldError is a file's bad field, in its own words, that still reports
// the package's error it is (errors.Is).
type fieldError struct {
	msg string
	err error
}

func (e *fieldError) Error() string { return e.msg }
func (e *fieldError) Unwrap() error { return e.err }

// checkOverAll checks a set file's calibration.over_all: a class-conditional
// calibration's on pairs, fewer pairs than n, at its rank, and a trim that
// counts all n pairs where a tenth or more were left out.
func checkOverAll(c Info, alpha float64) error {
	o := c.OverAll
	switch {
	case c.Mode != Class:
		return fmt.Errorf("calibration.over_all given for mode %v (only a class-conditional calibration on pairs has it)", c.Mode)
	case !c.Pairs:
		return fmt.Errorf("calibration.over_all given for mode %v without pairs (only a class-conditional calibration on pairs has it)", c.Mode)
	}
	if o.N < 1 || o.N >= c.N {
		return fmt.Errorf("calibration.over_all.n %d: want 1 ≤ n < calibration.n = %d", o.N, c.N)
	}
	r, err := RankOf(c.Mode, o.N, alpha, c.Delta)
	if err != nil {
		return err
	}
	if r != o.Rank {
		return fmt.Errorf("calibration.over_all.rank %d, but n = %d and alpha = %v give %d", o.Rank, o.N, alpha, r)
	}
	// A trim where a tenth or more were left out, and only there, as
	// proportional records it (the warning a judgement over all classes
	// gives).
	switch tenth := 10*(c.N-o.N) >= c.N; {
	case tenth && o.Trim == nil:
		return fmt.Errorf("calibration.over_all: %d of the %d pairs kept, and no trim: want one where a tenth or more were left out", o.N, c.N)
	case !tenth && o.Trim != nil:
		return fmt.Errorf("calibration.over_all: %d of the %d pairs kept, and a trim: want none where less than a tenth were left out", o.N, c.N)
	}
	if t := o.Trim; t != nil {
		switch {
		case t.Pairs != c.N:
			return fmt.Errorf("calibration.over_all.trim.pairs %d: want calibration.n = %d (every pair)", t.Pairs, c.N)
		case t.Anchors < 1 || t.ClassPairs < 1 || 2*t.ClassPairs > t.Anchors || t.ClassPairs > t.Pairs:
			return fmt.Errorf("calibration.over_all.trim: %d pairs of %d anchors in class %d: want 1 ≤ pairs ≤ anchors/2, and no more than the %d pairs in all", t.ClassPairs, t.Anchors, t.Class, t.Pairs)
		}
	}
	return nil
}

// checkTie refuses a tie (field, Info.Tie or a class's) that no threshold
// of rank r among n scores has: one below the rank or beyond the scores.
func checkTie(field string, t *Tie, n, r int) error {
	if t == nil {
		return nil
	}
	if !(t.Below >= 0 && t.Below < r && r < t.AtOrBelow && t.AtOrBelow <= n) {
		return fmt.Errorf("%s: %d scores below and %d at or below the threshold of rank %d of n = %d: want below < rank < at_or_below ≤ n", field, t.Below, t.AtOrBelow, r, n)
	}
	return nil
}
