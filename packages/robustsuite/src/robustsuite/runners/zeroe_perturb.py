"""Zéroe section: the ten low-level attackers against a text classifier (attacker × level table, Table 5
ranking, Fig. 5 plot) and, for Hugging Face classifiers, 1-1 and leave-one-out adversarial training (Eq. 2).

Only the public API of ``zeroe_perturb`` is called here.
"""

from __future__ import annotations

import json

import numpy as np

from ..report import Section, Table

NAME = "zeroe_perturb"
TITLE = "Zéroe: low-level adversarial text attacks"
PAPER = "002"
DEFAULTS: dict = {
    "model": "builtin:wordnet-roberta",  # byte-level BPE: accents and look-alike characters reach the model
    "dataset": "builtin:wordnet-topics",
    "split": "test",
    "n_test": 200,  # test texts attacked (the whole split when larger than it)
    "attacks": None,  # None = all ten
    "levels": [0.2, 0.5, 0.8],  # the paper's low / mid / high
    "metric": "accuracy",
    "n_seeds": 3,  # attack seeds (run seed, +1, …) for the s*(p) intervals and the s*(p) figure
    "confidence": 0.95,  # level of the percentile-bootstrap intervals over the attack seeds
    "n_boot": 2000,  # bootstrap resamples of the seeds (zeroe_perturb.summarize_seeds)
    "paper_task": "TC",  # Table 5 column the measured ranking is compared with (Kendall τ)
    # adversarial training (only for classifiers exposing .model/.tokenizer, e.g. builtin:text-tiny); off in the
    # demo: fine-tuning the RoBERTa-style default does not fit its ~2 min CPU budget (package CLI instead)
    "defense": False,
    "n_train": 600,
    "one_one_attacks": ["intrude", "visual", "disemvowel"],  # 1-1 (α, β) over these (diagonal: α = β)
    "loo_held_out": ["visual", "truncate"],  # leave-one-out held-out attackers
    "epochs": 2,
    "lr": 1e-3,
    "train_batch_size": 32,  # fine-tuning batch (AdamW), zeroe_perturb.defense.FineTuneConfig's default
    "weight_decay": 0.01,  # AdamW weight decay, FineTuneConfig's default
    "max_length": 64,  # tokens per text when fine-tuning a classifier that does not state its own max_length
    "clean_copies": True,  # train on the clean texts plus one attacked copy each (keeps clean accuracy)
    # the paper's other task types (§4.1), each with its own model and data (shipped WordNet 3.0 tasks; [] = none)
    "tasks": ["pairs", "multilabel", "tagging"],
    "n_task": 200,  # test items per extra task (pairs, lemma entries, sentences)
    "pairs_model": "builtin:wordnet-pairs-roberta",  # list[(premise, hypothesis)] -> (N, K) logits
    "pairs_dataset": "builtin:wordnet-pairs",
    "pairs_targets": ["hypothesis", "both"],  # attack the hypothesis only, or both sentences (SNLI, §4.1)
    "multilabel_model": "builtin:wordnet-multilabel-roberta",  # list[str] -> (N, K) logits, one sigmoid per label
    "multilabel_dataset": "builtin:wordnet-multilabel",
    "multilabel_metric": "auroc",  # macro AUROC over the labels (the paper's toxic-comment metric)
    "tagging_model": "builtin:wordnet-pos-roberta",  # list[list[str]] -> list[(n_i, K) logits]
    "tagging_dataset": "builtin:wordnet-pos",
}
TASKS = ("pairs", "multilabel", "tagging")
BOUNDS = {
    "split": {"pattern": "^(train|val|test)$"},
    "n_test": {"ge": 1},
    "n_seeds": {"ge": 1, "le": 100},
    "n_train": {"ge": 1},
    "epochs": {"ge": 1, "le": 1000},
    "lr": {"gt": 0, "le": 1},
    "train_batch_size": {"ge": 1, "le": 4096},
    "weight_decay": {"ge": 0, "le": 1},
    "max_length": {"ge": 8, "le": 4096},
    "confidence": {"gt": 0, "lt": 1},
    "n_boot": {"ge": 100, "le": 1_000_000},
    "n_task": {"ge": 1},
    "metric": {"pattern": "^(accuracy|auroc)$"},
    "multilabel_metric": {"pattern": "^(accuracy|auroc)$"},
    "paper_task": {"pattern": "^(POS|NLI|TC)$"},
}
LOGS_SAMPLES = True


