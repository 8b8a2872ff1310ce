package bundle

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/internal/atomicfile"
)

// ManifestFormat names the file ccs bundle writes beside its bundles,
// manifest.json.
const ManifestFormat = "ccs-bundles"

// Manifest is manifest.json, which ccs bundle -out DIR (and Python's
// ccs.bundle with out=DIR) writes beside a plan's bundles: what was read,
// how it was split and drawn, and what each file holds.
type Manifest struct {
	Format  string `json:"format"` // ManifestFormat
	Version int    `json:"version"`
	// Command is what made the bundles: the command line, or the call.
	Command string `json:"command"`
	// Inputs are what was read, by role (embeddings, labels, …).
	Inputs map[string]ManifestInput `json:"inputs"`
	Seed   uint64                   `json:"seed"`
	K      int                      `json:"k"`
	KNeg   int                      `json:"kneg"`
	// KNegHard of each anchor's negatives are the nearest among
	// HardCandidates random ones (MakeConfig.HardNegatives); 0: none.
	KNegHard       int                `json:"kneg_hard,omitempty"`
	HardCandidates int                `json:"hard_candidates,omitempty"`
	Split          map[string]float64 `json:"split"`
	OODClasses     []int64            `json:"ood_classes,omitempty"`
	OODCalShare    float64            `json:"ood_cal_share,omitempty"`
	// RowsSHA256 is the SHA-256 of the rows the splits' index numbers, as
	// bundled (float32, little-endian, the queries' after the embeddings'
	// for relevance pairs; RowsDigest): the same for the command and
	// Python on the same values, other for the data exported again in
	// another order. A fitted set compares two splits' source rows only
	// under one such digest (Bundle.Embeddings).
	RowsSHA256 string `json:"rows_sha256,omitempty"`
	// SplitBy says what the rows were split by when not one by one:
	// "blocks" (Inputs.Blocks: each block whole in one split).
	SplitBy    string `json:"split_by,omitempty"`
	AllowFewer bool   `json:"allow_fewer,omitempty"`
	// MissingLabels is MakeConfig.MissingLabels when not refused: drop
	// or class.
	MissingLabels string `json:"missing_labels,omitempty"`
	// MinScore, for relevance pairs with scores, is the least score of a
	// relevant pair (PairIDs.MinScore); absent: any score above 0.
	MinScore *float64 `json:"min_score,omitempty"`
	// JudgedNegatives says that each query's negatives are its pairs
	// judged not relevant (MakeConfig.JudgedNegatives); absent: drawn at
	// random.
	JudgedNegatives bool `json:"judged_negatives,omitempty"`
	// Positives and Negatives say what an anchor's positives and
	// negatives are.
	Positives string `json:"positives"`
	Negatives string `json:"negatives"`
	// LabelNames are a string label column's values, in order: label i
	// is LabelNames[i] (ManifestLabelNames reads them back).
	LabelNames []string `json:"label_names,omitempty"`
	// OneLabel, for the bundles of one label's rows (Inputs.OneLabel),
	// names that label and counts the rows carrying it.
	OneLabel *ManifestOneLabel `json:"one_label,omitempty"`
	Files    []ManifestFile    `json:"files"`
	Warnings []string          `json:"warnings"`
}

// ManifestInput is one input of a Manifest: a file, or an array given in
// memory.
type ManifestInput struct {
	// Path is the file as given (FILE, or FILE:ARRAY, FILE:COLUMN); empty
	// for an array given in memory.
	Path string `json:"path,omitempty"`
	// Dtype is an array given in memory's type, as NumPy writes it
	// ("<f8", "<U7"); SHA256 hashes its bytes in C order.
	Dtype  string `json:"dtype,omitempty"`
	SHA256 string `json:"sha256"`
	Shape  []int  `json:"shape,omitempty"`
}

// ManifestOneLabel is a Manifest's one label (Inputs.OneLabel): its name
// as the labels are named (a column's number when unnamed), and the rows
// that carry it, which are the queries (less any a split share leaves
// out).
type ManifestOneLabel struct {
	Label string `json:"label"`
	Rows  int    `json:"rows"`
	// Of is how many rows the label sets hold, carrying it or not: the
	// rows every query may draw its negatives from.
	Of int `json:"of"`
}

