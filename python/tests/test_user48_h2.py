"""A fraud-analytics user's session (h2): tabular-autoencoder embeddings with
heavy tails (Student-t, 3 degrees of freedom), 8 merchant categories of very
unequal sizes, about 15% of the rows exact copies of another row of their
class (repeat customers), and a next month whose inputs are to be checked for
a shift. Each test fails for the reason its docstring gives."""

import warnings

import numpy as np
import pytest

import ccs


def _data(copies=True, seed=2026):
    rng = np.random.default_rng(seed)
    sizes = [1200, 500, 300, 180, 120, 60, 40, 30]
    d = 8
    means = rng.normal(0, 1.2, size=(len(sizes), d))
    X = np.concatenate([means[c] + rng.standard_t(3, size=(s, d)) for c, s in enumerate(sizes)])
    y = np.concatenate([np.full(s, c) for c, s in enumerate(sizes)])
    if copies:
        n = len(X)
        dst = rng.choice(n, int(0.15 * n), replace=False)
        isdst = np.zeros(n, bool)
        isdst[dst] = True
        for j in dst:
            X[j] = X[rng.choice(np.flatnonzero((y == y[j]) & ~isdst))]
    return X, y


def test_copies_advice_groups_works_with_labels():
    """ccs.bundle warns of the copies: "remove the copies, or give each row and
    its copies one group (-groups) to keep them in one split", and the per-input
    OOD calibration's refusal of them repeats it. With labels, following it —
    groups=one id per distinct row — is refused ("N groups of the splits have
    one row … leave their rows out first", i.e. drop most of the data), and as
    groups the copies would become one another's positives. The advice should
    be one that works for labelled rows."""
    X, y = _data()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ccs.bundle(X, y, k=5, seed=0, allow_fewer=True)
    advice = [str(x.message) for x in w if "exact copies" in str(x.message)]
    assert advice, "setup: the copies are warned of"
    # The advice that works with labels: drop a record exported twice, keep
    # the data's own copies; not groups, which labels' rows refuse here.
    assert "one group" not in advice[0] and "np.unique(x, axis=0, return_index=True)" in advice[0], advice[0]
    keep = np.sort(np.unique(X, axis=0, return_index=True)[1])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ccs.bundle(X[keep], y[keep], k=5, seed=0, allow_fewer=True)
    assert not [x for x in w if "exact copies" in str(x.message)]


def test_ood_calibration_with_copies_has_a_way_forward():
    """With 15% repeat customers the per-input OOD test cannot be calibrated on
    ccs.bundle's own splits: "calibration input i equals pool row j … leave
    copies out before bundling, or give each row and its copies one group".
    The second way out is refused (above). The advice given must work: this
    follows it and expects a calibrated test."""
    X, y = _data()
    warnings.simplefilter("ignore", ccs.CCSWarning)
    sp = ccs.bundle(X, y, k=5, seed=0, allow_fewer=True, ood_cal_share=0.1)
    # The data's own copies put some inputs beside an equal pool row, as
    # they do new inputs: calibrated (a split given twice is still refused).
    s = ccs.calibrate("ball", sp["cal"], alpha=0.1, reference=300, ood_cal=sp["ood-cal"])
    assert s.ood(sp["test"].anchors)["ood"].mean() < 0.1
    with pytest.raises(ValueError, match="inputs are pool rows"):  # the pool's own split, its rows in another order
        ccs.calibrate("ball", sp["cal"], alpha=0.1, reference=300, ood_cal=np.ascontiguousarray(sp["cal"].anchors[::-1]))


def test_ellipsoid_same_bundling_not_called_another_bundling():
    """calibrate("ellipsoid", sp["cal"], fit=sp["fit"]) on one ccs.bundle call's
    splits is refused when 15% of rows are copies, as "the fit split of another
    bundling of the same embeddings (another seed or split), or those rows given
    again" — it is the same bundling; the copies are the data's."""
    X, y = _data()
    warnings.simplefilter("ignore", ccs.CCSWarning)
    sp = ccs.bundle(X, y, k=5, seed=0, allow_fewer=True)
    try:
        ccs.calibrate("ellipsoid", sp["cal"], alpha=0.1, fit=sp["fit"])
    except ValueError as e:
        assert "another bundling" not in str(e), str(e)


def test_shift_check_without_ood_sample(tmp_path):
    """The shift check of a new month's inputs (docs/ood.md, "In-distribution
    inputs drawn otherwise"; docs/your-data.md: "check with ccs ood -id …") is
    ood_detection's. A user with next month's embeddings and no OOD sample
    passes ood=None and is told 'array "anchors" is missing (have []): a bundle
    holds anchors with their positives' — about an array they never gave. The
    check should run on the ID inputs alone (or say that an OOD sample is
    needed)."""
    X, y = _data(copies=False)
    warnings.simplefilter("ignore", ccs.CCSWarning)
    sp = ccs.bundle(X, y, k=5, seed=0, allow_fewer=True, ood_cal_share=0.2)
    s = ccs.calibrate("ball", sp["cal"], alpha=0.1, reference=200, ood_cal=sp["ood-cal"])
    Xn, _ = _data(copies=False, seed=7)
    Xn = X[:2000] + np.random.default_rng(8).standard_t(3, size=(2000, X.shape[1]))  # the same classes, their spread doubled
    d = ccs.ood_detection(s, Xn, None)
    assert d.warnings and "a shift" in " ".join(d.warnings), "a shifted month is warned of"
    clean = ccs.ood_detection(s, sp["test"].anchors, None)
    assert not [w for w in clean.warnings if "a shift" in w] and clean.rows[0]["false_alarm_rate"]["mean"] < 10
