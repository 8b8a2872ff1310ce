"""A review of d0de70e..5138705: each test failed at 5138705 for the reason
its docstring gives."""
import threading
import warnings

import numpy as np
import pytest

import ccs
from ccs import _lib


def _set_and_collection(n=4000, d=16, m=40):
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((n, d), dtype=np.float32)
    a = rows[:m].copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ccs.calibrate("ball", ccs.Bundle(rows[:500], rows[500:1000, None, :]), alpha=0.1)
    return s, ccs.Collection(rows), a


def test_review46b_ctrl_c_after_the_search_finished_frees_its_hits(monkeypatch):
    """Ctrl-C that lands after ccs_set_retrieve_many returned 0 (the search
    done, every row's ids/rows/scores malloc'd into the Hits records) but
    before the waiting loop saw the thread end: call_interruptible re-raises
    the KeyboardInterrupt, so _retrieve_rows never reaches its finally that
    ccs_free's the three arrays of each row. They leak (3 x m mallocs)."""
    s, c, a = _set_and_collection()

    class LateInterrupt(threading.Event):  # the wait for the call's end
        fired = False

        def wait(self, timeout=None):
            if not LateInterrupt.fired and timeout is not None:
                super().wait()  # the call finished, status 0
                LateInterrupt.fired = True
                raise KeyboardInterrupt
            return super().wait(timeout)

    freed = []
    real_free = _lib.lib.ccs_free

    def counting_free(p):
        freed.append(p)
        return real_free(p)

    monkeypatch.setattr(_lib.threading, "Event", LateInterrupt)
    monkeypatch.setattr(_lib.lib, "ccs_free", counting_free)
    with pytest.raises(KeyboardInterrupt):
        s._retrieve_rows(a, c, 5)
    assert len(freed) >= 3 * len(a), f"{len(freed)} ccs_free calls after an interrupted call whose {len(a)} rows' hits were malloc'd (3 arrays each)"


def test_review46b_ctrl_c_before_the_wait_loop_cancels_the_search(monkeypatch):
    """KeyboardInterrupt raised by t.start() (its _started.wait() is
    interruptible) or just after it, before the join loop: the finally's
    t.join() waits for the whole search without ccs_cancel ever being
    called — the Ctrl-C is honoured only once the batch is done, the very
    thing aeebc42 set out to fix."""
    s, c, a = _set_and_collection()

    class EarlyInterrupt(threading.Thread):
        def start(self):
            super().start()
            raise KeyboardInterrupt

    cancels = []
    real_cancel = _lib.lib.ccs_cancel

    def recording_cancel(*args):
        cancels.append(args)
        return real_cancel(*args)

    monkeypatch.setattr(_lib.threading, "Thread", EarlyInterrupt)
    monkeypatch.setattr(_lib.lib, "ccs_cancel", recording_cancel)
    with pytest.raises(KeyboardInterrupt):
        s._retrieve_rows(a, c, 5)
    assert cancels, "Ctrl-C during start(): the search ran to its end, ccs_cancel was never called"


def test_review46b_ood_detection_warnings_not_twice():
    """1ac9c7d keeps the detection's warnings in OODTable.Warnings and so in
    its text; ccs ood drops them from the text because stderr said them.
    ood_detection both warns them (CCSWarning) and returns the text with
    them: print(result) after the call shows each warning a second time."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((600, 8)).astype(np.float32)
    y = np.repeat(np.arange(3), 200)
    b = ccs.bundle(x, y, k=3, kneg=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = ccs.calibrate("ball", b["cal"], alpha=0.1)  # no reference pool: the batch-score warning
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = ccs.ood_detection(s, b["test"], {"x": b["val"]}, cider_epochs=0)
    warned = [str(m.message) for m in w if issubclass(m.category, ccs.CCSWarning)]
    assert warned, "expected the no-pool warning"
    again = [m for m in warned if m in str(r)]
    assert not again, f"warned and again in str(result): {again[0][:120]}"
