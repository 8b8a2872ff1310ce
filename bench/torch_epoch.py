#!/usr/bin/env python3
"""One epoch of the paper's objective in PyTorch, written the way a PyTorch user
would: autograd, float32, on the CPU (torch.set_num_threads = THREADS) or a GPU.

  python3 torch_epoch.py DATA.npz genball|single [THREADS] [--device cpu|cuda] [--compile]

Same recipe as ccs: Neg+Vol (lambda 0.001, T = 7), alpha 0.05, soft batch
threshold (softmax(-|i-r|) over the +-5 sorted neighbours of rank
ceil((1-alpha)(N+1))), batch 256 anchors with all their positives and negatives,
plain SGD lr 0.3, gradient-norm clip 1.0, p clamped to [0.1, 10], m >= 1e-3.

--device cuda keeps the data and the parameters on the GPU (the batch's rows are
indexed there) and synchronises before reading each clock; --compile wraps the
step's loss in torch.compile (PyTorch 2), whose first epoch includes compiling.
Prints one JSON line with the seconds of epochs 1 and 2 and the median of the
steady epochs 2..EPOCHS (--epochs, default 2).
"""
import argparse
import json
import math
import statistics
import time

import numpy as np
import torch

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("data")
ap.add_argument("geometry", choices=["genball", "single"])
ap.add_argument("threads", nargs="?", type=int, default=0, help="CPU threads (0: PyTorch's default)")
ap.add_argument("--device", default="cpu", help="cpu or cuda (cuda:N)")
ap.add_argument("--compile", action="store_true", help="torch.compile the loss (PyTorch 2)")
ap.add_argument("--epochs", type=int, default=2, help="epochs to run (the first is not steady)")
args = ap.parse_args()

if args.threads > 0:
    torch.set_num_threads(args.threads)
torch.manual_seed(0)
dev = torch.device(args.device)
z = np.load(args.data)
A = torch.from_numpy(z["anchors"]).to(dev)
P = torch.from_numpy(z["positives"]).to(dev)
Nn = torch.from_numpy(z["negatives"]).to(dev)
n, k, d = P.shape
alpha, T, lam = 0.05, 7.0, 0.001
geometry = args.geometry

if geometry == "genball":
    m = torch.ones(d, requires_grad=True, device=dev)
    p = torch.full((d,), 2.0, requires_grad=True, device=dev)
    params = [m, p]

    def score(x):
        return ((m * x.abs()) ** p).sum(-1)

    def logvol(t):
        inv = 1 / p
        s = inv.sum()
        return (s * torch.log(t) - torch.log(m).sum() + d * math.log(2)
                + torch.lgamma(1 + inv).sum() - torch.lgamma(1 + s))
else:
    M = torch.eye(d, requires_grad=True, device=dev)
    p = torch.tensor(2.0, requires_grad=True, device=dev)
    params = [M, p]

    def score(x):
        return ((x @ M.T).abs() ** p).sum(-1) ** (1 / p)

    def logvol(t):
        return (d * torch.log(t) - torch.linalg.slogdet(M)[1] + d * math.log(2)
                + d * torch.lgamma(1 + 1 / p) - torch.lgamma(1 + d / p))

opt = torch.optim.SGD(params, lr=0.3)


def loss_of(a, pos, neg):
    sp = score((a - pos).reshape(-1, d))
    sn = score((a - neg).reshape(-1, d))
    N = sp.numel()
    r = min(N, math.ceil((1 - alpha) * (N + 1)))
    lo, hi = max(1, r - 5), min(N, r + 5)
    srt = torch.sort(sp).values[lo - 1:hi]
    w = torch.softmax(-torch.abs(torch.arange(lo, hi + 1, dtype=torch.float32, device=sp.device) - r), 0)
    t = (srt * w).sum()
    neg_term = torch.sigmoid(T * (sn - t)).mean()
    return -((1 - lam) * neg_term - lam * logvol(t))


if args.compile:
    if not hasattr(torch, "compile"):
        raise SystemExit(f"--compile needs PyTorch 2 (this is {torch.__version__})")
    loss_of = torch.compile(loss_of)


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def epoch():
    perm = torch.randperm(n, device=dev)
    for b in range(0, n, 256):
        idx = perm[b:b + 256]
        loss = loss_of(A[idx][:, None, :], P[idx], Nn[idx])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        with torch.no_grad():
            p.clamp_(0.1, 10)
            if geometry == "genball":
                m.clamp_(min=1e-3)


times = []
for _ in range(max(2, args.epochs)):
    sync()
    t0 = time.perf_counter()
    epoch()
    sync()
    times.append(time.perf_counter() - t0)
name = "pytorch " + torch.__version__ + (" compiled" if args.compile else "")
print(json.dumps({"impl": name, "device": str(dev), "geometry": geometry, "threads": torch.get_num_threads(),
                  "n": n, "k": k, "d": d, "epoch1_s": times[0], "epoch2_s": times[1],
                  "steady_median_s": statistics.median(times[1:])}))
