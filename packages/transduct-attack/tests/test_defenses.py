"""Each Γ: its mechanism checked against an independent computation, its randomness, its contract."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from transduct_attack import DANN, DENT, RMC, TADV, URejectron
from transduct_attack._adamod import AdaMod
from transduct_attack.dann import dann_alpha
from transduct_attack.dent import dent_objective
from transduct_attack.networks import MLP, DomainAdversarialNet, build, penultimate_features


def _gen(seed):
    return torch.Generator().manual_seed(seed)


# --- RMC -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rmc(digits, mlp_std):
    xtr, ytr, _, _ = digits
    return RMC(mlp_std, xtr[:300], ytr[:300], k=16, aug_eps=0.1, aug_steps=3, aug_step_size=None, lr=1e-3,
               max_epochs=3, patience=2)


def test_rmc_neighbours_match_brute_force(rmc, digits, mlp_std):
    _, _, xte, _ = digits
    dx, _ = rmc.augmented
    assert dx.shape[0] == 600  # D plus one adversarial copy
    got = set(rmc.neighbours(xte[:2]).tolist())
    fd = penultimate_features(mlp_std, dx).double().numpy()
    fx = penultimate_features(mlp_std, xte[:2]).double().numpy()
    want = set()
    for row in fx:
        d = ((fd - row) ** 2).sum(1)
        want |= set(np.argsort(d, kind="stable")[:16].tolist())
    assert got == want


def test_rmc_is_stateful_and_never_mutates_its_state(rmc, digits, mlp_std):
    _, _, xte, _ = digits
    before = {k: v.clone() for k, v in mlp_std.state_dict().items()}
    first = rmc.adapt(xte[:1], state=rmc.initial_state(), generator=_gen(0))
    assert first.state is first.model and first.model is not mlp_std
    second = rmc.adapt(xte[1:2], state=first.state, generator=_gen(1))
    assert all(torch.equal(v, mlp_std.state_dict()[k]) for k, v in before.items())
    changed = any(not torch.equal(a, b) for a, b in zip(first.model.parameters(), mlp_std.parameters(), strict=True))
    assert changed and second.model is not first.model
    assert rmc.model_of(first.state) is first.model


# --- DENT ------------------------------------------------------------------------------------------

def test_dent_objective_matches_eq8_brute_force():
    g = _gen(0)
    logits = torch.randn(7, 4, generator=g, dtype=torch.float64) * 3
    p = torch.softmax(logits, 1).numpy()
    ent = -(p * np.log(p)).sum()
    s = p.sum(0)
    ref = ent + (s * np.log(s)).sum()
    assert float(dent_objective(logits)) == pytest.approx(ref, rel=1e-10)
    assert math.isfinite(float(dent_objective(torch.tensor([[1e4, -1e4, 0.0]]))))


def test_adamod_matches_reference_update():
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = AdaMod([w], lr=0.1, betas=(0.9, 0.999), beta3=0.9)
    ref, m, v, s = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2), np.zeros(2)
    for t in range(1, 4):
        opt.zero_grad()
        (w ** 2).sum().backward()
        opt.step()
        g = 2 * ref
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        eta = 0.1 * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) / (np.sqrt(v) + 1e-8)
        s = 0.9 * s + 0.1 * eta
        ref = ref - np.minimum(eta, s) * m
    assert np.allclose(w.detach().numpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("optimizer", ["adamod", "adam"])
def test_dent_lowers_eq8_per_sample_and_is_position_aware(mlp_bn, digits, optimizer):
    _, _, xte, _ = digits
    x = xte[:20]
    x0 = x.clone()
    dent = DENT(mlp_bn, optimizer=optimizer, lr=0.05, batch_size=8)
    ad = dent.adapt(x, state=None, generator=_gen(0))
    with torch.no_grad():
        before = sum(float(dent_objective(mlp_bn(x[i:i + 8]))) for i in range(0, 20, 8))
        after_logits = ad.model(x)
        after = sum(float(dent_objective(after_logits[i:i + 8])) for i in range(0, 20, 8))
    assert after < before
    assert torch.equal(x, x0)
    with pytest.raises(ValueError, match="per-sample"):
        ad.model(x[:5])
    # deterministic (DENT draws no randomness)
    again = dent.adapt(x, state=None, generator=_gen(1))
    assert torch.equal(again.model(x), ad.model(x))


def test_dent_needs_batchnorm(mlp_std):
    with pytest.raises(ValueError, match="BatchNorm"):
        DENT(mlp_std)


# --- DANN ------------------------------------------------------------------------------------------

def test_dann_alpha_schedule():
    assert dann_alpha(0.0, 0.1) == 0.0
    assert dann_alpha(1.0, 0.1) == pytest.approx(0.1 * (2 / (1 + math.exp(-10)) - 1))
    vals = [dann_alpha(p / 10, 1.0) for p in range(11)]
    assert all(a < b for a, b in zip(vals, vals[1:], strict=False))


def test_dann_retrains_from_scratch_with_private_randomness(digits, mlp_std):
    xtr, ytr, xte, yte = digits

    def net(g):
        return build(lambda: DomainAdversarialNet(encoder="mlp", hidden=32), g)

    dann = DANN(xtr[:400], ytr[:400], base_model=mlp_std, make_network=net, epochs=15, batch_size=64, alpha_max=0.1)
    a = dann.adapt(xte[:50], state=None, generator=_gen(0))
    b = dann.adapt(xte[:50], state=None, generator=_gen(0))
    c = dann.adapt(xte[:50], state=None, generator=_gen(1))
    assert torch.equal(a.model(xte[:50]), b.model(xte[:50]))
    assert not torch.equal(a.model(xte[:50]), c.model(xte[:50]))
    assert float((a.predict(xte[:50]) == yte[:50]).float().mean()) > 0.6  # it learned the task


# --- TADV ------------------------------------------------------------------------------------------

def test_tadv_trains_a_fresh_robust_model(digits, mlp_std):
    xtr, ytr, xte, yte = digits

    def mk(g):
        return build(lambda: MLP(hidden=32), g)

    tadv = TADV(xtr[:400], ytr[:400], base_model=mlp_std, eps=0.1, make_model=mk, epochs=15, batch_size=64, adv_steps=2)
    a = tadv.adapt(xte[:30], state=None, generator=_gen(0))
    b = tadv.adapt(xte[:30], state=None, generator=_gen(0))
    c = tadv.adapt(xte[:30], state=None, generator=_gen(1))
    assert torch.equal(a.model(xte), b.model(xte)) and not torch.equal(a.model(xte), c.model(xte))
    assert a.model is not mlp_std
    assert float((a.predict(xte) == yte).float().mean()) > 0.5


# --- URejectron ------------------------------------------------------------------------------------

def test_urejectron_rejects_shifted_points_not_clean_ones(digits, mlp_std):
    xtr, _, xte, _ = digits
    rej = URejectron(mlp_std, xtr, epochs=3)
    # x̃: half clean test points, half strongly shifted points (a crude stand-in for an attack)
    shifted = (xte[50:100] + 0.4).clamp(0, 1)
    x_tilde = torch.cat([xte[:50], shifted])
    ad = rej.adapt(x_tilde, state=None, generator=_gen(0))
    accept_clean = float(ad.accepts(xte[100:200]).float().mean())
    accept_shift = float(ad.accepts(shifted).float().mean())
    assert accept_clean > 0.8 and accept_shift < 0.2


def test_bad_defense_arguments(digits, mlp_std):
    xtr, ytr, _, _ = digits
    with pytest.raises(ValueError, match="k"):
        RMC(mlp_std, xtr, ytr, k=0)
    with pytest.raises(ValueError, match="threshold"):
        URejectron(mlp_std, xtr, threshold=1.5)
    with pytest.raises(ValueError, match="optimizer"):
        DENT(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.BatchNorm1d(64)), optimizer="sgd")
    with pytest.raises(ValueError, match="train_y"):
        DANN(xtr, ytr[:5], base_model=mlp_std)


def test_urejectron_in_a_game_reports_eq1(digits, mlp_std):
    from transduct_attack import PGD, TransferPGD, play_game

    xtr, _, xte, yte = digits
    rej = URejectron(mlp_std, xtr[:600], epochs=3)
    res = play_game(TransferPGD(solver=PGD(steps=10)), rej, xte[:60], yte[:60], eps=0.3, batch_size=60)
    r = res.rounds[0]
    assert r.error_accepted is not None and r.rejection_rate is not None
    # the PGD points are far from D: most are rejected, so the error on accepted points stays far below
    # the error of the bare classifier (Figure 1(a))
    assert r.error_accepted < (1 - r.accuracy) - 0.3
    assert res.to_dict()["rejection_rate"] == r.rejection_rate


def test_dent_in_an_adversarially_ordered_game(mlp_bn, digits):
    from transduct_attack import NoAttack, ThreatModel, play_game

    _, _, xte, yte = digits
    dent = DENT(mlp_bn, optimizer="adam", lr=0.05, batch_size=16)
    nat = play_game(NoAttack(), dent, xte[:64], yte[:64], eps=0.0, batch_size=16)
    adv = play_game(NoAttack(), dent, xte[:64], yte[:64], eps=0.0, batch_size=16,
                    threat_model=ThreatModel(order="adversarial", pool_size=64))
    assert len(nat.rounds) == len(adv.rounds) == 4
    # label-sorted batches make Eq. 8's marginal-entropy term push predictions off the dominant class
    assert adv.accuracy < nat.accuracy


def test_urejectron_threshold_sweep_matches_games_at_each_threshold(digits, mlp_std):
    """Figure 1's τ sweep re-reads the trained discriminator; at every τ it equals the game played by a
    URejectron with that threshold (same seeds, so the same discriminator), and it is monotone in τ."""
    from transduct_attack import PGD, TransferPGD, play_game, rejection_curve

    xtr, _, xte, yte = digits
    x, y = xte[:40], yte[:40]
    attack = TransferPGD(solver=PGD(steps=5))
    taus = (0.1, 0.3, 0.5, 0.7, 0.9)
    curve = rejection_curve(attack, URejectron(mlp_std, xtr[:300], epochs=2), x, y, eps=0.3, thresholds=taus,
                            seed=3)
    for tau, err, rej in zip(taus, curve.error_accepted, curve.rejection_rate, strict=True):
        game = play_game(attack, URejectron(mlp_std, xtr[:300], epochs=2, threshold=tau), x, y, eps=0.3,
                         batch_size=40, seed=3)
        assert game.error_accepted == pytest.approx(err) and game.rejection_rate == pytest.approx(rej)
        # the per-sample record recomputes the cell, and agrees with the referee's per-sample verdicts
        adv_lp, clean_lp = torch.tensor(curve.adv_log_p_test), torch.tensor(curve.clean_log_p_test)
        wrong = torch.tensor(curve.predictions).ne(y)
        accepted = adv_lp < math.log(tau)
        assert int((wrong & accepted).sum()) / 40 == pytest.approx(err)
        assert int((clean_lp >= math.log(tau)).sum()) / 40 == pytest.approx(rej)
        assert list(game.predictions) == list(curve.predictions)
        assert [a for r in game.rounds for a in r.accepted] == accepted.tolist()
    assert list(curve.rejection_rate) == sorted(curve.rejection_rate, reverse=True)
    assert list(curve.error_accepted) == sorted(curve.error_accepted)
    assert len(set(curve.error_accepted)) > 1  # the sweep is not flat on this data
    for (lo, hi), v in zip(curve.error_ci, curve.error_accepted, strict=True):
        assert lo <= v <= hi
    with pytest.raises(ValueError, match="thresholds"):
        rejection_curve(attack, URejectron(mlp_std, xtr[:300]), x, y, eps=0.3, thresholds=(0.0, 0.5))


# --- the base model every Γ exposes -----------------------------------------------------------------

def test_base_model_is_the_model_each_defense_was_built_on(digits, mlp_std):
    from transduct_attack import StaticDefense
    from transduct_attack.threat_model import Adaptation, TransductiveDefense

    xtr, ytr, _, _ = digits
    built = [StaticDefense(mlp_std), URejectron(mlp_std, xtr[:20]),
             TADV(xtr[:20], ytr[:20], base_model=mlp_std, eps=0.1, epochs=1)]
    for d in built:  # the model itself, or the logits wrapper around it
        assert getattr(d.base_model, "inner", d.base_model) is mlp_std, type(d).__name__

    class Forgetful(TransductiveDefense):  # neither sets self._base nor overrides base_model
        def adapt(self, x, *, state, generator):
            return Adaptation(model=None)

    with pytest.raises(NotImplementedError, match="Forgetful must set self._base"):
        _ = Forgetful().base_model
