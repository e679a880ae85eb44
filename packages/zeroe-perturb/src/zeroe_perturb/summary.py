"""s*(p) of one task over several attack seeds (§4.2, Eq. 1): per-cell intervals, the chance line of the paper's
figures, the most harmful attacker, agreement with the paper's Table 5 ranking, and the tables built from them.

The attack seeds re-draw the perturbations of the same test items, so the intervals measure the attack's own
randomness (the paper reports one draw). Every number is computed from the :class:`BenchmarkResult` list:

>>> runs = evaluate_seeds(classifier, texts, labels, seeds=[0, 1, 2])      # doctest: +SKIP
>>> summary = summarize_seeds(runs, chance=chance_score(labels), paper_task="TC")   # doctest: +SKIP
>>> summary.most_harmful, summary.mean_relative_high, summary.agreement["tau"]      # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .benchmark import BenchmarkResult, _check_interval_args, mean_relative_interval, relative_intervals
from .ranking import _reference, ranking_agreement


def _ci_columns(name: str, levels: Sequence[float]) -> list[str]:
    return [c for x in levels for c in (f"{name}({x:g})", f"{name}({x:g})_ci_low", f"{name}({x:g})_ci_high")]


@dataclass(frozen=True)
class SeedSummary:
    """The s*(p) benchmark (§4.2) of one task over attack seeds; build it with :func:`summarize_seeds`."""

    results: tuple[BenchmarkResult, ...]  # one per attack seed, same items; the first is the "run seed" table
    high: float  # the level of the summary numbers (default: the highest level, the paper's Table 5 level)
    intervals: Mapping[tuple[str, float], tuple[float, float, float]]  # (attack, p) -> (mean s*, low, high)
    mean_relative_high: tuple[float, float, float]  # attacker-averaged s*(high): mean over seeds, low, high
    chance: float | None  # score of a constant guess (None: no chance line for this metric)
    agreement: dict[str, Any] | None  # Kendall τ against Table 5 (:func:`ranking_agreement`), or None
    paper_task: str | dict[str, int] | None  # the Table 5 column compared with

    @property
    def metric(self) -> str:
        return self.results[0].metric

    @property
    def n(self) -> int:
        return self.results[0].n

    @property
    def clean_score(self) -> float:
        """s(0) (the same items for every seed, so the first seed's)."""
        return self.results[0].clean_score

    @property
    def levels(self) -> tuple[float, ...]:
        return self.results[0].levels

    @property
    def attacks(self) -> tuple[str, ...]:
        return self.results[0].attacks

    @property
    def chance_relative(self) -> float:
        """The chance line in s* units, ``chance / s(0)`` (the dashed red line of the paper's figures); NaN when
        there is no chance score or s(0) = 0."""
        if self.chance is None or not self.clean_score:
            return float("nan")
        return self.chance / self.clean_score

    @property
    def most_harmful(self) -> str:
        """The attacker with the lowest mean s*(high) over the seeds (first in attacker order on ties)."""
        return min(self.attacks, key=lambda a: self.intervals[(a, self.high)][0])

    def n_above_chance(self, p: float) -> int:
        """Attackers whose s*(p) interval over the seeds lies wholly above the chance line."""
        return sum(self.intervals[(a, p)][1] > self.chance_relative for a in self.attacks)

    def n_below_chance(self, p: float) -> int:
        """Attackers whose s*(p) interval over the seeds lies wholly below the chance line."""
        return sum(self.intervals[(a, p)][2] < self.chance_relative for a in self.attacks)

    def levels_table(self) -> tuple[list[str], list[list[Any]]]:
        """Attacker × level table: s*(p) of the first seed (:meth:`BenchmarkResult.table`), its mean character
        edit distance per item (Fig. 5's x axis), then mean s*(p) over the seeds with its interval."""
        first = self.results[0]
        cols, rows = first.table()
        edit = {(s.attack, s.p): s.mean_edit_distance for s in first.scores}
        cols = cols + [f"edits({x:g})" for x in self.levels] + _ci_columns("mean s*", self.levels)
        rows = [r + [round(edit[(r[0], x)], 2) for x in self.levels]
                + [round(v, 4) for x in self.levels for v in self.intervals[(r[0], x)]] for r in rows]
        return cols, rows

    def tasks_table(self) -> tuple[list[str], list[list[Any]]]:
        """Per attacker: s(0), then mean s*(p) over the seeds with its interval for every level."""
        cols = ["attack", "s(0)"] + _ci_columns("s*", self.levels)
        rows = [[a, round(self.clean_score, 4)] + [round(v, 4) for x in self.levels for v in self.intervals[(a, x)]]
                for a in self.attacks]
        return cols, rows

    def summary_row(self) -> tuple[list[str], list[Any]]:
        """One line at p = high: metric, n, s(0), chance s*, the attacker-averaged s*(high) with its interval,
        the most harmful attacker and its mean s*, how many attackers stay above the chance line, of how many."""
        h, (m, lo, hi), worst = self.high, self.mean_relative_high, self.most_harmful
        cols = ["metric", "n", "s(0)", "chance s*", f"mean s*({h:g})", f"mean s*({h:g})_ci_low",
                f"mean s*({h:g})_ci_high", "most harmful", "its s*", "attackers above chance", "attackers"]
        row = [self.metric, self.n, round(self.clean_score, 4), round(self.chance_relative, 4), round(m, 4),
               round(lo, 4), round(hi, 4), worst, round(self.intervals[(worst, h)][0], 4),
               self.n_above_chance(h), len(self.attacks)]
        return cols, row

    def to_dict(self) -> dict[str, Any]:
        nan_to_none = lambda v: None if v is None or np.isnan(v) else float(v)  # noqa: E731
        return {
            "metric": self.metric, "n": int(self.n), "clean_score": float(self.clean_score),
            "levels": [float(p) for p in self.levels], "attacks": list(self.attacks), "high": float(self.high),
            "seeds": [int(r.seed) for r in self.results],
            "intervals": [{"attack": a, "p": float(p), "mean": m, "low": lo, "high": hi}
                          for (a, p), (m, lo, hi) in self.intervals.items()],
            "mean_relative_high": list(self.mean_relative_high),
            "chance": nan_to_none(self.chance), "chance_relative": nan_to_none(self.chance_relative),
            "most_harmful": self.most_harmful,
            "n_above_chance": {f"{p:g}": self.n_above_chance(p) for p in self.levels},
            "paper_task": self.paper_task, "agreement": self.agreement,
            "results": [r.to_dict() for r in self.results],
        }


def summarize_seeds(results: Sequence[BenchmarkResult], *, chance: float | None = None, p: float | None = None,
                    paper_task: str | dict[str, int] | None = None, confidence: float = 0.95, n_boot: int = 2000,
                    seed: int = 0) -> SeedSummary:
    """Summarise :func:`~zeroe_perturb.benchmark.evaluate` (or ``evaluate_pairs`` / ``evaluate_tagging``) runs of
    one task under several attack seeds (§4.2): per-cell mean s*(p) with percentile-bootstrap intervals
    (:func:`relative_intervals`), the attacker-averaged s*(p) at ``p`` (default: the highest level) with its
    interval (:func:`mean_relative_interval`), the chance line ``chance / s(0)`` (``chance``: e.g.
    :func:`chance_score`), and, with ``paper_task`` ("POS", "NLI", "TC" or a dict attack -> rank), Kendall's τ
    against the paper's Table 5 over the seeds (:func:`ranking_agreement`; None when fewer than 3 attackers are
    ranked there). Every bootstrap uses its own Generator seeded with ``seed``."""
    results = tuple(results)
    if not results or not all(isinstance(r, BenchmarkResult) for r in results):
        raise TypeError("results must be a non-empty sequence of BenchmarkResult (one per attack seed)")
    first = results[0]
    for r in results[1:]:
        if r.attacks != first.attacks or r.levels != first.levels or r.n != first.n:
            raise ValueError("results must share attackers, levels and items (same texts, other attack seeds)")
    _check_interval_args(confidence, n_boot)
    high = max(first.levels) if p is None else float(p)
    if not any(abs(high - x) < 1e-9 for x in first.levels):
        raise ValueError(f"p must be one of the results' levels {list(first.levels)}; got {p!r}")
    high = next(x for x in first.levels if abs(high - x) < 1e-9)
    if chance is not None and not isinstance(chance, float | int):
        raise TypeError(f"chance must be a float or None; got {type(chance).__name__}")
    agreement = None
    if paper_task is not None:
        ref = _reference(paper_task)
        if sum(a in ref for a in first.attacks) >= 3:
            agreement = ranking_agreement(results, high, paper_task, confidence=confidence, n_boot=n_boot, seed=seed)
    return SeedSummary(
        results=results, high=high,
        intervals=relative_intervals(results, confidence=confidence, n_boot=n_boot, seed=seed),
        mean_relative_high=mean_relative_interval(results, high, confidence=confidence, n_boot=n_boot, seed=seed),
        chance=None if chance is None else float(chance), agreement=agreement, paper_task=paper_task)
