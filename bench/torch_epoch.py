#!/usr/bin/env python3
"""One epoch of the paper's objective in PyTorch, written the way a PyTorch user
would: autograd, float32, torch.set_num_threads = the Go core count.

  python3 torch_epoch.py DATA.npz genball|single THREADS

Same recipe as ccs: Neg+Vol (lambda 0.001, T = 7), alpha 0.05, soft batch
threshold (softmax(-|i-r|) over the +-5 sorted neighbours of rank
ceil((1-alpha)(N+1))), batch 256 anchors with all their positives and negatives,
plain SGD lr 0.3, gradient-norm clip 1.0, p clamped to [0.1, 10], m >= 1e-3.
Prints one JSON line with the seconds of epochs 1 and 2.
"""
import json
import math
import sys
import time

import numpy as np
import torch

path, geometry, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.set_num_threads(threads)
torch.manual_seed(0)
z = np.load(path)
A = torch.from_numpy(z["anchors"])
P = torch.from_numpy(z["positives"])
Nn = torch.from_numpy(z["negatives"])
n, k, d = P.shape
alpha, T, lam = 0.05, 7.0, 0.001

if geometry == "genball":
    m = torch.ones(d, requires_grad=True)
    p = torch.full((d,), 2.0, requires_grad=True)
    params = [m, p]

    def score(x):
        return ((m * x.abs()) ** p).sum(-1)

    def logvol(t):
        inv = 1 / p
        s = inv.sum()
        return (s * torch.log(t) - torch.log(m).sum() + d * math.log(2)
                + torch.lgamma(1 + inv).sum() - torch.lgamma(1 + s))
else:
    M = torch.eye(d, requires_grad=True)
    p = torch.tensor(2.0, requires_grad=True)
    params = [M, p]

    def score(x):
        return ((x @ M.T).abs() ** p).sum(-1) ** (1 / p)

    def logvol(t):
        return (d * torch.log(t) - torch.linalg.slogdet(M)[1] + d * math.log(2)
                + d * torch.lgamma(1 + 1 / p) - torch.lgamma(1 + d / p))

opt = torch.optim.SGD(params, lr=0.3)


def epoch():
    perm = torch.randperm(n)
    for b in range(0, n, 256):
        idx = perm[b:b + 256]
        a = A[idx][:, None, :]
        sp = score((a - P[idx]).reshape(-1, d))
        sn = score((a - Nn[idx]).reshape(-1, d))
        N = sp.numel()
        r = min(N, math.ceil((1 - alpha) * (N + 1)))
        lo, hi = max(1, r - 5), min(N, r + 5)
        srt = torch.sort(sp).values[lo - 1:hi]
        w = torch.softmax(-torch.abs(torch.arange(lo, hi + 1, dtype=torch.float32) - r), 0)
        t = (srt * w).sum()
        neg = torch.sigmoid(T * (sn - t)).mean()
        loss = -((1 - lam) * neg - lam * logvol(t))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        with torch.no_grad():
            p.clamp_(0.1, 10)
            if geometry == "genball":
                m.clamp_(min=1e-3)


times = []
for _ in range(2):
    t0 = time.perf_counter()
    epoch()
    times.append(time.perf_counter() - t0)
print(json.dumps({"impl": "pytorch " + torch.__version__, "geometry": geometry, "threads": threads,
                  "n": n, "k": k, "d": d, "epoch1_s": times[0], "epoch2_s": times[1]}))
