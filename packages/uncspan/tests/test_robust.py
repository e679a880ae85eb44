"""Issue 27: robust accuracy is standard AutoAttack by default (pyautoattack's own standard evaluation, same seed),
never above this package's PGD number on the same points; PGD stays available by name or as an attack object; the
paired gap flags a PGD number that overstates robustness."""

import numpy as np
import pytest
import torch

import uncspan
from robustsuite_common.testing import snapshot
from uncspan import (
    AutoAttack,
    MisclassificationAttack,
    RankConfig,
    RobustOutcome,
    pgd_gap,
    rank_models,
    robust_accuracy,
)

N, EPS, SEED = 10, 0.1, 3


@pytest.fixture(scope="module")
def aa_outcome(at_model, digits):
    _, _, xte, yte = digits
    x, y = xte[:N], yte[:N]
    before, rng = snapshot(at_model), torch.get_rng_state()
    out = robust_accuracy(at_model, x, y, eps=EPS, seed=SEED)  # the default: standard AutoAttack
    before.assert_same(at_model)
    assert torch.equal(torch.get_rng_state(), rng)  # the caller's RNG is untouched
    return x, y, out


def test_default_robust_accuracy_is_pyautoattacks_standard_evaluation(aa_outcome, at_model):
    """Acceptance (issue 27): on the test suite's PGD-trained digits CNN (10 classes) and the first 10 test digits,
    the default robust accuracy equals pyautoattack's standard evaluation with the same seed, point by point (full
    standard budget: APGD-CE, APGD-T, FAB-T, Square, 9 target classes)."""
    from pyautoattack import AutoAttack as Reference

    x, y, out = aa_outcome
    assert out.kind == "autoattack" and out.attack.startswith("AutoAttack standard (pyautoattack")
    assert f"Linf eps={EPS:g}, seed {SEED}" in out.attack
    model = at_model.eval()
    adversary = Reference(model, norm="Linf", eps=EPS, version="standard", seed=SEED)
    adversary.verbose = False
    x_adv = adversary.run_standard_evaluation(x.clone(), y.clone(), batch_size=250)
    x_adv = x_adv[0] if isinstance(x_adv, tuple) else x_adv  # (x_adv, y_adv) in pyautoattack 0.2
    with torch.no_grad():
        ref_robust = (model(x_adv).argmax(1) == y) & (model(x).argmax(1) == y)
    np.testing.assert_array_equal(out.robust, ref_robust.numpy())
    assert 0 < out.robust_accuracy < 1  # the points test something: some robust, some broken


def test_autoattack_is_never_above_pgd_on_the_same_points(aa_outcome, at_model):
    x, y, aa = aa_outcome
    pgd = robust_accuracy(at_model, x, y, eps=EPS, attack="pgd", steps=20)
    assert pgd.kind == "pgd" and pgd.attack.startswith("PGD (pgd, 20 steps")
    assert aa.robust_accuracy <= pgd.robust_accuracy
    # an attack object gives the same as its name with the same settings
    obj = robust_accuracy(at_model, x, y, eps=EPS, attack=MisclassificationAttack(steps=20, keep_adv=False))
    np.testing.assert_array_equal(obj.robust, pgd.robust)
    res = MisclassificationAttack(steps=20)(at_model, x, EPS, y=y)
    np.testing.assert_array_equal(pgd.robust, res.pred_adv == y.numpy())


def test_rank_models_reports_autoattack_with_pgd_beside_it(aa_outcome, at_model):
    x, y, aa = aa_outcome
    board = rank_models({"at": at_model}, x, y, config=RankConfig(eps=EPS, steps=2, restarts=0, seed=SEED, n_boot=200))
    (row,) = board.rows
    assert row.robust_acc == aa.robust_accuracy and row.robust_attack == aa.attack
    assert row.pgd_robust_acc == robust_accuracy(at_model, x, y, eps=EPS, attack="pgd", steps=2).robust_accuracy
    assert row.pgd_minus_robust == pytest.approx(row.pgd_robust_acc - row.robust_acc)
    only_pgd = rank_models({"at": at_model}, x, y,
                           config=RankConfig(eps=EPS, steps=2, restarts=0, seed=SEED, n_boot=200, attack="pgd"))
    assert only_pgd.rows[0].robust_acc == row.pgd_robust_acc and only_pgd.rows[0].pgd_robust_acc is None
    with pytest.raises(ValueError, match=r"attack must be one of \['autoattack', 'pgd'\]"):
        rank_models({"at": at_model}, x, y, config=RankConfig(eps=EPS, attack="fgsm"))


def test_pgd_gap_reads_the_paired_interval():
    n = 60
    robust = np.arange(n) % 3 == 0
    aa = RobustOutcome("autoattack", "aa", robust, np.zeros(n, int), np.ones(n))
    weaker = RobustOutcome("pgd", "pgd", robust | (np.arange(n) % 3 == 1), np.zeros(n, int), np.ones(n))
    gap = pgd_gap(weaker, aa, seed=0, n_boot=500)
    assert gap.difference.estimate == pytest.approx(weaker.robust_accuracy - aa.robust_accuracy)
    assert gap.overstates and "0.667 under PGD against 0.333 under AutoAttack" in gap.message("m")
    one_more = RobustOutcome("pgd", "pgd", robust | (np.arange(n) == 1), np.zeros(n, int), np.ones(n))
    assert not pgd_gap(one_more, aa, seed=0, n_boot=500).overstates  # one point more: not resolved
    with pytest.raises(ValueError, match="same points"):
        pgd_gap(weaker, RobustOutcome("autoattack", "aa", robust[:5], np.zeros(5, int), np.ones(5)))


def test_autoattack_object_and_bad_settings(at_model, digits):
    _, _, xte, yte = digits
    assert AutoAttack(n_iter=5).name == "AutoAttack standard, reduced budget n_iter=5, n_restarts=None"
    with pytest.raises(ValueError, match="version"):
        AutoAttack(version="fast")
    with pytest.raises(ValueError, match="n_iter"):
        AutoAttack(n_iter=0)
    out = robust_accuracy(at_model, xte[:4], yte[:4], eps=0.0)  # no budget: the clean predictions, no attack
    assert out.attack.startswith("AutoAttack standard at eps=0")
    with torch.no_grad():
        np.testing.assert_array_equal(out.robust, (at_model(xte[:4]).argmax(1) == yte[:4]).numpy())
    two = uncspan.KnownClassesModel(at_model, [0, 1])
    with pytest.raises(ValueError, match="at least 4"):
        robust_accuracy(two, xte[:4], torch.zeros(4, dtype=torch.int64), eps=EPS)
