"""The ccs library (libccs.so, built from the Go package capi) through ctypes.

Everything here is private: the public API is in ccs/__init__.py. The ABI
is described in docs/python.md and in capi/export.go; ABI_VERSION must equal
the library's ccs_abi_version(), checked when the library is loaded.
"""

import ctypes
import errno
import json
import math
import os
import re
import threading
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_int64, c_uint8, c_void_p

import numpy as np

ABI_VERSION = 16

c_handle = ctypes.c_size_t  # uintptr_t


class Array(ctypes.Structure):
    """ccs_array: an array lent to the library for one call."""

    _fields_ = [
        ("name", c_char_p),
        ("data", c_void_p),
        ("dtype", c_char_p),
        ("shape", POINTER(c_int64)),
        ("ndim", c_int64),
        ("fortran", c_int64),
        ("nbytes", c_int64),
    ]


class Hits(ctypes.Structure):
    """ccs_hits: a retrieval's answer, its arrays allocated by the library."""

    _fields_ = [
        ("total", c_int64),
        ("count", c_int64),
        ("ids", POINTER(c_int64)),
        ("rows", POINTER(c_int64)),
        ("scores", POINTER(c_double)),
    ]


_A = POINTER(Array)
_S = POINTER(c_void_p)  # a C string the library allocates (freed with ccs_free)
_H = POINTER(c_handle)

# name: (argument types without the trailing error pointer)
_SIGNATURES = {
    "ccs_version": [_S],
    "ccs_close": [c_handle],
    "ccs_bundle_new": [_A, c_int64, _H],
    "ccs_bundle_load": [c_char_p, c_int, _H],
    "ccs_bundle_save": [c_handle, c_char_p],
    "ccs_bundle_info": [c_handle, _S],
    "ccs_bundle_array": [c_handle, c_char_p, c_void_p, c_int64],
    "ccs_bundle_make": [_A, c_int64, c_char_p, _H, c_int64, _S],
    "ccs_simulate": [c_char_p, _H, c_int64, _S],
    "ccs_fit_start": [c_handle, c_handle, c_char_p, _H],
    "ccs_job_wait": [c_handle, c_int64, POINTER(c_int)],
    "ccs_job_progress": [c_handle, _S],
    "ccs_job_cancel": [c_handle],
    "ccs_job_result": [c_handle, _H, _S],
    "ccs_compare_start": [c_handle, c_handle, c_handle, c_handle, c_handle, c_handle, c_char_p, _H],
    "ccs_job_document": [c_handle, _S, _S],
    "ccs_job_cells": [c_handle, _S],
    "ccs_job_check": [c_handle],
    "ccs_serve_start": [c_char_p, _H, _S],
    "ccs_server_reload": [c_handle],
    "ccs_report": [c_char_p, c_char_p, c_char_p],
    "ccs_plot": [c_char_p, c_char_p, _S],
    "ccs_document_table": [c_char_p, c_char_p, _S],
    "ccs_document_text": [c_char_p, _S],
    "ccs_threads": [c_int64, POINTER(c_int64)],
    "ccs_calibrate": [c_handle, c_handle, c_handle, c_char_p, _A, _A, _H],
    "ccs_set_load": [c_char_p, _H],
    "ccs_set_parse": [c_char_p, _H],
    "ccs_dup": [c_handle, _H],
    "ccs_bundle_dump": [c_handle, POINTER(c_void_p), POINTER(c_int64), _S],
    "ccs_bundle_undump": [c_char_p, c_int64, c_char_p, _H],
    "ccs_collection_ids": [c_handle, c_void_p, c_int64],
    "ccs_set_save": [c_handle, c_char_p],
    "ccs_set_json": [c_handle, _S],
    "ccs_set_summary": [c_handle, _S],
    "ccs_set_warnings": [c_handle, _S],
    "ccs_set_calibrate_warnings": [c_handle, _S],
    "ccs_set_evaluate": [c_handle, c_handle, c_char_p, _S],
    "ccs_set_coverage_check": [c_handle, c_handle, c_char_p, _S, c_handle],
    "ccs_set_trials": [c_handle, _A, c_int64, c_char_p, _S],
    "ccs_set_contains": [c_handle, _A, _A, c_int, c_int64, POINTER(c_uint8), c_int64],
    "ccs_set_label_named": [c_handle, c_char_p, POINTER(c_int64)],
    "ccs_set_scores": [c_handle, _A, _A, POINTER(c_double), c_int64],
    "ccs_collection_new": [_A, _A, _H],
    "ccs_collection_load": [c_char_p, _H],
    "ccs_collection_size": [c_handle, POINTER(c_int64), POINTER(c_int64)],
    "ccs_collection_save": [c_handle, c_char_p],
    "ccs_collection_keys": [c_handle, _S],
    "ccs_collection_transform": [c_handle, c_handle, c_int64],
    "ccs_collection_prepare": [c_handle, POINTER(c_int64)],
    "ccs_set_ood_known": [c_handle, _A, _S],
    "ccs_set_ood_tie": [c_handle, c_char_p, _S],
    "ccs_collection_rows": [c_handle, c_void_p, c_int64],
    "ccs_set_retrieve": [c_handle, c_handle, _A, _A, _A, c_int64, POINTER(Hits)],
    "ccs_set_retrieve_many": [c_handle, c_handle, _A, c_int64, POINTER(Hits), c_int64, c_handle],
    "ccs_cancel_new": [_H],
    "ccs_cancel": [c_handle],
    "ccs_set_collection_warnings": [c_handle, c_handle, _A, _S],
    "ccs_set_for_class": [c_handle, c_int64, POINTER(c_handle)],
    "ccs_ood_detect_start": [c_handle, c_handle, POINTER(c_handle), c_int64, c_handle, c_handle, c_char_p, POINTER(c_handle)],
    "ccs_job_warnings": [c_handle, _S],
    "ccs_set_evaluate_start": [c_handle, c_handle, c_char_p, POINTER(c_handle)],
    "ccs_set_ood": [c_handle, _A, c_char_p, POINTER(c_double), POINTER(c_double), POINTER(c_uint8), POINTER(c_uint8), POINTER(c_double), c_int64],
}

