package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTextBlocks: a table read in blocks of any size on any number of
// goroutines is read as one pass from the top reads it — the same rows to
// the bit, the same note and index, the same first error at the same
// line — whatever falls on a block's edge: a quoted field with a line
// break in it, a comment with a quote, CRLF, blank lines, a long line.
func TestTextBlocks(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	row := func(sep string, i, d int) string {
		f := []string{strconv.Itoa(i)} // pandas' index
		if sep == " " {
			f = nil // np.savetxt's: none
		}
		for range d {
			f = append(f, strconv.FormatFloat(r.NormFloat64(), 'g', -1, 32))
		}
		return strings.Join(f, sep)
	}
	table := func(sep, head string, n, d int, edit func(i int, line string) string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := range n {
			b.WriteString(edit(i, row(sep, i, d)) + "\n")
		}
		return b.String()
	}
	same := func(i int, l string) string { return l }
	header := ",x,y,z\n"
	files := map[string]string{
		"plain.csv": table(",", header, 200, 3, same),
		"crlf.csv":  table(",", header, 150, 3, func(i int, l string) string { return l + "\r" }),
		"blank.txt": table(" ", "", 150, 3, func(i int, l string) string {
			if i%7 == 3 {
				return l + "\n\n  "
			}
			return l
		}),
		// R's write.csv of a note with a line break and quotes in it.
		"quoted.csv": table(",", ",x,y,z,note\n", 150, 3, func(i int, l string) string {
			switch i % 5 {
			case 1:
				return l + `,"two` + "\n" + `lines, ""quoted"""`
			case 2:
				return l + `,"# not a comment"`
			}
			return l + ",plain"
		}),
		// np.savetxt's "# " header lines at the top, a quote in one: left
		// out, the fields below quoted all the same.
		"comment.csv": table(",", "# it's \"odd\n# x,y,z\n,x,y,z,note\n", 120, 3, func(i int, l string) string {
			if i%9 == 1 {
				return l + `,"a` + "\n" + `b"`
			}
			return l + ",plain"
		}),
		// A row below whose first field is Excel's #N/A: a row, not a
		// comment to drop (the labels would pair with the wrong rows).
		"hashrow.csv": table(",", ",x,y\n", 120, 2, func(i int, l string) string {
			if i == 70 {
				return field(l, ",", 1, "#N/A")
			}
			return l
		}),
		"long.csv": table(",", header, 60, 3, func(i int, l string) string {
			if i == 30 {
				return l[:len(l)-1] + strings.Repeat("0", 5000) + "1"
			}
			return l
		}),
		"ragged.csv": table(",", header, 150, 3, func(i int, l string) string {
			if i == 101 || i == 130 {
				return l + ",0.5"
			}
			return l
		}),
		"word.csv": table(",", header, 150, 3, func(i int, l string) string {
			if i == 120 {
				return field(l, ",", 1, "#VALUE!") // a spreadsheet's error
			}
			return l
		}),
		"late.csv": table(";", ";x;y;z\n", 150, 3, func(i int, l string) string {
			l = strings.ReplaceAll(l, ".", ",")
			switch i {
			case 90:
				return field(l, ";", 3, "NA") // a missing value, below
			case 60:
				return field(l, ";", 3, "1e-50")
			case 110:
				return field(l, ";", 2, "#N/A") // a missing value, below
			}
			return l
		}),
		"textlate.csv": table(",", ",x,y,z,id\n", 150, 3, func(i int, l string) string {
			if i < 100 {
				return l + ",NA"
			}
			return l + ",T" + strconv.Itoa(i) // text below missing values: a text column
		}),
		"badquote.csv": table(",", header, 150, 3, func(i int, l string) string {
			if i == 77 {
				return l + `"`
			}
			return l
		}),
		"big.txt": table(" ", "", 120, 3, func(i int, l string) string {
			if i == 70 {
				return l + " 1e39"
			}
			if i > 70 {
				return l + " 0.5"
			}
			return l + " 0.25"
		}),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		rows  []float32
		note  string
		index []int
		err   string
	}
	read := func(name string) result {
		e, note, index, err := readTextEmbeddings(filepath.Join(dir, name), "")
		res := result{rows: e.Rows, note: note, index: index}
		if err != nil {
			res.err = err.Error()
		}
		return res
	}
	defer func(size, workers int) { textBlockSize, textWorkers = size, workers }(textBlockSize, textWorkers)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		textBlockSize, textWorkers = 1<<20, 1
		want := read(name)
		if want.rows == nil && want.err == "" {
			t.Fatalf("%s: nothing read", name)
		}
		for _, size := range []int{1, 7, 64, 301, 4096} {
			for _, workers := range []int{1, 2, 5} {
				textBlockSize, textWorkers = size, workers
				got := read(name)
				if got.err != want.err || got.note != want.note || !slices.Equal(got.index, want.index) || !sameBits(got.rows, want.rows) {
					t.Errorf("%s, blocks of %d bytes on %d goroutines: %q %q %d rows, want %q %q %d rows", name, size, workers, got.err, got.note, len(got.rows), want.err, want.note, len(want.rows))
				}
			}
		}
		t.Logf("%s: %.80s", name, want.err+want.note)
	}
	// What the edits above were to provoke, read at its line.
	textBlockSize, textWorkers = 64, 3
	for name, want := range map[string]string{
		"ragged.csv":   "ragged.csv:103: 5 fields, and the header has 4",
		"word.csv":     `word.csv:122: "x" holds "#VALUE!" among its numbers`,
		"late.csv":     `late.csv:62: "z" holds 1e-50, which rounds to 0 in float32`,
		"badquote.csv": `badquote.csv: line 79: bare " in non-quoted-field`,
		"big.txt":      `big.txt:71: column 4 holds 1e39, beyond float32's range`,
		"textlate.csv": `left out: "id" (text), "" (an unnamed index`,
		"quoted.csv":   `150 rows; 3 columns of numbers read as the embedding ("x", "y", "z"), as float32; left out: "note" (text)`,
		"comment.csv":  `120 rows`,
		"hashrow.csv":  `hashrow.csv:72: "x" holds a missing value ("#N/A")`,
	} {
		got := read(name)
		if !strings.Contains(got.err+got.note, want) {
			t.Errorf("%s: %q %q, want %q", name, got.err, got.note, want)
		}
	}
}

