"""Adversary temperature optimisation (Sec. 4.2, Eqs. 10-11): minimise adversarial accuracy Q(T) over log T.

Q(T) is piecewise constant (a mean of indicators), so the bracket a naive ``scipy.optimize.brent`` needs
(f(b) strictly below f(a) and f(c)) often does not exist between arbitrary start points. We first probe by
decades in log10 T from the start temperature (a side whose Q rises is abandoned), walk downhill (crossing
flat stretches for up to ``flat_patience`` decades), and then run scipy's bounded Brent method inside the
interval between the best probe's evaluated neighbours. Every Q evaluation is cached on a lattice of step
``xatol`` in log10 T through the start point, so Brent proposals that land within ``xatol / 2`` of an
evaluated temperature reuse it (Q is a step function: a finer resolution than ``xatol`` buys nothing);
new evaluations are counted against ``max_evaluations``; the full Q(T) curve is returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from robustsuite_common.checks import check_int

from ._validation import check_temperature
from .protocol import AdversarialEvaluation, check_inputs_labels, evaluate_attack

__all__ = ["TemperatureSearchResult", "optimize_temperature", "search_temperature"]

# Temperatures the search may visit: beyond 1e20 (or below 1e-20) float32 logits of ordinary size overflow
# (underflow) when divided, and 10.0 ** 400 is not a float at all.
LOG10_LIMIT = (-20.0, 20.0)


@dataclass(frozen=True)
class TemperatureSearchResult:
    """Outcome of the search: the best temperature, its Q, and every (T, Q) evaluated (sorted by T)."""

    temperature: float
    adversarial_accuracy: float
    evaluations: int
    curve: tuple[tuple[float, float], ...]
    bracket: tuple[float, float]  # temperatures bounding the Brent stage
    strict_bracket: bool  # Q at the best probe strictly below both neighbours
    budget_exhausted: bool

    def to_dict(self) -> dict:
        return {
            "temperature": self.temperature,
            "log10_temperature": math.log10(self.temperature),
            "adversarial_accuracy": self.adversarial_accuracy,
            "evaluations": self.evaluations,
            "curve": [[t, q] for t, q in self.curve],
            "bracket": list(self.bracket),
            "strict_bracket": self.strict_bracket,
            "budget_exhausted": self.budget_exhausted,
        }


class _BudgetExhausted(Exception):
    pass


class _Stalled(Exception):
    pass


class _Objective:
    """Q(10**x) on a lattice of step ``xatol`` in log10 T through the start ``x0``, cached: a Brent proposal
    within ``xatol / 2`` of an evaluated temperature reuses that evaluation instead of paying for a new attack.
    New evaluations count against ``budget`` (:class:`_BudgetExhausted`); reaching ``floor``, or (in the Brent
    stage) ``stall_patience`` evaluations in a row without a new minimum, stops the search (:class:`_Stalled`)."""

    def __init__(self, q: Callable[[float], float], *, x0: float, lo: float, hi: float, xatol: float, budget: int,
                 floor: float | None, stall_patience: int | None) -> None:
        self.q, self.x0, self.lo, self.hi, self.xatol = q, x0, lo, hi, xatol
        self.budget, self.floor, self.stall_patience = budget, floor, stall_patience
        self.cache: dict[float, float] = {}
        self.brent = False  # in the Brent stage: count evaluations without a new minimum
        self.stall = 0

    def snap(self, x: float) -> float:
        x = min(max(float(x), self.lo), self.hi)
        return round(min(max(self.x0 + round((x - self.x0) / self.xatol) * self.xatol, self.lo), self.hi), 9)

    def __call__(self, x: float) -> float:
        key = self.snap(x)
        cache = self.cache
        if key not in cache:
            if len(cache) >= self.budget:
                raise _BudgetExhausted
            val = float(self.q(10.0**key))
            if not math.isfinite(val):
                raise ValueError(f"Q(T) must be finite, got {val} at T={10.0**key:g}")
            improved = not cache or val < min(cache.values())
            cache[key] = val
            if self.floor is not None and val <= self.floor:
                raise _Stalled  # a global minimum: nothing left to find
            if self.brent and self.stall_patience is not None:
                self.stall = 0 if improved else self.stall + 1
                if self.stall >= self.stall_patience:
                    raise _Stalled
        return cache[key]


def _probe(f: _Objective, patience: int) -> tuple[float, float, int]:
    """Stage 1: probe decades on both sides of the start until one is strictly better; a side whose probe rises
    above Q(T0) is abandoned (Q is taken as unimodal in log T up to its flat stretches), a flat side is crossed
    for up to ``patience`` decades. Returns the best point, its Q and the downhill direction (0: none)."""
    x0, lo, hi = f.x0, f.lo, f.hi
    best_x, best_q = x0, f(x0)
    q0 = best_q
    direction = 0
    alive = [d for d in (-1, 1) if lo <= x0 + d <= hi]
    for step in range(1, patience + 2):
        probes = []
        for d in list(alive):
            xv = x0 + d * step
            if not (lo <= xv <= hi):
                alive.remove(d)
                continue
            qv = f(xv)
            probes.append((qv, d, xv))
            if qv > q0:
                alive.remove(d)
        if not probes:
            break
        qv, d, xv = min(probes)
        if qv < best_q:
            best_x, best_q, direction = f.snap(xv), qv, d
            break
        if not alive:
            break
    return best_x, best_q, direction


def _walk(f: _Objective, best_x: float, best_q: float, direction: int, patience: int) -> float:
    """Stage 2: walk downhill by decades from the best probe, crossing up to ``patience`` flat decades."""
    if direction:
        x, flat = f.snap(best_x + direction), 0
        while f.lo <= x <= f.hi:
            qv = f(x)
            if qv < best_q:
                best_x, best_q, flat = x, qv, 0
            elif qv == best_q and flat < patience:
                flat += 1
            else:
                break
            x = f.snap(x + direction)
    return best_x


def _result(cache: dict[float, float], x0: float, left: float, right: float,
            exhausted: bool) -> TemperatureSearchResult:
    """The search's outcome from every evaluation: among tied minima, the one nearest the start (e.g. T_cal)."""
    xs = np.array(sorted(cache))
    qs = np.array([cache[v] for v in xs])
    qmin = qs.min()
    tied = xs[qs == qmin]
    bx = float(tied[np.argmin(np.abs(tied - x0))])
    neighbours_l = qs[xs < bx]
    neighbours_r = qs[xs > bx]
    strict = bool(
        len(neighbours_l) and len(neighbours_r) and qs[xs < bx][-1] > qmin and qs[xs > bx][0] > qmin
    )
    return TemperatureSearchResult(
        temperature=float(10.0**bx),
        adversarial_accuracy=float(qmin),
        evaluations=len(cache),
        curve=tuple((float(10.0**x), float(cache[x])) for x in xs),
        bracket=(float(10.0**left), float(10.0**right)),
        strict_bracket=strict,
        budget_exhausted=exhausted,
    )


