package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
)

// TestOODByClass: one sample a label, in label order, named by the names
// where they name it and by its number otherwise; without labels, the one
// label held out of labels of several a row names the whole sample, and
// several, or none, are refused naming the source and the option.
func TestOODByClass(t *testing.T) {
	const d = 2
	rows := make([]float32, 5*d)
	for i := range rows {
		rows[i] = float32(i)
	}
	labelled := &bundle.Bundle{N: 5, D: d, Anchors: rows, Labels: []int64{2, 0, 2, 5, 0}}
	plain := &bundle.Bundle{N: 5, D: d, Anchors: rows}
	for _, c := range []struct {
		name        string
		b           *bundle.Bundle
		names, held []string
		want        []string
		sizes       []int
		err         string
	}{
		{"named", labelled, []string{"dog", "emu", "fox"}, nil, []string{"ood:dog", "ood:fox", "ood:5"}, []int{2, 2, 1}, ""},
		{"numbered", labelled, nil, nil, []string{"ood:0", "ood:2", "ood:5"}, []int{2, 2, 1}, ""},
		{"one held", plain, nil, []string{"grief"}, []string{"ood:grief"}, []int{5}, ""},
		{"several held", plain, nil, []string{"3", "4"}, nil, nil, "f.npz: by_class: it has no label a row to split its inputs by: ccs bundle held out the rows carrying any of 2 labels (3,4)"},
		{"no labels", plain, nil, nil, nil, nil, "f.npz: by_class: it has no labels to split its inputs by"},
	} {
		subs, names, err := OODByClass(c.b, "ood", c.names, c.held, "f.npz", "by_class")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(names, c.want) {
			t.Errorf("%s: %q (%v), want %q", c.name, names, err, c.want)
			continue
		}
		for i, s := range subs {
			if s.N != c.sizes[i] {
				t.Errorf("%s: %s has %d inputs, want %d", c.name, names[i], s.N, c.sizes[i])
			}
		}
	}
}
