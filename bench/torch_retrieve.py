#!/usr/bin/env python3
"""Retrieval as a brute-force scan in PyTorch, the GPU's answer to ccs retrieve.

  python3 torch_retrieve.py [--items 1000000] [--d 128] [--reps 30] [--device cuda]

A collection of ITEMS float32 rows of dimension D (standard normal, seed 0)
lives on the device; a query scores every row against one anchor and returns
the indices of the rows inside the set, as ccs retrieve does:

  ball       sum_j (x_j - a_j)^2 <= t^2
  genball    sum_j (m_j |x_j - a_j|)^p_j <= t
  single     sum_j |y_j - (M a)_j|^p <= t, y = M x precomputed for the
             collection (ccs's transformed layout), p = 1.5

Each threshold keeps about 1% of the rows. Prints one JSON line per geometry:
the median and minimum of REPS queries (after three warm-ups), each timed from
the anchor on the host to the indices back on the host.
"""
import argparse
import json
import statistics
import time

import torch

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--items", type=int, default=1_000_000)
ap.add_argument("--d", type=int, default=128)
ap.add_argument("--reps", type=int, default=30)
ap.add_argument("--device", default="cuda")
args = ap.parse_args()

dev = torch.device(args.device)
g = torch.Generator().manual_seed(0)
X = torch.randn(args.items, args.d, generator=g).to(dev)
m = (0.5 + torch.rand(args.d, generator=g)).to(dev)
pj = (1 + 2 * torch.rand(args.d, generator=g)).to(dev)
M = (torch.eye(args.d) + 0.1 * torch.randn(args.d, args.d, generator=g)).to(dev)
Y = X @ M.T
anchor = torch.randn(args.d, generator=g)


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def scores(geometry, a):
    if geometry == "ball":
        return ((X - a) ** 2).sum(1)
    if geometry == "genball":
        return ((m * (X - a).abs()) ** pj).sum(1)
    return ((Y - M @ a).abs() ** 1.5).sum(1)


for geometry in ["ball", "genball", "single"]:
    a = anchor.to(dev)
    t = torch.quantile(scores(geometry, a)[:100_000].float(), 0.01).item()
    times, kept = [], 0
    for i in range(args.reps + 3):
        sync()
        t0 = time.perf_counter()
        a = anchor.to(dev)
        idx = torch.nonzero(scores(geometry, a) <= t).squeeze(1).cpu()
        sync()
        if i >= 3:
            times.append(time.perf_counter() - t0)
        kept = idx.numel()
    print(json.dumps({"impl": "pytorch " + torch.__version__, "device": str(dev), "geometry": geometry,
                      "items": args.items, "d": args.d, "kept": kept,
                      "median_s": statistics.median(times), "min_s": min(times)}), flush=True)
