"""Arrays in every form the package takes, and bad input: a Python
exception with the command line's message, never a crash."""

import ctypes
import ctypes.util
import json
import os
import re
import tempfile
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ccs
from ccs import _lib
from conftest import CLI, child_env


def gauss(seed, n=200, k=4, d=5, dtype=np.float64):
    """A bundle's arrays: anchors ~ N(0, I), positives at spread 0.5,
    negatives at spread 1.5 (as ccs's sim.Gauss)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, d))
    p = a[:, None, :] + 0.5 * rng.normal(size=(n, k, d))
    q = a[:, None, :] + 1.5 * rng.normal(size=(n, k, d))
    return a.astype(dtype), p.astype(dtype), q.astype(dtype)


class Tensor:
    """What a PyTorch tensor looks like to NumPy: an object with __array__
    (the package takes tensor.detach().cpu().numpy(), or the tensor)."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None):
        return self.a if dtype is None else self.a.astype(dtype)


class DeviceTensor:
    """What the package sees of a PyTorch tensor that NumPy cannot take as
    it is: on a GPU, or with a gradient (numpy() raises then, as PyTorch's
    does), or of bfloat16, which NumPy lacks. Its module is "torch"."""

    def __init__(self, a, device="cuda:0", requires_grad=True, dtype=None):
        self.a, self.device, self.requires_grad = a, device, requires_grad
        self.dtype = dtype or f"torch.{a.dtype}"

    def detach(self):
        return DeviceTensor(self.a, self.device, False, self.dtype)

    def float(self):
        return DeviceTensor(self.a.astype(np.float32), self.device, self.requires_grad, "torch.float32")

    def cpu(self):
        return DeviceTensor(self.a, "cpu", self.requires_grad, self.dtype)

    def numpy(self):
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self.device != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() first.")
        if self.dtype == "torch.bfloat16":
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self.a

    def __array__(self, dtype=None):
        return self.numpy()  # as PyTorch's: the same errors


DeviceTensor.__module__ = "torch"


def test_tensors_on_a_device():
    # A GPU tensor with a gradient, and a bfloat16 one, go as they are:
    # the same bundles, memberships and server answers as their arrays.
    a, p, q = gauss(4)
    labels = np.arange(len(a)) % 3
    want = ccs.bundle(a, labels, k=3, seed=1)
    got = ccs.bundle(DeviceTensor(a), DeviceTensor(labels, requires_grad=False), k=3, seed=1)
    for name, b in want.items():
        assert np.array_equal(got[name].anchors, b.anchors) and np.array_equal(got[name].positive_index, b.positive_index), name
    s = ccs.calibrate("ball", ccs.Bundle(a, p, q))
    pts = q[:, 0, :]
    assert np.array_equal(s.contains(DeviceTensor(a[2]), DeviceTensor(pts)), s.contains(a[2], pts))
    assert np.array_equal(s.scores(a[2], DeviceTensor(pts, dtype="torch.bfloat16")), s.scores(a[2], pts.astype(np.float32)))
    ids, _ = s.retrieve(DeviceTensor(a[2]), ccs.Collection(DeviceTensor(pts)))
    assert np.array_equal(ids, s.retrieve(a[2], ccs.Collection(pts))[0])

    # A wrapper of PyTorch's shape from another module (detach, cpu,
    # numpy, and no __array__) goes as a tensor does.
    class Wrapped:
        def __init__(self, a):
            self.a = a

        def detach(self):
            return self

        def cpu(self):
            return self

        def numpy(self):
            return self.a

    assert np.array_equal(ccs.bundle(Wrapped(a), labels, k=3, seed=1)["fit"].anchors, want["fit"].anchors)


def cli_error(*args):
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 1, r
    return r.stderr.strip().removeprefix("ccs: ")


def test_float64_round_trip_equals_the_command(tmp_path):
    # PyTorch-style: float64 arrays, saved with np.savez for the command,
    # given as tensors to the package: the same conversions, the same set.
    a, p, q = gauss(1)
    np.savez(tmp_path / "cal.npz", anchors=a, positives=p, negatives=q)
    subprocess.run([CLI, "calibrate", "-geometry", "ellipsoid", "-cal", tmp_path / "cal.npz", "-seed", "4",
                    "-out", tmp_path / "cli.json"], check=True, capture_output=True)
    b = ccs.Bundle(Tensor(a), positives=Tensor(p), negatives=Tensor(q))
    assert b.anchors.dtype == np.float32 and np.array_equal(b.anchors, a.astype(np.float32))
    assert b.converted == [f"{n}: float64 → float32" for n in ("anchors", "negatives", "positives")]
    assert np.array_equal(b.positives, p.astype(np.float32))
    ccs.calibrate("ellipsoid", b, seed=4).save(tmp_path / "py.json")
    assert open(tmp_path / "py.json").read() == open(tmp_path / "cli.json").read()
    loaded = ccs.Bundle.load(tmp_path / "cal.npz")
    assert loaded.converted == [f"{n}: float64 → float32" for n in ("anchors", "negatives", "positives")]
    assert loaded.path == str(tmp_path / "cal.npz")
    # ccs.bundle of float64 (and float16) embeddings says so on every split,
    # as ccs bundle notes the file's conversion; float32 converts nothing.
    x, y = np.vstack([a, p[:, 0]]), np.arange(2 * len(a)) % 3
    for dtype, want in ((np.float64, ["embeddings: float64 → float32"]), (np.float16, ["embeddings: float16 → float32"]), (np.float32, [])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ccs.CCSWarning)
            splits = ccs.bundle(x.astype(dtype), y, k=3, seed=0)
        assert all(b.converted == want for b in splits.values()), dtype


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_dtypes_and_orders(dtype, order, tmp_path):
    a, p, q = gauss(2, dtype=dtype)
    a, p, q = (np.asarray(x, order=order) for x in (a, p, q))
    np.savez(tmp_path / "b.npz", anchors=a, positives=p, negatives=q)
    want = ccs.Bundle.load(tmp_path / "b.npz")  # the .npz reader's conversions
    got = ccs.Bundle(a, p, q)
    for name in ("anchors", "positives", "negatives"):
        assert np.array_equal(got.array(name), want.array(name)), name
    assert np.array_equal(got.anchors, a.astype(np.float32))
    s = ccs.calibrate("ball", got)
    pts = p[:, 0, :]
    ref = s.contains(a[0].astype(np.float32), np.ascontiguousarray(pts, dtype=np.float32))
    assert np.array_equal(s.contains(a[0], pts), ref)
    assert np.array_equal(s.scores(a[0], pts), s.scores(a[0].astype(np.float32), pts.astype(np.float32)))


def test_lists_views_and_single_points():
    a, p, q = gauss(3, dtype=np.float32)
    s = ccs.calibrate("ball", ccs.Bundle(a, p, q))
    pts = q[:, 1, :]
    want = s.contains(a[5], pts)
    assert np.array_equal(s.contains(a[5].tolist(), pts.tolist()), want)
    assert np.array_equal(s.contains(a[5:6], pts), want)  # (1, d) anchor
    strided = np.repeat(pts, 2, axis=0)[::2]  # not contiguous
    assert not strided.flags.c_contiguous and np.array_equal(s.contains(a[5], strided), want)
    assert np.array_equal(s.contains(a[5], pts.T.copy().T), want)  # Fortran order
    assert np.array_equal(s.contains(a[5], pts.astype(">f4")), want)  # big-endian
    unaligned = np.frombuffer(b"\0" + pts.tobytes(), dtype=np.float32, offset=1).reshape(pts.shape)
    assert not unaligned.flags.aligned and np.array_equal(s.contains(a[5], unaligned), want)
    one = s.contains(a[5], pts[3])
    assert one.shape == (1,) and one[0] == want[3]
    assert s.contains(a[5], np.empty((0, 5), np.float32)).shape == (0,)
    assert s.contains(a[5], a[5])[0]  # the anchor is inside its own set


def test_integer_points_widened():
    """Integer anchors and points ([0, 1, 2], as ccs serve takes JSON's
    numbers) are points: the answers of their float64 values, from
    contains, scores, retrieve, retrieve_many and ood."""
    a, p, q = gauss(3, dtype=np.float32)
    s = ccs.calibrate("ball", ccs.Bundle(a, p, q))
    ia, ipts = np.rint(a[5] * 3).astype(np.int64), np.rint(q[:, 1, :] * 3).astype(np.int32)
    fa, fpts = ia.astype(np.float64), ipts.astype(np.float64)
    assert np.array_equal(s.contains(ia.tolist(), ipts.tolist()), s.contains(fa, fpts))
    assert np.array_equal(s.scores(ia, ipts), s.scores(fa, fpts))
    ids, scores = s.retrieve(ia, fpts)
    want = s.retrieve(fa, fpts)
    assert np.array_equal(ids, want[0]) and np.array_equal(scores, want[1])
    many = s.retrieve_many(ipts[:3], fpts)
    assert all(np.array_equal(g[0], w[0]) for g, w in zip(many, s.retrieve_many(fpts[:3], fpts)))


def test_bundle_arrays_by_index(tmp_path):
    a, p, q = gauss(4, dtype=np.float32)
    n = len(a)
    rng = np.random.default_rng(0)
    pidx = np.stack([(np.arange(n) + j + 1) % n for j in range(3)], axis=1)
    nidx = rng.integers(0, 50, size=(n, 2)).astype(np.int32)
    pool = rng.normal(size=(50, 5)).astype(np.float32)
    b = ccs.Bundle(a, positive_index=pidx, negative_index=nidx, negative_pool=pool, labels=np.arange(n) % 3,
                   index=np.arange(n) + 100)
    assert (b.n, b.k, b.kneg, b.d) == (n, 3, 2, 5) and len(b) == n
    assert b.positives is None and np.array_equal(b.positive_index, pidx)
    assert b.negative_index.dtype == np.int64 and np.array_equal(b.negative_index, nidx)
    assert np.array_equal(b.negative_pool, pool) and np.array_equal(b.index, np.arange(n) + 100)
    b.save(tmp_path / "b.npz")
    again = ccs.Bundle.load(tmp_path / "b.npz")
    assert all(np.array_equal(x, y) for x, y in zip(b.arrays().values(), again.arrays().values()))
    assert sorted(again.arrays()) == ["anchors", "index", "labels", "negative_index", "negative_pool", "positive_index"]


# (what, the call, the exception, a part of its message)
def _splits():
    """Four small bundles of d = 5, as ccs.bundle's dict."""
    return {name: ccs.Bundle(*gauss(i)) for i, name in enumerate(("fit", "val", "cal", "test"))}


