package main

import (
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/internal/buildinfo"
)

// versionInfo is what ccs.version() reports: the fields of ccs version
// -json, and the ABI and set-file versions.
type versionInfo struct {
	buildinfo.Info
	ABI            int    `json:"abi"`
	SetFileFormat  string `json:"set_file_format"`
	SetFileVersion int    `json:"set_file_version"`
}

func readVersion() versionInfo {
	return versionInfo{Info: buildinfo.Of(libraryFile()), ABI: abiVersion, SetFileFormat: conformal.FileFormat, SetFileVersion: conformal.FileVersion}
}
