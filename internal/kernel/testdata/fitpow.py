"""Fits the polynomials of kernel.Log2Poly and kernel.Exp2Poly (pow.go).

Iteratively reweighted least squares on a dense grid, towards the minimax
fit: log2(1+f) ≈ f·Q(f) on [0, 1) (absolute error), 2^t ≈ P(t) on [0, 1)
(relative error). Prints the coefficients rounded to float32 and the error of
float32 Horner evaluation. Run with Debian's python3-numpy; the product only
uses the printed constants.
"""
import numpy as np


def fit(fun, deg, weight, basis):
    x = np.linspace(0, 1, 20001)
    a = np.stack([basis(x) * x**i for i in range(deg + 1)], 1)
    y, w = fun(x), weight(x)
    c = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)[0]
    for _ in range(50):
        err = np.abs(a @ c - y) * w
        w = w * (1 + err / err.max()) ** 2
        c = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)[0]
    return [float(np.float32(v)) for v in c]


def horner32(c, x):
    p = np.full_like(x, np.float32(c[-1]))
    for ci in c[-2::-1]:
        p = (p * x + np.float32(ci)).astype(np.float32)
    return p


f = np.linspace(0, 1, 1000001, dtype=np.float32)
q = fit(lambda f: np.log2(1 + f), 6, np.ones_like, lambda f: f)
err = np.abs((horner32(q, f) * f).astype(np.float64) - np.log2(1 + f.astype(np.float64))).max()
print("log2: Q =", q, "max abs error", err)
p = fit(lambda t: 2**t, 5, lambda t: 2.0**-t, np.ones_like)
t64 = f.astype(np.float64)
err = (np.abs(horner32(p, f).astype(np.float64) - 2**t64) / 2**t64).max()
print("exp2: P =", p, "max rel error", err)