// field is line with its field i (of fields separated by sep) set to v.
func field(line, sep string, i int, v string) string {
	f := strings.Split(line, sep)
	f[i] = v
	return strings.Join(f, sep)
}

// sameBits says whether a and b hold the same float32s, bit for bit.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// BenchmarkTextTable reads a 20 000 × 48 pandas CSV (its index, a header;
// 11 MB), the parse on every core.
func BenchmarkTextTable(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var s strings.Builder
	s.WriteString(",")
	for j := range 48 {
		fmt.Fprintf(&s, "dim_%d,", j)
	}
	s.WriteString("label\n")
	for i := range 20000 {
		s.WriteString(strconv.Itoa(i))
		for range 48 {
			s.WriteString("," + strconv.FormatFloat(r.NormFloat64(), 'g', -1, 32))
		}
		s.WriteString(",cat\n")
	}
	p := filepath.Join(b.TempDir(), "emb.csv")
	if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(s.Len()))
	for b.Loop() {
		e, _, _, err := readTextEmbeddings(p, "")
		if err != nil || e.N != 20000 || e.D != 48 {
			b.Fatal(err, e.N, e.D)
		}
	}
}

// TestParseNumber: a field is read as NumPy's loadtxt (and pandas) read
// it — blanks around it, a decimal comma said — and what Go alone reads
// as a number (hex floats, 1_000) or what marks a missing value is none.
func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		s         string
		v         float64
		comma, ok bool
	}{
		{" 0.125 ", 0.125, false, true},
		{"-1e-3", -1e-3, false, true},
		{"0,125", 0.125, true, true},
		{"-3,5e2", -350, true, true},
		{"1e400", math.Inf(1), false, true}, // refused by the reader as beyond float32
		{"Infinity", math.Inf(1), false, true},
		{"-inf", math.Inf(-1), false, true},
		{"NAN", math.NaN(), false, true}, // refused as NaN, not as missing
		{"NaN", 0, false, false},
		{"nan", 0, false, false},
		{"NA", 0, false, false},
		{"", 0, false, false},
		{"1_000", 0, false, false},
		{"0x1p-3", 0, false, false},
		{"-0X1P3", 0, false, false},
		{"0x1,8p1", 0, false, false},
		{"1,000.5", 0, false, false},
		{"1,2,3", 0, false, false},
		{"0.5.1", 0, false, false},
		{"#DIV/0!", 0, false, false},
	} {
		v, comma, ok := parseNumber(c.s)
		if ok != c.ok || comma != c.comma || ok && !(v == c.v || math.IsNaN(v) && math.IsNaN(c.v)) {
			t.Errorf("parseNumber(%q) = %v, %v, %v; want %v, %v, %v", c.s, v, comma, ok, c.v, c.comma, c.ok)
		}
	}
}

