"""Every function of the package against the ccs command on the same files:
the same arrays, the same set files byte for byte, the same numbers (equal,
not close)."""

import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import urllib.request
import urllib.error
import time
import threading
import warnings

import numpy as np
import pytest

import ccs
from ccs import _lib
from conftest import CLI


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def cli_json(cli, *args):
    return _lib.loads(cli(*args))


def test_bundle_equals_ccs_bundle(labelled, tmp_path):
    splits = ccs.bundle(labelled["embeddings"], labelled["labels"], k=8, kneg=6, seed=3, ood_classes=[4],
                        ood_cal_share=0.1)
    assert sorted(splits) == sorted(["fit", "val", "cal", "test", "ood-cal", "ood"])
    for name, b in splits.items():
        want = np.load(labelled["bundles"] / f"{name}.npz")
        got = b.arrays()
        assert sorted(got) == sorted(want.files), name
        for k in want.files:
            assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), (name, k)
        b.save(tmp_path / f"{name}.npz")
        assert same_file(tmp_path / f"{name}.npz", labelled["bundles"] / f"{name}.npz"), name
    # The OOD splits hold anchors alone: loading one as a bundle says how.
    with pytest.raises(ValueError, match=r"ood-cal.npz: .*is missing.*ccs.Bundle.load\(path, features=True\) reads it so"):
        ccs.Bundle.load(labelled["bundles"] / "ood-cal.npz")
    assert ccs.Bundle.load(labelled["bundles"] / "ood-cal.npz", features=True).n == splits["ood-cal"].n
    # Given where positives are needed, they are refused by name (not an
    # engine panic, nor a NaN coverage that JSON cannot carry); a fitted
    # set refuses to calibrate on the split it was fitted on.
    ball = ccs.calibrate("ball", splits["cal"])
    with pytest.warns(ccs.CCSWarning, match="this is the set's calibration split"):
        own = ball.evaluate(splits["cal"])
    assert any("this is the set's calibration split" in w for w in own["warnings"]), own["warnings"]
    for call in (lambda: ccs.calibrate("ball", splits["ood-cal"]), lambda: ball.evaluate(splits["ood"]),
                 lambda: ccs.fit("genball", splits["ood"], splits["val"], objective="neg", epochs=1)):
        with pytest.raises(ValueError, match=r"anchors only, no positives: a features bundle"):
            call()
    fitted = ccs.fit("genball", splits["fit"], splits["val"], objective="neg", epochs=1)
    with pytest.warns(ccs.CCSWarning, match=r"α = 0.9: the fit trains the set to hold 1 − α = 10% of the positives"):
        ccs.fit("genball", splits["fit"], splits["val"], objective="neg", epochs=1, alpha=0.9)
    with pytest.raises(ValueError, match=r"^cal: conformal: a threshold calibrated on a split the geometry was fitted on has no guarantee: this is its fit split"):
        ccs.calibrate(fitted, splits["fit"])
    # The same embeddings bundled with another seed: its cal split holds
    # rows of this fit split, which the set knows by their values.
    other = ccs.bundle(labelled["embeddings"], labelled["labels"], k=8, kneg=6, seed=4, ood_classes=[4],
                       ood_cal_share=0.1)
    with pytest.raises(ValueError, match=r"^cal: conformal: .*: about \d+ of the \d+ calibration anchors are rows it was fitted or validated on"):
        ccs.calibrate(fitted, other["cal"])
    with pytest.raises(ValueError, match=r"^calibrate: ood_cal: .*ood.npz: the OOD sample ccs bundle held out"):
        ccs.calibrate("ball", splits["cal"], reference=50, ood_cal=labelled["bundles"] / "ood.npz")
    with pytest.raises(ValueError, match=r"^calibrate: ood_cal: the OOD sample ccs.bundle held out \(its \"ood\" split\)"):
        ccs.calibrate("ball", splits["cal"], reference=50, ood_cal=splits["ood"])
    # A file loaded from ccs bundle's directory knows its split from the
    # manifest beside it: the OOD sample loaded so is refused as well.
    assert splits["ood-cal"].split == "ood-cal" and ccs.Bundle.load(labelled["bundles"] / "cal.npz").split == "cal"
    with pytest.raises(ValueError, match=r"^calibrate: ood_cal: the OOD sample ccs.bundle held out \(its \"ood\" split\)"):
        ccs.calibrate("ball", splits["cal"], reference=50,
                      ood_cal=ccs.Bundle.load(labelled["bundles"] / "ood.npz", features=True))
    assert ccs.Bundle.load(tmp_path / "cal.npz").split is None  # saved above, with no manifest beside it
    ccs.calibrate("ball", splits["cal"], reference=50, ood_cal=splits["ood-cal"])
    with pytest.raises(ValueError, match=r"this is the validation split the set's geometry was fitted on"):
        ccs.calibrate(fitted, splits["cal"], reference=50, ood_cal=splits["val"])
    with pytest.raises(ValueError, match=r"the validation split is the training split"):
        ccs.fit("genball", splits["fit"], splits["fit"], objective="neg", epochs=1)


def test_missing_labels_as_ccs_bundle(labelled, tmp_path, cli):
    """Rows labelled -1 (Hugging Face's and scikit-learn's "no label"):
    refused with the command's message; dropped, the command's bundles
    byte for byte, with its warning; as a class, the command's too."""
    labels = labelled["labels"].copy()
    labels[::7] = -1
    np.save(tmp_path / "labels.npy", labels)
    emb = labelled["dir"] / "embeddings.npy"
    # Named by the argument that says which rows go together, as ccs
    # bundle names its -labels file.
    with pytest.raises(ValueError, match=r"^labels: \d+ of \d+ rows have a label that marks a missing value \(-1: \d+\): Hugging Face datasets"):
        ccs.bundle(labelled["embeddings"], labels, k=8, kneg=6, seed=3)
    for mode in ("drop", "class"):
        cli("bundle", "-embeddings", emb, "-labels", tmp_path / "labels.npy", "-out", tmp_path / mode, "-k", 8, "-kneg", 6,
            "-seed", 3, "-missing-labels", mode, "-allow-fewer")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            splits = ccs.bundle(labelled["embeddings"], labels, k=8, kneg=6, seed=3, missing_labels=mode, allow_fewer=True)
        said = [str(w.message) for w in caught if issubclass(w.category, ccs.CCSWarning)]
        assert any("taken for no label: left out of every split" in m for m in said) == (mode == "drop"), said
        for name, b in splits.items():
            b.save(tmp_path / f"{mode}-{name}.npz")
            assert same_file(tmp_path / f"{mode}-{name}.npz", tmp_path / mode / f"{name}.npz"), (mode, name)
    with pytest.raises(ValueError, match='bundle: missing_labels="skip": want error, drop or class'):
        ccs.bundle(labelled["embeddings"], labels, missing_labels="skip")

    # A pandas column of class names with missing values, converted with
    # astype(str) as the object-array error advises: NaN became "nan",
    # refused as -1 is; dropped, the same bundles as -1 dropped, "nan" not
    # a class name.
    column = np.array(["ant", "bee", "cat", "gnu", "émeu"], dtype=object)[labelled["labels"]]
    column[::7] = np.nan
    names = column.astype(str)
    with pytest.raises(ValueError, match=r'rows have a label that marks a missing value \("nan": \d+\)'):
        ccs.bundle(labelled["embeddings"], names, k=8, kneg=6, seed=3)
    with pytest.warns(ccs.CCSWarning, match=r'\("nan": \d+\), taken for no label'):
        splits = ccs.bundle(labelled["embeddings"], names, k=8, kneg=6, seed=3, missing_labels="drop", allow_fewer=True)
    for name, b in splits.items():
        assert b.label_names == ("ant", "bee", "cat", "gnu", "émeu"), name
        b.save(tmp_path / f"nan-{name}.npz")
        assert same_file(tmp_path / f"nan-{name}.npz", tmp_path / "drop" / f"{name}.npz"), name

    # The column itself (its object values, None and NaN): its missing
    # values are named null, as ccs bundle names a Parquet column's nulls;
    # dropped, the same bundles; as a class, a class named "null" in its
    # sorted place ("(null)" beside a label "null").
    with pytest.warns(ccs.CCSWarning, match=r'\(null: \d+\), taken for no label'):
        splits = ccs.bundle(labelled["embeddings"], column, k=8, kneg=6, seed=3, missing_labels="drop", allow_fewer=True)
    for name, b in splits.items():
        b.save(tmp_path / f"null-{name}.npz")
        assert same_file(tmp_path / f"null-{name}.npz", tmp_path / "drop" / f"{name}.npz"), name
    column[1::7] = None
    column[2::7] = "null"
    splits = ccs.bundle(labelled["embeddings"], column, k=8, kneg=6, seed=3, missing_labels="class", allow_fewer=True)
    cal = splits["cal"]
    assert cal.label_names == ("(null)", "ant", "bee", "cat", "gnu", "null", "émeu")
    nulls = len(range(0, len(column), 7)) + len(range(1, len(column), 7))
    assert sum(int((b.labels == 0).sum()) for b in splits.values()) == nulls
    assert sum(int((b.labels == 5).sum()) for b in splits.values()) == len(range(2, len(column), 7))
    # Beside an empty label, which sorts before the null mark: still a
    # class named "(null)", never the engine's mark itself.
    column[3::7] = ""
    splits = ccs.bundle(labelled["embeddings"], column, k=8, kneg=6, seed=3, missing_labels="class", allow_fewer=True)
    assert splits["cal"].label_names == ("", "(null)", "ant", "bee", "cat", "gnu", "null", "émeu")
    assert sum(int((b.labels == 1).sum()) for b in splits.values()) == nulls


NAMES = np.array(["ant", "bee", "cat", "gnu", "émeu"])  # sorted by code point: the codes are labelled's integers


@pytest.mark.parametrize("form", ["str", "bytes", "object", "list"])
def test_string_labels_equal_ccs_bundle(form, labelled, tmp_path, cli):
    """String labels, as NumPy, pandas (object arrays) or a list hold them:
    the command's bundles from the same strings saved by np.save, byte for
    byte, the held-out class named by its string; label_names their
    sorted values."""
    names = NAMES[labelled["labels"]]
    given = {"str": names, "bytes": np.char.encode(names, "utf-8"), "object": names.astype(object),
             "list": names.tolist()}[form]
    np.save(tmp_path / "names.npy", given if form in ("str", "bytes") else names)  # np.save pickles objects
    cli("bundle", "-embeddings", labelled["dir"] / "embeddings.npy", "-labels", tmp_path / "names.npy",
        "-out", tmp_path / "out", "-k", 8, "-kneg", 6, "-seed", 3, "-ood-classes", "émeu", "-ood-cal-share", 0.1)
    splits = ccs.bundle(labelled["embeddings"], given, k=8, kneg=6, seed=3, ood_classes=["émeu"], ood_cal_share=0.1)
    for name, b in splits.items():
        assert b.label_names == tuple(NAMES), (form, name)
        b.save(tmp_path / f"py-{name}.npz")
        assert same_file(tmp_path / f"py-{name}.npz", tmp_path / "out" / f"{name}.npz"), (form, name)
        assert same_file(tmp_path / f"py-{name}.npz", labelled["bundles"] / f"{name}.npz"), (form, name)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["label_names"] == NAMES.tolist() and manifest["ood_classes"] == [4]
    assert ccs.bundle(labelled["embeddings"], labelled["labels"], k=8)["fit"].label_names is None

    # out=: the command's directory, byte for byte but for the manifest's
    # command and inputs (arrays in memory: their dtype, shape and the
    # SHA-256 of their bytes in C order).
    ccs.bundle(labelled["embeddings"], given, k=8, kneg=6, seed=3, ood_classes=["émeu"], ood_cal_share=0.1,
               out=tmp_path / "py")
    for name in splits:
        assert same_file(tmp_path / "py" / f"{name}.npz", tmp_path / "out" / f"{name}.npz"), (form, name)
    mine = json.loads((tmp_path / "py" / "manifest.json").read_text())
    assert mine["command"] == (f"ccs.bundle(embeddings, labels, k=8, kneg=6, split=(0.5, 0.1, 0.2, 0.2), seed=3, "
                               f"ood_classes=['émeu'], ood_cal_share=0.1, out={str(tmp_path / 'py')!r})")
    # kneg not given is k's, and the call is recorded with it (not kneg=0).
    ccs.bundle(labelled["embeddings"], given, k=8, seed=3, ood_classes=["émeu"], ood_cal_share=0.1, out=tmp_path / "py-k")
    assert "k=8, kneg=8, split=" in json.loads((tmp_path / "py-k" / "manifest.json").read_text())["command"]
    emb = np.ascontiguousarray(labelled["embeddings"])
    assert mine["inputs"]["embeddings"] == {"dtype": emb.dtype.str, "shape": list(emb.shape),
                                            "sha256": hashlib.sha256(emb.tobytes()).hexdigest()}
    lab = np.asarray(given)
    if lab.dtype != object:
        assert mine["inputs"]["labels"]["sha256"] == hashlib.sha256(lab.tobytes()).hexdigest()
    assert mine["inputs"]["labels"]["shape"] == [len(names)]
    for m in (mine, manifest):
        del m["command"], m["inputs"]
    assert mine == manifest
    if form == "str":
        # evaluate per class names the classes as ccs evaluate does, from the
        # manifest beside the command's test bundle.
        s = ccs.calibrate("ball", splits["cal"], alpha=0.1)
        s.save(tmp_path / "ball.json")
        want = cli_json(cli, "evaluate", "-set", tmp_path / "ball.json", "-test", tmp_path / "out" / "test.npz",
                        "-per-class", "-json")
        del want["kind"], want["command"], want["build"]
        assert want["label_names"] == NAMES.tolist()
        assert s.evaluate(splits["test"], per_class=True) == want
        assert "label_names" not in s.evaluate(splits["test"])
        # Without per-class rows, the command's document has no names either.
        plain = cli_json(cli, "evaluate", "-set", tmp_path / "ball.json", "-test", tmp_path / "out" / "test.npz", "-json")
        del plain["kind"], plain["command"], plain["build"]
        assert plain == s.evaluate(splits["test"])
        # A file of the command's directory, loaded: its manifest names them.
        assert ccs.Bundle.load(tmp_path / "out" / "test.npz").label_names == tuple(NAMES)
        assert s.evaluate(str(tmp_path / "out" / "test.npz"), per_class=True) == want
        # A class too small for a class-conditional set at α = 0.001 is
        # refused by its name, saying how to go on; allowed, the set keeps
        # the names and says it of that class.
        with pytest.raises(ValueError, match=r'class "ant" \(\d+ disjoint pairs of its \d+ calibration anchors\): conformal: .* \(allow_infinite=True makes that class'):
            ccs.calibrate("ball", splits["cal"], alpha=0.001, calibration="class")
        with pytest.warns(ccs.CCSWarning, match='class "ant": '):
            c = ccs.calibrate("ball", splits["cal"], alpha=0.001, calibration="class", allow_infinite=True)
        assert [k.get("name") for k in json.loads(c.to_json())["classes"]] == NAMES[:4].tolist()
        # Retrieving with such a class's threshold says so every time: its
        # set is the whole space, every item of the collection in it.
        anchor = splits["test"].anchors[0]
        with pytest.warns(ccs.CCSWarning, match=r'class "ant": .* so the set is the whole space'):
            ids, _ = c.retrieve(anchor, splits["test"].anchors, label="ant")
        assert len(ids) == len(splits["test"].anchors)
        with pytest.warns(ccs.CCSWarning, match=r'class "ant": .* so the set is the whole space'):
            c.retrieve_many(splits["test"].anchors[:2], splits["test"].anchors, labels=["ant", "ant"])
        with pytest.warns(ccs.CCSWarning, match=r'class "ant": .* so the set is the whole space'):
            assert c.contains(anchor, splits["test"].anchors[:5], label="ant").all()
        # compare refuses such a class the same way, saying allow_infinite
        # keeps it; given, the table warns that it is the whole space in
        # every row, with LogVol/d +Inf; it goes with class calibration.
        with pytest.raises(ValueError, match=r'class "ant" has .*allow_infinite=True'):
            ccs.compare(splits, rows="baselines", seeds=1, alpha=0.001, calibration="class")
        with pytest.warns(ccs.CCSWarning, match=r'-allow-infinite: class "ant" has .*LogVol/d is \+Inf'):
            t = ccs.compare(splits, rows="baselines", seeds=1, alpha=0.001, calibration="class", allow_infinite=True, resplits=5)
        assert all(r["logvol_per_dim"]["mean"] == float("inf") for r in t.table["rows"])
        assert "allow_infinite=True" in t.document["command"]
        with pytest.raises(ValueError, match='allow_infinite=True .* goes with calibration="class"'):
            ccs.compare(splits, rows="baselines", seeds=1, allow_infinite=True)
        # Evaluated on its own calibration split, a set warns: no test.
        with pytest.warns(ccs.CCSWarning, match="this is the set's calibration split"):
            s.evaluate(splits["cal"])
        # The same from the directory out= wrote: its manifest names them.
        mine = cli_json(cli, "evaluate", "-set", tmp_path / "ball.json", "-test", tmp_path / "py" / "test.npz",
                        "-per-class", "-json")
        del mine["kind"], mine["command"], mine["build"]
        assert mine == want
        # Fortran order: the same hash, that of the C-order bytes.
        ccs.bundle(np.asfortranarray(labelled["embeddings"]), given, k=8, kneg=6, seed=3, out=tmp_path / "f")
        f = json.loads((tmp_path / "f" / "manifest.json").read_text())
        assert f["inputs"]["embeddings"]["sha256"] == hashlib.sha256(emb.tobytes()).hexdigest()
        # Made again into the same directory without the OOD splits: the
        # earlier run's ood.npz and ood-cal.npz go, as the command's do.
        ccs.bundle(labelled["embeddings"], given, k=8, kneg=6, seed=3, out=tmp_path / "py")
        assert not (tmp_path / "py" / "ood.npz").exists() and not (tmp_path / "py" / "ood-cal.npz").exists()
        assert (tmp_path / "py" / "fit.npz").exists()


def test_query_labels_equal_ccs_bundle(tmp_path, cli):
    """A label of each query of relevance pairs (its language): ccs.bundle's
    query_labels, as an array in row order or a dict by query id, makes the
    bundles ccs bundle -query-labels makes of a CSV in another order, with
    the languages as the anchors' labels; a class-conditional set gives
    each language its threshold, and evaluate a row by language."""
    rng = np.random.default_rng(13)
    emb = rng.normal(size=(300, 4)).astype(np.float32)
    queries = rng.normal(size=(200, 4)).astype(np.float32)
    ids, qids = [f"doc{i}" for i in range(300)], [f"Q{199 - q}" for q in range(200)]
    lang = rng.choice(["en", "de", "sw"], 200, p=[0.6, 0.3, 0.1])
    pairs = [(qids[q], ids[int(r)]) for q in range(200) for r in rng.choice(300, 2, replace=False)]
    np.save(tmp_path / "emb.npy", emb)
    np.save(tmp_path / "queries.npy", queries)
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{r}\t1\n" for q, r in pairs))
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    (tmp_path / "qids.txt").write_text("\n".join(qids) + "\n")
    order = rng.permutation(200)
    (tmp_path / "lang.csv").write_text("query-id,language\n" + "".join(f"{qids[q]},{lang[q]}\n" for q in order))
    cli("bundle", "-embeddings", tmp_path / "emb.npy", "-queries", tmp_path / "queries.npy", "-pairs", tmp_path / "qrels.tsv",
        "-ids", tmp_path / "ids.txt", "-query-ids", tmp_path / "qids.txt", "-query-labels", str(tmp_path / "lang.csv") + ":language",
        "-k", 1, "-kneg", 5, "-out", tmp_path / "cli")
    for given in (lang, {qids[q]: lang[q] for q in order}):
        splits = ccs.bundle(emb, queries=queries, pairs=pairs, ids=ids, query_ids=qids, query_labels=given, k=1, kneg=5)
        for name, b in splits.items():
            b.save(tmp_path / f"py-{name}.npz")
            assert same_file(tmp_path / f"py-{name}.npz", tmp_path / "cli" / f"{name}.npz"), name
            assert list(b.label_names) == ["de", "en", "sw"]
            assert all(b.label_names[l] == lang[q] for l, q in zip(b.labels, b.index))
    s = ccs.calibrate("ball", splits["cal"], alpha=0.2, calibration="class")
    rows = s.evaluate(splits["test"], per_class=True)["classes"]
    assert [r["name"] for r in rows] == ["de", "en", "sw"]
    # retrieve_many of a Bundle takes its own labels, by their names (as
    # ccs retrieve -anchor test.npz): another bundling's numbering of the
    # same names is no other class.
    t = splits["test"]
    hits = lambda r: [list(ids) for ids, _ in r]
    own = hits(s.retrieve_many(t, emb))
    assert own == hits(s.retrieve_many(t.anchors, emb, labels=[t.label_names[l] for l in t.labels]))
    names = t.label_names
    t.label_names = tuple(reversed(names))  # as a bundling that numbers them otherwise would
    try:
        renamed = hits(s.retrieve_many(t, emb))
        assert renamed == hits(s.retrieve_many(t.anchors, emb, labels=[t.label_names[l] for l in t.labels]))
        assert renamed != own
    finally:
        t.label_names = names
    # A marginal set judged by language: each language checked against its
    # calibration, as ccs evaluate -per-class checks it.
    marginal = ccs.calibrate("ball", splits["cal"], alpha=0.2).evaluate(splits["test"], per_class=True)
    assert [(c["name"], c["units"]) for c in marginal["class_checks"]] == [(r["name"], r["anchors"]) for r in marginal["classes"]]
    # One language's set, one threshold: the class set's for it, and the
    # command's -class set byte for byte.
    cli("calibrate", "-geometry", "ball", "-cal", tmp_path / "cli" / "cal.npz", "-alpha", 0.2, "-class", "de", "-out", tmp_path / "de.json")
    de = ccs.calibrate("ball", tmp_path / "cli" / "cal.npz", alpha=0.2, label="de")
    de.save(tmp_path / "py-de.json")
    assert de.threshold == s.thresholds["de"]
    assert same_file(tmp_path / "py-de.json", tmp_path / "de.json")
    with pytest.raises(ValueError, match=r'label="xx"|"xx" is not among the labels'):
        ccs.calibrate("ball", splits["cal"], alpha=0.2, label="xx")
    with pytest.raises(ValueError, match=r"calibrates one class's anchors alone"):
        ccs.calibrate("ball", splits["cal"], alpha=0.2, label="de", calibration="class")
    # A query without a language (pandas' None): refused, or left out.
    unknown = [None] + list(lang[1:])
    with pytest.raises(ValueError, match=r"1 of the queries with a relevant row have a query label that marks a missing value"):
        ccs.bundle(emb, queries=queries, pairs=pairs, ids=ids, query_ids=qids, query_labels=unknown, k=1)
    with pytest.warns(ccs.CCSWarning, match=r"marks a missing value .*left out of every split"):
        kept = ccs.bundle(emb, queries=queries, pairs=pairs, ids=ids, query_ids=qids, query_labels=unknown, k=1, missing_labels="drop")
    assert sum(b.n for b in kept.values()) == 199
    with pytest.raises(ValueError, match=r"query_labels: 1 of the 200 query ids have no label \(the first: 'Q199'\)"):
        ccs.bundle(emb, queries=queries, pairs=pairs, ids=ids, query_ids=qids, query_labels={q: "en" for q in qids[1:]}, k=1)
    with pytest.raises(ValueError, match=r"ids, query_ids and query_labels are of relevance pairs"):
        ccs.bundle(emb, labels=lang[:1].repeat(300), query_labels=lang, k=1)


