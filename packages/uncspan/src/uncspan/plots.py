"""Figures of the paper: entropy distributions before/after the attacks (Figs. 2–3), reliability diagrams
with confidence histograms for clean / over / under (Figs. 4–5).

matplotlib is imported lazily and figures are built with the object API (``matplotlib.figure.Figure``),
so nothing touches pyplot's global state; save them with ``fig.savefig``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from robustsuite_common.checks import check_int, check_labels
from robustsuite_common.extras import optional_import

from .calibration import reliability_bins
from .span import UncertaintySpan

__all__ = ["plot_entropy_distributions", "plot_reliability_diagrams", "COLOURS"]

#: Colours of the paper's figures: clean green, over-confidence orange, under-confidence blue.
COLOURS = {"clean": "tab:green", "over": "tab:orange", "under": "tab:blue"}


def _as_mapping(spans: UncertaintySpan | Mapping[str, UncertaintySpan]) -> dict[str, UncertaintySpan]:
    if isinstance(spans, UncertaintySpan):
        return {"model": spans}
    if not isinstance(spans, Mapping) or not spans or not all(isinstance(v, UncertaintySpan) for v in spans.values()):
        raise TypeError("spans must be an UncertaintySpan or a non-empty mapping name -> UncertaintySpan")
    return dict(spans)


def _figure(rows: int, cols: int, width: float, height: float):
    mpl_figure = optional_import("matplotlib.figure", extra="uncspan[plot]", feature="drawing figures")
    fig = mpl_figure.Figure(figsize=(width * cols, height * rows), layout="constrained")
    axes = np.asarray(fig.subplots(rows, cols, squeeze=False))
    return fig, axes


def plot_entropy_distributions(spans: UncertaintySpan | Mapping[str, UncertaintySpan], *, bins: int = 30):
    """One row per model: clean entropy histogram (left) and over/under-attack histograms (right), each
    with a vertical line at its mean (Figs. 2–3). Returns a matplotlib ``Figure``."""
    spans = _as_mapping(spans)
    bins = check_int("bins", bins, ge=1)
    fig, axes = _figure(len(spans), 2, 3.6, 2.2)
    for r, (name, sp) in enumerate(spans.items()):
        hmax = max(float(np.max([sp.entropy_clean.max(), sp.entropy_under.max(), sp.entropy_over.max()])), 1e-6)
        edges = np.linspace(0.0, hmax * 1.02, bins + 1)
        ax = axes[r, 0]
        ax.hist(sp.entropy_clean, bins=edges, color=COLOURS["clean"], alpha=0.7, label="clean")
        ax.axvline(sp.entropy_clean.mean(), color=COLOURS["clean"], ls="--")
        ax.set_ylabel(name)
        ax = axes[r, 1]
        for key, h in (("over", sp.entropy_over), ("under", sp.entropy_under)):
            ax.hist(h, bins=edges, color=COLOURS[key], alpha=0.6, label=key)
            ax.axvline(h.mean(), color=COLOURS[key], ls="--")
        if r == 0:
            axes[0, 0].set_title("clean")
            axes[0, 1].set_title(f"under attack ({sp.norm}, eps={sp.eps:g})")
            axes[0, 0].legend(fontsize="small")
            axes[0, 1].legend(fontsize="small")
    for ax in axes[-1]:
        ax.set_xlabel("entropy (nats)")
    return fig


def plot_reliability_diagrams(
    spans: UncertaintySpan | Mapping[str, UncertaintySpan],
    y: np.ndarray | torch.Tensor,
    *,
    n_bins: int = 15,
):
    """One column per model: reliability curve (accuracy per bin against the bin centre, identity line
    dashed) above the confidence histogram, for clean / over / under (Figs. 4–5). ``y``: true labels."""
    spans = _as_mapping(spans)
    for sp in spans.values():
        y = check_labels("y", y, length=sp.pred_clean.size)
    n_bins = check_int("n_bins", n_bins, ge=1)
    fig, axes = _figure(2, len(spans), 2.8, 2.6)
    for c, (name, sp) in enumerate(spans.items()):
        top, bottom = axes[0, c], axes[1, c]
        top.plot([0, 1], [0, 1], color="grey", ls="--", lw=1)
        edges = np.linspace(0, 1, n_bins + 1)
        for key, conf, pred in (("clean", sp.conf_clean, sp.pred_clean), ("over", sp.conf_over, sp.pred_over),
                                ("under", sp.conf_under, sp.pred_under)):
            b = reliability_bins(conf, pred == y, n_bins=n_bins)
            m = b.counts > 0
            top.plot(b.centres[m], b.accuracy[m], marker="o", ms=3, color=COLOURS[key], label=key)
            bottom.hist(conf, bins=edges, color=COLOURS[key], alpha=0.5, label=key)
        top.set_title(name)
        top.set_xlim(0, 1)
        top.set_ylim(0, 1)
        top.set_xlabel("confidence")
        bottom.set_xlabel("confidence")
        if c == 0:
            top.set_ylabel("accuracy")
            bottom.set_ylabel("count")
            top.legend(fontsize="small")
    return fig