// ManifestFile is one bundle file of a Manifest.
type ManifestFile struct {
	Split   string         `json:"split"`
	File    string         `json:"file"`
	Anchors int            `json:"anchors"`
	Classes map[string]int `json:"classes,omitempty"` // anchors per label
	// ClassesByName are Classes keyed by the labels' names, for string
	// labels (Manifest.LabelNames): what a reader of the file looks for
	// ("boot": 123 beside "0": 123; JSON's keys sort as strings, so
	// Classes reads "0", "10", "11", "2", …).
	ClassesByName map[string]int `json:"classes_by_name,omitempty"`
	Pools         map[string]int `json:"pools,omitempty"` // rows of positive_pool and negative_pool
	// Blocks counts the blocks the split's anchors are of, when split by
	// block (Manifest.SplitBy).
	Blocks int `json:"blocks,omitempty"`
}

// NewManifest describes plan, made by Make from in's items with cfg, as
// command made it; the caller adds the Inputs. Its warnings are the
// plan's.
func NewManifest(command string, in Inputs, cfg MakeConfig, plan *Plan) *Manifest {
	m := &Manifest{Format: ManifestFormat, Version: 1, Command: command, Inputs: map[string]ManifestInput{},
		Seed: cfg.Seed, K: cfg.K, KNeg: cfg.KNeg, OODClasses: cfg.OODClasses, OODCalShare: cfg.OODCalShare,
		AllowFewer: cfg.AllowFewer, LabelNames: cfg.LabelNames,
		Split:    map[string]float64{"fit": cfg.Split[0], "val": cfg.Split[1], "cal": cfg.Split[2], "test": cfg.Split[3]},
		Warnings: append([]string{}, plan.Warnings...)}
	if m.KNeg == 0 {
		m.KNeg = m.K
	}
	if cfg.HardNegatives > 0 {
		m.KNegHard, m.HardCandidates = cfg.HardNegatives, cmp.Or(cfg.HardCandidates, DefaultHardCandidates)
	}
	if cfg.MissingLabels != MissingRefused {
		m.MissingLabels = cfg.MissingLabels.String()
	}
	m.Positives, m.Negatives = relations(in, plan)
	if o := in.OneLabel; o != nil {
		m.OneLabel = &ManifestOneLabel{Label: o.Name, Rows: plan.oneLabelRows, Of: plan.rows}
	}
	if cfg.JudgedNegatives {
		m.JudgedNegatives = true
		m.Negatives = "rows judged not relevant to the query (its pairs scored 0 or less), drawn without replacement, repeated where it has fewer than kneg"
	}
	if m.KNegHard > 0 {
		m.Negatives += fmt.Sprintf("; %d of each anchor's %d the nearest to it among %d of its possible negatives drawn at random (all of them where it has no more), the rest random among those", m.KNegHard, m.KNeg, m.HardCandidates)
	}
	for s, sp := range plan.Splits {
		if sp.Omitted {
			continue
		}
		f := ManifestFile{Split: sp.Name, File: sp.Name + ".npz", Anchors: len(sp.Anchors)}
		if c := plan.Classes[s]; c != nil {
			f.Classes = map[string]int{}
			for _, l := range slices.Sorted(maps.Keys(c)) {
				f.Classes[strconv.FormatInt(l, 10)] = c[l]
				if l >= 0 && l < int64(len(cfg.LabelNames)) {
					if f.ClassesByName == nil {
						f.ClassesByName = map[string]int{}
					}
					f.ClassesByName[cfg.LabelNames[l]] = c[l]
				}
			}
		}
		if in.Blocks != nil && sp.Name != SplitNames[OOD] {
			m.SplitBy = "blocks"
			seen := map[int64]bool{}
			for _, r := range sp.Anchors {
				seen[in.Blocks[r]] = true
			}
			f.Blocks = len(seen)
		}
		if sp.PositivePool != nil || sp.NegativePool != nil {
			f.Pools = map[string]int{"positive_pool": len(sp.PositivePool), "negative_pool": len(sp.NegativePool)}
		}
		m.Files = append(m.Files, f)
	}
	return m
}

