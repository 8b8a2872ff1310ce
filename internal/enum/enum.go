// Package enum writes ccs's enums one way: a type T with values 1, 2, …
// named once in a table, from which String, text marshalling (for files
// and flags) and parsing follow, and whose errors say what was wanted.
package enum

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ccsets/ccs/internal/suggest"
)

// Names is an enum's table: its values' names, in the values' order
// (Names[0] is value 1), other spellings a parser accepts, and what the
// enum is called in errors ("objective", "calibration mode").
type Names[T ~int] struct {
	What  string
	Names []string
	// Alias maps other spellings to values (a short form on the command
	// line: "one" for one-per-anchor).
	Alias map[string]T
	// Want lists the spellings errors offer, when they are not Names
	// (the short forms).
	Want []string
}

// String is v's name, or TYPE(v) for a value outside the table.
func (n Names[T]) String(v T) string {
	if i := int(v) - 1; i >= 0 && i < len(n.Names) {
		return n.Names[i]
	}
	return fmt.Sprintf("%T(%d)", v, int(v))
}

// Valid reports whether v is in the table.
func (n Names[T]) Valid(v T) bool { return int(v) >= 1 && int(v) <= len(n.Names) }

// Marshal is v's name as text, or an error for a value outside the table.
func (n Names[T]) Marshal(v T) ([]byte, error) {
	if !n.Valid(v) {
		return nil, fmt.Errorf("unknown %s %d", n.What, int(v))
	}
	return []byte(n.Names[int(v)-1]), nil
}

// Parse reads a name or an alias.
func (n Names[T]) Parse(s string) (T, error) {
	for i, name := range n.Names {
		if name == s {
			return T(i + 1), nil
		}
	}
	if v, ok := n.Alias[s]; ok {
		return v, nil
	}
	// A spelling off by case ("PAC") or a typo is named, not accepted:
	// the files and flags write one spelling.
	return 0, fmt.Errorf("unknown %s %q (want %s)%s", n.What, s, n.Wanted(), suggest.DidYouMean(s, n.spellings()))
}

// spellings are the names and aliases a parser accepts, names first.
func (n Names[T]) spellings() []string {
	out := slices.Clone(n.Names)
	for a := range n.Alias {
		out = append(out, a)
	}
	slices.Sort(out[len(n.Names):])
	return out
}

// Unmarshal parses text into *v.
func (n Names[T]) Unmarshal(v *T, text []byte) error {
	x, err := n.Parse(string(text))
	if err == nil {
		*v = x
	}
	return err
}

// Wanted lists the spellings errors offer: "a, b or c".
func (n Names[T]) Wanted() string { return OrList(n.offered()) }

func (n Names[T]) offered() []string {
	if n.Want != nil {
		return n.Want
	}
	return n.Names
}

// OrList joins names as "a, b or c".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
