package table

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/ccsets/ccs/bundle"
)

// TestParquetParts: a directory named qrels.parquet of Parquet parts, as
// Dask writes one (part.0.parquet … part.10.parquet, unpadded, beside
// _metadata) and Spark (a _SUCCESS, .crc checksums), is read as one table
// of its parts in their natural order, its other files not read, with or
// without a separator after its name; one without parts, or partitioned,
// is refused saying what it holds.
func TestParquetParts(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "qrels.parquet")
	os.Mkdir(ds, 0o755)
	// Part i holds the pair (q<i>, d<i>); lexical order would read part.10
	// before part.2.
	order := []int{0, 1, 2, 3, 10}
	for _, i := range order {
		q, d := fmt.Sprintf("q%d", i), fmt.Sprintf("d%d", i)
		writeParquet(t, filepath.Join(ds, fmt.Sprintf("part.%d.parquet", i)), []string{"query-id", "corpus-id", "score"},
			[]arrow.Array{strs([]string{q}), strs([]string{d}), int64s([]int64{1})}, 64)
		os.WriteFile(filepath.Join(ds, fmt.Sprintf(".part.%d.parquet.crc", i)), []byte("not parquet"), 0o644)
	}
	for _, junk := range []string{"_SUCCESS", "_metadata", "_common_metadata"} {
		os.WriteFile(filepath.Join(ds, junk), []byte("not parquet"), 0o644)
	}
	var want []string
	for _, i := range order {
		want = append(want, fmt.Sprintf("q%d", i), fmt.Sprintf("d%d", i), "1")
	}
	for _, path := range []string{ds, ds + string(filepath.Separator)} {
		if !bundle.IsTable(path) {
			t.Errorf("IsTable(%q) = false", path)
		}
		a, err := Pairs(path, "")
		if err != nil || !slices.Equal(a.Str, want) {
			t.Errorf("Pairs(%q) = %q, %v; want %q", path, a.Str, err, want)
		}
		tbl, err := ReadTable(path)
		if err != nil {
			t.Fatalf("ReadTable(%q): %v", path, err)
		}
		if tbl.NumRows() != int64(len(order)) {
			t.Errorf("ReadTable(%q): %d rows, want %d", path, tbl.NumRows(), len(order))
		}
		tbl.Release()
	}
	files, err := DatasetFiles(ds)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if want := []string{"part.0.parquet", "part.1.parquet", "part.2.parquet", "part.3.parquet", "part.10.parquet"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("DatasetFiles = %q, %v; want %q", names, err, want)
	}

	// What a directory named *.parquet holds, said where it is no
	// dataset of parts.
	mk := func(name string, entries ...string) string {
		p := filepath.Join(dir, name)
		os.Mkdir(p, 0o755)
		for _, e := range entries {
			if strings.HasSuffix(e, "/") {
				os.Mkdir(filepath.Join(p, e), 0o755)
			} else {
				os.WriteFile(filepath.Join(p, e), []byte("x"), 0o644)
			}
		}
		return p
	}
	for _, c := range []struct {
		path, want string
	}{
		{mk("empty.parquet"), "empty.parquet: is empty: a directory named *.parquet is read as a dataset of Parquet parts"},
		{mk("csv.parquet", "part-0.csv", "part-1.csv", "_SUCCESS"), "csv.parquet: holds no .parquet file (it holds part-0.csv, part-1.csv): a directory named *.parquet"},
		{mk("hive.parquet", "year=2024/", "year=2025/"), "hive.parquet: holds directories (year=2024/, year=2025/), a partitioned dataset's"},
		{mk("many.parquet", "a", "b", "c", "d", "e", "f", "g"), "(it holds a, b, c, d, e … 2 more)"},
	} {
		if _, err := Pairs(c.path, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Pairs(%s): %v; want %q", filepath.Base(c.path), err, c.want)
		}
	}
	// A directory of another name without state.json is still no table.
	if plain := mk("plain", "part.0.parquet"); bundle.IsTable(plain) {
		t.Errorf("IsTable(%s): a directory not named *.parquet, without state.json", plain)
	}
}

// TestNaturalCompare orders names by their numbers where they differ.
func TestNaturalCompare(t *testing.T) {
	got := []string{"part.10.parquet", "part.2.parquet", "part.1.parquet", "part-00001-x.parquet", "part-00000-y.parquet", "part.01.parquet", "a", "b9", "b10"}
	slices.SortFunc(got, naturalCompare)
	want := []string{"a", "b9", "b10", "part-00000-y.parquet", "part-00001-x.parquet", "part.01.parquet", "part.1.parquet", "part.2.parquet", "part.10.parquet"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
}

// TestDigestParts: a directory of Parquet parts hashes as its parts,
// each a line "NAME SHA-256", and a part changed after hashing is found.
func TestDigestParts(t *testing.T) {
	ds := filepath.Join(t.TempDir(), "x.parquet")
	os.Mkdir(ds, 0o755)
	var lines strings.Builder
	for i, body := range []string{"zero", "one"} {
		name := fmt.Sprintf("part.%d.parquet", i)
		os.WriteFile(filepath.Join(ds, name), []byte(body), 0o644)
		fmt.Fprintf(&lines, "%s %x\n", name, sha256.Sum256([]byte(body)))
	}
	os.WriteFile(filepath.Join(ds, "_SUCCESS"), nil, 0o644)
	d, err := NewDigest(context.Background(), ds)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x", sha256.Sum256([]byte(lines.String()))); d.Sum != want {
		t.Errorf("Sum %s, want %s", d.Sum, want)
	}
	if err := d.Unchanged("test"); err != nil {
		t.Errorf("Unchanged: %v", err)
	}
	os.WriteFile(filepath.Join(ds, "part.1.parquet"), []byte("changed"), 0o644)
	if err := d.Unchanged("test"); err == nil || !strings.Contains(err.Error(), "part.1.parquet: changed while test read it (3 bytes") {
		t.Errorf("a part changed: %v", err)
	}
}
