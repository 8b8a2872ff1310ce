"""Threads, the GIL, progress and cancellation; memory over many calls."""

import gc
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ccs
from ccs import _lib
from conftest import child_env


@pytest.fixture(scope="module")
def splits():
    return ccs.simulate(seed=3, k=20, per_class=400)


@pytest.fixture(scope="module")
def learned(splits):
    f = ccs.fit("genball", splits["fit"], splits["val"], objective="neg,vol", epochs=3)
    return ccs.calibrate(f, splits["cal"], reference=50, ood_cal=splits["test"].anchors[:100])


def test_threads_at_once(splits, learned):
    # Several Python threads use one set, one bundle and one collection at
    # once; each gets what a lone caller gets.
    rng = np.random.default_rng(1)
    anchors = splits["test"].anchors
    points = rng.normal(0, 3, size=(20000, 3)).astype(np.float32)
    coll = ccs.Collection(points)
    want = {i: (learned.contains(anchors[i], points), learned.scores(anchors[i], points),
                learned.retrieve(anchors[i], coll, limit=20), learned.ood(points[:500])["p_value"]) for i in range(8)}
    evaluation = learned.evaluate(splits["test"])
    errors = []

    def work(i):
        try:
            for _ in range(15):
                c, s, (ids, sc), p = want[i]
                assert np.array_equal(learned.contains(anchors[i], points), c)
                assert np.array_equal(learned.scores(anchors[i], points), s)
                got = learned.retrieve(anchors[i], coll, limit=20)
                assert np.array_equal(got[0], ids) and np.array_equal(got[1], sc)
                assert np.array_equal(learned.ood(points[:500])["p_value"], p)
            assert learned.evaluate(splits["test"]) == evaluation
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_the_gil_is_released(learned):
    # While one thread is inside a long call, another runs Python code.
    points = np.random.default_rng(2).normal(size=(1_000_000, 3)).astype(np.float32)
    ticks, inside = [0], threading.Event()

    def count():
        inside.wait()
        while inside.is_set():
            ticks[0] += 1

    t = threading.Thread(target=count)
    t.start()
    inside.set()
    start = ticks[0]
    for _ in range(3):
        learned.scores(points[0], points)
    during = ticks[0] - start
    inside.clear()
    t.join()
    assert during > 1000, f"{during} ticks of another thread during the calls"


class Bar:
    """What fit needs of a tqdm bar: total, update(n), refresh(), set_postfix()."""

    def __init__(self):
        self.total, self.n, self.postfix, self.refreshed = None, 0, None, 0

    def update(self, n):
        self.n += n

    def refresh(self):
        self.refreshed += 1

    def set_postfix(self, refresh=True, **kw):
        self.postfix = kw

    def set_postfix_str(self, s, refresh=True):
        self.postfix = s


def test_progress(splits):
    reports = []
    f = ccs.fit("genball", splits["fit"], splits["val"], objective="neg", epochs=4, patience=4, progress=reports.append)
    assert [r["epoch"] for r in reports] == list(range(f.training["epochs"] + 1))
    assert reports[-1]["done"] and reports[-1]["stop_reason"] == "max epochs"
    assert reports[0]["loss"] is None and reports[1]["loss"] < 0 and reports[-1]["max_epochs"] == 4
    bar = Bar()
    ccs.fit("genball", splits["fit"], splits["val"], objective="neg", epochs=4, patience=4, progress=bar)
    assert (bar.total, bar.n, bar.refreshed) == (4, 4, 1) and "val_exclusion" in bar.postfix


def test_compare_progress(splits):
    # A comparison's bar counts its (row, seed) cells, and names the last.
    bar = Bar()
    ccs.compare(splits, seeds=2, rows="baselines", resplits=5, progress=bar)
    assert (bar.total, bar.n, bar.refreshed) == (4, 4, 1) and isinstance(bar.postfix, str) and bar.postfix


