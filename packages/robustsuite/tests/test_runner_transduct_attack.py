"""The transduct_attack unit is ``transduct_attack.experiment.run`` on the resolved inputs: the umbrella's section
equals the experiment's result on the same models, data and config (same numbers), and bad config is refused at
planning time."""

from __future__ import annotations

import pytest

from robustsuite import run as run_mod
from robustsuite.errors import ConfigError

SMALL = {"tables": ["rmc", "dent", "urejectron"], "attack": {"pgd_steps": 2}, "robustness": {"autoattack": False},
         "rmc": {"points": 3, "k": 8, "max_epochs": 1, "train_points": 100, "aug_steps": 1, "T": 0,
                 "calibration_k": 8},
         "dent": {"points": 8, "batch_size": 4, "train_points": 100, "base_epochs": 1, "base_adv_steps": 1, "T": 0,
                  "aa": False},
         "urejectron": {"points": 12, "train_points": 100, "epochs": 1, "T": 1, "thresholds": [0.3, 0.5, 0.7]}}
INPUTS = {"model": "builtin:digits-cnn", "at_model": "builtin:digits-cnn-at", "dataset": "builtin:digits"}


def test_section_equals_the_experiment_on_the_same_inputs(tmp_path):
    from robustsuite.loaders import load_dataset, load_model
    from robustsuite_common.config import from_dict
    from transduct_attack import experiment

    cfg = {"seed": 3, "log_samples": "jsonl", "methods": {"transduct_attack": {**INPUTS, "config": SMALL}}}
    report = run_mod.execute(cfg, tmp_path, progress=False)
    unit = report["units"][0]
    assert unit["status"] == "done", unit.get("error")
    section = report["sections"]["transduct_attack"]

    ds = load_dataset(INPUTS["dataset"])
    models = experiment.Models(standard=load_model(INPUTS["model"]), adversarial=load_model(INPUTS["at_model"]))
    conf = from_dict(experiment.Config, {**SMALL, "seed": 3}, base=experiment.preset("demo"))
    direct = experiment.run(models, experiment.Data(train=ds.train, test=ds.test, name=INPUTS["dataset"]), conf,
                            progress=False)
    assert section["summary"] == direct.summary
    assert [t["name"] for t in section["tables"]] == list(direct.tables)
    for t in section["tables"]:
        assert [list(r) for r in direct.tables[t["name"]].rows] == t["rows"], t["name"]
    for key, m in direct.metrics.items():  # report schema 2.0: each metric with its interval
        got = section["metrics"][key]
        assert got["value"] == m.value
        if m.interval is not None:
            assert (got["interval"]["low"], got["interval"]["high"]) == m.interval.ci
    # inputs(): the unit's records carry the dataset's class names and the figures are drawn
    assert {f["name"] for f in section["figures"]} == {"robustness", "urejectron_threshold"}
    assert section["samples"] and all((tmp_path / p).is_file() for p in section["samples"])


def test_bad_config_is_refused_at_plan_time():
    for overrides, match in (({"rmc": {"lr": -1.0}}, r"rmc.lr"), ({"tables": ["table9"]}, r"tables"),
                             ({"threat": {"eps": 1.5}}, r"threat.eps"), ({"rmc": {"pointz": 3}}, "points")):
        with pytest.raises(ConfigError, match=match):
            run_mod.plan({"methods": {"transduct_attack": {"config": overrides}}})
    for name in ("demo",):
        run_mod.plan({"methods": {"transduct_attack": {"preset": name}}})


def test_the_shipped_adversarially_trained_base_is_robust_well_above_chance_at_the_demos_budget():
    """Issue 26 item 1 on shipped weights: the demo plays every defense at L∞ 0.1, the budget builtin:fashion-cnn-at
    was trained for, where its white-box PGD robust accuracy interval lies far above chance (and the standard
    base's far below it)."""
    import transduct_attack as ta
    from robustsuite.loaders import load_dataset, load_model
    from robustsuite_common.experiment import chance_rate
    from transduct_attack import experiment

    demo = experiment.preset("demo")
    assert demo.threat.eps == demo.threat.at_eps == demo.threat.at_model_eps == 0.1
    ds = load_dataset("builtin:fashion-mnist")
    x, y = ds.test.x[:200], ds.test.y[:200]
    at = ta.robust_accuracy(load_model("builtin:fashion-cnn-at"), x, y, eps=0.1, attack="pgd", pgd_steps=10)
    std = ta.robust_accuracy(load_model("builtin:fashion-cnn"), x, y, eps=0.1, attack="pgd", pgd_steps=10)
    assert at.interval().low > 2 * chance_rate(y), (at.accuracy, at.interval())
    assert std.interval().high < at.interval().low