def search_temperature(
    q: Callable[[float], float],
    *,
    init_temperature: float = 1.0,
    log10_bounds: tuple[float, float] = (-8.0, 8.0),
    max_evaluations: int = 16,
    xatol: float = 0.05,
    flat_patience: int = 3,
    stall_patience: int | None = 4,
    floor: float | None = 0.0,
) -> TemperatureSearchResult:
    """Minimise any Q(T) (e.g. adversarial accuracy) over log10 T by decade probing + bounded Brent.

    ``xatol`` is the Brent tolerance in log10 T; ``flat_patience`` the number of decades walked across a
    flat Q before giving up in that direction; ``stall_patience`` stops the Brent stage after that many
    consecutive evaluations without a new minimum (Q is a step function: refining inside a plateau
    rarely pays; ``None`` runs Brent to ``xatol``). ``floor`` is a known lower bound of Q (an adversarial
    accuracy cannot fall below 0): the search stops as soon as it is reached (``None``: no bound).

    Paper: the adversary's optimised temperature, §4.2, Eqs. 10–11.
    """
    t0 = check_temperature(init_temperature, "init_temperature")
    lo, hi = (float(v) for v in log10_bounds)
    if not (math.isfinite(lo) and math.isfinite(hi) and LOG10_LIMIT[0] <= lo < hi <= LOG10_LIMIT[1]):
        raise ValueError(
            f"log10_bounds must be finite (lo, hi) with {LOG10_LIMIT[0]} <= lo < hi <= {LOG10_LIMIT[1]} "
            f"(temperatures 1e-20..1e20 keep float32 logits finite), got {log10_bounds}"
        )
    budget = check_int("max_evaluations", max_evaluations, ge=1)
    patience = check_int("flat_patience", flat_patience, ge=0)
    if not (xatol > 0):
        raise ValueError(f"xatol must be > 0, got {xatol}")
    if stall_patience is not None:
        check_int("stall_patience", stall_patience, ge=1)

    x0 = round(min(max(math.log10(t0), lo), hi), 9)
    f = _Objective(q, x0=x0, lo=lo, hi=hi, xatol=xatol, budget=budget, floor=floor, stall_patience=stall_patience)
    exhausted = False
    left = right = x0
    try:
        best_x, best_q, direction = _probe(f, patience)
        best_x = _walk(f, best_x, best_q, direction, patience)
        # 3) bounded Brent between the evaluated neighbours of the best probe
        xs = sorted(f.cache)
        left = max([v for v in xs if v < best_x], default=best_x)
        right = min([v for v in xs if v > best_x], default=best_x)
        if right - left > xatol:
            f.brent = True
            minimize_scalar(
                f,
                bounds=(left, right),
                method="bounded",
                options={"xatol": xatol, "maxiter": max(1, budget - len(f.cache))},
            )
    except _Stalled:
        pass
    except _BudgetExhausted:
        exhausted = True
        xs = sorted(f.cache)
        left, right = xs[0], xs[-1]
    return _result(f.cache, x0, left, right, exhausted)


