package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"cmp"
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/ccsets/ccs/bundle"
)

// Copies and pickles. A Python object of the package owns a handle; the
// copy module and pickle would copy the handle's number alone, so that
// the copy shared the original's object (closed with whichever went
// first) and an unpickled one, in another process, named whatever that
// process's handle of the number held. ccs_dup gives a copy a handle of
// its own to the same object (bundles, sets and collections are not
// changed once made: a collection's transforms and compact copies are
// caches); a pickle carries the object's contents — a set's file, a
// bundle's arrays as its .npz with what the handle knew beside them, a
// collection's rows and ids.

//export ccs_dup
func ccs_dup(h C.uintptr_t, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		v, err := value(uintptr(h))
		if err != nil {
			return &errHandle{fmt.Sprintf("handle %d: %v", h, err)}
		}
		switch v.(type) {
		case *bundleObj, *setObj, *collectionObj:
		default:
			return fmt.Errorf("handle %d holds %s, which is not copied", h, kindName(v))
		}
		*out = C.uintptr_t(newHandle(v))
		return nil
	})
}

// bundleMeta is what a bundle's handle knows beside its arrays.
type bundleMeta struct {
	Path      string           `json:"path,omitempty"`
	Names     []string         `json:"names,omitempty"`
	OneLabel  string           `json:"one_label,omitempty"`
	Manifest  *bundle.Manifest `json:"manifest,omitempty"`
	Converted []string         `json:"converted,omitempty"`
	Features  bool             `json:"features,omitempty"`
	// What the handle knew of the bundle without a manifest (ccs.bundle's
	// bundles in memory): the embeddings its source rows number, the
	// blocks its rows are, the data it is (bundleObj's).
	Embeddings string `json:"embeddings,omitempty"`
	Blocks     int    `json:"blocks,omitempty"`
	Provenance string `json:"provenance,omitempty"`
}

//export ccs_bundle_dump
func ccs_bundle_dump(h C.uintptr_t, data *unsafe.Pointer, n *C.int64_t, meta **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *bundleObj) error {
		m, err := json.Marshal(bundleMeta{Path: o.path, Names: o.names, OneLabel: o.oneLabel, Manifest: o.manifest, Converted: o.b.Converted, Features: o.b.K == 0,
			Embeddings: o.b.Embeddings, Blocks: o.blocks, Provenance: o.provenance})
		if err != nil {
			return err
		}
		var p unsafe.Pointer
		npz, err := bundle.EncodeNPZ(o.b.Arrays(), func(size int) []byte { // written into C's memory, once
			p = C.malloc(C.size_t(max(size, 1)))
			return unsafe.Slice((*byte)(p), size)
		})
		if err != nil {
			C.free(p)
			return err
		}
		*data, *n = p, C.int64_t(len(npz))
		cString(meta, m)
		return nil
	})
}

//export ccs_bundle_undump
func ccs_bundle_undump(data unsafe.Pointer, n C.int64_t, meta *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		var m bundleMeta
		if err := json.Unmarshal([]byte(C.GoString(meta)), &m); err != nil {
			return fmt.Errorf("a pickled bundle: %w", err)
		}
		if data == nil || n < 0 {
			return fmt.Errorf("a pickled bundle: no data")
		}
		arrays, err := bundle.DecodeNPZ(unsafe.Slice((*byte)(data), int(n))) // read, then copied into the bundle's arrays
		if err != nil {
			return fmt.Errorf("a pickled bundle: %w", err)
		}
		from := bundle.FromArrays
		if m.Features {
			from = bundle.FeaturesFromArrays
		}
		b, err := from(arrays)
		if err != nil {
			return fmt.Errorf("a pickled bundle: %w", err)
		}
		b.Converted = m.Converted
		b.Embeddings = cmp.Or(m.Embeddings, m.Manifest.EmbeddingsOf(m.Path, b)) // the manifest's: pickles made before the handle's were kept
		if b.Index == nil {
			b.Embeddings = "" // numbers no rows
		}
		*out = C.uintptr_t(newHandle(&bundleObj{b: b, path: m.Path, names: m.Names, oneLabel: m.OneLabel, manifest: m.Manifest,
			blocks: cmp.Or(m.Blocks, m.Manifest.BlocksOf(m.Path, b)), provenance: cmp.Or(m.Provenance, m.Manifest.Provenance())}))
		return nil
	})
}

//export ccs_collection_ids
func ccs_collection_ids(h C.uintptr_t, out unsafe.Pointer, nbytes C.int64_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *collectionObj) error {
		src := bytesOf(o.c.IDs[:o.c.N])
		if int64(nbytes) != int64(len(src)) || out == nil {
			return fmt.Errorf("collection ids: %d bytes, the buffer has %d", len(src), int64(nbytes))
		}
		copy(unsafe.Slice((*byte)(out), len(src)), src)
		return nil
	})
}
