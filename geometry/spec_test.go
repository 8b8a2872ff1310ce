package geometry

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSpecRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	x := randDiffs32(rng, 10, 3)
	for _, g := range []Geometry{Ball{D: 3}, randEllipsoid(rng, 3), randNorm(rng, 3, 1.3), randGenBall(rng, 3, []float64{0.5, 2, 7})} {
		s, err := Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := Decode(s)
		if err != nil {
			t.Fatalf("%v: %v", g.Kind(), err)
		}
		if !slices.Equal(g.Scores(nil, x), g2.Scores(nil, x)) || g.LogVolume(2) != g2.LogVolume(2) {
			t.Errorf("%v: decoded geometry differs", g.Kind())
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: KindBall, Dim: 0}, "geometry.dim is missing or 0: want the dimension, at least 1"},
		{Spec{Kind: KindBall, Dim: -1}, "dim -1 < 1"},
		// A file's geometry without its kind, or none: named as
		// missing, not as Kind(0).
		{Spec{Dim: 2}, "geometry.kind is missing (want ball, ellipsoid, single or genball)"},
		{Spec{}, "geometry is missing"},
		{Spec{Kind: KindBall, Dim: 2, Params: Params{"p": {2}}}, `field "p" does not belong`},
		{Spec{Kind: KindGenBall, Dim: 2, Params: Params{"scales": {1, 1}, "exponents": {1, 1}, "sigma": {1}}}, `field "sigma"`},
		{Spec{Kind: KindGenBall, Dim: 3, Params: Params{"scales": {1, 1}, "exponents": {1, 1}}}, "genball of dimension 2 for dim 3"},
		{Spec{Kind: KindNorm, Dim: 2, Params: Params{"matrix": {1, 0, 0, 1}}}, "exponent p = 0"},
		{Spec{Kind: KindNorm, Dim: 2, Params: Params{"matrix": {1, 0, 0, 1}, "p": {1, 2}}}, "p: 2 values, want one"},
		{Spec{Kind: Kind(9), Dim: 2}, "unknown kind"},
	} {
		if _, err := Decode(c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.s, err, c.want)
		}
	}
}

// TestSpecJSON: a Spec writes its parameters beside kind and dim, in the
// family's order, a one-value parameter as a number (the set file's layout
// since version 1), reads them back, and refuses what does not belong.
func TestSpecJSON(t *testing.T) {
	t.Parallel()
	n, err := NewNorm(2, []float64{1, 0.5, 0, 2}, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g    Geometry
		want string
	}{
		{Ball{D: 3}, `{"kind":"ball","dim":3}`},
		{n, `{"kind":"single","dim":2,"matrix":[1,0.5,0,2],"p":1.5}`},
		{UnitGenBall(2, 2), `{"kind":"genball","dim":2,"scales":[1,1],"exponents":[2,2]}`},
	} {
		s, err := Encode(c.g)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(s)
		if err != nil || string(b) != c.want {
			t.Fatalf("%v: %s, %v; want %s", c.g.Kind(), b, err, c.want)
		}
		var back Spec
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, s) && !(len(s.Params) == 0 && len(back.Params) == 0) {
			t.Errorf("%v: read back %+v, %v; want %+v", c.g.Kind(), back, err, s)
		}
	}
	for _, bad := range []Spec{
		{Kind: KindBall, Dim: 2, Params: Params{"sigma": {1}}},
		{Kind: KindNorm, Dim: 1, Params: Params{"matrix": {1}, "p": {1, 2}}},
	} {
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("%+v written as %s", bad, b)
		}
	}
	if b, err := json.Marshal(Spec{Kind: KindGenBall, Dim: 1, Params: Params{"scales": {1}, "exponents": nil}}); err != nil || string(b) != `{"kind":"genball","dim":1,"scales":[1]}` {
		t.Errorf("an empty parameter: %s, %v", b, err)
	}
	for _, bad := range []string{
		`{"kind":"ball","dim":3,"p":2}`,
		`{"kind":"single","dim":2,"matrix":[1,0,0,1],"p":[2]}`,
		`{"kind":"genball","dim":2,"scales":1,"exponents":[2,2]}`,
		`{"kind":"cube","dim":2}`,
		// A field twice: a map kept the last copy.
		`{"kind":"ball","dim":3,"dim":2}`,
		`{"kind":"ellipsoid","dim":1,"sigma":[1],"sigma":[4]}`,
	} {
		var s Spec
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s: read as %+v", bad, s)
		}
	}
}

// TestClamp: the learnable families keep their parameters in the bounds:
// the generalized ball's scales and exponents, the single-norm's p (M is
// free).
func TestClamp(t *testing.T) {
	t.Parallel()
	g := UnitGenBall(2, 2)
	got := []float64{1e-9, 5, 0.01, 50}
	g.Clamp(got, Bounds{PMin: 0.1, PMax: 10, MMin: 1e-3, MMax: 2})
	if !slices.Equal(got, []float64{1e-3, 2, 0.1, 10}) {
		t.Errorf("clamped genball params %v", got)
	}
	n := IdentityNorm(2, 2)
	got = []float64{-3, 0, 0, 1, 42}
	n.Clamp(got, Bounds{PMin: 0.1, PMax: 10, MMin: 1e-3})
	if !slices.Equal(got, []float64{-3, 0, 0, 1, 10}) {
		t.Errorf("clamped single-norm params %v (M is free, p clamped)", got)
	}
	if !panics(func() { n.Clamp(got[:4], Bounds{}) }) {
		t.Error("a short θ did not panic")
	}
}

