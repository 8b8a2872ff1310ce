"""A review of c3574ff..7ebff54: each test failed at 7ebff54 for the
reason its docstring gives."""

import warnings

import numpy as np

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


def _baselines(d):
    return {r["method"]: r["false_alarm_rate"]["mean"] for r in d.rows if r.get("false_alarm_rate")}


def test_review46c_ood_cal_class_by_id_names():
    """c3574ff restricts ood_cal to the set's class (ood_class="e") by
    mapping the name through id's label_names alone; ood_cal's own
    label_names are never read. The same held-out rows, their labels
    encoded in another order (label_names reversed), calibrate the
    baselines on another class's rows (label 4: "a" there) and the
    baselines' FAR changes: no error, no warning."""
    X, y, L = _data()
    names = np.array(["a", "b", "c", "d", "e"])
    b = ccs.bundle(X, names[y], k=5, kneg=5, ood_cal_share=0.1, logits=L)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ccs.calibrate("ball", b["cal"], reference=20, ood_cal=b["ood-cal"], ood_class="e")
        oc = b["ood-cal"]
        assert tuple(oc.label_names) == tuple(names)
        # The same rows, the labels encoded in reverse order.
        rev = ccs.Bundle(oc.anchors, labels=4 - np.asarray(oc.labels), logits=oc.logits)
        rev.label_names = tuple(names[::-1])
        same = ccs.Bundle(oc.anchors, labels=np.asarray(oc.labels), logits=oc.logits)
        same.label_names = tuple(names)
        kw = dict(train=b["fit"], cider_epochs=0)
        d1 = ccs.ood_detection(s, b["test"], {"x": b["val"]}, ood_cal=same, **kw)
        d2 = ccs.ood_detection(s, b["test"], {"x": b["val"]}, ood_cal=rev, **kw)
    assert _baselines(d1) == _baselines(d2), (_baselines(d1), _baselines(d2))


def test_review46c_interrupt_cancel_raising_leaves_call_running(monkeypatch):
    """call_interruptible's handler (c3574ff) runs lib.ccs_cancel before
    its join loop, outside the try that swallows a second Ctrl-C: an
    exception there (a second Ctrl-C landing as ccs_cancel returns,
    simulated here) leaves the handler before the worker is joined and
    the token closed. The call raises while the library call still runs
    on its thread — for retrieve_many, whose finally then frees the hits
    (and drops the hits array and the anchors) the worker is writing."""
    import _thread
    import threading
    import time

    from ccs import _lib

    state = {}

    def slow(*args):  # stands in for a library call that stops on its own time
        state["started"] = time.monotonic()
        time.sleep(1.5)
        state["ended"] = time.monotonic()
        return 0

    real = _lib.lib.ccs_cancel

    def cancel_then_interrupted(*args):
        real(*args)
        raise KeyboardInterrupt  # the second Ctrl-C, as ccs_cancel returns

    monkeypatch.setattr(_lib.lib, "ccs_cancel", cancel_then_interrupted)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        _lib.call_interruptible(slow)
    except KeyboardInterrupt:
        pass
    finally:
        timer.cancel()
    still_running = "ended" not in state
    time.sleep(1.6)  # let the worker end before the next test
    assert not still_running, "call_interruptible raised while the library call was still running on its thread"
