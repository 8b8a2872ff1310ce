"""The Python package's tests: they build the library (libccs.so) and the
ccs command from this checkout, once per run, unless CCS_LIBRARY and CCS_CLI
name built ones, and test the package against the command on the same files.
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def _build():
    """Builds the library and the command into a temporary directory."""
    out = tempfile.mkdtemp(prefix="ccs-python-tests-")
    atexit.register(shutil.rmtree, out, True)
    lib, cli = os.path.join(out, "libccs.so"), os.path.join(out, "ccs")
    for args in (["go", "build", "-buildmode=c-shared", "-o", lib, "./capi"], ["go", "build", "-o", cli, "./cmd/ccs"]):
        subprocess.run(args, cwd=ROOT, check=True)
    return lib, cli


if not (os.environ.get("CCS_LIBRARY") and os.environ.get("CCS_CLI")):
    os.environ["CCS_LIBRARY"], os.environ["CCS_CLI"] = _build()

CLI = os.environ["CCS_CLI"]


def run_cli(*args, cwd=None, check=True):
    """Runs the ccs command; returns its stdout (its stderr, when it fails)."""
    r = subprocess.run([CLI, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"ccs {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
    return r.stdout if r.returncode == 0 else r.stderr


@pytest.fixture(scope="session")
def cli():
    return run_cli


@pytest.fixture(scope="session")
def labelled(tmp_path_factory):
    """Labelled embeddings of 5 classes (d = 6) as .npy files, and the bundles
    ccs bundle makes of them (class 4 held out as OOD, 10% as ood-cal)."""
    d = tmp_path_factory.mktemp("labelled")
    rng = np.random.default_rng(7)
    n, dim, classes = 900, 6, 5
    labels = rng.integers(0, classes, size=n)
    centres = rng.normal(0, 3, size=(classes, dim))
    emb = (centres[labels] + rng.normal(0, 1, size=(n, dim)) * (1 + labels[:, None] / 4)).astype(np.float32)
    np.save(d / "embeddings.npy", emb)
    np.save(d / "labels.npy", labels)
    run_cli("bundle", "-embeddings", d / "embeddings.npy", "-labels", d / "labels.npy", "-out", d / "bundles",
            "-k", 8, "-kneg", 6, "-seed", 3, "-ood-classes", 4, "-ood-cal-share", 0.1)
    return {"dir": d, "embeddings": emb, "labels": labels, "bundles": d / "bundles"}


def child_env():
    """The environment of a child interpreter that imports this checkout's
    package and the library built for the tests."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env
