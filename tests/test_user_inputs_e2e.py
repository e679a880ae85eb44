"""Acceptance (issue 12): user-style inputs made locally go through `robustsuite run --log-samples --seeds 2`.

A ``save_pretrained`` HF model with non-alphabetical labels on a CSV, an npz image set, an ImageFolder and an
IDX directory; every per-sample file must reproduce the report's aggregates.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "packages" / "robustsuite" / "tests"))
import _userfix as uf  # noqa: E402

from robustsuite import load_model, read_samples  # noqa: E402
from robustsuite.cli import app  # noqa: E402


@pytest.mark.slow
def test_user_inputs_end_to_end(tmp_path):
    # text: a tiny HF model with labels {0: zebra, 1: apple}; the CSV holds the model's own predictions by name
    sample = uf.texts(40, seed=5)
    hf_dir = uf.bert_dir(tmp_path / "hf model", {0: "zebra", 1: "apple"}, sample_texts=sample)
    pred = load_model(f"hf:{hf_dir}")(sample).argmax(1)
    with open(tmp_path / "reviews.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["review", "sentiment", "split"])
        w.writerows([t, ["zebra", "apple"][int(p)], "test"] for t, p in zip(sample, pred, strict=True))
    # vision: one trained 10-class digits CNN (npz, IDX) and one 3-class CNN (ImageFolder with named folders)
    cnn10 = uf.trained_digits_cnn(tmp_path / "ckpt" / "cnn10.pt", num_classes=10)
    cnn3 = uf.trained_digits_cnn(tmp_path / "ckpt" / "cnn3 #v1.pt", num_classes=3)
    x, y = uf.digits_uint8()
    np.savez(tmp_path / "digits.npz", x_test=x[1500:1600], y_test=y[1500:1600])
    folder = uf.image_folder(tmp_path / "folder", classes=("0-zero", "1-one", "2-two"), per_class=15)
    idx = uf.idx_dir(tmp_path / "idx", n_train=50, n_test=80)
    cfg = tmp_path / "run.toml"
    cfg.write_text(f"""
[methods.overview]
config = {{n_boot = 200}}
targets = [
  ["hf:{hf_dir}", "csv:{tmp_path / 'reviews.csv'}?text=review&label=sentiment"],
  ["torch:{cnn10}#digits-cnn", "npz:{tmp_path / 'digits.npz'}"],
  ["torch:{cnn3}#digits-cnn", "imagefolder:{folder}"],
  ["torch:{cnn10}#digits-cnn", "idx:{idx}"],
]
""")
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--no-progress", "--log-samples", "parquet",
                                   "--seeds", "2"])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    # four targets; the overview does not depend on the seed, so --seeds 2 plans one unit each
    assert len(report["units"]) == 4 and all(u["status"] == "done" for u in report["units"])
    assert len(report["sections"]) == 4
    by_data = {s["dataset"].split(":")[0]: s for s in report["sections"].values()}
    assert by_data["csv"]["metrics"]["accuracy"]["value"] == 1.0  # the model's own labels, mapped through id2label
    for sec in report["sections"].values():
        # the overview does not depend on the seed: one seed's unit is the section (deterministic)
        assert sec["deterministic"] and sec["seeds"] == [0] and len(sec["samples"]) == 1
        m = {k: v["value"] for k, v in sec["metrics"].items()}
        iv = sec["metrics"]["accuracy"]["interval"]
        for path in sec["samples"]:
            rows = read_samples(out / path)
            assert len(rows) == m["num_samples"]
            acc = np.mean([r["prediction"] == r["label"] for r in rows])
            assert acc == pytest.approx(m["accuracy"]) and np.mean([r["correct"] for r in rows]) == pytest.approx(acc)
            assert np.mean([r["confidence"] for r in rows]) == pytest.approx(m["mean_confidence"])
            assert iv["low"] <= m["accuracy"] <= iv["high"]
        assert "[" in (out / "report.md").read_text()  # value [lo, hi]
    # the IDX set holds the same images as the npz test digits' source: labels come straight from the files
    idx_rows = read_samples(out / by_data["idx"]["samples"][0])
    assert [r["label"] for r in idx_rows] == y[50:130].tolist()
    # a second run reuses every unit
    res = CliRunner().invoke(app, ["plan", str(cfg), "--out", str(out), "--log-samples", "parquet", "--seeds", "2"])
    assert "4 cached, 0 to run" in res.output
    html = (out / "report.html").read_text()
    assert html.count("<section") == 4 and "your git" in html
