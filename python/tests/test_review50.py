"""Checks of coverage_check on bundles with blocks (review 50): each failed
at 1c23c4e for the reason its docstring gives."""

import warnings

import numpy as np

import ccs


def _blocks_bundle(rng, blocks, per, merge=None):
    """blocks*per anchors at the origin of R^2, one positive each, spread by
    a scale of its block's own; blocks 0..merge merged into one."""
    n = blocks * per
    blk = np.repeat(np.arange(blocks), per)
    pos = np.zeros((n, 1, 2), np.float32)
    for k in range(blocks):
        pos[blk == k, 0] = np.exp(0.8 * rng.normal()) * rng.normal(size=(per, 2))
    if merge is not None:
        blk = np.where(blk <= merge, 0, blk)
    return ccs.Bundle(np.zeros((n, 2), np.float32), pos, labels=blk % 3, blocks=blk)


def test_dominant_block_warned():
    """A block holding more anchors than a side of the resplits' cut is
    divided in every resplit, its rows calibrating and held out together:
    coverage_check warns (CCSWarning, and the result's "warnings"), naming
    its size and the share of anchors in divided blocks ("divided_share").
    At 1c23c4e: a block of 220 of 400 anchors, 200 calibrating, and no
    warning."""
    rng = np.random.default_rng(1)
    cal, test = _blocks_bundle(rng, 40, 25), _blocks_bundle(rng, 20, 20, merge=10)
    s = ccs.calibrate("ball", cal, alpha=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = s.coverage_check(test, resplits=200, seed=1)
    want = "a block holds 220 of the 400 anchors, more than a resplit's 200 calibration anchors"
    assert any(want in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert any(want in w for w in r["warnings"])
    assert r["divided_share"] >= 0.55


def test_one_block_keeps_band():
    """All anchors one block, or each its own, halve the anchors uniformly at
    random as row by row does: the band is kept. At 1c23c4e: "band" left
    out of both."""
    rng = np.random.default_rng(2)
    cal, test = _blocks_bundle(rng, 40, 25), _blocks_bundle(rng, 20, 20)
    s = ccs.calibrate("ball", cal, alpha=0.1)
    n = 400
    rows = s.coverage_check(ccs.Bundle(test.anchors, test.positives, labels=test.labels), resplits=100, seed=1)
    for blocks in (np.zeros(n, np.int64), np.arange(n)):
        r = s.coverage_check(ccs.Bundle(test.anchors, test.positives, labels=test.labels, blocks=blocks), resplits=100, seed=1)
        assert r["band"] == rows["band"], (r.get("blocks"), r.get("band"), rows["band"])
