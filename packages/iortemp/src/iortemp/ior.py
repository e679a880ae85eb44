"""Illusion-of-robustness (IOR) detection and the Table 2/3 reproduction grid.

A model has an IOR when the adversarial accuracy of an out-of-the-box attack (*plain*) drops by more than
``threshold`` once the adversary rescales its logits with the NLL-calibrated temperature (*cal*, Eq. 9) or
the Brent-optimised temperature (*opt*, Eq. 11). Works for text classifiers and vision modules alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ._validation import check_choice
from .calibration import PlattScaler, TemperatureFit, fit_temperature
from .intervals import Interval, run_interval, seed_interval
from .metrics import confidence_stats
from .optimize import TemperatureSearchResult, optimize_temperature
from .protocol import AdversarialEvaluation, evaluate_attack
from .temperature import logits64

__all__ = ["IORReport", "IllusionTable", "SweepPoint", "detect_ior", "illusion_table", "temperature_sweep"]

MODES = ("plain", "cal", "opt", "platt")


@dataclass(frozen=True)
class SweepPoint:
    """One point of Fig. 1: adversary temperature, mean clean confidence there, adversarial accuracy."""

    temperature: float
    mean_confidence: float
    adversarial_accuracy: float

    def to_dict(self) -> dict:
        return {
            "temperature": self.temperature,
            "mean_confidence": self.mean_confidence,
            "adversarial_accuracy": self.adversarial_accuracy,
        }


def temperature_sweep(
    model, inputs, labels, attack, temperatures: Sequence[float], *, seed: int = 0, progress: bool = False
) -> tuple[SweepPoint, ...]:
    """Adversarial accuracy against temperature (Fig. 1): attack ``model / T``, score on ``model``."""
    temps = [float(t) for t in temperatures]
    if not temps or any(not (t > 0 and math.isfinite(t)) for t in temps):
        raise ValueError("temperatures must be a non-empty sequence of finite numbers > 0")
    z = logits64(model, inputs)
    out = []
    for t in temps:
        ev = evaluate_attack(model, inputs, labels, attack, temperature=t, seed=seed, progress=progress)
        out.append(SweepPoint(t, confidence_stats(z, t).mean, ev.adversarial_accuracy))
    return tuple(out)


@dataclass(frozen=True)
class IORReport:
    """plain / cal / opt evaluations, the sweep, and the verdict (``illusion`` = drop > threshold)."""

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

    @property
    def separable(self) -> bool:
        """The validation set was perfectly classified: T_cal is the bounded one and opt was run."""
        return bool(self.calibration is not None and self.calibration.separable)

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
        if self.illusion:
            return (
                f"illusion of robustness: adversarial accuracy falls by {100 * self.drop:.1f} points "
                f"(> {100 * self.threshold:.1f}) under the adversary's {best} temperature{note}"
            )
        return (
            f"no illusion detected: temperature scaling changes adversarial accuracy by "
            f"{100 * self.drop:.1f} points (threshold {100 * self.threshold:.1f}){note}"
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
    ``optimise=False``.
    """
    if not (0.0 <= threshold < 1.0):
        raise ValueError(f"threshold must lie in [0, 1), got {threshold}")
    check_choice(calibration, ("exact", "gd"), "calibration")
    if not callable(attack):
        raise TypeError("attack must be callable as attack(victim, inputs, labels, seed=...)")
    yv = np.asarray(val_labels.cpu() if hasattr(val_labels, "cpu") else val_labels)
    fit = fit_temperature(logits64(model, val_inputs), yv, method=calibration)
    t_cal = fit.temperature
    optimise = optimise or fit.separable
    plain = evaluate_attack(model, inputs, labels, attack, seed=seed, progress=progress)
    cal = evaluate_attack(model, inputs, labels, attack, temperature=t_cal, seed=seed, progress=progress)
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
            model, inputs, labels, attack, temperature=search.temperature, seed=seed, progress=progress
        )
    if sweep_temperatures is None:
        sweep_temperatures = [t_cal * 10.0**k for k in range(-3, 4)]
    sweep = (
        temperature_sweep(model, inputs, labels, attack, sweep_temperatures, seed=seed)
        if sweep_temperatures
        else ()
    )
    best = min(cal.adversarial_accuracy, opt.adversarial_accuracy if opt else math.inf)
    drop = plain.adversarial_accuracy - best
    return IORReport(
        plain, cal, opt, t_cal, search, tuple(sweep), float(threshold), float(drop), bool(drop > threshold), fit
    )


