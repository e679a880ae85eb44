"""The experiment's figures, drawn from a result's tables only (matplotlib, imported on first use)."""

from __future__ import annotations

from typing import Any

from robustsuite_common.experiment import ExperimentResult, Figure, Table

__all__ = ["figures"]


def _err(t: Table, col: str) -> tuple[list, list]:
    vals: list[Any] = list(t.column(col))  # numbers or None in a percent column
    lo: list[Any] = list(t.column(col + "_ci_low"))
    hi: list[Any] = list(t.column(col + "_ci_high"))
    return ([max(0.0, (v or 0) - (a if a is not None else (v or 0))) for v, a in zip(vals, lo, strict=True)],
            [max(0.0, (b if b is not None else (v or 0)) - (v or 0)) for v, b in zip(vals, hi, strict=True)])


def _bars(ax, t: Table, groups: list[Any], series: list[tuple[str, list[int]]], cols: list[str]) -> None:
    import numpy as np

    width = 0.8 / len(series)
    x = np.arange(len(groups))
    for j, ((label, idx), col) in enumerate(zip(series, cols, strict=True)):
        vals = [t.rows[i][t.columns.index(col)] for i in idx]
        lo, hi = _err(Table(t.name, t.title, t.columns, tuple(t.rows[i] for i in idx)), col)
        ax.bar(x + (j - (len(series) - 1) / 2) * width, [v or 0 for v in vals], width, yerr=[lo, hi], capsize=2,
               label=label)
    ax.set_xticks(x, groups)
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)


def figures(result: ExperimentResult) -> list[Figure]:
    """Clean against attacked accuracy per system (bars with intervals), the Fig. 1 sweep, and PGD beside
    AutoAttack on the vision systems — drawn from ``result``'s tables only (matplotlib: the ``plot`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs: list[Figure] = []
    if "ior_table" not in result.tables:  # the audit preset: the check alone, nothing to draw
        return figs
    t = result.tables["ior_table"]
    attacks = [c for c in t.columns if c + " over seeds" in t.columns]
    systems = list(dict.fromkeys(t.column("system")))
    fig, axes = plt.subplots(1, len(attacks), figsize=(4.5 * len(attacks), 3.4), squeeze=False)
    for ax, a in zip(axes[0], attacks, strict=True):
        idx = {m: [next(i for i, r in enumerate(t.rows) if r[0] == s and r[1] == m) for s in systems]
               for m in ("-", "cal", "opt")}
        _bars(ax, t, systems, [("clean", idx["-"]), ("plain", idx["-"]), ("cal", idx["cal"]), ("opt", idx["opt"])],
              ["clean", a, a, a])
        ax.set_title(a)
        ax.set_ylabel("accuracy (%)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Clean and adversarial accuracy of each served system: plain attack and the adversary's "
                 "temperatures (95 % intervals)", fontsize=9)
    figs.append(Figure("accuracy-bars", "Clean against attacked accuracy per served system and attack, with the "
                       "adversary's calibrated (cal) and optimised (opt) temperatures; bars are 95 % Clopper-Pearson "
                       "intervals (hull over seeds)", fig))

    if "sweep" in result.tables:
        s = result.tables["sweep"]
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
        ts, qs = s.column("T"), s.column("adversarial accuracy")
        cs: list[Any] = list(s.column("mean confidence"))
        lo, hi = _err(s, "adversarial accuracy")
        axes[0].errorbar(ts, qs, yerr=[lo, hi], fmt="o-", capsize=2)
        axes[0].set_xscale("log")
        axes[0].set_xlabel("served temperature T (log)")
        axes[0].set_ylabel("adversarial accuracy (%)")
        order = sorted(range(len(cs)), key=lambda i: cs[i])
        axes[1].plot([cs[i] for i in order], [qs[i] for i in order], "o-")
        axes[1].set_xlabel("mean predicted-class confidence (%)")
        for ax in axes:
            ax.grid(alpha=0.3)
        fig.suptitle("Q(T): the base model served at T (Fig. 1)", fontsize=9)
        figs.append(Figure("qt-sweep", "Adversarial accuracy against the served temperature and the mean confidence "
                           "it induces (Fig. 1): extreme confidence inflates robustness", fig))

    if "vision_ior" in result.tables:
        v = result.tables["vision_ior"]
        names = [str(m).split(" ")[0] for m in v.column("model")]
        idx = list(range(len(v.rows)))
        series = [("clean", idx), ("plain PGD", idx), ("PGD, cal", idx), ("PGD, opt", idx)]
        cols = ["clean", "plain PGD", "cal", "opt"]
        if any(x is not None for x in v.column("robust accuracy (AutoAttack)")):
            series.append(("AutoAttack", idx))
            cols.append("robust accuracy (AutoAttack)")
        fig, ax = plt.subplots(figsize=(7, 3.4))
        _bars(ax, v, names, series, cols)
        ax.set_ylabel("accuracy (%)")
        ax.legend(fontsize=8)
        fig.suptitle("Vision: PGD under the adversary's temperatures beside standard AutoAttack (95 % intervals)",
                     fontsize=9)
        figs.append(Figure("vision-pgd-autoattack", "Robust accuracy of each served vision system under PGD (plain, "
                           "calibrated, optimised temperature) and under standard AutoAttack on the same images", fig))
    return figs
