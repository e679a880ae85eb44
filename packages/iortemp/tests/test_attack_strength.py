"""Defect 4: the attacks must attack. Each test here fails for a reversed adversary (one that raises the
true-class margin instead of lowering it): effects are asserted with Clopper-Pearson / bootstrap margins."""

import numpy as np
import torch

import iortemp
from robustsuite_common.intervals import mean_interval, proportion_of


def _margin(z, y):
    """True-class logit minus the best other logit (float64)."""
    z = np.asarray(z, dtype=np.float64).copy()
    zy = z[np.arange(len(y)), y]
    z[np.arange(len(y)), y] = -np.inf
    return zy - z.max(1)


def test_pgd_lowers_accuracy_and_margin(digits_model):
    net, _, (xt, yt) = digits_model
    pgd = iortemp.PGDLinf(eps=0.15, steps=10, random_start=False)
    ev = iortemp.evaluate_attack(net, xt, yt, pgd, keep_adversarial=True)
    assert proportion_of(ev.correct_adversarial).below(proportion_of(ev.correct_clean))
    d = _margin(iortemp.logits64(net, ev.adversarial), yt.numpy()) - _margin(iortemp.logits64(net, xt), yt.numpy())
    assert mean_interval(d, seed=0).high < 0  # the margin falls on average, by more than its interval
    assert np.mean(d < 0) > 0.9


def test_greedy_word_swap_lowers_accuracy_and_never_raises_the_margin(tiny_text, corpus, synonyms):
    _, _, (xte, yte) = corpus
    atk = iortemp.GreedyWordSwap(candidates=synonyms)
    ev = iortemp.evaluate_attack(tiny_text, xte[:60], yte[:60], atk, keep_adversarial=True)
    assert proportion_of(ev.correct_adversarial).below(proportion_of(ev.correct_clean))
    d = _margin(iortemp.logits64(tiny_text, ev.adversarial), yte[:60]) - _margin(iortemp.logits64(tiny_text, xte[:60]),
                                                                                  yte[:60])
    assert (d <= 1e-9).all()  # greedy search keeps only swaps that lower p(true): the margin never rises
    assert mean_interval(d, seed=0).high < 0


def test_overconfident_victim_masks_pgd_but_adversary_temperature_unmasks(digits_model):
    """The IOR itself, on fixed weights: T_d = 0.005 hides PGD's effect; attacking at T_a = 1 / T_d restores it."""
    net, _, (xt, yt) = digits_model
    pgd = iortemp.PGDLinf(eps=0.15, steps=10, random_start=False)
    up = iortemp.TemperatureScaled(net, temperature=0.005)
    plain = proportion_of(iortemp.evaluate_attack(up, xt, yt, pgd).correct_adversarial)
    base = proportion_of(iortemp.evaluate_attack(net, xt, yt, pgd).correct_adversarial)
    undone = iortemp.evaluate_attack(up, xt, yt, pgd, temperature=200.0)
    assert plain.above(base) and plain.above(proportion_of(undone.correct_adversarial))
    # attacking at T_a = 1/T_d is the base attack up to float rounding of the composed scale
    assert np.mean(np.array(undone.correct_adversarial) == np.array(
        iortemp.evaluate_attack(net, xt, yt, pgd).correct_adversarial)) > 0.95
    assert torch.equal(xt, digits_model[2][0])
