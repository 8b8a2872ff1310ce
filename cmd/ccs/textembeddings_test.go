package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// textTable writes rows of x (n, d) with an id and a label column the
// ways tools write them: sep between fields, a header of names, an
// index column first, decimal commas.
func textTable(x [][]float64, sep string, header, index, comma bool, names []string) string {
	var b strings.Builder
	if header {
		var h []string
		if index {
			h = append(h, "")
		}
		h = append(h, "ticket_id")
		h = append(h, names...)
		h = append(h, "label")
		b.WriteString(strings.Join(h, sep) + "\r\n")
	}
	for i, row := range x {
		var f []string
		if index {
			f = append(f, strconv.Itoa(i))
		}
		f = append(f, fmt.Sprintf("T%d", 100000+i))
		for _, v := range row {
			s := strconv.FormatFloat(v, 'g', -1, 64)
			if comma {
				s = strings.Replace(s, ".", ",", 1)
			}
			f = append(f, s)
		}
		f = append(f, []string{"billing", "account", "sales"}[i%3])
		b.WriteString(strings.Join(f, sep) + "\r\n")
	}
	return b.String()
}

// TestTextEmbeddings: a table of embeddings written as pandas (its
// index), R (quoted, its row names), a spreadsheet (semicolons, decimal
// commas, a byte-order mark, CRLF), a TSV, a .csv.gz, np.savetxt's blanks
// and a frame of an array (columns named 0, 1, …) is read as the same
// float32 rows, its text columns and index left out and said so.
func TestTextEmbeddings(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	r := rand.New(rand.NewPCG(7, 8))
	const n, d = 30, 5
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = r.NormFloat64() * 3
		}
	}
	names := make([]string, d)
	for j := range names {
		names[j] = fmt.Sprintf("dim_%d", j)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(textTable(x, ",", true, true, false, names)))
	zw.Close()
	var plain, numbered, trailing, spectra strings.Builder
	numbered.WriteString(",0,1,2,3,4\n")
	spectra.WriteString("400,410,420,430,440\n")
	for i, row := range x {
		var f []string
		for _, v := range row {
			f = append(f, strconv.FormatFloat(v, 'e', 18, 64))
		}
		plain.WriteString(strings.Join(f, " ") + "\n")
		numbered.WriteString(strconv.Itoa(i) + "," + strings.Join(f, ",") + "\n")
		trailing.WriteString(strings.Join(f, "\t") + "\t\n")
		spectra.WriteString(strings.Join(f, ",") + "\n")
	}
	files := map[string]string{
		"pandas.csv":   textTable(x, ",", true, true, false, names),
		"excel.csv":    "\ufeff" + textTable(x, ";", true, false, true, names),
		"emb.tsv":      textTable(x, "\t", true, false, false, names),
		"savetxt.txt":  plain.String(),
		"numbered.csv": numbered.String(),
		"noheader.csv": textTable(x, ",", false, false, false, nil),
		"trailing.tsv": trailing.String(),
		"spectra.csv":  spectra.String(),
	}
	for name, text := range files {
		os.WriteFile(p(name), []byte(text), 0o644)
	}
	// R's write.csv: quoted row names and strings, an empty name above
	// the row names.
	rq := strings.Builder{}
	for i, line := range strings.Split(strings.TrimSuffix(files["pandas.csv"], "\r\n"), "\r\n") {
		f := strings.Split(line, ",")
		if i > 0 {
			f[0], f[1] = `"`+strconv.Itoa(i)+`"`, `"`+f[1]+`"`
		} else {
			f[0] = `""`
		}
		rq.WriteString(strings.Join(f, ",") + "\n")
	}
	os.WriteFile(p("r.csv"), []byte(rq.String()), 0o644)
	os.WriteFile(p("pandas.csv.gz"), gz.Bytes(), 0o644)
	cases := []struct {
		file, note string
	}{
		{"pandas.csv", `30 rows; 5 columns of numbers read as the embedding ("dim_0", "dim_1" … "dim_4"), as float32; left out: "ticket_id", "label" (text), "" (an unnamed index of integers, pandas' or R's)`},
		{"r.csv", `left out: "ticket_id", "label" (text), "" (an unnamed index`},
		{"excel.csv", `as float32, decimal commas read as points; left out: "ticket_id", "label" (text)`},
		{"emb.tsv", `5 columns of numbers read as the embedding ("dim_0", "dim_1" … "dim_4")`},
		{"pandas.csv.gz", `left out: "ticket_id", "label" (text), "" (an unnamed index`},
		{"savetxt.txt", `30 rows; 5 columns of numbers read as the embedding (column 1, column 2 … column 5), as float32`},
		{"numbered.csv", `("0", "1" … "4"), as float32; left out: "" (an unnamed index`},
		{"noheader.csv", `(column 2, column 3 … column 6), as float32; left out: column 1, column 7 (text)`},
		{"trailing.tsv", `(column 1, column 2 … column 5), as float32; left out: column 6 (empty on every line: a separator at the lines' end?)`},
		{"spectra.csv", `30 rows; 5 columns of numbers read as the embedding ("400", "410" … "440")`},
		{"pandas.csv:dim_*", `5 columns of numbers read as the embedding ("dim_0", "dim_1" … "dim_4"), as float32; left out: "", "ticket_id", "label"`},
		{"pandas.csv:dim_4,dim_0", `2 columns of numbers read as the embedding ("dim_0", "dim_4")`},
	}
	// The labels of the same compressed table, as -labels reads them.
	ids, labelNames, _, _, err := readIDs(p("pandas.csv.gz")+":label", "labels")
	if err != nil || len(ids) != n || labelNames[ids[1]] != "account" {
		t.Errorf("labels of pandas.csv.gz: %v %v, %v", ids, labelNames, err)
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := readEmbeddings(p(c.file), false)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(f.conv, c.note) {
				t.Errorf("note %q, want %q", f.conv, c.note)
			}
			cols := []int{0, 1, 2, 3, 4}
			if strings.HasSuffix(c.file, ",dim_0") {
				cols = []int{0, 4}
			}
			if f.N != n || f.D != len(cols) {
				t.Fatalf("(%d, %d), want (%d, %d)", f.N, f.D, n, len(cols))
			}
			for i := range n {
				for k, j := range cols {
					if got, want := f.Rows[i*f.D+k], float32(x[i][j]); got != want {
						t.Fatalf("row %d, coordinate %d: %v, want %v", i, k, got, want)
					}
				}
			}
		})
	}
}

