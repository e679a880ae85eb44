"""The Zéroe benchmark protocol (§4): clean vs attacked scores, relative score s*(p) (Eq. 1),
harmfulness ranking (Table 5) and the edit-distance vs degradation relation (Fig. 5).

Any text classifier works: a callable ``list[str] -> numpy.ndarray (N, K)`` of logits (the
TextAttack model-wrapper contract).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robustsuite_common.checks import check_int, check_labels, check_texts
from robustsuite_common.contract import renamed
from robustsuite_common.extras import optional_import

from ._api import ATTACKS, get_attacker, perturb_batch
from ._outputs import as_logits, call_model, check_outputs
from .attackers import Attacker
from .protocol import LEVELS, check_p

TextClassifier = Callable[[list[str]], np.ndarray]
Metric = Callable[[np.ndarray, np.ndarray], float]


def accuracy(labels: np.ndarray, logits: np.ndarray) -> float:
    """Share of argmax predictions equal to the integer labels."""
    return float(np.mean(np.asarray(logits).argmax(axis=1) == np.asarray(labels)))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    ranks = np.empty(len(x), dtype=np.float64)
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i : j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    return ranks


def _binary_auroc(y: np.ndarray, score: np.ndarray) -> float:
    pos = y.astype(bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    r = _average_ranks(score.astype(np.float64))
    return float((r[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def auroc(labels: np.ndarray, logits: np.ndarray) -> float:
    """AUROC (the paper's toxic-comment metric), Mann-Whitney form with tie correction.

    Binary integer labels use the margin ``logit[1] - logit[0]``; a 0/1 label matrix (N, K) is
    multi-label and gives the macro average over the K columns (classes without both outcomes are
    skipped).
    """
    labels = np.asarray(labels)
    logits = np.asarray(logits, dtype=np.float64)
    if labels.ndim == 1:
        if logits.shape[1] != 2:
            raise ValueError("auroc with integer labels needs a binary classifier (K = 2)")
        return _binary_auroc(labels, logits[:, 1] - logits[:, 0])
    vals = [_binary_auroc(labels[:, k], logits[:, k]) for k in range(labels.shape[1])]
    vals = [v for v in vals if not np.isnan(v)]
    return float(np.mean(vals)) if vals else float("nan")


METRICS: dict[str, Metric] = {"accuracy": accuracy, "auroc": auroc}


def resolve_metric(metric: str | Metric) -> tuple[str, Metric]:
    if callable(metric):
        return getattr(metric, "__name__", "custom"), metric
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)} or a callable; got {metric!r}")
    return metric, METRICS[metric]


def _check_classifier(classifier: Any, name: str = "classifier") -> Any:
    if not callable(classifier):
        raise TypeError(f"{name} must be a callable list[str] -> logits (N, K), got {type(classifier).__name__}")
    return classifier


def predict_logits(classifier: TextClassifier, texts: Sequence[str], *, batch_size: int = 64,
                   outputs: str = "logits", multilabel: bool = False) -> np.ndarray:
    """Run ``classifier`` over ``texts`` in batches and stack the (N, K) logits.

    The classifier may return a numpy array, a tensor, a tuple (first element), a dict with ``"logits"`` or a
    ``ModelOutput``; probabilities are refused unless ``outputs="probabilities"`` (``multilabel``: per-label
    scores, no such check). Non-finite outputs raise a ``ValueError`` naming the first affected text."""
    _check_classifier(classifier)
    texts = check_texts("texts", texts, allow_empty=True)
    batch_size = check_int("batch_size", batch_size, ge=1)
    check_outputs(outputs)
    out = []
    for s in range(0, len(texts), batch_size):
        chunk = texts[s : s + batch_size]
        out.append(as_logits(call_model(classifier, chunk), len(chunk), "classifier", outputs=outputs,
                             multilabel=multilabel,
                             first_text=lambda i, s=s: texts[s + i]))
        if out[-1].shape[1] != out[0].shape[1]:
            raise ValueError(f"classifier returned {out[0].shape[1]} columns for texts[0:{batch_size}] and "
                             f"{out[-1].shape[1]} for texts[{s}:{s + len(chunk)}]: the class count must not change")
    return np.concatenate(out) if out else np.zeros((0, 0))


def _check_levels(levels: Any) -> tuple[float, ...]:
    if isinstance(levels, str) or not isinstance(levels, Sequence | np.ndarray):
        raise TypeError(f"levels must be a sequence of perturbation probabilities, got {type(levels).__name__}")
    out = tuple(check_p(p, "levels") for p in levels)
    if not out:
        raise ValueError("levels must hold at least one perturbation probability")
    return out


def level_seed(seed: int, attack: str | Attacker, p: float) -> int:
    """The batch seed used for ``attack`` at level ``p`` (independent streams per cell)."""
    name = attack.name if isinstance(attack, Attacker) else attack
    ss = np.random.SeedSequence([int(seed), ATTACKS.index(name) if name in ATTACKS else 99, int(round(p * 1000))])
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def attack_texts(texts: Sequence[str], attack: str | Attacker, p: float, *,
                 seed: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Perturb ``texts`` for one benchmark cell (a name of :data:`ATTACKS` or a configured
    :class:`Attacker`); returns (texts, edit distances, changed-word fractions)."""
    texts = check_texts("texts", texts, allow_empty=True)
    attacker = get_attacker(attack)
    base = level_seed(seed, attack, p)
    # = [attacker(t, p, seed=item_seed(i, seed=base)) for i, t in enumerate(texts)], through the batch loops
    reps = perturb_batch(list(texts), attacker, p, seed=base, report=True)
    return ([r.perturbed for r in reps], np.array([r.edit_distance for r in reps], dtype=np.float64),
            np.array([r.fraction_attacked for r in reps], dtype=np.float64))


@dataclass(frozen=True)
class AttackScore:
    """One cell of the attacker × level table."""

    attack: str
    p: float
    score: float  # s(p)
    relative: float  # s*(p) = s(p) / s(0), Eq. 1
    mean_edit_distance: float  # characters changed per text
    mean_fraction_attacked: float

    def to_dict(self) -> dict[str, Any]:
        return {k: (float(v) if isinstance(v, float | np.floating) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class BenchmarkResult:
    """Scores of a classifier on clean text and under every attacker and level (§4.2)."""

    metric: str
    clean_score: float  # s(0)
    n: int
    seed: int
    scores: tuple[AttackScore, ...]
    levels: tuple[float, ...] = field(default=(0.2, 0.5, 0.8))

    def relative(self, attack: str, p: float) -> float:
        """s*(p) of ``attack`` (Eq. 1)."""
        for s in self.scores:
            if s.attack == attack and abs(s.p - p) < 1e-9:
                return s.relative
        if attack not in self.attacks:
            raise ValueError(f"attack must be one of the attackers run {list(self.attacks)}, got {attack!r}")
        raise ValueError(f"p must be one of the levels run {sorted({s.p for s in self.scores})}, got {p!r}")

    @property
    def attacks(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.attack for s in self.scores))

    def mean_relative(self, p: float) -> float:
        """Mean over the attackers of s*(p) (Eq. 1): one number per level for the whole attacker set."""
        return float(np.mean([self.relative(a, p) for a in self.attacks]))

    def ranking(self, p: float = 0.8) -> list[tuple[int, str, float]]:
        """Table 5: attackers ranked by harmfulness at level ``p`` (lowest s*(p) first; ties share a rank)."""
        cells = sorted(((self.relative(a, p), a) for a in self.attacks), key=lambda t: (t[0], ATTACKS.index(t[1])
                                                                                       if t[1] in ATTACKS else 99))
        out: list[tuple[int, str, float]] = []
        for k, (v, a) in enumerate(cells):
            rank = out[-1][0] if out and abs(out[-1][2] - v) < 1e-12 else k + 1
            out.append((rank, a, v))
        return out

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """The attacker × level table of s*(p) (columns: attack, then one per level)."""
        cols = ["attack"] + [f"s*({p:g})" for p in self.levels]
        rows = [[a] + [round(self.relative(a, p), 4) for p in self.levels] for a in self.attacks]
        return cols, rows

    def edit_distance_fit(self) -> tuple[float, float, float]:
        """Least-squares line s*(p) ≈ a + b · edit distance over all cells, and Pearson r (Fig. 5)."""
        x = np.array([s.mean_edit_distance for s in self.scores])
        y = np.array([s.relative for s in self.scores])
        if len(x) < 2 or np.ptp(x) == 0:
            return float(y.mean()) if len(y) else float("nan"), 0.0, float("nan")
        b, a = np.polyfit(x, y, 1)
        r = float(np.corrcoef(x, y)[0, 1]) if np.ptp(y) > 0 else float("nan")
        return float(a), float(b), r

    def plot_edit_distance(self, ax=None):
        """Fig. 5: mean edit distance per text vs s*(p), one colour per attacker, with the linear fit."""
        plt = optional_import("matplotlib.pyplot", extra="zeroe-perturb[plot]", feature="plotting")
        fig = None
        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 4))
        cmap = plt.get_cmap("tab10")
        for k, a in enumerate(self.attacks):
            cells = [s for s in self.scores if s.attack == a]
            ax.scatter([s.mean_edit_distance for s in cells], [s.relative for s in cells], color=cmap(k % 10),
                       label=a, s=24)
        a0, b0, r = self.edit_distance_fit()
        xs = np.linspace(0, max([s.mean_edit_distance for s in self.scores] + [1.0]), 50)
        ax.plot(xs, a0 + b0 * xs, "k--", lw=1, label=f"fit (r = {r:.2f})")
        ax.set_xlabel("mean character edit distance per text")
        ax.set_ylabel("relative score s*(p)")
        ax.legend(fontsize=7, ncol=2)
        return fig if fig is not None else ax.figure

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BenchmarkResult:
        """Inverse of :meth:`to_dict` (e.g. to resume from a saved result)."""
        scores = tuple(AttackScore(s["attack"], float(s["p"]), float(s["score"]), float(s["relative"]),
                                   float(s["mean_edit_distance"]), float(s["mean_fraction_attacked"]))
                       for s in d["scores"])
        return cls(d["metric"], float(d["clean_score"]), int(d["n"]), int(d["seed"]), scores,
                   tuple(float(p) for p in d["levels"]))

    def to_dict(self) -> dict[str, Any]:
        a, b, r = self.edit_distance_fit()
        return {
            "metric": self.metric,
            "clean_score": float(self.clean_score),
            "n": int(self.n),
            "seed": int(self.seed),
            "levels": [float(p) for p in self.levels],
            "scores": [s.to_dict() for s in self.scores],
            "ranking_high": [[int(k), a_, float(v)] for k, a_, v in self.ranking(max(self.levels))],
            "edit_distance_fit": {"intercept": a, "slope": b, "pearson_r": r},
        }


