"""95 % intervals (issue 12, item 7): closed forms, brute-force references, rendering and comparisons."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robustsuite import intervals
from robustsuite.intervals import bootstrap_calibration
from robustsuite.report import metric_rows, table_cells


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@settings(max_examples=60, deadline=None)
def test_clopper_pearson_matches_the_binomial_tail_definition(kn):
    from scipy.stats import binom

    k, n = kn
    lo, hi = intervals.clopper_pearson(k, n)
    assert 0 <= lo <= k / n <= hi <= 1
    # definition: P(X >= k | lo) = 2.5 % and P(X <= k | hi) = 2.5 % (one-sided exact bounds)
    if k > 0:
        assert binom.sf(k - 1, n, lo) == pytest.approx(0.025, abs=1e-6)
    if k < n:
        assert binom.cdf(k, n, hi) == pytest.approx(0.025, abs=1e-6)


def test_clopper_pearson_agrees_with_scipy_binomtest():
    from scipy.stats import binomtest

    for k, n in [(0, 10), (3, 10), (97, 100), (360, 360)]:
        ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert intervals.clopper_pearson(k, n) == pytest.approx((ref.low, ref.high), abs=1e-9)
    with pytest.raises(ValueError):
        intervals.clopper_pearson(5, 3)


def test_bootstrap_calibration_matches_a_loop_over_resamples():
    import certcal

    rng = np.random.default_rng(0)
    conf = rng.uniform(0.3, 1.0, 80)
    correct = (rng.uniform(size=80) < conf).astype(float)
    fast = bootstrap_calibration(conf, correct, 15, seed=4, n_boot=200)
    # the same resamples drawn as index lists, each metric computed by certcal itself
    w = np.random.default_rng(4).multinomial(80, np.full(80, 1 / 80), size=200)
    eces = [certcal.expected_calibration_error(np.repeat(conf, row), np.repeat(correct, row)) for row in w]
    w2 = np.random.default_rng(5).multinomial(80, np.full(80, 1 / 80), size=200)
    briers = [certcal.brier_score(np.repeat(conf, row), np.repeat(correct, row)) for row in w2]
    assert fast["ece"] == pytest.approx((np.quantile(eces, 0.025), np.quantile(eces, 0.975)), abs=1e-12)
    assert fast["brier"] == pytest.approx((np.quantile(briers, 0.025), np.quantile(briers, 0.975)), abs=1e-12)
    point = certcal.expected_calibration_error(conf, correct)
    assert fast["ece"][0] <= point + 0.05 and fast["ece"][1] >= point - 0.05


def test_t_interval_closed_form():
    m, lo, hi = intervals.t_interval([1.0, 3.0])
    # n = 2: half-width = t_{0.975, 1} * s / sqrt(2) with s = sqrt(2)  ->  12.706...
    assert m == 2.0 and hi - m == pytest.approx(12.7062047, rel=1e-6) and m - lo == pytest.approx(hi - m)
    assert intervals.t_interval([5.0]) == (5.0, 5.0, 5.0)
    assert intervals.separated((0, 1), (1.5, 2)) and not intervals.separated((0, 1), (0.9, 2))


def test_renderers_show_value_with_interval():
    rows = dict(metric_rows({"accuracy": 0.9, "accuracy_ci_low": 0.85, "accuracy_ci_high": 0.94, "n": 3}))
    assert rows == {"accuracy": "0.9 [0.85, 0.94]", "n": "3"}
    cols, cells = table_cells(["model", "acc", "acc_ci_low", "acc_ci_high"], [["a", 0.5, 0.4, 0.6]])
    assert cols == ["model", "acc"] and cells == [["a", "0.5 [0.4, 0.6]"]]


def _record(model, seed, metrics, dataset="builtin:digits"):
    from robustsuite.report import Section

    return {"unit": {"id": f"u-{model}-{seed}", "method": "overview", "model": model, "dataset": dataset,
                     "seed": seed, "group": f"g-{model}"},
            "status": "done", "seconds": 1.0, "error": None, "samples": [],
            "section": Section("t", "s", metrics=metrics).to_dict()}


def test_seed_groups_report_mean_and_t_interval_and_keep_seed_free_intervals():
    from robustsuite import run as run_mod

    recs = [_record("m", s, {"accuracy": 0.8, "accuracy_ci_low": 0.7, "accuracy_ci_high": 0.9, "ece": e})
            for s, e in ((0, 0.10), (1, 0.14))]
    rep = run_mod.assemble(recs, config={}, seed=0, device="cpu", created="now", command="x")
    (sec,) = rep["sections"].values()
    m = sec["metrics"]
    assert (m["accuracy"], m["accuracy_ci_low"], m["accuracy_ci_high"]) == (0.8, 0.7, 0.9)  # seed-free
    mean, lo, hi = intervals.t_interval([0.10, 0.14])
    assert (m["ece"], m["ece_ci_low"], m["ece_ci_high"]) == pytest.approx((mean, lo, hi))
    assert sec["seeds"] == [0, 1] and "2 seeds" in sec["summary"] and "0.12" in sec["summary"]


def test_comparisons_say_when_intervals_overlap():
    from robustsuite import run as run_mod

    def acc(v, lo, hi):
        return {"accuracy": v, "accuracy_ci_low": lo, "accuracy_ci_high": hi}

    recs = [_record("a", 0, acc(0.90, 0.85, 0.94)), _record("b", 0, acc(0.88, 0.83, 0.92)),
            _record("c", 0, acc(0.50, 0.40, 0.60))]
    rep = run_mod.assemble(recs, config={}, seed=0, device="cpu", created="now", command="x")
    notes = {k: " ".join(s["notes"]) for k, s in rep["sections"].items()}
    assert "NOT separated" in notes["overview:a"] and "b 0.88" in notes["overview:a"]
    ab_note = next(n for n in rep["sections"]["overview:a"]["notes"] if "vs b" in n)
    ac_note = next(n for n in rep["sections"]["overview:a"]["notes"] if "vs c" in n)
    assert "NOT separated" in ab_note and "NOT" not in ac_note and "separated" in ac_note
