"""The benchmark's units of work: a task's items clean and under one (attacker, level, attack seed) cell.

Each finished piece — the clean outputs of a task, and each cell's perturbed inputs, edit distances and model
outputs — is checkpointed in the caller's store under a key that names the task, the cell and a hash of exactly
what it depends on (the items, the model's name, the attack seed), so an interrupted run resumes where it stopped.
The perturbations are the ones :func:`zeroe_perturb.evaluate`, :func:`~zeroe_perturb.evaluate_pairs` and
:func:`~zeroe_perturb.evaluate_tagging` draw for the same seed (same cell seeds, same item seeds), so the scores
equal theirs.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robustsuite_common.checks import check_texts
from robustsuite_common.config import config_hash
from robustsuite_common.experiment import Codec, Split, cached

from .._edit import levenshtein
from .._outputs import as_logits, call_model, softmax_confidence
from ..benchmark import attack_texts, check_targets, level_seed, predict_logits
from ..tasks import (
    TAGGING_ATTACKS,
    _check_pairs,
    _check_sentences,
    _check_tags,
    attack_pairs_report,
    attack_sentences,
)
from ._stats import Counts, auroc_counts, full_sample, weighted_mean, weighted_ratio

# gzip-compressed JSON (perturbed texts compress well); mtime 0 keeps the bytes reproducible
GZJSON = Codec("json.gz", lambda v: gzip.compress(json.dumps(v).encode(), mtime=0),
               lambda b: json.loads(gzip.decompress(b).decode()))


def subset(n_total: int, n: int | None, seed: int) -> np.ndarray:
    """The seeded random subset of ``n`` of ``n_total`` items, in their order (all of them when ``n`` is None or
    not smaller)."""
    if n is None or n >= n_total:
        return np.arange(n_total)
    return np.sort(np.random.default_rng(seed).choice(n_total, size=int(n), replace=False))


@dataclass(frozen=True)
class Task:
    """One benchmark: a task type (``kind``), its items and labels, the model, and how it is scored."""

    key: str  # identifier: classification, pairs_hypothesis, pairs_both, multilabel, tagging
    kind: str  # classification | pairs | multilabel | tagging
    label: str  # as a reader sees it
    metric: str  # accuracy | auroc | token accuracy
    target: str | None  # pairs: hypothesis | both
    attacks: tuple[str, ...]
    items: list  # texts, (premise, hypothesis) pairs or token lists (the selected subset)
    y: Any  # int labels (N,), a 0/1 matrix (N, L), or per-sentence tag lists
    split: Split  # the selected items with the user's ids and label names
    model: Callable[..., Any]
    model_name: str

    @property
    def n(self) -> int:
        return len(self.items)

    @property
    def chance(self) -> float:
        """Score of a constant guess: the majority-class share (accuracy), the most frequent tag (token accuracy),
        the most frequent label row (exact-match accuracy of a label matrix), 0.5 (AUROC)."""
        if self.metric == "auroc":
            return 0.5
        if self.kind == "tagging":
            flat = np.array([t for ts in self.y for t in ts if t >= 0], dtype=np.int64)
            return float(np.bincount(flat).max() / len(flat)) if len(flat) else float("nan")
        y = np.asarray(self.y)
        _, counts = np.unique(y.reshape(len(y), -1), axis=0, return_counts=True)
        return float(counts.max() / counts.sum())

    def fingerprint(self) -> str:
        """Hash of what a cell's outputs depend on besides the cell itself: the items, the labels, the model."""
        y = self.y if self.kind == "tagging" else np.asarray(self.y).tolist()
        return config_hash(self.kind, self.target, self.items, y, self.model_name, length=16)


def build_task(key: str, kind: str, label: str, model: Any, model_name: str, split: Split, n: int | None,
               seed: int, metric: str, attacks: Sequence[str], target: str | None = None) -> Task:
    """The task's seeded subset of ``split``, its inputs and labels checked (before any model call)."""
    what = f"data.{kind}"
    if isinstance(split.x, str | bytes):
        items = {"pairs": "(premise, hypothesis) pairs", "tagging": "token lists"}.get(kind, "strings")
        raise TypeError(f"{what}.x must be a list of {items}, got a single {type(split.x).__name__}")
    idx = subset(len(split), n, seed)
    sel = split.select(idx)
    y_raw = sel.y
    if kind == "pairs":
        items = _check_pairs(sel.x)
    elif kind == "tagging":
        items = _check_sentences(sel.x)
    else:
        items = check_texts(f"{what}.x", sel.x)
    if not items:
        raise ValueError(f"{what} must hold at least one item")
    if kind == "tagging":
        arr = y_raw.detach().cpu().numpy() if hasattr(y_raw, "detach") else y_raw
        padded = isinstance(arr, np.ndarray) and arr.ndim == 2  # (N, max_len) padded with -1
        rows = [list(arr[i])[: len(s)] for i, s in enumerate(items)] if padded else list(arr)
        y = _check_tags(rows)
        if len(y) != len(items) or any(len(t) != len(s) for t, s in zip(y, items, strict=True)):
            raise ValueError(f"{what}.y must hold one tag per token of every sentence")
        attacks = tuple(a for a in attacks if a in TAGGING_ATTACKS)  # segment merges tagged tokens (§3.2)
    else:
        y = check_targets(f"{what}.y", y_raw, len(items), matrix=kind == "multilabel")
        if kind == "multilabel" and y.ndim != 2:
            raise ValueError(f"{what}.y must be a 0/1 label matrix (N, L) for the multi-label task, got shape "
                             f"{y.shape}")
    return Task(key, kind, label, metric, target, tuple(attacks), items, y, sel, model, model_name)


