"""The uncspan runner is a declarative adapter: the umbrella's unit gives exactly the section that
``uncspan.experiment.run`` gives on the same models, data and config; its ``inputs()`` maps the specs (typed compare
entries with their declared adversarial training, Table V's datasets) and refuses what uncspan cannot use."""

import pytest
import torch

from robustsuite import run as run_mod
from robustsuite.errors import ConfigError
from robustsuite.loaders import load_dataset, load_model
from robustsuite.runners import RunContext
from robustsuite.runners import uncspan as runner
from robustsuite_common.config import from_dict
from robustsuite_common.experiment import Split
from uncspan import experiment

DIGITS = {"model": "builtin:digits-cnn", "model_adversarially_trained": False, "dataset": "builtin:digits",
          "compare": [{"spec": "builtin:digits-cnn-at", "adversarially_trained": True}],
          "osr_models": ["builtin:digits-osr-cnn"], "osr_dataset": "builtin:digits-osr"}
# robust accuracy by PGD here: AutoAttack's seeding and its equality with pyautoattack are the package's tests
# (standard AutoAttack on these 24 points costs about 40 s of CPU per run)
SMALL = {"attack": {"steps": 3, "restarts": 0}, "leaderboard": {"n": 24, "pgd_steps": 3, "robust_attack": "pgd"},
         "metrics": {"n_boot": 200, "auroc_n_boot": 200}, "sweep": {"eps": [0.0, 0.1], "n": 12, "steps": 2},
         "ood": {"eps": [0.0, 0.1], "n_in": 20, "n_outliers": 16}}


def _named(split, ds):
    return Split(split.x, split.y, split.ids, tuple(ds.classes))


def test_the_unit_gives_the_section_of_the_package_experiment(tmp_path):
    cfg = {"seed": 3, "log_samples": True, "methods": {"uncspan": {**DIGITS, "config": SMALL}}}
    report = run_mod.execute(cfg, tmp_path, progress=False)
    unit = report["units"][0]
    assert unit["status"] == "done", unit.get("error")
    sec = report["sections"]["uncspan"]

    ds, osr = load_dataset("builtin:digits"), load_dataset("builtin:digits-osr")
    models = experiment.Models(
        ranked={"builtin:digits-cnn": load_model("builtin:digits-cnn"),
                "builtin:digits-cnn-at": load_model("builtin:digits-cnn-at")},
        adversarially_trained={"builtin:digits-cnn": False, "builtin:digits-cnn-at": True,
                               "builtin:digits-osr-cnn": False},
        osr={"builtin:digits-osr-cnn": load_model("builtin:digits-osr-cnn")})
    data = experiment.Data(test=_named(ds.test, ds), osr=_named(osr.test, osr),
                           open_set=_named(osr.extras["open_set"], osr), ood=osr.extras["ood"])
    config = from_dict(experiment.Config, {**SMALL, "seed": 3}, base=experiment.preset("demo"))
    res = experiment.run(models, data, config, progress=False)

    assert [t["name"] for t in sec["tables"]] == list(res.tables) == ["span", "headline", "signed_ece", "eps_sweep", "ood_osr",
                                                                          "paper_effects"]
    for t in sec["tables"]:
        assert [tuple(r) for r in t["rows"]] == list(res.tables[t["name"]].rows), t["name"]
    for key, m in res.metrics.items():  # report schema 2.0: each metric with its interval
        got = sec["metrics"][key]
        assert got["value"] == m.value, key
        if m.interval is not None:
            assert (got["interval"]["low"], got["interval"]["high"]) == m.interval.ci, key
    assert sec["summary"] == res.summary
    assert sec["warnings"] == list(res.warnings) and sec["notes"] == list(res.notes)
    # the section names the attack of its robust-accuracy column; per-sample records and figures come through
    span = dict(zip(sec["tables"][0]["columns"], sec["tables"][0]["rows"][0], strict=True))
    assert span["robust_attack"].startswith("PGD (pgd, 3 steps") and span["pgd_robust_acc"] is None
    assert {s.rsplit("--", 1)[-1].split(".")[0] for s in sec["samples"]} == set(res.records)
    assert [f["name"] for f in sec["figures"]] == ["entropy-distributions", "reliability", "eps-sweep"]


def test_inputs_map_the_specs_and_refuse_what_uncspan_cannot_use(tmp_path):
    ctx = RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    params = {**DIGITS, "compare": ["builtin:digits-cnn-at", {"spec": "builtin:digits-cnn", "adversarially_trained":
                                                               None}],
              "ood_dataset": "builtin:digits", "config": {"ood": {"open_set_classes": [6, 7]}}}
    from robustsuite.runners import get

    adapter = get("uncspan")
    specs, cfg = adapter.resolve(params)
    models, data = runner.inputs(ctx, specs, cfg)
    # a compare entry without a declaration is ranked but left out of the AT comparison; an explicit None on the
    # main model's spec keeps the main model's declaration
    assert list(models.ranked) == ["builtin:digits-cnn", "builtin:digits-cnn-at"]
    # a shipped Table V model given as a bare spec is declared by its build recipe (digits-osr-cnn: eps 0)
    assert models.adversarially_trained == {"builtin:digits-cnn": False, "builtin:digits-osr-cnn": False}
    # open_set_classes: the open set is split from the OSR test split by the experiment, not taken from extras;
    # another dataset's test split is the OOD set
    assert data.open_set is None and torch.equal(data.ood.x, load_dataset("builtin:digits").test.x)
    assert data.test.label_names == tuple(str(d) for d in range(10))
    declared = {**DIGITS, "osr_models": [{"spec": "builtin:digits-osr-cnn", "adversarially_trained": None},
                                         "builtin:fashion-osr-cnn-at", "extras:osr"]}
    assert [runner.osr_declared(e) for e in adapter.resolve(declared)[0].osr_models] == [
        ("builtin:digits-osr-cnn", None), ("builtin:fashion-osr-cnn-at", True), ("extras:osr", None)]
    with pytest.raises(ConfigError, match=r"compare"):
        adapter.resolve({"compare": [{"spec": "builtin:digits-cnn-at", "adversarially_trained": "yes"}]})
    with pytest.raises(ConfigError, match=r"config: leaderboard.robust_attack"):
        adapter.resolve({"config": {"leaderboard": {"robust_attack": "fgsm"}}})
    text = adapter.resolve({**DIGITS, "dataset": "builtin:sentiment-mini"})
    with pytest.raises(ValueError, match="vision dataset for dataset"):
        runner.inputs(ctx, *text)