// FuzzTextBlocks: any file reads alike in one block and in blocks of a
// few bytes on three goroutines (go test -fuzz FuzzTextBlocks).
func FuzzTextBlocks(f *testing.F) {
	for _, s := range []string{
		",x,y\n0,0.5,1\n1,2,3\n2,\"4\",5\n",
		"a;b\n1,5;2\n# c \"\n3;4\n\"5\n\";6\n",
		"1 2\n3 4\n\n5 6 7\n",
		"x,y\n1,2\n3,\"a\"\"b\nc\"\n4,5\r\n",
		"x\ty\n1\t2\n3\tNA\n1e39\t1e-50\n",
		"id,e\n0,\"[1, 2]\"\n1,\"[3,\n 4]\"\n2,5|6\n3,{7,8}\n",
	} {
		f.Add(s, uint8(3))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string, size uint8) {
		p := filepath.Join(dir, "t.csv")
		if strings.Count(text, "\n") > 400 {
			return
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		defer func(size, workers int) { textBlockSize, textWorkers = size, workers }(textBlockSize, textWorkers)
		read := func() string {
			e, note, index, err := readTextEmbeddings(p, "")
			return fmt.Sprint(e.N, e.D, note, index, err, len(e.Rows)) + fmt.Sprint(bitsOf(e.Rows))
		}
		textBlockSize, textWorkers = 1<<20, 1
		want := read()
		textBlockSize, textWorkers = 1+int(size%16), 3
		if got := read(); got != want {
			t.Errorf("in blocks of %d bytes:\n%s\nin one:\n%s", textBlockSize, got, want)
		}
	})
}

// bitsOf is v's float32s' bits.
func bitsOf(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, x := range v {
		b[i] = math.Float32bits(x)
	}
	return b
}

