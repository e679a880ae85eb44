"""uncspan.experiment: the demo preset is the robustsuite demo's settings, ``run`` at reduced size gives a result whose
tables are recomputed from its own per-sample records (which carry the user's ids and label names), it resumes
from its store without attacking, flags a model at chance and a PGD number that overstates robustness, and shows
the paper's effects on the digits models."""

import json

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score, roc_auc_score
from torch import nn

import uncspan
from robustsuite_common.config import ConfigError, from_dict, override, to_dict
from robustsuite_common.experiment import Split
from robustsuite_common.intervals import mean_interval
from robustsuite_common.testing import run_demo_with
from uncspan import experiment
from uncspan._demo import digits_experiment, load_digits_split, train_digits_model
from uncspan.experiment import checkpointed
from uncspan.experiment.result import slug

# the robustsuite runner's DEFAULTS before the experiment moved into the package (the demo's settings)
OLD_DEFAULTS = {"n": 100, "eps": 0.1, "norm": "Linf", "steps": 20, "optimizer": "pgd", "restarts": 1,
                "under_objective": ["cross_entropy", "entropy"], "n_bins": 15, "sweep_eps": [0.0, 0.05, 0.1, 0.2],
                "sweep_n": 50, "sweep_steps": 10, "open_set_classes": [], "osr_eps": [0.0, 0.05, 0.1],
                "n_outliers": 100, "n_boot": 2000, "auroc_n_boot": 1000}
SMALL = {"leaderboard": {"n": 12, "pgd_steps": 3}, "attack": {"steps": 3},
         "metrics": {"n_boot": 200, "auroc_n_boot": 200}, "sweep": {"eps": [0.0, 0.1], "n": 10, "steps": 2},
         "ood": {"eps": [0.0, 0.1], "n_in": 16, "n_outliers": 12}}
NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def test_demo_preset_is_the_old_runner_defaults():
    c = to_dict(experiment.preset("demo"))
    a, lb, m, sw, o = c["attack"], c["leaderboard"], c["metrics"], c["sweep"], c["ood"]
    got = {"n": lb["n"], "eps": a["eps"], "norm": a["norm"], "steps": a["steps"], "optimizer": a["optimizer"],
           "restarts": a["restarts"], "under_objective": a["under_objective"], "n_bins": m["n_bins"],
           "sweep_eps": sw["eps"], "sweep_n": sw["n"], "sweep_steps": sw["steps"],
           "open_set_classes": o["open_set_classes"], "osr_eps": o["eps"], "n_outliers": o["n_outliers"],
           "n_boot": m["n_boot"], "auroc_n_boot": m["auroc_n_boot"]}
    assert got == OLD_DEFAULTS
    # Table V's in-distribution count and the PGD steps behind robust accuracy were the runner's n and steps
    assert o["n_in"] == OLD_DEFAULTS["n"] and lb["pgd_steps"] == OLD_DEFAULTS["steps"]
    assert lb["robust_attack"] == "autoattack" and lb["autoattack_version"] == "standard"


def test_paper_preset_is_section_v_a_and_bad_settings_are_refused():
    p = experiment.preset("paper")
    assert (p.leaderboard.n, p.attack.steps, p.attack.eps, p.attack.norm) == (8000, 150, 8 / 255, "Linf")
    assert p.attack.under_objective == ("cross_entropy",) and p.attack.restarts == 0 and p.attack.optimizer == "pgd"
    assert (p.ood.n_in, p.ood.n_outliers, p.ood.eps) == (8000, 800, (0.0, 4 / 255, 8 / 255))
    assert set(experiment.PRESETS) >= {"demo", "paper", "paper-cpu"}
    with pytest.raises(ValueError, match=r"preset must be one of \['audit', 'demo', 'paper', 'paper-cpu'\]"):
        experiment.preset("papr")
    for bad, where in (({"attack": {"eps": 2.0}}, "eps must be <= 1"), ({"attack": {"steps": -1}}, "attack.steps"),
                       ({"attack": {"under_objective": ["entropy", "entropy"]}}, "repeat"),
                       ({"leaderboard": {"robust_attack": "fgsm"}}, "leaderboard.robust_attack"),
                       ({"ood": {"eps": []}}, "ood.eps"), ({"metrics": {"n_boot": 10}}, "metrics.n_boot"),
                       ({"sweep": {"eps": [-0.1]}}, "budgets >= 0"), ({"attack": {"stepz": 3}}, "did you mean")):
        with pytest.raises(ConfigError, match=where):
            from_dict(experiment.Config, bad, base=experiment.preset("demo"))


