"""The overview section (``certcal.overview`` through its declarative runner): numbers against independent
computations, the debiased ECE and calibration test (issue 24 item 1), the at-chance flag (item 5), and robust accuracy
by standard AutoAttack for the models the shipped registry marks adversarially trained (issue 27 items 1 and 3)."""

import numpy as np
import pytest
import torch

from robustsuite import load_dataset, load_model, predict_logits, runners
from robustsuite.report import check_report, top_warnings
from robustsuite.runners import RunContext, overview


def _run(tmp_path, model, dataset="builtin:digits", seed=0, limit=None, ctx=None, **config):
    ctx = ctx or RunContext(run_dir=tmp_path, method="overview", seed=seed, unit_id="u", log_format="jsonl",
                            limit=limit)
    params = {"model": model, "dataset": dataset, "config": {"n_boot": 200, **config}}
    return ctx, runners.get("overview").run(ctx, params)


def _check(sec):
    d = sec.to_dict() | {"deterministic": True}
    return check_report({"warnings": top_warnings({"s": d}), "sections": {"s": d}})


def test_overview_numbers_match_an_independent_computation(tmp_path):
    ctx, sec = _run(tmp_path, "builtin:digits-cnn")
    ds = load_dataset("builtin:digits")
    logits = predict_logits(load_model("builtin:digits-cnn"), ds.test.x)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    conf, correct = p.max(1), p.argmax(1) == ds.test.y.numpy()
    m = {k: v.value for k, v in sec.metrics.items()}
    assert m["accuracy"] == pytest.approx(correct.mean())
    assert m["brier"] == pytest.approx(np.mean((conf - correct) ** 2))
    # plug-in ECE by hand: 15 equal-width bins on (0, 1], |accuracy - confidence| weighted by bin mass
    idx = np.clip(np.ceil(conf * 15).astype(int) - 1, 0, 14)
    ece = sum(abs(correct[idx == b].mean() - conf[idx == b].mean()) * (idx == b).mean() for b in range(15) if (idx == b).any())
    assert m["ece"] == pytest.approx(ece, abs=1e-9)
    assert m["chance_rate"] == pytest.approx(np.bincount(ds.test.y.numpy()).max() / len(ds.test.y))
    assert m["model_at_chance"] is False and not sec.warnings and not sec.model_at_chance
    assert "robust_accuracy_autoattack" not in m  # not adversarially trained: no attack
    assert _check(sec) == []
    assert (tmp_path / sec.figures[0].path).is_file()
    from robustsuite.report.samples import read_samples

    rows = read_samples(tmp_path / ctx.samples[0])

    def name(v):  # the user's label name; the class index itself when the data names none
        return ds.test.name_of(int(v)) if ds.test.label_names is not None else int(v)

    assert rows[0] == {"id": ds.test.id_of(0), "input": "test[0]", "label": name(ds.test.y[0]),
                       "prediction": name(p[0].argmax()), "confidence": pytest.approx(conf[0]),
                       "correct": bool(correct[0]), "robust": None}
    assert np.mean([r["correct"] for r in rows]) == pytest.approx(m["accuracy"])


def test_overview_does_not_depend_on_the_run_seed(tmp_path):
    assert runners.get("overview").SEEDED is False
    a = _run(tmp_path / "a", "builtin:digits-cnn", seed=0)[1].to_dict()
    b = _run(tmp_path / "b", "builtin:digits-cnn", seed=7)[1].to_dict()
    assert a["metrics"] == b["metrics"] and a["summary"] == b["summary"]


def test_debiased_ece_interval_contains_its_estimate_where_the_percentile_interval_did_not(tmp_path):
    """Issue 24 item 1: the shipped CNN's plug-in ECE lay below its own percentile-bootstrap interval
    (0.88 % [0.93, 2.37] on the shipped test subset). The section's intervals pass the whole-report check."""
    _, sec = _run(tmp_path, "builtin:fashion-cnn", "builtin:fashion-mnist", limit=2000, robust_accuracy="never")
    iv = sec.metrics["ece_debiased"].interval
    assert iv.low <= iv.estimate <= iv.high and _check(sec) == []
    assert "interval" not in sec.metrics["ece"].to_dict()  # the biased plug-in is not given an interval
    assert "Fashion-MNIST" in sec.metrics["data_source"].value  # and the section says which data it used
    assert any(note.startswith("Data: ") for note in sec.notes)


