"""calibration_error: plug-in ECE, debiased ECE with an interval containing it, the calibration test, Brier; and
max_certifiable_radius: the largest radius a draw budget can certify."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _certcal_refs import ece_loop
from scipy.stats import binom, norm

import certcal


def reference(z, c, n_bins, seed, n_boot, level=0.95):
    """The documented procedure with explicit loops: the null by consistency resampling, then the pairs
    bootstrap, drawn from default_rng(seed) in that order."""
    rng = np.random.default_rng(seed)
    n = len(z)
    idx = rng.integers(0, n, size=(n_boot, n))
    u = rng.random((n_boot, n))
    null = [ece_loop(z[idx[b]], (u[b] < z[idx[b]]).astype(float), n_bins) for b in range(n_boot)]
    idx2 = rng.integers(0, n, size=(n_boot, n))
    boot = [ece_loop(z[idx2[b]], c[idx2[b]], n_bins) for b in range(n_boot)]
    ece = ece_loop(z, c, n_bins)
    d = ece - np.mean(null)
    q_lo, med, q_hi = np.quantile(boot, [(1 - level) / 2, 0.5, (1 + level) / 2])
    p = (1 + sum(v >= ece for v in null)) / (1 + n_boot)
    return ece, float(np.mean(null)), p, (d, d - (q_hi - med), d + (med - q_lo))


def test_matches_the_procedure_written_out():
    rng = np.random.default_rng(3)
    z = rng.uniform(0.3, 1.0, 60)
    z[:3] = [0.0, 1 / 3, 2 / 3]  # on bin edges
    c = (rng.random(60) < z - 0.1).astype(float)
    got = certcal.calibration_error(z, c, n_bins=6, seed=11, n_boot=80)
    ece, null_mean, p, (d, lo, hi) = reference(z, c, 6, 11, 80)
    assert got.ece == pytest.approx(ece, abs=1e-12) == pytest.approx(certcal.expected_calibration_error(z, c, n_bins=6))
    assert got.null_mean == pytest.approx(null_mean, abs=1e-12) and got.p_value == pytest.approx(p, abs=1e-12)
    assert got.debiased.estimate == pytest.approx(d, abs=1e-12)
    assert (got.debiased.low, got.debiased.high) == pytest.approx((lo, hi), abs=1e-12)
    assert got.debiased.low <= got.debiased.estimate <= got.debiased.high  # always contains it
    assert got.brier.estimate == pytest.approx(np.mean((c - z) ** 2)) and got.brier.contains(got.brier.estimate)


def test_perfectly_calibrated_samples_give_zero_and_a_large_p_value():
    """Outcomes drawn from the confidences themselves: over 40 samples the debiased ECE's interval misses 0 and the
    test rejects at 5 % no more often than a 95 % procedure allows (binomial bound at 0.001); one sample's
    p-value is not small and its plug-in ECE is mostly the bias the null predicts."""
    misses = rejections = 0
    for s in range(40):
        rng = np.random.default_rng(100 + s)
        z = rng.uniform(0.5, 1.0, 1000)
        c = (rng.random(1000) < z).astype(float)
        r = certcal.calibration_error(z, c, n_bins=15, seed=s, n_boot=300)
        misses += not r.debiased.contains(0.0)
        rejections += r.p_value < 0.05
        if s == 0:
            assert r.p_value > 0.05 and r.debiased.contains(0.0) and r.ece > 0.02
            assert abs(r.debiased.estimate) < r.ece / 2
    bound = binom.ppf(0.999, 40, 0.05)
    assert misses <= bound and rejections <= bound, (misses, rejections, bound)


def test_a_miscalibrated_sample_is_detected():
    """Over-confident by 0.15 everywhere (true ECE 0.15): the test rejects with the smallest p-value the draws allow,
    the debiased interval lies above 0; subtracting the null's bias over-corrects a clearly miscalibrated model,
    so the debiased value lies between 0 and the plug-in one."""
    rng = np.random.default_rng(7)
    z = rng.uniform(0.5, 1.0, 1000)
    c = (rng.random(1000) < z - 0.15).astype(float)
    r = certcal.calibration_error(z, c, n_bins=15, seed=0, n_boot=300)
    assert r.p_value == pytest.approx(1 / 301)
    assert 0.0 < r.debiased.low and r.debiased.estimate < r.ece
    assert r.brier.low > 0


@pytest.mark.parametrize(("bad", "match"), [({"confidences": [1.2, 0.5]}, "confidences"),
                                            ({"correct": [1, 2]}, "correct"), ({"n_bins": 0}, "n_bins"),
                                            ({"n_boot": 0}, "n_boot"), ({"seed": -1}, "seed"),
                                            ({"confidences": [np.nan, 0.5]}, "confidences")])
def test_bad_arguments(bad, match):
    kw = {"confidences": [0.9, 0.6], "correct": [1, 0], **bad}
    with pytest.raises((ValueError, TypeError), match=match):
        certcal.calibration_error(kw.pop("confidences"), kw.pop("correct"), **kw)


# --- the draw budget's ceiling (issue 26 item 4) ----------------------------------------------------------------


class AlwaysZero(torch.nn.Module):
    """Shipped-style small weights that put class 0 far ahead for any input: every draw votes 0."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(64, 10)
        with torch.no_grad():
            self.lin.weight.zero_()
            self.lin.bias.copy_(torch.tensor([20.0] + [0.0] * 9))

    def forward(self, x):
        return self.lin(x.flatten(1))


@pytest.mark.parametrize(("sigma", "n", "alpha"), [(0.25, 400, 0.001), (0.5, 100, 0.01), (0.25, 2000, 0.001)])
def test_max_certifiable_radius_is_what_certify_gives_with_every_draw_on_one_class(sigma, n, alpha):
    x = torch.rand(3, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    cert = certcal.certify(AlwaysZero(), x, sigma=sigma, n0=10, n=n, alpha=alpha, batch_size=512, seed=0)
    closed = sigma * norm.ppf(alpha ** (1 / n))  # p_lower = Beta(alpha; n, 1) = alpha^(1/n)
    assert np.all(cert.counts[:, 0] == n)
    assert cert.radius == pytest.approx(np.full(3, closed), rel=1e-9)
    assert certcal.max_certifiable_radius(sigma=sigma, n=n, alpha=alpha) == pytest.approx(closed, rel=1e-12)
    assert certcal.max_certifiable_radius(sigma=0.25, n=400, alpha=0.001) == pytest.approx(0.5295, abs=1e-3)  # issue 26's 0.53


def test_no_real_input_is_certified_beyond_the_ceiling(noisy_model, digits):
    _, _, xte, _ = digits
    cert = certcal.certify(noisy_model, xte[:60], sigma=0.25, n0=20, n=200, batch_size=4096, seed=0)
    ceiling = certcal.max_certifiable_radius(sigma=0.25, n=200, alpha=0.001)
    assert cert.radius.max() <= ceiling + 1e-12
    top = cert.counts.max(1) == 200  # inputs whose every draw voted one class sit exactly on the ceiling
    assert top.any() and cert.radius[top] == pytest.approx(np.full(int(top.sum()), ceiling), rel=1e-9)
