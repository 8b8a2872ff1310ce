"""Times the Python package: the overhead of a call, and contains on 10⁶
points at d = 128 (the data and sets of capi's BenchmarkMembers1e6D128).

    CCS_LIBRARY=… python3 python/bench/bench.py [ROUNDS]

Run it beside go test -run X -bench Members1e6D128 ./capi (docs/python.md
has both, measured). Each figure is the median of ROUNDS rounds (default
7), with the smallest and largest.
"""

import json
import statistics
import sys
import time

import numpy as np

import ccs


def timed(f, n):
    """Seconds per call of f over n calls."""
    t = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - t) / n


def report(name, rounds, f, n, unit=1e6, suffix="µs"):
    xs = sorted(timed(f, n) * unit for _ in range(rounds))
    print(f"{name:45s} {statistics.median(xs):10.2f} {suffix}  (min {xs[0]:.2f}, max {xs[-1]:.2f}, {rounds} rounds)")


def set_file(path, geometry, threshold):
    # What capi's benchmark uses: the ℓ2 ball at 16 and the generalized
    # ball with m = 1, p = 1.5 at 150, one-per-anchor (n = 99: rank 95).
    doc = {"format": "ccs-set", "version": 1, "dim": 128, "alpha": 0.05, "threshold": threshold, "guarantee": "exact",
           "geometry": geometry, "calibration": {"mode": "one-per-anchor", "n": 99, "rank": 95, "seed": 0}}
    with open(path, "w") as f:
        json.dump(doc, f)
    return ccs.Set.load(path)


def main(rounds):
    import tempfile
    d = tempfile.mkdtemp()
    ball = set_file(f"{d}/ball.json", {"kind": "ball", "dim": 128}, 16)
    genball = set_file(f"{d}/genball.json", {"kind": "genball", "dim": 128, "scales": [1.0] * 128,
                                             "exponents": [1.5] * 128}, 150)
    rng = np.random.default_rng(4)
    anchor = rng.normal(size=128).astype(np.float32)
    one = rng.normal(size=(1, 128)).astype(np.float32)
    print("overhead per call (one point, d = 128):")
    report("  ccs.version()", rounds, ccs.version, 2000)
    report("  Set.contains(anchor, 1 point)", rounds, lambda: genball.contains(anchor, one), 20000)
    report("  Set.scores(anchor, 1 point)", rounds, lambda: genball.scores(anchor, one), 20000)
    report("  Set.contains, the ctypes call alone", rounds, _raw_contains(genball, anchor, one), 20000)
    report("  Set.retrieve(anchor, 1 row)", rounds, lambda: genball.retrieve(anchor, one), 20000)
    points = rng.normal(size=(1_000_000, 128)).astype(np.float32)
    print("contains on 10⁶ points, d = 128 (float32, C order):")
    for name, s in (("ball", ball), ("genball", genball)):
        report(f"  {name}", rounds, lambda: s.contains(anchor, points), 3, unit=1e3, suffix="ms")
    p64 = points.astype(np.float64)
    report("  genball, float64 points (converted)", rounds, lambda: genball.contains(anchor, p64), 1, unit=1e3, suffix="ms")


def _raw_contains(s, anchor, points):
    """The library's call with the argument descriptors made once: what a
    call costs beyond marshalling."""
    from ctypes import POINTER, c_uint8
    from ccs import _lib
    lent = _lib.Lent()
    a, p = lent.ref(anchor), lent.ref(points)
    out = np.empty(len(points), dtype=np.bool_)
    ptr = out.ctypes.data_as(POINTER(c_uint8))
    h = s._handle()
    return lambda: _lib.call(_lib.lib.ccs_set_contains, h, a, p, 0, 0, ptr, len(points))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
