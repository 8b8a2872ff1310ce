package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/ccsets/ccs/internal/kernel"
)

// versionOptions are ccs version's inputs.
type versionOptions struct {
	JSON bool
}

func versionCommand() *command {
	return newCommand("version", "[-json]",
		"print the module version, the Go toolchain, the kernels in use (portable, AVX2 or AVX-512) and BLAS",
		func(fs *flag.FlagSet, o *versionOptions) func() error {
			fs.BoolVar(&o.JSON, "json", false, "print JSON")
			return nil
		}, runVersion)
}

// buildInfo is what ccs version reports.
type buildInfo struct {
	Module   string `json:"module"`
	Version  string `json:"version"`            // the module version, or (devel) in a checkout without VCS stamps
	Revision string `json:"revision,omitempty"` // the VCS revision the binary was built from
	Modified bool   `json:"modified,omitempty"` // the working tree had changes
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Kernels  string `json:"kernels"` // which kernels run on this processor
	BLAS     string `json:"blas"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Module: "github.com/ccsets/ccs", Version: "(devel)", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Kernels: kernel.Level(), BLAS: kernel.BLAS}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Path != "" {
		b.Module = info.Main.Path
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "-tags":
			b.Go += " -tags " + s.Value
		}
	}
	return b
}

func runVersion(_ context.Context, o versionOptions, out *output) error {
	b := readBuildInfo()
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
	fmt.Fprintf(out.stdout, "%s %s\n", b.Go, b.Platform)
	fmt.Fprintf(out.stdout, "kernels: %s\n", b.Kernels)
	fmt.Fprintf(out.stdout, "BLAS: %s\n", b.BLAS)
	return nil
}
