"""A review of 73db2ef..603057f: each test failed at 603057f for the
reason its docstring gives."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import ccs


def test_review46_missing_file_error_pickles(tmp_path):
    """_lib._FileNotFound is renamed builtins.FileNotFoundError so that a
    traceback reads as Python's own; but pickle finds classes by module
    and name, gets the real builtins.FileNotFoundError, and refuses:
    "Can't pickle <class 'FileNotFoundError'>: it's not the same object as
    builtins.FileNotFoundError". A worker of multiprocessing or
    concurrent.futures that calls ccs.Bundle.load (or calibrate, fit, …
    on a path) with a missing file cannot send its exception back: the
    parent gets a MaybeEncodingError / PicklingError naming no file,
    where every other ccs error (ValueError, TypeError) pickles."""
    with pytest.raises(FileNotFoundError) as info:
        ccs.Bundle.load(str(tmp_path / "missing.npz"))
    e = info.value
    back = pickle.loads(pickle.dumps(e))
    assert isinstance(back, FileNotFoundError) and "missing.npz" in str(back)


def test_review46_report_checks_its_keywords(tmp_path):
    """f1e85a4 inserted _unfloat between the @_keywords decorator and
    report, so _unfloat is wrapped (needlessly) and report no longer is:
    report(c, path, titel=...) raises Python's bare "report() got an
    unexpected keyword argument 'titel'" instead of the package's
    "report: unexpected keyword titel=: did you mean title=?", as it did
    at 73db2ef and as every other public function does."""
    with pytest.raises(TypeError, match="did you mean title="):
        ccs.report([], str(tmp_path / "r.html"), titel="x")


def test_review46_deepcopy_shares_no_training():
    """_Handle.__deepcopy__ is __copy__: the copy's __dict__ is the
    original's, updated, so a deep copy of a fitted set shares its
    training dict (histories, lists) with the original: changing the
    copy's account changes the original's — not what copy.deepcopy
    promises."""
    rng = np.random.default_rng(0)
    y = np.arange(600) % 3
    x = (rng.normal(size=(3, 6))[y] + 0.5 * rng.normal(size=(600, 6))).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        b = ccs.bundle(x, y, k=3, kneg=3, seed=1)
        fitted = ccs.fit("genball", b["fit"], b["val"], objective="neg", epochs=1, seed=1, alpha=0.1)
    epochs = fitted.training["epochs"]
    d = copy.deepcopy(fitted)
    d.training["epochs"] = -1
    assert fitted.training["epochs"] == epochs