@dataclass(frozen=True)
class IllusionTable:
    """Tables 2/3: rows (system, mode) with the temperature used, clean and per-attack adversarial accuracy.

    With several ``seeds`` each row holds the mean over seeds, its std (the paper's ± column) and a 95 %
    Clopper-Pearson interval of the pooled per-example outcomes (``*_ci_low`` / ``*_ci_high``).
    """

    attacks: tuple[str, ...]
    rows: tuple[dict, ...]

    def to_dict(self) -> dict:
        return {"attacks": list(self.attacks), "rows": [dict(r) for r in self.rows]}

    def _row(self, system: str, mode: str) -> dict:
        for r in self.rows:
            if r["system"] == system and r["mode"] == mode:
                return r
        raise KeyError(f"no row ({system!r}, {mode!r})")

    def value(self, system: str, mode: str, attack: str) -> float:
        return self._row(system, mode)["adversarial_accuracy"][attack]

    def verdict(self, system: str, attack: str, threshold: float = 0.05) -> dict:
        """The IOR verdict of one system from its rows: plain vs the best adversary temperature (cal / opt).

        ``illusion``: the drop exceeds ``threshold``; ``resolved``: the plain interval lies entirely above the
        best temperature's (the drop is larger than the sampling noise of the two numbers).
        """
        if not (0.0 <= threshold < 1.0):
            raise ValueError(f"threshold must lie in [0, 1), got {threshold}")
        plain = self.interval(system, "plain", attack)
        modes = [r["mode"] for r in self.rows if r["system"] == system and r["mode"] in ("cal", "opt")]
        if not modes:
            raise KeyError(f"no cal/opt rows for system {system!r}")
        best_mode = min(modes, key=lambda m: self.value(system, m, attack))
        best = self.interval(system, best_mode, attack)
        drop = plain.value - best.value
        return {
            "system": system,
            "attack": attack,
            "plain": plain.to_dict(),
            "best_mode": best_mode,
            "best": best.to_dict(),
            "drop": float(drop),
            "threshold": float(threshold),
            "illusion": bool(drop > threshold),
            "resolved": bool(plain.above(best)),
        }

    def sample_records(self, labels, confidences: Mapping[str, Sequence[float]] | None = None) -> list[dict]:
        """Per-sample records of a table built with ``keep_samples=True``: one dict per (input, system, mode,
        attack, seed) with ``id``, ``label``, ``prediction``, ``confidence`` (from ``confidences[system]``,
        e.g. the max-softmax of the float64 logits; ``None`` if not given), ``system``, ``mode``, ``attack``,
        ``seed``, ``temperature``, ``adv_prediction``, ``adv_correct`` and, for text, ``perturbed_text``. The
        mean of ``adv_correct`` over a (system, mode, attack, seed) is that run's adversarial accuracy."""
        y = np.asarray(labels.cpu() if hasattr(labels, "cpu") else labels).astype(np.int64)
        out = []
        for r in self.rows:
            if "samples" not in r:
                raise ValueError("the table holds no samples: build it with illusion_table(..., keep_samples=True)")
            conf = None if confidences is None else confidences[r["system"]]
            for a, runs in r["samples"].items():
                for run in runs:
                    texts = run["perturbed_text"]
                    for i, (yi, pred, adv) in enumerate(zip(y, r["predictions"], run["adv_prediction"], strict=True)):
                        rec = {"id": i, "label": int(yi), "prediction": int(pred),
                               "confidence": None if conf is None else float(conf[i]), "system": r["system"],
                               "mode": r["mode"], "attack": a, "seed": int(run["seed"]),
                               "temperature": float(run["temperature"]), "adv_prediction": int(adv),
                               "adv_correct": bool(int(pred) == yi and int(adv) == yi)}
                        if texts is not None:
                            rec["perturbed_text"] = texts[i]
                        out.append(rec)
        return out

    def interval(self, system: str, mode: str, attack: str) -> Interval:
        """Adversarial accuracy with its 95 % Clopper-Pearson interval (pooled over seeds)."""
        r = self._row(system, mode)
        return Interval(
            r["adversarial_accuracy"][attack],
            r["adversarial_accuracy_ci_low"][attack],
            r["adversarial_accuracy_ci_high"][attack],
        )


