package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
)

// OODByClass splits the OOD sample b, named name, into one sample per
// label, in label order, each named name:LABEL — names[l] where names
// (the labels' names: the manifest's, beside ccs bundle's ood.npz of
// string labels) has it, its number otherwise. ccs bundle's ood.npz of
// labels of several a row has no label a row: held are then the labels
// it held out (bundle.ManifestSeveralLabelsOOD), and with one b is that
// label's sample; with several, or without labels or held, b is refused.
// source names b in messages, flag the option that asked for the split
// (ccs ood's -ood-by-class, ood_detection's by_class=True). It is ccs ood
// -ood-by-class's split and Python's ood_detection(by_class=True)'s.
func OODByClass(b *bundle.Bundle, name string, names, held []string, source, flag string) ([]*bundle.Bundle, []string, error) {
	if b.Labels == nil {
		switch {
		case len(held) == 1: // every row carries the one held-out label
			return []*bundle.Bundle{b}, []string{name + ":" + held[0]}, nil
		case len(held) > 1:
			return nil, nil, fmt.Errorf("%s: %s: it has no label a row to split its inputs by: ccs bundle held out the rows carrying any of %d labels (%s) of several a row, and a row may carry more than one of them; bundle each held-out label apart (ccs bundle … -ood-classes %s -out DIR; ood_classes=%q in Python), one OOD sample each, or leave %s out to judge them as one sample", source, flag, len(held), strings.Join(held, ","), held[0], held[0], flag)
		}
		return nil, nil, fmt.Errorf("%s: %s: it has no labels to split its inputs by (an array, or a file of embeddings alone, carries none): give ccs bundle's ood.npz of labels of one a row (it has them; ccs.bundle's \"ood\" split in Python), or each label's inputs as a sample of their own, without %s", source, flag, flag)
	}
	rows := map[int64][]int{}
	for i, l := range b.Labels {
		rows[l] = append(rows[l], i)
	}
	var subs []*bundle.Bundle
	var out []string
	for _, l := range slices.Sorted(maps.Keys(rows)) {
		label := strconv.FormatInt(l, 10)
		if l >= 0 && l < int64(len(names)) {
			label = names[l]
		}
		subs, out = append(subs, b.Subset(rows[l])), append(out, name+":"+label)
	}
	return subs, out, nil
}
