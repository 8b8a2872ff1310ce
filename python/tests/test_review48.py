"""Findings of a review of the forty-eighth round's change: each test failed
then for the reason its docstring gives."""

import warnings

import numpy as np
import pytest

import ccs


def test_ood_calibration_one_recurring_row_right_split():
    """One value recurring in 5% of the rows (a blank record's embedding), the
    rows bundled once with ood_cal_share=0.1 (2 000 inputs) and the pool
    reference=200 of the cal split: disjoint splits of one bundling, what the
    NativeCopies allowance exists to let through. It is refused ("more than
    their own N exact copies of one another explain"): every input of the
    recurring value equals the pool's row of it, so the shared rows are about
    the inputs' copies, while the allowance is 6*copies*200/2000 = 0.6*copies."""
    rng = np.random.default_rng(48)
    n, d = 20000, 8
    y = rng.integers(0, 5, n)
    X = (rng.normal(size=(n, d)) + y[:, None]).astype(np.float32)
    blank = np.flatnonzero(y == 0)[: n // 20]
    X[blank] = 0.25
    warnings.simplefilter("ignore", ccs.CCSWarning)
    sp = ccs.bundle(X, y, k=5, seed=0, ood_cal_share=0.1)
    ccs.calibrate("ball", sp["cal"], alpha=0.1, reference=200, ood_cal=sp["ood-cal"])


def test_ood_detection_without_ood_sample_ignores_mode():
    """ood_detection(s, x, None, mode="batch") measures the per-input test
    instead and says nothing (as ccs ood -id … -mode batch): the mode asked
    for is dropped silently."""
    rng = np.random.default_rng(1)
    n, d = 3000, 8
    y = rng.integers(0, 5, n)
    X = (rng.normal(size=(n, d)) + 0.8 * y[:, None]).astype(np.float32)
    warnings.simplefilter("ignore", ccs.CCSWarning)
    sp = ccs.bundle(X, y, k=5, seed=0, split=(0, 0, 0.5, 0.5), ood_cal_share=0.2)
    s = ccs.calibrate("ball", sp["cal"], alpha=0.1, reference=200, ood_cal=sp["ood-cal"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match='mode "batch" without an OOD sample'):
            ccs.ood_detection(s, sp["test"].anchors, None, mode="batch")
        with pytest.raises(ValueError, match="by_class splits an OOD sample"):
            ccs.ood_detection(s, sp["test"].anchors, None, by_class=True)
    det = ccs.ood_detection(s, sp["test"].anchors, None)
    assert det.document["ood_sets"] == [] and "alone" in det.document["config"]
