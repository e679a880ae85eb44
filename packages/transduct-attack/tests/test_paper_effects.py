"""The paper's orderings reproduced at small scale on scikit-learn's digits (Tables 1, 3 and 4).

Budgets are tiny (PGD 10–20 steps, T = 2–3, a few epochs), so the margins asserted are the ones
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
    eps = 0.2
    x, y = xte[:100], yte[:100]
    g = torch.Generator().manual_seed(1)
    std = train_classifier(build(lambda: SmallCNN(width=16), g), xtr, ytr, epochs=15, generator=g)

    def net(gen):
        return build(lambda: DomainAdversarialNet(width=16), gen)

    dann = DANN(xtr, ytr, base_model=std, make_network=net, epochs=20, alpha_max=1.0)
    pgd = PGD(steps=20)
    transfer = play_game(TransferPGD(solver=pgd), dann, x, y, eps=eps, batch_size=100).accuracy
    gmsa = play_game(GMSA(mode="min", T=4, solver=pgd, scale_min_steps=False), dann, x, y, eps=eps,
                     batch_size=100).accuracy
    # measured 0.16 vs 0.26; at this scale DANN's transfer robustness is only that of any independently
    # trained network (about 0.23), so the gap is smaller than the paper's 97% -> 6% on MNIST
    assert gmsa < transfer - 0.05, (gmsa, transfer)


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