class _Constant(torch.nn.Module):
    """Always answers class 0 (a model at chance)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return torch.zeros(x.shape[0], 10) + torch.arange(10, 0, -1.0) * (1 + self.w)


def test_model_at_chance_is_flagged_and_warned_about(tmp_path, monkeypatch):
    import robustsuite_common.autoattack as aa

    monkeypatch.setattr(aa, "autoattack", _FakeAttack())
    ctx = RunContext(run_dir=tmp_path, method="overview", unit_id="u")
    ctx._cache["model::const"] = _Constant()
    _, sec = _run(tmp_path, "const", ctx=ctx, robust_accuracy="always", eps=0.1, autoattack_n=0, indicators=False)
    assert sec.model_at_chance and sec.metrics["model_at_chance"].value is True
    assert "contains the chance rate" in sec.warnings[0] and sec.summary.startswith("The model is at chance")
    assert "carries no information at chance" in sec.summary  # the attack number is not presented as a finding
    assert _check(sec) == []


class _FakeAttack:
    """Stands in for standard AutoAttack: records each call, marks every third image robust."""

    def __init__(self):
        self.calls = []

    def __call__(self, model, x, y, *, eps, version, seed, batch_size, norm="Linf", attacks=None):
        from robustsuite_common.autoattack import AutoAttackResult

        self.calls.append((len(x), eps, version, seed))
        clean = torch.ones(len(x), dtype=torch.bool)
        robust = torch.arange(len(x)) % 3 == 0
        k = int(robust.sum())
        return AutoAttackResult(x, robust, clean, f"fake {version}, Linf eps={eps:g}, seed {seed}",
                                {"clean": len(x), "apgd-ce": k, "square": k}, (), robust)


def test_adversarially_trained_model_gets_autoattack_in_resumable_batches(tmp_path, monkeypatch):
    import robustsuite_common.autoattack as aa

    fake = _FakeAttack()
    monkeypatch.setattr(aa, "autoattack", fake)
    assert overview.training_eps("builtin:fashion-cnn-at") == 0.1
    assert overview.training_eps("builtin:fashion-cnn") is None and overview.training_eps("torch:x.pt") is None
    assert overview.training_eps("builtin:digits-cnn-at") == 0.1  # the shipped digits AT model: its recipe's ε
    params = {"autoattack_n": 25, "autoattack_batch": 10, "resample_seed": 3, "indicators": False}  # ε: the registry's
    _, sec = _run(tmp_path, "builtin:digits-cnn-at", **params)
    assert fake.calls == [(10, 0.1, "standard", 3), (10, 0.1, "standard", 3), (5, 0.1, "standard", 3)]
    rob = sec.metrics["robust_accuracy_autoattack"]
    assert rob.value == pytest.approx((4 + 4 + 2) / 25) and rob.interval.method == "Clopper-Pearson"
    assert "standard AutoAttack" in rob.label and "ε = 0.1" in rob.label and "first 25" in rob.label
    head = sec.tables[0]
    assert head.name == "headline" and head.rows[0][0] == "standard AutoAttack, L∞ ε = 0.1"
    assert _check(sec) == []
    _, again = _run(tmp_path, "builtin:digits-cnn-at", **params)  # same work directory: read from the store
    assert len(fake.calls) == 3 and again.metrics["robust_accuracy_autoattack"] == rob
    _, never = _run(tmp_path / "n", "builtin:digits-cnn-at", eps=0.1, robust_accuracy="never")
    assert "robust_accuracy_autoattack" not in never.metrics and len(fake.calls) == 3


def test_missing_autoattack_is_a_warning_not_a_failed_unit(tmp_path, monkeypatch):
    import robustsuite_common.autoattack as aa

    def missing():
        raise ImportError("AutoAttack needs pyautoattack: pip install 'robustsuite-common[autoattack]'")

    monkeypatch.setattr(aa, "autoattack_version", missing)
    monkeypatch.setattr(aa, "autoattack", _FakeAttack())
    _, sec = _run(tmp_path, "builtin:digits-cnn-at", eps=0.1)
    assert "robust_accuracy_autoattack" not in sec.metrics and not sec.tables[0].name == "headline"
    assert "not computed" in sec.warnings[0] and "pip install 'robustsuite-common[autoattack]'" in sec.warnings[0]


def test_robust_accuracy_refuses_models_it_cannot_attack(tmp_path):
    from robustsuite import ConfigError
    from robustsuite import run as run_mod

    with pytest.raises(ConfigError, match=r"eps > 0 for 'builtin:digits-cnn'"):  # at planning time
        run_mod.plan({"methods": {"overview": {"model": "builtin:digits-cnn", "dataset": "builtin:digits",
                                               "config": {"robust_accuracy": "always"}}}})
    assert run_mod.plan({"methods": {"overview": {"config": {"robust_accuracy": "always"},
                                                  "models": ["builtin:fashion-cnn-at"],
                                                  "dataset": "builtin:fashion-mnist"}}})
    with pytest.raises(ValueError, match="eps > 0"):
        _run(tmp_path, "builtin:digits-cnn", robust_accuracy="always")


@pytest.mark.slow
def test_overview_robust_accuracy_is_standard_autoattack_with_the_same_seed(tmp_path):
    """Issue 27 acceptance: on the shipped-style AT model and fixed points, the overview's robust accuracy equals
    pyautoattack's standard evaluation with the same seed (about a minute of CPU)."""
    from robustsuite_common.autoattack import autoattack

    _, sec = _run(tmp_path, "builtin:digits-cnn-at", eps=0.1, autoattack_n=12, autoattack_batch=12)
    ds = load_dataset("builtin:digits")
    ref = autoattack(load_model("builtin:digits-cnn-at"), ds.test.x[:12], ds.test.y[:12], eps=0.1, seed=0,
                     batch_size=12)
    assert sec.metrics["robust_accuracy_autoattack"].value == pytest.approx(float(ref.robust.float().mean()))
    assert sec.metrics["robust_accuracy_autoattack"].note == ref.attack


def test_overview_rejects_unknown_split(tmp_path):
    with pytest.raises(ValueError, match="split"):
        _run(tmp_path, "builtin:digits-cnn", split="dev")


def test_overview_demo_defaults_name_the_shipped_benchmarks():
    """The demo's overview runs on the shipped Fashion-MNIST / WordNet models (AutoAttack on the AT model)."""
    assert ["builtin:fashion-cnn", "builtin:fashion-mnist"] in runners.get("overview").DEFAULTS["targets"]
    assert ["builtin:fashion-cnn-at", "builtin:fashion-mnist"] in runners.get("overview").DEFAULTS["targets"]
    assert ["builtin:wordnet-roberta", "builtin:wordnet-topics"] in runners.get("overview").DEFAULTS["targets"]
    demo = runners.get("overview").resolve({})[1]
    assert demo.robust_accuracy == "auto" and demo.autoattack_version == "standard"


def test_title_is_the_packages():
    import certcal.overview

    assert overview.TITLE == certcal.overview.TITLE
