"""The paper's orderings reproduced at small scale on scikit-learn's digits (Tables 1, 3 and 4).

Budgets are tiny (PGD 10–20 steps, T = 2–8, a few epochs), so the margins asserted are the ones
measured to hold with room at this scale, not the paper's magnitudes; see the README for the numbers.
"""

from __future__ import annotations

import pytest
import torch

from transduct_attack import DANN, FPA, GMSA, PGD, RMC, TADV, NoAttack, StaticDefense, TransferPGD, play_game
from transduct_attack.networks import MLP, DomainAdversarialNet, SmallCNN, build
from transduct_attack.training import train_classifier


def test_table1_rmc_with_standard_base_is_broken_by_fpa_and_gmsa(digits, mlp_std):
    xtr, ytr, xte, yte = digits
    eps = 0.2
    x, y = xte[:30], yte[:30]
    rmc = RMC(mlp_std, xtr, ytr, k=128, aug_eps=eps, aug_steps=10, aug_step_size=None, lr=2e-3,
              max_epochs=10, patience=2)
    pgd = PGD(steps=10)
    acc = {}
    for attack in (NoAttack(), TransferPGD(solver=pgd), FPA(T=2, solver=pgd), GMSA(mode="avg", T=2, solver=pgd),
                   GMSA(mode="min", T=2, solver=pgd)):
        acc[attack.name] = play_game(attack, rmc, x, y, eps=eps, batch_size=6, seed=0).accuracy
    static = play_game(TransferPGD(solver=pgd), StaticDefense(mlp_std), x, y, eps=eps, batch_size=30).accuracy
    assert acc["none"] > 0.8
    assert static < 0.2                      # the standard base model alone has no robustness ...
    assert acc["pgd"] > 0.6                  # ... RMC looks robust under the transfer attack ...
    for name in ("fpa", "gmsa-avg", "gmsa-min"):
        assert acc[name] < acc["pgd"] - 0.35, (name, acc)  # ... and FPA/GMSA break it


@pytest.mark.slow
def test_table3_dann_under_gmsa_below_transfer(digits):
    xtr, ytr, xte, yte = digits
    # eps 0.2 is the smallest L∞ budget at which white-box PGD drives the standard 8×8 CNN to ~0 (at 0.1 it
    # keeps ~55%, so no attack, adaptive or not, can go far below transfer there); T = 8 follows the paper's
    # T = 9 more closely than the T = 2–4 that left GMSA level with transfer.
    eps = 0.2
    x, y = xte[:100], yte[:100]
    g = torch.Generator().manual_seed(1)
    std = train_classifier(build(lambda: SmallCNN(width=16), g), xtr, ytr, epochs=15, generator=g)

    def net(gen):
        return build(lambda: DomainAdversarialNet(width=16), gen)

    dann = DANN(xtr, ytr, base_model=std, make_network=net, epochs=20, alpha_max=1.0)
    pgd = PGD(steps=20)
    white_box = play_game(TransferPGD(solver=pgd), StaticDefense(std), x, y, eps=eps, batch_size=100).accuracy
    transfer = play_game(TransferPGD(solver=pgd), dann, x, y, eps=eps, batch_size=100).accuracy
    result = play_game(GMSA(mode="avg", T=8, solver=pgd), dann, x, y, eps=eps, batch_size=100)
    gmsa = result.accuracy
    assert white_box < 0.1, white_box          # the budget breaks the static base model ...
    assert transfer > white_box + 0.15, (transfer, white_box)  # ... DANN retrained on U' keeps some robustness
    # ... which GMSA-AVG removes: measured 0.26 -> 0.17 here (other seeds: 0.31 -> 0.11, 0.33 -> 0.20,
    # 0.30 -> 0.20); the paper's MNIST gap (96.7% -> 6.2%) does not reproduce on 8×8 digits: transfer PGD already drops any independently
    # trained net to ~0.25 at this budget, and below it the white-box floor rises (README, "DANN on 8×8 digits")
    assert gmsa < transfer - 0.08, (gmsa, transfer, result.selected_rounds)


def test_table4_tadv_above_static_adversarial_training_under_gmsa(digits):
    xtr, ytr, xte, yte = digits
    eps = 0.1
    x, y = xte[:100], yte[:100]

    def mk(gen):
        return build(lambda: MLP(hidden=64), gen)

    g = torch.Generator().manual_seed(2)
    static_at = train_classifier(mk(g), xtr, ytr, epochs=10, generator=g, adversarial_eps=eps, adv_steps=5)
    pgd = PGD(steps=20)
    # static AT under the white-box attack (TransferPGD on a static defense attacks the model itself)
    static = play_game(TransferPGD(solver=pgd), StaticDefense(static_at), x, y, eps=eps, batch_size=100).accuracy
    tadv = TADV(xtr, ytr, base_model=static_at, eps=eps, make_model=mk, epochs=10, adv_steps=5)
    gmsa = play_game(GMSA(mode="avg", T=2, solver=pgd), tadv, x, y, eps=eps, batch_size=100).accuracy
    assert gmsa > static + 0.03, (gmsa, static)
