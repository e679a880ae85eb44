"""The paper's other task types (§4.1): sentence-pair inference (SNLI) and token tagging (UD POS).

* **Sentence pairs**: :func:`attack_pairs` perturbs the hypothesis only (``target="hypothesis"``) or both
  sentences (``"both"``) of ``(premise, hypothesis)`` pairs; :func:`evaluate_pairs` scores a pair
  classifier ``list[tuple[str, str]] -> (N, K) logits`` clean and under every attacker and level.
* **Token tagging**: :func:`perturb_tokens` applies an attacker to a token list and returns a list of the
  same length (perturbation aligned to the tokens: each token is a word of the §3.1 protocol, a changed
  token stays one token even if intrude inserts a space); segment is refused, as in the paper ("we do
  not apply this attack to sequence tagging tasks such as POS"). :func:`evaluate_tagging` scores a
  tagger ``list[list[str]] -> list[(n_i, K) logits]`` by token accuracy (tokens tagged -1 are not scored).

Multi-label classification is :func:`~zeroe_perturb.benchmark.evaluate` with a 0/1 label matrix and
``metric="auroc"`` (macro AUROC, the paper's toxic-comment metric).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from robustsuite_common.checks import check_texts
from robustsuite_common.contract import renamed

from ._api import ATTACKS
from ._outputs import as_logits, call_model, check_outputs
from .attackers import Attacker, Segment, Visual, sample
from .benchmark import (
    AttackScore,
    BenchmarkResult,
    _check_classifier,
    _check_levels,
    check_targets,
    level_seed,
    resolve_attacks,
    resolve_metric,
)
from .protocol import LEVELS, SeedLike, check_p, item_seed, make_rng

PairClassifier = Callable[[list[tuple[str, str]]], np.ndarray]
Tagger = Callable[[list[list[str]]], list[np.ndarray]]
PAIR_TARGETS = ("hypothesis", "both")
# §3.2: "we do not apply this attack [segment] to sequence tagging tasks such as POS" (it merges tagged tokens)
TAGGING_ATTACKS: tuple[str, ...] = tuple(a for a in ATTACKS if a != "segment")


def _check_pairs(pairs: Any, *, allow_empty: bool = False) -> list[tuple[str, str]]:
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise TypeError(f"pairs must be a sequence of (premise, hypothesis) string pairs, got {type(pairs).__name__}")
    out = []
    for i, pr in enumerate(pairs):
        if not (isinstance(pr, tuple | list) and len(pr) == 2 and all(isinstance(x, str) for x in pr)):
            raise TypeError(f"pairs must contain (premise, hypothesis) string pairs; item {i} is {pr!r}")
        out.append((pr[0], pr[1]))
    if not out and not allow_empty:
        raise ValueError("pairs must not be empty")
    return out


def attack_pairs(pairs: Sequence[tuple[str, str]], attack: str | Attacker, p: float, *, seed: int,
                 target: str = "hypothesis") -> tuple[list[tuple[str, str]], np.ndarray]:
    """Perturb sentence pairs: the hypothesis (item seed ``item_seed(i, seed=seed)``) and, with
    ``target="both"``, the premise too (its own stream ``item_seed(i, seed=seed + 1)``).  Returns the pairs
    and the character edit distance per pair."""
    out, dist, _ = attack_pairs_report(pairs, attack, p, seed=seed, target=target)
    return out, dist


def attack_pairs_report(pairs: Sequence[tuple[str, str]], attack: str | Attacker, p: float, *, seed: int,
                        target: str = "hypothesis") -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    """:func:`attack_pairs` plus the share of the attacked sentences' words changed, per pair."""
    if target not in PAIR_TARGETS:
        raise ValueError(f"target must be one of {', '.join(PAIR_TARGETS)}; got {target!r}")
    pairs = _check_pairs(pairs)
    att = resolve_attacks([attack])[0][1]
    p = check_p(p)
    out, dist, frac = [], [], []
    for i, (pre, hyp) in enumerate(pairs):
        h = att(hyp, p, seed=item_seed(i, seed=seed))
        d, changed, words = h.edit_distance, h.n_attacked, h.n_tokens
        if target == "both":
            r = att(pre, p, seed=item_seed(i, seed=seed + 1))
            pre, d = r.perturbed, d + r.edit_distance
            changed, words = changed + r.n_attacked, words + r.n_tokens
        out.append((pre, h.perturbed))
        dist.append(d)
        frac.append(changed / words if words else 0.0)
    return out, np.asarray(dist, dtype=np.float64), np.asarray(frac, dtype=np.float64)


