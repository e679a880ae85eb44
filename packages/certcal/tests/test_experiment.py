"""certcal.experiment on the 8x8 digits at a reduced size (package only, no robustsuite): the demo preset's
protocol, its store (resume, shards), the result's tables, metrics, records, figures and round trip, and the
section-content checks that used to live in the umbrella's runner test."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import certcal
from certcal import experiment
from robustsuite_common.config import override, to_dict
from robustsuite_common.experiment import MemoryStore, Split
from robustsuite_common.testing import CountingModel

SMALL = {"test_samples": 30, "noise_training.epochs": 1, "certify.n0": 20, "certify.n": 100,
         "certify.batch_size": 512, "calibration.radii": [0.0, 0.25], "calibration.n_boot": 30, "acce.steps": 20,
         "ace.steps": 2, "act.train_samples": 64, "act.test_samples": 20, "act.methods": ["none", "smoothadv"],
         "act.batch_size": 32}
NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def small(**more) -> experiment.Config:
    return override(experiment.preset("demo"), {**SMALL, **more})


@pytest.fixture(scope="module")
def inputs(digits, noisy_model, plain_model):
    xtr, ytr, xte, yte = digits
    data = experiment.Data(train=Split(xtr, ytr, label_names=NAMES),
                           test=Split(xte, yte, ids=tuple(f"row-{1000 + i}" for i in range(len(yte))),
                                      label_names=NAMES))
    # sigma 0.25 has its noise model; sigma 0.5 is fine-tuned from the base model inside the run
    return experiment.Models(base=plain_model, noise={0.25: noisy_model}), data


@pytest.fixture(scope="module")
def result(inputs):
    models, data = inputs
    store = MemoryStore()
    return experiment.run(models, data, small(), store=store, progress=False), store


def test_presets_demo_is_the_former_runner_defaults_and_paper_cpu_meets_issue_26():
    demo = experiment.preset("demo")
    # the umbrella runner's DEFAULTS before the redesign, key by key
    former = {"smoothing.sigmas": (0.25, 0.5), "noise_training.epochs": 6, "noise_training.batch_size": 64,
              "noise_training.lr": 1e-3, "certify.n0": 50, "certify.n": 400, "certify.alpha": 0.001,
              "certify.batch_size": 450, "test_samples": 150, "calibration.radii": (0.0, 0.125, 0.25, 0.375, 0.5),
              "calibration.bound": "cdf", "calibration.n_bins": 15, "calibration.n_boot": 200, "acce.steps": 500,
              "acce.grid": False, "ace.eps_linf": 0.1, "ace.eps_l2": 0.5, "ace.steps": 10, "act.enabled": True,
              "act.methods": ("none", "smoothadv", "acce_act"), "act.sigma": 0.25, "act.eps": 0.5,
              "act.epochs": 1, "act.train_samples": 256, "act.test_samples": 100, "act.admm_lr_a": 1e-3,
              "act.batch_size": 128, "act.num_noise": 2, "act.attack_steps": 2, "act.attack_step_factor": 1.0,
              "act.lr": 2e-4, "act.lr_grid": (), "act.selection_margin": 0.03, "act.warmup_epochs": 1,
              "act.seeds": (), "certify.noise_stream": "batch", "certify.shards": 1, "act.start": "noise",
              "act.optimizer": "adam", "act.step_factor_grid": (), "act.paired": False}
    for dotted, want in former.items():
        value = demo
        for part in dotted.split("."):
            value = getattr(value, part)
        assert value == want, dotted
    cpu = experiment.preset("paper-cpu").act
    assert cpu.start == "smoothadv" and cpu.train_samples >= 5000 and cpu.selection_margin == 0.03
    assert cpu.methods[:2] == ("none", "smoothadv") and "acce_act" in cpu.methods  # AT and ACCE-ACT: Table 7's effect
    # issue 35: App. I.3's optimiser, batch and epochs, a 4-point grid, 500 test images, paired intervals
    assert (cpu.optimizer, cpu.momentum, cpu.batch_size, cpu.epochs, cpu.warmup_epochs) == ("sgd", 0.9, 256, 10, 3)
    assert len(cpu.lr_grid) * len(cpu.step_factor_grid) == 4 and cpu.test_samples == 500 and cpu.paired
    assert experiment.preset("paper-cpu").certify.n >= 10_000 and experiment.preset("paper").certify.n == 100_000
    with pytest.raises(ValueError, match=r"preset must be one of \['audit', 'demo', 'paper', 'paper-cpu'\]"):
        experiment.preset("papr")


def test_result_tables_metrics_and_records(result, inputs):
    res, _ = result
    models, data = inputs
    assert set(res.tables) == {"headline", "certified", "fixed_set", "bounds", "ace", "calibration", "act",
                               "act_weights", "act_paper", "paper_effects"}
    # the headline (drawn first in a report): the base model's ECE clean against each beta-ACE attack's
    head, ace = res.tables["headline"].records(), res.tables["ace"].records()
    assert [(h["clean"], h["attacked"]) for h in head] == [(r["clean ECE"], r["attacked ECE"]) for r in ace]
    for key, m in res.metrics.items():
        assert m.label and isinstance(m.label, str), key  # readable labels everywhere
    assert res.metrics["sigma_0p25_r_0p25_cce_exact"].unit == "fraction"
    # the per-sample records carry the user's ids and label names
    rows = res.records["certificates-sigma0p25"]
    assert [r["id"] for r in rows] == [f"row-{1000 + i}" for i in range(30)]
    y = data.test.y[:30].numpy()
    assert [r["label"] for r in rows] == [NAMES[v] for v in y]
    assert all(r["prediction"] in NAMES + ("abstain",) for r in rows)
    assert len(res.records["ace"]) == 8 * 30 and {r["attack"] for r in res.records["ace"]} == set(
        certcal.ACE_CONFIGURATIONS)
    assert len(res.records["act"]) == 2 * 20 and {r["method"] for r in res.records["act"]} == {"none", "smoothadv"}
    assert res.summary.startswith("σ=0.25") and "ACT: the draw budget certifies at most r = " in res.summary
    # round trip
    again = experiment.Result.from_dict(res.to_dict())
    assert again.to_dict() == res.to_dict() and isinstance(again, experiment.Result)


def test_paper_effects_are_the_results_own_numbers_with_the_rules_verdicts(result):
    from certcal.experiment.effects import effects_spec, measure_effects
    from robustsuite_common.effects import recheck_paper_effects

    res, _ = result
    table = res.tables["paper_effects"]
    assert len(table.rows) >= 3
    assert recheck_paper_effects(table, effects_spec(), measure_effects(res.metrics)) == []
    rec = {e.key: r for e, r in zip(effects_spec(), table.records(), strict=True)}
    # β-ACE: the strongest L∞ configuration's paired increase (the ace table's largest)
    ace = [r for r in res.tables["ace"].records() if r["norm"] == "linf"]
    assert 100 * rec["beta_ace_raises_ece"]["measured"] == pytest.approx(max(r["ECE increase"] for r in ace), abs=0.01)
    assert table.column("verdict").count("not tested") <= 1
    assert type(res).from_dict(res.to_dict()).tables["paper_effects"] == table


def test_records_reproduce_the_certified_metrics(result):
    """Moved from the umbrella's runner test: the per-sample rows recompute CA, CBS (Theorem 3.3 written out) and
    the exact CCE of every sigma and radius."""
    res, _ = result
    for sigma in (0.25, 0.5):
        s = f"{sigma:g}".replace(".", "p")
        rows = res.records[f"certificates-sigma{s}"]
        pred = np.array([r["prediction_index"] for r in rows])
        lab = np.array([r["label_index"] for r in rows])
        rad = np.array([r["certified_radius"] for r in rows])
        for radius in (0.0, 0.25):
            t = f"sigma_{s}_r_{f'{radius:g}'.replace('.', 'p')}"
            certified = (pred >= 0) & (rad >= radius)
            assert np.mean(certified & (pred == lab)) == pytest.approx(res.value(f"{t}_certified_accuracy"))
            key = f"lower_r{f'{radius:g}'.replace('.', 'p')}"
            assert [r[key] is not None for r in rows] == list(certified)
            if not certified.any():
                assert res.value(f"{t}_cbs") is None
                continue
            lo = np.array([r[key] for r in rows if r[key] is not None])
            hi = np.array([r[key.replace("lower", "upper")] for r in rows if r[key] is not None])
            c = (pred == lab)[certified].astype(float)
            assert np.mean(c * (1 - lo) ** 2 + (1 - c) * hi ** 2) == pytest.approx(res.value(f"{t}_cbs"), abs=1e-12)
            assert certcal.certified_calibration_error(lo, hi, c, n_bins=15).value == pytest.approx(
                res.value(f"{t}_cce_exact"), abs=1e-12)


def test_act_table_states_the_budget_and_labels_inconclusive_comparisons(result):
    res, _ = result
    act = res.table("act")
    ceiling = certcal.max_certifiable_radius(sigma=0.25, n=100, alpha=0.001)
    assert f"{ceiling:.3g}" in act.title and "|Δw|" in act.title
    assert res.value("act_max_certifiable_radius") == pytest.approx(ceiling)
    for row in act.records():
        assert row["certifiable"] == (row["radius"] <= ceiling)
        if row["method"].startswith("noise model"):
            assert row["CCE vs start"] == "baseline"
        else:
            assert row["CCE vs start"] in ("lower", "higher", "inconclusive") and row["why"]
            if row["CCE vs start"] == "inconclusive":
                assert any(w in row["why"] for w in ("overlap", "no selected model", "beyond", "missing"))
    weights = res.table("act_weights").records()
    assert [w["method"] for w in weights] == ["AT (SmoothAdv)"] and weights[0]["max |Δw|"] > 0
    assert weights[0]["mean |Δw|"] <= weights[0]["max |Δw|"]


def test_bounds_table_cdf_no_wider_than_standard(result):
    res, _ = result
    rows = res.table("bounds").records()
    assert rows and all(r["CDF / Standard"] <= 1.0 for r in rows)


def test_store_resumes_without_recomputing(inputs, result):
    """A second run on the same store recomputes nothing: the only forward passes are the input checks' probes
    (one per model; ACT probes its start model once more); a changed setting recomputes only what depends on it."""
    models, data = inputs
    res, store = result
    counted = experiment.Models(base=CountingModel(models.base), noise={0.25: CountingModel(models.noise[0.25])})
    store2 = MemoryStore()
    first = experiment.run(counted, data, small(), store=store2, progress=False)
    keys = set(store2.data)
    assert any(k.startswith("cert-sigma0p25") for k in keys) and any(k.startswith("ace-") for k in keys)
    assert any(k.startswith("noise-model-sigma0p5") for k in keys) and any(k.startswith("act-") for k in keys)
    counted.base.calls = counted.noise[0.25].calls = 0
    again = experiment.run(counted, data, small(), store=store2, progress=False)
    assert (counted.base.calls, counted.noise[0.25].calls) == (1, 2)
    assert again.to_dict() == first.to_dict()
    changed = experiment.run(counted, data, small(**{"ace.steps": 3}), store=store2, progress=False)
    assert set(store2.data) - keys and all(k.startswith("ace-") for k in set(store2.data) - keys)
    assert changed.tables["certified"] == first.tables["certified"]


def test_the_smoothadv_start_is_keyed_by_what_trains_it(inputs, monkeypatch):
    """ACT's SmoothAdv start model is checkpointed under the settings its training takes: another method list or
    grid reuses it, another learning rate trains it again."""
    import importlib
    from types import SimpleNamespace

    run_mod = importlib.import_module("certcal.experiment.run")  # the module (the package re-exports run())

    trained = []

    def fake_training(model, x, y, **kw):
        trained.append(kw)
        return SimpleNamespace(model=model)

    monkeypatch.setattr(run_mod, "adversarial_calibration_training", fake_training)
    models, data = inputs
    store = MemoryStore()

    def start(**more):
        cfg = small(**{"act.start": "smoothadv", "act.start_epochs": 1, **more})
        run_mod.act_start(run_mod.prepare(models, data, cfg, store, False), {})
        return sorted(k for k in store.data if k.startswith("act-start-"))

    first = start()
    assert len(first) == 1 and trained[0]["epochs"] == 1 and trained[0]["method"] == "smoothadv"
    assert start(**{"act.methods": ["none", "smoothadv", "acce_act"], "act.lr_grid": [1e-3, 1e-2]}) == first
    assert len(trained) == 1
    assert len(start(**{"act.lr": 1e-3})) == 2 and len(trained) == 2 and trained[1]["lr"] == 1e-3


def test_shards_run_apart_equal_one_run(inputs):
    models, data = inputs
    one = small(**{"certify.noise_stream": "per_input", "act.enabled": False, "smoothing.sigmas": [0.25]})
    three = override(one, {"certify.shards": 3})
    assert experiment.shard_count(three) == 3 and experiment.EXECUTION_FIELDS == ("certify.shards",)
    store = MemoryStore()
    for k in (2, 0, 1):
        experiment.run_shard(models, data, three, k, 3, store=store, progress=False)
    assert sorted(k.split(".shard-")[1] for k in store.data if ".shard-" in k) == [
        "0-of-3.npz", "1-of-3.npz", "2-of-3.npz"]
    merged = experiment.run(models, data, three, store=store, progress=False)
    whole = experiment.run(models, data, one, progress=False)
    assert merged.metrics == whole.metrics and merged.tables == whole.tables
    with pytest.raises(ValueError, match="shard 3 of 3"):
        experiment.run_shard(models, data, three, 3, 3, store=store)


def test_figures_are_drawn_from_the_result(result):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    res, _ = result
    figs = experiment.figures(experiment.Result.from_dict(res.to_dict()))
    assert [f.name for f in figs] == ["ace-ece", "cbs-cce-vs-radius", "reliability"]
    import matplotlib.pyplot as plt

    for f in figs:
        plt.close(f.figure)


def test_a_model_at_chance_is_flagged_first(digits):
    """A model that ignores its input (constant logits): clean accuracy at the majority-class share, so the
    result warns that its numbers carry no information, in the warnings, the metrics and the summary."""
    xtr, ytr, xte, yte = digits

    class Constant(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = torch.nn.Parameter(torch.linspace(1.0, 0.0, 10))

        def forward(self, x):
            return self.bias.expand(x.shape[0], 10) + 0 * x.flatten(1)[:, :1]

    m = Constant()
    data = experiment.Data(train=Split(xtr, ytr), test=Split(xte, yte))
    res = experiment.run(experiment.Models(base=m, noise={0.25: m}), data,
                         small(**{"act.enabled": False, "smoothing.sigmas": [0.25]}), progress=False)
    assert res.model_at_chance and res.value("sigma_0p25_at_chance") is True
    assert res.warnings and "chance" in res.warnings[0] and res.summary.startswith("Warning:")


def test_config_rules():
    from robustsuite_common.config import ConfigError, from_dict

    for bad, match in (({"certify": {"shards": 2}}, "needs noise_stream = 'per_input'"),
                       ({"smoothing": {"sigmas": [0.25, 0.25]}}, "sigmas must not repeat"),
                       ({"smoothing": {"sigmas": [0.0]}}, "sigmas values must be > 0"),
                       ({"calibration": {"radii": [-1.0]}}, "radii values must be >= 0"),
                       ({"act": {"start": "smoothadv"}}, "start_epochs >= 1"),
                       ({"act": {"methods": ["none", "sgd"]}}, "act.methods"),
                       ({"ace": {"eps_linf": 2.0}}, "ace.eps_linf"),
                       ({"act_epochs": 3}, "unknown key 'act_epochs'")):
        with pytest.raises(ConfigError, match=match):
            from_dict(experiment.Config, bad)
    assert to_dict(from_dict(experiment.Config, {})) == to_dict(experiment.preset("demo"))


def test_act_paired_differences_reach_the_table_metrics_and_paper_effects(inputs):
    """act.paired: each ACT variant's CCE difference against AT with its paired interval, as a table, a metric
    and the acce_act_lowers_cce effect's interval; ACT may certify more test images than the σ sweep."""
    from certcal.experiment.effects import effects_spec, measure_effects

    models, data = inputs
    cfg = small(**{"act.paired": True, "act.methods": ["none", "smoothadv", "acce_act"], "act.test_samples": 40,
                   "act.step_factor_grid": [1.0, 2.0], "act.optimizer": "sgd", "act.lr": 1e-2,
                   "calibration.radii": [0.0, 0.5]})
    res = experiment.run(models, data, cfg, store=None, progress=False)
    paired = res.tables["act_paired"].records()
    assert [(r["method"], r["baseline"], r["radius"]) for r in paired] == [("ACCE-ACT", "AT (SmoothAdv)", 0.0),
                                                                          ("ACCE-ACT", "AT (SmoothAdv)", 0.5)]
    zero = res.metrics["act_acce_act_minus_smoothadv_r_0_cce_diff"]
    assert zero.interval is not None and zero.interval.low <= zero.value <= zero.interval.high
    assert paired[0]["CCE difference"] == pytest.approx(100 * zero.value, abs=0.01)
    m = res.metrics["act_acce_act_minus_smoothadv_r_0p5_cce_diff"]
    assert paired[1]["CCE difference"] == (None if m.value is None else pytest.approx(100 * m.value, abs=0.01))
    effect = measure_effects(res.metrics)["acce_act_lowers_cce"]
    if m.interval is not None:  # the effect reads the paired interval, not two unpaired ones
        assert effect == pytest.approx((m.value, m.interval.low, m.interval.high))
    rec = {e.key: r for e, r in zip(effects_spec(), res.tables["paper_effects"].records(), strict=True)}
    assert rec["acce_act_lowers_cce"]["verdict"] in ("reproduced", "direction only", "not reproduced", "not tested")
    # 1 start + 2 methods x 2 (lr) x 2 (step factor) points, each certifying the first 40 test images
    act = res.records["act"]
    assert len(act) == (1 + 2 * 1 * 2) * 40
    y = data.test.y[:40].numpy()
    assert all(r["label"] == NAMES[y[int(r["input"][5:-1])]] for r in act)
    assert {r["attack_step_factor"] for r in act if r["method"] != "none"} == {1.0, 2.0}


def test_the_old_config_key_act_epsilon_reads_as_act_eps_with_a_warning():
    """Issue 34: ``act.epsilon`` is ``act.eps``; a TOML or ``--set`` with the old key still works one release."""
    with pytest.warns(DeprecationWarning, match="'epsilon' is deprecated; use 'eps'"):
        cfg = override(experiment.preset("demo"), {"act.epsilon": 0.25})
    assert cfg.act.eps == 0.25 and cfg == override(experiment.preset("demo"), {"act.eps": 0.25})