@pytest.fixture(scope="module")
def inputs(std_model, at_model):
    """digits_experiment's data with the test suite's shared models (trained once per session) and its OSR model."""
    _, data = digits_experiment(epochs=0, seed=0)  # epochs=0: the data only, no training
    oxtr, oytr, _, _ = load_digits_split(0, classes=tuple(range(8)))
    # Table V: the undefended open-set model first, then the AT model (restricted to the known classes), both
    # declared, so the paper_effects rows must pick the AT one by its declaration
    models = experiment.Models({"digits-cnn": std_model, "digits-cnn-at": at_model},
                               {"digits-cnn": False, "digits-cnn-at": True, "digits-osr-cnn": False},
                               {"digits-osr-cnn": train_digits_model(oxtr, oytr, n_classes=8, epochs=8, seed=0),
                                "digits-cnn-at": at_model})
    ids = tuple(f"row-{i}" for i in range(len(data.test)))  # the user's own row ids and class names
    test = Split(data.test.x, data.test.y, ids, NAMES)
    return models, experiment.Data(test=test, osr=data.osr, open_set=data.open_set, ood=data.ood)


@pytest.fixture(scope="module")
def result(inputs):
    return run_demo_with(experiment, *inputs, SMALL)


def test_result_is_well_formed_and_round_trips(result):
    res, _, cfg = result
    assert list(res.tables) == ["span", "headline", "signed_ece", "eps_sweep", "ood_osr", "paper_effects"]
    # the headline (drawn first in a report): each model's clean against its robust accuracy, as in Table IV
    assert [(h["condition"], h["clean"], h["attacked"], h["attack"]) for h in res.tables["headline"].records()] == [
        (r["model"], r["clean_acc"], r["robust_acc"], r["robust_attack"]) for r in res.tables["span"].records()]
    assert res.config == to_dict(cfg) and res.title == experiment.TITLE
    back = experiment.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.to_dict() == res.to_dict() and isinstance(back, experiment.Result)
    for key, m in res.metrics.items():
        assert m.label, key  # every metric is labelled
    span = res.leaderboard()
    assert [r["rank"] for r in span] == [1, 2] and span[0]["mus_mean"] <= span[1]["mus_mean"]
    for r in span:  # robust accuracy is standard AutoAttack, named, with PGD beside it
        assert r["robust_attack"].startswith("AutoAttack standard (pyautoattack") and "seed 0" in r["robust_attack"]
        assert 0 <= r["robust_acc"] <= r["clean_acc"] <= 1 and r["pgd_robust_acc"] is not None
    assert res.metric("digits_cnn_robust_accuracy").interval is not None
    assert res.value("model_at_chance") is False and not any("at chance" in w for w in res.warnings)


def test_paper_effects_are_the_results_own_numbers_with_the_rules_verdicts(result):
    from robustsuite_common.effects import recheck_paper_effects
    from uncspan.experiment.effects import effects_spec, measure_effects

    res, _, _ = result
    table = res.tables["paper_effects"]
    assert len(table.rows) >= 3
    assert recheck_paper_effects(table, effects_spec(), measure_effects(res.metrics)) == []
    # the span and detection effects were all measured here (only an absent part may be "not tested")
    assert "not tested" not in table.column("verdict")
    # the Table V rows are the declared AT open-set model's numbers, the complete-break row the undefended one's
    rows = dict(zip([e.key for e in effects_spec()], table.records(), strict=True))
    change = res.metric("digits_cnn_at_open_set_auroc_change").interval
    assert (rows["osr_degrades"]["low"], rows["osr_degrades"]["high"]) == (change.low, change.high)
    assert rows["osr_undefended_breaks"]["measured"] == pytest.approx(
        res.value("digits_osr_cnn_open_set_auroc_max_eps") - 0.5, abs=1e-12)
    assert res.value("digits_cnn_at_osr_adversarially_trained") is True
    assert type(res).from_dict(res.to_dict()).tables["paper_effects"] == table


