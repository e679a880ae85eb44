"""FPA / GMSA mechanics (Algorithms 1–2, A.1.3) and the transfer attacks."""

from __future__ import annotations

import pytest
import torch
from _fakes import Offset, RandomDefense

from transduct_attack import (
    FPA,
    GMSA,
    PGD,
    RMC,
    NoAttack,
    StaticDefense,
    ThreatModel,
    TransferAutoAttack,
    TransferPGD,
    play_game,
)


class CountingPGD(PGD):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.calls = []

    def run(self, models, x, y, **kw):
        self.calls.append((len(models), kw.get("aggregate"), kw.get("steps_scale")))
        return super().run(models, x, y, **kw)


@pytest.fixture()
def batch():
    g = torch.Generator().manual_seed(0)
    return torch.rand(10, 1, 8, 8, generator=g), torch.randint(0, 10, (10,), generator=g)


@pytest.mark.parametrize("mode", ["avg", "min"])
def test_gmsa_attacks_the_growing_model_set(batch, mode):
    x, y = batch
    solver = CountingPGD(steps=2)
    res = GMSA(mode=mode, T=3, solver=solver)(x, y, eps=0.1, defense=RandomDefense([]),
                                               generator=torch.Generator().manual_seed(0))
    sizes = [c[0] for c in solver.calls]
    assert sizes == [1, 2, 3, 4]
    assert all(c[1] == mode for c in solver.calls)
    scales = [c[2] for c in solver.calls]
    assert scales == ([1, 2, 3, 4] if mode == "min" else [1, 1, 1, 1])  # A.1.3: MIN steps × (i+1)
    assert len(res.round_errors) == 4


def test_fpa_attacks_only_the_last_model(batch):
    x, y = batch
    solver = CountingPGD(steps=2)
    FPA(T=3, solver=solver)(x, y, eps=0.1, defense=RandomDefense([]), generator=torch.Generator())
    assert [c[0] for c in solver.calls] == [1, 1, 1, 1]


@pytest.mark.parametrize("attack", [FPA(T=4, solver=PGD(steps=2)), GMSA(mode="avg", T=4, solver=PGD(steps=2))])
def test_line5_selects_the_round_with_largest_error(batch, attack):
    x, _ = batch
    d = RandomDefense([])
    with torch.no_grad():
        y = d.base_model(x).argmax(1)  # the base model is right on every point
    res = attack(x, y, eps=0.02, defense=d, generator=torch.Generator().manual_seed(2))
    assert res.round_errors[res.selected_round] == max(res.round_errors)
    assert len(set(res.round_errors)) > 1  # the rounds differ, so the selection is not vacuous


def test_t0_is_the_transfer_attack_on_a_stateless_defense(batch):
    x, y = batch
    d = RandomDefense([])
    a = FPA(T=0, solver=PGD(steps=3))(x, y, eps=0.1, defense=d, generator=torch.Generator().manual_seed(4))
    b = TransferPGD(solver=PGD(steps=3))(x, y, eps=0.1, defense=d, generator=torch.Generator().manual_seed(4))
    c = GMSA(T=0, solver=PGD(steps=3))(x, y, eps=0.1, defense=d, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a.x_adv, b.x_adv) and torch.equal(a.x_adv, c.x_adv)


def test_attacks_do_not_mutate_and_are_deterministic(batch):
    x, y = batch
    x0 = x.clone()
    runs = [GMSA(mode="min", T=2, solver=PGD(steps=2))(x, y, eps=0.1, defense=RandomDefense([]),
                                                       generator=torch.Generator().manual_seed(9)) for _ in range(2)]
    assert torch.equal(runs[0].x_adv, runs[1].x_adv) and torch.equal(x, x0)
    assert runs[0].to_dict()["attack"] == "gmsa-min"


def test_non_leaking_attacker_keeps_its_own_simulated_state(digits, mlp_std):
    xtr, ytr, xte, yte = digits
    rmc = RMC(mlp_std, xtr[:200], ytr[:200], k=8, aug_eps=0.1, aug_steps=2, max_epochs=1, patience=1)
    seen = []

    class Probe(FPA):
        def _attack(self, x, y, *, eps, defense, generator, state):
            seen.append(state)
            return super()._attack(x, y, eps=eps, defense=defense, generator=generator, state=state)

    play_game(Probe(T=0, solver=PGD(steps=1)), rmc, xte[:4], yte[:4], eps=0.1, batch_size=2,
              threat_model=ThreatModel(leak_state=False))
    assert seen[0].inner is mlp_std    # the public pretrained model first (read through the logits adapter) ...
    assert seen[1].inner is not mlp_std     # ... then the attacker's own simulation of Γ, not the defender's state


