"""The paper's selection rule (§5.3, App. J.1) and the intervals of what it selects.

Per seed and radius, every model of every method (grid points, and the un-fine-tuned start ``"none"``) is eligible
when its certified accuracy is at least the best one minus ``selection_margin``; each method then reports its
eligible model with the lowest CCE (its CA is that model's) and, separately, the lowest CBS. Certified accuracy
pools the selected models' test predictions over seeds (Clopper-Pearson); CBS and CCE are means over the seeds that
had a selected model, with a BCa bootstrap over the test inputs paired across those seeds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._intervals import boot, ci, proportion
from ..cce import certified_brier_score, certified_calibration_error
from .paired import CertifiedSet, paired_cce_difference
from .result import ACTDifference, ACTModel, ACTRow

__all__ = ["Key", "Units", "differences", "rows", "select"]

#: (method, grid index, seed)
Key = tuple[str, int, int]
#: per unit, per radius: the certified set ``mask``, ``correct``, ``k`` (certified and correct), ``lower`` /
#: ``upper`` bounds, ``cbs`` and ``cce`` (None when nothing is certified)
Units = Mapping[Key, list[dict[str, Any]]]
#: per (method, seed, radius index): the grid index selected by CCE, by CBS, and whose CA is reported
Chosen = dict[tuple[str, int, int], tuple[int | None, int | None, int]]


def select(units: Units, points: Mapping[str, Sequence[dict[str, Any]]], seeds: Sequence[int],
           radii: np.ndarray, n_test: int, *, selection_margin: float | None) -> tuple[list[ACTModel], Chosen]:
    """Every model's row (eligible or not) and, per method, seed and radius, the models the rule selects."""
    methods = list(points)
    model_rows: list[ACTModel] = []
    chosen: Chosen = {}
    for seed in seeds:
        for j, r in enumerate(radii):
            best_ca = max(units[(m, gi, seed)][j]["k"] for m in methods for gi in range(len(points[m])))
            thr = -np.inf if selection_margin is None else best_ca / n_test - float(selection_margin) - 1e-12
            for m in methods:
                elig = [gi for gi in range(len(points[m])) if units[(m, gi, seed)][j]["k"] / n_test >= thr]
                for gi in range(len(points[m])):
                    d = units[(m, gi, seed)][j]
                    model_rows.append(ACTModel(m, dict(points[m][gi]), seed, float(r), d["k"] / n_test,
                                               d["cbs"], d["cce"], gi in elig))
                with_cal = [gi for gi in elig if units[(m, gi, seed)][j]["cce"] is not None]
                gi_cce = min(with_cal, key=lambda g: units[(m, g, seed)][j]["cce"]) if with_cal else None
                gi_cbs = min(with_cal, key=lambda g: units[(m, g, seed)][j]["cbs"]) if with_cal else None
                gi_ca = gi_cce if gi_cce is not None else max(range(len(points[m])),
                                                              key=lambda g: units[(m, g, seed)][j]["k"])
                chosen[(m, seed, j)] = (gi_cce, gi_cbs, gi_ca)
    return model_rows, chosen


def rows(units: Units, chosen: Chosen, points: Mapping[str, Sequence[dict[str, Any]]], seeds: Sequence[int],
         radii: np.ndarray, n_test: int, *, ceiling: float, n_bins: int, n_boot: int) -> list[ACTRow]:
    """One row per (method, radius): the selected models' CA (pooled), CBS and CCE (means over seeds) with their
    intervals; ``certifiable``: the radius is within ``ceiling``."""
    out = []
    total = n_test * len(seeds)
    for m in points:
        for j, r in enumerate(radii):
            sel = [chosen[(m, s, j)] for s in seeds]
            pairs = list(zip(sel, seeds, strict=True))
            k = sum(units[(m, c[2], s)][j]["k"] for c, s in pairs)
            n_cert = float(np.mean([units[(m, c[2], s)][j]["mask"].sum() for c, s in pairs]))
            cce_v = [None if c[0] is None else units[(m, c[0], s)][j]["cce"] for c, s in pairs]
            cbs_v = [None if c[1] is None else units[(m, c[1], s)][j]["cbs"] for c, s in pairs]
            cce_keys = [(m, c[0], s) for c, s in pairs if c[0] is not None]
            cbs_keys = [(m, c[1], s) for c, s in pairs if c[1] is not None]
            ca = proportion(int(k), total)
            out.append(ACTRow(
                m, float(r), ca.estimate, ca.low, ca.high,
                *_interval(units, cbs_v, cbs_keys, j, "cbs", n_bins=n_bins, n_boot=n_boot),
                *_interval(units, cce_v, cce_keys, j, "cce", n_bins=n_bins, n_boot=n_boot), n_cert,
                n_selected=sum(c[0] is not None for c in sel),
                cce_per_seed=tuple(None if v is None else float(v) for v in cce_v),
                selected=tuple(None if c[0] is None else dict(points[m][c[0]]) for c in sel),
                certifiable=bool(r <= ceiling)))
    return out


