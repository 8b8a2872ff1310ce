package conformal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/head"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/internal/parallel"
)

// Mode is how calibration anchors contribute scores.
type Mode int

const (
	// OnePerAnchor takes one positive per calibration anchor, chosen by a
	// seeded RNG: the paper's Lemma 1, the mode that carries the guarantee.
	OnePerAnchor Mode = iota + 1
	// Pooled takes all k positives of every anchor, as the paper's public
	// code does. The scores of one anchor's positives are not exchangeable
	// with a test anchor's single positive, so the guarantee is approximate.
	Pooled
	// PAC takes one positive per anchor, as OnePerAnchor, and the
	// training-conditional rank PACRank(n, α, δ): with probability ≥ 1 − δ
	// over the calibration draw, the set's coverage is at least 1 − α.
	PAC
	// Class is class-conditional (Mondrian) calibration: one positive per
	// anchor and one threshold per class from that class's anchors, so that
	// every class gets its 1 − α (marginally over the draw; with δ > 0,
	// PAC per class). It needs the calibration anchors' labels, and an
	// anchor's label to decide membership.
	Class
)

// String returns "one-per-anchor", "pooled" or "pac".
func (m Mode) String() string {
	switch m {
	case OnePerAnchor:
		return "one-per-anchor"
	case Pooled:
		return "pooled"
	case PAC:
		return "pac"
	case Class:
		return "class"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// valid reports whether m is a known mode.
func (m Mode) valid() bool { return m == OnePerAnchor || m == Pooled || m == PAC || m == Class }

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("conformal: unknown calibration mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// ParseMode reads "one" (or "one-per-anchor"), "pooled" and "pac".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "one", "one-per-anchor":
		return OnePerAnchor, nil
	case "pooled":
		return Pooled, nil
	case "pac":
		return PAC, nil
	case "class":
		return Class, nil
	}
	return 0, fmt.Errorf("unknown calibration mode %q (want one, pooled, pac or class)", s)
}

// Scores returns the calibration scores of cal under g: one positive per
// anchor (chosen with a PCG seeded by seed) or all positives pooled.
func Scores(g geometry.Geometry, cal *bundle.Bundle, mode Mode, seed uint64) ([]float64, error) {
	if g.Dim() != cal.D {
		return nil, fmt.Errorf("conformal: geometry has dimension %d, calibration embeddings %d", g.Dim(), cal.D)
	}
	switch mode {
	case OnePerAnchor, PAC, Class: // the same positives: PAC differs in the rank, Class in the grouping
		rng := rand.New(rand.NewPCG(seed, 0x63636f6e65)) // "cc one"
		diffs := make([]float32, cal.N*cal.D)
		for i := range cal.N {
			cal.PositiveDiff(diffs[i*cal.D:(i+1)*cal.D], i, rng.IntN(cal.K))
		}
		return g.Scores(nil, diffs), nil
	case Pooled:
		out := make([]float64, cal.N*cal.K)
		diffs := make([]float32, cal.K*cal.D)
		for i := range cal.N {
			g.Scores(out[i*cal.K:(i+1)*cal.K], cal.PositiveDiffs(diffs, i))
		}
		return out, nil
	}
	return nil, fmt.Errorf("conformal: unknown calibration mode %v", mode)
}

// Options configures Calibrate. The zero value is one positive per anchor,
// seed 0, and an error when the rank exceeds n.
type Options struct {
	Mode Mode   // zero means OnePerAnchor
	Seed uint64 // picks the positive of each anchor in OnePerAnchor and PAC modes
	// Delta is PAC's δ: the probability over the calibration draw that the
	// coverage falls below 1 − α. Only PAC uses it.
	Delta float64
	// AllowInfinite accepts a +Inf threshold (the whole space) when there
	// are too few calibration scores, instead of returning the error. The
	// set then says so in Warnings.
	AllowInfinite bool
}

// Info records how a set was calibrated.
type Info struct {
	Mode  Mode    `json:"mode"`
	N     int     `json:"n"`    // calibration scores
	Rank  int     `json:"rank"` // ⌈(1−α)(n+1)⌉, or PAC's; > N means +Inf
	Seed  uint64  `json:"seed"`
	Delta float64 `json:"delta,omitempty"` // PAC's δ
}

// Guarantee says what the set's threshold promises, as its file does:
// "exact", "training-conditional", "class-conditional" (with ",
// training-conditional" for PAC per class) or "approximate".
func (s *Set) Guarantee() string { return guaranteeOf(s.Calibration.Mode, s.Calibration.Delta) }

// guaranteeOf is a set file's guarantee field for a calibration mode:
// "exact" (marginal, one positive per anchor), "training-conditional"
// (PAC) or "approximate" (pooled).
func guaranteeOf(m Mode, delta float64) string {
	switch {
	case m == PAC:
		return "training-conditional"
	case m == Class && delta > 0:
		return "class-conditional, training-conditional"
	case m == Class:
		return "class-conditional"
	case m == Pooled:
		return "approximate"
	}
	return "exact"
}

// RankOf is the rank a calibration in mode m (with PAC's δ) takes among n
// scores at level α.
func RankOf(m Mode, n int, alpha, delta float64) (int, error) {
	if m == PAC || (m == Class && delta > 0) {
		return PACRank(n, alpha, delta)
	}
	return Rank(n, alpha)
}

// Quantile returns the threshold a calibration with opt's mode (and δ)
// takes among scores at level α, and its rank; scores is reordered. When
// the rank exceeds n it returns +Inf with a *TooFewError, as Threshold.
func Quantile(scores []float64, alpha float64, opt Options) (float64, int, error) {
	r, err := RankOf(opt.Mode, len(scores), alpha, opt.Delta)
	if err != nil {
		return math.NaN(), 0, err
	}
	q, err := selectRank(scores, r, alpha, opt.Delta)
	return q, r, err
}

// FitInfo records how the geometry was obtained, for the file's reader.
type FitInfo struct {
	Method string  `json:"method"`          // e.g. "none", "covariance of anchor−positive differences"
	N      int     `json:"n,omitempty"`     // anchors used
	Seed   uint64  `json:"seed,omitempty"`  // seed of the split that chose them
	Ridge  float64 `json:"ridge,omitempty"` // added to Σ's diagonal
	// Training is the training recipe and its outcome, as the trainer
	// records them (opaque here: this package imports no training code).
	Training json.RawMessage `json:"training,omitempty"`
}

// ErrNotCalibrated reports a set that has a geometry but no threshold yet.
var ErrNotCalibrated = errors.New("conformal: the set is not calibrated (run ccs calibrate -set)")

// Set is a fitted contrastive conformal set: a geometry, its calibrated
// threshold and the facts behind it. A point z is in the set around anchor Z
// when φ(Z − z) ≤ Threshold.
type Set struct {
	Geometry    geometry.Geometry
	Threshold   float64
	Alpha       float64
	Calibration Info
	Fit         *FitInfo
	// Reference, when not nil, is a pool of in-distribution embeddings kept
	// with the set for the per-input OOD scores (package ood).
	Reference *Reference
	// Classes, for a class-conditional set (Mode Class), are the
	// per-class thresholds, by increasing label; Threshold is then the one
	// over all anchors (no class guarantee).
	Classes []ClassThreshold
	// OOD, when not nil, calibrates the per-input OOD score on held-out
	// in-distribution inputs: what a conformal OOD test needs (package
	// ood). It comes with a Reference.
	OOD *OODCalibration
}

// Calibrate computes g's threshold on the calibration bundle cal. The bundle
// must be disjoint from everything used to choose g (the caller's duty:
// the guarantee rests on it).
func Calibrate(g geometry.Geometry, cal *bundle.Bundle, alpha float64, opt Options) (*Set, error) {
	if err := CheckAlpha(alpha); err != nil {
		return nil, err
	}
	if opt.Mode == 0 {
		opt.Mode = OnePerAnchor
	}
	switch {
	case opt.Mode == PAC || (opt.Mode == Class && opt.Delta != 0):
		if err := CheckDelta(opt.Delta); err != nil {
			return nil, err
		}
	case opt.Mode != Class:
		opt.Delta = 0
	}
	var classes []ClassThreshold
	if opt.Mode == Class {
		var err error
		if classes, err = calibrateClasses(g, cal, alpha, opt); err != nil {
			return nil, err
		}
	}
	scores, err := Scores(g, cal, opt.Mode, opt.Seed)
	if err != nil {
		return nil, err
	}
	// A class-conditional set also keeps the threshold over all its
	// anchors, for the anchors whose class a caller chooses not to give.
	q, r, err := Quantile(scores, alpha, opt)
	if err != nil && !(opt.AllowInfinite && errors.Is(err, ErrTooFewCalibration)) {
		return nil, err
	}
	return &Set{Geometry: g, Threshold: q, Alpha: alpha, Classes: classes,
		Calibration: Info{Mode: opt.Mode, N: len(scores), Rank: r, Seed: opt.Seed, Delta: opt.Delta}}, nil
}

// Uncalibrated returns a set that holds a fitted geometry and no threshold;
// Calibrate it before use.
func Uncalibrated(g geometry.Geometry, fit *FitInfo) *Set {
	return &Set{Geometry: g, Threshold: math.NaN(), Fit: fit}
}

// Calibrated reports whether the set has a threshold.
func (s *Set) Calibrated() bool { return s.Calibration.Mode != 0 }

// Guaranteed reports whether the set carries the conformal guarantee: it
// was calibrated with one positive per calibration anchor (not pooled),
// marginally (OnePerAnchor), training-conditionally (PAC) or per class
// (Class).
func (s *Set) Guaranteed() bool { return s.Calibrated() && s.Calibration.Mode != Pooled }

// Warnings lists what a reader of this set's numbers must know: a whole-space
// set, or a pooled (approximate) calibration.
func (s *Set) Warnings() []string {
	var w []string
	for _, c := range s.Classes {
		if math.IsInf(c.Threshold, 1) {
			w = append(w, fmt.Sprintf("class %d: %s", c.Label, (&TooFewError{N: c.N, Rank: c.Rank, Alpha: s.Alpha, Delta: s.Calibration.Delta}).Reason()))
		}
	}
	if math.IsInf(s.Threshold, 1) {
		w = append(w, (&TooFewError{N: s.Calibration.N, Rank: s.Calibration.Rank, Alpha: s.Alpha, Delta: s.Calibration.Delta}).Reason())
	}
	if d := geometry.Describe(s.Geometry); d.ProjectedVolume() {
		w = append(w, fmt.Sprintf("the %d→%d projection head is not square: log-volumes are measured in its %d-dimensional output space, not comparable with sets on the %d-dimensional embeddings",
			d.HeadIn, d.HeadOut, d.HeadOut, d.HeadIn))
	}
	if s.Calibration.Mode == Pooled {
		w = append(w, "pooled calibration (all positives of each anchor): the 1−α coverage is approximate, not guaranteed — the positives of one anchor are not exchangeable with a test anchor's single positive, so when an anchor's positives share a spread the set undercovers, the more so the fewer the anchors; -calibration one gives the guarantee")
	}
	return w
}

// Contains reports whether the point with difference x = anchor − point is
// inside the set around an anchor of class *label (nil for a set with one
// threshold; a class-conditional set needs it: ThresholdOf).
func (s *Set) Contains(x []float32, label *int64) (bool, error) {
	q, err := s.ThresholdOf(label)
	if err != nil {
		return false, err
	}
	return s.Geometry.Scores(make([]float64, 1), x)[0] <= q, nil
}

// Members writes into dst (allocated when nil) whether each point, given by
// its difference row anchor − point in diffs, is inside the set around an
// anchor of class *label (as Contains), on all cores. The decisions are
// those of Contains: geometries with a fast score (geometry.FastScorer)
// are scored fast and rescored exactly only near the threshold
// (geometry.Members).
func (s *Set) Members(dst []bool, diffs []float32, label *int64) ([]bool, error) {
	q, err := s.ThresholdOf(label)
	if err != nil {
		return nil, err
	}
	d := s.Geometry.Dim()
	n := len(diffs) / d
	if len(diffs) != n*d {
		panic("ccs/conformal: diffs is not a whole number of rows")
	}
	if dst == nil {
		dst = make([]bool, n)
	}
	if len(dst) != n {
		panic("ccs/conformal: Members: dst length mismatch")
	}
	const block = 1024
	parallel.For(n, block, 0, func(_, lo, hi int) {
		geometry.Members(s.Geometry, q, dst[lo:hi], nil, diffs[lo*d:hi*d])
	})
	return dst, nil
}

// CheckDim is where embeddings meet a set: it returns nil when rows of the
// given shape (the last axis is the dimension) suit the set's input
// dimension, and otherwise an error naming source (a file and its array,
// a request field), the shape found and the dimension wanted. Every reader
// of embeddings for a set calls it — files, request bodies, collections,
// reference pools, OOD calibration inputs — before anything is scored.
func (s *Set) CheckDim(source string, shape ...int) error {
	return CheckDim(source, s.Geometry.Dim(), shape...)
}

// CheckDim is Set.CheckDim for a set of dimension dim.
func CheckDim(source string, dim int, shape ...int) error {
	if len(shape) > 0 && shape[len(shape)-1] == dim {
		return nil
	}
	return &DimError{Source: source, Shape: shape, Dim: dim}
}

// DimError reports embeddings whose dimension is not the set's.
type DimError struct {
	Source string // the file and array, or the request field
	Shape  []int  // the shape found; its last axis is the dimension
	Dim    int    // the set's dimension
}

func (e *DimError) Error() string {
	got := "no dimension"
	if len(e.Shape) > 0 {
		got = fmt.Sprintf("dimension %d", e.Shape[len(e.Shape)-1])
	}
	return fmt.Sprintf("%s: embeddings of shape %s, %s; the set's dimension is %d", e.Source, bundle.FormatShape(e.Shape), got, e.Dim)
}

// LogVolume is the log-volume of the set.
func (s *Set) LogVolume() float64 { return s.Geometry.LogVolume(s.Threshold) }

// File format identifiers.
const (
	FileFormat  = "ccs-set"
	FileVersion = 1
)

// fileSet is the file's layout. An uncalibrated set (a fitted geometry)
// omits alpha, threshold, guarantee and calibration.
type fileSet struct {
	Format      string          `json:"format"`
	Version     int             `json:"version"`
	Dim         int             `json:"dim"`
	Alpha       *float64        `json:"alpha,omitempty"`
	Threshold   *threshold      `json:"threshold,omitempty"`
	Guarantee   string          `json:"guarantee,omitempty"`
	Geometry    geometry.Spec   `json:"geometry"`
	Head        *head.Linear    `json:"head,omitempty"` // dim → geometry.dim; scores are φ(W·x)
	Calibration *Info           `json:"calibration,omitempty"`
	Classes     []classFile     `json:"classes,omitempty"` // class-conditional thresholds
	Fit         *FitInfo        `json:"fit,omitempty"`
	Reference   *Reference      `json:"ood_reference,omitempty"`
	OOD         *OODCalibration `json:"ood_calibration,omitempty"`
}

// classFile is a class's threshold in the file.
type classFile struct {
	Label     int64      `json:"label"`
	N         int        `json:"n"`
	Rank      int        `json:"rank"`
	Threshold *threshold `json:"threshold"`
}

// threshold is a float64 that writes +Inf as the JSON string "+Inf".
type threshold float64

func (t threshold) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(t), 1) {
		return []byte(`"+Inf"`), nil
	}
	return json.Marshal(float64(t))
}

