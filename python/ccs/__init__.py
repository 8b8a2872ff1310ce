"""ccs: contrastive conformal sets, from Python.

Sets in an embedding space, around an anchor's embedding, that contain the
embeddings of its positives with probability at least 1 - alpha (a
distribution-free split-conformal guarantee), while their learned shape
excludes negatives or has small volume. This package is a thin layer over
ccs's Go engine (the library libccs.so, loaded with ctypes): the same
numbers, and the same files, as the ccs command-line tool and service.

    import ccs
    splits = ccs.bundle(embeddings, labels, k=20, seed=0)       # ccs bundle
    fitted = ccs.fit("genball", splits["fit"], splits["val"], objective="neg,vol")
    s = ccs.calibrate(fitted, splits["cal"], alpha=0.05)        # ccs calibrate
    s.evaluate(splits["test"])                                  # ccs evaluate -json
    s.contains(anchor, points)                                  # np.ndarray of bool
    s.save("set.json")                                          # what ccs serve reads

Arrays: NumPy arrays of float16, float32 or float64, in C or Fortran order,
or anything np.asarray takes (lists), and PyTorch tensors on any device
(taken as tensor.detach().cpu().numpy()). Embeddings are held as float32, as the
command line holds them. Bad input raises ValueError with the command line's
message; a missing file FileNotFoundError. docs/python.md has the whole API.
"""

import copy
import ctypes
import inspect
import io
import json
import operator
import os
import reprlib
import shutil
import ssl
import sys
import tempfile
import warnings
from ctypes import byref, c_double, c_int, c_int64, c_uint8, c_void_p, POINTER

import numpy as np

from . import _lib
from ._lib import Lent, c_handle, call, call_string, lib, loads, options

__version__ = "0.1.0"

__all__ = [
    "Bundle",
    "CCSWarning",
    "Client",
    "Collection",
    "Comparison",
    "OODDetection",
    "Server",
    "ServiceError",
    "Set",
    "UnknownName",
    "bundle",
    "calibrate",
    "compare",
    "fit",
    "ood_detection",
    "plot",
    "report",
    "serve",
    "simulate",
    "threads",
    "version",
]


class CCSWarning(UserWarning):
    """What the command line prints as a warning: a set whose threshold is
    +Inf, a pooled (approximate) calibration, a bundle's draws that repeat."""


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


#: The command line's flags whose keywords are named otherwise.
_FLAG_KEYWORDS = {"db": "collection", "data": "the bundles, the first argument", "lambda": "lambda_",
                  "seed": "seeds", "weight-decay": "weight_decay"}


#: The command line's flags that are no keyword in Python, and what does
#: their work here: for compare, and for the other functions.
_FLAG_ELSEWHERE = {
    "plots": ("ccs.plot(comparison, DIR) draws the figures as PNG and SVG files, as -plots does "
              "(ccs.report(comparison, PATH) a page with them)",
              "-plots is ccs compare's: ccs.plot(comparison, DIR) draws a comparison's figures"),
    "quiet": ("progress=None, the default, is quiet (-quiet's work); warnings are CCSWarnings, "
              "which warnings.simplefilter(\"ignore\", ccs.CCSWarning) silences",) * 2,
    "json": ("the result is the document (Comparison.document, .records(), .save(PATH))",
             "the result is already the command's -json document's fields, as a dict"),
}


# _THREAD_KEYWORDS are what other libraries take for their threads
# (scikit-learn's n_jobs, …), which ccs.threads sets for every call.
_THREAD_KEYWORDS = {"threads", "n_jobs", "n_threads", "num_threads", "nthreads", "jobs", "workers", "num_workers", "cores"}


def _unknown_keywords(what, flags, fn):
    """Refuses keywords fn does not take, naming the one meant: the
    keyword of a command line flag named otherwise (db= is collection=),
    or the nearest of fn's keywords."""
    import difflib
    names = [k for k, p in inspect.signature(fn).parameters.items()
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and k != "self" and k != "cls"]
    k = next(iter(flags))
    if k.lower() in _THREAD_KEYWORDS and k not in names:
        raise TypeError(f"{what}: unexpected keyword {k}=: the engine's threads are set once for every call, "
                        f"with ccs.threads(n) (by default every CPU this process may use)")
    if k in _FLAG_ELSEWHERE and k not in names:
        raise TypeError(f"{what}: unexpected keyword {k}=: {_FLAG_ELSEWHERE[k][what != 'compare']}")
    meant = _FLAG_KEYWORDS.get(k.replace("_", "-"))
    if meant not in names and (meant is None or " " not in meant or "data" not in names and "bundles" not in names):
        # 0.5, not difflib's 0.6: alpah= is alpha_ood='s (0.57)
        meant = next(iter(difflib.get_close_matches(k, names, n=1, cutoff=0.5)), None)
    hint = f": did you mean {meant}=?" if meant and " " not in meant else f" ({meant})" if meant else ""
    raise TypeError(f"{what}: unexpected keyword {k}={hint}")


