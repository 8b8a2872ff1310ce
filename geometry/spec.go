package geometry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ccsets/ccs/internal/jsonscan"
)

// Params are a geometry's parameters by the names its file stores them
// under: the ellipsoid's "sigma" (Σ, d×d row-major), the single-norm's
// "matrix" (M, d×d row-major) and "p" (one value), the generalized ball's
// "scales" (m_j) and "exponents" (p_j).
type Params map[string][]float64

// Spec is a geometry as a fitted-set file stores it: its family, its
// dimension and its parameters. In JSON the parameters stand beside kind
// and dim, in the family's order.
type Spec struct {
	Kind   Kind
	Dim    int
	Params Params
}

// parameterized is implemented by every geometry of this package that a
// file can store: its parameters.
type parameterized interface {
	params() Params
}

// Encode returns g's Spec.
func Encode(g Geometry) (Spec, error) {
	p, ok := g.(parameterized)
	if _, known := families[g.Kind()]; !ok || !known {
		return Spec{}, fmt.Errorf("geometry: cannot encode %T", g)
	}
	return Spec{Kind: g.Kind(), Dim: g.Dim(), Params: p.params()}, nil
}

// Decode validates s and builds its geometry. Errors name the bad field,
// and a missing one as missing: a file's geometry, geometry.kind or
// geometry.dim (the zero Spec, Kind or Dim).
func Decode(s Spec) (Geometry, error) {
	f, ok := families[s.Kind]
	switch {
	case s.Kind == 0 && s.Dim == 0 && len(s.Params) == 0:
		return nil, fmt.Errorf(`geometry is missing (want {"kind": …, "dim": …} and the kind's parameters)`)
	case s.Kind == 0:
		return nil, missingKind()
	case !ok:
		return nil, fmt.Errorf("geometry: unknown kind %v", s.Kind)
	case s.Dim == 0:
		return nil, fmt.Errorf("geometry.dim is missing or 0: want the dimension, at least 1")
	case s.Dim < 1:
		return nil, fmt.Errorf("geometry: dim %d < 1", s.Dim)
	}
	for name := range s.Params {
		if !slices.ContainsFunc(f.params, func(p param) bool { return p.name == name }) {
			return nil, fmt.Errorf("geometry: %v: field %q does not belong to it", s.Kind, name)
		}
	}
	g, err := f.decode(s.Dim, s.Params)
	if err != nil {
		return nil, err
	}
	if g.Dim() != s.Dim {
		return nil, fmt.Errorf("geometry: %v of dimension %d for dim %d", s.Kind, g.Dim(), s.Dim)
	}
	if math.IsInf(g.LogVolume(1), 0) || math.IsNaN(g.LogVolume(1)) {
		return nil, fmt.Errorf("geometry: %v: its unit set has log-volume %v", s.Kind, g.LogVolume(1))
	}
	return g, nil
}

// missingKind is the error for a geometry without its kind.
func missingKind() error {
	return fmt.Errorf("geometry.kind is missing (want %s)", OrList(kinds(func(family) bool { return true })))
}