def check_targets(name: str, labels: Any, n: int, *, matrix: bool = True) -> np.ndarray:
    """Integer class labels (1-D, one per item) or, with ``matrix``, a 0/1 label matrix (N, K) of a multi-label
    task; ``ValueError``/``TypeError`` naming ``name`` otherwise."""
    if isinstance(labels, str | bytes) or labels is None:
        raise TypeError(f"{name} must be integer class labels or a 0/1 label matrix, got {type(labels).__name__}")
    arr = labels.detach().cpu().numpy() if hasattr(labels, "detach") else np.asarray(labels)
    if matrix and arr.ndim == 2:
        if arr.shape[0] != n:
            raise ValueError(f"{name} must have one row per item ({n}), got {arr.shape[0]}")
        if arr.dtype == bool:
            arr = arr.astype(np.int64)
        if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)) or \
                not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} as a label matrix must hold only 0 and 1")
        return arr.astype(np.int64)
    return check_labels(name, arr, length=n)


def _check_data(texts: Sequence[str], labels: Any) -> np.ndarray:
    texts = check_texts("texts", texts)
    return check_targets("labels", labels, len(texts))


def _check_attacks(attacks: Sequence[str]) -> tuple[str, ...]:
    attacks = tuple(attacks)
    bad = [a for a in attacks if a not in ATTACKS]
    if bad or not attacks:
        raise ValueError(f"attacks must be a non-empty subset of {', '.join(ATTACKS)}; got {bad or attacks}")
    return attacks