// severalLabelsPositives begins the manifest's positives for labels of
// several a row (ManifestSeveralLabelsOOD reads it back).
const severalLabelsPositives = "rows that share a label with the row (several labels a row: the rows are their own queries)"

// graded is what a relevance pairs' negatives description adds where
// some pairs are relevant at a lower grade (Inputs.Graded): they are no
// negatives either.
func graded(in Inputs) string {
	if len(in.Graded) == 0 {
		return ""
	}
	return " (at any grade: those scored below the least relevant score are neither positives nor negatives)"
}

// relations says what Make, making plan, takes as an anchor's positives
// and negatives for in.
func relations(in Inputs, plan *Plan) (positives, negatives string) {
	switch {
	case in.Embeddings.Views > 0:
		positives, negatives = "the item's other views", "other items' first views"
	case in.OneLabel != nil:
		return fmt.Sprintf("the other rows carrying %s, never the query's own row (the rows carrying it are the queries)", in.OneLabel),
			fmt.Sprintf("rows that do not carry %s, drawn from all rows", in.OneLabel)
	case in.LabelSets != nil && len(plan.Splits) > 0 && plan.Splits[len(plan.Splits)-1].Name == SplitNames[OOD]:
		return severalLabelsPositives + ", never the row itself nor a row that carries an OOD label (those are the ood split's)",
			"rows that share no label with the row and carry no OOD label, drawn from all rows but its own"
	case in.LabelSets != nil:
		return severalLabelsPositives + ", never the row itself", "rows that share no label with the row, drawn from all rows but its own"
	case in.Queries != nil && plan.selfQueries:
		return "rows relevant to the query, never the query's own row (the queries are the rows)", "rows relevant to none of the query's" + graded(in) + ", drawn from all rows but the query's own"
	case in.Queries != nil:
		return "rows relevant to the query", "rows relevant to none of the query's" + graded(in) + ", drawn from all rows"
	case in.Groups != nil && in.Sessions != nil:
		positives, negatives = "the rows of the anchor's group (its first row) in other sessions than the anchor's", "other groups' first rows"
	case in.Groups != nil:
		positives, negatives = "the other rows of the anchor's group (its first row)", "other groups' first rows"
	default:
		return "rows of the anchor's class in its split, never the anchor", "rows of other classes in its split"
	}
	if in.Labels != nil {
		negatives += ", of other classes"
	}
	return positives, negatives
}

// RemoveStale removes from dir the split files (NAME.npz for SplitNames)
// that are not among made, the names of the splits just written, and
// returns their paths: a directory made again without -ood-classes or
// -ood-cal-share would otherwise keep the earlier run's ood.npz and
// ood-cal.npz, whose rows may now be in the other splits, and ccs compare
// and ccs ood would read them as this run's.
func RemoveStale(dir string, made []string) ([]string, error) {
	var removed []string
	for _, name := range SplitNames {
		if slices.Contains(made, name) {
			continue
		}
		path := filepath.Join(dir, name+".npz")
		switch err := os.Remove(path); {
		case err == nil:
			removed = append(removed, path)
		case !errors.Is(err, fs.ErrNotExist):
			return removed, fmt.Errorf("bundle: an earlier run's %s: %w", path, err)
		}
	}
	return removed, nil
}

// WriteManifest writes m as dir/manifest.json, atomically, and returns
// its path.
func WriteManifest(dir string, m *Manifest) (string, error) {
	path := filepath.Join(dir, "manifest.json")
	return path, atomicfile.Write(path, func(w io.Writer) error { return encodeManifest(w, m) })
}

// ManifestLabelNames are the names of b's string labels, from the manifest
// ccs bundle wrote beside path, b's file (label i is names[i]); nil when
// there is none, it has no names, or its entry for the file does not
// describe b (its anchors and their count per class), so that a file moved
// among other bundles is never labelled wrongly.
func ManifestLabelNames(path string, b *Bundle) []string {
	return ReadManifest(filepath.Dir(path)).LabelNamesOf(path, b)
}

