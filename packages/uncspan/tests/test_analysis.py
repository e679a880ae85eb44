"""The comparisons read off the spans (entropy widening, adversarial training's effect on MUS, s-ECE under / clean /
over), the per-sample outputs of the leaderboard, the ε-sweep and Table V, and their round trips through to_dict."""

import dataclasses
import json

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

import uncspan
from robustsuite_common.intervals import Interval, mean_interval, paired_difference
from uncspan import (
    Leaderboard,
    OODUnderAttack,
    PairedDifference,
    UncertaintySpan,
    adversarial_training_effect,
    entropy_widening,
    leaderboard_row,
    mus_difference,
    span_signed_ece,
)


def _span(h_clean, h_over, h_under, pred=None, conf=None) -> UncertaintySpan:
    n = len(h_clean)
    pred = np.zeros(n, dtype=np.int64) if pred is None else np.asarray(pred)
    conf = np.full(n, 0.5) if conf is None else np.asarray(conf, dtype=np.float64)
    return UncertaintySpan(0.1, "Linf", 5, "pgd", np.asarray(h_clean, float), np.asarray(h_over, float),
                           np.asarray(h_under, float), pred, pred.copy(), pred.copy(), conf, conf.copy(), conf.copy())


def test_paired_difference_sign_reads_the_interval():
    def diff(m, lo, hi):
        return PairedDifference(Interval(m, lo, hi))

    assert diff(-1.0, -2.0, -0.1).sign == -1
    assert diff(-1.0, -2.0, 0.0).sign == 0
    assert diff(0.5, 0.0, 1.0).sign == 0  # an interval touching 0 includes it
    assert diff(0.5, 0.1, 1.0).sign == 1
    assert diff(0.5, 0.1, 1.0).to_dict() == {"mean": 0.5, "ci_low": 0.1, "ci_high": 1.0}


def test_entropy_widening_hand_case():
    """under = mean(H_under − H_clean), over = mean(H_clean − H_over), each with robustsuite_common's paired
    bootstrap interval (BCa)."""
    sp = _span([1.0, 2.0, 0.5, 1.5], [1.0, 2.0, 0.5, 1.1], [2.0, 2.5, 1.5, 2.5])
    w = entropy_widening(sp, seed=3, n_boot=500)
    assert w.under.mean == pytest.approx((1.0 + 0.5 + 1.0 + 1.0) / 4)
    assert w.over.mean == pytest.approx((0.0 + 0.0 + 0.0 + 0.4) / 4)
    assert w.under.interval == paired_difference(sp.entropy_under, sp.entropy_clean, seed=3, n_resamples=500)
    assert w.over.interval == paired_difference(sp.entropy_clean, sp.entropy_over, seed=3, n_resamples=500)
    # every under-widening is >= 0.5, so every resampled mean is; three of four over-widenings are 0, so a resample
    # of zeros only has probability (3/4)^4 = 0.32, far above the 2.5 % quantile: the over interval starts at 0
    assert w.under.ci_low >= 0.5 and w.over.ci_low == pytest.approx(0.0, abs=1e-12)
    assert w.under.sign == 1 and w.over.sign == 0 and w.both_move is False
    still = _span([1.0, 1.0], [1.0, 1.0], [1.0, 1.0])
    assert entropy_widening(still).under.sign == 0 and not entropy_widening(still).both_move
    with pytest.raises(TypeError, match="span"):
        entropy_widening({"entropy_clean": [1.0]})
    with pytest.raises(ValueError, match="n_boot"):
        entropy_widening(sp, n_boot=0)


def _outcome(sp, y) -> uncspan.RobustOutcome:
    return uncspan.RobustOutcome("pgd", "none", sp.pred_clean == np.asarray(y), sp.pred_clean, sp.conf_clean)


def _board(spans: dict, flags: dict, y) -> Leaderboard:
    rows = sorted((leaderboard_row(k, sp, y, _outcome(sp, y), adversarially_trained=flags.get(k), n_boot=300)
                   for k, sp in spans.items()), key=lambda r: r.mus_mean)
    return Leaderboard(0.1, "Linf", 5, tuple(rows), spans, {})


