"""The transduct_attack unit is ``transduct_attack.experiment.run`` on the resolved inputs: the umbrella's section
equals the experiment's result on the same models, data and config (same numbers), and bad config is refused at
planning time."""

from __future__ import annotations

import pytest

from robustsuite import run as run_mod
from robustsuite.errors import ConfigError

SMALL = {"tables": ["rmc", "dann", "tadv", "dent", "rmc_seeds", "urejectron"], "attack": {"pgd_steps": 2},
         "robustness": {"autoattack": False},
         "rmc": {"points": 4, "batch_size": 2, "k": 8, "max_epochs": 1, "train_points": 100, "aug_steps": 2, "T": 1,
                 "seeds": [0, 1]},
         "dann": {"points": 12, "train_points": 100, "epochs": 1, "T": 1},
         "tadv": {"points": 12, "train_points": 100, "epochs": 1, "adv_steps": 1, "T": 1},
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
    for key, m in direct.metrics.items():
        assert section["metrics"][key] == m.value
        if m.interval is not None:
            assert (section["metrics"][f"{key}_ci_low"], section["metrics"][f"{key}_ci_high"]) == m.interval.ci
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
