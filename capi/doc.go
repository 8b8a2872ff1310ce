// Capi is ccs's C ABI: the library the Python package (python/ccs) loads
// with ctypes, built as a shared object,
//
//	go build -buildmode=c-shared -o libccs.so ./capi
//
// (scripts/python-wheel builds it into the wheel). Its functions, named
// ccs_*, are the command line's operations on NumPy-style arrays: bundles
// (ccs_bundle_new, _load, _save, _make), simulation, fitting, comparing
// OOD detection and evaluation as jobs the caller polls (ccs_fit_start,
// ccs_compare_start, ccs_ood_detect_start, ccs_set_evaluate_start,
// ccs_job_wait, _progress,
// _cancel, _result, _document, _warnings, _cells, _check),
// calibration, sets (ccs_set_load, _parse, _save, _evaluate, _contains, _scores,
// _retrieve, _ood), collections (ccs_collection_new, _load, _save, _size,
// _keys), a comparison's text (ccs_document_text), the report
// (ccs_report) and a server, a job too (ccs_serve_start,
// ccs_server_reload); ccs_threads sets how many threads the engine uses.
//
// The rules of the ABI (export.go): objects are runtime/cgo handles, never
// 0, released by ccs_close; arrays are lent as a ccs_array (pointer,
// NumPy's dtype string, shape, order, size) for one call, converted as
// the .npz reader converts a file's and never kept; results of a known
// size are written into the caller's buffers, strings and retrieval hits
// are malloc'd and freed by the caller with ccs_free; every call that can
// fail returns a status and a message; no Go pointer reaches the caller,
// and no Go thread calls into it. ccs_abi_version says which version of
// these rules a library follows; the Python package refuses any other.
// docs/python.md has the design and the measurements.
package main