def test_qrels_ids_with_spaces(tmp_path):
    """A qrels file's ids may hold spaces ("p 115"): a line with tabs is
    split on tabs alone, a .csv's on commas; the file gives the bundles
    the pairs as a list give. Too many negatives are refused naming
    kneg=, the keyword, beside the command's -kneg."""
    rng = np.random.default_rng(13)
    emb = rng.normal(size=(200, 4)).astype(np.float32)
    queries = rng.normal(size=(40, 4)).astype(np.float32)
    ids, qids = [f"p {i}" for i in range(200)], [f"q {q}" for q in range(40)]
    named = [(qids[q], ids[(5 * q + 115) % 200]) for q in range(40)]
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{r}\t1\n" for q, r in named))
    (tmp_path / "qrels.csv").write_text("query-id,corpus-id\n" + "".join(f"{q},{r}\n" for q, r in named))
    with gzip.open(tmp_path / "qrels.tsv.gz", "wt") as f:  # as BEIR's downloads hold them
        f.write((tmp_path / "qrels.tsv").read_text())
    want = ccs.bundle(emb, queries=queries, pairs=named, ids=ids, query_ids=qids, k=1, kneg=4, seed=5)
    for f in ("qrels.tsv", "qrels.csv", "qrels.tsv.gz"):
        got = ccs.bundle(emb, queries=queries, pairs=tmp_path / f, ids=ids, query_ids=qids, k=1, kneg=4, seed=5)
        for split, b in got.items():
            assert np.array_equal(b.index, want[split].index), (f, split)
    # JSON lines of pairs are the command's: refused here, saying what to pass.
    (tmp_path / "qrels.jsonl").write_text("".join(json.dumps({"query-id": q, "corpus-id": r, "score": 1}) + "\n" for q, r in named))
    with pytest.raises(ValueError, match=r"qrels.jsonl: JSON lines of pairs are read by the command .* pass them as BEIR's dict"):
        ccs.bundle(emb, queries=queries, pairs=tmp_path / "qrels.jsonl", ids=ids, query_ids=qids, k=1, kneg=4, seed=5)
    with pytest.raises(ValueError, match=r"negatives per anchor \(-kneg, which is -k unless given; kneg= in Python\)"):
        ccs.bundle(emb, np.arange(200) % 4, k=2, kneg=150, seed=5)


def test_qrels_directory_equal_ccs_bundle(tmp_path, cli):
    """A qrels table in a directory — a Hugging Face dataset's
    (save_to_disk: state.json and its shards) or Dask's and Spark's
    qrels.parquet of parts — is read by ccs.bundle(pairs="DIR:QUERY,ROW")
    as ccs bundle -pairs reads it, by the same code: the bundles of the
    pairs as a list, byte for byte the command's, and the manifest's
    SHA-256 of the directory the command's. The Parquet is Go's
    (Collection.save, no pyarrow here): its "id" column names a query and
    the row of the same id, a pair (x, x)."""
    rng = np.random.default_rng(21)
    emb = rng.normal(size=(200, 4)).astype(np.float32)
    queries = rng.normal(size=(40, 4)).astype(np.float32)
    ids = [f"d{i}" for i in range(200)]
    qids = [ids[r] for r in rng.choice(200, 40, replace=False)]  # each query's id its relevant row's
    np.save(tmp_path / "emb.npy", emb)
    np.save(tmp_path / "queries.npy", queries)
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    (tmp_path / "qids.txt").write_text("\n".join(qids) + "\n")
    hf, dask = tmp_path / "hf", tmp_path / "qrels.parquet"
    hf.mkdir()
    dask.mkdir()
    for i, part in enumerate((qids[:25], qids[25:])):
        ccs.Collection(np.zeros((len(part), 2), np.float32), part).save(hf / f"data-{i}.parquet")
        ccs.Collection(np.zeros((len(part), 2), np.float32), part).save(dask / f"part.{i}.parquet")
    (hf / "state.json").write_text(json.dumps({"_data_files": [{"filename": f"data-{i}.parquet"} for i in range(2)]}))
    (dask / "_SUCCESS").write_text("")
    kw = dict(ids=ids, query_ids=qids, k=1, kneg=4, seed=5)
    want = ccs.bundle(emb, queries=queries, pairs=[(q, q) for q in qids], **kw)
    for name, arg in (("hf", f"{hf}:id,id"), ("dask", f"{dask}:id,id"), ("slash", f"{dask}{os.sep}:id,id")):
        cli("bundle", "-embeddings", tmp_path / "emb.npy", "-queries", tmp_path / "queries.npy", "-pairs", arg, "-ids", tmp_path / "ids.txt",
            "-query-ids", tmp_path / "qids.txt", "-k", 1, "-kneg", 4, "-seed", 5, "-out", tmp_path / f"cli-{name}")
        got = ccs.bundle(emb, queries=queries, pairs=arg, out=tmp_path / f"py-{name}", **kw)
        for split, b in got.items():
            assert np.array_equal(b.index, want[split].index), (name, split)
            assert same_file(tmp_path / f"py-{name}" / f"{split}.npz", tmp_path / f"cli-{name}" / f"{split}.npz"), (name, split)
        man = [json.loads((tmp_path / f"{w}-{name}" / "manifest.json").read_text())["inputs"]["pairs"] for w in ("py", "cli")]
        assert man[0] == man[1] and man[0]["path"] == arg, man
    # A DatasetDict of two splits (save_to_disk's layout) is read as one
    # table of pairs, the same bundles, with the command's note as a
    # CCSWarning: every split's judgements pooled.
    dd = tmp_path / "dd"
    for split, part in (("train", qids[:25]), ("test", qids[25:])):
        (dd / split).mkdir(parents=True)
        ccs.Collection(np.zeros((len(part), 2), np.float32), part).save(dd / split / "data-0.parquet")
        (dd / split / "state.json").write_text(json.dumps({"_data_files": [{"filename": "data-0.parquet"}]}))
    (dd / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    with pytest.warns(ccs.CCSWarning, match=r"dd: a DatasetDict: its splits train, test read as one table of pairs, in that order \(40 relevant pairs in all\), every split's judgements pooled"):
        got = ccs.bundle(emb, queries=queries, pairs=f"{dd}:id,id", **kw)
    for split, b in got.items():
        assert np.array_equal(b.index, want[split].index), ("dd", split)
    # A directory that is no dataset is refused, saying what is read.
    (tmp_path / "plain").mkdir()
    with pytest.raises(ValueError, match=r"plain: a directory without state\.json or dataset_dict\.json: give a file of pairs .*a directory named \*\.parquet of Parquet parts"):
        ccs.bundle(emb, queries=queries, pairs=tmp_path / "plain", **kw)


def test_pairs_by_id_equal_ccs_bundle(tmp_path, cli):
    """Relevance pairs named by ids, as BEIR's qrels name them: the command
    on the qrels file with the ids' files, and ccs.bundle on a list of
    string pairs with the ids as lists, make the bundles that row numbers
    make; pairs naming ids not given are left out with a warning."""
    rng = np.random.default_rng(12)
    emb = rng.normal(size=(300, 4)).astype(np.float32)
    queries = rng.normal(size=(60, 4)).astype(np.float32)
    rows = [(q, int(r)) for q in range(60) for r in rng.choice(300, 3, replace=False)]
    ids, qids = [f"doc{7 * i}" for i in range(300)], [f"Q{q}" for q in range(60)]
    named = [(qids[q], ids[r]) for q, r in rows] + [(qids[q], "missing") for q in range(5)]
    np.save(tmp_path / "emb.npy", emb)
    np.save(tmp_path / "queries.npy", queries)
    np.save(tmp_path / "pairs.npy", np.array(rows))
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{r}\t1\n" for q, r in named))
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    np.save(tmp_path / "qids.npy", np.array(qids))
    common = ["-embeddings", tmp_path / "emb.npy", "-queries", tmp_path / "queries.npy", "-k", 2, "-seed", 5]
    cli("bundle", *common, "-pairs", tmp_path / "pairs.npy", "-out", tmp_path / "rows")
    cli("bundle", *common, "-pairs", tmp_path / "qrels.tsv", "-ids", tmp_path / "ids.txt", "-query-ids",
        tmp_path / "qids.npy", "-out", tmp_path / "named")
    with pytest.warns(ccs.CCSWarning, match=r'5 pairs name ids that are not among the given ids \(the first: row id "missing"\)'):
        splits = ccs.bundle(emb, queries=queries, pairs=named, ids=ids, query_ids=qids, k=2, seed=5)
    for name, b in splits.items():
        b.save(tmp_path / f"py-{name}.npz")
        for other in ("rows", "named"):
            assert same_file(tmp_path / f"py-{name}.npz", tmp_path / other / f"{name}.npz"), (other, name)
    # Scored triples, as a qrels file's rows (a DataFrame's values): pairs
    # scored 0 are not relevant, the others are the same pairs.
    scored = [(q, r, 1) for q, r in named] + [(qids[0], ids[1], 0)]
    with pytest.warns(ccs.CCSWarning, match=r'5 pairs name ids') as rec:
        triples = ccs.bundle(emb, queries=queries, pairs=scored, ids=ids, query_ids=qids, k=2, seed=5)
    # The pair scored 0 is left out, and said so (ccs bundle notes it): not silently.
    assert any("1 pair scored 0 or less, judged not relevant: left out (judged_negatives=True makes them the queries' negatives)"
               in str(w.message) for w in rec), [str(w.message) for w in rec]
    for name, b in triples.items():
        b.save(tmp_path / f"tri-{name}.npz")
        assert same_file(tmp_path / f"tri-{name}.npz", tmp_path / "named" / f"{name}.npz"), name
    # BEIR's qrels dict, as its loader returns it, and a DataFrame's
    # values (an object array: ids strings, scores integers).
    beir = {}
    for q, r, score in scored:
        beir.setdefault(q, {})[r] = score
    frame = np.empty((len(scored), 3), dtype=object)
    frame[:] = scored
    for name, given in (("dict", beir), ("frame", frame)):
        with pytest.warns(ccs.CCSWarning, match=r"5 pairs name ids"):
            made = ccs.bundle(emb, queries=queries, pairs=given, ids=ids, query_ids=qids, k=2, seed=5)
        for split, b in made.items():
            b.save(tmp_path / f"{name}-{split}.npz")
            assert same_file(tmp_path / f"{name}-{split}.npz", tmp_path / "named" / f"{split}.npz"), (name, split)
    # Graded judgements, the highly relevant alone: min_score=2 as
    # -min-score 2, the same bundles as the pairs scored 2 alone.
    graded = [(q, r, 1 + (i % 2)) for i, (q, r) in enumerate(named)]
    (tmp_path / "graded.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{r}\t{g}\n" for q, r, g in graded))
    (tmp_path / "high.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{r}\t1\n" for q, r, g in graded if g == 2))
    cli("bundle", *common, "-pairs", tmp_path / "graded.tsv", "-min-score", 2, "-ids", tmp_path / "ids.txt", "-query-ids",
        tmp_path / "qids.npy", "-k", 1, "-allow-fewer", "-out", tmp_path / "graded")
    cli("bundle", *common, "-pairs", tmp_path / "high.tsv", "-ids", tmp_path / "ids.txt", "-query-ids",
        tmp_path / "qids.npy", "-k", 1, "-allow-fewer", "-out", tmp_path / "high")
    # The pairs min_score leaves out are counted, as the command's note:
    # distinct pairs of given ids (those naming "missing" are counted apart).
    below = sum(g < 2 and r != "missing" for _, r, g in graded)
    missing = sum(g < 2 and r == "missing" for _, r, g in graded)
    with pytest.warns(ccs.CCSWarning, match=rf"pairs: {below} pairs scored below the least relevant score 2 \(and {missing} more naming ids not given\): left out"):
        high = ccs.bundle(emb, queries=queries, pairs=graded, ids=ids, query_ids=qids, k=1, seed=5, allow_fewer=True, min_score=2)
    row = {emb[i].tobytes(): i for i in range(len(emb))}
    lower = {(qids.index(q), ids.index(r)) for q, r, g in graded if g < 2 and r != "missing"}
    for split, b in high.items():
        b.save(tmp_path / f"high-{split}.npz")
        assert same_file(tmp_path / f"high-{split}.npz", tmp_path / "graded" / f"{split}.npz"), split
        # The same queries in each split and the same positives as the
        # pairs scored 2 alone give; the negatives are never a query's row
        # relevant at a lower grade (which the pairs scored 2 alone draw).
        alone = ccs.Bundle.load(tmp_path / "high" / f"{split}.npz")
        pos = [b.array("positive_pool")[b.array("positive_index")], alone.array("positive_pool")[alone.array("positive_index")]]
        assert np.array_equal(b.anchors, alone.anchors) and pos[0].size and np.array_equal(pos[0], pos[1]), split
        pool = np.array([row[v.tobytes()] for v in b.array("negative_pool")])
        for q, negs in zip(b.index, pool[b.array("negative_index")]):
            assert not any((int(q), int(r)) in lower for r in negs), (split, q)
    assert json.loads((tmp_path / "graded" / "manifest.json").read_text())["min_score"] == 2
    with pytest.raises(ValueError, match=r"min_score=0: want a finite score above 0"):
        ccs.bundle(emb, queries=queries, pairs=graded, ids=ids, query_ids=qids, k=1, min_score=0)
    # Judged negatives: each query's pairs scored 0 are its negatives, as
    # -judged-negatives takes them, bundle for bundle and in the manifest.
    judged = [(q, r, 1) for q, r in named] + [(q, ids[(7 * i + 3) % len(ids)], 0) for i, q in enumerate(qids)]
    (tmp_path / "judged.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{r}\t{g}\n" for q, r, g in judged))
    cli("bundle", *common, "-pairs", tmp_path / "judged.tsv", "-ids", tmp_path / "ids.txt", "-query-ids",
        tmp_path / "qids.npy", "-kneg", 3, "-judged-negatives", "-out", tmp_path / "judged")
    with pytest.warns(ccs.CCSWarning, match=r"judged negatives: \d+ of \d+ queries have fewer than kneg = 3"):
        jb = ccs.bundle(emb, queries=queries, pairs=judged, ids=ids, query_ids=qids, k=2, kneg=3, seed=5,
                        judged_negatives=True, out=tmp_path / "py-judged")
    zero = {(q, r) for q, r, g in judged if g == 0} - {(q, r) for q, r, g in judged if g > 0}
    for split, b in jb.items():
        assert same_file(tmp_path / "py-judged" / f"{split}.npz", tmp_path / "judged" / f"{split}.npz"), split
        for a, qrow in enumerate(b.index):
            for j in b.negative_index[a]:
                row = np.flatnonzero((emb == b.negative_pool[j]).all(axis=1))
                assert any((qids[qrow], ids[r]) in zero for r in row), (split, a)
    for m in ("judged", "py-judged"):
        man = json.loads((tmp_path / m / "manifest.json").read_text())
        assert man["judged_negatives"] is True and man["negatives"].startswith("rows judged not relevant to the query")
    # A missing score is no judgement: refused, never read as relevant.
    for missing, says in ((None, r"pairs: pair 1: a missing score \(None\), no judgement"), (float("nan"), r'pairs: pair 1: score "nan" is not a finite number: a missing score')):
        with pytest.raises(ValueError, match=says):
            ccs.bundle(emb, queries=queries, pairs=[scored[0], (qids[1], ids[2], missing)], ids=ids, query_ids=qids, k=2)
    with pytest.raises(ValueError, match=r"pairs: a dict of pairs maps each query id to a dict of \{row id: score\} \(BEIR's qrels\); query 'Q0' maps to a list$"):
        ccs.bundle(emb, queries=queries, pairs={"Q0": ["doc0"] * 10000}, ids=ids, query_ids=qids, k=2)
    # BEIR's qrels file itself, as the command reads it: no parsing in Python.
    with pytest.warns(ccs.CCSWarning, match=r'qrels.tsv: 5 pairs name ids that are not among the given ids'):  # the file named, as the command names it
        from_file = ccs.bundle(emb, queries=queries, pairs=tmp_path / "qrels.tsv", ids=ids, query_ids=qids, k=2, seed=5)
    for name, b in from_file.items():
        b.save(tmp_path / f"file-{name}.npz")
        assert same_file(tmp_path / f"file-{name}.npz", tmp_path / "named" / f"{name}.npz"), name
    with pytest.raises(ValueError, match=r"pairs .*pairs\.npy: a file of pairs is text, \.tsv, \.csv or \.txt"):
        ccs.bundle(emb, queries=queries, pairs=tmp_path / "pairs.npy", k=2)
    # A first line of known ids is a pair, whatever its score: refused there.
    (tmp_path / "bad.tsv").write_text("Q1\tdoc0\tnot-a-score\nQ1\tdoc7\tx\n")
    with pytest.raises(ValueError, match=r'bad\.tsv:1: score "not-a-score" is not a number'):
        ccs.bundle(emb, queries=queries, pairs=tmp_path / "bad.tsv", ids=ids, query_ids=qids, k=2)
    with pytest.raises(FileNotFoundError):
        ccs.bundle(emb, queries=queries, pairs=tmp_path / "none.tsv", ids=ids, query_ids=qids, k=2)
    # A missing table's columns (FILE:QUERY,ROW,SCORE) are split off as the
    # command splits them: the table is said to be missing, by both, not
    # taken for a file named "none.parquet:query-id,…" of no kind of pairs.
    gone = f"{tmp_path / 'none.parquet'}:query-id,corpus-id,score"
    with pytest.raises(FileNotFoundError, match=r"none\.parquet: no such file"):
        ccs.bundle(emb, queries=queries, pairs=gone, ids=ids, query_ids=qids, k=2)
    said = cli("bundle", *common, "-pairs", gone, "-ids", tmp_path / "ids.txt", "-query-ids", tmp_path / "qids.npy",
               "-out", tmp_path / "gone", check=False)
    assert "none.parquet: no such file" in said, said


@pytest.mark.parametrize("mode", ["groups", "views", "pairs"])
def test_bundle_other_modes_equal_ccs_bundle(mode, tmp_path, cli):
    rng = np.random.default_rng(11)
    emb = rng.normal(size=(240, 4)).astype(np.float32)
    args, kw = [], {}
    if mode == "groups":
        groups = np.repeat(np.arange(60), 4)
        np.save(tmp_path / "groups.npy", groups)
        np.save(tmp_path / "emb.npy", emb)
        args, kw = ["-embeddings", tmp_path / "emb.npy", "-groups", tmp_path / "groups.npy"], dict(embeddings=emb, groups=groups)
    elif mode == "views":
        views = emb.reshape(60, 4, 4)
        np.save(tmp_path / "views.npy", views)
        args, kw = ["-views", tmp_path / "views.npy"], dict(views=views)
    else:
        queries = rng.normal(size=(80, 4)).astype(np.float32)
        pairs = np.stack([np.repeat(np.arange(80), 3), rng.integers(0, 240, size=240)], axis=1)
        pairs = np.unique(pairs, axis=0)
        np.save(tmp_path / "emb.npy", emb)
        np.save(tmp_path / "queries.npy", queries)
        np.save(tmp_path / "pairs.npy", pairs)
        args = ["-embeddings", tmp_path / "emb.npy", "-queries", tmp_path / "queries.npy", "-pairs", tmp_path / "pairs.npy"]
        kw = dict(embeddings=emb, queries=queries, pairs=pairs)
    cli("bundle", *args, "-out", tmp_path / "out", "-k", 2, "-seed", 5, "-allow-fewer")
    for name, b in ccs.bundle(**kw, k=2, seed=5, allow_fewer=True).items():
        b.save(tmp_path / f"py-{name}.npz")
        assert same_file(tmp_path / f"py-{name}.npz", tmp_path / "out" / f"{name}.npz"), (mode, name)
    # Hard negatives: the same bundles too, and other than the random ones.
    cli("bundle", *args, "-out", tmp_path / "hard", "-k", 2, "-kneg", 4, "-kneg-hard", 2, "-hard-candidates", 30,
        "-seed", 5, "-allow-fewer")
    for name, b in ccs.bundle(**kw, k=2, kneg=4, kneg_hard=2, hard_candidates=30, seed=5, allow_fewer=True).items():
        b.save(tmp_path / f"hard-{name}.npz")
        assert same_file(tmp_path / f"hard-{name}.npz", tmp_path / "hard" / f"{name}.npz"), (mode, name)
    manifest = json.loads((tmp_path / "hard" / "manifest.json").read_text())
    assert manifest["kneg_hard"] == 2 and manifest["hard_candidates"] == 30 and "the nearest to it" in manifest["negatives"]
    assert not same_file(tmp_path / "hard" / "fit.npz", tmp_path / "out" / "fit.npz")


def test_bundle_views_and_groups_defaults(tmp_path, cli):
    # Views without k: every other view, as the command;
    # an (n, v, d) array as embeddings names views=; a group id -1 (or
    # "nan") is a missing value, refused unless dropped.
    rng = np.random.default_rng(12)
    views = rng.normal(size=(120, 4, 3)).astype(np.float32)
    np.save(tmp_path / "views.npy", views)
    cli("bundle", "-views", tmp_path / "views.npy", "-out", tmp_path / "out", "-seed", 1)
    for name, b in ccs.bundle(views=views, seed=1).items():
        assert (b.k, b.kneg) == (3, 3), name
        b.save(tmp_path / f"py-{name}.npz")
        assert same_file(tmp_path / f"py-{name}.npz", tmp_path / "out" / f"{name}.npz"), name
    with pytest.raises(ValueError, match=r"embeddings of shape \(120, 4, 3\): an \(n, v, d\) array is each item's v views: pass it as views="):
        ccs.bundle(views, k=3)
    emb = views.reshape(480, 3)
    groups = np.repeat(np.arange(120), 4)
    groups[:5] = -1
    with pytest.raises(ValueError, match=r"5 of 480 rows have a group id that marks a missing value \(-1: 5\)"):
        ccs.bundle(emb, groups=groups, k=2)
    with pytest.warns(ccs.CCSWarning, match="taken for no group"):
        ccs.bundle(emb, groups=groups, k=2, missing_labels="drop", allow_fewer=True)
    names = np.array([f"s{g}" for g in np.repeat(np.arange(120), 4)])
    names[:5] = "nan"
    with pytest.raises(ValueError, match=r'rows have a group id that marks a missing value \("nan": 5\)'):
        ccs.bundle(emb, groups=names, k=2)
    with pytest.raises(ValueError, match=r'missing_labels="drop": there are no labels or group ids for it to apply to'):
        ccs.bundle(views=views, missing_labels="drop")


def test_simulate_equals_ccs_simulate(tmp_path, cli):
    cli("simulate", "-out", tmp_path / "sim", "-seed", 2, "-k", 10, "-per-class", 60)
    splits = ccs.simulate(seed=2, k=10, per_class=60, out=tmp_path / "py")
    assert list(splits) == ["fit", "val", "cal", "test"]
    for name in splits:
        assert same_file(tmp_path / "py" / f"{name}.npz", tmp_path / "sim" / f"{name}.npz"), name
    for name, b in splits.items():
        b.save(tmp_path / f"{name}.npz")
        assert same_file(tmp_path / f"{name}.npz", tmp_path / "sim" / f"{name}.npz"), name
        assert Bundle_equal(b, ccs.Bundle.load(tmp_path / "sim" / f"{name}.npz"))


def Bundle_equal(a, b):
    x, y = a.arrays(), b.arrays()
    return sorted(x) == sorted(y) and all(np.array_equal(x[k], y[k]) for k in x)


@pytest.fixture(scope="module")
def sim(tmp_path_factory, cli):
    d = tmp_path_factory.mktemp("sim")
    cli("simulate", "-out", d, "-seed", 1, "-k", 20, "-per-class", 300)
    return d


FITS = [
    ("genball-negvol", ["-geometry", "genball", "-objective", "neg,vol", "-epochs", 6, "-seed", 1],
     dict(geometry="genball", objective="neg,vol", epochs=6, seed=1), True),
    ("single-vol-embedding", ["-geometry", "single", "-objective", "vol", "-recipe", "embedding", "-lr", 0.05,
                              "-threshold", "order-statistic", "-epochs", 4, "-batch", 128],
     dict(geometry="single", objective="vol", recipe="embedding", lr=0.05, threshold="order-statistic", epochs=4,
          batch=128), True),
    ("genball-neg-valshare", ["-geometry", "genball", "-objective", "neg", "-val-share", 0.2, "-epochs", 3,
                              "-seed", 4, "-T", 5, "-p-max", 4, "-m-max", 50, "-patience", 2],
     dict(geometry="genball", objective="neg", val_share=0.2, epochs=3, seed=4, T=5, p_max=4, m_max=50, patience=2),
     False),
    ("genball-shift", ["-geometry", "genball", "-objective", "neg", "-epochs", 2, "-shift"],
     dict(geometry="genball", objective="neg", epochs=2, shift=True), True),
    ("genball-infonce", ["-geometry", "genball", "-objective", "neg,vol,infonce", "-epochs", 2, "-tau", 0.2,
                         "-lambda", 0.01, "-head-volume", "projected", "-alpha", 0.1],
     dict(geometry="genball", objective="neg,vol,infonce", epochs=2, tau=0.2, lambda_=0.01, head_volume="projected",
          alpha=0.1), True),
]


