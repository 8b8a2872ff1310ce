package conformal

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// review51File is s's file as ccs writes it, edited by edit, without its
// checksum (a file written by hand: read with a warning), at a path.
func review51File(t *testing.T, s *Set, edit func(string) string) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`,\n  "checksum": "sha256:[0-9a-f]{64}"`).ReplaceAllString(b.String(), "")
	edited := edit(text)
	if edited == text {
		t.Fatalf("the edit changed nothing in:\n%s", text)
	}
	p := filepath.Join(t.TempDir(), "set.json")
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReview51DuplicateClassNamesRefused checks that Load refuses a
// class-conditional set file whose two classes carry the same name,
// naming the file and classes[1].name (failed at 2131dd3: it loaded in
// ccs evaluate, ccs serve and Python's Set.load, and an anchor of class
// "coat" was judged with the first class's threshold, the second class
// of that name never reachable by it).
func TestReview51DuplicateClassNamesRefused(t *testing.T) {
	cal := synthetic(rand.New(rand.NewPCG(3, 4)), 120, 3)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i / 40)
	}
	s, err := Calibrate(geometry.Ball{D: 2}, cal, 0.2, Options{Mode: Class, LabelNames: []string{"coat", "rare", "shirt"}})
	if err != nil {
		t.Fatal(err)
	}
	p := review51File(t, s, func(f string) string { return strings.Replace(f, `"name": "rare"`, `"name": "coat"`, 1) })
	got, err := Load(p)
	if err == nil {
		l, lerr := got.LabelNamed("coat")
		t.Fatalf("loaded a set whose classes 0 and 1 are both named \"coat\"; \"coat\" is judged as label %d (err %v): want an error naming %s and classes[1].name", l, lerr, p)
	}
	if want := p + `: classes[1].name "coat" (label 1) is classes[0]'s too (label 0): want distinct names`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q: want %q", err, want)
	}
}
