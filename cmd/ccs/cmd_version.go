package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"

	"github.com/ccsets/ccs/internal/buildinfo"
)

// versionOptions are ccs version's inputs.
type versionOptions struct {
	JSON bool
}

func versionCommand() *command {
	return newCommand("version", "[-json]",
		"print the module version, the Go toolchain, the kernels in use (portable, AVX2 or AVX-512), BLAS and the threads",
		func(fs *flag.FlagSet, o *versionOptions) func() error {
			fs.BoolVar(&o.JSON, "json", false, "print JSON")
			return nil
		}, runVersion)
}

func runVersion(_ context.Context, o versionOptions, out *output) error {
	b := buildinfo.Of(executable())
	if o.JSON {
		return writeJSON(out.stdout, b)
	}
	fmt.Fprintf(out.stdout, "ccs %s (%s)\n", b.Version, b.Module)
	if b.Revision != "" {
		mod := ""
		if b.Modified {
			mod = ", with uncommitted changes"
		}
		fmt.Fprintf(out.stdout, "revision %s%s\n", b.Revision, mod)
	}
	if b.Code != "" {
		fmt.Fprintf(out.stdout, "code %s (no VCS revision names this build: the executable's SHA-256)\n", b.Code)
	}
	fmt.Fprintf(out.stdout, "%s %s\n", b.Go, b.Platform)
	fmt.Fprintf(out.stdout, "kernels: %s\n", b.Kernels)
	fmt.Fprintf(out.stdout, "BLAS: %s\n", b.BLAS)
	fmt.Fprintf(out.stdout, "threads: %d (GOMAXPROCS; this process may use %d CPUs)\n", runtime.GOMAXPROCS(0), runtime.NumCPU())
	return nil
}
