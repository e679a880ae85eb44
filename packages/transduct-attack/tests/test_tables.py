"""The paper's tables as functions (tables.py): the same games as repeat_game / play_game, memoised cells, the
seeded aggregation of Table 6 and the verdicts, each checked against an independent computation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import transduct_attack as ta
from robustsuite_common.intervals import paired_difference, proportion


@pytest.fixture(scope="module")
def suite():
    return {"none": ta.NoAttack(), "pgd": ta.TransferPGD(solver=ta.PGD(steps=3))}


def test_seeded_table_plays_the_games_of_repeat_game(digits, mlp_std, suite):
    """Table 6's protocol: per seed the points repeat_game draws and the game it plays; the row over seeds is the
    mean (Student-t interval over seeds), std (ddof 1) and the pooled accuracy of all the seeds' points (Clopper-Pearson)."""
    _, _, xte, yte = digits
    tab = ta.defense_table(lambda s: ta.StaticDefense(mlp_std), suite, xte, yte, eps=0.1, n=20, batch_size=5,
                           seeds=[0, 1, 2])
    ref = ta.repeat_game(suite["pgd"], lambda s: ta.StaticDefense(mlp_std), xte, yte, eps=0.1, n=20, batch_size=5,
                         seeds=[0, 1, 2])
    for s, game, idx in zip(ref.seeds, ref.games, ref.indices, strict=True):
        cell = tab.cell("defense", "pgd", s)
        assert cell.indices == idx and cell.game == game
    row = tab.seeded("defense", "pgd", boot_seed=0)
    assert (row.mean, row.std, row.mean_ci_low, row.mean_ci_high) == (ref.mean, ref.std, ref.ci_low, ref.ci_high)
    k = sum(int(g.correct.sum()) for g in ref.games)
    assert (row.k, row.n, row.pooled) == (k, 60, k / 60)
    assert (row.pooled_ci_low, row.pooled_ci_high) == proportion(k, 60).ci
    assert tab.seeded("defense", "pgd", seeds=[1]).accuracies == (ref.accuracies[1],)
    assert tab.seeded("defense", "pgd", seeds=[1]).std == 0.0
    assert tab.seeded("defense", "pgd", seeds=[1, 2]).mean_ci_low is None  # fewer than three seeds: no interval
    assert tab.attacks() == ("none", "pgd") and tab.attacks("static") == ()


def test_first_points_static_rows_and_memo(digits, mlp_std, suite):
    """draw=False plays the first n points (Tables 3, 4); the static rows play the static model in one batch; a
    shared memo replays nothing and survives a JSON round trip."""
    _, _, xte, yte = digits
    built = []

    def make(s):
        built.append(s)
        return ta.StaticDefense(mlp_std)

    memo: dict = {}
    tab = ta.defense_table(make, suite, xte, yte, eps=0.1, n=12, batch_size=4, seeds=[3], draw=False,
                           static_model=mlp_std, static_attacks=["pgd"], cells=memo)
    assert built == [3] and sorted(memo) == ["defense-none-s3", "defense-pgd-s3", "static-pgd-s3"]
    static = tab.cell("static", "pgd")
    assert static.indices == tuple(range(12)) and len(static.game.rounds) == 1
    assert len(tab.cell("defense", "pgd").game.rounds) == 3
    direct = ta.play_game(suite["pgd"], ta.StaticDefense(mlp_std), xte[:12], yte[:12], eps=0.1, batch_size=12,
                          seed=3)
    assert static.game == direct and static.k == int(direct.correct.sum()) and static.ci == proportion(
        static.k, 12).ci
    again = ta.defense_table(make, suite, xte, yte, eps=0.1, n=12, batch_size=4, seeds=[3], draw=False,
                             static_model=mlp_std, static_attacks=["pgd"], cells=memo)
    assert built == [3] and again.cells == tab.cells  # nothing replayed
    for c in tab.cells:
        assert ta.TableCell.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    json.dumps(tab.to_dict())
    assert tab.static_model is mlp_std


