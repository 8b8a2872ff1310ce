"""A sentence-embedding user's findings (NLI-style triplets, pair
classification), from README.md, docs/your-data.md and docs/python.md
alone: each test failed at d806bd0 for the reason its docstring gives."""

import numpy as np
import pytest

import ccs


def triplets(n=300, d=16, seed=0):
    """(n, 3, d): anchor, paraphrase (near), hard negative (farther), unit norm."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, d))
    p = a + 0.3 * rng.normal(size=(n, d))
    q = a + 0.8 * rng.normal(size=(n, d))
    x = np.stack([a, p, q], 1)
    return (x / np.linalg.norm(x, axis=2, keepdims=True)).astype(np.float32)


def test_triplet_stack_error_does_not_steer_to_views():
    """An (n, 3, d) triplet export given where (n, d) goes is refused with
    'an (n, v, d) array is each item's v views: pass it as views=': a
    sentence-transformers user whose array is (anchor, positive, negative)
    follows it, and ccs.bundle(views=T) then takes every negative for a
    positive, silently (on the report's data the ℓ2 ball's threshold went
    0.75 → 1.15 and 76% of the hard negatives fell inside, against 30%).
    The message should say that triplets are not views and go as queries=
    and pairs= (docs/your-data.md §6). Fails today: views= alone."""
    t = triplets()
    with pytest.raises(ValueError) as e:
        ccs.bundle(t, np.zeros(len(t), int))
    assert "triplet" in str(e.value).lower(), str(e.value)


def test_empty_pairs_list_says_no_pairs():
    """pairs=[] (a filter that kept nothing) is refused as 'pairs: dtype
    float64, shape (0,): want pairs (m, 2) …' — the user gave no float64,
    NumPy's default for an empty list did; an empty (0, 3) array gets
    'pairs: no pairs'. Fails today: the dtype message."""
    t = triplets()
    with pytest.raises(ValueError) as e:
        ccs.bundle(t[:, 1], queries=t[:, 0], pairs=[], k=1)
    assert "no pairs" in str(e.value), str(e.value)
