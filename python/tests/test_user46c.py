"""A new user's OOD findings (features + logits of an image classifier).
Each test failed at b9f6811 for the reason its docstring gives."""
import warnings

import numpy as np
import pytest

import ccs


def _data(seed=5):
    rng = np.random.default_rng(seed)
    d, sizes, spread = 16, [900, 800, 600, 400, 300], [1, 1, 1, 1, 2.5]
    means = 2 * rng.normal(size=(5, d))
    X = np.concatenate([means[c] + spread[c] * rng.normal(size=(n, d)) for c, n in enumerate(sizes)])
    y = np.concatenate([np.full(n, c) for c, n in enumerate(sizes)])
    L = X @ means.T / 4 + 0.5 * rng.normal(size=(len(X), 5))
    p = rng.permutation(len(y))
    return X[p].astype(np.float32), y[p], L[p].astype(np.float32)


def test_h5_features_given_as_logits_warned():
    """Features passed as logits (logits=X, d = 16 columns for 5 classes,
    argmax agreeing with the labels at chance) are bundled and scored by
    MSP/Energy in ood_detection without any CCSWarning about the logits."""
    X, y, _ = _data()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        b = ccs.bundle(X, y, k=5, kneg=5, ood_cal_share=0.1, logits=X)
        s = ccs.calibrate("ball", b["cal"], reference=300, ood_cal=b["ood-cal"])
        ccs.ood_detection(s, b["test"], {"x": b["val"]}, train=b["fit"], ood_cal=b["ood-cal"], cider_epochs=0)
    assert any("logits" in str(x.message) for x in w), [str(x.message) for x in w]


def test_h5_per_class_set_says_its_class():
    """calibrate(..., ood_class=4) makes a test whose guarantee is class 4's
    alone, but the set records the class only inside a free-text "source"
    string: s.info["ood_calibration"] has no class field, so neither a
    caller nor ood_detection can tell which inputs the guarantee is for."""
    X, y, _ = _data()
    b = ccs.bundle(X, y, k=5, kneg=5, ood_cal_share=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ccs.calibrate("ball", b["cal"], reference=20, ood_cal=b["ood-cal"], ood_class=4)
    oc = s.info["ood_calibration"]
    assert "class" in oc or "label" in oc, sorted(oc)
