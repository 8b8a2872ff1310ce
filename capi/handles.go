package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"runtime/cgo"
	"runtime/debug"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/retrieve"
)

// abiVersion is the version of the C ABI: the functions, their arguments
// and the meaning of their results. The Python package checks it when it
// loads the library and refuses any other.
const abiVersion = 16

// Status codes returned by every function of the ABI that can fail.
const (
	statusOK        = 0
	statusValue     = 1 // bad input: the Python side raises ValueError
	statusOS        = 2 // a file could not be read or written: OSError
	statusNotFound  = 3 // a file does not exist: FileNotFoundError
	statusHandle    = 4 // a closed handle, or a handle of another kind: ValueError
	statusCancelled = 5 // the call was cancelled (ccs_job_cancel)
	statusInternal  = 6 // a bug in ccs (a recovered panic): RuntimeError
	statusType      = 7 // a keyword of the wrong type: TypeError
)

// errHandle reports a handle that is closed, was never made, or holds
// another kind of object.
type errHandle struct{ msg string }

func (e *errHandle) Error() string { return e.msg }

// statusOf is the status code of err.
func statusOf(err error) int {
	var h *errHandle
	var p *fs.PathError
	var op *net.OpError
	var kt *keywordTypeError
	var bug *panicError
	switch {
	case err == nil:
		return statusOK
	case errors.As(err, &bug):
		return statusInternal
	case errors.As(err, &kt):
		return statusType
	case errors.As(err, &h):
		return statusHandle
	case errors.Is(err, context.Canceled):
		return statusCancelled
	case errors.Is(err, fs.ErrNotExist):
		return statusNotFound
	case errors.As(err, &p), errors.As(err, &op): // a file, or a socket (ccs.serve's address in use)
		return statusOS
	}
	return statusValue
}

// internalError is the error of a recovered panic: ccs's bug, reported
// with its stack rather than crashing the caller's process
// (statusInternal: RuntimeError).
func internalError(p any) error {
	return &panicError{fmt.Sprintf("ccs: internal error: %v\n%s", p, debug.Stack())}
}

// panicError is a recovered panic's error.
type panicError struct{ msg string }

func (e *panicError) Error() string { return e.msg }

// The objects a handle holds. Each is immutable once made, so any number
// of threads may use one handle at once.
type (
	bundleObj struct {
		b     *bundle.Bundle
		path  string   // the file it was read from, or ""
		names []string // string labels' names (label i is names[i]), or nil
		// oneLabel is the label whose rows alone the bundle holds
		// (ccs.bundle's one_label, or the manifest.json beside a loaded
		// file: bundle.ManifestOneLabelName), its anchors carrying no
		// labels; "" otherwise.
		oneLabel string
		// manifest is the manifest.json beside path, read once when the
		// file was (bundle.ReadManifest), or nil: what it says of the file
		// (its split, blocks, …) is taken from it, as of then.
		manifest *bundle.Manifest
		// blocks is the number of blocks the bundle's rows are (ccs bundle
		// -blocks, blocks= in Python: each whole in its split), 0 for rows
		// split one by one: resplits of it are warned of.
		blocks int
		// provenance is what data the bundle is (bundle.Manifest's
		// Provenance), "" where no manifest says.
		provenance string
	}
	setObj struct {
		s    *conformal.Set
		oods oodCache // the per-input OOD test, built on first use
	}
	collectionObj struct{ c *retrieve.Collection }
)

// kindName names a handle's object in messages.
func kindName(v any) string {
	switch v.(type) {
	case *bundleObj:
		return "a bundle"
	case *setObj:
		return "a set"
	case *collectionObj:
		return "a collection"
	case *job:
		return "a job"
	case *canceller:
		return "a cancel token"
	}
	return fmt.Sprintf("%T", v)
}

// newHandle makes a handle for v.
func newHandle(v any) uintptr { return uintptr(cgo.NewHandle(v)) }

// lookup returns the object of handle h, which must be of type T (what
// names it in messages).
func lookup[T any](h uintptr, what string) (T, error) {
	var zero T
	if h == 0 {
		return zero, &errHandle{fmt.Sprintf("no %s: the handle is 0 (closed, or never made)", what)}
	}
	v, err := value(h)
	if err != nil {
		return zero, &errHandle{fmt.Sprintf("%s handle %d: %v", what, h, err)}
	}
	t, ok := v.(T)
	if !ok {
		return zero, &errHandle{fmt.Sprintf("handle %d holds %s, not %s", h, kindName(v), what)}
	}
	return t, nil
}

// value is cgo.Handle.Value, with the panic of an invalid handle turned
// into an error.
func value(h uintptr) (v any, err error) {
	defer func() {
		if recover() != nil {
			v, err = nil, errors.New("closed, or never made")
		}
	}()
	return cgo.Handle(h).Value(), nil
}

// closeHandle deletes handle h; a job still running is cancelled.
func closeHandle(h uintptr) (err error) {
	v, err := value(h)
	if err != nil {
		return &errHandle{fmt.Sprintf("handle %d: %v", h, err)}
	}
	if j, ok := v.(*job); ok {
		j.cancel()
	}
	if c, ok := v.(*canceller); ok {
		c.cancel() // its context's resources
	}
	defer func() {
		if recover() != nil { // closed by another thread in between
			err = &errHandle{fmt.Sprintf("handle %d: closed, or never made", h)}
		}
	}()
	cgo.Handle(h).Delete()
	if heldBytes(v) >= releaseBytes {
		// The memory of a large object goes back to the system now, not
		// at the runtime's next collection (up to two minutes of a
		// Python process that makes no more Go garbage: a closed
		// 1M × 128 collection held 490 MiB that long).
		go debug.FreeOSMemory()
	}
	return nil
}

// releaseBytes is the size from which closing an object returns its
// memory at once.
const releaseBytes = 64 << 20

// heldBytes estimates the memory v's arrays hold.
func heldBytes(v any) int64 {
	var n int
	switch o := v.(type) {
	case *bundleObj:
		b := o.b
		n = 4*(len(b.Anchors)+len(b.Positives)+len(b.PositivePool)+len(b.Negatives)+len(b.Pool)) +
			8*(len(b.PositiveIndex)+len(b.NegativeIndex)+len(b.Labels))
	case *collectionObj:
		n = 4*len(o.c.Rows) + 8*len(o.c.IDs)
	}
	return int64(n)
}