def resolve_attacks(attacks: Sequence[str | Attacker]) -> list[tuple[str, Attacker]]:
    """``(name, attacker)`` pairs for a list of attacker names and/or configured :class:`Attacker`
    instances; names must be unique (two configurations of one attacker would share a table row)."""
    if isinstance(attacks, str | Attacker) or not isinstance(attacks, Sequence):
        raise TypeError("attacks must be a sequence of attacker names or Attacker instances")
    out: list[tuple[str, Attacker]] = []
    for a in attacks:
        if isinstance(a, Attacker):
            out.append((a.name, a))
        elif isinstance(a, str) and a in ATTACKS:
            out.append((a, get_attacker(a)))
        else:
            raise ValueError(f"attacks must be names from {', '.join(ATTACKS)} or Attacker instances; got {a!r}")
    names = [n for n, _ in out]
    if not out or len(set(names)) != len(names):
        raise ValueError(f"attacks must be non-empty with one entry per attacker name; got {names}")
    return out


def _check_auroc_labels(y: np.ndarray) -> None:
    """AUROC is defined only with both outcomes present (in some column of a multi-label matrix): refused before
    any query instead of a NaN score."""
    cols = y[:, None] if y.ndim == 1 else y
    if not any(len(np.unique(cols[:, k])) == 2 for k in range(cols.shape[1])):
        raise ValueError(f"labels must hold both classes for metric='auroc' (it is undefined otherwise), got only "
                         f"{sorted(int(v) for v in np.unique(y))}")


