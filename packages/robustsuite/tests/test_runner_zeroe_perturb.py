"""The Zéroe runner on the embedded defaults with tiny parameters."""

import json

import numpy as np
import pytest

from robustsuite import runners
from robustsuite.runners import zeroe_perturb as runner


def test_zeroe_runner_section_is_well_formed(tmp_path):
    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    params = {**runner.DEFAULTS, "model": "builtin:text-tiny", "dataset": "builtin:sentiment-mini", "defense": True,
              "n_test": 60, "levels": [0.2, 0.8], "n_train": 120, "epochs": 1,
              "one_one_attacks": ["intrude"], "loo_held_out": ["truncate"],
              "attacks": ["intrude", "truncate", "visual", "disemvowel"], "n_seeds": 2, "tasks": []}
    sec = runner.run(ctx, params)
    names = [t.name for t in sec.tables]
    assert names == ["levels", "ranking", "defense", "defense_ranking"]
    levels = sec.tables[0]
    assert [r[0] for r in levels.rows] == ["intrude", "truncate", "visual", "disemvowel"]
    for row in levels.rows:
        assert all(0.0 <= v <= 1.5 for v in row[1:3]) and all(v >= 0 for v in row[3:5])
        assert row[3] < row[4]  # more characters changed at p = 0.8 than at p = 0.2
        for k in (5, 8):  # mean s*(p) over the seeds inside its interval
            assert row[k + 1] <= row[k] <= row[k + 2]
    assert levels.columns[5:8] == ["mean s*(0.2)", "mean s*(0.2)_ci_low", "mean s*(0.2)_ci_high"]
    assert sec.metrics["n_seeds"] == 2 and 0 < sec.metrics["chance_relative"] < 1
    assert 0.5 < sec.metrics["clean_score"] <= 1.0
    assert sec.metrics["mean_relative_high"] < 1.0  # attacks hurt the tiny model
    assert sorted(r[1] for r in sec.tables[1].rows) == sorted(levels.rows[i][0] for i in range(4))
    assert len(sec.figures) == 2 and all((tmp_path / f.path).is_file() for f in sec.figures)
    assert np.isfinite(sec.metrics["mean_delta_one_one"]) and np.isfinite(sec.metrics["mean_delta_loo"])
    assert sec.tables[1].columns == ["rank", "attack", "s*", "paper rank"]
    assert -1 <= sec.metrics["kendall_tau_paper_ci_low"] <= sec.metrics["kendall_tau_paper"] \
        <= sec.metrics["kendall_tau_paper_ci_high"] <= 1
    json.dumps(sec.metrics)
    # resume: finished sub-units are read back, giving the same section
    again = runner.run(ctx, params)
    assert again.tables[0].rows == levels.rows and again.tables[2].rows == sec.tables[2].rows


@pytest.mark.slow
def test_demo_defaults_wordnet_roberta_paper_effects(tmp_path):
    """The demo defaults (builtin:wordnet-roberta on builtin:wordnet-topics): s*(p) clear of the chance line at
    p = 0.5 for every attacker, the visual attacker effective (byte-level BPE sees look-alike characters), the
    ranking compared with Table 5, and per-sample rows logged for the main level."""
    from scipy.stats import binomtest

    from zeroe_perturb.benchmark import BenchmarkResult
    from zeroe_perturb.ranking import kendall_tau_vs_paper

    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0, log_format="jsonl")
    params = dict(runner.DEFAULTS)
    assert params["model"] == "builtin:wordnet-roberta" and params["dataset"] == "builtin:wordnet-topics"
    sec = runner.run(ctx, params)
    m = sec.metrics
    levels = sec.tables[0]
    col = {c: k for k, c in enumerate(levels.columns)}
    rows = {r[0]: r for r in levels.rows}
    assert len(rows) == 10
    chance = m["chance_relative"]
    clean_ci = binomtest(round(m["clean_score"] * m["n_test"]), m["n_test"]).proportion_ci()
    assert clean_ci.low > chance * m["clean_score"]  # the model is far above the majority guess
    for a, r in rows.items():  # p = 0.5: every attacker's interval over the seeds lies above the chance line
        assert r[col["mean s*(0.5)_ci_low"]] > chance, a
    assert m["n_above_chance_p0.5"] == 10
    # visual is no longer inert: its attacked accuracy interval (Clopper-Pearson) lies below the clean one
    bench = BenchmarkResult.from_dict(json.loads((ctx.work_dir() / "benchmark.json").read_text()))
    s_vis = bench.relative("visual", 0.2) * bench.clean_score
    vis_ci = binomtest(round(s_vis * bench.n), bench.n).proportion_ci()
    assert vis_ci.high < clean_ci.low
    seeds = [bench] + [BenchmarkResult.from_dict(json.loads((ctx.work_dir() / f"benchmark_seed{k}.json")
                                                            .read_text())) for k in range(1, params["n_seeds"])]
    taus = [kendall_tau_vs_paper(b, 0.8, params["paper_task"])[0] for b in seeds]
    assert m["kendall_tau_paper"] == pytest.approx(np.mean(taus))
    assert min(taus) <= m["kendall_tau_paper_ci_low"] <= m["kendall_tau_paper_ci_high"] <= max(taus)
    # per-sample rows: one per text and attacker at the main level, predictions consistent with the scores
    assert len(ctx.samples) == 5  # classification, pairs (hypothesis, both), multi-label, tagging
    lines = [json.loads(x) for x in (tmp_path / ctx.samples[0]).read_text().splitlines() if x.strip()]
    assert len(lines) == 10 * m["n_test"]
    assert {"id", "label", "prediction", "perturbed_text", "adv_prediction"} <= set(lines[0])
    for a in ("visual", "intrude"):
        mine = [x for x in lines if x["attack"] == a]
        acc = np.mean([x["adv_prediction"] == x["label"] for x in mine])
        assert acc == pytest.approx(bench.relative(a, 0.8) * bench.clean_score)