# Status codes (capi/handles.go).
STATUS_CANCELLED = 5
STATUS_NOT_FOUND = 3
_EXCEPTIONS = {1: ValueError, 2: OSError, 3: FileNotFoundError, 4: ValueError, 5: KeyboardInterrupt, 6: RuntimeError,
               7: TypeError}


def default_path():
    """The library this package loads: $CCS_LIBRARY, or libccs.so beside this file."""
    return os.environ.get("CCS_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "libccs.so")


def load(path=None, abi=ABI_VERSION):
    """Loads the library at path and checks that it speaks ABI version abi."""
    path = path or default_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"ccs: cannot load the library {path}: {e} (build the wheel with ./scripts/python-wheel and install it, "
            "or point CCS_LIBRARY at a libccs.so built with go build -buildmode=c-shared ./capi)"
        ) from e
    try:
        version = lib.ccs_abi_version
    except AttributeError:
        raise ImportError(f"ccs: {path} is not the ccs library: it has no ccs_abi_version") from None
    version.restype, version.argtypes = c_int, []
    got = version()
    if got != abi:
        raise ImportError(
            f"ccs: the library {path} speaks ABI version {got}, this ccs package version {abi}: "
            "install the library and the package from one wheel (./scripts/python-wheel)"
        )
    lib.ccs_free.restype, lib.ccs_free.argtypes = None, [c_void_p]
    for name, args in _SIGNATURES.items():
        f = getattr(lib, name)
        f.restype = c_int
        f.argtypes = args + [_S]
    lib.path = path
    return lib


lib = load()


def take_string(p):
    """The C string p (a c_void_p the library allocated), freed."""
    if not p.value:
        return ""
    try:
        return ctypes.string_at(p.value).decode("utf-8")
    finally:
        lib.ccs_free(p)


