import json

import pytest
from typer.testing import CliRunner

from robustsuite import ConfigError, Section, runners
from robustsuite import run as run_mod
from robustsuite.cli import app

cli = CliRunner()


def test_models_datasets_methods_listings():
    for cmd, needle in (("models", "builtin:digits-cnn-at"), ("datasets", "builtin:digits-osr"), ("methods", "overview")):
        res = cli.invoke(app, [cmd])
        assert res.exit_code == 0, res.output
        assert needle in res.output


def test_demo_writes_report_and_report_rerenders(tmp_path):
    out = tmp_path / "run"
    res = cli.invoke(app, ["demo", "--out", str(out), "--methods", "overview", "--no-progress",
                           "--set", "methods.overview.config.robust_accuracy=never"])  # AutoAttack: test_runner_overview
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    assert set(report["sections"]) == {"overview:builtin:fashion-cnn", "overview:builtin:fashion-cnn-at",
                                       "overview:builtin:wordnet-roberta"}
    # a sanity check that the shipped weights were loaded (their exact accuracy is test_builtin_models' job)
    assert report["sections"]["overview:builtin:fashion-cnn"]["metrics"]["accuracy"]["value"] > 0.85
    assert all(u["status"] == "done" for u in report["units"])
    (out / "report.html").unlink()
    res = cli.invoke(app, ["report", str(out)])
    assert res.exit_code == 0 and (out / "report.html").is_file()


def test_bad_inputs_give_clear_errors(tmp_path):
    res = cli.invoke(app, ["demo", "--out", str(tmp_path), "--methods", "nope"])
    assert res.exit_code == 2 and "unknown method" in res.output
    cfg = tmp_path / "c.toml"
    cfg.write_text('[methods.overview]\nmodel = "builtin:digits-cnn"\ndataset = "builtin:digits"\nbogus = 1\n')
    res = cli.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "bogus" in res.output
    res = cli.invoke(app, ["run", str(tmp_path / "missing.toml"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "not found" in res.output
    res = cli.invoke(app, ["report", str(tmp_path / "nothing")])
    assert res.exit_code == 2
    with pytest.raises(ConfigError, match="device"):
        run_mod.resolve_device("tpu")


def test_plan_expands_models_and_targets():
    cfg = {"methods": {"overview": {"models": ["builtin:digits-cnn", "builtin:digits-cnn-at"],
                                    "dataset": "builtin:digits"}}}
    units = run_mod.plan(cfg)
    assert [u.model for u in units] == ["builtin:digits-cnn", "builtin:digits-cnn-at"]
    assert len({u.id for u in units}) == 2
    assert [u.model for u in run_mod.plan({"methods": {"overview": {}}})] == [
        t[0] for t in runners.get("overview").DEFAULTS["targets"]]
    with pytest.raises(ConfigError, match="top-level"):
        run_mod.plan({"method": {}})


def test_interrupted_run_resumes_without_redoing_finished_units(tmp_path, monkeypatch):
    calls = []
    overview = runners.get("overview")

    def flaky(ctx, params):
        calls.append(params["model"])
        if params["model"] == "builtin:digits-cnn-at" and calls.count("builtin:digits-cnn-at") == 1:
            raise KeyboardInterrupt  # the process dies mid-run
        return Section("t", f"ran {params['model']}", metrics={"n": len(calls)})

    monkeypatch.setattr(overview, "run", flaky)
    cfg = {"seed": 0, "methods": {"overview": {"models": ["builtin:digits-cnn", "builtin:digits-cnn-at"],
                                               "dataset": "builtin:digits"}}}
    with pytest.raises(KeyboardInterrupt):
        run_mod.execute(cfg, tmp_path, progress=False)
    assert len(list((tmp_path / "units").glob("*.json"))) == 1
    report = run_mod.execute(cfg, tmp_path, progress=False)
    assert calls == ["builtin:digits-cnn", "builtin:digits-cnn-at", "builtin:digits-cnn-at"]
    assert len(report["sections"]) == 2
    # a third run redoes nothing
    run_mod.execute(cfg, tmp_path, progress=False)
    assert len(calls) == 3


def test_failing_unit_is_recorded_and_others_still_run(tmp_path, monkeypatch):
    overview = runners.get("overview")

    def half(ctx, params):
        if params["model"].endswith("-at"):
            raise RuntimeError("boom")
        return Section("t", "ok")

    monkeypatch.setattr(overview, "run", half)
    cfg = {"methods": {"overview": {"models": ["builtin:digits-cnn", "builtin:digits-cnn-at"],
                                    "dataset": "builtin:digits"}}}
    report = run_mod.execute(cfg, tmp_path, progress=False)
    statuses = {u["model"]: (u["status"], u["error"]) for u in report["units"]}
    assert statuses["builtin:digits-cnn"] == ("done", None)
    assert statuses["builtin:digits-cnn-at"] == ("failed", "RuntimeError: boom")
    failed = json.loads(next((tmp_path / "units").glob("*.failed.json")).read_text())
    assert "Traceback" in failed["traceback"]