def _keywords(fn):
    """fn, refusing a keyword it does not take as compare does (naming
    the keyword meant) rather than with Python's bare TypeError."""
    import functools
    params = inspect.signature(fn).parameters
    names = {k for k, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    what = fn.__qualname__.removesuffix(".__init__")

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        for k in kwargs:
            if k not in names:
                _unknown_keywords(what, {k: kwargs[k]}, fn)
        return fn(*args, **kwargs)
    return checked


def _caller_level():
    """The stacklevel of warnings.warn, called from _warn, that names the
    first frame outside this package: the user's line, however deep the
    package's own calls go (ccs.bundle warns from a helper of a helper)."""
    level, f = 2, sys._getframe(2)  # 1: _warn; 2: its caller
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PACKAGE_DIR:
        level, f = level + 1, f.f_back
    return level


def _warn(messages):
    level = _caller_level()
    for m in messages:
        warnings.warn(m, CCSWarning, stacklevel=level)


def _path(p):
    return os.fsencode(os.fspath(p))


class _Handle:
    """An object of the library, named by a handle; close() releases it
    (it is released when garbage collected too). Usable as a context
    manager."""

    _h = 0
    _info = None
    _what = "object"
    _copied = False  # copy.copy and copy.deepcopy give a handle of its own (bundles, sets, collections)

    @classmethod
    def _wrap(cls, h):
        """The object of handle h (which it then owns)."""
        o = cls.__new__(cls)
        o._h = h
        return o

    def _handle(self):
        h = self._h
        if not h:
            raise ValueError(f"ccs: this {self._what} is closed")
        return h

    def close(self):
        """Releases the library's object. Using it afterwards raises ValueError."""
        with _lib._close_lock:
            h, self._h = self._h, 0
        if h:
            _lib.close(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __copy__(self):
        """A copy: a handle of its own to the same object (which is not
        changed once made), so that closing either leaves the other usable."""
        if not self._copied:
            raise TypeError(f"cannot copy a ccs.{type(self).__name__}")
        h = c_handle()
        call(lib.ccs_dup, self._handle(), byref(h))
        o = type(self).__new__(type(self))
        o.__dict__.update(self.__dict__)
        o._h = h.value
        return o

    def __deepcopy__(self, memo):
        o = self.__copy__()
        for k, v in self.__dict__.items():  # a fit's training and the caches: the copy's own
            if k != "_h":
                setattr(o, k, copy.deepcopy(v, memo))
        return o

    def __reduce__(self):
        raise TypeError(f"cannot pickle a ccs.{type(self).__name__}")


class Bundle(_Handle):
    """An embedding bundle: n anchors (n, d), each with k positives and kneg
    negatives, optional labels; what a .npz bundle file holds.

    Bundle(anchors, positives=None, negatives=None, *, positive_index=None,
    positive_pool=None, negative_index=None, negative_pool=None, labels=None,
    logits=None, activations=None, index=None, blocks=None) builds one from arrays with the
    names and shapes of the file format (README "Data: embedding bundles"),
    checked as a file's are: positives (n, k, d) or positive_index (n, k) into
    positive_pool (or the anchors); negatives (n, kn, d) or negative_index
    (n, kn) into negative_pool (or the anchors). The arrays are copied.
    Anchors with neither positives nor negatives (labels, logits and
    activations allowed) make a features bundle (k = 0), as ccs.bundle's
    OOD splits are: what ccs ood -train/-id/-ood and calibrate's ood_cal
    read, refused by name where positives are needed.
    """

    _what = "bundle"
    _copied = True
    #: The string labels' values, when the bundle was made by ccs.bundle from
    #: string labels, or loaded from ccs bundle's directory of such bundles
    #: (label i is label_names[i]); None otherwise.
    label_names = None
    #: The split's name ("fit", "cal", "ood", …) for a bundle ccs.bundle
    #: made, or loaded from a file its manifest.json names; None otherwise.
    split = None
    #: The label whose rows alone the bundle holds, its anchors carrying no
    #: labels (ccs.bundle's one_label, by its name; or loaded from a file
    #: of such a directory, its manifest.json's); None otherwise. Calibrate
    #: it over every anchor (calibration="one"): that threshold is the
    #: label's; calibration="class" and label= are refused, as ccs calibrate
    #: refuses them on the files.
    one_label = None

    def __init__(self, anchors, positives=None, negatives=None, *, positive_index=None, positive_pool=None,
                 negative_index=None, negative_pool=None, labels=None, logits=None, activations=None, index=None,
                 blocks=None):
        if getattr(labels, "ndim", None) == 2 and labels.shape[1] == 1:
            labels = labels[:, 0]  # a column of labels, (n, 1), as ccs.bundle takes it
        if labels is not None and not hasattr(labels, "detach"):
            kind = np.asarray(labels).dtype
            if kind.kind in "USO" and (kind.kind != "O" or any(isinstance(v, (str, bytes)) for v in np.asarray(labels).ravel()[:1])):
                # A donor's cells with their type names, bundled by hand: the
                # numbers decide which class threshold judges an anchor.
                raise ValueError(
                    f"labels: string labels (dtype {kind.str}): ccs.Bundle takes integer labels; number the names as "
                    "the set you evaluate numbers its classes, "
                    'labels = np.array([{c["name"]: c["label"] for c in s.info["classes"]}[t] for t in names]), '
                    "or make the bundles with ccs.bundle(X, names), which numbers them and keeps their names")
        lent = Lent()
        arr, n = lent.arrays({
            "anchors": anchors, "positives": positives, "negatives": negatives,
            "positive_index": positive_index, "positive_pool": positive_pool,
            "negative_index": negative_index, "negative_pool": negative_pool,
            "labels": labels, "logits": logits, "activations": activations, "index": index,
            "blocks": blocks,
        })
        h = c_handle()
        call(lib.ccs_bundle_new, arr, n, byref(h))
        self._h = h.value

    @classmethod
    def load(cls, path, *, features=False):
        """Reads a bundle file (.npz) as the command line does. With
        features=True a file of anchors alone (embeddings, as ccs ood and
        calibrate -ood-cal read them) is accepted too. A file of ccs
        bundle's directory with string labels gets their label_names from the
        manifest.json beside it, as the commands name the classes."""
        h = c_handle()
        call(lib.ccs_bundle_load, _path(path), 1 if features else 0, byref(h))
        b = cls._wrap(h.value)
        names = b.info.get("label_names")
        if names:
            b.label_names = tuple(names)
        b.split = b.info.get("split")  # as the manifest.json beside the file names it
        b.one_label = b.info.get("one_label")
        _warn([f"{os.fsdecode(path)}: {w}" for w in b.info.get("warnings", [])])  # its arrays contradicting one another
        return b

    def save(self, path):
        """Writes the bundle as an .npz file (atomically), as ccs bundle and
        ccs simulate write theirs."""
        call(lib.ccs_bundle_save, self._handle(), _path(path))

    @property
    def info(self):
        """The bundle's sizes and arrays: n, k, d, kneg, arrays (name ->
        dtype and shape), converted (how arrays were converted on reading),
        path (the file it was read from, if any)."""
        if self._info is None:
            self._info = loads(call_string(lib.ccs_bundle_info, self._handle()))
        return self._info

    n = property(lambda self: self.info["n"], doc="Anchors.")
    k = property(lambda self: self.info["k"], doc="Positives per anchor.")
    d = property(lambda self: self.info["d"], doc="The embeddings' dimension.")
    kneg = property(lambda self: self.info["kneg"], doc="Negatives per anchor (0: none).")
    path = property(lambda self: self.info.get("path"), doc="The file the bundle was read from, or None.")
    converted = property(lambda self: list(self.info["converted"]),
                         doc='How arrays were converted on reading ("anchors: float64 → float32").')

    def __len__(self):
        return self.n

    def array(self, name):
        """A copy of the bundle's array name (float32 or int64), or None when
        the bundle has none."""
        a = self.info["arrays"].get(name)
        if a is None:
            return None
        out = np.empty(a["shape"], dtype=np.float32 if a["dtype"] == "float32" else np.int64)
        call(lib.ccs_bundle_array, self._handle(), name.encode(), out.ctypes.data_as(c_void_p), out.nbytes)
        return out

    def arrays(self):
        """Every array of the bundle, by name, as save() writes them."""
        return {name: self.array(name) for name in sorted(self.info["arrays"])}

    anchors = property(lambda self: self.array("anchors"), doc="(n, d) float32.")
    positives = property(lambda self: self.array("positives"), doc="(n, k, d) float32, or None (positive_index).")
    negatives = property(lambda self: self.array("negatives"), doc="(n, kn, d) float32, or None.")
    positive_index = property(lambda self: self.array("positive_index"), doc="(n, k) int64, or None.")
    positive_pool = property(lambda self: self.array("positive_pool"), doc="(m, d) float32, or None.")
    negative_index = property(lambda self: self.array("negative_index"), doc="(n, kn) int64, or None.")
    negative_pool = property(lambda self: self.array("negative_pool"), doc="(m, d) float32, or None.")
    labels = property(lambda self: self.array("labels"), doc="(n,) int64, or None.")
    index = property(lambda self: self.array("index"), doc="(n,) int64, or None: each anchor's source row.")
    blocks = property(lambda self: self.array("blocks"), doc="(n,) int64, or None: each anchor's block, where the rows were split by block (blocks= of ccs.bundle): coverage_check's resplits keep a block's anchors together.")
    logits = property(lambda self: self.array("logits"), doc="(n, C) float32, or None.")
    activations = property(lambda self: self.array("activations"), doc="(n, L) float32, or None.")

    def __reduce__(self):
        """A pickle holds the bundle's arrays (its .npz) and what it was
        told of them — label names, split, source file —, so that another
        process (multiprocessing's "spawn") gets the same bundle."""
        data, n = c_void_p(), c_int64()
        meta = c_void_p()
        call(lib.ccs_bundle_dump, self._handle(), byref(data), byref(n), byref(meta))
        try:
            npz = ctypes.string_at(data.value, n.value) if n.value else b""
        finally:
            lib.ccs_free(data)
        return (_unpickle_bundle, (npz, _lib.take_string(meta), self.label_names, self.split, self.one_label))

    def __repr__(self):
        if not self._h:
            return "<ccs.Bundle (closed)>"
        i = self.info
        return f"<ccs.Bundle n={i['n']} k={i['k']} kneg={i['kneg']} d={i['d']}>"


def _unpickle_bundle(npz, meta, label_names, split, one_label):
    """The bundle a pickle holds (Bundle.__reduce__)."""
    h = c_handle()
    call(lib.ccs_bundle_undump, npz, len(npz), meta.encode(), byref(h))
    b = Bundle._wrap(h.value)
    b.label_names, b.split, b.one_label = label_names, split, one_label
    return b


def _bundles(h, info):
    made = json.loads(info)  # no numbers to read: a class named "+Inf" stays a string
    _warn(made["warnings"] + made.get("notes", []))  # notes: what ccs bundle notes and the manifest does not keep
    out = {name: Bundle._wrap(h[i]) for i, name in enumerate(made["names"])}
    for name, b in out.items():
        b.split, b.one_label = name, made.get("one_label")
    names = made.get("label_names")
    if names is not None:
        for b in out.values():
            b.label_names = tuple(names)
    return out


def _class(c, what="ood_classes"):
    """A held-out class as ood_classes names it (and one_label, what):
    a string or an integer."""
    if isinstance(c, str):
        return str(c)
    if isinstance(c, (bool, np.bool_)):  # an int to operator.index, never a label meant
        raise ValueError(f"bundle: {what}: {c!r} is a bool, not a label: give the label's name, or its integer label (a column's number)")
    try:
        return operator.index(c)
    except TypeError:
        raise ValueError(f"bundle: {what}: {c!r} is neither an integer nor a string label") from None


def _missing(v):
    """Whether v is pandas' or Python's missing value: None, a float NaN,
    pd.NA or pd.NaT (by their type's name: pandas is not imported)."""
    return v is None or (isinstance(v, float) and v != v) or type(v).__name__ in ("NAType", "NaTType")


#: The strings that mark a missing label, as the engine's
#: bundle.MissingString takes them (exactly, or in any case; blanks
#: around them, or alone, ignored).
_MISSING_EXACT = ("", "None", "<NA>", "NA", "N/A")
_MISSING_ANY_CASE = ("nan", "unknown", "unassigned", "unannotated", "unlabeled", "unlabelled")


def _marks_missing(x):
    """Whether a label in a row's list marks a missing label: a negative
    integer (Hugging Face's -1), or a string the engine takes for one."""
    if isinstance(x, str):
        x = x.strip()  # "" or blanks alone: no label
        return x in _MISSING_EXACT or x.lower() in _MISSING_ANY_CASE
    return x < 0


def _multi_hot(rows, missing_labels="error"):
    """Several labels a row — a list, tuple, set or array of labels each
    (a lone string or integer is one label; None or NaN, none) — as the
    multi-hot (n, C) matrix of 0s and 1s the engine reads as label sets,
    the labels' columns in sorted order. Rows of one length C >= 2 holding
    0s and 1s alone (bool, or floats exactly 0 and 1, as a BCE target's)
    are a multi-hot matrix's rows (M.tolist(), list(M)), taken as that
    matrix, a row that is None, NaN or empty among them a row of no label;
    lists of one label each are those labels, one a row (classes). A label that marks a missing one (-1, "Unknown")
    is refused, or, by missing_labels, no label ("drop") or a label
    ("class"), as ccs bundle takes a list column's."""
    rows = list(rows)
    seq = (list, tuple, np.ndarray)
    full = [v for v in rows if isinstance(v, seq) and len(v) > 0]
    if full and all(isinstance(v, seq) or _missing(v) for v in rows):
        width = {len(v) for v in full}
        bit = (int, np.integer, bool, np.bool_, float, np.floating)
        if len(width) == 1 and (c := width.pop()) >= 2 and all(
                isinstance(x, bit) and x in (0, 1) for v in full for x in v):
            return np.array([[int(x) for x in v] if isinstance(v, seq) and len(v) > 0 else [0] * c for v in rows],
                            dtype=np.int64)
    sets, holed = [], []  # holed: the rows whose list holds a None or NaN
    for i, v in enumerate(rows):
        if _missing(v):
            v = ()
        elif isinstance(v, (str, int, np.integer)) and not isinstance(v, bool):
            v = (v,)
        elif not isinstance(v, (list, tuple, set, frozenset, np.ndarray)):
            raise ValueError(f"labels: [{i}] is {reprlib.repr(v)}: want a row's labels (a list of strings or integers)")
        v = [x.item() if isinstance(x, np.generic) else x for x in v]
        labels = [x for x in v if not _missing(x)]
        if len(labels) < len(v):
            holed.append(i)
        # 3.0 is the label 3, as the command reads a list's 3.0 (a float tensor's .tolist())
        labels = [int(x) if isinstance(x, float) and x.is_integer() else x for x in labels]
        for x in labels:
            if not isinstance(x, (str, int)) or isinstance(x, bool):
                raise ValueError(f"labels: [{i}] holds {reprlib.repr(x)}: want labels that are strings or integers")
        sets.append(labels)
    kinds = {type(x) for labels in sets for x in labels}
    if len(kinds) > 1:
        raise ValueError("labels: lists of labels mix strings and integers: give one kind")
    if holed and missing_labels == "class":  # a label of its own, as a Parquet list's null is named
        null = -1 if kinds == {int} else "null"
        for i in holed:
            sets[i].append(null)
    elif holed and missing_labels != "drop":
        raise ValueError(f"labels: {len(holed)} of {len(sets)} rows list None or NaN among their labels (the first: "
                         f"[{holed[0]}]), a missing label: missing_labels=\"drop\" leaves it out of the row's labels, "
                         f"\"class\" makes it a label of its own")
    if sets and all(len(set(labels)) == 1 for labels in sets):
        # One label a row, as lists: classes, as the labels themselves are
        # (strings keep their names; missing_labels applies as to them), not
        # label sets.
        return np.array([labels[0] for labels in sets], dtype=str if isinstance(sets[0][0], str) else np.int64)
    if missing_labels != "class":
        marked = {}
        for labels in sets:
            for x in set(labels):
                if _marks_missing(x):
                    marked[x] = marked.get(x, 0) + 1
        if marked and missing_labels == "drop":
            sets = [[x for x in labels if not _marks_missing(x)] for labels in sets]
        elif marked:
            counts = ", ".join(f"{x!r}: {c} rows" for x, c in sorted(marked.items(), key=str))
            raise ValueError(f"labels: several labels a row, and some rows list a value that marks a missing label "
                             f"({counts}): shared, it would make those rows one another's positives; "
                             f"missing_labels=\"drop\" takes it for no label, left out of the row's labels, "
                             f"\"class\" for a label like any other")
    names = sorted({x for labels in sets for x in labels})
    column = {x: j for j, x in enumerate(names)}
    m = np.zeros((len(sets), max(2, len(names))), dtype=np.int64)
    for i, labels in enumerate(sets):
        m[i, [column[x] for x in labels]] = 1
    m = m.view(_LabelMatrix)
    m.label_names = tuple(str(x) for x in names)  # column j is label j: the bundles' label_names
    if names and isinstance(names[0], int):
        m.ids = tuple(names)  # label numbers, which label_names may name (_named_ids)
    return m


def _named_ids(m, names):
    """Lists of integer labels (m, _multi_hot's matrix of them, its
    columns the ids in sorted order) named by label_names (names), as ccs
    bundle -label-names names a CSV column's integer lists: column j is
    id j, label names[j], a label no row lists kept, an id no name names
    refused with its row; a negative id — a missing label's mark that
    missing_labels="class" keeps — a label after the names, named by its
    decimal form. Returns the matrix (a plain array) and its labels'
    names (a list)."""
    ids, c = m.ids, len(names)
    over = [v for v in ids if v >= c]
    if over:
        row = int(np.argmax(m[:, ids.index(over[0])]))
        raise ValueError(f"bundle: label_names: {c} names label ids 0 to {c - 1}, and labels[{row}] lists label {over[0]}, "
                         f"which no name names: give one a label, in the ids' order")
    out_names, col = list(names), {}
    for v in ids:
        if v >= 0:
            col[v] = v
            continue
        name = str(v)
        while name in out_names:
            name = f"({name})"
        col[v] = len(out_names)
        out_names.append(name)
    out = np.zeros((m.shape[0], max(2, len(out_names))), dtype=np.int64)
    for j, v in enumerate(ids):
        out[:, col[v]] = m[:, j]
    return out, out_names


_NULL = "\x00null"  # bundle.NullMark: a pandas null among labels or group ids


class _LabelMatrix(np.ndarray):
    """A multi-hot matrix made from lists of labels, which knows the
    labels its columns stand for (label_names), for the bundles made of
    it, and for lists of integers the ids its columns are (ids)."""
    label_names = None
    ids = None


def _ids(x, name, missing_labels="error"):
    """Labels, group ids, ids or pairs as the engine takes them: an object
    array (a pandas column's values) of strings becomes a NumPy string
    array, its missing values (None, NaN, pd.NA) the engine's null mark
    for labels and group ids (_NULL: messages name it null, and
    missing_labels="class" a class "null", as ccs bundle names a Parquet
    column's nulls), "nan" for the rest (missing_labels= says what
    becomes of them); of
    integers, an int64 array; anything else in it is refused by name. The
    rest goes as it is, its dtype checked by the engine."""
    if x is None or isinstance(x, (str, bytes, os.PathLike)):  # a path: refused by name when lent
        return x
    if name == "labels" and isinstance(x, (list, tuple)) and any(
            isinstance(v, (list, tuple, set, frozenset, np.ndarray)) for v in x):
        return _multi_hot(x, missing_labels)  # lists of labels, of equal lengths or not
    what = "an object array"
    if isinstance(x, (list, tuple)) and any(isinstance(v, str) for v in x) and any(
            not isinstance(v, str) and not _missing(v) for v in x):
        # NumPy makes ["cat", "dog", 5] strings, "5" a class of its own:
        # judged as the object array it is, the int is refused by name.
        what, x = "a list", np.array(x, dtype=object)
    _lib.masked(x, name)  # np.asarray would read the values under the mask
    try:
        a = np.asarray(_lib.host(x))
    except ValueError as e:  # ragged: lists of several labels a row
        if name == "labels":
            return _multi_hot(x, missing_labels)
        raise ValueError(f"{name}: {e}") from None
    if a.dtype == bool:  # y > 0.5, or a multi-hot matrix as bool: 0 and 1
        return a.astype(np.int64)
    if a.dtype != object or not a.size:
        return a
    flat = a.ravel()
    if name == "labels" and a.ndim == 1 and any(isinstance(v, (list, tuple, set, frozenset, np.ndarray)) for v in flat):
        return _multi_hot(flat, missing_labels)  # a pandas column of lists
    if all(isinstance(v, str) or _missing(v) for v in flat):
        if not any(isinstance(v, str) for v in flat):
            raise ValueError(f"{name}: every value is missing (None or NaN)")
        null = _NULL if name in ("labels", "groups", "sessions") else "nan"  # labels', groups' and sessions' named null, as the command names a table's
        return np.array([null if _missing(v) else v for v in flat], dtype=str).reshape(a.shape)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in flat):
        big = next((i for i, v in enumerate(flat) if not -2**63 <= int(v) < 2**63), None)
        if big is not None:
            raise ValueError(f"{name}: [{big}] is {flat[big]}, beyond int64 (±2**63): give such ids as strings "
                             f"([str(v) for v in {name}])")
        return a.astype(np.int64)
    # The first value that is neither a string nor an integer (a missing
    # one among strings is a missing label), or else the first of the
    # fewer kind (string, integer) among the values present.
    strs = any(isinstance(v, str) for v in flat)
    odd = [i for i, v in enumerate(flat)
           if (not isinstance(v, (str, int, np.integer)) or isinstance(v, bool)) and not (strs and _missing(v))]
    present = [(i, v) for i, v in enumerate(flat) if not _missing(v)]
    fewer_str = 2 * sum(isinstance(v, str) for _, v in present) < len(present)
    i = odd[0] if odd else next(i for i, v in present if isinstance(v, str) == fewer_str)
    if _missing(flat[i]) and all(isinstance(v, (int, np.integer, float)) or _missing(v) for v in flat):
        raise ValueError(f"{name}: {what} of numbers with a missing value at [{i}] ({reprlib.repr(flat[i])}): "
                         f"mark rows without a label -1 (with missing_labels=\"drop\" or \"class\"), "
                         f"e.g. np.where(pd.isna(col), -1, col).astype(np.int64)")
    kinds = sorted({"str" if isinstance(v, str) else "int" if isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                    else type(v).__name__ for v in flat if not (strs and _missing(v))})
    raise ValueError(f"{name}: {what} of {', '.join(kinds)}: [{i}] is {reprlib.repr(flat[i])}; "
                     f"want integers or strings, one kind for all (a pandas column: .astype(str), or .astype(np.int64))")


def _pairs(x):
    """Relevance pairs as the engine takes them: BEIR's qrels dict
    ({query id: {row id: score}}, what its loader returns) or an object
    array (a pandas frame's to_numpy(), a list of tuples holding None) as
    an (m, 3) or (m, 2) array of strings, a missing score refused (no
    judgement); the rest as _ids takes it."""
    if isinstance(x, dict):
        rows = []
        for q, judged in x.items():
            if not isinstance(judged, dict):
                raise ValueError(f"pairs: a dict of pairs maps each query id to a dict of {{row id: score}} "
                                 f"(BEIR's qrels); query {q!r} maps to a {type(judged).__name__}")
            rows.extend((q, r, score) for r, score in judged.items())
        if not rows:
            raise ValueError("pairs: an empty dict: no pairs")
        x = np.empty((len(rows), 3), dtype=object)
        x[:] = rows
    if isinstance(x, (list, tuple)) and len(x) == 0 or isinstance(x, np.ndarray) and x.size == 0:
        raise ValueError(f"pairs: {'an empty list' if isinstance(x, (list, tuple)) else f'an empty array, shape {x.shape}'}: no pairs")
    a = x if isinstance(x, np.ndarray) else None
    if a is None and isinstance(x, (list, tuple)):
        try:
            a = np.asarray(x)
        except ValueError:  # rows of different lengths
            lens = [len(r) if isinstance(r, (list, tuple)) else None for r in x]
            bad = next((i for i, n in enumerate(lens) if n != lens[0]), None)
            if bad is not None and {lens[0], lens[bad]} == {2, 3}:
                def kind(n):
                    return "a pair (query, row)" if n == 2 else "a scored triple (query, row, score)"
                raise ValueError(f"pairs: row 0 is {kind(lens[0])}, row {bad} {kind(lens[bad])}: "
                                 "give every pair a score, or none") from None
            a = np.asarray(x, dtype=object)
    if a is None or a.dtype != object or a.ndim != 2 or a.shape[1] not in (2, 3):
        return _ids(x, "pairs")

    def text(v, i, j):
        if _missing(v):
            if j == 2:
                raise ValueError(f"pairs: pair {i}: a missing score ({v!r}), no judgement: score it "
                                 "(0 or less: judged not relevant), or leave the pair out")
            raise ValueError(f"pairs: row {i}: a missing {('query', 'row')[j]} id ({v!r})")
        if isinstance(v, bool) or not isinstance(v, (str, int, float, np.integer, np.floating)):
            raise ValueError(f"pairs: row {i}, column {j}: {reprlib.repr(v)} ({type(v).__name__}); "
                             "want ids that are strings or integers, and a number for a score")
        if j < 2 and isinstance(v, (float, np.floating)):
            if not float(v).is_integer():
                raise ValueError(f"pairs: row {i}: {('query', 'row')[j]} id {v!r} is not a whole number")
            v = int(v)  # a pandas column of integer ids with a missing value is float
        return str(v)

    return np.array([[text(v, i, j) for j, v in enumerate(row)] for i, row in enumerate(a)], dtype=str).reshape(a.shape)


@_keywords
def bundle(embeddings=None, labels=None, *, groups=None, sessions=None, blocks=None, views=None, queries=None, pairs=None, ids=None,
           query_ids=None, query_labels=None, k=None, kneg=0, split=(0.5, 0.1, 0.2, 0.2), seed=0, ood_classes=(), ood_cal_share=0.0,
           allow_fewer=False, missing_labels="error", min_score=None, logits=None, activations=None, out=None, kneg_hard=0,
           hard_candidates=None, judged_negatives=False, label_names=None, one_label=None):
    """Makes bundles of your own embeddings, as ccs bundle does: a dict from
    split name ("fit", "val", "cal", "test", and "ood-cal", "ood" when asked
    for) to Bundle, with the same arrays as the files ccs bundle writes.

    Positives of each other are rows of one class (labels, (n,) integers or
    strings; strings are numbered 0, 1, … in their sorted order, as the
    command numbers a string column, and each Bundle's label_names holds
    them: label i is label_names[i]),
    of one group (groups: views of one item; its first row is the anchor;
    with sessions, one session id a row — a speaker's recording —, its
    positives are its group's rows of other sessions, as ccs bundle
    -sessions), the views of one item (views, (n, v, d) instead of embeddings), or the
    rows relevant to a query (queries (q, d) and pairs (m, 2) of query row,
    relevant row; or of ids, strings or integers, with query_ids and ids:
    the queries' and the rows' ids in row order, pairs naming other ids
    left out with a warning; (m, 3) with a score each, 0 or less judged not
    relevant, a missing score refused; BEIR's qrels dict, {query id: {row
    id: score}}, as its loader returns it; or the path of a qrels file,
    BEIR's qrels/test.tsv (or .tsv.gz) or a .parquet or .arrow table of query-id,
    corpus-id and score as the Hub holds them, a dataset's directory
    (save_to_disk) or a directory of Parquet parts named *.parquet (Dask,
    Spark), "PATH:QUERY,ROW[,SCORE]" naming a table's columns, read by
    ccs bundle -pairs's code);
    query_labels: with queries, one label a query (its language, its
    domain: integers or strings, in the queries' row order, or a dict from
    query id to label with query_ids), as ccs bundle -query-labels: the
    queries are split stratified by it and every split's anchors carry it
    as their labels, for calibration="class" and per_class=True. k positives and kneg negatives (0: k) per
    anchor, within its split (k by default 20; with views, v-1 — every other
    view, at most 20 —, as ccs bundle -views); split are the fit, val, cal and test shares (a share of 0
    makes no such split: (0, 0, 0.5, 0.5) for the l2 ball, which trains nothing; (0, 0, 0, 1) for a
    test split alone, to judge a set calibrated on other data); ood_classes are
    labels held out as the "ood" split (integers, or strings for string
    labels; with several labels a row, every row that carries one of them,
    by the lists' labels or a multi-hot matrix's columns, or its names);
    label_names: the names of a multi-hot labels matrix's columns, in their
    order (mlb.classes_, mlb the MultiLabelBinarizer; strings or
    integers), as ccs bundle -label-names: one a column, none empty, none
    twice; column j is then label label_names[j], named as the lists'
    labels are (the Bundles' label_names, ood_classes by name, the
    per-label tables). With lists of integer labels (a Sequence(ClassLabel)'s
    ids, ds["tags"], with ds.features["tags"].feature.names) they name the
    ids, as -label-names names a CSV column's integer lists: id j is
    label_names[j], a label no row lists kept; a -1 among them is a
    missing label's mark (missing_labels="class": a label after the
    names, named "-1").
    one_label: with several labels a row, bundle the rows carrying that
    label alone (a list's label, a label_names name, or a matrix's column
    number when unnamed), as ccs bundle -one-label: they are the queries,
    each one's positives the other rows carrying it, its negatives rows
    that do not, drawn from all rows — the bundles of the relevance pairs
    of the label's rows, byte for byte. A set calibrated on its "cal"
    covers the label's positives with the label's guarantee, which
    calibration="class" cannot give with several labels a row; the
    Bundles carry no labels. ood_cal_share the share of the items
    held out as "ood-cal" (inputs that calibrate a per-input OOD test).
    blocks: with labels, one block id a row (a recording of overlapping
    windows, a patient, a site), as ccs bundle -blocks: each block lies
    whole in one split, "ood-cal" included, the shares shared out by
    blocks, so that calibration and test are new blocks to each other.
    missing_labels: what a label that marks a missing value means — a
    negative integer (Hugging Face and scikit-learn write -1) or the
    string "" or "nan" (pandas' NaN after astype(str)), "None", "<NA>",
    "NA", "N/A", or "Unknown", "Unassigned", "Unannotated", "Unlabeled" in
    any case (annotation tools' marks), in labels, groups or sessions: "error" (refuse
    it), "drop" (no label: the row is left out of every split, with a
    warning) or "class" (a class like any other, as +-1 binary labels; a
    group, or a session, of its own: the rows a session id marks missing
    are then never one another's positives);
    in lists of several labels a row, "drop" leaves such a label out of
    the row's list, "class" keeps it as a label.
    logits: the rows' classifier logits (n, C), with labels or groups:
    every split's Bundle carries its anchors' (what the OOD baselines
    MSP, Energy and ViM read), as ccs bundle -logits.
    activations: the rows' per-layer activation summaries (n, L) — each
    ReLU layer's maximum, as ccs embed's activations output holds —, with
    labels or groups: every split's Bundle carries its anchors' (what the
    OOD baseline COMBOOD reads), as ccs bundle -activations.
    min_score: the least score of a relevant pair, for pairs with scores
    (graded judgements: 2 keeps the highly relevant alone; default: any
    score above 0), as ccs bundle -min-score.
    kneg_hard: of an anchor's kneg negatives, that many hard ones, the
    nearest to it among hard_candidates (256) of its possible negatives
    drawn at random, the rest random among those, as ccs bundle
    -kneg-hard and -hard-candidates.
    judged_negatives: with scored pairs, each query's kneg negatives are
    its pairs judged not relevant (scored 0 or less: a qrels file's 0s, a
    pair classification's label 0, a triplet's negative), repeated where
    it has fewer, instead of random rows; a query with none is left out,
    with a warning; as ccs bundle -judged-negatives.
    out: a directory to write them to as well, as ccs bundle -out DIR
    writes them (NAME.npz and manifest.json, which records this call, the
    arrays' dtypes, shapes and SHA-256 of their bytes in C order, and the
    string labels' names), for ccs compare -data DIR and the other
    commands."""
    def shape(x):  # without copying a tensor off its device when it says its shape
        return tuple(x.shape) if hasattr(x, "shape") else np.shape(_lib.asarray(x, "embeddings"))

    if views is None and embeddings is not None and len(shape(embeddings)) == 3:
        raise ValueError(f"bundle: embeddings of shape {shape(embeddings)}: an (n, v, d) array is "
                         "each item's v views: pass it as views= (ccs.bundle(views=V), view 0 each item's anchor) — unless it holds "
                         "triplets, (anchor, positive, negative) along its second axis, which are no views (a negative would be "
                         "taken for a positive): those are relevance pairs, queries=T[:, 0] and pairs scored 1 and 0 "
                         "(docs/your-data.md, §6 \"Your data set's own negatives\")")
    if k is None:
        k = 20
        if views is not None and len(shape(views)) == 3:
            k = max(1, min(k, int(shape(views)[1]) - 1))
    lent = Lent()
    pairs_file = None
    if isinstance(pairs, (str, bytes, os.PathLike)):
        pairs_file, pairs = os.fsdecode(pairs), None
    labels = _ids(labels, "labels", missing_labels)
    if isinstance(query_labels, dict):  # {query id: label}: in the queries' row order
        if query_ids is None:
            raise ValueError("bundle: query_labels: a dict from query id to label needs the queries' ids (query_ids=)")
        qids = [str(q) for q in np.asarray(_lib.host(query_ids)).tolist()]
        by_id = {str(q): v for q, v in query_labels.items()}
        absent = [q for q in qids if q not in by_id]
        if absent:
            raise ValueError(f"bundle: query_labels: {len(absent)} of the {len(qids)} query ids have no label "
                             f"(the first: {absent[0]!r})")
        query_labels = [by_id[q] for q in qids]
    set_names = getattr(labels, "label_names", None)  # lists of labels: the labels the matrix's columns stand for
    column_names = None  # a multi-hot matrix's, for the engine
    if label_names is not None:
        if getattr(labels, "ids", None) is not None:  # lists of label numbers, which the names name
            # A matrix whose column j is id j, named as -label-names names
            # it (ood_classes, one_label by name, as the command's).
            labels, column_names = _named_ids(labels, _column_names(label_names))
            set_names = None
        elif set_names is not None:
            raise ValueError("bundle: label_names name the columns of a multi-hot matrix, and labels are lists of labels, "
                             "which are their own names: leave label_names out")
        else:
            column_names = _column_names(label_names)
    arr, n = lent.arrays({"embeddings": embeddings, "views": views, "labels": labels, "groups": _ids(groups, "groups"),
                          "sessions": _ids(sessions, "sessions"), "blocks": _ids(blocks, "blocks"), "queries": queries, "pairs": _pairs(pairs), "logits": logits, "activations": activations, "ids": _ids(ids, "ids"), "query_ids": _ids(query_ids, "query_ids"),
                          "query_labels": _ids(query_labels, "query_labels")})
    if isinstance(ood_classes, (str, int, np.integer)):
        ood_classes = (ood_classes,)
    try:
        split = tuple(float(s) for s in split)
    except (TypeError, ValueError):
        raise TypeError(f"bundle: split: want four numbers, the fit, val, cal and test shares, got {split!r:.80}") from None
    if len(split) != 4:
        raise ValueError(f"bundle: split={split}: want four shares, fit, val, cal and test")
    command = None
    if out is not None:
        out = os.fsdecode(os.fspath(out))
        command = _bundle_call(locals())
    opts = options(k=k, kneg=kneg, split=list(split), seed=seed,
                   ood_classes=[_class(c) for c in ood_classes],
                   ood_cal_share=ood_cal_share, allow_fewer=allow_fewer, missing_labels=missing_labels,
                   min_score=min_score,
                   pairs_file=pairs_file, out=out, command=command, kneg_hard=kneg_hard,
                   hard_candidates=hard_candidates, judged_negatives=bool(judged_negatives), label_set_names=list(set_names) if set_names is not None else None,
                   label_names=column_names,
                   one_label=None if one_label is None else [_class(one_label, "one_label")])
    h = (c_handle * 6)()
    info = call_string(lib.ccs_bundle_make, arr, n, opts, h, 6)
    return _bundles(h, info)


def _column_names(x):
    """label_names as the engine takes them: a list of strings, integers
    (mlb.classes_ of integer labels) in their decimal form."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"bundle: label_names: got {type(x).__name__} {x!r:.40}, want a list of names, one a column of labels")
    values = _lib.host(x).tolist() if hasattr(x, "tolist") else list(x)
    if not isinstance(values, list):
        raise TypeError(f"bundle: label_names: got {values!r:.40}, want a list of names, one a column of labels")
    out = []
    for j, v in enumerate(values):
        if isinstance(v, bytes):
            v = v.decode()
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise TypeError(f"bundle: label_names[{j}] is {v!r:.40}: want a string (or an integer), column {j}'s name")
        out.append(str(v))
    return out


def _compare_call(name, a):
    """The text of a ccs.compare call, for its document's command (which
    ccs report shows under the table): the bundles by name, seeds and
    rows, and every other keyword not at its default, as ccs compare's
    command line lists its flags; an array or Collection given as
    collection by its keyword alone."""
    parts = [repr(name), f"seeds={a['seeds']!r}", f"rows={a['rows']!r}"]
    for k, p in inspect.signature(compare).parameters.items():
        v = a[k]
        if p.kind != p.KEYWORD_ONLY or k in ("seeds", "rows", "progress") or v is None:
            continue
        if isinstance(v, (str, bytes, os.PathLike)):
            v = os.fsdecode(v)
        elif not isinstance(v, (bool, int, float)):
            parts.append(k)  # an array or a Collection, by its keyword
            continue
        if v != p.default:
            parts.append(f"{k}={v!r}")
    return f"ccs.compare({', '.join(parts)})"


def _bundle_call(a):
    """The text of a ccs.bundle call, for its manifest: the arrays given by
    name (the manifest describes them), the keywords not at their
    defaults but k, split and seed."""
    parts = [k for k in ("embeddings", "labels", "groups", "sessions", "blocks", "views", "queries", "pairs", "ids", "query_ids", "query_labels", "logits", "activations")
             if a[k] is not None]
    if a["label_names"] is not None:
        parts.append("label_names")
    if a["pairs_file"] is not None:
        parts.append(f"pairs={a['pairs_file']!r}")
    kw = {"k": a["k"], "kneg": a["kneg"] or a["k"], "split": tuple(a["split"]), "seed": a["seed"]}  # kneg=0 is k's
    if a["ood_classes"]:
        kw["ood_classes"] = list(a["ood_classes"])
    if a["ood_cal_share"]:
        kw["ood_cal_share"] = a["ood_cal_share"]
    if a["one_label"] is not None:
        kw["one_label"] = a["one_label"]
    if a["allow_fewer"]:
        kw["allow_fewer"] = True
    if a["missing_labels"] != "error":
        kw["missing_labels"] = a["missing_labels"]
    if a["min_score"] is not None:
        kw["min_score"] = a["min_score"]
    if a["kneg_hard"]:
        kw["kneg_hard"] = a["kneg_hard"]
    if a["hard_candidates"] is not None:
        kw["hard_candidates"] = a["hard_candidates"]
    if a["judged_negatives"]:
        kw["judged_negatives"] = True
    kw["out"] = a["out"]
    return "ccs.bundle(" + ", ".join(parts + [f"{k}={v!r}" for k, v in kw.items()]) + ")"


@_keywords
def simulate(*, seed=0, data_seed=None, k=None, per_class=None, out=None):
    """The paper's 3-D mixed simulation, as ccs simulate writes it: a dict
    from "fit", "val", "cal" and "test" to Bundle. data_seed (default 178:
    the draw closest to the paper's Table 1), k positives and negatives per
    anchor (default 500) and per_class points per class (default 5000).
    out: a directory to write them to as well, as ccs simulate -out does
    (NAME.npz, the same files byte for byte)."""
    h = (c_handle * 4)()
    info = call_string(lib.ccs_simulate, options(seed=seed, data_seed=data_seed, k=k, per_class=per_class), h, 4)
    splits = _bundles(h, info)
    if out is not None:
        os.makedirs(out, exist_ok=True)
        for name, b in splits.items():
            b.save(os.path.join(out, f"{name}.npz"))
    return splits


def _bundle_of(b, what):
    """A Bundle, or one read from a path."""
    if isinstance(b, Bundle):
        return b, False
    if isinstance(b, (str, bytes, os.PathLike)):
        try:
            return Bundle.load(b), True
        except FileNotFoundError as e:  # which argument named it
            e.strerror = f"{what}: {e.strerror}"
            raise
    raise TypeError(f"ccs: {what}: want a ccs.Bundle or a path to a bundle file, got {type(b).__name__}")


class _Progress:
    """Sends a job's progress reports to a callable (each report, a dict)
    or to a tqdm-like object: a fit's by epochs (total = max epochs), a
    comparison's by (row, seed) cells (total = rows times seeds; within a
    learned row's cell each epoch's report keeps the count and says the
    epoch in what, the bar's postfix), an OOD
    detection's part by part ("part": CIDER's epochs, each k-NN search's
    inputs, the baselines done), the bar reset at each."""

    def __init__(self, target):
        if not callable(target) and not hasattr(target, "update"):
            raise TypeError(f"progress: want a callable, given each report (a dict), or a tqdm-like bar "
                            f"(with update), got {type(target).__name__}")
        self.target, self.step, self.part = target, 0, None

    def send(self, reports):
        t = self.target
        for r in reports:
            if callable(t):
                t(r)
                continue
            fit = "epoch" in r and "total" not in r  # a comparison's epoch reports keep its cells' count
            total, step = (r["max_epochs"], r["epoch"]) if fit else (r["total"], r["done"])
            if r.get("part", self.part) != self.part:
                # ood_detection's parts (CIDER's epochs, each k-NN
                # search, the baselines) each fill the bar anew.
                self.part, self.step = r["part"], 0
                if hasattr(t, "reset"):
                    t.reset(total=total)
                else:
                    t.n = 0
            if getattr(t, "total", None) != total:
                t.total = total
                if hasattr(t, "refresh"):
                    t.refresh()
            if step > self.step:
                t.update(step - self.step)
                self.step = step
            if fit and hasattr(t, "set_postfix"):
                t.set_postfix(val_exclusion=f"{100 * r['val_exclusion']:.1f}%", refresh=False)
            elif not fit and hasattr(t, "set_postfix_str"):
                t.set_postfix_str(r["what"], refresh=False)


def _job(job, progress, result):
    """Waits for a job in slices of 100 ms (the GIL released), passing its
    progress on, then returns result(job); Ctrl-C (or an exception from the
    callback) cancels it."""
    finished = c_int()
    try:
        send = _Progress(progress).send if progress is not None else None
        while True:
            call(lib.ccs_job_wait, job, 100, byref(finished))
            reports = loads(call_string(lib.ccs_job_progress, job))
            if any("warning" in r for r in reports):  # warnings to give at once (compare's high d), not progress
                _warn([r["warning"] for r in reports if "warning" in r])
                reports = [r for r in reports if "warning" not in r]
            if send is not None:
                send(reports)
            if finished.value:
                break
        return result(job)
    except BaseException:
        call(lib.ccs_job_cancel, job)
        while not finished.value:
            call(lib.ccs_job_wait, job, 100, byref(finished))
        raise
    finally:
        _lib.close(job)


def _fitted(job):
    h = c_handle()
    training = call_string(lib.ccs_job_result, job, byref(h))
    return h.value, loads(training)


@_keywords
def fit(geometry, fit, val=None, *, objective, alpha=0.05, seed=0, head_dim=0, val_share=None, shift=False, recipe="sim",
        threshold=None, batch=None, epochs=None, patience=None, clip=None, lr=None, momentum=None,
        weight_decay=None, cosine=None, T=None, lambda_=None, p_min=None, p_max=None, m_min=None, m_max=None,
        tau=None, infonce_weight=None, head_volume=None, progress=None):
    """Learns a set geometry, as ccs fit does: geometry "single" (||Mx||_p)
    or "genball" (sum (m_j |x_j|)^p_j), trained on the bundle fit with the
    checkpoint chosen on val (without val, a val_share of fit's anchors,
    default 0.1, seeded by seed). objective: "neg", "vol" or "neg,vol",
    with ",infonce" to train a projection head (head_dim outputs). shift:
    centre the sets at anchor + fit's mean offset of positive - anchor and
    train the geometry there, as ccs fit -shift (anchors and positives from
    two encoders: queries and passages, captions and images).

    The recipe's keywords are ccs fit's flags (recipe "sim", the default:
    the simulation's SGD, or "embedding", which compare's learned rows train
    with: give recipe="embedding" to fit the row a comparison chose;
    threshold, batch, epochs, patience, clip, lr, momentum, weight_decay,
    cosine, T, lambda_, p_min, p_max, m_min, m_max, tau, infonce_weight,
    head_volume); None takes the recipe's value. progress: a callable, given
    a dict after every epoch (epoch, max_epochs, loss, val_exclusion,
    best_exclusion, best_epoch, elapsed, done, ...; at epoch 0, "streamed"
    when the splits' difference rows do not fit in memory and are computed
    a batch at a time, which the fit also warns of), or a tqdm bar. The
    training runs on the library's threads; this thread waits with the GIL
    released and calls progress itself; Ctrl-C stops the training.

    Returns an uncalibrated Set (save() writes what ccs fit writes; its
    training attribute holds the run's histories): calibrate it next."""
    if isinstance(geometry, Bundle):
        raise TypeError("fit: the geometry first, then the bundle: fit(\"genball\", fit_bundle, ...); got a Bundle for geometry"
                        + (f" and {fit!r} for fit" if isinstance(fit, str) else ""))
    fb, close_fit = _bundle_of(fit, "fit")
    vb, close_val = (None, False) if val is None else _bundle_of(val, "val")
    try:
        opts = options(geometry=geometry, objective=objective, alpha=alpha, seed=seed, head_dim=head_dim,
                       val_share=val_share, shift=shift, recipe=recipe, threshold=threshold, batch=batch, epochs=epochs,
                       patience=patience, clip=clip, lr=lr, momentum=momentum, weight_decay=weight_decay,
                       cosine=cosine, T=T, **{"lambda": lambda_}, p_min=p_min, p_max=p_max, m_min=m_min,
                       m_max=m_max, tau=tau, infonce_weight=infonce_weight, head_volume=head_volume)
        job = c_handle()
        call(lib.ccs_fit_start, fb._handle(), vb._handle() if vb is not None else 0, opts, byref(job))
        h, training = _job(job.value, progress, _fitted)
    finally:
        if close_fit:
            fb.close()
        if close_val:
            vb.close()
    _warn(training.pop("warnings", []))
    s = Set._wrap(h)
    s.training = training
    return s


@_keywords
def calibrate(fitted, cal, *, alpha=0.05, calibration="one", delta=0.0, seed=0, ridge=None, fit=None, shift=False,
              reference=None, ood_cal=None, ood_k=None, ood_class=None, allow_infinite=False, label=None):
    """Calibrates a set on the bundle cal (or a bundle file's path), as ccs
    calibrate does. fitted: a fitted Set (from fit, or Set.load of a file
    ccs fit wrote, or that file's path), or "ball" or "ellipsoid" for the
    baseline sets. calibration: "one" (one positive per anchor: the
    guarantee), "pac" (with delta: coverage >= 1 - alpha with probability
    >= 1 - delta over the calibration draw), "class" (a threshold per class
    of cal's labels; with delta, PAC per class) or "pooled" (approximate).
    seed chooses each anchor's positive (and the ellipsoid's half split);
    ridge is the ellipsoid's; fit (a Bundle or a path: the fit split) gives
    the ellipsoid's Σ, calibrated then on the whole of cal, as ccs calibrate
    -fit and ccs compare do (without it Σ comes from half of cal, whose
    halves share rows when positives are other items of the split, as in
    bundles made from labels); shift=True centres the ball's or the
    ellipsoid's sets at anchor + fit's mean offset of positive - anchor, as
    ccs calibrate -shift (the ball needs fit then); allow_infinite accepts a
    whole-space set.

    reference keeps an OOD reference pool with the set: a number of
    calibration anchors, a collection file (.npz, .npy, .parquet) or an
    (m, d) array; ood_cal calibrates the per-input OOD test (Set.ood) on
    in-distribution inputs held out from everything else: a features file
    (as ccs calibrate -ood-cal), a Bundle (its anchors) or an (n, d) array;
    ood_k is its neighbour (default 1). ood_class (ccs calibrate
    -ood-class) makes the test of one class alone — a class name for string
    labels, an integer otherwise —: its pool reference (a number) of cal's
    anchors of the class, its calibration ood_cal's inputs of it (a Bundle
    or a file: an array has no labels), one set a class, chosen by an
    input's class when it is judged; the false-alarm rate α_ood then holds
    for that class's inputs, which one test over all classes does not
    promise a small class. label calibrates on cal's anchors of that class
    alone (its name for string labels: a query's language, with
    ccs.bundle(query_labels=)), with one threshold whose guarantee is for
    that class's anchors, which retrieve and the service's /retrieve take,
    as ccs calibrate -class. The set's warnings are issued as CCSWarning."""
    if isinstance(fitted, Bundle):
        raise TypeError("calibrate: the set first, then the calibration bundle: calibrate(fitted, cal) — fitted a Set, "
                        "its file, \"ball\" or \"ellipsoid\"; got a Bundle for fitted"
                        + (f" and {cal!r} for cal" if isinstance(cal, str) else ""))
    cb, close_cal = _bundle_of(cal, "cal")
    fb, close_fit = (None, False) if fit is None else _bundle_of(fit, "fit")
    fitted_h, geometry, close_fitted = 0, None, None
    if isinstance(fitted, Set):
        fitted_h = fitted._handle()
    elif isinstance(fitted, (str, bytes, os.PathLike)) and os.path.exists(fitted):
        close_fitted = Set.load(fitted)
        fitted_h = close_fitted._handle()
    elif isinstance(fitted, str) and fitted in ("ball", "ellipsoid"):
        geometry = fitted
    elif isinstance(fitted, (str, bytes, os.PathLike)) and (
            os.fsdecode(fitted).endswith(".json") or os.sep in os.fsdecode(fitted)):
        raise FileNotFoundError(f"ccs: calibrate: {os.fsdecode(fitted)}: no such file (a set ccs fit wrote, or \"ball\" or \"ellipsoid\")")
    elif isinstance(fitted, str):
        geometry = fitted  # the library says what else it knows
    else:
        raise TypeError(f"ccs: calibrate: want a fitted ccs.Set, \"ball\" or \"ellipsoid\", got {type(fitted).__name__}")
    lent = Lent()
    ref_n, ref_db, ref_rows, ref_source = 0, None, None, None
    if isinstance(reference, (int, np.integer)) and not isinstance(reference, bool):
        ref_n = int(reference)
    elif isinstance(reference, (str, bytes, os.PathLike)):
        ref_db = os.fsdecode(reference)
    elif reference is not None:
        ref_rows, ref_source = reference, "the reference array"
    cal_path, cal_rows, cal_source, cal_bundle = None, None, None, 0
    if isinstance(ood_cal, (str, bytes, os.PathLike)):
        cal_path = os.fsdecode(ood_cal)
    elif isinstance(ood_cal, Bundle):
        if ood_cal.split == "ood":
            raise ValueError("calibrate: ood_cal: the OOD sample ccs.bundle held out (its \"ood\" split), where held-out "
                             "in-distribution inputs are wanted: give its \"ood-cal\" split (ccs.bundle(..., ood_cal_share=) makes it)")
        cal_bundle, cal_source = ood_cal._handle(), ood_cal.path or "bundle"
    elif ood_cal is not None:
        cal_rows, cal_source = ood_cal, "the ood_cal array"
    try:
        opts = options(geometry=geometry, alpha=alpha, calibration=calibration, delta=delta, seed=seed,
                       ridge=ridge, shift=shift, allow_infinite=allow_infinite, reference=ref_n, reference_db=ref_db,
                       reference_source=ref_source, ood_cal=cal_path, ood_cal_source=cal_source, ood_k=ood_k,
                       ood_cal_bundle=cal_bundle or None, ood_class=_ood_class(ood_class),
                       label=_calibrate_label(label, cb))
        h = c_handle()
        call(lib.ccs_calibrate, fitted_h, cb._handle(), 0 if fb is None else fb._handle(), opts,
             lent.ref(ref_rows, "reference"), lent.ref(cal_rows, "ood_cal"), byref(h))
    finally:
        if close_cal:
            cb.close()
        if close_fit:
            fb.close()
        if close_fitted is not None:
            close_fitted.close()
    s = Set._wrap(h.value)
    if isinstance(fitted, Set):
        s.training = fitted.training
    # s.warnings, and a class-conditional set's trim over all classes,
    # news here alone (as ccs calibrate prints it).
    _warn(loads(call_string(lib.ccs_set_calibrate_warnings, s._handle())))
    return s


def _ood_class(c):
    """calibrate's ood_class as the library takes it: None, a string or an integer."""
    if c is None or isinstance(c, str):
        return c
    if isinstance(c, bytes):
        return c.decode()
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)):
        raise TypeError(f"calibrate: ood_class: got a {type(c).__name__}, want a class name (str) or an integer label")
    return int(c)