def test_split_rows_play_one_game_per_batch_and_resume(digits, mlp_std, suite):
    """split_attacks plays a row as independent one-batch games (keys -g<j>, seeds seed * 100003 + j), pooled in
    order into one cell; a memo holding some of them plays only the rest; game_keys lists the same keys."""
    _, _, xte, yte = digits
    kw = {"eps": 0.1, "n": 10, "batch_size": 4, "seeds": [2], "draw": False}
    memo: dict = {}
    tab = ta.defense_table(ta.StaticDefense(mlp_std), suite, xte, yte, split_attacks=["pgd"], cells=memo, **kw)
    assert sorted(memo) == ["defense-none-s2", "defense-pgd-s2-g0", "defense-pgd-s2-g1", "defense-pgd-s2-g2"]
    assert sorted(memo) == sorted(ta.game_keys(seeds=[2], n=10, static_attacks=[], defense_attacks=["none", "pgd"],
                                               split_attacks=["pgd"], batch_size=4))
    cell = tab.cell("defense", "pgd")
    assert cell.indices == tuple(range(10)) and len(cell.game.rounds) == 3
    for j, (lo, hi) in enumerate([(0, 4), (4, 8), (8, 10)]):
        alone = ta.play_game(suite["pgd"], ta.StaticDefense(mlp_std), xte[lo:hi], yte[lo:hi], eps=0.1, batch_size=4,
                             seed=2 * 100003 + j)
        assert memo[f"defense-pgd-s2-g{j}"].game == alone
        assert np.array_equal(cell.game.correct[lo:hi], alone.correct)
    assert len(tab.cell("defense", "none").game.rounds) == 3  # the other row stays one game

    class Drawing(ta.NoAttack):  # records the first draw of the attacker's generator in each round
        def __init__(self):
            self.draws = []

        def _attack(self, x, y, *, eps, defense, generator, state):
            self.draws.append(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))
            return super()._attack(x, y, eps=eps, defense=defense, generator=generator, state=state)

    split, alone = Drawing(), Drawing()
    ta.defense_table(ta.StaticDefense(mlp_std), {"draw": split}, xte, yte, split_attacks=["draw"], **kw)
    for j, (lo, hi) in enumerate([(0, 4), (4, 8), (8, 10)]):
        ta.play_game(alone, ta.StaticDefense(mlp_std), xte[lo:hi], yte[lo:hi], eps=0.1, batch_size=4,
                     seed=2 * 100003 + j)
    assert split.draws == alone.draws and len(set(alone.draws)) == 3  # each batch's game has its own seed
    played = []

    class Counting(ta.StaticDefense):
        def adapt(self, x, *, state, generator):
            played.append(x.shape[0])
            return super().adapt(x, state=state, generator=generator)

    partial = {k: v for k, v in memo.items() if not k.endswith("-g1")}
    again = ta.defense_table(Counting(mlp_std), suite, xte, yte, split_attacks=["pgd"], cells=partial, **kw)
    assert played == [4] and again.cell("defense", "pgd") == cell  # only the missing batch is played
    with pytest.raises(ValueError, match="split_attacks"):
        ta.defense_table(ta.StaticDefense(mlp_std), suite, xte, yte, split_attacks=["fpa"], **kw)
    with pytest.raises(ValueError, match="batch_size"):
        ta.game_keys(seeds=[0], n=10, split_attacks=["pgd"])


def test_one_attack_under_two_static_keys_is_played_once(digits, mlp_std, monkeypatch):
    """Two static rows naming the same attack object (DENT's standard AA row and the static AutoAttack row) share
    one game: the second row is the first's cell under its own key, the game a separate play would give."""
    import transduct_attack.tables as tables_mod

    _, _, xte, yte = digits
    pgd = ta.TransferPGD(solver=ta.PGD(steps=3))
    kw = {"eps": 0.1, "n": 8, "batch_size": 8, "static_model": mlp_std, "static_attacks": ["pgd", "again"],
          "defense_attacks": ["none"]}
    played = []

    def counting_play(attack, *args, **more):
        played.append(type(attack).__name__)
        return ta.play_game(attack, *args, **more)

    monkeypatch.setattr(tables_mod, "play_game", counting_play)
    memo: dict = {}
    tab = ta.defense_table(ta.StaticDefense(mlp_std), {"none": ta.NoAttack(), "pgd": pgd, "again": pgd}, xte, yte,
                           cells=memo, **kw)
    assert played == ["TransferPGD", "NoAttack"]  # the static PGD once, Γ's clean row once
    a, b = tab.cell("static", "pgd"), tab.cell("static", "again")
    assert (a.game, a.indices, b.attack) == (b.game, b.indices, "again") and "static-again-s0" in memo
    apart = ta.defense_table(ta.StaticDefense(mlp_std), {"none": ta.NoAttack(), "pgd": pgd,
                                                          "again": ta.TransferPGD(solver=ta.PGD(steps=3))},
                             xte, yte, **kw)
    assert len(played) == 5 and apart.cell("static", "again").game == b.game  # two objects: played twice


