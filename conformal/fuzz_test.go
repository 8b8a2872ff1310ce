package conformal

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ccsets/ccs/geometry"
)

// setSeeds are set files of every geometry and calibration mode, with and
// without an OOD calibration.
func setSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	cal := synthetic(rand.New(rand.NewPCG(8, 8)), 120, 3)
	cal.Labels = make([]int64, cal.N)
	for i := range cal.Labels {
		cal.Labels[i] = int64(i % 2)
	}
	el, _ := geometry.NewEllipsoid(2, []float64{2, 0.3, 0.3, 1})
	nm, _ := geometry.NewNorm(2, []float64{1, 0.2, -0.1, 0.9}, 1.5)
	gb, _ := geometry.NewGenBall([]float64{0.5, 2}, []float64{1.2, 3})
	var out [][]byte
	add := func(s *Set) {
		var b bytes.Buffer
		if err := s.WriteJSON(&b); err != nil {
			tb.Fatal(err)
		}
		out = append(out, b.Bytes())
	}
	for _, g := range []geometry.Geometry{geometry.Ball{D: 2}, el, nm, gb} {
		for _, opt := range []Options{{}, {Mode: Pooled}, {Mode: PAC, Delta: 0.1}, {Mode: Class}} {
			s, err := Calibrate(g, cal, 0.1, opt)
			if err != nil {
				tb.Fatal(err)
			}
			add(s)
		}
	}
	s, _ := Calibrate(geometry.Ball{D: 2}, cal, 0.1, Options{})
	s.Reference = &Reference{Source: "seed", N: 3, Rows: []float32{0, 0, 1, 1, 2, 0}}
	s.OOD, _ = NewOODCalibration(1, []float64{0.1, 0.5, 0.9, 1.3}, "seed")
	add(s)
	add(Uncalibrated(gb, &FitInfo{Method: "seed", N: 3}))
	return out
}

// FuzzLoadSet feeds the set-file reader arbitrary documents: it never
// panics, and a document it accepts is a working set: it scores, and it
// writes a file that reads back to the same bytes.
func FuzzLoadSet(f *testing.F) {
	for _, s := range setSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"format": "ccs-set", "version": 1, "dim": 1099511627776, "geometry": {"kind": "ball", "dim": 1099511627776}}`))
	f.Add([]byte(`{"format": "ccs-set", "version": 1, "threshold": NaN}`))
	f.Add([]byte("\xef\xbb\xbf{\"format\": \"ccs-set\", \"version\": 1, \"alpha\": \"0.1\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadJSON(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if s.Calibrated() && (math.IsNaN(s.Threshold) || !(s.Alpha > 0 && s.Alpha < 1)) {
			t.Fatalf("accepted threshold %v, α %v", s.Threshold, s.Alpha)
		}
		if d := s.Geometry.Dim(); d >= 1 && d <= 1<<12 {
			x := make([]float32, d)
			for i := range x {
				x[i] = 0.5
			}
			if v := s.Geometry.Scores(nil, x)[0]; math.IsNaN(v) {
				t.Fatalf("accepted set scores NaN: %s", data)
			}
		}
		var b1, b2 bytes.Buffer
		if err := s.WriteJSON(&b1); err != nil {
			t.Fatalf("accepted set does not write: %v", err)
		}
		s2, err := ReadJSON(bytes.NewReader(b1.Bytes()))
		if err != nil {
			t.Fatalf("written set does not read back: %v\n%s", err, b1.Bytes())
		}
		if err := s2.WriteJSON(&b2); err != nil || !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("round trip changed the file: %v\n%s\n%s", err, b1.Bytes(), b2.Bytes())
		}
	})
}

// fileDocs are set files decodeFast must leave to encoding/json, or read
// as it does: keys repeated, escaped or in other case, values of the wrong
// shape, a reference pool's rows past float32's range.
var fileDocs = []string{
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2}}`,
	`{"format":"ccs-set","version":1,"dim":2,"Geometry":{"kind":"ball","dim":2}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"GEOMETRY":{"kind":"ball","dim":3}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"geometry":{"kind":"ball","dim":3}}`,
	`{"format":"ccs-set","version":1,"dim":2,"\u0067eometry":{"kind":"ball","dim":2}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"extra":1}`,
	`{"format":"ccs-set","version":1,"DIM":2,"geometry":{"kind":"ball","dim":2}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"ood_reference":{"source":"s","seed":1,"n":1,"rows":[1,2]}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"ood_reference":{"source":"s","n":1,"rows":[1,1e39]}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"ood_reference":{"source":"s","n":1,"Rows":[1,2]}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"ood_reference":{"source":"s","n":1,"rows":[1,2],"x":0}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"ood_reference":{"n":"1"}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"ood_reference":[]}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":"ball"}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2}} {}`,
	// A key repeated below the top level, which decodeSlow refuses.
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2,"dim":2}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"calibration":{"mode":"one","n":9,"N":8}}`,
	`{"format":"ccs-set","version":1,"dim":2,"geometry":{"kind":"ball","dim":2},"classes":[{"label":0},{"label":1,"n":2,"n":3}]}`,
}

// TestDecodeFast: the one-pass reading of set files reads every file ccs
// writes, and as encoding/json reads it.
func TestDecodeFast(t *testing.T) {
	for _, doc := range setSeeds(t) {
		if _, ok := decodeFast(doc); !ok {
			t.Errorf("a file ccs wrote was not read in one pass:\n%.300s", doc)
		}
		checkDecodeFast(t, doc)
	}
	for _, doc := range fileDocs {
		checkDecodeFast(t, []byte(doc))
	}
}

// checkDecodeFast fails t where decodeFast reads doc and decodeSlow does
// not, or reads it otherwise.
func checkDecodeFast(t *testing.T, doc []byte) {
	t.Helper()
	fast, ok := decodeFast(doc)
	slow, err := decodeSlow(doc)
	if ok && (err != nil || !reflect.DeepEqual(fast, slow)) {
		t.Fatalf("%.300s:\none pass read %+v;\nencoding/json %+v, %v", doc, fast, slow, err)
	}
}

// FuzzDecodeFast: checkDecodeFast on arbitrary documents.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range setSeeds(f) {
		f.Add(s)
	}
	for _, doc := range fileDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkDecodeFast(t, doc) })
}