def _label(x, where):
    """A label= argument, as every entry point that takes a class reads it
    (calibrate, Set.contains, for_class, retrieve, retrieve_many's
    labels): an integer label (a Python int or a NumPy integer) as an int,
    or a class's name (a str, or bytes as UTF-8: a NumPy bytes array's
    element) as a str. A bool, a float (2.0 too: a label is no measure),
    None or anything else is a TypeError that names where it was given. A
    0-d array (labels[i, ...], a tensor's .numpy()) is its one element."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    if isinstance(x, bytes):
        try:
            return x.decode()
        except UnicodeDecodeError:
            raise ValueError(f"{where} is {x!r}: a class's name as bytes must be UTF-8") from None
    if isinstance(x, str):
        return str(x)  # a np.str_ too
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{where} is {x!r}: want an integer label or a class's name (str)")
    return int(x)


def _calibrate_label(label, cal):
    """calibrate's label= as the library takes it (ccs calibrate -class's
    text): None, a class's name, or an integer label — for cal's string
    labels, the name it numbers (label i is cal.label_names[i]), which
    -class takes, as the sets' label= takes the number."""
    if label is None:
        return None
    v = _label(label, "calibrate: label")
    names = getattr(cal, "label_names", None)
    if isinstance(v, int) and names is not None and 0 <= v < len(names):
        return str(names[v])
    return str(v)