def test_records_carry_the_users_ids_and_names_and_recompute_the_tables(result, inputs):
    """Issue 24: every part's per-sample records carry the user's ids, an input reference and label names; Table IV,
    the widening metrics, s-ECE, the sweep and Table V are recomputed from the records alone."""
    res, _, cfg = result
    _, data = inputs
    n = cfg.leaderboard.n
    sece = {r["model"]: r for r in res.tables["signed_ece"].records()}
    for row in res.leaderboard():
        s = slug(row["model"])
        rec = res.records[f"span-{s}"]
        assert [r["id"] for r in rec] == [f"row-{i}" for i in range(n)] and rec[3]["input"] == "test[3]"
        assert [r["label"] for r in rec] == [NAMES[int(v)] for v in data.test.y[:n]]
        col = {k: np.array([r[k] for r in rec]) for k in rec[0]}
        assert (col["correct"] == (col["prediction"] == col["label"])).all()
        np.testing.assert_allclose(col["span"], col["under_entropy"] - col["over_entropy"], rtol=0, atol=1e-12)
        expect = {"clean_acc": col["correct"].mean(), "robust_acc": col["robust"].mean(),
                  "pgd_robust_acc": col["pgd_robust"].mean(), "mus_mean": col["span"].mean(),
                  "mus_std": col["span"].std(), "msus_mean": (col["span"] ** 2).mean(),
                  "entropy_clean": col["entropy"].mean(), "entropy_over": col["over_entropy"].mean(),
                  "entropy_under": col["under_entropy"].mean()}
        for k, v in expect.items():
            assert row[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
        assert (row["mus_mean_ci_low"], row["mus_mean_ci_high"]) == mean_interval(
            col["span"], seed=0, n_resamples=cfg.metrics.n_boot, bounds=(0.0, None)).ci
        assert res.value(f"{s}_under_widening") == pytest.approx((col["under_entropy"] - col["entropy"]).mean())
        assert res.value(f"{s}_over_widening") == pytest.approx((col["entropy"] - col["over_entropy"]).mean())
        for kind, p in (("clean", ""), ("over", "over_"), ("under", "under_")):
            got = uncspan.signed_ece(col[f"{p}confidence"], col[f"{p}correct"], n_bins=cfg.metrics.n_bins)
            assert sece[row["model"]][kind] == pytest.approx(got)
        assert (col["over_entropy"] <= col["entropy"] + 1e-9).all() and (col["under_entropy"] >= col["entropy"] - 1e-9).all()
        assert not (col["robust"] & ~col["correct"]).any()  # robust implies correct on the clean input
    for row in res.tables["eps_sweep"].records():
        rec = [r for r in res.records[f"sweep-{slug(row['model'])}"] if r["eps"] == row["eps"]]
        assert [r["id"] for r in rec] == [f"row-{i}" for i in range(cfg.sweep.n)]
        span = np.array([r["span"] for r in rec])
        assert row["mus_mean"] == pytest.approx(span.mean(), abs=1e-15)
        assert (row["mus_mean_ci_low"], row["mus_mean_ci_high"]) == mean_interval(
            span, seed=0, n_resamples=cfg.metrics.n_boot, bounds=(0.0, None)).ci
        if row["eps"] == 0:
            assert (span == 0).all()
    for row in res.tables["ood_osr"].records():
        rec = [r for r in res.records[f"ood-{slug(row['model'])}-{row['outliers']}"] if r["eps"] == row["eps"]]
        out = np.array([r["outlier"] for r in rec])
        h = np.array([r["entropy"] for r in rec])
        assert (~out).sum() == cfg.ood.n_in and out.sum() == cfg.ood.n_outliers
        assert row["auroc"] == pytest.approx(roc_auc_score(out, h), abs=1e-12)
        assert row["aupr_out"] == pytest.approx(average_precision_score(out, h), abs=1e-12)
        assert (row["auroc_ci_low"], row["auroc_ci_high"]) == uncspan.auroc_ci(
            h[~out], h[out], seed=0, n_boot=cfg.metrics.auroc_n_boot).ci
        labels = {r["label"] for r in rec if r["outlier"]}
        assert labels <= {"8", "9"} if row["outliers"] == "open_set" else labels == {None}
        assert {r["input"].split("[")[0] for r in rec} == {"osr", row["outliers"]}


def test_resume_reads_the_store_and_execution_fields_do_not_change_keys(result, inputs, monkeypatch):
    res, store, cfg = result
    models, data = inputs
    n_keys = len(store)
    for name in ("uncertainty_span", "robust_accuracy", "ood_under_attack"):
        monkeypatch.setattr(checkpointed, name, None)  # any attack now fails
    again = experiment.run(models, data, override(cfg, {"attack.batch_size": 5}), store=store, progress=False)
    assert again.tables == res.tables and again.metrics == res.metrics and again.records == res.records
    assert len(store) == n_keys
    # a setting that changes what is computed misses the store: the first piece recomputed is Table IV's first span

    def recomputed(*args, **kwargs):
        raise RuntimeError("span recomputed")

    monkeypatch.setattr(checkpointed, "uncertainty_span", recomputed)
    with pytest.raises(RuntimeError, match="span recomputed"):
        experiment.run(models, data, override(cfg, {"attack.steps": 4}), store=store, progress=False)


def test_models_are_given_back_untouched_and_bad_inputs_refused_before_work(inputs):
    from robustsuite_common.testing import CountingModel, snapshot

    models, data = inputs
    m = models.ranked["digits-cnn"].train()
    before = snapshot(m)
    counted = CountingModel(m)
    cfg = from_dict(experiment.Config, {**SMALL, "leaderboard": {"n": 4, "robust_attack": "pgd", "pgd_steps": 1},
                                        "sweep": {"eps": []}}, base=experiment.preset("demo"))
    experiment.run(experiment.Models({"m": counted}), experiment.Data(test=data.test), cfg, progress=False)
    before.assert_same(m)
    assert m.training
    m.eval()
    calls = counted.calls
    bad_y = Split(data.test.x, torch.full((len(data.test),), 10))
    for models_, data_, match in (
            (experiment.Models({"m": counted}), experiment.Data(test=bad_y), r"data.test.y must be class indices < "),
            (experiment.Models({"m": "model"}), experiment.Data(test=data.test), r"models.ranked\['m'\]"),
            (experiment.Models({"m": counted}, {"x": True}), experiment.Data(test=data.test), "adversarially_trained"),
            (experiment.Models({"m": counted}), experiment.Data(test=Split(data.test.x * 255, data.test.y)),
             r"data.test.x must lie in \[0.0, 1.0\]"),
            (experiment.Models({"m": counted}), {"test": data.test}, "data must be")):
        with pytest.raises((ValueError, TypeError), match=match):
            experiment.run(models_, data_, cfg, progress=False)
    assert counted.calls <= calls + 1  # at most the one forward pass that tells the model's number of classes
    with pytest.raises(TypeError, match="config must be"):
        experiment.run(models, data, {"seed": 0})


class _Constant(nn.Module):
    """Always answers class 0 with the same logits: at chance, entropy identical for every input."""

    def __init__(self, k: int = 10) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))
        self.k = k

    def forward(self, x):
        z = torch.zeros(x.shape[0], self.k) + self.w
        z[:, 0] += 3.0  # logits, not probabilities (rows must not sum to 1)
        return z + 0 * x.flatten(1)[:, :1]


