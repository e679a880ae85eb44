"""Illusion-of-robustness (IOR) detection and the Table 2/3 reproduction grid.

A model has an IOR when the adversarial accuracy of an out-of-the-box attack (*plain*) drops by more than
``threshold`` once the adversary rescales its logits with the NLL-calibrated temperature (*cal*, Eq. 9) or
the Brent-optimised temperature (*opt*, Eq. 11). Works for text classifiers and vision modules alike.

Both conditions attack the *same* inputs, so the verdict compares them with paired statistics: McNemar's
exact test on the per-input outcomes (:func:`robustsuite_common.intervals.mcnemar`) and a paired bootstrap
interval of the per-input difference, never two independent binomial intervals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robustsuite_common.intervals import LEVEL, Interval, McNemar, mcnemar, paired_difference, proportion_of
from robustsuite_common.intervals import seed_interval as _seed_interval

from ._validation import check_choice, check_float, check_int, check_labels, check_seed, check_temperature
from .calibration import PlattScaler, TemperatureFit, fit_temperature
from .metrics import confidence_stats
from .optimize import TemperatureSearchResult, optimize_temperature
from .protocol import AdversarialEvaluation, check_inputs_labels, evaluate_attack
from .temperature import logits64

__all__ = ["IORReport", "IllusionTable", "SweepPoint", "detect_ior", "illusion_table", "paired_verdict",
           "run_interval", "temperature_sweep"]

MODES = ("plain", "cal", "opt", "platt")
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
        return {
            "temperature": self.temperature,
            "mean_confidence": self.mean_confidence,
            "adversarial_accuracy": self.adversarial_accuracy,
        }


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
        raise TypeError("attack must be callable as attack(victim, inputs, labels, seed=...)")
    if opt_attack is not None and not callable(opt_attack):
        raise TypeError("opt_attack must be callable as attack(victim, inputs, labels, seed=...)")
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


@dataclass(frozen=True)
class IllusionTable:
    """Tables 2/3: rows (system, mode) with the temperature used, clean and per-attack adversarial accuracy.

    With several ``seeds`` each row holds the mean over seeds, its std (the paper's ± column), a Student-t
    interval over seeds (``None`` below three seeds) and the per-run Clopper-Pearson interval (hull over seeds,
    :func:`run_interval`); ``adversarial_correct[attack]`` holds every seed's per-input outcomes, from which
    :meth:`verdict` draws its paired test.
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

    def best_mode(self, system: str, attack: str) -> str:
        """The adversary temperature (``cal`` or ``opt``) with the lower mean adversarial accuracy."""
        modes = [r["mode"] for r in self.rows if r["system"] == system and r["mode"] in ("cal", "opt")]
        if not modes:
            raise KeyError(f"no cal/opt rows for system {system!r}")
        return min(modes, key=lambda m: self.value(system, m, attack))

    def verdict(self, system: str, attack: str, threshold: float = 0.05, *, level: float = LEVEL) -> dict:
        """The IOR verdict of one system from its rows: plain vs the best adversary temperature (cal / opt),
        compared on the same inputs (:func:`paired_verdict`: McNemar per seed, paired bootstrap interval).

        Returns ``plain`` / ``best`` (each its mean and per-run interval), ``best_mode``, ``drop``,
        ``difference``, ``mcnemar``, ``threshold``, ``illusion`` and ``resolved``.
        """
        threshold = check_float("threshold", threshold, ge=0.0, lt=1.0)
        best_mode = self.best_mode(system, attack)
        plain_row, best_row = self._row(system, "plain"), self._row(system, best_mode)
        out = paired_verdict(plain_row["adversarial_correct"][attack], best_row["adversarial_correct"][attack],
                             threshold=threshold, level=level, seed=int(plain_row["seeds"][0]))
        return {"system": system, "attack": attack, "plain": self.interval(system, "plain", attack).to_dict(),
                "best_mode": best_mode, "best": self.interval(system, best_mode, attack).to_dict(), **out}

    def sample_records(self, labels, *, ids: Sequence | None = None, inputs: Sequence | None = None,
                       label_names: Sequence[str] | None = None) -> list[dict]:
        """Per-sample records of a table built with ``keep_samples=True``: one dict per (input, system, mode,
        attack, seed) with ``id`` (``ids[i]``, default ``i``), ``input`` (``inputs[i]`` when given: the text,
        or a reference such as ``"test[17]"``), ``label`` (``label_names[y]`` when given, else the index),
        ``prediction`` and ``confidence`` (the served model on the clean input), ``system``, ``mode``,
        ``attack``, ``seed``, ``temperature``, ``adv_input`` (the perturbed text; ``None`` for images),
        ``adv_prediction``, ``adv_confidence`` and ``adv_correct``. The mean of ``adv_correct`` over a
        (system, mode, attack, seed) is that run's adversarial accuracy."""
        y = check_labels("labels", labels)
        names = None if label_names is None else [str(v) for v in label_names]

        def name(k: int):
            return names[k] if names is not None and 0 <= k < len(names) else k

        out = []
        for r in self.rows:
            if "samples" not in r:
                raise ValueError("the table holds no samples: build it with illusion_table(..., keep_samples=True)")
            if len(r["predictions"]) != len(y):
                raise ValueError(f"labels must have one label per input ({len(r['predictions'])}), got {len(y)}")
            conf = r.get("confidences") or [None] * len(y)
            for a in self.attacks:
                for run in r["samples"][a]:
                    texts = run.get("perturbed_text")
                    adv_conf = run.get("adv_confidence") or [None] * len(y)
                    for i, (yi, pred, adv) in enumerate(zip(y, r["predictions"], run["adv_prediction"], strict=True)):
                        out.append({
                            "id": i if ids is None else ids[i], "input": None if inputs is None else inputs[i],
                            "label": name(int(yi)), "system": r["system"], "mode": r["mode"], "attack": a,
                            "seed": int(run["seed"]), "temperature": float(run["temperature"]),
                            "prediction": name(int(pred)), "confidence": conf[i],
                            "adv_input": None if texts is None else texts[i], "adv_prediction": name(int(adv)),
                            "adv_confidence": adv_conf[i], "adv_correct": bool(int(pred) == yi and int(adv) == yi)})
        return out

    def interval(self, system: str, mode: str, attack: str) -> Interval:
        """Adversarial accuracy (mean over seeds) with its per-run 95 % Clopper-Pearson interval (hull over
        seeds)."""
        r = self._row(system, mode)
        return Interval(r["adversarial_accuracy"][attack], r["adversarial_accuracy_ci_low"][attack],
                        r["adversarial_accuracy_ci_high"][attack], LEVEL, "Clopper-Pearson per run", (0.0, 1.0))


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
    search: Mapping[str, Any] | None = None,
    seed: int = 0,
    seeds: Sequence[int] | None = None,
    keep_samples: bool = False,
    progress: bool = False,
    evaluate: Evaluate | None = None,
) -> IllusionTable:
    """Adversarial accuracy of each served system under each attack, plain / cal / opt (Tables 2-3), and
    optionally ``"platt"``: the adversary attacks a matrix-Platt-scaled copy instead (Table 13).

    ``systems`` maps names to served models (e.g. ``{"base": m, "↓conf": TemperatureScaled(m, temperature=2e6),
    "↑conf": TemperatureScaled(m, temperature=0.005), "ddi-at": d}``); ``opt_attack`` names the attack used to
    optimise T on the validation set (default: the first attack; the paper uses DeepWordBug); ``search``
    holds further options of :func:`optimize_temperature` (``xatol``, ``flat_patience``, ``stall_patience``,
    ``log10_bounds``).
    ``seeds`` (default ``(seed,)``) repeats every attack (and the opt search) once per seed, as the paper's
    mean ± std over seeds; rows report the mean, the std over seeds, a Student-t interval over the seeds'
    accuracies (``adversarial_accuracy_seed_ci_low/_high``, ``None`` below three seeds) and the per-run
    Clopper-Pearson interval over the n inputs (``adversarial_accuracy_ci_low/_high``; with several seeds the
    hull of the per-seed intervals, :func:`run_interval`), and every seed's per-input outcomes
    (``adversarial_correct``). A deterministic attack (``attack.stochastic`` False: PWWS, the word swap) runs
    once per temperature and its seeds repeat that run. ``keep_samples=True`` adds ``row["samples"][attack]``:
    per seed, the served model's adversarial predictions and confidences and (text) the perturbed inputs, for
    per-sample records (:meth:`IllusionTable.sample_records`).
    A separable validation set gives the bounded T_cal of :func:`fit_temperature` (row key ``separable``).
    ``evaluate`` replaces :func:`~iortemp.evaluate_attack` for every attack run (same signature), e.g. to
    checkpoint each run (``iortemp.experiment`` does).
    """
    for m in modes:
        check_choice("modes", m, MODES)
    check_choice("calibration", calibration, ("exact", "gd"))
    check_int("max_evaluations", max_evaluations, ge=1)
    if not isinstance(systems, Mapping) or not systems:
        raise ValueError("systems must be a non-empty mapping of names to served models")
    if not isinstance(attacks, Mapping) or not attacks:
        raise ValueError("attacks must be a non-empty mapping of names to attacks")
    for aname, atk in attacks.items():
        if not callable(atk):
            raise TypeError(f"attacks[{aname!r}] must be callable as attack(victim, inputs, labels, seed=...)")
    opt_name = opt_attack or next(iter(attacks))
    if opt_name not in attacks:
        raise ValueError(f"opt_attack must be one of {list(attacks)}, got {opt_name!r}")
    search = dict(search or {})
    unknown = set(search) - {"xatol", "flat_patience", "stall_patience", "log10_bounds", "floor"}
    if unknown:
        raise ValueError(f"search holds unknown options {sorted(unknown)}")
    seed_list = _check_seeds(seeds, seed)
    first = next(iter(systems.values()))
    inputs, y, _ = check_inputs_labels(first, inputs, labels)
    val_inputs, yv, _ = check_inputs_labels(first, val_inputs, val_labels, name="val_inputs")
    evaluate = evaluate or evaluate_attack
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
                        evaluate=evaluate,
                        **search,
                    )
                    t = res.temperature
                    searches.append(res.to_dict())
                temps.append(t)
                for aname, atk in attacks.items():
                    key = (aname, float(t), mode == "platt")
                    if not getattr(atk, "stochastic", True) and key in done:
                        runs[aname].append(done[key])
                        continue
                    ev = evaluate(
                        model,
                        inputs,
                        y,
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
        return (check_seed("seed", seed),)
    out = tuple(seeds) if not isinstance(seeds, str) else ()
    if not out:
        raise ValueError(f"seeds must be a non-empty sequence of integers, got {seeds!r}")
    return tuple(check_int(f"seeds[{i}]", s, ge=0) for i, s in enumerate(out))


def _row(sname, mode, temps, searches, runs, seed_list, fit, opt_name, keep_samples) -> dict:
    """One Table 2/3 row from the per-seed evaluations of every attack."""
    attacks = list(runs)
    per_seed = {a: [ev.adversarial_accuracy for ev in runs[a]] for a in attacks}
    cis = {a: run_interval([ev.correct_adversarial for ev in runs[a]]) for a in attacks}
    sis = {a: _seed_interval(per_seed[a], bounds=(0.0, 1.0)) for a in attacks}
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
        "adversarial_correct": {a: [list(ev.correct_adversarial) for ev in runs[a]] for a in attacks},
        "clean_correct": list(first.correct_clean),
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
        row["confidences"] = list(first.confidences)
        row["samples"] = {
            a: [
                {
                    "seed": sd,
                    "temperature": t,
                    "adv_prediction": list(ev.adversarial_predictions),
                    "adv_confidence": list(ev.adversarial_confidences),
                    "perturbed_text": list(ev.adversarial) if isinstance(ev.adversarial, list) else None,
                }
                for sd, t, ev in zip(seed_list, temps, runs[a], strict=True)
            ]
            for a in attacks
        }
    return row