def test_adversarial_training_effect_pairs_and_verdicts():
    """Every declared-AT model against every declared-standard model, in the given order; undeclared models are
    left out; the difference is the paired mean of the per-sample spans; overlap is read from the rows."""
    rng = np.random.default_rng(0)
    h = rng.uniform(0.5, 1.0, 40)
    wide = _span(h, h - 0.4, h + 1.0)          # span ≈ 1.4
    narrow = _span(h, h - 0.1, h + 0.2)        # span ≈ 0.3
    narrow2 = _span(h, h - 0.1 * rng.uniform(0, 1, 40), h + 0.25)
    free = _span(h, h - 1.0, h + 1.0)
    y = np.zeros(40, dtype=np.int64)
    board = _board({"std": wide, "at1": narrow, "free": free, "at2": narrow2, "std2": _span(h, h - 0.5, h + 1.5)},
                   {"std": False, "at1": True, "at2": True, "std2": False}, y)
    eff = adversarial_training_effect(board, seed=1, n_boot=400)
    assert [(c.adversarially_trained, c.standard) for c in eff.comparisons] == [
        ("at1", "std"), ("at1", "std2"), ("at2", "std"), ("at2", "std2")]
    c = eff.comparisons[0]
    assert c.difference.mean == pytest.approx(np.mean(narrow.span - wide.span))
    assert c.difference == mus_difference(narrow, wide, seed=1, n_boot=400)
    assert c.shrinks_span and eff.shrinks_span is True and c.intervals_overlap is False
    # the two AT models against each other: not a comparison the function makes; two standard models: no pair
    assert adversarial_training_effect(_board({"a": wide, "b": free}, {"a": False, "b": False}, y)).shrinks_span is None
    # the span of the "AT" model is the wider one: the paper's direction fails and the interval says so
    flipped = adversarial_training_effect(_board({"a": wide, "b": narrow}, {"a": True, "b": False}, y), n_boot=300)
    assert flipped.comparisons[0].difference.sign == 1 and flipped.shrinks_span is False
    # the same model twice: difference exactly 0, intervals overlap
    same = adversarial_training_effect(_board({"a": narrow, "b": narrow}, {"a": True, "b": False}, y), n_boot=300)
    assert same.comparisons[0].intervals_overlap is True and same.comparisons[0].difference.sign == 0
    json.dumps(eff.to_dict())
    with pytest.raises(TypeError, match="board"):
        adversarial_training_effect({"a": narrow})


@pytest.mark.parametrize("at_ci, std_ci, overlap", [
    ((0.1, 0.2), (0.5, 0.6), False), ((0.5, 0.6), (0.1, 0.2), False), ((0.1, 0.5), (0.4, 0.6), True),
    ((0.4, 0.6), (0.1, 0.5), True), ((0.2, 0.3), (0.1, 0.6), True), ((0.1, 0.6), (0.2, 0.3), True),
    ((0.1, 0.4), (0.4, 0.6), True)])
def test_training_comparison_reads_overlap_from_the_rows(at_ci, std_ci, overlap):
    """Whether the rows' own MUS intervals overlap (closed intervals), whichever lies higher."""
    sp = _span([1.0, 1.0], [0.5, 0.5], [1.5, 1.5])

    def row(name, ci, flag):
        return uncspan.LeaderboardRow(name, 1.0, 1.0, sum(ci) / 2, 0.0, 1.0, 0.0, mus_mean_ci_low=ci[0],
                                      mus_mean_ci_high=ci[1], adversarially_trained=flag)

    board = Leaderboard(0.1, "Linf", 5, (row("at", at_ci, True), row("std", std_ci, False)), {"at": sp, "std": sp}, {})
    (c,) = adversarial_training_effect(board, n_boot=100).comparisons
    assert c.intervals_overlap is overlap


