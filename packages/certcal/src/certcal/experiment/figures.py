"""Figures drawn from a :class:`~certcal.experiment.Result` alone (its tables and records; matplotlib, imported
lazily: ``pip install 'certcal[plot]'``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from robustsuite_common.experiment import Figure
from robustsuite_common.extras import optional_import

__all__ = ["figures"]


def _plt() -> Any:
    matplotlib = optional_import("matplotlib", extra="certcal[plot]", feature="drawing certcal's figures")
    matplotlib.use("Agg", force=False)  # before pyplot is imported
    import matplotlib.pyplot as plt

    return plt


def _ace(result: Any, plt: Any) -> Figure | None:
    t = result.tables.get("ace")
    if t is None or not t.rows:
        return None
    rows = t.records()
    norms = {"linf": "L∞", "l2": "L2"}
    labels = [f"{r['configuration'].replace('_', chr(10))}\n{norms.get(r['norm'], r['norm'])} {r['eps']:g}"
              for r in rows]
    pos = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 * len(rows)), 3.6))
    for off, col, name, color in ((-0.2, "clean ECE", "clean", "tab:blue"), (0.2, "attacked ECE", "attacked",
                                                                             "tab:red")):
        v = np.array([r[col] for r in rows], dtype=float)
        lo = np.array([r[f"{col}_ci_low"] if r[f"{col}_ci_low"] is not None else r[col] for r in rows], dtype=float)
        hi = np.array([r[f"{col}_ci_high"] if r[f"{col}_ci_high"] is not None else r[col] for r in rows], dtype=float)
        ax.bar(pos + off, v, width=0.4, color=color, label=name, yerr=[v - lo, hi - v], capsize=2)
    ax.set_xticks(pos, labels, fontsize=7)
    ax.set(ylabel="ECE (%)", title="β-ACE on the base model: ECE clean vs attacked (95 % intervals)")
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return Figure("ace-ece", "β-ACE calibration attacks: the base model's ECE before and after each attack, with "
                  "bootstrap intervals", fig)


def _curves(result: Any, plt: Any) -> Figure | None:
    t = result.tables.get("certified")
    if t is None:
        return None
    rows = [r for r in t.records() if r["certified"]]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for sigma in dict.fromkeys(r["sigma"] for r in rows):
        mine = [r for r in rows if r["sigma"] == sigma]
        rr = [r["radius"] for r in mine]
        axes[0].plot(rr, [r["CBS"] for r in mine], "o-", label=f"σ={sigma:g}")
        (line,) = axes[1].plot(rr, [r["CCE exact"] for r in mine], "o-", label=f"exact σ={sigma:g}")
        axes[1].plot(rr, [r["CCE ADMM"] for r in mine], "s--", color=line.get_color(), label=f"ADMM σ={sigma:g}")
    axes[0].set(xlabel="certified radius (L2)", ylabel="CBS (%)", title="Certified Brier score")
    axes[1].set(xlabel="certified radius (L2)", ylabel="CCE (%)", title="Certified calibration error")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    return Figure("cbs-cce-vs-radius", "Certified Brier score and certified calibration error against the "
                  "certified radius", fig)


def _reliability(result: Any, plt: Any) -> Figure | None:
    from ..cce import certified_calibration_error
    from ..metrics import reliability_diagram

    names = [k for k in result.records if k.startswith("certificates-sigma")]
    if not names:
        return None
    rows = result.records[names[0]]
    radii = result.config["calibration"]["radii"]
    n_bins = int(result.config["calibration"]["n_bins"])
    done = [r for r in rows if r["prediction_index"] >= 0]
    if not done:
        return None
    sigma = rows[0]["sigma"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8))
    reliability_diagram([r["confidence"] for r in done], [r["correct"] for r in done], n_bins=n_bins).plot(
        axes[0], title=f"smoothed, σ={sigma:g}, clean")
    from .run import tag

    r_show = sorted(radii)[min(2, len(radii) - 1)]
    key = f"lower_r{tag(r_show)}"
    cert = [r for r in rows if r.get(key) is not None]
    if cert:
        lo = np.array([r[key] for r in cert])
        hi = np.array([r[f"upper_r{tag(r_show)}"] for r in cert])
        c = np.array([r["correct"] for r in cert])
        worst = certified_calibration_error(lo, hi, c, n_bins=n_bins)
        reliability_diagram(worst.confidences, c, n_bins=n_bins).plot(
            axes[1], title=f"worst case at r={r_show:g} (CCE {100 * worst.value:.1f}%)")
    return Figure("reliability", "Reliability diagram of the smoothed classifier: clean Monte-Carlo confidences and "
                  "the exact worst-case confidences of the CCE", fig)


def figures(result: Any) -> list[Figure]:
    """β-ACE bars (clean vs attacked ECE), CBS / CCE against the radius, and the reliability diagram (clean and
    worst case) of the first σ."""
    plt = _plt()
    return [f for f in (_ace(result, plt), _curves(result, plt), _reliability(result, plt)) if f is not None]
