package main

// Tests from h5, a technical writer auditing docs/serve.md, figures.md,
// scale.md, training.md, security.md, go.md, threshold.md, infonce.md,
// simulation.md and real-images.md against the tool. Each fails at
// c4cca8c for the reason in its comment.

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
)

// TestUser49WholeCollectionWarningCounts: ccs retrieve -anchor of an (m, d)
// file warns "N of M anchors' sets hold every one of the collection's n
// items" when any of them holds 99% or more, and says "every one" as soon
// as the largest of them holds all n — so an anchor whose set holds 996 of
// 1000 items is counted among those that "hold every one". Seen on the
// docs' own sim ball and 1 000 passages: "anchor 0: 996 of 1000 items
// inside", then "WARNING: 3 of 3 anchors' sets hold every one of the
// collection's 1000 items".
func TestUser49WholeCollectionWarningCounts(t *testing.T) {
	dir := t.TempDir()
	setPath := calibratedBall(t, dir)
	set, err := conformal.Load(setPath)
	if err != nil {
		t.Fatal(err)
	}
	q := float32(set.Threshold)
	// 996 items at the origin, 4 at 1.5·q along x: the set around the
	// origin holds 996 of them, the set around 0.75·q·x holds all 1000.
	const n = 1000
	rows := make([]float32, 3*n)
	for i := n - 4; i < n; i++ {
		rows[3*i] = 1.5 * q
	}
	coll := filepath.Join(dir, "items.npy")
	if err := bundle.WriteNPY(coll, bundle.Float32(rows, n, 3)); err != nil {
		t.Fatal(err)
	}
	anchors := filepath.Join(dir, "anchors.npy")
	if err := bundle.WriteNPY(anchors, bundle.Float32([]float32{0, 0, 0, 0.75 * q, 0, 0}, 2, 3)); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if err := run(&out, &errs, []string{"retrieve", "-set", setPath, "-db", coll, "-anchor", anchors, "-limit", "1"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "996 of 1000 items inside") {
		t.Fatalf("the set around the origin should hold 996 items:\n%s", out.String())
	}
	if strings.Contains(errs.String(), "2 of 2 anchors' sets hold every one") {
		t.Errorf("the warning says both anchors' sets hold every item, where one holds 996 of 1000:\n%s", errs.String())
	}
}

// TestUser49SimThresholdRefusesSweptFlags: ccs reproduce sim-threshold sweeps
// the threshold modes and both optimiser recipes itself, yet its help
// lists -threshold and -recipe ("the flags below override it") and it
// takes them without a word: `-threshold detached -recipe embedding`
// prints byte for byte the table of a run without them. A flag that is
// accepted and ignored tells the user they ran something they did not;
// it should be a usage error (or be documented as ignored).
func TestUser49SimThresholdRefusesSweptFlags(t *testing.T) {
	small := []string{"reproduce", "sim-threshold", "-seeds", "1", "-epochs", "1", "-per-class", "60", "-k", "3", "-quiet"}
	for _, extra := range [][]string{{"-threshold", "detached"}, {"-recipe", "embedding"}} {
		var out, errs bytes.Buffer
		err := run(&out, &errs, append(append([]string{}, small...), extra...))
		if err == nil {
			t.Errorf("sim-threshold %s: accepted and ignored (it runs every mode and both recipes); want a usage error", strings.Join(extra, " "))
		}
	}
}

// TestUser49MaxInflightMessage: -max-inflight 0 is "2 per CPU, at least 4"
// (ccs serve -h, docs/security.md's limits table), but the refusal of a
// negative value says "want 0 (no cap) or more": a user who reads it and
// gives 0 to lift the cap gets 4 requests at once on 2 cores.
func TestUser49MaxInflightMessage(t *testing.T) {
	_, err := ccs("serve", "-set", "a=x.json", "-max-inflight", "-1")
	if err == nil {
		t.Fatal("-max-inflight -1 accepted")
	}
	if strings.Contains(err.Error(), "no cap") {
		t.Errorf("the refusal says 0 means no cap, where 0 is 2 per CPU (at least 4): %v", err)
	}
}
