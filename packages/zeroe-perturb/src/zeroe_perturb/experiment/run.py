"""``run``: the paper's protocol (§4) on every task type given, checkpointed in the caller's store."""

from __future__ import annotations

from typing import Any

import numpy as np

from robustsuite_common.config import config_hash, to_dict
from robustsuite_common.experiment import JSON, Metric, Table, cached

from ._audit import audit_checks
from ._cells import Task, build_task, cell_outputs, clean_outputs, subset
from ._measure import TaskMeasure, measure
from .config import Config
from .effects import defense_metrics, effect_metrics, paper_effects, ranking_tc
from .inputs import Data, Models, check_inputs
from .result import Result, as_rows, metrics, records, summary, tables, warnings_of

TASK_LABELS = {"classification": "text classification", "pairs_hypothesis": "pairs (hypothesis)",
               "pairs_both": "pairs (both)", "multilabel": "multi-label", "tagging": "tagging"}
RECORD_NAMES = {"classification": "classification", "pairs_hypothesis": "pairs-hypothesis",
                "pairs_both": "pairs-both", "multilabel": "multilabel", "tagging": "tagging"}


def _tasks(models: Models, data: Data, config: Config) -> tuple[list[Task], list[str]]:
    """The benchmarks to run (inputs checked, nothing called yet) and the task types skipped for want of a model or
    data."""
    c = config
    attacks, seed = c.attack.attacks, c.seed
    wanted = [("classification", True), ("pairs", c.pairs.enabled), ("multilabel", c.multilabel.enabled),
              ("tagging", c.tagging.enabled)]
    tasks, skipped = [], []
    for kind, enabled in wanted:
        if not enabled:
            continue
        model, split = models.of(kind), data.of(kind)
        if model is None or split is None:
            field = {"classification": "classifier", "tagging": "tagger"}.get(kind, kind)
            missing = " and ".join(x for x, v in ((f"models.{field}", model), (f"data.{kind}", split)) if v is None)
            skipped.append(f"{kind} ({models.skipped.get(kind) or missing + ' not given'})")
            continue
        name = models.name(kind)
        if kind == "classification":
            tasks.append(build_task("classification", kind, TASK_LABELS["classification"], model, name, split,
                                    c.classification.n, seed, c.classification.metric, attacks))
        elif kind == "pairs":
            for target in c.pairs.targets:
                key = f"pairs_{target}"
                tasks.append(build_task(key, kind, TASK_LABELS[key], model, name, split, c.pairs.n, seed, "accuracy",
                                        attacks, target))
        elif kind == "multilabel":
            tasks.append(build_task("multilabel", kind, TASK_LABELS["multilabel"], model, name, split,
                                    c.multilabel.n, seed, c.multilabel.metric, attacks))
        else:
            tasks.append(build_task("tagging", kind, TASK_LABELS["tagging"], model, name, split, c.tagging.n, seed,
                                    "token accuracy", attacks))
    if not tasks:
        raise ValueError("nothing to run: give at least one task type's model and data (e.g. Models(classifier=...) "
                         "with Data(classification=Split(texts, labels)))" + (f"; skipped: {', '.join(skipped)}"
                                                                             if skipped else ""))
    return tasks, skipped


def _check_defense(models: Models, data: Data, config: Config) -> None:
    if not config.defense.enabled:
        return
    clf = models.classifier
    if clf is None or getattr(clf, "model", None) is None or getattr(clf, "tokenizer", None) is None:
        raise ValueError("defense.enabled needs models.classifier to expose a Hugging Face .model and .tokenizer "
                         "(e.g. zeroe_perturb.hf.HFTextClassifier); set defense.enabled = false otherwise")
    if data.train is None or data.classification is None:
        raise ValueError("defense.enabled needs data.train (texts and labels to fine-tune on) and data.classification")


def _progress(total: int, progress: bool):
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the `progress` extra is not installed: no bar
        return None
    return tqdm(total=total, desc="zeroe cells", unit="cell")