def test_ood_detection_progress_and_stop(splits):
    # ccs.ood_detection runs as a job: CIDER's epochs, the k-NN searches and
    # the baselines done as progress, and a failing callback (as Ctrl-C)
    # stops it.
    s = ccs.calibrate("ball", splits["cal"])
    far = splits["test"].anchors[:200] + 6
    reports, bar = [], Bar()
    with pytest.warns(ccs.CCSWarning, match="only the paper's batch score"):
        ccs.ood_detection(s, splits["test"], far, train=splits["fit"], cider_epochs=3, progress=reports.append)
        ccs.ood_detection(s, splits["test"], far, train=splits["fit"], cider_epochs=3, progress=bar)
    cider = [r for r in reports if r["part"] == "cider"]
    assert [(r["done"], r["total"]) for r in cider] == [(1, 3), (2, 3), (3, 3)] and cider[-1]["what"] == "CIDER epoch 3/3"
    # The k-NN searches and the baselines done are parts too, each ending
    # on its total; the bar follows each part and ends on the last.
    ends = {(r["part"], r["done"]) for r in reports if r["done"] == r["total"]}
    assert {("KNN score", 200), ("D-KNN fit: principal space", len(splits["fit"].anchors)), ("baselines", 8)} <= ends
    assert reports[-1] == {"part": "baselines", "done": 8, "total": 8, "what": "baselines 8/8 (ViM)"}
    assert (bar.total, bar.n) == (8, 8) and bar.postfix == "baselines 8/8 (ViM)"
    calls = []

    def stop(r):
        calls.append(r)
        if r["part"] == "cider" and r["done"] >= 2:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        ccs.ood_detection(s, splits["test"], far, train=splits["fit"], cider_epochs=10000, progress=stop)
    assert calls[-1]["done"] < 10000 and ccs.version()["abi"] == _lib.ABI_VERSION


