"""The experiment's :class:`Result`: tables, metrics, per-sample records, warnings and a summary written from the
measured numbers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from robustsuite_common.experiment import ExperimentResult, Metric, Split, Table, ci_of, headline
from robustsuite_common.intervals import Interval

from .._outputs import softmax_confidence
from ..ranking import _reference
from ._cells import Task
from ._measure import TaskMeasure
from .config import Config

TITLE = "Zéroe: low-level adversarial text attacks"
UNITS = {"accuracy": "fraction of items right", "auroc": "AUROC", "token accuracy": "fraction of tokens right"}


@dataclass(frozen=True)
class Result(ExperimentResult):
    """What :func:`zeroe_perturb.experiment.run` returns (an ``ExperimentResult``: ``tables``, ``metrics``,
    ``records``, ``summary``, ``notes``, ``warnings``, ``to_dict``/``from_dict``/``save``/``load``), with typed
    accessors for the numbers readers ask for first. ``checks`` holds the verdict's checks the run computed
    (``audit.enabled``: the ``zeroe-noise`` check); empty otherwise."""

    #: the experiment's title (the report's section heading)
    title: ClassVar[str] = TITLE

    @property
    def model_at_chance(self) -> bool:
        """Whether the classifier's clean score interval reaches the chance score (its attack numbers then carry
        no information)."""
        return bool(self.value("model_at_chance"))

    @property
    def kendall_tau(self) -> Metric:
        """Kendall τ against the paper's Table 5 ranking, with its interval over the texts (or a note)."""
        return self.metric("kendall_tau_paper")

    def cells(self, task: str = "text classification") -> list[dict[str, Any]]:
        """One dict per (attacker, level) of ``task`` (a name from the ``task_summary`` table): s(p), s*(p) and
        their intervals, edits per text, words changed, whether s(p) stays above chance."""
        if task == "text classification":
            return self.tables["levels"].records()
        rows = [r for r in self.tables["tasks"].records() if r["task"] == task] if "tasks" in self.tables else []
        if not rows:
            raise KeyError(f"no task {task!r}; tasks: {[r['task'] for r in self.tables['task_summary'].records()]}")
        return rows


def as_rows(rows: Iterable[Iterable[Any]]) -> tuple[tuple[Any, ...], ...]:
    """Table rows as :class:`~robustsuite_common.experiment.Table` holds them (tuples)."""
    return tuple(tuple(r) for r in rows)


def _ci(iv: Interval | None) -> tuple[float | None, float | None]:
    return (None, None) if iv is None else iv.ci


def _metric(value: Any, iv: Interval | None, label: str, unit: str, note: str = "") -> Metric:
    if iv is not None:
        return Metric.of(iv, label, unit, note)
    return Metric(value, label, unit, note=note or ("no interval" if isinstance(value, float) else ""))


CELL_COLUMNS = ("attack", "p", "s(p)", "s(p)_ci_low", "s(p)_ci_high", "s*(p)", "s*(p)_ci_low", "s*(p)_ci_high",
                "edits per text", "words changed", "above chance")
CELL_BOUNDS = {"s(p)": (0.0, 1.0), "s*(p)": (0.0, None)}
CELL_UNITS = {"p": "probability per word", "s(p)": "score under attack (mean over the attack seeds)",
              "s*(p)": "s(p) / s(0)", "edits per text": "characters (run seed)",
              "words changed": "fraction of words (run seed)", "above chance": "s(p) interval above the chance score"}


def _cell_rows(m: TaskMeasure) -> list[list[Any]]:
    rows = []
    for a in m.task.attacks:
        for p in m.levels:
            c = m.cells[(a, p)]
            rows.append([a, p, c.score, *_ci(c.score_ci), c.relative, *_ci(c.relative_ci), c.edits, c.words_changed,
                         c.above_chance])
    return rows