def run(models: Models, data: Data, config: Config, *, store: Any = None, progress: bool = True) -> Result:
    """The Zéroe benchmark (§4) on every task type in ``models``/``data`` that ``config`` enables.

    For each task: a seeded subset of the items (``config.<task>.n``), its model's outputs clean and under every
    attacker × level × attack seed (the run seed ``config.seed``, +1, …), each checkpointed in ``store`` (a
    :class:`robustsuite_common.experiment.Store`; ``None``: nothing is written); then s(0), s(p) and s*(p) = s(p)/s(0)
    with intervals over the items, the chance score and the headline rule, the ranking and Kendall τ against the
    paper's Table 5 (text classification), the Fig. 5 fit and, with ``config.defense.enabled``, 1-1 and
    leave-one-out adversarial training (Eq. 2). Inputs are checked before any model call."""
    if not isinstance(config, Config):
        raise TypeError(f"config must be a zeroe_perturb.experiment.Config (e.g. preset('demo')), got "
                        f"{type(config).__name__}")
    check_inputs(models, data)
    tasks, skipped = _tasks(models, data, config)
    _check_defense(models, data, config)
    seeds = tuple(config.seed + k for k in range(config.seeds.n_seeds))
    levels = config.attack.levels
    bar = _progress(sum(len(t.attacks) for t in tasks) * len(levels) * len(seeds) + len(tasks), progress)
    measures: list[TaskMeasure] = []
    recs: dict[str, list[dict[str, Any]]] = {}
    # the text-classification task, its clean outputs and cells (audit check)
    audited: tuple[Any, Any, Any] = (None, None, {})
    try:
        for task in tasks:
            clean = clean_outputs(task, store, config.batch_size)
            if bar is not None:
                bar.update(1)
            cells = {}
            for a in task.attacks:
                for p in levels:
                    for sd in seeds:
                        cells[(a, p, sd)] = cell_outputs(task, a, p, sd, store, config.batch_size)
                        if bar is not None:
                            bar.update(1)
            measures.append(measure(task, clean, cells, config, seeds))
            if task.key == "classification":
                audited = (task, clean, cells)
            recs[RECORD_NAMES[task.key]] = records(task, clean, cells, seeds[0], levels)
    finally:
        if bar is not None:
            bar.close()

    pct = f"{100 * config.seeds.level:g} %"
    tabs = tables(measures, config, pct)
    mets = metrics(measures, config)
    notes = [f"Attacks follow the §3.1 protocol with φ = p; every cell (attacker, level, attack seed) draws its own seed "
             f"stream from the seed, and each item its own item seed, so the numbers are reproducible. Intervals "
             f"({pct}) resample the items, each with its outcomes clean and under every attacker, level and attack "
             "seed (paired: the comparisons and Kendall τ are recomputed on each resample); accuracy's clean interval "
             "is Clopper-Pearson."]
    if skipped:
        notes.append("Task types skipped: " + "; ".join(skipped) + ".")
    if config.defense.enabled:
        dtabs, dmets, dnote = _defense(models, data, config, store, progress)
        tabs.update(dtabs)
        mets.update(dmets)
        notes.append(dnote)
    mets.update(effect_metrics(measures, config))
    mets.update(defense_metrics(tabs, seed=config.seed))
    if (tc := ranking_tc(measures, config)) is not None:
        tabs["ranking_tc"] = tc
    tabs["paper_effects"] = paper_effects(mets)
    checks = audit_checks(*audited, config, seeds)
    text = summary(measures, config, [s for s in skipped if "not given" not in s])
    text += "".join(f" Check {c.id}: {c.status} ({c.detail.split('. ')[0]})." for c in checks)
    return Result(experiment="zeroe_perturb", config=to_dict(config), tables=tabs, metrics=mets, summary=text,
                  records=recs, notes=tuple(notes), warnings=tuple(warnings_of(measures, config)), checks=checks)


