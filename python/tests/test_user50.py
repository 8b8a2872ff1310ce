"""Users' and testers' findings of a fiftieth round (each failed at
1c23c4e): inputs that lie, and a search engineer's session from Python
(query and passage embeddings, BEIR qrels with string ids)."""

import warnings

import numpy as np
import pytest

import ccs

def _rows(seed=0, n=600, d=4, classes=4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    centres = 3 * rng.normal(size=(classes, d))
    return (centres[y] + rng.normal(size=(n, d))).astype(np.float32), y


def test_self_positive_refused():
    """A bundle whose positive_index names the anchor itself is accepted
    (info["warnings"] empty); ccs.calibrate("ball", …) of such a bundle
    returns threshold 0.0 — a set that holds nothing but the anchor.
    ccs.bundle never makes one. Expected: ValueError naming positive_index."""
    x, _ = _rows()
    with pytest.raises(ValueError, match="positive_index"):
        ccs.Bundle(x[:20], positive_index=np.arange(20)[:, None])


def test_seed_too_large_says_the_bound():
    """seed=2**70 is refused with "seed: got 1180591620717411303424, want an
    int ≥ 0": the value is an int ≥ 0; what is wrong is that it exceeds
    the 64-bit seed. Expected: the message gives the bound."""
    x, y = _rows()
    with pytest.raises(ValueError) as e:
        ccs.bundle(x, y, k=3, seed=2**70)
    assert "2**64" in str(e.value) or "18446744073709551615" in str(e.value) or "64-bit" in str(e.value), str(e.value)


def test_none_anchor_named_as_none():
    """Set.scores(None, points) (and retrieve(None, …)) answers 'array
    "anchor": dtype "|O" is not supported (embeddings are floating point;
    labels integers or strings) … Python objects — a DataFrame of mixed
    columns gives them', a message about dtypes and labels for a missing
    argument. ccs.bundle(None, y) says "give embeddings". Expected: a
    message that says the anchor is None."""
    x, y = _rows()
    s = ccs.calibrate("ball", ccs.bundle(x, y, k=3)["cal"])
    with pytest.raises((TypeError, ValueError), match="None"):
        s.scores(None, x[:2])


def _rag(n_q=60, n_p=300, d=16, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((n_p, d)).astype(np.float32)
    P /= np.linalg.norm(P, axis=1, keepdims=True)
    Q = P[:n_q] + 0.2 * rng.standard_normal((n_q, d)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    pids = [f"doc-{i:05d}" for i in range(n_p)]
    qids = [f"q{i}" for i in range(n_q)]
    pairs = [(qids[i], pids[i], 1 + i % 3) for i in range(n_q)]
    return P, Q, pids, qids, pairs


@pytest.mark.parametrize("bad", ["2", True])
def test_min_score_of_the_wrong_type_is_a_type_error(bad):
    """docs/python.md: "a keyword of the wrong type raises TypeError (k: got
    a str, want an int)", and bundle's k, kneg, seed, kneg_hard and
    ood_cal_share, calibrate's alpha and delta, fit's lr all do. min_score
    alone is passed through float(): min_score="2" (a value read from a
    config file or argv) and min_score=True are silently taken as 2.0 and
    1.0 — True changes which graded pairs are positives without a word."""
    P, Q, pids, qids, pairs = _rag()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="min_score"):
            ccs.bundle(P, queries=Q, pairs=pairs, ids=pids, query_ids=qids, k=1, kneg=5, min_score=bad)


def test_per_class_on_a_pairs_bundle_points_to_query_labels():
    """evaluate(per_class=True) and coverage_check(per_class=True) on a
    bundle of query-passage pairs without query labels answer "ccs bundle
    -labels gives a bundle its classes" — but ccs bundle refuses -labels
    with -queries/-pairs ("give one of the three (a label of each query,
    such as its language, is -query-labels)"). The advice should name
    -query-labels (query_labels= in Python), which is what gives a pairs
    bundle its classes (docs/your-data.md §6, "Coverage per language")."""
    P, Q, pids, qids, pairs = _rag()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = ccs.bundle(P, queries=Q, pairs=pairs, ids=pids, query_ids=qids, k=1, kneg=5,
                       split=(0, 0, 0.5, 0.5))
        s = ccs.calibrate("ball", b["cal"], alpha=0.2)
    for call in (lambda: s.evaluate(b["test"], per_class=True),
                 lambda: s.coverage_check(b["test"], per_class=True, resplits=10)):
        with pytest.raises(ValueError) as e:
            call()
        assert "query_labels" in str(e.value) or "-query-labels" in str(e.value), str(e.value)
