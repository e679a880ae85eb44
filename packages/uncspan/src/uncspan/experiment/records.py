"""Per-sample records: one row per attacked input, with the user's row id, an input reference, label names as the
user wrote them, and every number a table is computed from (so a reader can trace and recompute them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from robustsuite_common.experiment import Split

from ..leaderboard import Leaderboard
from ..ood import OODUnderAttack
from ..span import UncertaintySpan

__all__ = ["span_records", "sweep_records", "ood_records"]


def _names(split: Split, values: np.ndarray, names: Sequence[str] | None = None) -> list[str]:
    if names is not None:
        return [str(names[int(v)]) if 0 <= int(v) < len(names) else str(int(v)) for v in values]
    return [split.name_of(int(v)) for v in values]


def _span_columns(split: Split, sp: UncertaintySpan, y: np.ndarray) -> dict[str, list]:
    return {
        "prediction": _names(split, sp.pred_clean), "confidence": sp.conf_clean.tolist(),
        "entropy": sp.entropy_clean.tolist(), "correct": (sp.pred_clean == y).tolist(),
        "over_prediction": _names(split, sp.pred_over), "over_confidence": sp.conf_over.tolist(),
        "over_entropy": sp.entropy_over.tolist(), "over_correct": (sp.pred_over == y).tolist(),
        "under_prediction": _names(split, sp.pred_under), "under_confidence": sp.conf_under.tolist(),
        "under_entropy": sp.entropy_under.tolist(), "under_correct": (sp.pred_under == y).tolist(),
        "span": sp.span.tolist(),
    }


def span_records(split: Split, y: np.ndarray, board: Leaderboard, model: str) -> list[dict[str, Any]]:
    """Table IV's inputs for ``model``: one row per test point with ``id`` (the user's row id), ``input``
    (``test[i]``), ``label`` (the user's class name), the clean / over / under prediction, confidence, entropy and
    correctness, ``span`` (H_under − H_over, Eq. 9), and the robust-accuracy outcomes: ``robust`` /
    ``adv_prediction`` / ``adv_confidence`` under the attack named in Table IV's ``robust_attack``, and ``pgd_robust`` /
    ``pgd_prediction`` under this package's PGD when it ran beside AutoAttack."""
    sp = board.spans[model]
    cols = _span_columns(split, sp, y)
    rob = board.robust[model]
    cols |= {"robust": np.asarray(rob.robust, bool).tolist(), "adv_prediction": _names(split, rob.pred_adv),
             "adv_confidence": np.asarray(rob.conf_adv).tolist()}
    if model in board.pgd:
        pgd = board.pgd[model]
        cols |= {"pgd_robust": np.asarray(pgd.robust, bool).tolist(), "pgd_prediction": _names(split, pgd.pred_adv)}
    n = len(y)
    head = [{"id": split.id_of(i), "input": f"test[{i}]", "label": split.name_of(int(y[i]))} for i in range(n)]
    return [h | {k: v[i] for k, v in cols.items()} for i, h in enumerate(head)]


def sweep_records(split: Split, y: np.ndarray, spans: Mapping[float, UncertaintySpan]) -> list[dict[str, Any]]:
    """The ε-sweep's inputs: one row per (budget ``eps``, test point), with the span columns of
    :func:`span_records` (without the robust-accuracy attack)."""
    rows = []
    for e in sorted(spans):
        cols = _span_columns(split, spans[e], y)
        rows += [{"eps": float(e), "id": split.id_of(i), "input": f"test[{i}]", "label": split.name_of(int(y[i]))}
                 | {k: v[i] for k, v in cols.items()} for i in range(len(y))]
    return rows


def ood_records(inliers: Split, outliers: Split, kind: str, res: OODUnderAttack,
                known: Sequence[str] | None) -> list[dict[str, Any]]:
    """Table V's inputs for one model and one outlier set: per budget ``eps``, every in-distribution input
    (``outlier`` false, clean at every budget) and every outlier (``outlier`` true, after the over-confidence attack
    at ``eps``), with ``id``, ``input`` (``osr[i]`` / ``<kind>[j]``), ``label`` (the user's class name; an OOD input
    without a class: ``None``), ``entropy`` (the detection score), ``prediction`` (a known class) and
    ``confidence``. A row set's AUROC is ``roc_auc_score(outlier, entropy)`` over its budget."""
    h_in, p_in, c_in = res.entropy_in, res.pred_in, res.conf_in
    if h_in is None or p_in is None or c_in is None:
        raise ValueError("res must hold the per-sample outputs (OODUnderAttack.from_dict of to_dict(per_sample=True))")
    n_in = len(h_in)
    rows = []
    for r in res.rows:
        h_out, p_out, c_out = r.entropy_out, r.pred_out, r.conf_out
        if h_out is None or p_out is None or c_out is None:
            raise ValueError("res must hold the per-sample outputs of every budget")
        y_out = np.asarray(outliers.y if outliers.y is not None else [-1] * len(outliers))[: len(h_out)]
        rows += [{"eps": r.eps, "outlier": False, "id": inliers.id_of(i), "input": f"osr[{i}]",
                  "label": inliers.name_of(int(inliers.y[i])), "entropy": float(h_in[i]),
                  "prediction": _names(inliers, p_in[i : i + 1], known)[0],
                  "confidence": float(c_in[i])} for i in range(n_in)]
        rows += [{"eps": r.eps, "outlier": True, "id": outliers.id_of(j), "input": f"{kind}[{j}]",
                  "label": None if int(y_out[j]) < 0 else outliers.name_of(int(y_out[j])),
                  "entropy": float(h_out[j]), "prediction": _names(inliers, p_out[j : j + 1], known)[0],
                  "confidence": float(c_out[j])} for j in range(len(h_out))]
    return rows
