"""The README's session, in Python.

    python3 python/examples/session.py [OUT_DIR]

does what these commands do, with the same numbers and the same files:

    ccs simulate -out sim -seed 1
    ccs calibrate -geometry ellipsoid -cal sim/cal.npz -alpha 0.05 -seed 1 -out ell.json
    ccs evaluate -set ell.json -test sim/test.npz
    ccs fit -geometry genball -objective neg,vol -train sim/fit.npz -val sim/val.npz -out fitted.json
    ccs calibrate -set fitted.json -cal sim/cal.npz -alpha 0.05 -out learned.json
    ccs evaluate -set learned.json -test sim/test.npz

then uses the learned set: which points lie inside it around an anchor, and
a retrieval from a collection. The set files go to OUT_DIR (default: the
current directory); ccs serve can serve them.
"""

import json
import os
import sys

import numpy as np

import ccs


def progress():
    """A tqdm bar when tqdm is installed, else a line every 10 epochs."""
    try:
        from tqdm import tqdm
        return tqdm(desc="fit", unit="epoch", file=sys.stderr)
    except ImportError:
        def line(r):
            if r["epoch"] % 10 == 0 or r["done"]:
                print(f"epoch {r['epoch']}/{r['max_epochs']}: validation exclusion {100 * r['val_exclusion']:.1f}%",
                      file=sys.stderr)
        return line


def main(out):
    os.makedirs(out, exist_ok=True)
    splits = ccs.simulate(seed=1)  # the paper's 3-D simulation: fit, val, cal, test bundles

    ell = ccs.calibrate("ellipsoid", splits["cal"], alpha=0.05, seed=1)
    ell.save(os.path.join(out, "ell.json"))
    print("ellipsoid:", json.dumps(ell.evaluate(splits["test"]), indent=2))

    fitted = ccs.fit("genball", splits["fit"], splits["val"], objective="neg,vol", progress=progress())
    fitted.save(os.path.join(out, "fitted.json"))
    learned = ccs.calibrate(fitted, splits["cal"], alpha=0.05)
    learned.save(os.path.join(out, "learned.json"))
    evaluation = learned.evaluate(splits["test"])
    print("learned:", json.dumps(evaluation, indent=2))

    # The learned set at work: the test positives of an anchor inside it,
    # and every test anchor inside the set around it, nearest first.
    test = splits["test"]
    anchors, positives = test.anchors, test.positives
    inside = learned.contains(anchors[0], positives[0])
    print(f"{inside.sum()} of anchor 0's {len(inside)} test positives are inside its set")
    ids, scores = learned.retrieve(anchors[0], anchors, limit=5)
    print("nearest test anchors inside:", ids.tolist(), np.round(scores, 4).tolist())
    return evaluation


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
