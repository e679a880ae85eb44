"""Evaluation protocol (Sec. 5.1): attack a temperature-modified model, score on the unmodified one.

An adversary's temperature only helps the attack *search*; the adversarial examples it finds are always
re-scored on the original served model (Table 3). Transfer attacks (Table 4) attack a source model and
score on a target model. Confidence statistics (Table 1) use the float64 reporting logits.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_images, check_labels, check_seed, check_texts
from robustsuite_common.contract import renamed
from robustsuite_common.models import evaluating

from ._numerics import scaled_log_softmax64
from ._validation import check_temperature, is_texts
from .metrics import ConfidenceStats, confidence_stats
from .temperature import TemperatureScaled, logits64

__all__ = ["AdversarialEvaluation", "call_attack", "evaluate_attack", "predict", "transfer_attack"]


@renamed(victim="model")
def call_attack(model: Any, inputs: Any, labels: Any, attack: Callable[..., Any], *, seed: int = 0,
                progress: bool = False) -> Any:
    """Run a user attack on ``model``: ``attack(model, inputs, labels[, seed=...][, progress=...])``. The data come
    first and the attack last, as :func:`evaluate_attack` and :func:`optimize_temperature` take them (every attack
    of the §5.1 protocol is called through here).

    ``seed`` and ``progress`` are passed only when the callable accepts them (by name or ``**kwargs``), so
    a plain function ``def atk(model, x, y)`` works as well as this package's attack classes. The former order
    ``call_attack(attack, model, inputs, labels)`` (and ``victim=`` for ``model``) still works for one release, with
    a ``DeprecationWarning``: it is told apart by its last argument, labels, which are never callable.
    """
    if callable(model) and not callable(attack):  # the former order (attack, model, inputs, labels)
        warnings.warn("call_attack(attack, model, inputs, labels) is deprecated; use call_attack(model, inputs, "
                      "labels, attack)", DeprecationWarning, stacklevel=3)
        model, inputs, labels, attack = inputs, labels, attack, model
    if not callable(attack):
        raise TypeError("attack must be callable as attack(model, inputs, labels[, seed=...][, progress=...])")
    try:
        params = inspect.signature(attack).parameters
    except (TypeError, ValueError):  # builtins / C callables without a signature: pass everything
        return attack(model, inputs, labels, seed=seed, progress=progress)
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs = {}
    for name, value in (("seed", seed), ("progress", progress)):
        p = params.get(name)
        if var_kw or (p is not None and p.kind is not inspect.Parameter.POSITIONAL_ONLY):
            kwargs[name] = value
    return attack(model, inputs, labels, **kwargs)


@dataclass(frozen=True)
class AdversarialEvaluation:
    """Accuracies (fractions) of the target model on clean and adversarial inputs, and its confidences.

    Per input: ``correct_clean`` / ``correct_adversarial`` (the served model is right on the clean input / on
    the clean and the adversarial input), ``predictions`` / ``adversarial_predictions`` (argmax of the float64
    reporting logits) and ``confidences`` / ``adversarial_confidences`` (its max-softmax probability there,
    float64). ``adversarial`` holds the adversarial inputs when asked for (``keep_adversarial=True``).
    """

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
    confidences: tuple[float, ...] = ()  # its max-softmax probability on each clean input (float64)
    adversarial_confidences: tuple[float, ...] = ()  # ... and on each adversarial input

    def to_dict(self) -> dict:
        """JSON-safe; adversarial *texts* are kept (``adversarial``), adversarial images are not."""
        out = {
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
            "confidences": list(self.confidences),
            "adversarial_confidences": list(self.adversarial_confidences),
        }
        if isinstance(self.adversarial, list):
            out["adversarial"] = list(self.adversarial)
        return out

    @classmethod
    def from_dict(cls, d: Mapping) -> AdversarialEvaluation:
        """The evaluation :meth:`to_dict` wrote (a checkpoint)."""
        return cls(
            temperature=float(d["temperature"]), clean_accuracy=float(d["clean_accuracy"]),
            adversarial_accuracy=float(d["adversarial_accuracy"]), n=int(d["n"]),
            clean_confidence=ConfidenceStats(**d["clean_confidence"]),
            adversarial_confidence=ConfidenceStats(**d["adversarial_confidence"]),
            correct_clean=tuple(bool(b) for b in d["correct_clean"]),
            correct_adversarial=tuple(bool(b) for b in d["correct_adversarial"]),
            mean_queries=float(d["mean_queries"]),
            adversarial=list(d["adversarial"]) if d.get("adversarial") is not None else None,
            predictions=tuple(int(v) for v in d.get("predictions", ())),
            adversarial_predictions=tuple(int(v) for v in d.get("adversarial_predictions", ())),
            confidences=tuple(float(v) for v in d.get("confidences", ())),
            adversarial_confidences=tuple(float(v) for v in d.get("adversarial_confidences", ())),
        )


def predict(model, inputs) -> np.ndarray:
    """Predicted classes (argmax of the float64 reporting logits; same argmax as served)."""
    z = logits64(model, inputs)
    return z.argmax(axis=1) if len(z) else np.zeros(0, dtype=np.int64)


def check_inputs_labels(model, inputs, labels, *, name: str = "inputs") -> tuple[Any, np.ndarray, int]:
    """``(inputs, labels as int64, n)`` for ``model``: a vision ``nn.Module`` takes an ``(N, C, H, W)`` float
    tensor in [0, 1] (NaN, inf, out-of-range values, a missing batch dimension refused); a text classifier a
    list of strings (a bare string refused). Labels: N integer class indices."""
    if isinstance(model, nn.Module):
        check_images(name, inputs)
        n = int(inputs.shape[0])
    else:
        if not callable(model):
            raise TypeError(f"model must be a torch.nn.Module (vision) or a callable text classifier "
                            f"list[str] -> logits (N, K), got {type(model).__name__}")
        if not is_texts(inputs):
            raise TypeError(f"{name} must be a list of strings for a text classifier, got a tensor")
        inputs = check_texts(name, inputs)
        n = len(inputs)
    return inputs, check_labels("labels", labels, length=n), n


def _max_softmax(z: np.ndarray) -> np.ndarray:
    return np.exp(scaled_log_softmax64(z).max(axis=1))


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
    """Attack ``TemperatureScaled(source_model or model, temperature=temperature)`` and score the found adversarial
    inputs on the unmodified ``model`` (adversarial accuracy, Eq. 10 at one temperature).

    ``temperature=1.0`` is the plain out-of-the-box attack; ``source_model`` gives a transfer attack.
    Inputs and labels are checked before any work (:func:`check_inputs_labels`); a vision model runs in eval
    mode and comes back as it came (mode, buffers such as BatchNorm statistics, ``requires_grad``).
    """
    inputs, y, n = check_inputs_labels(model, inputs, labels)
    if not callable(attack):
        raise TypeError("attack must be callable as attack(victim, inputs, labels[, seed=...][, progress=...])")
    temperature = check_temperature(temperature)
    seed = check_seed("seed", seed)
    if source_model is not None and isinstance(source_model, nn.Module) != isinstance(model, nn.Module):
        raise TypeError("source_model and model must both be vision modules or both text classifiers")
    with contextlib.ExitStack() as stack:
        for m in (model, source_model):
            if isinstance(m, nn.Module):
                stack.enter_context(evaluating(m))
        k = logits64(model, inputs[:1]).shape[1]  # one input: the number of classes, before the attack runs
        check_labels("labels", y, n_classes=k)
        victim = source_model if source_model is not None else model
        if temperature != 1.0:
            victim = TemperatureScaled(victim, temperature=temperature)
        out = call_attack(victim, inputs, y, attack, seed=seed, progress=progress)
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
        confidences=tuple(float(v) for v in _max_softmax(clean_logits)),
        adversarial_confidences=tuple(float(v) for v in _max_softmax(adv_logits)),
    )


def transfer_attack(
    source, target, inputs, labels, attack, *, seed: int = 0, progress: bool = False
) -> AdversarialEvaluation:
    """Adversarial examples found on ``source`` evaluated on ``target`` (Table 4)."""
    if isinstance(source, nn.Module) != isinstance(target, nn.Module):
        raise TypeError("source and target must both be vision modules or both text classifiers")
    return evaluate_attack(target, inputs, labels, attack, source_model=source, seed=seed, progress=progress)
