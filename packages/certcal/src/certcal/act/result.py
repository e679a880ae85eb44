"""What the ACT comparison returns: a row per (method, radius) after selection, every model before it, how far
each fine-tune moved the weights, and the verdict of one method against the baseline (paper §5.3, Table 2 / 7)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..smoothing import CertifyResult

__all__ = ["ACTComparison", "ACTDifference", "ACTModel", "ACTRow", "ACTVerdict", "ACTWeights", "VERDICT_PREFERENCE"]


@dataclass(frozen=True)
class ACTRow:
    """One (method, radius) cell of the comparison; metrics are fractions in [0, 1] (None: nothing certified,
    or no interval). ``certifiable``: the radius is within what the draw budget can certify."""

    method: str
    radius: float
    certified_accuracy: float
    certified_accuracy_ci_low: float
    certified_accuracy_ci_high: float
    cbs: float | None
    cbs_ci_low: float | None
    cbs_ci_high: float | None
    cce: float | None
    cce_ci_low: float | None
    cce_ci_high: float | None
    n_certified: float  # mean over seeds (of the CCE-selected models)
    n_selected: int = 0  # seeds in which the method had a model within the selection margin
    cce_per_seed: tuple[float | None, ...] = ()
    selected: tuple[dict[str, Any] | None, ...] = ()  # the CCE-selected grid point per seed
    certifiable: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ACTModel:
    """One fine-tuned model (method, grid point, seed) at one radius, before selection."""

    method: str
    params: dict[str, Any]
    seed: int
    radius: float
    certified_accuracy: float
    cbs: float | None
    cce: float | None
    eligible: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ACTWeights:
    """How far one fine-tune (method, grid point, seed) moved the weights from the start model: the largest and
    the mean absolute change over all parameters (0 for ``"none"``, the start itself)."""

    method: str
    params: dict[str, Any]
    seed: int
    max_abs_change: float
    mean_abs_change: float
    n_parameters: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ACTDifference:
    """The CCE difference ``method − baseline`` at one radius (paper §5.3, Table 2 / 7: ACT against AT) with its
    paired 95 % bootstrap interval: both models' exact CCE recomputed on the same resamples of the shared test
    inputs (:mod:`certcal.act.paired`). ``n_seeds``: the seeds in which both had a selected model (the
    difference is the mean over those seeds); ``low`` / ``high`` None with ``reason`` when there is none or the
    bootstrap could not place it."""

    method: str
    baseline: str
    radius: float
    difference: float | None
    low: float | None
    high: float | None
    n_seeds: int
    n_boot: int
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ACTVerdict:
    """One ACT method against the baseline at the largest radius where both have a selected model with a CCE.

    ``radius`` is None when there is no such radius (then every metric is None). ``overlap``: the two closed CCE
    95 % intervals share a point (no difference shown); ``lowers``: the method's CCE is the lower point estimate
    (a difference is shown only where ``overlap`` is False). ``conclusive`` is False with ``reason`` saying why
    when the budget cannot decide (no common radius, an interval missing, overlapping intervals)."""

    method: str
    baseline: str
    radius: float | None
    cce: float | None = None
    cce_ci: tuple[float, float] | None = None
    baseline_cce: float | None = None
    baseline_cce_ci: tuple[float, float] | None = None
    certified_accuracy: float | None = None
    baseline_certified_accuracy: float | None = None
    overlap: bool | None = None
    lowers: bool | None = None
    conclusive: bool = False
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: the method a verdict compares by default: the paper's proposal first (§4), the AT baseline last
VERDICT_PREFERENCE = ("acce_act", "brier_act", "acce_act_exact", "smoothadv")


def _interval_pair(lo: float | None, hi: float | None) -> tuple[float, float] | None:
    return None if lo is None or hi is None else (lo, hi)


@dataclass(frozen=True)
class ACTComparison:
    sigma: float
    epsilon: float
    seeds: tuple[int, ...]
    methods: tuple[str, ...]
    rows: tuple[ACTRow, ...] = field(default_factory=tuple)
    config: dict[str, Any] = field(default_factory=dict)
    models: tuple[ACTModel, ...] = field(default_factory=tuple)
    max_radius: float = float("inf")  # the largest radius the draw budget can certify (max_certifiable_radius)
    weights: tuple[ACTWeights, ...] = field(default_factory=tuple)
    # per (method, grid index, seed): the certificate of the test inputs (not part of to_dict)
    certificates: Mapping[tuple[str, int, int], CertifyResult] = field(default_factory=dict, repr=False,
                                                                     compare=False)
    # per method: its grid points in the order of the grid index above
    grid_points: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict, repr=False, compare=False)
    # per ACT variant and radius: its CCE minus the paired baseline's (AT), with a paired bootstrap interval
    differences: tuple[ACTDifference, ...] = field(default_factory=tuple)

    def row(self, method: str, radius: float) -> ACTRow:
        for r in self.rows:
            if r.method == method and abs(r.radius - radius) < 1e-12:
                return r
        raise KeyError((method, radius))

    def difference(self, method: str, radius: float) -> ACTDifference | None:
        """The paired CCE difference of ``method`` against the paired baseline at ``radius`` (None: not computed)."""
        return next((d for d in self.differences if d.method == method and abs(d.radius - radius) < 1e-12), None)

    @property
    def baseline(self) -> str:
        """The row every method is compared with: the un-fine-tuned ``"none"``, else the first method."""
        return "none" if "none" in self.methods else self.methods[0]

    def compare(self, method: str, radius: float, baseline: str | None = None) -> tuple[str, bool, str]:
        """``(verdict, conclusive, reason)`` of ``method`` against ``baseline`` at ``radius`` on the CCE:
        "lower" / "higher" when the 95 % intervals are disjoint, else "inconclusive" with the reason (the radius
        is beyond what the draw budget certifies, a method has no selected model or no interval there, the
        intervals overlap)."""
        base = self.baseline if baseline is None else baseline
        a, b = self.row(method, radius), self.row(base, radius)
        if radius > self.max_radius:
            return ("inconclusive", False, f"r = {radius:g} is beyond the largest radius the draw budget certifies "
                    f"({self.max_radius:.3g} at n = {self.config.get('n')}, alpha = {self.config.get('alpha')})")
        if a.cce is None or b.cce is None:
            return "inconclusive", False, self._unselected(method if a.cce is None else base, radius)
        ia, ib = _interval_pair(a.cce_ci_low, a.cce_ci_high), _interval_pair(b.cce_ci_low, b.cce_ci_high)
        if ia is None or ib is None:
            return "inconclusive", False, "a CCE interval is missing (the bootstrap could not place it)"
        if not (ia[1] < ib[0] or ib[1] < ia[0]):
            return "inconclusive", False, "the CCE intervals overlap"
        return ("lower" if a.cce < b.cce else "higher"), True, "the CCE intervals are disjoint"

    def _unselected(self, method: str, radius: float) -> str:
        """Why ``method`` has no CCE at ``radius``: nothing certified, or no model within the CA band (with the
        numbers that put it outside)."""
        text = f"{method} has no selected model with a CCE at r = {radius:g}"
        at_r = [m for m in self.models if abs(m.radius - radius) < 1e-12]
        own = [m for m in at_r if m.method == method]
        margin = self.config.get("selection_margin")
        if not own or margin is None:
            return text
        if all(m.cce is None for m in own):
            return text + " (it certifies no input there)"
        seed = own[0].seed  # the band is per seed: the first seed's numbers
        best = max((m for m in at_r if m.seed == seed), key=lambda m: m.certified_accuracy)
        mine = max(m.certified_accuracy for m in own if m.seed == seed)
        return (text + f": its best CA {100 * mine:.2f} % is below the band's {100 * (best.certified_accuracy - margin):.2f}"
                f" % ({best.method}'s {100 * best.certified_accuracy:.2f} % − {100 * margin:g} %"
                + (f", seed {seed})" if len(self.seeds) > 1 else ")"))

    def comparisons(self, baseline: str | None = None) -> list[tuple[str, float, str, bool, str]]:
        """``(method, radius, verdict, conclusive, reason)`` for every method but the baseline at every radius."""
        base = self.baseline if baseline is None else baseline
        radii = sorted({r.radius for r in self.rows})
        return [(m, r, *self.compare(m, r, base)) for m in self.methods if m != base for r in radii]

    def verdict(self, method: str | None = None, baseline: str | None = None) -> ACTVerdict | None:
        """Does ACT change the certified calibration error? (paper §5.3, Table 2 / 7)

        Compares ``method`` (default: the first of ACCE-ACT, Brier-ACT, exact ACCE-ACT, SmoothAdv that was run)
        with ``baseline`` (default: the un-fine-tuned model ``"none"``, else the first method) at the largest radius
        where both have a CCE (a selected model within the margin), and says whether their CCE intervals
        overlap. None when there is no method to compare (only the baseline was run)."""
        base = baseline if baseline is not None else self.baseline
        act = method if method is not None else next((m for m in VERDICT_PREFERENCE if m in self.methods), None)
        for m, what in ((base, "baseline"), (act, "method")):
            if m is not None and m not in self.methods:
                raise ValueError(f"{what} must be one of the compared methods {list(self.methods)}, got {m!r}")
        if act is None or act == base:
            return None
        for r in sorted({row.radius for row in self.rows}, reverse=True):
            a, b = self.row(act, r), self.row(base, r)
            if a.cce is None or b.cce is None:
                continue
            ia, ib = _interval_pair(a.cce_ci_low, a.cce_ci_high), _interval_pair(b.cce_ci_low, b.cce_ci_high)
            overlap = None if ia is None or ib is None else not (ia[1] < ib[0] or ib[1] < ia[0])
            _, conclusive, reason = self.compare(act, r, base)
            return ACTVerdict(act, base, r, a.cce, ia, b.cce, ib, a.certified_accuracy, b.certified_accuracy, overlap,
                              bool(a.cce < b.cce), conclusive, reason)
        return ACTVerdict(act, base, None, conclusive=False,
                          reason=f"no radius where both {act} and {base} have a selected model with a CCE")

    def to_dict(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "epsilon": self.epsilon, "seeds": list(self.seeds),
                "methods": list(self.methods), "rows": [r.to_dict() for r in self.rows], "config": dict(self.config),
                "models": [m.to_dict() for m in self.models], "max_radius": self.max_radius,
                "weights": [w.to_dict() for w in self.weights],
                "differences": [d.to_dict() for d in self.differences]}