def test_span_signed_ece_brute_force():
    """Bins by hand (equal width, ob = accuracy of the bin, ex = bin centre or mean confidence), one model."""
    conf_c = np.array([0.95, 0.91, 0.55, 0.52, 0.75])
    conf_o = np.array([0.99, 0.98, 0.97, 0.96, 0.99])
    conf_u = np.array([0.15, 0.12, 0.18, 0.11, 0.14])
    y = np.array([0, 1, 2, 0, 1])
    pred_c, pred_o, pred_u = np.array([0, 1, 0, 0, 2]), np.array([0, 1, 0, 1, 2]), np.array([2, 2, 2, 0, 0])
    sp = UncertaintySpan(0.1, "Linf", 5, "pgd", np.ones(5), np.zeros(5), np.full(5, 2.0), pred_c, pred_o, pred_u,
                         conf_c, conf_o, conf_u)

    def brute(conf, pred, n_bins, mean):
        total = 0.0
        for s in range(n_bins):
            lo, hi = s / n_bins, (s + 1) / n_bins
            inside = (conf >= lo) & ((conf < hi) if s < n_bins - 1 else (conf <= hi))
            if inside.any():
                ex = conf[inside].mean() if mean else (2 * s + 1) / (2 * n_bins)
                total += inside.mean() * ((pred[inside] == y[inside]).mean() - ex)
        return total

    got = span_signed_ece(sp, torch.tensor(y), n_bins=10)
    for kind, conf, pred in (("clean", conf_c, pred_c), ("over", conf_o, pred_o), ("under", conf_u, pred_u)):
        assert getattr(got, kind) == pytest.approx(brute(conf, pred, 10, False), abs=1e-12), kind
        assert getattr(got, f"{kind}_meanconf") == pytest.approx(brute(conf, pred, 10, True), abs=1e-12), kind
    assert got.over < 0 < got.under  # over-confident after the over attack, under-confident after the under attack
    assert list(got.to_dict()) == ["under", "clean", "over", "under_meanconf", "clean_meanconf", "over_meanconf"]
    with pytest.raises(ValueError, match="y"):
        span_signed_ece(sp, y[:3])
    with pytest.raises(ValueError, match="n_bins"):
        span_signed_ece(sp, y, n_bins=0)


@pytest.fixture(scope="module")
def linear_setup(make_linear):
    linear_model = make_linear
    g = torch.Generator().manual_seed(0)
    x = torch.rand(24, 1, 4, 4, generator=g)
    models = {"a": linear_model(16, 4, 0, scale=2.0), "b": linear_model(16, 4, 1, scale=0.5)}
    y = models["a"](x).argmax(-1)
    y[::3] = (y[::3] + 1) % 4
    return models, x, y


