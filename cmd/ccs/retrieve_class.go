package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// retrieveClass is the set ccs retrieve searches with when every anchor
// takes one threshold: set itself for a set of one threshold; for a
// class-conditional set, its class -label's (conformal.Set.ForClass) or,
// with -unlabeled marginal, its threshold over all classes (with the
// warning that says so). With -anchor-labels it returns nil: each
// anchor's class picks its set (anchorSets). Checked before the
// collection is opened.
func retrieveClass(o retrieveOptions, set *conformal.Set) (*conformal.Set, string, error) {
	switch {
	case !set.ClassConditional() && (o.Label != "" || o.AnchorLabels != ""):
		return nil, "", usagef("retrieve: %s %s: %s has one threshold, which takes no label; -label and -anchor-labels pick a class-conditional set's class (ccs calibrate -calibration class)",
			labelFlag(o), labelArg(o), o.Set)
	case !set.ClassConditional():
		return set, "", nil
	case o.Unlabeled == "marginal" && (o.Label != "" || o.AnchorLabels != ""):
		return nil, "", usagef("retrieve: -unlabeled marginal retrieves without a class; %s %s gives one: give one or the other", labelFlag(o), labelArg(o))
	case o.AnchorLabels != "":
		return nil, "", nil
	case o.Label != "":
		s, err := classSet(set, o.Label)
		if err != nil {
			return nil, "", fmt.Errorf("%s: -label %s: %w", o.Set, o.Label, err)
		}
		return s, "", nil
	case o.Unlabeled == "marginal":
		all := set.OverAllClasses()
		return all, fmt.Sprintf("-unlabeled marginal: %s is class-conditional, and every anchor's set is the one of its threshold over all classes (%.6g), which has no class-conditional guarantee: its coverage is 1−α on average over the classes, not for each (-label gives a class's own)", o.Set, all.Threshold), nil
	}
	rows := "-anchor-labels FILE for -anchor's rows"
	if path, name := bundle.SplitInput(o.Anchor); npzHas(path, "labels") { // an array other than the anchors' (those take the labels beside them)
		rows = fmt.Sprintf("-anchor-labels %s:labels if that file's labels are those of its array %q's rows", path, name)
	}
	return nil, "", usagef("retrieve: %s is class-conditional (a threshold a class: %s): give the anchor's class with -label (its label or its class's name), %s, or -unlabeled marginal for the threshold over all classes (no class-conditional guarantee)",
		o.Set, someClasses(set), rows)
}

// labelFlag and labelArg are the flag that gives a label, and its value.
func labelFlag(o retrieveOptions) string {
	if o.Label != "" {
		return "-label"
	}
	return "-anchor-labels"
}

func labelArg(o retrieveOptions) string {
	if o.Label != "" {
		return o.Label
	}
	return o.AnchorLabels
}

// classSet is set's set for the class given as text: an integer label or
// a class's name (conformal.Set.ClassNamed).
func classSet(set *conformal.Set, text string) (*conformal.Set, error) {
	l, err := set.ClassNamed(text)
	if err != nil {
		return nil, trimConformal(err)
	}
	s, err := set.ForClass(l)
	if err != nil {
		return nil, trimConformal(err)
	}
	return s, nil
}

// trimConformal is err without package conformal's prefix, which a
// message that names the file already places.
func trimConformal(err error) error {
	return errors.New(strings.TrimPrefix(err.Error(), "conformal: "))
}

// someClasses names a class-conditional set's first classes for a
// message, by name where they have one, and how many there are.
func someClasses(set *conformal.Set) string {
	var each []string
	for i, c := range set.Classes {
		if i == 5 {
			each = append(each, fmt.Sprintf("… %d in all", len(set.Classes)))
			break
		}
		if c.Name != "" {
			each = append(each, strconv.Quote(c.Name))
		} else {
			each = append(each, strconv.FormatInt(c.Label, 10))
		}
	}
	return strings.Join(each, ", ")
}

// anchorSets reads -anchor-labels, one label for each of the m anchors of
// src, as ccs bundle's -labels reads labels (integers, or strings that
// name the set's classes; a Hugging Face ClassLabel column's integers
// named by its names, readNamedIDs), and returns each anchor's class's
// set: one *conformal.Set for each class, shared by its anchors. A
// ClassLabel whose names are not used is said on out, as ccs bundle says
// it.
func anchorSets(out *output, set *conformal.Set, arg string, m int, src string) ([]*conformal.Set, error) {
	li, err := readNamedIDs(arg, "anchor labels")
	if err != nil {
		return nil, err
	}
	if li.names == nil && slices.ContainsFunc(set.Classes, func(c conformal.ClassThreshold) bool { return c.Name != "" }) {
		li.names = bundleLabelNames(arg, len(li.ids)) // a set of named classes: a bundle's labels by their names
	}
	if li.note != "" {
		out.warn(li.note)
	}
	ids, names, missing := li.ids, li.names, li.missing
	if len(ids) != m {
		return nil, labelsMismatch(arg, len(ids), m, "anchors", src, li.warn)
	}
	if li.classLabel && !slices.ContainsFunc(set.Classes, func(c conformal.ClassThreshold) bool { return c.Name != "" }) {
		// A set calibrated on the ClassLabel's ids themselves (ccs.bundle
		// of ds["label"]): its classes are the ids.
		names = nil
	}
	sets := make([]*conformal.Set, m)
	byID := map[int64]*conformal.Set{} // by the anchor's id: a name looked up once
	for i, c := range ids {
		mark, ok := missing[c]
		if !ok && c < 0 && (li.names == nil || li.classLabel) { // an integer's -1: Hugging Face's and ccs bundle's no label
			mark, ok = strconv.FormatInt(c, 10), true
		}
		if ok {
			return nil, fmt.Errorf("%s: row %d: %q marks a missing label, and a class-conditional set's threshold is its anchor's class's: give every anchor's class (or retrieve those anchors with -unlabeled marginal, apart)", arg, i, mark)
		}
		s, ok := byID[c]
		if !ok {
			l := c
			if names != nil {
				if l, err = set.LabelNamed(names[c]); err != nil {
					return nil, fmt.Errorf("%s: row %d: %w", arg, i, trimConformal(err))
				}
			}
			if s, err = set.ForClass(l); err != nil {
				return nil, fmt.Errorf("%s: row %d: %w", arg, i, trimConformal(err))
			}
			byID[c] = s
		}
		sets[i] = s
	}
	return sets, nil
}

// bundleLabelNames are the names of the labels of a bundle's file (ccs
// bundle's test.npz:labels), from the manifest beside it, or nil: its
// labels number its own bundling's classes, which another bundling of the
// same embeddings (another -ood-classes, a label renamed) numbers
// otherwise, so a class-conditional set takes them by name, as evaluate
// does, never by number.
func bundleLabelNames(arg string, n int) []string {
	path, name := bundle.SplitInput(arg)
	if !strings.EqualFold(filepath.Ext(path), ".npz") || name != "labels" && name != "" {
		return nil
	}
	b, err := bundle.ReadFeatures(path)
	if err != nil || len(b.Labels) != n {
		return nil
	}
	return bundle.ManifestLabelNames(path, b)
}