@renamed(classifier="model")
def evaluate(
    model: TextClassifier,
    texts: Sequence[str],
    labels: Any,
    *,
    attacks: Sequence[str | Attacker] = ATTACKS,
    levels: Sequence[float] = tuple(LEVELS.values()),
    metric: str | Metric = "accuracy",
    seed: int = 0,
    batch_size: int = 64,
    progress: bool = False,
    outputs: str = "logits",
) -> BenchmarkResult:
    """Score ``model`` (a text classifier) on clean ``texts`` (s(0)) and under every attacker and level (s(p),
    s*(p)).

    Same ``seed`` → same perturbed texts (each cell uses its own seed stream, each text its item seed).
    ``labels``: integer classes, or a 0/1 matrix (N, K) for multi-label with ``metric="auroc"``. ``outputs``:
    what the model returns (see :func:`predict_logits`).

    Paper: the benchmark protocol of §4: s(0), s(p) and the relative score s*(p) = s(p)/s(0) (Eq. 1).
    """
    _check_classifier(model, "model")
    y = _check_data(texts, labels)
    texts = list(texts)
    resolved = resolve_attacks(attacks)
    levels = _check_levels(levels)
    name, fn = resolve_metric(metric)
    if name == "auroc":
        _check_auroc_labels(y)
    batch_size = check_int("batch_size", batch_size, ge=1)
    check_outputs(outputs)
    pred: dict[str, Any] = {"batch_size": batch_size, "outputs": outputs, "multilabel": y.ndim == 2}
    s0 = fn(y, predict_logits(model, texts, **pred))
    cells = [(a, p) for a in resolved for p in levels]
    it = cells
    if progress:
        tqdm_auto = optional_import("tqdm.auto", extra="zeroe-perturb[progress]", feature="progress=True")
        it = tqdm_auto.tqdm(cells, desc="zeroe attacks")
    scores = []
    for (a, attacker), p in it:
        adv, dist, frac = attack_texts(texts, attacker, p, seed=seed)
        s = fn(y, predict_logits(model, adv, **pred))
        scores.append(AttackScore(a, p, float(s), float(s / s0) if s0 else float("nan"),
                                  float(dist.mean()), float(frac.mean())))
    return BenchmarkResult(name, float(s0), len(texts), int(seed), tuple(scores), levels)


