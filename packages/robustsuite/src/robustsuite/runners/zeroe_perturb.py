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
    "paper_task": "TC",  # Table 5 column the measured ranking is compared with (Kendall τ)
    # adversarial training (only for classifiers exposing .model/.tokenizer, e.g. builtin:text-tiny); off in the
    # demo: fine-tuning the RoBERTa-style default does not fit its ~2 min CPU budget (package CLI instead)
    "defense": False,
    "n_train": 600,
    "one_one_attacks": ["intrude", "visual", "disemvowel"],  # 1-1 (α, β) over these (diagonal: α = β)
    "loo_held_out": ["visual", "truncate"],  # leave-one-out held-out attackers
    "epochs": 2,
    "lr": 1e-3,
    "clean_copies": True,  # train on the clean texts plus one attacked copy each (keeps clean accuracy)
}


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


def run(ctx, params: dict) -> Section:
    import zeroe_perturb as zp
    from zeroe_perturb.benchmark import (
        BenchmarkResult,
        chance_score,
        evaluate,
        plot_relative_scores,
        relative_intervals,
    )

    p = {**DEFAULTS, **params}
    attacks = list(p["attacks"] or zp.ATTACKS)
    levels = [float(x) for x in p["levels"]]
    clf = ctx.model(p["model"])
    ds = ctx.dataset(p["dataset"])
    split = getattr(ds, p["split"])
    idx = _subset(len(split.x), p["n_test"], ctx.seed)
    texts = [split.x[i] for i in idx]
    labels = np.asarray(split.y)[idx]

    bench = BenchmarkResult.from_dict(_cached(ctx, "benchmark", lambda: evaluate(
        clf, texts, labels, attacks=attacks, levels=levels, metric=p["metric"], seed=ctx.seed,
        progress=ctx.progress).to_dict()))

    extra = [BenchmarkResult.from_dict(_cached(ctx, f"benchmark_seed{k}", lambda k=k: evaluate(
        clf, texts, labels, attacks=attacks, levels=levels, metric=p["metric"], seed=ctx.seed + k,
        progress=ctx.progress).to_dict())) for k in range(1, int(p["n_seeds"]))]
    seeds_res = [bench, *extra]
    ci = relative_intervals(seeds_res)
    cols, rows = bench.table()
    edit = {(s.attack, s.p): s.mean_edit_distance for s in bench.scores}
    table = Table("levels", f"Relative score s*(p) = s(p)/s(0) (Eq. 1) per attacker and level (seed {ctx.seed}), "
                  "the mean character edit distance per text, and the mean s*(p) over "
                  f"{len(seeds_res)} attack seeds with its 95 % bootstrap interval",
                  cols + [f"edits({x:g})" for x in levels]
                  + [c for x in levels for c in (f"mean s*({x:g})", f"mean s*({x:g})_ci_low",
                                                  f"mean s*({x:g})_ci_high")],
                  [r + [round(edit[(r[0], x)], 2) for x in levels]
                   + [round(v, 4) for x in levels for v in ci[(r[0], x)]] for r in rows])
    high = max(levels)
    ranking = bench.ranking(high)
    from zeroe_perturb.ranking import PAPER_TABLE5, ranking_agreement

    paper_rank = PAPER_TABLE5.get(p["paper_task"], {})
    rank_table = Table("ranking", f"Harmfulness ranking at p = {high:g} (seed {ctx.seed}) beside the paper's "
                       f"Table 5 rank ({p['paper_task']} column; '-' = not ranked there)",
                       ["rank", "attack", "s*", "paper rank"],
                       [[k, a, round(v, 4), paper_rank.get(a, "-")] for k, a, v in ranking])
    agree = ranking_agreement(seeds_res, high, p["paper_task"], seed=ctx.seed) if sum(
        a in paper_rank for a in attacks) >= 3 else None
    fig = bench.plot_edit_distance()
    fig.axes[0].set_title(f"{p['model']} on {p['dataset']}")
    figure = ctx.figure(fig, "edit-distance-vs-degradation",
                        "Mean character edit distance per text vs relative score s*(p), one point per "
                        "attacker and level (paper Fig. 5)")
    chance = chance_score(labels, p["metric"]) if p["metric"] in ("accuracy", "auroc") else None
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
        "mean_relative_high": float(np.mean([bench.relative(a, high) for a in attacks])),
        "edit_fit_slope": slope,
        "edit_fit_pearson_r": r,
        "n_seeds": len(seeds_res),
    }
    if agree is not None:
        metrics.update(kendall_tau_paper=agree["tau"], kendall_tau_paper_ci_low=agree["tau_ci_low"],
                       kendall_tau_paper_ci_high=agree["tau_ci_high"])
    _log_main_level(ctx, clf, texts, labels, idx, attacks, high)
    if chance is not None:
        metrics["chance_relative"] = chance / bench.clean_score if bench.clean_score else float("nan")
    if chance is not None:
        for x in levels:  # attackers whose s*(x) interval over the seeds lies wholly above the chance line
            metrics[f"n_above_chance_p{x:g}"] = sum(ci[(a, x)][1] > metrics["chance_relative"] for a in attacks)
    tables = [table, rank_table]
    notes = ["Attacks follow the §3.1 protocol with φ = p; each cell uses its own seed stream derived from the "
             "run seed, so the table is reproducible."]

    hf_model = getattr(clf, "model", None)
    tokenizer = getattr(clf, "tokenizer", None)
    if p["defense"] and hf_model is not None and tokenizer is not None:
        from zeroe_perturb.defense import FineTuneConfig, leave_one_out_defense, one_one_defense

        tr_idx = _subset(len(ds.train.x), p["n_train"], ctx.seed + 1)
        tr_x = [ds.train.x[i] for i in tr_idx]
        tr_y = np.asarray(ds.train.y)[tr_idx]
        cfg = FineTuneConfig(epochs=int(p["epochs"]), lr=float(p["lr"]),
                             max_length=int(getattr(clf, "max_length", 64)))
        # Departure (documented in the note): the defended models are fine-tuned from the already trained
        # clean model, not from a pre-trained checkpoint as in the paper, to stay within a CPU demo budget.
        common = dict(levels=levels, metric=p["metric"], config=cfg, seed=ctx.seed, clean_model=hf_model,
                      clean_copies=bool(p["clean_copies"]))
        defense_rows = []
        means = {}
        if p["one_one_attacks"]:
            oo = _cached(ctx, "one_one", lambda: one_one_defense(
                hf_model, tokenizer, tr_x, tr_y, texts, labels, train_attacks=list(p["one_one_attacks"]),
                **common).to_dict())
            means["1-1 (α, β)"] = oo["mean_delta"]
            diag = [c["delta"] for c in oo["cells"] if c["train"] == c["test"] and c["p"] > 0]
            means["1-1 (α, α)"] = float(np.mean(diag)) if diag else float("nan")
            defense_rows += [["1-1", c["train"], c["test"], c["p"], round(c["baseline_rel"], 4),
                              round(c["sigma_rel"], 4), round(c["delta"], 4)] for c in oo["cells"]]
        if p["loo_held_out"]:
            loo = _cached(ctx, "leave_one_out", lambda: leave_one_out_defense(
                hf_model, tokenizer, tr_x, tr_y, texts, labels, attacks=attacks,
                held_out=list(p["loo_held_out"]), **common).to_dict())
            means["leave-one-out"] = loo["mean_delta"]
            defense_rows += [["LOO", c["train"], c["test"], c["p"], round(c["baseline_rel"], 4),
                              round(c["sigma_rel"], 4), round(c["delta"], 4)] for c in loo["cells"]]
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
    below = [a for a in attacks if chance is not None and ci[(a, high)][2] < metrics["chance_relative"]]
    above = [a for a in attacks if chance is not None and ci[(a, high)][1] > metrics["chance_relative"]]
    if chance is not None:
        overlap = len(attacks) - len(above) - len(below)
        summary += (f" Over {len(seeds_res)} attack seeds at p = {high:g}: {len(above)} attacker(s) stay above the "
                    f"chance line ({metrics['chance_relative']:.3f}) with intervals clear of it, {len(below)} fall "
                    f"below it, and {overlap} have intervals overlapping it.")
    if agree is not None:
        summary += (f" Kendall τ against the paper's Table 5 ({p['paper_task']}) ranking at p = {high:g}: "
                    f"{agree['tau']:.2f} [{agree['tau_ci_low']:.2f}, {agree['tau_ci_high']:.2f}] over the seeds.")
    return Section(title=TITLE, summary=summary, metrics=metrics, tables=tables, figures=[figure, curves],
                   notes=notes)
