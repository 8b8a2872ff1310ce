// Package buildinfo says which build of ccs is running: the module and its
// version, the VCS revision, the Go toolchain and platform, and the
// kernels and BLAS in use. ccs version prints it, every result document
// carries it, and the Python package's ccs.version() returns it.
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

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
	// Code is "sha256:" and the SHA-256 of the executable or library
	// running, where no unmodified VCS revision names the code (a build
	// with -buildvcs=false, outside a checkout, or of a modified tree):
	// what results directories key their cells on (CodeVersion), so that
	// a document names the build that computed it. Set by Of.
	Code string `json:"code,omitempty"`
}

// Of is Read for the code loaded from file (the executable, or the
// library the Python package loads), with Code where no revision names it.
func Of(file string) Info {
	b := Read()
	if b.Revision == "" || b.Modified {
		b.Code = fileHash(file)
	}
	return b
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

// CodeVersion identifies the code that computes a result, as results
// directories key their cells on it: the module version and VCS revision
// when the build is of an unmodified revision, otherwise "sha256:" and the
// SHA-256 of the file the code was loaded from (Go builds are
// reproducible: the same source gives the same file), or "unknown" where
// file is empty or unreadable; with the kernels in use and BLAS, whose
// last bits may differ.
func CodeVersion(file string) string {
	b := Read()
	v := b.Module + "@" + b.Version
	if b.Revision != "" && !b.Modified {
		v += "+" + b.Revision
	} else {
		v += "+" + fileHash(file)
	}
	return v + " kernels=" + b.Kernels + " blas=" + b.BLAS
}

// fileHash is "sha256:" and a file's SHA-256, or "unknown"; each file's
// is computed once (a binary of 30 MB takes tens of milliseconds).
func fileHash(path string) string {
	hashesMu.Lock()
	defer hashesMu.Unlock()
	if h, ok := hashes[path]; ok {
		return h
	}
	h := hashFile(path)
	hashes[path] = h
	return h
}

var (
	hashesMu sync.Mutex
	hashes   = map[string]string{}
)

func hashFile(path string) string {
	if path == "" {
		return "unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