_SPLITS = ("fit", "val", "cal", "test", "ood", "ood-cal")


def _collection_of(collection):
    """A collection= keyword as the library takes it: (the Collection or
    None, its name for the result, whether it was made here and is to be
    closed): a Collection as it is, a path loaded, an (n, d) array copied."""
    if collection is None:
        return None, None, False
    if isinstance(collection, Collection):
        return collection, "the collection", False
    if isinstance(collection, (str, bytes, os.PathLike)):
        return Collection.load(collection), os.fsdecode(collection), True
    return Collection(collection), "the collection", True


def _share_of_zero(directory, split):
    """Whether the manifest ccs bundle wrote in directory records a share
    of 0 for split: no such file made."""
    try:
        with open(os.path.join(directory, "manifest.json")) as f:
            m = json.load(f)
        return m.get("format") == "ccs-bundles" and m.get("split", {}).get(split) == 0
    except (OSError, ValueError, AttributeError):
        return False


def compare(bundles, *, seeds=3, rows="all", alpha=0.05, calibration="one", delta=0.0, allow_infinite=False, resplits=200,
            reference=None, shift=False, head_dim=None, out=None, sets=None, recipe="embedding", threshold=None, batch=None, epochs=None, patience=None, clip=None,
            lr=None, momentum=None, weight_decay=None, cosine=None, T=None, lambda_=None, p_min=None, p_max=None,
            m_min=None, m_max=None, tau=None, infonce_weight=None, head_volume=None, progress=None,
            collection=None, size_anchors=None, **flags):
    """Compares the set families on your bundles, as ccs compare does: the
    paper's Table 1 for your data (the l2 ball, the ellipsoid, and the
    single-norm and generalized balls under Neg, Vol and Neg+Vol; rows
    "baselines", "learned", "infonce" or "all+infonce" choose others), over
    seeds, with the worst class's coverage, the share of resplits below
    1 - alpha and, with an "ood" bundle, the per-input OOD test.

    bundles: ccs.bundle's dict ("fit", "val", "cal", "test", and "ood",
    "ood-cal" when made) or the directory ccs bundle -out wrote. The other
    keywords are ccs compare's flags (calibration "one", "pac" with delta,
    "class" or "pooled"; allow_infinite=True, with "class", keeps a class
    too small for alpha as a whole-space set, warned of, instead of
    refusing); the training keywords are ccs.fit's, with the
    "embedding" recipe by default. reference: the fit anchors in the
    per-input OOD score's pool (by default 2000, or every fit anchor of a
    smaller fit split; more than the fit split is refused). shift: every
    row's sets centred at anchor + the fit split's mean offset of positive
    - anchor, as ccs compare -shift (anchors and positives from two
    encoders). head_dim: the outputs of the InfoNCE rows' projection heads
    (rows "infonce" or "all+infonce"; by default the embeddings'
    dimension), as ccs compare -head-dim and ccs.fit's head_dim. out: a
    results directory, as ccs compare -out keeps one: every finished (row,
    seed) cell in out/cells, so that a comparison stopped (Ctrl-C) and
    called again computes only the cells missing, every set in out/sets/compare, the document in
    out/compare.json (ccs report -in out reads it). sets: instead of out, a
    directory keeping only the sets (sets/seed-S/NAME.json). progress: a
    callable, given a dict after each (row, seed) cell (done, total, what)
    and within a learned row's cell after each epoch (with row, seed, epoch,
    max_epochs and val_exclusion too), or a tqdm bar. collection: a ccs.Collection, a collection file or an
    (n, d) array of your corpus, as ccs compare -db: a Size column, the mean
    number of its items each row's sets hold around the test split's first
    size_anchors anchors (1000 by default; 0: all).

    Returns a Comparison: its table as a dict, its text as ccs compare
    prints it (str()), save(), the JSON that ccs report and ccs plot read;
    with out or sets, set(method, seed), the row's Set to deploy; with out,
    cells, how many cells were read back and computed."""
    if flags:
        _unknown_keywords("compare", flags, compare)
    asked = dict(locals())  # the keywords as given, for the document's command
    given, opened = {}, []
    try:
        if isinstance(bundles, (str, bytes, os.PathLike)):
            name = os.fsdecode(bundles)
            if os.path.isfile(name):
                raise ValueError(f"compare: {name} is a file, want the directory ccs bundle -out (or ccs.bundle(out=…)) wrote")
            if not os.path.isdir(name):
                raise FileNotFoundError(f"compare: {name}: no such directory (ccs bundle -out {name} makes it)")
            for split in _SPLITS:
                path = os.path.join(name, split + ".npz")
                if os.path.exists(path):
                    given[split] = Bundle.load(path, features=split in ("ood", "ood-cal"))
                    opened.append(given[split])
            missing = [s + ".npz" for s in ("cal", "test") if s not in given]
            if missing and not all(_share_of_zero(name, s[:-4]) for s in missing):  # else the engine names the share
                raise FileNotFoundError(f"compare: {name}: {' and '.join(missing)} missing: make the bundles with "
                                        f"ccs bundle -out {name} (or ccs.bundle(…, out={name!r}))")
        elif isinstance(bundles, dict):
            name = "ccs.bundle"
            unknown = sorted(set(bundles) - set(_SPLITS))
            if unknown:
                raise ValueError(f"compare: bundles: unknown splits {unknown}: want {list(_SPLITS)}")
            for split, b in bundles.items():
                if b is not None and not isinstance(b, Bundle):
                    raise TypeError(f"compare: bundles[{split!r}]: want a ccs.Bundle, got {type(b).__name__}")
                given[split] = b
        else:
            raise TypeError(f"compare: bundles: want ccs.bundle's dict or a directory, got {type(bundles).__name__}")
        names = next((b.label_names for b in given.values() if getattr(b, "label_names", None) is not None), None)
        coll, coll_name, own = _collection_of(collection)
        if own:
            opened.append(coll)
        opts = options(seeds=seeds, rows=rows, alpha=alpha, calibration=calibration, delta=delta, allow_infinite=allow_infinite, resplits=resplits, shift=shift, head_dim=head_dim,
                       label_names=list(names) if names is not None else None,
                       directory=name if isinstance(bundles, (str, bytes, os.PathLike)) else None,
                       reference=reference, name=name, command=_compare_call(name, asked),
                       sets=os.fsdecode(sets) if sets is not None else None,
                       out=os.fsdecode(out) if out is not None else None,
                       recipe=recipe, threshold=threshold, batch=batch, epochs=epochs, patience=patience, clip=clip,
                       lr=lr, momentum=momentum, weight_decay=weight_decay, cosine=cosine, T=T, **{"lambda": lambda_},
                       p_min=p_min, p_max=p_max, m_min=m_min, m_max=m_max, tau=tau, infonce_weight=infonce_weight,
                       head_volume=head_volume, collection=coll._handle() if coll is not None else None,
                       collection_name=coll_name, size_anchors=size_anchors)
        handles = [given[s]._handle() if given.get(s) is not None else 0 for s in _SPLITS]
        job = c_handle()
        call(lib.ccs_compare_start, *handles, opts, byref(job))
        doc, text, cells = _job(job.value, progress, _compared)
    finally:
        for b in opened:
            b.close()
    c = Comparison(doc, text)
    if out is not None:
        c.sets = os.path.join(os.fsdecode(out), "sets", "compare")
    elif sets is not None:
        c.sets = os.fsdecode(sets)
    c.cells = cells
    _warn(c.table.get("warnings", []))
    return c


def _document(job):
    """A finished comparison's or OOD detection's document and text."""
    doc, text = c_void_p(), c_void_p()
    try:
        call(lib.ccs_job_document, job, byref(doc), byref(text))
    except BaseException:
        for p in (doc, text):
            _lib.take_string(p)
        raise
    return _lib.take_string(doc), _lib.take_string(text)


def _compared(job):
    doc, text = _document(job)
    return doc, text, loads(call_string(lib.ccs_job_cells, job))


class OODDetection:
    """What ccs ood prints, from ood_detection: str(d) is its table, d.rows
    its rows (ccs ood -json's: method, auroc and fpr95 a column each OOD
    sample, far, tar, …), d.document the whole JSON document, d.warnings
    the warnings (also given as CCSWarning)."""

    def __init__(self, document, text, warnings):
        self.document, self._text, self.warnings = document, text, warnings

    @property
    def rows(self):
        return self.document["rows"]

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"<ccs.OODDetection {len(self.rows)} rows>"


def _features(x, what, opened):
    """An ood_detection input as a Bundle and its name: a Bundle, a
    features file (ccs bundle's test.npz, ood.npz, …) or an (n, d) array
    of inputs; a bundle made here is added to opened, to close."""
    if isinstance(x, Bundle):
        return x, x.path or what
    if isinstance(x, (str, bytes, os.PathLike)):
        b, what = Bundle.load(x, features=True), os.fsdecode(x)
    elif isinstance(x, (list, tuple)) and any(isinstance(v, (Bundle, str, bytes, os.PathLike)) for v in x):
        raise TypeError(f"ood_detection: {what}: a {type(x).__name__} of inputs: give one input (a Bundle, "
                        "a features file or an (n, d) array), or several as a dict, {name: input}")
    else:
        try:
            b = Bundle(_lib.host(x))
        except ValueError as e:
            raise ValueError(f"ood_detection: {what}: {e}") from None
    opened.append(b)
    return b, what