def _defense(models: Models, data: Data, config: Config, store: Any, progress: bool):
    """1-1 and leave-one-out adversarial training (§4.3), measured by Eq. 2, each checkpointed."""
    from ..benchmark import check_targets
    from ..defense import DefenseResult, FineTuneConfig, leave_one_out_defense, one_one_defense

    d = config.defense
    clf: Any = models.classifier  # a Hugging Face wrapper (checked before the run: .model and .tokenizer)
    train, test = data.train, data.classification
    assert train is not None and test is not None  # checked before the run
    hf_model, tokenizer = clf.model, clf.tokenizer
    tr = train.select(subset(len(train), d.n_train, config.seed + 1))
    tr_x = list(tr.x)
    tr_y = check_targets("data.train.y", tr.y, len(tr_x), matrix=False)
    te = test.select(subset(len(test), config.classification.n, config.seed))
    te_x = list(te.x)
    te_y = check_targets("data.classification.y", te.y, len(te_x), matrix=False)
    cfg = FineTuneConfig(epochs=d.epochs, lr=d.lr, batch_size=d.batch_size, weight_decay=d.weight_decay,
                         max_length=int(getattr(clf, "max_length", d.max_length)))
    # Departure (documented in the note): the defended models are fine-tuned from the already trained clean model,
    # not from a pre-trained checkpoint as in the paper.
    common: dict[str, Any] = dict(levels=list(config.attack.levels), metric=config.classification.metric,
                                  config=cfg, seed=config.seed, clean_model=hf_model, clean_copies=d.clean_copies,
                                  progress=progress)
    key = config_hash(to_dict(d), to_dict(config.attack), config.classification.metric, config.seed, tr_x,
                      tr_y.tolist(), te_x, te_y.tolist(), models.name("classification"), length=16)
    rows, means = [], {}
    if d.one_one:
        oo = DefenseResult.from_dict(cached(store, f"zeroe/defense/one_one/{key}", lambda: one_one_defense(
            hf_model, tokenizer, tr_x, tr_y, te_x, te_y, train_attacks=list(d.one_one), **common).to_dict(), JSON))
        means["1-1 (α, β)"] = oo.mean_improvement()
        means["1-1 (α, α)"] = oo.mean_improvement(diagonal_only=True)
        rows += [["1-1", *r] for r in oo.table()[1]]
    if d.leave_one_out:
        loo = DefenseResult.from_dict(cached(store, f"zeroe/defense/loo/{key}", lambda: leave_one_out_defense(
            hf_model, tokenizer, tr_x, tr_y, te_x, te_y, attacks=list(config.attack.attacks),
            held_out=list(d.leave_one_out), **common).to_dict(), JSON))
        means["leave-one-out"] = loo.mean_improvement()
        rows += [["LOO", *r] for r in loo.table()[1]]
    tabs = {
        "defense": Table("defense", "Adversarial training: Δ_τ(p) = σ(p)/s(0) − s*(p) (Eq. 2); p = 0: the change of "
                                    "the clean score", ("defense", "trained on", "tested on", "p", "s*(p)", "σ(p)/s(0)",
                                                        "Δ"), as_rows(rows)),
        "defense_ranking": Table("defense_ranking", "Defenses ranked by mean Δ over the attacked cells (Table 3)",
                                 ("rank", "defense", "mean Δ"),
                                 as_rows([k + 1, name, v] for k, (name, v) in
                                         enumerate(sorted(means.items(), key=lambda kv: -kv[1])))),
    }
    keys = {"1-1 (α, α)": "mean_delta_one_one_diagonal", "1-1 (α, β)": "mean_delta_one_one",
            "leave-one-out": "mean_delta_loo"}
    mets = {keys[k]: Metric(v, f"mean Δ of {k} over the attacked cells (Table 3)", "s(p)/s(0)")
            for k, v in means.items() if np.isfinite(v)}
    copies = "clean plus attacked copies of " if d.clean_copies else "attacked copies of "
    note = (f"Defended models are fine-tuned for {cfg.epochs} epoch(s) on {copies}{len(tr_x)} training texts starting "
            "from the clean model (the paper fine-tunes RoBERTa from its pre-trained checkpoint).")
    return tabs, mets, note
