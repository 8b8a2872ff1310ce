package main

/*
#include <stdint.h>
#include <stdlib.h>

// ccs_array is an array the caller lends for the duration of one call:
// its memory (never kept), NumPy's dtype string ("<f4", "<f8", "<f2",
// "<i8", …), its shape and its order.
typedef struct {
	const char *name;     // the array's name (a bundle's arrays), or NULL
	const void *data;
	const char *dtype;
	const int64_t *shape;
	int64_t ndim;
	int64_t fortran;      // 1: Fortran order, 0: C order
	int64_t nbytes;       // the size of data, checked against shape and dtype
} ccs_array;

// ccs_hits is a retrieval's answer: count hits (ids, rows, scores, each
// allocated by the library with malloc, freed by the caller with
// ccs_free) of total inside the set.
typedef struct {
	int64_t total;
	int64_t count;
	int64_t *ids;
	int64_t *rows;
	double *scores;
} ccs_hits;
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ccsets/ccs/internal/textclip"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"github.com/ccsets/ccs/bundle"
	"github.com/ccsets/ccs/conformal"
	"github.com/ccsets/ccs/geometry"
	"github.com/ccsets/ccs/internal/atomicfile"
	"github.com/ccsets/ccs/internal/jsonfloat"
	"github.com/ccsets/ccs/report"
	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/table"
)

// The rules of the ABI are in doc.go. Every function that can fail
// returns a status code (handles.go lists them) and, on failure, stores a
// message in *err, a C string the caller frees with ccs_free.

// run runs an exported function's body f: its error becomes the status
// code, its message *errOut; a panic becomes statusInternal with its
// message, since a bug in ccs must not take the caller's process down.
func run(errOut **C.char, f func() error) (status C.int) {
	defer func() {
		if p := recover(); p != nil {
			status = fail(errOut, internalError(p))
		}
	}()
	if err := f(); err != nil {
		return fail(errOut, err)
	}
	return statusOK
}

// onHandle is run of f on the object of handle h, of type T (a handle
// of another kind, or none, refused as lookup refuses it, named as
// kindName names a T).
func onHandle[T any](h C.uintptr_t, errOut **C.char, f func(T) error) C.int {
	return run(errOut, func() error {
		var zero T
		o, err := lookup[T](uintptr(h), kindName(zero))
		if err != nil {
			return err
		}
		return f(o)
	})
}

// fail stores err's message, as Python shows it, in *errOut and returns
// its status.
func fail(errOut **C.char, err error) C.int {
	if errOut != nil {
		*errOut = C.CString(messageOf(err))
	}
	return C.int(statusOf(err))
}

// notCalibrated is conformal.ErrNotCalibrated's message in Python, which
// names Python's call alone (the package's names the command, Python's
// call and Go's).
const notCalibrated = "the set is not calibrated: calibrate it first with ccs.calibrate(set, cal, alpha=…)"

// messageOf is err's message as Python shows it.
func messageOf(err error) string {
	msg := err.Error()
	if errors.Is(err, conformal.ErrNotCalibrated) {
		msg = strings.Replace(msg, conformal.ErrNotCalibrated.Error(), notCalibrated, 1)
	}
	return textclip.Message(msg) // a value quoted from a file, cut
}

// cString stores b as a malloc'd C string in *out.
func cString(out **C.char, b []byte) {
	*out = C.CString(string(b))
}

// jsonOut stores v, as JSON, as a malloc'd C string in *out.
func jsonOut(out **C.char, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	cString(out, b)
	return nil
}

// goArray reads a ccs_array: its memory as a view, the rest copied.
func goArray(a *C.ccs_array, name string) (rawArray, error) {
	if a == nil {
		return rawArray{}, fmt.Errorf("array %q: missing", name)
	}
	if a.name != nil {
		name = C.GoString(a.name)
	}
	if a.ndim < 0 || a.ndim > maxDims || (a.ndim > 0 && a.shape == nil) || a.nbytes < 0 || (a.nbytes > 0 && a.data == nil) || a.dtype == nil {
		return rawArray{}, fmt.Errorf("array %q: a malformed array descriptor", name)
	}
	r := rawArray{Name: name, Dtype: C.GoString(a.dtype), Fortran: a.fortran != 0}
	if a.ndim > 0 {
		for _, s := range unsafe.Slice((*int64)(unsafe.Pointer(a.shape)), int(a.ndim)) {
			r.Shape = append(r.Shape, int(s))
		}
	} else {
		r.Shape = []int{}
	}
	if a.nbytes > 0 {
		r.Data = unsafe.Slice((*byte)(a.data), int(a.nbytes))
	}
	return r, nil
}

// optionalArray is goArray for an argument that may be NULL.
func optionalArray(a *C.ccs_array, name string) (*rawArray, error) {
	if a == nil {
		return nil, nil
	}
	r, err := goArray(a, name)
	return &r, err
}

// goArrays reads n ccs_arrays, each named.
func goArrays(a *C.ccs_array, n C.int64_t) ([]rawArray, error) {
	if n < 0 || (n > 0 && a == nil) {
		return nil, errors.New("a malformed list of arrays")
	}
	var out []rawArray
	for i, x := range unsafe.Slice(a, int(n)) {
		if x.name == nil {
			return nil, fmt.Errorf("array %d has no name", i)
		}
		r, err := goArray(&x, "")
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// goArraysByName is goArrays keyed by name, an array given twice refused
// (what names the call in the error).
func goArraysByName(a *C.ccs_array, n C.int64_t, what string) (map[string]rawArray, error) {
	rs, err := goArrays(a, n)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]rawArray, len(rs))
	for _, r := range rs {
		if _, dup := byName[r.Name]; dup {
			return nil, fmt.Errorf("%s: array %q given twice", what, r.Name)
		}
		byName[r.Name] = r
	}
	return byName, nil
}

// options decodes a call's keywords, a JSON object (NULL: none).
func options(s *C.char, dst any) error {
	if s == nil {
		return nil
	}
	return parseOptions(C.GoString(s), dst)
}

// handles stores the handles of m's bundles in out (room for capacity),
// their string labels named by m.LabelNames (nil for integer labels), each
// knowing the one label it holds the rows of (m.OneLabel).
func handles(m *madeBundles, out *C.uintptr_t, capacity C.int64_t) error {
	bs := m.Bundles
	if int(capacity) < len(bs) || out == nil {
		return fmt.Errorf("room for %d handles, %d needed", capacity, len(bs))
	}
	dst := unsafe.Slice((*uintptr)(unsafe.Pointer(out)), len(bs))
	for i, b := range bs {
		if b.Index != nil {
			b.Embeddings = m.Manifest.EmbeddingsDigest() // what its Index numbers rows of, as beside a written manifest
		}
		o := &bundleObj{b: b, names: m.LabelNames, oneLabel: m.OneLabel, provenance: m.Manifest.Provenance()}
		if i < len(m.Names) {
			o.blocks = m.Manifest.BlocksOf(m.Names[i]+".npz", b)
		}
		dst[i] = newHandle(o)
	}
	return nil
}

//export ccs_abi_version
func ccs_abi_version() C.int { return abiVersion }

//export ccs_free
func ccs_free(p unsafe.Pointer) { C.free(p) }

//export ccs_version
func ccs_version(out **C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		return jsonOut(out, readVersion())
	})
}

//export ccs_close
func ccs_close(h C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		return closeHandle(uintptr(h))
	})
}

// canceller is a cancel token: a call given it (ccs_set_retrieve_many,
// ccs_set_coverage_check)
// stops with status cancelled once ccs_cancel is called on it, from
// another thread — the Python side's, on Ctrl-C.
type canceller struct {
	ctx    context.Context
	cancel context.CancelFunc
}

//export ccs_cancel_new
func ccs_cancel_new(out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		ctx, cancel := context.WithCancel(context.Background())
		*out = C.uintptr_t(newHandle(&canceller{ctx, cancel}))
		return nil
	})
}

//export ccs_cancel
func ccs_cancel(h C.uintptr_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(c *canceller) error {
		c.cancel()
		return nil
	})
}

//export ccs_bundle_new
func ccs_bundle_new(arrays *C.ccs_array, n C.int64_t, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		rs, err := goArrays(arrays, n)
		if err != nil {
			return err
		}
		b, err := newBundle(rs)
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&bundleObj{b: b}))
		return nil
	})
}

//export ccs_bundle_load
func ccs_bundle_load(path *C.char, features C.int, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		o, err := loadBundle(C.GoString(path), features != 0)
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(o))
		return nil
	})
}

//export ccs_bundle_save
func ccs_bundle_save(h C.uintptr_t, path *C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *bundleObj) error {
		return saveBundle(C.GoString(path), o.b)
	})
}

//export ccs_bundle_info
func ccs_bundle_info(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *bundleObj) error {
		return jsonOut(out, infoOf(o))
	})
}

//export ccs_bundle_array
func ccs_bundle_array(h C.uintptr_t, name *C.char, out unsafe.Pointer, nbytes C.int64_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *bundleObj) error {
		var dst []byte
		if nbytes > 0 {
			if out == nil {
				return errors.New("no output buffer")
			}
			dst = unsafe.Slice((*byte)(out), int(nbytes))
		}
		return bundleArray(o.b, C.GoString(name), dst)
	})
}

// madeJSON is what ccs_bundle_make and ccs_simulate say beside the
// handles: the splits' names, in the handles' order, and the warnings.
func madeJSON(m *madeBundles) []byte {
	w := m.Warnings
	if w == nil {
		w = []string{}
	}
	out := map[string]any{"names": m.Names, "warnings": w}
	if m.LabelNames != nil {
		out["label_names"] = m.LabelNames
	}
	if m.OneLabel != "" {
		out["one_label"] = m.OneLabel
	}
	if m.Notes != nil {
		out["notes"] = m.Notes
	}
	b, _ := json.Marshal(out)
	return b
}

//export ccs_bundle_make
func ccs_bundle_make(arrays *C.ccs_array, n C.int64_t, opts *C.char, out *C.uintptr_t, capacity C.int64_t, info **C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		byName, err := goArraysByName(arrays, n, "bundle")
		if err != nil {
			return err
		}
		o := defaultMake
		if err := options(opts, &o); err != nil {
			return err
		}
		m, err := makeBundles(byName, o)
		if err != nil {
			return err
		}
		if err := handles(m, out, capacity); err != nil {
			return err
		}
		cString(info, madeJSON(m))
		return nil
	})
}

//export ccs_simulate
func ccs_simulate(opts *C.char, out *C.uintptr_t, capacity C.int64_t, info **C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		o := defaultSimulate
		if err := options(opts, &o); err != nil {
			return err
		}
		m, err := simulate(o)
		if err != nil {
			return err
		}
		if err := handles(m, out, capacity); err != nil {
			return err
		}
		cString(info, madeJSON(m))
		return nil
	})
}

//export ccs_fit_start
func ccs_fit_start(fitH, valH C.uintptr_t, opts *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return onHandle(fitH, errOut, func(fit *bundleObj) error {
		var val *bundle.Bundle
		if valH != 0 {
			v, err := lookup[*bundleObj](uintptr(valH), "a bundle")
			if err != nil {
				return err
			}
			val = v.b
		}
		var o fitOptions
		if err := options(opts, &o); err != nil {
			return err
		}
		j, err := startFit(fit.b, val, o)
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(j))
		return nil
	})
}

//export ccs_compare_start
func ccs_compare_start(fitH, valH, calH, testH, oodH, oodCalH C.uintptr_t, opts *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		var in compareInputs
		for _, b := range []struct {
			h   C.uintptr_t
			dst **bundle.Bundle
		}{{fitH, &in.Fit}, {valH, &in.Val}, {calH, &in.Cal}, {testH, &in.Test}, {oodH, &in.OOD}, {oodCalH, &in.OODCal}} {
			if b.h == 0 {
				continue
			}
			o, err := lookup[*bundleObj](uintptr(b.h), "a bundle")
			if err != nil {
				return err
			}
			*b.dst = o.b
			if b.dst == &in.Cal {
				in.CalOneLabel = o.oneLabel
			}
			if b.dst == &in.Test {
				in.Provenance, in.TestBlocks = o.provenance, o.blocks
			}
		}
		var o compareOptions
		if err := options(opts, &o); err != nil {
			return err
		}
		j, err := startCompare(in, o)
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(j))
		return nil
	})
}

//export ccs_serve_start
func ccs_serve_start(opts *C.char, out *C.uintptr_t, info **C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		var o serveOptions
		if err := options(opts, &o); err != nil {
			return err
		}
		j, in, err := startServer(o)
		if err != nil {
			return err
		}
		if err := jsonOut(info, in); err != nil {
			j.cancel()
			return err
		}
		*out = C.uintptr_t(newHandle(j))
		return nil
	})
}

//export ccs_server_reload
func ccs_server_reload(h C.uintptr_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		return j.reload()
	})
}

//export ccs_job_check
func ccs_job_check(h C.uintptr_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		return j.finished()
	})
}

//export ccs_job_document
func ccs_job_document(h C.uintptr_t, doc, text **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		d, t, err := j.document()
		if err != nil {
			return err
		}
		cString(doc, d)
		cString(text, []byte(t))
		return nil
	})
}

//export ccs_job_cells
func ccs_job_cells(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		c, err := j.cellsOf()
		if err != nil {
			return err
		}
		b, err := json.Marshal(c) // null without a results directory
		if err != nil {
			return err
		}
		cString(out, b)
		return nil
	})
}

//export ccs_document_text
func ccs_document_text(doc *C.char, text **C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		t, err := documentText([]byte(C.GoString(doc)))
		if err != nil {
			return err
		}
		cString(text, []byte(t))
		return nil
	})
}

// ccs_document_table writes a comparison document's table alone as
// Markdown or a LaTeX tabular (format "markdown" or "latex").
//
//export ccs_document_table
func ccs_document_table(doc, format *C.char, text **C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		t, err := documentTable([]byte(C.GoString(doc)), C.GoString(format))
		if err != nil {
			return err
		}
		cString(text, []byte(t))
		return nil
	})
}

//export ccs_threads
func ccs_threads(n C.int64_t, now *C.int64_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		if n < 0 {
			return fmt.Errorf("threads=%d: want at least 1 (None: ask)", n)
		}
		if n > 0 {
			// More threads than the CPUs this process may use only slow
			// the work (the numbers are the same): at most those.
			runtime.GOMAXPROCS(min(int(n), runtime.NumCPU()))
		}
		*now = C.int64_t(runtime.GOMAXPROCS(0))
		return nil
	})
}

//export ccs_report
func ccs_report(docs, title, path *C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		bs, err := documentList("report", docs)
		if err != nil {
			return err
		}
		format, err := report.FormatOf(C.GoString(path))
		if err != nil {
			return fmt.Errorf("report: path %w", err)
		}
		return atomicfile.Write(C.GoString(path), func(w io.Writer) error { return writeReport(w, format, C.GoString(title), bs) })
	})
}

// documentList is a JSON array of result documents, each as given.
func documentList(what string, docs *C.char) ([][]byte, error) {
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(C.GoString(docs)), &list); err != nil {
		return nil, fmt.Errorf("%s: the results: %w", what, err)
	}
	bs := make([][]byte, len(list))
	for i, d := range list {
		bs[i] = d
	}
	return bs, nil
}

// ccs_plot writes the figures of docs (a JSON array of result
// documents) as PNG and SVG files in the directory path, as ccs plot
// does, and the files' paths (a JSON array) in out.
//
//export ccs_plot
func ccs_plot(docs, path *C.char, out **C.char, errOut **C.char) C.int {
	return run(errOut, func() error {
		bs, err := documentList("plot", docs)
		if err != nil {
			return err
		}
		files, err := writePlots(C.GoString(path), bs)
		if err != nil {
			return err
		}
		return jsonOut(out, files)
	})
}

//export ccs_job_wait
func ccs_job_wait(h C.uintptr_t, timeoutMS C.int64_t, finished *C.int, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		*finished = 0
		if j.wait(time.Duration(timeoutMS) * time.Millisecond) {
			*finished = 1
		}
		return nil
	})
}

//export ccs_job_progress
func ccs_job_progress(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		return jsonOut(out, j.progress())
	})
}

//export ccs_job_cancel
func ccs_job_cancel(h C.uintptr_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		j.cancel()
		return nil
	})
}

//export ccs_job_result
func ccs_job_result(h C.uintptr_t, out *C.uintptr_t, training **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(j *job) error {
		s, r, ws, err := j.outcome()
		if err != nil {
			return err
		}
		b, err := json.Marshal(trainingJSON(r, ws))
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&setObj{s: s}))
		cString(training, b)
		return nil
	})
}

//export ccs_calibrate
func ccs_calibrate(fittedH, calH, fitH C.uintptr_t, opts *C.char, reference, oodCal *C.ccs_array, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		var fitted *conformal.Set
		if fittedH != 0 {
			f, err := lookup[*setObj](uintptr(fittedH), "a set")
			if err != nil {
				return err
			}
			fitted = f.s
		}
		cal, err := lookup[*bundleObj](uintptr(calH), "a bundle")
		if err != nil {
			return err
		}
		var o calibrateOptions
		if err := options(opts, &o); err != nil {
			return err
		}
		var in calibrateInputs
		if fitH != 0 {
			if in.Fit, err = lookup[*bundleObj](uintptr(fitH), "a bundle"); err != nil {
				return err
			}
		}
		if in.Reference, err = optionalArray(reference, "reference"); err != nil {
			return err
		}
		if in.OODCal, err = optionalArray(oodCal, "ood_cal"); err != nil {
			return err
		}
		s, err := calibrate(fitted, cal, o, in)
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&setObj{s: s}))
		return nil
	})
}

//export ccs_set_load
func ccs_set_load(path *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		s, err := conformal.Load(C.GoString(path))
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&setObj{s: s}))
		return nil
	})
}

//export ccs_set_parse
func ccs_set_parse(text *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		s, err := conformal.ReadJSON(strings.NewReader(C.GoString(text)))
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&setObj{s: s}))
		return nil
	})
}

//export ccs_set_save
func ccs_set_save(h C.uintptr_t, path *C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		return o.s.Save(C.GoString(path))
	})
}

//export ccs_set_json
func ccs_set_json(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		b, err := setJSON(o.s)
		if err != nil {
			return err
		}
		cString(out, b)
		return nil
	})
}

//export ccs_set_evaluate
func ccs_set_evaluate(h, testH C.uintptr_t, opts *C.char, out **C.char, errOut **C.char) C.int {
	return setOnBundle(h, testH, opts, out, errOut, func(s *conformal.Set, test *bundleObj, o evaluateOptions) (any, []string, error) {
		return evaluate(context.Background(), s, test, o, nil)
	})
}

// ccs_set_evaluate_start starts ccs_set_evaluate as a job: with a
// collection its set sizes (and top-k baselines) are a pass over it per
// anchor — seconds to minutes — reported as they go (each report {part:
// the stage, done, total, what}, at most one a stage each 100 ms and its
// end) and cancelled by ccs_job_cancel. Its result is ccs_job_document's
// document, {"result", "warnings"}, as ccs_set_evaluate answers.
//
//export ccs_set_evaluate_start
func ccs_set_evaluate_start(h, testH C.uintptr_t, opts *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		test, err := lookup[*bundleObj](uintptr(testH), "a bundle")
		if err != nil {
			return err
		}
		var opt evaluateOptions
		if err := options(opts, &opt); err != nil {
			return err
		}
		// evaluate's errors name the call already: bare.
		j := startJobBare("evaluate", true, func(ctx context.Context, j *job) error {
			parts := j.partReports("")
			report := func(stage string, done, total int) { parts(stage, done, total, "") }
			result, warnings, err := evaluate(ctx, o.s, test, opt, report)
			if err != nil {
				return err
			}
			doc, err := json.Marshal(resultDoc(result, warnings))
			if err != nil {
				return err
			}
			j.mu.Lock()
			j.doc = doc
			j.mu.Unlock()
			return nil
		})
		*out = C.uintptr_t(newHandle(j))
		return nil
	})
}

//export ccs_set_trials
func ccs_set_trials(h C.uintptr_t, arrays *C.ccs_array, n C.int64_t, opts *C.char, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		byName, err := goArraysByName(arrays, n, "trials")
		if err != nil {
			return err
		}
		var opt trialsOptions
		if err := options(opts, &opt); err != nil {
			return err
		}
		result, warnings, err := setTrials(o.s, byName, opt)
		if err != nil {
			return err
		}
		return resultOut(out, result, warnings)
	})
}

// ccs_set_coverage_check stops with status cancelled once ccs_cancel is
// called on cancelH (0: none), from another thread: a large test
// bundle's resplits take seconds to minutes.
//
//export ccs_set_coverage_check
func ccs_set_coverage_check(h, testH C.uintptr_t, opts *C.char, out **C.char, cancelH C.uintptr_t, errOut **C.char) C.int {
	return setOnBundle(h, testH, opts, out, errOut, func(s *conformal.Set, test *bundleObj, o coverageCheckOptions) (any, []string, error) {
		ctx := context.Background()
		if cancelH != 0 { // looked up after the set and the bundle, as ccs_set_retrieve_many does
			c, err := lookup[*canceller](uintptr(cancelH), "a cancel token")
			if err != nil {
				return nil, nil, err
			}
			ctx = c.ctx
		}
		return coverageCheck(ctx, s, test, o)
	})
}

// setOnBundle runs f on a set, a test bundle and the call's options (O,
// decoded from opts), answering {"result", "warnings"} as JSON in out.
func setOnBundle[O any](h, testH C.uintptr_t, opts *C.char, out, errOut **C.char, f func(*conformal.Set, *bundleObj, O) (any, []string, error)) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		test, err := lookup[*bundleObj](uintptr(testH), "a bundle")
		if err != nil {
			return err
		}
		var opt O
		if err := options(opts, &opt); err != nil {
			return err
		}
		result, warnings, err := f(o.s, test, opt)
		if err != nil {
			return err
		}
		return resultOut(out, result, warnings)
	})
}

// resultOut answers {"result", "warnings"} as JSON in out (warnings [],
// not null, when there are none).
func resultOut(out **C.char, result any, warnings []string) error {
	return jsonOut(out, resultDoc(result, warnings))
}

// resultDoc is a call's answer, {"result", "warnings"} (warnings [], not
// null, when there are none): resultOut's, and an evaluation job's
// document.
func resultDoc(result any, warnings []string) map[string]any {
	if warnings == nil {
		warnings = []string{}
	}
	return map[string]any{"result": result, "warnings": warnings}
}

// setQuery reads a set handle and a query's arrays.
func setQuery(h C.uintptr_t, anchor, points *C.ccs_array) (*conformal.Set, query, error) {
	o, err := lookup[*setObj](uintptr(h), "a set")
	if err != nil {
		return nil, query{}, err
	}
	a, err := goArray(anchor, "anchor")
	if err != nil {
		return nil, query{}, err
	}
	p, err := goArray(points, "points")
	if err != nil {
		return nil, query{}, err
	}
	qr, err := newQuery(o.s, a, p)
	return o.s, qr, err
}

//export ccs_set_contains
func ccs_set_contains(h C.uintptr_t, anchor, points *C.ccs_array, hasLabel C.int, label C.int64_t, out *C.uint8_t, n C.int64_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		s, qr, err := setQuery(h, anchor, points)
		if err != nil {
			return err
		}
		var l *int64
		if hasLabel != 0 {
			v := int64(label)
			l = &v
		}
		var dst []bool
		if n > 0 {
			dst = unsafe.Slice((*bool)(unsafe.Pointer(out)), int(n))
		}
		return contains(s, qr, l, dst)
	})
}

//export ccs_set_label_named
func ccs_set_label_named(h C.uintptr_t, name *C.char, out *C.int64_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		if name == nil || out == nil {
			return errors.New("ccs_set_label_named: a null name or result")
		}
		l, err := o.s.LabelNamed(C.GoString(name))
		if err != nil {
			return err
		}
		*out = C.int64_t(l)
		return nil
	})
}

// ccs_set_for_class makes the set of one threshold that a
// class-conditional set is for anchors of class label
// (conformal.Set.ForClass): what retrieve(label=) searches with.
//
//export ccs_set_for_class
func ccs_set_for_class(h C.uintptr_t, label C.int64_t, out *C.uintptr_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		if out == nil {
			return errors.New("ccs_set_for_class: a null result")
		}
		s, err := o.s.ForClass(int64(label))
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&setObj{s: s}))
		return nil
	})
}

//export ccs_set_scores
func ccs_set_scores(h C.uintptr_t, anchor, points *C.ccs_array, out *C.double, n C.int64_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		s, qr, err := setQuery(h, anchor, points)
		if err != nil {
			return err
		}
		var dst []float64
		if n > 0 {
			dst = unsafe.Slice((*float64)(unsafe.Pointer(out)), int(n))
		}
		return scores(s, qr, dst)
	})
}

//export ccs_collection_new
func ccs_collection_new(rows, ids *C.ccs_array, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		r, err := goArray(rows, "collection")
		if err != nil {
			return err
		}
		i, err := optionalArray(ids, "ids")
		if err != nil {
			return err
		}
		c, err := newCollection(r, i, false)
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&collectionObj{c: c}))
		return nil
	})
}

//export ccs_collection_load
func ccs_collection_load(path *C.char, out *C.uintptr_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		c, err := retrieve.ReadCollection(C.GoString(path))
		if err != nil {
			return err
		}
		*out = C.uintptr_t(newHandle(&collectionObj{c: c}))
		return nil
	})
}

//export ccs_collection_size
func ccs_collection_size(h C.uintptr_t, n, d *C.int64_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *collectionObj) error {
		*n, *d = C.int64_t(o.c.N), C.int64_t(o.c.D)
		return nil
	})
}

// ccs_collection_rows copies the collection's rows, n×d float32 (as read
// and converted: float16, bfloat16 and float64 files widened or rounded),
// into out, which holds exactly nbytes = 4·n·d.
//
//export ccs_collection_rows
func ccs_collection_rows(h C.uintptr_t, out unsafe.Pointer, nbytes C.int64_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *collectionObj) error {
		src := bytesOf(o.c.Rows[:o.c.N*o.c.D])
		if int64(nbytes) != int64(len(src)) || out == nil {
			return fmt.Errorf("collection rows: %d bytes, the buffer has %d", len(src), int64(nbytes))
		}
		copy(unsafe.Slice((*byte)(out), len(src)), src)
		return nil
	})
}

//export ccs_collection_keys
func ccs_collection_keys(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *collectionObj) error {
		return jsonOut(out, o.c.Keys) // null where the ids are integers
	})
}

//export ccs_collection_save
func ccs_collection_save(h C.uintptr_t, path *C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *collectionObj) error {
		p := C.GoString(path)
		if !strings.EqualFold(filepath.Ext(p), ".parquet") {
			return fmt.Errorf("collection: save %s: a collection is saved as Parquet (.parquet): its rows and its ids, integers or strings", p)
		}
		return table.WriteParquet(p, o.c)
	})
}

// ccs_collection_transform prepares collection h for searches with set
// setH, a single-norm or ellipsoid set, or a single-norm or generalized
// ball behind a head (of a shifted set, its inner one),
// class-conditional or not, within maxBytes (≤ 0: no limit):
// collectionTransform.
//
//export ccs_collection_transform
func ccs_collection_transform(h, setH C.uintptr_t, maxBytes C.int64_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		return collectionTransform(uintptr(h), uintptr(setH), int64(maxBytes))
	})
}

// ccs_collection_prepare makes collection h's compact copies now (the ℓ2
// ball's half-precision copy and the generalized ball's 8-bit one, as ccs
// serve makes them at load) and writes the bytes they take.
//
//export ccs_collection_prepare
func ccs_collection_prepare(h C.uintptr_t, bytes *C.int64_t, errOut **C.char) C.int {
	return run(errOut, func() error {
		o, err := lookup[*collectionObj](uintptr(h), "a collection")
		if err != nil {
			return err
		}
		*bytes = C.int64_t(o.c.PrepareHalf() + o.c.PrepareBytes())
		return nil
	})
}

// collectionOf is the collection a retrieval searches: the handle collH,
// or else rows (and ids, when given) made into one, viewed in place.
func collectionOf(collH C.uintptr_t, rows, ids *C.ccs_array) (*retrieve.Collection, error) {
	if collH != 0 {
		co, err := lookup[*collectionObj](uintptr(collH), "a collection")
		if err != nil {
			return nil, err
		}
		return co.c, nil
	}
	r, err := goArray(rows, "collection")
	if err != nil {
		return nil, err
	}
	i, err := optionalArray(ids, "ids")
	if err != nil {
		return nil, err
	}
	return newCollection(r, i, true)
}

//export ccs_set_retrieve
func ccs_set_retrieve(h, collH C.uintptr_t, rows, ids, anchor *C.ccs_array, limit C.int64_t, out *C.ccs_hits, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		c, err := collectionOf(collH, rows, ids)
		if err != nil {
			return err
		}
		a, err := goArray(anchor, "anchor")
		if err != nil {
			return err
		}
		hs, err := search(context.Background(), o.s, c, a, int(limit))
		if err != nil {
			return err
		}
		k := len(hs.IDs)
		out.total, out.count = C.int64_t(hs.Total), C.int64_t(k)
		out.ids, out.rows, out.scores = nil, nil, nil
		if k > 0 {
			out.ids = (*C.int64_t)(C.malloc(C.size_t(8 * k)))
			out.rows = (*C.int64_t)(C.malloc(C.size_t(8 * k)))
			out.scores = (*C.double)(C.malloc(C.size_t(8 * k)))
			copy(unsafe.Slice((*int64)(unsafe.Pointer(out.ids)), k), hs.IDs)
			copy(unsafe.Slice((*int64)(unsafe.Pointer(out.rows)), k), hs.Rows)
			copy(unsafe.Slice((*float64)(unsafe.Pointer(out.scores)), k), hs.Scores)
		}
		return nil
	})
}

// ccs_set_collection_warnings writes, as a JSON list (never null), what
// a retrieval with set h over the collection (collH, or rows) warns of
// beyond the set's own warnings: rows not of unit norm beside a set
// calibrated on unit-norm embeddings (retrieve.UnitNormWarning, as ccs
// retrieve and ccs serve say it). A collection's count is kept; rows are
// counted on every call.
//
//export ccs_set_collection_warnings
func ccs_set_collection_warnings(h, collH C.uintptr_t, rows *C.ccs_array, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		w := []string{}
		if !o.s.Calibration.UnitNorm {
			return jsonOut(out, w)
		}
		c, err := collectionOf(collH, rows, nil)
		if err != nil {
			return err
		}
		if msg := retrieve.UnitNormWarning("collection", c); msg != "" {
			w = append(w, msg)
		}
		return jsonOut(out, w)
	})
}

//export ccs_set_retrieve_many
func ccs_set_retrieve_many(h, collH C.uintptr_t, anchors *C.ccs_array, limit C.int64_t, out *C.ccs_hits, m C.int64_t, cancelH C.uintptr_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		co, err := lookup[*collectionObj](uintptr(collH), "a collection")
		if err != nil {
			return err
		}
		ctx := context.Background()
		if cancelH != 0 {
			c, err := lookup[*canceller](uintptr(cancelH), "a cancel token")
			if err != nil {
				return err
			}
			ctx = c.ctx
		}
		a, err := goArray(anchors, "anchors")
		if err != nil {
			return err
		}
		if len(a.Shape) != 2 || int64(a.Shape[0]) != int64(m) {
			return fmt.Errorf("anchors: shape %s: want (%d, d), one row a hits record", bundle.FormatShape(a.Shape), int64(m))
		}
		all, err := searchMany(ctx, o.s, co.c, a, int(limit))
		if err != nil {
			return err
		}
		outs := unsafe.Slice(out, int(m))
		for i, hs := range all {
			k := len(hs.IDs)
			o := &outs[i]
			o.total, o.count = C.int64_t(hs.Total), C.int64_t(k)
			o.ids, o.rows, o.scores = nil, nil, nil
			if k > 0 {
				o.ids = (*C.int64_t)(C.malloc(C.size_t(8 * k)))
				o.rows = (*C.int64_t)(C.malloc(C.size_t(8 * k)))
				o.scores = (*C.double)(C.malloc(C.size_t(8 * k)))
				copy(unsafe.Slice((*int64)(unsafe.Pointer(o.ids)), k), hs.IDs)
				copy(unsafe.Slice((*int64)(unsafe.Pointer(o.rows)), k), hs.Rows)
				copy(unsafe.Slice((*float64)(unsafe.Pointer(o.scores)), k), hs.Scores)
			}
		}
		return nil
	})
}

// ccs_set_ood writes set h's per-input OOD test of points (m = n rows)
// in the caller's buffers of n: scores, p-values, flags and the points
// Benjamini–Hochberg flags with opts' fdr; marginal, when not NULL, the
// marginal p-values it ran on (the p-values themselves without δ).
//
//export ccs_set_ood
func ccs_set_ood(h C.uintptr_t, points *C.ccs_array, opts *C.char, scoresOut, pvalues *C.double, oodOut, flagged *C.uint8_t, marginal *C.double, n C.int64_t, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		p, err := goArray(points, "points")
		if err != nil {
			return err
		}
		var opt oodOptions
		if err := options(opts, &opt); err != nil {
			return err
		}
		var res oodResult
		if n > 0 {
			res = oodResult{Scores: unsafe.Slice((*float64)(unsafe.Pointer(scoresOut)), int(n)),
				PValues: unsafe.Slice((*float64)(unsafe.Pointer(pvalues)), int(n)),
				OOD:     unsafe.Slice((*bool)(unsafe.Pointer(oodOut)), int(n)),
				Flagged: unsafe.Slice((*bool)(unsafe.Pointer(flagged)), int(n))}
			if marginal != nil {
				res.Marginal = unsafe.Slice((*float64)(unsafe.Pointer(marginal)), int(n))
			}
		}
		return oodAnswer(context.Background(), o, p, opt, res)
	})
}

// ccs_set_ood_known writes the warning of the points that are rows of set
// h's reference pool or match the filter of its OOD calibration's inputs
// (oodKnown), "" where none: Set.ood warns it as ccs serve's /ood answers
// it.
//
//export ccs_set_ood_known
func ccs_set_ood_known(h C.uintptr_t, points *C.ccs_array, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		p, err := goArray(points, "points")
		if err != nil {
			return err
		}
		w, err := oodKnown(o, p)
		if err != nil {
			return err
		}
		cString(out, []byte(w))
		return nil
	})
}

// ccs_set_ood_tie writes what set h's per-input OOD test at opts' level
// (alpha_ood, delta, simultaneous) must say where its calibration scores
// tie where it flags (ood.Test.TieWarning: it flags far fewer
// in-distribution inputs than α_ood allows), "" otherwise: Set.ood warns
// it as ccs ood and ccs serve's /ood do.
//
//export ccs_set_ood_tie
func ccs_set_ood_tie(h C.uintptr_t, opts *C.char, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		var opt oodOptions
		if err := options(opts, &opt); err != nil {
			return err
		}
		cString(out, []byte(oodTie(o, opt)))
		return nil
	})
}

// setSummary is what ccs_set_summary writes: the few fields of a set the
// Python package reads on every call, without its parameters (the set
// file's JSON of a 256-dimensional single-norm is 1.5 MB: 88 ms to write
// on the first retrieve, for its threshold alone).
type setSummary struct {
	Dim        int              `json:"dim"`
	Kind       string           `json:"kind"`
	Calibrated bool             `json:"calibrated"`
	Alpha      *float64         `json:"alpha,omitempty"`
	Threshold  *jsonfloat.Float `json:"threshold,omitempty"`
	UnitNorm   bool             `json:"unit_norm"`
	Head       bool             `json:"head"` // scored through a projection head
	// Mode is the calibration's mode ("one-per-anchor", "pac", "class",
	// "pooled"), with PAC's δ; for a class-conditional set, Classes is how
	// many classes it has and Lowest and Highest the range of their
	// thresholds, which decide (Threshold, over all classes, does not).
	Mode    string           `json:"mode,omitempty"`
	Delta   float64          `json:"delta,omitempty"`
	Classes int              `json:"classes,omitempty"`
	Lowest  *jsonfloat.Float `json:"lowest,omitempty"`
	Highest *jsonfloat.Float `json:"highest,omitempty"`
}

// ccs_set_summary writes set h's setSummary as JSON.
//
//export ccs_set_summary
func ccs_set_summary(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		s := o.s
		sum := setSummary{Dim: s.Geometry.Dim(), Kind: s.Geometry.Kind().String(), Calibrated: s.Calibrated(), UnitNorm: s.Calibration.UnitNorm,
			Head: geometry.Describe(s.Geometry).Head()}
		if sum.Calibrated {
			a, q := s.Alpha, jsonfloat.Float(s.Threshold)
			sum.Alpha, sum.Threshold = &a, &q
			sum.Mode, sum.Delta, sum.Classes = s.Calibration.Mode.String(), s.Calibration.Delta, len(s.Classes)
			for _, c := range s.Classes {
				t := jsonfloat.Float(c.Threshold)
				if sum.Lowest == nil || t < *sum.Lowest {
					sum.Lowest = &t
				}
				if sum.Highest == nil || t > *sum.Highest {
					sum.Highest = &t
				}
			}
		}
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		cString(out, b)
		return nil
	})
}

//export ccs_set_warnings
func ccs_set_warnings(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return setWarnings(h, out, errOut, (*conformal.Set).Warnings)
}

// ccs_set_calibrate_warnings writes the set's warnings where it is made
// (conformal.Set.CalibrateWarnings: a class-conditional set's trim over
// all classes besides its Warnings), as ccs.calibrate issues them.
//
//export ccs_set_calibrate_warnings
func ccs_set_calibrate_warnings(h C.uintptr_t, out **C.char, errOut **C.char) C.int {
	return setWarnings(h, out, errOut, (*conformal.Set).CalibrateWarnings)
}

// setWarnings writes the warnings of set h that warnings gives as a JSON
// list (never null) to out.
func setWarnings(h C.uintptr_t, out **C.char, errOut **C.char, warnings func(*conformal.Set) []string) C.int {
	return onHandle(h, errOut, func(o *setObj) error {
		w := warnings(o.s)
		if w == nil {
			w = []string{}
		}
		return jsonOut(out, w)
	})
}

// manifestNames are the names of b's labels (read from path) that m, the
// manifest beside it, lists: its anchors' string labels, or the labels its
// positives share with their anchors (several labels a row).
func manifestNames(m *bundle.Manifest, path string, b *bundle.Bundle) []string {
	if names := m.LabelNamesOf(path, b); names != nil {
		return names
	}
	return m.LabelSetNamesOf(path, b)
}
