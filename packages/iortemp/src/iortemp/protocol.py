"""Evaluation protocol (Sec. 5.1): attack a temperature-modified model, score on the unmodified one.

An adversary's temperature only helps the attack *search*; the adversarial examples it finds are always
re-scored on the original served model (Table 3). Transfer attacks (Table 4) attack a source model and
score on a target model. Confidence statistics (Table 1) use the float64 reporting logits.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .metrics import ConfidenceStats, confidence_stats
from .temperature import TemperatureScaled, logits64

__all__ = ["AdversarialEvaluation", "call_attack", "evaluate_attack", "predict", "transfer_attack"]


def call_attack(attack, victim, inputs, labels, *, seed: int = 0, progress: bool = False):
    """Call a user attack ``attack(victim, inputs, labels[, seed=...][, progress=...])``.

    ``seed`` and ``progress`` are passed only when the callable accepts them (by name or ``**kwargs``), so
    a plain function ``def atk(victim, x, y)`` works as well as this package's attack classes.
    """
    if not callable(attack):
        raise TypeError("attack must be callable as attack(victim, inputs, labels[, seed=...][, progress=...])")
    try:
        params = inspect.signature(attack).parameters
    except (TypeError, ValueError):  # builtins / C callables without a signature: pass everything
        return attack(victim, inputs, labels, seed=seed, progress=progress)
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {}
    for name, value in (("seed", seed), ("progress", progress)):
        p = params.get(name)
        if var_kw or (p is not None and p.kind is not inspect.Parameter.POSITIONAL_ONLY):
            kwargs[name] = value
    return attack(victim, inputs, labels, **kwargs)


@dataclass(frozen=True)
class AdversarialEvaluation:
    """Accuracies (fractions) of the target model on clean and adversarial inputs, and its confidences."""

    temperature: float  # adversary's temperature applied to the attacked model (1.0 = plain attack)
    clean_accuracy: float
    adversarial_accuracy: float
    n: int
    clean_confidence: ConfidenceStats
    adversarial_confidence: ConfidenceStats
    correct_clean: tuple[bool, ...]
    correct_adversarial: tuple[bool, ...]
    mean_queries: float
    adversarial: list | torch.Tensor | None = None
    predictions: tuple[int, ...] = ()  # served model's clean predictions (argmax of the reporting logits)
    adversarial_predictions: tuple[int, ...] = ()  # its predictions on the adversarial inputs

    def to_dict(self) -> dict:
        return {
            "temperature": self.temperature,
            "clean_accuracy": self.clean_accuracy,
            "adversarial_accuracy": self.adversarial_accuracy,
            "n": self.n,
            "clean_confidence": self.clean_confidence.to_dict(),
            "adversarial_confidence": self.adversarial_confidence.to_dict(),
            "correct_clean": list(self.correct_clean),
            "correct_adversarial": list(self.correct_adversarial),
            "mean_queries": self.mean_queries,
            "predictions": list(self.predictions),
            "adversarial_predictions": list(self.adversarial_predictions),
        }


def predict(model, inputs) -> np.ndarray:
    """Predicted classes (argmax of the float64 reporting logits; same argmax as served)."""
    return logits64(model, inputs).argmax(axis=1)


def _labels(labels) -> np.ndarray:
    lab = np.asarray(labels.cpu() if isinstance(labels, torch.Tensor) else labels)
    if lab.ndim != 1 or (len(lab) and lab.dtype.kind not in "iu"):
        raise ValueError(f"labels must be a 1-d integer array, got shape {lab.shape} dtype {lab.dtype}")
    return lab.astype(np.int64)


def evaluate_attack(
    model,
    inputs,
    labels,
    attack,
    *,
    temperature: float = 1.0,
    source_model=None,
    seed: int = 0,
    keep_adversarial: bool = False,
    progress: bool = False,
) -> AdversarialEvaluation:
    """Attack ``TemperatureScaled(source_model or model, temperature)`` and score the found adversarial
    inputs on the unmodified ``model`` (adversarial accuracy, Eq. 10 at one temperature).

    ``temperature=1.0`` is the plain out-of-the-box attack; ``source_model`` gives a transfer attack.
    """
    y = _labels(labels)
    n = len(inputs) if not isinstance(inputs, torch.Tensor) else inputs.shape[0]
    if n != len(y) or n == 0:
        raise ValueError(f"inputs and labels must be non-empty and of equal length, got {n} and {len(y)}")
    if not callable(attack):
        raise TypeError("attack must be callable as attack(victim, inputs, labels[, seed=...][, progress=...])")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.floating, np.integer)):
        raise TypeError(f"temperature must be a positive real number, got {type(temperature).__name__}")
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    victim = source_model if source_model is not None else model
    if temperature != 1.0:
        victim = TemperatureScaled(victim, temperature)
    out = call_attack(attack, victim, inputs, y, seed=seed, progress=progress)
    clean_logits = logits64(model, inputs)
    adv_logits = logits64(model, out.adversarial)
    correct_clean = clean_logits.argmax(1) == y
    correct_adv = (adv_logits.argmax(1) == y) & correct_clean
    return AdversarialEvaluation(
        temperature=float(temperature),
        clean_accuracy=float(correct_clean.mean()),
        adversarial_accuracy=float(correct_adv.mean()),
        n=int(n),
        clean_confidence=confidence_stats(clean_logits),
        adversarial_confidence=confidence_stats(adv_logits),
        correct_clean=tuple(bool(b) for b in correct_clean),
        correct_adversarial=tuple(bool(b) for b in correct_adv),
        mean_queries=float(np.mean(out.queries)),
        adversarial=out.adversarial if keep_adversarial else None,
        predictions=tuple(int(v) for v in clean_logits.argmax(1)),
        adversarial_predictions=tuple(int(v) for v in adv_logits.argmax(1)),
    )


def transfer_attack(
    source, target, inputs, labels, attack, *, seed: int = 0, progress: bool = False
) -> AdversarialEvaluation:
    """Adversarial examples found on ``source`` evaluated on ``target`` (Table 4)."""
    if isinstance(source, nn.Module) != isinstance(target, nn.Module):
        raise TypeError("source and target must both be vision modules or both text classifiers")
    return evaluate_attack(target, inputs, labels, attack, source_model=source, seed=seed, progress=progress)
