"""Your own embeddings, from arrays to a compared, reported and served set.

    python3 python/examples/your_data.py EMBEDDINGS.npy LABELS.npy [OUT_DIR]

EMBEDDINGS.npy is an (n, d) array of any float dtype (what a PyTorch or
Hugging Face model gave you), LABELS.npy its (n,) labels, integers or
strings. It does what these commands do, with the same numbers and files:

    ccs bundle -embeddings EMBEDDINGS.npy -labels LABELS.npy -out OUT/bundles -k 10 -seed 0
    ccs compare -data OUT/bundles -seeds 2 -out OUT/results
    ccs report -in OUT/results -out OUT/report.html
    ccs serve -set best=OUT/results/sets/compare/seed-0/ROW.json -db corpus=EMBEDDINGS.npy

with ROW the compare table's row that excludes the most negatives, and
queries the server once. Calling it again resumes the comparison from
OUT/results (every cell read back), as ccs compare -out does.
"""

import json
import os
import sys
import urllib.request

import numpy as np

import ccs


def main(embeddings, labels, out="."):
    x = np.load(embeddings)
    y = np.load(labels)
    splits = ccs.bundle(x, y, k=10, seed=0, out=os.path.join(out, "bundles"))   # ccs bundle -out
    results = os.path.join(out, "results")
    table = ccs.compare(splits, seeds=2, out=results)            # ccs compare -out
    print(table)
    print("cells:", table.cells["read_back"], "read back,", table.cells["computed"], "computed")
    ccs.report([table], os.path.join(out, "report.html"))        # ccs report

    best = max(table.rows, key=lambda r: r["exclusion"]["mean"])
    print(f"best: {best['method']}: coverage {best['coverage']['mean']:.1f}%, exclusion {best['exclusion']['mean']:.1f}%")
    s = table.set(best["method"], seed=0)                        # fitted and calibrated: no refit
    with ccs.serve({"best": s}, {"corpus": x}, addr="127.0.0.1:0") as srv:   # ccs serve
        query = {"anchor": x[0].tolist(), "collection": "corpus", "limit": 5}
        req = urllib.request.Request(srv.url + "/v1/sets/best/retrieve", data=json.dumps(query).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            answer = json.loads(r.read())
    print(f"retrieve: {answer['total']} items inside the set around item 0; nearest {[h['id'] for h in answer['hits']]}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(*sys.argv[1:4])