def test_a_model_at_chance_is_flagged_first(inputs):
    """Issue 24: a model whose clean accuracy interval reaches the majority share, and an outlier detector whose clean
    AUROC interval contains 0.5, get ``model_at_chance`` and a warning; the summary says so first."""
    _, data = inputs
    cfg = from_dict(experiment.Config, {**SMALL, "leaderboard": {"n": 30, "robust_attack": "pgd", "pgd_steps": 1},
                                        "sweep": {"eps": []}}, base=experiment.preset("demo"))
    res = experiment.run(experiment.Models({"constant": _Constant()}, osr={"constant-osr": _Constant(8)}),
                         data, cfg, progress=False)
    assert res.value("model_at_chance") is True and res.value("constant_at_chance") is True
    assert any("constant is at chance" in w for w in res.warnings)
    assert res.value("constant_osr_ood_auroc_at_chance") is True
    assert any("does not separate ood outliers" in w for w in res.warnings)
    assert res.summary.startswith("A model is at chance")


def test_a_pgd_number_that_overstates_robustness_is_flagged(inputs, monkeypatch):
    """Issue 27 item 3: when PGD leaves clearly more points robust than AutoAttack on the same points (the paired
    difference's interval above 0), the result says so with both numbers; not when they agree."""
    models, data = inputs
    n = 40
    y = data.test.y[:n].numpy()

    def fake(model, x, y_, eps, *, attack, **kw):
        robust = np.ones(n, bool) if attack == "pgd" else np.arange(n) % 4 == 0
        return uncspan.RobustOutcome("pgd" if attack == "pgd" else "autoattack", str(attack), robust, y, np.ones(n))

    monkeypatch.setattr(checkpointed, "robust_accuracy", fake)
    cfg = from_dict(experiment.Config, {**SMALL, "leaderboard": {"n": n}, "sweep": {"eps": []}},
                    base=experiment.preset("demo"))
    one = experiment.Models({"digits-cnn": models.ranked["digits-cnn"]})
    res = experiment.run(one, experiment.Data(test=data.test), cfg, progress=False)
    (w,) = [w for w in res.warnings if w.startswith("PGD leaves clearly more points robust")]
    assert "1.000 under PGD" in w and "0.250 under AutoAttack" in w
    gap = res.metric("digits_cnn_pgd_minus_autoattack")
    assert gap.value == pytest.approx(0.75) and gap.interval.low > 0
    monkeypatch.setattr(checkpointed, "robust_accuracy", lambda *a, attack, **k: fake(*a, attack="pgd", **k))
    # a model the paper evaluated (by its RobustBench spec) gets the paper's Table IV row beside ours
    spec = "robustbench:cifar10/Linf/Peng2023Robust"
    same = experiment.run(experiment.Models({spec: models.ranked["digits-cnn"]}), experiment.Data(test=data.test),
                          cfg, progress=False)
    assert not any(w.startswith("PGD leaves") for w in same.warnings)
    (ref,) = same.tables["paper_reference"].records()
    assert (ref["model"], ref["paper_id"], ref["paper_mus_mean"], ref["robustbench_rank"]) == (spec, "C11", 0.368, 1)
    assert ref["mus_mean"] == same.row(spec)["mus_mean"]