def _finite_logits(z: Any, n: int, what: str, outputs: str = "logits") -> np.ndarray:
    return as_logits(z, n, what, outputs=outputs)


@renamed(classifier="model")
def evaluate_pairs(model: PairClassifier, pairs: Sequence[tuple[str, str]], labels: Any, *,
                   target: str = "hypothesis", attacks: Sequence[str | Attacker] = ATTACKS,
                   levels: Sequence[float] = tuple(LEVELS.values()), metric: str = "accuracy",
                   seed: int = 0, outputs: str = "logits") -> BenchmarkResult:
    """§4 benchmark for sentence-pair inference (SNLI): s(0), s(p) and s*(p) = s(p)/s(0) (Eq. 1). The model (a
    pair classifier) takes ``list[(premise, hypothesis)]`` and returns logits in any form
    :func:`~zeroe_perturb.benchmark.predict_logits` accepts."""
    _check_classifier(model, "model")
    pairs = _check_pairs(pairs)
    if target not in PAIR_TARGETS:
        raise ValueError(f"target must be one of {', '.join(PAIR_TARGETS)}; got {target!r}")
    y = check_targets("labels", labels, len(pairs), matrix=False)
    resolved = resolve_attacks(attacks)
    levels = _check_levels(levels)
    name, fn = resolve_metric(metric)
    check_outputs(outputs)
    s0 = fn(y, _finite_logits(call_model(model, list(pairs)), len(pairs), "classifier", outputs))
    scores = []
    for a, att in resolved:
        for p in levels:
            adv, dist = attack_pairs(pairs, att, p, seed=level_seed(seed, a, p), target=target)
            s = fn(y, _finite_logits(call_model(model, adv), len(pairs), "classifier", outputs))
            scores.append(AttackScore(a, p, float(s), float(s / s0) if s0 else float("nan"), float(dist.mean()),
                                      float("nan")))
    return BenchmarkResult(f"{name} (pairs, {target})", float(s0), len(pairs), int(seed), tuple(scores), levels)


def perturb_tokens(tokens: Sequence[str], attack: str | Attacker, p: float, seed: SeedLike = None) -> list[str]:
    """Attack a token list for a tagging task: the output has one token per input token (§3.1 over the
    tokens; visual: every letter with probability p).  Segment is refused (it would merge tagged tokens)."""
    tokens = check_texts("tokens", tokens, allow_empty=True)
    att = resolve_attacks([attack])[0][1]
    if isinstance(att, Segment):
        raise ValueError("segment cannot be applied to token tagging (the joined tokens would have no tag; §3.2)")
    p = check_p(p)
    rng = random.Random(seed) if type(seed) is str else make_rng(seed)
    phi = p if att.phi is None else att.phi
    out = list(tokens)
    if isinstance(att, Visual) and att.scope == "text":
        for i, t in enumerate(tokens):
            out[i] = "".join(att._pick(c, rng) if c in att.neighbours and rng.random() < phi else c for c in t)
        return out
    cand = [i for i, t in enumerate(tokens) if att.eligible(t)]
    x = p * len(tokens)
    k = int(math.floor(x + 1e-9))
    if x - k > 1e-9 and rng.random() < x - k:
        k += 1
    for i in sample(rng, cand, min(k, len(cand))):
        out[i] = att.perturb_word(tokens[i], phi, rng)
    return out


def attack_sentences(sentences: Sequence[Sequence[str]], attack: str | Attacker, p: float, *,
                     seed: int) -> list[list[str]]:
    """Perturb token lists for one tagging benchmark cell, exactly as :func:`evaluate_tagging` does under the
    same ``seed``: sentence i uses :func:`perturb_tokens` with ``item_seed(i, seed=level_seed(seed, attack, p))``
    (e.g. to log the perturbed sentences the benchmark scored).

    Paper: the tagging task of §4.1.

    Paper: the tagging task of §4.1.
    """
    sentences = _check_sentences(sentences)
    att = resolve_attacks([attack])[0]
    base = level_seed(seed, att[0], p)
    return [perturb_tokens(s, att[1], p, seed=item_seed(i, seed=base)) for i, s in enumerate(sentences)]


