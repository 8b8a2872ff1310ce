"""A bundle made in memory (ccs.bundle without out=) and pickled — what
multiprocessing's spawn and joblib do to it — lost what its handle knew
without a manifest: the embeddings its source rows number (so that the data's
own exact copies were refused as rows given again) and the blocks its rows are
(so that coverage_check's resplits were no longer warned of). Each test
failed before the pickle carried them."""

import pickle
import warnings

import numpy as np

import ccs


def test_pickled_in_memory_bundles_keep_the_copies_allowance():
    """The rows of test_review48's first test — one value recurring in 5% of
    them —, bundled once; its cal and ood-cal splits calibrate the per-input
    OOD test in memory, and after a pickle round trip they must still."""
    rng = np.random.default_rng(48)
    n, d = 20000, 8
    y = rng.integers(0, 5, n)
    X = (rng.normal(size=(n, d)) + y[:, None]).astype(np.float32)
    X[np.flatnonzero(y == 0)[: n // 20]] = 0.25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        sp = ccs.bundle(X, y, k=5, seed=0, ood_cal_share=0.1)
        ccs.calibrate("ball", sp["cal"], alpha=0.1, reference=200, ood_cal=sp["ood-cal"])
        cal, oodcal = (pickle.loads(pickle.dumps(sp[k])) for k in ("cal", "ood-cal"))
        ccs.calibrate("ball", cal, alpha=0.1, reference=200, ood_cal=oodcal)


def _patients(seed=5, patients=240, d=16):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 9, patients)
    diag = rng.choice(3, patients, p=[0.5, 0.35, 0.15])
    centres = rng.normal(size=(3, d)) / np.sqrt(d) * 1.5
    offset = rng.normal(size=(patients, d)) / np.sqrt(d) * 0.9
    pid = np.repeat(np.arange(patients), sizes)
    X = centres[diag[pid]] + offset[pid] + rng.normal(size=(len(pid), d)) / np.sqrt(d) * 0.3
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X.astype(np.float32), diag[pid], pid


def test_pickled_blocks_bundle_keeps_its_blocks():
    """A blocks= bundle pickled keeps each anchor's block, and so its
    resplits: the same numbers as the original's (it lost the blocks'
    warning before; the blocks themselves are kept now)."""
    X, y, pid = _patients()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = ccs.bundle(X, y, blocks=pid, k=10, seed=0, allow_fewer=True)
    s = ccs.calibrate("ball", b["cal"], alpha=0.1)
    again = pickle.loads(pickle.dumps(b["test"]))
    assert b["test"].blocks is not None and np.array_equal(again.blocks, b["test"].blocks)
    checks = [s.coverage_check(t, resplits=50, seed=0) for t in (b["test"], again)]
    assert checks[0]["coverage"] == checks[1]["coverage"] and checks[0]["blocks"] > 0
