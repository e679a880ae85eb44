"""The verdict's vocabulary: one :class:`Check` (a statistic, its interval, its rule and what it means), the
false-discovery-rate control over checks that rest on p-values, and the rule that combines checks into one status
per model.

A check never becomes a score: the combination (:func:`combine`) only looks at statuses, in the order of the
field's practice (see ``notes/verdict.md``): a failed *validity* check makes the evaluation inconclusive, any other
failure makes the robustness claim not supported, a warning adds a caveat. Each package computes the checks of
its own method (``robustsuite_common.indicators`` the attack-failure indicators of the robust-accuracy
evaluation); the umbrella gathers them per model and renders the page.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = [
    "CHECK_STATUSES", "GROUPS", "VERDICT_STATUSES", "Check", "CheckError", "Verdict", "apply_fdr", "checks_table",
    "combine", "verdict",
]

#: The groups of the scorecard, in the order the page shows them.
GROUPS = ("validity", "attack-strength", "lenses")
#: A check's status.
CHECK_STATUSES = ("pass", "warn", "fail", "not-applicable")
#: A model's status, from the most to the least favourable.
VERDICT_STATUSES = ("supported", "supported-with-caveats", "not-supported", "inconclusive")
#: The false-discovery rate the p-value checks are held to (Benjamini-Hochberg).
FDR = 0.05



class CheckError(ValueError):
    """A check that cannot be right (an unknown status or group, an interval that excludes its statistic)."""


def _number(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
        raise CheckError(f"{name} must be a finite number or None, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Check:
    """One row of the scorecard.

    ``id`` names what is checked in words (``zero-gradients``, ``pgd-vs-autoattack``); ``group`` is one of
    :data:`GROUPS`; ``status`` one of :data:`CHECK_STATUSES`. ``statistic`` with its ``interval`` (``(low, high)``,
    which must contain it) on ``n`` items; ``rule`` says how the statistic gives the status; ``evidence`` where the
    numbers are (a section key or a per-sample file), ``next_step`` what to do about a warning or failure.

    A check that rests on a p-value carries ``p_value`` and ``status_if_significant``: :func:`apply_fdr` adjusts
    the p-values of all such checks together (Benjamini-Hochberg) and sets ``status`` to ``status_if_significant``
    where the adjusted p-value is below :data:`FDR` (``status`` as given otherwise). ``model`` names the model
    checked when an experiment checks several (empty: the model its section is about).
    """

    id: str
    group: str
    title: str
    status: str
    rule: str
    statistic: float | None = None
    interval: tuple[float, float] | None = None
    n: int | None = None
    evidence: str = ""
    next_step: str = ""
    p_value: float | None = None
    p_adjusted: float | None = None
    status_if_significant: str | None = None
    detail: str = ""
    model: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id or self.id != self.id.strip().lower() or " " in self.id:
            raise CheckError(f"check id must be a lower-case word like 'zero-gradients', got {self.id!r}")
        if self.group not in GROUPS:
            raise CheckError(f"check {self.id!r}: group must be one of {GROUPS}, got {self.group!r}")
        for name in ("status", "status_if_significant"):
            v = getattr(self, name)
            if (v is not None or name == "status") and v not in CHECK_STATUSES:
                raise CheckError(f"check {self.id!r}: {name} must be one of {CHECK_STATUSES}, got {v!r}")
        stat = _number("statistic", self.statistic)
        if self.interval is not None:
            if stat is None or len(self.interval) != 2:
                raise CheckError(f"check {self.id!r}: an interval needs a statistic and two bounds")
            lo, hi = (_number("interval", v) for v in self.interval)
            tol = 1e-9 * (1 + abs(stat))
            if not (lo - tol <= stat <= hi + tol):  # type: ignore[operator]
                raise CheckError(f"check {self.id!r}: interval [{lo:.6g}, {hi:.6g}] excludes its statistic "
                                 f"{stat:.6g}")
            object.__setattr__(self, "interval", (lo, hi))
        for name in ("p_value", "p_adjusted"):
            p = _number(name, getattr(self, name))
            if p is not None and not 0.0 <= p <= 1.0:
                raise CheckError(f"check {self.id!r}: {name} must lie in [0, 1], got {p}")
        if self.status_if_significant is not None and self.p_value is None:
            raise CheckError(f"check {self.id!r}: status_if_significant needs a p_value")
        if self.n is not None and (isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 0):
            raise CheckError(f"check {self.id!r}: n must be a count >= 0, got {self.n!r}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["interval"] = list(self.interval) if self.interval is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Check:
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        if known.get("interval") is not None:
            known["interval"] = tuple(known["interval"])
        return cls(**known)


def apply_fdr(checks: Sequence[Check], *, rate: float = FDR) -> list[Check]:
    """``checks`` with the p-values of those that carry one adjusted together (Benjamini-Hochberg,
    ``scipy.stats.false_discovery_control``) and their status set from the adjusted value (see :class:`Check`)."""
    from scipy.stats import false_discovery_control

    idx = [i for i, c in enumerate(checks) if c.p_value is not None]
    out = list(checks)
    if not idx:
        return out
    adjusted = false_discovery_control([checks[i].p_value for i in idx], method="bh")
    for i, p in zip(idx, adjusted, strict=True):
        c = checks[i]
        p = float(min(1.0, max(p, c.p_value or 0.0)))
        status = c.status_if_significant if (c.status_if_significant and p < rate) else c.status
        out[i] = replace(c, p_adjusted=p, status=status)
    return out


def combine(checks: Iterable[Check]) -> tuple[str, str]:
    """The model's status and the rule that gave it, from its checks' statuses (never an average):
    ``inconclusive`` when a validity check fails or only validity checks could run; else ``not-supported`` when
    any check fails; else ``supported-with-caveats`` when any warns; else ``supported``."""
    checks = list(checks)
    failed_validity = [c.id for c in checks if c.group == "validity" and c.status == "fail"]
    if failed_validity:
        return "inconclusive", f"a validity check failed ({', '.join(failed_validity)}): the evaluation itself " \
                               "cannot be trusted, whatever the attack numbers say"
    if not any(c.group != "validity" and c.status != "not-applicable" for c in checks):
        return "inconclusive", "no attack-strength or lens check could run: nothing measured the robustness"
    failed = [c.id for c in checks if c.status == "fail"]
    if failed:
        return "not-supported", f"{len(failed)} check(s) failed ({', '.join(failed)})"
    warned = [c.id for c in checks if c.status == "warn"]
    if warned:
        return "supported-with-caveats", f"no check failed; {len(warned)} warned ({', '.join(warned)})"
    return "supported", "every applicable check passed"


@dataclass(frozen=True)
class Verdict:
    """One model's verdict: ``status`` (:data:`VERDICT_STATUSES`), the ``rule`` that gave it, its ``checks`` (after
    :func:`apply_fdr`), and the headline robust accuracy with its interval (``None`` where it was not measured)."""

    model: str
    status: str
    rule: str
    checks: tuple[Check, ...]
    robust_accuracy: float | None = None
    robust_interval: tuple[float, float] | None = None
    robust_attack: str = ""
    n: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "status": self.status, "rule": self.rule,
                "robust_accuracy": self.robust_accuracy,
                "robust_interval": list(self.robust_interval) if self.robust_interval else None,
                "robust_attack": self.robust_attack, "n": self.n,
                "checks": [c.to_dict() for c in self.checks]}


def verdict(model: str, checks: Iterable[Check], *, robust_accuracy: float | None = None,
            robust_interval: tuple[float, float] | None = None, robust_attack: str = "",
            n: int | None = None) -> Verdict:
    """The :class:`Verdict` of ``model`` from its checks: p-values adjusted together, checks sorted by group, then
    :func:`combine`."""
    adjusted = apply_fdr(list(checks))
    ordered = sorted(adjusted, key=lambda c: GROUPS.index(c.group))
    status, rule = combine(ordered)
    return Verdict(model, status, rule, tuple(ordered), robust_accuracy, robust_interval, robust_attack, n)


def checks_table(checks: Sequence[Check], *, title: str, units: dict[str, str] | None = None,
                 bounds: dict[str, tuple[float, float]] | None = None) -> Any:
    """An experiment's checks as its ``audit_checks`` table: one row per check with its status (before the
    p-values of all a model's checks are adjusted together), statistic with interval, n and raw p-value."""
    from .experiment import Table

    rows = [(c.id, c.group, c.status, c.statistic, *(c.interval or (None, None)), c.n, c.p_value,
             c.status_if_significant) for c in checks]
    return Table("audit_checks", title, ("check", "group", "status", "statistic", "statistic_ci_low",
                                         "statistic_ci_high", "n", "p_value", "status_if_significant"), tuple(rows),
                 units=units or {}, bounds=bounds or {})
