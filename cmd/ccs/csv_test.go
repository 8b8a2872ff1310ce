package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleCSVLabels: labels from a column of a table exported as CSV —
// AnnData's obs.to_csv("obs.csv"): a header, the cell barcodes as a first,
// unnamed index column, quoted names with commas — picked by name
// (FILE.csv:COLUMN), the same bundles as the column saved as a .txt; and
// each way it can go wrong, named. Before, the whole line was the label
// and :COLUMN was dropped.
func TestBundleCSVLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 400, 3
	_, x64, y := mixture(8, n, d, 3)
	writeNPY64(t, p("emb.npy"), x64, n, d)
	names := []string{"B cell", "Monocyte, CD16+", "T cell"}
	var obs, tsv, txt, dup, nohead, short strings.Builder
	obs.WriteString(",cell_type,donor,n_genes,leiden\n")
	tsv.WriteString("barcode\tcell_type\n")
	short.WriteString(",cell_type\n")
	for i, l := range y {
		q := names[l]
		if strings.Contains(q, ",") {
			q = `"` + q + `"`
		}
		row := fmt.Sprintf("AAAC%04d-1,%s,A,%d,%d\n", i, q, 1000+i, l)
		obs.WriteString(row)
		nohead.WriteString(row)
		dup.WriteString(row)
		if i == 10 || i == 11 {
			dup.WriteString(row) // an export that wrote two rows twice
		}
		if i < n-1 {
			short.WriteString(fmt.Sprintf("AAAC%04d-1,%s\n", i, q))
		}
		fmt.Fprintf(&tsv, "AAAC%04d-1\t%s\n", i, names[l])
		fmt.Fprintln(&txt, names[l])
	}
	os.WriteFile(p("obs.csv"), []byte(obs.String()), 0o644)
	os.WriteFile(p("obs.tsv"), []byte(tsv.String()), 0o644)
	os.WriteFile(p("labels.txt"), []byte(txt.String()), 0o644)
	os.WriteFile(p("dup.csv"), []byte(",cell_type,donor,n_genes,leiden\n"+dup.String()), 0o644)
	os.WriteFile(p("nohead.csv"), []byte(nohead.String()), 0o644)
	os.WriteFile(p("short.csv"), []byte(short.String()), 0o644)
	// Two rows' barcodes repeated, as many rows as embeddings: warned of.
	same := strings.Replace(obs.String(), "AAAC0011-1,", "AAAC0010-1,", 1)
	os.WriteFile(p("same.csv"), []byte(same), 0o644)
	os.WriteFile(p("ragged.csv"), []byte(",cell_type\nAAAC0000-1,T cell,extra\n"), 0o644)
	// Exports of other shapes: with a byte order mark (Excel's "CSV
	// UTF-8"), its first column named; one column, pandas'
	// to_csv(index=False) of a Series; a Series with its unnamed index.
	const bom = "\ufeff"
	os.WriteFile(p("bom.csv"), []byte(bom+obs.String()), 0o644)
	os.WriteFile(p("bomsame.csv"), []byte(bom+same), 0o644)
	var first, series, indexed, leidenNA, leidenFloat, leidenTxt, leidenBad strings.Builder
	first.WriteString("cell_type,donor\n")
	series.WriteString("cell_type\n")
	indexed.WriteString(",cell_type\n")
	leidenNA.WriteString(",leiden\n")
	leidenFloat.WriteString(",leiden\n")
	leidenBad.WriteString(",leiden\n")
	for i, l := range y {
		q := names[l]
		if strings.Contains(q, ",") {
			q = `"` + q + `"`
		}
		fmt.Fprintf(&first, "%s,A\n", q)
		fmt.Fprintf(&series, "%s\n", q)
		fmt.Fprintf(&indexed, "AAAC%04d-1,%s\n", i, q)
		// An integer column with a missing value: R's NA, pandas' float
		// column with an empty cell.
		switch {
		case i == 7:
			fmt.Fprintf(&leidenNA, "AAAC%04d-1,NA\n", i)
			fmt.Fprintf(&leidenFloat, "AAAC%04d-1,\n", i)
			fmt.Fprintln(&leidenTxt)
		default:
			fmt.Fprintf(&leidenNA, "AAAC%04d-1,%d\n", i, l)
			fmt.Fprintf(&leidenFloat, "AAAC%04d-1,%d.0\n", i, l)
			fmt.Fprintln(&leidenTxt, l)
		}
		if i == 0 {
			fmt.Fprintf(&leidenBad, "AAAC%04d-1,abc\n", i)
		} else {
			fmt.Fprintf(&leidenBad, "AAAC%04d-1,%d\n", i, l)
		}
	}
	os.WriteFile(p("first.csv"), []byte(bom+first.String()), 0o644)
	os.WriteFile(p("series.csv"), []byte(series.String()), 0o644)
	os.WriteFile(p("indexed.csv"), []byte(indexed.String()), 0o644)
	os.WriteFile(p("leiden-na.csv"), []byte(leidenNA.String()), 0o644)
	os.WriteFile(p("leiden-float.csv"), []byte(leidenFloat.String()), 0o644)
	os.WriteFile(p("leiden.txt"), []byte(leidenTxt.String()), 0o644)
	os.WriteFile(p("leiden-bad.csv"), []byte(leidenBad.String()), 0o644)
	os.WriteFile(p("twice.csv"), []byte(",cell_type,cell_type\nAAAC0000-1,T cell,B cell\n"), 0o644)
	// A spreadsheet's CSV where the comma is the decimal mark: semicolons,
	// a byte-order mark, CRLF.
	var excel strings.Builder
	excel.WriteString(bom + "barcode;cell_type;score\r\n")
	for i, l := range y {
		fmt.Fprintf(&excel, "AAAC%04d-1;%s;0,%d\r\n", i, names[l], i)
	}
	os.WriteFile(p("excel.csv"), []byte(excel.String()), 0o644)
	// pandas' to_csv(sep="\t") to a .csv; a quoted header name holding
	// more semicolons than the line has commas: the separator is what
	// separates fields outside quotes, as the embeddings' reader has it.
	var tabs, quotedSemi strings.Builder
	tabs.WriteString("barcode\tcell_type\n")
	quotedSemi.WriteString(`barcode,"note; one; two; three",cell_type` + "\n")
	for i, l := range y {
		fmt.Fprintf(&tabs, "AAAC%04d-1\t%s\n", i, names[l])
		fmt.Fprintf(&quotedSemi, "AAAC%04d-1,x,%q\n", i, names[l])
	}
	os.WriteFile(p("tabs.csv"), []byte(tabs.String()), 0o644)
	os.WriteFile(p("quotedsemi.csv"), []byte(quotedSemi.String()), 0o644)

	bundleArgs := func(labels, out string, more ...string) []string {
		return append([]string{"bundle", "-embeddings", p("emb.npy"), "-labels", labels, "-out", p(out), "-k", "5"}, more...)
	}
	for _, c := range []struct{ labels, out string }{{p("labels.txt"), "txt"}, {p("obs.csv") + ":cell_type", "csv"}, {p("obs.tsv") + ":cell_type", "tsv"},
		{p("bom.csv") + ":cell_type", "bom"}, {p("first.csv") + ":cell_type", "first"}, {p("series.csv"), "series"}, {p("indexed.csv"), "indexed"}, {p("excel.csv") + ":cell_type", "excel"},
		{p("tabs.csv") + ":cell_type", "tabs"}, {p("quotedsemi.csv") + ":cell_type", "quotedsemi"}} {
		if err := run(io.Discard, io.Discard, bundleArgs(c.labels, c.out)); err != nil {
			t.Fatalf("%s: %v", c.labels, err)
		}
	}
	// An integer column with a missing value is integers with one row
	// unlabelled, as a .txt with an empty line: not names ordered "0",
	// "1", "10", "11", "2", …
	for _, c := range []struct{ labels, out string }{{p("leiden.txt"), "leiden-txt"}, {p("leiden-na.csv") + ":leiden", "leiden-na"}, {p("leiden-float.csv") + ":leiden", "leiden-float"}} {
		if err := run(io.Discard, io.Discard, bundleArgs(c.labels, c.out, "-missing-labels", "drop")); err != nil {
			t.Fatalf("%s: %v", c.labels, err)
		}
	}
	for _, f := range []string{"fit", "val", "cal", "test"} {
		for _, same := range [][]string{{"txt", "csv", "tsv", "bom", "first", "series", "indexed", "excel", "tabs", "quotedsemi"}, {"leiden-txt", "leiden-na", "leiden-float"}} {
			a, _ := os.ReadFile(p(same[0] + "/" + f + ".npz"))
			for _, other := range same[1:] {
				if b, err := os.ReadFile(p(other + "/" + f + ".npz")); err != nil || !bytes.Equal(a, b) {
					t.Errorf("%s/%s.npz differs from %s's (%v)", other, f, same[0], err)
				}
			}
		}
	}
	// Refused, the missing label is named as the file writes it, not by
	// the -1 it is read as; a file's own -1 stays -1.
	both := strings.Split(strings.TrimSuffix(leidenTxt.String(), "\n"), "\n")
	both[0], both[7] = "-1", "NA"
	os.WriteFile(p("leiden-both.txt"), []byte(strings.Join(both, "\n")+"\n"), 0o644)
	for _, c := range []struct{ labels, want string }{
		{p("leiden-na.csv") + ":leiden", `1 of 400 rows have a label that marks a missing value ("NA": 1)`},
		{p("leiden-float.csv") + ":leiden", `1 of 400 rows have a label that marks a missing value ("": 1)`},
		{p("leiden.txt"), `1 of 400 rows have a label that marks a missing value ("": 1)`},
		{p("leiden-both.txt"), `2 of 400 rows have a label that marks a missing value ("NA": 1, -1: 1)`},
	} {
		if err := run(io.Discard, io.Discard, bundleArgs(c.labels, "refused")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.labels, err, c.want)
		}
	}
	// Integer columns read as integers (leiden clusters).
	if err := run(io.Discard, io.Discard, bundleArgs(p("obs.csv")+":leiden", "leiden")); err != nil {
		t.Errorf("an integer column: %v", err)
	}
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, bundleArgs(p("same.csv")+":cell_type", "same")); err != nil ||
		!strings.Contains(stderr.String(), `same.csv: its first column, the index (unnamed, as pandas' to_csv writes a DataFrame's index: AnnData's obs_names), repeats 1 value (the first: "AAAC0010-1" on lines 12 and 13)`) {
		t.Errorf("repeated index values: %v\n%s", err, stderr.String())
	}
	// R's write.csv after order(df$label): the row names out of order.
	var sorted strings.Builder
	sorted.WriteString(`"","cell_type"` + "\n")
	for c := range 3 {
		for i, l := range y {
			if int(l) == c {
				fmt.Fprintf(&sorted, "\"%d\",\"%s\"\n", i+1, names[l])
			}
		}
	}
	os.WriteFile(p("sorted.csv"), []byte(sorted.String()), 0o644)
	stderr.Reset()
	if err := run(io.Discard, &stderr, bundleArgs(p("sorted.csv")+":cell_type", "sorted")); err != nil ||
		!strings.Contains(stderr.String(), `sorted.csv: its first column, the index (unnamed, as pandas' to_csv and R's write.csv write row numbers), holds 1 … 400 out of order (line `) {
		t.Errorf("an index out of order: %v\n%s", err, stderr.String())
	}
	stderr.Reset()
	if err := run(io.Discard, &stderr, bundleArgs(p("obs.csv")+":leiden", "leiden-quiet")); err != nil || strings.Contains(stderr.String(), "out of order") {
		t.Errorf("barcodes for an index: %v\n%s", err, stderr.String())
	}
	stderr.Reset()
	if err := run(io.Discard, &stderr, bundleArgs(p("bomsame.csv")+":cell_type", "bomsame")); err != nil ||
		!strings.Contains(stderr.String(), `bomsame.csv: its first column, the index`) {
		t.Errorf("repeated index values after a byte order mark: %v\n%s", err, stderr.String())
	}
	for _, c := range []struct {
		name, labels, want string
	}{
		{"no column named", p("obs.csv"), `obs.csv: which column holds the labels? give ` + p("obs.csv") + `:COLUMN (the columns: "", "cell_type", "donor", "n_genes", "leiden")`},
		{"a column absent", p("obs.csv") + ":celltype", `obs.csv: no column "celltype" (the columns: "", "cell_type", "donor", "n_genes", "leiden"): did you mean "cell_type"?`},
		{"rows repeated by the export", p("dup.csv") + ":cell_type", `dup.csv: 402 labels for the 400 rows of ` + p("emb.npy") + `: its first column, the index (unnamed, as pandas' to_csv writes a DataFrame's index: AnnData's obs_names), repeats 2 values (the first: "AAAC0010-1" on lines 12 and 13)`},
		{"a row short", p("short.csv") + ":cell_type", `short.csv:cell_type: 399 labels for the 400 rows of`},
		{"no header", p("nohead.csv") + ":cell_type", `): the first line is read as the columns' names, as pandas' to_csv writes them`},
		{"a ragged row", p("ragged.csv") + ":cell_type", `ragged.csv:2: 3 fields, and the header has 2`},
		{"a missing .csv", p("none.csv") + ":cell_type", `none.csv: no such file`},
		{"a word atop integers", p("leiden-bad.csv") + ":leiden", `leiden-bad.csv:2: "abc" in column "leiden" is not an integer, and the column's other values are`},
		{"two columns of one name", p("twice.csv") + ":cell_type", `twice.csv: two columns are named "cell_type"`},
	} {
		err := run(io.Discard, io.Discard, bundleArgs(c.labels, "bad"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		} else if exitCode(err) != 1 {
			t.Errorf("%s: exit %d", c.name, exitCode(err))
		}
	}
}
