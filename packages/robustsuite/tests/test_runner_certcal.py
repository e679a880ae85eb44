"""The certcal runner is declarative: the umbrella's unit gives exactly the section that ``certcal.experiment.run``
gives on the same models, data and config; its ``inputs()`` maps noise models onto the config's sigmas."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from robustsuite import run as run_mod
from robustsuite.errors import ConfigError
from robustsuite.runners import RunContext, get

LIMIT = 40
SMALL = {"test_samples": 12, "certify": {"n0": 20, "n": 80, "batch_size": 256},
         "calibration": {"radii": [0.0, 0.25], "n_boot": 20}, "acce": {"steps": 20}, "ace": {"steps": 2},
         "act": {"train_samples": 24, "test_samples": 10, "methods": ["none", "smoothadv"]}}


def test_unit_section_equals_the_package_experiment_on_the_same_inputs(tmp_path):
    """The demo's specs (shipped Fashion-MNIST models and data, cut to LIMIT), small sizes, seed 3: every metric,
    table, note and per-sample record of the unit's section is what certcal.experiment.run returns directly."""
    from certcal import experiment
    from robustsuite.loaders import load_dataset, load_model
    from robustsuite.report.section import section_from_result
    from robustsuite_common.config import from_dict

    cfg = {"seed": 3, "limit": LIMIT, "log_samples": "jsonl", "methods": {"certcal": {"config": SMALL}}}
    report = run_mod.execute(cfg, tmp_path / "run", progress=False)
    (unit,) = report["units"]
    assert unit["status"] == "done", unit.get("error")
    sec = report["sections"]["certcal"]

    runner = get("certcal")
    specs = runner.module.Inputs()
    config = from_dict(experiment.Config, {**SMALL, "seed": 3}, base=experiment.preset("demo"))
    ds = load_dataset(specs.dataset)
    models = experiment.Models(base=load_model(specs.model), noise={
        s: load_model(m) for s, m in zip(config.smoothing.sigmas, specs.noise_models, strict=True)})
    data = experiment.Data(train=replace(ds.train.head(LIMIT), label_names=ds.classes),
                           test=replace(ds.test.head(LIMIT), label_names=ds.classes))
    direct = experiment.run(models, data, config, progress=False)
    ctx = RunContext(run_dir=tmp_path / "direct", method="certcal", log_format="jsonl")
    want = json.loads(json.dumps(section_from_result(ctx, direct).to_dict(), default=str))

    assert sec["metrics"] == want["metrics"]
    assert [(t["name"], t["rows"]) for t in sec["tables"]] == [(t["name"], t["rows"]) for t in want["tables"]]
    assert sec["summary"] == want["summary"] and sec["notes"] == want["notes"]
    assert {"certified", "fixed_set", "bounds", "ace", "calibration", "act", "act_weights"} <= {
        t["name"] for t in sec["tables"]}
    # per-sample records: one file per part, rows with the user's ids and label names
    files = {p.split("--")[-1].split(".")[0]: tmp_path / "run" / p for p in sec["samples"]}
    assert set(files) == {"certificates-sigma0p25", "certificates-sigma0p5", "ace", "act"}
    rows = [json.loads(line) for line in files["certificates-sigma0p25"].read_text().splitlines()]
    assert rows == direct.records["certificates-sigma0p25"]
    assert [r["id"] for r in rows] == [data.test.id_of(i) for i in range(12)]
    assert [r["label"] for r in rows] == [ds.classes[int(v)] for v in ds.test.y[:12]]  # the class names


def test_inputs_map_noise_models_onto_sigmas_and_refuse_a_count_mismatch(tmp_path):
    from certcal import experiment
    from robustsuite_common.config import override

    runner = get("certcal")
    ctx = RunContext(run_dir=tmp_path, method="certcal")
    specs = runner.module.Inputs(model="builtin:digits-cnn", dataset="builtin:digits",
                                 noise_models=("builtin:digits-cnn", "builtin:digits-cnn-at"))
    cfg = experiment.preset("demo")
    models, data = runner.module.inputs(ctx, specs, cfg)
    assert models.noise == {0.25: ctx.model("builtin:digits-cnn"), 0.5: ctx.model("builtin:digits-cnn-at")}
    assert models.base is ctx.model("builtin:digits-cnn") and len(data.test) == len(ctx.dataset("builtin:digits").test)
    none, _ = runner.module.inputs(ctx, runner.module.Inputs(model="builtin:digits-cnn", dataset="builtin:digits",
                                                              noise_models=()), cfg)
    assert none.noise == {}  # every sigma is fine-tuned from the base model
    with pytest.raises(ConfigError, match=r"noise_models must list one model per sigma .* \(1: \[0.25\]\), got 2"):
        runner.module.inputs(ctx, specs, override(cfg, {"smoothing.sigmas": [0.25]}))


def test_config_is_checked_at_plan_time():
    for table, match in (({"config": {"certify": {"n": 0}}}, r"\[methods.certcal\].config: certify.n"),
                         ({"config": {"act_epochs": 3}}, r"unknown key 'act_epochs'"),
                         ({"config": {"calibration": {"radii": [-0.1]}}}, "radii values must be >= 0"),
                         ({"config": {"certify": {"shards": 2}}}, "needs noise_stream = 'per_input'"),
                         ({"preset": "papr"}, "preset must be one of")):
        with pytest.raises(ConfigError, match=match):
            run_mod.plan({"methods": {"certcal": table}})


def test_title_is_the_package_experiments():
    import certcal.experiment
    from robustsuite.runners import certcal as runner

    assert runner.TITLE == certcal.experiment.TITLE
