"""The declarative runner adapter: a runner module with ``EXPERIMENT`` runs its package's experiment through
the umbrella's units (plan-time validation, identity, seed, store, records, figures, shards)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
import torch

from robustsuite import run as run_mod
from robustsuite import runners
from robustsuite.errors import ConfigError
from robustsuite.run.adapter import ExperimentRunner
from robustsuite_common.config import Float, Int, Str, config, param
from robustsuite_common.experiment import JSON, ExperimentResult, Metric, Table, cached
from robustsuite_common.intervals import proportion

CALLS: list[str] = []


@config
class AttackGroup:
    eps: Float = param(0.1, gt=0, le=1, doc="budget", unit="L∞")
    steps: Int = param(3, ge=1, doc="steps", unit="iterations")


@config
class ToyConfig:
    seed: Int = param(0, ge=0, doc="seed", unit="")
    n: Int = param(20, ge=1, doc="test points", unit="points")
    attack: AttackGroup = param(AttackGroup(), doc="the attack")
    shards: Int = param(1, ge=1, doc="shards (execution only)", unit="")


PRESETS = {"demo": ToyConfig(), "paper": ToyConfig(n=40, attack=AttackGroup(steps=10))}


def _preset(name):
    return PRESETS[name]


def _run(models, data, cfg, *, store=None, progress=True):
    x, y = data.x[: cfg.n], data.y[: cfg.n]

    def correct():
        CALLS.append("forward")
        return (models["model"](x).argmax(1) == y).tolist()

    c = np.asarray(cached(store, f"correct-{cfg.n}", correct, JSON), dtype=bool)
    acc = proportion(int(c.sum()), int(c.size))
    return ExperimentResult(
        "toy", {"seed": cfg.seed}, {"t": Table("t", "accuracy", ("acc", "acc_ci_low", "acc_ci_high"),
                                              ((acc.estimate, *acc.ci),))},
        {"accuracy": Metric.of(acc, "clean accuracy", "fraction"), "seed": Metric(cfg.seed, "seed")},
        f"accuracy {acc.estimate:.2f}", records={"points": [{"id": data.id_of(i), "correct": bool(v)}
                                                          for i, v in enumerate(c)]},
        warnings=("model at chance",) if acc.low <= 0.5 else ())


def _figures(result):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from robustsuite_common.experiment import Figure

    fig, ax = plt.subplots()
    ax.bar([0], [result.value("accuracy")])
    return [Figure("acc", "accuracy", fig)]


def install_toy(monkeypatch, **experiment_attrs) -> ExperimentRunner:
    """The toy experiment as the only method ``toy`` of the umbrella (for this test's duration)."""
    exp = types.ModuleType("toy_experiment")
    exp.Config, exp.PRESETS, exp.preset, exp.run, exp.figures = ToyConfig, PRESETS, _preset, _run, _figures
    exp.EXECUTION_FIELDS = ("shards",)
    for k, v in experiment_attrs.items():
        setattr(exp, k, v)
    monkeypatch.setitem(sys.modules, "toy_experiment", exp)

    @config
    class Inputs:
        model: Str = param("builtin:digits-cnn", doc="classifier", unit="model spec")
        dataset: Str = param("builtin:digits", doc="images", unit="dataset spec")

    def inputs(ctx, specs, cfg):
        return {"model": ctx.model(specs.model)}, ctx.dataset(specs.dataset).test

    mod = types.ModuleType("robustsuite.runners.toy")
    mod.NAME, mod.TITLE, mod.PAPER, mod.EXPERIMENT = "toy", "Toy", "000", "toy_experiment"
    mod.Inputs, mod.inputs = Inputs, inputs
    runner = ExperimentRunner(mod)
    monkeypatch.setattr(runners, "available", lambda: {"toy": runner})
    CALLS.clear()
    return runner


@pytest.fixture()
def toy(monkeypatch):
    return install_toy(monkeypatch)


def test_bad_config_is_refused_at_plan_time_naming_the_path(toy):
    for table, match in (({"config": {"attack": {"stepz": 2}}}, r"\[methods.toy\].config: unknown key 'attack.stepz'"),
                         ({"config": {"n": 0}}, r"\[methods.toy\].config: n"),
                         ({"preset": "papr"}, "preset must be one of"),
                         ({"model": 3}, r"\[methods.toy\]: model")):
        with pytest.raises(ConfigError, match=match):
            run_mod.plan({"methods": {"toy": table}})


def test_identity_hashes_the_resolved_config_not_execution_fields(toy):
    (a,) = run_mod.plan({"methods": {"toy": {}}})
    (b,) = run_mod.plan({"methods": {"toy": {"config": {"n": 20}}}})  # the preset's value, written out
    (c,) = run_mod.plan({"methods": {"toy": {"config": {"shards": 3}}}})
    (d,) = run_mod.plan({"methods": {"toy": {"preset": "paper"}}})
    assert a.id == b.id == c.id != d.id
    assert a.identity["params"]["config"]["attack"] == {"eps": 0.1, "steps": 3}


def test_run_gives_a_section_with_intervals_records_figures_and_resumes_from_the_store(toy, tmp_path):
    cfg = {"seed": 4, "log_samples": True, "methods": {"toy": {"config": {"n": 12}}}}
    report = run_mod.execute(cfg, tmp_path, progress=False)
    assert report["units"][0]["status"] == "done", report["units"][0]["error"]
    sec = report["sections"]["toy"]
    acc = sec["metrics"]["accuracy"]
    assert acc["interval"]["low"] <= acc["value"] <= acc["interval"]["high"] and acc["label"] == "clean accuracy"
    assert sec["metrics"]["seed"]["value"] == 4  # the unit's seed reaches the config
    assert sec["tables"][0]["name"] == "t" and sec["figures"][0]["name"] == "acc"
    assert sec["samples"] and (tmp_path / sec["samples"][0]).is_file()
    assert CALLS == ["forward"]
    # the unit's record is gone but its store is not: the rerun reads the checkpoint, no forward pass
    for p in (tmp_path / "units").glob("*.json"):
        p.unlink()
    again = run_mod.execute(cfg, tmp_path, progress=False)
    assert CALLS == ["forward"] and again["sections"]["toy"]["metrics"] == sec["metrics"]


def test_schema_lists_inputs_presets_and_documented_fields(toy):
    import jsonschema

    from robustsuite import runners

    sch = runners.get("toy").schema()
    jsonschema.Draft202012Validator.check_schema(sch)
    jsonschema.validate({"model": "builtin:x", "preset": "paper", "config": {"attack": {"eps": 0.5}}}, sch)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"config": {"attack": {"eps": 2.0}}}, sch)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"modle": "builtin:x"}, sch)
    s = runners.get("toy").rows()
    assert s["presets"] == ["demo", "paper"]
    rows = {r["path"]: r for r in s["config"]}
    assert rows["attack.eps"]["bounds"] == "> 0, <= 1" and rows["attack.eps"]["unit"] == "L∞"
    assert [r["path"] for r in s["inputs"]] == ["model", "dataset"]
    assert torch.is_tensor(torch.zeros(1))


def test_methods_schema_shows_a_declarative_runners_inputs_presets_and_documented_fields(toy):
    from typer.testing import CliRunner

    from robustsuite.cli import app

    res = CliRunner().invoke(app, ["methods", "--schema"])
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if "config.attack.eps" in line)
    assert "L∞" in row and "> 0, <= 1" in row and "budget" in row and "0.1" in row
    assert any("preset" in line and "demo, paper" in line for line in res.output.splitlines())
    assert any("│ model " in line and "model spec" in line for line in res.output.splitlines())


def test_a_seed_independent_experiment_is_planned_once_for_all_seeds(monkeypatch):
    install_toy(monkeypatch, SEEDED=False)
    (unit,) = run_mod.plan({"seeds": 3, "methods": {"toy": {}}})
    assert unit.deterministic and unit.identity["seed"] is None
    install_toy(monkeypatch)
    assert len(run_mod.plan({"seeds": 3, "methods": {"toy": {}}})) == 3
