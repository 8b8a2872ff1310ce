package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/arrowtest"
)

// TestReadQrelsTable: ccs.bundle(pairs="qrels.arrow") reads a table of
// query-id, corpus-id and score (the Hub's BEIR and MTEB qrels) as the
// same pairs as the .tsv of them, and gives the file's SHA-256 for the
// manifest; so are a dataset's directory and a directory of Parquet
// parts; another directory is refused, saying what to pass instead.
func TestReadQrelsTable(t *testing.T) {
	dir := t.TempDir()
	q := []string{"q0", "q0", "q1", "q2", "q2"}
	r := []string{"d2", "d0", "d1", "d9", "d1"}
	s := []int64{1, 0, 1, 1, 2}
	var tsv strings.Builder
	tsv.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range q {
		tsv.WriteString(q[i] + "\t" + r[i] + "\t" + string(rune('0'+s[i])) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "qrels.tsv"), []byte(tsv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sb, ib := array.NewStringBuilder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
	sb.AppendValues(q, nil)
	qa := sb.NewArray()
	sb.AppendValues(r, nil)
	ra := sb.NewArray()
	ib.AppendValues(s, nil)
	sa := ib.NewArray()
	raw := arrowtest.Write(t, []string{"query-id", "corpus-id", "score"}, []arrow.Array{qa, ra, sa}, 2, true)
	if err := os.WriteFile(filepath.Join(dir, "qrels.arrow"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(name string) ([][2]int, string, *bundle.PairIDs) {
		ids, err := bundle.NewPairIDs([]string{"q2", "q1", "q0"}, []string{"d0", "d1", "d2"})
		if err != nil {
			t.Fatal(err)
		}
		pairs, sum, err := readQrels(filepath.Join(dir, name), ids)
		if err != nil {
			t.Fatal(err)
		}
		return pairs, sum, ids
	}
	want, _, wantIDs := read("qrels.tsv")
	got, sum, gotIDs := read("qrels.arrow")
	if !slices.Equal(got, want) || len(got) != 3 || gotIDs.Unscored != wantIDs.Unscored || gotIDs.Unknown != wantIDs.Unknown {
		t.Errorf("the table's pairs %v (%d unscored, %d unknown), the text's %v (%d, %d)", got, gotIDs.Unscored, gotIDs.Unknown, want, wantIDs.Unscored, wantIDs.Unknown)
	}
	if h := sha256.Sum256(raw); sum != hex.EncodeToString(h[:]) {
		t.Errorf("SHA-256 %s, the file's %x", sum, h)
	}
	// A table of more columns, named otherwise, is read by the columns
	// "FILE:QUERY,ROW,SCORE" picks, as ccs bundle -pairs reads it (the
	// message that asks which columns says to give them so).
	sb.AppendValues(slices.Repeat([]string{"x"}, len(q)), nil)
	xa := sb.NewArray()
	raw = arrowtest.Write(t, []string{"note", "QQ", "RR", "SS"}, []arrow.Array{xa, qa, ra, sa}, 2, true)
	if err := os.WriteFile(filepath.Join(dir, "named.arrow"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, sum, _ := read("named.arrow:QQ,RR,SS"); !slices.Equal(got, want) {
		t.Errorf("named.arrow:QQ,RR,SS: pairs %v, want %v", got, want)
	} else if h := sha256.Sum256(raw); sum != hex.EncodeToString(h[:]) {
		t.Errorf("named.arrow:QQ,RR,SS: SHA-256 %s, the file's %x", sum, h)
	}
	ids, _ := bundle.NewPairIDs(nil, nil)
	if _, _, err := readQrels(filepath.Join(dir, "named.arrow"), ids); err == nil || !strings.Contains(err.Error(), "named.arrow:QUERY,ROW,SCORE") {
		t.Errorf("named.arrow without its columns: %v", err)
	}
	// A missing table's columns are split off as ccs bundle -pairs splits
	// them (bundle.SplitInput): the file is said to be missing, not taken
	// for a file named "none.arrow:QQ,RR,SS" of no kind of pairs.
	none := filepath.Join(dir, "none.arrow")
	if _, _, err := readQrels(none+":QQ,RR,SS", ids); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), none+":") {
		t.Errorf("a missing table's columns: %v, want %s said to be missing", err, none)
	}
	// A Hugging Face dataset's directory (state.json, an Arrow stream
	// shard), with its columns picked too, and a Dask dataset's
	// directory of Parquet parts named qrels.parquet are read as ccs
	// bundle -pairs reads them: the same pairs, and the SHA-256 the
	// command's manifest records (table.Digest, of a directory as its
	// files).
	hf := filepath.Join(dir, "hf")
	os.Mkdir(hf, 0o755)
	os.WriteFile(filepath.Join(hf, "state.json"), []byte(`{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}`), 0o644)
	os.WriteFile(filepath.Join(hf, "data-00000-of-00001.arrow"), arrowtest.Write(t, []string{"note", "QQ", "RR", "SS"}, []arrow.Array{xa, qa, ra, sa}, 2, false), 0o644)
	dask := filepath.Join(dir, "qrels.parquet")
	os.Mkdir(dask, 0o755)
	for i, b := range [][2]int{{0, 2}, {2, len(q)}} {
		lo, hi := b[0], b[1]
		tbl := array.NewTableFromSlice(arrow.NewSchema([]arrow.Field{{Name: "query-id", Type: arrow.BinaryTypes.String}, {Name: "corpus-id", Type: arrow.BinaryTypes.String}, {Name: "score", Type: arrow.PrimitiveTypes.Int64}}, nil),
			[][]arrow.Array{{array.NewSlice(qa, int64(lo), int64(hi))}, {array.NewSlice(ra, int64(lo), int64(hi))}, {array.NewSlice(sa, int64(lo), int64(hi))}})
		f, err := os.Create(filepath.Join(dask, fmt.Sprintf("part.%d.parquet", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := pqarrow.WriteTable(tbl, f, 64, nil, pqarrow.DefaultWriterProps()); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	os.WriteFile(filepath.Join(dask, "_SUCCESS"), nil, 0o644)
	// A directory's SHA-256, computed here from its files as the
	// manifest documents it: of a line "NAME SHA-256" a file read.
	sumOf := func(dir string, names ...string) string {
		var lines strings.Builder
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&lines, "%s %x\n", name, sha256.Sum256(b))
		}
		return fmt.Sprintf("%x", sha256.Sum256([]byte(lines.String())))
	}
	hfSum, daskSum := sumOf(hf, "state.json", "data-00000-of-00001.arrow"), sumOf(dask, "part.0.parquet", "part.1.parquet")
	for _, c := range []struct{ arg, sum string }{{hf + ":QQ,RR,SS", hfSum}, {dask, daskSum}, {dask + string(filepath.Separator), daskSum}} {
		ids, err := bundle.NewPairIDs([]string{"q2", "q1", "q0"}, []string{"d0", "d1", "d2"})
		if err != nil {
			t.Fatal(err)
		}
		if got, sum, err := readQrels(c.arg, ids); !slices.Equal(got, want) || sum != c.sum {
			t.Errorf("%s: pairs %v, SHA-256 %s (%v); want %v, %s", c.arg, got, sum, err, want, c.sum)
		}
	}
	// A directory that is no dataset is refused, saying what is read.
	for _, d := range []string{dir, hf + "-not"} {
		os.Mkdir(d, 0o755)
		if _, _, err := readQrels(d, ids); err == nil || !strings.Contains(err.Error(), "bundle: pairs "+d+": a directory without state.json or dataset_dict.json: give a file of pairs") {
			t.Errorf("a directory %s: %v", d, err)
		}
	}
}
