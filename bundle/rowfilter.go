package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// RowFilter is a Bloom filter of bundles' anchor rows, each row known by
// the bits of its float32 values: whether a row is among them, never
// wrong for one that is, wrong for one that is not at a rate of about
// 5·10⁻⁴ (16 bits and 11 probes a row). A fitted set keeps one of the rows
// it was fitted and validated on, so that a calibration split sharing
// many of them (the fit split of another bundling of the same embeddings)
// is refused although its digest differs. Its size is 2 bytes a row.
type RowFilter struct {
	Rows int      // the rows added
	bits []uint64 // a multiple of 64 bits, 16 a row at least
}

// rowFilterProbes is the probes a row sets: (m/n)·ln 2 for 16 bits a row.
const rowFilterProbes = 11

// MaxRowFilterRows bounds the rows of a RowFilter read from a file.
const MaxRowFilterRows = 1 << 31

// NewRowFilter is the filter of the anchors of bs (nil ones skipped).
func NewRowFilter(bs ...*Bundle) *RowFilter {
	n := 0
	for _, b := range bs {
		if b != nil {
			n += b.N
		}
	}
	f := newRowFilter(n)
	for _, b := range bs {
		if b != nil {
			f.addRows(b.Anchors, b.D)
		}
	}
	return f
}

// RowFilterOf is the filter of rows of dimension d, one after the other.
func RowFilterOf(rows []float32, d int) *RowFilter {
	f := newRowFilter(len(rows) / d)
	f.addRows(rows, d)
	return f
}

func newRowFilter(n int) *RowFilter {
	return &RowFilter{Rows: n, bits: make([]uint64, max(1, (16*n+63)/64))}
}

func (f *RowFilter) addRows(rows []float32, d int) {
	for i := 0; i+d <= len(rows); i += d {
		f.add(rowHash(rows[i : i+d]))
	}
}

// NewSourceFilter is the filter of bs's anchors each with its source row
// (Bundle.Index: ccs bundle's splits record each anchor's row of the
// embeddings), or nil where one of them records none: it tells a split's
// rows given again (the same row from the same source row: another
// bundling of the same embeddings) from the data's own exact copies (the
// same values from another source row), which a filter of the rows alone
// cannot (CountSources).
func NewSourceFilter(bs ...*Bundle) *RowFilter {
	n := 0
	for _, b := range bs {
		if b != nil {
			if b.Index == nil {
				return nil
			}
			n += b.N
		}
	}
	f := newRowFilter(n)
	for _, b := range bs {
		if b == nil {
			continue
		}
		for i := range b.N {
			f.add(sourceHash(b.Anchor(i), b.Index[i]))
		}
	}
	return f
}

// CountSources is how many of b's anchors, each with its source row
// (b.Index), a NewSourceFilter holds (false positives included: about
// 5·10⁻⁴ of the anchors it does not hold), or −1 where b records no source
// rows or f is nil.
func (f *RowFilter) CountSources(b *Bundle) int {
	if f == nil || b == nil || b.Index == nil || len(b.Index) != b.N {
		return -1
	}
	c := 0
	for i := range b.N {
		if f.has(sourceHash(b.Anchor(i), b.Index[i])) {
			c++
		}
	}
	return c
}

// OnlyCopies reports whether the m anchors of b that equal rows a filter
// holds by value are the data's own exact copies, f being the source
// filter of those rows (NewSourceFilter) and emb the embeddings their
// source rows number (Bundle.Embeddings): b numbers its rows in the same
// embeddings, and hardly any of its anchors — a fiftieth of the m, where
// the filters' false positives are 5·10⁻⁴ — is a held row from the same
// source row, which rows given again (another bundling of the same
// embeddings) are by the share of them. False where either side records
// no source rows, or they number other embeddings (a re-export in
// another order numbers the same rows otherwise): nothing tells copies
// from rows given again. A nil f holds none.
func (f *RowFilter) OnlyCopies(emb string, b *Bundle, m int) bool {
	if f == nil || emb == "" || b == nil || b.Embeddings != emb {
		return false
	}
	same := f.CountSources(b)
	return same >= 0 && 50*same <= m
}

// sourceHash hashes a row with its source row.
func sourceHash(row []float32, source int64) uint64 {
	return mix64(rowHash(row) ^ mix64(uint64(source)^0x9e3779b97f4a7c15))
}

// Count is how many of b's anchors the filter holds (false positives
// included: about 5·10⁻⁴ of the anchors it does not hold).
func (f *RowFilter) Count(b *Bundle) int { return f.CountRows(b.Anchors, b.D) }

// CountRows is Count for rows of dimension d, one after the other.
func (f *RowFilter) CountRows(rows []float32, d int) int {
	c := 0
	for i := 0; i+d <= len(rows); i += d {
		if f.has(rowHash(rows[i : i+d])) {
			c++
		}
	}
	return c
}

// Has reports whether the filter holds row (false positives included);
// a nil filter holds none.
func (f *RowFilter) Has(row []float32) bool { return f != nil && f.has(rowHash(row)) }

// probes are the bits a row of hash h sets, by double hashing: h + i·h₂
// for i < rowFilterProbes, h₂ odd.
func (f *RowFilter) probes(h uint64) func(yield func(uint64) bool) {
	h2, m := mix64(h)|1, uint64(64*len(f.bits))
	return func(yield func(uint64) bool) {
		for i := range uint64(rowFilterProbes) {
			if !yield((h + i*h2) % m) {
				return
			}
		}
	}
}