def _subset(n_total: int, n: int | None, seed: int) -> np.ndarray:
    if n is None or n >= n_total:
        return np.arange(n_total)
    return np.sort(np.random.default_rng(seed).choice(n_total, size=int(n), replace=False))


def _cached(ctx, name: str, compute):
    """Resume support: a finished sub-unit's JSON result is kept in the method's work dir."""
    path = ctx.work_dir() / f"{name}.json"
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    result = compute()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result), encoding="utf-8")
    tmp.replace(path)
    return result


def _log_main_level(ctx, clf, texts, labels, idx, attacks, level: float) -> None:
    """Per-sample rows (``ctx.log_samples``) at the main (high) level for the run seed: the same perturbed texts
    the benchmark scored (same cell seeds)."""
    if getattr(ctx, "log_format", None) is None or not hasattr(ctx, "log_samples"):
        return
    from zeroe_perturb.benchmark import attack_texts, predict_logits

    pred = predict_logits(clf, texts).argmax(axis=1)
    rows = []
    for a in attacks:
        adv, dist, _ = attack_texts(texts, a, level, seed=ctx.seed)
        adv_pred = predict_logits(clf, adv).argmax(axis=1)
        rows += [{"id": int(i), "attack": a, "p": level, "label": int(y), "prediction": int(pr), "text": t,
                  "perturbed_text": x, "adv_prediction": int(ap), "edit_distance": float(d)}
                 for i, y, pr, t, x, ap, d in zip(idx, labels, pred, texts, adv, adv_pred, dist, strict=True)]
    ctx.log_samples(rows)


def _check_params(p: dict, levels: list[float]) -> None:
    """Checks the BOUNDS cannot express (list items), before any model is loaded."""
    if not levels or any(not 0 < x <= 1 for x in levels):
        raise ValueError(f"levels must be a non-empty list of perturbation probabilities in (0, 1]; got {levels}")
    unknown = sorted(set(p["tasks"]) - set(TASKS))
    if unknown:
        raise ValueError(f"tasks: unknown {unknown}; choose from {list(TASKS)}")
    bad = sorted(set(p["pairs_targets"]) - {"hypothesis", "both"})
    if "pairs" in p["tasks"] and (bad or not p["pairs_targets"]):
        raise ValueError(f"pairs_targets must be a non-empty list of 'hypothesis' / 'both'; got {p['pairs_targets']}")


def _task_data(ctx, spec: str, n: int):
    """``(inputs, targets, classes, test indices)`` of a task dataset's test split: the first ``n`` items of a
    seeded random subset (no label alignment: a task model's labels are its dataset's)."""
    from ..loaders import load_dataset

    ds = load_dataset(spec)
    split = ds.test.head(ctx.limit) if ctx.limit is not None else ds.test
    idx = _subset(len(split.x), n, ctx.seed)
    return [split.x[i] for i in idx], split.y[idx], ds.classes, idx


def _benchmark_seeds(ctx, name: str, n_seeds: int, compute) -> list:
    from zeroe_perturb.benchmark import BenchmarkResult

    return [BenchmarkResult.from_dict(_cached(ctx, f"{name}_seed{k}", lambda k=k: compute(ctx.seed + k).to_dict()))
            for k in range(n_seeds)]


