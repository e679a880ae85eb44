import math

import numpy as np
import pytest
import torch
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


class _Indexed:
    def __init__(self, logits):
        self.logits = np.asarray(logits, dtype=np.float32)

    def __call__(self, texts):
        return self.logits[[int(t) for t in texts]]


def _temperature_gated(q, n=40):
    """(model, texts, labels, attack) whose adversarial accuracy at adversary temperature T is round(q(T)*n)/n:
    the attack reads the temperature of the victim it is handed (the protocol wraps the model at T != 1)."""
    model = _Indexed([[2.0, 0.0]] * n + [[0.0, 2.0]] * n)
    texts, labels = [str(i) for i in range(n)], np.zeros(n, dtype=np.int64)
    seen = []

    def attack(victim, xs, ys, *, seed=0, progress=False):
        seen.append(progress)
        keep = round(q(getattr(victim, "temperature", 1.0)) * n)
        adv = [t if i < keep else str(int(t) + n) for i, t in enumerate(xs)]
        return iortemp.AttackOutput(adv, np.arange(n) >= keep, np.zeros(n, bool), np.zeros(n, np.int64))

    return model, texts, labels, attack, seen


@pytest.mark.parametrize("stall", [1, 2, None])
def test_optimize_temperature_honours_stall_patience_and_progress(stall):
    q = step_q()
    model, x, y, atk, seen = _temperature_gated(q)
    res = iortemp.optimize_temperature(model, x, y, atk, max_evaluations=40, stall_patience=stall, progress=True)
    ref = iortemp.search_temperature(lambda t: round(q(t) * 40) / 40, max_evaluations=40, stall_patience=stall)
    assert res.evaluations == ref.evaluations
    np.testing.assert_allclose(np.array(res.curve), np.array(ref.curve))
    assert seen and all(seen)  # progress reaches the attack


def test_stall_patience_changes_optimize_temperature_budget():
    q = step_q()
    model, x, y, atk, _ = _temperature_gated(q)
    short = iortemp.optimize_temperature(model, x, y, atk, max_evaluations=40, stall_patience=1)
    full = iortemp.optimize_temperature(model, x, y, atk, max_evaluations=40, stall_patience=None)
    assert short.evaluations < full.evaluations


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), -float("inf")])
def test_non_positive_or_non_finite_temperatures_rejected_before_any_attack(bad):
    model, x, y, atk, seen = _temperature_gated(step_q())
    with pytest.raises(ValueError, match="init_temperature"):
        iortemp.optimize_temperature(model, x, y, atk, init_temperature=bad)
    with pytest.raises(ValueError, match="temperature"):
        iortemp.evaluate_attack(model, x, y, atk, temperature=bad)
    with pytest.raises(ValueError, match="temperatures"):
        iortemp.temperature_sweep(model, x, y, atk, [1.0, bad])
    assert seen == []


@pytest.mark.parametrize("bounds", [(-400.0, 0.0), (0.0, 400.0), (float("-inf"), 1.0), (-1.0, float("nan"))])
def test_log10_bounds_outside_representable_temperatures_rejected(bounds):
    calls = []
    with pytest.raises(ValueError, match="log10_bounds"):
        iortemp.search_temperature(lambda t: calls.append(t) or 0.5, log10_bounds=bounds)
    assert calls == []


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e4, 1e8])
def test_search_and_protocol_finite_across_temperatures_and_logit_scales(scale):
    """T from 1e-3 to 1e7 on logits scaled to 1e8: finite confidences, the optimum found at the right T."""
    rng = np.random.default_rng(0)
    n = 40
    z = rng.normal(0, 3, size=(n, 3)) * scale
    y = z.argmax(1)
    model = _Indexed(z)
    x = [str(i) for i in range(n)]

    def attack(victim, xs, ys, seed=0):  # succeeds where the served float32 confidence is below 0.99
        p = torch.softmax(torch.as_tensor(np.asarray(victim(xs), dtype=np.float32)), 1).max(1).values.numpy()
        ok = p < 0.99
        return iortemp.AttackOutput(list(xs), ok, np.zeros(len(xs), bool), np.zeros(len(xs), np.int64))

    for t in (1e-3, 1e-1, 1.0, 1e3, 1e7):
        ev = iortemp.evaluate_attack(model, x, y, attack, temperature=t)
        assert np.isfinite(ev.clean_confidence.mean) and np.isfinite(ev.adversarial_confidence.mean)
        assert 0.0 <= ev.adversarial_accuracy <= 1.0
    t_cal = iortemp.calibrate_temperature(z, y)  # separable: bounded, finite, proportional to the scale
    assert np.isfinite(t_cal) and t_cal > 0
    res = iortemp.optimize_temperature(model, x, y, attack, init_temperature=t_cal, max_evaluations=12)
    assert np.isfinite(res.temperature) and res.temperature > 0
    assert all(np.isfinite(q) for _, q in res.curve)


@pytest.mark.parametrize("scale", [1e-16, 1e-8, 1e-4, 1.0, 1e4, 1e8, 1e16])
def test_min_norm_simplex_is_scale_invariant(scale):
    rng = np.random.default_rng(0)
    for m in (2, 3, 4):
        v = rng.normal(size=(m, 6)) + rng.normal(size=6)
        ref = iortemp.min_norm_simplex(v @ v.T)
        vs = v * np.sqrt(scale)
        got = iortemp.min_norm_simplex(vs @ vs.T)
        np.testing.assert_allclose(got, ref, atol=1e-7)
        pts = rng.dirichlet(np.ones(m), size=5000)
        g = v @ v.T
        assert got @ g @ got <= np.einsum("ij,jk,ik->i", pts, g, pts).min() + 1e-9


def test_min_norm_simplex_at_logit_scale_1e8():
    # parameter gradients of a loss on logits of 1e8: gradient entries ~1e8, Gram entries ~1e16 * d
    rng = np.random.default_rng(1)
    v = rng.normal(size=(3, 1000)) * 1e8
    a = iortemp.min_norm_simplex(v @ v.T)
    b = iortemp.min_norm_simplex(v @ v.T, solver="cvxpy")
    g = (v / 1e8) @ (v / 1e8).T
    assert a.min() >= 0 and a.sum() == pytest.approx(1.0)
    assert a @ g @ a <= b @ g @ b + 1e-9
    np.testing.assert_allclose(iortemp.min_norm_simplex(np.zeros((3, 3))), np.full(3, 1 / 3))


def test_search_stops_at_the_floor_of_q():
    calls = []

    def q(t):
        calls.append(t)
        return 0.0 if t > 10 else 0.5

    res = iortemp.search_temperature(q, init_temperature=100.0, max_evaluations=20)
    assert res.adversarial_accuracy == 0.0 and res.evaluations == len(calls) == 1
    full = iortemp.search_temperature(q, init_temperature=100.0, max_evaluations=20, floor=None)
    assert full.adversarial_accuracy == 0.0 and full.evaluations > 1
