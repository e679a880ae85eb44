"""``robustsuite audit`` end to end on the shipped models, offline: the report opens with one verdict per model,
built from the overview's indicators and every lens that applies (images: temperature illusion, uncertainty and
calibration under attack; text: Zéroe noise)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from robustsuite.cli import app

pytestmark = pytest.mark.slow


def _audit(tmp_path, *args):
    out = tmp_path / "audit"
    r = CliRunner().invoke(app, ["audit", *args, "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    return out, json.loads((out / "report.json").read_text())


def test_image_audit_opens_with_the_verdict_of_every_lens(tmp_path):
    out, rep = _audit(tmp_path, "builtin:fashion-cnn-at", "builtin:fashion-mnist", "--eps", "0.1", "--limit", "16",
                      "--claim", "0.99")
    assert [u["status"] for u in rep["units"]] == ["done"] * len(rep["units"])
    (v,) = rep["verdicts"]
    assert v["model"] == "builtin:fashion-cnn-at"
    ids = {c["id"] for c in v["checks"]}
    assert {"above-chance", "randomized-model", "pgd-vs-autoattack", "zero-gradients", "epsilon-monotone",
            "unbounded-attack", "more-iterations", "temperature-illusion", "uncertainty-under-attack",
            "calibration-under-attack", "claim"} <= ids
    by = {c["id"]: c for c in v["checks"]}
    assert by["above-chance"]["status"] == "pass"
    assert by["claim"]["status"] == "fail" and v["status"] == "not-supported"  # 0.99 is beyond AutoAttack's bound
    assert by["standard-budget"]["status"] == "warn"  # 16 of the whole test split
    md = (out / "report.md").read_text()
    assert md.index("## Verdict") < md.index("## Units")
    assert "✘ **builtin:fashion-cnn-at: the measured robustness does NOT hold up**" in md
    html = (out / "report.html").read_text()
    assert html.index("Verdict: is the robustness real?") < html.index("<h2>Units</h2>")


def test_text_audit_judges_the_model_on_its_lenses(tmp_path):
    _, rep = _audit(tmp_path, "builtin:wordnet-roberta", "builtin:wordnet-topics", "--limit", "40")
    (v,) = rep["verdicts"]
    ids = {c["id"] for c in v["checks"]}
    assert {"above-chance", "zeroe-noise"} <= ids and "pgd-vs-autoattack" not in ids
    # no AutoAttack on text: the verdict rests on the lens (a model at chance would be inconclusive instead)
    assert v["robust_accuracy"] is None and v["status"] != "inconclusive"
