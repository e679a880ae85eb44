"""The paper's orderings reproduced at small scale on scikit-learn's digits (Tables 1, 3 and 4).

Every ordering is asserted with a margin derived from the data, never a threshold measured on one machine:
either the two accuracies' 95 % Clopper-Pearson intervals do not overlap, or (two attacks scored on the same
points) the paired bootstrap 95 % interval of their difference excludes zero.
"""

from __future__ import annotations

import pytest
import torch

from robustsuite_common.intervals import paired_difference, proportion
from transduct_attack import (
    DANN,
    FPA,
    GMSA,
    PGD,
    RMC,
    TADV,
    NoAttack,
    StaticDefense,
    TransferPGD,
    play_game,
)
from transduct_attack.networks import MLP, DomainAdversarialNet, SmallCNN, build
from transduct_attack.training import train_classifier


def _ci(result):
    return proportion(int(result.correct.sum()), result.n).ci


def assert_below(low, high, what=""):
    """``low``'s accuracy interval lies entirely below ``high``'s (non-overlapping Clopper-Pearson intervals)."""
    lo_ci, hi_ci = _ci(low), _ci(high)
    assert lo_ci[1] < hi_ci[0], (what, low.accuracy, lo_ci, high.accuracy, hi_ci)


def assert_paired_below(low, high, what=""):
    """On the same points, ``high`` - ``low`` has a paired bootstrap interval above zero."""
    iv = paired_difference(high.correct, low.correct, seed=0)
    assert iv.low > 0, (what, low.accuracy, high.accuracy, iv)


def test_table1_rmc_with_standard_base_is_broken_by_fpa_and_gmsa(digits, mlp_std):
    xtr, ytr, xte, yte = digits
    eps = 0.2
    x, y = xte[:30], yte[:30]
    rmc = RMC(mlp_std, xtr, ytr, k=128, aug_eps=eps, aug_steps=10, aug_step_size=None, lr=2e-3,
              max_epochs=10, patience=2)
    pgd = PGD(steps=10)
    res = {}
    for attack in (NoAttack(), TransferPGD(solver=pgd), FPA(T=2, solver=pgd), GMSA(mode="avg", T=2, solver=pgd),
                   GMSA(mode="min", T=2, solver=pgd)):
        res[attack.name] = play_game(attack, rmc, x, y, eps=eps, batch_size=6, seed=0)
    static = play_game(TransferPGD(solver=pgd), StaticDefense(mlp_std), x, y, eps=eps, batch_size=30)
    assert_below(static, res["pgd"], "the standard base alone has no robustness, RMC looks robust under transfer")
    for name in ("fpa", "gmsa-avg", "gmsa-min"):
        assert_below(res[name], res["pgd"], f"{name} breaks RMC")


@pytest.mark.slow
def test_table3_dann_under_gmsa_below_transfer(digits):
    xtr, ytr, xte, yte = digits
    # eps 0.2 is the smallest L∞ budget at which white-box PGD drives the standard 8×8 CNN to ~0 (at 0.1 it
    # keeps ~55%, so no attack, adaptive or not, can go far below transfer there); T = 8 follows the paper's
    # T = 9 more closely than the T = 2–4 that left GMSA level with transfer. All 597 test points give the
    # paired comparison its power (the gap on 8×8 digits is 0.06–0.2, README "DANN on 8×8 digits"; at 200 points
    # a gap of 0.06 on this machine left the interval at [-0.005, 0.12], before and after the redesign).
    eps = 0.2
    x, y = xte, yte
    g = torch.Generator().manual_seed(1)
    std = train_classifier(build(lambda: SmallCNN(width=16), g), xtr, ytr, epochs=15, generator=g)

    def net(gen):
        return build(lambda: DomainAdversarialNet(width=16), gen)

    dann = DANN(xtr, ytr, base_model=std, make_network=net, epochs=20, alpha_max=1.0)
    pgd = PGD(steps=20)
    white_box = play_game(TransferPGD(solver=pgd), StaticDefense(std), x, y, eps=eps, batch_size=len(y))
    transfer = play_game(TransferPGD(solver=pgd), dann, x, y, eps=eps, batch_size=len(y))
    gmsa = play_game(GMSA(mode="avg", T=8, solver=pgd), dann, x, y, eps=eps, batch_size=len(y))
    # the budget breaks the static base model, DANN retrained on U' keeps some robustness ...
    assert_below(white_box, transfer, "DANN under transfer above the static white-box")
    # ... which GMSA-AVG takes away (same points: paired interval of the difference above zero)
    assert_paired_below(gmsa, transfer, f"GMSA below transfer, selected rounds {gmsa.selected_rounds}")


def test_table4_tadv_above_static_adversarial_training_under_gmsa(digits):
    xtr, ytr, xte, yte = digits
    eps = 0.1
    x, y = xte, yte  # all 597 test points: the gap is ~0.04-0.08 at this scale, the paired interval needs them

    def mk(gen):
        return build(lambda: MLP(hidden=64), gen)

    g = torch.Generator().manual_seed(2)
    static_at = train_classifier(mk(g), xtr, ytr, epochs=10, generator=g, adversarial_eps=eps, adv_steps=5)
    pgd = PGD(steps=20)
    # static AT under the white-box attack (TransferPGD on a static defense attacks the model itself)
    static = play_game(TransferPGD(solver=pgd), StaticDefense(static_at), x, y, eps=eps, batch_size=x.shape[0])
    tadv = TADV(xtr, ytr, base_model=static_at, eps=eps, make_model=mk, epochs=10, adv_steps=5)
    gmsa = play_game(GMSA(mode="avg", T=2, solver=pgd), tadv, x, y, eps=eps, batch_size=x.shape[0])
    assert_paired_below(static, gmsa, "TADV under GMSA above static AT under white-box PGD")
