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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/internal/buildinfo"
)

// libraryVersion identifies the code that computes a comparison's cells
// (buildinfo.CodeVersion): the revision, or the library file's SHA-256.
var libraryVersion = sync.OnceValue(func() string {
	var file string
	if p := C.ccs_library_path(); p != nil {
		file = C.GoString(p)
	}
	return buildinfo.CodeVersion(file)
})

// compareKey keys a comparison's cells (ccs.compare's out) on what may
// change a cell's numbers: the keywords but those that say where results
// go, how they are named, and which cells are computed (as ccs compare
// keys its flags but -out, -seeds and -rows); the library; and each
// bundle's arrays (bundle.SHA256), so a bundle from memory and the same
// bundle from its file share cells.
func compareKey(o compareOptions, in compareInputs) (string, error) {
	o.Name, o.Command, o.Directory, o.Sets, o.Out = "", "", "", "", ""
	o.Seeds, o.Rows, o.LabelNames = nil, "", nil
	cfg, err := json.Marshal(o)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "ccs.compare\n%s\n%s\n", cfg, libraryVersion())
	for _, b := range []struct {
		name string
		b    *bundle.Bundle
	}{{"fit", in.Fit}, {"val", in.Val}, {"cal", in.Cal}, {"test", in.Test}, {"ood", in.OOD}, {"ood-cal", in.OODCal}} {
		sum := "-"
		if b.b != nil {
			if sum, err = b.b.SHA256(); err != nil {
				return "", fmt.Errorf("compare: the %s bundle: %w", b.name, err)
			}
		}
		fmt.Fprintf(h, "%s %s\n", b.name, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cellCounts says how a comparison's cells were had: read back from out's
// cells, computed, and among those found kept under another key.
type cellCounts struct {
	Dir      string `json:"dir"`
	ReadBack int    `json:"read_back"`
	Computed int    `json:"computed"`
	Stale    int    `json:"stale"`
}