// TestTextEmbeddingsBad: a table that cannot be read as embeddings as it
// stands is refused, naming the file, the line or column, and what to do.
func TestTextEmbeddingsBad(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	files := map[string]string{
		"idcol.csv":      "ticket_no,dim_0,dim_1\n1001,0.5,0.25\n1002,1.5,-0.75\n",
		"na.csv":         "a,b\n0.5,0.25\n1.5,NA\n",
		"ragged.csv":     "a,b\n0.5,0.25\n1.5\n",
		"text.csv":       "id,label\nx,y\nz,w\n",
		"empty.csv":      "",
		"header.csv":     "a,b\n",
		"word.csv":       "a,b\n0.5,0.25\n1.5,oops\n",
		"nohead.csv":     "0.5,0.25\n1.5,0.75\n",
		"notgz.csv.gz":   "a,b\n1,2\n",
		"emb.yaml.gz":    "{}",
		"div0.csv":       "id,a,b\nx,0.5,0.25\ny,#DIV/0!,0.75\n",
		"hex.csv":        "a,b\n0.5,0.25\n0x1p-3,0.75\n",
		"ids.csv":        idRows(60, "code"),
		"counts.csv":     idRows(60, "n_tokens")[:0] + countRows(60),
		"twice.csv":      "x,x\n0.5,0.25\n1.5,0.75\n",
		"nothing.csv":    "a,b,c\n0.5,0.25,\n1.5,0.75,\n",
		"huge.csv":       "a,b\n0.5,0.25\n1e400,0.75\n",
		"idonly.csv":     "id,label,text\n1,a,x\n2,b,y\n",
		"big.csv":        "a,b\n0.5,0.25\n1.5,-1e300\n",
		"tiny.csv":       "a,b\n0.5,0.25\n1.5,1e-50\n",
		"inf.csv":        "a,b\n0.5,0.25\n1.5,-inf\n",
		"sephint.csv":    "\ufeffsep=;\r\na;b\r\n0,5;0,25\r\n1,5;0,75\r\n", // Excel's
		"utf16.csv":      "\xff\xfea\x00,\x00b\x00\n\x001\x00,\x002\x00\n\x00",
		"utf16nobom.csv": "x\x00,\x00y\x00\n\x001\x00,\x002\x00\n\x00",
		"cr.csv":         "x,y\r1,2\r3,4\r",
		"tiny400.csv":    "x,y\n1e-400,2\n3,4\n",
		"rehead.csv":     "a,b\n0.5,0.25\n1.5,0.75\na,b\n2.5,0.5\n",
		"thousands.csv":  "a;b\n0,5;0,25\n1.234,5;0,75\n",
		"tinytext.csv":   "a,b,note\n0.5,0.25,x\n1.5,0.75,1e-50\n",
	}
	for name, text := range files {
		os.WriteFile(p(name), []byte(text), 0o644)
	}
	// Spark's df.write.csv("spark.csv"): a directory of parts.
	os.Mkdir(p("spark.csv"), 0o755)
	for _, part := range []string{"part-00000-a1-c000.csv", "part-00001-a1-c000.csv", "_SUCCESS"} {
		os.WriteFile(filepath.Join(p("spark.csv"), part), []byte("a,b\n0.5,0.25\n"), 0o644)
	}
	if _, _, _, _, err := readIDs(p("spark.csv")+":label", "labels"); err == nil || !strings.Contains(err.Error(), "spark.csv: a directory of 2 .csv parts, as Spark writes one (df.write.csv): ccs reads one file — join them in their order") {
		t.Errorf("labels of Spark's parts: %v", err)
	}
	cases := []struct{ arg, want string }{
		{"spark.csv", `spark.csv: a directory of 2 .csv parts, as Spark writes one (df.write.csv): ccs reads one file — join them in their order, with a header in each part (option header=true): head -n 1 `},
		{"idcol.csv", `idcol.csv: "ticket_no" holds integers (1001 to 1002), named as ids or labels are, among real numbers: an id or labels read as a coordinate? name the embedding's columns, ` + p("idcol.csv") + `:dim_* (to keep it as a feature, name it too)`},
		{"ids.csv", `ids.csv: "code" holds integers (5 to 64), a different one each row, among real numbers`},
		{"div0.csv", `div0.csv:3: "a" holds "#DIV/0!" among its numbers: a coordinate's every value must be a number`},
		{"div0.csv:b", ``},
		{"counts.csv", ``}, // a count, an indicator and a dead unit among reals: features
		{"hex.csv", `hex.csv:3: "a" holds "0x1p-3" among its numbers`},
		{"twice.csv", `twice.csv: two columns are named "x": rename one`},
		{"nothing.csv", `nothing.csv: "c" holds no value on any line`},
		{"idonly.csv", `idonly.csv: the one column of numbers, "id", holds integers (1 to 2), named as ids or labels are: an id, no embedding (left out as text: "label", "text")`},
		{"idonly.csv:id", ``}, // named: read
		{"huge.csv", `huge.csv:3: "a" holds 1e400, beyond float32's range (largest 3.4e+38), in which ccs reads embeddings: fix or drop the row (and its label)`},
		{"big.csv", `big.csv:3: "b" holds -1e300, beyond float32's range`},
		{"tiny.csv", `tiny.csv:3: "b" holds 1e-50, which rounds to 0 in float32 (smallest 1.4e-45)`},
		{"tiny.csv:a", ``},
		{"inf.csv", `inf.csv:3: "b" holds -inf, no finite number: ccs reads finite coordinates only`},
		{"sephint.csv", ``},
		{"sephint.csv:b", ``},
		{"utf16.csv", `utf16.csv:1: not UTF-8 but UTF-16`},
		{"utf16nobom.csv", `utf16nobom.csv:1: not UTF-8 but UTF-16`},
		{"cr.csv", `cr.csv: its lines end in a carriage return alone`},
		{"tiny400.csv", `tiny400.csv:2: "x" holds 1e-400, which rounds to 0 in float32`},
		{"rehead.csv", `rehead.csv:4: a line repeating the header ("a,b"): files joined with their headers`},
		{"thousands.csv", `thousands.csv:3: "a" holds "1.234,5" among its numbers: a coordinate's every value must be a number (a number written with thousands separators?`},
		{"thousands.csv:b", ``},
		{"tinytext.csv", ``},
		{"na.csv", `na.csv:3: "b" holds a missing value ("NA"): ccs reads no missing values — drop the row (and its label, in the same order), or fill it in`},
		{"ragged.csv", `ragged.csv:3: 1 fields, and the header has 2`},
		{"text.csv", `text.csv: no column of numbers (columns of text: column 1, column 2)`},
		{"empty.csv", `empty.csv: empty: no rows`},
		{"header.csv", `header.csv: a header and no rows`},
		{"word.csv:a,b", `word.csv:3: "b" holds "oops" among its numbers`},
		{"word.csv:c", `word.csv: no column matches "c" (the columns: a, b)`},
		{"idcol.csv:dim0", `no column matches "dim0" (the columns: ticket_no, dim_0, dim_1): did you mean "dim_0"?`},
		{"nohead.csv:a", `nohead.csv:a: the file has no header line, so its columns have no names to pick`},
		{"notgz.csv.gz", `notgz.csv.gz: not gzip-compressed`},
		{"emb.yaml.gz", `emb.yaml.gz: a gzip-compressed file, which ccs reads only of a .csv, .tsv, .txt or JSON lines (.jsonl): decompress it first (gunzip -k`},
	}
	for _, c := range cases {
		t.Run(c.arg, func(t *testing.T) {
			_, err := readEmbeddings(p(c.arg), false)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	if _, err := readEmbeddings(p("na.csv"), true); err == nil || !strings.Contains(err.Error(), "views come as an (n, v, d) array") {
		t.Errorf("views of a text table: %v", err)
	}
}

// idRows is a table of a real column beside an integer column of name
// holding 5, 6, … — a different one each row.
func idRows(n int, name string) string {
	var b strings.Builder
	b.WriteString("x," + name + "\n")
	for i := range n {
		fmt.Fprintf(&b, "%v,%d\n", float64(i)/3+0.1, 5+i)
	}
	return b.String()
}

// countRows is a table of a real column beside a count, an indicator
// written as 0.0/1.0 and a column of zeros (a dead ReLU unit).
func countRows(n int) string {
	var b strings.Builder
	b.WriteString("x,n_tokens,is_weekend,relu_5\n")
	for i := range n {
		fmt.Fprintf(&b, "%v,%d,%d.0,0.0\n", float64(i)/3+0.1, i%7, i%2)
	}
	return b.String()
}

// TestTextIndexPairing: a frame shuffled, then exported as embeddings and
// labels apart, pairs row by row (one index): no warning; embeddings so
// exported beside labels in the frame's first order are warned of, once;
// labels of the same table need nothing.
func TestTextIndexPairing(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	const n, d = 300, 3
	_, x64, y := mixture(4, n, d, 3)
	perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
	var emb, lab, txt strings.Builder
	emb.WriteString(",a,b,c\n")
	lab.WriteString(",label\n")
	for _, i := range perm {
		fmt.Fprintf(&emb, "%d,%v,%v,%v\n", i, x64[i*d], x64[i*d+1], x64[i*d+2])
		fmt.Fprintf(&lab, "%d,%d\n", i, y[i])
	}
	for i := range n {
		fmt.Fprintln(&txt, y[i]) // the frame's first order
	}
	os.WriteFile(p("emb.csv"), []byte(emb.String()), 0o644)
	os.WriteFile(p("lab.csv"), []byte(lab.String()), 0o644)
	os.WriteFile(p("lab.txt"), []byte(txt.String()), 0o644)
	for _, c := range []struct {
		labels string
		warned bool
	}{{p("lab.csv") + ":label", false}, {p("lab.txt"), true}} {
		var stderr bytes.Buffer
		err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p("emb.csv"), "-labels", c.labels, "-out", p("b"), "-k", "3"})
		if err != nil {
			t.Fatalf("%s: %v", c.labels, err)
		}
		if got := strings.Count(stderr.String(), "out of order"); got != map[bool]int{false: 0, true: 1}[c.warned] {
			t.Errorf("%s: %d warnings of an index out of order\n%s", c.labels, got, stderr.String())
		}
	}
}

// TestTextHeaders: headers as writers write them — pandas' frame of two
// columns with and without its index, names after ", ", np.savetxt's
// "# " header line, a TSV with pandas' index — are headers, and the
// rows below are every row; a survey's first answers 1,2,3 above
// integers are a row.
func TestTextHeaders(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	rows := [][]string{{"0.25", "-1.5"}, {"3.5", "2e-3"}, {"1.125", "4"}}
	join := func(r []string, sep string) string { return strings.Join(r, sep) }
	files := map[string]struct {
		text string
		n, d int
	}{
		"pandas2.csv":   {",0,1\n0," + join(rows[0], ",") + "\n1," + join(rows[1], ",") + "\n2," + join(rows[2], ",") + "\n", 3, 2},
		"noindex2.csv":  {"0,1\n" + join(rows[0], ",") + "\n" + join(rows[1], ",") + "\n" + join(rows[2], ",") + "\n", 3, 2},
		"spaces.csv":    {"dim_0, dim_1\n" + join(rows[0], ",") + "\n" + join(rows[1], ",") + "\n" + join(rows[2], ",") + "\n", 3, 2},
		"savetxt.txt":   {"# a b\n" + join(rows[0], " ") + "\n" + join(rows[1], " ") + "\n" + join(rows[2], " ") + "\n", 3, 2},
		"pandas.tsv":    {"\tdim_0\tdim_1\n0\t" + join(rows[0], "\t") + "\n1\t" + join(rows[1], "\t") + "\n2\t" + join(rows[2], "\t") + "\n", 3, 2},
		"decimals.csv":  {",0.5,1.5\n0," + join(rows[0], ",") + "\n1," + join(rows[1], ",") + "\n2," + join(rows[2], ",") + "\n", 3, 2},
		"survey.csv":    {"1,2,3\n4,5,1\n2,2,2\n", 3, 3},
		"spaces.csv:d*": {"", 3, 2},
	}
	for name, f := range files {
		if f.text != "" {
			os.WriteFile(p(name), []byte(f.text), 0o644)
		}
	}
	for name, f := range files {
		e, err := readEmbeddings(p(name), false)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if e.N != f.n || e.D != f.d {
			t.Errorf("%s: (%d, %d), want (%d, %d): %s", name, e.N, e.D, f.n, f.d, e.conv)
			continue
		}
		if name != "survey.csv" && (e.Rows[0] != 0.25 || e.Rows[1] != -1.5 || e.Rows[3] != 0.002) {
			t.Errorf("%s: rows %v", name, e.Rows)
		}
	}
}
