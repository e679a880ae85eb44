"""The experiment's figures (:func:`figures`), drawn from a result's tables only (matplotlib, imported here)."""

from __future__ import annotations

from robustsuite_common.experiment import ExperimentResult, Figure, Scalar
from robustsuite_common.extras import optional_import

from ._common import ATTACKS, LABEL

__all__ = ["figures", "bars", "urejectron_curves"]


def figures(result: ExperimentResult) -> list[Figure]:
    """The section's figures, drawn from ``result`` alone: robust accuracy of each defense under transfer PGD,
    FPA, GMSA-AVG and GMSA-MIN (bars), and URejectron against τ (Figure 1)."""
    out = []
    fig = bars(result)
    if fig is not None:
        out.append(fig)
    if "urejectron" in result.tables:
        out.append(urejectron_curves(result))
    return out


def _num(value: Scalar) -> float:
    """A table cell as a number to draw (a missing value is not drawn)."""
    return float("nan") if value is None else float(value)


def _pyplot():
    matplotlib = optional_import("matplotlib", extra="transduct-attack[plot]", feature="experiment.figures")
    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "png"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def bars(result: ExperimentResult) -> Figure | None:
    """Robust accuracy of each defense under the four attacks (the defense rows of Tables 1, 3 and 4)."""
    wanted = [LABEL[a] for a in ATTACKS]
    heights: dict[str, dict[str, float]] = {}
    for name in ("rmc", "dann", "tadv"):
        if name not in result.tables:
            continue
        for row in result.tables[name].records():
            if row["attack"] in wanted and not str(row["defense"]).startswith("static"):
                heights.setdefault(str(row["defense"]), {})[str(row["attack"])] = _num(row["accuracy"])
    if not heights:
        return None
    import numpy as np

    plt = _pyplot()
    cfg = result.config
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    width = 0.8 / len(heights)
    for i, (label, vals) in enumerate(heights.items()):
        ax.bar(np.arange(4) + i * width, [vals.get(a, float("nan")) for a in wanted], width, label=label)
    ax.set_xticks(np.arange(4) + 0.4 - width / 2, wanted)
    ax.set_ylabel("robust accuracy")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    data = cfg.get("data") or "the test data"
    ax.set_title(f"Transductive defenses on {data} (L∞ eps {cfg['threat']['eps']}; TADV "
                 f"{cfg['threat']['at_eps']})")
    return Figure("robustness", "Robust accuracy of each transductive defense under the transfer PGD attack, FPA, "
                  "GMSA-AVG and GMSA-MIN", fig)


def urejectron_curves(result: ExperimentResult) -> Figure:
    """Figure 1: per attack (PGD, GMSA-AVG, CW-L2, a corruption), the error on accepted perturbed points with its
    band, the rejection rate of clean points and (where recorded) of the perturbed points, against τ."""
    plt = _pyplot()
    rows = result.tables["urejectron"].records()
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    colors = ("tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange", "tab:brown")
    for attack, color in zip(dict.fromkeys(r["attack"] for r in rows), colors, strict=False):
        rs = [r for r in rows if r["attack"] == attack]
        t = [_num(r["tau"]) for r in rs]
        ax.plot(t, [_num(r["error_accepted"]) for r in rs], "-o", color=color, ms=3, label=f"error, {attack}")
        ax.fill_between(t, [_num(r["error_accepted_ci_low"]) for r in rs],
                        [_num(r["error_accepted_ci_high"]) for r in rs], color=color, alpha=0.15)
        ax.plot(t, [_num(r["rejection_rate"]) for r in rs], "--", color=color, label=f"clean rejection, {attack}")
        if "perturbed_rejection_rate" in rs[0]:
            ax.plot(t, [_num(r["perturbed_rejection_rate"]) for r in rs], ":", color=color,
                    label=f"perturbed rejection, {attack}")
    ax.set_xlabel("threshold τ (accept if P(test | x) < τ)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=5, ncol=2)
    return Figure("urejectron_threshold", "URejectron: error on accepted perturbed points and rejection rates of "
                  "clean and perturbed points against τ (the paper's Figure 1: a, transfer PGD and GMSA-AVG; b, "
                  "CW-L2; c, an image corruption), with 95% Clopper-Pearson bands on the error", fig)
