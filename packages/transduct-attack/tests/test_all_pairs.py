"""Every attack × every defense of the package runs on a tiny setting (issue 17, defect 2)."""

from __future__ import annotations

import importlib.util

import pytest
import torch

import transduct_attack as ta
from transduct_attack.networks import MLP, DomainAdversarialNet, SmallCNN, build


def _solvers():
    return {"pgd": ta.PGD(steps=1), "ens": ta.PGDEnsemble(steps=1, n_untargeted=1, n_targeted=2)}


def _attacks():
    out = {"none": ta.NoAttack()}
    for sname, solver in _solvers().items():
        out[f"transfer-{sname}"] = ta.TransferPGD(solver=solver)
        out[f"fpa-{sname}"] = ta.FPA(T=1, solver=solver)
        out[f"gmsa-avg-{sname}"] = ta.GMSA(mode="avg", T=1, solver=solver)
        out[f"gmsa-min-{sname}"] = ta.GMSA(mode="min", T=1, solver=solver)
    if importlib.util.find_spec("pyautoattack") is not None:
        out["aa"] = ta.TransferAutoAttack(version="custom", attacks=["apgd-ce"])
    return out


@pytest.fixture(scope="module")
def tiny_defenses(digits):
    xtr, ytr, _, _ = digits
    xtr, ytr = xtr[:64], ytr[:64]
    g = torch.Generator().manual_seed(0)
    base = build(lambda: SmallCNN(width=4, hidden=8), g).eval()  # has BatchNorm: DENT needs it
    return {
        "static": ta.StaticDefense(base),
        "rmc": ta.RMC(base, xtr, ytr, k=4, aug_steps=1, max_epochs=1, patience=1),
        "dent": ta.DENT(base, steps=1),
        "dann": ta.DANN(xtr, ytr, base_model=base, epochs=1, batch_size=32,
                     make_network=lambda gen: build(lambda: DomainAdversarialNet(encoder="mlp", hidden=8), gen)),
        "tadv": ta.TADV(xtr, ytr, base_model=base, eps=0.1, epochs=1, batch_size=32, adv_steps=1,
                     make_model=lambda gen: build(lambda: MLP(hidden=8), gen)),
        "urejectron": ta.URejectron(base, xtr, epochs=1, batch_size=32),
    }


@pytest.mark.parametrize("attack_name", list(_attacks()))
@pytest.mark.parametrize("defense_name", ["static", "rmc", "dent", "dann", "tadv", "urejectron"])
def test_every_attack_runs_against_every_defense(tiny_defenses, digits, attack_name, defense_name):
    _, _, xte, yte = digits
    x, y = xte[:6], yte[:6]
    defense = tiny_defenses[defense_name]
    res = ta.play_game(_attacks()[attack_name], defense, x, y, eps=0.1, batch_size=3, seed=0)
    assert res.n == 6 and 0.0 <= res.accuracy <= 1.0
    assert (res.rejection_rate is not None) == defense.rejects
