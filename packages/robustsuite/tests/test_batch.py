"""Batch schedulers without Ray (issue 18, item 2): plan --out, run-unit, collect."""

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from _reports import report_content  # noqa: E402

from robustsuite import run as run_mod  # noqa: E402
from robustsuite.cli import app  # noqa: E402

cli = CliRunner()
# four units (the overview does not depend on the seed, so they are four targets rather than seeds)
CONFIG = ('[methods.overview]\ntargets = [["builtin:digits-cnn", "builtin:digits"], ["builtin:digits-cnn-at", '
          '"builtin:digits"], ["builtin:digits-cnn", "builtin:digits-osr"], ["builtin:digits-osr-cnn", '
          '"builtin:digits-osr"]]\nconfig = {n_boot = 100, robust_accuracy = "never"}\n')


def _text(res) -> str:
    return " ".join(res.output.split())  # rich wraps long lines


@pytest.fixture
def cfg(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(CONFIG)
    return path


def test_plan_run_unit_collect_gives_the_report_of_a_plain_run(tmp_path, cfg):
    plain = tmp_path / "plain"
    res = cli.invoke(app, ["run", str(cfg), "--out", str(plain), "--no-progress"])
    assert res.exit_code == 0, res.output

    out = tmp_path / "batch"
    assert cli.invoke(app, ["plan", str(cfg), "--out", str(out)]).exit_code == 0
    assert not out.exists()  # without --write, plan only reads OUT
    res = cli.invoke(app, ["plan", str(cfg), "--out", str(out), "--write"])
    assert res.exit_code == 0, res.output
    ids = json.loads((out / "plan.json").read_text())["units"]
    assert ids == [u.id for u in run_mod.plan(run_mod.load_config(cfg))] and len(ids) == 4
    spec = json.loads((out / "plan" / f"{ids[0]}.json").read_text())
    assert {"method", "model", "dataset", "params", "seed", "identity", "settings"} <= set(spec)
    assert not (out / "units" / f"{ids[0]}.json").exists()  # planning runs nothing
    # one job per unit, in any order, by index (SLURM_ARRAY_TASK_ID) or by id
    for job in ("3", ids[0], "1", ids[2]):
        res = cli.invoke(app, ["run-unit", str(out), job])
        assert res.exit_code == 0, res.output
    res = cli.invoke(app, ["run-unit", str(out), "1"])
    assert res.exit_code == 0 and "already finished" in _text(res)
    res = cli.invoke(app, ["collect", str(out)])
    assert res.exit_code == 0, res.output
    assert "4 done, 0 failed, 0 missing" in _text(res)
    batch = json.loads((out / "report.json").read_text())
    assert report_content(batch) == report_content(json.loads((plain / "report.json").read_text()))
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    # a plain run into the batch directory reuses every unit
    report = run_mod.execute(run_mod.load_config(cfg), out, progress=False,
                             on_unit=lambda u, s: (_ for _ in ()).throw(AssertionError(s)) if s != "skip" else None)
    assert report_content(report) == report_content(batch)


def test_collect_lists_missing_units_and_flags_the_report(tmp_path, cfg):
    out = tmp_path / "batch"
    assert cli.invoke(app, ["plan", str(cfg), "--out", str(out), "--write"]).exit_code == 0
    ids = json.loads((out / "plan.json").read_text())["units"]
    assert cli.invoke(app, ["run-unit", str(out), "0"]).exit_code == 0
    res = cli.invoke(app, ["collect", str(out)])
    assert res.exit_code == 3, res.output
    text = _text(res)
    assert "1 done, 0 failed, 3 missing of 4 units" in text and "INCOMPLETE" in text
    assert all(f"missing: {uid}" in text for uid in ids[1:]) and f"missing: {ids[0]}" not in text
    report = json.loads((out / "report.json").read_text())
    assert [u["status"] for u in report["units"]] == ["done", "pending", "pending", "pending"]
    assert "pending" in (out / "report.md").read_text()
    assert cli.invoke(app, ["collect", str(out), "--allow-missing"]).exit_code == 0


def test_collect_a_plain_run_directory(tmp_path, cfg, monkeypatch):
    from robustsuite import Section, runners

    monkeypatch.setattr(runners.get("overview"), "run", lambda ctx, params: Section("t", f"seed {ctx.seed}"))
    out = tmp_path / "run"
    assert cli.invoke(app, ["plan", str(cfg), "--out", str(out), "--write"]).exit_code == 0  # 4 units
    config = run_mod.load_config(cfg)
    config["methods"]["overview"]["targets"] = config["methods"]["overview"]["targets"][:2]
    report = run_mod.execute(config, out, progress=False)  # a later run with another config: 2 units
    collected, missing = run_mod.collect(out)
    assert missing == [] and report_content(collected) == report_content(report) and len(collected["units"]) == 2


def test_run_unit_bad_inputs(tmp_path, cfg, monkeypatch):
    out = tmp_path / "batch"
    res = cli.invoke(app, ["run-unit", str(out), "0"])
    assert res.exit_code == 2 and "no plan.json" in _text(res)
    res = cli.invoke(app, ["plan", str(cfg), "--write"])
    assert res.exit_code == 2 and "--write needs --out" in _text(res)
    res = cli.invoke(app, ["collect", str(out)])
    assert res.exit_code == 2 and "neither plan.json nor run.json" in _text(res)
    assert cli.invoke(app, ["plan", str(cfg), "--out", str(out), "--write"]).exit_code == 0
    res = cli.invoke(app, ["run-unit", str(out), "4"])
    assert res.exit_code == 2 and "out of range" in _text(res) and "4 units" in _text(res)
    res = cli.invoke(app, ["run-unit", str(out), "overview--nope"])
    assert res.exit_code == 2 and "not in the plan" in _text(res)
    # a worker with other package versions would compute something else than was planned: refused
    from robustsuite.run import provenance

    real = provenance.version
    monkeypatch.setattr(provenance, "version", lambda p: "0.0-other" if p == "torch" else real(p))
    res = cli.invoke(app, ["run-unit", str(out), "0"])
    assert res.exit_code == 2 and "versions" in _text(res) and "0.0-other" in _text(res)
    assert not list((out / "units").glob("*.json"))
