#!/usr/bin/env python3
"""Writes the NumPy fixtures the bundle tests read.

Run with Debian's python3-numpy (1.24):  python3 make_fixtures.py
Values are exact binary fractions from np.arange so the Go test can
recompute them: anchors[i,j] = 0.25*(i*d+j) - 1, positives = 0.5*idx + 0.125,
negatives = -0.375*idx, negative_index[i,j] = (i+j+1) % n, labels = i % 2,
logits[i,c] = i - c.
"""
import numpy as np

n, k, d, c = 4, 3, 5, 2
anchors = (0.25 * np.arange(n * d).reshape(n, d) - 1).astype(np.float32)
positives = (0.5 * np.arange(n * k * d).reshape(n, k, d) + 0.125).astype(np.float32)
negatives = (-0.375 * np.arange(n * k * d).reshape(n, k, d)).astype(np.float32)
neg_index = ((np.arange(n)[:, None] + np.arange(k)[None, :] + 1) % n).astype(np.int64)
labels = (np.arange(n) % 2).astype(np.int64)
logits = (np.arange(n)[:, None] - np.arange(c)[None, :]).astype(np.float32)

np.savez("explicit.npz", anchors=anchors, positives=positives, negatives=negatives)
np.savez_compressed("indexed.npz", anchors=anchors, positives=positives,
                    negative_index=neg_index, labels=labels, logits=logits)
np.save("anchors.npy", anchors)

# Twins of explicit.npz and indexed.npz in the dtypes and orders people
# have: ccs converts them (float64 and float16 to float32, int32 to int64,
# Fortran to C order) and reads the same values.
np.savez("float16.npz", anchors=anchors.astype(np.float16), positives=positives)
np.savez("fortran.npz", anchors=np.asfortranarray(anchors), positives=positives)
np.savez("float64.npz", anchors=anchors.astype(np.float64), positives=positives)
np.savez("twin64.npz", anchors=anchors.astype(np.float64), positives=positives.astype(np.float64),
         negatives=np.asfortranarray(negatives.astype(np.float64)))
np.savez("twin32.npz", anchors=np.asfortranarray(anchors), positives=np.asfortranarray(positives),
         negative_index=np.asfortranarray(neg_index.astype(np.int32)), labels=labels.astype(np.int32),
         logits=logits.astype(np.float16))

# Every float16 value (subnormals, ±0, ±Inf, NaNs) and what NumPy makes of it
# in float32: the decoder must agree bit for bit.
half = np.arange(65536, dtype=np.uint16).view(np.float16)
np.savez_compressed("half.npz", half=half, half32=half.astype(np.float32))

# Bad files: each must give an error naming the file and the array.
over = anchors.astype(np.float64)
over[1, 2] = 1e39
np.savez("overflow64.npz", anchors=over, positives=positives)
under = anchors.astype(np.float64)
under[2, 3] = 1e-50
np.savez("underflow64.npz", anchors=under, positives=positives)
np.savez("shape.npz", anchors=anchors, positives=positives[:, :, :4])
bad = positives.copy()
bad[2, 1, 3] = np.nan
np.savez("nan.npz", anchors=anchors, positives=bad)
np.savez("index_range.npz", anchors=anchors, positives=positives,
         negative_index=neg_index + 10)
np.savez("missing.npz", anchors=anchors)
np.savez("k0.npz", anchors=anchors, positives=np.zeros((n, 0, d), np.float32))
