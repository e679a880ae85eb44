"""Checkpoints: every attack run of the experiment is stored by exactly what it depends on, so an interrupted
run resumes where it stopped (the Brent search's probes included)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from robustsuite_common.config import config_hash
from robustsuite_common.experiment import JSON, Store, cached

from ..protocol import AdversarialEvaluation, evaluate_attack

__all__ = ["Evaluations", "fingerprint", "key"]


def key(kind: str, *parts: Any) -> str:
    """A store key: ``iortemp/<kind>/<hash of parts>`` (parts: configs and JSON-able values)."""
    return f"iortemp/{kind}/{config_hash(*parts, length=16)}"


def _digest(x: Any) -> str:
    h = hashlib.sha256()
    if hasattr(x, "detach"):
        arr = x.detach().cpu().contiguous().numpy()
        h.update(str(arr.dtype).encode() + str(arr.shape).encode() + arr.tobytes())
    elif isinstance(x, np.ndarray):
        h.update(str(x.dtype).encode() + str(x.shape).encode() + np.ascontiguousarray(x).tobytes())
    else:
        for t in x:
            h.update(str(t).encode("utf-8") + b"\x00")
    return h.hexdigest()[:16]


def fingerprint(logits: np.ndarray, *data: Any) -> str:
    """What identifies a model on the experiment's data: its logits there (rounded to 4 decimals, so that a
    re-run on the same machine finds its checkpoints) and the data itself."""
    z = np.round(np.asarray(logits, dtype=np.float64), 4)
    return _digest([_digest(z), *(_digest(d) for d in data)])


class Evaluations:
    """Runs :func:`~iortemp.evaluate_attack` through the store: one checkpoint per (system, inputs, attack,
    temperature, seed, Platt source). ``attack_ids`` names each attack object by its identity (name and
    settings); ``scope`` holds the model fingerprint and anything else every run depends on."""

    def __init__(self, store: Store | None, scope: Any, attack_ids: Mapping[int, str]):
        self.store, self.scope, self.attack_ids = store, scope, dict(attack_ids)
        self._digests: dict[int, tuple[Any, str]] = {}
        self.computed = 0  # attack runs computed (not read from the store) by this object

    def _data(self, x: Any) -> str:
        got = self._digests.get(id(x))
        if got is None or got[0] is not x:
            got = (x, _digest(x))
            self._digests[id(x)] = got
        return got[1]

    def evaluator(self, system: str) -> Callable[..., AdversarialEvaluation]:
        """An ``evaluate_attack`` replacement for the served system named ``system``."""

        def evaluate(model, inputs, labels, attack, *, temperature: float = 1.0, source_model=None, seed: int = 0,
                     keep_adversarial: bool = False, progress: bool = False) -> AdversarialEvaluation:
            if id(attack) not in self.attack_ids:
                raise KeyError(f"attack {attack!r} has no identity in this experiment")
            text = not hasattr(inputs, "detach")
            k = key("eval", self.scope, system, self._data(inputs), self._data(np.asarray(labels)),
                    self.attack_ids[id(attack)], repr(float(temperature)), int(seed),
                    source_model is not None)

            def compute() -> dict:
                self.computed += 1
                return evaluate_attack(model, inputs, labels, attack, temperature=temperature,
                                       source_model=source_model, seed=seed, keep_adversarial=text,
                                       progress=progress).to_dict()

            ev = AdversarialEvaluation.from_dict(cached(self.store, k, compute, JSON))
            return ev if keep_adversarial else replace(ev, adversarial=None)

        return evaluate
