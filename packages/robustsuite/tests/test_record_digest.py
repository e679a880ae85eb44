"""Unit records are tamper-evident (issue 36): each carries a digest of its whole content; an edited record is not
reported: `run` recomputes it (naming the file) and `collect` refuses it (naming the file and what to run);
`robustsuite.run.forget_units` makes a run recompute chosen units."""

from __future__ import annotations

import json
import logging

import pytest

from robustsuite import ConfigError, Section, runners
from robustsuite import run as run_mod

CFG = {"methods": {"overview": {"models": ["builtin:digits-cnn", "builtin:digits-cnn-at"], "dataset": "builtin:digits",
                               "config": {"robust_accuracy": "never"}}}}


@pytest.fixture
def counting(monkeypatch):
    calls = []

    def fake(ctx, params):
        calls.append(params["model"])
        return Section("t", f"model {params['model']}", metrics={"n": 1.0})

    monkeypatch.setattr(runners.get("overview"), "run", fake)
    return calls


def _edit_metric(path, value):
    record = json.loads(path.read_text())
    metric = record["section"]["metrics"]["n"]
    record["section"]["metrics"]["n"] = metric | {"value": value} if isinstance(metric, dict) else value
    path.write_text(json.dumps(record))


def test_an_edited_record_is_recomputed_by_run_naming_the_file(tmp_path, counting, caplog):
    run_mod.execute(CFG, tmp_path, progress=False)
    a, b = run_mod.plan(CFG)
    assert "digest" in json.loads(run_mod.unit_path(tmp_path, a).read_text())
    _edit_metric(run_mod.unit_path(tmp_path, a), 0.5)
    with caplog.at_level(logging.WARNING, logger="robustsuite"):
        report = run_mod.execute(CFG, tmp_path, progress=False)
    assert counting[2:] == ["builtin:digits-cnn"]  # a recomputed, b reused
    assert str(run_mod.unit_path(tmp_path, a)) in caplog.text and "digest" in caplog.text
    values = [json.dumps(s["metrics"]) for s in report["sections"].values()]
    assert not any("0.5" in v for v in values)


def test_collect_does_not_report_an_edited_record(tmp_path, counting, caplog):
    run_mod.execute(CFG, tmp_path, progress=False)
    run_mod.write_plan(CFG, tmp_path)
    a, _ = run_mod.plan(CFG)
    _edit_metric(run_mod.unit_path(tmp_path, a), 0.5)
    with caplog.at_level(logging.WARNING, logger="robustsuite"), \
            pytest.raises(ConfigError, match=rf"is not a valid record of unit {a.id}.*robustsuite run-unit"):
        run_mod.collect(tmp_path)
    assert str(run_mod.unit_path(tmp_path, a)) in caplog.text and "digest" in caplog.text


def test_recompute_removes_the_named_units_records_only(tmp_path, counting):
    run_mod.execute(CFG, tmp_path, progress=False)
    a, b = run_mod.plan(CFG)
    with pytest.raises(ConfigError, match="is not a unit of this config; did you mean"):
        run_mod.forget_units(CFG, tmp_path, [a.id + "x"])
    assert run_mod.unit_path(tmp_path, a).exists()
    run_mod.forget_units(CFG, tmp_path, [a.id])
    run_mod.execute(CFG, tmp_path, progress=False)
    assert counting == ["builtin:digits-cnn", "builtin:digits-cnn-at", "builtin:digits-cnn"]