def illusion_table(
    systems: Mapping[str, object],
    attacks: Mapping[str, object],
    inputs,
    labels,
    *,
    val_inputs,
    val_labels,
    modes: Sequence[str] = ("plain", "cal", "opt"),
    opt_attack: str | None = None,
    calibration: str = "exact",
    max_evaluations: int = 8,
    seed: int = 0,
    seeds: Sequence[int] | None = None,
    keep_samples: bool = False,
    progress: bool = False,
) -> IllusionTable:
    """Adversarial accuracy of each served system under each attack, plain / cal / opt (Tables 2-3), and
    optionally ``"platt"``: the adversary attacks a matrix-Platt-scaled copy instead (Table 13).

    ``systems`` maps names to served models (e.g. ``{"base": m, "↓conf": TemperatureScaled(m, 2e6),
    "↑conf": TemperatureScaled(m, 0.005), "ddi-at": d}``); ``opt_attack`` names the attack used to
    optimise T on the validation set (default: the first attack; the paper uses DeepWordBug).
    ``seeds`` (default ``(seed,)``) repeats every attack (and the opt search) once per seed, as the paper's
    mean ± std over seeds; rows report the mean, the std over seeds, a Student-t interval over the seeds'
    accuracies (``adversarial_accuracy_seed_ci_low/_high``, ``None`` for one seed) and the per-run
    Clopper-Pearson interval over the n texts (``adversarial_accuracy_ci_low/_high``; with several seeds the
    hull of the per-seed intervals, :func:`~iortemp.intervals.run_interval`). A deterministic attack
    (``attack.stochastic`` False: PWWS, the word swap) runs once per temperature and its seeds repeat
    that run. ``keep_samples=True`` adds ``row["samples"][attack]``: per seed, the served model's
    adversarial predictions and (text) the perturbed inputs, for per-sample logs.
    A separable validation set gives the bounded T_cal of :func:`fit_temperature` (row key ``separable``).
    """
    for m in modes:
        check_choice(m, MODES, "modes")
    if not systems or not attacks:
        raise ValueError("systems and attacks must be non-empty mappings")
    opt_name = opt_attack or next(iter(attacks))
    if opt_name not in attacks:
        raise ValueError(f"opt_attack must be one of {list(attacks)}, got {opt_name!r}")
    seed_list = _check_seeds(seeds, seed)
    yv = np.asarray(val_labels.cpu() if hasattr(val_labels, "cpu") else val_labels)
    rows = []
    for sname, model in systems.items():
        fit = fit_temperature(logits64(model, val_inputs), yv, method=calibration)
        source = (
            PlattScaler(kind="matrix").fit(logits64(model, val_inputs), yv).wrap(model)
            if "platt" in modes
            else None
        )
        done: dict[tuple, AdversarialEvaluation] = {}  # deterministic attacks: one run per (attack, T, source)
        for mode in modes:
            temps, searches = [], []
            runs: dict[str, list[AdversarialEvaluation]] = {a: [] for a in attacks}
            for sd in seed_list:
                if mode in ("plain", "platt"):
                    t = 1.0
                elif mode == "cal":
                    t = fit.temperature
                else:
                    res = optimize_temperature(
                        model,
                        val_inputs,
                        yv,
                        attacks[opt_name],
                        init_temperature=fit.temperature,
                        max_evaluations=max_evaluations,
                        seed=sd,
                    )
                    t = res.temperature
                    searches.append(res.to_dict())
                temps.append(t)
                for aname, atk in attacks.items():
                    key = (aname, float(t), mode == "platt")
                    if not getattr(atk, "stochastic", True) and key in done:
                        runs[aname].append(done[key])
                        continue
                    ev = evaluate_attack(
                        model,
                        inputs,
                        labels,
                        atk,
                        temperature=t,
                        source_model=source if mode == "platt" else None,
                        seed=sd,
                        keep_adversarial=keep_samples,
                        progress=progress,
                    )
                    done[key] = ev
                    runs[aname].append(ev)
            rows.append(_row(sname, mode, temps, searches, runs, seed_list, fit, opt_name, keep_samples))
    return IllusionTable(tuple(attacks), tuple(rows))


def _check_seeds(seeds: Sequence[int] | None, seed: int) -> tuple[int, ...]:
    if seeds is None:
        return (int(seed),)
    out = tuple(seeds)
    if not out or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in out):
        raise ValueError(f"seeds must be a non-empty sequence of integers, got {seeds!r}")
    return tuple(int(s) for s in out)


def _row(sname, mode, temps, searches, runs, seed_list, fit, opt_name, keep_samples) -> dict:
    """One Table 2/3 row from the per-seed evaluations of every attack."""
    attacks = list(runs)
    per_seed = {a: [ev.adversarial_accuracy for ev in runs[a]] for a in attacks}
    cis = {a: run_interval([ev.correct_adversarial for ev in runs[a]]) for a in attacks}
    sis = {a: seed_interval(per_seed[a]) for a in attacks}
    first = runs[opt_name][0]
    row = {
        "system": sname,
        "mode": mode,
        "temperature": temps[0],
        "clean_accuracy": first.clean_accuracy,
        "adversarial_accuracy": {a: float(np.mean(per_seed[a])) for a in attacks},
        "adversarial_accuracy_ci_low": {a: cis[a].low for a in attacks},
        "adversarial_accuracy_ci_high": {a: cis[a].high for a in attacks},
        "adversarial_accuracy_seed_ci_low": {a: None if sis[a] is None else sis[a].low for a in attacks},
        "adversarial_accuracy_seed_ci_high": {a: None if sis[a] is None else sis[a].high for a in attacks},
        "adversarial_accuracy_std": {
            a: float(np.std(per_seed[a], ddof=1)) if len(seed_list) > 1 else 0.0 for a in attacks
        },
        "clean_confidence": first.clean_confidence.mean,
        "adversarial_confidence": float(np.mean([ev.adversarial_confidence.mean for ev in runs[opt_name]])),
        "seeds": list(seed_list),
        "n": first.n,
        "separable": fit.separable,
    }
    if len(seed_list) > 1:
        row["temperatures"] = temps
    if searches:
        row["search"] = searches[0] if len(searches) == 1 else searches
    if keep_samples:
        row["predictions"] = list(first.predictions)
        row["samples"] = {
            a: [
                {
                    "seed": sd,
                    "temperature": t,
                    "adv_prediction": list(ev.adversarial_predictions),
                    "perturbed_text": list(ev.adversarial) if isinstance(ev.adversarial, list) else None,
                }
                for sd, t, ev in zip(seed_list, temps, runs[a], strict=True)
            ]
            for a in attacks
        }
    return row
