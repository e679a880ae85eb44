"""The interval toolkit: reference values computed another way, and the guarantees every report relies on."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binom, t

from robustsuite_common.intervals import (
    Interval,
    IntervalError,
    at_chance,
    bootstrap,
    mcnemar,
    mean_interval,
    paired_difference,
    proportion,
    proportion_lower,
    proportion_of,
    seed_interval,
)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@settings(max_examples=60, deadline=None)
def test_proportion_is_clopper_pearson_from_beta_quantiles(kn):
    k, n = kn
    iv = proportion(k, n)
    lo = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    assert iv.estimate == k / n
    assert iv.low == pytest.approx(lo, abs=1e-9) and iv.high == pytest.approx(hi, abs=1e-9)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0


def test_proportion_coverage_is_at_least_nominal():
    # exact interval: coverage >= 95 % for every p (computed from the binomial pmf, no simulation)
    n = 30
    ivs = [proportion(k, n) for k in range(n + 1)]
    for p in (0.05, 0.2, 0.5, 0.77, 0.95):
        cover = sum(binom.pmf(k, n, p) for k, iv in enumerate(ivs) if iv.low <= p <= iv.high)
        assert cover >= 0.95 - 1e-12


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.lists(st.integers(0, n), min_size=1, max_size=8),
                                                       st.just(n))), st.sampled_from([0.001, 0.01, 0.05]))
@settings(max_examples=40, deadline=None)
def test_one_sided_lower_bound_is_the_two_sided_interval_at_twice_alpha(kn, alpha):
    ks, n = kn
    got = proportion_lower(np.array(ks), n, alpha=alpha)
    ref = [proportion(k, n, level=1 - 2 * alpha).low for k in ks]  # binomtest's exact interval: another route
    assert got == pytest.approx(ref, abs=1e-9)
    # one-sided coverage >= 1 - alpha for every p (from the binomial pmf): P(lower(K) <= p) >= 1 - alpha
    all_k = proportion_lower(np.arange(n + 1), n, alpha=alpha)
    for p in (0.03, 0.5, 0.9):
        assert binom.pmf(np.arange(n + 1), n, p)[all_k <= p].sum() >= 1 - alpha - 1e-12
    with pytest.raises(ValueError, match="k must"):
        proportion_lower(np.array([n + 1]), n, alpha=alpha)


def test_proportion_rejects_bad_counts():
    for k, n in ((3, 2), (-1, 5), (1, 0), (True, 5), (1.0, 5)):
        with pytest.raises(ValueError, match="k|n"):
            proportion(k, n)


def test_interval_refuses_to_exclude_its_estimate_or_leave_its_range():
    with pytest.raises(IntervalError, match="excludes"):
        Interval(0.34, 0.39, 1.05)
    with pytest.raises(IntervalError, match="range"):
        Interval(0.3, -1.75, 1.08, bounds=(-1.0, 1.0))
    with pytest.raises(IntervalError, match="finite"):
        Interval(float("nan"), 0, 1)
    iv = Interval(0.5, 0.4, 0.6, bounds=(0.0, 1.0))
    assert Interval.from_dict(iv.to_dict()) == iv
    assert iv.scaled(100).ci == (40.0, 60.0)


def test_seed_interval_needs_three_values_is_student_t_and_stays_in_range():
    assert seed_interval([0.3, 0.4]) is None
    v = np.array([0.2, 0.5, 0.9])
    iv = seed_interval(v)
    half = t.ppf(0.975, 2) * v.std(ddof=1) / math.sqrt(3)
    assert iv.low == pytest.approx(v.mean() - half) and iv.high == pytest.approx(v.mean() + half)
    clipped = seed_interval([-0.33, 0.9, -0.9], bounds=(-1.0, 1.0))
    assert -1.0 <= clipped.low and clipped.high <= 1.0
    same = seed_interval([0.7, 0.7, 0.7])
    assert same.low == same.high == pytest.approx(0.7)


def test_bootstrap_mean_contains_estimate_and_matches_normal_theory():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=400)
    iv = mean_interval(x, seed=1)
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert iv.contains(x.mean())
    # BCa of a mean of normal data is close to mean ± 1.96 se
    assert iv.low == pytest.approx(x.mean() - 1.96 * se, abs=0.3 * se)
    assert iv.high == pytest.approx(x.mean() + 1.96 * se, abs=0.3 * se)
    assert mean_interval(x, seed=1) == iv  # same seed, same interval


def test_bootstrap_is_paired_when_given_several_arrays():
    # b = a + small noise: the paired difference is tight; resampling a and b independently would not be
    rng = np.random.default_rng(0)
    a = rng.normal(0, 1, 300)
    b = a + rng.normal(0.1, 0.05, 300)
    paired = bootstrap((a, b), lambda a, b, axis: np.mean(a, axis=axis) - np.mean(b, axis=axis), seed=0)
    assert paired.width < 0.05
    assert paired == paired_difference(a, b, seed=0) or abs(paired.width - paired_difference(a, b, seed=0).width) < 0.01
    unpaired_se = math.sqrt(a.var() / 300 + b.var() / 300)
    assert paired.width < unpaired_se  # an independent-samples interval would be ~4 se wide


def test_bootstrap_of_independent_groups_resamples_each_on_its_own():
    """paired=False: groups of different sizes (e.g. in-distribution and outlier scores of an AUROC) are resampled
    separately; the interval of a difference of means matches the two-sample normal theory."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.0, 1.0, 400), rng.normal(0.5, 2.0, 150)

    def diff(a, b, axis):
        return np.mean(b, axis=axis) - np.mean(a, axis=axis)

    iv = bootstrap((a, b), diff, seed=0, paired=False)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert iv.contains(b.mean() - a.mean())
    assert iv.width == pytest.approx(2 * 1.96 * se, rel=0.15)
    with pytest.raises(ValueError, match="same number of samples"):
        bootstrap((a, b), diff, seed=0)  # paired (the default) needs equal lengths