// MarshalJSON writes {"kind": …, "dim": …, then the parameters in the
// family's order}; a one-value parameter as a number, an empty one not at
// all. A parameter that is not the family's is an error.
func (s Spec) MarshalJSON() ([]byte, error) {
	kind, err := s.Kind.MarshalText()
	if err != nil {
		return nil, err
	}
	name, err := json.Marshal(string(kind))
	if err != nil {
		return nil, err
	}
	f := families[s.Kind]
	for _, pname := range slices.Sorted(maps.Keys(s.Params)) {
		i := slices.IndexFunc(f.params, func(p param) bool { return p.name == pname })
		if i < 0 {
			return nil, fmt.Errorf("geometry: %v: field %q does not belong to it", s.Kind, pname)
		}
		if f.params[i].scalar && len(s.Params[pname]) > 1 {
			return nil, fmt.Errorf("geometry: %v: %s: %d values, want one", s.Kind, pname, len(s.Params[pname]))
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":%s,"dim":%d`, name, s.Dim)
	for _, p := range f.params {
		v := s.Params[p.name]
		if len(v) == 0 {
			continue // as the omitempty fields of the file's first layout
		}
		var raw []byte
		if p.scalar {
			raw, err = json.Marshal(v[0])
		} else {
			raw, err = json.Marshal(v)
		}
		if err != nil {
			return nil, fmt.Errorf("geometry: %v: %s: %w", s.Kind, p.name, err)
		}
		fmt.Fprintf(&b, `,%q:%s`, p.name, raw)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes. A field that is not one of
// the family's parameters is an error; so is a parameter of the wrong shape
// (a number for an array, an array for a number).
func (s *Spec) UnmarshalJSON(data []byte) error {
	if fast, ok := unmarshalFast(data); ok {
		*s = fast
		return nil
	}
	return s.unmarshalSlow(data)
}

// unmarshalSlow is UnmarshalJSON by encoding/json alone: the reading
// unmarshalFast must agree with, and the one whose errors name the field.
// A field given twice is refused: a map keeps its last copy.
func (s *Spec) unmarshalSlow(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	if k := repeated(data); k != "" {
		return fmt.Errorf("geometry: field %q is given twice (parsers disagree on which copy wins)", k)
	}
	*s = Spec{}
	if raw, ok := fields["kind"]; ok {
		if err := json.Unmarshal(raw, &s.Kind); err != nil {
			return fmt.Errorf("geometry: kind: %w", err)
		}
	}
	if raw, ok := fields["dim"]; ok {
		if err := json.Unmarshal(raw, &s.Dim); err != nil {
			return fmt.Errorf("geometry: dim: %w", err)
		}
	}
	params := len(fields)
	for _, k := range []string{"kind", "dim"} {
		if _, ok := fields[k]; ok {
			params--
		}
	}
	if s.Kind == 0 && params > 0 {
		// Parameters without a kind: not judged as another kind's. No
		// parameters is Decode's to call missing, as the one-pass reading
		// leaves it (the same message either way).
		return missingKind()
	}
	f := families[s.Kind]
	for _, name := range slices.Sorted(maps.Keys(fields)) { // the first bad field, by name
		raw := fields[name]
		if name == "kind" || name == "dim" {
			continue
		}
		i := slices.IndexFunc(f.params, func(p param) bool { return p.name == name })
		if i < 0 {
			return fmt.Errorf("geometry: %v: field %q does not belong to it", s.Kind, name)
		}
		var v []float64
		if f.params[i].scalar {
			var x float64
			if err := json.Unmarshal(raw, &x); err != nil {
				return fmt.Errorf("geometry: %v: %s: want a number: %w", s.Kind, name, err)
			}
			v = []float64{x}
		} else if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("geometry: %v: %s: want an array of numbers: %w", s.Kind, name, err)
		}
		if s.Params == nil {
			s.Params = Params{}
		}
		s.Params[name] = v
	}
	return nil
}

// repeated is the first key the JSON object data gives twice; "" where
// none is, or data is not a well-formed object.
func repeated(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		k, ok := tok.(string)
		if err != nil || !ok {
			return ""
		}
		if seen[k] {
			return k
		}
		seen[k] = true
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return ""
		}
	}
	return ""
}

// unmarshalFast is UnmarshalJSON's reading of a well-formed spec, its
// arrays read in one pass (jsonscan): a d = 1536 Σ in 0.1 s where
// encoding/json took 1.6 s. ok is false for anything else — a key escaped,
// repeated or not the family's, a value of the wrong shape — which
// UnmarshalJSON then reads as before, for its error.
func unmarshalFast(data []byte) (s Spec, ok bool) {
	members, ok := jsonscan.Members(data)
	if !ok {
		return Spec{}, false
	}
	for _, m := range members { // kind first: it says which names belong
		if m.Key == "kind" && json.Unmarshal(m.Value, &s.Kind) != nil {
			return Spec{}, false
		}
	}
	f := families[s.Kind]
	for _, m := range members {
		switch m.Key {
		case "kind":
			continue
		case "dim":
			if json.Unmarshal(m.Value, &s.Dim) != nil {
				return Spec{}, false
			}
			continue
		}
		i := slices.IndexFunc(f.params, func(p param) bool { return p.name == m.Key })
		if i < 0 {
			return Spec{}, false
		}
		var v []float64
		if f.params[i].scalar {
			var x float64
			if json.Unmarshal(m.Value, &x) != nil {
				return Spec{}, false
			}
			v = []float64{x}
		} else if v, ok = jsonscan.Floats[float64](nil, m.Value); !ok {
			return Spec{}, false
		}
		if s.Params == nil {
			s.Params = Params{}
		}
		s.Params[m.Key] = v
	}
	return s, true
}

// one returns the value of a one-value parameter: 0 when it is missing
// (the family's constructor then says what is wrong with it).
func (p Params) one(name string) (float64, error) {
	switch v := p[name]; len(v) {
	case 0:
		return 0, nil
	case 1:
		return v[0], nil
	default:
		return 0, fmt.Errorf("geometry: %s: %d values, want one", name, len(v))
	}
}
