#!/usr/bin/env python3
"""Where a traced run's cores went: a summary of a Go execution trace.

  go tool trace -d=parsed TRACE | python3 bench/traceinfo.py [PARSED]

TRACE is what `bench/scaling -trace FILE` writes (the steady epochs of the
first geometry and thread count); PARSED, that command's output saved to a
file, is read instead of the standard input. It needs the Go toolchain's trace reader
and Python's standard library alone, so a trace made on a lent host is read
here. It prints:

  - the window and how many goroutines ran on average;
  - each goroutine present for a tenth of the window or more: the share of
    it running, runnable (ready, waiting for a thread) and waiting, with
    what it waited on;
  - the driving goroutine's calls of internal/parallel's For (its regions
    "parallel.For"): their durations and the serial gaps between them;
  - how long after a call began its k-th goroutine started on its chunks
    (the regions "parallel.chunks"), and how long the caller waited for the
    last chunks after its own were done;
  - how long after a call began the caller started on its own chunks, and
    these delays summed over the calls (the caller's and the first other
    goroutine's: time the call's first two goroutines spent not on it).

Times are in microseconds: p10 / p50 / p90 / max, with their count and sum.
"""
import argparse
import bisect
import collections
import re
import sys

EVENT = re.compile(r'^M=-?\d+ P=-?\d+ G=(-?\d+) (\w+) Time=(\d+)(.*)$')
STATE = re.compile(r'GoID=(\d+) (\w+)->(\w+) Reason="([^"]*)"')
REGION = re.compile(r'Type="([^"]*)"')


def quant(xs):
    if not xs:
        return "-"
    s = sorted(xs)
    q = lambda p: s[int(p * (len(s) - 1))]
    return "%.1f / %.1f / %.1f / %.1f (n %d, sum %.1f ms)" % (q(.1), q(.5), q(.9), s[-1], len(s), sum(s) / 1e3)


def main(lines):
    state = {}  # goroutine: (state, since, reason)
    spent = collections.defaultdict(collections.Counter)  # goroutine: state → ns
    waits = collections.defaultdict(collections.Counter)  # goroutine: reason → ns
    stacks = collections.defaultdict(list)  # goroutine: open regions (name, begin)
    calls = collections.defaultdict(list)  # goroutine: top-level For regions
    turns = collections.defaultdict(list)  # goroutine: chunk regions
    running = 0
    busy = 0
    first = last = None
    for line in lines:
        m = EVENT.match(line)
        if not m:
            continue
        g, kind, t, rest = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)
        if first is None:
            first = t
        if kind == "StateTransition":
            s = STATE.search(rest)
            if not s:
                continue  # a proc's transition
            gid, frm, to, why = int(s.group(1)), s.group(2), s.group(3), s.group(4)
            if last is not None:
                busy += running * (t - last)
            last = t
            if gid in state:
                st, since, reason = state[gid]
                spent[gid][st] += t - since
                if st == "Waiting":
                    waits[gid][reason] += t - since
            running += (to == "Running") - (frm == "Running")
            state[gid] = (to, t, why)
        elif kind in ("RegionBegin", "RegionEnd"):
            r = REGION.search(rest)
            name = r.group(1) if r else ""
            if kind == "RegionBegin":
                stacks[g].append((name, t))
                continue
            if not stacks[g]:
                continue
            name, begin = stacks[g].pop()
            if name == "parallel.For" and not any(n == "parallel.For" for n, _ in stacks[g]):
                calls[g].append((begin, t))
            elif name == "parallel.chunks":
                turns[g].append((begin, t))
    if first is None or last is None or last == first:
        sys.exit("traceinfo: no goroutine events (is this `go tool trace -d=parsed` output?)")
    window = last - first
    print("window %.1f ms, %.2f goroutines running on average" % (window / 1e6, busy / window))
    for gid in sorted(spent):
        total = sum(spent[gid].values())
        if total < window / 10:
            continue
        share = lambda st: 100 * spent[gid][st] / window
        on = ", ".join("%s %.1f%%" % (r or "?", 100 * ns / window)
                       for r, ns in waits[gid].most_common(2) if ns > window / 100)
        print("G%-6d running %5.1f%%  runnable %5.1f%%  waiting %5.1f%%%s" % (
            gid, share("Running"), share("Runnable"), share("Waiting"), "  (" + on + ")" if on else ""))
    if not calls:
        print("no parallel.For regions: a build without them, or no call in the window")
        return
    driver = max(calls, key=lambda g: len(calls[g]))
    cs = calls[driver]
    span = cs[-1][1] - cs[0][0]
    gaps = [(b - a_end) / 1e3 for (_, a_end), (b, _) in zip(cs, cs[1:])]
    print("driver G%d: %d calls, %.1f%% of its span in them; call µs %s; gap µs %s" % (
        driver, len(cs), 100 * sum(e - b for b, e in cs) / span,
        quant([(e - b) / 1e3 for b, e in cs]), quant(gaps)))
    joins = collections.defaultdict(list)
    tails, ownStarts = [], []
    others = [sorted(tb for tb, _ in ts) for g, ts in turns.items() if g != driver]
    own = sorted(turns.get(driver, []))
    own_begins = [tb for tb, _ in own]
    for b, e in cs:
        starts = []
        for ts in others:  # each goroutine's first turn in the call
            i = bisect.bisect_left(ts, b)
            if i < len(ts) and ts[i] <= e:
                starts.append(ts[i])
        for k, tb in enumerate(sorted(starts)):
            joins[k + 2].append((tb - b) / 1e3)
        turnsIn = own[bisect.bisect_left(own_begins, b):bisect.bisect_right(own_begins, e)]
        if turnsIn:
            ownStarts.append((turnsIn[0][0] - b) / 1e3)
        mine = [te for _, te in turnsIn if te <= e]
        if mine:
            tails.append((e - max(mine)) / 1e3)
    for k in sorted(joins):
        if k <= 4 or k % 4 == 1:
            print("  goroutine #%d started after µs %s" % (k, quant(joins[k])))
    print("the caller waited for the last chunks µs %s" % quant(tails))
    print("the caller started on its own chunks after µs %s" % quant(ownStarts))
    print("delays before the first chunks, summed: the caller %.1f ms, goroutine #2 %.1f ms" % (
        sum(ownStarts) / 1e3, sum(joins.get(2, [])) / 1e3))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="usage: go tool trace -d=parsed TRACE | %(prog)s")
    ap.add_argument("parsed", nargs="?", help="go tool trace -d=parsed's output (default: the standard input)")
    args = ap.parse_args()
    if args.parsed:
        try:
            f = open(args.parsed)
        except OSError as e:
            ap.error("PARSED: %s" % e)
        with f:
            main(f)
    elif sys.stdin.isatty():
        ap.error("give go tool trace -d=parsed's output on the standard input or as PARSED")
    else:
        main(sys.stdin)