// LabelNamesOf is ManifestLabelNames of m, the manifest beside path (nil:
// none).
func (m *Manifest) LabelNamesOf(path string, b *Bundle) []string {
	if b.Labels == nil || m == nil || len(m.LabelNames) == 0 {
		return nil
	}
	if slices.ContainsFunc(b.Labels, func(l int64) bool { return l < 0 || l >= int64(len(m.LabelNames)) }) {
		return nil
	}
	counts := labelCounts(b)
	if m.entry(path, b, func(f *ManifestFile) bool { return maps.Equal(f.Classes, counts) && m.namesAgree(f) }) == nil {
		return nil
	}
	return m.LabelNames
}

// labelCounts counts b's anchors by label, keyed as a manifest's Classes
// are ("0", "1", …).
func labelCounts(b *Bundle) map[string]int {
	counts := map[string]int{}
	for _, l := range b.Labels {
		counts[strconv.FormatInt(l, 10)]++
	}
	return counts
}

// namesAgree reports whether m's label names are distinct and, where f
// counts its anchors by name too (ClassesByName), name the classes f
// counts by number: label_names edited by hand (reversed, or all "A")
// named every class wrongly.
func (m *Manifest) namesAgree(f *ManifestFile) bool {
	seen := map[string]bool{}
	for _, n := range m.LabelNames {
		if seen[n] {
			return false
		}
		seen[n] = true
	}
	if f.ClassesByName == nil {
		return true
	}
	named := 0
	for l, c := range f.Classes {
		i, err := strconv.Atoi(l)
		switch {
		case err != nil || i >= len(m.LabelNames) || i >= 0 && f.ClassesByName[m.LabelNames[i]] != c:
			return false
		case i >= 0: // -1, no label, has no name
			named++
		}
	}
	return len(f.ClassesByName) == named
}

// ManifestWarning says what is wrong with the manifest.json beside path,
// b's file, where one is there and ccs cannot use it as it stands: it is
// not JSON, not ccs bundle's or of another version, or its label names
// do not name the classes it counts (edited by hand); "" where there is
// none or it is whole. The readers above then take nothing from it (the
// classes are numbered, the split unnamed): the warning says why.
func ManifestWarning(path string, b *Bundle) string {
	m, err := readManifest(filepath.Dir(path))
	if err != nil {
		return err.Error()
	}
	if m == nil || b.Labels == nil || len(m.LabelNames) == 0 {
		return ""
	}
	name := filepath.Join(filepath.Dir(path), "manifest.json")
	counts := labelCounts(b)
	listed := false
	for i := range m.Files {
		f := &m.Files[i]
		if f.File != filepath.Base(path) {
			continue
		}
		listed = true
		if f.Anchors == b.N && maps.Equal(f.Classes, counts) {
			if !m.namesAgree(f) {
				return fmt.Sprintf("%s: its label_names do not name the classes its files count (classes against classes_by_name, or a name twice): edited by hand? The classes are shown by number; ccs bundle writes the manifest again", name)
			}
			return ""
		}
	}
	if listed {
		return fmt.Sprintf("%s lists %s with other anchors or other counts a class than the file holds (a file from another bundling, or a manifest edited by hand): its class names are not used, the classes are shown by number", name, filepath.Base(path))
	}
	return ""
}

// EmbeddingsOf names the rows the Index of b, read from path, numbers
// (Bundle.Embeddings: EmbeddingsDigest), where the manifest lists path's
// file with b's anchors; "" otherwise (nil manifest included).
func (m *Manifest) EmbeddingsOf(path string, b *Bundle) string {
	if m == nil || b.Index == nil || m.entry(path, b, nil) == nil {
		return ""
	}
	return m.EmbeddingsDigest()
}

// EmbeddingsDigest is the digest of the rows the splits' index numbers
// (RowsSHA256; "" where none — a manifest of an older ccs —, or for a nil
// manifest).
func (m *Manifest) EmbeddingsDigest() string {
	if m == nil || m.RowsSHA256 == "" {
		return ""
	}
	return "sha256:" + m.RowsSHA256
}