// TestTextLists: an embedding column written a list a row — Polars',
// DuckDB's, Spark's and Hugging Face datasets' CSVs, NumPy's printed
// array over lines, Postgres' {…}, data.table's a|b|c — is read as the
// embedding, its row's numbers in order, whatever columns of numbers (an
// id, a score) stand beside it; such a column that cannot be read is
// refused naming its line, never left out as text while an id is read
// as a one-number embedding.
func TestTextLists(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	const n, d = 120, 6
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = float64(float32(r.NormFloat64() * 2))
		}
	}
	format := func(row []float64, sep string, f byte) []string {
		s := make([]string, len(row))
		for j, v := range row {
			s[j] = strconv.FormatFloat(v, f, -1, 32)
		}
		return s
	}
	write := func(name, head string, line func(i int) string) {
		var b strings.Builder
		b.WriteString(head)
		for i := range n {
			b.WriteString(line(i) + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	labels := []string{"gnu", "fox", "eel"}
	write("duckdb.csv", "id,label,score,embedding\n", func(i int) string {
		return fmt.Sprintf(`%d,%s,%g,"[%s]"`, i, labels[i%3], 0.5+float64(i)/7, strings.Join(format(x[i], ", ", 'g'), ", "))
	})
	write("numpy.csv", "embedding,label\n", func(i int) string { // np.array2string's wrapping
		f := format(x[i], " ", 'e')
		return fmt.Sprintf("\"[ %s\n  %s]\",%s", strings.Join(f[:3], "  "), strings.Join(f[3:], "  "), labels[i%3])
	})
	write("postgres.csv", "id,embedding\n", func(i int) string {
		return fmt.Sprintf(`%d,"{%s}"`, i, strings.Join(format(x[i], ",", 'g'), ","))
	})
	write("fwrite.csv", "id,label,embedding\n", func(i int) string {
		return fmt.Sprintf("%d,%s,%s", i, labels[i%3], strings.Join(format(x[i], "|", 'g'), "|"))
	})
	write("semicolons.csv", "id;embedding;note\n", func(i int) string { // a note of "[sic]": text
		return fmt.Sprintf("%d;[%s];[sic]", i, strings.Join(format(x[i], ", ", 'g'), ", "))
	})
	write("cut.csv", "id,embedding\n", func(i int) string { // print() of a long array
		f := format(x[i], " ", 'e')
		return fmt.Sprintf(`%d,"[%s ... %s]"`, i, f[0], f[d-1])
	})
	write("short.csv", "id,embedding\n", func(i int) string {
		f := format(x[i], ", ", 'g')
		if i == 77 {
			f = f[:d-1]
		}
		return fmt.Sprintf(`%d,"[%s]"`, i, strings.Join(f, ", "))
	})
	write("nan.csv", "id,embedding\n", func(i int) string {
		f := format(x[i], ", ", 'g')
		if i == 50 {
			f[2] = "NaN"
		}
		return fmt.Sprintf(`%d,"[%s]"`, i, strings.Join(f, ", "))
	})
	write("missing.csv", "id,embedding\n", func(i int) string {
		if i == 60 {
			return fmt.Sprintf("%d,", i)
		}
		return fmt.Sprintf(`%d,"[%s]"`, i, strings.Join(format(x[i], ", ", 'g'), ", "))
	})
	write("tiny.csv", "id,embedding\n", func(i int) string {
		f := format(x[i], ", ", 'g')
		if i == 30 {
			f[4] = "-1e-50"
		}
		return fmt.Sprintf(`%d,"[%s]"`, i, strings.Join(f, ", "))
	})
	write("two.csv", "text_emb,image_emb\n", func(i int) string {
		f := strings.Join(format(x[i], ", ", 'g'), ", ")
		return fmt.Sprintf(`"[%s]","[%s]"`, f, f)
	})
	defer func(size int) { textBlockSize = size }(textBlockSize)
	for _, size := range []int{1 << 20, 50} { // a list cut across blocks too
		textBlockSize = size
		for _, c := range []struct{ arg, note string }{
			{"duckdb.csv", `120 rows; the column of lists "embedding" read as the embedding (6 numbers a row), as float32; left out: "id", "label", "score"`},
			{"duckdb.csv:embedding", `the column of lists "embedding" read as the embedding (6 numbers a row), as float32; left out: "id", "label", "score"`},
			{"numpy.csv", `the column of lists "embedding" read as the embedding (6 numbers a row)`},
			{"postgres.csv", `the column of lists "embedding"`},
			{"fwrite.csv", `the column of lists "embedding"`},
			{"semicolons.csv", `the column of lists "embedding" read as the embedding (6 numbers a row), as float32; left out: "id", "note"`},
			{"two.csv:image_emb", `the column of lists "image_emb"`},
		} {
			e, note, _, err := readTextEmbeddings(filepath.Join(dir, c.arg), "")
			if name, spec, ok := strings.Cut(c.arg, ":"); ok {
				e, note, _, err = readTextEmbeddings(filepath.Join(dir, name), spec)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.arg, err)
			}
			if !strings.Contains(note, c.note) {
				t.Errorf("%s: note %q, want %q", c.arg, note, c.note)
			}
			if e.N != n || e.D != d {
				t.Fatalf("%s: (%d, %d), want (%d, %d)", c.arg, e.N, e.D, n, d)
			}
			for i := range n {
				for j := range d {
					if got := e.Rows[i*d+j]; float64(got) != x[i][j] {
						t.Fatalf("%s: row %d, coordinate %d: %v, want %v", c.arg, i, j, got, x[i][j])
					}
				}
			}
		}
		for arg, want := range map[string]string{
			"cut.csv":             `cut.csv:2: "embedding" holds "[`,
			"short.csv":           `short.csv:79: "embedding" holds "[`,
			"nan.csv":             `nan.csv:52: "embedding" holds "[`,
			"missing.csv":         `missing.csv:62: "embedding" holds a missing value ("")`,
			"tiny.csv":            `tiny.csv:32: "embedding" holds -1e-50 (in a list), which rounds to 0 in float32`,
			"two.csv":             `two.csv: "text_emb" and "image_emb" each hold a list of numbers a row: which is the embedding? name it, `,
			"duckdb.csv:score,e*": `"embedding" holds a list of numbers a row, the embedding by itself: name it alone`,
			"cut.csv:id":          ``, // the list column left out by name: the id alone read
		} {
			name, spec, _ := strings.Cut(arg, ":")
			_, _, _, err := readTextEmbeddings(filepath.Join(dir, name), spec)
			if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Errorf("%s, blocks of %d: %v, want %q", arg, size, err, want)
			}
		}
	}
	_, why, _ := parseList(`"[1.0 2.0 ... 9.0]"`)
	if _, why, _ = parseList("[1.0 2.0 ... 9.0]"); !strings.Contains(why, "NumPy's printed array, cut short") {
		t.Errorf("a cut array: %q", why)
	}
}

