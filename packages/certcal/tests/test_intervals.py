"""Intervals and the fixed-set curve: CA/CBS/CCE intervals (robustsuite_common), common_set_curve, ACE ECE intervals."""

import pytest

from certcal import (
    BetaACE,
    CertifyResult,
    certified_calibration_curve,
    certify,
    common_set_curve,
)


@pytest.fixture(scope="module")
def cert(noisy_model, digits):
    _, _, xte, yte = digits
    return certify(noisy_model, xte[:120], sigma=0.25, n0=50, n=500, batch_size=8192, seed=0, return_scores=True), yte[:120].numpy()


def test_curve_intervals_are_the_shared_toolkit(cert):
    """CA is robustsuite_common's Clopper-Pearson interval, CBS its BCa bootstrap of the per-input Brier terms
    (Theorem 3.3) over the certified inputs: the same numbers, not a copy of the method."""
    import certcal
    from robustsuite_common.intervals import mean_interval, proportion

    c, y = cert
    curve = certified_calibration_curve(c, y, radii=[0.25], methods=("exact",), n_boot=60, seed=7)
    (row,) = curve.rows
    mask = c.certified_at(0.25)
    assert row.certified_accuracy_ci == proportion(int((mask & (c.prediction == y)).sum()), y.size).ci
    b = certcal.confidence_bounds(c.scores[mask], sigma=c.sigma, radius=0.25, alpha=c.alpha)
    corr = (c.prediction == y)[mask].astype(float)
    terms = corr * (1 - b.lower) ** 2 + (1 - corr) * b.upper ** 2
    assert row.cbs == pytest.approx(terms.mean(), abs=1e-12)
    assert row.cbs_ci == pytest.approx(mean_interval(terms, seed=7, n_resamples=60, bounds=(0.0, 1.0)).ci, abs=1e-12)


def test_curve_intervals_contain_estimates(cert):
    c, y = cert
    curve = certified_calibration_curve(c, y, radii=[0.0, 0.25], methods=("exact",), n_boot=50)
    for r in curve.rows:
        lo, hi = r.certified_accuracy_ci
        assert lo <= r.certified_accuracy <= hi
        if r.n_certified:
            assert r.cbs_ci[0] <= r.cbs_ci[1] and r.cce_ci["exact"][0] <= r.cce_ci["exact"][1]
    assert certified_calibration_curve(c, y, radii=[0.0], methods=("exact",)).rows[0].cbs_ci is None
    with pytest.raises(ValueError, match="n_boot"):
        certified_calibration_curve(c, y, radii=[0.0], n_boot=-1)


def test_common_set_curve_is_monotone_in_radius(cert):
    c, y = cert
    radii = [0.0, 0.1, 0.2, 0.3, 0.4]
    cs = common_set_curve(c, y, radii=radii, n_boot=50)
    assert cs.n_inputs == int(c.certified_at(0.4).sum()) > 0
    # exact property: the certified confidence boxes nest as r grows, so both worst cases are non-decreasing
    assert all(b >= a - 1e-12 for a, b in zip(cs.cbs, cs.cbs[1:], strict=False))
    assert all(b >= a - 1e-12 for a, b in zip(cs.cce, cs.cce[1:], strict=False))
    assert cs.cbs[-1] > cs.cbs[0] and cs.diff_cbs_ci[0] > 0
    # the same inputs at every radius: r=0 on the fixed set differs from the curve's per-radius set in general
    with pytest.raises(ValueError, match="no input is certified"):
        common_set_curve(c, y, radii=[0.0, 100.0], n_boot=5)
    with pytest.raises(TypeError, match="certificate"):
        common_set_curve(CertifyResult(prediction=c.prediction, radius=c.radius, p_lower=c.p_lower, counts=c.counts,
                                       sigma=c.sigma, n0=c.n0, n=c.n, alpha=c.alpha), y, radii=radii)


def test_ace_ece_intervals(plain_model, digits):
    _, _, xte, yte = digits
    res = BetaACE.from_configuration("lower_label", norm="linf", steps=10)(plain_model, xte[:200], yte[:200], 0.1)
    d = res.ece_intervals(n_boot=100, seed=0)
    assert d["clean_ece_ci"][0] <= d["clean_ece"] <= d["clean_ece_ci"][1]
    assert d["adv_ece_ci"][0] <= d["adv_ece"] <= d["adv_ece_ci"][1]
    assert d["accuracy_ci"][0] <= d["accuracy"] <= d["accuracy_ci"][1]
    assert d["diff_ece"] == pytest.approx(d["adv_ece"] - d["clean_ece"])