func (t *threshold) UnmarshalJSON(b []byte) error {
	if string(b) == `"+Inf"` {
		*t = threshold(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("threshold: want a number or \"+Inf\": %w", err)
	}
	*t = threshold(f)
	return nil
}

// WriteJSON writes the set as an indented, versioned JSON document.
func (s *Set) WriteJSON(w io.Writer) error {
	g, h := head.Split(s.Geometry)
	spec, err := geometry.Encode(g)
	if err != nil {
		return err
	}
	f := fileSet{Format: FileFormat, Version: FileVersion, Dim: s.Geometry.Dim(), Geometry: spec, Head: h, Fit: s.Fit,
		Reference: s.Reference, OOD: s.OOD}
	if err := checkOOD(s.Reference, s.OOD, s.Geometry.Dim()); err != nil {
		return fmt.Errorf("conformal: %w", err)
	}
	if s.Calibrated() {
		alpha, t, c := s.Alpha, threshold(s.Threshold), s.Calibration
		f.Alpha, f.Threshold, f.Calibration = &alpha, &t, &c
		f.Guarantee = guaranteeOf(c.Mode, c.Delta)
		for _, k := range s.Classes {
			t := threshold(k.Threshold)
			f.Classes = append(f.Classes, classFile{Label: k.Label, N: k.N, Rank: k.Rank, Threshold: &t})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
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

// readJSON is ReadJSON without its errors' prefix.
func readJSON(r io.Reader) (*Set, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if err := refuseNull(data); err != nil {
		return nil, err
	}
	var f fileSet
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a ccs set file: %w", err)
	}
	if f.Format != FileFormat {
		return nil, fmt.Errorf("format %q, want %q", f.Format, FileFormat)
	}
	if f.Version != FileVersion {
		return nil, fmt.Errorf("version %d; this ccs reads version %d", f.Version, FileVersion)
	}
	inDim := f.Geometry.Dim
	if f.Head != nil {
		if f.Head.Out != f.Geometry.Dim {
			return nil, fmt.Errorf("head.out %d differs from geometry.dim %d", f.Head.Out, f.Geometry.Dim)
		}
		inDim = f.Head.In
	}
	if inDim != f.Dim {
		return nil, fmt.Errorf("dim %d, but the geometry (and head) take %d", f.Dim, inDim)
	}
	var g geometry.Geometry
	g, err = geometry.Decode(f.Geometry)
	if err != nil {
		return nil, err // it names the geometry
	}
	if f.Head != nil {
		if g, err = head.NewProjected(f.Head, g); err != nil {
			return nil, err
		}
	}
	if err := checkOOD(f.Reference, f.OOD, f.Dim); err != nil {
		return nil, err
	}
	if f.Calibration == nil {
		if f.Alpha != nil || f.Threshold != nil || f.Guarantee != "" {
			return nil, fmt.Errorf("alpha, threshold or guarantee given without calibration")
		}
		if f.OOD != nil {
			return nil, fmt.Errorf("ood_calibration given without calibration: the OOD score is normalised by the threshold")
		}
		s := Uncalibrated(g, f.Fit)
		s.Reference = f.Reference
		return s, nil
	}
	if f.Alpha == nil || f.Threshold == nil {
		return nil, fmt.Errorf("a calibrated set needs alpha and threshold")
	}
	alpha := *f.Alpha
	if !(alpha > 0 && alpha < 1) {
		return nil, &fieldError{fmt.Sprintf("alpha %v, want 0 < alpha < 1", alpha), ErrAlpha}
	}
	c := *f.Calibration
	if !c.Mode.valid() {
		return nil, fmt.Errorf("calibration.mode is missing")
	}
	switch {
	case c.Mode == PAC || (c.Mode == Class && c.Delta != 0):
		if err := CheckDelta(c.Delta); err != nil {
			return nil, fmt.Errorf("calibration.delta: %w", err)
		}
	case c.Mode != Class && c.Delta != 0:
		return nil, fmt.Errorf("calibration.delta %v given for mode %v (only pac and class have one)", c.Delta, c.Mode)
	}
	var classes []ClassThreshold
	for i, k := range f.Classes {
		if k.Threshold == nil {
			return nil, fmt.Errorf("classes[%d] (label %d): threshold is missing", i, k.Label)
		}
		classes = append(classes, ClassThreshold{Label: k.Label, N: k.N, Rank: k.Rank, Threshold: float64(*k.Threshold)})
	}
	if c.Mode == Class {
		if err := checkClasses(classes, alpha, c.Delta); err != nil {
			return nil, err
		}
		total := 0
		for _, k := range classes {
			if total += k.N; total > MaxCalibration { // each k.N ≤ 2⁵³: no overflow
				return nil, fmt.Errorf("classes hold more than 2⁵³ calibration anchors in all")
			}
		}
		if total != c.N {
			return nil, fmt.Errorf("classes hold %d calibration anchors in all, but calibration.n is %d", total, c.N)
		}
	} else if f.Classes != nil {
		return nil, fmt.Errorf("classes given for calibration mode %v (only class has them)", c.Mode)
	}
	if want := guaranteeOf(c.Mode, c.Delta); f.Guarantee != want {
		return nil, fmt.Errorf("guarantee %q contradicts calibration mode %v (%q)", f.Guarantee, c.Mode, want)
	}
	if c.N < 1 {
		return nil, fmt.Errorf("calibration.n %d, want at least 1", c.N)
	}
	r0, err := RankOf(c.Mode, c.N, alpha, c.Delta)
	if err != nil {
		return nil, err
	}
	if r0 != c.Rank {
		return nil, fmt.Errorf("calibration.rank %d, but n = %d and alpha = %v give %d (mode %v)", c.Rank, c.N, alpha, r0, c.Mode)
	}
	t := float64(*f.Threshold)
	switch {
	case math.IsNaN(t) || t < 0:
		return nil, fmt.Errorf("threshold %v, want ≥ 0", t)
	case math.IsInf(t, 1) != (c.Rank > c.N):
		return nil, fmt.Errorf("threshold %v contradicts rank %d of n = %d", t, c.Rank, c.N)
	}
	return &Set{Geometry: g, Threshold: t, Alpha: alpha, Calibration: c, Classes: classes, Fit: f.Fit, Reference: f.Reference, OOD: f.OOD}, nil
}

// Load reads and validates a set file. Errors name the file.
func Load(path string) (*Set, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	s, err := readJSON(fh)
	if err != nil {
		return nil, fmt.Errorf("conformal: %s: %w", path, err)
	}
	return s, nil
}

// refuseNull refuses a JSON null anywhere in a set file: encoding/json
// reads a null number as 0 and a null array as absent, so a NaN that a
// JavaScript writer turned into null would become a coordinate, a score or
// a parameter of 0. The error names where the null is
// ("ood_reference.rows[3]").
func refuseNull(data []byte) error {
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
			return fmt.Errorf("not a ccs set file: %w", err)
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
