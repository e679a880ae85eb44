"""``transduct_attack.experiment``: the demo preset at reduced size on scikit-learn's digits (every table), its
per-sample records recompute every cell, metrics are readable, a store resumes without replaying a game, and
sharded games give the run's numbers; DENT changes predictions on a base with BatchNorm after every
convolution (issue 26 item 2)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import transduct_attack as ta
from robustsuite_common.config import from_dict
from robustsuite_common.experiment import MemoryStore, Split
from robustsuite_common.testing import run_demo_with
from transduct_attack import experiment as E
from transduct_attack.networks import BNCNN, build

NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
SMALL = {"robustness": {"autoattack": False}, "attack": {"pgd_steps": 2},
         "rmc": {"points": 4, "k": 12, "max_epochs": 2, "train_points": 200, "aug_steps": 2, "T": 1,
                 "seeds": [0, 1, 2], "calibration_k": 12},
         "dann": {"points": 12, "train_points": 150, "epochs": 1, "T": 1},
         "tadv": {"points": 12, "train_points": 150, "epochs": 1, "adv_steps": 1, "T": 1},
         "dent": {"points": 8, "batch_size": 4, "train_points": 150, "base_epochs": 1, "base_adv_steps": 1, "T": 0,
                  "aa": False},
         "urejectron": {"points": 12, "train_points": 300, "epochs": 6, "T": 1, "thresholds": [0.3, 0.5, 0.7],
                        "tau": 0.7, "corruption_severity": 3, "cw_steps": 100, "cw_search_steps": 3}}


@pytest.fixture(scope="module")
def setup(digits, mlp_std):
    xtr, ytr, xte, yte = digits
    g = torch.Generator().manual_seed(7)
    at = ta.train_classifier(build(lambda: ta.networks.MLP(hidden=64), g), xtr, ytr, epochs=3, generator=g,
                             adversarial_eps=0.1, adv_steps=2)
    data = E.Data(train=Split(xtr, ytr, label_names=NAMES),
                  test=Split(xte, yte, ids=tuple(f"row{i}" for i in range(len(yte))), label_names=NAMES), name="digits")
    return E.Models(standard=mlp_std, adversarial=at), data


@pytest.fixture(scope="module")
def result(setup):
    return run_demo_with(E, *setup, SMALL)


def test_every_table_with_the_papers_values_and_readable_metrics(result):
    res, _, cfg = result
    assert list(res.tables) == ["headline", "rmc", "rmc_seeds", "dann", "tadv", "dent", "dent_adaptation", "urejectron",
                                "paper_effects"]
    # the headline (drawn first in a report): each defense's clean accuracy against its table's lowest under attack
    for h in res.tables["headline"].records():
        defense, table = h["condition"].rsplit(" (", 1)
        rows = [r for r in res.tables[table.rstrip(")")].records() if r["defense"] == defense]
        assert h["clean"] == next(r["accuracy"] for r in rows if r["attack"] == "clean")
        assert h["attacked"] == min(r["accuracy"] for r in rows if r["attack"] != "clean")
    rmc = res.rows("rmc")
    assert {r["attack"] for r in rmc} == {"clean", "PGD (white-box)", "PGD (transfer)", "FPA", "GMSA-AVG", "GMSA-MIN"}
    assert next(r for r in rmc if r["defense"] == "RMC (adv. trained)" and r["attack"] == "FPA")["paper (MNIST)"] == 0.595
    for key, m in res.metrics.items():
        assert m.label and (m.unit or isinstance(m.value, bool) or "change" in key), key
    assert f"{res.value('dann_pgd'):.2f}" in res.summary and f"{res.value('tadv_gmsa_avg'):.2f}" in res.summary
    assert res.config["rmc"]["calibration_k"] == 12 and res.config["data"] == "digits"
    back = E.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    assert back.to_dict() == res.to_dict()
    assert {f.name for f in E.figures(res)} == {"robustness", "urejectron_threshold"}


def test_paper_effects_are_paired_on_the_same_points_with_the_rules_verdicts(result):
    from robustsuite_common.effects import recheck_paper_effects
    from robustsuite_common.intervals import mcnemar
    from transduct_attack.experiment.effects import (
        COMPARISONS,
        effects_spec,
        measure_effects,
        paired_outcomes,
    )

    res, _, _ = result
    table = res.tables["paper_effects"]
    assert len(table.rows) >= 3
    assert recheck_paper_effects(table, effects_spec(), measure_effects(res.metrics)) == []
    verdicts = dict(zip((e.key for e in effects_spec()), table.column("verdict"), strict=True))
    # not tested: only DENT-AA where this small config does not play it
    dent_aa = any(r["attack"].startswith("DENT-AA") for r in res.records.get("dent", ()))
    assert {k for k, v in verdicts.items() if v == "not tested"} == (set() if dent_aa else {"dent_aa_overstates_dent"})
    # TADV against the static AT model (standard AutoAttack; white-box PGD here, where AutoAttack is off):
    # recomputed from the records, on the same points
    _, sel_a, sels_b = COMPARISONS["tadv_improves_on_at"]
    a = paired_outcomes(res.records["tadv"], sel_a)
    assert not paired_outcomes(res.records["tadv"], sels_b[0])
    b = paired_outcomes(res.records["tadv"], sels_b[1])
    assert a and set(a) == set(b)  # the same (row id, seed) points on both sides
    keys = sorted(a, key=str)
    test = mcnemar([a[k] for k in keys], [b[k] for k in keys], seed=0)
    m = res.metric("effect_tadv_improves_on_at")
    assert m.value == pytest.approx(test.difference.estimate)
    assert res.value("effect_tadv_improves_on_at_mcnemar_p") == pytest.approx(test.p_value)
    assert m.value == pytest.approx(res.value("tadv_gmsa_avg") - next(
        r["accuracy"] for r in res.rows("tadv") if r["attack"] == "PGD (white-box)"))


def test_urejectron_effects_recomputed_from_the_records(result):
    """Figure 1(b, c)'s effects, recomputed from the per-sample records at τ: under CW-L2 the points misclassified
    and accepted minus the clean points misclassified and accepted; under the corruption the corrupted points
    rejected minus the clean points rejected, both paired (McNemar, paired bootstrap) over the same points."""
    from robustsuite_common.intervals import mcnemar

    res, _, cfg = result
    rs = res.records["urejectron"]
    log_tau = math.log(cfg.urejectron.tau)
    cw = [r for r in rs if r["attack"].startswith("CW-L2")]
    cor = [r for r in rs if r["attack"].startswith("corruption (brightness, severity 3)")]
    assert len(cw) == len(cor) == cfg.urejectron.points
    assert [r["id"] for r in cw] == [r["id"] for r in cor]  # the same points
    expected = {
        "urejectron_cw_slips_through": mcnemar(
            [not r["correct"] and r["adv_log_p_test"] < log_tau for r in cw],
            [r["prediction"] != r["label"] and r["clean_log_p_test"] < log_tau for r in cw], seed=cfg.seed),
        "urejectron_rejects_corruptions": mcnemar([r["adv_rejected"] for r in cor], [r["rejected"] for r in cor],
                                                  seed=cfg.seed),
    }
    for key, test in expected.items():
        assert test.only_a > test.only_b, key  # both effects are there on these points (so a swapped mask shows)
        m = res.metric(f"effect_{key}")
        assert (m.value, m.interval.low, m.interval.high) == pytest.approx(
            (test.difference.estimate, test.difference.low, test.difference.high)), key
        assert res.value(f"effect_{key}_mcnemar_p") == pytest.approx(test.p_value)
    # the table's perturbed rejection rate is the records' share of rejected perturbed points at each τ
    for row in res.rows("urejectron"):
        same = [r for r in rs if r["attack"] == row["attack"]]
        got = sum(r["adv_log_p_test"] >= math.log(row["tau"]) for r in same) / len(same)
        assert got == pytest.approx(row["perturbed_rejection_rate"])
        assert row["perturbed_rejection_rate_ci_low"] <= got <= row["perturbed_rejection_rate_ci_high"]


def test_records_carry_the_users_ids_and_label_names_and_recompute_every_cell(result, digits):
    """Issue 24: per game and point the user's row id, an input reference, the label's name, the static and the
    adapted model's predictions and the seed; the records recompute every accuracy, Table 6 row and τ point."""
    res, _, cfg = result
    _, _, _, yte = digits
    for name in ("rmc", "rmc_seeds", "dann", "tadv", "dent", "urejectron"):
        for r in res.records[name]:
            i = int(r["input"][5:-1])
            assert r["id"] == f"row{i}" and r["label"] == NAMES[int(yte[i])] and r["prediction"] in NAMES
            assert r["correct"] == (r["adv_prediction"] == r["label"])
    cells: dict = {}
    for name in ("rmc", "rmc_seeds", "dann", "tadv", "dent"):
        for r in res.records[name]:
            cells.setdefault((r["defense"], r["attack"], r["seed"]), []).append(r["correct"])
    for name in ("rmc", "dann", "tadv", "dent"):
        for row in res.rows(name):
            c = cells[(row["defense"], row["attack"], cfg.seed)]
            assert sum(c) / len(c) == pytest.approx(row["accuracy"]), (name, row)
    for row in res.rows("rmc_seeds"):
        pooled = [v for s in cfg.rmc.seeds for v in cells[(row["defense"], row["attack"], s)]]
        assert sum(pooled) / len(pooled) == pytest.approx(row["pooled"])
        assert row["mean_ci_low"] <= row["mean"] <= row["mean_ci_high"]  # three seeds: a Student-t interval
    for row in res.rows("urejectron"):
        rs = [r for r in res.records["urejectron"] if r["attack"] == row["attack"]]
        log_tau = math.log(row["tau"])
        assert sum((not r["correct"]) and r["adv_log_p_test"] < log_tau for r in rs) / len(rs) == pytest.approx(
            row["error_accepted"])
        assert sum(r["clean_log_p_test"] >= log_tau for r in rs) / len(rs) == pytest.approx(row["rejection_rate"])