def _other_tasks(ctx, p: dict, attacks: list[str], levels: list[float]):
    """Sentence pairs (hypothesis / both attacked), multi-label classification and POS tagging (§4.1): s(0), and
    s*(p) per attacker and level with a bootstrap interval over the attack seeds
    (``zeroe_perturb.summarize_seeds``); per-sample rows at the highest level for the run seed."""
    import zeroe_perturb as zp

    n_seeds, n, high = int(p["n_seeds"]), int(p["n_task"]), max(levels)
    boot = dict(confidence=float(p["confidence"]), n_boot=int(p["n_boot"]), seed=ctx.seed)
    results: dict[str, tuple] = {}  # task label -> (SeedSummary, model spec)
    allowed = getattr(ctx, "allowed_models", None)  # a user run names its models: default builtins are skipped
    skipped = [t for t in p["tasks"] if allowed is not None and p[f"{t}_model"].startswith("builtin:")
               and p[f"{t}_model"] not in allowed]
    tasks = [t for t in p["tasks"] if t not in skipped]
    if "pairs" in tasks:
        model = ctx.model(p["pairs_model"])
        x, y, _, idx = _task_data(ctx, p["pairs_dataset"], n)
        y = np.asarray(y)
        for target in p["pairs_targets"]:
            res = _benchmark_seeds(ctx, f"pairs_{target}", n_seeds, lambda s, t=target: zp.evaluate_pairs(
                model, x, y, target=t, attacks=attacks, levels=levels, seed=s))
            results[f"pairs ({target})"] = (zp.summarize_seeds(res, chance=zp.chance_score(y), **boot),
                                            p["pairs_model"])
            _log_pairs(ctx, model, x, y, idx, attacks, high, target)
    if "multilabel" in tasks:
        model = ctx.model(p["multilabel_model"])
        x, y, _, idx = _task_data(ctx, p["multilabel_dataset"], n)
        y = np.asarray(y)
        res = _benchmark_seeds(ctx, "multilabel", n_seeds, lambda s: zp.evaluate(
            model, x, y, attacks=attacks, levels=levels, metric=p["multilabel_metric"], seed=s))
        # exact-match accuracy over a label matrix has no constant-guess line here: NaN
        chance = zp.chance_score(y, "auroc") if p["multilabel_metric"] == "auroc" else float("nan")
        results["multi-label"] = (zp.summarize_seeds(res, chance=chance, **boot), p["multilabel_model"])
        _log_multilabel(ctx, model, x, y, idx, attacks, high)
    if "tagging" in tasks:
        model = ctx.model(p["tagging_model"])
        x, y, _, idx = _task_data(ctx, p["tagging_dataset"], n)
        tags = [y[i, :len(t)].tolist() for i, t in enumerate(x)]  # padded tag matrix -> one list per sentence
        tag_attacks = [a for a in attacks if a in zp.TAGGING_ATTACKS]  # segment merges tagged tokens (§3.2)
        res = _benchmark_seeds(ctx, "tagging", n_seeds, lambda s: zp.evaluate_tagging(
            model, x, tags, attacks=tag_attacks, levels=levels, seed=s))
        results["tagging"] = (zp.summarize_seeds(res, chance=zp.tagging_chance_score(tags), **boot),
                              p["tagging_model"])
        _log_tagging(ctx, model, x, tags, idx, tag_attacks, high)

    pct = f"{100 * float(p['confidence']):g} %"
    rows, summary_rows, metrics, parts = [], [], {}, []
    cols = sum_cols = []
    for task, (sm, model) in results.items():
        cols, task_rows = sm.tasks_table()
        rows += [[task, *r] for r in task_rows]
        sum_cols, row = sm.summary_row()
        summary_rows.append([task, model, *row])
        key = task.replace(" (", "_").replace(")", "").replace("-", "")
        m, lo, hi = sm.mean_relative_high
        metrics.update({f"{key}_clean_score": sm.clean_score, f"{key}_mean_relative_high": m,
                        f"{key}_mean_relative_high_ci_low": lo, f"{key}_mean_relative_high_ci_high": hi,
                        f"{key}_chance_relative": sm.chance_relative})
        parts.append(f"{task} {sm.metric} {sm.clean_score:.3f} → mean s*({high:g}) {m:.3f} [{lo:.3f}, {hi:.3f}], "
                     f"most harmful {sm.most_harmful}")
    notes = [f"Task(s) {', '.join(skipped)} skipped: this run names its own models and not the builtin "
             f"{', '.join(p[t + '_model'] for t in skipped)}; set tasks = [] or name a model per task "
             "(pairs_model, multilabel_model, tagging_model)."] if skipped else []
    if not results:
        return [], {}, notes, ""
    tables = [
        Table("tasks", f"The paper's other task types (§4.1): s(0) and mean s*(p) over {n_seeds} attack seeds with "
              f"its {pct} bootstrap interval, per task, attacker and level", ["task", *cols], rows),
        Table("task_summary", f"Per task type at p = {high:g}: clean score, chance line (constant guess / s(0)), "
              "mean s* over the attackers with its bootstrap interval over the seeds, the most harmful attacker, "
              "and how many attackers' intervals lie above the chance line", ["task", "model", *sum_cols],
              summary_rows),
    ]
    ordered = sorted(summary_rows, key=lambda r: r[6])
    overlap = [f"{a[0]} / {b[0]}" for a, b in zip(ordered, ordered[1:], strict=False) if a[8] >= b[7]]
    summary = f" Other task types at p = {high:g}: " + "; ".join(parts) + "."
    if overlap:
        summary += " Overlapping intervals (no clear order): " + ", ".join(overlap) + "."
    notes += ["Pairs: WordNet definition pairs, label 1 when the hypothesis defines a hypernym of the premise's "
             "synset (an is-a entailment), 0 for an unrelated synset; multi-label: a noun lemma's entry labelled "
             "with the lexicographer files of its senses; tagging: WordNet example sentences, each token tagged with "
             "its one part of speech in WordNet's lexicon (others not scored), perturbed token by token (segment is "
             "not applied to tagging, as in the paper). See robustsuite._wordnet_tasks for the exact derivation."]
    return tables, metrics, notes, summary