def call_interruptible(fn, *args):
    """call(fn, *args, token) on a thread of its own, a cancel token its
    last argument before the error's: Ctrl-C (KeyboardInterrupt) in the
    waiting thread cancels the call, which stops within a block of its
    work and raises KeyboardInterrupt."""
    token = c_handle()
    call(lib.ccs_cancel_new, byref(token))
    done = {}
    # The call's end, as an Event: Thread.is_alive() is False after a
    # join() that a KeyboardInterrupt interrupted (CPython 3.11), though
    # the thread runs on.
    finished = threading.Event()

    def work():
        try:
            call(fn, *args, token)
        except BaseException as e:  # re-raised in the caller's thread
            done["error"] = e
        finally:
            finished.set()

    t = threading.Thread(target=work, name="ccs call", daemon=True)
    try:
        t.start()
        while not finished.wait(0.1):
            pass
    except BaseException:
        # Ctrl-C (or anything) while the call runs, from start() on:
        # cancel it, and wait for it to stop — whatever else arrives
        # meanwhile (a second Ctrl-C, a signal handler's SystemExit), the
        # call is not left running with its token closed and its results
        # freed under it.
        started = t.ident is not None  # start() itself may have been interrupted
        cancelled = False
        while not cancelled:
            try:
                lib.ccs_cancel(token, None)
                cancelled = True
            except BaseException:
                cancelled = finished.is_set() or not started
        while started and not finished.is_set():
            try:
                finished.wait()
            except BaseException:
                pass
        close(token.value)
        raise
    close(token.value)
    if "error" in done:
        raise done["error"]


def call(fn, *args):
    """Calls the library's function fn; a failure raises its exception."""
    err = c_void_p()
    status = fn(*args, byref(err))
    if status != 0:
        msg = take_string(err) or f"ccs: error {status}"
        if status == STATUS_NOT_FOUND:  # its errno and filename, as Python's own carry them
            m = _MISSING.search(msg)
            raise _FileNotFound(errno.ENOENT, msg, m.group(1) if m else None)
        raise _EXCEPTIONS.get(status, RuntimeError)(msg)


class _FileNotFound(FileNotFoundError):
    """A missing file, as the library says it (the message naming the file
    and what was reading it), with errno and filename set."""

    def __str__(self):
        return self.strerror

    def __reduce__(self):  # pickled by its maker: the class is named as the builtin, which pickle would take
        return (_file_not_found, (self.errno, self.strerror, self.filename))


def _file_not_found(errno_, strerror, filename):
    """A _FileNotFound, as pickled."""
    return _FileNotFound(errno_, strerror, filename)


# Shown in a traceback as Python's own is ("FileNotFoundError: …").
_FileNotFound.__module__, _FileNotFound.__name__, _FileNotFound.__qualname__ = "builtins", "FileNotFoundError", "FileNotFoundError"


# The file a missing file's message names: Go's os.PathError, "open PATH: no
# such file or directory" (stat, lstat too).
_MISSING = re.compile(r"(?:open|stat|lstat) (.+?): no such file or directory")


def call_string(fn, *args):
    """Calls fn, whose last result is a C string, and returns it."""
    out = c_void_p()
    try:
        call(fn, *args, byref(out))
    except BaseException:
        take_string(out)
        raise
    return take_string(out)


def _special(s):
    # How ccs's JSON writes numbers that are not finite (jsonfloat).
    return {"+Inf": float("inf"), "-Inf": float("-inf")}.get(s, s)