@pytest.mark.slow
def test_textattack_greedy_wir_with_stopwords_on_the_builtin_text_model(tmp_path):
    """A full ``textattack.Attack`` (goal function + constraints + greedy WIR) with a Zéroe transformation
    on builtin:text-tiny: it flips some correctly classified test texts and never edits a stopword."""
    import importlib.util

    if importlib.util.find_spec("textattack") is None:  # not importorskip: the offline shim must run first
        pytest.skip("textattack not installed")
    from zeroe_perturb._textattack_compat import ENGLISH_STOPWORDS, import_textattack
    from zeroe_perturb.integrations import textattack_transformation

    ta = import_textattack()
    from textattack import Attack
    from textattack.attack_results import SkippedAttackResult, SuccessfulAttackResult
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR

    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    clf = ctx.model("builtin:text-tiny")
    split = ctx.dataset("builtin:sentiment-mini").test

    class Wrapper(ta.models.wrappers.ModelWrapper):
        model = None

        def __call__(self, texts):
            return np.asarray(clf(list(texts)))

    stop = set(ENGLISH_STOPWORDS)
    attack = Attack(UntargetedClassification(Wrapper()), [RepeatModification(), StopwordModification(stop)],
                    textattack_transformation("intrude", phi=0.5, n_candidates=3, seed=0),
                    GreedyWordSwapWIR(wir_method="delete"))
    results = [attack.attack(split.x[i], int(split.y[i])) for i in range(12)]
    done = [r for r in results if not isinstance(r, SkippedAttackResult)]
    ok = [r for r in done if isinstance(r, SuccessfulAttackResult)]
    assert done and ok
    from collections import Counter

    for r in ok:  # every stopword occurrence of the input is still there (intrude may split other words)
        before = Counter(r.original_result.attacked_text.words)
        after = Counter(r.perturbed_result.attacked_text.words)
        assert all(after[w] >= n for w, n in before.items() if w in stop), (r.original_result.attacked_text.text,
                                                                            r.perturbed_result.attacked_text.text)