def test_transfer_pgd_targets_the_static_base(batch):
    x, y = batch
    base = Offset(torch.zeros(10))
    res = TransferPGD(solver=PGD(steps=5))(x, y, eps=0.2, defense=StaticDefense(base),
                                           generator=torch.Generator().manual_seed(0))
    from transduct_attack import cross_entropy

    with torch.no_grad():
        assert float(cross_entropy(base(res.x_adv), y).mean()) > float(cross_entropy(base(x), y).mean())


def test_transfer_autoattack_restores_global_rng(digits, mlp_std):
    pytest.importorskip("pyautoattack")
    _, _, xte, yte = digits
    state = torch.random.get_rng_state()
    res = TransferAutoAttack(version="custom", attacks=["apgd-ce"])(
        xte[:16], yte[:16], eps=0.2, defense=StaticDefense(mlp_std), generator=torch.Generator().manual_seed(0))
    assert torch.equal(torch.random.get_rng_state(), state)
    assert float((res.x_adv - xte[:16]).abs().max()) <= 0.2 + 1e-6
    with torch.no_grad():
        assert float((mlp_std(res.x_adv).argmax(1) == yte[:16]).float().mean()) < 0.5


def test_autoattack_budget_parameters_reach_the_adversary(digits, mlp_std, monkeypatch):
    """n_iter / n_restarts set APGD's (and FAB's) budgets on the AutoAttack object it runs; None keeps AutoAttack's
    own (100 iterations; 5 APGD restarts in the custom version)."""
    pyautoattack = pytest.importorskip("pyautoattack")
    seen = []

    def record(self, x, y, batch_size=250, **kw):
        seen.append((self.apgd.n_iter, self.apgd.n_restarts, self.apgd_targeted.n_iter, self.fab.n_iter))
        return x

    monkeypatch.setattr(pyautoattack.AutoAttack, "run_standard_evaluation", record)
    _, _, xte, yte = digits
    for kwargs in ({}, {"n_iter": 7, "n_restarts": 1}):
        TransferAutoAttack(version="custom", attacks=["apgd-ce"], **kwargs)(
            xte[:4], yte[:4], eps=0.1, defense=StaticDefense(mlp_std), generator=torch.Generator().manual_seed(0))
    assert seen == [(100, 5, 100, 100), (7, 1, 7, 7)]
    with pytest.raises(ValueError, match="n_iter"):
        TransferAutoAttack(n_iter=0)


def test_adaptive_autoattack_attacks_dent_through_its_adaptation(digits, mlp_bn):
    """DENT-AA (Table 2): AutoAttack re-adapts DENT on every batch it queries, and the examples it finds break the
    adapted model; margin: the Clopper-Pearson intervals of clean and attacked accuracy do not overlap."""
    pytest.importorskip("pyautoattack")
    from robustsuite_common.intervals import proportion
    from transduct_attack import DENT, AdaptiveAutoAttack

    _, _, xte, yte = digits
    x, y = xte[:24], yte[:24]
    calls = []

    class CountingDENT(DENT):
        def adapt(self, x, *, state, generator):
            calls.append(x.shape[0])
            return super().adapt(x, state=state, generator=generator)

    dent = CountingDENT(mlp_bn, steps=2)
    res = AdaptiveAutoAttack(version="custom", attacks=["apgd-ce"])(
        x, y, eps=0.2, defense=dent, generator=torch.Generator().manual_seed(0))
    assert len(calls) > 10  # every AutoAttack query ran DENT's adaptation
    assert float((res.x_adv - x).abs().max()) <= 0.2 + 1e-6
    with torch.no_grad():  # DENT adapts under no_grad too
        clean = int((dent.adapt(x, state=None, generator=torch.Generator()).predict(x) == y).sum())
        attacked = int((dent.adapt(res.x_adv, state=None, generator=torch.Generator()).predict(res.x_adv) == y).sum())
    assert proportion(attacked, 24).high < proportion(clean, 24).low, (clean, attacked)


def test_bad_attack_arguments(batch):
    x, y = batch
    with pytest.raises(ValueError, match="mode"):
        GMSA(mode="max")
    with pytest.raises(ValueError, match="T"):
        FPA(T=-1)
    with pytest.raises(TypeError, match="defense"):
        NoAttack()(x, y, eps=0.1, defense=object(), generator=torch.Generator())
    with pytest.raises(ValueError, match="custom"):
        TransferAutoAttack(version="custom")


def test_cli_demo_runs_offline(tmp_path, capsys):
    from transduct_attack.cli import main

    out = tmp_path / "r.json"
    assert main(["demo", "--defense", "static", "--attacks", "none,pgd", "--points", "8", "--epochs", "1",
                 "--json", str(out)]) == 0
    import json

    data = json.loads(out.read_text())
    assert [r["attack"] for r in data] == ["none", "pgd"]
    assert "accuracy" in capsys.readouterr().out
