// Package buildinfo says which build of ccs is running: the module and its
// version, the VCS revision, the Go toolchain and platform, and the
// kernels and BLAS in use. ccs version prints it, every result document
// carries it, and the Python package's ccs.version() returns it.
package buildinfo

import (
	"runtime"
	"runtime/debug"

	"github.com/ccsets/ccs/internal/kernel"
)

// Info is a build's description.
type Info struct {
	Module   string `json:"module"`
	Version  string `json:"version"`            // the module version, or (devel) in a checkout without VCS stamps
	Revision string `json:"revision,omitempty"` // the VCS revision the binary was built from
	Modified bool   `json:"modified,omitempty"` // the working tree had changes
	Go       string `json:"go"`                 // the toolchain, with the build tags
	Platform string `json:"platform"`
	Kernels  string `json:"kernels"` // which kernels run on this processor
	BLAS     string `json:"blas"`
}

// Read describes the running build.
func Read() Info {
	b := Info{Module: "github.com/ccsets/ccs", Version: "(devel)", Go: runtime.Version(),
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
