package main

import (
	"runtime"
	"runtime/debug"

	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/kernel"
)

// versionInfo is what ccs.version() reports: the fields of ccs version
// -json, and the ABI and set-file versions.
type versionInfo struct {
	Module         string `json:"module"`
	Version        string `json:"version"`
	Revision       string `json:"revision,omitempty"`
	Modified       bool   `json:"modified,omitempty"`
	Go             string `json:"go"`
	Platform       string `json:"platform"`
	Kernels        string `json:"kernels"`
	BLAS           string `json:"blas"`
	ABI            int    `json:"abi"`
	SetFileFormat  string `json:"set_file_format"`
	SetFileVersion int    `json:"set_file_version"`
}

func readVersion() versionInfo {
	v := versionInfo{Module: "github.com/ccsets/ccs", Version: "(devel)", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Kernels: kernel.Level(), BLAS: kernel.BLAS,
		ABI: abiVersion, SetFileFormat: conformal.FileFormat, SetFileVersion: conformal.FileVersion}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Path != "" {
		v.Module = info.Main.Path
	}
	if info.Main.Version != "" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "-tags":
			v.Go += " -tags " + s.Value
		}
	}
	return v
}
