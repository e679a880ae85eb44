"""Illusion-of-robustness (IOR) detection of one model (:func:`detect_ior`), the Fig. 1 sweep, and the paired
statistics of the verdict (:func:`paired_verdict`, :func:`run_interval`); the Table 2/3 grid over several served
systems is :mod:`iortemp.illusion`.

A model has an IOR when the adversarial accuracy of an out-of-the-box attack (*plain*) drops by more than
``threshold`` once the adversary rescales its logits with the NLL-calibrated temperature (*cal*, Eq. 9) or
the Brent-optimised temperature (*opt*, Eq. 11). Works for text classifiers and vision modules alike.

Both conditions attack the *same* inputs, so the verdict compares them with paired statistics: McNemar's
exact test on the per-input outcomes (:func:`robustsuite_common.intervals.mcnemar`) and a paired bootstrap
interval of the per-input difference, never two independent binomial intervals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from robustsuite_common.checks import check_choice, check_float
from robustsuite_common.intervals import LEVEL, Interval, McNemar, mcnemar, paired_difference, proportion_of

from ._validation import check_temperature
from .calibration import TemperatureFit, fit_temperature
from .metrics import confidence_stats
from .optimize import TemperatureSearchResult, optimize_temperature
from .protocol import AdversarialEvaluation, check_inputs_labels, evaluate_attack
from .temperature import logits64

__all__ = ["IORReport", "SweepPoint", "detect_ior", "paired_verdict", "run_interval", "temperature_sweep"]

Evaluate = Callable[..., AdversarialEvaluation]


def run_interval(correct_per_seed: Sequence[Sequence[bool]], *, level: float = LEVEL) -> Interval:
    """Per-run Clopper-Pearson interval over the n inputs of each seed's run; with several seeds, the hull of
    the per-seed intervals around the mean accuracy.

    The runs of several seeds attack the *same* n inputs, so their outcomes are not independent trials:
    pooling them into one binomial of n × S trials would give an interval ~sqrt(S) too narrow (for a
    deterministic attack, S copies of one run). The hull never claims more precision than one run of n.
    """
    runs = [np.asarray(c, dtype=bool).ravel() for c in correct_per_seed]
    if not runs or any(r.size == 0 for r in runs):
        raise ValueError("correct_per_seed must hold at least one non-empty run")
    ivs = [proportion_of(r, level=level) for r in runs]
    method = "Clopper-Pearson" if len(ivs) == 1 else f"Clopper-Pearson per run, hull over {len(ivs)} seeds"
    return Interval(float(np.mean([iv.estimate for iv in ivs])), min(iv.low for iv in ivs),
                    max(iv.high for iv in ivs), level, method, (0.0, 1.0))


def paired_verdict(plain: Sequence[Sequence[bool]], best: Sequence[Sequence[bool]], *, threshold: float = 0.05,
                   level: float = LEVEL, seed: int = 0) -> dict:
    """The IOR verdict from per-input outcomes of the same inputs under two conditions, per seed.

    ``plain[s][i]`` / ``best[s][i]``: input ``i`` still classified correctly after the plain attack / after the
    attack at the adversary's best temperature, in seed ``s``'s run. Returns ``drop`` (mean accuracy
    difference), ``difference`` (its paired bootstrap interval: inputs resampled, each input's outcomes averaged
    over seeds), ``mcnemar`` (McNemar's exact test per seed; ``p_value`` the largest: every seed must reject),
    ``illusion`` (``drop > threshold``) and ``resolved`` (an illusion that the paired test resolves: largest
    p-value below ``1 - level`` and the paired interval above zero).

    Paper: the illusion-of-robustness verdict behind Tables 2–3 (§5).
    """
    threshold = check_float("threshold", threshold, ge=0.0, lt=1.0)
    p = np.asarray(plain, dtype=bool)
    b = np.asarray(best, dtype=bool)
    if p.ndim != 2 or p.shape != b.shape or p.size == 0:
        raise ValueError(f"plain and best must be (seeds, inputs) outcomes of the same shape, got {p.shape} and "
                         f"{b.shape}")
    tests: list[McNemar] = [mcnemar(p[s], b[s], seed=seed, level=level) for s in range(p.shape[0])]
    diff = paired_difference(p.mean(axis=0), b.mean(axis=0), seed=seed, level=level, bounds=(-1.0, 1.0))
    drop = float(p.mean() - b.mean())
    p_max = max(t.p_value for t in tests)
    illusion = bool(drop > threshold)
    return {"drop": drop, "difference": diff.to_dict(), "threshold": threshold, "illusion": illusion,
            "mcnemar": {"p_value": p_max, "per_seed": [t.to_dict() for t in tests],
                        "only_plain": [t.only_a for t in tests], "only_best": [t.only_b for t in tests]},
            "resolved": bool(illusion and p_max < 1 - level and diff.low > 0)}


@dataclass(frozen=True)
class SweepPoint:
    """One point of Fig. 1: adversary temperature, mean clean confidence there, adversarial accuracy."""

    temperature: float
    mean_confidence: float
    adversarial_accuracy: float

    def to_dict(self) -> dict:
        return asdict(self)


def _check_temperatures(temperatures: Sequence[float]) -> list[float]:
    if isinstance(temperatures, str) or not isinstance(temperatures, Sequence) or not temperatures:
        raise ValueError(f"temperatures must be a non-empty sequence of finite numbers > 0, got {temperatures!r}")
    return [check_temperature(t, f"temperatures[{i}]") for i, t in enumerate(temperatures)]


def temperature_sweep(
    model, inputs, labels, attack, temperatures: Sequence[float], *, seed: int = 0, progress: bool = False,
    evaluate: Evaluate | None = None,
) -> tuple[SweepPoint, ...]:
    """Adversarial accuracy against temperature (Fig. 1): attack ``model / T``, score on ``model``."""
    temps = _check_temperatures(temperatures)
    inputs, y, _ = check_inputs_labels(model, inputs, labels)
    evaluate = evaluate or evaluate_attack
    z = logits64(model, inputs)
    out = []
    for t in temps:
        ev = evaluate(model, inputs, y, attack, temperature=t, seed=seed, progress=progress)
        out.append(SweepPoint(t, confidence_stats(z, temperature=t).mean, ev.adversarial_accuracy))
    return tuple(out)


@dataclass(frozen=True)
class IORReport:
    """plain / cal / opt evaluations, the sweep, and the verdict (``illusion`` = drop > threshold;
    ``paired``: McNemar's test and the paired interval of plain against the best temperature on the same
    inputs, :func:`paired_verdict`)."""

    plain: AdversarialEvaluation
    cal: AdversarialEvaluation
    opt: AdversarialEvaluation | None
    calibrated_temperature: float
    search: TemperatureSearchResult | None
    sweep: tuple[SweepPoint, ...]
    threshold: float
    drop: float
    illusion: bool
    calibration: TemperatureFit | None = None
    paired: Mapping[str, Any] | None = None

    @property
    def separable(self) -> bool:
        """The validation set was perfectly classified: T_cal is the bounded one and opt was run."""
        return bool(self.calibration is not None and self.calibration.separable)

    @property
    def resolved(self) -> bool:
        """The illusion is resolved by the paired test on the same inputs (see :func:`paired_verdict`)."""
        return bool(self.paired is not None and self.paired["resolved"])

    @property
    def verdict(self) -> str:
        best = (
            "opt"
            if self.opt is not None and self.opt.adversarial_accuracy < self.cal.adversarial_accuracy
            else "cal"
        )
        note = (
            "; the validation set is perfectly classified (separable), so T_cal is bounded "
            f"({self.calibrated_temperature:.3g}) and the attack-optimised temperature was searched"
            if self.separable
            else ""
        )
        test = ""
        if self.paired is not None:
            d, p = self.paired["difference"], self.paired["mcnemar"]["p_value"]
            test = (f" (paired difference {100 * d['estimate']:.1f} [{100 * d['low']:.1f}, {100 * d['high']:.1f}] "
                    f"points, McNemar p = {p:.3g}: " + ("resolved" if self.resolved else "not resolved") + ")")
        if self.illusion:
            return (
                f"illusion of robustness: adversarial accuracy falls by {100 * self.drop:.1f} points "
                f"(> {100 * self.threshold:.1f}) under the adversary's {best} temperature{test}{note}"
            )
        return (
            f"no illusion detected: temperature scaling changes adversarial accuracy by "
            f"{100 * self.drop:.1f} points (threshold {100 * self.threshold:.1f}){test}{note}"
        )

    def to_dict(self) -> dict:
        return {
            "plain": self.plain.to_dict(),
            "cal": self.cal.to_dict(),
            "opt": None if self.opt is None else self.opt.to_dict(),
            "calibrated_temperature": self.calibrated_temperature,
            "search": None if self.search is None else self.search.to_dict(),
            "sweep": [p.to_dict() for p in self.sweep],
            "threshold": self.threshold,
            "drop": self.drop,
            "illusion": self.illusion,
            "resolved": self.resolved,
            "paired": None if self.paired is None else dict(self.paired),
            "separable": self.separable,
            "calibration": None if self.calibration is None else self.calibration.to_dict(),
            "verdict": self.verdict,
        }


def detect_ior(
    model,
    inputs,
    labels,
    attack,
    *,
    val_inputs,
    val_labels,
    threshold: float = 0.05,
    calibration: str = "exact",
    optimise: bool = True,
    opt_attack=None,
    max_evaluations: int = 12,
    sweep_temperatures: Sequence[float] | None = (),
    seed: int = 0,
    progress: bool = False,
) -> IORReport:
    """Run plain / cal / opt attacks on ``(inputs, labels)`` and flag an IOR.

    ``cal`` uses the NLL-optimal temperature on the validation set (``calibration="exact"``, or ``"gd"`` for
    the paper's 5000-step gradient descent); ``opt`` runs :func:`optimize_temperature` on the validation set
    with ``opt_attack`` (default ``attack``; the paper uses DeepWordBug), started at the calibrated T.
    ``sweep_temperatures=None`` sweeps T_cal * 10^k for k = -3..3 on the test inputs (Fig. 1); ``()`` skips it.

    A perfectly classified validation set has no NLL-optimal temperature (Eq. 9 decreases as T -> 0, which
    would hand the detector T ~ 1e-13 and hide the illusion): T_cal is then bounded (:func:`fit_temperature`),
    the report says so (``separable``), and the attack-optimised temperature is searched even when
    ``optimise=False``. The verdict's ``paired`` entry compares plain and the best temperature on the same
    inputs (McNemar, paired interval).
    """
    threshold = check_float("threshold", threshold, ge=0.0, lt=1.0)
    check_choice("calibration", calibration, ("exact", "gd"))
    if not callable(attack):
        raise TypeError("attack must be callable as attack(model, inputs, labels, seed=...)")
    if opt_attack is not None and not callable(opt_attack):
        raise TypeError("opt_attack must be callable as attack(model, inputs, labels, seed=...)")
    inputs, y, _ = check_inputs_labels(model, inputs, labels)
    val_inputs, yv, _ = check_inputs_labels(model, val_inputs, val_labels, name="val_inputs")
    if sweep_temperatures:
        _check_temperatures(sweep_temperatures)
    fit = fit_temperature(logits64(model, val_inputs), yv, method=calibration)
    t_cal = fit.temperature
    optimise = optimise or fit.separable
    plain = evaluate_attack(model, inputs, y, attack, seed=seed, progress=progress)
    cal = evaluate_attack(model, inputs, y, attack, temperature=t_cal, seed=seed, progress=progress)
    search = opt = None
    if optimise:
        search = optimize_temperature(
            model,
            val_inputs,
            yv,
            opt_attack or attack,
            init_temperature=t_cal,
            max_evaluations=max_evaluations,
            seed=seed,
            progress=progress,
        )
        opt = evaluate_attack(
            model, inputs, y, attack, temperature=search.temperature, seed=seed, progress=progress
        )
    if sweep_temperatures is None:
        sweep_temperatures = [t_cal * 10.0**k for k in range(-3, 4)]
    sweep = (
        temperature_sweep(model, inputs, y, attack, sweep_temperatures, seed=seed)
        if sweep_temperatures
        else ()
    )
    best_ev = opt if opt is not None and opt.adversarial_accuracy < cal.adversarial_accuracy else cal
    paired = paired_verdict([plain.correct_adversarial], [best_ev.correct_adversarial], threshold=threshold,
                            seed=seed)
    drop = plain.adversarial_accuracy - best_ev.adversarial_accuracy
    return IORReport(plain, cal, opt, t_cal, search, tuple(sweep), float(threshold), float(drop),
                     bool(drop > threshold), fit, paired)
