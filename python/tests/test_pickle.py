"""Copies and pickles of the package's objects: each its own library
object, a pickle carrying the object's contents (a set's file, a
bundle's arrays with its label names, a collection's rows and ids), so
that another process — multiprocessing's "spawn" — gets the same object."""

import copy
import gc
import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ccs
from conftest import child_env


@pytest.fixture(scope="module")
def named():
    """Bundles of string labels, and a fitted set's account."""
    rng = np.random.default_rng(3)
    labels = np.array(["cat", "dog", "ox", "yak"])[np.arange(1200) % 4]
    x = rng.normal(size=(4, 8))[np.arange(1200) % 4] + 0.7 * rng.normal(size=(1200, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        return ccs.bundle(x.astype(np.float32), labels, k=5, kneg=5, seed=1)


def test_bundle_pickle_keeps_arrays_names_and_split(named):
    """An unpickled bundle holds the same arrays, knows its split and its
    string labels' names — in the library too: a class-conditional set
    calibrated on it names its classes, with the original's thresholds."""
    cal = named["cal"]
    back = pickle.loads(pickle.dumps(cal))
    assert back._h != cal._h
    assert back.split == "cal" and back.label_names == cal.label_names == ("cat", "dog", "ox", "yak")
    for name, a in cal.arrays().items():
        assert np.array_equal(back.array(name), a), name
    want = ccs.calibrate("ball", cal, alpha=0.1, calibration="class").thresholds
    got = ccs.calibrate("ball", back, alpha=0.1, calibration="class").thresholds
    assert got == want and set(got) == {"cat", "dog", "ox", "yak"}
    cal_copy = copy.deepcopy(named)  # a dict of bundles: each its own handle
    del cal_copy
    gc.collect()
    assert named["cal"].n == cal.n


def test_features_bundle_and_collection_pickle(named):
    """A features bundle (anchors alone, an OOD split's kind) and a
    collection of string ids, or of integer ids, come back the same; a
    server is neither copied nor pickled."""
    feats = ccs.Bundle(named["test"].anchors, labels=named["test"].labels)
    back = pickle.loads(pickle.dumps(feats))
    assert back.k == 0 and np.array_equal(back.anchors, feats.anchors) and np.array_equal(back.labels, feats.labels)
    rows = named["test"].anchors
    for ids in ([f"doc-{i}" for i in range(len(rows))], np.arange(len(rows)) * 7 + 3):
        c = ccs.Collection(rows, ids)
        b = pickle.loads(pickle.dumps(c))
        assert np.array_equal(b.rows, c.rows) and np.array_equal(b.ids, c.ids)
        assert (b.keys is None) == (c.keys is None) and (c.keys is None or list(b.keys) == list(c.keys))
        s = ccs.calibrate("ball", named["cal"], alpha=0.2)
        (gi, gs), (wi, ws) = s.retrieve(rows[0], b), s.retrieve(rows[0], c)
        assert len(wi) > 1 and np.array_equal(gi, wi) and np.array_equal(gs, ws)
    assert np.array_equal(ccs.Collection(rows).ids, np.arange(len(rows)))
    srv = ccs.serve({"s": ccs.calibrate("ball", named["cal"], alpha=0.2)}, addr="127.0.0.1:0")
    try:
        with pytest.raises(TypeError, match="cannot copy a ccs.Server"):
            copy.copy(srv)
        with pytest.raises(TypeError, match="cannot pickle a ccs.Server"):
            pickle.dumps(srv)
    finally:
        srv.close()


def test_pickles_reach_another_process(tmp_path, named):
    """A fitted set (its training account too), a bundle and a collection
    pickled, loaded by another interpreter that made objects of its own
    first: the same threshold, arrays, names and rows."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        fitted = ccs.fit("genball", named["fit"], named["val"], objective="neg", epochs=2, seed=1, alpha=0.1)
    s = ccs.calibrate(fitted, named["cal"], alpha=0.1)
    c = ccs.Collection(named["test"].anchors, [f"d{i}" for i in range(named["test"].n)])
    (tmp_path / "objs.pkl").write_bytes(pickle.dumps((s, fitted, named["cal"], c)))
    code = textwrap.dedent(f"""
        import pickle, warnings, json, numpy as np, ccs
        warnings.simplefilter("ignore")
        mine = [ccs.Collection(np.eye(4, dtype=np.float32)) for _ in range(40)]  # handles of this process's own
        s, fitted, cal, c = pickle.load(open({str(tmp_path / "objs.pkl")!r}, "rb"))
        print(json.dumps([s.threshold, s.to_json(), fitted.training is not None and fitted.training["epochs"],
                          cal.label_names, cal.split, cal.anchors.sum().item(), list(c.keys[:3]), c.rows.sum().item()]))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    import json
    got = json.loads(r.stdout)
    assert got[0] == s.threshold and got[1] == s.to_json()
    assert got[2] == fitted.training["epochs"]
    assert tuple(got[3]) == named["cal"].label_names and got[4] == "cal"
    assert got[5] == named["cal"].anchors.sum().item() and got[6] == ["d0", "d1", "d2"] and got[7] == c.rows.sum().item()