def test_leaderboard_keeps_per_sample_outputs_and_merges_like_one_ranking(linear_setup):
    """rank_models keeps the span and the per-sample outcomes of the robust-accuracy attacks of every model (standard
    AutoAttack, with this package's PGD beside it); ranking the models one at a time and merging gives the joint
    ranking exactly; to_dict(per_sample=True) round-trips."""
    models, x, y = linear_setup
    # AutoAttack's cheapest configuration (APGD-CE and APGD-DLR, 2 iterations): what the board keeps is tested here
    cheap = uncspan.AutoAttack(version="rand", n_iter=2, n_restarts=1)
    cfg = uncspan.RankConfig(eps=0.2, steps=5, seed=0, restarts=0, n_boot=300, attack=cheap)
    joint = uncspan.rank_models(models, x, y, config=cfg, adversarially_trained={"a": False, "b": True})
    for name, model in models.items():
        adv = uncspan.MisclassificationAttack(steps=5, keep_adv=False)(model, x, 0.2, seed=0, y=y)
        np.testing.assert_array_equal(joint.pgd[name].pred_adv, adv.pred_adv)
        np.testing.assert_array_equal(joint.pgd[name].conf_adv, adv.conf_adv)
        aa = uncspan.robust_accuracy(model, x, y, eps=0.2, seed=0, attack=cheap)
        np.testing.assert_array_equal(joint.robust[name].robust, aa.robust)
        np.testing.assert_array_equal(joint.pred_robust[name], aa.pred_adv)
        row = next(r for r in joint.rows if r.model == name)
        assert row.robust_acc == np.mean(aa.robust) and row.robust_attack.startswith("AutoAttack rand, reduced budget")
        assert row.pgd_robust_acc == np.mean(adv.pred_adv == y.numpy())
        sp = joint.spans[name]
        assert (row.entropy_clean, row.entropy_over, row.entropy_under) == (
            sp.entropy_clean.mean(), sp.entropy_over.mean(), sp.entropy_under.mean())
        iv = mean_interval(sp.span, seed=0, n_resamples=300, bounds=(0.0, None))
        assert (row.mus_mean_ci_low, row.mus_mean_ci_high) == iv.ci
    parts = [uncspan.rank_models({k: m}, x, y, config=cfg, adversarially_trained={k: k == "b"})
             for k, m in models.items()]
    merged = Leaderboard.merge(*(Leaderboard.from_dict(json.loads(json.dumps(b.to_dict(per_sample=True))))
                                 for b in parts))
    assert merged.table() == joint.table() and list(merged.spans) == ["a", "b"]
    for name in models:
        np.testing.assert_array_equal(merged.spans[name].span, joint.spans[name].span)
        np.testing.assert_array_equal(merged.pred_robust[name], joint.pred_robust[name])
        np.testing.assert_array_equal(merged.pgd[name].robust, joint.pgd[name].robust)
    assert "spans" not in joint.to_dict()
    assert joint.columns[-4:] == ["entropy_clean", "entropy_over", "entropy_under", "at_chance"]
    with pytest.raises(ValueError, match="distinct"):
        Leaderboard.merge(parts[0], parts[0])
    other = uncspan.rank_models({"c": models["a"]}, x, y, config=dataclasses.replace(cfg, eps=0.1))
    with pytest.raises(ValueError, match="eps"):
        Leaderboard.merge(parts[0], other)


def test_eps_sweep_per_sample_round_trip_and_n_boot(linear_setup):
    models, x, y = linear_setup
    sw = uncspan.eps_sweep(models["a"], x, y, eps=[0.0, 0.2], steps=4, restarts=0, n_boot=250, seed=2)
    for r in sw.rows:
        iv = mean_interval(sw.spans[r.eps].span, seed=2, n_resamples=250, bounds=(0.0, None))
        assert (r.mus_mean_ci_low, r.mus_mean_ci_high) == iv.ci
    back = uncspan.EpsSweep.from_dict(json.loads(json.dumps(sw.to_dict(per_sample=True))))
    assert back.rows == sw.rows and list(back.spans) == [0.0, 0.2]
    for e in (0.0, 0.2):
        for k in ("entropy_clean", "entropy_over", "entropy_under", "pred_over", "conf_under"):
            np.testing.assert_array_equal(getattr(back.spans[e], k), getattr(sw.spans[e], k))
    assert "spans" not in sw.to_dict() and uncspan.EpsSweep.from_dict(sw.to_dict()).spans == {}