// TestCSVIDsBlocks: a labels column read in blocks of any size on any
// number of goroutines is read as one pass reads it — the same labels,
// names, missing marks, warning and first error at its line — across
// quoted names with commas and line breaks, a repeated or shuffled
// index, a ragged row, a bare quote and Excel's sep= line.
func TestCSVIDsBlocks(t *testing.T) {
	dir := t.TempDir()
	names := []string{"B cell", `Monocyte, "CD16+"`, "T\ncell", "NK"}
	quote := func(s string) string {
		if strings.ContainsAny(s, ",\"\n") {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	table := func(head string, n int, edit func(i int, l string) string) string {
		var b strings.Builder
		b.WriteString(head)
		for i := range n {
			b.WriteString(edit(i, fmt.Sprintf("%d,AAAC%04d-1,%s,%d", i, i, quote(names[i%4]), 1000+i)) + "\n")
		}
		return b.String()
	}
	same := func(i int, l string) string { return l }
	files := map[string]string{
		"obs.csv": table(",barcode,cell_type,n_genes\n", 150, same),
		"shuffled.csv": table(",barcode,cell_type,n_genes\n", 150, func(i int, l string) string {
			if i == 60 || i == 61 {
				return field(l, ",", 0, strconv.Itoa(121-i)) // rows 60 and 61 swapped
			}
			return l
		}),
		"repeated.csv": table(",barcode,cell_type,n_genes\n", 150, func(i int, l string) string {
			if i == 90 {
				return field(l, ",", 0, "3")
			}
			return l
		}),
		"ragged.csv":   table(",barcode,cell_type,n_genes\n", 150, func(i int, l string) string { return map[bool]string{true: l + ",x", false: l}[i == 111] }),
		"badquote.csv": table(",barcode,cell_type,n_genes\n", 150, func(i int, l string) string { return map[bool]string{true: l + `x"`, false: l}[i == 97] }),
		"sep.csv":      "sep=;\n;barcode;cell_type;n_genes\n" + strings.Repeat("0;AAAC0000-1;B cell;1000\n1;AAAC0001-1;\"Monocyte; CD16+\";1001\n", 40) + "80;AAAC0080-1;NK;1080\n",
		"integers.csv": "barcode,leiden\n" + strings.Repeat("AAAC-1,3\nAAAC-2,NA\nAAAC-3,11\n", 50),
		"quotedlast.csv": table(",barcode,n_genes,cell_type\n", 150, func(i int, l string) string {
			f := strings.SplitN(l, ",", 3)
			return f[0] + "," + f[1] + "," + strconv.Itoa(i) + "," + quote(names[i%4])
		}),
	}
	args := map[string]string{"integers.csv": "leiden"}
	defer func(size, workers int) { textBlockSize, textWorkers = size, workers }(textBlockSize, textWorkers)
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		col := cmpOr(args[name], "cell_type")
		read := func() string {
			ids, lnames, missing, warn, err := readCSVIDs(p, col, "labels")
			return fmt.Sprint(ids, lnames, missing, warn, err)
		}
		textBlockSize, textWorkers = 1<<20, 1
		want := read()
		for _, size := range []int{1, 7, 64, 301} {
			for _, workers := range []int{1, 3} {
				textBlockSize, textWorkers = size, workers
				if got := read(); got != want {
					t.Errorf("%s in blocks of %d on %d: %.300s\nin one: %.300s", name, size, workers, got, want)
				}
			}
		}
		if w, ok := map[string]string{
			"shuffled.csv": shuffledPrefix,
			"repeated.csv": `repeats 1 value (the first: "3" on lines 6 and 114)`, // 28 names over two lines above
			"ragged.csv":   "ragged.csv:141: 5 fields, and the header has 4",
			"badquote.csv": "parse error on line 123, column 42: bare \" in non-quoted-field",
			"sep.csv":      `repeats 78 values (the first: "0" on lines 3 and 5)`,
		}[name]; ok && !strings.Contains(want, w) {
			t.Errorf("%s: %.300s, want %q", name, want, w)
		}
	}
}

// TestTextOtherColumns: a column of the embeddings' own table that
// -labels (or -groups, -blocks, -ids) names is theirs, left out of the
// embedding and said so — an integer label column among real
// coordinates was refused as an id until every coordinate was named.
func TestTextOtherColumns(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "emb.csv")
	var b strings.Builder
	b.WriteString("dim_0,dim_1,dim_2,label\n")
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 300 {
		c := i % 3
		fmt.Fprintf(&b, "%v,%v,%v,%d\n", float32(3*c)+float32(r.NormFloat64()), float32(r.NormFloat64()), float32(-2*c)+float32(r.NormFloat64()), c)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := readTextEmbeddings(p, ""); err == nil || !strings.Contains(err.Error(), `"label" holds integers (0 to 2), named as ids or labels are`) {
		t.Errorf("alone: %v", err)
	}
	e, note, _, err := readTextEmbeddings(p, "", otherColumn{column: "label", flag: "-labels"})
	if err != nil || e.D != 3 || !strings.Contains(note, `3 columns of numbers read as the embedding ("dim_0", "dim_1", "dim_2"), as float32; left out: "label" (-labels)`) {
		t.Errorf("with -labels: d = %d, %q, %v", e.D, note, err)
	}
	var stderr bytes.Buffer
	if err := run(io.Discard, &stderr, []string{"bundle", "-embeddings", p, "-labels", p + ":label", "-out", filepath.Join(dir, "b"), "-k", "5"}); err != nil || !strings.Contains(stderr.String(), `left out: "label" (-labels)`) {
		t.Errorf("ccs bundle: %v\n%s", err, stderr.String())
	}
}

// TestSniffSeparator: a first line's separator, as both readers take it.
func TestSniffSeparator(t *testing.T) {
	for _, c := range []struct {
		line, ext string
		want      rune
	}{
		{"a,b,c", ".csv", ','},
		{"a;b;c", ".csv", ';'},
		{"a\tb", ".csv", '\t'},
		{"a b c", ".txt", 0},
		{"a b c", ".csv", ','},
		{"a,b", ".tsv", '\t'},
		{`id,"note; one; two; three",label`, ".csv", ','},        // semicolons in quotes
		{"-0,801931;-1,324359;-0,248362", ".csv", ';'},           // decimal commas, no header
		{"-22,51374", ".csv", ','},                               // one field: as good as any
		{"-0,80;-1,32;cat", ".csv", ';'},                         // and a label
		{"1.5,2.5,a;b", ".csv", ','},                             // a semicolon in a text field
		{"0,5;1,5;2,5;3,5;4,5;5,5;6,5;7,5;8,5;9,5", ".txt", ';'}, // more commas than semicolons
	} {
		if got := sniffSeparator(c.line, c.ext); got != c.want {
			t.Errorf("sniffSeparator(%q, %q) = %q, want %q", c.line, c.ext, got, c.want)
		}
	}
}

// TestTxtAndCommentedLabels: labels in a column of a .txt table of
// blanks (np.savetxt's default), or below np.savetxt's "# x,y,label"
// header with -labels FILE (found by its name), are that column's, not
// one label a line with the header among them; a .txt of one label a
// line, blanks in its labels, stays one a line.
func TestTxtAndCommentedLabels(t *testing.T) {
	dir := t.TempDir()
	names := []string{"cat", "dog", "eel"}
	var txt, commented, csvc, plain strings.Builder
	txt.WriteString("x y label\n")
	commented.WriteString("# x y label\n")
	csvc.WriteString("# x,y,label\n")
	for i := range 30 {
		fmt.Fprintf(&txt, "%d.5 1.25 %s\n", i, names[i%3])
		fmt.Fprintf(&commented, "%d.5 1.25 %s\n", i, names[i%3])
		fmt.Fprintf(&csvc, "%d.5,1.25,%s\n", i, names[i%3])
		fmt.Fprintf(&plain, "%s cell\n", names[i%3])
	}
	for name, text := range map[string]string{"t.txt": txt.String(), "c.txt": commented.String(), "c.csv": csvc.String(), "plain.txt": plain.String()} {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	for _, arg := range []string{"t.txt", "t.txt:label", "c.txt", "c.txt:label", "c.csv", "c.csv:label", "plain.txt"} {
		ids, lnames, _, _, err := readIDs(filepath.Join(dir, arg), "labels")
		if err != nil || len(ids) != 30 {
			t.Errorf("%s: %d labels, %v", arg, len(ids), err)
			continue
		}
		for i, id := range ids {
			want := names[i%3]
			if arg == "plain.txt" {
				want += " cell"
			}
			if lnames[id] != want {
				t.Errorf("%s: row %d: %q, want %q", arg, i, lnames[id], want)
				break
			}
		}
	}
	if _, _, _, _, err := readIDs(filepath.Join(dir, "t.txt")+":lable", "labels"); err == nil || !strings.Contains(err.Error(), `t.txt: no column "lable" (the columns of its first line, split at blanks: x, y, label)`) {
		t.Errorf("a column not there: %v", err)
	}
}

// BenchmarkJSONL reads 20 000 JSON lines of an id, a label and a d = 64
// embedding as datasets' to_json writes float32s (Python's repr of their
// float64s: 17 digits; 20 MB), the parse on every core.
func BenchmarkJSONL(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var s strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&s, `{"id": %d, "label": "cat", "embedding": [`, i)
		for j := range 64 {
			if j > 0 {
				s.WriteString(", ")
			}
			s.WriteString(strconv.FormatFloat(float64(float32(r.NormFloat64())), 'g', -1, 64))
		}
		s.WriteString("]}\n")
	}
	p := filepath.Join(b.TempDir(), "emb.jsonl")
	if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(s.Len()))
	for b.Loop() {
		e, _, err := readJSONLEmbeddings(p, "")
		if err != nil || e.N != 20000 || e.D != 64 {
			b.Fatal(err, e.N, e.D)
		}
	}
}