# ----------------------------------------------------------------------------------------------------------------
# model outputs per item


def _chunks(items: list, size: int):
    for s in range(0, len(items), size):
        yield items[s : s + size]


def _outputs(task: Task, inputs: list, batch_size: int) -> dict[str, Any]:
    """The model's per-item outputs on ``inputs``: logits rows (classification, pairs, multi-label), or per-sentence
    predicted tags and mean confidence (tagging)."""
    if task.kind == "tagging":
        pred, conf = [], []
        for chunk in _chunks(inputs, batch_size):
            out = call_model(task.model, chunk)
            if isinstance(out, tuple | dict):
                out = out[0] if isinstance(out, tuple) else out.get("logits")
            if out is None or len(out) != len(chunk):
                raise ValueError(f"models.tagger must return one logits array per sentence; got "
                                 f"{'nothing' if out is None else len(out)} for {len(chunk)}")
            for s, z in zip(chunk, out, strict=True):
                z = as_logits(z, len(s), "models.tagger")
                pred.append(z.argmax(axis=1).tolist())
                conf.append(float(softmax_confidence(z).mean()) if len(s) else float("nan"))
        return {"pred": pred, "conf": conf}
    if task.kind == "pairs":
        rows = [as_logits(call_model(task.model, chunk), len(chunk), "models.pairs")
                for chunk in _chunks(inputs, batch_size)]
        z = np.concatenate(rows)
    else:
        z = predict_logits(task.model, inputs, batch_size=batch_size, multilabel=task.kind == "multilabel")
    return {"logits": z.tolist()}


def _perturb(task: Task, attack: str, p: float, seed: int) -> tuple[list, list[float], list[float]]:
    if task.kind == "pairs":
        adv, dist, frac = attack_pairs_report(task.items, attack, p, seed=level_seed(seed, attack, p),
                                              target=task.target or "hypothesis")
        return [list(a) for a in adv], dist.tolist(), frac.tolist()
    if task.kind == "tagging":
        adv = attack_sentences(task.items, attack, p, seed=seed)
        frac = [sum(x != y for x, y in zip(s, t, strict=True)) / max(len(s), 1)
                for s, t in zip(task.items, adv, strict=True)]
        dist = [float(sum(levenshtein(x, y) for x, y in zip(s, t, strict=True)))
                for s, t in zip(task.items, adv, strict=True)]
        return adv, dist, frac
    adv, dist, frac = attack_texts(task.items, attack, p, seed=seed)
    return adv, dist.tolist(), frac.tolist()


def clean_outputs(task: Task, store: Any, batch_size: int) -> dict[str, Any]:
    key = f"zeroe/{task.key}/clean/{task.fingerprint()}"
    return cached(store, key, lambda: _outputs(task, list(task.items), batch_size), GZJSON)


def cell_outputs(task: Task, attack: str, p: float, seed: int, store: Any, batch_size: int) -> dict[str, Any]:
    """The perturbed inputs (``inputs``), per-item character edit distance (``edit``) and share of words changed
    (``frac``), and the model's outputs on them, for one cell (checkpointed)."""
    key = f"zeroe/{task.key}/{attack}/p={p:g}/seed={seed}/{task.fingerprint()}"

    def compute() -> dict[str, Any]:
        adv, dist, frac = _perturb(task, attack, p, seed)
        return {"inputs": adv, "edit": dist, "frac": frac, **_outputs(task, adv, batch_size)}

    return cached(store, key, compute, GZJSON)


# ----------------------------------------------------------------------------------------------------------------
# scoring from per-item outputs (under item multiplicities, for the intervals)


@dataclass(frozen=True)
class Scorer:
    """A task's score of one condition under item multiplicities (:class:`~._stats.Counts` -> ``(R,)``), each set
    of multiplicities scored once."""

    fn: Callable[[np.ndarray], np.ndarray]
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def __call__(self, counts: Counts) -> np.ndarray:
        out = self.memo.get(counts.key)
        if out is None:
            if len(self.memo) > 8:
                self.memo.clear()
            out = self.memo[counts.key] = self.fn(counts.c)
        return out

    def full(self, n: int) -> float:
        return float(self(full_sample(n))[0])


def scorer(task: Task, out: dict[str, Any]) -> Scorer:
    if task.kind == "tagging":
        right = np.array([sum(int(p == t) for p, t in zip(ps, ts, strict=True) if t >= 0)
                          for ps, ts in zip(out["pred"], task.y, strict=True)], dtype=np.float64)
        scored = np.array([sum(1 for t in ts if t >= 0) for ts in task.y], dtype=np.float64)
        return Scorer(lambda c: weighted_ratio(right, scored, c))
    z = np.asarray(out["logits"], dtype=np.float64)
    y = np.asarray(task.y)
    if task.metric == "auroc":
        return Scorer(lambda c: auroc_counts(y, z, c))
    if y.ndim == 2:  # exact match of every label (logit > 0)
        correct = ((z > 0).astype(np.int64) == y).all(axis=1).astype(np.float64)
    else:
        correct = (z.argmax(axis=1) == y).astype(np.float64)
    return Scorer(lambda c: weighted_mean(correct, c))