def test_zeroe_runner_other_task_types_with_logs_matching_the_aggregates(tmp_path):
    """Pairs (hypothesis / both), multi-label and POS tagging on the shipped WordNet task models: one row per
    attacker in the tasks table with s*(p) inside its interval, and the per-sample logs reproduce the scores."""
    from zeroe_perturb.benchmark import BenchmarkResult, auroc

    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0, log_format="jsonl")
    attacks = ["intrude", "segment", "visual"]
    params = {**runner.DEFAULTS, "n_test": 40, "n_task": 40, "levels": [0.2, 0.8], "attacks": attacks,
              "n_seeds": 2}
    sec = runner.run(ctx, params)
    tables = {t.name: t for t in sec.tables}
    assert list(tables) == ["levels", "ranking", "tasks", "task_summary"]
    rows = tables["tasks"].rows
    tasks = ["pairs (hypothesis)", "pairs (both)", "multi-label", "tagging"]
    assert sorted({r[0] for r in rows}) == sorted(tasks)
    assert [r[1] for r in rows if r[0] == "tagging"] == ["intrude", "visual"]  # segment is not applied to tagging
    for r in rows:
        assert 0.5 < r[2] <= 1.0  # every task model is well above chance on clean data
        for k in (3, 6):
            assert r[k + 1] <= r[k] <= r[k + 2]
    for key in ("pairs_hypothesis", "pairs_both", "multilabel", "tagging"):
        m = sec.metrics
        assert m[f"{key}_mean_relative_high_ci_low"] <= m[f"{key}_mean_relative_high"] \
            <= m[f"{key}_mean_relative_high_ci_high"]
    assert sec.metrics["tagging_mean_relative_high"] < 1.0
    assert "Other task types" in sec.summary

    def read(name):
        path = next(tmp_path / s for s in ctx.samples if s.endswith(f"--{name}.jsonl"))
        return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]

    def bench(name):
        return BenchmarkResult.from_dict(json.loads((ctx.work_dir() / f"{name}_seed0.json").read_text()))

    for target in ("hypothesis", "both"):
        lines, b = read(f"pairs-{target}"), bench(f"pairs_{target}")
        for a in attacks:
            mine = [x for x in lines if x["attack"] == a]
            assert len(mine) == 40
            if target == "hypothesis":
                assert all(x["perturbed_premise"] == x["premise"] for x in mine)
            acc = np.mean([x["adv_prediction"] == x["label"] for x in mine])
            assert acc == pytest.approx(b.relative(a, 0.8) * b.clean_score)
    lines, b = read("multilabel"), bench("multilabel")
    for a in attacks:
        mine = [x for x in lines if x["attack"] == a]
        y = np.zeros((len(mine), 8), int)
        for i, x in enumerate(mine):
            y[i, x["label"]] = 1
        assert auroc(y, np.array([x["adv_logits"] for x in mine])) == pytest.approx(b.relative(a, 0.8) * b.clean_score)
    lines, b = read("tagging"), bench("tagging")
    for a in ("intrude", "visual"):
        mine = [x for x in lines if x["attack"] == a]
        assert all(len(x["perturbed_tokens"]) == len(x["tokens"]) == len(x["adv_prediction"]) for x in mine)
        acc = sum(x["n_correct_adv"] for x in mine) / sum(x["n_scored"] for x in mine)
        assert acc == pytest.approx(b.relative(a, 0.8) * b.clean_score)


@pytest.mark.parametrize("bad", [{"n_test": 0}, {"n_seeds": 0}, {"lr": -1.0}, {"n_task": 0}, {"split": "dev"},
                                 {"metric": "f1"}, {"paper_task": "QA"}, {"epochs": 0}])
def test_bounds_reject_bad_values_before_any_work(bad):
    from robustsuite.config import validate_method_params
    from robustsuite.errors import ConfigError

    key = next(iter(bad))
    with pytest.raises(ConfigError, match=key):
        validate_method_params(runner.NAME, bad)
    validate_method_params(runner.NAME, {key: runner.DEFAULTS[key]})  # the default itself is accepted


@pytest.mark.parametrize("bad, match", [({"levels": [0.0, 0.5]}, "levels"), ({"tasks": ["qa"]}, "tasks"),
                                        ({"pairs_targets": ["premise"]}, "pairs_targets")])
def test_list_parameters_are_checked_before_loading_models(tmp_path, bad, match, monkeypatch):
    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0)
    monkeypatch.setattr(ctx, "model", lambda spec: (_ for _ in ()).throw(AssertionError("model loaded")))
    with pytest.raises(ValueError, match=match):
        runner.run(ctx, {**runner.DEFAULTS, **bad})


def test_user_run_naming_its_own_model_skips_the_builtin_task_models_with_a_note(tmp_path):
    ctx = runners.RunContext(run_dir=tmp_path, method=runner.NAME, seed=0,
                             allowed_models=frozenset({"builtin:text-tiny"}))
    params = {**runner.DEFAULTS, "model": "builtin:text-tiny", "dataset": "builtin:sentiment-mini", "n_test": 30,
              "levels": [0.5], "attacks": ["truncate", "intrude", "visual"], "n_seeds": 1}
    sec = runner.run(ctx, params)
    assert [t.name for t in sec.tables] == ["levels", "ranking"]
    assert any("pairs, multilabel, tagging skipped" in n for n in sec.notes)