def test_compare_reads_the_paired_bootstrap(digits, mlp_std):
    """The verdict of DefenseTable.compare is the paired bootstrap of acc(reference) − acc(attack) on the same points
    (transfer PGD at eps 0.3 breaks the static model: "below"; the reverse reading: "above")."""
    _, _, xte, yte = digits
    attacks = {"none": ta.NoAttack(), "pgd": ta.TransferPGD(solver=ta.PGD(steps=5))}
    tab = ta.defense_table(ta.StaticDefense(mlp_std), attacks, xte, yte, eps=0.3, n=40, batch_size=40, seeds=[0])
    c = tab.compare(attacks=["pgd"], reference="none", boot_seed=4)
    iv = paired_difference(tab.cell("defense", "none").game.correct, tab.cell("defense", "pgd").game.correct, seed=4)
    assert (c.attack, c.difference, c.ci_low, c.ci_high) == ("pgd", iv.estimate, iv.low, iv.high)
    lo = iv.low
    assert c.accuracy == tab.cell("defense", "pgd").accuracy < c.reference_accuracy
    assert lo > 0 and c.verdict == "below"
    assert tab.compare(attacks=["none"], reference="pgd").verdict == "above"
    assert tab.strongest(["none", "pgd"]) == "pgd"
    pooled = tab.compare_pooled(attacks=["pgd"], reference="none", boot_seed=4)
    assert (pooled.difference, pooled.ci_low, pooled.verdict) == (iv.estimate, iv.low, "below")  # one seed: the same
    assert tab.compare_cells("pgd", "none").verdict == "below"
    assert tab.compare_cells("none", "none").verdict == "not separable from"
    weak = ta.defense_table(ta.StaticDefense(mlp_std), attacks, xte, yte, eps=0.02, n=40, batch_size=40, seeds=[0])
    lost = int((weak.cell("defense", "none").game.correct & ~weak.cell("defense", "pgd").game.correct).sum())
    assert lost <= 2  # a budget this small flips at most a couple of points: not separable
    assert weak.compare_pooled(attacks=["pgd"], reference="none").verdict == "not separable from"


def test_bad_input_is_rejected_before_work(digits, mlp_std, suite):
    xtr, ytr, xte, yte = digits
    kw = {"eps": 0.1, "n": 4, "batch_size": 2}
    with pytest.raises(ValueError, match="static_attacks"):
        ta.defense_table(ta.StaticDefense(mlp_std), suite, xte, yte, static_model=mlp_std,
                         static_attacks=["aa"], **kw)
    with pytest.raises(ValueError, match="defense_attacks"):
        ta.defense_table(ta.StaticDefense(mlp_std), suite, xte, yte, defense_attacks=["fpa"], **kw)
    with pytest.raises(ValueError, match="n must be at most"):
        ta.defense_table(ta.StaticDefense(mlp_std), suite, xte, yte, eps=0.1, n=10**6, batch_size=2)
    with pytest.raises(ValueError, match="seeds"):
        ta.defense_table(ta.StaticDefense(mlp_std), suite, xte, yte, seeds=[], **kw)
    with pytest.raises(TypeError, match="attacks"):
        ta.defense_table(ta.StaticDefense(mlp_std), {"pgd": "pgd"}, xte, yte, **kw)
    with pytest.raises(ValueError, match="calibration_points"):
        ta.rmc_table(mlp_std, xtr, ytr, xte, yte, config=ta.RMCTableConfig(n=len(yte), calibration_points=1))
    with pytest.raises(ValueError, match="attacks"):
        ta.rmc_table(mlp_std, xtr, ytr, xte, yte, config=ta.RMCTableConfig(n=4, attacks=("gmsa-max",)))
    with pytest.raises(ValueError, match="tau"):
        ta.urejectron_figure(mlp_std, xtr, xte, yte, tau=1.0)
    with pytest.raises(ValueError, match="thresholds"):
        ta.urejectron_figure(mlp_std, xtr, xte, yte, n=4, thresholds=[0.5, 1.5])


def test_rmc_tables_1_and_6_share_their_games(digits, mlp_std):
    """Table 1 is the run-seed game of Table 6: with one memo, the second call plays only the other seeds' games,
    and its seed-0 cells are Table 1's."""
    xtr, ytr, xte, yte = digits
    kw = {"eps": 0.2, "n": 6, "batch_size": 3, "k": 16, "lr": 2e-3, "epochs": 1, "patience": 1, "T": 1,
          "pgd_steps": 2}
    memo: dict = {}
    t1 = ta.rmc_table(mlp_std, xtr[:200], ytr[:200], xte, yte, config=ta.RMCTableConfig(seeds=(0,), **kw),
                      cells=memo)
    assert t1.defense == "RMC" and t1.attacks() == ("none", "pgd", "fpa", "gmsa-avg", "gmsa-min")
    assert t1.attacks("static") == ("none", "pgd") and len(memo) == 7
    with pytest.warns(DeprecationWarning, match="RMCTableConfig"):  # the fields one by one: one more release
        t6 = ta.rmc_table(mlp_std, xtr[:200], ytr[:200], xte, yte, seeds=[0, 1], attacks=["none", "gmsa-min"],
                          cells=memo, **kw)
    assert len(memo) == 7 + 4  # seed 1: two static and two RMC games
    for role, a in (("static", "none"), ("static", "pgd"), ("defense", "none"), ("defense", "gmsa-min")):
        assert t6.cell(role, a, 0) is t1.cell(role, a, 0)
    assert t6.cell("defense", "none", 1).indices == tuple(ta.draw_points(len(yte), n=6, seed=1).tolist())


