"""The paper's figures drawn from a :class:`Result` alone (its per-sample records and tables): entropy
distributions before and after the attacks (Figs. 2–3), reliability diagrams clean / over / under (Figs. 4–5) and
the ε-sweep. matplotlib (the ``plot`` extra) is imported when called."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from robustsuite_common.experiment import Figure

from ..span import UncertaintySpan
from ..sweep import EpsSweep, EpsSweepRow
from .result import Result

__all__ = ["figures"]


def _span_of(rows: Sequence[Mapping[str, Any]], eps: float, norm: str) -> tuple[UncertaintySpan, np.ndarray]:
    """A span rebuilt from per-sample records; predictions are coded 0 = correct, 1 = wrong against labels 0, which
    is all the reliability diagram needs."""
    col = {k: np.asarray([r[k] for r in rows]) for k in rows[0]}
    code = {kind: np.where(col[f"{p}correct"].astype(bool), 0, 1) for kind, p in
            (("clean", ""), ("over", "over_"), ("under", "under_"))}
    sp = UncertaintySpan(eps, norm, 0, "", col["entropy"].astype(float), col["over_entropy"].astype(float),
                         col["under_entropy"].astype(float), code["clean"], code["over"], code["under"],
                         col["confidence"].astype(float), col["over_confidence"].astype(float),
                         col["under_confidence"].astype(float))
    return sp, np.zeros(len(rows), dtype=np.int64)


def _sweep_row(rec: Mapping[str, Any]) -> EpsSweepRow:
    """An ε-sweep row back from its table record."""
    return EpsSweepRow(**{k: v for k, v in rec.items() if k != "model"})


def figures(result: Result) -> list[Figure]:
    """Entropy distributions, reliability diagrams and (when the sweep ran) the ε-sweep, one panel per model."""
    from ..plots import plot_entropy_distributions, plot_reliability_diagrams
    from ..sweep import plot_eps_sweep

    if "span" not in result.tables:  # the audit preset: the checks alone, nothing to draw
        return []
    eps, norm = float(result.config["attack"]["eps"]), str(result.config["attack"]["norm"])
    n_bins = int(result.config["metrics"]["n_bins"])
    models = [str(r["model"]) for r in result.tables["span"].records()]
    from .result import slug

    spans, ys = {}, []
    for m in models:
        spans[m], y = _span_of(list(result.records[f"span-{slug(m)}"]), eps, norm)
        ys.append(y)
    out = [Figure("entropy-distributions", f"Entropy before (left) and after the over-/under-confidence attacks "
                  f"(right), eps={eps:g} (Figs. 2–3)", plot_entropy_distributions(spans)),
           Figure("reliability", "Reliability curves and confidence histograms, clean / over / under (Figs. 4–5)",
                  plot_reliability_diagrams(spans, ys[-1], n_bins=n_bins))]
    table = result.tables["eps_sweep"]
    if table.rows:
        sweeps = {}
        for m in dict.fromkeys(table.column("model")):
            rows = tuple(_sweep_row(rec) for rec in table.records() if rec["model"] == m)
            sweeps[m] = EpsSweep(norm, int(result.config["sweep"]["steps"]), int(result.config["sweep"]["n"]), rows, {})
        out.append(Figure("eps-sweep", "MUS with its 95 % bootstrap band, mean entropy over / clean / under, and s-ECE "
                          "as functions of eps", plot_eps_sweep(sweeps)))
    return out