@pytest.fixture(scope="module")
def fitted(sim, cli, tmp_path_factory):
    """Each fit by the command and by the package: their files."""
    d = tmp_path_factory.mktemp("fitted")
    out = {}
    for name, args, kw, with_val in FITS:
        val = ["-val", sim / "val.npz"] if with_val else []
        cli("fit", *args, "-train", sim / "fit.npz", *val, "-out", d / f"{name}.json", "-quiet")
        kw = dict(kw)
        g = kw.pop("geometry")
        f = ccs.fit(g, ccs.Bundle.load(sim / "fit.npz"), sim / "val.npz" if with_val else None, **kw)
        f.save(d / f"{name}.py.json")
        out[name] = (d / f"{name}.json", d / f"{name}.py.json", f)
    return out


def test_fit_head_volume_backbone_warns(sim):
    """head_volume="backbone" asked of a head that is not square is told
    what it trains, as ccs fit -head-volume backbone says it; a square one
    draws no such warning."""
    fit = ccs.Bundle.load(sim / "fit.npz")
    with pytest.warns(ccs.CCSWarning, match=r'head_volume="backbone": a 3→2 head is not square'):
        ccs.fit("genball", fit, sim / "val.npz", objective="neg,infonce", head_dim=2, head_volume="backbone", epochs=1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ccs.fit("genball", fit, sim / "val.npz", objective="neg,infonce", head_volume="backbone", epochs=1)
    assert not [x for x in w if "not square" in str(x.message)]


@pytest.mark.parametrize("name", [f[0] for f in FITS])
def test_fit_equals_ccs_fit(fitted, name):
    cli_file, py_file, f = fitted[name]
    assert same_file(cli_file, py_file)
    assert not f.calibrated and f.training["epochs"] >= 1
    assert f.info == _lib.loads(open(cli_file).read())


CALIBRATIONS = [
    ("ball", None, [], {}),
    ("ellipsoid", None, ["-seed", 3, "-ridge", 1e-3], dict(seed=3, ridge=1e-3)),
    ("ellipsoid-fit", None, ["-fit", "FIT", "-seed", 3], dict(fit="FIT", seed=3)),
    ("ball-shift", None, ["-fit", "FIT", "-shift"], dict(fit="FIT", shift=True)),
    ("ellipsoid-shift", None, ["-fit", "FIT", "-shift"], dict(fit="FIT", shift=True)),
    ("shifted", "genball-shift", [], {}),
    ("one", "genball-negvol", ["-seed", 2], dict(seed=2)),
    ("pac", "genball-negvol", ["-calibration", "pac", "-delta", 0.1, "-alpha", 0.1],
     dict(calibration="pac", delta=0.1, alpha=0.1)),
    ("class", "single-vol-embedding", ["-calibration", "class"], dict(calibration="class")),
    ("pooled", "genball-negvol", ["-calibration", "pooled"], dict(calibration="pooled")),
    ("infonce", "genball-infonce", [], {}),
    ("ood", "genball-negvol", ["-reference", 40, "-ood-cal", "OODCAL", "-ood-k", 2],
     dict(reference=40, ood_cal="OODCAL", ood_k=2)),
    ("ood-db", "genball-negvol", ["-reference-db", "DB", "-ood-cal", "OODCAL"], dict(reference="DB", ood_cal="OODCAL")),
]


@pytest.fixture(scope="module")
def calibrated(sim, fitted, cli, tmp_path_factory):
    """Each calibration by the command and by the package: their files."""
    d = tmp_path_factory.mktemp("calibrated")
    # Held-out inputs for the OOD tests: the test split's anchors, and a
    # pool from the validation split's.
    test = np.load(sim / "test.npz")
    np.savez(d / "oodcal.npz", anchors=test["anchors"][:60])
    np.save(d / "db.npy", np.load(sim / "val.npz")["anchors"][:50])
    subst = {"OODCAL": str(d / "oodcal.npz"), "DB": str(d / "db.npy"), "FIT": str(sim / "fit.npz")}
    out = {}
    for name, fit, args, kw in CALIBRATIONS:
        args = [subst.get(a, a) if isinstance(a, str) else a for a in args]
        kw = {k: subst.get(v, v) if isinstance(v, str) else v for k, v in kw.items()}
        geometry = name.removesuffix("-fit").removesuffix("-shift")  # ellipsoid-fit: the ellipsoid, Σ from the fit split
        src = ["-set", fitted[fit][0]] if fit else ["-geometry", geometry]
        cli("calibrate", *src, "-cal", sim / "cal.npz", *args, "-out", d / f"{name}.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ccs.CCSWarning)  # the pooled set's
            s = ccs.calibrate(ccs.Set.load(fitted[fit][0]) if fit else geometry, sim / "cal.npz", **kw)
        s.save(d / f"{name}.py.json")
        out[name] = (d / f"{name}.json", d / f"{name}.py.json", s)
    return out


@pytest.mark.parametrize("name", [c[0] for c in CALIBRATIONS])
def test_calibrate_equals_ccs_calibrate(calibrated, name):
    cli_file, py_file, s = calibrated[name]
    assert same_file(cli_file, py_file)
    assert s.calibrated and s.threshold == _lib.loads(open(cli_file).read())["threshold"]


@pytest.mark.parametrize("name", [c[0] for c in CALIBRATIONS])
def test_evaluate_equals_ccs_evaluate(calibrated, sim, cli, name):
    cli_file, _, s = calibrated[name]
    args = ["-per-class"] if name == "class" else []
    want = cli_json(cli, "evaluate", "-set", cli_file, "-test", sim / "test.npz", "-json", *args)
    assert want.pop("kind") == "evaluate"
    del want["command"], want["build"]  # the document's head; the rest is the result
    got = s.evaluate(ccs.Bundle.load(sim / "test.npz"), per_class=bool(args))
    assert got == want


@pytest.mark.parametrize("name", ["one", "infonce"])
def test_evaluate_sizes_equal_ccs_evaluate(calibrated, sim, cli, tmp_path, name):
    """evaluate(collection=) is ccs evaluate -db's result, set_sizes too,
    for a path, a Collection and an array alike."""
    cli_file, _, s = calibrated[name]
    rows = np.load(sim / "fit.npz")["anchors"]
    np.save(tmp_path / "corpus.npy", rows)
    want = cli_json(cli, "evaluate", "-set", cli_file, "-test", sim / "test.npz", "-json",
                    "-db", tmp_path / "corpus.npy", "-size-anchors", 30)
    assert want["set_sizes"]["anchors"] == 30 and 0 < want["set_sizes"]["mean"] < len(rows)
    test = ccs.Bundle.load(sim / "test.npz")
    for collection in (tmp_path / "corpus.npy", ccs.Collection(rows), rows):
        got = s.evaluate(test, collection=collection, size_anchors=30)
        assert got["set_sizes"] == want["set_sizes"]
    assert got["collection"] == "the collection" and want["collection"] == str(tmp_path / "corpus.npy")


def test_evaluate_class_sizes_equal_ccs_evaluate(calibrated, sim, cli, tmp_path):
    """evaluate(collection=) on a class-conditional set is ccs evaluate
    -db's result: each test anchor's set at its class's threshold, the
    count of what retrieve_many(labels=) returns around it, overall and
    class by class; a baseline beside it is refused."""
    cli_file, _, s = calibrated["class"]
    rows = np.load(sim / "fit.npz")["anchors"]
    np.save(tmp_path / "corpus.npy", rows)
    want = cli_json(cli, "evaluate", "-set", cli_file, "-test", sim / "test.npz", "-json", "-per-class",
                    "-db", tmp_path / "corpus.npy", "-size-anchors", 30)
    test = ccs.Bundle.load(sim / "test.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        got = s.evaluate(test, collection=rows, size_anchors=30, per_class=True)
    assert got["set_sizes"] == want["set_sizes"] and got["class_set_sizes"] == want["class_set_sizes"]
    hits = s.retrieve_many(test.anchors[:30], ccs.Collection(rows), labels=test.labels[:30])
    sizes = sorted(len(ids) for ids, _ in hits)
    assert got["set_sizes"]["mean"] == pytest.approx(sum(sizes) / 30) and got["set_sizes"]["max"] == sizes[-1]
    assert len(got["class_set_sizes"]) > 1
    with pytest.raises(ValueError, match="the set is class-conditional, and a top-k certified beside it"):
        s.evaluate(test, collection=rows, baseline="topk", cal=sim / "cal.npz")


def test_evaluate_baseline_equals_ccs_evaluate(calibrated, sim, cli, tmp_path):
    """evaluate(baseline=, cal=) is ccs evaluate -baseline's result: the
    top-k baselines, and with per_class the set sizes class by class."""
    cli_file, _, s = calibrated["one"]
    rows = np.load(sim / "fit.npz")["anchors"]
    np.save(tmp_path / "corpus.npy", rows)
    want = cli_json(cli, "evaluate", "-set", cli_file, "-test", sim / "test.npz", "-json", "-per-class",
                    "-db", tmp_path / "corpus.npy", "-size-anchors", 30, "-baseline", "topk,topk-l2", "-cal", sim / "cal.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # a class falling short: the check's, not the baseline's
        got = s.evaluate(sim / "test.npz", collection=rows, size_anchors=30, per_class=True,
                         baseline=["topk", "topk-l2"], cal=sim / "cal.npz")
    assert [b["distance"] for b in got["baselines"]] == ["set", "l2"]
    assert got["baselines"] == want["baselines"] and got["class_set_sizes"] == want["class_set_sizes"]
    assert got["baseline_calibration"] == want["baseline_calibration"] == str(sim / "cal.npz")
    b = got["baselines"][0]
    assert b["n"] == s.info["calibration"]["n"] and b["rank"] == s.info["calibration"]["rank"] and 0 < b["k"] <= len(rows)
    with pytest.raises(ValueError, match="not the split the set was calibrated on"):
        s.evaluate(sim / "test.npz", collection=rows, baseline="topk", cal=sim / "test.npz")
    with pytest.raises(ValueError, match="give cal="):
        s.evaluate(sim / "test.npz", collection=rows, baseline="topk")
    with pytest.raises(ValueError, match="give collection="):
        s.evaluate(sim / "test.npz", baseline="topk", cal=sim / "cal.npz")
    with pytest.raises(ValueError, match='baseline="cosine"'):
        s.evaluate(sim / "test.npz", collection=rows, baseline="topk,cosine", cal=sim / "cal.npz")


def test_evaluate_baseline_by_hand():
    """The top-k baseline's k is the set's rank among the calibration
    anchors' positives' ranks in the collection, and its coverage the test
    positives no farther than their anchor's k-th nearest item: NumPy's
    count over every item (one positive an anchor: no draw to repeat)."""
    rng = np.random.default_rng(4)
    d, items = 4, 3000
    def bundle(n):
        a = rng.normal(size=(n, d)).astype(np.float32)
        return a, (a + rng.normal(size=(n, d))).astype(np.float32)[:, None, :]
    cal_a, cal_p = bundle(200)
    test_a, test_p = bundle(100)
    rows = (1.5 * rng.normal(size=(items, d))).astype(np.float32)
    cal = ccs.Bundle(cal_a, cal_p)
    s = ccs.calibrate("ball", cal, alpha=0.1)
    got = s.evaluate(ccs.Bundle(test_a, test_p), collection=rows, size_anchors=0, baseline="topk", cal=cal)["baselines"][0]

    def dist(a, x):  # as ccs scores: float32 differences, summed in float64
        return np.sqrt(((a[:, None, :] - x[None, :, :]).astype(np.float64) ** 2).sum(-1))

    ranks = 1 + (dist(cal_a, rows) < np.sqrt(((cal_a - cal_p[:, 0]).astype(np.float64) ** 2).sum(-1))[:, None]).sum(1)
    r = s.info["calibration"]["rank"]
    k = int(np.sort(ranks)[r - 1])
    test_ranks = 1 + (dist(test_a, rows) < np.sqrt(((test_a - test_p[:, 0]).astype(np.float64) ** 2).sum(-1))[:, None]).sum(1)
    assert (got["k"], got["n"], got["rank"], got["anchors"]) == (k, 200, r, 100)
    assert got["coverage"] == (test_ranks <= k).mean()


@pytest.fixture(scope="module")
def server(calibrated, cli, tmp_path_factory):
    """ccs serve over the calibrated sets, on a free loopback port."""
    args = []
    for name in ("one", "class", "infonce", "ood", "ood-db"):
        args += ["-set", f"{name}={calibrated[name][0]}"]
    p = subprocess.Popen([CLI, "serve", *args, "-addr", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        m, log = _listening(p)
        assert m, log
        yield f"http://{m.group(1)}"
    finally:
        p.terminate()
        p.wait()


def _start_cli_server(*args):
    """ccs serve on a free loopback port: the process and its URL."""
    p = subprocess.Popen([CLI, "serve", *map(str, args), "-addr", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    m, log = _listening(p)
    if not m:
        p.terminate()
        raise AssertionError(log + p.stderr.read())
    return p, f"http://{m.group(1)}"


def _listening(p):
    """Reads a ccs serve's log up to its "listening on" line (past the
    line it writes while loading): the match, or None at the end of the
    log, and the lines read. Past the line, a thread drains the log, so
    that a server writing warnings or reloads never blocks on a full pipe."""
    log = ""
    for line in p.stderr:
        log += line
        m = re.search(r"listening on http://(\S+)", line)
        if m:
            threading.Thread(target=p.stderr.read, daemon=True).start()
            return m, log
    return None, log


def _answer(url, body=None, token=None, npy=None):
    """An endpoint's status and raw body (POST of JSON or of an .npy)."""
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if npy is not None:
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(npy, dtype=np.float32))
        data, headers["Content-Type"] = buf.getvalue(), "application/x-npy"
    elif body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers)) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_serve_equals_ccs_serve(calibrated, sim, tmp_path):
    """ccs.serve, in this process, answers as the ccs serve process does on
    the same sets and collection, byte for byte: sets given as objects and
    as files, a collection as arrays with string ids; it reloads; close
    drains and frees its port; tokens are required when given."""
    rows = np.load(sim / "test.npz")["anchors"]
    ids = np.array([f"p{i}" for i in range(len(rows))])
    np.savez(tmp_path / "coll.npz", embeddings=rows, ids=ids)
    files = {name: calibrated[name][0] for name in ("one", "class", "ood")}
    p, want_url = _start_cli_server(*[a for n, f in files.items() for a in ("-set", f"{n}={f}")],
                                    "-db", f"coll={tmp_path / 'coll.npz'}", "-monitor-seed", 11)
    try:
        sets = {"one": calibrated["one"][2], "class": files["class"], "ood": calibrated["ood"][2]}
        with ccs.serve(sets, {"coll": (rows, ids), "obj": ccs.Collection(rows, ids)}, addr="127.0.0.1:0", monitor_seed=11) as srv:
            assert srv.url.startswith("http://127.0.0.1:") and srv.sets == ("one", "class", "ood")
            anchor, points = rows[7], rows[:200]
            asks = [("one/score", None, np.vstack([anchor, points])), ("class/score?label=2", None, np.vstack([anchor, points])),
                    ("ood/ood?alpha_ood=0.1&fdr=0.2", None, points),
                    ("one/retrieve", {"anchor": anchor.tolist(), "collection": "coll", "limit": 7}, None)]
            for path, body, npy in asks:
                got, want = _answer(f"{srv.url}/v1/sets/{path}", body, npy=npy), _answer(f"{want_url}/v1/sets/{path}", body, npy=npy)
                assert got == want and got[0] == 200, path
            body = {"anchor": rows[9].tolist(), "collection": "coll", "limit": 5}
            got = json.loads(_answer(f"{srv.url}/v1/sets/one/retrieve", {**body, "collection": "obj"})[1])
            assert {**got, "collection": "coll"} == json.loads(_answer(f"{want_url}/v1/sets/one/retrieve", body)[1])
            srv.reload()
            status, body = _answer(f"{srv.url}/v1/sets/one/retrieve", {"anchor": anchor.tolist(), "collection": "coll", "limit": 1})
            assert status == 200 and json.loads(body)["generation"] == 2 and json.loads(body)["hits"][0]["key"] == "p7"
            port = srv.url.rsplit(":", 1)[1]
        assert repr(srv) == "<ccs.Server closed>" and srv._tmp is None
        with ccs.serve({"one": files["one"]}, addr=f"127.0.0.1:{port}"):  # the port is free again
            pass
    finally:
        p.terminate()
        p.wait()

    tokens = tmp_path / "tokens"
    tokens.write_text("alice:0123456789abcdef0123\n")
    tokens.chmod(0o600)
    with ccs.serve({"one": files["one"]}, addr="127.0.0.1:0", auth_tokens=tokens) as srv:
        assert _answer(f"{srv.url}/v1/sets")[0] == 401
        assert _answer(f"{srv.url}/v1/sets", token="0123456789abcdef0123")[0] == 200

    # wait() returns once another thread closes the server.
    srv = ccs.serve({"one": files["one"]}, addr="127.0.0.1:0")
    # https:// to a service of plain HTTP: said, not "is it running?".
    with pytest.raises(ConnectionError, match=r"answers plain HTTP, not TLS .*: give the url as http://"):
        ccs.Client(srv.url.replace("http://", "https://")).sets()
    done = []
    t = threading.Thread(target=lambda: (srv.wait(), done.append(True)))
    t.start()
    time.sleep(0.3)
    assert not done
    srv.close()
    t.join(10)
    assert done


def test_serve_warns_of_readable_tokens(calibrated, tmp_path):
    """ccs.serve warns, as ccs serve does, of a tokens file others may
    read (their tokens are every caller's keys); chmod 600 draws none."""
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:0123456789abcdef0123\n")
    tokens.chmod(0o644)
    with pytest.warns(ccs.CCSWarning, match=r"tokens is readable by others \(mode -rw-r--r--\); chmod 600 it"):
        srv = ccs.serve({"one": str(calibrated["one"][0])}, addr="127.0.0.1:0", auth_tokens=tokens)
    srv.close()
    tokens.chmod(0o600)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccs.CCSWarning)
        ccs.serve({"one": str(calibrated["one"][0])}, addr="127.0.0.1:0", auth_tokens=tokens).close()


def test_client_equals_set_methods(calibrated, sim, tmp_path, monkeypatch):
    """ccs.Client against a service (ccs.serve with a token, a collection
    of string ids, a class-conditional set, an OOD test) answers as the Set
    methods do in this process: scores and inside, retrieve's ids and
    scores (limit, label), ood's scores, p-values, flags and BH's flagged;
    an error answer raises ServiceError with the status, code and the part
    it names; a wrong token is 401."""
    rows = np.load(sim / "test.npz")["anchors"]
    ids = np.array([f"p{i}" for i in range(len(rows))])
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:0123456789abcdef0123\n")
    tokens.chmod(0o600)
    one, cls, od = calibrated["one"][2], calibrated["class"][2], calibrated["ood"][2]
    with ccs.serve({"one": one, "class": cls, "ood": od}, {"coll": (rows, ids)}, addr="127.0.0.1:0",
                   auth_tokens=tokens) as srv:
        c = ccs.Client(srv.url, token="0123456789abcdef0123")
        assert c.ready() and sorted(x["name"] for x in c.sets()) == ["class", "one", "ood"]
        anchor, points = rows[7], rows[:200]
        got = c.score("one", anchor, points)
        assert list(got["score"]) == list(one.scores(anchor, points)) and got["threshold"] == one.threshold
        assert list(got["inside"]) == list(one.contains(anchor, points)) and 0 < got["inside"].sum() < len(points)
        got = c.score("class", anchor, points, label=2)
        assert list(got["inside"]) == list(cls.contains(anchor, points, label=2))
        gi, gs = c.retrieve("one", rows[9], "coll", limit=5)
        wi, ws = one.retrieve(rows[9], ccs.Collection(rows, ids), limit=5)
        assert list(gi) == list(wi) and list(gs) == list(ws) and gi.dtype.kind == "U" and len(gi) == 5
        assert c.last_retrieve["total"] >= 5 and c.last_retrieve["truncated"]
        gi, _ = c.retrieve("class", rows[9], "coll", label=2)
        assert list(gi) == list(cls.retrieve(rows[9], ccs.Collection(rows, ids), label=2)[0])
        rng = np.random.default_rng(3)
        pts = np.vstack([rows[100:160], rng.normal(0, 6, size=(20, 3))])
        got, want = c.ood("ood", pts, alpha_ood=0.1, fdr=0.2), od.ood(pts, alpha_ood=0.1, fdr=0.2)
        for k in ("score", "p_value", "ood", "flagged"):
            assert list(got[k]) == list(want[k]), k
        assert got["ood"][-20:].sum() > 10 and got["monitor"] is not None
        # NumPy numbers and 0-d arrays as Set.ood takes them.
        as_np = c.ood("ood", pts, alpha_ood=np.array(0.1), fdr=np.float32(0.2))
        assert list(as_np["p_value"]) == list(want["p_value"]) and list(as_np["flagged"]) == list(want["flagged"])
        # The set's dimension, from the listing: checked before sending.
        with pytest.raises(ValueError, match=r"score: points: dimension 4 \(shape \(2, 4\)\); set 'one' has dimension 3"):
            c.score("one", anchor, np.ones((2, 4)))
        with pytest.raises(ValueError, match=r"score: points: dimension 5 .* \(its 3 rows are of the set's dimension: transposed\?"):
            c.score("one", anchor, np.ones((3, 5)))
        # The service's refusal of a point, in the call's terms: body[3][1]
        # is points[2][1].
        bad = points[:5].copy()
        bad[2, 1] = np.nan
        with pytest.raises(ccs.ServiceError) as e:
            c.score("one", anchor, bad)
        assert e.value.status in (400, 422) and e.value.field == "points[2][1]", str(e.value)
        with pytest.raises(ccs.ServiceError) as e:
            c.ood("ood", bad)
        assert e.value.field == "points[2][1]", str(e.value)
        # Many points go in several requests, answered as one; a refused
        # point is named by its place in the call's points.
        monkeypatch.setattr(ccs, "_SCORE_POINTS", 7)
        got = c.score("one", anchor, points)
        assert list(got["score"]) == list(one.scores(anchor, points)) and list(got["inside"]) == list(one.contains(anchor, points))
        bad = points[:30].copy()
        bad[17, 1] = np.nan
        with pytest.raises(ccs.ServiceError) as e:
            c.score("one", anchor, bad)
        assert e.value.field == "points[17][1]", str(e.value)
        monkeypatch.undo()
        # No points: empty answers, as the Set methods give, with no request.
        got = c.score("one", anchor, np.empty((0, 3), np.float32))
        assert len(got["score"]) == len(got["inside"]) == 0 and got["threshold"] == one.threshold
        assert len(c.ood("ood", np.empty((0, 3)), fdr=0.1)["flagged"]) == 0
        with pytest.raises(TypeError, match=r"score: label is 3.0: want an integer label or a class's name"):
            c.score("class", anchor, points, label=3.0)
        with pytest.raises(TypeError, match="retrieve: limit: got bool"):
            c.retrieve("one", anchor, "coll", limit=True)
        with pytest.raises(ccs.ServiceError) as e:
            c.retrieve("one", anchor, "nope")
        assert e.value.status == 404 and e.value.field == "collection", str(e.value)
        with pytest.raises(ccs.ServiceError) as e:
            c.score("nosuch", anchor, points)
        assert e.value.status == 404 and "nosuch" in str(e.value)
        with pytest.raises(ccs.ServiceError) as e:
            c.score("class", anchor, points)
        assert e.value.status == 422 and e.value.field == "label", str(e.value)
        with pytest.raises(ccs.ServiceError) as e:
            ccs.Client(srv, token="wrong-token-0000000000").sets()
        assert e.value.status == 401
        # A token read with its file's newline: stripped; two lines: refused
        # without echoing either.
        assert ccs.Client(srv, token="0123456789abcdef0123\n").sets()
        with pytest.raises(ValueError) as e:
            ccs.Client(srv, token="0123456789abcdef0123\nsecond-secret-token")
        assert "0123456789abcdef0123" not in str(e.value) and "second-secret" not in str(e.value)
        url = srv.url
    # Nothing listening: a ConnectionError, and ready() False.
    c = ccs.Client(url, token="0123456789abcdef0123")
    assert not c.ready()
    with pytest.raises(ConnectionError, match=r"no answer from http://127.0.0.1:\d+ .*is the service running"):
        c.sets()
    with pytest.raises(ValueError, match="want the service's address"):
        ccs.Client("127.0.0.1:8080")
    with pytest.raises(TypeError, match="Client: timeout: got a str"):
        ccs.Client(url, timeout="x")
    # A retrieval the service cuts at its -max-results, all asked for:
    # warned, the total in last_retrieve.
    with ccs.serve({"one": one}, {"coll": (rows, ids)}, addr="127.0.0.1:0", max_results=5) as srv:
        c = ccs.Client(srv)
        with pytest.warns(ccs.CCSWarning, match=r"retrieve: the service answered 5 of the \d+ items inside the set"):
            gi, _ = c.retrieve("one", rows[9], "coll")
        assert len(gi) == 5 and c.last_retrieve["truncated"] and c.last_retrieve["total"] > 5
    # A reload that changes the set's threshold and dimension: the client
    # asks the listing again, not its first answer.
    served = tmp_path / "served.json"
    one.save(served)
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # random rows: no closer positives, few calibration pairs
        wide = ccs.bundle(rng.normal(size=(600, 5)).astype(np.float32), labels=np.arange(600) % 3, k=4, seed=2)
    five = ccs.calibrate("ball", wide["cal"], alpha=0.2)
    with ccs.serve({"s": served}, addr="127.0.0.1:0") as srv:
        c = ccs.Client(srv)
        assert c.score("s", anchor, np.empty((0, 3)))["threshold"] == one.threshold
        five.save(served)
        srv.reload()
        assert c.score("s", np.ones(5), np.empty((0, 5)))["threshold"] == five.threshold != one.threshold
        got = c.score("s", np.ones(5), np.zeros((2, 5)))
        assert got["threshold"] == five.threshold and list(got["score"]) == list(five.scores(np.ones(5), np.zeros((2, 5))))
        with pytest.raises(ValueError, match=r"score: anchor: dimension 3 \(shape \(1, 3\)\); set 's' has dimension 5"):
            c.score("s", np.ones(3), np.zeros((2, 3)))
    with pytest.raises(TypeError) as e:
        ccs.serve({"one": one}, addr="127.0.0.1:0", auth_tokens=["0123456789abcdef0123"])
    assert "want the path of a tokens file" in str(e.value) and "0123456789abcdef0123" not in str(e.value)
    with pytest.raises(FileNotFoundError) as e:
        ccs.serve({"one": one}, addr="127.0.0.1:0", auth_tokens="s3cr3tTOKENabcdef0123456789")
    assert "looks like a token itself (not echoed)" in str(e.value) and "s3cr3t" not in str(e.value), str(e.value)
    # A body over the service's limit: the service answers 413 and closes
    # while the client still sends; said as such, not a bare reset (the
    # client's requests of 50 000 points, 600 KB here, over a limit of
    # 256 KiB).
    big = np.random.default_rng(1).normal(size=(250_000, 3)).astype(np.float32)  # 3 MiB
    with ccs.serve({"one": one}, addr="127.0.0.1:0", max_body=1 << 18) as srv:
        c = ccs.Client(srv)
        try:
            c.score("one", anchor, big)
        except ConnectionError as e:
            assert "over its body limit" in str(e) and "send fewer points a request" in str(e), str(e)
        except ccs.ServiceError as e:  # the 413 read before the cut
            assert e.status == 413, str(e)
        else:
            raise AssertionError("a body over max_body was answered")


@pytest.mark.parametrize("what,call,exc,msg", [
    ("no sets", lambda f: ccs.serve({}), ValueError, "serve: sets: an empty dict: give at least one set"),
    ("sets not a dict", lambda f: ccs.serve([f]), TypeError, "serve: sets: want a dict"),
    ("a set of another type", lambda f: ccs.serve({"a": 3}), TypeError, "serve: sets['a']: want a ccs.Set or a set file, got int"),
    ("a collection of another type", lambda f: ccs.serve({"a": f}, {"c": 3}), TypeError,
     "serve: collections['c']: want a ccs.Collection, a collection file, an (n, d) array or (rows, ids), got int"),
    ("a collection of NaN", lambda f: ccs.serve({"a": f}, {"c": np.full((3, 5), np.nan)}), ValueError,
     "serve: collections['c']: collection: row 0, coordinate 0 is NaN"),
    ("a missing set file", lambda f: ccs.serve({"a": "/nonexistent/set.json"}, addr="127.0.0.1:0"), FileNotFoundError, "no such file"),
    ("beyond loopback without tokens", lambda f: ccs.serve({"a": f}, addr="0.0.0.0:0"), ValueError,
     "beyond this machine, where without auth_tokens"),
    ("a certificate without its key", lambda f: ccs.serve({"a": f}, tls_cert="/x.pem"), ValueError, "serve: give tls_cert and tls_key together"),
    ("bad metrics", lambda f: ccs.serve({"a": f}, metrics="everyone"), ValueError, "serve: metrics: "),
    ("a negative limit", lambda f: ccs.serve({"a": f}, max_points=-1), ValueError, "must not be negative"),
    ("a set name with a slash", lambda f: ccs.serve({"a/b": f}), ValueError, 'serve: set name "a/b": want a name that is one segment of a URL path'),
    ("a collection with NaN", lambda f: ccs.serve({"a": f}, {"c": np.full((4, 3), np.nan)}, addr="127.0.0.1:0"), ValueError, "NaN"),
])
def test_serve_errors(calibrated, what, call, exc, msg):
    with pytest.raises(exc) as e:
        call(str(calibrated["one"][0]))
    assert msg in str(e.value), (what, str(e.value))


def test_serve_names_a_set_given_in_memory(fitted):
    """A Set given in memory is saved to a private file first; a refusal of
    it (a fit, not calibrated) names the set, not that file."""
    with pytest.raises(ValueError) as e:
        ccs.serve({"mine": next(iter(fitted.values()))[2]}, addr="127.0.0.1:0")
    assert str(e.value).startswith('set "mine": the set is not calibrated: calibrate it first with ccs.calibrate(set, cal'), str(e.value)
    assert " in Go" not in str(e.value)
    assert "ccs-serve-" not in str(e.value)


def test_serve_warns_of_a_collection_no_set_can_search(calibrated):
    """A collection of a dimension no set has: every retrieval from it
    would be refused, and ccs.serve says so at the start, as ccs serve."""
    with pytest.warns(ccs.CCSWarning, match=r'collection "c" has dimension 4, and no set has: the sets\' dimensions are'):
        srv = ccs.serve({"a": str(calibrated["one"][0])}, {"c": np.ones((3, 4), np.float32)}, addr="127.0.0.1:0")
    srv.close()


def test_collection_save(calibrated, tmp_path, cli):
    """Collection.save writes Parquet that Collection.load and ccs retrieve
    read back: the same ids, string or integer, and the same hits."""
    s = calibrated["one"][2]
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(300, 3)).astype(np.float32)
    for ids in ([f"doc-{i}" for i in range(300)], np.arange(300) * 7 + 1):
        c = ccs.Collection(rows, ids)
        c.save(tmp_path / "c.parquet")
        back = ccs.Collection.load(tmp_path / "c.parquet")
        want = s.retrieve(rows[4], c, limit=20)
        got = s.retrieve(rows[4], back, limit=20)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        np.save(tmp_path / "anchor.npy", rows[4])
        hits = cli_json(cli, "retrieve", "-set", calibrated["one"][0], "-db", tmp_path / "c.parquet", "-anchor", tmp_path / "anchor.npy",
                        "-limit", 20, "-json")["hits"]
        assert [h.get("key", h["id"]) for h in hits] == list(want[0])
    with pytest.raises(ValueError, match=r"collection: save .*c\.npz: a collection is saved as Parquet"):
        c.save(tmp_path / "c.npz")


def test_serve_port_in_use(calibrated):
    with ccs.serve({"a": calibrated["one"][2]}, addr="127.0.0.1:0") as srv:
        with pytest.raises(OSError, match="address already in use"):
            ccs.serve({"a": calibrated["one"][2]}, addr=srv.url.split("//")[1])


def post_npy(url, rows):
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(rows, dtype=np.float32))
    req = urllib.request.Request(url, data=buf.getvalue(), headers={"Content-Type": "application/x-npy"})
    with urllib.request.urlopen(req) as r:
        return _lib.loads(r.read())


@pytest.mark.parametrize("name,label", [("one", None), ("class", 2), ("infonce", None)])
def test_contains_and_scores_equal_ccs_serve(server, calibrated, sim, name, label):
    s = calibrated[name][2]
    test = np.load(sim / "test.npz")
    anchor, points = test["anchors"][7], test["anchors"][:300]
    q = f"?label={label}" if label is not None else ""
    want = post_npy(f"{server}/v1/sets/{name}/score{q}", np.vstack([anchor, points]))
    scores = s.scores(anchor, points)
    assert scores.dtype == np.float64 and list(scores) == want["scores"]
    inside = s.contains(anchor, points, label=label)
    assert inside.dtype == np.bool_ and list(inside) == want["inside"]
    assert 0 < inside.sum() < len(inside)


def test_ood_warns_of_known_points(calibrated, sim):
    """Set.ood says, as ccs serve's /ood does, which points are rows of the
    set's reference pool or match the filter of its OOD calibration's
    inputs (their scores and p-values are not a new input's); new inputs
    draw no warning."""
    s = calibrated["ood"][2]
    test = np.load(sim / "test.npz")["anchors"]
    pool = np.asarray(s.info["ood_reference"]["rows"], dtype=np.float32).reshape(-1, s.dim)
    with pytest.warns(ccs.CCSWarning, match=r"^points 0, 1, 2 of 3 match the filter of the inputs the OOD test was calibrated on"):
        s.ood(test[:3])  # the OOD calibration's own inputs
    with pytest.warns(ccs.CCSWarning, match=r"^point 1 of 2 is a row of the set's reference pool"):
        s.ood(np.vstack([test[100], pool[5]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccs.CCSWarning)
        s.ood(test[100:160])


@pytest.mark.parametrize("name", ["ood", "ood-db"])
def test_ood_equals_ccs_serve(server, calibrated, sim, name):
    s = calibrated[name][2]
    rng = np.random.default_rng(3)
    points = np.vstack([np.load(sim / "test.npz")["anchors"][100:160], rng.normal(0, 6, size=(20, 3))])
    want = post_npy(f"{server}/v1/sets/{name}/ood?alpha_ood=0.1&fdr=0.2", points)
    got = s.ood(points, alpha_ood=0.1, fdr=0.2)
    assert list(got["score"]) == want["scores"]
    assert list(got["p_value"]) == [r["p_value"] for r in want["results"]]
    assert list(got["ood"]) == [r["ood"] for r in want["results"]]
    assert list(got["flagged"]) == want["flagged"]
    assert got["ood"][-20:].sum() > 10
    # With δ, p_value is adjusted; flagged is BH on the marginal p-values,
    # fdr_p_value, as the service's fdr_p_values.
    want = post_npy(f"{server}/v1/sets/{name}/ood?alpha_ood=0.1&delta=0.1&fdr=0.2", points)
    cond = s.ood(points, alpha_ood=0.1, delta=0.1, fdr=0.2)
    assert list(cond["p_value"]) == [r["p_value"] for r in want["results"]] != list(got["p_value"])
    assert list(cond["ood"]) == [r["ood"] for r in want["results"]]
    assert list(cond["fdr_p_value"]) == want["fdr_p_values"] == list(got["p_value"])
    assert list(cond["flagged"]) == want["flagged"] == list(got["flagged"])
    assert "fdr_p_value" not in got and "fdr_p_values" not in post_npy(f"{server}/v1/sets/{name}/ood?fdr=0.2", points)
    # A bundle's anchors, as retrieve_many takes them.
    b = ccs.Bundle(points.astype(np.float32))
    assert list(s.ood(b, alpha_ood=0.1)["p_value"]) == list(got["p_value"])
    # An α_ood above one half is legal, and warned of (0.9 meant as 90%).
    with pytest.warns(ccs.CCSWarning, match=r"α_ood = 0.9: the test may flag up to 90% of in-distribution inputs"):
        assert s.ood(points, alpha_ood=0.9)["ood"].sum() >= got["ood"].sum()


def test_class_set_says_what_takes_no_label(calibrated, sim):
    """A class-conditional set's ood has no label to give, and retrieve and contains without one:
    the refusal says so and what does take one."""
    s = calibrated["class"][2]
    rows = np.load(sim / "test.npz")["anchors"]
    with pytest.raises(ValueError, match=r"needs the anchor's label; ood takes none: calibrate the set with one threshold"):
        s.ood(rows[:3])
    with pytest.raises(ValueError, match=r"needs the anchor's label: give it, retrieve\(anchor, collection, label=L\)"):
        s.retrieve(rows[0], rows)
    assert len(s.retrieve(rows[0], rows, label=0)[0]) > 0
    # contains takes one, and its refusal without it says how to give it.
    with pytest.raises(ValueError, match=r"^contains: conformal: .*needs the anchor's label: give it as label= — its class's name"):
        s.contains(rows[0], rows[:3])
    assert s.contains(rows[0], rows[:3], label=0).shape == (3,)


@pytest.mark.parametrize("limit", [0, 5])
def test_retrieve_equals_ccs_retrieve(calibrated, sim, cli, tmp_path, limit):
    cli_file, _, s = calibrated["one"]
    rows = np.load(sim / "test.npz")["anchors"]
    ids = np.arange(len(rows), dtype=np.int64) * 10 + 3
    np.savez(tmp_path / "coll.npz", embeddings=rows, ids=ids)
    want = cli_json(cli, "retrieve", "-set", cli_file, "-db", tmp_path / "coll.npz", "-anchor-index", 11,
                    "-limit", limit, "-json")
    assert want["total"] > 5
    want_ids = [h["id"] for h in want["hits"]]
    want_scores = [h["score"] for h in want["hits"]]
    for coll in (ccs.Collection(rows, ids), ccs.Collection.load(tmp_path / "coll.npz"), tmp_path / "coll.npz"):
        got_ids, got_scores = s.retrieve(rows[11], coll, limit=limit or None)
        assert list(got_ids) == want_ids and list(got_scores) == want_scores
    c = ccs.Collection(rows, ids)
    assert repr(c) == f"<ccs.Collection n={len(rows)} d={rows.shape[1]} ids=int>"
    c.close()
    assert repr(c) == "<ccs.Collection (closed)>"
    # An array is a collection whose ids are its row numbers.
    got_ids, got_scores = s.retrieve(rows[11], rows, limit=limit or None)
    assert list(got_ids * 10 + 3) == want_ids and list(got_scores) == want_scores
    # retrieve's scores are scores' scores.
    assert list(s.scores(rows[11], rows[got_ids])) == want_scores


def test_retrieve_string_ids_equal_ccs_retrieve(calibrated, sim, cli, tmp_path):
    # A RAG index's passage ids: the hits' keys, as ccs retrieve -ids and a
    # collection .npz of string ids give them, in the same order.
    cli_file, _, s = calibrated["one"]
    rows = np.load(sim / "test.npz")["anchors"]
    ids = np.array([f"doc{len(rows) - i}" for i in range(len(rows))])
    np.savez(tmp_path / "passages.npz", embeddings=rows, ids=ids)
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    want = cli_json(cli, "retrieve", "-set", cli_file, "-db", tmp_path / "passages.npz", "-anchor-index", 11, "-json")
    assert want == cli_json(cli, "retrieve", "-set", cli_file, "-db", sim / "test.npz", "-ids", tmp_path / "ids.txt",
                            "-anchor-index", 11, "-json")
    assert want["total"] > 5 and all(h["key"] == ids[h["row"]] for h in want["hits"])
    want_keys = [h["key"] for h in want["hits"]]
    want_scores = [h["score"] for h in want["hits"]]
    for coll in (ccs.Collection(rows, list(ids)), ccs.Collection(rows, ids.astype(object)),
                 ccs.Collection(rows, np.char.encode(ids)), ccs.Collection.load(tmp_path / "passages.npz"),
                 tmp_path / "passages.npz"):
        got_ids, got_scores = s.retrieve(rows[11], coll, limit=None)
        assert got_ids.dtype.kind == "U" and list(got_ids) == want_keys and list(got_scores) == want_scores
    assert list(ccs.Collection.load(tmp_path / "passages.npz").keys) == list(ids)
    assert ccs.Collection(rows).keys is None
    # "+Inf" and "-Inf" are ids like any other, not numbers.
    odd = ids.copy()
    odd[:2] = ["+Inf", "-Inf"]
    assert list(ccs.Collection(rows, odd).keys[:3]) == ["+Inf", "-Inf", ids[2]]


def test_set_load_save_round_trip(calibrated, tmp_path):
    for name, (cli_file, _, _) in calibrated.items():
        s = ccs.Set.load(cli_file)
        s.save(tmp_path / "again.json")
        assert same_file(cli_file, tmp_path / "again.json"), name
        assert s.to_json() == open(cli_file).read()


def test_warnings_equal_ccs_calibrate(sim, cli, tmp_path):
    # A pooled calibration and a whole-space set: what the command warns.
    err = subprocess.run([CLI, "calibrate", "-geometry", "ball", "-cal", sim / "cal.npz", "-calibration", "pooled",
                          "-out", tmp_path / "p.json"], capture_output=True, text=True).stderr
    with pytest.warns(ccs.CCSWarning) as w:
        s = ccs.calibrate("ball", sim / "cal.npz", calibration="pooled")
    assert [str(x.message) for x in w] == s.warnings
    assert all(m in err for m in s.warnings) and s.warnings


def test_version(cli):
    v = ccs.version()
    want = json.loads(cli("version", "-json"))
    assert v["package"] == ccs.__version__ and v["abi"] == _lib.ABI_VERSION
    for k in ("module", "go", "platform", "kernels", "blas"):
        assert v[k] == want[k], k
    assert os.path.exists(v["library"])


def _without_times(table):
    """A comparison's table without what differs between two runs: each
    row's fit seconds."""
    return {**table, "rows": [{k: v for k, v in r.items() if k != "fit_seconds"} for r in table["rows"]]}


def test_compare_equals_ccs_compare(labelled, cli, tmp_path):
    """ccs.compare on ccs bundle's directory, and on ccs.bundle's dict of the
    same bundles, is ccs compare's table (every figure but the fits'
    seconds), with the OOD test's rows; its document reports as the
    command's does."""
    d = labelled["bundles"]
    args = ["-seeds", 2, "-epochs", 2, "-patience", 2, "-resplits", 20, "-reference", 100]
    want = cli_json(cli, "compare", "-data", d, *args, "-out", tmp_path / "cli", "-json", "-quiet")
    reports = []
    with pytest.warns(ccs.CCSWarning, match="kept the initial geometry at every seed"):  # 2 epochs: the command's too
        got = ccs.compare(d, seeds=2, epochs=2, patience=2, resplits=20, reference=100, sets=tmp_path / "py",
                          progress=reports.append)
    assert got.table["warnings"] == want["tables"][0]["warnings"]
    assert len(got.rows) == 8 and got.rows[0]["ood_auroc"]["mean"] > 50
    assert _without_times(got.table) == _without_times(want["tables"][0])
    assert got.document["kind"] == "compare" and got.document["command"].startswith("ccs.compare(")
    assert reports[-1]["done"] == reports[-1]["total"] == 16 and all(r["what"] for r in reports)
    text = cli("compare", "-data", d, *args, "-quiet")
    # Title, config, header: the columns' widths aside, which the fits'
    # seconds set (two significant digits below 0.05 s).
    squeeze = lambda t: [re.sub(r" +", " ", line) for line in t.splitlines()[:3]]
    assert squeeze(str(got)) == squeeze(text)
    # The sets it kept are the command's (-out), byte for byte, and each
    # measures on the test split what its row says of its seed.
    for row in got.rows:
        for seed in range(2):
            name = f"seed-{seed}/{row['set']}.json"
            assert same_file(tmp_path / "py" / name, tmp_path / "cli" / "sets" / "compare" / name), name
            s = got.set(row["method"], seed=seed)
            assert s.evaluate(ccs.Bundle.load(d / "test.npz"))["coverage"] == row["per_seed"][seed]["coverage"], name

    splits = {name: ccs.Bundle.load(d / f"{name}.npz", features=name.startswith("ood"))
              for name in ("fit", "val", "cal", "test", "ood", "ood-cal")}
    with pytest.warns(ccs.CCSWarning, match="kept the initial geometry"):
        again = ccs.compare(splits, seeds=2, epochs=2, patience=2, resplits=20, reference=100)
    assert again.table["title"] == "Your data: ccs.bundle"
    assert _without_times({**again.table, "title": ""}) == _without_times({**got.table, "title": ""})

    # The command's results directory, loaded: its document, its text as
    # the command prints it (a rerun reads every cell back: the same
    # numbers, fit seconds too), its sets.
    printed = cli("compare", "-data", d, *args, "-out", tmp_path / "cli")
    loaded = ccs.Comparison.load(tmp_path / "cli")
    again = cli_json(cli, "compare", "-data", d, *args, "-out", tmp_path / "cli", "-json")
    assert str(loaded) == printed and {**loaded.document, "command": ""} == {**again, "command": ""}
    assert _without_times(loaded.table) == _without_times(want["tables"][0]) and loaded.sets == str(tmp_path / "cli" / "sets" / "compare")
    row = loaded.rows[3]
    assert loaded.set(row["method"], seed=1).evaluate(ccs.Bundle.load(d / "test.npz"))["coverage"] == row["per_seed"][1]["coverage"]
    # By its file's name too; a wrong name says which there are, unquoted.
    assert loaded.set(row["set"], seed=1).evaluate(ccs.Bundle.load(d / "test.npz"))["coverage"] == row["per_seed"][1]["coverage"]
    with pytest.raises(KeyError) as e:
        loaded.set("Generalized(Neg)")
    assert isinstance(e.value, ValueError)  # as every other wrong name
    assert str(e.value).startswith("Comparison.set: no row 'Generalized(Neg)': have ['Conformal Ball (ℓ2)'") and "'genball-neg'" in str(e.value)
    assert isinstance(e.value, ccs.UnknownName)  # public, as a traceback names it
    with pytest.raises(ccs.UnknownName, match=r"^Comparison.set: no row 'generalized \(neg\)' \(did you mean 'Generalized \(Neg\)'\?\): have "):
        loaded.set("generalized (neg)")
    recs = got.records()  # flat, for pandas: every row's means and deviations
    assert [r["method"] for r in recs] == [r["method"] for r in got.rows] and recs[0]["set"] == "ball"
    for rec, row in zip(recs, got.rows):
        assert rec["coverage"] == row["coverage"]["mean"] and rec["exclusion_std"] == row["exclusion"]["std"]
        assert rec["ood_auroc"] == row["ood_auroc"]["mean"] and all(not isinstance(v, (dict, list)) for v in rec.values())
    got.save(tmp_path / "compare.json")
    from_file = ccs.Comparison.load(tmp_path / "compare.json")
    assert str(from_file) == str(got) and from_file.document == got.document and from_file.sets is None
    (tmp_path / "evaluate.json").write_text(cli("evaluate", "-set", tmp_path / "cli" / "sets" / "compare" / "seed-0" / f"{row['set']}.json",
                                                "-test", d / "test.npz", "-json"))
    with pytest.raises(ValueError, match="comparison: a document of kind \"evaluate\", not a comparison"):
        ccs.Comparison.load(tmp_path / "evaluate.json")
    cli("report", "-out", tmp_path / "cli.html", tmp_path / "compare.json")
    ccs.report([got], tmp_path / "py.html")
    ccs.report(tmp_path / "compare.json", tmp_path / "path.html")  # one result alone, as it is
    assert same_file(tmp_path / "py.html", tmp_path / "cli.html") and same_file(tmp_path / "path.html", tmp_path / "cli.html")
    for ext in ("md", "tex"):  # the tables alone, by the file's name, as the command writes them
        cli("report", "-out", tmp_path / f"cli.{ext}", tmp_path / "compare.json")
        ccs.report(got, tmp_path / f"py.{ext}")
        assert same_file(tmp_path / f"py.{ext}", tmp_path / f"cli.{ext}")
    assert "\\begin{tabular}" in (tmp_path / "py.tex").read_text() and "| Conformal Ball (ℓ2)" in (tmp_path / "py.md").read_text()


def test_compare_sizes_equal_ccs_compare(labelled, cli, tmp_path):
    """ccs.compare(collection=) gives ccs compare -db's Size column, for a
    path, a ccs.Collection and an array alike, and each row's size is the
    mean number of hits of its set's retrievals around the test anchors."""
    d, emb = labelled["bundles"], labelled["dir"] / "embeddings.npy"
    args = ["-seeds", 1, "-rows", "baselines", "-resplits", 20, "-db", emb, "-size-anchors", 40]
    want = cli_json(cli, "compare", "-data", d, *args, "-json", "-quiet")["tables"][0]
    for collection in (emb, ccs.Collection(labelled["embeddings"]), labelled["embeddings"]):
        got = ccs.compare(d, seeds=1, rows="baselines", resplits=20, collection=collection, size_anchors=40,
                          sets=tmp_path / "py")
        assert [r["set_size"] for r in got.rows] == [r["set_size"] for r in want["rows"]]
        assert got.table["size_items"] == len(labelled["embeddings"]) == want["size_items"]
    test = ccs.Bundle.load(d / "test.npz")
    for row in got.rows:
        hits = got.set(row["method"]).retrieve_many(test.anchors[:40], ccs.Collection(labelled["embeddings"]))
        assert row["set_size"]["mean"] == pytest.approx(np.mean([len(ids) for ids, _ in hits]), abs=1e-12)
    every = ccs.compare(d, seeds=1, rows="baselines", resplits=20, collection=emb, size_anchors=0)
    assert f"around the first {test.n} test anchors" in every.table["config"]
    with pytest.raises(ValueError, match="compare: size_anchors counts items of a collection; give collection="):
        ccs.compare(d, rows="baselines", size_anchors=10)
    with pytest.raises(ValueError, match="compare: collection: the collection has dimension 3, the bundles 6"):
        ccs.compare(d, rows="baselines", collection=np.zeros((5, 3), np.float32))


def test_compare_out_resumes(labelled, cli, tmp_path):
    """ccs.compare(out=DIR) keeps a results directory as ccs compare -out
    does: a call stopped by its callback, called again, computes only the
    cells missing; more seeds read the first seed's cells back; the same
    bundles from memory share the cells; other keywords compute anew;
    ccs report -in reads the directory."""
    d = labelled["bundles"]
    out = tmp_path / "out"
    kw = dict(rows="baselines", resplits=10, reference=50, out=out)

    def stop(r):
        if r["done"] >= 1:
            raise RuntimeError("stopped")

    with pytest.raises(RuntimeError, match="stopped"):
        ccs.compare(d, seeds=3, progress=stop, **kw)
    first = ccs.compare(d, seeds=3, **kw)
    assert first.cells["dir"] == str(out / "cells") and first.cells["read_back"] >= 1, first.cells
    assert first.cells["read_back"] + first.cells["computed"] == 6 and first.cells["stale"] == 0, first.cells
    more = ccs.compare(d, seeds=4, **kw)
    assert (more.cells["read_back"], more.cells["computed"]) == (6, 2), more.cells
    for a, b in zip(first.rows, more.rows):
        assert a["per_seed"] == b["per_seed"][:3], a["method"]
    with open(out / "compare.json") as f:
        assert json.load(f) == json.loads(more._json)  # the last call's document: every row the directory has
    assert more.set("Conformal Ball (ℓ2)", seed=3).evaluate(ccs.Bundle.load(d / "test.npz"))["coverage"] == \
        more.rows[0]["per_seed"][3]["coverage"]

    splits = {name: ccs.Bundle.load(d / f"{name}.npz", features=name.startswith("ood"))
              for name in ("fit", "val", "cal", "test", "ood", "ood-cal")}
    mem = ccs.compare(splits, seeds=4, **kw)
    assert (mem.cells["read_back"], mem.cells["computed"]) == (8, 0), mem.cells
    assert _without_times({**mem.table, "title": ""}) == _without_times({**more.table, "title": ""})
    assert mem.cells["kept_rows"] == []
    # Other rows into the same directory: the answer has them alone;
    # compare.json keeps the baselines too, read back from their cells.
    with pytest.warns(ccs.CCSWarning, match="kept the initial geometry"):  # one epoch trains few rows
        learned = ccs.compare(splits, seeds=1, **{**kw, "rows": "learned"}, epochs=1)
    assert len(learned.rows) == 6 and learned.cells["kept_rows"] == [r["method"] for r in more.rows], learned.cells
    kept = ccs.Comparison.load(out)
    assert [r["method"] for r in kept.rows] == [r["method"] for r in more.rows + learned.rows]
    assert kept.rows[0]["per_seed"] == more.rows[0]["per_seed"][:1]
    other = ccs.compare(splits, seeds=1, alpha=0.1, **kw)
    assert (other.cells["read_back"], other.cells["computed"], other.cells["stale"]) == (0, 2, 2), other.cells
    assert ccs.compare(d, seeds=1, rows="baselines", resplits=10, reference=50).cells is None
    # A pool larger than the fit split is refused, as ccs compare -reference does.
    with pytest.raises(ValueError, match=r"reference=100000: the fit bundle has \d+ anchors"):
        ccs.compare(d, seeds=1, rows="baselines", resplits=10, reference=100000)

    cli("report", "-in", out, "-out", tmp_path / "report.html")
    assert "Conformal Ball" in (tmp_path / "report.html").read_text()


def test_contains_takes_class_names(labelled):
    # A class-conditional set calibrated on string labels takes the
    # anchor's class by name, as ccs serve's /score does.
    names = NAMES[labelled["labels"]]
    splits = ccs.bundle(labelled["embeddings"], names, k=8, kneg=6, seed=3)
    s = ccs.calibrate("ball", splits["cal"], alpha=0.2, calibration="class")
    a = splits["test"].anchors
    assert [c["name"] for c in s.info["classes"]] == list(NAMES)
    # The classes' thresholds decide, by name; the one over all classes not.
    assert list(s.thresholds) == list(NAMES) and list(s.thresholds.values()) == [c["threshold"] for c in s.info["classes"]]
    for label, name in enumerate(NAMES):
        assert np.array_equal(s.contains(a[0], a, label=name), s.contains(a[0], a, label=label))
    assert not np.array_equal(s.contains(a[0], a, label="ant"), s.contains(a[0], a, label="émeu"))
    with pytest.raises(ValueError, match=r"""no class is named "Ant" \(the set's classes: 0 "ant", 1 "bee", """):
        s.contains(a[0], a, label="Ant")
    numbered = ccs.calibrate("ball", ccs.bundle(labelled["embeddings"], labelled["labels"], k=8, kneg=6, seed=3)["cal"],
                             alpha=0.2, calibration="class")
    assert list(numbered.thresholds) == list(range(len(NAMES))) and ccs.calibrate("ball", splits["cal"]).thresholds is None
    with pytest.raises(ValueError, match="calibrated on integer labels, give the anchor's label as one"):
        numbered.contains(a[0], a, label="ant")


def test_compare_names_string_classes(labelled, cli, tmp_path):
    # String labels name the table's classes, from ccs.bundle's dict and
    # from ccs bundle's directory (its manifest), as ccs compare names them.
    names = NAMES[labelled["labels"]]
    splits = ccs.bundle(labelled["embeddings"], names, k=8, kneg=6, seed=3)
    got = ccs.compare(splits, seeds=1, rows="baselines", resplits=10)
    assert got.label_names == tuple(NAMES) and got.table["label_names"] == NAMES.tolist() and len(got.rows) == 2
    assert {c["label"] for c in got.rows[0]["classes"]} == set(range(len(NAMES)))
    np.save(tmp_path / "names.npy", names)
    cli("bundle", "-embeddings", labelled["dir"] / "embeddings.npy", "-labels", tmp_path / "names.npy",
        "-out", tmp_path / "out", "-k", 8, "-kneg", 6, "-seed", 3)
    want = cli_json(cli, "compare", "-data", tmp_path / "out", "-seeds", 1, "-rows", "baselines", "-resplits", 10, "-json")
    from_dir = ccs.compare(tmp_path / "out", seeds=1, rows="baselines", resplits=10)
    assert from_dir.label_names == tuple(NAMES) and _without_times(from_dir.table) == _without_times(want["tables"][0])
    assert ccs.compare(labelled["bundles"], seeds=1, rows="baselines", resplits=10).label_names is None


def test_bundle_logits_equal_ccs_bundle(tmp_path, cli):
    """A classifier's logits and activations beside the embeddings:
    ccs.bundle(logits=, activations=) writes the bundles ccs bundle
    -logits -activations writes, every split's (the OOD splits' too)
    holding its anchors' rows of them; those of queries are refused."""
    rng = np.random.default_rng(21)
    emb = rng.normal(size=(300, 4)).astype(np.float32)
    labels = rng.integers(0, 4, size=300)
    logits = rng.normal(size=(300, 4)).astype(np.float32)
    acts = rng.uniform(0, 5, size=(300, 3)).astype(np.float32)
    np.save(tmp_path / "emb.npy", emb)
    np.save(tmp_path / "labels.npy", labels)
    np.save(tmp_path / "logits.npy", logits)
    np.save(tmp_path / "acts.npy", acts)
    cli("bundle", "-embeddings", tmp_path / "emb.npy", "-labels", tmp_path / "labels.npy", "-logits", tmp_path / "logits.npy",
        "-activations", tmp_path / "acts.npy", "-k", 4, "-seed", 2, "-ood-classes", 3, "-ood-cal-share", 0.1, "-out", tmp_path / "cli")
    splits = ccs.bundle(emb, labels, logits=logits, activations=acts, k=4, seed=2, ood_classes=[3], ood_cal_share=0.1)
    for name, b in splits.items():
        assert np.array_equal(b.logits, logits[b.index]), name
        assert np.array_equal(b.activations, acts[b.index]), name
        b.save(tmp_path / f"{name}.npz")
        assert same_file(tmp_path / f"{name}.npz", tmp_path / "cli" / f"{name}.npz"), name
    with pytest.raises(ValueError, match=r"bundle: logits are the rows' own, for bundles of labels or groups"):
        ccs.bundle(emb, queries=emb[:50], pairs=[(i, i) for i in range(50)], logits=logits, k=1)
    with pytest.raises(ValueError, match=r"bundle: logits of 299 rows for 300 rows of embeddings"):
        ccs.bundle(emb, labels, logits=logits[1:], k=4)
    with pytest.raises(ValueError, match=r"bundle: activations are the rows' own, for bundles of labels or groups"):
        ccs.bundle(emb, queries=emb[:50], pairs=[(i, i) for i in range(50)], activations=acts, k=1)
    with pytest.raises(ValueError, match=r"bundle: activations of 299 rows for 300 rows of embeddings"):
        ccs.bundle(emb, labels, activations=acts[1:], k=4)


def test_features_bundle_for_ccs_ood(tmp_path, cli):
    """ccs.Bundle(anchors, labels=, logits=) without positives is a
    features bundle, as ccs.bundle's OOD splits are: saved, it is the file
    ccs ood -train reads; where positives are needed it is refused by
    name."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=(200, 4)).astype(np.float32)
    labels = rng.integers(0, 3, size=200)
    logits = rng.normal(size=(200, 3)).astype(np.float32)
    f = ccs.Bundle(a, labels=labels, logits=logits)
    assert (f.n, f.k, f.d) == (200, 0, 4)
    f.save(tmp_path / "train.npz")
    back = ccs.Bundle.load(tmp_path / "train.npz", features=True)
    assert np.array_equal(back.anchors, a) and np.array_equal(back.labels, labels) and np.array_equal(back.logits, logits)
    with pytest.raises(ValueError, match=r"anchors only, no positives: a features bundle"):
        ccs.calibrate("ball", f)
    with pytest.raises(ValueError, match=r'array "positives" \(or "positive_index"\) is missing'):
        ccs.Bundle(a, negatives=a[:, None, :])


def test_compare_shift_equals_ccs_compare(labelled, cli, tmp_path):
    """compare(shift=True) is ccs compare -shift: the table says the sets
    are centred off their anchors, and the baselines' sets it keeps are the
    command's, byte for byte, each with its shift."""
    d = labelled["bundles"]
    args = ["-rows", "baselines", "-seeds", 1, "-resplits", 20, "-reference", 100, "-shift"]
    want = cli_json(cli, "compare", "-data", d, *args, "-out", tmp_path / "cli", "-json", "-quiet")
    got = ccs.compare(d, rows="baselines", seeds=1, resplits=20, reference=100, shift=True, sets=tmp_path / "py")
    assert _without_times(got.table) == _without_times(want["tables"][0])
    assert "every set centred at anchor + c, the" in got.table["config"] and "from anchor + c" in got.table["config"]
    for row in got.rows:
        name = f"seed-0/{row['set']}.json"
        assert same_file(tmp_path / "py" / name, tmp_path / "cli" / "sets" / "compare" / name), name
        assert "shift" in _lib.loads(open(tmp_path / "py" / name).read())


def test_compare_head_dim_equals_ccs_compare(labelled, cli, tmp_path):
    """compare(rows="infonce", head_dim=3) is ccs compare -head-dim 3: the
    heads map the 6 dimensions to 3 in every set it keeps, the table says
    so; head_dim without a head row, or negative, is refused."""
    d = labelled["bundles"]
    args = ["-rows", "infonce", "-seeds", 1, "-epochs", 1, "-resplits", 20, "-reference", 100, "-head-dim", 3]
    want = cli_json(cli, "compare", "-data", d, *args, "-json", "-quiet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # one epoch: the rows may keep their initial geometry
        got = ccs.compare(d, rows="infonce", seeds=1, epochs=1, resplits=20, reference=100, head_dim=3, sets=tmp_path / "py")
    assert _without_times(got.table) == _without_times(want["tables"][0])
    assert "heads map the 6 dimensions to 3" in got.table["config"] and "head_dim=3" in got.document["command"]
    for row in got.rows:
        head = _lib.loads(open(tmp_path / "py" / "seed-0" / f"{row['set']}.json").read())["head"]
        assert np.asarray(head["w"]).size == 18, row["set"]
    for kw, want in ((dict(head_dim=3), r"head_dim=3 sets the outputs of the InfoNCE rows' heads, and rows=\"all\" has none"),
                     (dict(rows="infonce", head_dim=-2), r"head_dim=-2: want a positive dimension")):
        with pytest.raises(ValueError, match=want):
            ccs.compare(d, seeds=1, **kw)


@pytest.mark.parametrize("name", ["one", "pac", "class", "ball-shift"])
def test_coverage_check_equals_ccs_coverage_check(calibrated, sim, cli, name):
    """Set.coverage_check is ccs coverage-check -json, field for field."""
    cli_file, _, s = calibrated[name]
    args = ["-resplits", 50, "-seed", 3] + (["-per-class"] if name == "class" else [])
    want = cli_json(cli, "coverage-check", "-set", cli_file, "-test", sim / "test.npz", "-json", *args)
    assert want.pop("kind") == "coverage-check"
    del want["command"], want["build"]
    got = s.coverage_check(sim / "test.npz", resplits=50, seed=3, per_class=name == "class")
    assert got == want
    assert got["resplits"] == 50 and 0 < got["coverage"]["mean"] < 1 and "this_set" in got


def test_coverage_check_refusals(calibrated, sim):
    _, _, s = calibrated["one"]
    for kw, want in ((dict(resplits=0), r"resplits=0: want at least 1"), (dict(cal_fraction=1), r"cal_fraction=1: want 0 < f < 1")):
        with pytest.raises(ValueError, match=want):
            s.coverage_check(sim / "test.npz", **kw)
    with pytest.warns(ccs.CCSWarning, match="fit split"):  # the geometry was fitted on it
        s.coverage_check(sim / "fit.npz", resplits=5)
    assert s.coverage_check(sim / "cal.npz", resplits=5)["this_set"]["split"] == "calibration"  # said, not warned


@pytest.mark.parametrize("name", ["one", "ball-shift", "ellipsoid-fit", "ellipsoid-shift"])
def test_retrieve_many_equals_ccs_retrieve(calibrated, sim, cli, tmp_path, name):
    """retrieve_many is ccs retrieve -anchor of an (m, d) file: each row's
    hits and scores, in order, whatever the collection is given as; a
    shifted set's search included, and an ellipsoid's, whose collection
    both transform for a batch of 8 or more (30 here) — and each row's
    answer is then retrieve's of that row alone, by the plain scan."""
    cli_file, _, s = calibrated[name]
    rows = np.load(sim / "test.npz")["anchors"]
    np.save(tmp_path / "coll.npy", rows)
    queries = rows[3:93:3].astype(np.float64)
    np.save(tmp_path / "q.npy", queries)
    want = cli_json(cli, "retrieve", "-set", cli_file, "-db", tmp_path / "coll.npy", "-anchor", tmp_path / "q.npy",
                    "-limit", 7, "-json")
    assert [a["anchor"] for a in want["anchors"]] == list(range(30)) and want["summary"]["anchors"] == 30
    for coll in (ccs.Collection(rows), rows, tmp_path / "coll.npy"):
        got = s.retrieve_many(queries, coll, limit=7)
        assert [list(i) for i, _ in got] == [[h["id"] for h in a["hits"]] for a in want["anchors"]]
        assert [list(sc) for _, sc in got] == [[h["score"] for h in a["hits"]] for a in want["anchors"]]
    plain = [s.retrieve(q, rows, limit=7) for q in queries]
    assert [list(i) for i, _ in plain] == [list(i) for i, _ in got]
    assert [list(sc) for _, sc in plain] == [list(sc) for _, sc in got]
    assert sum(len(i) for i, _ in got) >= len(queries)
    assert len(s.retrieve_many(ccs.Bundle.load(sim / "test.npz"), rows, limit=1)) == len(rows)
    with pytest.raises(ValueError, match=r"transposed\? Rows are embeddings: pass anchors.T"):
        s.retrieve_many(queries[:s.dim + 2, :].T, rows)
    with pytest.raises(ValueError, match=r"ids: \d+ ids for the \d+ rows of the collection, shape .*: the collection transposed\?"):
        ccs.Collection(rows[:s.dim + 3].T.copy(), ids=np.arange(s.dim + 3))
    with pytest.raises(ValueError, match=r"retrieve_many: anchors of shape \(3, 4, 2\): want \(m, d\)"):
        s.retrieve_many(np.zeros((3, 4, 2)), rows)
    with pytest.raises(ValueError, match=r"^retrieve_many: anchors\[1\]: anchor: coordinate 0 is NaN$"):
        s.retrieve_many(np.where(np.arange(3)[:, None] == 1, np.nan, queries[:3]), rows)


def test_retrieve_many_one_pass(calibrated, sim):
    """retrieve_many answers in one pass over the collection what retrieve
    answers row by row: over 6 000 rows (the ℓ2 ball's half-precision
    screen runs from 4 096), with string ids, all hits and a limit; an
    empty batch is an empty list."""
    _, _, s = calibrated["one"]
    rows = np.load(sim / "test.npz")["anchors"]
    rng = np.random.default_rng(0)
    big = np.concatenate([rows] * (6000 // len(rows) + 1))[:6000]
    big = (big + rng.normal(0, 0.01, big.shape)).astype(np.float32)
    coll = ccs.Collection(big, np.array([f"item-{i}" for i in range(len(big))]))
    queries = big[::400]
    for limit in (None, 5):
        got = s.retrieve_many(queries, coll, limit=limit)
        want = [s.retrieve(q, coll, limit=limit) for q in queries]
        assert len(got) == len(want) == len(queries)
        for (gi, gs), (wi, ws) in zip(got, want):
            assert list(gi) == list(wi) and list(gs) == list(ws)
        assert all(str(i).startswith("item-") for ids, _ in got for i in ids)
    assert sum(len(i) for i, _ in s.retrieve_many(queries, coll)) > len(queries)
    assert s.retrieve_many(np.zeros((0, s.dim), np.float32), coll) == []


def test_retrieve_zero_anchor_warns(calibrated, sim):
    """An all-zero anchor (an encoder's output for an input it failed on)
    is answered with a CCSWarning that says so and how many items its set
    holds, as ccs retrieve warns; in retrieve_many, how many rows are and
    the first; a nonzero anchor is not warned of."""
    _, _, s = calibrated["one"]
    rows = np.load(sim / "test.npz")["anchors"]
    coll = ccs.Collection(rows)
    with pytest.warns(ccs.CCSWarning, match=r"^the anchor is all zeros: what an encoder gives for an input it failed on .*items nearest the origin \(\d+ of the collection's \d+ items\)"):
        s.retrieve(np.zeros(s.dim, np.float32), coll)
    batch = rows[:4].copy()
    batch[[1, 3]] = 0
    with pytest.warns(ccs.CCSWarning, match=r"^2 of 4 anchors are all zeros \(the first: anchors\[1\]\)"):
        s.retrieve_many(batch, coll)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccs.CCSWarning)
        s.retrieve(rows[0], coll)
        s.retrieve_many(rows[:4], coll)
    # A set centred at anchor + c holds the items nearest c, as ccs
    # retrieve says.
    _, _, shifted = calibrated["ball-shift"]
    for call in (lambda: shifted.retrieve(np.zeros(s.dim, np.float32), coll), lambda: shifted.retrieve_many(batch, coll)):
        with pytest.warns(ccs.CCSWarning, match=r"items nearest c, the set's shift \(its sets are centred at anchor \+ c, ‖c‖ = [0-9.e+-]+\) \(\d+ of the collection's \d+ items\)"):
            call()


def test_collection_load_names_its_ids(calibrated, tmp_path):
    """Collection.load("FILE?ids=NAME") takes the ids from the array of
    that name (a protein export's seq_id), as ccs serve's -db does; a name
    that is not there is refused with the arrays there are."""
    s = calibrated["one"][2]
    rows = np.random.default_rng(6).normal(size=(50, 3)).astype(np.float32)
    np.savez(tmp_path / "c.npz", embeddings=rows, seq_id=np.arange(50) * 3 + 100)
    c = ccs.Collection.load(f"{tmp_path / 'c.npz'}?ids=seq_id")
    ids, _ = s.retrieve(rows[7], c, limit=5)
    assert 121 in list(ids) and all((i - 100) % 3 == 0 for i in ids)
    with pytest.raises(ValueError, match=r'no array "seq" for the ids \(\?ids=seq\); have embeddings float32 \(50, 3\), seq_id int64 \(50,\)'):
        ccs.Collection.load(f"{tmp_path / 'c.npz'}?ids=seq")


def test_collection_transform(calibrated, sim):
    """Collection.transform: an ellipsoid's collection answers as before;
    a ball's and one over max_bytes are refused, saying why."""
    rows = np.load(sim / "test.npz")["anchors"]
    _, _, ell = calibrated["ellipsoid-fit"]
    coll = ccs.Collection(rows)
    before = [ell.retrieve(q, coll) for q in rows[:5]]
    coll.transform(ell)
    after = [ell.retrieve(q, coll) for q in rows[:5]]
    assert [list(i) for i, _ in before] == [list(i) for i, _ in after] and sum(len(i) for i, _ in after) >= 5
    with pytest.raises(ValueError, match="only a single-norm or ellipsoid set is transformed"):
        coll.transform(calibrated["ball"][2])
    with pytest.raises(ValueError, match="over the limit of 0 MiB"):
        ccs.Collection(rows).transform(ell, max_bytes=1000)


def test_collection_transform_class_set(calibrated, sim):
    """Collection.transform of a class-conditional single-norm set (it was
    refused): retrieve(label=), retrieve_many(labels=) and the for_class
    sets then search the one transform, and answer exactly as the plain
    scan of an untransformed collection and the brute force of every row's
    score against the class's threshold."""
    rows = np.load(sim / "test.npz")["anchors"]
    _, _, s = calibrated["class"]
    assert s.info["geometry"]["kind"] == "single" and len(s.thresholds) >= 2
    coll, plain = ccs.Collection(rows), ccs.Collection(rows)
    coll.transform(s)
    coll.transform(s)  # again: nothing new
    labels = [c["label"] for c in s.info["classes"]]
    queries = rows[:12]
    total = 0
    for label in labels:
        one = s.for_class(label)
        for q in queries[:4]:
            ids, scores = s.retrieve(q, coll, label=label)
            want_ids, want_scores = s.retrieve(q, plain, label=label)
            assert list(ids) == list(want_ids) and list(scores) == list(want_scores), label
            assert sorted(ids) == list(np.flatnonzero(one.scores(q, rows) <= one.threshold)), label
            assert list(one.retrieve(q, coll)[0]) == list(ids)
            total += len(ids)
    assert total > 0
    given = [labels[i % len(labels)] for i in range(len(queries))]
    got = s.retrieve_many(queries, coll, labels=given)
    want = s.retrieve_many(queries, plain.rows, labels=given)  # a collection of its own, transformed or not
    for i, ((gi, gs), (wi, ws)) in enumerate(zip(got, want)):
        alone = s.retrieve(queries[i], plain, label=given[i])
        assert list(gi) == list(wi) == list(alone[0]) and list(gs) == list(ws) == list(alone[1]), i


def test_set_summary_equals_its_file(calibrated, fitted):
    """The few fields every call reads (dim, geometry, calibrated, alpha,
    threshold, unit_norm) come without the set file's JSON (88 ms for a
    256-dimensional single-norm's first retrieve): the same as the file's,
    for every calibration and for fits not yet calibrated."""
    sets = [v[2] for v in calibrated.values()] + [ccs.Set.load(v[0]) for v in fitted.values()]
    for s in sets:
        info = _lib.loads(s.to_json())
        assert s._summary()["unit_norm"] == bool(info.get("calibration", {}).get("unit_norm")), info.get("calibration")
        assert s._summary()["head"] == ("head" in info)
        assert (s.dim, s.geometry, s.calibrated, s.alpha) == (info["dim"], info["geometry"]["kind"], "calibration" in info, info.get("alpha"))
        assert s.threshold == info.get("threshold") or (np.isnan(s.threshold) and "threshold" not in info)


def test_unit_norm_corpus_warned():
    """evaluate(collection=) and compare(collection=) with sets calibrated
    on unit-norm embeddings warn of a corpus whose rows are not (every set
    empty otherwise, without a word), as retrieve does."""
    rng = np.random.default_rng(4)
    y = np.arange(600) % 3
    x = rng.normal(size=(600, 8)) + 2 * (np.arange(8)[None, :] % 3 == y[:, None])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # a small calibration split's
        splits = ccs.bundle(x, y, k=5, seed=0)
    s = ccs.calibrate("ball", splits["cal"])
    with pytest.warns(ccs.CCSWarning, match=r"600 of its 600 rows are not of unit norm .* the set was calibrated on unit-norm"):
        s.evaluate(splits["test"], collection=3 * x, size_anchors=10)
    with pytest.warns(ccs.CCSWarning, match="the rows' sets were calibrated on unit-norm"):
        c = ccs.compare(splits, seeds=1, rows="baselines", collection=3 * x, size_anchors=10)
    assert any("600 of its 600 rows are not of unit norm" in w and "the rows' sets were" in w for w in c.table["warnings"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccs.CCSWarning)
        s.evaluate(splits["test"], collection=x, size_anchors=10)


def test_collection_prepare(calibrated):
    """Collection.prepare makes the compact copies at once (their bytes:
    half and a quarter of the rows' from 4 096 items on, none below), and
    the searches' hits are those of a collection without them."""
    s = calibrated["one"][2]
    rng = np.random.default_rng(8)
    rows = rng.normal(size=(5000, 3)).astype(np.float32)
    c, plain = ccs.Collection(rows), ccs.Collection(rows)
    made = c.prepare()
    assert 5000 * 3 * 3 <= made < 5000 * 3 * 4 and c.prepare() == made  # half floats and bytes, made once
    assert ccs.Collection(rows[:100]).prepare() == 0
    for q in rows[:5]:
        got, want = s.retrieve(q, c), s.retrieve(q, plain)
        assert list(got[0]) == list(want[0]) and list(got[1]) == list(want[1])


def test_collection_transform_head_set(calibrated, sim):
    """A set behind a head (InfoNCE) is transformed too, and retrieve_many
    transforms for it from 2 anchors on (its transform costs about one
    plain scan; 8 for other families): the hits of a transformed
    collection are the plain scan's and the brute force's."""
    rows = np.load(sim / "test.npz")["anchors"]
    _, _, s = calibrated["infonce"]
    assert s.info.get("head") and s._transform_min() == 2 and calibrated["one"][2]._transform_min() == 8
    coll, plain = ccs.Collection(rows), ccs.Collection(rows)
    coll.transform(s)
    queries = rows[:3] + 0.05
    got = s.retrieve_many(queries, rows)  # an array: a collection of its own, transformed for the batch
    total = 0
    for q, (gi, gs) in zip(queries, got):
        ids, scores = s.retrieve(q, coll)
        want_ids, want_scores = s.retrieve(q, plain)
        assert list(ids) == list(want_ids) == list(gi) and list(scores) == list(want_scores) == list(gs)
        assert sorted(ids) == list(np.flatnonzero(s.scores(q, rows) <= s.threshold))
        total += len(ids)
    assert 0 < total < 3 * len(rows)


def test_safetensors_bf16_rows(labelled, cli, tmp_path):
    """A .safetensors file of bfloat16 embeddings and int64 labels, as
    Hugging Face tooling saves them: Collection.load(...).rows gives the
    embeddings as float32 (bfloat16 widened exactly), and ccs.bundle of
    them equals ccs bundle of the file, byte for byte."""
    emb = np.load(labelled["dir"] / "embeddings.npy").astype(np.float32)
    labels = np.load(labelled["dir"] / "labels.npy").astype(np.int64)
    bf16 = (emb.view(np.uint32) >> 16).astype(np.uint16)  # truncated to bfloat16
    want = (bf16.astype(np.uint32) << 16).view(np.float32)
    header = {"embeddings": {"dtype": "BF16", "shape": list(emb.shape), "data_offsets": [0, bf16.nbytes]},
              "labels": {"dtype": "I64", "shape": [len(labels)], "data_offsets": [bf16.nbytes, bf16.nbytes + labels.nbytes]}}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    path = tmp_path / "emb.safetensors"
    path.write_bytes(len(h).to_bytes(8, "little") + h + bf16.tobytes() + labels.tobytes())
    rows = ccs.Collection.load(f"{path}:embeddings").rows
    assert rows.dtype == np.float32 and rows.shape == emb.shape and np.array_equal(rows, want)
    assert not np.array_equal(rows, emb)  # bfloat16 did round
    cli("bundle", "-embeddings", path, "-labels", f"{path}:labels", "-out", tmp_path / "cmd", "-k", 8)
    ccs.bundle(rows, labels, k=8, out=tmp_path / "py")
    for name in ("fit", "val", "cal", "test"):
        assert same_file(tmp_path / "cmd" / f"{name}.npz", tmp_path / "py" / f"{name}.npz"), name


def _untimed(rows):
    """An OOD table's rows without their seconds, which differ run to run."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_ood_detection_equals_ccs_ood(calibrated, sim, cli, tmp_path):
    """ood_detection is ccs ood: the same rows — the set's per-input test
    and the baselines', their tests calibrated on held-out ID inputs —
    from files, bundles or arrays; CIDER left out with cider_epochs=0."""
    cli_file, _, s = calibrated["ood"]
    far = np.random.default_rng(5).normal(0, 6, size=(80, 3)).astype(np.float32)
    np.savez(tmp_path / "far.npz", anchors=far)
    want = cli_json(cli, "ood", "-set", cli_file, "-id", sim / "test.npz", "-ood", f"far={tmp_path / 'far.npz'}",
                    "-train", sim / "fit.npz", "-ood-cal", sim / "val.npz", "-cider-epochs", 1, "-quiet", "-json")
    with pytest.warns(ccs.CCSWarning, match="inputs the set's OOD test was calibrated on"):  # the fixture's ood_cal
        got = ccs.ood_detection(cli_file, sim / "test.npz", {"far": far}, train=ccs.Bundle.load(sim / "fit.npz"),
                                ood_cal=sim / "val.npz", cider_epochs=1)
    assert _untimed(got.rows) == _untimed(want["rows"]) and any("calibrated on" in w for w in got.warnings)
    assert all(r["seconds"] > 0 for r in got.rows if "unavailable" not in r)
    methods = [r["method"] for r in got.rows]
    assert methods[0].startswith("CCS (per input") and "Mahalanobis" in methods and "Mahalanobis" in str(got)
    assert got.document["kind"] == "ood-detection"
    with pytest.warns(ccs.CCSWarning):
        quick = ccs.ood_detection(s, ccs.Bundle.load(sim / "test.npz", features=True), tmp_path / "far.npz",
                                  train=sim / "fit.npz", cider_epochs=0)
    cider = next(r for r in quick.rows if r["method"] == "CIDER")
    assert "left out" in cider["unavailable"] and [r["method"] for r in quick.rows] == methods
    assert "the set, ID " in str(quick) and "set the set" not in str(quick)   # a Set in memory, not a file
    with pytest.raises(ValueError, match="ood_cal is for the baselines: give train too"):
        ccs.ood_detection(s, sim / "test.npz", far, ood_cal=sim / "val.npz")
    with pytest.raises(ValueError, match=r"mode \"nope\": want conformal"):
        ccs.ood_detection(s, sim / "test.npz", far, mode="nope")


def test_ood_detection_by_class_equals_ccs_ood(labelled, cli, tmp_path):
    """by_class=True is ccs ood -ood-by-class: ccs bundle's ood.npz of two
    held-out classes of string labels judged one sample per class, named
    NAME:LABEL by the manifest's names, the rows the command's, from the
    files or from ccs.bundle's own splits; inputs with no labels refused."""
    tags = np.array(["ant", "bee", "cat", "dog", "emu"])
    np.save(tmp_path / "tags.npy", tags[labelled["labels"]])
    cli("bundle", "-embeddings", labelled["dir"] / "embeddings.npy", "-labels", tmp_path / "tags.npy", "-out", tmp_path / "b",
        "-k", 8, "-kneg", 6, "-seed", 3, "-ood-classes", "dog,emu", "-ood-cal-share", 0.1)
    b = tmp_path / "b"
    cli("calibrate", "-geometry", "ball", "-cal", b / "cal.npz", "-reference", 60, "-ood-cal", b / "ood-cal.npz",
        "-out", tmp_path / "s.json")
    want = cli_json(cli, "ood", "-set", tmp_path / "s.json", "-id", b / "test.npz", "-ood", f"held={b / 'ood.npz'}",
                    "-ood-by-class", "-json")
    samples = want["ood_sets"]
    assert samples == ["held:dog", "held:emu"], samples
    got = ccs.ood_detection(tmp_path / "s.json", b / "test.npz", {"held": b / "ood.npz"}, by_class=True)
    assert _untimed(got.rows) == _untimed(want["rows"])
    assert got.document["ood_sets"] == samples
    whole = ccs.ood_detection(tmp_path / "s.json", b / "test.npz", {"held": b / "ood.npz"})
    assert whole.document["ood_sets"] == ["held"]
    splits = ccs.bundle(labelled["embeddings"], tags[labelled["labels"]], k=8, kneg=6, seed=3, ood_classes=["dog", "emu"],
                        ood_cal_share=0.1)
    mine = ccs.ood_detection(tmp_path / "s.json", splits["test"], {"held": splits["ood"]}, by_class=True)
    assert _untimed(mine.rows) == _untimed(want["rows"])
    with pytest.raises(ValueError, match=r"ood_detection: held: by_class: it has no labels to split its inputs by \(an array, or a file of embeddings alone, carries none\)"):
        ccs.ood_detection(tmp_path / "s.json", b / "test.npz", {"held": ccs.Bundle.load(b / "ood.npz", features=True).anchors}, by_class=True)


def test_combood_equals_numpy():
    """COMBOOD's AUROC in ood_detection is that of the baseline computed
    here, independently, as docs/ood.md defines it: each activation column
    Yeo-Johnson transformed with its λ of maximum likelihood (golden section
    on [−10, 10]), standardised, its Gaussian log-density under the
    training mean and covariance + I, plus −√D·log r₅₀ of the normalised
    features, negated. Columns skewed, of mixed sign and spanning 1e-6 to
    1e6 exercise both branches of the transform."""
    rng = np.random.default_rng(36)
    d, act, classes = 8, 4, 3
    centres = rng.normal(0, 1.5, (classes, d))

    def sample(n, shift):
        y = rng.integers(0, classes, n)
        x = centres[y] + rng.normal(0, 1 + 0.25 * shift, (n, d))
        g = rng.gamma(2.0, 1.0, (n, act)) * (1 + 0.3 * shift)
        a = np.stack([g[:, 0] ** 2, g[:, 1] - 2.5 + 0.3 * x[:, 0], np.exp(rng.normal(shift, 5, n)), g[:, 3]], 1)
        return x.astype(np.float32), y, a.astype(np.float32)

    xt, yt, at = sample(1200, 0)
    xi, _, ai = sample(300, 0)
    xo, _, ao = sample(300, 1)
    train = ccs.Bundle(xt, labels=yt, activations=at)
    anchors = rng.normal(size=(200, d))
    cal = ccs.Bundle(anchors.astype(np.float32), (anchors[:, None] + 0.5 * rng.normal(size=(200, 2, d))).astype(np.float32),
                     (anchors[:, None] + 1.5 * rng.normal(size=(200, 2, d))).astype(np.float32))
    s = ccs.calibrate("ball", cal, alpha=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # no reference pool: the batch score alone
        got = ccs.ood_detection(s, ccs.Bundle(xi, activations=ai), ccs.Bundle(xo, activations=ao), train=train, cider_epochs=0)
    auroc = next(r["auroc"][0]["mean"] for r in got.rows if r["method"] == "COMBOOD")

    def yeo_johnson(x, lam):
        pos = x >= 0
        out = np.empty_like(x)
        out[pos] = np.log1p(x[pos]) if abs(lam) < 1e-12 else ((x[pos] + 1) ** lam - 1) / lam
        out[~pos] = -np.log1p(-x[~pos]) if abs(lam - 2) < 1e-12 else -((1 - x[~pos]) ** (2 - lam) - 1) / (2 - lam)
        return out

    def loglik(x, lam):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return -len(x) / 2 * np.log(yeo_johnson(x, lam).var()) + (lam - 1) * np.sum(np.sign(x) * np.log1p(np.abs(x)))

    def golden(f, lo, hi):
        g = (np.sqrt(5) - 1) / 2
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        fa, fb = f(a), f(b)
        while hi - lo > 1e-9:
            if fa > fb or np.isnan(fb):
                hi, b, fb = b, a, fa
                a = hi - g * (hi - lo)
                fa = f(a)
            else:
                lo, a, fa = a, b, fb
                b = lo + g * (hi - lo)
                fb = f(b)
        return (lo + hi) / 2

    at64 = at.astype(np.float64)
    lams = [golden(lambda lam: loglik(at64[:, j], lam), -10, 10) for j in range(act)]
    yt_ = np.stack([yeo_johnson(at64[:, j], lams[j]) for j in range(act)], 1)
    mu, sd = yt_.mean(0), yt_.std(0)
    z = lambda a: (np.stack([yeo_johnson(a.astype(np.float64)[:, j], lams[j]) for j in range(act)], 1) - mu) / sd
    zt = z(at)
    mean, cov = zt.mean(0), np.cov(zt, rowvar=False) + np.eye(act)
    prec, logdet = np.linalg.inv(cov), np.linalg.slogdet(cov)[1]
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)
    tn = unit(xt.astype(np.float64))

    def anomaly(x, a):
        diff = z(a) - mean
        mc = -0.5 * np.einsum("ij,jk,ik->i", diff, prec, diff) - 0.5 * (act * np.log(2 * np.pi) + logdet)
        r = np.sqrt(np.maximum(np.sort(((unit(x.astype(np.float64))[:, None] - tn[None]) ** 2).sum(-1), 1)[:, 49], 0))
        return -(-np.sqrt(d) * np.log(np.maximum(r, 1e-8)) + mc)

    si, so = anomaly(xi, ai), anomaly(xo, ao)
    want = 100 * ((so[:, None] > si[None]).mean() + 0.5 * (so[:, None] == si[None]).mean())
    assert 60 < want < 99, want  # neither chance nor separable: the sum's parts count
    assert abs(auroc - want) < 0.005, (auroc, want, lams)  # to 2 decimals


def test_class_set_judges_another_bundling_by_name():
    """A class-conditional set on a test bundle of another bundling (a class
    more, one fewer: another donor's cells) judges each test class with its
    own threshold, matched by name, and says so; a class the set has no
    threshold for is refused by its name."""
    rng = np.random.default_rng(3)
    names = np.array(["boot", "coat", "dress"])
    y = rng.integers(0, 3, 1500)
    x = (rng.normal(0, 1, (1500, 4)) * (1 + y[:, None]) + 4 * y[:, None]).astype(np.float32)
    a = ccs.bundle(x, names[y], k=5, seed=0)
    s = ccs.calibrate("ball", a["cal"], alpha=0.2, calibration="class")
    own = s.thresholds
    assert own["boot"] != own["coat"]
    yb = np.where(y == 2, "abnormal", names[y])          # donor B: no dress, a population of its own
    b = ccs.bundle(x, yb, k=5, seed=1, ood_classes=["abnormal"])
    with pytest.warns(ccs.CCSWarning, match=r"matched to the set's by name \(\"boot\" is 1 there, 0 in the set"):
        r = s.evaluate(b["test"], per_class=True)
    assert {r["label_names"][c["label"]]: c["threshold"] for c in r["classes"]} == {"boot": own["boot"], "coat": own["coat"]}
    assert {c["name"]: c["threshold"] for c in r["classes"]} == {"boot": own["boot"], "coat": own["coat"]}  # each row named
    b2 = ccs.bundle(x, yb, k=5, seed=1)
    with pytest.raises(ValueError, match=r'class "abnormal" \(label 0 of the test bundle\) is not one of the set\'s classes'):
        s.evaluate(b2["test"])


def test_evaluate_shift_warns():
    """A set calibrated on donor A's cells, judged on donor B's, whose cells
    spread twice as far about their type's centre: evaluate's
    "exchangeability" says how many test units lie outside against what
    exchangeable anchors give, and warns of the shift below p = 1e-3; on
    A's own test split, it does not."""
    rng = np.random.default_rng(5)
    n, dim = 3000, 6
    centres = rng.normal(0, 6, size=(5, dim))
    labels = np.arange(n) % 5
    donors = {name: (centres[labels] + spread * rng.normal(size=(n, dim))).astype(np.float32)
              for name, spread in (("a", 1.0), ("b", 2.0))}
    a = ccs.bundle(donors["a"], labels, k=5, kneg=5)
    b = ccs.bundle(donors["b"], labels, k=5, kneg=5)
    s = ccs.calibrate("ball", a["cal"], alpha=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccs.CCSWarning)
        same = s.evaluate(a["test"])
    check = same["exchangeability"]
    assert check["pairs"] and check["units"] > 100 and check["p"] > 1e-3
    with pytest.warns(ccs.CCSWarning, match=r"its anchors leave the set more often than chance allows: \d+ of \d+ disjoint test pairs"):
        shifted = s.evaluate(b["test"])
    assert shifted["exchangeability"]["p"] < 1e-3
    assert any("a shift" in w for w in shifted["warnings"])


def test_bundle_zero_shares(labelled, cli, tmp_path):
    """A share of 0 makes no such split, in Python as in ccs bundle: the
    same splits, byte for byte, and a directory of those alone."""
    made = ccs.bundle(labelled["embeddings"], labelled["labels"], k=5, split=(0, 0, 0.5, 0.5), seed=2,
                      out=tmp_path / "py")
    assert list(made) == ["cal", "test"]
    assert sum(b.n for b in made.values()) == len(labelled["labels"])
    cli("bundle", "-embeddings", labelled["dir"] / "embeddings.npy", "-labels", labelled["dir"] / "labels.npy",
            "-k", 5, "-split", "0,0,0.5,0.5", "-seed", 2, "-out", tmp_path / "cli")
    assert sorted(p.name for p in (tmp_path / "cli").iterdir()) == ["cal.npz", "manifest.json", "test.npz"]
    for name in ("cal", "test"):
        assert (tmp_path / "py" / f"{name}.npz").read_bytes() == (tmp_path / "cli" / f"{name}.npz").read_bytes()
    # ccs.compare on such a directory says, as ccs compare, which split a
    # share of 0 left out, rather than that no bundles were made.
    ccs.bundle(labelled["embeddings"], labelled["labels"], k=5, split=(0, 0, 0, 1), seed=2, out=tmp_path / "test-only")
    for d in ("py", "test-only"):
        with pytest.raises(Exception) as py:
            ccs.compare(tmp_path / d, seeds=1)
        proc = subprocess.run([CLI, "compare", "-data", tmp_path / d, "-seeds", "1"], capture_output=True, text=True)
        assert proc.returncode != 0
        for want in ("fit.npz is missing", "a fit share of 0", "fit 0, val 0, cal "):
            assert want in str(py.value) and want in proc.stderr, (d, want, str(py.value), proc.stderr)


def test_bundle_several_labels_a_row(cli, tmp_path):
    """Several labels a row — lists of labels, a column of lists, a
    multi-hot matrix (bool or 0/1) in Python or as ccs bundle -labels —
    make the bundles of the recipe they replace, array for array: the rows
    as their own queries and the pairs that share a label; and the labels
    each positive shares with its anchor, which the recipe's pairs do not
    know. Every form gives the same files, byte for byte."""
    rng = np.random.default_rng(11)
    n, dim, tags = 400, 5, ["bird", "cat", "dog", "fish", "owl"]
    x = rng.normal(size=(n, dim)).astype(np.float32)
    lists = [[t for j, t in enumerate(tags) if rng.random() < 0.3 / (j + 1)] for _ in range(n)]
    m = np.array([[t in row for t in tags] for row in lists])
    related = m.astype(np.float32) @ m.T.astype(np.float32) > 0
    np.fill_diagonal(related, False)
    kw = dict(k=2, kneg=5, allow_fewer=True, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # rows of no label; random rows, no nearer positives
        ccs.bundle(x, queries=x, pairs=np.argwhere(related), out=tmp_path / "recipe", **kw)
    for name, labels in [("lists", lists), ("column", np.array(lists, dtype=object)), ("bool", m),
                         ("uint8", m.astype(np.uint8))]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ccs.CCSWarning)  # as the recipe's
            made = ccs.bundle(x, labels, out=tmp_path / name, **kw)
        assert list(made) == ["fit", "val", "cal", "test"]
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "m.npy", m)
    cli("bundle", "-embeddings", tmp_path / "x.npy", "-labels", tmp_path / "m.npy", "-k", 2, "-kneg", 5, "-allow-fewer",
        "-seed", 4, "-out", tmp_path / "cli")
    for split in ("fit", "val", "cal", "test"):
        with np.load(tmp_path / "recipe" / f"{split}.npz") as z:
            recipe = dict(z)
        with np.load(tmp_path / "cli" / f"{split}.npz") as z:
            own = dict(z)
        start, shared = own.pop("positive_label_start"), own.pop("positive_labels")
        assert own.keys() == recipe.keys() and all(np.array_equal(own[k], recipe[k]) for k in own), split
        # Each positive's shared labels, from the matrix.
        rows = {r.tobytes(): i for i, r in enumerate(x)}
        pool = own.get("positive_pool", own["anchors"])
        for a, q in enumerate(own["index"]):
            for j, p in enumerate(own["positive_index"][a]):
                u = a * own["positive_index"].shape[1] + j
                r = rows[pool[p].tobytes()]
                assert list(shared[start[u]:start[u + 1]]) == list(np.flatnonzero(m[q] & m[r])), (split, a, j)
        for name in ("lists", "column", "bool", "uint8"):
            assert (tmp_path / name / f"{split}.npz").read_bytes() == (tmp_path / "cli" / f"{split}.npz").read_bytes(), (name, split)
    manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert "share a label" in manifest["positives"]


def test_bundle_label_names(cli, tmp_path):
    """A multi-hot matrix with its columns' names (label_names=mlb.classes_,
    ccs bundle -label-names) makes the files the same labels as lists
    make, byte for byte (names in sorted order, as MultiLabelBinarizer's
    classes_ are, and every label carried by a row), holds a label out by
    name, and its Bundles and manifest name the labels; names in another
    order name the columns in that order."""
    rng = np.random.default_rng(35)
    n, dim, tags = 300, 5, ["anger", "grief", "joy", "love"]
    x = rng.normal(size=(n, dim)).astype(np.float32)
    lists = [[t for t in tags if rng.random() < 0.35] for _ in range(n)]
    m = np.array([[t in row for t in tags] for row in lists], dtype=np.int64)
    kw = dict(k=3, kneg=4, allow_fewer=True, seed=5, ood_classes="joy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # rows of no label; random rows, no nearer positives
        ccs.bundle(x, lists, out=tmp_path / "lists", **kw)
        named = ccs.bundle(x, m, label_names=np.array(tags, dtype=object), out=tmp_path / "named", **kw)
        order = ["joy", "anger", "love", "grief"]  # MultiLabelBinarizer(classes=order)
        other = ccs.bundle(x, m[:, [tags.index(t) for t in order]], label_names=order, **kw)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "m.npy", m)
    (tmp_path / "names.txt").write_text("\n".join(tags) + "\n")
    cli("bundle", "-embeddings", tmp_path / "x.npy", "-labels", tmp_path / "m.npy", "-label-names", tmp_path / "names.txt",
        "-k", 3, "-kneg", 4, "-allow-fewer", "-seed", 5, "-ood-classes", "joy", "-out", tmp_path / "cli")
    for split in ("fit", "val", "cal", "test", "ood"):
        want = (tmp_path / "lists" / f"{split}.npz").read_bytes()
        assert (tmp_path / "named" / f"{split}.npz").read_bytes() == want, split
        assert (tmp_path / "cli" / f"{split}.npz").read_bytes() == want, split
    for d in ("lists", "named", "cli"):
        assert json.loads((tmp_path / d / "manifest.json").read_text())["label_names"] == tags, d
    assert named["cal"].label_names == tuple(tags)
    assert other["cal"].label_names == tuple(order)
    assert np.array_equal(other["ood"].anchors, named["ood"].anchors)  # the rows that carry "joy"


def test_bundle_label_names_of_integer_lists(cli, tmp_path):
    """Lists of integer labels with label_names (a Sequence(ClassLabel)'s
    ids and names) make the files ccs bundle -label-names makes of a CSV
    column of those lists, byte for byte: column j is id j, named
    label_names[j], a label no row lists kept; a -1 (a missing label's
    mark) dropped by missing_labels="drop", and with "class" a label
    after the names, named "-1". They were refused as lists of labels,
    "which are their own names"."""
    rng = np.random.default_rng(37)
    n, dim, names = 300, 5, ["joy", "anger", "love", "grief"]  # unsorted; no row lists "grief"
    x = rng.normal(size=(n, dim)).astype(np.float32)
    lists = [[j for j in range(3) if rng.random() < 0.4] + ([-1] if i % 9 == 0 else []) for i in range(n)]
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "lists.csv").write_text("text,labels\n" + "".join(f'row {i},"{l}"\n' for i, l in enumerate(lists)))
    (tmp_path / "names.txt").write_text("\n".join(names) + "\n")
    kw = dict(k=3, kneg=4, allow_fewer=True, seed=5)
    for mode, want in (("drop", names), ("class", names + ["-1"])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ccs.CCSWarning)  # rows of no label
            made = ccs.bundle(x, lists, label_names=names, missing_labels=mode, out=tmp_path / f"py-{mode}", **kw)
        cli("bundle", "-embeddings", tmp_path / "x.npy", "-labels", f"{tmp_path / 'lists.csv'}:labels", "-label-names", tmp_path / "names.txt",
            "-missing-labels", mode, "-k", 3, "-kneg", 4, "-allow-fewer", "-seed", 5, "-out", tmp_path / f"cli-{mode}")
        for split in ("fit", "val", "cal", "test"):
            assert (tmp_path / f"py-{mode}" / f"{split}.npz").read_bytes() == (tmp_path / f"cli-{mode}" / f"{split}.npz").read_bytes(), (mode, split)
        for d in (f"py-{mode}", f"cli-{mode}"):
            assert json.loads((tmp_path / d / "manifest.json").read_text())["label_names"] == want, d
        assert made["cal"].label_names == tuple(want)


def test_bundle_one_label(cli, tmp_path):
    """one_label= (ccs bundle -one-label) bundles one label's rows of
    several a row byte for byte as the recipe it replaces — the relevance
    pairs of the rows carrying it, np.argwhere(np.outer(rel, rel)) less
    the diagonal, with the rows as queries — given as lists, as a matrix
    named by label_names or by its column's number, and as the command
    makes them; the manifest names the label and counts its rows, and the
    Bundles carry no labels."""
    rng = np.random.default_rng(36)
    n, dim, tags = 300, 5, ["anger", "grief", "joy", "love"]
    x = rng.normal(size=(n, dim)).astype(np.float32)
    lists = [[t for t in tags if rng.random() < 0.35] for _ in range(n)]
    m = np.array([[t in row for t in tags] for row in lists], dtype=np.int64)
    rel = m[:, 2] > 0
    pairs = np.argwhere(np.outer(rel, rel))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    kw = dict(k=3, kneg=4, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # random rows: positives no nearer; queries with no relevant row
        ccs.bundle(x, queries=x, pairs=pairs, out=tmp_path / "recipe", **kw)
        made = {"lists": ccs.bundle(x, lists, one_label="joy", out=tmp_path / "lists", **kw),
                "named": ccs.bundle(x, m, label_names=tags, one_label="joy", out=tmp_path / "named", **kw),
                "column": ccs.bundle(x, m, one_label=2, out=tmp_path / "column", **kw)}
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "m.npy", m)
    (tmp_path / "names.txt").write_text("\n".join(tags) + "\n")
    cli("bundle", "-embeddings", tmp_path / "x.npy", "-labels", tmp_path / "m.npy", "-label-names", tmp_path / "names.txt",
        "-one-label", "joy", "-k", 3, "-kneg", 4, "-seed", 5, "-out", tmp_path / "cli")
    for d in ("lists", "named", "column", "cli"):
        for split in ("fit", "val", "cal", "test"):
            assert (tmp_path / d / f"{split}.npz").read_bytes() == (tmp_path / "recipe" / f"{split}.npz").read_bytes(), (d, split)
        manifest = json.loads((tmp_path / d / "manifest.json").read_text())
        label = "2" if d == "column" else "joy"
        assert manifest["one_label"] == {"label": label, "rows": int(rel.sum()), "of": n}, d
        assert "label_names" not in manifest and manifest["positives"].startswith(f'the other rows carrying label "{label}"'), d
    for b in made.values():
        assert b["cal"].label_names is None and b["cal"].labels is None
    assert "one_label='joy'" in json.loads((tmp_path / "named" / "manifest.json").read_text())["command"]
    # Its directory's calibration by class is refused, saying one threshold is the label's.
    with pytest.raises(ValueError, match=re.escape('compare: calibration="class": the bundles of label "joy" alone') + ".*"
                       + re.escape('one threshold over every anchor (calibration="one") is that label\'s')):
        ccs.compare(tmp_path / "named", rows="baselines", calibration="class", seeds=1)
    # Bundles made in memory, and loaded from the files, know their one
    # label and are refused as the command refuses the files, in its words
    # (bundle.OneLabelClassError, through the library).
    refusal = cli("calibrate", "-geometry", "ball", "-cal", tmp_path / "named" / "cal.npz", "-calibration", "class",
                  "-out", tmp_path / "class.json", check=False)
    why = refusal.split(f"{tmp_path / 'named' / 'cal.npz'}: ", 1)[1].strip().replace("(-calibration one)", '(calibration="one")')
    assert why.startswith('the bundles of label "joy" alone'), refusal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        memory = ccs.bundle(x, m, label_names=tags, one_label="joy", **kw)
    loaded = {split: ccs.Bundle.load(tmp_path / "named" / f"{split}.npz") for split in ("fit", "val", "cal", "test")}
    for where, b in (("memory", memory), ("loaded", loaded)):
        assert all(v.one_label == "joy" for v in b.values()), where
        for asked, kwargs in (('calibration="class"', dict(calibration="class")), ("label=joy", dict(label="joy"))):
            with pytest.raises(ValueError) as e:
                ccs.calibrate("ball", b["cal"], **kwargs)
            assert str(e.value).startswith(f"calibrate: {asked}: ") and str(e.value).endswith(why), (where, str(e.value))
        with pytest.raises(ValueError, match=re.escape('compare: calibration="class": ' + why)):
            ccs.compare(b, rows="baselines", calibration="class", seeds=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ccs.CCSWarning)  # 21 calibration anchors: the largest score
            s = ccs.calibrate("ball", b["cal"])
            assert s.info["calibration"]["mode"] == "one-per-anchor"  # one threshold: the label's
            assert s.info["calibration"]["one_label"] == "joy", where  # the set file keeps it, as ccs calibrate's
            # compare says whose bundles they are, as ccs compare -data does.
            c = ccs.compare(b, rows="baselines", seeds=1, resplits=10)
            assert c.one_label == "joy" and c.table["one_label"] == "joy", where
            assert 'One label: "joy" — the bundles hold the rows carrying it alone' in str(c), (where, str(c))
        # per_class, with no labels to split by, says whose bundles they are.
        label = re.escape('per_class=True: the bundles of label "joy" alone (ccs bundle -one-label; one_label= in Python) carry no labels to split by')
        with pytest.raises(ValueError, match=label):
            s.evaluate(b["test"], per_class=True)
        with pytest.raises(ValueError, match=re.escape("coverage_check: ") + ".*" + label):
            s.coverage_check(b["test"], per_class=True, resplits=10)
    assert made["column"]["cal"].one_label == "2" and ccs.bundle(x, m, **kw)["cal"].one_label is None
    # The label's set tested on the bundles of every label is warned of:
    # its coverage there is of anchors its guarantee is not for; on its
    # own label's test split, not.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        every = ccs.bundle(x, m, **kw)
    other = re.escape('the set was calibrated on the rows of label "joy" alone') + ".*the bundles of every label"
    with pytest.warns(ccs.CCSWarning, match=other):
        s.evaluate(every["test"])
    with pytest.warns(ccs.CCSWarning, match=other):
        s.coverage_check(every["test"], resplits=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccs.CCSWarning)
        try:
            s.evaluate(loaded["test"])
        except ccs.CCSWarning as w:
            assert "calibrated on the rows of label" not in str(w), str(w)
    every["test"].save(tmp_path / "every.npz")
    s.save(tmp_path / "joy.json")
    def stderr(test):
        return subprocess.run([CLI, "evaluate", "-set", str(tmp_path / "joy.json"), "-test", str(test)],
                              capture_output=True, text=True, check=True).stderr
    assert "calibrated on the rows of label" not in stderr(tmp_path / "named" / "test.npz")
    err = stderr(tmp_path / "every.npz")
    assert 'WARNING: ' + str(tmp_path / "every.npz") + ': the set was calibrated on the rows of label "joy" alone' in err, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        assert ccs.compare(tmp_path / "named", rows="baselines", seeds=1, resplits=10).one_label == "joy"
        assert ccs.compare(ccs.bundle(x, m, **kw), rows="baselines", seeds=1, resplits=10).one_label is None


def test_bundle_several_labels_a_row_ood(cli, tmp_path):
    """ood_classes with lists of several labels a row: every row carrying
    one of them is the "ood" split, and no in-distribution anchor carries
    one; ccs.bundle makes the files ccs bundle -ood-classes makes, byte
    for byte, and ood_detection runs on them."""
    rng = np.random.default_rng(5)
    n, dim, tags = 500, 6, ["bird", "cat", "dog", "fish", "yak"]
    centres = 2 * rng.normal(size=(len(tags), dim))
    centres[-1] += 6  # the held-out label lies apart
    lists = [[t for t in tags if rng.random() < (0.15 if t == "yak" else 0.35)] for _ in range(n)]
    x = np.array([centres[[tags.index(t) for t in row]].mean(0) if row else np.zeros(dim) for row in lists])
    x = (x + 0.7 * rng.normal(size=x.shape)).astype(np.float32)
    kw = dict(k=3, kneg=5, allow_fewer=True, seed=2, ood_cal_share=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # rows of no label
        b = ccs.bundle(x, lists, ood_classes="yak", out=tmp_path / "py", **kw)
    assert list(b) == ["fit", "val", "cal", "test", "ood-cal", "ood"]
    held = [i for i, row in enumerate(lists) if "yak" in row]
    rows = {r.tobytes(): i for i, r in enumerate(x)}
    assert sorted(rows[r.tobytes()] for r in b["ood"].anchors) == held
    for split in ("fit", "val", "cal", "test", "ood-cal"):
        assert not any("yak" in lists[rows[r.tobytes()]] for r in b[split].anchors), split
    m = np.array([[t in row for t in tags] for row in lists])
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "m.npy", m)
    cli("bundle", "-embeddings", tmp_path / "x.npy", "-labels", tmp_path / "m.npy", "-ood-classes", 4, "-ood-cal-share", 0.1,
        "-k", 3, "-kneg", 5, "-allow-fewer", "-seed", 2, "-out", tmp_path / "cli")
    for split in ("fit", "val", "cal", "test", "ood-cal", "ood"):
        assert (tmp_path / "py" / f"{split}.npz").read_bytes() == (tmp_path / "cli" / f"{split}.npz").read_bytes(), split
    s = ccs.calibrate("ball", b["cal"], alpha=0.1, reference=60, ood_cal=b["ood-cal"])
    r = ccs.ood_detection(s, b["test"], b["ood"])
    assert r.rows[0]["auroc"][0]["mean"] > 80, r.rows[0]


def test_trials_equal_ccs_evaluate_trials(cli, tmp_path):
    """s.trials on a VoxCeleb trial list equals ccs evaluate -trials -json,
    figure for figure, from a file or from the lines' fields; a path
    listed twice with its row is read once, with a CCSWarning."""
    rng = np.random.default_rng(7)
    spk = np.repeat(np.arange(30), 8)
    x = rng.normal(size=(30, 6))[spk] + 0.6 * rng.normal(size=(len(spk), 6))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    ids = [f"id{s}/v{i % 2}/{i:05d}.wav" for i, s in enumerate(spk)]
    x, ids = np.vstack([x, x[5:6]]), ids + [ids[5]]  # a path listed twice
    np.save(tmp_path / "emb.npy", x)
    (tmp_path / "utt.txt").write_text("\n".join(ids) + "\n")
    lines = []
    for i in range(0, 230, 3):
        lines.append(f"1 {ids[i]} {ids[i - i % 8 + (i + 1) % 8]}")
        lines.append(f"0 {ids[i]} {ids[(i + 17) % 240]}")
    # A blank line, as lists often hold one: the file's reader skips it,
    # and so does s.trials given [l.split() for l in open(...)].
    (tmp_path / "trials.txt").write_text("\n".join(lines[:10]) + "\n\n" + "\n".join(lines[10:]) + "\n")
    b = ccs.bundle(x[:-1], groups=spk, k=5, kneg=1, seed=1)
    s = ccs.calibrate("ball", b["cal"], alpha=0.2)
    s.save(tmp_path / "ball.json")
    want = cli_json(cli, "evaluate", "-set", tmp_path / "ball.json", "-trials", tmp_path / "trials.txt",
                    "-embeddings", tmp_path / "emb.npy", "-ids", tmp_path / "utt.txt", "-json")
    with pytest.warns(ccs.CCSWarning, match=r"ids: 1 utterance listed twice with the same embedding"):
        got = s.trials(x, ids, tmp_path / "trials.txt")
    for k, v in got.items():
        assert want[k] == v, k
    with pytest.warns(ccs.CCSWarning):
        assert s.trials(x, ids, [l.split() for l in lines]) == got
    with pytest.warns(ccs.CCSWarning):
        assert s.trials(x, ids, [l.split() for l in open(tmp_path / "trials.txt")]) == got

    class Frame:
        """A DataFrame as s.trials reads one: iterated, its column names."""
        columns = ["target", "enrol", "test"]

        def __init__(self, rows):
            self.rows = rows

        def __iter__(self):
            return iter(self.columns)

        def to_numpy(self):
            return np.array(self.rows, dtype=object)

    with pytest.warns(ccs.CCSWarning):
        assert s.trials(x, ids, Frame([[int(l.split()[0])] + l.split()[1:] for l in lines])) == got
    # A header line (pandas' to_csv writes one): skipped, and given.
    (tmp_path / "header.txt").write_text("target enrol test\n" + "\n".join(lines) + "\n")
    with pytest.warns(ccs.CCSWarning):
        head = s.trials(x, ids, tmp_path / "header.txt")
    assert got["header"] == "" and head.pop("header") == "target enrol test"
    assert head == {k: v for k, v in got.items() if k != "header"}


def test_bundle_label_lists_as_given(tmp_path):
    """Lists of labels as people hold them: a multi-hot matrix's rows as
    lists (M.tolist(), list(M), floats, None or [] for a row of none) are
    that matrix, not lists of the labels 0 and 1; a list's value that marks a missing label (-1, "Unknown") is
    refused by default, is no label with missing_labels="drop" (the bundles
    of the lists without it) and a label with "class", as ccs bundle takes a
    list column's."""
    rng = np.random.default_rng(12)
    n, dim = 300, 4
    x = rng.normal(size=(n, dim)).astype(np.float32)
    m = (rng.random((n, 5)) < 0.25).astype(np.int64)
    kw = dict(k=2, kneg=2, allow_fewer=True, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)  # rows of no label; random rows
        ccs.bundle(x, m, out=tmp_path / "matrix", **kw)
        # Rows of no label as None or [] (a missing entry), and as a BCE
        # target's floats: the matrix still (they were the labels 0 and 1).
        holed = [None if not r.any() and i % 2 else ([] if not r.any() else r.tolist()) for i, r in enumerate(m)]
        assert any(r is None for r in holed) and any(r == [] for r in holed)
        for name, labels in [("tolist", m.tolist()), ("rows", list(m)), ("bool rows", m.astype(bool).tolist()),
                             ("float rows", m.astype(np.float32).tolist()), ("holes", holed)]:
            ccs.bundle(x, labels, out=tmp_path / name, **kw)
            for split in ("fit", "val", "cal", "test"):
                assert (tmp_path / name / f"{split}.npz").read_bytes() == (tmp_path / "matrix" / f"{split}.npz").read_bytes(), (name, split)
    # Label numbers as a float tensor's .tolist() writes them: the integers.
    ints = [[int(j) for j in np.flatnonzero(r)] for r in m]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        ccs.bundle(x, ints, out=tmp_path / "ints", **kw)
        ccs.bundle(x, [[float(j) for j in r] for r in ints], out=tmp_path / "floats", **kw)
    for split in ("fit", "val", "cal", "test"):
        assert (tmp_path / "floats" / f"{split}.npz").read_bytes() == (tmp_path / "ints" / f"{split}.npz").read_bytes(), split
    with pytest.raises(ValueError, match="strings or integers"):
        ccs.bundle(x, [[2.5]] + ints[1:], **kw)
    tags = ["a", "b", "c", "d", "e"]
    for marker, kind in [(-1, int), ("Unknown", str)]:
        plain = [[j if kind is int else tags[j] for j in np.flatnonzero(r)] for r in m]
        marked = [row if row else [marker] for row in plain]
        with pytest.raises(ValueError, match="missing_labels"):
            ccs.bundle(x, marked, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ccs.CCSWarning)
            ccs.bundle(x, plain, out=tmp_path / "plain", **kw)
            ccs.bundle(x, marked, missing_labels="drop", out=tmp_path / "drop", **kw)
            ccs.bundle(x, marked, missing_labels="class", out=tmp_path / "class", **kw)
        for split in ("fit", "val", "cal", "test"):
            plain_bytes = (tmp_path / "plain" / f"{split}.npz").read_bytes()
            assert (tmp_path / "drop" / f"{split}.npz").read_bytes() == plain_bytes, (marker, split)
            assert (tmp_path / "class" / f"{split}.npz").read_bytes() != plain_bytes, (marker, split)


def test_bundle_one_label_a_row_as_a_matrix_or_lists(labelled, tmp_path):
    """One label a row given as a one-hot matrix (keras' to_categorical,
    pandas' get_dummies) or as lists of one label each is one label a row:
    the bundles of the labels themselves, byte for byte, not label sets."""
    x, y = labelled["embeddings"], labelled["labels"]
    names = np.array(["ant", "bee", "cat", "dog", "emu"])[y]
    kw = dict(k=5, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)
        for name, labels in [("labels", y), ("one-hot", np.eye(5, dtype=np.int64)[y]),
                             ("one-hot bool", np.eye(5, dtype=bool)[y]), ("lists", [[int(v)] for v in y]),
                             ("names", names), ("name lists", [[v] for v in names])]:
            ccs.bundle(x, labels, out=tmp_path / name, **kw)
    for a, b in [("labels", "one-hot"), ("labels", "one-hot bool"), ("labels", "lists"), ("names", "name lists")]:
        for split in ("fit", "val", "cal", "test"):
            assert (tmp_path / a / f"{split}.npz").read_bytes() == (tmp_path / b / f"{split}.npz").read_bytes(), (b, split)
    assert json.loads((tmp_path / "name lists" / "manifest.json").read_text())["label_names"] == ["ant", "bee", "cat", "dog", "emu"]


def test_bundle_labels_as_a_column(tmp_path):
    """Labels as an (n, 1) column — y.reshape(-1, 1), a DataFrame's
    df[["label"]].to_numpy() — are one label a row: the bundles of the
    (n,) labels, byte for byte, integers and strings alike."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 4)).astype(np.float32)
    y = np.arange(300) % 5
    for name, labels in [("int", y), ("str", np.array(["a", "b", "c", "d", "e"])[y])]:
        ccs.bundle(x, labels, k=3, seed=1, out=tmp_path / f"{name}-flat")
        ccs.bundle(x, labels.reshape(-1, 1), k=3, seed=1, out=tmp_path / f"{name}-col")
        for split in ("fit", "val", "cal", "test"):
            assert (tmp_path / f"{name}-col" / f"{split}.npz").read_bytes() == \
                (tmp_path / f"{name}-flat" / f"{split}.npz").read_bytes(), (name, split)


def test_evaluate_by_label(cli, tmp_path):
    """Several labels a row, as lists of names: s.evaluate(per_class=True)
    gives each label's coverage of the positives that share it, named as
    the lists name them, the figures of ccs evaluate -per-class -json on
    the directory the same call wrote; each recomputed here from the
    lists, the bundle's pool rows and the set's threshold."""
    rng = np.random.default_rng(21)
    n, dim, tags = 900, 4, ["art", "bio", "cs", "dance"]
    primary = rng.integers(0, 4, n)
    centres = 3 * rng.normal(size=(4, dim))
    x = (centres[primary] + rng.normal(size=(n, dim))).astype(np.float32)
    lists = [[tags[p]] + ([tags[(p + 1) % 4]] if rng.random() < 0.3 else []) for p in primary]
    b = ccs.bundle(x, lists, k=3, kneg=2, seed=2, out=tmp_path / "b")
    s = ccs.calibrate("ball", b["cal"], alpha=0.1)
    s.save(tmp_path / "ball.json")
    got = s.evaluate(b["test"], per_class=True)
    want = cli_json(cli, "evaluate", "-set", tmp_path / "ball.json", "-test", tmp_path / "b" / "test.npz", "-per-class", "-json")
    assert got["labels"] == want["labels"]
    assert [r["name"] for r in got["labels"]] == tags
    # Recomputed: each positive's shared labels from the lists.
    with np.load(tmp_path / "b" / "test.npz") as z:
        anchors, index, pool, pidx = z["anchors"], z["index"], z["positive_pool"], z["positive_index"]
    # The pool's source rows: each pool row is one of x's rows.
    source = {r.tobytes(): i for i, r in enumerate(x)}
    inside = np.linalg.norm(anchors[:, None, :] - pool[pidx], axis=2) <= s.threshold
    for row in got["labels"]:
        t = row["name"]
        shared = [(a, j) for a, q in enumerate(index) for j in range(pidx.shape[1])
                  if t in lists[q] and t in lists[source[pool[pidx[a, j]].tobytes()]]]
        assert row["positives"] == len(shared)
        assert row["anchors"] == len({a for a, _ in shared})
        assert abs(row["coverage"] - np.mean([inside[a, j] for a, j in shared])) < 1e-12

    # Label by label over resplits: the command's figures, named as the
    # lists name them; each label's mean coverage near its coverage above.
    got = s.coverage_check(b["test"], resplits=60, per_class=True)
    want = cli_json(cli, "coverage-check", "-set", tmp_path / "ball.json", "-test", tmp_path / "b" / "test.npz",
                    "-resplits", "60", "-per-class", "-json")
    assert got["labels"] == want["labels"] and got["coverage"] == want["coverage"]
    assert got["label_names"] == tags == want["label_names"]
    assert [r["name"] for r in got["labels"]] == [tags[r["label"]] for r in got["labels"]]
    whole = {r["label"]: r["coverage"] for r in s.evaluate(b["test"], per_class=True)["labels"]}
    for row in got["labels"]:
        assert row["coverage"]["n"] == 60 and abs(row["coverage"]["mean"] - whole[row["label"]]) < 0.05, row


def test_trials_class_conditional(cli, tmp_path):
    """A class-conditional set on a trial list: refused (no enrolment's
    class is given), and with unlabeled="marginal" judged with its
    threshold over all classes, with a CCSWarning, as ccs evaluate -trials
    -unlabeled marginal -json judges it."""
    rng = np.random.default_rng(5)
    spk = np.repeat(np.arange(40), 10)
    x = (rng.normal(size=(40, 6))[spk] + 0.5 * rng.normal(size=(len(spk), 6))).astype(np.float32)
    ids = [f"id{s}/v{i % 2}/{i:05d}.wav" for i, s in enumerate(spk)]
    np.save(tmp_path / "emb.npy", x)
    (tmp_path / "utt.txt").write_text("\n".join(ids) + "\n")
    lines = [f"{int(spk[i] == spk[j])} {ids[i]} {ids[j]}" for i, j in zip(range(0, 390, 3), range(1, 400, 3))]
    (tmp_path / "trials.txt").write_text("\n".join(lines) + "\n")
    b = ccs.bundle(x, spk, k=4, kneg=2, split=(0, 0, 0.5, 0.5), seed=1)
    s = ccs.calibrate("ball", b["cal"], alpha=0.2, calibration="class", allow_infinite=True)
    s.save(tmp_path / "class.json")
    with pytest.raises(ValueError, match='unlabeled="marginal" judges every enrolment'):
        s.trials(x, ids, tmp_path / "trials.txt")
    with pytest.raises(ValueError, match='unlabeled="sometimes": want error or marginal'):
        s.trials(x, ids, tmp_path / "trials.txt", unlabeled="sometimes")
    with pytest.warns(ccs.CCSWarning, match="threshold over all classes"):
        got = s.trials(x, ids, tmp_path / "trials.txt", unlabeled="marginal")
    want = cli_json(cli, "evaluate", "-set", tmp_path / "class.json", "-trials", tmp_path / "trials.txt",
                    "-embeddings", tmp_path / "emb.npy", "-ids", tmp_path / "utt.txt", "-unlabeled", "marginal", "-json")
    for k, v in got.items():
        assert want[k] == v, k


def test_bundle_lists_with_groups_refused_as_the_matrix():
    """Lists of several labels a row given with groups (or pairs) are
    refused as their multi-hot matrix is, naming what to do, not the
    label_set_names ccs.bundle passes along with them."""
    rng = np.random.default_rng(3)
    n, tags = 120, ["a", "b", "c", "d"]
    x = rng.normal(size=(n, 4)).astype(np.float32)
    lists = [[tags[i % 4]] + ([tags[(i + 1) % 4]] if i % 3 == 0 else []) for i in range(n)]
    m = np.zeros((n, 4), dtype=np.int64)
    for i, row in enumerate(lists):
        m[i, [tags.index(t) for t in row]] = 1
    with pytest.raises(ValueError) as matrix:
        ccs.bundle(x, m, groups=np.arange(n) // 4, k=2, kneg=2)
    with pytest.raises(ValueError) as given:
        ccs.bundle(x, lists, groups=np.arange(n) // 4, k=2, kneg=2)
    assert "label_set_names" not in str(given.value)
    assert str(given.value) == str(matrix.value)


def test_calibrate_ood_class_equals_ccs_calibrate(labelled, tmp_path, cli):
    """ood_class is ccs calibrate -ood-class: the per-input OOD test of one
    class, its pool the calibration split's anchors of the class and its
    calibration the ood-cal split's inputs of it — the command's set file
    byte for byte, from files and from ccs.bundle's splits alike, integer
    labels and names; refused as the command refuses it."""
    bundles = labelled["bundles"]
    cli("calibrate", "-geometry", "ball", "-cal", bundles / "cal.npz", "-reference", 20, "-ood-cal",
        bundles / "ood-cal.npz", "-ood-class", 2, "-out", tmp_path / "cli.json")
    got = ccs.calibrate("ball", bundles / "cal.npz", reference=20, ood_cal=bundles / "ood-cal.npz", ood_class=2)
    got.save(tmp_path / "py.json")
    assert same_file(tmp_path / "cli.json", tmp_path / "py.json")
    loaded = ccs.Bundle.load(bundles / "ood-cal.npz", features=True)   # a Bundle: its labels pick the class
    ccs.calibrate("ball", bundles / "cal.npz", reference=20, ood_cal=loaded, ood_class=np.int64(2)).save(tmp_path / "b.json")
    assert same_file(tmp_path / "cli.json", tmp_path / "b.json")
    info = got.info
    assert info["ood_reference"]["source"] == 'calibration anchors of class "2"', info["ood_reference"]["source"]
    assert info["ood_calibration"]["source"] == f'{bundles / "ood-cal.npz"} (class "2")', info["ood_calibration"]
    cal, oodcal = np.load(bundles / "cal.npz"), np.load(bundles / "ood-cal.npz")
    assert info["ood_calibration"]["n"] == int((oodcal["labels"] == 2).sum())
    # The class's own inputs are judged against the class's pool alone: an
    # input of another class is further from it than from the whole pool.
    whole = ccs.calibrate("ball", bundles / "cal.npz", reference=20, ood_cal=bundles / "ood-cal.npz")
    others = oodcal["anchors"][oodcal["labels"] != 2]
    assert got.ood(others, alpha_ood=0.1)["score"].mean() > whole.ood(others, alpha_ood=0.1)["score"].mean()

    # String labels: the class by its name, from ccs.bundle's splits.
    names = NAMES[labelled["labels"]]
    splits = ccs.bundle(labelled["embeddings"], names, k=8, kneg=6, seed=3, ood_classes=["émeu"], ood_cal_share=0.1)
    s = ccs.calibrate("ball", splits["cal"], reference=20, ood_cal=splits["ood-cal"], ood_class=NAMES[2])
    assert s.info["ood_reference"]["source"] == f'calibration anchors of class "{NAMES[2]}"'
    assert s.info["ood_calibration"]["source"] == f'bundle (class "{NAMES[2]}")'
    assert s.info["ood_calibration"]["n"] == info["ood_calibration"]["n"]   # the same rows as the integer labels'

    n2 = int((cal["labels"] == 2).sum())
    (tmp_path / "saved").mkdir()
    splits["ood-cal"].save(tmp_path / "saved" / "oc.npz")  # its label names left behind
    for kw, exc, msg in [
        (dict(reference=20, ood_cal=str(tmp_path / "saved" / "oc.npz"), ood_class=NAMES[2]), ValueError,
         r"is not an integer label: its labels are numbers, named by no manifest.json .*Bundle.save does not"),
        (dict(ood_cal=splits["ood-cal"], ood_class=NAMES[2]), ValueError, r"^calibrate: ood_cal needs a reference pool"),
        (dict(reference=str(bundles / "cal.npz"), ood_cal=splits["ood-cal"], ood_class=NAMES[2]), ValueError,
         r"^calibrate: ood_class=.* picks a class's pool and calibration inputs: give reference=N"),
        (dict(reference=20, ood_class=NAMES[2]), ValueError, r"give reference=N .* and ood_cal with it"),
        (dict(reference=20, ood_cal=splits["ood-cal"].anchors, ood_class=NAMES[2]), ValueError,
         r"^calibrate: ood_class=.*: ood_cal is an array, with no labels to pick the class's inputs by"),
        (dict(reference=20, ood_cal=splits["ood-cal"], ood_class=NAMES[2][:-1]), ValueError,
         r"^calibrate: ood_class: cal: .* is not among the labels .*did you mean"),
        (dict(reference=20, ood_cal=splits["ood-cal"], ood_class=2), ValueError,
         r'2 is not among the labels .*: the labels are names, so name the class; by number, 2 is "'),
        (dict(reference=n2 + 1, ood_cal=splits["ood-cal"], ood_class=NAMES[2]), ValueError,
         rf"^calibrate: reference={n2 + 1}: cal has {n2} anchors of class .*; give at most {n2}"),
        (dict(reference=20, ood_cal=splits["ood-cal"], ood_class=2.0), TypeError,
         r"^calibrate: ood_class: got a float, want a class name \(str\) or an integer label"),
    ]:
        with pytest.raises(exc, match=msg):
            ccs.calibrate("ball", splits["cal"], **kw)


def test_calibrate_warns_of_an_ood_alpha_it_cannot_certify(labelled, tmp_path):
    """An OOD test calibrated on fewer than 19 inputs (one class's of
    ood-cal) cannot certify alpha_ood = 0.05: calibrate warns so, as ccs
    calibrate does, before Set.ood refuses it; 71 inputs draw no warning."""
    b = labelled["bundles"]
    n1 = int((np.load(b / "ood-cal.npz")["labels"] == 1).sum())
    assert n1 < 19, n1
    want = (rf'the per-input OOD test is calibrated on {n1} inputs \(.*ood-cal.npz \(class "1"\)\): it certifies '
            rf'α_ood ≥ 1/\(n\+1\) = {1 / (n1 + 1):.4g} alone, so α_ood = 0.05 cannot be certified \(it needs 19 inputs')
    with pytest.warns(ccs.CCSWarning, match=want):
        s = ccs.calibrate("ball", b / "cal.npz", reference=18, ood_cal=b / "ood-cal.npz", ood_class=1)
    with pytest.raises(ValueError, match=r"cannot certify α_ood = 0.05"):
        s.ood(np.load(b / "test.npz")["anchors"][:3])
    assert s.ood(np.load(b / "test.npz")["anchors"][:3], alpha_ood=0.1)["p_value"].shape == (3,)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ccs.calibrate("ball", b / "cal.npz", reference=18, ood_cal=b / "ood-cal.npz")
    assert not [w for w in got if "per-input OOD test" in str(w.message)], [str(w.message) for w in got]
    r = subprocess.run([CLI, "calibrate", "-geometry", "ball", "-cal", str(b / "cal.npz"), "-reference", "18", "-ood-cal",
                        str(b / "ood-cal.npz"), "-ood-class", "1", "-out", str(tmp_path / "s.json")], capture_output=True, text=True)
    assert r.returncode == 0 and "α_ood = 0.05 cannot be certified" in r.stderr, r.stderr


def test_calibrate_class_conditional_ood_says_calibration_one(labelled, cli, tmp_path):
    """A class-conditional set has no one threshold for the per-input OOD
    test to divide by: calibrate refuses ood_cal with the keyword that
    gives one, calibration="one", not the command's -calibration one."""
    b = labelled["bundles"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ccs.CCSWarning)   # the classes' few calibration pairs
        with pytest.raises(ValueError, match=r'^calibrate: ood_cal: the OOD score divides .*: a class-conditional set and an OOD test are two sets: '
                           r'calibrate a second set with calibration="one" \(or "pac"\), reference= and ood_cal= on the same split for the OOD test$') as got:
            ccs.calibrate("ball", b / "cal.npz", calibration="class", alpha=0.1, reference=18, ood_cal=b / "ood-cal.npz")
        # A pool alone, which the class set's missing test could not use.
        with pytest.raises(ValueError, match=r'^calibrate: reference: the OOD score divides .*: its pool would serve no test; calibrate with calibration="one"'):
            ccs.calibrate("ball", b / "cal.npz", calibration="class", alpha=0.1, reference=18)
    assert "-calibration" not in str(got.value)
    err = cli("calibrate", "-geometry", "ball", "-cal", b / "cal.npz", "-calibration", "class", "-alpha", 0.1,
              "-reference", 18, "-ood-cal", b / "ood-cal.npz", "-out", tmp_path / "s.json", check=False)
    assert "calibrate a second set with -calibration one (or pac) on the same split for the OOD test" in err, err


def test_warnings_name_the_callers_line(labelled):
    """A CCSWarning points at the line of the caller's code that made it,
    not at the package's own lines, however deep the package's calls go:
    a notebook shows the cell's line."""
    calls = {
        "bundle": lambda: ccs.bundle(labelled["embeddings"], labelled["labels"], k=40, kneg=8, allow_fewer=True),
        "calibrate": lambda: ccs.calibrate("ball", labelled["bundles"] / "cal.npz", calibration="pooled"),
    }
    for name, call in calls.items():
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            call()
        ours = [w for w in got if issubclass(w.category, ccs.CCSWarning)]
        assert ours, name
        for w in ours:
            assert w.filename == __file__, (name, w.filename, str(w.message))


def test_coverage_check_names_classes(labelled, tmp_path, cli):
    """coverage_check(per_class=True) names each class of string labels
    where it is judged, as the command's table and evaluate's classes do,
    and equals ccs coverage-check -json on the same bundle."""
    names = NAMES[labelled["labels"]]
    splits = ccs.bundle(labelled["embeddings"], names, k=8, kneg=6, seed=3, ood_classes=["émeu"], ood_cal_share=0.1,
                        out=tmp_path / "b")
    ball = ccs.calibrate("ball", splits["cal"])
    ball.save(tmp_path / "ball.json")
    got = ball.coverage_check(splits["test"], resplits=20, per_class=True)
    assert [c["name"] for c in got["classes"]] == [NAMES[c["label"]] for c in got["classes"]]
    assert [c["name"] for c in got["classes"]] == [c["name"] for c in ball.evaluate(splits["test"], per_class=True)["classes"]]
    want = cli_json(cli, "coverage-check", "-set", tmp_path / "ball.json", "-test", tmp_path / "b" / "test.npz",
                    "-resplits", "20", "-per-class", "-json")
    assert got["classes"] == want["classes"]


def test_ood_detection_names_inputs_without_logits(tmp_path):
    """A new batch given to ood_detection as an array carries no logits:
    MSP, Energy and ViM say so once on it, a CCSWarning names it and says
    how to give them, and ccs.Bundle(x, logits=) makes MSP available.
    Messages name train as the keyword (and its file), not as ccs ood's
    -train flag."""
    rng = np.random.default_rng(23)
    centres = rng.normal(0, 3, size=(4, 6))
    labels = rng.integers(0, 4, size=600)
    emb = (centres[labels] + rng.normal(size=(600, 6))).astype(np.float32)
    logits = (emb @ centres.T).astype(np.float32)
    splits = ccs.bundle(emb, labels, logits=logits, k=4, seed=2, ood_cal_share=0.2)
    s = ccs.calibrate("ball", splits["cal"], reference=50, ood_cal=splits["ood-cal"])
    new = (centres[rng.integers(0, 4, size=200)] + 2 + 1.5 * rng.normal(size=(200, 6))).astype(np.float32)
    with pytest.warns(ccs.CCSWarning, match=r"^camera: no logits, and train has logits of 4 classes: MSP, Energy and ViM are not "
                      r"available on inputs without them; .*ccs.Bundle\(x, logits=L\) in Python"):
        d = ccs.ood_detection(s, splits["test"], {"camera": new}, train=splits["fit"], ood_cal=splits["ood-cal"], cider_epochs=0)
    msp = next(r for r in d.rows if r["method"] == "MSP")
    assert msp["unavailable"] == "on camera: not available: needs logits", msp
    with warnings.catch_warnings():
        warnings.simplefilter("error", ccs.CCSWarning)
        d = ccs.ood_detection(s, splits["test"], {"camera": ccs.Bundle(new, logits=(new @ centres.T).astype(np.float32))},
                              train=splits["fit"], ood_cal=splits["ood-cal"], cider_epochs=0)
    msp = next(r for r in d.rows if r["method"] == "MSP")
    assert not msp.get("unavailable") and msp["auroc"], msp
    splits["fit"].save(tmp_path / "fit.npz")
    for train, named in ((splits["fit"], "train"), (tmp_path / "fit.npz", f"train={tmp_path / 'fit.npz'}")):
        n = splits["fit"].n
        with pytest.warns(ccs.CCSWarning, match=rf"^id: about {n} of its {n} inputs are rows of {re.escape(named)}, which the baselines"):
            ccs.ood_detection(s, splits["fit"], {"camera": new}, train=train, cider_epochs=0)


def test_class_set_retrieves_by_label(tmp_path, cli):
    """A class-conditional set of queries' languages retrieves with the
    anchor's language's threshold: retrieve(label=) by name or label is
    exactly the collection's rows within it (and ccs retrieve -label's
    hits), another language's differ; retrieve_many(labels=) answers each
    row as retrieve(label=) does; for_class is calibrate(label=)'s set, its
    class recorded, and evaluate judges such a set on its class's anchors."""
    rng = np.random.default_rng(21)
    n, nq, d = 400, 600, 4
    emb = rng.normal(size=(n, d)).astype(np.float32)
    langs = np.array(["de", "en", "sw"])
    lang = rng.integers(0, 3, nq)
    spread = np.array([0.3, 0.6, 1.2])[lang][:, None]  # a query's distance to its passage, by language
    queries = (emb[np.arange(nq) % n] + spread * rng.normal(size=(nq, d))).astype(np.float32)
    ids, qids = [f"doc{i}" for i in range(n)], [f"q{q}" for q in range(nq)]
    pairs = [(qids[q], ids[q % n]) for q in range(nq)]
    splits = ccs.bundle(emb, queries=queries, pairs=pairs, ids=ids, query_ids=qids, query_labels=langs[lang], k=1, kneg=5)
    s = ccs.calibrate("ball", splits["cal"], alpha=0.2, calibration="class")
    s.save(tmp_path / "class.json")
    np.save(tmp_path / "passages.npy", emb)
    np.save(tmp_path / "q.npy", queries[0])
    coll = ccs.Collection(emb)
    got = {}
    for label, name in enumerate(["de", "en", "sw"]):
        q = s.thresholds[name]
        want = np.flatnonzero(s.scores(queries[0], emb) <= q)
        for given in (name, label):
            found, _ = s.retrieve(queries[0], coll, label=given)
            assert sorted(found) == list(want), (given, len(found), len(want))
        doc = json.loads(cli("retrieve", "-set", tmp_path / "class.json", "-db", tmp_path / "passages.npy",
                             "-anchor", tmp_path / "q.npy", "-label", name, "-json"))
        assert sorted(h["row"] for h in doc["hits"]) == list(want) and doc["class"] == name and doc["threshold"] == q
        one = s.for_class(name)
        assert one.threshold == q and one.info["calibration"]["class"] == {"label": label, "name": name}
        assert one.threshold == ccs.calibrate("ball", splits["cal"], alpha=0.2, label=name).threshold
        got[name] = len(want)
    assert got["de"] != got["sw"], got
    # A batch: each row with its language, as retrieve(label=) one at a time.
    batch = s.retrieve_many(queries[:9], coll, labels=list(langs[lang[:9]]))
    for i, (found, _) in enumerate(batch):
        alone, _ = s.retrieve(queries[i], coll, label=str(langs[lang[i]]))
        assert list(found) == list(alone), i
    # An all-zeros row is named by its row of the batch, not of its class.
    zeros = queries[:9].copy()
    zeros[7] = 0
    with pytest.warns(ccs.CCSWarning, match=r"1 of 9 anchors are all zeros \(the first: anchors\[7\]\)"):
        s.retrieve_many(zeros, coll, labels=list(langs[lang[:9]]))
    assert [list(f) for f, _ in s.retrieve_many(queries[:3], coll, labels="en")] == \
        [list(s.retrieve(queries[i], coll, label="en")[0]) for i in range(3)]
    with pytest.raises(ValueError, match=r"needs the anchor's label: give it, retrieve\(anchor, collection, label=L\)"):
        s.retrieve(queries[0], coll)
    with pytest.raises(ValueError, match=r'no class is named "fr" \(the set\'s classes: 0 "de", 1 "en", 2 "sw"\)'):
        s.retrieve(queries[0], coll, label="fr")
    with pytest.raises(ValueError, match=r"retrieve_many: labels\[1\]: .*class 7 has no threshold"):
        s.retrieve_many(queries[:3], coll, labels=[0, 7, 1])
    with pytest.raises(ValueError, match=r"retrieve_many: 2 labels for 3 anchors"):
        s.retrieve_many(queries[:3], coll, labels=["de", "en"])
    marginal = ccs.calibrate("ball", splits["cal"], alpha=0.2)
    with pytest.raises(ValueError, match=r"the set has one threshold: it takes no label"):
        marginal.retrieve(queries[0], coll, label="de")
    # The set of one language's anchors is judged on that language's.
    de = ccs.calibrate("ball", splits["cal"], alpha=0.2, label="de")
    with pytest.warns(ccs.CCSWarning, match=r'the set is for class "de"\'s anchors alone .*judged on the test bundle\'s (\d+) anchors'):
        r = de.evaluate(splits["test"])
    row = [c for c in s.evaluate(splits["test"], per_class=True)["classes"] if c["name"] == "de"][0]
    assert (r["positives"], r["coverage"]) == (row["anchors"], row["coverage"]) and row["anchors"] < splits["test"].n


@pytest.fixture(scope="module")
def languages():
    """A class-conditional ball of queries' languages ("de", "en", "sw":
    labels 0, 1, 2), its calibration split (of query labels: calibrate's
    label= takes a language), queries and collection."""
    rng = np.random.default_rng(21)
    n, nq, d = 400, 600, 4
    emb = rng.normal(size=(n, d)).astype(np.float32)
    langs = np.array(["de", "en", "sw"])
    lang = rng.integers(0, 3, nq)
    spread = np.array([0.3, 0.6, 1.2])[lang][:, None]
    queries = (emb[np.arange(nq) % n] + spread * rng.normal(size=(nq, d))).astype(np.float32)
    ids, qids = [f"doc{i}" for i in range(n)], [f"q{q}" for q in range(nq)]
    pairs = [(qids[q], ids[q % n]) for q in range(nq)]
    splits = ccs.bundle(emb, queries=queries, pairs=pairs, ids=ids, query_ids=qids, query_labels=langs[lang], k=1, kneg=5)
    s = ccs.calibrate("ball", splits["cal"], alpha=0.2, calibration="class")
    return s, splits["cal"], queries, ccs.Collection(emb)


# Each public entry point that takes a class, as a function of the label
# given, and the name its errors give the label by.
LABEL_TAKERS = [
    ("contains", lambda s, cal, q, c, x: list(s.contains(q[0], q[:50], label=x)), "contains: label"),
    ("for_class", lambda s, cal, q, c, x: s.for_class(x).threshold, "for_class: label"),
    ("retrieve", lambda s, cal, q, c, x: [list(r) for r in s.retrieve(q[0], c, label=x)], "retrieve: label"),
    ("retrieve_many", lambda s, cal, q, c, x: [list(i) for i, _ in s.retrieve_many(q[:3], c, labels=[x, x, x])],
     "retrieve_many: labels[0]"),
    ("retrieve_many one label", lambda s, cal, q, c, x: [list(i) for i, _ in s.retrieve_many(q[:3], c, labels=x)],
     "retrieve_many: labels"),
    ("calibrate", lambda s, cal, q, c, x: ccs.calibrate("ball", cal, alpha=0.2, label=x).threshold, "calibrate: label"),
]

# The labels given: "en" (label 1) however it is given, or a refusal:
# (exception, the message after the name of the label).
LABEL_INPUTS = [
    ("int", 1, None),
    ("numpy int64", np.int64(1), None),
    ("str", "en", None),
    ("numpy str", np.str_("en"), None),
    ("bytes", b"en", None),
    ("not a class's name", "fr", (ValueError, r': .*"fr"')),
    ("bool", True, (TypeError, " is True: want an integer label or a class's name (str)")),
    ("float", 2.0, (TypeError, " is 2.0: want an integer label or a class's name (str)")),
]


@pytest.mark.parametrize("taker", LABEL_TAKERS, ids=[t[0] for t in LABEL_TAKERS])
@pytest.mark.parametrize("given", LABEL_INPUTS, ids=[g[0] for g in LABEL_INPUTS])
def test_label_inputs(languages, taker, given):
    """Every entry point that takes a class reads it alike (one helper):
    an int or a NumPy integer is the label, a str or bytes a class's name
    (of "en", label 1), a name the set lacks a ValueError, a bool or a
    float a TypeError, each message naming the argument as the entry
    point calls it; None is no label, which a class-conditional set
    refuses, or a list's element refuses, or calibrate takes as every
    class's anchors."""
    s, cal, q, c = languages
    _, f, where = taker
    _, x, refused = given
    want = f(s, cal, q, c, "en")
    if refused is None:
        assert f(s, cal, q, c, x) == want
        return
    exc, msg = refused
    with pytest.raises(exc) as e:
        f(s, cal, q, c, x)
    assert re.match(re.escape(where) + (msg if exc is ValueError else re.escape(msg)), str(e.value)), str(e.value)


def test_label_none(languages):
    """None is no label: a class-conditional set's entry points refuse it
    as a missing label, saying how to give one; an element of labels= is
    refused as any other non-label; calibrate(label=None) calibrates on
    every class's anchors."""
    s, cal, q, c = languages
    for f in (lambda: s.contains(q[0], q[:5], label=None), lambda: s.retrieve(q[0], c, label=None),
              lambda: s.retrieve_many(q[:3], c, labels=None)):
        with pytest.raises(ValueError, match=r"needs the anchor's label"):
            f()
    with pytest.raises(TypeError, match=r"^for_class: label is None: want an integer label"):
        s.for_class(None)
    with pytest.raises(TypeError, match=r"^retrieve_many: labels\[1\] is None: want an integer label"):
        s.retrieve_many(q[:3], c, labels=["en", None, "de"])
    assert ccs.calibrate("ball", cal, alpha=0.2, label=None).thresholds is None
