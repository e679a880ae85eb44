"""The verdict's ``transductive-gain`` check (transduct_attack.audit): the rule at its boundaries, the statistic
against a closed form on constructed outcomes (fail, warn, pass), DENT over an adversarially trained digits CNN
(the outcome, agreement with the games it played, the model untouched), the not-applicable cases, and the
experiment's ``audit`` preset giving the function's check."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import transduct_attack as ta
from robustsuite_common.config import ConfigError, from_dict
from robustsuite_common.experiment import MemoryStore, Split
from robustsuite_common.intervals import Interval
from robustsuite_common.testing import snapshot
from transduct_attack import experiment as E
from transduct_attack.audit import _gain, gain_check_from, gain_status

EPS = 1e-9


def iv(lo, hi):
    return Interval((lo + hi) / 2, lo, hi)


# --- the rule at its boundaries ------------------------------------------------------------------------------------


@pytest.mark.parametrize("t_low, a_low, status", [
    (EPS, 0.0, "fail"),       # the transfer gain lies above 0, the adaptive gain's interval reaches 0
    (EPS, -0.1, "fail"),      # ... or lies below it
    (0.0, 0.0, "pass"),       # no claimed gain (its interval reaches 0): nothing to vanish
    (EPS, EPS, "pass"),       # the gain survives the adaptive attack
])
def test_fail_exactly_when_the_transfer_gain_is_clear_and_the_adaptive_gain_is_not(t_low, a_low, status):
    got, why = gain_status(iv(t_low, 0.3), iv(a_low, 0.3), iv(-0.05, 0.0))
    assert got == status, why


@pytest.mark.parametrize("d_low, status", [(EPS, "warn"), (0.0, "pass"), (-EPS, "pass")])
def test_warn_exactly_when_the_adaptive_drop_lies_above_zero(d_low, status):
    got, why = gain_status(iv(-0.1, 0.2), iv(-0.2, 0.1), iv(d_low, 0.2))
    assert got == status, why


def _outcomes(n_base, n_transfer, n_adaptive, n=100):
    """Nested robust sets on n points: the base's first n_base, Γ's first n_transfer / n_adaptive."""
    k = np.arange(n)
    return k < n_base, k < n_transfer, k < n_adaptive


@pytest.mark.parametrize("counts, status", [((30, 50, 30), "fail"), ((30, 50, 42), "warn"), ((30, 50, 50), "pass")])
def test_constructed_outcomes_give_the_closed_form_statistic_and_status(counts, status):
    base, transfer, adaptive = _outcomes(*counts)
    weaker = np.ones(100, dtype=bool)  # an adaptive attack that breaks nothing is not the strongest
    c = gain_check_from(base, transfer, {"gmsa-avg": weaker, "fpa": adaptive}, n_boot=1000)
    assert c.statistic == pytest.approx((counts[2] - counts[0]) / 100)
    assert c.interval[0] <= c.statistic <= c.interval[1]
    assert (c.id, c.group, c.status, c.n) == ("transductive-gain", "lenses", status, 100)
    assert "strongest: FPA" in c.detail and bool(c.next_step) == (status != "pass")


def test_a_model_not_declared_adaptive_is_not_applicable_and_plays_nothing(digits, mlp_bn):
    _, _, x, y = digits
    for model in (mlp_bn, ta.StaticDefense(mlp_bn)):
        c = ta.transductive_gain_check(model, x[:8], y[:8], eps=0.1)
        assert c.status == "not-applicable" and "not declared test-time adaptive" in c.detail and c.statistic is None
    with pytest.raises(TypeError, match="model"):
        ta.transductive_gain_check("dent", x[:8], y[:8], eps=0.1)
    with pytest.raises(ValueError, match="base_attack"):
        ta.transductive_gain_check(ta.DENT(mlp_bn), x[:8], y[:8], eps=0.1, base_attack="square")


# --- DENT over an adversarially trained digits CNN ----------------------------------------------------------------


@pytest.fixture(scope="module")
def at_base(digits):
    xtr, ytr, _, _ = digits
    return ta.dent_base_model(xtr[:600], ytr[:600], eps=0.1, epochs=3, adv_steps=3, seed=0)


def test_dent_keeps_a_small_gain_and_the_check_reads_its_own_games(digits, at_base):
    """The paper's Table 2 reading on digits: DENT adds a few points over its AT base and the adaptive attacks take
    none of them back here (T = 1, small budgets): pass, with the statistic recomputed from the games."""
    _, _, x, y = digits
    before = snapshot(at_base)
    c, tab = _gain(ta.DENT(at_base), x[:64], y[:64], eps=0.1, T=1, pgd_steps=5, base_attack="pgd", batch_size=64,
                   n_boot=1000)
    before.assert_same(at_base)
    base = tab.cell("static", "none").game.correct & tab.cell("static", "pgd").game.correct
    strongest = min(ta.MODEL_SPACE_ATTACKS, key=lambda a: tab.cell("defense", a).accuracy)
    assert c.statistic == pytest.approx(tab.cell("defense", strongest).accuracy - base.mean())
    assert c.status == "pass" and c.statistic >= 0 and c.n == 64
    assert f"{tab.cell('defense', 'pgd').accuracy:.3f}" in c.detail


def test_autoattack_on_the_base_is_at_least_as_strong_as_pgd(digits, at_base):
    pytest.importorskip("pyautoattack")
    _, _, x, y = digits
    c, tab = _gain(ta.DENT(at_base), x[:16], y[:16], eps=0.1, T=1, pgd_steps=3, base_attack="autoattack",
                   n_untargeted=1, n_targeted=0, n_boot=200)
    pgd_only = (tab.cell("static", "none").game.correct & tab.cell("static", "pgd").game.correct).mean()
    assert "standard AutoAttack" in c.rule and "the attacks' difference" in c.detail and c.statistic >= tab.cell("defense", "fpa").accuracy - pgd_only - EPS


# --- the experiment's audit preset ---------------------------------------------------------------------------------


def test_audit_preset_gives_the_functions_check_in_result_checks(digits, at_base, monkeypatch):
    xtr, ytr, xte, yte = digits
    data = E.Data(train=Split(xtr, ytr), test=Split(xte, yte))
    models = E.Models(standard=at_base, adversarial=at_base)
    assert E.preset("audit").tables == () and E.preset("audit").audit.adaptive == "none"
    none = E.run(models, data, E.preset("audit"), progress=False)
    assert [c.status for c in none.checks] == ["not-applicable"] and none.tables == {}
    cfg = from_dict(E.Config, {"audit": {"adaptive": "dent", "points": 32, "base_attack": "pgd"},
                               "attack": {"pgd_steps": 3}}, base=E.preset("audit"))
    store = MemoryStore()
    res = E.run(models, data, cfg, store=store, progress=False)
    idx = ta.draw_points(len(yte), n=32, seed=0)
    direct = ta.transductive_gain_check(ta.DENT(at_base), xte[idx], yte[idx], eps=0.1, pgd_steps=3,
                                        base_attack="pgd", batch_size=100, evidence=res.checks[0].evidence)
    assert res.checks == (direct,)
    assert {r["attack"] for r in res.rows("transductive_gain")} >= {"clean", "PGD (white-box)", "FPA", "GMSA-MIN"}
    back = E.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.checks == res.checks and back.to_dict() == res.to_dict()
    # the audit's games are checkpointed: a second run replays none of them and gives the same result
    from transduct_attack import tables

    calls: list[int] = []
    real = tables.play_game
    monkeypatch.setattr(tables, "play_game", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = E.run(models, data, cfg, store=store, progress=False)
    assert calls == [] and again.to_dict() == res.to_dict()


def test_audit_settings_are_checked_before_any_game(digits, mlp_std):
    xtr, ytr, xte, yte = digits
    with pytest.raises((ConfigError, ValueError), match="tables"):
        from_dict(E.Config, {"tables": []}, base=E.preset("demo"))
    cfg = from_dict(E.Config, {"audit": {"adaptive": "dent", "points": 10_000}}, base=E.preset("audit"))
    data = E.Data(train=Split(xtr, ytr), test=Split(xte, yte))
    with pytest.raises(ValueError, match="audit.points"):
        E.run(E.Models(mlp_std, mlp_std), data, cfg, progress=False)
    cfg = from_dict(E.Config, {"audit": {"adaptive": "dent"}}, base=E.preset("audit"))
    with pytest.raises(ValueError, match="BatchNorm"):
        E.run(E.Models(mlp_std, mlp_std), data, cfg, progress=False)  # mlp_std has no BatchNorm for DENT


def test_paired_intervals_resample_points_not_rows():
    """Moving which points the base gets right (same count) changes the adaptive gain's interval: the same 30
    points give a zero-width interval, disjoint sets a wide one; a difference of independent proportions would not
    see it."""
    base, transfer, adaptive = _outcomes(30, 50, 30)
    aligned = gain_check_from(base, transfer, {"fpa": adaptive}, n_boot=1000)
    shifted = gain_check_from(np.roll(base, 50), transfer, {"fpa": adaptive}, n_boot=1000)
    assert aligned.interval == (0.0, 0.0)
    assert aligned.statistic == shifted.statistic
    assert (shifted.interval[1] - shifted.interval[0]) > (aligned.interval[1] - aligned.interval[0])


def test_inputs_are_not_changed(digits, at_base):
    _, _, x, y = digits
    xs, ys = x[:8].clone(), y[:8].clone()
    ta.transductive_gain_check(ta.DENT(at_base), xs, ys, eps=0.1, pgd_steps=1, base_attack="pgd", n_targeted=0,
                               n_boot=100)
    assert torch.equal(xs, x[:8]) and torch.equal(ys, y[:8])
