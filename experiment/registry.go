package experiment

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/ccsets/ccs/figure"
)

// Result is what a document holds: one kind of result, a table of the
// paper reproduced or a command's measurement. Each kind is a type
// implementing Result, registered once with Register from its own file
// (result_KIND.go); a document of a registered kind is then read, written
// as JSON, drawn (ccs plot) and reported (package report) with no other
// change.
//
// A result is written as JSON with encoding/json: it must encode as an
// object, and its keys are the document's after kind, command and build
// (which it must not use). A Result that has a method Check() error is
// checked by ReadDocument and Document.Check; a Result that ccs reproduce
// builds a table at a time has a method Add(Text) error taking each table
// as it is done.
type Result interface {
	// Texts are the result's tables as text, in order. Each is a
	// paragraph "Title: protocol", then Markdown grids, a paragraph
	// right before a grid being its caption and any other after it a
	// note (the form package report parses).
	Texts() []Text
	// Figures draws the result's figures (none is no error); their names
	// start with stem, the document's kind.
	Figures(stem string) ([]*figure.Figure, error)
}

// Text is a table that writes itself as text.
type Text interface {
	WriteText(w io.Writer) error
}

// Kind describes a registered kind of result.
type Kind struct {
	// Name is the documents' "kind" and the file name a results
	// directory keeps them under (NAME.json).
	Name string
	// Heading is what the report calls the kind's section.
	Heading string
	// Order places the kind in Kinds, and so its section in the report of
	// a results directory: lower first (the paper's tables in the paper's
	// order, then the commands' results).
	Order int
	// New returns an empty result of the kind, for a document to be read
	// into.
	New func() Result
}

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Kind{}
)

// Register makes a kind of result known: documents of kind k.Name are then
// read into k.New()'s results. It is called from an init function in the
// kind's own file; it panics when the name is empty or taken, or New is
// nil (database/sql's Register does the same).
func Register(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if k.Name == "" || k.New == nil {
		panic(fmt.Sprintf("experiment: Register of kind %q without a name or New", k.Name))
	}
	if _, dup := kinds[k.Name]; dup {
		panic(fmt.Sprintf("experiment: Register called twice for kind %q", k.Name))
	}
	kinds[k.Name] = k
}

// Kinds are the registered kinds, by Order and then name.
func Kinds() []Kind {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	var ks []Kind
	for _, k := range kinds {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b Kind) int { return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Name, b.Name)) })
	return ks
}

// KindNames are the registered kinds' names, in Kinds' order.
func KindNames() []string {
	var names []string
	for _, k := range Kinds() {
		names = append(names, k.Name)
	}
	return names
}

// KindOf returns the registered kind named name.
func KindOf(name string) (Kind, bool) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	k, ok := kinds[name]
	return k, ok
}

// NewResult returns an empty result of the registered kind named name.
func NewResult(name string) (Result, error) {
	k, ok := KindOf(name)
	if !ok {
		return nil, fmt.Errorf("experiment: kind %q, want one of %v", name, KindNames())
	}
	return k.New(), nil
}