// RowsDigest is the SHA-256 of parts of rows, float32 little-endian, one
// after the other, in hex (Manifest.RowsSHA256).
func RowsDigest(parts ...[]float32) string {
	h := sha256.New()
	buf := make([]byte, 0, 1<<16)
	for _, rows := range parts {
		for _, v := range rows {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// Provenance says, for a document that reports on the bundles, what data
// they are: each input file's SHA-256 by its role, the seed, and what the
// rows were split by when not one by one (each block whole in one split:
// -blocks, a patient's images); "" for a nil manifest.
func (m *Manifest) Provenance() string {
	if m == nil {
		return ""
	}
	var ins []string
	for _, role := range slices.Sorted(maps.Keys(m.Inputs)) {
		if in := m.Inputs[role]; in.SHA256 != "" {
			of := "of the file " + in.Path // what sha256sum prints of it
			if in.Path == "" {
				of = "of an array's bytes in C order, " + in.Dtype // Python's: no file to hash
			}
			ins = append(ins, fmt.Sprintf("%s sha256:%s (%s)", role, strings.TrimPrefix(in.SHA256, "sha256:"), of))
		}
	}
	s := fmt.Sprintf("bundles (seed %d", m.Seed)
	if m.SplitBy == "blocks" {
		s += "; split by blocks, each block whole in one split"
	}
	s += ")"
	if ins != nil {
		s += " of " + strings.Join(ins, ", ")
	}
	return s
}

// ReadManifest reads and decodes dir/manifest.json; nil where there is
// none, it does not decode as a Manifest, or it is not ccs bundle's. The
// Manifest* readers below each read it and take what they need of it; its
// methods of the same names (LabelNamesOf, SplitOf, …) take it from a
// manifest read once, a nil one answering as no manifest does.
func ReadManifest(dir string) *Manifest {
	m, _ := readManifest(dir)
	return m
}

// readManifest reads dir/manifest.json: the manifest, or nil and why not
// (nil, nil where there is none).
func readManifest(dir string) (*Manifest, error) {
	name := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v: its class names and splits are not read", name, err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // saved by a Windows editor
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is not ccs bundle's manifest (%v): its class names and splits are not read; ccs bundle writes it again", name, err)
	}
	if m.Format != ManifestFormat || m.Version != 1 {
		return nil, fmt.Errorf("%s is not ccs bundle's manifest (format %q, version %d; want %q, version 1): its class names and splits are not read", name, m.Format, m.Version, ManifestFormat)
	}
	return &m, nil
}

// entry is m's first file that describes b, read from path — the file of
// path's name with b's number of anchors — and for which also holds where
// also is not nil; nil where there is none.
func (m *Manifest) entry(path string, b *Bundle, also func(*ManifestFile) bool) *ManifestFile {
	for i := range m.Files {
		if f := &m.Files[i]; f.File == filepath.Base(path) && f.Anchors == b.N && (also == nil || also(f)) {
			return f
		}
	}
	return nil
}

// ManifestLabelSetNames are the names of the labels of b's positives, a
// bundle of several labels a row (Bundle.PositiveLabels) made from a list
// column: the manifest ccs bundle wrote beside path, b's file, lists them
// (label i is names[i]); nil when there is none, it has no names, its
// entry for the file does not count b's anchors, or a label is out of
// their range (a multi-hot matrix's labels are its columns, unnamed).
func ManifestLabelSetNames(path string, b *Bundle) []string {
	return ReadManifest(filepath.Dir(path)).LabelSetNamesOf(path, b)
}

// LabelSetNamesOf is ManifestLabelSetNames of m, the manifest beside path
// (nil: none).
func (m *Manifest) LabelSetNamesOf(path string, b *Bundle) []string {
	if b.PositiveLabelStart == nil || m == nil || len(m.LabelNames) == 0 {
		return nil
	}
	for _, l := range b.PositiveLabels {
		if l < 0 || l >= int64(len(m.LabelNames)) {
			return nil
		}
	}
	if m.entry(path, b, nil) == nil {
		return nil
	}
	return m.LabelNames
}

// ManifestOOD reports whether b, read from path, is the OOD sample that
// ccs bundle held out (-ood-classes): the manifest beside it lists the
// file, with b's number of anchors, as its "ood" split. Such inputs are no
// in-distribution calibration of a false-alarm rate.
func ManifestOOD(path string, b *Bundle) bool { return ManifestSplit(path, b) == "ood" }

// NotMade says, where the manifest in dir records a share of 0 for split
// (ccs bundle -split with a 0: no such file made), the shares it was made
// with, "fit 0, val 0, cal 0.5, test 0.5"; "" otherwise (no manifest, or
// a share above 0).
func NotMade(dir, split string) string {
	m := ReadManifest(dir)
	if m == nil {
		return ""
	}
	if f, ok := m.Split[split]; !ok || f != 0 {
		return ""
	}
	var parts []string
	for _, name := range SplitNames[:Test+1] {
		parts = append(parts, fmt.Sprintf("%s %v", name, m.Split[name]))
	}
	return strings.Join(parts, ", ")
}

// NotMadeReason says why dir holds no NAME.npz of split where its
// manifest records a share of 0 for it (NotMade), and what to do, for ccs
// compare and Python's compare alike (which fit, calibrate and test); ""
// otherwise.
func NotMadeReason(dir, split string) string {
	shares := NotMade(dir, split)
	if shares == "" {
		return ""
	}
	what := ", and"
	if NotMade(dir, "fit") != "" && NotMade(dir, "val") != "" && NotMade(dir, "cal") != "" && NotMade(dir, "test") == "" {
		what = fmt.Sprintf(": a test split alone, to judge a set calibrated on other data (ccs evaluate -set SET.json -test %s; s.evaluate in Python); but", filepath.Join(dir, "test.npz"))
	}
	other := ""
	if NotMade(dir, "fit") != "" && NotMade(dir, "val") != "" && NotMade(dir, "cal") == "" && NotMade(dir, "test") == "" {
		// Calibration and test splits alone: a model's held-out classes
		// or people, whose training rows are bundled apart.
		other = fmt.Sprintf(", or, to fit on other rows than these (a model's training classes or people, bundled with -split 0.8,0.2,0,0), put their fit.npz and val.npz beside these in %s ({\"fit\": …, \"val\": …, \"cal\": …, \"test\": …} in Python)", dir)
	}
	return fmt.Sprintf("its bundles were made with a %s share of 0 (%s)%s compare fits, calibrates and tests: bundle again with a share for every split (the default 0.5,0.1,0.2,0.2)%s", split, shares, what, other)
}

// ManifestSplit is the split ("fit", "cal", "ood", …) the manifest beside
// path, b's file, names it, when it lists the file with b's number of
// anchors; "" otherwise.
func ManifestSplit(path string, b *Bundle) string {
	return ReadManifest(filepath.Dir(path)).SplitOf(path, b)
}

// SplitOf is ManifestSplit of m, the manifest beside path (nil: none).
func (m *Manifest) SplitOf(path string, b *Bundle) string {
	if m == nil {
		return ""
	}
	if f := m.entry(path, b, nil); f != nil {
		return f.Split
	}
	return ""
}

// ManifestBlocks is the number of blocks (recordings: ccs bundle
// -blocks) whose rows b, the file at path, holds, when the manifest beside
// it says the rows were split by block and lists the file with b's number
// of anchors; 0 otherwise. Rows of a few blocks are no independent
// inputs, which a check that counts them as such should say.
func ManifestBlocks(path string, b *Bundle) int {
	return ReadManifest(filepath.Dir(path)).BlocksOf(path, b)
}

// BlocksOf is ManifestBlocks of m, the manifest beside path (nil: none).
func (m *Manifest) BlocksOf(path string, b *Bundle) int {
	if m == nil || m.SplitBy != "blocks" {
		return 0
	}
	if f := m.entry(path, b, nil); f != nil {
		return f.Blocks
	}
	return 0
}

// CheckInDistribution refuses, naming path, the OOD sample ccs bundle
// held out (ManifestOOD) where held-out in-distribution inputs are wanted:
// calibrating a per-input OOD test's false alarms on it would set them on
// the very inputs it should flag.
func CheckInDistribution(path string, b *Bundle) error {
	return ReadManifest(filepath.Dir(path)).CheckInDistribution(path, b)
}

// CheckInDistribution is CheckInDistribution of m, the manifest beside
// path (nil: none).
func (m *Manifest) CheckInDistribution(path string, b *Bundle) error {
	if m.SplitOf(path, b) != SplitNames[OOD] {
		return nil
	}
	ok := filepath.Join(filepath.Dir(path), "ood-cal.npz")
	return fmt.Errorf("%s: the OOD sample ccs bundle held out (its manifest's \"ood\" split), where held-out in-distribution inputs are wanted: give %s (ccs bundle -ood-cal-share makes it)", path, ok)
}

// ManifestNegatives says what b's negatives are where they are not drawn
// at random — "rows judged not relevant to the query …" (JudgedNegatives)
// or hard ones (MakeConfig.HardNegatives) — as the manifest ccs bundle
// wrote beside path, b's file, says; "" when there is none, its entry for
// the file does not count b's anchors, or the negatives are random. An
// exclusion is then read as what it is on.
func ManifestNegatives(path string, b *Bundle) string {
	return ReadManifest(filepath.Dir(path)).NegativesOf(path, b)
}

// NegativesOf is ManifestNegatives of m, the manifest beside path (nil:
// none).
func (m *Manifest) NegativesOf(path string, b *Bundle) string {
	if m == nil || !m.JudgedNegatives && m.KNegHard == 0 {
		return ""
	}
	if m.entry(path, b, nil) == nil {
		return ""
	}
	return m.Negatives
}

// ManifestSeveralLabelsOOD reports whether b, read from path, is the OOD
// sample ccs bundle held out of labels of several a row (a multi-hot
// matrix or a list column, with -ood-classes): the manifest beside it
// lists the file, with b's number of anchors, as its "ood" split, and its
// positives are rows that share a label. Such a file has no label a row —
// a row may carry several of the held-out labels — and classes are the
// held-out labels, named by the manifest's label names where it has them
// (a list column's values), by their numbers otherwise. A bundle with a
// label a row, or of no file (path ""), is none.
func ManifestSeveralLabelsOOD(path string, b *Bundle) (classes []string, ok bool) {
	if path == "" {
		return nil, false
	}
	return ReadManifest(filepath.Dir(path)).SeveralLabelsOODOf(path, b)
}

// SeveralLabelsOODOf is ManifestSeveralLabelsOOD of m, the manifest
// beside path (nil: none).
func (m *Manifest) SeveralLabelsOODOf(path string, b *Bundle) (classes []string, ok bool) {
	if path == "" || b.Labels != nil || m == nil || !strings.HasPrefix(m.Positives, severalLabelsPositives) {
		return nil, false
	}
	if m.entry(path, b, func(f *ManifestFile) bool { return f.Split == SplitNames[OOD] }) == nil {
		return nil, false
	}
	for _, c := range m.OODClasses {
		name := strconv.FormatInt(c, 10)
		if c >= 0 && c < int64(len(m.LabelNames)) {
			name = m.LabelNames[c]
		}
		classes = append(classes, name)
	}
	return classes, true
}

// ManifestSeveralLabels reports whether b, read from path, is a file of
// bundles ccs bundle made of labels of several a row: the manifest beside
// it lists the file with b's number of anchors, and its positives are
// rows that share a label. Its ood-cal.npz and ood.npz carry no label a
// row, which the file alone cannot tell from a file of no labels.
func ManifestSeveralLabels(path string, b *Bundle) bool {
	return ReadManifest(filepath.Dir(path)).SeveralLabelsOf(path, b)
}

// SeveralLabelsOf is ManifestSeveralLabels of m, the manifest beside path
// (nil: none).
func (m *Manifest) SeveralLabelsOf(path string, b *Bundle) bool {
	if m == nil || !strings.HasPrefix(m.Positives, severalLabelsPositives) {
		return false
	}
	return m.entry(path, b, nil) != nil
}

// ManifestOneLabelName is the label whose rows alone b, read from path, was
// bundled of (ccs bundle -one-label), as the manifest beside it names it,
// when it lists the file with b's number of anchors; "" otherwise. Its
// anchors carry no labels, each carrying that one: a threshold over
// every anchor is that label's.
func ManifestOneLabelName(path string, b *Bundle) string {
	return ReadManifest(filepath.Dir(path)).OneLabelNameOf(path, b)
}

// OneLabelNameOf is ManifestOneLabelName of m, the manifest beside path
// (nil: none).
func (m *Manifest) OneLabelNameOf(path string, b *Bundle) string {
	if m == nil || m.OneLabel == nil || m.entry(path, b, nil) == nil {
		return ""
	}
	return m.OneLabel.Label
}

// ErrOneLabel is what OneLabelClassError's and OneLabelPerClassError's
// refusals wrap: the bundles of one label's rows (ccs bundle -one-label)
// carry no labels to split by, every anchor carrying that label.
var ErrOneLabel = errors.New("bundle: the bundles of one label's rows carry no labels")

// oneLabelError is a refusal that wraps ErrOneLabel, its message its own.
type oneLabelError string

func (e oneLabelError) Error() string        { return string(e) }
func (e oneLabelError) Is(target error) bool { return target == ErrOneLabel }

// OneLabelPerClassError refuses per-class coverage (flag: -per-class,
// per_class=True) on the bundles of one label's rows (ManifestOneLabelName:
// label), which carry no labels to split by: every anchor carries the
// label, and the coverage over all of them is the label's. It is nil
// where label is "" (bundles of no one label), and otherwise wraps
// ErrOneLabel; callers put the flag, the file or the command before it.
func OneLabelPerClassError(label, flag string) error {
	if label == "" {
		return nil
	}
	return oneLabelError(fmt.Sprintf("%s: the bundles of label %q alone (ccs bundle -one-label; one_label= in Python) carry no labels to split by: every anchor carries it, and the coverage over all of them is that label's — leave %s out", flag, label, flag))
}

// OneLabelClassError refuses a class-conditional calibration of the
// bundles of one label's rows (ManifestOneLabelName: label), whose anchors
// all carry it: one threshold over every anchor (one, the flag or keyword
// that asks for it) is that label's. It is nil where label is "" (bundles
// of no one label), and otherwise wraps ErrOneLabel; callers put what
// asked for classes (-calibration class, -class), the file or the
// command before it.
func OneLabelClassError(label, one string) error {
	if label == "" {
		return nil
	}
	return oneLabelError(fmt.Sprintf("the bundles of label %q alone (ccs bundle -one-label; one_label= in Python): every anchor carries it, and the bundles carry no labels — one threshold over every anchor (%s) is that label's, with its guarantee", label, one))
}

// OneLabelMismatch warns where a set calibrated on one label's rows
// alone (setLabel: conformal's Info.OneLabel) is tested on a bundle that
// is not that label's (testLabel: its manifest's one_label, "" for the
// bundles of every label): its coverage there speaks of anchors its
// guarantee is not for. "" where they agree or the set is no one label's.
func OneLabelMismatch(setLabel, testLabel string) string {
	if setLabel == "" || setLabel == testLabel {
		return ""
	}
	is := "the bundles of every label"
	if testLabel != "" {
		is = fmt.Sprintf("label %q's", testLabel)
	}
	return fmt.Sprintf("the set was calibrated on the rows of label %q alone (ccs bundle -one-label; one_label= in Python), whose anchors its guarantee is for, and this bundle is %s: its coverage here speaks of other anchors; test it on the test split of ccs bundle -one-label %s", setLabel, is, setLabel)
}

// OneLabelNote says whose bundles the bundles of one label's rows alone
// (ManifestOneLabelName: label) are, where a command describes them: every
// anchor carries the label, and a set calibrated on them is guaranteed for
// anchors carrying it.
func OneLabelNote(label string) string {
	return fmt.Sprintf("the bundles of label %q alone (ccs bundle -one-label; one_label= in Python): every anchor carries it, and the guarantee is for anchors carrying %q", label, label)
}

// NoLabelsAdvice says how a bundle without labels gets its classes, for
// the per-class refusals: a bundle of relevance pairs (positives of
// another pool) from its queries' labels (ccs bundle -query-labels,
// query_labels= in Python: -labels is refused with -pairs), any other
// from -labels. flag is what to leave out otherwise (-per-class, or
// per_class=True).
func NoLabelsAdvice(b *Bundle, flag string) string {
	if b.PositivePool != nil {
		return fmt.Sprintf("a bundle of query–passage pairs takes its classes from its queries' labels: ccs bundle -query-labels, query_labels= in Python; or leave out %s", flag)
	}
	return fmt.Sprintf("ccs bundle -labels gives a bundle its classes, labels= in Python; or leave out %s", flag)
}
