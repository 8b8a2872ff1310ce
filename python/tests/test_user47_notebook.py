"""Findings of an ML researcher driving ccs from Python in a notebook (a
new user, the forty-seventh round): each test failed at a9ad8e8."""

import os
import warnings

import numpy as np
import pytest

import ccs
from conftest import run_cli


@pytest.fixture(scope="module")
def splits():
    rng = np.random.default_rng(4)
    n, d, classes = 1600, 16, 4
    labels = rng.integers(0, classes, size=n)
    centres = rng.normal(0, 0.8, size=(classes, d))
    spread = 0.5 + labels[:, None] / 2
    emb = (centres[labels] + rng.normal(0, 1, size=(n, d)) * spread).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ccs.bundle(emb, labels, k=10, kneg=10, seed=0)


def test_compare_plots_keyword_is_not_steered_to_resplits(splits):
    # ccs compare -plots DIR draws the figures; ccs.compare(plots=...) is
    # refused with "did you mean resplits=?", which is another thing
    # entirely, and the message does not say how to get the figures from
    # Python (ccs.report, or the ccs plot command on c.save()'s JSON).
    with pytest.raises(TypeError) as e:
        ccs.compare(splits, rows="baselines", seeds=1, plots="figs")
    msg = str(e.value)
    assert "resplits" not in msg, msg
    assert "report" in msg or "ccs plot" in msg, msg


def test_compare_quiet_keyword_is_not_steered_to_out(splits):
    # -quiet is a real flag of ccs compare; quiet= is answered "did you
    # mean out=?" (a results directory), not "progress=None is quiet".
    with pytest.raises(TypeError) as e:
        ccs.compare(splits, rows="baselines", seeds=1, quiet=True)
    assert "out=" not in str(e.value), str(e.value)


def test_bundle_k_error_names_python_keywords():
    # The message tells a Python user to "lower k (-k)" and that "-k 10
    # keeps them all": the flag's spelling, where the keyword is k=.
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(300, 8)).astype(np.float32)
    labels = np.r_[np.zeros(130, int), np.ones(130, int), np.full(40, 2)]
    with pytest.raises(ValueError) as e:
        ccs.bundle(emb, labels, k=20)
    msg = str(e.value)
    assert "(-k)" not in msg and "-k 1" not in msg, msg
    assert "k=" in msg, msg


def test_fit_epochs_error_names_the_keyword(splits):
    # "fit: train: max epochs -1 < 1" names neither epochs= nor its flag.
    with pytest.raises(ValueError) as e:
        ccs.fit("genball", splits["fit"], splits["val"], objective="neg", epochs=-1)
    assert "epochs=" in str(e.value), str(e.value)


def test_set_repr_says_calibration_mode(splits):
    # A class-conditional set's repr shows the marginal threshold (which
    # decides nothing) and looks exactly like a one-per-anchor set's; a
    # PAC set's repr does not say it is PAC or give δ.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = ccs.calibrate("ball", splits["cal"], alpha=0.1)
        cls = ccs.calibrate("ball", splits["cal"], alpha=0.1, calibration="class")
        pac = ccs.calibrate("ball", splits["cal"], alpha=0.1, calibration="pac", delta=0.05)
    assert repr(cls) != repr(one), repr(cls)
    assert "class" in repr(cls), repr(cls)
    assert "pac" in repr(pac).lower() or "delta" in repr(pac) or "δ" in repr(pac), repr(pac)


def test_compare_progress_reports_within_a_cell(splits):
    # ccs compare on the terminal reports each cell's epochs ("epoch 8/150,
    # validation exclusion …"); ccs.compare's progress= gets one report a
    # finished cell, so an InfoNCE cell (2–3 minutes each on 20 000 × 256)
    # leaves a tqdm bar frozen. A report with the cell's epoch would mend it.
    reports = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ccs.compare(splits, rows="genball-neg", seeds=1, epochs=5, progress=reports.append)
    assert any("epoch" in r for r in reports), reports


def test_plot_writes_the_commands_figures(splits, tmp_path):
    # ccs.plot draws a comparison's figures as ccs plot does: the same
    # files, byte for byte.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = ccs.compare(splits, rows="baselines", seeds=1)
    files = ccs.plot(c, tmp_path / "py")
    assert files and all(os.path.exists(f) for f in files), files
    c.save(tmp_path / "c.json")
    run_cli("plot", "-out", tmp_path / "cli", tmp_path / "c.json")
    assert sorted(os.listdir(tmp_path / "py")) == sorted(os.listdir(tmp_path / "cli"))
    for name in os.listdir(tmp_path / "cli"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    with pytest.raises(ValueError, match="no results"):
        ccs.plot([], tmp_path / "none")


def test_compare_warns_of_high_d_at_once():
    # A comparison at d = 2 048 with the ellipsoid warns when it starts of
    # the rows whose cost grows with d² or d³ (an LLM-embedding user's
    # compare ran for hours before anything said so); at d = 64 nothing.
    rng = np.random.default_rng(2)
    for d, said in ((2048, True), (64, False)):
        y = np.arange(240) % 3
        x = (rng.normal(size=(3, d))[y] + rng.normal(size=(240, d))).astype(np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = ccs.bundle(x, y, k=5, kneg=5, seed=0)
        got = []

        def stop(report):
            raise KeyboardInterrupt  # the first report: the warning came before it

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                ccs.compare(b, rows="ball,ellipsoid", seeds=1, resplits=1, progress=stop)
            except KeyboardInterrupt:
                pass
            got = [str(m.message) for m in w if "cost d² to d³" in str(m.message)]
        assert bool(got) == said, (d, got)


def test_comparison_table_for_a_paper(splits, tmp_path):
    # The table alone, as Markdown (the rows str() prints, without its title
    # and notes) and as a LaTeX tabular: a researcher pasting it in a
    # paper sliced str() by hand and had no LaTeX.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = ccs.compare(splits, rows="baselines", seeds=2)
    md, tex = c.markdown(), c.latex()
    assert md in str(c) and md.startswith("| Method") and "Coverage is" not in md, md
    assert tex.startswith("\\begin{tabular}{l") and "\\pm" in tex and "\\%" in tex and tex.rstrip().endswith("\\end{tabular}"), tex
    c.save(tmp_path / "c.json")
    assert ccs.Comparison.load(tmp_path / "c.json").latex() == tex
