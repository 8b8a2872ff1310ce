package main

import (
	"fmt"
	"strconv"

	"github.com/ccsets/ccs/internal/kernel"
)

// threadNotes decides, from the environment, the threads every command
// runs on: gomaxprocs is GOMAXPROCS as the Go runtime set it, env the
// variable's text (empty: not set), cpus the CPUs this process may use
// (runtime.NumCPU: its affinity). It returns the count to set instead (0:
// keep it) and what to tell the user. A GOMAXPROCS above cpus is lowered
// to cpus: more threads than cores bring nothing but their spinning and
// switching (a trial's genball fit on 2 cores took 4.7 s at 2, 12.7 s at
// 16 and 14.9–18.1 s at 64, the same set file every time). A value the
// runtime ignored (not a positive integer) is said to be ignored.
func threadNotes(env string, gomaxprocs, cpus int) (set int, notes []string) {
	if env != "" { // read as the runtime reads it: " 2" is ignored there too
		if n, err := strconv.Atoi(env); err != nil || n < 1 {
			notes = append(notes, fmt.Sprintf("GOMAXPROCS=%q is not a positive integer: ignored, running %d threads (the CPUs this process may use)", env, min(gomaxprocs, cpus)))
		}
	}
	if cpus >= 1 && gomaxprocs > cpus {
		set = cpus
		notes = append(notes, fmt.Sprintf("GOMAXPROCS=%d is more than the %d CPUs this process may use: running %d threads (more threads than cores only slow the work; the numbers are the same on any number)", gomaxprocs, cpus, cpus))
	}
	return set, notes
}

// kernelNote is what to tell the user of CCS_KERNELS when it names no
// level (a typo runs the best level the processor has, silently but for
// ccs version), or "".
func kernelNote() string {
	if kernel.EnvUnknown() {
		return kernel.EnvNote() + ": running " + kernel.LevelName()
	}
	return ""
}
