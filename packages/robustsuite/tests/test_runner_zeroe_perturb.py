"""The Zéroe runner is an adapter: its unit's section equals what ``zeroe_perturb.experiment.run`` gives directly
on the same models, data and config; its ``inputs()`` resolves the specs, skips the builtin task models a user run
does not name, and the shipped task models that are not clearly above chance are left out of the headline."""

from __future__ import annotations

import json

import pytest

from robustsuite import run as run_mod
from robustsuite import runners
from robustsuite.errors import ConfigError
from robustsuite_common.config import override

SMALL = {"classification": {"n": 24}, "pairs": {"n": 16}, "multilabel": {"n": 16}, "tagging": {"n": 16},
         "attack": {"attacks": ["intrude", "segment", "visual"], "levels": [0.2, 0.8]},
         "seeds": {"n_seeds": 2, "n_resamples": 200}}


def _direct(table: dict, seed: int, tmp_path):
    """``experiment.run`` on what the runner's ``inputs()`` resolves, outside any unit."""
    from zeroe_perturb import experiment

    runner = runners.get("zeroe_perturb")
    specs, cfg = runner.resolve(table)
    cfg = override(cfg, seed=seed)
    ctx = runners.RunContext(run_dir=tmp_path / "direct", method="zeroe_perturb", seed=seed)
    models, data = runner.module.inputs(ctx, specs, cfg)
    return experiment.run(models, data, cfg, progress=False)


@pytest.mark.slow  # ~55 s here: the four shipped models are loaded twice (by the unit and for the direct run)
def test_unit_section_equals_the_experiment_run_directly(tmp_path):
    table = {"config": SMALL}
    report = run_mod.execute({"seed": 3, "log_samples": "jsonl", "methods": {"zeroe_perturb": table}},
                             tmp_path / "run", progress=False)
    unit = report["units"][0]
    assert unit["status"] == "done", unit.get("error")
    sec = report["sections"]["zeroe_perturb"]
    res = _direct(table, 3, tmp_path)
    for key, m in res.metrics.items():  # same numbers, intervals included (report schema 2.0)
        got = sec["metrics"][key]
        assert got["value"] == m.value, key
        if m.interval is not None:
            assert (got["interval"]["low"], got["interval"]["high"]) == m.ci, key
    assert [t["name"] for t in sec["tables"]] == list(res.tables)
    for t in sec["tables"]:
        assert [list(r) for r in res.tables[t["name"]].rows] == [list(r) for r in t["rows"]], t["name"]
    assert sec["summary"] == res.summary
    assert [f["name"] for f in sec["figures"]][0] == "clean-vs-attacked"
    # per-sample rows: one file per task type, every level, the runner's seed
    files = {s.rsplit("--", 1)[1].removesuffix(".jsonl"): s for s in sec["samples"]}
    assert set(files) == set(res.records)
    rows = [json.loads(x) for x in (tmp_path / "run" / files["classification"]).read_text().splitlines()]
    assert len(rows) == len(res.records["classification"]) == 24 * 3 * 2
    assert {r["p"] for r in rows} == {0.2, 0.8} and {r["seed"] for r in rows} == {3}
    assert all(isinstance(r["label"], str) and 0 < r["confidence"] <= 1 for r in rows)


def test_shipped_task_models_not_clearly_above_chance_are_left_out_of_the_headline(tmp_path):
    """Issue 26, item 5, on the shipped models at the demo's 200 items: a task counts in the headline exactly when
    its clean score is at least 0.2 above the majority-class share (0.5 for AUROC) and not at chance; a task left
    out shows why, and has no ranking numbers."""
    table = {"config": {"attack": {"attacks": ["visual"], "levels": [0.8]}, "seeds": {"n_seeds": 1,
                                                                                      "n_resamples": 200}}}
    res = _direct(table, 0, tmp_path)
    rows = res.tables["task_summary"].records()
    assert [r["task"] for r in rows] == ["text classification", "pairs (hypothesis)", "pairs (both)", "multi-label",
                                         "tagging"]
    for r in rows:
        expected = (not r["at chance"]) and r["s(0)"] - r["chance"] >= 0.2
        assert r["in headline"] is expected, r
        if not expected:
            assert r["left out because"] and r["most harmful"] is None and r["attackers above chance"] is None
            assert any(w.startswith(r["task"]) for w in res.warnings)
    assert rows[0]["in headline"]  # the demo's classifier (0.82 on 200 texts) is far above chance
    pairs = rows[1]
    if pairs["s(0)"] - pairs["chance"] < 0.2:  # today: 0.62 against 0.535
        assert "pairs (hypothesis)" in res.summary and "left out" in res.summary


def test_a_user_run_naming_its_own_model_skips_the_builtin_task_models_with_a_note(tmp_path):
    table = {"model": "builtin:text-tiny", "dataset": "builtin:sentiment-mini",
             "config": {**SMALL, "classification": {"n": 20}, "seeds": {"n_seeds": 1, "n_resamples": 200}}}
    report = run_mod.execute({"methods": {"zeroe_perturb": table}}, tmp_path, progress=False)
    assert report["units"][0]["status"] == "done", report["units"][0].get("error")
    sec = report["sections"]["zeroe_perturb"]
    assert [t["name"] for t in sec["tables"]][0] == "levels"
    assert "tasks" not in [t["name"] for t in sec["tables"]]
    assert any("this run names its own models" in n and "pairs" in n for n in sec["notes"])


@pytest.mark.parametrize("table, match", [({"split": "dev"}, "split"), ({"config": {"attack": {"levels": [0.0]}}},
                                                                         "levels"),
                                          ({"config": {"attack": {"attacks": ["typo"]}}}, "attacks"),
                                          ({"config": {"pairs": {"targets": ["premise"]}}}, "targets"),
                                          ({"preset": "full"}, "preset")])
def test_bad_settings_are_refused_at_plan_time(table, match):
    with pytest.raises(ConfigError, match=match):
        run_mod.plan({"methods": {"zeroe_perturb": table}})
