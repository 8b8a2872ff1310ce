"""A forty-eighth round's user, a platform engineer serving a set: each
test failed at 22a3ce9."""

import warnings

import numpy as np
import pytest

import ccs


def _two_sets(tmp_path):
    """Two ℓ2 balls on the same calibration split, α = 0.2 and α = 0.05:
    the same scores, different thresholds."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1200, 3)).astype(np.float32)
    y = np.arange(1200) % 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        b = ccs.bundle(X, labels=y, k=4, seed=1)
    loose = ccs.calibrate("ball", b["cal"], alpha=0.05)
    tight = ccs.calibrate("ball", b["cal"], alpha=0.2)
    assert loose.threshold != tight.threshold
    return loose, tight


def test_client_score_chunks_straddling_a_reload_are_not_mixed(tmp_path):
    """Client.score splits many points into requests of 50 000; docs/python.md
    says they are "answered as one", and security.md that all of an answer is
    of one generation. A reload between two chunks mixes two generations: the
    first chunk's inside is the old set's, the threshold returned the new one's,
    and nothing says so (the answers' generation is ignored)."""
    loose, tight = _two_sets(tmp_path)
    served = tmp_path / "served.json"
    tight.save(served)
    rng = np.random.default_rng(9)
    anchor = np.full(3, 0.01, np.float32)
    # points spread so that many score between the two thresholds
    pts = (rng.normal(size=(120_000, 3)) * (loose.threshold + tight.threshold) / 4).astype(np.float32)
    with ccs.serve({"s": served}, addr="127.0.0.1:0") as srv:
        c = ccs.Client(srv)
        real = c._request
        calls = {"n": 0, "armed": False}

        def request(*a, **k):
            out = real(*a, **k)
            if a[0] == "POST" and calls["armed"]:
                calls["n"] += 1
            if calls["n"] == 1 and a[0] == "POST":
                loose.save(served)  # an operator's new set goes live mid-call
                srv.reload()
            return out

        c._request = request
        c.score("s", anchor, pts[:2])  # the listing asked already
        calls["armed"] = True
        got = c.score("s", anchor, pts)  # started again after the reload: one set's answer
        assert calls["n"] > 3 and got["checksum"] == c.sets()[0]["checksum"]
        inside_by_threshold = got["score"] <= got["threshold"]
        assert np.array_equal(got["inside"], inside_by_threshold), (
            f"{int((got['inside'] != inside_by_threshold).sum())} of {len(pts)} points' 'inside' disagree with the "
            f"threshold {got['threshold']} returned beside them: chunks of two generations joined as one answer")


def test_client_answers_say_which_set_answered(tmp_path):
    """A client that must audit which calibration answered gets nothing from
    Client.score / Client.ood: no set name, generation or checksum."""
    loose, _ = _two_sets(tmp_path)
    with ccs.serve({"s": loose}, addr="127.0.0.1:0") as srv:
        c = ccs.Client(srv)
        got = c.score("s", np.full(3, 0.01), np.ones((2, 3)))
        assert any(k in got for k in ("generation", "checksum", "set_checksum")), sorted(got)
        listed = c.sets()[0]
        assert got["set"] == "s" and got["generation"] == 1 and got["checksum"] == listed["checksum"].strip()
        assert got["checksum"].startswith("sha256:") and len(got["checksum"]) == 71
        o = c.ood("s", np.ones((2, 3))) if listed.get("ood") else None
        assert o is None or o["checksum"] == got["checksum"]
