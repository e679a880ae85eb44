"""The Table 2/3 grid (and Table 13's Platt row): every served system under every attack, plain and at the
adversary's temperatures (cal, Eq. 9; opt, Eq. 11), over seeds, with the per-system IOR verdict drawn from paired
per-input outcomes (:class:`IllusionTable`, :func:`illusion_table`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robustsuite_common.checks import check_choice, check_float, check_int, check_labels, check_seed
from robustsuite_common.intervals import LEVEL, Interval
from robustsuite_common.intervals import seed_interval as _seed_interval

from .calibration import PlattScaler, fit_temperature
from .ior import Evaluate, paired_verdict, run_interval
from .optimize import optimize_temperature
from .protocol import AdversarialEvaluation, check_inputs_labels, evaluate_attack
from .temperature import logits64

__all__ = ["MODES", "IllusionTable", "illusion_table"]

MODES = ("plain", "cal", "opt", "platt")


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
            raise TypeError(f"attacks[{aname!r}] must be callable as attack(model, inputs, labels, seed=...)")
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
        rows += _system_rows(sname, model, attacks, inputs, y, val_inputs, yv, modes=modes, opt_name=opt_name,
                             calibration=calibration, max_evaluations=max_evaluations, search=search,
                             seed_list=seed_list, keep_samples=keep_samples, progress=progress, evaluate=evaluate)
    return IllusionTable(tuple(attacks), tuple(rows))


def _system_rows(sname: str, model, attacks: Mapping[str, Any], inputs, y, val_inputs, yv, *, modes: Sequence[str],
                 opt_name: str, calibration: str, max_evaluations: int, search: dict[str, Any],
                 seed_list: tuple[int, ...], keep_samples: bool, progress: bool, evaluate: Evaluate) -> list[dict]:
    """The rows of one served system, one per mode: its temperatures fitted on the validation set, every attack
    run per seed (a deterministic attack once per temperature and source)."""
    rows = []
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
    return rows


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
        "adversarial_accuracy_seed_ci_low": {a: None if (s := sis[a]) is None else s.low for a in attacks},
        "adversarial_accuracy_seed_ci_high": {a: None if (s := sis[a]) is None else s.high for a in attacks},
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