def test_dent_adaptation_counts_what_dent_changes(digits, mlp_bn):
    """dent_adaptation: per batch, the affine shift of DENT.adapt and the clean predictions that differ between the
    static and the DENT "none" games, recomputed here from the games."""
    _, _, xte, yte = digits
    dent = ta.DENT(mlp_bn, steps=2)
    tab = ta.defense_table(dent, {"none": ta.NoAttack(), "pgd": ta.TransferPGD(solver=ta.PGD(steps=2))}, xte, yte,
                           eps=0.1, n=10, batch_size=4, seeds=[0], static_model=mlp_bn)
    ad = ta.dent_adaptation(dent, tab, xte)
    assert ad.sizes == (4, 4, 2) and ad.batch_size == 4
    changed = tab.cell("static", "none").game.predictions != tab.cell("defense", "none").game.predictions
    assert ad.changed == tuple(int(changed[i:i + 4].sum()) for i in (0, 4, 8)) and ad.n_changed == int(changed.sum())
    assert ad.changed_ci == proportion(int(changed.sum()), 10).ci
    idx = torch.tensor(tab.cell("defense", "none").indices[4:8])
    g, b = dent.affine_change(dent.adapt(xte[idx], state=None, generator=torch.Generator().manual_seed(0)))
    assert (ad.gamma_change[1], ad.beta_change[1]) == (g, b) and 0 < g
    assert ad.mean_gamma_change == pytest.approx(float(np.mean(ad.gamma_change)))
    static_ok = tab.cell("static", "none").game.correct
    assert ad.static_accuracy[2] == float(static_ok[8:10].mean())
    json.dumps(ad.to_dict())
    with pytest.raises(TypeError, match="dent"):
        ta.dent_adaptation(ta.StaticDefense(mlp_bn), tab, xte)


def test_urejectron_figure_reads_tau_and_memoises(digits, mlp_std):
    """Figure 1: two rejection curves (transfer, GMSA-AVG), read at the threshold nearest tau; the memo keeps them."""
    xtr, _, xte, yte = digits
    memo: dict = {}
    fig = ta.urejectron_figure(mlp_std, xtr[:100], xte, yte, eps=0.2, n=16, epochs=1, thresholds=[0.2, 0.45, 0.9],
                               tau=0.5, T=1, pgd_steps=2, curves=memo)
    assert fig.names == ("pgd", "gmsa-avg") and sorted(memo) == ["gmsa-avg", "pgd"] and fig.tau_index == 1
    pgd = fig.curve("pgd")
    wrong = np.array(pgd.predictions) != yte[:16].numpy()
    assert pgd.error_accepted[1] == float((wrong & (np.array(pgd.adv_log_p_test) < math.log(0.45))).mean())
    c = fig.compare(boot_seed=2)
    gm = fig.curve("gmsa-avg")
    iv = paired_difference(1 - pgd.errors_at(0.45), 1 - gm.errors_at(0.45), seed=2)
    assert (c.difference, c.ci_low, c.ci_high) == (iv.estimate, iv.low, iv.high)
    assert c.accuracy == pytest.approx(1 - gm.error_accepted[1]) and pgd.errors_at(0.45).mean() == pgd.error_accepted[1]
    again = ta.urejectron_figure(mlp_std, xtr[:100], xte, yte, eps=0.2, n=16, epochs=1, thresholds=[0.2, 0.45, 0.9],
                                 tau=0.5, T=1, pgd_steps=2, curves=memo)
    assert again.curves[0] is pgd
    assert ta.RejectionCurve.from_dict(json.loads(json.dumps(pgd.to_dict()))) == pgd


def test_with_static_gives_the_static_autoattack_row_the_suites_standard_autoattack():
    """The "autoattack" static row reuses the suite's standard AutoAttack object (so defense_table plays it once,
    as DENT's standard AA row and its static AutoAttack row), never a reduced or adaptive one."""
    from transduct_attack.tables import with_static

    standard = ta.TransferAutoAttack()
    assert with_static({"aa": standard}, ["none", "autoattack"])["autoattack"] is standard
    for other in (ta.TransferAutoAttack(version="custom", attacks=["apgd-ce"]), ta.TransferAutoAttack(n_iter=20),
                  ta.AdaptiveAutoAttack()):
        made = with_static({"aa": other}, ["autoattack"])["autoattack"]
        assert made is not other and type(made) is ta.TransferAutoAttack and vars(made) == vars(standard)
    assert "autoattack" not in with_static({"aa": standard}, ["none"])