def test_a_store_resumes_without_replaying_a_game(setup, result, monkeypatch):
    from transduct_attack import tables

    res, store, cfg = result
    models, data = setup
    calls: list[int] = []
    real = tables.play_game
    monkeypatch.setattr(tables, "play_game", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = E.run(models, data, cfg, store=store, progress=False)
    assert calls == [] and again.to_dict() == res.to_dict()


def test_shards_by_base_and_table_give_the_runs_result(setup, result, monkeypatch):
    """Without rmc.points_per_game a sharded run splits by RMC base and by table (and the audit): every shard
    played into a store, run() replays no game and gives the result of a run that plays them itself."""
    from transduct_attack import tables

    res, _, cfg = result
    models, data = setup
    later = [t for t in ("dann", "tadv", "dent", "urejectron") if t in cfg.tables]
    count = E.shard_count(cfg)
    assert count == 2 + len(later) + cfg.audit.enabled  # two RMC bases, each later table, the audit
    store = MemoryStore()
    for i in range(count):
        E.run_shard(models, data, cfg, i, count, store=store, progress=False)
    calls: list[int] = []
    real = tables.play_game
    monkeypatch.setattr(tables, "play_game", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert E.run(models, data, cfg, store=store, progress=False).to_dict() == res.to_dict()
    assert calls == []
    assert E.shard_count(from_dict(E.Config, {"tables": ["dent"], "audit": {"enabled": False}},
                                   base=E.preset("demo"))) == 1


def test_sharded_games_give_the_runs_numbers(setup):
    """With rmc.points_per_game the RMC games are units of work: shards played into a store, then run, give the
    same tables as a run that plays them itself."""
    models, data = setup
    cfg = from_dict(E.Config, {**SMALL, "tables": ["rmc"], "rmc": {**SMALL["rmc"], "points_per_game": 2}},
                    base=E.preset("demo"))
    count = E.shard_count(cfg)
    assert count == 2 * (2 + 5 * 2)  # two bases x (2 static rows + 5 attacks x 2 games of 2 points)
    store = MemoryStore()
    for i in range(3):
        E.run_shard(models, data, cfg, i, 3, store=store, progress=False)
    assert len([k for k in store.data if "dprime" not in k]) == count  # and one checkpointed D' per base
    sharded = E.run(models, data, cfg, store=store, progress=False)
    direct = E.run(models, data, cfg, progress=False)
    assert sharded.tables == direct.tables
    with pytest.raises(ValueError, match="index"):
        E.run_shard(models, data, cfg, 3, 3, store=store)


def test_presets_and_config_errors():
    assert {"demo", "paper", "paper-cpu"} <= set(E.PRESETS)
    cpu = E.preset("paper-cpu")
    assert cpu.rmc.points >= 100 and cpu.rmc.batch_size == 1 and cpu.dent.batch_size == 128
    assert cpu.dent.base == "bn-every-conv" and cpu.dent.aa_attacks == () and E.shard_count(cpu) > 1
    assert cpu.dent.points >= 500 and cpu.dent.aa and cpu.dent.aa_iterations == cpu.dent.aa_restarts == 0
    # URejectron at A.6's settings: CW-L2 with c = 1 fixed, 100 steps of 0.01; brightness at severity 1
    u = cpu.urejectron
    assert u.points >= 500 and set(u.attacks) == {"pgd", "gmsa", "cw", "corruption"}
    assert (u.cw_steps, u.cw_search_steps, u.cw_c, u.cw_lr) == (100, 1, 1.0, 0.01)
    assert (u.corruption, u.corruption_severity) == ("brightness", 1)
    demo = E.preset("demo")
    assert demo.threat.eps == demo.threat.at_model_eps == 0.1 and demo.rmc.lr == 2e-4 and demo.rmc.batch_size == 1
    assert demo.dent.points >= 128 and demo.dent.batch_size == 128 and demo.dent.base == "bn-every-conv"
    with pytest.raises(ValueError, match="preset must be one of"):
        E.preset("papr")
    from robustsuite_common.config import ConfigError

    with pytest.raises(ConfigError, match="rmc.lr"):
        from_dict(E.Config, {"rmc": {"lr": 0}})
    with pytest.raises(ConfigError, match="solver_untargeted"):
        from_dict(E.Config, {"dent": {"solver_untargeted": 0, "solver_targeted": 0}})


def test_dent_changes_predictions_on_a_base_with_batchnorm_after_every_convolution(digits):
    """Issue 26 item 2: DENT (the authors' six AdaMod steps) over an adversarially trained CNN with BatchNorm after
    each of its six convolutions, batch 128, changes a share of the clean predictions whose 95 % interval lies
    above zero."""
    xtr, ytr, xte, yte = digits
    base = ta.dent_base_model(xtr, ytr, eps=0.1, epochs=2, adv_steps=2, architecture="bn-every-conv", width=8)
    assert sum(isinstance(m, torch.nn.BatchNorm2d) for m in base.modules()) == 6
    assert isinstance(base, BNCNN)
    tab = ta.dent_table(base, xte, yte, eps=0.1, n=128, batch_size=128, T=0, pgd_steps=1, n_untargeted=1,
                        n_targeted=0)
    ad = ta.dent_adaptation(ta.DENT(base), tab, xte)
    assert ad.n == 128 and ad.changed_ci[0] > 0, (ad.n_changed, ad.changed_ci)
    assert np.isclose(ad.n_changed / ad.n, ad.changed[0] / ad.sizes[0])