def _closed_set():
    s = ccs.calibrate("ball", ccs.Bundle(*gauss(5, dtype=np.float32)))
    s.close()
    return s



# Several labels a row: a multi-hot matrix of 4 columns, 200 rows.
HOT = np.eye(4, dtype=bool)[np.arange(200) % 4] | np.eye(4, dtype=bool)[np.arange(200) % 3]

ERRORS = [
    ("complex points", lambda s, a: s.contains(a[0], np.ones((3, 5), np.complex128)), ValueError,
     'array "points": dtype "<c16" is not supported (embeddings are floating point; labels integers or strings): want float16, float32 or float64'),
    ("object points", lambda s, a: s.contains(a[0], np.array([[1, None, 3, 4, 5]], dtype=object)), ValueError,
     'array "points": dtype "|O" is not supported'),
    ("masked points", lambda s, a: s.contains(a[0], np.ma.array(a[:3], mask=np.eye(3, a.shape[1], dtype=bool))), ValueError,
     "points: a masked array with 3 masked entries: ccs reads every value, the masked ones too"),
    ("masked labels", lambda s, a: ccs.bundle(a, np.ma.array(np.arange(len(a)) % 2, mask=np.arange(len(a)) == 3)), ValueError,
     "labels: a masked array with 1 masked entries: ccs reads every value"),
    ("a masked k", lambda s, a: ccs.bundle(a, np.arange(len(a)) % 2, k=np.ma.masked_array(3, mask=True)), ValueError,
     "k: a masked value: give the number itself"),
    ("ragged points", lambda s, a: s.contains(a[0], [[1, 2, 3, 4, 5], [1, 2]]), ValueError,
     "points: rows of unequal lengths: row 0 has 5 values, row 1 has 2 values: a list of rows must be rectangular"),
    ("strings", lambda s, a: s.scores(["a", "b", "c", "d", "e"], a), TypeError, "anchor: strings, the first 'a': want an embedding (numbers), not an id"),
    ("an id for the anchor", lambda s, a: s.retrieve("q-00017", a), TypeError,
     "anchor: the string 'q-00017': want an embedding (numbers), not an id: look the id up among your embeddings' ids"),
    ("dimension", lambda s, a: s.contains(a[0], np.ones((3, 4))), ValueError,
     "points: embeddings of shape (3, 4), dimension 4; the set's dimension is 5"),
    ("rank", lambda s, a: s.scores(a[0], np.ones((2, 3, 5))), ValueError, "points: shape (2, 3, 5): want (m, 5)"),
    ("scalar", lambda s, a: s.scores(a[0], 3.0), ValueError, "points: embeddings of shape (), no dimension"),
    ("NaN point", lambda s, a: s.contains(a[0], np.where(np.arange(25).reshape(5, 5) == 16, np.nan, 1.0)), ValueError,
     "points[3][1] is NaN"),
    ("NaN anchor", lambda s, a: s.scores(np.full(5, np.inf), a), ValueError, "anchor: coordinate 0 is +Inf"),
    ("float64 overflow", lambda s, a: s.contains(np.full(5, 1e300), a), ValueError,
     'array "anchor": element [0] = 1e+300 overflows float32'),
    ("label of a marginal set", lambda s, a: s.contains(a[0], a, label=1), ValueError, "the set has one threshold: it takes no label"),
    ("class name for a marginal set", lambda s, a: s.contains(a[0], a, label="ant"), ValueError,
     "conformal: the set has one threshold: it takes no label"),
    ("closed set", lambda s, a: _closed_set().scores(a[0], a), ValueError, "ccs: this set is closed"),
    ("alpha", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), alpha=1.5), ValueError,
     "calibrate: alpha=1.5: want 0 < α < 1"),
    ("calibration", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), calibration="bogus"), ValueError,
     "calibrate: calibration: "),
    ("pac without delta", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), calibration="pac"), ValueError,
     'calibrate: calibration="pac" needs delta, not given: give delta=0.05 or 0.1'),
    ("learned geometry", lambda s, a: ccs.calibrate("genball", ccs.Bundle(*gauss(5))), ValueError,
     "calibrate: geometry genball is learned: fit it with ccs.fit"),
    ("fit for the ball", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), fit=ccs.Bundle(*gauss(6))), ValueError,
     "calibrate: fit is for the ellipsoid"),
    ("fit of another dimension", lambda s, a: ccs.calibrate("ellipsoid", ccs.Bundle(*gauss(5)), fit=ccs.Bundle(*gauss(6, d=4))),
     ValueError, "calibrate: fit: embeddings of dimension 4, cal's is 5"),
    ("fit not a bundle", lambda s, a: ccs.calibrate("ellipsoid", ccs.Bundle(*gauss(5)), fit=np.ones((3, 5))), TypeError,
     "ccs: fit: want a ccs.Bundle or a path to a bundle file"),
    ("fit geometry", lambda s, a: ccs.fit("ball", ccs.Bundle(*gauss(5)), objective="neg"), ValueError,
     'fit: geometry "ball": want single or genball'),
    ("fit objective", lambda s, a: ccs.fit("genball", ccs.Bundle(*gauss(5)), objective="volume"), ValueError, "fit: objective: "),
    ("string labels of a Bundle", lambda s, a: ccs.Bundle(*gauss(5), labels=np.array(["T cell", "B cell"] * 10)), ValueError,
     'labels: string labels (dtype <U6): ccs.Bundle takes integer labels; number the names as the set you evaluate numbers its classes, '
     'labels = np.array([{c["name"]: c["label"] for c in s.info["classes"]}[t] for t in names]), '
     'or make the bundles with ccs.bundle(X, names), which numbers them and keeps their names'),
    ("ragged rows", lambda s, a: ccs.bundle([[0.5] * 5] * 40 + [[0.5] * 4], list(range(41))), ValueError,
     "embeddings: rows of unequal lengths: row 0 has 5 values, row 40 has 4 values: a list of rows must be rectangular"),
    ("alpha NaN", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), alpha=float("nan")), ValueError,
     "alpha=nan: want a finite number"),
    ("delta infinite", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), calibration="pac", delta=np.float64("inf")), ValueError,
     "delta=inf: want a finite number"),
    ("class set without labels", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), calibration="class"), ValueError,
     "class-conditional calibration needs the calibration bundle's labels"),
    ("ood_detection ood a list", lambda s, a: ccs.ood_detection(s, a, [ccs.Bundle(a + 5)]), TypeError,
     "ood_detection: ood: a list of inputs: give one input (a Bundle, a features file or an (n, d) array), or several as a dict, {name: input}"),
    ("ood_detection fdr", lambda s, a: ccs.ood_detection(s, a, a + 5, fdr=2), ValueError,
     "ood_detection: fdr=2: want 0 < Q < 1 (or 0: none)"),
    ("ood_detection fpr", lambda s, a: ccs.ood_detection(s, a, a + 5, fpr="x"), ValueError,
     'ood_detection: fpr: FPR95 convention "x": want id-positive or ood-positive'),
    ("ood_detection alpha_ood", lambda s, a: ccs.ood_detection(s, a, a + 5, alpha_ood=1.5), ValueError,
     "ood_detection: α_ood = 1.5, want 0 < α_ood < 1"),
    ("ood_detection cider_epochs", lambda s, a: ccs.ood_detection(s, a, a + 5, cider_epochs=-1), ValueError,
     "cider epochs -1: want at least 1, or 0 to leave CIDER out"),
    ("ood_detection simultaneous", lambda s, a: ccs.ood_detection(s, a, a + 5, simultaneous=True), ValueError,
     "ood_detection: simultaneous needs delta"),
    ("ood_detection dimension", lambda s, a: ccs.ood_detection(s, a, np.ones((3, 4))), ValueError,
     "ood: embeddings of shape (3, 4), dimension 4; the set's dimension is 5"),
    ("ood_detection NaN", lambda s, a: ccs.ood_detection(s, np.full((3, 5), np.nan), a + 5), ValueError,
     "ood_detection: id: anchors[0][0] is NaN"),
    ("transform of a ball's collection", lambda s, a: ccs.Collection(a).transform(s), ValueError,
     "retrieve: transform: only a single-norm or ellipsoid set is transformed"),
    ("negative limit", lambda s, a: s.retrieve(a[0], a, limit=-1), ValueError, "retrieve: limit=-1: want ≥ 1, or None for all"),
    ("zero limit", lambda s, a: s.retrieve(a[0], a, limit=0), ValueError, "retrieve: limit=0: want ≥ 1, or None for all"),
    ("limit a str", lambda s, a: s.retrieve(a[0], a, limit="5"), TypeError, "retrieve: limit: got str, want an int ≥ 1"),
    ("limit a fraction", lambda s, a: s.retrieve(a[0], a, limit=2.5), TypeError, "retrieve: limit: got float, want an int ≥ 1"),
    ("lists of labels of two kinds", lambda s, a: ccs.bundle(gauss(5)[0], [["cs.LG", 3]] + [["a"]] * 199), ValueError,
     "labels: lists of labels mix strings and integers: give one kind"),
    ("a list holding a float", lambda s, a: ccs.bundle(gauss(5)[0], [["a", 2.5]] + [["a"]] * 199), ValueError,
     "labels: [0] holds 2.5: want labels that are strings or integers"),
    ("a row neither a list nor a label", lambda s, a: ccs.bundle(gauss(5)[0], [["a"], {"a": 1}] + [["a"]] * 198), ValueError,
     "labels: [1] is {'a': 1}: want a row's labels (a list of strings or integers)"),
    ("multi-hot labels with OOD classes", lambda s, a: ccs.bundle(gauss(5)[0], np.eye(4, dtype=bool)[np.arange(200) % 4]
                                                                  | np.eye(4, dtype=bool)[np.arange(200) % 3],
                                                                  ood_classes=[7]), ValueError,
     "bundle: ood_classes: label 7 is not a column of the multi-hot matrix (0 to 3)"),
    ("label_names a name short", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=["ant", "bee", "emu"]), ValueError,
     "bundle: label_names: 3 names for the 4 columns of the multi-hot matrix: want one a column, in the columns' order (mlb.classes_)"),
    ("label_names a name twice", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=["ant", "bee", "bee", "emu"]), ValueError,
     "bundle: label_names: \"bee\" names columns 1 and 2: two labels under one name would read as one"),
    ("label_names an empty name", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=np.array(["ant", "", "bee", "emu"])), ValueError,
     "bundle: label_names: column 1's name is empty: every column needs a name"),
    ("label_names a float", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=["ant", 2.5, "bee", "emu"]), TypeError,
     "bundle: label_names[1] is 2.5: want a string (or an integer), column 1's name"),
    ("ids beyond int64", lambda s, a: ccs.Collection(np.zeros((2, 3), np.float32), ids=[2**64, 1]), ValueError,
     "ids: [0] is 18446744073709551616, beyond int64 (±2**63): give such ids as strings"),
    ("label_names a string", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names="abcd"), TypeError,
     "bundle: label_names: got str 'abcd', want a list of names, one a column of labels"),
    ("label_names naming a missing label", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=["ant", "Unknown", "bee", "emu"]), ValueError,
     "labels: several labels a row, and some rows list a value that marks a missing label (\"Unknown\": 100 rows, the first row 1; rows numbered from 0): shared, it would "
     "make those rows one another's positives; missing_labels=\"drop\" takes it for no label"),
    ("label_names of one label a row", lambda s, a: ccs.bundle(gauss(5)[0], np.arange(200) % 4, label_names=["ant", "bee", "cow", "emu"]), ValueError,
     "bundle: label_names name the columns of a multi-hot labels matrix (several labels a row), and labels hold one label a row"),
    ("label_names of lists of labels", lambda s, a: ccs.bundle(gauss(5)[0], [["cat", "dog"], ["dog"]] * 100, label_names=["cat", "dog"]), ValueError,
     "bundle: label_names name the columns of a multi-hot matrix, and labels are lists of labels, which are their own names: leave label_names out"),
    ("label_names of integer lists, an id unnamed", lambda s, a: ccs.bundle(gauss(5)[0], [[0, 1], [2]] * 100, label_names=["ant", "bee"]), ValueError,
     "bundle: label_names: 2 names label ids 0 to 1, and labels[1] lists label 2, which no name names: give one a label, in the ids' order"),
    ("label_names of integer lists and an OOD label by id", lambda s, a: ccs.bundle(gauss(5)[0], [[0, 1], [2]] * 100, label_names=["ant", "bee", "cow"], ood_classes=2),
     ValueError, "bundle: ood_classes: \"2\" is not among the labels (\"ant\", \"bee\", \"cow\"): the matrix's columns are named, and column 2 is \"cow\""),
    ("label_names and an OOD label by column number", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=["joy", "ant", "bee", "cow"], ood_classes=0),
     ValueError, "bundle: ood_classes: \"0\" is not among the labels (\"joy\", \"ant\", \"bee\", \"cow\"): the matrix's columns are named, and column 0 is \"joy\""),
    ("label_names and an OOD label not among them", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=["ant", "bee", "cow", "emu"], ood_classes="eel"),
     ValueError, "bundle: ood_classes: \"eel\" is not among the labels (\"ant\", \"bee\", \"cow\", \"emu\")"),
    ("one_label not among the named columns", lambda s, a: ccs.bundle(gauss(5)[0], HOT, label_names=["ant", "bee", "cow", "emu"], one_label="emv"),
     ValueError, "bundle: one_label: \"emv\" is not among the labels (\"ant\", \"bee\", \"cow\", \"emu\"): did you mean \"emu\"?"),
    ("one_label a bool", lambda s, a: ccs.bundle(gauss(5)[0], HOT, one_label=True), ValueError,
     "bundle: one_label: True is a bool, not a label"),
    ("an OOD class a bool", lambda s, a: ccs.bundle(gauss(5)[0], HOT, ood_classes=[np.True_]), ValueError,
     "bundle: ood_classes: True is a bool, not a label"),
    ("one_label past the columns", lambda s, a: ccs.bundle(gauss(5)[0], HOT, one_label=7), ValueError,
     "bundle: one_label: label 7 is not a column of the multi-hot matrix (0 to 3)"),
    ("one_label of one label a row", lambda s, a: ccs.bundle(gauss(5)[0], np.arange(200) % 4, one_label=1), ValueError,
     "bundle: one_label=\"1\": labels hold one label a row (a class a row), whose bundles calibrate each label's threshold already: "
     "bundle without one_label and calibrate with calibration=\"class\""),
    ("one_label with OOD classes", lambda s, a: ccs.bundle(gauss(5)[0], HOT, one_label=1, ood_classes=2), ValueError,
     "bundle: one_label=\"1\" bundles that label's rows for its own threshold: ood_classes and ood_cal_share hold rows out of the bundles of every label"),
    ("one_label with groups", lambda s, a: ccs.bundle(gauss(5)[0], groups=np.arange(200) // 4, one_label=1), ValueError,
     "bundle: one_label=\"1\" names one of several labels a row: give it with labels (a multi-hot matrix or lists of labels)"),
    ("one_label a list", lambda s, a: ccs.bundle(gauss(5)[0], HOT, one_label=[1, 2]), ValueError,
     "bundle: one_label: [1, 2] is neither an integer nor a string label"),
    ("one_label carried by too few rows", lambda s, a: ccs.bundle(gauss(5)[0], HOT, one_label=3, k=60), ValueError,
     "labels: label \"3\" is carried by 50 of 200 rows: each has the 49 others as its positives, too few for k = 60: lower k (-k; k= in Python), "
     "or allow fewer (-allow-fewer; allow_fewer=True in Python"),
    ("lists of labels with an OOD label not among them", lambda s, a: ccs.bundle(gauss(5)[0], [["cat", "dog"], ["dog"], ["cat"], ["owl", "cat"]] * 50,
                                                                               ood_classes=["cow"]), ValueError,
     "bundle: ood_classes: \"cow\" is not among the labels (\"cat\", \"dog\", \"owl\")"),
    ("class calibration with several labels a row", lambda s, a: ccs.calibrate("ball", ccs.bundle(gauss(5)[0], np.eye(4, dtype=bool)[np.arange(200) % 4]
                                                                                                   | np.eye(4, dtype=bool)[np.arange(200) % 3],
                                                                                                   k=2, allow_fewer=True)["cal"], calibration="class"),
     ValueError, "conformal: class-conditional calibration needs one label an anchor, and this bundle gives several a row"),
    ("compare class calibration with several labels a row", lambda s, a: ccs.compare(ccs.bundle(gauss(5)[0], np.eye(4, dtype=bool)[np.arange(200) % 4]
                                                                                                 | np.eye(4, dtype=bool)[np.arange(200) % 3],
                                                                                                 k=2, allow_fewer=True), rows="baselines", calibration="class"),
     ValueError, "compare: calibration=\"class\": class-conditional calibration needs one label an anchor, and this bundle gives several a row"),
    ("one class's OOD test with several labels a row", lambda s, a: (lambda b: ccs.calibrate("ball", b["cal"], reference=20, ood_cal=b["ood-cal"], ood_class=1))(
        ccs.bundle(gauss(5)[0], np.eye(4, dtype=bool)[np.arange(200) % 4] | np.eye(4, dtype=bool)[np.arange(200) % 3], k=2, allow_fewer=True, ood_cal_share=0.1)),
     ValueError, "calibrate: ood_class=1: cal: one class's OOD test picks the calibration anchors and ood_cal's inputs of that class, "
     "and this bundle gives several labels a row, so its anchors carry no one label (a row may carry several): leave ood_class= out"),
    ("a multi-hot matrix's rows not the embeddings'", lambda s, a: ccs.bundle(gauss(5)[0], np.eye(4, dtype=bool)[np.arange(150) % 4]
                                                                                          | np.eye(4, dtype=bool)[np.arange(150) % 3]),
     ValueError, "labels: 150 rows of labels for the 200 rows of embeddings"),
    ("keyword a str", lambda s, a: ccs.bundle(gauss(5)[0], np.arange(200) % 2, k="20"), TypeError, "k: got a str, want an int"),
    ("keyword a fraction", lambda s, a: ccs.bundle(gauss(5)[0], np.arange(200) % 2, seed=2.5), TypeError,
     "seed: got 2.5, want an int ≥ 0"),
    ("two shares", lambda s, a: ccs.bundle(gauss(5)[0], np.arange(200) % 2, split=(0.5, 0.5)), ValueError,
     "bundle: split=(0.5, 0.5): want four shares, fit, val, cal and test"),
    ("a share a str", lambda s, a: ccs.bundle(gauss(5)[0], np.arange(200) % 2, split=(0.5, "a", 0.2, 0.2)), TypeError,
     "bundle: split: want four numbers"),
    ("keyword a list", lambda s, a: ccs.calibrate("ball", ccs.Bundle(*gauss(5)), alpha=[0.1]), TypeError,
     "alpha: got a list, want a number"),
    ("fit val and val_share", lambda s, a: ccs.fit("genball", ccs.Bundle(*gauss(5)), ccs.Bundle(*gauss(5)), objective="neg",
                                                   val_share=0.2), ValueError, "fit: give val or val_share, not both"),
    ("collection ids repeated", lambda s, a: ccs.Collection(a[:3], ["a", "b", "a"]), ValueError,
     'ids: rows 0 and 2 have the same id "a"'),
    ("collection integer ids repeated", lambda s, a: ccs.Collection(a[:3], [7, 8, 7]), ValueError,
     "ids: rows 0 and 2 have the same id 7"),
    ("collection id empty", lambda s, a: ccs.Collection(a[:3], ["a", "", "c"]), ValueError,
     "ids: the string id of row 1 is empty"),
    ("collection a NaN", lambda s, a: ccs.Collection(np.where(np.arange(3 * a.shape[1]).reshape(3, -1) == 4, np.nan, a[:3])),
     ValueError, "collection: row 0, coordinate 4 is NaN"),
    ("collection ids short", lambda s, a: ccs.Collection(a[:3], ["a", "b"]), ValueError,
     "ids: 2 ids for the 3 rows of the collection"),
    ("collection ids floats", lambda s, a: ccs.Collection(a[:3], [1.0, 2.0, 3.0]), ValueError,
     "ids: dtype float64, shape (3,): want integers or strings (3,)"),
    ("no ood calibration", lambda s, a: s.ood(a), ValueError, "the set has no OOD calibration"),
    ("compare seeds", lambda s, a: ccs.compare(_splits(), seeds=0), ValueError, "compare: seeds=0: want at least 1"),
    ("compare a flag's name", lambda s, a: ccs.compare(_splits(), db=a), TypeError, "compare: unexpected keyword db=: did you mean collection=?"),
    ("compare a keyword mistyped", lambda s, a: ccs.compare(_splits(), epoch=3), TypeError, "compare: unexpected keyword epoch=: did you mean epochs=?"),
    ("fit a keyword mistyped", lambda s, a: ccs.fit("genball", _splits()["fit"], epoch=3, objective="vol"), TypeError,
     "fit: unexpected keyword epoch=: did you mean epochs=?"),
    ("calibrate a flag's keyword", lambda s, a: ccs.calibrate(s, _splits()["cal"], **{"lambda": 1}), TypeError,
     "calibrate: unexpected keyword lambda="),
    ("bundle a keyword mistyped", lambda s, a: ccs.bundle(a, lable=np.zeros(len(a), int)), TypeError,
     "bundle: unexpected keyword lable=: did you mean labels=?"),
    # ccs.Client refuses what it can before any request (no service here).
    ("client url without a scheme", lambda s, a: ccs.Client("127.0.0.1:8080"), ValueError,
     "Client: url: '127.0.0.1:8080': want the service's address, http://host:port (or https://)"),
    ("client token not a str", lambda s, a: ccs.Client("http://127.0.0.1:9", token=123), TypeError,
     "Client: token: got a int, want the token as a str"),
    ("client token of two lines", lambda s, a: ccs.Client("http://127.0.0.1:9", token="abc0123456789\nsecret-two"), ValueError,
     "Client: token: empty, or holding white space or a control character inside"),
    ("client timeout 0", lambda s, a: ccs.Client("http://127.0.0.1:9", timeout=0), ValueError, "Client: timeout: 0: want seconds"),
    ("client timeout a str", lambda s, a: ccs.Client("http://127.0.0.1:9", timeout="5"), TypeError, "Client: timeout: got a str, want seconds"),
    ("client ood alpha_ood a str", lambda s, a: ccs.Client("http://127.0.0.1:9").ood("x", a, alpha_ood="0.5"), TypeError,
     "ood: alpha_ood: got a str, want a number"),
    ("client ood fdr an array", lambda s, a: ccs.Client("http://127.0.0.1:9").ood("x", a, fdr=np.array([0.1])), TypeError,
     "ood: fdr: got a ndarray, want a number"),
    ("client collection not a name", lambda s, a: ccs.Client("http://127.0.0.1:9").retrieve("x", a[0], a), TypeError,
     "retrieve: collection: want the served collection's name, got ndarray"),
    ("client label a float", lambda s, a: ccs.Client("http://127.0.0.1:9").score("x", a[0], a, label=2.0), TypeError,
     "score: label is 2.0: want an integer label or a class's name"),
    ("bundle threads as a keyword", lambda s, a: ccs.bundle(a, np.zeros(len(a), int), n_jobs=2), TypeError,
     "bundle: unexpected keyword n_jobs=: the engine's threads are set once for every call, with ccs.threads(n)"),
    ("fit threads as a keyword", lambda s, a: ccs.fit("genball", _splits()["fit"], threads=2, objective="vol"), TypeError,
     "fit: unexpected keyword threads=: the engine's threads are set once for every call, with ccs.threads(n)"),
    ("evaluate a keyword mistyped", lambda s, a: s.evaluate(_splits()["test"], perclass=True), TypeError,
     "Set.evaluate: unexpected keyword perclass=: did you mean per_class=?"),
    ("retrieve_many a flag's name", lambda s, a: s.retrieve_many(a[:2], a, db=a), TypeError,
     "Set.retrieve_many: unexpected keyword db=: did you mean collection=?"),
    ("ood a keyword mistyped", lambda s, a: s.ood(a[:2], alpha=0.1), TypeError,
     "Set.ood: unexpected keyword alpha=: did you mean alpha_ood=?"),
    ("ood two letters swapped", lambda s, a: s.ood(a[:2], alpah=0.1), TypeError,
     "Set.ood: unexpected keyword alpah=: did you mean alpha_ood=?"),
    ("fit seeds for seed", lambda s, a: ccs.fit("genball", _splits()["fit"], seeds=3, objective="vol"), TypeError,
     "fit: unexpected keyword seeds=: did you mean seed=?"),
    ("compare a file", lambda s, a: ccs.compare(__file__), ValueError, "is a file, want the directory ccs bundle -out"),
    ("compare a directory of no bundles", lambda s, a: ccs.compare(os.path.dirname(__file__)), FileNotFoundError,
     "cal.npz and test.npz missing: make the bundles with ccs bundle -out"),
    ("bundle kneg_hard above kneg", lambda s, a: ccs.bundle(a, np.arange(len(a)) % 2, k=2, kneg_hard=3), ValueError,
     "bundle: kneg_hard=3: more than an anchor's 2 negatives (kneg, which is k unless given)"),
    ("bundle judged_negatives without pairs", lambda s, a: ccs.bundle(a, np.arange(len(a)) % 2, k=2, judged_negatives=True),
     ValueError, "bundle: judged_negatives are a query's pairs judged not relevant (scored 0 or less): give them with queries and pairs"),
    ("bundle judged_negatives with kneg_hard", lambda s, a: ccs.bundle(a, queries=a[:20], pairs=[(q, q + 1, 1) for q in range(20)] + [(0, 40, 0)],
                                                                       k=1, kneg=2, kneg_hard=1, judged_negatives=True),
     ValueError, "bundle: judged_negatives and kneg_hard both choose the negatives: give one"),
    ("bundle judged_negatives of pairs without scores", lambda s, a: ccs.bundle(a, queries=a[:20], pairs=[(q, q + 1) for q in range(20)],
                                                                                k=1, judged_negatives=True),
     ValueError, "pairs: judged negatives asked for, but no pair is judged not relevant: give pairs with a score each, 0 or less"),
    ("bundle kneg_hard below 0", lambda s, a: ccs.bundle(a, np.arange(len(a)) % 2, k=2, kneg_hard=-1), ValueError,
     "bundle: kneg_hard=-1: want 0 (none) or more"),
    ("bundle hard_candidates 0", lambda s, a: ccs.bundle(a, np.arange(len(a)) % 2, k=2, kneg_hard=1, hard_candidates=0), ValueError,
     "bundle: hard_candidates=0: want at least 1"),
    ("evaluate size_anchors alone", lambda s, a: s.evaluate(ccs.Bundle(*gauss(6, dtype=np.float32)), size_anchors=5), ValueError,
     "evaluate: size_anchors counts items of a collection; give collection="),
    ("evaluate collection of another dimension", lambda s, a: s.evaluate(ccs.Bundle(*gauss(6, dtype=np.float32)), collection=np.zeros((4, 3), np.float32)),
     ValueError, "evaluate: collection: the collection has dimension 3, the set 5"),
    ("evaluate size_anchors below 0", lambda s, a: s.evaluate(ccs.Bundle(*gauss(6, dtype=np.float32)), collection=np.zeros((4, 5), np.float32), size_anchors=-2),
     ValueError, "evaluate: size_anchors=-2: want ≥ 0 (0: all)"),
    ("compare size_anchors alone", lambda s, a: ccs.compare(_splits(), size_anchors=10), ValueError,
     "compare: size_anchors counts items of a collection; give collection="),
    ("compare collection of another dimension", lambda s, a: ccs.compare(_splits(), collection=np.zeros((5, 3), np.float32)),
     ValueError, "compare: collection: the collection has dimension 3, the bundles 5"),
    ("compare size_anchors below 0", lambda s, a: ccs.compare(_splits(), collection=np.zeros((5, 5), np.float32), size_anchors=-1),
     ValueError, "compare: size_anchors=-1: want ≥ 0 (0: all)"),
    ("compare collection file missing", lambda s, a: ccs.compare(_splits(), collection="/nonexistent/emb.npy"), FileNotFoundError,
     "/nonexistent/emb.npy"),
    ("compare rows", lambda s, a: ccs.compare(_splits(), rows="some"), ValueError,
     'compare: rows "some": "some" is no set of rows (all, all+infonce, baselines, infonce, learned) nor a row (ball, ellipsoid, single-neg'),
    ("compare pac", lambda s, a: ccs.compare(_splits(), calibration="pac"), ValueError,
     'compare: calibration="pac" needs delta, not given: give delta=0.05 or 0.1'),
    ("compare recipe", lambda s, a: ccs.compare(_splits(), recipe="adam"), ValueError,
     'compare: recipe "adam": want sim or embedding'),
    ("compare without val", lambda s, a: ccs.compare({k: v for k, v in _splits().items() if k != "val"}), ValueError,
     'compare: no val bundle: the rows "all" need it'),
    ("compare dimensions", lambda s, a: ccs.compare({**_splits(), "test": ccs.Bundle(*gauss(5, d=4))}, rows="baselines"),
     ValueError, "compare: the test bundle has dimension 4, the fit bundle 5"),
    ("compare split name", lambda s, a: ccs.compare({**_splits(), "tests": None}), ValueError,
     "compare: bundles: unknown splits ['tests']"),
    ("compare not bundles", lambda s, a: ccs.compare([1, 2]), TypeError, "compare: bundles: want ccs.bundle's dict or a directory, got list"),
    ("compare no directory", lambda s, a: ccs.compare("/nonexistent/bundles"), FileNotFoundError,
     "compare: /nonexistent/bundles: no such directory"),
    ("comparison's seed not run", lambda s, a: ccs.compare(_splits(), rows="baselines", seeds=1, resplits=5,
                                                          out=tempfile.mkdtemp()).set("Conformal Ball (ℓ2)", seed=3),
     ValueError, "Comparison.set: seed 3: the comparison ran seeds 0 to 0"),
    ("comparison without sets", lambda s, a: ccs.compare(_splits(), rows="baselines", seeds=1, resplits=5).set("Conformal Ball (ℓ2)"),
     ValueError, "Comparison.set: ccs.compare kept no sets: give it out=DIR (or sets=DIR)"),
    ("compare out and sets", lambda s, a: ccs.compare(_splits(), rows="baselines", out="/tmp/o", sets="/tmp/s"), ValueError,
     "compare: out and sets: give one (out keeps the sets in /tmp/o/sets/compare)"),
    ("report not a result", lambda s, a: ccs.report([1], "/tmp/x.html"), TypeError, "report: want Comparisons"),
    ("report bad JSON", lambda s, a: ccs.report(['{"kind": "nope"}'], "/tmp/x.html"), ValueError, "report: result 0: "),
    ("report pdf", lambda s, a: ccs.report(['{"kind": "nope"}'], "/tmp/x.pdf"), ValueError, "report: path /tmp/x.pdf: a report is .html (one page, figures inline), .md (Markdown tables) or .tex (LaTeX tables), not .pdf"),
    ("plot not a result", lambda s, a: ccs.plot([1], "/tmp/ccs-plot-bad"), TypeError, "plot: want Comparisons"),
    ("plot bad JSON", lambda s, a: ccs.plot(['{"kind": "nope"}'], "/tmp/ccs-plot-bad"), ValueError, "plot: result 0: "),
    ("plot no results", lambda s, a: ccs.plot([], "/tmp/ccs-plot-bad"), ValueError, "plot: no results"),
    ("plot an evaluation's dict", lambda s, a: ccs.plot(s.evaluate(ccs.Bundle(a, a[:, None], a[:, None])), "/tmp/ccs-plot-bad"),
     TypeError, "Set.evaluate's dict holds the figures, not the document"),
    ("ood at an unknown keyword", lambda s, a: s.ood(a, plots="x"), TypeError, "-plots is ccs compare's"),
    ("missing file", lambda s, a: ccs.Set.load("/nonexistent/set.json"), FileNotFoundError, "no such file or directory"),
    ("missing bundle", lambda s, a: ccs.Bundle.load("/nonexistent/b.npz"), FileNotFoundError, "no such file or directory"),
    ("calibrate a missing set file", lambda s, a: ccs.calibrate("fitted-typo.json", _splits()["cal"]), FileNotFoundError,
     "calibrate: fitted-typo.json: no such file"),
    ("calibrate an unknown geometry", lambda s, a: ccs.calibrate("sphere", _splits()["cal"]), ValueError, "sphere"),
    ("not a bundle", lambda s, a: ccs.Bundle.load(__file__), ValueError,
     "test_inputs.py: a text file ("),
    ("not a bundle, said so", lambda s, a: ccs.Bundle.load(__file__), ValueError,
     "not a bundle: a bundle is a .npz of anchors and their positives (positives, or positive_index), as ccs bundle -out "
     "writes one"),
    ("OOD class not among string labels", lambda s, a: ccs.bundle(*_labelled(["x", "y", "z"]), k=3, ood_classes=["w"]),
     ValueError, 'bundle: ood_classes: "w" is not among the labels ("x", "y", "z")'),
    ("OOD class by name, integer labels", lambda s, a: ccs.bundle(*_labelled([0, 1, 2]), k=3, ood_classes=["y"]),
     ValueError, 'bundle: ood_classes: "y" is not an integer label'),
    ("OOD class neither", lambda s, a: ccs.bundle(*_labelled([0, 1, 2]), k=3, ood_classes=[1.5]),
     ValueError, "bundle: ood_classes: 1.5 is neither an integer nor a string label"),
    ("a string class of one", lambda s, a: ccs.bundle(*_labelled(["x", "y", "z"], lonely="w"), k=3),
     ValueError, 'class "w", 1 item, would have 1 in the'),
    ("complex labels", lambda s, a: ccs.bundle(*_labelled([1j, 2j])), ValueError,
     'array "labels": dtype "<c16" is not supported'),
    ("mixed object labels", lambda s, a: ccs.bundle(*_labelled(["x", 1], dtype=object)), ValueError,
     "labels: an object array of int, str: [1] is 1; want integers or strings"),
    # A list NumPy would make strings of, "5" a class of its own.
    ("an int among string labels in a list", lambda s, a: ccs.bundle(_labelled(["x"])[0], ["x", "y", "z"] * 19 + ["x", 5, "y"]),
     ValueError, "labels: a list of int, str: [58] is 5; want integers or strings"),
    ("an int among strings and missing labels", lambda s, a: ccs.bundle(_labelled(["x"])[0], [None] * 3 + ["x", "y", "z"] * 18 + ["x", 7, "y"]),
     ValueError, "labels: a list of int, str: [58] is 7; want integers or strings, one kind for all"),
    ("blank labels", lambda s, a: ccs.bundle(*_labelled(["x", "y", " ", "z", ""]), k=3),
     ValueError, '24 of 60 rows have a label that marks a missing value (" ": 12, "": 12)'),
    # A pandas column's values: its missing values (None, NaN) are missing
    # labels, named null; among numbers, they are refused with the -1 recipe.
    ("missing object labels", lambda s, a: ccs.bundle(*_labelled(["x", "y", None, "z", float("nan")], dtype=object), k=3),
     ValueError, 'rows have a label that marks a missing value (null: 24)'),
    ("missing integer labels", lambda s, a: ccs.bundle(*_labelled([0, 1, None], dtype=object), k=3),
     ValueError, "labels: an object array of numbers with a missing value at [2] (None): mark rows without a label -1"),
    ("an object for embeddings", lambda s, a: ccs.bundle(object(), np.zeros(60, int)), TypeError,
     "embeddings: a builtins.object that NumPy reads as an array of Python objects"),
    ("string embeddings", lambda s, a: ccs.bundle(np.array([["a", "b"]] * 60), np.zeros(60, int)), ValueError,
     "embeddings: dtype <U1, want floating point"),
    ("string anchors", lambda s, a: ccs.Bundle(np.array([["a", "b"]] * 6)), ValueError,
     'array "anchors": dtype <U1, want floating point'),
    ("evaluate uncalibrated", lambda s, a: ccs.fit("genball", _splits()["fit"], epochs=1, objective="vol").evaluate(_splits()["test"]),
     ValueError, "evaluate: the set is not calibrated: calibrate it first with ccs.calibrate(set, cal, alpha=…)"),
    ("progress not callable", lambda s, a: ccs.compare(_splits(), seeds=1, rows="baselines", progress=5), TypeError,
     "progress: want a callable, given each report (a dict), or a tqdm-like bar (with update), got int"),
    ("pairs and triples mixed", lambda s, a: ccs.bundle(a, queries=a[:3], pairs=[("q0", "d1"), ("q1", "d2", 1)]), ValueError,
     "pairs: row 0 is a pair (query, row), row 1 a scored triple (query, row, score): give every pair a score, or none"),
    ("pairs by id without ids", lambda s, a: ccs.bundle(a, queries=a[:3], pairs=[("q0", "d1")]), ValueError,
     'pairs: pair 0: query "q0" is not a row number: give the queries\' ids'),
    ("ids for other rows", lambda s, a: ccs.bundle(a, queries=a[:3], pairs=[(0, "d1")], ids=["d0", "d1"]), ValueError,
     "ids: 2 ids for 200 rows"),
    ("ids without pairs", lambda s, a: ccs.bundle(a, labels=np.zeros(200, int), ids=[str(i) for i in range(200)]),
     ValueError, "bundle: ids, query_ids and query_labels are of relevance pairs' rows and queries: give them with queries and pairs"),
    ("an id twice", lambda s, a: ccs.bundle(a, queries=a[:3], pairs=[(0, "d1")], ids=["d0"] * 200), ValueError,
     'bundle: row id "d0" is given twice (rows 0 and 1, numbered from 0'),
    ("no pair among the ids", lambda s, a: ccs.bundle(a, queries=a[:3], pairs=[(0, "x")], ids=[f"d{i}" for i in range(200)]),
     ValueError, 'pairs: no pairs: all 1 name ids that are not among the given ids (the first: row id "x")'),
    ("an interaction log as pairs",
     lambda s, a: ccs.bundle(a, queries=a[:3], pairs=np.array([["0", "1", "2026-06-01 00:01:22", "view"]])), ValueError,
     "pairs: dtype <U19, shape (1, 4): want pairs (m, 2) of integers or strings, or (m, 3) with a score each; "
     "an interaction log's columns? give the query's (the user's) and the row's (the item's) id columns, log[:, [0, 1]]"),
    ("an event's name for a score", lambda s, a: ccs.bundle(a, queries=a[:3], pairs=[("0", "1", "view")]), ValueError,
     'pairs: pair 0: score "view" is not a number: the third column is read as each pair\'s relevance score; '
     "map its values to numbers (an interaction log's events: view 1, cart 2, purchase 3"),
    ("string points", lambda s, a: s.contains(a[0], np.array([["a"] * 5])), TypeError, "points: strings, the first 'a': want an embedding"),
    ("file paths as labels", lambda s, a: ccs.bundle(a, [f"id1{i // 20:04d}/s{i % 3}/{i:05d}.wav" for i in range(200)]),
     ValueError, 'Names such as "id10000/s0/00000.wav" are file paths, each its own class: its first directory makes '
     '10 classes, its first two 30 — keep one (cut -d/ -f1 FILE > classes.txt; [p.split("/")[0] for p in paths] in Python)'),
    ("sessions without groups", lambda s, a: ccs.bundle(a, np.arange(200) % 4, sessions=np.arange(200) % 3), ValueError,
     "bundle: sessions are a group's recordings: give them with groups"),
    ("blocks without labels", lambda s, a: ccs.bundle(a, groups=np.arange(200) // 4, blocks=np.arange(200) // 20, k=2), ValueError,
     "bundle: blocks split rows of one class label a row: give them with labels"),
    ("a missing block", lambda s, a: ccs.bundle(a, np.arange(200) % 2, blocks=[""] + [f"rec{i // 20}" for i in range(1, 200)], k=2),
     ValueError, 'blocks: 1 of 200 rows have a block id that marks a missing value (a negative integer, "", "nan" or null; the first: row 0)'),
    ("blocks too few for a share", lambda s, a: ccs.bundle(a, np.arange(200) % 2, blocks=np.arange(200) // 50, k=2), ValueError,
     "blocks: 4 blocks are too few for the val share 0.1: blocks lie whole in one split"),
    ("a missing session", lambda s, a: ccs.bundle(a, groups=np.arange(200) // 10, sessions=[""] + [str(i % 3) for i in range(1, 200)], k=2),
     ValueError, 'sessions: 1 of 200 rows have a session id that marks a missing value ("": 1); the first: row 0'),
    ("a group of one session", lambda s, a: ccs.bundle(a, groups=np.arange(200) // 10, sessions=np.arange(200) // 10, k=2),
     ValueError, "groups of the splits have no row in another session than their anchor's (the first: group "),
    ("re-ID image names as groups", lambda s, a: ccs.bundle(a, groups=[f"{1 + i // 4:04d}_c{1 + i % 3}s1_{i:06d}_01.jpg" for i in range(200)]),
     ValueError, 'names such as "0001_c1s1_000000_01.jpg" are person re-identification image names (person id, camera, frame: '
     'Market-1501, DukeMTMC-reID), each its own group: their person ids make 50 people over 3 cameras'),
    ("image names as sessions", lambda s, a: ccs.bundle(a, groups=np.arange(200) // 4, sessions=[f"{i:04d}.jpg" for i in range(200)], k=2),
     ValueError, "sessions: no two rows of a group share a session (200 sessions for 200 rows): the sessions then exclude no positive"),
    ("trials without ids", lambda s, a: s.trials(a, None, [("1", "u0", "u1")]), ValueError,
     "trials: give the utterances' embeddings and their ids"),
    ("trials with an unknown unlabeled", lambda s, a: s.trials(a, [f"u{i}" for i in range(200)], [("1", "u0", "u1")], unlabeled="sometimes"),
     ValueError, 'trials: unlabeled="sometimes": want error or marginal'),
    ("a trial naming an utterance not among the ids",
     lambda s, a: s.trials(a, [f"u{i}" for i in range(200)], [("1", "u0", "u1"), ("0", "u0", "zz")]), ValueError,
     'trials: 1 trial of 2 name an utterance that is not among the ids (the first: line 2, "zz")'),
    ("a trial of two fields", lambda s, a: s.trials(a, [f"u{i}" for i in range(200)], [("1", "u0", "u1"), ("0", "u0")]),
     ValueError, "trials:2: 2 fields, want 3"),
    ("no trials", lambda s, a: s.trials(a, [f"u{i}" for i in range(200)], []), ValueError, "trials: no trials"),
    ("ids with spaces, a trial's fields each", lambda s, a: s.trials(a, [f"spk {i // 10}/utt {i}.wav" for i in range(200)],
                                                                   [("1", "spk 0/utt 0.wav", "spk 0/utt 1.wav"), ("0", "spk 0/utt 0.wav", "spk 9/utt 99")]),
     ValueError, 'trials: 1 trial of 2 name an utterance that is not among the ids (the first: line 2, "spk 9/utt 99")'),
    ("qrels for trials", lambda s, a: s.trials(a, [f"u{i}" for i in range(200)], [("u0", "u1", "1")]), ValueError,
     'trials:1: "u0 u1 1" is not a trial: want target (1 or 0), enrolment, test'),
    ("a speaker-verification trial list as pairs",
     lambda s, a: ccs.bundle(a, queries=a, pairs=[("1", "id10270/x6uYqmx31kE/00001.wav", "id10270/8jEAjG6SegY/00008.wav")],
                             ids=[f"id1/s/{i:05d}.wav" for i in range(200)], query_ids=[f"id1/s/{i:05d}.wav" for i in range(200)]),
     ValueError, 'pairs: pair 0: "1 id10270/x6uYqmx31kE/00001.wav id10270/8jEAjG6SegY/00008.wav" reads as a '
     'speaker-verification trial (target (1 or 0), enrolment, test, as VoxCeleb\'s lists), not a relevance pair'),
]


def _labelled(classes, lonely=None, dtype=None):
    """60 embeddings of d = 2 with labels cycling through classes."""
    labels = np.array([classes[i % len(classes)] for i in range(60)], dtype=dtype)
    if lonely is not None:
        labels[0] = lonely
    return np.random.default_rng(0).normal(size=(60, 2)), labels


@pytest.mark.parametrize("what,f,exc,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(what, f, exc, msg):
    a, p, q = gauss(5, dtype=np.float32)
    s = ccs.calibrate("ball", ccs.Bundle(a, p, q))
    with pytest.raises(exc) as e:
        f(s, a)
    assert msg in str(e.value)
    assert s.contains(a[0], a).any()  # and the library goes on


@pytest.mark.parametrize("what,arrays,shape_msg", [
    ("NaN", "nan", "positives[2][1][3] is NaN"),
    ("triplet column", "triplet", 'array "positives": shape (200, 5), want 3 dimensions: (n, k, d), k per anchor; '
     'one per anchor, as a triplet\'s column, is (n, 1, d): positives[:, None]'),
    ("rank", "rank", 'array "anchors": shape (200,), want 2 dimensions'),
    ("index", "index", 'negative_index[0][1] = 999 is outside the anchors\' 200 rows'),
])
def test_bundle_errors_are_the_command_s(what, arrays, shape_msg, tmp_path):
    a, p, q = gauss(6, dtype=np.float32)
    kw = dict(anchors=a, positives=p, negatives=q)
    if arrays == "nan":
        kw["positives"] = p.copy()
        kw["positives"][2, 1, 3] = np.nan
    elif arrays == "rank":
        kw["anchors"] = a[:, 0]
    elif arrays == "triplet":
        kw["positives"] = p[:, 0]
    else:
        del kw["negatives"]
        kw["negative_index"] = np.tile([1, 999], (200, 1))
    np.savez(tmp_path / "bad.npz", **kw)
    cli = cli_error("calibrate", "-geometry", "ball", "-cal", tmp_path / "bad.npz", "-out", tmp_path / "s.json")
    assert cli == f"{tmp_path / 'bad.npz'}: {shape_msg}"
    with pytest.raises(ValueError) as e:
        ccs.Bundle.load(tmp_path / "bad.npz")
    assert str(e.value) == cli
    with pytest.raises(ValueError) as e:
        ccs.Bundle(kw.pop("anchors"), **kw)
    assert str(e.value) == shape_msg


def test_numpy_scalars_as_keywords():
    # k=counts.min() // 2 is an np.int64, alpha may be an np.float32 or a
    # 0-d array: the numbers they hold, as Python's own give.
    x, labels = np.random.default_rng(2).normal(size=(300, 4)), np.arange(300) % 3
    want = ccs.bundle(x, labels, k=5, seed=3)
    got = ccs.bundle(x, labels, k=np.int64(5), seed=np.uint64(3))
    assert all(np.array_equal(want[s].anchors, got[s].anchors) for s in want)
    a = ccs.calibrate("ball", want["cal"], alpha=0.1)
    for alpha in (np.float64(0.1), np.array(0.1)):
        assert ccs.calibrate("ball", want["cal"], alpha=alpha).threshold == a.threshold
    # A float32 α is the decimal it was written as, not its binary value
    # widened (0.10000000149011612: another α in the file and the table,
    # and compare's cells keyed on it).
    for alpha in (np.float32(0.1), np.array(0.1, dtype=np.float32), np.float16(0.1)):
        got = ccs.calibrate("ball", want["cal"], alpha=alpha)
        assert got.alpha == 0.1 and got.threshold == a.threshold
    # A label as a 0-d array is its element, as a NumPy integer is.
    c = ccs.calibrate("ball", want["cal"], alpha=0.1, calibration="class")
    z = want["test"].anchors[:5]
    assert np.array_equal(c.contains(z[0], z, label=np.array(2)), c.contains(z[0], z, label=2))


def test_set_file_of_another_version(tmp_path):
    s = ccs.calibrate("ball", ccs.Bundle(*gauss(7)))
    doc = json.loads(s.to_json())
    doc["version"] = 2
    (tmp_path / "v2.json").write_text(json.dumps(doc))
    cli = cli_error("evaluate", "-set", tmp_path / "v2.json", "-test", "x.npz")
    with pytest.raises(ValueError) as e:
        ccs.Set.load(tmp_path / "v2.json")
    assert str(e.value) == cli and "version 2; this ccs reads version 1" in cli


def test_handles_checked_in_the_library():
    # Past the Python objects: the library itself refuses a closed handle,
    # a handle of another kind and a handle never made.
    b = ccs.Bundle(*gauss(8))
    s = ccs.calibrate("ball", b)
    stale = s._h
    s.close()
    out = ctypes.c_void_p()
    for h, msg in [(stale, f"a set handle {stale}: closed, or never made"), (b._h, f"handle {b._h} holds a bundle, not a set"),
                   (0, "no a set: the handle is 0"), (2**60, "closed, or never made")]:
        with pytest.raises(ValueError) as e:
            _lib.call(_lib.lib.ccs_set_json, h, ctypes.byref(out))
        assert msg in str(e.value)
    with pytest.raises(ValueError, match="closed, or never made"):
        _lib.close(stale)
    s.close()  # closing twice is harmless in Python
    with s:
        pass


def test_cancel_tokens_checked_in_the_library():
    # The cancel token ccs_set_coverage_check takes (ABI 16): a handle of
    # another kind, or one never made, is refused by name; 0 is none.
    b = ccs.Bundle(*gauss(8))
    s = ccs.calibrate("ball", b)
    for token, msg in [(b._h, f"handle {b._h} holds a bundle, not a cancel token"), (2**60, "closed, or never made")]:
        out = ctypes.c_void_p()
        with pytest.raises(ValueError) as e:
            _lib.call(_lib.lib.ccs_set_coverage_check, s._h, b._h, b'{"resplits": 5}', ctypes.byref(out), token)
        assert msg in str(e.value)
    out = ctypes.c_void_p()
    _lib.call(_lib.lib.ccs_set_coverage_check, s._h, b._h, b'{"resplits": 5}', ctypes.byref(out), 0)
    assert _lib.loads(_lib.take_string(out))["result"]["resplits"] == 5


def test_abi_version_is_checked(tmp_path):
    v = _lib.ABI_VERSION
    with pytest.raises(ImportError, match=rf"speaks ABI version {v}, this ccs package version {v + 1}"):
        _lib.load(_lib.lib.path, abi=v + 1)
    with pytest.raises(ImportError, match="is not the ccs library: it has no ccs_abi_version"):
        _lib.load(ctypes.util.find_library("c"))
    with pytest.raises(ImportError, match="cannot load the library"):
        _lib.load(str(tmp_path / "absent.so"))


def test_crash_free_in_a_fresh_interpreter(tmp_path):
    # The bad inputs above, in a child interpreter: it must end normally
    # (a Go panic or a signal would kill it).
    code = """
import numpy as np, ccs
s = ccs.calibrate("ball", ccs.Bundle(np.ones((3, 2)), np.ones((3, 1, 2)) * 2), alpha=0.5)
for bad in (np.ones((2, 2), np.complex64), np.array([[1, None]], dtype=object), np.full((2, 2), np.nan), [[1], [2, 3]]):
    try:
        s.contains([0, 0], bad)
    except ValueError:
        pass
s.close()
try:
    s.contains([0, 0], [[1, 1]])
except ValueError:
    print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env())
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr


def test_a_path_is_not_an_array(tmp_path):
    # A file's path where an array goes (the command line's habit) is
    # refused naming the argument, not read as a string array.
    a, p, q = gauss(6, dtype=np.float32)
    np.save(tmp_path / "emb.npy", a)
    for call, name in [(lambda: ccs.bundle(str(tmp_path / "emb.npy"), np.arange(200) % 4, k=3), "embeddings"),
                       (lambda: ccs.bundle(a, tmp_path / "labels.npy", k=3), "labels"),
                       (lambda: ccs.Bundle(a, b"positives.npy"), "positives")]:
        with pytest.raises(ValueError, match=rf"^{name}: '.*\.npy' is a path, not an array: load the file first"):
            call()
    # A torch.save file, which np.load cannot read, and a CSV: how to load each.
    with pytest.raises(ValueError, match=r"^embeddings: 'emb.pt' is a path, not an array: load the file first \(torch.load in your own code, trusting the file, then pass the tensor\)$"):
        ccs.bundle("emb.pt", np.arange(200) % 4, k=3)
    with pytest.raises(ValueError, match=r"'emb.csv' is a path, not an array: load the file first \(pandas' read_csv\(path\)\[columns\].to_numpy\(\), the embedding's columns alone: .*ccs bundle -embeddings FILE.csv\)$"):
        ccs.bundle("emb.csv", np.arange(200) % 4, k=3)
    with pytest.raises(ValueError, match=r"^ids: 'ids.txt' is a path, not an array: load the file first \(np.loadtxt\(path, dtype=str"):
        ccs.bundle(a, queries=a, pairs=[[0, 1]], ids="ids.txt")
    # Files a reader is given: a pickle refused by its extension, a CSV as a text table.
    (tmp_path / "emb.pt").write_bytes(b"PK\x03\x04 a torch.save zip")
    for load in (ccs.Bundle.load, ccs.Collection.load):
        with pytest.raises(ValueError, match=r"emb.pt: a .pt file is a Python pickle, which ccs does not read"):
            load(tmp_path / "emb.pt")
    np.savetxt(tmp_path / "emb.csv", a[:3], delimiter=",")
    with pytest.raises(ValueError, match=r'emb.csv: a text file \(".{60}…"\), not a bundle'):
        ccs.Bundle.load(tmp_path / "emb.csv")


def test_unit_norm_set_refuses_unnormalised_inputs():
    """A set calibrated on unit-norm embeddings (a sentence encoder's)
    says so in its calibration, and refuses a query or point that is not
    normalised, naming it, in contains, scores and retrieve alike."""
    a, p, _ = gauss(8)
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    p = p / np.linalg.norm(p, axis=2, keepdims=True)
    s = ccs.calibrate("ball", ccs.Bundle(a, p), alpha=0.1)
    assert s.info["calibration"]["unit_norm"] is True
    assert s.contains(a[0], p[0]).shape == (4,)
    for call, want in (
        (lambda: s.contains(3 * a[0], p[0]), r"anchor: norm 3: the set was calibrated on unit-norm embeddings"),
        (lambda: s.scores(a[0], np.stack([p[0, 0], np.zeros(5)])), r"points\[1\]: norm 0: an all-zero row, which no normalisation makes a unit vector"),
        (lambda: s.retrieve(2 * a[0], ccs.Collection(p[:, 0])), r"anchor: norm 2: the set was calibrated on unit-norm"),
        # A test bundle not normalised alike covers none of its positives:
        # refused, not blamed on a shift.
        (lambda: s.evaluate(ccs.Bundle(9 * a, p)), r"^evaluate: test: anchor 0: norm 9: the set was calibrated on unit-norm embeddings"),
        # OOD inputs of other norms than the calibration's are told apart
        # by their norm alone: refused, as ccs ood refuses them.
        (lambda: ccs.ood_detection(s, ccs.Bundle(a, p), {"far": 7 * a}), r"far: anchor 0: norm 7: the set was calibrated on unit-norm"),
        (lambda: ccs.ood_detection(s, ccs.Bundle(5 * a, p), {"far": a}), r"id: anchor 0: norm 5: the set was calibrated on unit-norm"),
        # A NaN is a failed encoding, said as one, not a norm to fix.
        (lambda: s.contains(a[0], np.where((np.arange(4) == 1)[:, None] & (np.arange(5) == 3), np.nan, p[0])), r"^points\[1\]\[3\] is NaN$"),
        (lambda: s.contains(np.where(np.arange(5) == 2, np.nan, a[0]), p[0]), r"^anchor: coordinate 2 is NaN$"),
        (lambda: s.retrieve(np.where(np.arange(5) == 2, np.inf, a[0]), p[:, 0]), r"^anchor: coordinate 2 is \+Inf$"),
        (lambda: s.retrieve_many(np.where(np.arange(5) == 1, np.nan, a[:3]), p[:, 0]), r"^retrieve_many: anchors\[0\]: anchor: coordinate 1 is NaN$"),
    ):
        with pytest.raises(ValueError, match=want):
            call()
    # A corpus not normalised as the calibration was is searched, and
    # warned of (the guarantee does not speak of its rows), by retrieve and
    # retrieve_many over an array, a Collection or a file alike; a
    # normalised one is not.
    corpus = np.concatenate([p[:, 0], 1.3 * p[:2, 0], np.zeros((1, 5))])
    for coll in (corpus, ccs.Collection(corpus)):
        for call in (lambda: s.retrieve(a[0], coll), lambda: s.retrieve_many(a[:2], coll)):
            with pytest.warns(ccs.CCSWarning, match=rf"collection: 3 of its {len(corpus)} rows are not of unit norm \(the first: row {len(p)}, norm 1.3\), and the set was calibrated on unit-norm embeddings"):
                call()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.retrieve(a[0], p[:, 0])
        s.retrieve_many(a[:2], ccs.Collection(p[:, 0]))
    raw = ccs.calibrate("ball", ccs.Bundle(*gauss(8)[:2]), alpha=0.1)
    assert "unit_norm" not in raw.info["calibration"]
    assert raw.contains(3 * a[0], p[0]).shape == (4,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raw.retrieve(a[0], corpus)  # a set of other embeddings takes any corpus


def test_unit_norm_anchors_set_refuses_unnormalised_anchors():
    """A set calibrated around unit-norm anchors whose positives are not
    (the inner-product map's users u/|u| beside items of their own
    norms) says so, and refuses an anchor that is not normalised — a user
    vector sent as it came from its tower — in contains, scores, retrieve
    and retrieve_many, while it takes points of any norm."""
    a, p, _ = gauss(8)
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    s = ccs.calibrate("ball", ccs.Bundle(a, p), alpha=0.1)
    assert s.info["calibration"]["unit_norm_anchors"] is True and "unit_norm" not in s.info["calibration"]
    assert s.contains(a[0], 3 * p[0]).shape == (4,)
    want = "the set was calibrated around unit-norm anchors"
    for call, name in (
        (lambda: s.contains(3 * a[0], p[0]), r"anchor: norm 3: "),
        (lambda: s.scores(2 * a[0], p[0]), r"anchor: norm 2: "),
        (lambda: s.retrieve(2 * a[0], ccs.Collection(p[:, 0])), r"anchor: norm 2: "),
        (lambda: s.retrieve_many(np.stack([a[0], 2 * a[1]]), ccs.Collection(p[:, 0])), r"anchors\[1\]: anchor: norm 2: "),
    ):
        with pytest.raises(ValueError, match=name + want):
            call()


def test_bool_labels():
    """Labels as bool (y > 0.5) are the classes 0 and 1, as the command reads
    an .npy of bool: the same bundles as the integers."""
    x = gauss(5)[0]
    y = np.arange(200) % 2 == 1
    got, want = ccs.bundle(x, y, k=3, seed=1), ccs.bundle(x, y.astype(np.int64), k=3, seed=1)
    assert all(np.array_equal(got[s].labels, want[s].labels) and np.array_equal(got[s].anchors, want[s].anchors)
               for s in ("fit", "val", "cal", "test"))


def test_bundle_sessions():
    """With sessions, a group's anchor has its group's rows of other
    sessions as positives, never its own session's (as ccs bundle
    -sessions)."""
    x = np.random.default_rng(3).normal(size=(600, 4)).astype(np.float32)
    groups = np.arange(600) // 12
    sessions = np.array([f"s{g}-{(i % 12) % 3}" for i, g in enumerate(groups)])
    b = ccs.bundle(x, groups=groups, sessions=sessions, k=8, kneg=3)
    row = {v.tobytes(): i for i, v in enumerate(x)}
    for sp in b.values():
        anchors = [row[a.tobytes()] for a in sp.anchors]
        for a, pos in zip(anchors, sp.positive_pool[sp.positive_index]):
            for p in pos:
                r = row[p.tobytes()]
                assert groups[r] == groups[a] and sessions[r] != sessions[a]


@pytest.mark.parametrize("mark", [-1, "", "nan", None])
def test_bundle_missing_sessions(mark):
    """A session id that marks a missing value follows missing_labels as a
    group id does (as ccs bundle -sessions): refused by default, naming
    sessions and the first row; "drop" leaves its rows out with a
    warning; "class" keeps each mark a session of its own, whose rows are
    never one another's positives."""
    x = np.random.default_rng(3).normal(size=(600, 4)).astype(np.float32)
    groups = np.arange(600) // 12
    marked = (np.arange(600) % 12 == 4) | (np.arange(600) % 48 == 0)
    if isinstance(mark, int):
        sessions = np.where(marked, mark, np.arange(600) % 12 % 3)
    else:
        sessions = np.array([mark if m else f"s{i % 12 % 3}" for i, m in enumerate(marked)], dtype=object)
    named = {-1: "-1", "": '""', "nan": '"nan"', None: "null"}[mark]
    with pytest.raises(ValueError, match=re.escape(f"sessions: {marked.sum()} of 600 rows have a session id that marks a missing value ({named}: {marked.sum()}); the first: row 0")):
        ccs.bundle(x, groups=groups, sessions=sessions, k=3, kneg=3)
    with pytest.warns(ccs.CCSWarning, match=re.escape(f"({named}: {marked.sum()}), taken for no session: left out of every split")):
        b = ccs.bundle(x, groups=groups, sessions=sessions, k=3, kneg=3, missing_labels="drop")
    assert not any(marked[sp.index].any() for sp in b.values())
    b = ccs.bundle(x, groups=groups, sessions=sessions, k=3, kneg=3, missing_labels="class")
    assert sum(marked[sp.index].sum() for sp in b.values()) == len(range(0, 600, 48))  # the groups whose anchor it marks
    row = {v.tobytes(): i for i, v in enumerate(x)}
    for sp in b.values():
        for a, pos in zip(sp.index, sp.positive_pool[sp.positive_index]):
            for p in pos:
                assert not (marked[a] and marked[row[p.tobytes()]]), "two rows of the missing session are positives"


def test_bundle_blocks():
    """With blocks (recordings of overlapping windows), every block lies
    whole in one split, ood-cal included, the positives are still rows of
    the anchor's class; rows split one by one warn of the neighbours that
    are near-copies, naming blocks= (as ccs bundle -blocks)."""
    rng = np.random.default_rng(5)
    rows, labels, recs = [], [], []
    for r in range(30):
        z = 3 * rng.normal(size=4)
        for i in range(60):
            z = 0.99 * z + 0.1 * rng.normal(size=4)
            c = ((i // 15) + r) % 3
            rows.append(z + 4 * c); labels.append(["idle", "low", "high"][c]); recs.append(f"P-{r % 12:02d}_{r}")
    x, y, rec = np.array(rows, np.float32), np.array(labels), np.array(recs)
    b = ccs.bundle(x, y, blocks=rec, k=3, ood_cal_share=0.1)
    where = {}
    for name, sp in b.items():
        for r in set(rec[sp.index]):
            assert where.setdefault(r, name) == name, f"recording {r} in {where[r]} and {name}"
        if sp.k:
            assert (sp.labels[sp.positive_index] == sp.labels[:, None]).all()
    assert len(where) == 30 and len({r for r, n in where.items() if n == "ood-cal"}) == 3
    with pytest.warns(ccs.CCSWarning, match=r"neighbouring rows are near-copies: .* give each row's recording as -blocks FILE \(blocks= in Python\)"):
        ccs.bundle(x, y, k=3)


def test_bundle_sessions_sorted():
    """Rows sorted by camera within each person (a directory listing of a
    re-ID export) make every anchor the first camera's: a CCSWarning names
    the camera, as ccs bundle warns; shuffled rows give none."""
    x = np.random.default_rng(4).normal(size=(600, 4)).astype(np.float32)
    groups = np.arange(600) // 6
    cams = np.array([f"c{i % 6 % 3 + 1}" for i in range(600)])
    with pytest.warns(ccs.CCSWarning, match=r"""the anchors \(each group's first row\) are 100.0% session "c1", where an anchor drawn at random within its group would be 33.3%"""):
        ccs.bundle(x, groups=groups, sessions=cams, k=2, kneg=2)
    perm = np.random.default_rng(0).permutation(len(x))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ccs.bundle(x[perm], groups=groups[perm], sessions=cams[perm], k=2, kneg=2)
    assert not [w for w in caught if "first row" in str(w.message)]


def test_calibrate_class_trim_warning():
    """A class set whose threshold over all classes left a third of the
    disjoint pairs out (class 1: 3 anchors, 1 pair) warns of it in full at
    ccs.calibrate, where it is news, as ccs calibrate does; the set's own
    warnings, which every later use of the set issues, do not."""
    rng = np.random.default_rng(5)
    n = 203
    x = (5 * rng.standard_normal((n, 2))).astype(np.float32)
    idx = np.arange(n) ^ 1
    idx[200], idx[201], idx[202] = 201, 200, 200
    labels = np.zeros(n, dtype=np.int64)
    labels[200:] = 1
    b = ccs.Bundle(x, positive_index=idx.reshape(n, 1), labels=labels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = ccs.calibrate("ball", b, alpha=0.1, calibration="class", allow_infinite=True)
    msgs = [str(w.message) for w in caught]
    assert sum("was taken on 67 of the 101 disjoint calibration pairs" in m for m in msgs) == 1, msgs
    assert not any("disjoint calibration pairs" in m for m in s.warnings), s.warnings


def test_compare_command_lists_its_keywords():
    """The document's command (shown under ccs report's table) lists every
    keyword that changed the numbers, as ccs compare's command line lists
    its flags, and leaves the defaults out."""
    got = ccs.compare(_splits(), seeds=1, rows="baselines", alpha=0.1, epochs=5, lr=0.5, resplits=200)
    assert got.document["command"] == "ccs.compare('ccs.bundle', seeds=1, rows='baselines', alpha=0.1, epochs=5, lr=0.5)"


def test_bundle_warns_of_names_alike():
    """Tags spelled two ways ("Sky", "sky") are two labels, each its own
    rows: warned of, in one-label and several-label rows alike."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4)).astype(np.float32)
    for labels in (np.array(["sky", "dog", "cat", "Sky"])[rng.integers(0, 4, 600)],
                   [["sky", "dog"] if i % 2 else ["Sky", "cat"] for i in range(600)]):
        with pytest.warns(ccs.CCSWarning, match=r'labels: names differ only by case or by spaces around them \("Sky" and "sky"\)'):
            ccs.bundle(x, labels, k=3)


def test_bundle_float_multi_hot():
    """A float multi-hot target of exactly 0s and 1s (Keras', PyTorch's)
    bundles as the integer matrix does, byte for byte; a stray 2 beside
    label_names is said where it is, not taken for one label a row."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4)).astype(np.float32)
    m = np.zeros((600, 12), np.int64)
    m[np.arange(600), rng.integers(0, 12, 600)] = 1
    m[np.arange(600), rng.integers(0, 12, 600)] = 1
    names = [chr(97 + i) for i in range(12)]
    a = ccs.bundle(x, m, label_names=names, k=3, allow_fewer=True)
    b = ccs.bundle(x, m.astype(np.float32), label_names=names, k=3, allow_fewer=True)
    for s in a:
        for name in a[s].arrays():
            assert np.array_equal(a[s].array(name), b[s].array(name)), (s, name)
    m[17, 3] = 2
    with pytest.raises(ValueError, match=r"holds 0s and 1s; row 17, column 3 is 2: mark each label 0 or 1"):
        ccs.bundle(x, m, label_names=names, k=3)


def test_bundle_none_in_a_row_of_labels():
    """None or NaN among a row's labels is a missing label, as "Unknown"
    there is: refused by default, left out with missing_labels="drop", a
    label of its own ("null") with "class" — not dropped unsaid."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4)).astype(np.float32)
    tags = [chr(97 + i) for i in range(12)]
    rows = [[tags[rng.integers(12)], tags[rng.integers(12)]] for _ in range(600)]
    rows[3], rows[9] = rows[3] + [None], rows[9] + [float("nan")]
    with pytest.raises(ValueError, match=r"labels: 2 of 600 rows list None or NaN among their labels \(the first: \[3\]\)"):
        ccs.bundle(x, rows, k=2, allow_fewer=True)
    assert "null" not in ccs.bundle(x, rows, k=2, allow_fewer=True, missing_labels="drop")["test"].label_names
    assert "null" in ccs.bundle(x, rows, k=2, allow_fewer=True, missing_labels="class")["test"].label_names


def test_a_notebook_users_mistakes_are_named():
    """The mistakes a new user made in a notebook, each named: the set and
    the bundle swapped in calibrate and fit, threads given a string, a
    misspelt Collection keyword, which of calibrate's two arrays is wrong
    (and a single row, not a wrong dtype), a file's path given as points,
    and the OOD test of a set not calibrated at all."""
    a, p, q = gauss(41)
    b = ccs.Bundle(a, p, q)
    for call, err, want in (
        (lambda: ccs.calibrate(b, "ball"), TypeError, r"^calibrate: the set first, then the calibration bundle: calibrate\(fitted, cal\) .* got a Bundle for fitted and 'ball' for cal$"),
        (lambda: ccs.fit(b, "genball", objective="neg"), TypeError, r"^fit: the geometry first, then the bundle: fit\(\"genball\", fit_bundle, \.\.\.\); got a Bundle for geometry and 'genball' for fit$"),
        (lambda: ccs.threads("2"), TypeError, r"^threads: n: got a str \('2'\), want an int$"),
        (lambda: ccs.Collection(a, id=np.arange(len(a))), TypeError, r"^Collection: unexpected keyword id=: did you mean ids=\?"),
        (lambda: ccs.calibrate("ball", b, reference=a.T, ood_cal=a[:20]), ValueError, r"^the reference array: embeddings of shape \(5, 200\)"),
        (lambda: ccs.calibrate("ball", b, reference=a, ood_cal=a[:20].T), ValueError, r"^the ood_cal array: embeddings of shape \(5, 20\)"),
        (lambda: ccs.calibrate("ball", b, reference=a, ood_cal=a[0].astype(np.float16)), ValueError, r"^the ood_cal array: shape \(5,\): want \(n, d\), a row each \(one row\? x\[None\]\)$"),
        (lambda: ccs.calibrate("ball", b).ood("id_test.npy"), ValueError, r"^points: 'id_test.npy' is a path, not an array: load the file first"),
        (lambda: ccs.compare({"cal": b, "test": b}, rows="baseline"), ValueError, r"^compare: rows \"baseline\": \"baseline\" is no set of rows .*: did you mean \"baselines\"\?$"),
        (lambda: ccs.compare({"cal": b, "test": b}, calibration="PAC"), ValueError, r"unknown calibration mode \"PAC\" .*: did you mean \"pac\"\?"),
    ):
        with pytest.raises(err, match=want):
            call()
    fitted = ccs.fit("genball", b, objective="neg", epochs=1)
    with pytest.raises(ValueError, match=r"^ood: the set is not calibrated"):
        fitted.ood(a[:3])


def test_a_bundle_contradicting_its_labels_is_named(tmp_path):
    # A cal.npz whose positive_index and negative_index were swapped by hand:
    # loaded (or given by its path) with a CCSWarning naming the swap, as
    # the commands warn; ccs.bundle's own file says nothing.
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(4), 100)
    x = rng.normal(size=(400, 5)) + labels[:, None]
    made = ccs.bundle(x, labels, k=3, seed=1)
    made["cal"].save(tmp_path / "cal.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ccs.Bundle.load(tmp_path / "cal.npz")
    z = dict(np.load(tmp_path / "cal.npz"))
    z["positive_index"], z["negative_index"] = z["negative_index"], z["positive_index"]
    np.savez(tmp_path / "swapped.npz", **z)
    with pytest.warns(ccs.CCSWarning, match=r"swapped.npz: only 0.0% of the positives .* positive_index and negative_index swapped\?"):
        ccs.Bundle.load(tmp_path / "swapped.npz")


def test_a_set_file_without_its_checksum_is_named(tmp_path):
    # A set file whose checksum was deleted (and its threshold edited) is
    # read with a CCSWarning; the file as ccs wrote it, without.
    rng = np.random.default_rng(5)
    labels = np.repeat(np.arange(4), 100)
    made = ccs.bundle(rng.normal(size=(400, 5)) + labels[:, None], labels, k=3, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ccs.calibrate("ball", made["cal"], alpha=0.1)
    s.save(tmp_path / "ball.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ccs.Set.load(tmp_path / "ball.json")
    doc = json.loads((tmp_path / "ball.json").read_text())
    del doc["checksum"]
    doc["threshold"] = 9.0
    (tmp_path / "edited.json").write_text(json.dumps(doc))
    with pytest.warns(ccs.CCSWarning, match=r"edited.json: the set file has no checksum"):
        ccs.Set.load(tmp_path / "edited.json")
