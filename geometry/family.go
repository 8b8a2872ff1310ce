package geometry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ccsets/ccs/internal/suggest"
)

// Kind names a set family.
type Kind int

// The set families. A new family is a file of its own (its type, scores,
// volume and gradients; for a learnable one its parameters' bounds) and a
// constant and a row of families here.
const (
	KindBall Kind = iota + 1
	KindEllipsoid
	KindNorm
	KindGenBall
)

// A family is what the package knows of a set family besides its type.
type family struct {
	name  string // in files and on the command line
	title string // in the paper's tables ("Single (Neg)"); the learnable families
	// params are the parameters a set file stores, in order; decode builds
	// the geometry of dimension d from them.
	params []param
	decode func(d int, p Params) (Geometry, error)
	// initial is the paper's initialisation of a learnable family in d
	// dimensions, and how to say it; nil for the others.
	initial func(d int) (Learnable, string)
}

// param is a parameter as a set file stores it: an array, or one number.
type param struct {
	name   string
	scalar bool
}

var families = map[Kind]family{
	KindBall: {name: "ball",
		decode: func(d int, _ Params) (Geometry, error) { return Ball{D: d}, nil }},
	KindEllipsoid: {name: "ellipsoid", params: []param{{name: "sigma"}},
		decode: func(d int, p Params) (Geometry, error) { return NewEllipsoid(d, p["sigma"]) }},
	KindNorm: {name: "single", title: "Single", params: []param{{name: "matrix"}, {name: "p", scalar: true}},
		decode:  decodeNorm,
		initial: func(d int) (Learnable, string) { return IdentityNorm(d, 2), "M = I, p = 2" }},
	KindGenBall: {name: "genball", title: "Generalized", params: []param{{name: "scales"}, {name: "exponents"}},
		decode:  decodeGenBall,
		initial: func(d int) (Learnable, string) { return UnitGenBall(d, 2), "m = 1, p = 2" }},
}

// kinds returns the families' kinds in order, those for which keep is true.
func kinds(keep func(family) bool) []Kind {
	var ks []Kind
	for k, f := range families {
		if keep(f) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// LearnableKinds are the families a trainer can learn, in order.
func LearnableKinds() []Kind { return kinds(func(f family) bool { return f.initial != nil }) }

// Learnable reports whether k is a family a trainer can learn.
func (k Kind) Learnable() bool { return families[k].initial != nil }

// Title is the family's name in the paper's tables: "Single",
// "Generalized"; the kind's name for the families that are not learned.
func (k Kind) Title() string {
	if t := families[k].title; t != "" {
		return t
	}
	return k.String()
}

// Initial is the paper's initialisation of a learnable family in d
// dimensions, the ℓ2 ball (the single-norm with M = I and p = 2, the
// generalized ball with m_j = 1 and p_j = 2); init says so in words, for
// the record.
func Initial(k Kind, d int) (g Learnable, init string, err error) {
	f := families[k]
	if f.initial == nil {
		return nil, "", fmt.Errorf("geometry: a %v set is not learned (want %s)", k, OrList(LearnableKinds()))
	}
	g, init = f.initial(d)
	return g, init, nil
}

// OrList writes kinds as "a, b or c".
func OrList(ks []Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.String()
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// String returns the name used on the command line and in files:
// ball, ellipsoid, single or genball.
func (k Kind) String() string {
	if f, ok := families[k]; ok {
		return f.name
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) {
	if _, ok := families[k]; !ok {
		return nil, fmt.Errorf("geometry: unknown kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	kk, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = kk
	return nil
}

// ParseKind parses a family name (ball, ellipsoid, single or genball).
func ParseKind(s string) (Kind, error) {
	for k, f := range families {
		if f.name == s {
			return k, nil
		}
	}
	all := kinds(func(family) bool { return true })
	names := make([]string, len(all))
	for i, k := range all {
		names[i] = k.String()
	}
	mean := ""
	if near, ok := suggest.Nearest(s, names); ok {
		mean = fmt.Sprintf(": did you mean %q?", near)
	}
	return 0, fmt.Errorf("unknown geometry %q (want %s)%s", s, OrList(all), mean)
}