@_keywords
def ood_detection(set, id, ood, *, train=None, ood_cal=None, classifier=None, mode=None, alpha_ood=0.05, delta=0.0,
                  simultaneous=False, fdr=0.0, fpr="id-positive", cider_epochs=100, seed=0, by_class=False, progress=None):
    """ccs ood: the set's OOD scores on in-distribution inputs id and OOD
    inputs ood — AUROC, FPR95 and its conformal test's alarm rates — and,
    with train (the features the baselines are fitted on, with labels and
    logits as ccs.bundle gives its splits), the eight baselines' (MSP,
    Energy, Mahalanobis, KNN, COMBOOD, D-KNN, CIDER, ViM), their tests
    calibrated on ood_cal (held-out in-distribution inputs). set: a Set or
    its file; id, train, ood_cal: a Bundle, a features file or an (n, d)
    array; ood: one such input, or {name: input} for several; classifier:
    the encoder's last layer for ViM (FILE.npz, weight and bias);
    cider_epochs=0 leaves CIDER, the slow one, out; by_class=True judges
    each label of an OOD input apart, one sample per label named NAME:LABEL
    (-ood-by-class: ccs bundle's ood.npz, or ccs.bundle's "ood" split, of
    several held-out classes). The other keywords are the command's
    flags. ood=None checks the in-distribution inputs alone, with the
    set's per-input test (a set calibrated with ood_cal): its false-alarm
    rate and the shift warning on a new source's inputs (no baselines: they
    are measured against an OOD sample). progress: a callable, given a dict (part, done, total, what)
    along each CCS row's scoring of the inputs (part "CCS (batch) score",
    "CCS (reference) score", …), after each of CIDER's epochs (part "cider"), along each
    k-NN search of KNN, COMBOOD and D-KNN (part "KNN score", "D-KNN fit:
    principal space", …: at most every 0.1 s, and at its end) and after
    each baseline (part "baselines"), or a tqdm bar (reset at each part). It runs on the
    library's threads; Ctrl-C stops it. Returns an OODDetection; the table
    equals the command's on the same inputs."""
    opened = []
    try:
        if not isinstance(set, Set):
            set_name = os.fsdecode(set)
            set = Set.load(set)
            opened.append(set)
        else:
            set_name = "the set"
        # None: the in-distribution inputs alone (the per-input test's
        # false-alarm rate and shift check), as ccs ood -id without -ood.
        items = [] if ood is None else ood.items() if isinstance(ood, dict) else [(None, ood)]
        ids, names = [], []
        for name, x in items:
            b, src = _features(x, "ood", opened)
            if name is None:
                name = os.path.splitext(os.path.basename(src))[0]
            ids.append(b._handle())
            names.append(str(name))
        idb, id_name = _features(id, "id", opened)
        tr = cal = 0
        tr_name = cal_name = None
        if train is not None:
            b, tr_name = _features(train, "train", opened)
            tr = b._handle()
        cal_names = None
        if ood_cal is not None:
            b, cal_name = _features(ood_cal, "ood_cal", opened)
            cal = b._handle()
            cal_names = None if b.label_names is None else list(b.label_names)
        hs = (c_handle * max(len(ids), 1))(*ids)
        job = c_handle()
        call(lib.ccs_ood_detect_start, set._handle(), idb._handle(), hs, len(ids), tr, cal,
             options(set_name=set_name, id_name=id_name, label_names=None if idb.label_names is None else list(idb.label_names),
                     ood_names=names, train_name=tr_name, ood_cal_name=cal_name, ood_cal_label_names=cal_names,
                     classifier=None if classifier is None else os.fsdecode(classifier), mode=mode,
                     alpha_ood=alpha_ood, delta=delta, simultaneous=simultaneous, fdr=fdr, fpr=fpr,
                     cider_epochs=cider_epochs, seed=seed, by_class=bool(by_class)),
             byref(job))
        doc, text, warned = _job(job.value, progress, _detected)  # the inputs stay open until it is done
    finally:
        for o in opened:
            o.close()
    _warn(warned)
    return OODDetection(loads(doc), text, warned)


def _detected(job):
    doc, text = _document(job)
    return doc, text, json.loads(call_string(lib.ccs_job_warnings, job))


class Comparison:
    """ccs.compare's result: table, the comparison as a dict (ccs compare
    -json's table: title, config, alpha, rows — each with method,
    coverage, exclusion, logvol, worst_class_coverage, resplits_below, …,
    each figure a {mean, std, …} summary over seeds); rows, the table's
    rows; str(), the table as ccs compare prints it; document, the whole
    JSON document, which save(path) writes and ccs report, ccs plot and
    ccs.report read."""

    def __init__(self, document, text):
        self._json, self.text = document, text
        raw = json.loads(document)
        self.document = _lib.floats(raw)  # "+Inf" as a float, as loads() reads it
        self.table = self.document["tables"][0]
        self.rows = self.table["rows"]
        names = raw["tables"][0].get("label_names")  # strings, "+Inf" too
        #: string labels' names (class i is label_names[i]) when ccs.bundle
        #: made the bundles from strings, or the directory's manifest names
        #: them; None otherwise.
        self.label_names = tuple(names) if names is not None else None
        #: the label whose rows alone the bundles hold (ccs.bundle's
        #: one_label, ccs bundle -one-label): the guarantee is for anchors
        #: carrying it; None otherwise.
        self.one_label = self.table.get("one_label")

    #: the directory ccs.compare kept the sets in (out's sets/compare, or
    #: sets); None otherwise.
    sets = None
    #: with ccs.compare(out=...), how its cells were had: {"dir", "read_back",
    #: "computed", "stale"} (stale: computed again, having been kept under
    #: other keywords, bundles or library); None otherwise.
    cells = None

    def markdown(self):
        """The table alone (no title, notes or warnings) as a Markdown
        table, as str() prints it between its title and its notes: for a
        paper or a README. What ± means is in str()'s notes."""
        return call_string(lib.ccs_document_table, self._json.encode(), b"markdown")

    def latex(self):
        """The table alone as a LaTeX tabular (booktabs' \\toprule,
        \\midrule, \\bottomrule): figures as str() prints them, ± and the
        arrows in math mode, % escaped. Its caption is yours: str()'s
        notes say what ± is (the spread over seeds) and which split."""
        return call_string(lib.ccs_document_table, self._json.encode(), b"latex")

    def records(self):
        """The table as flat records, one dict a row, for pandas
        (pd.DataFrame(c.records())) or a CSV writer: "method", "set", and
        each figure's mean over seeds under its name with its standard
        deviation under NAME_std (coverage, exclusion, logvol_per_dim,
        worst_class_coverage — the worst label's, among labels of 20
        positives or more, where the document's "by_label" says the test
        bundle holds several labels a row; among classes of 20 test
        anchors or more where "min_class_anchors" is 20 —,
        resplits_below, the OOD
        columns, fit_seconds,
        set_size with a collection, in items),
        in percent where the table prints a percentage."""
        out = []
        for row in self.rows:
            rec = {"method": row["method"], "set": row.get("set")}
            for k, v in row.items():
                if isinstance(v, dict) and "mean" in v:
                    rec[k], rec[k + "_std"] = v["mean"], v.get("std")
            out.append(rec)
        return out

    @classmethod
    def load(cls, path):
        """A comparison from its JSON document (ccs compare -json's output,
        Comparison.save's file) or from a results directory (ccs compare
        -out DIR, ccs.compare(out=DIR)): its compare.json, and its sets
        (DIR/sets/compare) for set()."""
        path = os.fsdecode(path)
        sets = None
        if os.path.isdir(path):
            if os.path.isdir(os.path.join(path, "sets", "compare")):
                sets = os.path.join(path, "sets", "compare")
            path = os.path.join(path, "compare.json")
        with open(path, encoding="utf-8") as f:
            document = f.read()
        c = cls(document, call_string(lib.ccs_document_text, document.encode()))
        c.sets = sets
        return c

    def set(self, method, seed=0):
        """The row's fitted, calibrated set at seed (a Set, to save and
        serve), by the row's method name ("Generalized (Neg,Vol)", …) or
        its file's ("genball-neg-vol"), from the directory ccs.compare kept
        the sets in (sets=)."""
        if self.sets is None:
            raise ValueError("Comparison.set: ccs.compare kept no sets: give it out=DIR (or sets=DIR)")
        row = next((r for r in self.rows if method in (r["method"], r["set"])), None)
        if row is None:
            alike = next((r["method"] for r in self.rows if isinstance(method, str)
                          and method.casefold() in (r["method"].casefold(), r["set"].casefold())), None)
            meant = f" (did you mean {alike!r}?)" if alike else ""
            raise UnknownName(f"Comparison.set: no row {method!r}{meant}: have {[r['method'] for r in self.rows]} "
                              f"(or their files' names: {[r['set'] for r in self.rows]})")
        seeds = len(row.get("per_seed") or [])
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < max(seeds, 1):
            raise ValueError(f"Comparison.set: seed {seed!r}: the comparison ran seeds 0 to {max(seeds, 1) - 1}")
        return Set.load(os.path.join(self.sets, f"seed-{seed}", row["set"] + ".json"))

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<ccs.Comparison {self.table['title']!r}: {len(self.rows)} rows>"

    def save(self, path):
        """Writes the JSON document (what ccs compare -json prints)."""
        with open(path, "w") as f:
            f.write(self._json)


class UnknownName(KeyError, ValueError):
    """A name the package does not know (Comparison.set's row): a KeyError
    whose message reads as written (KeyError's str quotes it), and a
    ValueError, as every other wrong name the package is given (rows=,
    geometry=) raises one, so that except ValueError catches it."""

    def __str__(self):
        return str(self.args[0])