def optimize_temperature(
    model,
    inputs,
    labels,
    attack,
    *,
    init_temperature: float = 1.0,
    log10_bounds: tuple[float, float] = (-8.0, 8.0),
    max_evaluations: int = 16,
    xatol: float = 0.05,
    flat_patience: int = 3,
    stall_patience: int | None = 4,
    floor: float | None = 0.0,
    seed: int = 0,
    progress: bool = False,
    evaluate: Callable[..., AdversarialEvaluation] | None = None,
) -> TemperatureSearchResult:
    """Adversarial temperature T_a = argmin_T Q(T) (Eq. 11) on a validation set.

    Q(T) (Eq. 10) attacks ``TemperatureScaled(model, temperature=T)`` with ``attack`` under the same ``seed`` at every T
    and scores the adversarial examples on the unmodified ``model``. The paper uses DeepWordBug on the
    validation set; start from the calibrated temperature (``init_temperature=calibrate_temperature(...)``)
    to save evaluations. ``evaluate`` replaces :func:`~iortemp.evaluate_attack` (same signature), e.g. to
    checkpoint every attack run of the search.
    """
    if not callable(attack):
        raise TypeError("attack must be callable as attack(model, inputs, labels, seed=...)")

    check_temperature(init_temperature, "init_temperature")
    inputs, labels, _ = check_inputs_labels(model, inputs, labels)
    run = evaluate or evaluate_attack

    def q(t: float) -> float:
        return run(model, inputs, labels, attack, temperature=t, seed=seed, progress=progress).adversarial_accuracy

    return search_temperature(
        q,
        init_temperature=init_temperature,
        log10_bounds=log10_bounds,
        max_evaluations=max_evaluations,
        xatol=xatol,
        flat_patience=flat_patience,
        stall_patience=stall_patience,
        floor=floor,
    )
