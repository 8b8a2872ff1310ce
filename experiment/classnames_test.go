package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
)

// TestClassesByName: a test bundle whose string labels number its classes
// otherwise than the set is renumbered into the set's, with a note naming
// the classes moved; one numbered alike is returned as it is, without a
// note; one without names, beside a set whose classes have names, is
// matched by number with a note saying so; a set without names, or with
// one threshold, takes the labels as they are, silently.
func TestClassesByName(t *testing.T) {
	t.Parallel()
	cal, test := views(3, 400, 4, 5), views(4, 80, 4, 5)
	names := []string{"ant", "bee", "cat", "gnu"}
	named, err := conformal.Calibrate(geometry.Ball{D: 5}, cal, 0.2, conformal.Options{Mode: conformal.Class, LabelNames: names})
	if err != nil {
		t.Fatal(err)
	}
	unnamed, err := conformal.Calibrate(geometry.Ball{D: 5}, cal, 0.2, conformal.Options{Mode: conformal.Class})
	if err != nil {
		t.Fatal(err)
	}
	// The test bundle's own numbering: a class fewer ("ant" absent) moves
	// the others down by one.
	shifted := *test
	shifted.Labels = make([]int64, test.N)
	for i, l := range test.Labels {
		shifted.Labels[i] = max(0, l-1)
	}
	for _, c := range []struct {
		name   string
		set    *conformal.Set
		labels []int64
		names  []string
		want   []int64
		note   string
	}{
		{"numbered alike", named, test.Labels, names, test.Labels, ""},
		{"a class fewer", named, shifted.Labels, names[1:], func() []int64 {
			w := slices.Clone(shifted.Labels)
			for i := range w {
				w[i]++
			}
			return w
		}(), `its classes were matched to the set's by name ("bee" is 0 there, 1 in the set`},
		{"no names in the test bundle", named, test.Labels, nil, test.Labels, "they were matched by number"},
		{"no names in the set", unnamed, test.Labels, names, test.Labels, ""},
	} {
		b := *test
		b.Labels = c.labels
		got, _, note, err := ClassesByName(c.set, &b, c.names)
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !slices.Equal(got.Labels, c.want):
			t.Errorf("%s: labels %v…, want %v…", c.name, got.Labels[:8], c.want[:8])
		case c.note == "" && note != "" || !strings.Contains(note, c.note):
			t.Errorf("%s: note %q, want %q", c.name, note, c.note)
		}
	}
}
