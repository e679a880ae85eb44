"""Adversarial-training defenses of §4.3 for Hugging Face sequence classifiers, measured by Eq. 2:

    Δ_τ(p) = σ(p) / s(0) − s*(p)

where s(0) and s*(p) are the clean score and relative attacked score of the model fine-tuned on
clean data, and σ(p) the attacked score of the model fine-tuned with defense τ:

- **1-1 (α, β)**: fine-tune on training data attacked by α at a mix of low/mid/high levels (each
  level equally likely), test under β;
- **leave-one-out (LOO)**: fine-tune on an equal mix of all attackers but β (and all levels), test
  under β.

``transformers``/``torch`` are imported lazily (extra ``zeroe-perturb[hf]``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robustsuite_common.extras import optional_import
from robustsuite_common.text import position_limit

from ._api import ATTACKS, get_attacker
from .benchmark import (
    Metric,
    TextClassifier,
    _check_attacks,
    _check_data,
    attack_texts,
    evaluate,
    predict_logits,
    resolve_metric,
)
from .hf import HFTextClassifier
from .protocol import LEVELS, check_p, item_seed


def _torch():
    return optional_import("torch", extra="zeroe-perturb[hf]", feature="adversarial training (torch, transformers)")


@dataclass(frozen=True)
class FineTuneConfig:
    """Fine-tuning recipe shared by the clean and the defended models (AdamW, cross-entropy)."""

    epochs: int = 3
    lr: float = 5e-4
    batch_size: int = 32
    max_length: int = 64
    weight_decay: float = 0.01

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.max_length < 1:
            raise ValueError("epochs, batch_size and max_length must be >= 1")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def fine_tune(model, tokenizer, texts: Sequence[str], labels: Any, *, config: FineTuneConfig = FineTuneConfig(),
              seed: int = 0, progress: bool = False):
    """Fine-tune a *copy* of ``model`` on (texts, labels); the input model is not modified."""
    torch = _torch()
    y = _check_data(texts, labels)
    model = copy.deepcopy(model)
    device = next(model.parameters()).device
    model.train()
    gen = torch.Generator().manual_seed(int(seed))
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    yt = torch.as_tensor(y, dtype=torch.long)
    steps = range(config.epochs)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc="fine-tune")
    texts = list(texts)
    # Dropout draws from torch's global generator: fork it (the caller's state is restored on exit)
    # and seed it, so that the same seed gives the same fine-tuned model.
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(int(seed))
        for _ in steps:
            order = torch.randperm(len(texts), generator=gen).tolist()
            for s in range(0, len(order), config.batch_size):
                idx = order[s : s + config.batch_size]
                enc = tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                max_length=min(config.max_length, position_limit(model) or config.max_length),
                                return_tensors="pt").to(device)
                out = model(**enc)
                loss = torch.nn.functional.cross_entropy(out.logits, yt[idx].to(device))
                opt.zero_grad()
                loss.backward()
                opt.step()
    model.eval()
    return model


def adversarial_training_set(texts: Sequence[str], labels: Any, attacks: Sequence[str], *,
                             levels: Sequence[float] = tuple(LEVELS.values()), seed: int = 0,
                             clean_copies: bool = False) -> tuple[list[str], np.ndarray]:
    """Each training text attacked once, by an attacker and a level drawn so that every attacker
    and every level appear equally often (§4.3: "equal mix of data from each attacker and level").

    ``clean_copies=True`` returns the clean texts followed by their attacked copies (labels repeated): the
    defended model keeps seeing unperturbed inputs, so a pre-trained-style model does not drift away from
    clean text (the paper's Tables 7–10 report the defended models' clean scores beside the attacked ones).
    """
    if not isinstance(clean_copies, bool):
        raise TypeError(f"clean_copies must be a bool, got {clean_copies!r}")
    y = _check_data(texts, labels)
    attacks = _check_attacks(attacks)
    levels = tuple(check_p(p, "levels") for p in levels)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7]))
    cells = [(a, p) for a in attacks for p in levels]
    assign = rng.permutation(np.arange(len(texts)) % len(cells))
    out = []
    for i, (t, c) in enumerate(zip(texts, assign, strict=True)):
        a, p = cells[int(c)]
        out.append(get_attacker(a)(t, p, seed=item_seed(i, seed=int(seed) + 1)).perturbed)
    if clean_copies:
        return list(texts) + out, np.concatenate([y, y])
    return out, y


@dataclass(frozen=True)
class DefenseResult:
    """Δ_τ(p) (Eq. 2) of a defense, per (training attacker(s), test attacker, level)."""

    strategy: str  # "1-1" or "leave-one-out"
    metric: str
    clean_score: float  # s(0) of the clean-trained model
    levels: tuple[float, ...]
    baseline: dict[tuple[str, float], float]  # s*(p) of the clean-trained model per (test attack, p)
    defended: dict[tuple[str, str, float], float]  # σ(p)/s(0) per (train key, test attack, p); p=0: clean
    config: FineTuneConfig

    def delta(self, train: str, test: str, p: float) -> float:
        """Δ_τ(p) = σ(p)/s(0) − s*(p) (Eq. 2); at p = 0 the change of the clean score."""
        base = 1.0 if p == 0 else self.baseline[(test, p)]
        return self.defended[(train, test, p)] - base

    @property
    def deltas(self) -> dict[tuple[str, str, float], float]:
        return {k: self.delta(*k) for k in self.defended}

    def mean_improvement(self, *, diagonal_only: bool = False) -> float:
        """Average Δ over attacked cells (p > 0), the quantity ranked in Table 3."""
        vals = [v for (tr, te, p), v in self.deltas.items() if p > 0 and (not diagonal_only or tr == te)]
        return float(np.mean(vals)) if vals else float("nan")

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """Eq. 2 per cell: training attacker(s), test attacker, p, s*(p) of the clean-trained model, σ(p)/s(0)
        of the defended one, and Δ_τ(p), rounded to 4 decimals (p = 0: clean scores, s* = 1)."""
        rows = [[tr, te, float(p), round(1.0 if p == 0 else float(self.baseline[(te, p)]), 4), round(float(v), 4),
                 round(float(self.delta(tr, te, p)), 4)] for (tr, te, p), v in self.defended.items()]
        return ["trained on", "tested on", "p", "s*(p)", "σ(p)/s(0)", "Δ"], rows

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DefenseResult:
        """Inverse of :meth:`to_dict` (e.g. to resume from a saved result)."""
        cells = d["cells"]
        baseline = {(c["test"], float(c["p"])): float(c["baseline_rel"]) for c in cells if float(c["p"]) != 0}
        defended = {(c["train"], c["test"], float(c["p"])): float(c["sigma_rel"]) for c in cells}
        return cls(d["strategy"], d["metric"], float(d["clean_score"]), tuple(float(p) for p in d["levels"]),
                   baseline, defended, FineTuneConfig(**d["config"]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "metric": self.metric,
            "clean_score": float(self.clean_score),
            "levels": [float(p) for p in self.levels],
            "config": self.config.to_dict(),
            "cells": [
                {"train": tr, "test": te, "p": float(p), "sigma_rel": float(v),
                 "baseline_rel": (1.0 if p == 0 else float(self.baseline[(te, p)])),
                 "delta": float(self.delta(tr, te, p))}
                for (tr, te, p), v in self.defended.items()
            ],
            "mean_delta": self.mean_improvement(),
        }


def _score_defended(clf: TextClassifier, key: str, tests: Sequence[str], texts, y, levels, fn, s0, seed,
                    batch_size) -> dict[tuple[str, str, float], float]:
    out: dict[tuple[str, str, float], float] = {}
    clean = fn(y, predict_logits(clf, texts, batch_size=batch_size))
    for b in tests:
        out[(key, b, 0.0)] = clean / s0
        for p in levels:
            adv, _, _ = attack_texts(texts, b, p, seed=seed)
            out[(key, b, p)] = fn(y, predict_logits(clf, adv, batch_size=batch_size)) / s0
    return out


def _defend(kind: str, plans: Sequence[tuple[Sequence[str], str, Sequence[str]]], tests: Sequence[str], model,
            tokenizer, train_texts, train_labels, test_texts, test_labels, *, levels, metric, config, seed,
            clean_model, batch_size, progress, clean_copies) -> DefenseResult:
    """The §4.3 protocol both defenses share: the clean reference (fine-tuned from ``model`` with the same recipe
    unless ``clean_model`` is given) scored under ``tests``, then one defended model per ``(train attacks, key, test
    attacks)`` of ``plans``: fine-tuned on ``train_texts`` attacked by an equal mix of its attackers and levels,
    scored under its test attacks at every level, its cells keyed by ``key``."""
    ytr = _check_data(train_texts, train_labels)
    yte = _check_data(test_texts, test_labels)
    levels = tuple(check_p(p, "levels") for p in levels)
    name, fn = resolve_metric(metric)
    if clean_model is None:
        clean_model = fine_tune(model, tokenizer, train_texts, ytr, config=config, seed=seed, progress=progress)
    clf = HFTextClassifier(clean_model, tokenizer, max_length=config.max_length, batch_size=batch_size)
    base = evaluate(clf, test_texts, yte, attacks=tests, levels=levels, metric=fn, seed=seed, batch_size=batch_size)
    defended: dict[tuple[str, str, float], float] = {}
    for train_attacks, key, scored in plans:
        adv, y_adv = adversarial_training_set(train_texts, ytr, train_attacks, levels=levels, seed=seed,
                                              clean_copies=clean_copies)
        m = fine_tune(model, tokenizer, adv, y_adv, config=config, seed=seed, progress=progress)
        dclf = HFTextClassifier(m, tokenizer, max_length=config.max_length, batch_size=batch_size)
        defended.update(_score_defended(dclf, key, scored, test_texts, yte, levels, fn, base.clean_score, seed,
                                        batch_size))
    baseline = {(s.attack, s.p): s.relative for s in base.scores}
    return DefenseResult(kind, name, base.clean_score, levels, baseline, defended, config)


def one_one_defense(model, tokenizer, train_texts: Sequence[str], train_labels: Any, test_texts: Sequence[str],
                    test_labels: Any, *, train_attacks: Sequence[str] = ATTACKS,
                    test_attacks: Sequence[str] | None = None, levels: Sequence[float] = tuple(LEVELS.values()),
                    metric: str | Metric = "accuracy", config: FineTuneConfig = FineTuneConfig(), seed: int = 0,
                    clean_model=None, batch_size: int = 64, progress: bool = False,
                    clean_copies: bool = True) -> DefenseResult:
    """1-1 (α, β) adversarial training (§4.3): one model per training attacker α, each tested under
    every β in ``test_attacks`` (default: the same list, so the diagonal is 1-1 (α, α)).

    ``model`` is the *base* model (e.g. the pre-trained checkpoint); the clean reference is
    fine-tuned from it with the same recipe unless ``clean_model`` is given. ``clean_copies`` (default on):
    train on the clean texts plus one attacked copy each (see :func:`adversarial_training_set`).
    """
    train_attacks = _check_attacks(train_attacks)
    test_attacks = train_attacks if test_attacks is None else _check_attacks(test_attacks)
    return _defend("1-1", [([a], a, test_attacks) for a in train_attacks], test_attacks, model, tokenizer, train_texts,
                   train_labels, test_texts, test_labels, levels=levels, metric=metric, config=config, seed=seed,
                   clean_model=clean_model, batch_size=batch_size, progress=progress, clean_copies=clean_copies)


def leave_one_out_defense(model, tokenizer, train_texts: Sequence[str], train_labels: Any,
                          test_texts: Sequence[str], test_labels: Any, *, attacks: Sequence[str] = ATTACKS,
                          held_out: Sequence[str] | None = None, levels: Sequence[float] = tuple(LEVELS.values()),
                          metric: str | Metric = "accuracy", config: FineTuneConfig = FineTuneConfig(),
                          seed: int = 0, clean_model=None, batch_size: int = 64,
                          progress: bool = False, clean_copies: bool = True) -> DefenseResult:
    """Leave-one-out adversarial training (§4.3): for each held-out attacker β (default: all of
    ``attacks``), fine-tune on an equal mix of the other attackers and levels, test under β."""
    attacks = _check_attacks(attacks)
    held_out = attacks if held_out is None else _check_attacks(held_out)
    if len(attacks) < 2:
        raise ValueError("attacks must list at least two attackers for leave-one-out")
    plans = [([a for a in attacks if a != b], f"loo-{b}", [b]) for b in held_out]
    return _defend("leave-one-out", plans, held_out, model, tokenizer, train_texts, train_labels, test_texts,
                   test_labels, levels=levels, metric=metric, config=config, seed=seed, clean_model=clean_model,
                   batch_size=batch_size, progress=progress, clean_copies=clean_copies)
