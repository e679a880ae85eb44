"""Reference and property tests of the maths that matter (each guards one planted mutation of certcal's maths):
closed forms and brute force computed without certcal's code paths."""

import itertools

import numpy as np
import pytest
from _certcal_refs import ece_loop
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest, norm

from certcal import (
    bin_index,
    brier_score,
    certified_brier_score,
    certified_calibration_error,
    clopper_pearson_lower,
    confidence_bounds,
    expected_calibration_error,
)

# --- certified Brier score: the worst corner of every box, and its orientation ---------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.booleans()), min_size=1, max_size=6))
def test_cbs_dominates_every_point_of_the_box_and_is_attained(rows):
    lo = np.array([min(a, b) for a, b, _ in rows])
    up = np.array([max(a, b) for a, b, _ in rows])
    c = np.array([int(k) for _, _, k in rows])
    cbs = certified_brier_score(lo, up, c)
    # attained at: correct samples at their lower bound, wrong ones at their upper bound
    assert cbs == pytest.approx(np.mean(np.where(c == 1, (1 - lo) ** 2, up**2)), abs=1e-12)
    rng = np.random.default_rng(len(rows))
    for _ in range(20):
        z = lo + rng.uniform(size=lo.size) * (up - lo)
        assert brier_score(z, c) <= cbs + 1e-12


def test_cbs_orientation_on_asymmetric_bounds():
    # correct sample: the worst confidence is its lower bound 0.1 -> (1 - 0.1)^2; wrong: upper 0.7 -> 0.49
    assert certified_brier_score([0.1, 0.2], [0.3, 0.7], [1, 0]) == pytest.approx((0.81 + 0.49) / 2)


# --- Standard bound: the Phi shift by r / sigma (Kumar et al., Eq. 12) ----------------------------------


@pytest.mark.parametrize("sigma, r", [(0.25, 0.0), (0.25, 0.1), (0.5, 0.3), (1.0, 1.0)])
def test_standard_bound_closed_form(sigma, r):
    rng = np.random.default_rng(3)
    s = rng.beta(4, 2, size=(5, 500))
    alpha = 0.001
    e = np.sqrt(np.log(2 / alpha) / (2 * 500))
    m = s.mean(axis=1)
    b = confidence_bounds(s, sigma=sigma, radius=r, alpha=alpha, method="standard")
    assert np.allclose(b.lower, norm.cdf(norm.ppf(np.clip(m - e, 0, 1)) - r / sigma), atol=1e-12)
    assert np.allclose(b.upper, norm.cdf(norm.ppf(np.clip(m + e, 0, 1)) + r / sigma), atol=1e-12)


def test_bounds_strictly_widen_with_radius():
    rng = np.random.default_rng(4)
    s = rng.beta(4, 2, size=(4, 400))
    for method in ("standard", "cdf"):
        b = confidence_bounds(s, sigma=0.25, radius=[0.0, 0.2], method=method)
        assert np.all(b.lower[:, 1] < b.lower[:, 0] - 1e-3)
        assert np.all(b.upper[:, 1] > b.upper[:, 0] + 1e-3)


# --- CDF bound: DKW band e on both sides --------------------------------------------------------------


def test_cdf_bound_at_radius_zero_contains_mean_with_dkw_margin():
    # at r = 0, integrating (tail -/+ e) over [0, 1] moves each end by at most e and at least
    # e * (1 - max score) / ... : with scores inside [0.3, 0.7] the band costs >= 0.3 e on each side
    rng = np.random.default_rng(5)
    s = rng.uniform(0.3, 0.7, size=(3, 800))
    e = np.sqrt(np.log(2 / 0.001) / 1600)
    b = confidence_bounds(s, sigma=0.25, radius=0.0, method="cdf")
    m = s.mean(axis=1)
    assert np.all(b.lower <= m - 0.3 * e + 1e-12) and np.all(b.lower >= m - e - 1e-12)
    assert np.all(b.upper >= m + 0.3 * e - 1e-12) and np.all(b.upper <= m + e + 1e-12)


# --- binning: an independent loop over explicit intervals ----------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(0, 1), st.integers(0, 20).map(lambda k: k / 20)), st.booleans()),
                min_size=1, max_size=30),
       st.sampled_from([1, 2, 4, 5, 10, 15, 20]))
def test_ece_and_bin_index_equal_explicit_intervals(pairs, n_bins):
    z = np.array([p[0] for p in pairs])
    c = np.array([int(p[1]) for p in pairs])
    assert expected_calibration_error(z, c, n_bins=n_bins) == pytest.approx(ece_loop(z, c, n_bins), abs=1e-12)
    for zi, mi in zip(z, bin_index(z, n_bins=n_bins), strict=True):
        assert (mi / n_bins < zi <= (mi + 1) / n_bins) or (mi == 0 and zi == 0)


# --- exact CCE: the maximum (not the minimum) over sign patterns ----------------------------------------


def cce_by_signs(lo, up, c, n_bins):
    """max over sign patterns s of sum_n max over reachable bins m of s_m-gain (closed right-bins semantics)."""
    best = -np.inf
    for signs in itertools.product([1, -1], repeat=n_bins):
        total = 0.0
        for li, ui, ci in zip(lo, up, c, strict=True):
            g = -np.inf
            for m in range(n_bins):
                a, b = m / n_bins, (m + 1) / n_bins
                if max(li, a) > min(ui, b) or (m > 0 and not ui > a):
                    continue
                lz, uz = max(li, a), min(ui, b)
                g = max(g, ci - lz if signs[m] > 0 else uz - ci)
            total += g
        best = max(best, total)
    return best / len(lo)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.integers(1, 4))
def test_exact_cce_is_the_maximum_over_sign_patterns(seed, n, n_bins):
    rng = np.random.default_rng(seed)
    z = rng.uniform(0, 1, n)
    w = rng.uniform(0, 0.4, n)
    lo, up = np.clip(z - w, 0, 1), np.clip(z + w, 0, 1)
    c = rng.integers(0, 2, n)
    res = certified_calibration_error(lo, up, c, n_bins=n_bins)
    assert res.value == pytest.approx(cce_by_signs(lo, up, c, n_bins), abs=1e-12)
    # and it is never below the ECE of any admissible confidences
    for _ in range(10):
        zz = lo + rng.uniform(size=n) * (up - lo)
        assert expected_calibration_error(zz, c, n_bins=n_bins) <= res.value + 1e-12


# --- Clopper-Pearson: one-sided, level alpha ------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.001, 0.01, 0.05])
def test_clopper_pearson_is_one_sided(alpha):
    n = 200
    k = np.array([1, 20, 100, 150, 199, 200])
    low = clopper_pearson_lower(k, n, alpha=alpha)
    for ki, li in zip(k, low, strict=True):
        ref = binomtest(int(ki), n, alternative="greater").proportion_ci(confidence_level=1 - alpha).low
        assert li == pytest.approx(ref, rel=1e-9, abs=1e-12)
        # the defining property: at p = lower, observing >= k successes has probability exactly alpha
        assert binom.sf(ki - 1, n, li) == pytest.approx(alpha, rel=1e-6)
    assert clopper_pearson_lower([0], n, alpha=alpha)[0] == 0.0
