"""zeroe_perturb.experiment: the demo preset run at reduced size on toy models of the four task types, and every
number of the result checked against a computation written out here (scores, intervals over the items, Kendall τ,
the chance rule, the headline rule, per-sample records, resume from the store)."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest
from scipy.stats import kendalltau

import zeroe_perturb as zp
from robustsuite_common.config import ConfigError, from_dict, override, to_dict
from robustsuite_common.experiment import MemoryStore, Split
from zeroe_perturb import experiment as ex
from zeroe_perturb.benchmark import auroc, evaluate
from zeroe_perturb.experiment._stats import auroc_counts, counts_of, kendall_tau_b
from zeroe_perturb.tasks import evaluate_pairs, evaluate_tagging

ATT = ("intrude", "truncate", "visual", "disemvowel", "segment")
SMALL = {"classification.n": 40, "pairs.n": 30, "multilabel.n": 30, "tagging.n": 30, "attack.attacks": list(ATT),
         "attack.levels": [0.2, 0.8], "seeds.n_seeds": 2, "seeds.n_boot": 300}


POSITIVE = {"good", "great", "wonderful", "excellent", "brilliant", "lovely", "enjoyable", "charming", "beautiful",
            "amazing", "delightful", "superb"}


def sentiment_logits(texts):  # the conftest's keyword classifier
    return np.array([[0.0, 2.0] if POSITIVE & set(t.split()) else [2.0, 0.0] for t in texts])


def small(**more):
    return override(ex.preset("demo"), {**SMALL, **more})




def _run(toy, cfg=None, store=None, **kw):
    models, data = toy(**kw)
    return models, data, ex.run(models, data, cfg or small(), store=store, progress=False)


# --- config and presets ------------------------------------------------------------------------------------------


def test_demo_preset_is_the_former_runner_defaults():
    d = to_dict(ex.preset("demo"))
    assert d["attack"] == {"attacks": list(zp.ATTACKS), "levels": [0.2, 0.5, 0.8]}
    assert d["seeds"] == {"n_seeds": 3, "level": 0.95, "n_boot": 2000}
    assert d["classification"] == {"n": 200, "metric": "accuracy", "paper_task": "TC"}
    assert (d["pairs"], d["multilabel"], d["tagging"]) == (
        {"enabled": True, "n": 200, "targets": ["hypothesis", "both"]}, {"enabled": True, "n": 200, "metric": "auroc"},
        {"enabled": True, "n": 200})
    assert d["defense"] == {"enabled": False, "n_train": 600, "one_one": ["intrude", "visual", "disemvowel"],
                            "leave_one_out": ["visual", "truncate"], "epochs": 2, "lr": 1e-3, "batch_size": 32,
                            "weight_decay": 0.01, "max_length": 64, "clean_copies": True}
    paper = ex.preset("paper")
    assert paper.attack.levels == (0.2, 0.5, 0.8) and paper.defense.enabled and paper.classification.n is None
    assert paper.defense.one_one == paper.defense.leave_one_out == zp.ATTACKS
    with pytest.raises(ValueError, match=r"preset must be one of \['audit', 'demo', 'paper', 'paper-cpu'\]"):
        ex.preset("papr")
    from typing import get_args

    from zeroe_perturb.experiment.config import AttackName

    assert get_args(AttackName) == zp.ATTACKS  # one list of attacker names


@pytest.mark.parametrize("bad, match", [
    ({"attack": {"levels": [0.0, 0.5]}}, "levels"), ({"attack": {"attacks": ["typo"]}}, "attack.attacks"),
    ({"attack": {"levels": [0.5, 0.5]}}, "repeat"), ({"seeds": {"n_seeds": 0}}, "seeds.n_seeds"),
    ({"pairs": {"targets": ["premise"]}}, "pairs.targets"), ({"classification": {"metric": "f1"}}, "metric"),
    ({"classification": {"paper_task": "QA"}}, "paper_task"), ({"defense": {"lr": -1.0}}, "defense.lr"),
    ({"headline": {"min_margin": 2.0}}, "min_margin"), ({"classification": {"n": 0}}, "classification.n"),
    ({"attack": {"attaks": []}}, "did you mean 'attacks'")])
def test_bad_settings_are_refused_naming_the_path(bad, match):
    with pytest.raises(ConfigError, match=match):
        from_dict(ex.Config, bad, base=ex.preset("demo"))


# --- statistics against independent computations ----------------------------------------------------------------


def test_counts_scores_equal_the_scores_of_explicit_resamples():
    rng = np.random.default_rng(0)
    n = 25
    idx = rng.integers(0, n, size=(7, n))
    memo, lead = counts_of(idx.astype(float), n)
    counts = memo.c
    assert lead == (7,) and (counts.sum(axis=1) == n).all()
    assert counts_of(idx.astype(float), n)[0] is memo  # the same resamples are scored once
    y = rng.integers(0, 2, n)
    z = rng.normal(size=(n, 2)).round(1)  # ties
    ym = rng.integers(0, 2, (n, 3))
    zm = rng.normal(size=(n, 3)).round(1)
    got, got_m = auroc_counts(y, z, counts), auroc_counts(ym, zm, counts)
    for r in range(7):
        assert got[r] == pytest.approx(auroc(y[idx[r]], z[idx[r]]))
        assert got_m[r] == pytest.approx(auroc(ym[idx[r]], zm[idx[r]]))


def test_vectorised_tau_b_equals_scipy():
    rng = np.random.default_rng(1)
    ref = np.array([1, 1, 3, 4, 5, 6, 7, 8, 9, 10], dtype=float)
    x = rng.integers(0, 5, size=(10, 50)).astype(float)  # many ties
    got = kendall_tau_b(x, ref)
    for r in range(50):
        assert got[r] == pytest.approx(kendalltau(x[:, r], ref).statistic)


# --- the demo preset at reduced size ------------------------------------------------------------------------------


def test_paper_effects_are_the_results_own_numbers_with_the_rules_verdicts(toy):
    from robustsuite_common.effects import recheck_paper_effects
    from zeroe_perturb.experiment.effects import effects_spec, measure_effects

    cfg = small(**{"attack.attacks": ["visual", "intrude", "phonetic", "truncate"], "pairs.enabled": False,
                   "tagging.enabled": False})
    _, _, res = _run(toy, cfg)
    table = res.tables["paper_effects"]
    assert len(table.rows) >= 3
    assert recheck_paper_effects(table, effects_spec(), measure_effects(res.metrics)) == []
    verdicts = dict(zip((e.key for e in effects_spec()), table.column("verdict"), strict=True))
    assert [k for k, v in verdicts.items() if v == "not tested"] == ["defense_ordering"]
    # the ends of Table 5 against the nearest other attacker, from the ranking tables (seed-mean s*(0.8))
    s_main = {r["attack"]: r["s*(0.8)"] for r in res.tables["ranking"].records()}
    gap = res.metric("paper_least_gap")
    assert gap.value == pytest.approx(s_main["phonetic"] - max(v for a, v in s_main.items() if a != "phonetic"))
    tc = res.tables["ranking_tc"].records()
    s_ml = {r["attack"]: r["s*(0.8) AUROC"] for r in tc}
    assert res.value("multilabel_paper_most_gap") == pytest.approx(
        min(v for a, v in s_ml.items() if a != "visual") - s_ml["visual"])
    assert {r["attack"]: r["s*(0.8) accuracy"] for r in tc} == pytest.approx(s_main)
    assert {r["attack"]: r["paper TC rank"] for r in tc} == {"visual": 1, "intrude": 2, "truncate": 6, "phonetic": 10}


def test_demo_at_reduced_size_scores_equal_the_benchmark_functions(toy):
    models, data, res = _run(toy)
    cfg = small()
    seeds = (0, 1)
    # text classification: the seeded subset, then zeroe_perturb.evaluate per attack seed gives the same numbers
    idx = np.sort(np.random.default_rng(0).choice(len(data.classification), size=40, replace=False))
    x = [data.classification.x[i] for i in idx]
    y = data.classification.y[idx]
    runs = [evaluate(models.classifier, x, y, attacks=ATT, levels=[0.2, 0.8], seed=s) for s in seeds]
    m = res.metrics
    assert m["clean_score"].value == runs[0].clean_score
    cells = {(r["attack"], r["p"]): r for r in res.cells()}
    for a in ATT:
        for p in (0.2, 0.8):
            c = cells[(a, p)]
            assert c["s*(p)"] == pytest.approx(np.mean([r.relative(a, p) for r in runs]), abs=1e-12)
            assert c["s(p)"] == pytest.approx(np.mean([r.relative(a, p) * r.clean_score for r in runs]), abs=1e-12)
            assert c["edits per text"] == pytest.approx([s.mean_edit_distance for s in runs[0].scores
                                                         if s.attack == a and s.p == p][0])
            assert c["s(p)_ci_low"] <= c["s(p)"] <= c["s(p)_ci_high"] and 0 <= c["s(p)_ci_low"]
            assert c["s(p)_ci_high"] <= 1 and c["s*(p)_ci_low"] <= c["s*(p)"] <= c["s*(p)_ci_high"]
            assert c["above chance"] == (c["s(p)_ci_low"] > m["chance_score"].value)
    # the headline (drawn first in a report): clean s(0) against s(0.8) per attacker, from the same cells
    head = {h["condition"]: h for h in res.tables["headline"].records()}
    assert sorted(head) == sorted(ATT)
    for a in ATT:
        assert head[a]["clean"] == m["clean_score"].value and head[a]["attacked"] == cells[(a, 0.8)]["s(p)"]
    assert m["mean_relative_score_high"].value == pytest.approx(np.mean([r.mean_relative(0.8) for r in runs]))
    # Kendall τ: of the seed-mean s*(0.8) ranking against Table 5's TC column
    ref = zp.PAPER_TABLE5["TC"]
    tau = kendalltau([cells[(a, 0.8)]["s*(p)"] for a in ATT], [ref[a] for a in ATT]).statistic
    assert m["kendall_tau_paper"].value == pytest.approx(tau)
    lo, hi = m["kendall_tau_paper"].ci
    assert -1 <= lo <= tau <= hi <= 1 and hi > lo
    # the other task types
    tasks = {r["task"]: r for r in res.tables["task_summary"].records()}
    assert list(tasks) == ["text classification", "pairs (hypothesis)", "pairs (both)", "multi-label", "tagging"]
    pidx = np.sort(np.random.default_rng(0).choice(60, size=30, replace=False))
    px, pyy = [data.pairs.x[i] for i in pidx], data.pairs.y[pidx]
    for target in ("hypothesis", "both"):
        prs = [evaluate_pairs(models.pairs, px, pyy, target=target, attacks=ATT, levels=[0.2, 0.8], seed=s)
               for s in seeds]
        got = {(r["attack"], r["p"]): r["s*(p)"] for r in res.cells(f"pairs ({target})")}
        assert tasks[f"pairs ({target})"]["s(0)"] == prs[0].clean_score
        assert got[("visual", 0.8)] == pytest.approx(np.mean([r.relative("visual", 0.8) for r in prs]))
    ml = [evaluate(models.multilabel, [data.multilabel.x[i] for i in pidx], data.multilabel.y[pidx],
                   metric="auroc", attacks=ATT, levels=[0.2, 0.8], seed=s) for s in seeds]
    assert tasks["multi-label"]["s(0)"] == pytest.approx(ml[0].clean_score)
    got = {(r["attack"], r["p"]): r["s*(p)"] for r in res.cells("multi-label")}
    assert got[("intrude", 0.8)] == pytest.approx(np.mean([r.relative("intrude", 0.8) for r in ml]))
    tg = [evaluate_tagging(models.tagger, [data.tagging.x[i] for i in pidx], [data.tagging.y[i] for i in pidx],
                           attacks=[a for a in ATT if a != "segment"], levels=[0.2, 0.8], seed=s) for s in seeds]
    got = {(r["attack"], r["p"]): r["s*(p)"] for r in res.cells("tagging")}
    assert ("segment", 0.8) not in got  # segment is not applied to tagging (§3.2)
    assert got[("visual", 0.8)] == pytest.approx(np.mean([r.relative("visual", 0.8) for r in tg]))
    assert tasks["tagging"]["attackers"] == 4
    json.dumps(res.to_dict())
    assert ex.Result.from_dict(json.loads(json.dumps(res.to_dict()))).to_dict() == res.to_dict()
    assert cfg == small()


def test_records_cover_every_level_with_ids_label_names_and_confidence(toy):
    models, data, res = _run(toy)
    rows = res.records["classification"]
    assert len(rows) == 40 * len(ATT) * 2
    assert {(r["attack"], r["p"]) for r in rows} == {(a, p) for a in ATT for p in (0.2, 0.8)}
    assert all(r["id"].startswith("row-") and r["label"] in ("negative", "positive") for r in rows)
    assert all(0.5 <= r["confidence"] <= 1 and 0.5 <= r["adv_confidence"] <= 1 for r in rows)
    by_id = {data.classification.ids[i]: data.classification.x[i] for i in range(len(data.classification))}
    assert all(r["text"] == by_id[r["id"]] for r in rows)
    # the run seed's attacked accuracy, recomputed from the rows, is the seed-0 score behind the table
    idx = np.sort(np.random.default_rng(0).choice(len(data.classification), size=40, replace=False))
    run0 = evaluate(models.classifier, [data.classification.x[i] for i in idx], data.classification.y[idx],
                    attacks=ATT, levels=[0.2, 0.8], seed=0)
    for a in ATT:
        mine = [r for r in rows if r["attack"] == a and r["p"] == 0.8]
        assert np.mean([r["adv_correct"] for r in mine]) == pytest.approx(run0.relative(a, 0.8) * run0.clean_score)
        assert all(r["adv_correct"] == (r["adv_prediction"] == r["label"]) for r in mine)
    for name in ("pairs-hypothesis", "pairs-both", "multilabel", "tagging"):
        assert {r["p"] for r in res.records[name]} == {0.2, 0.8}
    assert all(r["perturbed_premise"] == r["premise"] for r in res.records["pairs-hypothesis"])
    ml = res.records["multilabel"][0]
    assert set(ml["label"]) <= set(conftest_labels()) and isinstance(ml["adv_logits"], list)
    tg = res.records["tagging"][0]
    assert len(tg["tokens"]) == len(tg["perturbed_tokens"]) == len(tg["label"]) and tg["label"][-1] is None


def conftest_labels():
    return ("toxic", "insult", "threat")


def test_resume_from_the_store_makes_no_model_call(toy):
    store = MemoryStore()
    models, data, first = _run(toy, store=store)
    calls = models.classifier.calls
    assert calls > 0 and len(store) > 0
    again = ex.run(models, data, small(), store=store, progress=False)
    assert models.classifier.calls == calls and models.tagger.calls > 0
    assert again.to_dict() == first.to_dict()
    # a changed setting that changes what is computed reads nothing it should not: new cells are computed
    more = ex.run(models, data, small(**{"classification.n": 41}), store=store, progress=False)
    assert models.classifier.calls > calls and more.value("n_test") == 41


def test_a_model_at_chance_is_flagged_and_its_attack_numbers_withheld(toy):
    models, data = toy()
    rng = np.random.default_rng(3)
    coin = ex.Models(classifier=lambda texts: rng.normal(size=(len(texts), 2)))  # ignores the text
    res = ex.run(coin, ex.Data(classification=data.classification), small(), progress=False)
    m = res.metrics
    assert m["model_at_chance"].value is True and res.model_at_chance
    lo, hi = m["clean_score"].ci
    assert lo <= m["chance_score"].value  # the rule: the clean interval reaches the majority-class share
    assert res.warnings and "at chance" in res.warnings[0] and "no information" in res.warnings[0]
    assert "carry no information" in res.summary and "most harmful" not in res.summary
    assert "ranking" not in res.tables and m["kendall_tau_paper"].value is None and m["kendall_tau_paper"].note
    assert m["most_harmful_attacker"].value is None and m["mean_relative_score_high"].value is None
    assert all(m[f"attackers_above_chance_at_p_{p:g}"].value is None for p in (0.2, 0.8))


def test_a_task_close_to_chance_is_left_out_of_the_headline_with_the_reason(toy):
    """Issue 26, item 5: clean score not at least 0.2 above the majority share -> no ranking, no counts."""
    models, data = toy(n=120)
    y = np.asarray(data.classification.y)

    def weak(texts):  # wrong on about a quarter of the texts: clear of chance, but by less than 0.2
        z = sentiment_logits(texts)
        flip = np.array([zlib.crc32(t.encode()) % 4 == 0 for t in texts])
        z[flip] = z[flip][:, ::-1]
        return z

    res = ex.run(ex.Models(classifier=weak), ex.Data(classification=data.classification),
                 small(**{"classification.n": 120}), progress=False)
    m = res.metrics
    s0, chance = m["clean_score"].value, m["chance_score"].value
    assert chance == pytest.approx(max(np.mean(y), 1 - np.mean(y)))
    assert m["clean_score"].ci[0] > chance and s0 - chance < 0.2, (s0, chance)  # the case this test is about
    assert m["model_at_chance"].value is False and m["in_headline"].value is False
    assert "ranking" not in res.tables and m["attackers_above_chance_at_p_0.8"].value is None
    row = res.tables["task_summary"].records()[0]
    assert row["in headline"] is False and "only" in row["left out because"] and row["most harmful"] is None
    assert any("left out" in w for w in res.warnings) and "Left out of the headline" in res.summary
    strict = ex.run(ex.Models(classifier=weak), ex.Data(classification=data.classification),
                    small(**{"classification.n": 120, "headline.min_margin": 0.0}), progress=False)
    assert "ranking" in strict.tables and strict.value("in_headline") is True


def test_fewer_than_three_seeds_give_no_interval_over_the_seeds_but_one_over_the_texts(toy):
    _, _, res = _run(toy, cfg=small(**{"seeds.n_seeds": 1}))
    r = res.metric("edit_fit_pearson_r_over_seeds")
    assert r.interval is None and "fewer than three" in r.note
    tau = res.metric("kendall_tau_paper")
    assert tau.interval is not None and tau.ci[1] > tau.ci[0]  # one seed: the texts still vary
    _, _, res3 = _run(toy, cfg=small(**{"seeds.n_seeds": 3}))
    r3 = res3.metric("edit_fit_pearson_r_over_seeds")
    assert r3.interval is not None and -1 <= r3.ci[0] <= r3.value <= r3.ci[1] <= 1


def test_every_interval_holds_its_estimate_and_stays_in_range(toy):
    _, _, res = _run(toy)
    bounds = {"τ in [-1, 1]": (-1, 1), "r in [-1, 1]": (-1, 1)}
    for key, m in res.metrics.items():
        if m.interval is not None:
            lo, hi = m.ci
            assert lo <= m.value <= hi, key
            b = bounds.get(m.unit, (0, 1) if "fraction" in m.unit or m.unit == "AUROC" else (None, None))
            assert (b[0] is None or lo >= b[0]) and (b[1] is None or hi <= b[1]), key
        assert m.label, key
    for t in res.tables.values():
        for col, lo_i, hi_i in t.interval_columns():
            j = t.columns.index(col)
            for row in t.rows:
                if row[lo_i] is not None:
                    assert row[lo_i] <= row[j] <= row[hi_i]


@pytest.mark.parametrize("form", ["tensor", "tuple", "dict", "model_output"])
def test_every_model_output_form_gives_the_same_result(toy, form):
    torch = pytest.importorskip("torch")

    class Out(dict):
        @property
        def logits(self):
            return self["logits"]

    wrap = {"tensor": lambda z: torch.as_tensor(z), "tuple": lambda z: (torch.as_tensor(z), None),
            "dict": lambda z: {"logits": z}, "model_output": lambda z: Out(logits=torch.as_tensor(z))}[form]
    models, data = toy()
    cfg = small(**{"pairs.enabled": False, "multilabel.enabled": False, "tagging.enabled": False})
    plain = ex.run(ex.Models(classifier=sentiment_logits), data, cfg, progress=False)
    other = ex.run(ex.Models(classifier=lambda t: wrap(sentiment_logits(t))), data, cfg, progress=False)
    assert other.to_dict() == plain.to_dict()


def test_bad_inputs_are_refused_before_any_model_call(toy):
    models, data = toy()
    with pytest.raises(TypeError, match="models must be"):
        ex.run({"classifier": models.classifier}, data, small())
    with pytest.raises(TypeError, match="config must be"):
        ex.run(models, data, {"seed": 0})
    bad = ex.Data(classification=Split(["a text", 3], np.array([0, 1])))
    with pytest.raises(TypeError, match="data.classification.x"):
        ex.run(models, bad, small())
    bad = ex.Data(classification=Split(data.classification.x, np.full(60, 0.5)))
    with pytest.raises(TypeError, match="data.classification.y"):
        ex.run(models, bad, small())
    with pytest.raises(ValueError, match="nothing to run"):
        ex.run(ex.Models(), data, small())
    with pytest.raises(ValueError, match="defense.enabled needs"):
        ex.run(models, data, small(**{"defense.enabled": True}))
    assert models.classifier.calls == 0 and models.pairs.calls == 0


def test_skipped_task_types_are_noted(toy):
    models, data = toy()
    res = ex.run(ex.Models(classifier=models.classifier, skipped={"pairs": "not loaded here"}),
                 ex.Data(classification=data.classification), small(), progress=False)
    assert list(res.records) == ["classification"]
    assert any("pairs (not loaded here)" in n for n in res.notes) and "Skipped: pairs" in res.summary
    assert any("tagging (models.tagger and data.tagging not given)" in n for n in res.notes)
    assert "tagging" not in res.summary  # a task type simply not given is a note, not news


def test_ragged_token_lists_and_tag_lists(toy):
    """Sentences of different lengths with per-sentence tag lists (not a padded matrix)."""
    models, data = toy()
    sents = [s[: 3 + k % 4] for k, s in enumerate(data.tagging.x)]
    tags = [t[: len(s)] for s, t in zip(sents, data.tagging.y, strict=True)]
    res = ex.run(ex.Models(tagger=models.tagger), ex.Data(tagging=Split(sents, tags, label_names=data.tagging.label_names)),
                 small(), progress=False)
    rows = res.records["tagging"]
    assert {len(r["tokens"]) for r in rows} == {3, 4, 5, 6}
    assert all(len(r["label"]) == len(r["tokens"]) == len(r["perturbed_tokens"]) for r in rows)


def test_figures_lead_with_clean_vs_attacked_and_show_ten_attackers_as_small_multiples(toy):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    _, _, res = _run(toy, cfg=small(**{"attack.attacks": list(zp.ATTACKS), "pairs.enabled": False,
                                       "multilabel.enabled": False, "tagging.enabled": False}))
    figs = ex.figures(res)
    assert [f.name for f in figs] == ["clean-vs-attacked", "relative-score-vs-p", "edit-distance-vs-degradation"]
    from matplotlib.container import BarContainer

    bars = [c for c in figs[0].figure.axes[0].containers if isinstance(c, BarContainer)]
    assert [len(c) for c in bars] == [10, 10]  # one bar per attacker and level
    assert all(c.errorbar is not None for c in bars)  # each with its interval
    panels = [ax for ax in figs[1].figure.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == list(zp.ATTACKS)  # one panel per attacker
    for f in figs:
        plt.close(f.figure)
    again = ex.figures(ex.Result.from_dict(json.loads(json.dumps(res.to_dict()))))  # from the saved result
    assert len(again) == 3
    for f in again:
        plt.close(f.figure)


def test_intervals_are_paired_an_attack_that_changes_no_prediction_has_no_spread(toy):
    """s*(p) resamples each text with its clean and attacked outcome together: an attacker that never changes a
    prediction (truncate keeps the word count this classifier reads) gives s* = 1 on every resample, a zero-width
    interval; resampling the clean and attacked scores apart would give a wide one."""
    _, data = toy(n=80)

    def by_length(texts):  # class = parity of the number of words
        return np.array([[2.0, 0.0] if len(t.split()) % 2 else [0.0, 2.0] for t in texts])

    cfg = small(**{"classification.n": 80, "attack.attacks": ["truncate", "segment"],
                   "pairs.enabled": False, "multilabel.enabled": False, "tagging.enabled": False})
    res = ex.run(ex.Models(classifier=by_length), ex.Data(classification=data.classification), cfg, progress=False)
    cells = {(r["attack"], r["p"]): r for r in res.cells()}
    for p in (0.2, 0.8):
        c = cells[("truncate", p)]
        assert c["s*(p)"] == 1.0 and c["s*(p)_ci_low"] == c["s*(p)_ci_high"] == 1.0
        assert c["s(p)_ci_high"] - c["s(p)_ci_low"] > 0.1  # the score itself still varies with the texts drawn
    assert cells[("segment", 0.8)]["s*(p)_ci_high"] > cells[("segment", 0.8)]["s*(p)_ci_low"]


def test_the_offline_command_runs_and_refuses_bad_settings(tmp_path, capsys):
    from zeroe_perturb.experiment.__main__ import main

    assert main(["--quiet", "--out", str(tmp_path), "--set", "classification.n=40", "--set", "seeds.n_seeds=1",
                 "--set", 'attack.attacks=["visual", "truncate", "intrude"]', "--set", "seeds.n_resamples=200"]) == 0
    out = capsys.readouterr().out
    assert "Text classification: clean accuracy" in out
    saved = ex.Result.load(tmp_path / "result.json")
    assert saved.value("n_test") == 40 and saved.config["attack"]["attacks"] == ["visual", "truncate", "intrude"]
    for bad in (["--set", "attack.levels=[0]"], ["--set", "attack.attaks=[]"], ["--preset", "full"], ["--set", "x"]):
        with pytest.raises(SystemExit) as e:
            main(bad)
        assert e.value.code == 2
    assert "did you mean 'attacks'" in capsys.readouterr().err


def test_the_ranking_ends_say_whether_the_next_attacker_is_separated(toy):
    """"The most harmful attacker is X" is a verdict: the summary and the metrics give its s* distance to the next
    attacker with the paired interval over the items, and say "not separated" where that interval reaches 0."""
    _, _, res = _run(toy)
    m = res.metrics
    rel = {r["attack"]: r["s*(p)"] for r in res.cells() if r["p"] == 0.8}
    order = sorted(rel, key=rel.get)
    for end, (a, b) in (("most", order[:2]), ("least", order[-1:-3:-1])):
        assert m[f"{end}_harmful_attacker"].value == a
        gap = m[f"{end}_harmful_gap"]
        assert gap.value == pytest.approx(abs(rel[b] - rel[a]), abs=1e-12) and gap.value >= 0
        assert gap.interval.low <= gap.value <= gap.interval.high
        verdict = "separated from" if gap.interval.low > 0 else "not separated from"
        assert f"{verdict} {b}" in m[f"{end}_harmful_attacker"].note
        assert f"{verdict} {b}: s* difference {gap.value:+.3f}" in res.summary


def test_a_harmless_attacker_is_separated_from_a_harmful_one_by_a_paired_interval(toy):
    """truncate never changes the parity classifier's prediction (s* = 1 on every resample), segment does: the
    gap's paired interval is 1 minus segment's s* interval, so the two are separated exactly when segment's s*
    interval stays below 1. The texts are labelled with the classifier's own answer (clean accuracy 1), so the
    task is in the headline."""
    _, data = toy(n=80)

    def by_length(texts):
        return np.array([[2.0, 0.0] if len(t.split()) % 2 else [0.0, 2.0] for t in texts])

    texts = list(data.classification.x)
    labelled = Split(texts, by_length(texts).argmax(1))
    cfg = small(**{"classification.n": 80, "attack.attacks": ["truncate", "segment"],
                   "pairs.enabled": False, "multilabel.enabled": False, "tagging.enabled": False})
    res = ex.run(ex.Models(classifier=by_length), ex.Data(classification=labelled), cfg, progress=False)
    seg = {(r["attack"], r["p"]): r for r in res.cells()}[("segment", 0.8)]
    m = res.metrics
    assert m["most_harmful_attacker"].value == "segment" and m["least_harmful_attacker"].value == "truncate"
    for end in ("most", "least"):
        gap = m[f"{end}_harmful_gap"]
        assert gap.value == pytest.approx(1 - seg["s*(p)"], abs=1e-12)
        assert gap.interval.low == pytest.approx(1 - seg["s*(p)_ci_high"], abs=1e-6)
        assert gap.interval.high == pytest.approx(1 - seg["s*(p)_ci_low"], abs=1e-6)
        assert ("not separated" not in m[f"{end}_harmful_attacker"].note) == (seg["s*(p)_ci_high"] < 1)