def tables(measures: Sequence[TaskMeasure], config: Config, pct: str) -> dict[str, Table]:
    out: dict[str, Table] = {}
    main = next((m for m in measures if m.task.kind == "classification"), None)
    others = [m for m in measures if m.task.kind != "classification"]
    n_seeds = config.seeds.n_seeds
    over = (f"mean over {n_seeds} attack seeds" if n_seeds > 1 else "one attack seed") + \
        f", {pct} bootstrap interval over the items (BCa; each item keeps its outcomes under every attacker and seed)"
    if main is not None:
        out["levels"] = Table("levels", f"Text classification: attacked score s(p) and relative score s*(p) = "
                                        f"s(p)/s(0) (Eq. 1) per attacker and level, {over}; edits and words changed "
                                        "under the run seed", CELL_COLUMNS, as_rows(_cell_rows(main)), CELL_UNITS,
                              CELL_BOUNDS)
        top = main.high  # the level the ranking and the summary use
        out["headline"] = headline(
            f"Text classification: clean {main.task.metric} s(0) against s(p = {top:g}) per attacker ({over})",
            [(r["attack"], (main.clean, *_ci(main.clean_ci)), ci_of(r, "s(p)"), f"{r['attack']}, p = {top:g}")
             for r in out["levels"].records() if r["p"] == top])
        if main.in_headline:
            h, ptask = main.high, config.classification.paper_task
            ref = _reference(ptask)
            col = f"s*({h:g})"
            out["ranking"] = Table(
                "ranking", f"Harmfulness ranking at p = {h:g} by mean s* over the attack seeds, beside the paper's "
                           f"Table 5 rank ({ptask} column; '-' = not ranked there)",
                ("rank", "attack", col, f"{col}_ci_low", f"{col}_ci_high", "paper rank"),
                as_rows([k, a, c.relative, *_ci(c.relative_ci), ref.get(a, "-")]
                        for k, a, c in main.ranking()),
                {col: "s(p) / s(0)"}, {col: (0.0, None)})
    if others:
        out["tasks"] = Table("tasks", f"The paper's other task types (§4.1): s(p) and s*(p) per attacker and level, "
                                      f"{over}", ("task", *CELL_COLUMNS),
                             as_rows([m.task.label, *r] for m in others for r in _cell_rows(m)), CELL_UNITS,
                             CELL_BOUNDS)
    h = config.attack.high
    col = f"mean s*({h:g})"
    rows = []
    for m in measures:
        ok = m.in_headline
        worst = m.ranking()[0] if ok else None
        rows.append([m.task.label, m.task.model_name or None, m.task.metric, m.task.n, m.clean, *_ci(m.clean_ci),
                     m.chance, m.margin, m.at_chance, ok, None if m.at_chance else m.mean_relative_high,
                     *(_ci(m.mean_relative_high_ci) if not m.at_chance else (None, None)),
                     worst[1] if worst else None, worst[2].relative if worst else None,
                     m.n_above_chance(h) if ok else None, len(m.task.attacks), m.reason or None])
    out["task_summary"] = Table(
        "task_summary", f"Per task type: clean score s(0) with its {pct} interval beside the chance score (the "
                        "majority-class share; 0.5 for AUROC) in the same units, and at p = " + f"{h:g}" + " the mean "
                        "relative score over the attackers, the most harmful attacker and how many attackers' attacked "
                        "scores stay above chance. A task whose clean score is at chance, or not at least "
                        f"{config.headline.min_margin:g} above it, is left out of the headline (reason shown).",
        ("task", "model", "metric", "n", "s(0)", "s(0)_ci_low", "s(0)_ci_high", "chance", "margin over chance",
         "at chance", "in headline", col, f"{col}_ci_low", f"{col}_ci_high", "most harmful", "its s*",
         "attackers above chance", "attackers", "left out because"), as_rows(rows),
        {"s(0)": "clean score", "chance": "score of a constant guess", "margin over chance": "s(0) − chance"},
        {"s(0)": (0.0, 1.0), col: (0.0, None)})
    return out


