"""certcal.overview (package only, no robustsuite): its numbers against independent computations (scipy's
Clopper-Pearson interval, the plug-in ECE by brute force), the at-chance flag, AutoAttack in checkpointed batches
(a stand-in attack), the result's records, figure and round trip, and every argument checked before any work."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from certcal import overview
from robustsuite_common.config import config_hash, override
from robustsuite_common.experiment import MemoryStore, Split
from robustsuite_common.testing import CountingModel

NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
SMALL = {"n_boot": 200}


def cfg(**more) -> overview.Config:
    return override(overview.preset("demo"), {**SMALL, "indicators": False, **more})


@pytest.fixture(scope="module")
def data(digits):
    _, _, xte, yte = digits
    return overview.Data(Split(xte, yte, ids=tuple(f"row-{i}" for i in range(len(yte))), label_names=NAMES),
                         name="digits")


class Constant(torch.nn.Module):
    """Always answers class 0 (a model at chance)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], 10) + torch.arange(10, 0, -1.0) * (1 + self.w)


class FakeAttack:
    """Stands in for standard AutoAttack: records each call, marks every third image robust."""

    def __init__(self) -> None:
        self.calls: list = []

    def __call__(self, model, x, y, *, eps, version, seed, batch_size, norm="Linf", attacks=None):
        from robustsuite_common.autoattack import AutoAttackResult

        self.calls.append((len(x), eps, version, seed))
        robust = torch.arange(len(x)) % 3 == 0
        k = int(robust.sum())
        return AutoAttackResult(x, robust, torch.ones(len(x), dtype=torch.bool),
                                f"fake {version}, Linf eps={eps:g}, seed {seed}",
                                {"clean": len(x), "apgd-ce": k, "square": k}, (), robust)


@pytest.fixture
def fake_attack(monkeypatch):
    import robustsuite_common.autoattack as aa

    fake = FakeAttack()
    monkeypatch.setattr(aa, "autoattack", fake)
    monkeypatch.setattr(aa, "autoattack_version", lambda: "fake 0")
    return fake


def test_demo_preset_is_the_former_umbrella_parameters():
    demo = overview.preset("demo")
    assert (demo.split, demo.n_bins, demo.n_boot, demo.resample_seed, demo.robust_accuracy, demo.eps,
            demo.autoattack_n, demo.autoattack_batch, demo.autoattack_version) == (
        "test", 15, 1000, 0, "auto", 0.0, 100, 100, "standard")  # 100 AutoAttack images since issue 37 (demo-full: 200)
    assert overview.preset("paper").autoattack_n == 0 and set(overview.PRESETS) == {"demo", "paper", "paper-cpu"}
    assert overview.preset("paper-cpu") == demo  # the paper-cpu benchmark runs the demo's settings
    with pytest.raises(ValueError, match="preset must be one of"):
        overview.preset("nope")


def test_numbers_match_an_independent_computation(plain_model, data):
    res = overview.run(overview.Models(plain_model, name="tiny"), data, cfg(), progress=False)
    with torch.no_grad():
        p = torch.softmax(plain_model(data.split.x).double(), dim=1).numpy()
    y = data.split.y.numpy()
    conf, correct = p.max(1), p.argmax(1) == y
    n, k = len(y), int(correct.sum())
    acc = res.metric("accuracy")
    assert acc.value == pytest.approx(k / n)
    cp = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert acc.ci == pytest.approx((cp.low, cp.high))
    # plug-in ECE by brute force: 15 equal-width bins (lo, hi], |accuracy - confidence| weighted by the bin's mass
    ece = 0.0
    for b in range(15):
        lo, hi = b / 15, (b + 1) / 15
        inside = (conf > lo) & (conf <= hi) if b else (conf <= hi)
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    assert res.value("ece") == pytest.approx(ece, abs=1e-12)
    assert res.value("brier") == pytest.approx(np.mean((conf - correct) ** 2))
    assert res.value("chance_rate") == pytest.approx(np.bincount(y).max() / n)
    assert res.value("mean_confidence_wrong") == pytest.approx(conf[~correct].mean())
    assert res.value("num_samples") == n and res.value("num_classes") == 10
    iv = res.metric("ece_debiased").interval
    assert iv.low <= iv.estimate <= iv.high and res.value("calibration_p_value") > 0
    assert res.model_at_chance is False and not res.warnings
    assert "robust_accuracy_autoattack" not in res.metrics and list(res.tables) == ["dataset"]
    assert res.tables["dataset"].rows == (("test", n),)
    row = res.records["samples"][5]
    assert row == {"id": "row-5", "input": "test[5]", "label": NAMES[y[5]], "prediction": NAMES[p[5].argmax()],
                   "confidence": pytest.approx(conf[5]), "correct": bool(correct[5]), "robust": None}
    assert res.summary.startswith(f"Clean accuracy {k / n:.2%}")


