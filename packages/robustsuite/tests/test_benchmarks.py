"""Benchmarks as data (issue 23 item 3): the demo and larger benchmarks are TOML files shipped in the package,
validated by the methods' typed configs; `robustsuite demo` is `robustsuite run` on the demo file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from robustsuite import run as run_mod
from robustsuite import runners
from robustsuite.cli import app
from robustsuite.run.units import strings

cli = CliRunner()


def test_the_shipped_benchmarks_are_listed_and_runnable_by_name():
    assert set(run_mod.benchmarks()) >= {"demo", "paper-cpu"}
    res = cli.invoke(app, ["benchmarks"])
    assert res.exit_code == 0 and "demo" in res.output and "paper-cpu" in res.output, res.output
    assert run_mod.load_config("demo") == run_mod.load_config(run_mod.benchmarks()["demo"])
    res = cli.invoke(app, ["plan", "no-such-benchmark"])
    assert res.exit_code == 2 and "demo" in " ".join(res.output.split())  # the error lists the shipped ones


def test_the_demo_file_is_every_method_with_its_demo_settings_and_names_every_model_it_loads():
    """Same units as every runner's defaults with the file's own `config` settings (so a demo run directory
    resumes; the demo turns on the verdict's checks, attacks every image model at ε 0.1 and trims the presets to a
    first run of minutes), and every builtin spec
    a unit's parameters hold is named in the file (a config that names its models may load only those)."""
    demo = run_mod.demo_config()
    assert list(demo["methods"]) == list(runners.available())
    settings = {m: {"config": t["config"]} if "config" in t else {} for m, t in demo["methods"].items()}
    assert set(settings["overview"]["config"]) == {"robust_accuracy", "eps", "autoattack_n"}
    lenses = {m for m in settings if m not in ("overview", "transduct_attack")}  # transduct's check needs --adaptive
    assert all(settings[m]["config"]["audit"]["enabled"] for m in lenses)
    defaults = {"seed": 0, "device": "cpu", "methods": {m: settings[m] for m in runners.available()}}
    units = run_mod.plan(demo)
    assert [u.id for u in units] == [u.id for u in run_mod.plan(defaults)]
    for u in units:
        wanted = {s for s in strings(u.params) if s.startswith("builtin:")}
        assert u.allowed_models is not None and wanted <= u.allowed_models, (u.method, wanted - u.allowed_models)


def test_demo_takes_a_subset_of_the_file_and_the_runs_options():
    cfg = run_mod.demo_config(["overview"], seed=3, device="cpu")
    assert list(cfg["methods"]) == ["overview"] and cfg["seed"] == 3
    res = cli.invoke(app, ["demo", "--methods", "nope", "--out", "x"])
    assert res.exit_code == 2 and "unknown method" in res.output


def test_run_and_plan_take_a_subset_of_a_benchmark_with_the_same_unit_ids(tmp_path):
    """`--methods certcal` (as the package READMEs run one section of paper-cpu) plans that section's units under
    the ids the whole benchmark gives them, so a subset run and a whole run share records; a misspelt method is
    refused before any work with the closest name."""
    whole = {u.method: u.id for u in run_mod.plan(run_mod.load_config("paper-cpu"))}
    res = cli.invoke(app, ["plan", "paper-cpu", "--methods", "certcal,uncspan", "--out", str(tmp_path), "--write"])
    assert res.exit_code == 0, res.output
    planned = json.loads((tmp_path / run_mod.PLAN_FILE).read_text(encoding="utf-8"))
    assert planned["units"] == [whole["certcal"], whole["uncspan"]]
    for command in (["plan", "paper-cpu"], ["run", "paper-cpu", "--out", str(tmp_path / "r")]):
        res = cli.invoke(app, [*command, "--methods", "certcall"])
        assert res.exit_code == 2 and "--methods: unknown method 'certcall'" in res.output, res.output
        assert "did you mean 'certcal'?" in res.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", sorted(run_mod.benchmarks()))
def test_every_shipped_benchmark_plans(name):
    """Validated by each method's typed config at plan time (its presets and overrides)."""
    assert run_mod.plan(run_mod.load_config(name))