def test_ood_under_attack_keeps_the_scores_its_metrics_come_from(linear_setup):
    """Per-sample entropies, predictions and confidences stay on the result: AUROC (scikit-learn), the mean
    entropies and the AUROC interval (n_boot replicates) are recomputed from them; the attacked outliers are the
    over-confidence attack's output; the clean rows are the model's own outputs."""
    models, x, _ = linear_setup
    model = models["a"]
    g = torch.Generator().manual_seed(5)
    x_out = torch.rand(16, 1, 4, 4, generator=g) * 0.3
    res = uncspan.ood_under_attack(model, x, x_out, eps=[0.0, 0.3], steps=5, seed=0, n_boot=200)
    with torch.no_grad():
        p_in = torch.softmax(model(x).double(), -1)
        p_out = torch.softmax(model(x_out).double(), -1)
    np.testing.assert_allclose(res.entropy_in, -(p_in * p_in.log()).sum(-1).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(res.pred_in, p_in.argmax(-1).numpy())
    np.testing.assert_allclose(res.conf_in, p_in.max(-1).values.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(res.rows[0].pred_out, p_out.argmax(-1).numpy())
    adv = uncspan.OverConfidenceAttack(steps=5, keep_adv=False)(model, x_out, 0.3, seed=0)
    np.testing.assert_array_equal(res.rows[1].entropy_out, adv.entropy_adv)
    np.testing.assert_array_equal(res.rows[1].pred_out, adv.pred_adv)
    for r in res.rows:
        labels = np.r_[np.zeros(len(res.entropy_in)), np.ones(len(r.entropy_out))]
        assert r.metrics.auroc == pytest.approx(roc_auc_score(labels, np.r_[res.entropy_in, r.entropy_out]), abs=1e-15)
        assert r.mean_entropy_out == pytest.approx(r.entropy_out.mean(), abs=1e-15)
        assert (r.auroc_ci_low, r.auroc_ci_high) == uncspan.auroc_ci(res.entropy_in, r.entropy_out, seed=0,
                                                                     n_boot=200).ci
    assert res.auroc_change == uncspan.auroc_difference(res.entropy_in, res.rows[1].entropy_out,
                                                        res.rows[0].entropy_out, seed=0, n_boot=200)
    assert res.auroc_change.estimate == pytest.approx(res.rows[1].metrics.auroc - res.rows[0].metrics.auroc)
    assert res.table()[1] == [res.rows[1].to_dict()[c] for c in OODUnderAttack.COLUMNS]
    assert OODUnderAttack.COLUMNS[:4] == ("eps", "auroc", "auroc_ci_low", "auroc_ci_high")
    back = OODUnderAttack.from_dict(json.loads(json.dumps(res.to_dict(per_sample=True))))
    assert back.table() == res.table() and back.auroc_change == res.auroc_change
    np.testing.assert_array_equal(back.rows[1].entropy_out, res.rows[1].entropy_out)
    np.testing.assert_array_equal(back.pred_in, res.pred_in)
    assert "entropy_in" not in res.to_dict() and "entropy_out" not in res.to_dict()["rows"][0]
    with pytest.raises(ValueError, match="n_boot"):
        uncspan.ood_under_attack(model, x, x_out, eps=[0.0], n_boot=0)


def test_auroc_falls_reads_the_paired_change_or_else_the_first_and_last_intervals():
    m = uncspan.DetectionMetrics(0.5, 0.5, 0.5, 0.5)

    def res(*bounds, change=None):
        rows = tuple(uncspan.OODRow(float(i), m, 1.0, 1.0, lo, hi) for i, (lo, hi) in enumerate(bounds))
        return OODUnderAttack("Linf", 5, rows, auroc_change=change)

    assert res((0.8, 0.9), (0.85, 0.95), (0.5, 0.79)).auroc_falls is True
    assert res((0.8, 0.9), (0.5, 0.79), (0.5, 0.8)).auroc_falls is False  # touching intervals: not disjoint
    assert res((0.5, 0.6), (0.8, 0.9)).auroc_falls is False
    # the paired change decides when it is there: overlapping row intervals, a change clearly below 0
    assert res((0.6, 0.9), (0.55, 0.85), change=Interval(-0.05, -0.08, -0.02)).auroc_falls is True
    assert res((0.8, 0.9), (0.5, 0.6), change=Interval(-0.3, -0.5, 0.01)).auroc_falls is False


def test_auroc_difference_is_paired_over_the_same_outliers():
    """The same outliers scored twice with a small shift: the paired interval of the AUROC change is much narrower
    than the unpaired spread of either AUROC (resampling an outlier moves both of its scores)."""
    rng = np.random.default_rng(0)
    s_in, s_ref = rng.normal(0, 1, 200), rng.normal(1, 1, 150)
    s_out = s_ref - 0.2 + rng.normal(0, 0.05, 150)
    d = uncspan.auroc_difference(s_in, s_out, s_ref, seed=0, n_boot=400)
    assert d.estimate == pytest.approx(uncspan.detection_metrics(s_in, s_out).auroc
                                       - uncspan.detection_metrics(s_in, s_ref).auroc)
    assert d.high < 0 and d.width < 0.5 * uncspan.auroc_ci(s_in, s_ref, seed=0, n_boot=400).width
    with pytest.raises(ValueError, match="same outliers"):
        uncspan.auroc_difference(s_in, s_out[:10], s_ref)