def metrics(measures: Sequence[TaskMeasure], config: Config) -> dict[str, Metric]:
    out: dict[str, Metric] = {}
    h = config.attack.high
    for m in measures:
        main = m.task.kind == "classification"
        pre = "" if main else f"{m.task.key}_"
        what = f"{m.task.label}: " if not main else ""
        unit = UNITS[m.task.metric]
        out[f"{pre}clean_score"] = _metric(m.clean, m.clean_ci, f"{what}clean {m.task.metric} s(0)", unit)
        out[f"{pre}chance_score"] = Metric(m.chance, f"{what}chance score (majority-class share; 0.5 for AUROC)",
                                           unit)
        out[f"{pre}margin_over_chance"] = Metric(m.margin, f"{what}s(0) − chance score", unit)
        out[f"{pre}at_chance" if not main else "model_at_chance"] = Metric(
            m.at_chance, f"{what}clean score interval reaches the chance score", "", note=m.reason if m.at_chance
            else "")
        out[f"{pre}in_headline"] = Metric(m.in_headline, f"{what}counted in the headline numbers", "",
                                          note=m.reason)
        silent = "at chance: attack numbers carry no information" if m.at_chance else ""
        out[f"{pre}mean_relative_score_high"] = _metric(
            None if m.at_chance else m.mean_relative_high, None if m.at_chance else m.mean_relative_high_ci,
            f"{what}mean s*({h:g}) over the {len(m.task.attacks)} attackers", "s(p) / s(0)", silent)
        left = "" if m.in_headline else f"left out of the headline: {m.reason}"
        if main:
            rk = m.ranking() if m.in_headline else None
            for end in ("most", "least"):
                g = m.ends.get(end) if rk else None
                out[f"{end}_harmful_attacker"] = Metric(rk[0 if end == "most" else -1][1] if rk else None,
                                                        f"{end} harmful attacker at p = {h:g}", "",
                                                        note=left or (g.text() if g else ""))
                out[f"{end}_harmful_gap"] = _metric(
                    g.difference if g else None, g.ci if g else None,
                    f"{end} harmful attacker's s*({h:g}) distance to the next in the ranking (paired over the items)",
                    "s(p) / s(0)", left or ("" if g else "one attacker: no neighbour"))
            tau_note = left or ("" if m.tau is not None else "fewer than 3 attackers ranked in Table 5")
            out["kendall_tau_paper"] = _metric(
                m.tau if m.in_headline else None, m.tau_ci if m.in_headline else None,
                f"Kendall τ-b of the s*({h:g}) ranking with the paper's Table 5 ({config.classification.paper_task})",
                "τ in [-1, 1]", tau_note or ("interval over the texts, each with its outcomes under every attacker "
                                             "and seed" if m.tau_ci is not None else "no interval"))
            for p in m.levels:
                out[f"attackers_above_chance_at_p_{p:g}"] = Metric(
                    m.n_above_chance(p) if m.in_headline else None,
                    f"attackers whose attacked {m.task.metric} interval stays above chance at p = {p:g}",
                    f"attackers (of {len(m.task.attacks)})", note=left)
            fit = m.edit_fit
            out["edit_fit_slope"] = Metric(fit["slope"], "slope of s*(p) per edited character (Fig. 5, run seed)",
                                           "s* per character")
            out["edit_fit_pearson_r"] = Metric(fit["pearson_r"], "Pearson r of s*(p) and edits per text over the "
                                                                 "cells (Fig. 5, run seed)", "r in [-1, 1]")
            r_iv = fit["pearson_r_seed_interval"]
            out["edit_fit_pearson_r_over_seeds"] = _metric(
                float(np.mean(fit["pearson_r_seeds"])), r_iv, "Pearson r of Fig. 5, mean over the attack seeds",
                "r in [-1, 1]", "" if r_iv is not None else
                f"fewer than three attack seeds ({len(m.seeds)}): no interval over the seeds")
            out["n_test"] = Metric(m.task.n, "test texts attacked", "texts")
            out["n_seeds"] = Metric(len(m.seeds), "attack seeds", "seeds")
        else:
            out[f"{pre}attackers_above_chance_high"] = Metric(
                m.n_above_chance(h) if m.in_headline else None,
                f"{what}attackers whose attacked score interval stays above chance at p = {h:g}",
                f"attackers (of {len(m.task.attacks)})", note=left)
    return out


