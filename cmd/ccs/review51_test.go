package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReview51UsageNamesEveryCalibrationMode checks that a usage line
// which lists -calibration's modes lists every mode its flag takes (with
// -delta beside pac), and that the README's command list names pac
// wherever it lists the modes (failed at 2131dd3: ccs reproduce sim -h
// and the README printed [-calibration one|pooled], though the flag takes
// one, pac with -delta, or pooled, and -calibration pac -delta 0.05 runs).
func TestReview51UsageNamesEveryCalibrationMode(t *testing.T) {
	listed := regexp.MustCompile(`-calibration ([a-z|]+)`)
	var cmds []*command
	for _, c := range commands() {
		cmds = append(cmds, c)
		cmds = append(cmds, c.sub...)
	}
	checked := 0
	for _, c := range cmds {
		m := listed.FindStringSubmatch(c.args)
		if m == nil || c.flags == nil {
			continue
		}
		fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.flags(fs)
		f := fs.Lookup("calibration")
		if f == nil {
			t.Errorf("%s: the usage line lists -calibration %s, but the command has no such flag", c.name, m[1])
			continue
		}
		checked++
		modes := strings.Split(m[1], "|")
		for _, mode := range []string{"one", "pac", "class", "pooled"} {
			if regexp.MustCompile(`\b`+mode+`\b`).MatchString(f.Usage) && !slices.Contains(modes, mode) {
				t.Errorf("%s: the usage line lists -calibration %s, but the flag takes %s too (%q)", c.name, m[1], mode, f.Usage)
			}
		}
		if slices.Contains(modes, "pac") && !strings.Contains(c.args, "-delta") {
			t.Errorf("%s: the usage line lists -calibration pac without the -delta it needs", c.name)
		}
	}
	if checked < 3 {
		t.Fatalf("%d usage lines list -calibration's modes, want calibrate, compare and the reproduce tables' at least", checked)
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The command list's [-calibration a|b…], not the prose's mentions of
	// one mode.
	lists := regexp.MustCompile(`\[-calibration ([a-z]+(?:\|[a-z]+)+)`)
	for _, m := range lists.FindAllStringSubmatch(string(readme), -1) {
		if !slices.Contains(strings.Split(m[1], "|"), "pac") {
			t.Errorf("README.md lists -calibration %s, without pac, which every command with the flag takes", m[1])
		}
	}
}
