package main

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TestMemoryLimit: a container's memory limit (here a provider's 1 GiB)
// sets the Go heap's soft limit to 90% of it; GOMEMLIMIT, when set, and
// AUTOMEMLIMIT=off leave it as it is; no limit to follow sets none.
func TestMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	t.Setenv("AUTOMEMLIMIT", "")
	os.Unsetenv("AUTOMEMLIMIT")
	const gib = 1 << 30
	if got, want := memoryLimit(memlimit.Limit(gib)), int64(gib*9/10); got != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("1 GiB: limit %d (the runtime's %d), want %d", got, debug.SetMemoryLimit(-1), want)
	}
	debug.SetMemoryLimit(before)
	if got := memoryLimit(func() (uint64, error) { return 0, memlimit.ErrNoLimit }); got != 0 || debug.SetMemoryLimit(-1) != before {
		t.Errorf("no limit: %d, the runtime's %d", got, debug.SetMemoryLimit(-1))
	}
	for _, env := range [][2]string{{"GOMEMLIMIT", "2GiB"}, {"AUTOMEMLIMIT", "off"}} {
		t.Setenv(env[0], env[1])
		if got := memoryLimit(memlimit.Limit(gib)); got != 0 || debug.SetMemoryLimit(-1) != before {
			t.Errorf("%s=%s: %d, the runtime's %d", env[0], env[1], got, debug.SetMemoryLimit(-1))
		}
		os.Unsetenv(env[0])
	}
}