def _logging(ctx) -> bool:
    return getattr(ctx, "log_format", None) is not None and hasattr(ctx, "log_samples")


def _log_pairs(ctx, model, pairs, y, idx, attacks, level: float, target: str) -> None:
    if not _logging(ctx):
        return
    from zeroe_perturb.benchmark import level_seed
    from zeroe_perturb.tasks import attack_pairs

    z0 = np.asarray(model(pairs))
    rows = []
    for a in attacks:
        adv, dist = attack_pairs(pairs, a, level, seed=level_seed(ctx.seed, a, level), target=target)
        z = np.asarray(model(adv))
        rows += [{"id": int(i), "attack": a, "p": level, "target": target, "label": int(lab),
                  "prediction": int(c.argmax()), "premise": pr[0], "hypothesis": pr[1], "perturbed_premise": ad[0],
                  "perturbed_hypothesis": ad[1], "adv_prediction": int(ca.argmax()), "edit_distance": float(d)}
                 for i, lab, c, pr, ad, ca, d in zip(idx, y, z0, pairs, adv, z, dist, strict=True)]
    ctx.log_samples(rows, name=f"pairs-{target}")


def _log_multilabel(ctx, model, texts, y, idx, attacks, level: float) -> None:
    if not _logging(ctx):
        return
    from zeroe_perturb.benchmark import attack_texts

    z0 = np.asarray(model(texts))
    rows = []
    for a in attacks:
        adv, dist, _ = attack_texts(texts, a, level, seed=ctx.seed)
        z = np.asarray(model(adv))
        rows += [{"id": int(i), "attack": a, "p": level, "label": np.flatnonzero(lab).tolist(),
                  "prediction": np.flatnonzero(c > 0).tolist(), "text": t, "perturbed_text": x,
                  "adv_prediction": np.flatnonzero(ca > 0).tolist(), "adv_logits": [float(v) for v in ca],
                  "edit_distance": float(d)}
                 for i, lab, c, t, x, ca, d in zip(idx, y, z0, texts, adv, z, dist, strict=True)]
    ctx.log_samples(rows, name="multilabel")


def _log_tagging(ctx, model, sents, tags, idx, attacks, level: float) -> None:
    if not _logging(ctx):
        return
    from zeroe_perturb.tasks import attack_sentences

    z0 = model(sents)
    rows = []
    for a in attacks:
        adv = attack_sentences(sents, a, level, seed=ctx.seed)  # the sentences evaluate_tagging scored
        z = model(adv)
        for i, s, t, ad, c, ca in zip(idx, sents, tags, adv, z0, z, strict=True):
            scored = np.asarray(t) >= 0
            pred = np.asarray(ca).argmax(1)
            rows.append({"id": int(i), "attack": a, "p": level, "label": list(t),
                         "prediction": np.asarray(c).argmax(1).tolist(), "tokens": s, "perturbed_tokens": ad,
                         "adv_prediction": pred.tolist(), "n_scored": int(scored.sum()),
                         "n_correct_adv": int((pred[scored] == np.asarray(t)[scored]).sum())})
    ctx.log_samples(rows, name="tagging")