def test_the_papers_effects_on_the_digits_models(inputs):
    """On the digits models (PGD robust accuracy to keep it cheap): both attacks move the entropy, adversarial
    training shrinks the span (paired MUS difference below 0) and open-set detection falls under attack."""
    models, data = inputs
    cfg = from_dict(experiment.Config, {"leaderboard": {"n": 80, "robust_attack": "pgd", "pgd_steps": 8},
                                        "attack": {"steps": 8, "restarts": 0}, "metrics": {"n_boot": 300,
                                                                                            "auroc_n_boot": 300},
                                        "sweep": {"eps": []}, "ood": {"eps": [0.0, 0.1], "n_in": 60,
                                                                      "n_outliers": 60}},
                    base=experiment.preset("demo"))
    res = experiment.run(models, data, cfg, progress=False)
    for s in ("digits_cnn", "digits_cnn_at"):
        assert res.metric(f"{s}_under_widening").interval.low > 0
        assert res.metric(f"{s}_over_widening").interval.low > 0
    assert res.metric("mus_diff_digits_cnn_at_minus_digits_cnn").interval.high < 0
    assert res.value("adv_trained_smaller_mus") is True
    assert res.value("digits_osr_cnn_open_set_auroc_falls") is True
    assert res.leaderboard()[0]["model"] == "digits-cnn-at"


def test_figures_are_drawn_from_the_result_alone(result):
    res, _, _ = result
    back = experiment.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    figs = experiment.figures(back)
    assert [f.name for f in figs] == ["entropy-distributions", "reliability", "eps-sweep"]
    assert len(figs[0].figure.axes) == 4 and len(figs[1].figure.axes) == 4


def test_paper_values_are_data_beside_the_experiment():
    ref = experiment.paper_values()
    with pytest.warns(DeprecationWarning, match="paper_values"):
        assert experiment.paper_reference() == ref
    rows = ref["table_iv"]["rows"]
    assert len(rows) == 23 and ref["setup"]["points"] == 8000 and ref["setup"]["steps"] == 150
    c11 = experiment.paper_row("robustbench:cifar10/Linf/Peng2023Robust")
    assert (c11["id"], c11["mus_mean"], c11["robustbench_rank"], c11["sece_clean"]) == ("C11", 0.368, 1, 0.27)
    assert experiment.paper_row("robustbench:imagenet/Linf/Engstrom2019Robustness")["id"] == "I1"
    assert experiment.paper_row("builtin:fashion-cnn") is None
    cifar = [r for r in rows if r["dataset"] == "cifar10"]
    assert [r["mus_mean"] for r in cifar][3:] == sorted(r["mus_mean"] for r in cifar)[3:]  # as printed (MUS order)
    assert len(ref["table_v"]["rows"]) == 36


def test_data_named_fills_missing_label_names_only():
    x, y = torch.zeros(4, 1, 8, 8), torch.tensor([0, 1, 2, 1])
    own = Split(x, y, label_names=("a", "b", "c"))
    data = experiment.Data(test=Split(x, y), osr=own, open_set=Split(x, y), ood=Split(x, torch.full((4,), -1)))
    named = data.named(("zero", "one", "two"), ("p", "q", "r"))
    assert named.test.label_names == ("zero", "one", "two") and named.osr is own
    assert named.open_set.label_names == ("p", "q", "r") and named.ood.label_names is None
    assert experiment.Data(test=own).named(None).test is own
