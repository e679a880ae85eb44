"""The report's verdicts: gathered per model from the sections' checks, recomputed by the whole-report check, and
rendered first."""

from __future__ import annotations

import copy

import pytest

from robustsuite.report import SCHEMA_VERSION, Section, check_report, render_markdown, write_report
from robustsuite.report.verdicts import build_verdicts
from robustsuite_common.experiment import Metric
from robustsuite_common.intervals import proportion
from robustsuite_common.verdict import Check

RUN = {"id": "r", "created": "2026-01-01T00:00:00+00:00", "seed": 0, "device": "cpu", "config": {}, "versions": {},
       "command": "test"}


def _sec(model, checks, metrics=None, method="overview"):
    return Section("T", "s", metrics=metrics or {}, checks=checks).to_dict() | {"model": model, "method": method,
                                                                                 "deterministic": True}


def _report():
    rob = proportion(40, 100)
    a = _sec("builtin:a", [Check("above-chance", "validity", "t", "pass", "r", 0.9, (0.8, 0.95), 100),
                           Check("pgd-vs-autoattack", "attack-strength", "t", "warn", "r", 0.05, (0.01, 0.1), 100)],
             {"robust_accuracy_autoattack": Metric.of(rob, "robust accuracy under standard AutoAttack", "fraction")})
    lens = _sec("builtin:a", [Check("calibration-under-attack", "lenses", "t", "fail", "r", 0.2, (0.1, 0.3), 50)],
                method="certcal")
    b = _sec("builtin:b", [Check("above-chance", "validity", "t", "fail", "r", 0.1, (0.05, 0.2), 100)])
    secs = {"overview:a": a, "certcal": lens, "overview:b": b}
    return {"schema_version": SCHEMA_VERSION, "warnings": [], "verdicts": build_verdicts(secs), "run": RUN,
            "units": [], "sections": secs}


def test_checks_are_gathered_per_model_with_their_evidence_and_combined():
    rep = _report()
    by = {v["model"]: v for v in rep["verdicts"]}
    assert list(by) == ["builtin:a", "builtin:b"]
    a = by["builtin:a"]
    assert a["status"] == "not-supported"  # the certcal lens failed; the PGD gap only warned
    assert [c["id"] for c in a["checks"]] == ["above-chance", "pgd-vs-autoattack", "calibration-under-attack"]
    assert {c["evidence"] for c in a["checks"]} == {"#overview:a", "#certcal"}
    assert a["robust_accuracy"] == pytest.approx(0.4) and a["robust_interval"][0] < 0.4 < a["robust_interval"][1]
    assert by["builtin:b"]["status"] == "inconclusive" and by["builtin:b"]["robust_accuracy"] is None
    assert check_report(rep) == []


def test_a_verdict_its_checks_do_not_give_is_refused_and_nothing_is_written(tmp_path):
    rep = _report()
    bad = copy.deepcopy(rep)
    bad["verdicts"][0]["status"] = "supported"
    assert any("checks give 'not-supported'" in p for p in check_report(bad))
    with pytest.raises(Exception, match="report check"):
        write_report(tmp_path, bad)
    assert not (tmp_path / "report.json").exists()
    worse = copy.deepcopy(rep)
    worse["verdicts"][0]["checks"][0]["interval"] = [0.95, 0.99]  # excludes its statistic 0.9
    assert any("excludes its statistic" in p for p in check_report(worse))


def test_markdown_opens_with_the_banner_and_scorecard(tmp_path):
    rep = _report()
    write_report(tmp_path, rep)
    md = (tmp_path / "report.md").read_text()
    assert md.index("## Verdict") < md.index("### Scorecard: builtin:a") < md.index("## Units")
    assert "✘ **builtin:a: the measured robustness does NOT hold up**" in md
    assert "robust accuracy under standard AutoAttack: 0.4 [" in md
    assert "? **builtin:b: inconclusive" in md
    assert render_markdown(rep) == md
