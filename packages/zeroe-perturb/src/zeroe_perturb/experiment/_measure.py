"""From a task's per-item outputs to its numbers: scores clean and per cell, seed means, intervals over the items,
the chance line, the headline rule, the ranking and Kendall τ against the paper's Table 5."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from robustsuite_common.intervals import Interval, proportion, seed_interval

from ..benchmark import AttackScore, BenchmarkResult
from ..ranking import _reference
from ._cells import Scorer, Task, scorer
from ._stats import Counts, full_sample, item_interval, kendall_tau_b
from .config import Config

UNIT = (0.0, 1.0)


@dataclass(frozen=True)
class Cell:
    """One attacker at one level: seed means and intervals over the items."""

    attack: str
    p: float
    score: float  # s(p), mean over the attack seeds
    score_ci: Interval | None
    relative: float  # s*(p) = s(p) / s(0), mean over the attack seeds
    relative_ci: Interval | None
    edits: float  # mean character edit distance per item, run seed (Fig. 5's x axis)
    words_changed: float  # mean share of words changed, run seed
    above_chance: bool | None  # the s(p) interval lies above the chance score


@dataclass(frozen=True)
class Gap:
    """How far an end of the harmfulness ranking is from its neighbour: s*(neighbour) - s*(attacker) for the most
    harmful, s*(attacker) - s*(neighbour) for the least (seed means, at the high level), with the paired bootstrap
    interval over the items (each item keeps its outcomes under both attackers)."""

    attack: str
    neighbour: str
    difference: float
    ci: Interval | None

    @property
    def separated(self) -> bool:
        return self.ci is not None and self.ci.low > 0

    def text(self) -> str:
        iv = "" if self.ci is None else f" [{self.ci.low:.3f}, {self.ci.high:.3f}]"
        return (f"{'separated from' if self.separated else 'not separated from'} {self.neighbour}: s* difference "
                f"{self.difference:+.3f}{iv}")


@dataclass(frozen=True)
class TaskMeasure:
    """Everything measured on one task."""

    task: Task
    seeds: tuple[int, ...]
    clean: float  # s(0)
    clean_ci: Interval | None
    chance: float
    at_chance: bool
    margin: float
    in_headline: bool
    reason: str  # why the task is left out of the headline ("" when it is in)
    cells: dict[tuple[str, float], Cell]
    high: float
    mean_relative_high: float
    mean_relative_high_ci: Interval | None
    runs: tuple[BenchmarkResult, ...]  # per attack seed, as zeroe_perturb.evaluate would return them
    tau: float | None = None
    tau_ci: Interval | None = None
    tau_attackers: tuple[str, ...] = ()
    edit_fit: dict[str, Any] = field(default_factory=dict)
    #: "most" / "least": (the attacker, its neighbour in the ranking, s* difference, paired interval over the items)
    ends: dict[str, Gap] = field(default_factory=dict)

    @property
    def levels(self) -> tuple[float, ...]:
        return tuple(sorted({p for _, p in self.cells}))

    def ranking(self) -> list[tuple[int, str, Cell]]:
        """Attackers by harmfulness at the high level: lowest seed-mean s* first, ties share a rank."""
        order = sorted(self.task.attacks, key=lambda a: (self.cells[(a, self.high)].relative,
                                                          self.task.attacks.index(a)))
        out: list[tuple[int, str, Cell]] = []
        for k, a in enumerate(order):
            c = self.cells[(a, self.high)]
            rank = out[-1][0] if out and abs(out[-1][2].relative - c.relative) < 1e-12 else k + 1
            out.append((rank, a, c))
        return out

    def n_above_chance(self, p: float) -> int:
        return sum(bool(self.cells[(a, p)].above_chance) for a in self.task.attacks)


def measure(task: Task, clean_out: dict, cell_outs: dict[tuple[str, float, int], dict], config: Config,
            seeds: tuple[int, ...]) -> TaskMeasure:
    """The task's numbers (see the module docstring); ``cell_outs`` maps (attack, p, seed) to the cell's outputs."""
    n = task.n
    s = config.seeds
    boot: dict[str, Any] = {"seed": config.seed, "level": s.level, "n_resamples": s.n_boot}
    levels, high = config.attack.levels, config.attack.high
    clean = scorer(task, clean_out)
    cell_sc: dict[tuple[str, float, int], Scorer] = {k: scorer(task, v) for k, v in cell_outs.items()}
    s0 = clean.full(n)

    # clean score and chance
    if task.metric == "accuracy" and task.kind != "tagging":
        k = int(round(s0 * n))
        clean_ci = proportion(k, n, level=s.level)
    else:
        clean_ci = item_interval(clean, n, bounds=UNIT, **boot)
    chance = task.chance
    at_chance = bool(np.isfinite(chance) and (clean_ci is None or clean_ci.low <= chance))
    margin = s0 - chance if np.isfinite(chance) else float("nan")
    min_margin = config.headline.min_margin
    if at_chance:
        in_headline, reason = False, (f"at chance: the clean score's interval [{_lo(clean_ci):.3f}, {_hi(clean_ci):.3f}] "
                                      f"reaches the chance score {chance:.3f}")
    elif not np.isfinite(margin):
        in_headline, reason = False, "no chance score for this metric"
    elif margin < min_margin:
        in_headline, reason = False, (f"clean score {s0:.3f} is only {margin:.3f} above the chance score {chance:.3f} "
                                      f"(< {min_margin:g})")
    else:
        in_headline, reason = True, ""

    # per-seed benchmark results (the numbers zeroe_perturb.evaluate gives for each attack seed)
    runs = []
    for seed in seeds:
        scores = []
        for a in task.attacks:
            for p in levels:
                out = cell_outs[(a, p, seed)]
                sp = cell_sc[(a, p, seed)].full(n)
                scores.append(AttackScore(a, p, sp, sp / s0 if s0 else float("nan"), float(np.mean(out["edit"])),
                                          float(np.mean(out["frac"]))))
        metric = {"accuracy": "accuracy", "auroc": "auroc", "token accuracy": "token_accuracy"}[task.metric]
        runs.append(BenchmarkResult(metric, s0, n, seed, tuple(scores), tuple(levels)))

    def seed_mean_score(a: str, p: float):
        fns = [cell_sc[(a, p, sd)] for sd in seeds]
        return lambda c: np.mean([f(c) for f in fns], axis=0)

    def seed_mean_relative(a: str, p: float):
        fns = [cell_sc[(a, p, sd)] for sd in seeds]
        return lambda c: np.mean([f(c) / clean(c) for f in fns], axis=0)

    cells = {}
    for a in task.attacks:
        for p in levels:
            per_seed = [r.relative(a, p) for r in runs]
            score = float(np.mean([cell_sc[(a, p, sd)].full(n) for sd in seeds]))
            rel = float(np.mean(per_seed))
            sci = item_interval(seed_mean_score(a, p), n, bounds=UNIT, **boot)
            rci = item_interval(seed_mean_relative(a, p), n, bounds=(0.0, None), **boot) if s0 else None
            first = runs[0].scores[[i for i, x in enumerate(runs[0].scores) if x.attack == a and x.p == p][0]]
            above = None if sci is None or not np.isfinite(chance) else bool(sci.low > chance)
            cells[(a, p)] = Cell(a, p, score, sci, rel, rci, first.mean_edit_distance, first.mean_fraction_attacked,
                                 above)

    def mean_rel_high(c: Counts) -> np.ndarray:
        s0c = clean(c)
        per_seed = [np.mean([cell_sc[(a, high, sd)](c) / s0c for a in task.attacks], axis=0) for sd in seeds]
        return np.mean(per_seed, axis=0)

    mrh = float(np.mean([r.mean_relative(high) for r in runs]))
    mrh_ci = item_interval(mean_rel_high, n, bounds=(0.0, None), **boot) if s0 else None

    m = TaskMeasure(task, tuple(seeds), s0, clean_ci, chance, at_chance, margin, in_headline, reason, cells, high,
                    mrh, mrh_ci, tuple(runs))
    if s0 and len(task.attacks) > 1:
        rk = [a for _, a, _ in m.ranking()]

        def gap(attack: str, neighbour: str, sign: int) -> Gap:  # sign · (s*(neighbour) - s*(attack)), paired
            at, nb = seed_mean_relative(attack, high), seed_mean_relative(neighbour, high)
            diff = sign * (cells[(neighbour, high)].relative - cells[(attack, high)].relative)
            return Gap(attack, neighbour, diff, item_interval(lambda c: sign * (nb(c) - at(c)), n, **boot))

        m = replace(m, ends={"most": gap(rk[0], rk[1], 1), "least": gap(rk[-1], rk[-2], -1),
                             **_paper_ends(rk, _reference("TC"), gap)})
    if task.kind == "classification":
        m = _with_ranking_agreement(m, clean, cell_sc, config)
        m = _with_edit_fit(m, config)
    return m


def _paper_ends(rk: list[str], ref: dict[str, int], gap: Callable[[str, str, int], Gap]) -> dict[str, Gap]:
    """The ends of the paper's Table 5 ranking (TC column: visual most harmful, phonetic least), each against the
    nearest other attacker here: ``paper_most`` = s*(most harmful of the others) − s*(the paper's most harmful),
    ``paper_least`` = s*(the paper's least harmful) − s*(least harmful of the others), paired over the items
    (positive: the paper's end holds here; the paper_effects rows)."""
    most, least = min(ref, key=ref.__getitem__), max(ref, key=ref.__getitem__)
    out = {}
    if most in rk:
        out["paper_most"] = gap(most, next(a for a in rk if a != most), 1)
    if least in rk:
        out["paper_least"] = gap(least, [a for a in rk if a != least][-1], -1)
    return out


def _lo(iv: Interval | None) -> float:
    return float("nan") if iv is None else iv.low


def _hi(iv: Interval | None) -> float:
    return float("nan") if iv is None else iv.high


def _with_ranking_agreement(m: TaskMeasure, clean: Scorer, cell_sc: dict, config: Config) -> TaskMeasure:
    """Kendall τ-b between the seed-mean s*(high) of the attackers and their Table 5 ranks, with its interval over
    the texts (each text keeps its outcome under every attacker and seed, so the ranking is recomputed per
    resample)."""
    ref = _reference(config.classification.paper_task)
    common = tuple(a for a in m.task.attacks if a in ref)
    if len(common) < 3:
        return m
    ranks = np.array([ref[a] for a in common], dtype=np.float64)
    high, seeds = m.high, m.seeds

    def raw_tau(c: Counts) -> np.ndarray:
        s0 = clean(c)
        rel = np.stack([np.mean([cell_sc[(a, high, sd)](c) / s0 for sd in seeds], axis=0) for a in common])
        return kendall_tau_b(rel, ranks)

    def tau(c: Counts) -> np.ndarray:  # a resample where every attacker ties has no order: τ = 0
        return np.nan_to_num(raw_tau(c), nan=0.0)

    value = float(raw_tau(full_sample(m.task.n))[0])
    if not np.isfinite(value):
        return m
    s = config.seeds
    ci = item_interval(tau, m.task.n, seed=config.seed, level=s.level, n_resamples=s.n_boot, bounds=(-1.0, 1.0))
    return replace(m, tau=value, tau_ci=ci, tau_attackers=common)


def _with_edit_fit(m: TaskMeasure, config: Config) -> TaskMeasure:
    """Fig. 5: the least-squares line of s*(p) on the mean edit distance over the cells, per attack seed; the run
    seed's numbers and, with at least three seeds, the Student-t interval of Pearson r over the seeds."""
    from dataclasses import replace

    fits = [r.edit_distance_fit() for r in m.runs]
    rs = [f[2] for f in fits]
    r_iv = seed_interval(rs, level=config.seeds.level, bounds=(-1.0, 1.0)) if all(np.isfinite(rs)) else None
    return replace(m, edit_fit={"intercept": fits[0][0], "slope": fits[0][1], "pearson_r": fits[0][2],
                                "pearson_r_seeds": rs, "pearson_r_seed_interval": r_iv})