def warnings_of(measures: Sequence[TaskMeasure], config: Config) -> list[str]:
    out = []
    for m in measures:
        iv = m.clean_ci
        shown = f"{m.clean:.3f}" + (f" [{iv.low:.3f}, {iv.high:.3f}]" if iv is not None else "")
        if m.at_chance:
            out.append(f"{m.task.label}: the model is at chance — clean {m.task.metric} {shown} reaches the chance "
                       f"score {m.chance:.3f}; its attack numbers carry no information.")
        elif not m.in_headline:
            out.append(f"{m.task.label}: clean {m.task.metric} {shown} is only {m.margin:.3f} above the chance score "
                       f"{m.chance:.3f} (< {config.headline.min_margin:g}); left out of the ranking and the "
                       "attackers-above-chance counts.")
    return out


def _end(m: TaskMeasure, end: str) -> str:
    """``; separated from X: ...`` / ``; not separated from X: ...`` for an end of the ranking, or nothing."""
    g = m.ends.get(end)
    return f"; {g.text()}" if g else ""


def summary(measures: Sequence[TaskMeasure], config: Config, skipped: Sequence[str]) -> str:
    h = config.attack.high
    parts = []
    for m in measures:
        iv = m.clean_ci
        clean = f"{m.clean:.3f}" + (f" [{iv.low:.3f}, {iv.high:.3f}]" if iv is not None else "")
        if m.task.kind == "classification":
            s = (f"Text classification: clean {m.task.metric} s(0) = {clean} on {m.task.n} texts, chance "
                 f"(majority-class share) {m.chance:.3f}.")
            if m.at_chance:
                s += " The classifier is at chance on these texts: the attack numbers carry no information."
            else:
                mi = m.mean_relative_high_ci
                s += (f" Mean s*({h:g}) over the {len(m.task.attacks)} attackers {m.mean_relative_high:.3f}"
                      + (f" [{mi.low:.3f}, {mi.high:.3f}]" if mi is not None else "") + ".")
                if m.in_headline:
                    rk = m.ranking()
                    s += (f" At p = {h:g} the most harmful attacker is {rk[0][1]} (s* = {rk[0][2].relative:.3f}"
                          f"{_end(m, 'most')}), the least harmful {rk[-1][1]} (s* = {rk[-1][2].relative:.3f}"
                          f"{_end(m, 'least')}); {m.n_above_chance(h)} of {len(m.task.attacks)} attackers keep an "
                          f"attacked {m.task.metric} interval above chance.")
                    if m.tau is not None:
                        ti = m.tau_ci
                        s += (f" Kendall τ with the paper's Table 5 ({config.classification.paper_task}) ranking: "
                              f"{m.tau:.2f}" + (f" [{ti.low:.2f}, {ti.high:.2f}]" if ti is not None else "")
                              + " (interval over the texts and attack seeds).")
                else:
                    s += f" Left out of the headline: {m.reason}."
                fit = m.edit_fit
                s += (f" s*(p) falls with the characters changed (slope {fit['slope']:.3f} per edit, "
                      f"r = {fit['pearson_r']:.2f}).")
        else:
            s = f"{m.task.label}: clean {m.task.metric} {clean} against chance {m.chance:.3f}"
            if m.at_chance:
                s += ", at chance: no information in its attack numbers."
            elif not m.in_headline:
                s += f", left out of the headline ({m.reason})."
            else:
                mi = m.mean_relative_high_ci
                s += (f"; mean s*({h:g}) {m.mean_relative_high:.3f}"
                      + (f" [{mi.low:.3f}, {mi.high:.3f}]" if mi is not None else "")
                      + f", most harmful {m.ranking()[0][1]}{_end(m, 'most')}, {m.n_above_chance(h)} of "
                        f"{len(m.task.attacks)} attackers above chance.")
        parts.append(s)
    if skipped:
        parts.append("Skipped: " + "; ".join(skipped) + ".")
    return " ".join(parts)


# ----------------------------------------------------------------------------------------------------------------
# per-sample records


def _names(split: Split, labels: Any) -> list[str]:
    return [split.name_of(int(v)) for v in labels]


def _sigmoid_confidence(z: np.ndarray) -> np.ndarray:
    """Mean over the labels of the probability of the decision taken (max(σ, 1 − σ))."""
    return (1.0 / (1.0 + np.exp(-np.abs(z)))).mean(axis=1)