func (f *RowFilter) add(h uint64) {
	for p := range f.probes(h) {
		f.bits[p/64] |= 1 << (p % 64)
	}
}

func (f *RowFilter) has(h uint64) bool {
	for p := range f.probes(h) {
		if f.bits[p/64]&(1<<(p%64)) == 0 {
			return false
		}
	}
	return true
}

// rowHash hashes a row's float32 bits, a word at a time, the same on
// every machine.
func rowHash(row []float32) uint64 {
	h := uint64(0xcbf29ce484222325) ^ uint64(len(row))
	for _, v := range row {
		h = (h ^ uint64(math.Float32bits(v))) * 0x100000001b3
	}
	return mix64(h)
}

// mix64 is SplitMix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// rowFilterFile is a RowFilter in a file: its words little-endian, base64.
type rowFilterFile struct {
	Rows int    `json:"rows"`
	Bits string `json:"bits"`
}

// MarshalJSON writes the filter as {"rows": n, "bits": base64}.
func (f *RowFilter) MarshalJSON() ([]byte, error) {
	raw := make([]byte, 0, 8*len(f.bits))
	for _, w := range f.bits {
		raw = binary.LittleEndian.AppendUint64(raw, w)
	}
	return json.Marshal(rowFilterFile{Rows: f.Rows, Bits: base64.StdEncoding.EncodeToString(raw)})
}

// UnmarshalJSON reads a filter MarshalJSON wrote, refusing one whose
// bits are not the size its rows make.
func (f *RowFilter) UnmarshalJSON(b []byte) error {
	var v rowFilterFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("row filter: %w", err)
	}
	if v.Rows < 0 || v.Rows > MaxRowFilterRows {
		return fmt.Errorf("row filter: %d rows, want 0 to %d", v.Rows, MaxRowFilterRows)
	}
	words := max(1, (16*v.Rows+63)/64)
	if base64.StdEncoding.DecodedLen(len(v.Bits)) > 8*words+2 {
		return fmt.Errorf("row filter: %d characters of bits for %d rows, want %d bytes", len(v.Bits), v.Rows, 8*words)
	}
	raw, err := base64.StdEncoding.DecodeString(v.Bits)
	if err != nil {
		return fmt.Errorf("row filter: bits: %w", err)
	}
	if len(raw) != 8*words {
		return fmt.Errorf("row filter: %d bytes of bits for %d rows, want %d", len(raw), v.Rows, 8*words)
	}
	f.Rows, f.bits = v.Rows, make([]uint64, words)
	for i := range f.bits {
		f.bits[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return nil
}

// RowIndex is an exact index of rows by their float32 bits: whether a row
// is among them, never wrong (RowFilter's rows kept whole, for rows a
// caller holds anyway: a set's reference pool). The zero or nil RowIndex
// holds none.
type RowIndex struct {
	d      int
	rows   []float32
	byHash map[uint64][]int32
}

// RowIndexOf indexes rows (rows of d; kept, not copied).
func RowIndexOf(rows []float32, d int) *RowIndex {
	x := &RowIndex{d: d, rows: rows, byHash: map[uint64][]int32{}}
	if d <= 0 {
		return x
	}
	for i := range len(rows) / d {
		h := rowHash(rows[i*d : (i+1)*d])
		x.byHash[h] = append(x.byHash[h], int32(i))
	}
	return x
}

// Has reports whether row is one of x's rows, bit for bit.
func (x *RowIndex) Has(row []float32) bool {
	if x == nil || len(row) != x.d {
		return false
	}
	for _, i := range x.byHash[rowHash(row)] {
		if sameBits(row, x.rows[int(i)*x.d:(int(i)+1)*x.d]) {
			return true
		}
	}
	return false
}

// sameBits reports whether a and b hold the same float32 bits.
func sameBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// SharedAnchors counts, exactly, b's anchors equal bit for bit to an
// anchor of other: a RowFilter's Count without its false positives (about
// 5·10⁻⁴ of the rows it does not hold), for a count a message states.
func SharedAnchors(b, other *Bundle) int {
	if b == nil || other == nil || b.D != other.D || b.D == 0 {
		return 0
	}
	x, n := RowIndexOf(other.Anchors, other.D), 0
	for i := 0; (i+1)*b.D <= len(b.Anchors); i++ {
		if x.Has(b.Anchors[i*b.D : (i+1)*b.D]) {
			n++
		}
	}
	return n
}

// CountCopies counts the rows of rows (rows of d values) that equal an
// earlier row bit for bit: records exported twice.
func CountCopies(rows []float32, d int) int {
	if d <= 0 {
		return 0
	}
	first := map[uint64][]int32{} // a hash's rows kept so far
	n := 0
	for i := range len(rows) / d {
		row := rows[i*d : (i+1)*d]
		h := rowHash(row)
		copied := false
		for _, f := range first[h] {
			if sameBits(row, rows[int(f)*d:(int(f)+1)*d]) {
				copied = true
				break
			}
		}
		if copied {
			n++
			continue
		}
		first[h] = append(first[h], int32(i))
	}
	return n
}
