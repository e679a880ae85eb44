"""Robust accuracy as the field measures it (issue 27) and an adversarially trained base that is robust at the
budget it is played at (issue 26, item 1), on scikit-learn's digits."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import transduct_attack as ta
from robustsuite_common.experiment import chance_rate
from robustsuite_common.intervals import paired_difference
from transduct_attack.networks import SmallCNN, build

EPS = 0.1


@pytest.fixture(scope="module")
def at_cnn(digits):
    """A SmallCNN adversarially trained at EPS (PGD-5, 50 % clean), from a fixed seed."""
    xtr, ytr, _, _ = digits
    g = torch.Generator().manual_seed(5)
    net = build(lambda: SmallCNN(in_channels=1, n_classes=10, image_size=8), g)
    return ta.train_classifier(net, xtr, ytr, epochs=5, generator=g, adversarial_eps=EPS, adv_steps=3)


@pytest.mark.slow
def test_default_robust_accuracy_is_pyautoattacks_standard_evaluation_and_never_above_pgd(at_cnn, digits):
    """The package's default robust accuracy equals pyautoattack's standard AutoAttack run directly with the same
    seed (an independent call of its API), point by point, and is never above the package's white-box PGD."""
    pytest.importorskip("pyautoattack")
    from pyautoattack import AutoAttack

    _, _, xte, yte = digits
    x, y = xte[:24], yte[:24]
    ours = ta.robust_accuracy(at_cnn, x, y, eps=EPS, seed=3)
    assert "standard" in ours.attack and ours.n == 24
    adversary = AutoAttack(at_cnn.eval(), norm="Linf", eps=EPS, version="standard", seed=3, device=torch.device("cpu"))
    adversary.verbose = False
    with torch.random.fork_rng():
        out = adversary.run_standard_evaluation(x.clone(), y.clone(), batch_size=250)
    x_adv = out[0] if isinstance(out, tuple) else out
    with torch.no_grad():
        theirs = (at_cnn(x_adv).argmax(1) == y) & (at_cnn(x).argmax(1) == y)
    assert np.array_equal(ours.robust, theirs.numpy())
    pgd = ta.robust_accuracy(at_cnn, x, y, eps=EPS, attack="pgd", pgd_steps=20, seed=3)
    assert ours.accuracy <= pgd.accuracy
    with pytest.raises(ValueError, match="attack"):
        ta.robust_accuracy(at_cnn, x, y, eps=EPS, attack="fgsm")


def test_the_adversarially_trained_base_is_robust_well_above_chance_at_its_budget(at_cnn, digits):
    """Issue 26 item 1: played at the budget it was trained for, the AT base keeps a white-box robust accuracy
    whose 95 % interval lies above chance (the majority-class share), and far above a standard model's."""
    xtr, ytr, xte, yte = digits
    x, y = xte[:200], yte[:200]
    at = ta.robust_accuracy(at_cnn, x, y, eps=EPS, attack="pgd", pgd_steps=20)
    g = torch.Generator().manual_seed(5)
    std = ta.train_classifier(build(lambda: SmallCNN(in_channels=1, n_classes=10, image_size=8), g), xtr, ytr,
                              epochs=5, generator=g)
    plain = ta.robust_accuracy(std, x, y, eps=EPS, attack="pgd", pgd_steps=20)
    assert at.interval().low > chance_rate(y), (at.accuracy, at.interval())
    gap = paired_difference(at.robust, plain.robust, seed=0)
    assert gap.low > 0, (at.accuracy, plain.accuracy, gap)


def test_the_sanity_flag_names_pgd_when_it_overstates_robustness():
    """Issue 27 item 3: when white-box PGD leaves clearly more points robust than AutoAttack on the same points
    (paired interval above zero) the result says so with both numbers; when it does not, no flag."""
    from robustsuite_common.experiment import Split
    from transduct_attack.experiment._common import Out, static_checks
    from transduct_attack.game import GameResult
    from transduct_attack.referee import RoundScore

    def cell(attack, correct):
        n = len(correct)
        r = RoundScore(round=0, n=n, accuracy=float(np.mean(correct)), correct=tuple(correct),
                       predictions=tuple(0 if c else 1 for c in correct))
        g = GameResult(attack=attack, defense="static", eps=EPS, threat_model={}, rounds=(r,),
                       accuracy=r.accuracy, error_accepted=None, rejection_rate=None, selected_rounds=(None,),
                       order=tuple(range(n)))
        return ta.TableCell(role="static", attack=attack, seed=0, game=g, indices=tuple(range(n)))

    n = 60
    y = torch.tensor([0] * 30 + [1] * 30)
    clean = [True] * n
    pgd = [True] * 40 + [False] * 20
    for aa, flagged in (([True] * 20 + [False] * 40, True), (pgd, False)):
        tab = ta.DefenseTable(defense="static", eps=EPS, n=n, batch_size=n, seeds=(0,),
                              cells=(cell("none", clean), cell("pgd", pgd), cell("autoattack", aa)))
        out = Out(Split(torch.zeros(n, 1, 2, 2), y), torch.device("cpu"))
        static_checks(out, "t", tab, "static model", 0)
        assert out.metrics["t_pgd_overstates"].value is flagged
        assert out.metrics["t_pgd_minus_autoattack"].interval.contains(np.mean(pgd) - np.mean(aa))
        assert any("PGD overstates" in w and "0.67" in w for w in out.warnings) is flagged
        assert out.metrics["t_static_at_chance"].value is False
    chance = ta.DefenseTable(defense="static", eps=EPS, n=n, batch_size=n, seeds=(0,),
                             cells=(cell("none", [True] * 33 + [False] * 27), cell("pgd", pgd)))
    out = Out(Split(torch.zeros(n, 1, 2, 2), y), torch.device("cpu"))
    static_checks(out, "t", chance, "static model", 0)
    assert out.metrics["t_static_at_chance"].value is True and "carry no information" in out.warnings[0]