def token_accuracy(tags: Sequence[Sequence[int]], logits: Sequence[np.ndarray]) -> float:
    """Share of tokens whose argmax tag is right (the paper's POS metric), over all sentences.  Tokens tagged
    with a negative id (e.g. -1: punctuation or words without a gold tag) are not scored."""
    right = total = 0
    for t, z in zip(tags, logits, strict=True):
        t = np.asarray(t)
        m = t >= 0
        right += int((np.asarray(z).argmax(axis=1)[m] == t[m]).sum())
        total += int(m.sum())
    return right / total if total else float("nan")


def tagging_chance_score(tags: Sequence[Sequence[int]]) -> float:
    """Token accuracy of a constant guess (the paper's red chance line, for POS tagging): the share of the most
    frequent tag among the scored tokens (negative tags are not scored, as in :func:`token_accuracy`); NaN when
    no token is scored."""
    tags = _check_tags(tags)
    flat = np.array([t for ts in tags for t in ts if t >= 0], dtype=np.int64)
    return float(np.bincount(flat).max() / len(flat)) if len(flat) else float("nan")


def _check_sentences(sentences: Any) -> list[list[str]]:
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        raise TypeError(f"sentences must be a sequence of token lists (list[list[str]]), got {type(sentences).__name__}")
    out = []
    for i, s in enumerate(sentences):
        if isinstance(s, str) or not isinstance(s, Sequence) or not all(isinstance(t, str) for t in s):
            raise TypeError(f"sentences must be token lists (list[str]); item {i} is {s!r:.60}")
        out.append(list(s))
    return out


def _check_tags(tags: Any) -> list[list[int]]:
    if isinstance(tags, str) or not hasattr(tags, "__iter__"):
        raise TypeError(f"tags must be a sequence of per-sentence tag lists; got {type(tags).__name__}")
    out = []
    for i, ts in enumerate(tags):
        arr = np.asarray(ts)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise TypeError(f"tags must hold integer tag ids per token (-1: not scored); item {i} is {ts!r:.60}")
        out.append([int(t) for t in arr])
    return out


def _tag(tagger: Tagger, sents: list[list[str]], outputs: str = "logits") -> list[np.ndarray]:
    out = call_model(tagger, sents)
    if isinstance(out, tuple) or isinstance(out, dict):  # (logits_list, ...) or {"logits": logits_list}
        out = out[0] if isinstance(out, tuple) else out.get("logits")
    if out is None or len(out) != len(sents):
        raise ValueError(f"tagger must return one logits array per sentence; got "
                         f"{'nothing' if out is None else len(out)} for {len(sents)}")
    return [as_logits(z, len(s), "tagger", outputs=outputs) for s, z in zip(sents, out, strict=True)]


def evaluate_tagging(tagger: Tagger, sentences: Sequence[Sequence[str]], tags: Sequence[Sequence[int]], *,
                     attacks: Sequence[str | Attacker] = TAGGING_ATTACKS,
                     levels: Sequence[float] = tuple(LEVELS.values()), seed: int = 0,
                     outputs: str = "logits") -> BenchmarkResult:
    """§4 benchmark for token tagging (UD POS): token accuracy clean and under every attacker and level,
    the perturbation aligned to the tokens (:func:`perturb_tokens`). The tagger returns one ``(n_i, K)`` logits
    array (or tensor) per sentence."""
    _check_classifier(tagger, "tagger")
    sents = _check_sentences(sentences)
    if not sents:
        raise ValueError("sentences must hold at least one token list")
    tags = _check_tags(tags)
    if len(tags) != len(sents) or any(len(t) != len(s) for t, s in zip(tags, sents, strict=False)):
        raise ValueError("tags must have one tag per token of every sentence")
    resolved = resolve_attacks(attacks)
    levels = _check_levels(levels)
    check_outputs(outputs)
    s0 = token_accuracy(tags, _tag(tagger, sents, outputs))
    scores = []
    for a, att in resolved:
        for p in levels:
            adv = attack_sentences(sents, att, p, seed=seed)
            changed = [sum(x != y for x, y in zip(s, t, strict=True)) / max(len(s), 1) for s, t in zip(sents, adv,
                                                                                                  strict=True)]
            dist = [sum(_lev(x, y) for x, y in zip(s, t, strict=True)) for s, t in zip(sents, adv, strict=True)]
            s = token_accuracy(tags, _tag(tagger, adv, outputs))
            scores.append(AttackScore(a, p, float(s), float(s / s0) if s0 else float("nan"), float(np.mean(dist)),
                                      float(np.mean(changed))))
    return BenchmarkResult("token_accuracy", float(s0), len(sents), int(seed), tuple(scores), levels)


def _lev(a: str, b: str) -> int:
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(a, b))
