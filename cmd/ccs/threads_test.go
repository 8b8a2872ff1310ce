package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestThreadNotes: GOMAXPROCS above the CPUs this process may use is
// lowered to them, with a note; a value the runtime ignored is said to
// be; a valid one within the CPUs, or none, says nothing.
func TestThreadNotes(t *testing.T) {
	for _, c := range []struct {
		env        string
		gomaxprocs int
		cpus       int
		set        int
		notes      []string
	}{
		{"", 2, 2, 0, nil},
		{"1", 1, 2, 0, nil},
		{"2", 2, 2, 0, nil},
		{"64", 64, 2, 2, []string{"GOMAXPROCS=64 is more than the 2 CPUs this process may use: running 2 threads (more threads than cores only slow the work; the numbers are the same on any number)"}},
		{"abc", 2, 2, 0, []string{`GOMAXPROCS="abc" is not a positive integer: ignored, running 2 threads (the CPUs this process may use)`}},
		{"0", 16, 16, 0, []string{`GOMAXPROCS="0" is not a positive integer: ignored, running 16 threads`}},
		{"-1", 2, 2, 0, []string{`GOMAXPROCS="-1" is not a positive integer`}},
		{"2.5", 2, 2, 0, []string{`GOMAXPROCS="2.5" is not a positive integer`}},
		{" 2", 2, 2, 0, []string{`GOMAXPROCS=" 2" is not a positive integer`}}, // the runtime does not trim it either
		{"", 8, 4, 4, []string{"GOMAXPROCS=8 is more than the 4 CPUs"}},        // set by the runtime's own reading, not the variable
	} {
		set, notes := threadNotes(c.env, c.gomaxprocs, c.cpus)
		ok := set == c.set && len(notes) == len(c.notes)
		for i := range min(len(notes), len(c.notes)) {
			ok = ok && strings.HasPrefix(notes[i], c.notes[i])
		}
		if !ok {
			t.Errorf("GOMAXPROCS=%q (runtime %d, %d CPUs): set %d, notes %q; want %d, %q", c.env, c.gomaxprocs, c.cpus, set, notes, c.set, c.notes)
		}
	}
}

// TestThreadFlags: the flags other tools take for their threads are
// answered with GOMAXPROCS, not a near flag's name (compare -j once
// suggested -T, the softmax temperature); a command that has -threads
// (embed: ONNX Runtime's) keeps it.
func TestThreadFlags(t *testing.T) {
	for _, args := range [][]string{{"fit", "-threads", "2"}, {"compare", "-j", "2"}, {"evaluate", "-n_jobs", "2"}} {
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, args)
		want := "flag provided but not defined: " + args[1] + ": the threads are the GOMAXPROCS environment variable's (GOMAXPROCS=2 ccs …"
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), want) {
			t.Errorf("ccs %s: %v, want a usage error containing %q", strings.Join(args, " "), err, want)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(&stdout, &stderr, []string{"embed", "-threads", "x"}); err == nil || strings.Contains(err.Error(), "GOMAXPROCS") {
		t.Errorf("ccs embed -threads x: %v, want its own flag's error", err)
	}
}

// TestOtherCommandsFlag: a flag another command defines is said to be
// that command's (compare -head-dim, before compare had it, was a bare "not defined" to a user
// who had fitted heads of 64); a flag near one of the command's own is
// suggested instead; one nobody defines gets neither.
func TestOtherCommandsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "-data", "d", "-val-share", "0.2"}, "compare: flag provided but not defined: -val-share: -val-share is a flag of ccs fit, not of ccs compare"},
		{[]string{"reproduce", "sim", "-set", "s.json"}, "-set is a flag of ccs calibrate, ccs evaluate, ccs coverage-check and others, not of ccs reproduce sim"},
		{[]string{"evaluate", "-tset", "t.npz"}, `did you mean "-set" or "-test"?`},
		{[]string{"evaluate", "-bogus"}, "evaluate: flag provided but not defined: -bogus"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(&stdout, &stderr, c.args)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) || c.args[1] == "-bogus" && strings.Contains(err.Error(), "is a flag of") {
			t.Errorf("ccs %s: %v, want a usage error containing %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}