def test_bootstrap_of_constant_data_has_zero_width_and_bounds_clip():
    iv = bootstrap(np.ones(20), lambda x, axis: np.mean(x, axis=axis), seed=0)
    assert iv.low == iv.high == 1.0
    iv = mean_interval(np.r_[np.zeros(3), np.ones(97)], seed=0, bounds=(0.0, 1.0))
    assert iv.high <= 1.0


def test_bootstrap_refuses_a_biased_statistic_whose_interval_excludes_it():
    # |mean| of centred data (like a plug-in ECE of a calibrated model) is 0, every resample's is > 0: the
    # percentile interval lies above the estimate (the overview's "ECE 0.34 % (95 % CI 0.39-1.05 %)"): refused
    x = np.r_[np.linspace(-1, 1, 51)]
    with pytest.raises(IntervalError, match="excludes"):
        bootstrap(x, lambda x, axis: np.abs(np.mean(x, axis=axis)), seed=0, method="percentile")


def test_mcnemar_is_the_exact_binomial_test_on_discordant_pairs():
    a = np.array([1] * 30 + [0] * 10 + [1] * 5 + [0] * 55, dtype=bool)
    b = np.array([1] * 30 + [1] * 10 + [0] * 5 + [0] * 55, dtype=bool)
    m = mcnemar(a, b)
    assert (m.only_a, m.only_b, m.n) == (5, 10, 100)
    # two-sided exact p: 2 * P(X <= 5), X ~ Bin(15, 0.5)
    assert m.p_value == pytest.approx(min(1.0, 2 * binom.cdf(5, 15, 0.5)))
    assert m.difference.estimate == pytest.approx(-0.05)
    assert m.difference.contains(-0.05)
    assert mcnemar(a, a).p_value == 1.0
    with pytest.raises(ValueError, match="paired"):
        mcnemar(a, b[:-1])


def test_at_chance_follows_the_clopper_pearson_interval():
    assert at_chance(19, 40, 0.5)          # 47.5 % [31.5, 63.9] contains 0.5
    assert not at_chance(90, 100, 0.5)
    assert at_chance(10, 100, 0.5)         # below chance is no better
    assert proportion_of([True, False, True, True]).estimate == 0.75
