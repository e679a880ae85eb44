"""Figures drawn from a :class:`Result`'s own tables and metrics (matplotlib, imported here only)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robustsuite_common.experiment import ExperimentResult, Figure
from robustsuite_common.extras import optional_import


def _plt():
    matplotlib = optional_import("matplotlib", extra="zeroe-perturb[plot]", feature="drawing figures")
    matplotlib.use("Agg", force=False)  # before pyplot is imported
    import matplotlib.pyplot as plt

    return plt


def _err(rows: list[dict], col: str) -> np.ndarray:
    lo = [r[col] - r[f"{col}_ci_low"] if r[f"{col}_ci_low"] is not None else 0.0 for r in rows]
    hi = [r[f"{col}_ci_high"] - r[col] if r[f"{col}_ci_high"] is not None else 0.0 for r in rows]
    return np.array([lo, hi])


def _task_rows(result: ExperimentResult) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    if "levels" in result.tables:
        out["text classification"] = result.tables["levels"].records()
    if "tasks" in result.tables:
        for r in result.tables["tasks"].records():
            out.setdefault(str(r["task"]), []).append(r)
    return out


def _clean_vs_attacked(result: ExperimentResult, summary: dict[str, dict]) -> Any:
    """Clean score against the attacked score per attacker, each level a bar with its interval, per task."""
    plt = _plt()
    tasks = _task_rows(result)
    fig, axes = plt.subplots(len(tasks), 1, figsize=(10, 3.2 * len(tasks)), squeeze=False)
    for ax, (task, rows) in zip(axes[:, 0], tasks.items(), strict=True):
        s = summary[task]
        attacks = list(dict.fromkeys(r["attack"] for r in rows))
        levels = sorted({r["p"] for r in rows})
        width = 0.8 / len(levels)
        x = np.arange(len(attacks))
        cmap = plt.get_cmap("Blues")
        for k, p in enumerate(levels):
            sel = [next(r for r in rows if r["attack"] == a and r["p"] == p) for a in attacks]
            ax.bar(x - 0.4 + width * (k + 0.5), [r["s(p)"] for r in sel], width, yerr=_err(sel, "s(p)"),
                   color=cmap(0.4 + 0.5 * k / max(len(levels) - 1, 1)), label=f"attacked, p = {p:g}",
                   error_kw={"lw": 0.8, "capsize": 1.5})
        ax.axhline(s["s(0)"], color="k", lw=1.2, label="clean s(0)")
        if s.get("s(0)_ci_low") is not None:
            ax.axhspan(s["s(0)_ci_low"], s["s(0)_ci_high"], color="k", alpha=0.12, lw=0)
        if s.get("chance") is not None:
            ax.axhline(s["chance"], color="tab:red", ls="--", lw=1.2, label="chance (majority share; 0.5 for AUROC)")
        flag = "" if s.get("in headline") else "  [left out of the headline: " + str(s.get("left out because")) + "]"
        ax.set_title(f"{task}: clean vs attacked {s['metric']}{flag}", fontsize=9, loc="left", pad=18)
        ax.set_xticks(x, attacks, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(s["metric"])
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=7, ncol=len(levels) + 2, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    return fig


def _small_multiples(rows: list[dict], s: dict) -> Any:
    """s*(p) per attacker, one panel each (the others in grey), with the interval band and the chance line."""
    plt = _plt()
    attacks = list(dict.fromkeys(r["attack"] for r in rows))
    ncol = min(5, len(attacks))
    nrow = int(np.ceil(len(attacks) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(2.4 * ncol, 2.2 * nrow), sharex=True, sharey=True, squeeze=False)
    curves = {a: sorted((r for r in rows if r["attack"] == a), key=lambda r: r["p"]) for a in attacks}
    chance_rel = s["chance"] / s["s(0)"] if s.get("chance") is not None and s.get("s(0)") else None
    for k, ax in enumerate(axes.ravel()):
        if k >= len(attacks):
            ax.axis("off")
            continue
        a = attacks[k]
        for other, cs in curves.items():
            if other != a:
                ax.plot([0] + [r["p"] for r in cs], [1] + [r["s*(p)"] for r in cs], color="0.8", lw=0.8)
        cs = curves[a]
        ps = [0] + [r["p"] for r in cs]
        ax.plot(ps, [1] + [r["s*(p)"] for r in cs], color="tab:blue", lw=1.8, marker="o", ms=3)
        if all(r["s*(p)_ci_low"] is not None for r in cs):
            ax.fill_between(ps, [1] + [r["s*(p)_ci_low"] for r in cs], [1] + [r["s*(p)_ci_high"] for r in cs],
                            color="tab:blue", alpha=0.2, lw=0)
        if chance_rel is not None:
            ax.axhline(chance_rel, color="tab:red", ls="--", lw=1)
        ax.set_title(a, fontsize=9)
        ax.set_ylim(0, 1.1)
    for ax in axes[-1]:
        ax.set_xlabel("p")
    for ax in axes[:, 0]:
        ax.set_ylabel("s*(p)")
    fig.tight_layout()
    return fig


def _edit_distance(rows: list[dict], fit: tuple[Any, Any]) -> Any:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    cmap = plt.get_cmap("tab10")
    attacks = list(dict.fromkeys(r["attack"] for r in rows))
    for k, a in enumerate(attacks):
        sel = [r for r in rows if r["attack"] == a]
        ax.scatter([r["edits per text"] for r in sel], [r["s*(p)"] for r in sel], color=cmap(k % 10), s=24, label=a)
    slope, r = fit
    xs = np.array([r_["edits per text"] for r_ in rows])
    ys = np.array([r_["s*(p)"] for r_ in rows])
    if slope is not None and len(xs) > 1:
        a0 = float(np.mean(ys) - slope * np.mean(xs))
        grid = np.linspace(0, max(xs.max(), 1.0), 50)
        ax.plot(grid, a0 + slope * grid, "k--", lw=1, label=f"fit (r = {r:.2f})" if r is not None else "fit")
    ax.set_xlabel("mean character edit distance per text")
    ax.set_ylabel("relative score s*(p)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def figures(result: ExperimentResult) -> list[Figure]:
    """The section's figures, from ``result``'s tables and metrics only: clean against attacked score per attacker
    with intervals (first), s*(p) per attacker as small multiples with the chance line, and the edit distance
    against s*(p) with its least-squares line (paper Fig. 5)."""
    if not isinstance(result, ExperimentResult) or "task_summary" not in result.tables:
        raise TypeError(f"result must be the Result of zeroe_perturb.experiment.run, got {type(result).__name__}")
    summary = {str(r["task"]): r for r in result.tables["task_summary"].records()}
    out = [Figure("clean-vs-attacked", "Clean score s(0) (black line, grey band: its interval) against the attacked "
                                       "score s(p) per attacker and level (bars: mean over the attack seeds with "
                                       "the interval over the items); dashed red: chance", _clean_vs_attacked(result, summary))]
    if "levels" in result.tables:
        rows = result.tables["levels"].records()
        s = summary["text classification"]
        out.append(Figure("relative-score-vs-p", "Text classification: s*(p) = s(p)/s(0) per attacker (blue, band: "
                                                 "interval over the items; grey: the other attackers); dashed red: "
                                                 "chance relative to s(0)", _small_multiples(rows, s)))
        slope = result.metrics.get("edit_fit_slope")
        r = result.metrics.get("edit_fit_pearson_r")
        out.append(Figure("edit-distance-vs-degradation", "Mean character edit distance per text against s*(p), one "
                                                          "point per attacker and level, with the least-squares line "
                                                          "(paper Fig. 5)",
                          _edit_distance(rows, (None if slope is None else slope.value,
                                                None if r is None else r.value))))
    return out