def test_a_constant_model_is_flagged_at_chance(data, fake_attack):
    res = overview.run(overview.Models(Constant(), name="const"), data, cfg(robust_accuracy="always", eps=0.1,
                                                                            autoattack_n=0), progress=False)
    assert res.model_at_chance and res.value("model_at_chance") is True
    assert "contains the chance rate" in res.warnings[0] and res.summary.startswith("The model is at chance")
    assert "carries no information at chance" in res.summary  # the attack number is not presented as a finding


def test_autoattack_runs_in_resumable_batches_at_the_models_training_eps(plain_model, data, fake_attack):
    store = MemoryStore()
    models = overview.Models(plain_model, name="tiny-at", adversarial_eps=0.1)
    config = cfg(autoattack_n=25, autoattack_batch=10, resample_seed=3)
    res = overview.run(models, data, config, store=store, progress=False)
    assert fake_attack.calls == [(10, 0.1, "standard", 3), (10, 0.1, "standard", 3), (5, 0.1, "standard", 3)]
    # the umbrella runner's checkpoint keys, so its run directories resume
    assert set(store.data) == {f"autoattack-v2-{config_hash(0.1, 'standard', 3, a, b, 'Linf', None)}" for a, b in
                               ((0, 10), (10, 20), (20, 25))}
    rob = res.metric("robust_accuracy_autoattack")
    assert rob.value == pytest.approx((4 + 4 + 2) / 25) and rob.interval.method == "Clopper-Pearson"
    assert "standard AutoAttack, L∞ ε = 0.1" in rob.label and "first 25" in rob.label
    assert list(res.tables) == ["headline", "dataset"]
    assert res.tables["headline"].rows[0][0] == "standard AutoAttack, L∞ ε = 0.1"
    flags = [r["robust"] for r in res.records["samples"]]
    assert flags[:4] == [True, False, False, True] and set(flags[25:]) == {None}
    again = overview.run(models, data, config, store=store, progress=False)
    assert len(fake_attack.calls) == 3 and again.metrics == res.metrics
    never = overview.run(models, data, cfg(robust_accuracy="never"), progress=False)
    assert "robust_accuracy_autoattack" not in never.metrics and len(fake_attack.calls) == 3
    assert "robust accuracy not asked for (robust_accuracy = 'never')." in never.notes
    plain = overview.run(overview.Models(plain_model, name="tiny"), data, cfg(), progress=False)
    assert "robust_accuracy_autoattack" not in plain.metrics and len(fake_attack.calls) == 3  # auto: not AT


def test_missing_autoattack_is_a_warning_not_a_failure(plain_model, data, monkeypatch):
    import robustsuite_common.autoattack as aa

    def missing():
        raise ImportError("AutoAttack needs pyautoattack: pip install 'robustsuite-common[autoattack]'")

    monkeypatch.setattr(aa, "autoattack_version", missing)
    monkeypatch.setattr(aa, "autoattack", FakeAttack())
    res = overview.run(overview.Models(plain_model, adversarial_eps=0.1), data, cfg(), progress=False)
    assert "robust_accuracy_autoattack" not in res.metrics and "headline" not in res.tables
    assert "not computed" in res.warnings[0] and "pip install 'robustsuite-common[autoattack]'" in res.warnings[0]