// TestFamilies: the learnable families, their names in tables and their
// initial geometries (the ℓ2 ball).
func TestFamilies(t *testing.T) {
	t.Parallel()
	if got := LearnableKinds(); !slices.Equal(got, []Kind{KindNorm, KindGenBall}) {
		t.Errorf("learnable kinds %v", got)
	}
	x := []float32{0.3, -1.2, 0.8}
	for _, k := range LearnableKinds() {
		g, init, err := Initial(k, 3)
		if err != nil || init == "" || g.Kind() != k || !k.Learnable() {
			t.Fatalf("%v: %v, %q, %v", k, g, init, err)
		}
		if s, b := g.Scores(nil, x)[0], (Ball{D: 3}).Scores(nil, x)[0]; k == KindNorm && s != b {
			t.Errorf("%v initial score %v, ℓ2 ball %v", k, s, b)
		}
	}
	if _, _, err := Initial(KindBall, 3); err == nil || !strings.Contains(err.Error(), "single or genball") {
		t.Errorf("Initial(ball): %v", err)
	}
	if KindNorm.Title() != "Single" || KindGenBall.Title() != "Generalized" || KindBall.Title() != "ball" {
		t.Errorf("titles %q %q %q", KindNorm.Title(), KindGenBall.Title(), KindBall.Title())
	}
}

// specDocs are spec documents: as Encode writes them, and as hands or other
// tools might (spaces, a repeated key, a key escaped or in other case,
// values of the wrong shape).
var specDocs = []string{
	`{"kind":"ball","dim":3}`,
	`{"kind":"single","dim":2,"matrix":[1,0.5,0,2],"p":1.5}`,
	`{"kind":"genball","dim":2,"scales":[1,1],"exponents":[2,2]}`,
	`{"kind":"ellipsoid","dim":2,"sigma":[2,0.3,0.3,1]}`,
	` { "dim" : 2 , "sigma" : [ 2 , 0.3 , 0.3 , 1 ] , "kind" : "ellipsoid" } `,
	`{"kind":"ellipsoid","dim":2,"sigma":[]}`,
	`{"kind":"ellipsoid","dim":2,"sigma":[2,0.3,0.3,1],"sigma":[1,0,0,1]}`,
	`{"kind":"ellipsoid","dim":2,"\u0073igma":[2,0.3,0.3,1]}`,
	`{"kind":"ellipsoid","dim":2,"Sigma":[2,0.3,0.3,1]}`,
	`{"kind":"ellipsoid","dim":2,"sigma":[2,null,0.3,1]}`,
	`{"kind":"ellipsoid","dim":2,"sigma":null}`,
	`{"kind":"ellipsoid","dim":2.5,"sigma":[1]}`,
	`{"kind":"single","dim":2,"matrix":[1,0,0,1],"p":[2]}`,
	`{"kind":"genball","dim":2,"scales":1,"exponents":[2,2]}`,
	`{"kind":"cube","dim":2}`,
	`{"dim":2,"sigma":[1]}`,
	`{"kind":"ellipsoid","dim":1,"sigma":[1e400]}`,
	`[1]`,
	`null`,
}

// TestSpecFast: the one-pass reading gives what encoding/json gives, and
// reads every document Encode writes.
func TestSpecFast(t *testing.T) {
	t.Parallel()
	for _, doc := range specDocs {
		checkSpecFast(t, []byte(doc))
	}
	rng := rand.New(rand.NewPCG(8, 9))
	for _, g := range []Geometry{Ball{D: 3}, randEllipsoid(rng, 40), randNorm(rng, 30, 1.3), randGenBall(rng, 3, []float64{0.5, 2, 7})} {
		s, _ := Encode(g)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := unmarshalFast(b); !ok {
			t.Errorf("%v: Encode's document not read in one pass", g.Kind())
		}
		checkSpecFast(t, b)
	}
}

// checkSpecFast fails t where unmarshalFast reads doc and unmarshalSlow
// does not, or reads it otherwise.
func checkSpecFast(t *testing.T, doc []byte) {
	t.Helper()
	fast, ok := unmarshalFast(doc)
	var slow Spec
	err := slow.unmarshalSlow(doc)
	if ok && (err != nil || !reflect.DeepEqual(fast, slow)) {
		t.Fatalf("%s: one pass read %+v; encoding/json %+v, %v", doc, fast, slow, err)
	}
}

// FuzzSpecFast: checkSpecFast on arbitrary documents.
func FuzzSpecFast(f *testing.F) {
	for _, doc := range specDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkSpecFast(t, doc) })
}
