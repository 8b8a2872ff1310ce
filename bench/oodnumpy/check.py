#!/usr/bin/env python3
"""An independent NumPy computation of four OOD baselines, to compare with `ccs ood`.

    python3 bench/oodnumpy/check.py TRAIN.npz ID.npz OOD.npz

Each file holds "embeddings" (or "anchors") (n, d) and "logits" (n, C); TRAIN also
"labels" (n,). It prints the AUROC (%, OOD positive, ties counted half) of MSP, Energy
(T = 1), Mahalanobis (class means, one shared covariance, pseudo-inverse dropping
eigenvalues below 1e-10 of the largest) and KNN (k = 50 on L2-normalised features), as
defined in docs/ood.md. Needs python3-numpy (Debian); it is not part of the test suite.
"""
import sys

import numpy as np


def features(z):
    return (z["embeddings"] if "embeddings" in z.files else z["anchors"]).astype(np.float64)


def auroc(s_id, s_ood):
    s = np.concatenate([s_id, s_ood])
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    ss = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and ss[j + 1] == ss[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n0, n1 = len(s_id), len(s_ood)
    return (ranks[n0:].sum() - n1 * (n1 + 1) / 2) / (n0 * n1)


def logsumexp(z):
    m = z.max(1, keepdims=True)
    return (m + np.log(np.exp(z - m).sum(1, keepdims=True)))[:, 0]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tr, idf, od = (np.load(p) for p in sys.argv[1:])
    x, y = features(tr), tr["labels"]
    classes = np.unique(y)
    mu = np.stack([x[y == c].mean(0) for c in classes])
    r = x - mu[np.searchsorted(classes, y)]
    w, v = np.linalg.eigh(r.T @ r / len(x))
    keep = w > 1e-10 * w.max()
    prec = (v[:, keep] / w[keep]) @ v[:, keep].T
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)

    def msp(z):
        z = z["logits"].astype(np.float64)
        return -np.exp(z - logsumexp(z)[:, None]).max(1)

    def energy(z):
        return -logsumexp(z["logits"].astype(np.float64))

    def mahalanobis(z):
        f = features(z)
        return np.min(np.stack([np.einsum("ij,jk,ik->i", f - m, prec, f - m) for m in mu]), 0)

    def knn(z, k=50):
        f = features(z)
        f /= np.linalg.norm(f, axis=1, keepdims=True)
        out = np.empty(len(f))
        for i in range(0, len(f), 500):
            d = 2 - 2 * f[i:i + 500] @ xn.T
            out[i:i + 500] = np.sqrt(np.maximum(np.partition(d, k - 1, axis=1)[:, k - 1], 0))
        return out

    for name, score in [("MSP", msp), ("Energy", energy), ("Mahalanobis", mahalanobis), ("KNN", knn)]:
        print(f"{name}: {100 * auroc(score(idf), score(od)):.2f}")


if __name__ == "__main__":
    main()