def run(ctx, params: dict) -> Section:
    import zeroe_perturb as zp
    from zeroe_perturb.benchmark import BenchmarkResult, plot_relative_scores

    p = {**DEFAULTS, **params}
    attacks = list(p["attacks"] or zp.ATTACKS)
    levels = [float(x) for x in p["levels"]]
    _check_params(p, levels)
    clf = ctx.model(p["model"])
    ds = ctx.dataset(p["dataset"])
    split = getattr(ds, p["split"])
    idx = _subset(len(split.x), p["n_test"], ctx.seed)
    texts = [split.x[i] for i in idx]
    labels = np.asarray(split.y)[idx]

    seeds_res = [BenchmarkResult.from_dict(_cached(ctx, "benchmark" if k == 0 else f"benchmark_seed{k}",
                                                   lambda k=k: zp.evaluate(
        clf, texts, labels, attacks=attacks, levels=levels, metric=p["metric"], seed=ctx.seed + k,
        progress=ctx.progress).to_dict())) for k in range(int(p["n_seeds"]))]
    bench = seeds_res[0]
    chance = zp.chance_score(labels, p["metric"]) if p["metric"] in ("accuracy", "auroc") else None
    sm = zp.summarize_seeds(seeds_res, chance=chance, paper_task=p["paper_task"], confidence=float(p["confidence"]),
                            n_boot=int(p["n_boot"]), seed=ctx.seed)
    pct = f"{100 * float(p['confidence']):g} %"
    high, agree = sm.high, sm.agreement
    table = Table("levels", f"Relative score s*(p) = s(p)/s(0) (Eq. 1) per attacker and level (seed {ctx.seed}), "
                  "the mean character edit distance per text, and the mean s*(p) over "
                  f"{len(seeds_res)} attack seeds with its {pct} bootstrap interval", *sm.levels_table())
    ranking = bench.ranking(high)
    rank_table = Table("ranking", f"Harmfulness ranking at p = {high:g} (seed {ctx.seed}) beside the paper's "
                       f"Table 5 rank ({p['paper_task']} column; '-' = not ranked there)",
                       *zp.ranking_table(bench, high, p["paper_task"]))
    fig = bench.plot_edit_distance()
    fig.axes[0].set_title(f"{p['model']} on {p['dataset']}")
    figure = ctx.figure(fig, "edit-distance-vs-degradation",
                        "Mean character edit distance per text vs relative score s*(p), one point per "
                        "attacker and level (paper Fig. 5)")
    fig2 = plot_relative_scores(seeds_res, chance=chance)
    curves = ctx.figure(fig2, "relative-score-vs-p",
                        f"s*(p) per attacker, mean and 95 % bootstrap interval over {len(seeds_res)} attack seeds; "
                        "dashed red: chance level (majority class) relative to the clean score")
    a0, slope, r = bench.edit_distance_fit()
    metrics: dict = {
        "clean_score": bench.clean_score,
        "metric": bench.metric,
        "n_test": bench.n,
        "most_harmful_high": ranking[0][1],
        "least_harmful_high": ranking[-1][1],
        "mean_relative_high": bench.mean_relative(high),
        "edit_fit_slope": slope,
        "edit_fit_pearson_r": r,
        "n_seeds": len(seeds_res),
    }
    if agree is not None:
        metrics.update(kendall_tau_paper=agree["tau"], kendall_tau_paper_ci_low=agree["tau_ci_low"],
                       kendall_tau_paper_ci_high=agree["tau_ci_high"])
    _log_main_level(ctx, clf, texts, labels, idx, attacks, high)
    if chance is not None:
        metrics["chance_relative"] = sm.chance_relative
        for x in levels:  # attackers whose s*(x) interval over the seeds lies wholly above the chance line
            metrics[f"n_above_chance_p{x:g}"] = sm.n_above_chance(x)
    tables = [table, rank_table]
    notes = ["Attacks follow the §3.1 protocol with φ = p; each cell uses its own seed stream derived from the "
             "run seed, so the table is reproducible."]
    task_summary = ""
    if p["tasks"]:
        task_tables, task_metrics, task_notes, task_summary = _other_tasks(ctx, p, attacks, levels)
        tables += task_tables
        metrics.update(task_metrics)
        notes += task_notes

    hf_model = getattr(clf, "model", None)
    tokenizer = getattr(clf, "tokenizer", None)
    if p["defense"] and hf_model is not None and tokenizer is not None:
        from zeroe_perturb.defense import (
            DefenseResult,
            FineTuneConfig,
            leave_one_out_defense,
            one_one_defense,
        )

        tr_idx = _subset(len(ds.train.x), p["n_train"], ctx.seed + 1)
        tr_x = [ds.train.x[i] for i in tr_idx]
        tr_y = np.asarray(ds.train.y)[tr_idx]
        cfg = FineTuneConfig(epochs=int(p["epochs"]), lr=float(p["lr"]), batch_size=int(p["train_batch_size"]),
                             weight_decay=float(p["weight_decay"]),
                             max_length=int(getattr(clf, "max_length", p["max_length"])))
        # Departure (documented in the note): the defended models are fine-tuned from the already trained
        # clean model, not from a pre-trained checkpoint as in the paper, to stay within a CPU demo budget.
        common = dict(levels=levels, metric=p["metric"], config=cfg, seed=ctx.seed, clean_model=hf_model,
                      clean_copies=bool(p["clean_copies"]))
        defense_rows = []
        means = {}
        if p["one_one_attacks"]:
            oo = DefenseResult.from_dict(_cached(ctx, "one_one", lambda: one_one_defense(
                hf_model, tokenizer, tr_x, tr_y, texts, labels, train_attacks=list(p["one_one_attacks"]),
                **common).to_dict()))
            means["1-1 (α, β)"] = oo.mean_improvement()
            means["1-1 (α, α)"] = oo.mean_improvement(diagonal_only=True)
            defense_rows += [["1-1", *r] for r in oo.table()[1]]
        if p["loo_held_out"]:
            loo = DefenseResult.from_dict(_cached(ctx, "leave_one_out", lambda: leave_one_out_defense(
                hf_model, tokenizer, tr_x, tr_y, texts, labels, attacks=attacks,
                held_out=list(p["loo_held_out"]), **common).to_dict()))
            means["leave-one-out"] = loo.mean_improvement()
            defense_rows += [["LOO", *r] for r in loo.table()[1]]
        tables.append(Table("defense", "Adversarial training: Δ_τ(p) = σ(p)/s(0) − s*(p) (Eq. 2)",
                            ["defense", "trained on", "tested on", "p", "s*(p)", "σ(p)/s(0)", "Δ"], defense_rows))
        tables.append(Table("defense_ranking", "Defenses ranked by mean Δ over attacked cells (Table 3)",
                            ["rank", "defense", "mean Δ"],
                            [[k + 1, name, round(v, 4)] for k, (name, v) in
                             enumerate(sorted(means.items(), key=lambda kv: -kv[1]))]))
        keys = {"1-1 (α, α)": "mean_delta_one_one_diagonal", "1-1 (α, β)": "mean_delta_one_one",
                "leave-one-out": "mean_delta_loo"}
        for name, v in means.items():
            metrics[keys[name]] = v
        copies = "clean plus attacked copies of " if p["clean_copies"] else "attacked copies of "
        notes.append(f"Defended models are fine-tuned for {cfg.epochs} epoch(s) on {copies}{len(tr_x)} training "
                     "texts starting from the clean model (the paper fine-tunes RoBERTa from its pre-trained "
                     "checkpoint).")

    summary = (f"Clean {bench.metric} {bench.clean_score:.3f} on {bench.n} texts. At p = {high:g} the most harmful "
               f"attacker is {ranking[0][1]} (s* = {ranking[0][2]:.3f}), the least harmful {ranking[-1][1]} "
               f"(s* = {ranking[-1][2]:.3f}); s*(p) falls with the characters changed (slope {slope:.3f} per "
               f"edit, r = {r:.2f}).")
    if chance is not None:
        above, below = sm.n_above_chance(high), sm.n_below_chance(high)
        summary += (f" Over {len(seeds_res)} attack seeds at p = {high:g}: {above} attacker(s) stay above the "
                    f"chance line ({sm.chance_relative:.3f}) with intervals clear of it, {below} fall "
                    f"below it, and {len(attacks) - above - below} have intervals overlapping it.")
    if agree is not None:
        summary += (f" Kendall τ against the paper's Table 5 ({p['paper_task']}) ranking at p = {high:g}: "
                    f"{agree['tau']:.2f} [{agree['tau_ci_low']:.2f}, {agree['tau_ci_high']:.2f}] over the seeds.")
    summary += task_summary
    return Section(title=TITLE, summary=summary, metrics=metrics, tables=tables, figures=[figure, curves],
                   notes=notes)
