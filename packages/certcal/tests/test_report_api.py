"""The pieces a report reads off the results (paper App. C, Table 1, §4-5, §5.3): certificate widths, the
beta-ACE benchmark's counts, the fixed-set increase, the ACT verdict, the solver gap and the noise-training
recipe, each checked against values computed independently (closed forms, hand-made results, direct calls)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

import certcal
from certcal import ACEBenchmark, ACEBenchmarkRow, ACTComparison, ACTRow, CommonSetCurve, RadiusRow


def _cert(scores: np.ndarray, prediction, radius, sigma=0.25, alpha=0.01) -> certcal.CertifyResult:
    k = scores.shape[0]
    return certcal.CertifyResult(prediction=np.asarray(prediction), radius=np.asarray(radius, dtype=float),
                                 p_lower=np.full(k, 0.9), counts=np.zeros((k, 10), dtype=np.int64), sigma=sigma,
                                 n0=10, n=scores.shape[1], alpha=alpha, scores=scores)


# --- Standard vs CDF certificate widths (App. C) ---

def test_certificate_widths_standard_closed_form_and_inputs_certified_at_zero():
    rng = np.random.default_rng(3)
    scores = rng.beta(5, 2, size=(5, 60))
    # input 1 abstains, input 3 is certified only up to r = 0.1: both rules are "certified at r = 0" except 1
    cert = _cert(scores, [2, -1, 4, 7, 1], [0.3, 0.0, 0.5, 0.1, 0.2], sigma=0.5, alpha=0.01)
    radii = [0.0, 0.25, 0.5]
    w = certcal.certificate_widths(cert, radii=radii)
    ok = [0, 2, 3, 4]
    assert w.n_inputs == 4 and w.radii == (0.0, 0.25, 0.5) and w.alpha == 0.01 and w.sigma == 0.5
    e = math.sqrt(math.log(2 / 0.01) / (2 * 60))
    for j, r in enumerate(radii):
        ref = []
        for i in ok:
            m = scores[i].mean()
            lo = norm.cdf(norm.ppf(max(m - e, 0.0)) - r / 0.5)
            hi = norm.cdf(norm.ppf(min(m + e, 1.0)) + r / 0.5)
            ref.append(hi - lo)
        assert w.standard[j] == pytest.approx(np.mean(ref), abs=1e-12)
        # CDF: the mean of the per-input certificates, input by input
        cdf = np.mean([certcal.confidence_bounds(scores[i:i + 1], sigma=0.5, radius=r, alpha=0.01, method="cdf").width[0]
                       for i in ok])
        assert w.cdf[j] == pytest.approx(cdf, abs=1e-12)
        assert w.ratio[j] == pytest.approx(w.cdf[j] / w.standard[j], rel=1e-15)
    assert tuple(w.to_dict()["ratio"]) == w.ratio


def test_certificate_widths_alpha_and_empty_and_bad_radii():
    rng = np.random.default_rng(4)
    scores = rng.uniform(size=(3, 40))
    cert = _cert(scores, [0, 1, 2], [0.2, 0.2, 0.2], alpha=0.01)
    loose = certcal.certificate_widths(cert, radii=[0.0], alpha=0.001)
    own = certcal.certificate_widths(cert, radii=[0.0])
    assert loose.alpha == 0.001 and loose.standard[0] > own.standard[0]  # smaller alpha, wider Hoeffding term
    assert certcal.certificate_widths(_cert(scores, [-1, -1, -1], [0, 0, 0]), radii=[0.0]) is None
    with pytest.raises(ValueError, match="radii"):
        certcal.certificate_widths(cert, radii=[-0.1])
    with pytest.raises(ValueError, match="radii"):
        certcal.certificate_widths(cert, radii=[])
    with pytest.raises(TypeError, match="certificate"):
        certcal.certificate_widths(scores, radii=[0.0])


# --- beta-ACE benchmark (Table 1) ---

def _ace_row(cfg, adv, adv_ci, diff_ci, clean_ci=(0.05, 0.10), unchanged=True):
    return ACEBenchmarkRow(cfg, "linf", 0.1, 0.9, (0.8, 0.95), 0.07, clean_ci, adv, adv_ci, adv - 0.07, diff_ci,
                           unchanged)


def test_ace_benchmark_counts_from_the_intervals():
    rows = (
        _ace_row("lower_label", 0.50, (0.45, 0.55), (0.38, 0.48)),      # raised, disjoint from clean
        _ace_row("raise_label", 0.03, (0.01, 0.05), (-0.06, -0.02)),    # lowered: interval excludes 0 from below
        _ace_row("lower_prediction", 0.12, (0.08, 0.16), (0.01, 0.09)),  # increase above 0, intervals overlap
        _ace_row("raise_prediction", 0.50, (0.11, 0.60), (-0.01, 0.05)),  # ties the max; overlaps 0
    )
    b = ACEBenchmark(rows, steps=10, n_bins=15, n_boot=20, seed=0)
    assert b.n_increase_above_zero == 2            # rows 0 and 2; row 1's interval is below 0
    assert b.n_attacked_above_clean == 2           # rows 0 and 3 (0.11 > 0.10); row 2's 0.08 < 0.10
    assert b.worst is rows[0]                      # first of the tied maxima
    assert b.predictions_unchanged
    changed = ACEBenchmark(rows[:3] + (_ace_row("raise_prediction", 0.1, (0.0, 0.2), (0.0, 0.1), unchanged=False),),
                           steps=10, n_bins=15, n_boot=20, seed=0)
    assert not changed.predictions_unchanged
    d = b.to_dict()
    assert d["n_increase_above_zero"] == 2 and d["rows"][1]["increase_above_zero"] is False


def test_ace_benchmark_equals_the_attacks_one_by_one(noisy_model, digits):
    _, _, xte, yte = digits
    x, y = xte[:24], yte[:24]
    b = certcal.ace_benchmark(noisy_model, x, y, eps={"l2": 0.5, "linf": 0.05}, steps=3, n_bins=10, n_boot=15, seed=2)
    assert [(r.norm, r.configuration) for r in b.rows] == [
        (n, c) for n in ("l2", "linf") for c in certcal.ACE_CONFIGURATIONS]
    for row in b.rows:
        res = certcal.BetaACE.from_configuration(row.configuration, norm=row.norm, steps=3)(noisy_model, x, y, row.eps)
        d = res.ece_intervals(10, n_boot=15, seed=2)
        assert (row.adv_ece, row.adv_ece_ci, row.clean_ece_ci, row.diff_ece_ci, row.accuracy_ci) == (
            d["adv_ece"], d["adv_ece_ci"], d["clean_ece_ci"], d["diff_ece_ci"], d["accuracy_ci"])
        assert row.prediction_unchanged == res.prediction_unchanged


def test_ace_benchmark_rejects_bad_input_before_work(noisy_model, digits):
    _, _, xte, yte = digits
    with pytest.raises(ValueError, match="eps"):
        certcal.ace_benchmark(noisy_model, xte[:4], yte[:4], eps={"l1": 0.1})
    with pytest.raises(ValueError, match="eps"):
        certcal.ace_benchmark(noisy_model, xte[:4], yte[:4], eps={"linf": -0.1})
    with pytest.raises(ValueError, match="configurations"):
        certcal.ace_benchmark(noisy_model, xte[:4], yte[:4], configurations=("lower_confidence",))


# --- fixed-set increase (§4-5) ---

def test_common_set_curve_increase_and_separation():
    cs = CommonSetCurve(radii=(0.0, 0.25, 0.5), n_inputs=7, cbs=(0.1, 0.2, 0.4), cbs_ci=((0, 1),) * 3,
                        cce=(0.2, 0.3, 0.7), cce_ci=((0, 1),) * 3, diff_cbs_ci=(0.05, 0.4), diff_cce_ci=(0.1, 0.6))
    assert cs.cbs_increase == pytest.approx(0.3) and cs.cce_increase == pytest.approx(0.5)
    assert cs.increase_separated
    from dataclasses import replace

    assert not replace(cs, diff_cce_ci=(0.0, 0.6)).increase_separated   # touching 0 is not separated
    assert not replace(cs, diff_cbs_ci=(-0.01, 0.4)).increase_separated
    assert cs.to_dict()["increase_separated"] is True


def test_solver_gap_is_the_largest_exact_minus_admm_over_certified_radii():
    rows = (RadiusRow(0.0, 0.9, 10, 0.1, {"exact": 0.30, "admm": 0.25}, 0.05),
            RadiusRow(0.25, 0.7, 8, 0.2, {"exact": 0.50, "admm": 0.41}, 0.05),
            RadiusRow(0.5, 0.0, 0, None, {"exact": None, "admm": None}, None))
    curve = certcal.CertifiedCalibrationCurve(sigma=0.25, bound="cdf", n_bins=15, n=10, rows=rows)
    assert curve.solver_gap() == pytest.approx(0.09)
    assert curve.solver_gap("exact", "exact") == 0.0
    empty = certcal.CertifiedCalibrationCurve(sigma=0.25, bound="cdf", n_bins=15, n=10, rows=rows[2:])
    assert empty.solver_gap() is None
    with pytest.raises(ValueError, match="brier"):
        curve.solver_gap("brier")


# --- ACT verdict (§5.3, Table 2 / 7) ---

def _act_row(method, r, cce, ci, ca=0.8):
    lo, hi = ci if ci is not None else (None, None)
    return ACTRow(method, r, ca, ca - 0.05, ca + 0.05, None if cce is None else cce / 2, None, None, cce, lo, hi, 10.0,
                  n_selected=int(cce is not None))


def _comp(rows, methods):
    return ACTComparison(sigma=0.25, epsilon=0.5, seeds=(0,), methods=tuple(methods), rows=tuple(rows))


def test_act_verdict_largest_radius_where_both_have_a_cce():
    rows = [_act_row("none", 0.0, 0.30, (0.28, 0.32), 0.87), _act_row("none", 0.25, 0.50, (0.48, 0.52), 0.76),
            _act_row("none", 0.5, 0.77, (0.76, 0.78), 0.47),
            _act_row("smoothadv", 0.0, 0.31, (0.29, 0.33)), _act_row("smoothadv", 0.25, 0.49, (0.47, 0.51)),
            _act_row("smoothadv", 0.5, 0.76, (0.75, 0.77)),
            _act_row("acce_act", 0.0, 0.20, (0.18, 0.22), 0.83), _act_row("acce_act", 0.25, 0.40, (0.38, 0.46), 0.74),
            _act_row("acce_act", 0.5, None, None, 0.40)]
    v = _comp(rows, ["none", "smoothadv", "acce_act"]).verdict()
    # ACCE-ACT is preferred over SmoothAdv; r = 0.5 has no ACCE-ACT CCE, so r = 0.25 decides: 0.46 < 0.48, disjoint
    assert (v.method, v.baseline, v.radius) == ("acce_act", "none", 0.25)
    assert (v.cce, v.cce_ci, v.baseline_cce, v.baseline_cce_ci) == (0.40, (0.38, 0.46), 0.50, (0.48, 0.52))
    assert (v.certified_accuracy, v.baseline_certified_accuracy) == (0.74, 0.76)
    assert v.overlap is False and v.lowers is True
    # SmoothAdv at r = 0.5: [0.75, 0.77] touches [0.76, 0.78] -> overlap
    v2 = _comp(rows, ["none", "smoothadv", "acce_act"]).verdict(method="smoothadv")
    assert v2.radius == 0.5 and v2.overlap is True
    # baseline chosen explicitly; a raised CCE with disjoint intervals
    v3 = _comp(rows, ["none", "smoothadv", "acce_act"]).verdict(method="smoothadv", baseline="acce_act")
    assert v3.radius == 0.25 and v3.overlap is False and v3.lowers is False


def test_act_verdict_none_and_no_radius_and_bad_names():
    rows = [_act_row("none", 0.0, 0.30, (0.28, 0.32)), _act_row("brier_act", 0.0, None, None)]
    assert _comp(rows[:1], ["none"]).verdict() is None
    v = _comp(rows, ["none", "brier_act"]).verdict()
    assert v.method == "brier_act" and v.radius is None and v.cce is None and v.overlap is None
    # without "none" the first method is the baseline
    rows2 = [_act_row("smoothadv", 0.0, 0.30, (0.28, 0.32)), _act_row("acce_act", 0.0, 0.31, (0.30, 0.33))]
    assert _comp(rows2, ["smoothadv", "acce_act"]).verdict().baseline == "smoothadv"
    # closed intervals that share an end point overlap
    rows3 = [_act_row("none", 0.0, 0.30, (0.28, 0.32)), _act_row("acce_act", 0.0, 0.35, (0.32, 0.38))]
    touching = _comp(rows3, ["none", "acce_act"]).verdict()
    assert touching.overlap is True and touching.lowers is False
    with pytest.raises(ValueError, match="method"):
        _comp(rows, ["none", "brier_act"]).verdict(method="acce_act")


# --- noise training recipe (Cohen et al.) ---

def test_gaussian_noise_training_is_one_noise_draw_without_adversary(digits):
    xtr, ytr, _, _ = digits
    gen = torch.Generator().manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 10))
    with torch.no_grad():
        for t in net.parameters():
            t.copy_(0.1 * torch.randn(t.shape, generator=gen))
    before = [t.clone() for t in net.state_dict().values()]
    x, y = xtr[:96], ytr[:96]
    got = certcal.gaussian_noise_training(net, x, y, sigma=0.5, epochs=2, batch_size=32, lr=1e-3, seed=1)
    ref = certcal.adversarial_calibration_training(net, x, y, method="gaussian", sigma=0.5, eps=0.0, epochs=2,
                                                   batch_size=32, num_noise=1, lr=1e-3, seed=1)
    two = certcal.adversarial_calibration_training(net, x, y, method="gaussian", sigma=0.5, eps=0.0, epochs=2,
                                                   batch_size=32, num_noise=2, lr=1e-3, seed=1)
    assert got.method == "gaussian" and got.config["num_noise"] == 1 and got.config["epsilon"] == 0.0
    for a, b in zip(got.model.state_dict().values(), ref.model.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    assert any(not torch.equal(a, c) for a, c in zip(got.model.state_dict().values(),
                                                     two.model.state_dict().values(), strict=True))
    # the input model is not modified (a copy is fine-tuned)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), before, strict=True))


def test_act_comparison_says_why_a_method_has_no_selected_model():
    """At r = 1 the band is set by the best model (AT 0.61, margin 0.03): a method whose best model certifies
    0.55 is outside it, and the reason gives those numbers; one that certifies nothing says so."""
    from certcal.act import ACTModel

    rows = [_act_row("smoothadv", 1.0, 0.60, (0.58, 0.62), 0.61), _act_row("acce_act", 1.0, None, None, 0.55),
            _act_row("brier_act", 1.0, None, None, 0.0)]
    models = (ACTModel("smoothadv", {"lr": 1e-2}, 0, 1.0, 0.61, 0.3, 0.60, True),
              ACTModel("acce_act", {"lr": 1e-2}, 0, 1.0, 0.55, 0.3, 0.55, False),
              ACTModel("acce_act", {"lr": 1e-3}, 0, 1.0, 0.52, 0.3, 0.50, False),
              ACTModel("brier_act", {"lr": 1e-3}, 0, 1.0, 0.0, None, None, False))
    comp = ACTComparison(sigma=0.5, epsilon=0.5, seeds=(0,), methods=("smoothadv", "acce_act", "brier_act"),
                         rows=tuple(rows), models=models, config={"selection_margin": 0.03})
    verdict, ok, why = comp.compare("acce_act", 1.0, "smoothadv")
    assert (verdict, ok) == ("inconclusive", False)
    assert "its best CA 55.00 % is below the band's 58.00 % (smoothadv's 61.00 % − 3 %)" in why
    assert comp.compare("brier_act", 1.0, "smoothadv")[2].endswith("(it certifies no input there)")
    bare = _comp(rows, ("smoothadv", "acce_act"))  # no per-model rows: the plain reason
    assert bare.compare("acce_act", 1.0, "smoothadv")[2] == "acce_act has no selected model with a CCE at r = 1"