def _unfloat(v):
    """Decoded JSON v with infinite floats as ccs's JSON writes them,
    "+Inf" and "-Inf" (_lib.floats' inverse)."""
    if isinstance(v, dict):
        return {k: _unfloat(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_unfloat(x) for x in v]
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return v


def _documents(results, what):
    """The JSON text of results — each a Comparison, a JSON document's
    path, its text or a Comparison's .document (a dict); one alone as it
    is — as a JSON array, for report and plot."""
    if isinstance(results, (Comparison, str, os.PathLike)) or isinstance(results, dict) and "kind" in results:
        results = [results]
    if isinstance(results, (dict, bytes)) or not hasattr(results, "__iter__"):
        got = "a dict of " + type(next(iter(results.values()))).__name__ + "s" if isinstance(results, dict) and results else type(results).__name__
        hint = ""
        if isinstance(results, dict) and "coverage" in results:  # Set.evaluate's dict: fields, not a document
            hint = ("; Set.evaluate's dict holds the figures, not the document the command draws from: "
                    "ccs evaluate -json writes one")
        raise TypeError(f"{what}: results: want a Comparison, a JSON document (its text, its path, or a "
                        f"Comparison's .document) or a list of them, got {got}{hint}")
    docs = []
    for r in results:
        if isinstance(r, Comparison):
            docs.append(r._json)
        elif isinstance(r, dict) and "kind" in r:  # a Comparison's .document: "+Inf" as ccs's JSON writes it
            docs.append(json.dumps(_unfloat(r), allow_nan=False))
        elif isinstance(r, os.PathLike) or isinstance(r, str) and not r.lstrip().startswith("{"):
            with open(r) as f:
                docs.append(f.read())
        elif isinstance(r, str):
            docs.append(r)
        else:
            raise TypeError(f"{what}: want Comparisons, JSON documents or their paths, got {type(r).__name__}")
    return ("[" + ",".join(docs) + "]").encode()


@_keywords
def report(results, path, *, title=None):
    """Writes one self-contained HTML page of results, as ccs report does:
    each a Comparison, a JSON document's path (ccs compare -json, ccs
    reproduce -json, …), its text or a Comparison's .document (a dict);
    one of them alone may be given as it is. A path ending .md writes the
    tables and their notes as Markdown, .tex each table as a LaTeX table
    float (booktabs' rules, for \\input); the figures are then ccs.plot's."""
    call(lib.ccs_report, _documents(results, "report"), (title or "").encode(), _path(path))


@_keywords
def plot(results, out):
    """Draws the figures of results (as report takes them) as PNG and SVG
    files in the directory out, as ccs plot -out DIR does (and ccs compare
    -plots DIR): each figure is drawn before any is written; two results
    of one kind name the second's figures NAME-2. Returns the files'
    paths."""
    return loads(call_string(lib.ccs_plot, _documents(results, "plot"), _path(out)))


# The batch from which Set.retrieve_many transforms its collection, as ccs
# retrieve does (retrieve.TransformMin): a set behind a head from 2, since
# its transform costs about one plain scan.
_TRANSFORM_MIN = 8
_HEAD_TRANSFORM_MIN = 2


class Collection(_Handle):
    """A searchable collection of embeddings (n, d) with ids (n,): integers
    (default: the row numbers) or strings (a RAG index's passage ids; none
    empty, no two equal), for Set.retrieve; the rows are copied once.
    Collection.load reads a collection file as ccs retrieve -db does."""

    _what = "collection"
    _copied = True
    _keys = False  # the string ids, once asked for (None: integer ids)

    @_keywords
    def __init__(self, rows, ids=None):
        lent = Lent()
        h = c_handle()
        call(lib.ccs_collection_new, lent.ref(rows, "collection"), lent.ref(_ids(ids, "ids"), "ids"), byref(h))
        self._h = h.value

    @classmethod
    def load(cls, path):
        """Reads a collection file: .npz ("embeddings" or "anchors", or its
        only (n, d) float array, ids as "ids" — integers or strings — or
        "index"), .safetensors (tensors named so, or a lone tensor of
        embeddings), .npy (n, d) or .parquet (an "id" column of integers or
        strings); "FILE:NAME" names the embeddings' array, tensor or column,
        a suffix "?ids=NAME" the ids' ("corpus.parquet?ids=doc_id"), as
        ccs serve's -db NAME=FILE?ids=NAME does."""
        h = c_handle()
        call(lib.ccs_collection_load, _path(path), byref(h))
        return cls._wrap(h.value)

    @_keywords
    def transform(self, set, max_bytes=4 << 30):
        """Prepares the collection for the searches of set, a single-norm or
        ellipsoid set (shifted or not): every item multiplied once by the
        set's matrix (M, or L^-1 of the ellipsoid's Sigma = L L^T), so that
        a search costs O(d) an item instead of O(d^2), with the same hits.
        It takes (d + 1) * 4 bytes an item, half again for a half-precision
        copy from 4 096 items on, and the time of 5-10 plain searches. A
        single-norm or generalized ball behind a head (InfoNCE) is
        prepared too (W z or M W z of every item: about one plain search);
        it raises ValueError for a set of another family or a transform
        over max_bytes (<= 0: no limit). A class-conditional set's
        transform serves its retrieve(label=), retrieve_many(labels=) and
        for_class sets, which share its geometry: one transform for all
        its classes. Set.retrieve_many does it for a batch of 8 anchors or
        more (2 for a set behind a head, whose transform costs about one
        plain scan); ccs serve at load."""
        call(lib.ccs_collection_transform, self._handle(), set._handle(), int(max_bytes))

    def prepare(self):
        """Makes the collection's compact copies now, as ccs serve does at
        load: the half-precision copy the l2 ball's searches screen first
        and the 8-bit copy the generalized ball's do (half and a quarter of
        the rows' memory again; none below 4 096 items). Otherwise the
        second search of each kind starts its copy in the background and
        the searches scan without it until it is made, with the same hits:
        a new collection of 10^6 x 128 answered in 15-49 ms for about its
        first second, then 4.9 ms (a trial's figures, 2 cores). Returns the
        bytes the copies take."""
        n = c_int64()
        call(lib.ccs_collection_prepare, self._handle(), byref(n))
        return n.value

    def save(self, path):
        """Writes the collection as Parquet (.parquet): an "id" column
        (integers, or the string ids) and an "embedding" column, what
        Collection.load, ccs retrieve -db, ccs serve -db and ccs collection
        load read."""
        call(lib.ccs_collection_save, self._handle(), _path(path))

    @property
    def keys(self):
        """The string ids, in row order (np.ndarray of str), or None where
        the ids are integers."""
        if self._keys is False:
            k = json.loads(call_string(lib.ccs_collection_keys, self._handle()))  # strings, "+Inf" too
            self._keys = None if k is None else np.array(k, dtype=str)
        return self._keys

    @property
    def shape(self):
        """(n, d)."""
        n, d = c_int64(), c_int64()
        call(lib.ccs_collection_size, self._handle(), byref(n), byref(d))
        return n.value, d.value

    def __len__(self):
        return self.shape[0]

    @property
    def rows(self):
        """A copy of the rows, (n, d) float32, as read: what gives a
        .safetensors file's bfloat16 or float16 embeddings to NumPy, which
        has no bfloat16 — ccs.Collection.load("emb.safetensors:embeddings").rows."""
        n, d = self.shape
        out = np.empty((n, d), dtype=np.float32)
        call(lib.ccs_collection_rows, self._handle(), out.ctypes.data_as(c_void_p), out.nbytes)
        return out

    @property
    def ids(self):
        """A copy of the integer ids, in row order, (n,) int64: those given,
        or the row numbers (where the ids are strings, keys)."""
        n, _ = self.shape
        out = np.empty(n, dtype=np.int64)
        call(lib.ccs_collection_ids, self._handle(), out.ctypes.data_as(c_void_p), out.nbytes)
        return out

    def __reduce__(self):
        """A pickle holds the rows and the ids, so that another process
        (multiprocessing's "spawn") gets the same collection."""
        keys = self.keys
        return (Collection, (self.rows, keys if keys is not None else self.ids))

    def __repr__(self):
        if not self._h:
            return "<ccs.Collection (closed)>"
        n, d = self.shape
        return f"<ccs.Collection n={n} d={d} ids={'str' if self.keys is not None else 'int'}>"


def _unpickle_set(text, training):
    """The set a pickle holds (Set.__reduce__): its file's text, read and
    checked as Set.load reads a file."""
    h = c_handle()
    call(lib.ccs_set_parse, text.encode(), byref(h))
    s = Set._wrap(h.value)
    s.training = training
    return s


class Set(_Handle):
    """A contrastive conformal set: a geometry and, once calibrated, its
    threshold. A point z is inside the set around anchor Z when
    score(Z - z) <= threshold. Set.load reads the JSON set files ccs
    calibrate and ccs fit write, and ccs serve reads; save() writes them."""

    _what = "set"
    _copied = True
    training = None  # a fit's account (fit()): epochs, best_epoch, histories

    @classmethod
    def load(cls, path):
        """Reads a set file (checked: format, version, parameters, ranks,
        its checksum; a file without one is read with a CCSWarning, as the
        command line warns: nothing checks its threshold)."""
        h = c_handle()
        call(lib.ccs_set_load, _path(path), byref(h))
        s = cls._wrap(h.value)
        _warn([f"{os.fsdecode(path)}: {w}" for w in s.warnings if w.startswith("the set file has no checksum")])
        return s

    def save(self, path):
        """Writes the set file (atomically): byte for byte what ccs calibrate
        (or ccs fit, for an uncalibrated set) writes for the same inputs."""
        call(lib.ccs_set_save, self._handle(), _path(path))

    def to_json(self):
        """The set file's text."""
        return call_string(lib.ccs_set_json, self._handle())

    def __reduce__(self):
        """A pickle holds the set file's text (and a fit's account,
        training), so that another process (multiprocessing's "spawn")
        gets the same set."""
        return (_unpickle_set, (self.to_json(), self.training))

    def _transform_min(self):
        """The batch from which retrieve_many transforms its collection."""
        return _HEAD_TRANSFORM_MIN if self._summary()["head"] else _TRANSFORM_MIN

    @property
    def info(self):
        """The set file as a dict ("+Inf" thresholds as float inf)."""
        if self._info is None:
            self._info = loads(self.to_json())
        return self._info

    def _summary(self):
        """The few fields every call reads (dim, kind, calibrated, alpha,
        threshold, unit_norm, head), without the set file's parameters, whose
        JSON (1.5 MB for a 256-dimensional single-norm) took 88 ms to write
        on a set's first retrieve."""
        if self._summ is None:
            self._summ = loads(call_string(lib.ccs_set_summary, self._handle()))
        return self._summ

    _summ = None
    dim = property(lambda self: self._summary()["dim"], doc="The embeddings' dimension.")
    calibrated = property(lambda self: self._summary()["calibrated"], doc="Whether the set has a threshold.")
    alpha = property(lambda self: self._summary().get("alpha"), doc="The miscoverage level, or None (uncalibrated).")
    threshold = property(lambda self: self._summary().get("threshold", float("nan")),
                         doc="The threshold (inf: the whole space; nan: uncalibrated); for a class-conditional "
                             "set the one over all classes, which decides nothing: see thresholds.")

    @property
    def thresholds(self):
        """A class-conditional set's thresholds, which decide its
        membership: {class: threshold}, each class by its name where it has
        one, else its label (inf: the whole space); None for a set with one
        threshold."""
        classes = self.info.get("classes")
        if not classes:
            return None
        return {c.get("name") or c["label"]: c["threshold"] for c in classes}
    guarantee = property(lambda self: self.info.get("guarantee"), doc='"exact", "training-conditional", ….')
    geometry = property(lambda self: self._summary()["kind"], doc='The geometry\'s family: "ball", "genball", ….')

    @property
    def warnings(self):
        """What a reader of this set's numbers must know, as ccs calibrate
        warns: a whole-space threshold, a pooled calibration, …"""
        return loads(call_string(lib.ccs_set_warnings, self._handle()))

    @_keywords
    def evaluate(self, test, *, per_class=False, unlabeled="error", collection=None, size_anchors=None, baseline=None, cal=None,
                 progress=None):
        """Coverage of the test positives, exclusion of the test negatives,
        LogVol/d (and per class with per_class=True): the result of ccs
        evaluate -json, field for field; with per_class and a test bundle
        of string labels (ccs.bundle's), "label_names" names the classes as
        the command's does (class i is label_names[i]). unlabeled="marginal"
        judges a class-conditional set on a bundle without labels with the
        threshold over all classes (with a CCSWarning). collection: your
        corpus (a ccs.Collection, a collection file or an (n, d) array), as
        ccs evaluate -db: "set_sizes" counts its items the set holds around
        the test bundle's first size_anchors anchors (1000; 0: all), and
        with per_class "class_set_sizes" class by class; a
        class-conditional set's around each anchor at its class's
        threshold (no baseline beside it).
        baseline="topk" (or "topk-l2", or both: a list or "topk,topk-l2"),
        with a collection and cal, the bundle (or its path) the set was
        calibrated on: "baselines" measures certified top-k baselines on
        the same anchors, k calibrated on the set's own calibration units
        at its alpha (ranked by the set's distance, or the Euclidean one):
        each one's "k", "rank" of "n", "coverage" of the test positives and
        "set_coverage", the set's of the same (docs/calibration.md).
        "exchangeability" checks the test anchors against the set's
        calibration: how many of its units (one positive an anchor, or
        disjoint pairs) lie outside, against what anchors drawn as the
        calibration's give, and the chance "p" of as many; below 1e-3 (a
        class-conditional set's two tests, the classes summed and the
        least likely class, 5e-4 each) a CCSWarning says the test data are
        shifted (docs/calibration.md). progress: a callable, given a dict
        (part: "set sizes" or "top-k baselines", done, total, what), or a
        tqdm-like bar, as the passes over a collection go (done of total:
        anchors, or the collection's chunks where every anchor is counted
        in one pass); Ctrl-C stops them."""
        if isinstance(baseline, str):
            baseline = [v.strip() for v in baseline.split(",")]
        tb, close_test = _bundle_of(test, "test")
        cb, close_cal = (None, False) if cal is None else _bundle_of(cal, "cal")
        coll, coll_name, own = None, None, False
        try:
            coll, coll_name, own = _collection_of(collection)
            job = c_handle()
            call(lib.ccs_set_evaluate_start, self._handle(), tb._handle(),
                 options(per_class=per_class, unlabeled=unlabeled,
                         collection=coll._handle() if coll is not None else None,
                         collection_name=coll_name, size_anchors=size_anchors,
                         baseline=list(baseline) if baseline is not None else None,
                         cal=cb._handle() if cb is not None else None),
                 byref(job))
            doc, _ = _job(job.value, progress, _document)  # the inputs stay open until it is done
            out = loads(doc)
        finally:
            if close_test:
                tb.close()
            if close_cal:
                cb.close()
            if own:
                coll.close()
        _warn(out["warnings"])
        result = out["result"]
        if per_class and getattr(tb, "label_names", None) is not None and result.get("classes") and "label_names" not in result:
            result["label_names"] = list(tb.label_names)  # the engine names them already, the set's way once renumbered
        if per_class and getattr(tb, "label_names", None) is not None:
            for row in result.get("labels") or ():  # several labels a row: named as the lists named them
                if "name" not in row and 0 <= row["label"] < len(tb.label_names):
                    row["name"] = tb.label_names[row["label"]]
        return result

    @_keywords
    def trials(self, embeddings, ids, trials, *, unlabeled="error"):
        """The set judged on a speaker-verification trial list, as ccs
        evaluate -trials -json: trials, a file's path (VoxCeleb's "1 enrol
        test" lines, or Kaldi's "enrol test target|nontarget") or its lines'
        fields ([l.split() for l in open("trials.txt")], a blank line's []
        skipped as the file's reader skips it; a pandas DataFrame of three
        columns, read by its rows' values; a first line that is not a trial
        and names no utterance is a header, skipped and given as "header"),
        naming utterances
        by ids — one a row of embeddings (n, d), in row order, as utt.txt
        lists them (a path listed twice with the same row is read once, with
        a CCSWarning). A dict: "form", "header" ("" for none), "trials",
        "targets", "non_targets",
        "miss" (targets outside the set around their enrolment),
        "false_acceptance" (non-targets inside), and the cosine baseline on
        the same trials, "cosine_eer" at "cosine_eer_threshold" and
        "cosine_false_acceptance" at "cosine_at_miss", the cosine threshold
        missing as many targets as the set (both chosen on the trials: no
        guarantee). A class-conditional set is refused (a trial list gives
        no enrolment's class) unless unlabeled="marginal", which judges
        every enrolment with the threshold over all classes, with a
        CCSWarning, as ccs evaluate -unlabeled marginal."""
        lent = Lent()
        trials_file = None
        if isinstance(trials, (str, bytes, os.PathLike)):
            trials_file, trials = os.fsdecode(trials), None
        else:
            if hasattr(trials, "to_numpy") and hasattr(trials, "columns"):
                trials = trials.to_numpy()  # a DataFrame: its rows, not its column names
            # A line's fields each, as [l.split() for l in open(...)] gives
            # them: a blank line ([]) is skipped, as the file's reader skips
            # it (three empty fields keep the lines' numbers), and a line of
            # other than 3 fields refused by its number, as the file's.
            rows = []
            for i, row in enumerate(trials):
                row = [str(f) for f in row]
                if not row:
                    row = ["", "", ""]
                elif len(row) != 3:
                    raise ValueError(f"trials:{i + 1}: {len(row)} fields, want 3 (target (1 or 0), enrolment, test; "
                                     "or enrolment, test, target or nontarget)")
                rows.append(row)
            trials = np.asarray(rows, dtype=str).reshape(-1, 3)
        arr, n = lent.arrays({"embeddings": embeddings, "ids": _ids(ids, "ids"), "trials": trials})
        out = loads(call_string(lib.ccs_set_trials, self._handle(), arr, n, options(trials_file=trials_file, unlabeled=unlabeled)))
        _warn(out["warnings"])
        return out["result"]

    @_keywords
    def coverage_check(self, test, *, resplits=1000, cal_fraction=0.5, seed=0, per_class=False):
        """The guarantee draw by draw, as ccs coverage-check -json: the
        set's geometry recalibrated (its alpha, mode and delta) on resplits
        random halvings of test — cal_fraction of its anchors calibrating,
        the rest held out —, the coverage's mean and spread, 5th percentile
        and share below 1 - alpha ("coverage_p05", "coverage_below_share"),
        each resplit's ("coverages"), class by class with
        per_class ("classes", each with its "name" for string labels; a
        class-conditional set's class whose calibration anchors are too
        few for its rank in every resplit has "whole_space", its 100%
        coverage saying nothing; with several labels a row, label by label:
        "labels", of the held-out positives sharing each label, with
        "label_names" where the labels have names), and "this_set", what
        this set's own threshold covers of test. A test bundle with
        blocks (Bundle.blocks) is halved block by block ("blocks"; no
        "band", and no guarantee for the resplits, but for one block or
        one block an anchor); "divided_share" is the share of anchors in
        the block a cut divides, on average, and a block larger than a
        side of the cut, divided in every resplit, is warned of. A dict,
        field for field the command's."""
        tb, close_test = _bundle_of(test, "test")
        try:
            # On a thread of its own with a cancel token: Ctrl-C stops the
            # resplits (a large test bundle's take minutes).
            p = c_void_p()
            try:
                _lib.call_interruptible(lib.ccs_set_coverage_check, self._handle(), tb._handle(),
                                        options(resplits=resplits, cal_fraction=cal_fraction, seed=seed, per_class=per_class),
                                        byref(p))
            except BaseException:
                _lib.take_string(p)
                raise
            out = loads(_lib.take_string(p))
        finally:
            if close_test:
                tb.close()
        _warn(out["warnings"])
        result = out["result"]
        if result.get("labels") and "label_names" not in result and getattr(tb, "label_names", None) is not None:
            result["label_names"] = list(tb.label_names)  # lists of labels: named as the lists named them
        return result

    @_keywords
    def contains(self, anchor, points, label=None):
        """Whether each point ((m, d), or (d,) for one) is inside the set
        around anchor ((d,) or (1, d)): np.ndarray of m bools. A
        class-conditional set needs the anchor's label: its integer label,
        or its class's name (a str, for a set calibrated on string labels),
        as ccs serve's /score takes them. A set calibrated on unit-norm
        embeddings (s.info["calibration"]["unit_norm"]) takes an anchor and points of norm
        1 ± 0.01 alone, ValueError otherwise: normalize them as the
        calibration's were, as scores and retrieve do."""
        if label is not None:
            label = self._class_label(label, "contains: label")
            with self._for_label(label, "contains: label") as one:  # a class it has, named as for_class names it
                one._warn_whole_space()  # every point inside, as /score warns
        lent = Lent()
        p = _lib.points(points, "points")
        m = _lib.rows_of(p)
        out = np.empty(m, dtype=np.bool_)
        call(lib.ccs_set_contains, self._handle(), lent.ref(_lib.points(anchor, "anchor"), "anchor"), lent.ref(p, "points"),
             0 if label is None else 1, 0 if label is None else label,
             out.ctypes.data_as(POINTER(c_uint8)), m)
        return out

    def _retrieve_classes(self, a, collection, limit, labels):
        """retrieve_many with labels=: each class's rows retrieved with its
        set (for_class), in the order of each class's first row."""
        m = len(a)
        rows = {}  # label → its rows
        if isinstance(labels, (str, bytes, int, float, np.generic)) or (isinstance(labels, np.ndarray) and labels.ndim == 0):
            one = self._class_label(labels.item() if isinstance(labels, np.ndarray) else labels, "retrieve_many: labels")
            if m:
                rows[one] = list(range(m))  # one label for every row
        else:
            labels = list(labels)  # a NumPy array's elements keep their types: np.int64, np.str_, np.bytes_
            if len(labels) != m:
                raise ValueError(f"retrieve_many: {len(labels)} labels for {m} anchors: want one a row (or one label for all)")
            for i, l in enumerate(labels):
                rows.setdefault(self._class_label(l, f"retrieve_many: labels[{i}]"), []).append(i)
        # Every class's set shares this set's geometry, and so one transform
        # of the collection, made for the whole batch by this set, as ccs
        # serve makes it: its threshold over all classes lets the transform
        # take the float32 product where a small class's threshold would
        # have it take the float64 one (10^5 x 384: 5.5-8.7 s, not 1.1-3.2 s).
        if m >= self._transform_min():
            try:
                collection.transform(self)
            except ValueError:
                pass  # another family, or over the memory: the plain scan, the same hits
        out, totals = [None] * m, [0] * m
        for l, idx in rows.items():
            with self._for_label(l, f"retrieve_many: labels[{idx[0]}]") as s:
                found, counts = s._retrieve_rows(a[idx], collection, limit)
                s._warn_whole_space()
                for k, i in enumerate(idx):
                    out[i], totals[i] = found[k], counts[k]
        self._warn_zero_anchors(a, totals, collection)
        return out

    def _class_label(self, x, where):
        """The integer label of the class x names (_label: an integer label,
        or a class's name, looked up among the set's classes), with where
        naming the argument in its errors."""
        v = _label(x, where)
        if isinstance(v, str):
            try:
                return self._label_named(v)
            except ValueError as e:
                raise ValueError(f"{where}: {e}") from None
        return v

    def _label_named(self, name):
        """The label of the class named name (ValueError, naming the
        set's classes, when there is none), as ccs serve reads "label":
        "name" (conformal.Set.LabelNamed)."""
        out = c_int64()
        call(lib.ccs_set_label_named, self._handle(), name.encode(), byref(out))
        return out.value

    @_keywords
    def scores(self, anchor, points):
        """The score of each point ((m, d), or (d,) for one) around anchor:
        np.ndarray of m float64; the point is inside when its score is at
        most the threshold."""
        lent = Lent()
        p = _lib.points(points, "points")
        m = _lib.rows_of(p)
        out = np.empty(m, dtype=np.float64)
        call(lib.ccs_set_scores, self._handle(), lent.ref(_lib.points(anchor, "anchor"), "anchor"), lent.ref(p, "points"),
             out.ctypes.data_as(POINTER(c_double)), m)
        return out

    @_keywords
    def for_class(self, label):
        """The set of one threshold that a class-conditional set is for
        anchors of class label (its integer label, or its class's name):
        that class's threshold, rank and n, its class in
        info["calibration"]["class"] — the threshold calibrating on the
        class's anchors alone gives. A set of one threshold takes no label
        (ValueError), nor does an unknown class."""
        return self._for_class(label, "for_class: label")

    def _for_class(self, label, where):
        """for_class, with where naming the label in its errors."""
        return self._for_label(self._class_label(label, where), where)

    def _for_label(self, label, where):
        """_for_class of an integer label already read (_class_label), so
        that a class's name is looked up once."""
        h = c_handle()
        try:
            call(lib.ccs_set_for_class, self._handle(), label, byref(h))
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        return Set._wrap(h.value)

    @_keywords
    def retrieve(self, anchor, collection, limit=None, label=None):
        """The items of collection inside the set around anchor, nearest
        first (at most limit): (ids, scores), np.ndarrays of int64 — or of
        str, for a collection with string ids — and float64: what ccs
        retrieve lists. collection: a Collection, a collection file's path,
        or an (n, d) array (ids: the row numbers). A class-conditional set
        needs the anchor's class, label= (its integer label or its class's
        name): the set is then that class's threshold's (for_class), as ccs
        retrieve -label; a set of one threshold takes none."""
        if label is not None:
            with self._for_class(label, "retrieve: label") as s:
                return s.retrieve(anchor, collection, limit)
        anchor = _lib.points(anchor, "anchor")
        lent = Lent()
        coll, rows, opened, keys = 0, None, None, None
        if isinstance(collection, Collection):
            coll, keys = collection._handle(), collection.keys
        elif isinstance(collection, (str, bytes, os.PathLike)):
            opened = Collection.load(collection)
            coll = opened._handle()
        else:
            rows = collection
        hits = _lib.Hits()
        try:
            if opened is not None:
                keys = opened.keys
            call(lib.ccs_set_retrieve, self._handle(), coll, lent.ref(rows, "collection"), None,
                 lent.ref(anchor, "anchor"), _limit(limit), byref(hits))
            collection_warnings = self._collection_warnings(coll, rows, lent)
        finally:
            if opened is not None:
                opened.close()
        try:
            found = _hits_of(hits, keys)
        finally:
            for p in (hits.ids, hits.rows, hits.scores):
                if p:
                    lib.ccs_free(p)
        self._warn_whole_space()
        _warn(collection_warnings)
        if anchor.size and not np.any(anchor):  # already an array (points, above)
            _warn([_zero_anchors("the anchor is all zeros", hits.total, len(collection) if isinstance(collection, Collection) else None,
                                 self.info)])
        return found

    @_keywords
    def retrieve_many(self, anchors, collection, limit=None, labels=None):
        """Each row of anchors ((m, d): a batch of queries, a Bundle's
        anchors) retrieved as retrieve retrieves one: a list of m (ids,
        scores), in the rows' order — ccs retrieve -anchor of an (m, d)
        file. A collection given as an array or a path is made or read
        once, not once a row; for 8 rows or more, a single-norm or
        ellipsoid set's collection is transformed first
        (Collection.transform), as ccs retrieve does. A class-conditional
        set needs each row's class: labels=, a sequence of m labels
        (integers, or class names), or one label for every row — ccs
        retrieve -anchor-labels, -label —; each class's rows are then
        retrieved together with its threshold (for_class). A Bundle's own
        labels are its rows' classes where labels= is not given, by their
        names where it has them (label_names: another bundling of the same
        embeddings numbers its classes otherwise), as ccs retrieve -anchor
        test.npz takes them."""
        if isinstance(anchors, Bundle) and labels is None and self.info.get("classes") and anchors.labels is not None:
            own = np.asarray(anchors.labels)
            named = anchors.label_names is not None and any(c.get("name") for c in self.info["classes"])
            labels = [anchors.label_names[l] for l in own.tolist()] if named and own.min(initial=0) >= 0 else own
        a = _lib.points(anchors.anchors if isinstance(anchors, Bundle) else anchors, "anchors")
        if a.ndim != 2:
            raise ValueError(f"retrieve_many: anchors of shape {a.shape}: want (m, d), one anchor a row (retrieve takes one)")
        if a.shape[1] != self.dim and a.shape[0] == self.dim:
            raise ValueError(f"retrieve_many: anchors of shape {a.shape}, the set has dimension {self.dim}: "
                             "transposed? Rows are embeddings: pass anchors.T")
        opened = None
        if not isinstance(collection, Collection):
            opened = Collection.load(collection) if isinstance(collection, (str, bytes, os.PathLike)) else Collection(collection)
            collection = opened
        try:
            _warn(self._collection_warnings(collection._handle(), None, Lent()))
            if labels is not None:
                return self._retrieve_classes(a, collection, limit, labels)
            if len(a) >= self._transform_min():
                try:
                    collection.transform(self)
                except ValueError:
                    pass  # another family, or over the memory: the plain scan, the same hits
            out, totals = self._retrieve_rows(a, collection, limit)
            self._warn_whole_space()
            self._warn_zero_anchors(a, totals, collection)
            return out
        finally:
            if opened is not None:
                opened.close()

    def _retrieve_rows(self, a, collection, limit):
        """One pass over the collection for every row of a (a chunk scored
        for each row while it is in cache): the same hits as retrieve on
        each row, without reading the collection a row at a time. The
        rows' (ids, scores), and each row's count of items inside."""
        m = len(a)
        if m == 0:
            return [], []
        hits = (_lib.Hits * m)()
        lent = Lent()
        try:
            try:
                _lib.call_interruptible(lib.ccs_set_retrieve_many, self._handle(), collection._handle(),
                                        lent.ref(a, "anchors"), _limit(limit), hits, m)  # Ctrl-C stops it
            except ValueError as e:
                raise ValueError(f"retrieve_many: {e}") from None
            keys = collection.keys
            out = []
            for i in range(m):
                out.append(_hits_of(hits[i], keys))
            return out, [hits[i].total for i in range(m)]
        finally:  # the hits the library made, whatever stopped the call (a Ctrl-C after it was done too)
            for h in hits[:m]:
                for p in (h.ids, h.rows, h.scores):
                    if p:
                        lib.ccs_free(p)

    def _warn_whole_space(self):
        """Warns, as ccs retrieve does on every use, that a set of threshold
        +Inf (a class too small for alpha, allow_infinite=True) is the whole
        space: every item of the collection is in it."""
        if self.threshold == float("inf"):
            _warn([w for w in self.warnings if "whole space" in w])

    def _collection_warnings(self, coll, rows, lent):
        """What a retrieval over the collection (a handle, or rows) warns of,
        as ccs retrieve does: rows not of unit norm beside a set calibrated
        on unit-norm embeddings (the guarantee does not speak of them)."""
        if not self._summary()["unit_norm"]:
            return []
        return loads(call_string(lib.ccs_set_collection_warnings, self._handle(), coll, lent.ref(rows, "collection")))

    def _warn_zero_anchors(self, a, totals, collection):
        """The warning of anchors that are all zeros, naming the first by its
        row of the whole batch a."""
        zero = np.flatnonzero(~np.any(a, axis=1))
        if len(zero):
            first = zero[0]
            _warn([_zero_anchors(f"{len(zero)} of {len(a)} anchors are all zeros (the first: anchors[{first}])",
                                 totals[first], len(collection), self.info)])

    @_keywords
    def ood(self, points, *, alpha_ood=0.05, delta=0.0, simultaneous=False, fdr=None):
        """The set's per-input OOD test on points ((m, d), or a Bundle's
        anchors), for a set
        calibrated with reference= and ood_cal=: a dict of score (the k-th
        nearest pool anchor's score over the threshold), p_value (conformal)
        and ood (p_value <= alpha_ood), each an np.ndarray of m; with fdr=Q,
        also flagged: the points Benjamini-Hochberg flags as one batch at
        false discovery rate Q, on the marginal p-values (with delta, whose
        p_value is adjusted, those are fdr_p_value). The numbers ccs
        serve's /ood answers."""
        lent = Lent()
        p = _lib.points(points.anchors if isinstance(points, Bundle) else points, "points")
        m = _lib.rows_of(p)
        if isinstance(alpha_ood, (int, float)) and 0.5 < alpha_ood < 1:  # ccs ood's warning (ood.Test.Warning)
            _warn([f"α_ood = {alpha_ood}: the test may flag up to {100 * alpha_ood:.3g}% of in-distribution inputs; "
                   "α_ood is the false-alarm rate it allows (0.05 flags at most 5%), not a confidence level"])
        score, pv = np.empty(m, dtype=np.float64), np.empty(m, dtype=np.float64)
        flag, bh = np.empty(m, dtype=np.bool_), np.empty(m, dtype=np.bool_)
        # With δ, p_value is adjusted: Benjamini-Hochberg ran on the marginal p-values, from the same call.
        marginal = np.empty(m, dtype=np.float64) if fdr and delta else None
        call(lib.ccs_set_ood, self._handle(), lent.ref(p, "points"),
             options(alpha_ood=alpha_ood, delta=delta, simultaneous=simultaneous, fdr=fdr or 0.0),
             score.ctypes.data_as(POINTER(c_double)), pv.ctypes.data_as(POINTER(c_double)),
             flag.ctypes.data_as(POINTER(c_uint8)), bh.ctypes.data_as(POINTER(c_uint8)),
             marginal.ctypes.data_as(POINTER(c_double)) if marginal is not None else None, m)
        out = {"score": score, "p_value": pv, "ood": flag}
        tie = call_string(lib.ccs_set_ood_tie, self._handle(),
                          options(alpha_ood=alpha_ood, delta=delta, simultaneous=simultaneous))
        if tie:  # the calibration's scores tie where the test flags: it flags far fewer than alpha_ood
            _warn([tie])
        if m:  # rows of the pool, or inputs the OOD test was calibrated on: said, as ccs serve's /ood says them
            known = call_string(lib.ccs_set_ood_known, self._handle(), lent.ref(p, "points"))
            if known:
                _warn([known])
        if fdr:
            out["flagged"] = np.flatnonzero(bh)
            if marginal is not None:
                out["fdr_p_value"] = marginal
        return out

    def __repr__(self):
        if not self._h:
            return "<ccs.Set (closed)>"
        if not self.calibrated:
            return f"<ccs.Set {self.geometry} d={self.dim} (uncalibrated)>"
        s = self._summary()
        head = f"<ccs.Set {self.geometry} d={self.dim} alpha={self.alpha}"
        if s.get("classes"):  # its classes' thresholds decide, not the one over all classes
            delta = f" delta={s['delta']}" if s.get("delta") else ""
            return (f"{head} class-conditional{delta} classes={s['classes']} "
                    f"thresholds={s['lowest']:.6g}..{s['highest']:.6g}>")
        mode = {"pac": f" pac delta={s.get('delta')}", "pooled": " pooled (approximate)"}.get(s.get("mode"), "")
        return f"{head}{mode} threshold={self.threshold:.6g}>"


def _zero_anchors(who, total, n, info):
    """ccs retrieve's warning of anchors that are all zeros (an encoder's
    output for an input it failed on), whose sets hold total items (of n):
    the items nearest the origin, or c for a set (info, its file) centred
    at anchor + c."""
    of = f" of the collection's {n} items" if n is not None else ""
    centre = "the origin"
    if info.get("shift"):
        centre = (f"c, the set's shift (its sets are centred at anchor + c, "
                  f"‖c‖ = {float(np.linalg.norm(np.asarray(info['shift'], dtype=np.float64))):.3g})")
    return (f"{who}: what an encoder gives for an input it failed on (an unreadable image, an empty text); "
            f"its set is answered like any other, the items nearest {centre} ({total}{of}), "
            "which says nothing of the input: embed it again, or leave it out")


def _hits_of(hits, keys):
    """A retrieval's (ids, scores) from the library's hits (which the caller
    frees): ids are keys of the hits' rows for a collection with string ids."""
    k = hits.count
    ids, rows, scores = np.empty(k, dtype=np.int64), np.empty(k, dtype=np.int64), np.empty(k, dtype=np.float64)
    if k:
        ids[:] = np.ctypeslib.as_array(hits.ids, (k,))
        rows[:] = np.ctypeslib.as_array(hits.rows, (k,))
        scores[:] = np.ctypeslib.as_array(hits.scores, (k,))
    if keys is not None:
        return keys[rows], scores
    return ids, scores


def _limit(limit):
    """retrieve's limit as the library takes it: 0 for None (all)."""
    if limit is None:
        return 0
    try:
        if isinstance(limit, (bool, np.bool_)):
            raise TypeError
        n = operator.index(limit)  # an int, not "5", 2.5 or True
    except TypeError:
        raise TypeError(f"retrieve: limit: got {type(limit).__name__}, want an int ≥ 1 or None for all") from None
    if n < 1:
        raise ValueError(f"retrieve: limit={n}: want ≥ 1, or None for all")
    return n


@_keywords
def serve(sets, collections=None, *, addr="127.0.0.1:8080", auth_tokens=None, metrics="token", insecure=False,
          tls_cert=None, tls_key=None, max_body=0, max_points=0, max_results=0, grace=30.0, monitor_seed=None):
    """Serves sets over HTTP from this process, as ccs serve does: the same
    endpoints (/v1/sets/NAME/score, /ood, /retrieve, …; docs/serve.md), on
    the library's threads, while Python goes on.

    sets: {name: Set or set file}; collections: {name: Collection,
    collection file (.npz, .npy, Parquet, Arrow, a dataset directory), an
    (n, d) array, or (rows, ids) — ids integers or strings}. A Set or arrays given in memory
    are saved to a private temporary directory first, removed on close.
    addr: host:port ("127.0.0.1:0" picks a free port; Server.url says
    which). Beyond loopback the server needs auth_tokens (a tokens file,
    docs/security.md) unless insecure=True. Zero limits take ccs serve's
    defaults; grace: seconds requests in flight may take on close;
    monitor_seed: the OOD drift monitors' smoothing, as -monitor-seed
    (None: drawn at start, so that no run repeats another's draws).

    Returns a Server, listening: s.url, s.reload(), s.close() (drains, then
    stops; also at the end of a with block), s.wait() (blocks until the
    server stops; Ctrl-C closes it)."""
    tmp = None

    def private(name):
        nonlocal tmp
        if tmp is None:
            tmp = tempfile.mkdtemp(prefix="ccs-serve-")
        return os.path.join(tmp, name)

    try:
        if isinstance(sets, dict) and not sets:
            raise ValueError("serve: sets: an empty dict: give at least one set, {name: Set or set file}")
        if auth_tokens is not None and not isinstance(auth_tokens, (str, bytes, os.PathLike)):
            # Never echoed: it may hold the tokens themselves.
            raise TypeError(f"serve: auth_tokens: got a {type(auth_tokens).__name__}: want the path of a tokens file "
                            "(NAME:TOKEN lines, docs/security.md)")
        if not isinstance(sets, dict):
            raise TypeError(f"serve: sets: want a dict of names to Sets or set files, got {sets!r:.80}")
        files = {}
        shown = {}  # a private file's path: what the caller gave, for messages
        for i, (name, v) in enumerate(sets.items()):
            if isinstance(v, Set):
                path = private(f"set-{i}.json")
                v.save(path)
                files[name], shown[path] = path, f"sets[{name!r}]"
            elif isinstance(v, (str, bytes, os.PathLike)):
                files[name] = os.fsdecode(v)
            else:
                raise TypeError(f"serve: sets[{name!r}]: want a ccs.Set or a set file, got {type(v).__name__}")
        dbs = {}
        for i, (name, v) in enumerate((collections or {}).items()):
            if isinstance(v, (str, bytes, os.PathLike)):
                dbs[name] = os.fsdecode(v)
                continue
            if not isinstance(v, Collection):
                rows, ids = v if isinstance(v, tuple) and len(v) == 2 else (v, None)
                if isinstance(rows, (str, bytes, os.PathLike, dict)) or np.ndim(_lib.host(rows)) == 0:
                    raise TypeError(f"serve: collections[{name!r}]: want a ccs.Collection, a collection file, an (n, d) "
                                    f"array or (rows, ids), got {type(v).__name__}")
                try:
                    v = Collection(rows, ids)
                except ValueError as e:
                    raise ValueError(f"serve: collections[{name!r}]: {e}") from None
            path = private(f"collection-{i}.parquet")
            v.save(path)
            dbs[name], shown[path] = path, f"collections[{name!r}]"
        opts = options(sets=files, collections=dbs, addr=addr, auth_tokens=auth_tokens and os.fsdecode(auth_tokens),
                       metrics=metrics, insecure=insecure, tls_cert=tls_cert and os.fsdecode(tls_cert),
                       tls_key=tls_key and os.fsdecode(tls_key), max_body=max_body, max_points=max_points,
                       max_results=max_results, grace=grace, monitor_seed=monitor_seed)
        h = c_handle()
        try:
            info = call_string(lib.ccs_serve_start, opts, byref(h))
        except (ValueError, OSError) as e:
            msg = str(e)
            for path, what in shown.items():  # set "a" (/tmp/ccs-serve-…/set-0.json): … names it once
                msg = msg.replace(f" ({path})", "").replace(path, what)
            if msg == str(e):
                raise
            raise type(e)(msg) from None
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    srv = Server._wrap(h.value)
    srv._tmp = tmp
    made = json.loads(info)
    _warn(made["warnings"])
    srv.url, srv.sets, srv.collections = made["url"], tuple(sets), tuple(collections or ())
    return srv


class Server(_Handle):
    """A server ccs.serve started, listening at url (http://host:port, or
    https:// with tls_cert) for sets (their names) and collections."""

    _what = "server"
    _tmp = None
    url = None
    sets = ()
    collections = ()

    def reload(self):
        """Reads the sets, collections, tokens and certificate again, as
        ccs serve does on SIGHUP: requests go on being served meanwhile, and
        a file that fails to load leaves the old generation serving (the
        error is raised)."""
        call(lib.ccs_server_reload, self._handle())

    def wait(self):
        """Blocks until the server stops (the GIL released in slices of
        100 ms); raises the error it stopped with. Ctrl-C closes it and
        is re-raised."""
        h = self._handle()
        finished = c_int()
        try:
            while not finished.value and self._h:
                call(lib.ccs_job_wait, h, 100, byref(finished))
            if self._h:
                call(lib.ccs_job_check, h)
        except KeyboardInterrupt:
            self.close()
            raise
        except ValueError:
            if self._h:
                raise  # else closed by another thread meanwhile: stopped as asked

    def close(self):
        """Drains and stops the server (requests in flight finish, within
        grace), waits until it has, and releases it; its port is then
        free."""
        self._release(drain=True)

    def __del__(self):
        # A finalizer does not wait for a drain: closing the handle cancels
        # the server, which stops on its own.
        try:
            self._release(drain=False)
        except Exception:
            pass

    def _release(self, drain):
        """Releases the server's handle (first waiting for its drain, with
        drain) and removes the private directory of what it was given in
        memory."""
        with _lib._close_lock:
            h, self._h = self._h, 0
        try:
            if h and drain:
                call(lib.ccs_job_cancel, h)
                finished = c_int()
                while not finished.value:
                    call(lib.ccs_job_wait, h, 100, byref(finished))
        finally:
            if h:
                _lib.close(h)
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None

    def __repr__(self):
        return f"<ccs.Server {self.url} sets={list(self.sets)}>" if self._h else "<ccs.Server closed>"


class ServiceError(ValueError):
    """An error answer of a ccs service (ccs serve, ccs.serve) to a Client:
    status (the HTTP status), code (the service's error code, such as
    "invalid" or "unauthorized"), field (the part of the request it names,
    in the call's terms: "points[2][7]", "anchor", "label", "collection",
    or None) and the service's message."""

    def __init__(self, status, code, field, message):
        super().__init__(f"{status} {code}" + (f" ({field})" if field else "") + f": {message}")
        self.status, self.code, self.field, self.message = status, code, field, message


# _TRANSPOSED is what a message that suspects a transposed array ends with,
# as the engine's (bundle.Transposed).
_TRANSPOSED = "transposed? Rows are embeddings: give x.T (np.save(path, x.T) for a file)"

# _BODY_LIMIT is ccs serve's -max-body default (ccs.serve's max_body=0):
# the bytes of a request body it reads.
_BODY_LIMIT = 32 << 20

# _SCORE_POINTS and _SCORE_BYTES bound one of Client.score's requests:
# half a service's default limits (ccs serve -max-points, -max-body).
_SCORE_POINTS, _SCORE_BYTES = 50_000, 16 << 20


class Client:
    """A client of a ccs service at url (ccs serve, or a Server of
    ccs.serve), with the Set methods' answers: client.score(name, anchor,
    points), client.retrieve(name, anchor, collection), client.ood(name,
    points) — points sent as .npy bodies (float32, as the service holds
    them). token: a bearer token (docs/security.md; white space around it,
    as a file's line has, is stripped); timeout: seconds a request may
    take. An error answer raises ServiceError with the service's message
    and the part of the call it names; no answer at all (nothing listening,
    a closed server, a connection cut while sending) raises
    ConnectionError, a timeout TimeoutError (both OSErrors). The service's
    warnings are warned (CCSWarning), as the Set methods warn them.
    Standard library only (urllib): no requests, no library call.

        c = ccs.Client("http://127.0.0.1:8080", token="…")
        c.sets()                          # GET /v1/sets: each set's name, geometry, α, …
        c.score("ball", anchor, points)   # {"score", "inside", "threshold"}
        c.retrieve("ball", anchor, "db", limit=10)   # (ids, scores), nearest first
        c.ood("ball", points, alpha_ood=0.05, fdr=0.1)
    """

    def __init__(self, url, token=None, timeout=60.0):
        if isinstance(url, Server):
            url = url.url
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"Client: url: {url!r:.80}: want the service's address, http://host:port (or https://)")
        if token is not None:
            if not isinstance(token, str):
                raise TypeError(f"Client: token: got a {type(token).__name__}, want the token as a str")
            token = token.strip()
            if not token or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in token):
                # Never echoed: a token is a secret.
                raise ValueError("Client: token: empty, or holding white space or a control character inside "
                                 "(two lines of a file read whole?): give the one token")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer, np.floating)):
            raise TypeError(f"Client: timeout: got a {type(timeout).__name__}, want seconds, a number > 0")
        if not timeout > 0:
            raise ValueError(f"Client: timeout: {timeout!r}: want seconds, a number > 0")
        self.url, self._token, self.timeout = url.rstrip("/"), token, float(timeout)
        self.last_retrieve = None
        self._dims = {}

    def __repr__(self):
        return f"<ccs.Client {self.url}>"

    def _request(self, method, path, body=None, npy=False, query=None):
        import socket
        import urllib.error
        import urllib.parse
        import urllib.request
        url = self.url + path
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        headers = {}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        data = None
        if body is not None:
            if npy:
                buf = io.BytesIO()
                np.save(buf, body, allow_pickle=False)
                data, headers["Content-Type"] = buf.getvalue(), "application/x-npy"
            else:
                data, headers["Content-Type"] = json.dumps(body, allow_nan=False).encode(), "application/json"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return loads(r.read())
        except urllib.error.HTTPError as e:
            with e:
                raw = e.read()
            try:
                err = json.loads(raw)["error"]
                code, field, msg = err.get("code"), err.get("field"), err.get("message")
            except (ValueError, KeyError, TypeError):
                code, field, msg = "http", None, raw.decode("utf-8", "replace")[:200] or e.reason
            raise ServiceError(e.code, code, field, msg) from None
        except (urllib.error.URLError, ConnectionError, socket.timeout) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise TimeoutError(f"{method} {path}: no answer from {self.url} within {self.timeout:g} s (timeout=)") from None
            if data is not None and len(data) > 1 << 18 and (isinstance(reason, (ConnectionResetError, BrokenPipeError, ssl.SSLEOFError))
                                                             or isinstance(reason, ssl.SSLError) and "EOF" in str(reason)):
                # The service answers 413 at once for a body over its limit
                # and closes; urllib, still sending, sees the cut instead.
                per = 4 * body.shape[-1] if npy and getattr(body, "ndim", 0) == 2 else 0
                fits = f", about {_BODY_LIMIT // per} points of dimension {body.shape[-1]}" if per else ""
                raise ConnectionError(f"{method} {path}: the service closed the connection while the request's "
                                      f"{len(data) / 2**20:.1f} MiB were sent: most likely over its body limit "
                                      f"(ccs serve -max-body, ccs.serve max_body=: 32 MiB by default{fits}); "
                                      "send fewer points a request") from None
            if "WRONG_VERSION_NUMBER" in str(reason) or "wrong version number" in str(reason):
                # TLS spoken to a service that speaks plain HTTP.
                raise ConnectionError(f"{method} {path}: {self.url} answers plain HTTP, not TLS ({reason}): give the "
                                      "url as http://, or serve with TLS (ccs serve -tls-cert/-tls-key)") from None
            raise ConnectionError(f"{method} {path}: no answer from {self.url} ({reason}): is the service running? "
                                  "(a closed ccs.serve Server answers nothing)") from None

    def _dim(self, name, fresh=False):
        """The served set's dimension (GET /v1/sets, asked once, and again
        when fresh), or None for a name the service does not list (its
        answer says so)."""
        if fresh or name not in self._dims:
            self._dims = {x["name"]: x for x in self.sets()}
        x = self._dims.get(name)
        return x["dim"] if x else None

    def _rows(self, x, name, set_name, call):
        """x as float32 rows (m, d) for an .npy body, a single point (d,) as
        one row, checked against the served set's dimension as the Set
        methods check it."""
        a = _lib.points(x.anchors if isinstance(x, Bundle) else x, name)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2:
            raise ValueError(f"{call}: {name}: shape {a.shape}: want (m, d) points, or one point (d,)")
        if a.dtype.kind != "f":
            raise TypeError(f"{call}: {name}: dtype {a.dtype}: want floating-point embeddings")
        d = self._dim(set_name)
        if d is not None and a.shape[1] != d:
            d = self._dim(set_name, fresh=True)  # the service may have reloaded the set since it was listed
        if d is not None and a.shape[1] != d:
            hint = f" (its {d} rows are of the set's dimension: {_TRANSPOSED})" if a.shape[0] == d else ""
            raise ValueError(f"{call}: {name}: dimension {a.shape[1]} (shape {a.shape}); set {set_name!r} has "
                             f"dimension {d}{hint}")
        return np.ascontiguousarray(a, dtype=np.float32)

    def sets(self):
        """GET /v1/sets: each served set's description (a list of dicts:
        name, geometry, dim, alpha, threshold, guarantee, …)."""
        return self._request("GET", "/v1/sets")["sets"]

    def ready(self):
        """Whether the service answers /readyz with 200 (loaded, not
        draining); False where it answers otherwise or not at all."""
        try:
            return self._request("GET", "/readyz").get("status") == "ready"
        except (ServiceError, OSError):
            return False

    def _threshold(self, name, label):
        """The threshold the listing gives for the set (for a label, its
        class's), or NaN: what an empty call answers without scoring. The
        listing is asked again: a reload may have changed the threshold."""
        self._dim(name, fresh=True)
        x = self._dims.get(name) or {}
        if label is None:
            return x.get("threshold", float("nan"))
        for c in x.get("classes") or []:
            if label in (c.get("label"), c.get("name")):
                return c["threshold"]
        return float("nan")

    def score(self, name, anchor, points, label=None):
        """POST /v1/sets/NAME/score: {"score": φ(anchor − point) of each
        point (np.ndarray of float64), "inside": score ≤ threshold (bool),
        "threshold"} — Set.scores and Set.contains on the service; for a
        class-conditional set label= (the anchor's integer label or its
        class's name), the answer's "label" and "class" too. No points, (0,
        d): empty arrays, as the Set methods answer, without scoring (the
        threshold from the listing, asked again). Many points go in requests
        of at most 16 MiB and 50 000 points each (a service's default limits
        are 32 MiB and 100 000), their answers joined in order — all of one
        set file: a reload with another file between them makes the call
        start again (three tries, then RuntimeError). The answer's "set",
        "generation" and "checksum" (the served set file's, GET /v1/sets'
        "checksum") say which set answered."""
        if label is not None:
            label = _label(label, "score: label")
        a, p = self._rows(anchor, "anchor", name, "score"), self._rows(points, "points", name, "score")
        if len(a) != 1:
            raise ValueError(f"score: anchor: {len(a)} rows: want one anchor, (d,) or (1, d)")
        if a.shape[1] != p.shape[1]:
            raise ValueError(f"score: the anchor has {a.shape[1]} dimensions, the points {p.shape[1]}")
        if len(p) == 0:
            return {"score": np.empty(0), "inside": np.empty(0, dtype=np.bool_), "threshold": self._threshold(name, label)}
        # The body's dtype is the anchor's and the points' together (a
        # float64 anchor widens float32 points).
        per = max(1, min(_SCORE_POINTS, _SCORE_BYTES // (np.result_type(a, p).itemsize * p.shape[1]) - 1))
        for _ in range(3):
            scores, inside, warned, files = [], [], [], set()
            for lo in range(0, len(p), per):
                try:
                    out = self._request("POST", f"/v1/sets/{_quote(name)}/score", np.vstack([a, p[lo:lo + per]]), npy=True,
                                        query={"label": label})
                except ServiceError as e:
                    raise _in_call_terms(e, offset=lo) from None  # a later request's points numbered as the call's
                # The set file that answered: a reload between two of the
                # call's requests would join two sets' answers as one.
                files.add(out.get("checksum") or out.get("generation"))
                if len(files) > 1:
                    break
                warned += [w for w in out.get("warnings") or [] if w not in warned]
                scores.append(np.asarray(out["scores"], dtype=np.float64))
                inside.append(np.asarray(out["inside"], dtype=np.bool_))
            if len(files) == 1:
                break
        else:
            raise RuntimeError(f"score: set {name!r} was reloaded with another set file while each of 3 tries of the "
                               f"call's {-(-len(p) // per)} requests was answered: their answers would mix two sets' "
                               "thresholds; call again once the service is stable, or send fewer points a call")
        _warn(warned)
        got = {"score": np.concatenate(scores), "inside": np.concatenate(inside), "threshold": out["threshold"]}
        got.update({k: out[k] for k in ("label", "class", "set", "generation", "checksum") if k in out})
        return got

    def retrieve(self, name, anchor, collection, limit=None, label=None):
        """POST /v1/sets/NAME/retrieve: the items of the served collection
        (its name) inside the set around anchor, nearest first (at most
        limit): (ids, scores), as Set.retrieve — the ids str for a
        collection with string ids. The answer's total (every item inside),
        truncated, threshold (and a class set's label and class), and which
        set answered (set, generation, checksum) are in the client's
        last_retrieve."""
        if label is not None:
            label = _label(label, "retrieve: label")
        if not isinstance(collection, str):
            raise TypeError(f"retrieve: collection: want the served collection's name, got {type(collection).__name__}")
        a = self._rows(anchor, "anchor", name, "retrieve")
        if len(a) != 1:
            raise ValueError(f"retrieve: anchor: {len(a)} rows: want one anchor, (d,) or (1, d)")
        try:
            out = self._request("POST", f"/v1/sets/{_quote(name)}/retrieve", a, npy=True,
                                query={"collection": collection, "limit": None if limit is None else _limit(limit), "label": label})
        except ServiceError as e:
            raise _in_call_terms(e, anchor_only=True) from None
        _warn(out.get("warnings") or [])
        hits = out["hits"]
        self.last_retrieve = {k: out[k] for k in ("total", "truncated", "threshold", "label", "class", "set", "generation", "checksum")
                              if k in out}
        if out.get("truncated") and limit is None:
            # All asked for, fewer answered: the service's own cap.
            _warn([f"retrieve: the service answered {len(hits)} of the {out.get('total')} items inside the set: its "
                   "limit on a retrieval's hits (ccs serve -max-results, ccs.serve max_results=); give limit= to "
                   "ask for fewer, nearest first, or raise the service's limit"])
        if hits and "key" in hits[0]:
            ids = np.array([h["key"] for h in hits], dtype=str)
        else:
            ids = np.array([h["id"] for h in hits], dtype=np.int64)
        return ids, np.array([h["score"] for h in hits], dtype=np.float64)

    def ood(self, name, points, alpha_ood=None, delta=None, fdr=None):
        """POST /v1/sets/NAME/ood: the set's per-input OOD test on points,
        as Set.ood answers it: {"score", "p_value", "ood"} (np.ndarrays),
        with fdr also "flagged" (and with delta "fdr_p_value"), and the
        drift "monitor" after these points, and which set answered ("set",
        "generation", "checksum": the served set file's). None: the
        service's defaults. No points: empty arrays, without a request (the
        monitor None)."""
        num = {}
        for k, v in (("alpha_ood", alpha_ood), ("delta", delta), ("fdr", fdr)):
            # As Set.ood takes them: a number, a NumPy one or a 0-d array
            # (a str went to the service, which parsed it).
            if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iuf":
                v = _lib._plain(k, v)
            if v is not None and (isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating))):
                raise TypeError(f"ood: {k}: got a {type(v).__name__}, want a number")
            num[k] = _lib._plain(k, v) if v is not None else None
        alpha_ood, delta, fdr = num["alpha_ood"], num["delta"], num["fdr"]
        p = self._rows(points, "points", name, "ood")
        if len(p) == 0:
            got = {"score": np.empty(0), "p_value": np.empty(0), "ood": np.empty(0, dtype=np.bool_)}
            if fdr:
                got["flagged"] = np.empty(0, dtype=np.int64)
            got["monitor"] = None
            return got
        try:
            out = self._request("POST", f"/v1/sets/{_quote(name)}/ood", p, npy=True,
                                query={"alpha_ood": alpha_ood, "delta": delta, "fdr": fdr})
        except ServiceError as e:
            raise _in_call_terms(e, points_only=True) from None
        if out.get("warning"):
            _warn([out["warning"]])
        res = out["results"]
        got = {"score": np.asarray(out["scores"], dtype=np.float64),
               "p_value": np.array([r["p_value"] for r in res], dtype=np.float64),
               "ood": np.array([r["ood"] for r in res], dtype=np.bool_)}
        if "flagged" in out:
            got["flagged"] = np.asarray(out["flagged"], dtype=np.int64)
        if "fdr_p_values" in out:
            got["fdr_p_value"] = np.asarray(out["fdr_p_values"], dtype=np.float64)
        got["monitor"] = out.get("monitor")
        got.update({k: out[k] for k in ("set", "generation", "checksum") if k in out})
        return got