def chance_score(labels: Any, *, metric: str | Metric = "accuracy") -> float:
    """Score of a constant guess (the red "lower bound" line of the paper's figures): the majority-class
    share for accuracy, 0.5 for AUROC."""
    name, _ = resolve_metric(metric)
    y = check_targets("labels", labels, len(labels) if hasattr(labels, "__len__") else -1, matrix=name == "auroc")
    if y.size == 0:
        raise ValueError("labels must hold at least one label")
    if name == "auroc":
        return 0.5
    if name != "accuracy":
        raise ValueError(f"no chance level known for metric {name!r}")
    _, counts = np.unique(y, return_counts=True)
    return float(counts.max() / counts.sum())


@renamed(classifier="model")
def evaluate_seeds(model: TextClassifier, texts: Sequence[str], labels: Any, *,
                   seeds: Sequence[int] = (0, 1, 2), **kwargs: Any) -> list[BenchmarkResult]:
    """:func:`evaluate` once per attack seed (same texts, other perturbations), for intervals across seeds.

    Paper: the protocol of §4 repeated over attack seeds.
    """
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be non-empty and distinct; got {seeds}")
    return [evaluate(model, texts, labels, seed=s, **kwargs) for s in seeds]


def plot_relative_scores(results: Sequence[BenchmarkResult], *, chance: float | None = None, ax=None):
    """s*(p) per attacker against p (p = 0 is 1 by Eq. 1), the mean over the attack seeds of ``results``, with a
    Student-t interval over the seeds when there are at least three (``robustsuite_common.intervals.seed_interval``;
    it covers the attack's randomness only — :mod:`zeroe_perturb.experiment` gives intervals over the texts), and
    the chance line ``chance / s(0)`` (dashed red)."""
    plt = optional_import("matplotlib.pyplot", extra="zeroe-perturb[plot]", feature="plotting")
    from robustsuite_common.intervals import seed_interval

    if not results or not all(isinstance(r, BenchmarkResult) for r in results):
        raise TypeError("results must be a non-empty sequence of BenchmarkResult (one per attack seed)")
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    cmap = plt.get_cmap("tab10")
    levels = sorted(results[0].levels)
    for k, a in enumerate(results[0].attacks):
        per = [[r.relative(a, p) for r in results] for p in levels]
        m = [1.0] + [float(np.mean(v)) for v in per]
        ax.plot([0.0, *levels], m, color=cmap(k % 10), marker="o", ms=3, label=a)
        ivs = [iv for v in per if (iv := seed_interval(v, bounds=(0.0, None))) is not None]
        if len(ivs) == len(per):
            ax.fill_between([0.0, *levels], [1.0] + [iv.low for iv in ivs], [1.0] + [iv.high for iv in ivs],
                            color=cmap(k % 10), alpha=0.15, lw=0)
    if chance is not None:
        s0 = float(np.mean([r.clean_score for r in results]))
        ax.axhline(chance / s0, color="red", ls="--", lw=1, label="chance")
    ax.set_xlabel("perturbation probability p")
    ax.set_ylabel("relative score s*(p)")
    band = "95% Student-t interval over the seeds" if len(results) >= 3 else "no interval (fewer than 3 seeds)"
    ax.set_title(f"s*(p), mean over {len(results)} attack seed(s); {band}", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    return fig if fig is not None else ax.figure
