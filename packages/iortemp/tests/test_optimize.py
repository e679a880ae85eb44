import math

import numpy as np
import pytest
from scipy import optimize

import iortemp


def step_q(x_min=-5.3, floor=0.2):
    """Piecewise-constant Q(T) in log10 T: flat 0.6 plateau for |x - x_min| > 3, steps down to a floor."""

    def q(t):
        d = abs(math.log10(t) - x_min)
        if d > 3:
            return 0.6
        return floor + round(d * 4) / 4 * 0.1

    return q


def test_naive_brent_bracket_raises_on_flat_q_but_search_finds_minimum():
    q = step_q()
    with pytest.raises(ValueError):
        optimize.minimize_scalar(lambda x: q(10**x), bracket=(-1.0, 0.0, 1.0), method="brent")
    calls = []

    def counted(t):
        calls.append(t)
        return q(t)

    res = iortemp.search_temperature(counted, init_temperature=1.0, max_evaluations=30, flat_patience=3)
    assert res.adversarial_accuracy == pytest.approx(0.2)
    assert abs(math.log10(res.temperature) + 5.3) <= 0.125 + 0.05
    assert len(calls) == len(set(calls)) == res.evaluations <= 30  # cached: each T evaluated once
    assert [t for t, _ in res.curve] == sorted(t for t, _ in res.curve)


def test_search_respects_budget_and_reports_exhaustion():
    res = iortemp.search_temperature(step_q(), init_temperature=1.0, max_evaluations=4)
    assert res.evaluations == 4 and res.budget_exhausted
    assert res.adversarial_accuracy == min(q for _, q in res.curve)


def test_entirely_flat_q_returns_without_error():
    res = iortemp.search_temperature(lambda t: 0.5, init_temperature=3.0, max_evaluations=10)
    assert res.adversarial_accuracy == 0.5 and not res.strict_bracket


def test_smooth_q_converges_to_minimum():
    res = iortemp.search_temperature(lambda t: (math.log10(t) - 1.37) ** 2, xatol=1e-3, max_evaluations=40,
                                     stall_patience=None)
    assert math.log10(res.temperature) == pytest.approx(1.37, abs=2e-3)
    assert res.strict_bracket


def test_deterministic():
    a = iortemp.search_temperature(step_q(), max_evaluations=20)
    b = iortemp.search_temperature(step_q(), max_evaluations=20)
    assert a == b


def test_bad_inputs():
    with pytest.raises(ValueError, match="log10_bounds"):
        iortemp.search_temperature(lambda t: 0.0, log10_bounds=(2, 1))
    with pytest.raises(ValueError, match="max_evaluations"):
        iortemp.search_temperature(lambda t: 0.0, max_evaluations=0)
    with pytest.raises(ValueError, match="init_temperature"):
        iortemp.search_temperature(lambda t: 0.0, init_temperature=-1)
    with pytest.raises(ValueError, match="finite"):
        iortemp.search_temperature(lambda t: float("nan"))
    with pytest.raises(TypeError, match="attack"):
        iortemp.optimize_temperature(lambda x: np.zeros((len(x), 2)), ["a"], [0], attack=None)


def test_min_norm_simplex_exact_cvxpy_and_brute_force_agree():
    rng = np.random.default_rng(0)
    for m in (2, 3, 4):
        v = rng.normal(size=(m, 6)) + rng.normal(size=6)  # correlated gradients
        g = v @ v.T
        a_exact = iortemp.min_norm_simplex(g, solver="exact")
        a_cvx = iortemp.min_norm_simplex(g, solver="cvxpy")
        assert a_exact.min() >= 0 and a_exact.sum() == pytest.approx(1.0)
        assert a_exact @ g @ a_exact == pytest.approx(a_cvx @ g @ a_cvx, rel=1e-5, abs=1e-8)
        # brute force on a simplex grid
        pts = rng.dirichlet(np.ones(m), size=20000)
        assert a_exact @ g @ a_exact <= np.einsum("ij,jk,ik->i", pts, g, pts).min() + 1e-12
    # two opposite gradients: the min-norm combination cancels them
    g = np.array([[1.0, -1.0], [-1.0, 1.0]])
    np.testing.assert_allclose(iortemp.min_norm_simplex(g), [0.5, 0.5])
    with pytest.raises(ValueError, match="gram"):
        iortemp.min_norm_simplex(np.zeros((2, 3)))


def test_stall_patience_stops_refining_a_plateau():
    q = step_q()
    full = iortemp.search_temperature(q, max_evaluations=40, stall_patience=None)
    short = iortemp.search_temperature(q, max_evaluations=40, stall_patience=3)
    assert short.adversarial_accuracy == full.adversarial_accuracy
    assert short.evaluations < full.evaluations
    with pytest.raises(ValueError, match="stall_patience"):
        iortemp.search_temperature(q, stall_patience=0)
