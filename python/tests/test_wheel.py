"""The wheel: scripts/python-wheel builds it, pip installs it offline into a
fresh virtual environment, and the README's session runs from it (the
example, python/examples/session.py), with the command's numbers and files."""

import base64
import hashlib
import json
import os
import subprocess
import zipfile

import numpy as np
import pytest

from ccs import _lib
from conftest import ROOT, run_cli


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    d = tmp_path_factory.mktemp("dist")
    subprocess.run([os.path.join(ROOT, "scripts", "python-wheel"), d], check=True, capture_output=True)
    (whl,) = list(d.glob("*.whl"))
    return whl


def test_wheel_contents(wheel):
    import ccs
    assert wheel.name == f"ccs-{ccs.__version__}-py3-none-linux_x86_64.whl"
    info = f"ccs-{ccs.__version__}.dist-info"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {"ccs/__init__.py", "ccs/_lib.py", "ccs/libccs.so", f"{info}/METADATA", f"{info}/WHEEL",
                f"{info}/RECORD"} <= names
        record = z.read(f"{info}/RECORD").decode().splitlines()
        assert len(record) == len(names)
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            if path.endswith("RECORD"):
                continue
            data = z.read(path)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (want, len(data)), path
        assert "Tag: py3-none-linux_x86_64" in z.read(f"{info}/WHEEL").decode()


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh virtual environment with the wheel installed, offline."""
    d = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", d], check=True)
    py = d / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check", "-q", wheel],
                   check=True)
    return py


def clean_env():
    """No CCS_LIBRARY, no PYTHONPATH: the installed package and its library."""
    return {k: v for k, v in os.environ.items() if k not in ("CCS_LIBRARY", "PYTHONPATH")}


def test_installed_wheel_imports(venv, tmp_path):
    code = "import ccs, json; print(json.dumps(ccs.version()))"
    r = subprocess.run([venv, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=clean_env(), check=True)
    v = json.loads(r.stdout)
    assert v["library"].startswith(str(venv.parent.parent)) and v["library"].endswith("site-packages/ccs/libccs.so")
    assert v["abi"] == _lib.ABI_VERSION


def test_session_example_equals_the_readme_session(venv, tmp_path):
    # The README's session by the command, then by the example from the
    # installed wheel: the same set files, byte for byte, and the same
    # evaluations.
    cli = tmp_path / "cli"
    cli.mkdir()
    run_cli("simulate", "-out", "sim", "-seed", 1, cwd=cli)
    run_cli("calibrate", "-geometry", "ellipsoid", "-cal", "sim/cal.npz", "-alpha", 0.05, "-seed", 1, "-out", "ell.json", cwd=cli)
    run_cli("fit", "-geometry", "genball", "-objective", "neg,vol", "-train", "sim/fit.npz", "-val", "sim/val.npz",
            "-out", "fitted.json", "-quiet", cwd=cli)
    run_cli("calibrate", "-set", "fitted.json", "-cal", "sim/cal.npz", "-alpha", 0.05, "-out", "learned.json", cwd=cli)
    learned = json.loads(run_cli("evaluate", "-set", "learned.json", "-test", "sim/test.npz", "-json", cwd=cli))

    example = os.path.join(ROOT, "python", "examples", "session.py")
    py = tmp_path / "py"
    r = subprocess.run([venv, example, py], capture_output=True, text=True, cwd=tmp_path, env=clean_env())
    assert r.returncode == 0, r.stderr
    for f in ("ell.json", "fitted.json", "learned.json"):
        assert (py / f).read_bytes() == (cli / f).read_bytes(), f
    start = r.stdout.index("learned: ") + len("learned: ")
    printed = r.stdout[start:r.stdout.index("\n}\n", start) + 2]
    for k in ("kind", "command", "build"):
        del learned[k]
    assert json.loads(printed) == learned
    assert "test positives are inside its set" in r.stdout and "epoch" in r.stderr


def test_your_data_example_equals_the_commands(venv, tmp_path):
    # docs/your-data.md's path from the installed wheel, on float64
    # embeddings with string labels: the bundles, the comparison and the
    # chosen row's set equal the commands' on the same files; a second run
    # reads every cell back.
    rng = np.random.default_rng(11)
    centers = rng.normal(size=(4, 16))
    y = rng.integers(0, 4, 1200)
    x = centers[y] + 0.8 * rng.normal(size=(1200, 16))
    np.save(tmp_path / "emb.npy", x)
    np.save(tmp_path / "labels.npy", np.array(["boot", "coat", "dress", "shirt"])[y])
    example = os.path.join(ROOT, "python", "examples", "your_data.py")
    py = tmp_path / "py"
    py.mkdir()
    r = subprocess.run([venv, example, tmp_path / "emb.npy", tmp_path / "labels.npy", py], capture_output=True, text=True,
                       cwd=tmp_path, env=clean_env())
    assert r.returncode == 0, r.stderr
    assert "cells: 0 read back, 16 computed" in r.stdout and "retrieve: " in r.stdout and (py / "report.html").exists()

    cli = tmp_path / "cli"
    run_cli("bundle", "-embeddings", tmp_path / "emb.npy", "-labels", tmp_path / "labels.npy", "-out", cli / "bundles",
            "-k", 10, "-seed", 0, cwd=tmp_path)
    for f in ("fit", "val", "cal", "test"):
        assert (py / "bundles" / f"{f}.npz").read_bytes() == (cli / "bundles" / f"{f}.npz").read_bytes(), f
    manifest = json.loads((py / "bundles" / "manifest.json").read_text())
    assert manifest["label_names"] == ["boot", "coat", "dress", "shirt"] and manifest["inputs"]["embeddings"]["dtype"] == "<f8"
    want = json.loads(run_cli("compare", "-data", cli / "bundles", "-seeds", 2, "-out", cli / "results", "-json", "-quiet", cwd=tmp_path))
    got = json.loads((py / "results" / "compare.json").read_text())
    strip = lambda t: [{k: v for k, v in row.items() if k != "fit_seconds"} for row in t["rows"]]
    assert strip(got["tables"][0]) == strip(want["tables"][0]) and got["tables"][0]["label_names"] == ["boot", "coat", "dress", "shirt"]
    best = max(got["tables"][0]["rows"], key=lambda row: row["exclusion"]["mean"])
    name = f"seed-0/{best['set']}.json"
    assert (py / "results" / "sets" / "compare" / name).read_bytes() == (cli / "results" / "sets" / "compare" / name).read_bytes()

    again = subprocess.run([venv, example, tmp_path / "emb.npy", tmp_path / "labels.npy", py], capture_output=True, text=True,
                           cwd=tmp_path, env=clean_env())
    assert again.returncode == 0 and "cells: 16 read back, 0 computed" in again.stdout, again.stderr
