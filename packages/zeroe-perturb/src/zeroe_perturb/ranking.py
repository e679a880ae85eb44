"""Agreement of a measured harmfulness ranking with the paper's (Table 5, appendix of Eger & Benz).

Table 5 ranks the attackers by the degradation they cause at the *high* attack level, per task (POS, NLI, TC);
rank 1 is the most harmful. The agreement is Kendall's τ-b (``scipy.stats.kendalltau``, which handles ties)
between the paper's ranks and the measured s*(p) (lower s* = more harmful = smaller rank), over the attackers
both rankings contain.
"""

from __future__ import annotations

import numpy as np

from robustsuite_common.extras import optional_import

from ._reference import table5

# Table 5 (paper appendix), attack level high: attacker -> rank (1 = most harmful). NLI ranks Visual and Intrude
# jointly first; the POS column has no Segment (segmentation is not applicable to token tagging). Kept as data in
# experiment/paper.json.
PAPER_TABLE5: dict[str, dict[str, int]] = table5()


def _reference(task: str | dict[str, int]) -> dict[str, int]:
    if isinstance(task, dict):
        return task
    if task not in PAPER_TABLE5:
        raise ValueError(f"task must be one of {sorted(PAPER_TABLE5)} or a dict attack -> rank, got {task!r}")
    return PAPER_TABLE5[task]


def _check_result(result) -> None:
    from .benchmark import BenchmarkResult

    if not isinstance(result, BenchmarkResult):
        raise TypeError(f"result must be a zeroe_perturb.BenchmarkResult (from evaluate), got {type(result).__name__}")


def kendall_tau_vs_paper(result, *, p: float = 0.8, task: str | dict[str, int] = "TC") -> tuple[float, float]:
    """Kendall's τ-b between ``result``'s s*(p) and the paper's Table 5 ranks for ``task`` (a
    :class:`~zeroe_perturb.benchmark.BenchmarkResult`); returns (τ, two-sided p-value). τ = 1: same order."""
    stats = optional_import("scipy.stats", extra="zeroe-perturb[stats]", feature="kendall_tau_vs_paper")

    _check_result(result)
    ref = _reference(task)
    common = [a for a in result.attacks if a in ref]
    if len(common) < 3:
        raise ValueError(f"need at least 3 attackers shared with the reference ranking, got {common}")
    s = np.array([result.relative(a, p) for a in common], dtype=np.float64)
    r = np.array([ref[a] for a in common], dtype=np.float64)
    res = stats.kendalltau(s, r)  # both increase with harmlessness: lower s* <-> smaller rank
    return float(res.statistic), float(res.pvalue)


def ranking_table(result, *, p: float = 0.8, task: str | dict[str, int] = "TC") -> tuple[list[str], list[list]]:
    """Table 5 beside the measurement: ``result``'s harmfulness ranking at level ``p``
    (:meth:`~zeroe_perturb.benchmark.BenchmarkResult.ranking`, s* rounded to 4 decimals) with the paper's rank
    for ``task`` ("-" for an attacker the paper does not rank there, e.g. segment in the POS column)."""
    _check_result(result)
    ref = _reference(task)
    rows = [[k, a, round(v, 4), ref.get(a, "-")] for k, a, v in result.ranking(p)]
    return ["rank", "attack", "s*", "paper rank"], rows