def test_evaluate_progress_and_stop(splits):
    # evaluate(collection=) runs as a job: its passes over the collection
    # as progress, each stage ending on its anchors; a failing callback (as
    # Ctrl-C) stops them, and the library goes on.
    s = ccs.calibrate("ball", splits["cal"])
    rng = np.random.default_rng(4)
    rows = splits["test"].anchors[rng.integers(0, len(splits["test"].anchors), 20000)] + rng.normal(0, 0.3, (20000, 3))
    reports, bar = [], Bar()
    quiet = s.evaluate(splits["test"], collection=rows, size_anchors=40)
    got = s.evaluate(splits["test"], collection=rows, size_anchors=40, baseline="topk", cal=splits["cal"], progress=reports.append)
    assert got["set_sizes"] == quiet["set_sizes"] and got["coverage"] == quiet["coverage"]
    ends = [(r["part"], r["done"], r["total"]) for r in reports if r["done"] == r["total"]]
    # The baselines' stage counts the ranks it has found (the calibration
    # units', then the test anchors' passes).
    c = ends[-1][1]
    assert ends == [("set sizes", 40, 40), ("top-k baselines", c, c)] and c > 40 and reports[-1]["what"] == f"top-k baselines {c}/{c}"
    s.evaluate(splits["test"], collection=rows, size_anchors=40, progress=bar)
    assert (bar.total, bar.n) == (40, 40) and bar.postfix == "set sizes 40/40"
    big = np.tile(rows, (100, 1))  # 2 000 000 rows: a pass of seconds for every anchor
    calls = []

    def stop(r):
        calls.append(r)
        raise RuntimeError("enough")

    t = time.monotonic()
    with pytest.raises(RuntimeError, match="enough"):
        s.evaluate(splits["test"], collection=big, size_anchors=0, progress=stop)
    # Every anchor at once is one pass over the collection, counted in
    # its chunks.
    assert time.monotonic() - t < 30 and len(calls) == 1 and calls[0]["done"] < calls[0]["total"] == -(-len(big) // 512)
    assert ccs.version()["abi"] == _lib.ABI_VERSION


def test_a_failing_callback_stops_the_fit(splits):
    calls = []

    def stop(r):
        calls.append(r)
        if r["epoch"] == 2:
            raise RuntimeError("enough")

    t = time.monotonic()
    with pytest.raises(RuntimeError, match="enough"):
        ccs.fit("genball", splits["fit"], splits["val"], objective="neg", epochs=150, patience=150, progress=stop)
    assert time.monotonic() - t < 20 and calls[-1]["epoch"] == 2
    # The library goes on.
    assert ccs.version()["abi"] == _lib.ABI_VERSION


def test_ctrl_c_stops_a_fit():
    # SIGINT during a fit: KeyboardInterrupt within a moment, the training
    # cancelled, the interpreter alive. The child sets Python's own SIGINT
    # handler: an interpreter started with SIGINT ignored (a suite run as a
    # shell's background job) keeps it ignored, and the fit would finish.
    code = """
import os, signal, threading, time, ccs
signal.signal(signal.SIGINT, signal.default_int_handler)
splits = ccs.simulate(seed=1, k=50, per_class=2000)
epochs = []
def progress(r):  # Ctrl-C from another thread at epoch 3, while this one waits in the library
    epochs.append(r["epoch"])
    if r["epoch"] == 3:
        threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()
t = time.monotonic()
try:
    ccs.fit("genball", splits["fit"], splits["val"], objective="neg,vol", epochs=150, patience=150, progress=progress)
    print("finished")
except KeyboardInterrupt:
    print("interrupted at epoch", epochs[-1], "after", round(time.monotonic() - t, 1), "s;", ccs.version()["abi"])
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("interrupted at epoch") and r.stdout.endswith(f"; {_lib.ABI_VERSION}\n"), r.stdout
    assert int(r.stdout.split()[3]) < 100, r.stdout


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_no_growth_over_many_calls(splits, learned):
    # 10⁴ rounds of calls (arrays in and out, strings, handles made and
    # closed, errors): the process's resident memory must not grow.
    rng = np.random.default_rng(4)
    points = rng.normal(size=(64, 3)).astype(np.float32)
    anchors = rng.normal(size=(32, 3)).astype(np.float32)
    bad = points.copy()
    bad[5, 1] = np.nan

    def round_(i):
        learned.contains(anchors[i % 32], points)
        learned.scores(anchors[i % 32], points)
        learned.retrieve(anchors[i % 32], points, limit=5)
        learned.ood(points[:4])
        learned.info if i % 2 else learned.to_json()
        with ccs.Bundle(anchors, anchors[:, None, :] + 0.1) as b:
            b.n
        try:
            learned.contains(anchors[0], bad)
        except ValueError:
            pass

    for i in range(1000):
        round_(i)
    gc.collect()
    before = rss()
    for i in range(10_000):
        round_(i)
    gc.collect()
    grown = rss() - before
    assert grown < 16 << 20, f"resident memory grew by {grown >> 20} MiB over 10⁴ rounds"


def test_ctrl_c_stops_a_server():
    # SIGINT while Server.wait() blocks: KeyboardInterrupt within a
    # moment, the server closed (its port free again), the interpreter
    # alive.
    code = """
import os, signal, socket, threading, time, ccs
signal.signal(signal.SIGINT, signal.default_int_handler)
s = ccs.calibrate("ball", ccs.simulate(seed=1, k=5, per_class=100)["cal"])
srv = ccs.serve({"mine": s}, addr="127.0.0.1:0")
port = int(srv.url.rsplit(":", 1)[1])
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
t = time.monotonic()
try:
    srv.wait()
    print("returned")
except KeyboardInterrupt:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # free: the server has stopped
    print("interrupted after", round(time.monotonic() - t, 1), "s;", repr(srv))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("interrupted after") and r.stdout.endswith("<ccs.Server closed>\n"), r.stdout


def test_threads_do_not_change_the_numbers(splits):
    # ccs.threads sets the engine's threads; a fit on one thread and on
    # two gives the same set file, byte for byte.
    was = ccs.threads()
    assert was >= 1
    try:
        got = {}
        for n in (1, 2):
            assert ccs.threads(n) == n and ccs.threads() == n
            f = ccs.fit("genball", splits["fit"], splits["val"], objective="neg,vol", epochs=3, patience=3)
            got[n] = f.to_json()
        assert got[1] == got[2]
    finally:
        ccs.threads(was)
    assert ccs.threads() == was
    with pytest.raises(ValueError, match="threads: n=0: want at least 1"):
        ccs.threads(0)
    with pytest.raises(TypeError, match="threads: n: got a bool"):
        ccs.threads(True)


def test_threads_beyond_the_cpus(splits):
    # More threads than the CPUs this process may use only slow the work:
    # ccs.threads lowers them to those, and warns.
    cpus = len(os.sched_getaffinity(0))
    was = ccs.threads()
    try:
        with pytest.warns(ccs.CCSWarning, match=rf"threads\({cpus + 62}\): this process may use {cpus} CPUs: running {cpus} threads"):
            assert ccs.threads(cpus + 62) == cpus
        assert ccs.threads() == cpus
    finally:
        ccs.threads(was)


def test_ctrl_c_stops_coverage_check(splits):
    # Ctrl-C during coverage_check: KeyboardInterrupt within a moment, the
    # resplits cancelled on the library's side (they ran to the end,
    # minutes for a large bundle, before it took a cancel token), and the
    # library still answers.
    import _thread
    import signal

    s = ccs.calibrate("ball", splits["cal"])
    # interrupt_main does nothing where SIGINT is ignored (a suite run as a
    # shell's background job): Python's own handler for this test.
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    t = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.coverage_check(splits["test"], resplits=2_000_000)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, saved)
    assert time.monotonic() - t < 5
    assert s.coverage_check(splits["test"], resplits=20)["resplits"] == 20