def _in_call_terms(e, anchor_only=False, points_only=False, offset=0):
    """A ServiceError about an .npy body, named in the call's terms: score's
    body is the anchor, then the points (body[3][7] is points[2][7]; of a
    request of the call's points from offset on, points[offset + 2][7]);
    retrieve's the anchor, ood's the points."""
    import re
    m = re.fullmatch(r"body(?:\[(\d+)\])?(.*)", e.field or "")
    if not m:
        return e
    i, rest = m.group(1), m.group(2)
    if anchor_only:
        field = "anchor" + rest if i is None or i == "0" else f"anchor[{i}]{rest}"
    elif points_only:
        field = "points" + (f"[{i}]" if i is not None else "") + rest
    elif i is None:
        field = "anchor, points"
    elif i == "0":
        field = "anchor" + rest
    else:
        field = f"points[{int(i) - 1 + offset}]{rest}"
    return ServiceError(e.status, e.code, field, e.message)


def _quote(name):
    """A set's name as a path segment."""
    import urllib.parse
    return urllib.parse.quote(str(name), safe="")


@_keywords
def threads(n=None):
    """The number of threads the engine runs its work on (Go's
    GOMAXPROCS: by default the cores this process may use, its CPU
    affinity and cgroup limits counted); with n, sets it first, as
    torch.set_num_threads does, for every call that starts afterwards.
    Results do not depend on it: the same seed gives the same numbers on
    any number of threads. More than the CPUs this process may use is
    lowered to those, with a warning: more threads than cores only slow
    the work (a trial's fit: 4.5 s at 2 threads on 2 cores, 10.2 s at
    64)."""
    now = c_int64()
    if n is not None:
        if isinstance(n, bool):
            raise TypeError(f"threads: n: got a bool ({n!r}), want an int")
        try:
            n = operator.index(n)
        except TypeError:
            raise TypeError(f"threads: n: got a {type(n).__name__} ({n!r}), want an int") from None
        if n < 1:
            raise ValueError(f"threads: n={n}: want at least 1 (None: ask)")
    call(lib.ccs_threads, 0 if n is None else n, byref(now))
    if n is not None and now.value < n:
        _warn([f"threads({n}): this process may use {now.value} CPUs: running {now.value} threads (more threads than "
               "cores only slow the work; the numbers are the same on any number)"])
    return now.value


def version():
    """The package, the library and the engine: package, abi, library (the
    file loaded), and ccs version -json's fields (module, version,
    revision, go, platform, kernels, blas)."""
    v = loads(call_string(lib.ccs_version))
    return {"package": __version__, "library": lib.path, **v}