def test_a_text_classifier_is_described_but_not_attacked(fake_attack):
    texts = ["good", "bad", "fine", "awful"] * 5

    def classifier(batch: list[str]) -> np.ndarray:
        return np.array([[2.0, 0.0] if t in ("good", "fine") else [0.0, 1.0] for t in batch])

    data = overview.Data(Split(texts, np.array([0, 1, 0, 1] * 5)), name="reviews", sizes={"train": 0, "test": 20},
                         source="made up")
    res = overview.run(overview.Models(classifier, name="rules", adversarial_eps=0.1), data, cfg(), progress=False)
    assert res.value("accuracy") == 1.0 and not fake_attack.calls
    assert any("not a vision model" in note for note in res.notes) and res.value("data_source") == "made up"
    assert res.records["samples"][1]["input"] == "bad" and res.records["samples"][1]["label"] == 1
    assert res.tables["dataset"].rows == (("train", 0), ("test", 20))


def test_result_round_trip_and_figure(plain_model, data):
    res = overview.run(overview.Models(plain_model, name="tiny model"), data, cfg(), progress=False)
    again = overview.Result.from_dict(res.to_dict())
    assert again == res and again.title == "tiny model on digits"
    (fig,) = overview.figures(res)
    assert fig.name.startswith("confidence-tiny-model-") and fig.name.endswith("-digits")
    assert "tiny model on the digits test split" in fig.caption
    import matplotlib.pyplot as plt

    plt.close(fig.figure)


def test_arguments_are_checked_before_any_work(plain_model, data):
    counting = CountingModel(plain_model)
    models = overview.Models(counting)
    with pytest.raises(TypeError, match="config"):
        overview.run(models, data, {"n_bins": 15})
    with pytest.raises(TypeError, match="models"):
        overview.run(plain_model, data, cfg())
    with pytest.raises(TypeError, match="data"):
        overview.run(models, data.split, cfg())
    with pytest.raises(ValueError, match=r"robust_accuracy = 'always' needs config.eps > 0"):
        overview.run(models, data, cfg(robust_accuracy="always"))
    with pytest.raises(ValueError, match="data.split.x is empty"):
        overview.run(models, overview.Data(data.split.head(0)), cfg())
    with pytest.raises(TypeError, match=r"data.split.x must be a torch.Tensor"):
        overview.run(models, overview.Data(Split(["a", "b"], [0, 1])), cfg())
    with pytest.raises(TypeError, match=r"data.split.y must hold integer"):
        overview.run(models, overview.Data(Split(data.split.x, data.split.y.float())), cfg())
    assert counting.calls == 0
    with pytest.raises(TypeError, match="models.model"):
        overview.Models("not a model")
    with pytest.raises(ValueError, match="models.adversarial_eps"):
        overview.Models(plain_model, adversarial_eps=0.0)
    with pytest.raises(TypeError, match="data.split"):
        overview.Data((data.split.x, data.split.y))
    with pytest.raises(TypeError, match="data.sizes"):
        overview.Data(data.split, sizes={"test": -1})


class ThreeClasses(torch.nn.Module):
    """A tiny 3-class linear model on 8x8 digits (AutoAttack's targeted attacks need 4 classes)."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(64, 3, generator=g))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1) @ self.w


@pytest.mark.slow
def test_fewer_than_four_classes_get_autoattacks_untargeted_attacks_and_the_indicators(data):
    model = ThreeClasses()
    split = data.split
    keep = np.flatnonzero(np.asarray(split.y) < 3)[:12]
    three = overview.Data(Split(split.x[keep], np.asarray(split.y)[keep]), name="digits-012")
    res = overview.run(overview.Models(model, name="tiny3"), three,
                       cfg(eps=0.05, robust_accuracy="always", indicators=True, indicator_iterations=3),
                       progress=False)
    assert "apgd-ce" in res.metric("robust_accuracy_autoattack").note and "square" in \
        res.metric("robust_accuracy_autoattack").note and "apgd-t" not in res.metric("robust_accuracy_autoattack").note
    assert any("targeted attacks need 4" in w for w in res.warnings)
    ids = {c.id: c for c in res.checks}
    assert ids["standard-budget"].status == "warn" and "custom" in ids["standard-budget"].detail
    assert {"pgd-vs-autoattack", "epsilon-monotone", "unbounded-attack", "square-beats-white-box"} <= set(ids)
    assert "epsilon_sweep" in res.tables and res.checks == overview.Result.from_dict(res.to_dict()).checks