def records(task: Task, clean_out: Mapping, cell_outs: Mapping, seed: int, levels: Sequence[float]
            ) -> list[dict[str, Any]]:
    """One row per item, attacker and level under the run seed: the user's id, the input and its perturbation,
    the label and predictions as the user names them, confidences, correctness, edits."""
    sp = task.split
    ids = [sp.id_of(i) for i in range(task.n)]
    rows: list[dict[str, Any]] = []
    if task.kind == "tagging":
        tags = task.y
        pred0, conf0 = clean_out["pred"], clean_out["conf"]

        def tag_names(ts):
            return [sp.name_of(t) if t >= 0 else None for t in ts]

        def right(ps, ts):
            return sum(int(p == t) for p, t in zip(ps, ts, strict=True) if t >= 0)

        for a in task.attacks:
            for p in levels:
                out = cell_outs[(a, p, seed)]
                for i in range(task.n):
                    rows.append({"id": ids[i], "attack": a, "p": p, "seed": seed, "tokens": task.items[i],
                                 "perturbed_tokens": out["inputs"][i], "label": tag_names(tags[i]),
                                 "prediction": tag_names(pred0[i]), "confidence": conf0[i],
                                 "adv_prediction": tag_names(out["pred"][i]), "adv_confidence": out["conf"][i],
                                 "n_scored": sum(1 for t in tags[i] if t >= 0), "n_correct": right(pred0[i], tags[i]),
                                 "n_correct_adv": right(out["pred"][i], tags[i]), "edit_distance": out["edit"][i],
                                 "words_changed": out["frac"][i]})
        return rows
    z0 = np.asarray(clean_out["logits"], dtype=np.float64)
    y = np.asarray(task.y)
    if task.kind == "multilabel":
        names = [sp.name_of(k) for k in range(y.shape[1])]

        def on(row):
            return [names[k] for k in np.flatnonzero(row)]

        conf0 = _sigmoid_confidence(z0)
        for a in task.attacks:
            for p in levels:
                out = cell_outs[(a, p, seed)]
                z = np.asarray(out["logits"], dtype=np.float64)
                conf = _sigmoid_confidence(z)
                for i in range(task.n):
                    rows.append({"id": ids[i], "attack": a, "p": p, "seed": seed, "text": task.items[i],
                                 "perturbed_text": out["inputs"][i], "label": on(y[i]), "prediction": on(z0[i] > 0),
                                 "confidence": float(conf0[i]), "adv_prediction": on(z[i] > 0),
                                 "adv_confidence": float(conf[i]), "adv_logits": z[i].tolist(),
                                 "correct": bool(((z0[i] > 0) == y[i].astype(bool)).all()),
                                 "adv_correct": bool(((z[i] > 0) == y[i].astype(bool)).all()),
                                 "edit_distance": out["edit"][i], "words_changed": out["frac"][i]})
        return rows
    pred0, conf0 = z0.argmax(axis=1), softmax_confidence(z0)
    labels, preds = _names(sp, y), _names(sp, pred0)
    for a in task.attacks:
        for p in levels:
            out = cell_outs[(a, p, seed)]
            z = np.asarray(out["logits"], dtype=np.float64)
            pred, conf = z.argmax(axis=1), softmax_confidence(z)
            adv_names = _names(sp, pred)
            for i in range(task.n):
                row = {"id": ids[i], "attack": a, "p": p, "seed": seed}
                if task.kind == "pairs":
                    (pre, hyp), (apre, ahyp) = task.items[i], out["inputs"][i]
                    row.update(target=task.target, premise=pre, hypothesis=hyp, perturbed_premise=apre,
                               perturbed_hypothesis=ahyp)
                else:
                    row.update(text=task.items[i], perturbed_text=out["inputs"][i])
                row.update(label=labels[i], prediction=preds[i], confidence=float(conf0[i]),
                           adv_prediction=adv_names[i], adv_confidence=float(conf[i]),
                           correct=bool(pred0[i] == y[i]), adv_correct=bool(pred[i] == y[i]),
                           edit_distance=out["edit"][i], words_changed=out["frac"][i])
                rows.append(row)
    return rows