def differences(units: Units, chosen: Chosen, methods: Sequence[str], seeds: Sequence[int], radii: np.ndarray, *,
                baseline: str, n_bins: int, n_boot: int, seed: int = 12345) -> list[ACTDifference]:
    """Per method of ``methods`` and radius: its CCE minus ``baseline``'s, both the CCE-selected models, as the
    mean over the seeds in which both had one, with a paired bootstrap interval over the shared test inputs
    (:func:`.paired.paired_cce_difference`)."""
    out = []
    for m in methods:
        for j, r in enumerate(radii):
            both = [s for s in seeds if chosen[(m, s, j)][0] is not None and chosen[(baseline, s, j)][0] is not None]
            if not both:
                out.append(ACTDifference(m, baseline, float(r), None, None, None, 0, n_boot,
                                         f"no seed in which both {m} and {baseline} have a selected model"))
                continue
            a, b = ([_certified(units[(k, _index(chosen[(k, s, j)][0]), s)][j]) for s in both] for k in (m, baseline))
            est, iv = paired_cce_difference(a, b, n_bins=n_bins, n_boot=n_boot, seed=seed)
            out.append(ACTDifference(m, baseline, float(r), est, None if iv is None else iv.low,
                                     None if iv is None else iv.high, len(both), n_boot,
                                     "" if iv is not None else "the paired bootstrap could not place an interval "
                                     "(a resample left a model nothing certified, or BCa excluded the estimate)"))
    return out


def _index(gi: int | None) -> int:
    assert gi is not None  # only seeds where a model was selected reach here
    return gi


def _certified(d: dict[str, Any]) -> CertifiedSet:
    return CertifiedSet(d["lower"], d["upper"], d["correct"], d["mask"])


def _interval(units: Units, values: list[float | None], keys: list[Key], j: int, metric: str, *, n_bins: int,
              n_boot: int) -> tuple[float | None, float | None, float | None]:
    """Mean over the seeds that had a selected model; BCa bootstrap over the test inputs, paired across those
    seeds (robustsuite_common)."""
    present = [v for v in values if v is not None]
    if not present:
        return None, None, None
    arrays = []
    for key in keys:
        d = units[key][j]
        arrays += [d["lower"], d["upper"], d["correct"].astype(np.float64), d["mask"].astype(np.float64)]
    iv = ci(boot(arrays, _mean_over_seeds(n_bins, metric, len(keys)), seed=12345, n_boot=n_boot))
    mean = float(np.mean(present))
    return (mean, None, None) if iv is None else (mean, iv[0], iv[1])


def _mean_over_seeds(n_bins: int, metric: str, k: int) -> Callable[..., float]:
    """The statistic of a paired bootstrap: the mean over ``k`` seeds of CBS or CCE on the resampled inputs that
    the seed's selected model certifies (arrays: lower, upper, correct, mask per seed)."""
    def stat(*arrays: np.ndarray) -> float:
        vals = []
        for s in range(k):
            lo, up, c, m = arrays[4 * s: 4 * s + 4]
            sel = m > 0.5
            if not sel.any():
                return float("nan")
            if metric == "cbs":
                vals.append(certified_brier_score(lo[sel], up[sel], c[sel]))
            else:
                vals.append(certified_calibration_error(lo[sel], up[sel], c[sel], n_bins=n_bins).value)
        return float(np.mean(vals))

    return stat
