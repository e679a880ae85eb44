"""The iortemp runner is an adapter: the umbrella's unit gives exactly the section ``iortemp.experiment.run``
gives on the same model, data and config (what the section shows is tested in packages/iortemp/tests), and its
``inputs()`` refuses data of the wrong kind."""

from __future__ import annotations

import json

import pytest

from robustsuite import run as run_mod
from robustsuite.errors import ConfigError
from robustsuite.loaders import load_dataset, load_model
from robustsuite.runners import RunContext, available
from robustsuite_common.config import from_dict

SMALL = {"text": {"n_test": 6, "n_val": 6, "attacks": {"names": ["wordswap"], "seeds": [0, 1]}},
         "systems": {"search": {"attack": "wordswap", "max_evaluations": 2}},
         "sweep": {"attack": "wordswap", "temperatures": [1e-3, 1.0]},
         "vision": {"n": 16, "steps": 2, "seeds": [0], "autoattack": {"enabled": False}}}  # AutoAttack: package tests
SPECS = {"model": "builtin:text-tiny", "dataset": "builtin:sentiment-mini", "vision_model": "builtin:digits-cnn",
         "vision_dataset": "builtin:digits"}


@pytest.mark.slow  # two runs of the experiment (~40 s of CPU)
def test_unit_section_equals_the_package_experiment(tmp_path):
    from iortemp import experiment

    report = run_mod.execute({"seed": 3, "log_samples": "jsonl", "methods": {"iortemp": {**SPECS, "config": SMALL}}},
                             tmp_path, progress=False)
    unit = report["units"][0]
    assert unit["status"] == "done", unit.get("error")
    sec = report["sections"]["iortemp"]

    ds, vds = load_dataset(SPECS["dataset"]), load_dataset(SPECS["vision_dataset"])
    models = experiment.Models(text=load_model(SPECS["model"]), vision=load_model(SPECS["vision_model"]))
    data = experiment.Data.from_datasets(text=ds, vision=vds)  # the package names the labels itself
    cfg = from_dict(experiment.Config, {**SMALL, "seed": 3}, base=experiment.preset("demo"))
    res = experiment.run(models, data, cfg, progress=False)

    assert [t["name"] for t in sec["tables"]] == list(res.tables)
    for got, want in zip(sec["tables"], res.tables.values(), strict=True):
        assert got["columns"] == list(want.columns) and got["rows"] == [list(r) for r in want.rows], want.name
    # report schema 2.0: each metric with its value and interval
    assert {k: v["value"] for k, v in sec["metrics"].items()} == {k: m.value for k, m in res.metrics.items()}
    for k, m in res.metrics.items():
        if m.interval is not None:
            assert (sec["metrics"][k]["interval"]["low"], sec["metrics"][k]["interval"]["high"]) == m.interval.ci, k
    assert sec["summary"] == res.summary
    assert [f["name"] for f in sec["figures"]] == ["accuracy-bars", "qt-sweep", "vision-pgd-autoattack"]
    text_file = next(p for p in sec["samples"] if p.endswith("--text.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / text_file).read_text(encoding="utf-8").splitlines()]
    assert rows == json.loads(json.dumps(res.records["text"]))  # ids, texts, label names as the package gives them


def test_inputs_refuse_a_dataset_of_the_wrong_kind(tmp_path):
    runner = available()["iortemp"]
    ctx = RunContext(run_dir=tmp_path, method="iortemp")
    specs = runner.module.Inputs(dataset="builtin:digits")
    with pytest.raises(ConfigError, match="dataset must be a text dataset"):
        runner.module.inputs(ctx, specs, None)
    specs = runner.module.Inputs(model="builtin:text-tiny", dataset="builtin:sentiment-mini",
                                 vision_dataset="builtin:sentiment-mini")
    with pytest.raises(ConfigError, match="vision_dataset must hold images"):
        runner.module.inputs(ctx, specs, None)
    no_vision = runner.module.Inputs(model="builtin:text-tiny", dataset="builtin:sentiment-mini", vision_model="")
    models, data = runner.module.inputs(ctx, no_vision, None)
    assert models.vision is None and data.vision_test is None and data.test.label_names is not None


def test_bad_config_is_refused_at_plan_time():
    for table, match in (({"config": {"text": {"n_test": 0}}}, r"text.n_test"),
                         ({"config": {"sweep": {"attack": "bae"}}}, "sweep.attack must be one of"),
                         ({"config": {"systems": {"design_temperatures": {"up_conf": 0}}}}, "up_conf"),
                         ({"config": {"vision": {"eps": 2.0}}}, "vision.eps"),
                         ({"preset": "papr"}, "preset must be one of")):
        with pytest.raises(ConfigError, match=match):
            run_mod.plan({"methods": {"iortemp": table}})
