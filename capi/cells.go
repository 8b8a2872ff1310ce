package main

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>

// ccs_library_path is the file this code was loaded from: the shared
// library (or, in the package's tests, the test binary); NULL if unknown.
static const char *ccs_library_path(void) {
	Dl_info info;
	if (dladdr((void *)ccs_library_path, &info) == 0 || info.dli_fname == NULL) {
		return NULL;
	}
	return info.dli_fname;
}
*/
import "C"

import (
	"sync"

	"github.com/ccsets/ccs/internal/buildinfo"
)

// libraryVersion identifies the code that computes a comparison's cells
// (buildinfo.CodeVersion): the revision, or the library file's SHA-256.
var libraryVersion = sync.OnceValue(func() string { return buildinfo.CodeVersion(libraryFile()) })

// libraryFile is the library's path, "" if unknown.
func libraryFile() string {
	if p := C.ccs_library_path(); p != nil {
		return C.GoString(p)
	}
	return ""
}

// cellCounts says how a comparison's cells were had: read back from out's
// cells, computed, and among those found kept under another key.
type cellCounts struct {
	Dir      string `json:"dir"`
	ReadBack int    `json:"read_back"`
	Computed int    `json:"computed"`
	Stale    int    `json:"stale"`
	// Kept names the rows compare.json keeps besides those asked for:
	// earlier calls' (or runs') with other rows, read back from their
	// cells.
	Kept []string `json:"kept_rows"`
}
