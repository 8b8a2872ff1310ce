package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// csvLines is what encoding/csv reads of data with sep, each record and
// its line, as parseBlock's reader of quoted fields reads them.
func csvLines(t testing.TB, data []byte, sep byte, line int) string {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = rune(sep)
	cr.FieldsPerRecord = -1
	var out strings.Builder
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out.String()
		}
		if err != nil {
			t.Fatalf("encoding/csv: %v", err)
		}
		ln, _ := cr.FieldPos(0)
		fmt.Fprintf(&out, "%d %q\n", ln+line-1, rec)
	}
}

// plainOut is what plainLines reads of the same.
func plainOut(t testing.TB, data []byte, sep byte, line int) string {
	var out strings.Builder
	err := plainLines(data, sep, line, 3, func(rec []string, ln int) error {
		fmt.Fprintf(&out, "%d %q\n", ln, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestPlainLines: a block without quotes is split into the fields and
// lines encoding/csv reads — CRLF, a lone \r inside a line and at the
// file's end, empty lines and lines of \r alone, a last line without its
// newline, empty fields, blanks kept — for every separator sniffed.
func TestPlainLines(t *testing.T) {
	cases := []string{
		"",
		"\n",
		"a,b,c\n1,2,3\n",
		"1,2,3",
		"1,2,3\r\n4,5,6\r\n",
		"1,2\r3,4\n",
		"1,2,3\r",
		"1,2,3\r\r",
		"1,2,3\r\r\n",
		"\n\n1,2\n\r\n\n3\n",
		",,\n , 1 ,\n",
		"\r",
		"\r\n",
		"x\n\r",
	}
	for _, sep := range []byte{',', ';', '\t', '|'} {
		for _, c := range cases {
			data := []byte(strings.ReplaceAll(c, ",", string(sep)))
			if got, want := plainOut(t, data, sep, 7), csvLines(t, data, sep, 7); got != want {
				t.Errorf("sep %q, %q:\n%s\nencoding/csv:\n%s", sep, data, got, want)
			}
		}
	}
}

func FuzzPlainLines(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\r\n", "1;2\r3\n\n", "x\t\ty\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, '"') {
			return
		}
		for _, sep := range []byte{',', ';', '\t', '|'} {
			if got, want := plainOut(t, []byte(s), sep, 1), csvLines(t, []byte(s), sep, 1); got != want {
				t.Errorf("sep %q, %q:\n%s\nencoding/csv:\n%s", sep, s, got, want)
			}
		}
	})
}

// TestTextNumbersExact: a table's numbers, written as pandas writes
// float32s and float64s, as NumPy's savetxt does (%.18e), R (15 digits),
// fixed decimals and 17-digit float32 rounding boundaries, are read to the
// float32 of strconv's float64 — what the same array saved as a float64
// .npy gives — bit for bit, quoted or not.
func TestTextNumbersExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := []func() string{
		func() string { return strconv.FormatFloat(float64(float32(r.NormFloat64())), 'g', -1, 32) },
		func() string { return strconv.FormatFloat(r.NormFloat64()*1e-3, 'g', -1, 64) },
		func() string { return strconv.FormatFloat(r.NormFloat64()*1e5, 'e', 18, 64) },
		func() string { return strconv.FormatFloat(r.NormFloat64(), 'g', 15, 64) },
		func() string { return strconv.FormatFloat(r.NormFloat64(), 'f', 6, 64) },
		func() string {
			m := math.Float64frombits(math.Float64bits(float64(float32(r.NormFloat64()))) | 1<<28)
			return strconv.FormatFloat(m, 'g', 17, 64)
		},
		func() string { return strconv.FormatFloat(r.NormFloat64()*1e-30, 'g', -1, 64) },
	}
	const n, d = 3000, 7
	for _, quoted := range []bool{false, true} {
		var b strings.Builder
		want := make([]float32, 0, n*d)
		for range n {
			for j := range d {
				s := shapes[j]()
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, float32(v))
				if j > 0 {
					b.WriteByte(',')
				}
				if quoted {
					s = `"` + s + `"`
				}
				b.WriteString(s)
			}
			b.WriteByte('\n')
		}
		p := filepath.Join(t.TempDir(), "emb.csv")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		defer func(size int) { textBlockSize = size }(textBlockSize)
		textBlockSize = 4096
		e, _, _, err := readTextEmbeddings(p, "")
		if err != nil {
			t.Fatal(err)
		}
		if e.N != n || e.D != d {
			t.Fatalf("quoted %v: read %d × %d", quoted, e.N, e.D)
		}
		for i, x := range e.Rows {
			if math.Float32bits(x) != math.Float32bits(want[i]) {
				t.Fatalf("quoted %v: row %d, column %d: %v, strconv's %v", quoted, i/d, i%d, x, want[i])
			}
		}
	}
}