def floats(v):
    """Decoded JSON v with ccs's "+Inf" and "-Inf" strings as floats."""
    if isinstance(v, dict):
        return {k: floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [floats(x) for x in v]
    if isinstance(v, str):
        return _special(v)
    return v


def loads(s):
    """ccs's JSON, with "+Inf" and "-Inf" as floats (null stays None)."""
    return floats(json.loads(s))


def options(**kw):
    """The keywords given (not None), as the JSON object the library reads:
    NumPy scalars and arrays as Python numbers and lists (k=counts.min()
    is an np.int64), a NaN or infinite number refused by its keyword."""
    return json.dumps({k: _plain(k, v) for k, v in kw.items() if v is not None}, allow_nan=False).encode()


def _plain(name, v):
    """A keyword's value as JSON takes it (see options): a half- or
    single-precision NumPy number as the shortest decimal that is it
    (np.float32(0.1) is 0.1, as asked, not 0.10000000149011612); a masked
    value refused."""
    masked(v, name)
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, (np.float16, np.float32)) and np.isfinite(v):
        v = float(str(v))
    if isinstance(v, np.ndarray):
        v = v.tolist()
    elif isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"{name}={v}: want a finite number")
    if isinstance(v, (list, tuple)):
        return [_plain(name, x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(name, x) for k, x in v.items()}
    return v


def host(x):
    """x as np.asarray can take it: a PyTorch tensor on any device (with a
    gradient or not; bfloat16 widened to float32, which NumPy lacks) is
    detached and copied to the CPU, a CuPy array copied to the host; the
    rest goes as it is."""
    t = type(x)
    tensor = t.__module__.startswith("torch") or (not isinstance(x, np.ndarray) and all(
        callable(getattr(x, m, None)) for m in ("detach", "cpu", "numpy")))  # a tensor-like wrapper
    if tensor and hasattr(x, "detach"):
        x = x.detach()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":
            x = x.float()
        return x.cpu().numpy()
    if t.__module__.startswith("cupy") and hasattr(x, "get"):
        return x.get()
    return x


class Lent:
    """Arrays lent to the library for one call: their descriptors, and the
    NumPy arrays they point into (kept alive until the call returns)."""

    def __init__(self):
        self.keep = []

    def array(self, x, name=None, dtype=None):
        """A ccs_array for x (anything np.asarray takes), or None for None."""
        if x is None:
            return None
        if isinstance(x, (str, bytes, os.PathLike)):
            path = os.fsdecode(x)
            load = "np.load; a .safetensors file's embeddings, bfloat16 too: ccs.Collection.load(\"FILE:TENSOR\").rows"
            files = "; the command line reads files"
            if os.path.splitext(path)[1].lower() in (".pt", ".pth", ".bin", ".ckpt"):  # torch.save's pickle, which np.load cannot read
                load, files = "torch.load in your own code, trusting the file, then pass the tensor", ""
            elif os.path.splitext(path)[1].lower() in (".csv", ".tsv", ".txt"):
                if name in ("embeddings", "queries", "views", "anchors", "logits", "activations"):
                    load = ("pandas' read_csv(path)[columns].to_numpy(), the embedding's columns alone: an index, id or "
                            "label column is no coordinate; the command line reads the table itself, ccs bundle -embeddings FILE.csv")
                    files = ""
                else:  # ids or labels, one a line
                    load = "np.loadtxt(path, dtype=str, delimiter=\"\\t\") for ids or labels one a line, or pandas' read_csv(path)[column]"
            raise ValueError(f"{name or 'array'}: {path!r} is a path, not an array: load the file first ({load}){files}")
        a = asarray(x, name, dtype)
        if a.dtype == object and not isinstance(x, np.ndarray):
            t = type(x)
            raise TypeError(f"{name or 'array'}: a {t.__module__}.{t.__qualname__} that NumPy reads as an array of "
                            f"Python objects: give a NumPy array, a PyTorch tensor, or anything np.asarray turns into numbers")
        if not (a.flags.c_contiguous or a.flags.f_contiguous):
            a = np.ascontiguousarray(a)
        if not a.flags.aligned:
            a = a.copy()
        shape = (c_int64 * max(a.ndim, 1))(*a.shape)
        desc = Array(
            name.encode() if name else None,
            a.ctypes.data if a.nbytes else None,
            a.dtype.str.encode(),
            shape,
            a.ndim,
            1 if (a.flags.f_contiguous and not a.flags.c_contiguous) else 0,
            a.nbytes,
        )
        self.keep.append((a, shape))
        return desc

    def ref(self, x, name=None):
        """A pointer to the ccs_array of x, or NULL for None."""
        d = self.array(x, name)
        if d is None:
            return None
        self.keep.append(d)
        return byref(d)

    def arrays(self, named):
        """A C array of ccs_arrays for the named arrays given (not None)."""
        descs = [self.array(x, name) for name, x in named.items() if x is not None]
        arr = (Array * max(len(descs), 1))(*descs)
        self.keep.append(arr)
        return arr, len(descs)


def _ragged(x, name, e):
    """The error for x that np.asarray refused (e): for a list of rows of
    unequal lengths, which row differs from the first; else e."""
    if isinstance(x, (list, tuple)) and "inhomogeneous" in str(e):
        lens = [len(r) if hasattr(r, "__len__") else None for r in x]
        bad = next((i for i, n in enumerate(lens) if n != lens[0]), None)
        if bad is not None:
            def values(n):
                return "a number" if n is None else f"{n} values"
            return ValueError(f"{name or 'array'}: rows of unequal lengths: row 0 has {values(lens[0])}, row {bad} "
                              f"has {values(lens[bad])}: a list of rows must be rectangular (np.stack(rows) says so too)")
    return e


def masked(x, name):
    """Refuses a masked array (or masked NumPy value) with masked entries:
    np.asarray drops the mask, and the values under it would be read."""
    if isinstance(x, np.ma.MaskedArray) and np.ma.getmaskarray(x).any():
        if x.ndim == 0:
            raise ValueError(f"{name or 'value'}: a masked value: give the number itself")
        raise ValueError(f"{name or 'array'}: a masked array with {int(np.ma.getmaskarray(x).sum())} masked entries: ccs reads "
                         "every value, the masked ones too; drop the rows that hold them, and the same rows of the arrays "
                         "beside it (keep = ~np.ma.getmaskarray(x).reshape(len(x), -1).any(axis=1); x[keep].data, labels[keep]), "
                         "or fill them (x.filled(v)) if that is what you mean")


def asarray(x, name, dtype=None):
    """np.asarray of x on the host (host), a list of rows of unequal
    lengths refused naming the row (name: the argument), and a masked array
    with masked entries refused: np.asarray drops the mask, and the values
    under it would be read as numbers (a fill of -999 as a coordinate)."""
    masked(x, name)
    try:
        return np.asarray(host(x), dtype=dtype)
    except ValueError as e:
        raise _ragged(x, name, e) from None


# _ARRAY_FILES are the extensions of files that hold arrays (NumPy's,
# PyTorch's, tables): a string ending so, given as points, is a path.
_ARRAY_FILES = (".npy", ".npz", ".pt", ".pth", ".bin", ".ckpt", ".csv", ".tsv", ".txt", ".safetensors", ".parquet", ".arrow")


def points(x, name):
    """asarray of an anchor or points, integers widened to float64 as
    ccs serve reads JSON's numbers: [0, 1, 2] is a point as [0., 1., 2.]
    is. An id (a string, or strings) is told to be looked up first;
    anything else is left to the library's checks. A path (an existing
    file, or a file name of an array's kind) is told to be loaded."""
    if x is None:
        raise TypeError(f"{name}: None: want an embedding (numbers), or points (rows of numbers)")
    if isinstance(x, os.PathLike) or isinstance(x, (str, bytes)) and (
            os.path.exists(x) or os.path.splitext(os.fsdecode(x))[1].lower() in _ARRAY_FILES):
        Lent().array(x, name)  # raises: a path, not an array
    a = asarray(x, name)
    if a.dtype.kind in "US" or a.dtype.kind == "O" and a.size and isinstance(a.flat[0], (str, bytes)):
        first = a.flat[0] if a.size else ""
        raise TypeError(f"{name}: {'the string' if a.ndim == 0 else 'strings, the first'} {str(first)!r:.60}: "
                        "want an embedding (numbers), not an id: look the id up among your embeddings' ids "
                        "(x[list(ids).index(id)]) and pass its row")
    if a.dtype.kind in "iu":
        a = a.astype(np.float64)
    return a


def rows_of(x):
    """The number of rows (points) of an array of points: the product of all
    axes but the last; 1 for a single point (d,); 0 for a scalar."""
    shape = np.shape(host(x))
    if len(shape) == 0:
        return 0
    n = 1
    for s in shape[:-1]:
        n *= s
    return n


_close_lock = threading.Lock()


def close(h):
    """Releases handle h."""
    call(lib.ccs_close, h)
