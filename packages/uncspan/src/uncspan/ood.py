"""Out-of-distribution and open-set detection under the over-confidence attack (paper §V, Table V).

The entropy of the prediction is the outlier score (higher = more likely an outlier). The outliers are
perturbed with the over-confidence attack (Eq. 10) so they look in-distribution; in-distribution inputs
are left clean, as in the paper's setup (§V-A). Note: Table V's caption says "under-confidence attacks
on the OOD and OSR subsets" while the setup text says over-confidence; only the over-confidence attack
lowers the outliers' entropy towards the in-distribution values, so that is what we run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_images, check_int, check_labels
from robustsuite_common.intervals import Interval, bootstrap
from robustsuite_common.models import logits_from

from ._model import check_model, check_outputs, using
from ._validation import check_eps, check_norm, check_seed
from .attacks import OverConfidenceAttack
from .measures import entropy_from_logits

__all__ = ["KnownClassesModel", "DetectionMetrics", "detection_metrics", "OODRow", "OODUnderAttack", "ood_under_attack",
           "open_set_split", "match_images", "auroc_ci", "auroc_difference"]


@dataclass(frozen=True)
class DetectionMetrics:
    """AUROC (outliers positive, score = entropy); AUPR-IN (in-distribution positive, score = −entropy);
    AUPR-OUT (outliers positive, score = entropy); FPR@95TPR (fraction of outliers accepted at the
    threshold accepting 95 % of in-distribution inputs, the OpenOOD convention)."""

    auroc: float
    aupr_in: float
    aupr_out: float
    fpr_at_95_tpr: float

    def to_dict(self) -> dict:
        return {"auroc": self.auroc, "aupr_in": self.aupr_in, "aupr_out": self.aupr_out,
                "fpr_at_95_tpr": self.fpr_at_95_tpr}


class KnownClassesModel(nn.Module):
    """Restrict a classifier's logits to a subset of its classes (softmax renormalised over them).

    For open-set evaluation when only a model trained on all classes is at hand: the classes left out
    play the unknown classes. This is weaker than the paper's setting (there the model never saw the
    open-set classes in training), so report it as such.
    """

    def __init__(self, model: nn.Module, classes: Sequence[int]):
        super().__init__()
        classes = [int(c) for c in classes]
        if len(classes) < 2 or len(set(classes)) != len(classes) or min(classes) < 0:
            raise ValueError("classes must be at least two distinct non-negative class indices")
        self.model = model
        self.register_buffer("index", torch.tensor(classes, dtype=torch.long))
        self._top = max(classes)  # checked against the model's class count on the first forward pass
        self.train(model.training)  # follow the wrapped model's mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = logits_from(self.model(x), n=x.shape[0])
        if self._top >= logits.shape[1]:
            raise ValueError(f"classes must be class indices below the model's {logits.shape[1]} classes, got "
                             f"{self._top}")
        return logits.index_select(-1, self.index)


def _scores(v: object, name: str) -> np.ndarray:
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu().numpy()
    a = np.asarray(v, dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a non-empty finite 1-D array of scores")
    return a


def detection_metrics(scores_in: object, scores_out: object, *, tpr: float = 0.95) -> DetectionMetrics:
    """Detection metrics for in-distribution vs outlier scores (higher score = more outlying), via
    scikit-learn's ``roc_auc_score``, ``average_precision_score`` and ``roc_curve``.

    Paper: the OOD and open-set detection metrics of Table V (§V-A).
    """
    from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve  # lazy: slow import

    s_in, s_out = _scores(scores_in, "scores_in"), _scores(scores_out, "scores_out")
    if not 0 < tpr <= 1:
        raise ValueError(f"tpr must be in (0, 1]; got {tpr!r}")
    is_out = np.r_[np.zeros(s_in.size), np.ones(s_out.size)]
    s = np.r_[s_in, s_out]
    auroc = roc_auc_score(is_out, s)
    aupr_out = average_precision_score(is_out, s)
    aupr_in = average_precision_score(1 - is_out, -s)
    # in-distribution is the positive class, score -entropy: first threshold reaching the TPR.
    fpr, tpr_curve, _ = roc_curve(1 - is_out, -s, drop_intermediate=False)
    fpr95 = float(fpr[np.searchsorted(tpr_curve, tpr, side="left")])
    return DetectionMetrics(float(auroc), float(aupr_in), float(aupr_out), fpr95)


#: Above this many scores the AUROC intervals use the percentile bootstrap instead of BCa (BCa's jackknife
#: ranks n × n scores: 8,800 scores, the paper's Table V size, would need gigabytes).
BCA_MAX_SCORES = 4000


def _auroc_batched(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mann-Whitney AUROC of scores ``b`` (outliers, positive) against ``a`` along the last axis (any leading
    batch dimensions broadcast); ties count one half (mid-ranks)."""
    from scipy.stats import rankdata

    lead = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    a, b = np.broadcast_to(a, lead + a.shape[-1:]), np.broadcast_to(b, lead + b.shape[-1:])
    ranks = rankdata(np.concatenate([a, b], axis=-1), axis=-1)
    na, nb = a.shape[-1], b.shape[-1]
    return (ranks[..., na:].sum(-1) - nb * (nb + 1) / 2) / (na * nb)


def _stratified(s_in: np.ndarray, s_outs: tuple[np.ndarray, ...], statistic, *, seed: int, n_boot: int,
                level: float, bounds: tuple[float, float]) -> Interval:
    """Bootstrap over in-distribution inputs and outliers resampled separately (stratified: both classes in every
    resample); several outlier score vectors are the same outliers under several conditions (resampled together).
    Implemented on indices, so the pairing of the outlier conditions is kept."""
    def stat(i_in, i_out, axis=-1):
        i, j = i_in.astype(np.int64), i_out.astype(np.int64)
        return statistic(s_in[i], *(s[j] for s in s_outs))

    method = "BCa" if s_in.size + s_outs[0].size <= BCA_MAX_SCORES else "percentile"
    return bootstrap((np.arange(s_in.size, dtype=np.float64), np.arange(s_outs[0].size, dtype=np.float64)), stat,
                     seed=seed, level=level, n_resamples=n_boot, method=method, bounds=bounds, paired=False)


def auroc_ci(scores_in: object, scores_out: object, *, seed: int = 0, n_boot: int = 1000,
             level: float = 0.95) -> Interval:
    """The AUROC (outliers positive, higher score = more outlying) with its stratified bootstrap interval:
    in-distribution and outlier scores are resampled separately, so both classes are present in every resample
    (BCa; percentile above :data:`BCA_MAX_SCORES` scores). Bounded to [0, 1].

    Paper: the AUROC of Table V (§V-A), with its interval.
    """
    s_in, s_out = _scores(scores_in, "scores_in"), _scores(scores_out, "scores_out")
    n_boot = check_int("n_boot", n_boot, ge=1)
    return _stratified(s_in, (s_out,), _auroc_batched, seed=seed, n_boot=n_boot, level=level, bounds=(0.0, 1.0))


def auroc_difference(scores_in: object, scores_out: object, scores_out_ref: object, *, seed: int = 0,
                     n_boot: int = 1000, level: float = 0.95) -> Interval:
    """``AUROC(scores_in, scores_out) − AUROC(scores_in, scores_out_ref)`` where both outlier score vectors
    belong to the same outliers (e.g. attacked and clean, in the same order): a paired comparison, resampling
    in-distribution inputs and outliers separately and each outlier with both of its scores. Bounded to [-1, 1]."""
    s_in, s_out, s_ref = (_scores(v, n) for v, n in ((scores_in, "scores_in"), (scores_out, "scores_out"),
                                                     (scores_out_ref, "scores_out_ref")))
    if s_out.shape != s_ref.shape:
        raise ValueError(f"scores_out and scores_out_ref must score the same outliers, got {s_out.size} and "
                         f"{s_ref.size}")
    n_boot = check_int("n_boot", n_boot, ge=1)

    def diff(a, b, c):
        return _auroc_batched(a, b) - _auroc_batched(a, c)

    return _stratified(s_in, (s_out, s_ref), diff, seed=seed, n_boot=n_boot, level=level, bounds=(-1.0, 1.0))


_OUT = ("entropy_out", "pred_out", "conf_out")
_IN = ("entropy_in", "pred_in", "conf_in")


def _arrays(d: dict, keys: tuple[str, ...]) -> dict:
    return {k: np.asarray(d[k], dtype=np.int64 if k.startswith("pred") else np.float64) if k in d else None
            for k in keys}


@dataclass(frozen=True)
class OODRow:
    """Metrics at one budget (``eps = 0`` is the clean row), the AUROC's 95 % bootstrap interval, and the
    mean entropies behind them. Per outlier (in ``x_out`` order): ``entropy_out`` (the detection score),
    ``pred_out`` and ``conf_out`` (top-class probability), after the over-confidence attack at this budget."""

    eps: float
    metrics: DetectionMetrics
    mean_entropy_in: float
    mean_entropy_out: float
    auroc_ci_low: float = float("nan")
    auroc_ci_high: float = float("nan")
    entropy_out: np.ndarray | None = field(default=None, compare=False, repr=False)
    pred_out: np.ndarray | None = field(default=None, compare=False, repr=False)
    conf_out: np.ndarray | None = field(default=None, compare=False, repr=False)

    def to_dict(self, per_sample: bool = False) -> dict:
        d = {"eps": self.eps, **self.metrics.to_dict(), "auroc_ci_low": self.auroc_ci_low,
             "auroc_ci_high": self.auroc_ci_high, "mean_entropy_in": self.mean_entropy_in,
             "mean_entropy_out": self.mean_entropy_out}
        if per_sample:
            d |= {k: getattr(self, k).tolist() for k in _OUT if getattr(self, k) is not None}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> OODRow:
        m = DetectionMetrics(*(float(d[k]) for k in ("auroc", "aupr_in", "aupr_out", "fpr_at_95_tpr")))
        return cls(float(d["eps"]), m, float(d["mean_entropy_in"]), float(d["mean_entropy_out"]),
                   float(d["auroc_ci_low"]), float(d["auroc_ci_high"]), **_arrays(d, _OUT))


@dataclass(frozen=True)
class OODUnderAttack:
    """Table V for one model and one outlier set: a row per budget, in the order the budgets were given.
    Per in-distribution input (clean, in ``x_in`` order): ``entropy_in``, ``pred_in``, ``conf_in``."""

    COLUMNS = ("eps", "auroc", "auroc_ci_low", "auroc_ci_high", "aupr_in", "aupr_out", "fpr_at_95_tpr",
               "mean_entropy_in", "mean_entropy_out")

    norm: str
    steps: int
    rows: tuple[OODRow, ...]
    entropy_in: np.ndarray | None = field(default=None, compare=False, repr=False)
    pred_in: np.ndarray | None = field(default=None, compare=False, repr=False)
    conf_in: np.ndarray | None = field(default=None, compare=False, repr=False)
    auroc_change: Interval | None = field(default=None, compare=False)

    @property
    def auroc_falls(self) -> bool:
        """The attack's effect in Table V: the AUROC at the last budget minus the one at the first (the clean row
        when the budgets start at 0), paired over the same inputs (:attr:`auroc_change`), lies below 0. Without
        the paired interval (a result rebuilt from a summary), the rows' own intervals must be disjoint."""
        if self.auroc_change is not None:
            return bool(self.auroc_change.high < 0)
        return bool(self.rows[-1].auroc_ci_high < self.rows[0].auroc_ci_low)

    def table(self) -> list[list[float]]:
        """One list per row, in :attr:`COLUMNS` order."""
        return [[r.to_dict()[c] for c in self.COLUMNS] for r in self.rows]

    def to_dict(self, per_sample: bool = False) -> dict:
        """JSON-safe dict; ``per_sample=True`` adds the per-sample scores, predictions and confidences."""
        d = {"norm": self.norm, "steps": self.steps, "rows": [r.to_dict(per_sample) for r in self.rows]}
        if self.auroc_change is not None:
            d["auroc_change"] = self.auroc_change.to_dict()
        if per_sample:
            d |= {k: getattr(self, k).tolist() for k in _IN if getattr(self, k) is not None}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> OODUnderAttack:
        """Rebuild from :meth:`to_dict` output (with the per-sample arrays when it has them)."""
        change = d.get("auroc_change")
        return cls(str(d["norm"]), int(d["steps"]), tuple(OODRow.from_dict(r) for r in d["rows"]), **_arrays(d, _IN),
                   auroc_change=None if change is None else Interval.from_dict(change))


@torch.no_grad()
def _clean(model: nn.Module, x: torch.Tensor, batch_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample entropy, prediction and top-class probability of the clean inputs (``model``: an adapted
    :class:`~uncspan._model.Logits` model, already in eval mode)."""
    logits = torch.cat([model(x[i : i + batch_size]).double() for i in range(0, x.shape[0], batch_size)])
    h = torch.cat([entropy_from_logits(logits[i : i + batch_size]) for i in range(0, logits.shape[0], batch_size)])
    return h.cpu().numpy(), logits.argmax(-1).cpu().numpy(), logits.softmax(-1).max(-1).values.cpu().numpy()


def ood_under_attack(
    model: nn.Module,
    x_in: torch.Tensor,
    x_out: torch.Tensor,
    *,
    eps: Sequence[float],
    norm: str = "Linf",
    steps: int = 150,
    seed: int | None = 0,
    optimizer: str = "pgd",
    n_boot: int = 1000,
    batch_size: int = 256,
    progress: bool = False,
    outputs: str = "logits",
) -> OODUnderAttack:
    """Detection metrics of in-distribution ``x_in`` against outliers ``x_out`` (OOD or open-set), clean and
    with the outliers perturbed by the over-confidence attack at each budget in ``eps`` (0 = clean), as in
    Table V; the AUROC interval is :func:`auroc_ci` with ``n_boot`` resamples, and ``auroc_change`` the paired
    difference AUROC(last budget) − AUROC(first budget) (:func:`auroc_difference`). The per-sample entropies (the
    scores), predictions and confidences stay on the result. The model runs in eval mode and comes back as it
    came."""
    check_model("model", model)
    check_images("x_in", x_in)
    check_images("x_out", x_out)
    outputs = check_outputs(outputs)
    if x_in.shape[1:] != x_out.shape[1:]:
        raise ValueError(f"x_in and x_out must have the same sample shape; got {tuple(x_in.shape[1:])} and {tuple(x_out.shape[1:])}")
    norm = check_norm(norm)
    if isinstance(eps, int | float):
        eps = [eps]
    checked = [check_eps(e) for e in eps]
    budgets = [e for e in checked if isinstance(e, float)]
    if not budgets or len(budgets) != len(checked):
        raise ValueError("eps must be a non-empty sequence of scalar budgets >= 0")
    steps = check_int("steps", steps, ge=0)
    seed = check_seed(seed)
    n_boot = check_int("n_boot", n_boot, ge=1)
    attack = OverConfidenceAttack(steps=steps, optimizer=optimizer, batch_size=batch_size, progress=progress,
                                  keep_adv=False)
    seed0 = 0 if seed is None else seed
    outs = []
    with using(model, outputs) as net:
        h_in, p_in, c_in = _clean(net, x_in, batch_size)
        for e in budgets:
            if e == 0:
                outs.append(_clean(net, x_out, batch_size))
            else:
                adv = attack(net, x_out, e, norm=norm, seed=seed)
                outs.append((adv.entropy_adv, adv.pred_adv, adv.conf_adv))
    rows = []
    for e, (h_out, p_out, c_out) in zip(budgets, outs, strict=True):
        iv = auroc_ci(h_in, h_out, seed=seed0, n_boot=n_boot)
        rows.append(OODRow(e, detection_metrics(h_in, h_out), float(h_in.mean()), float(h_out.mean()), iv.low,
                           iv.high, h_out, p_out, c_out))
    change = auroc_difference(h_in, outs[-1][0], outs[0][0], seed=seed0, n_boot=n_boot) if len(outs) > 1 else None
    return OODUnderAttack(norm, steps, tuple(rows), h_in, p_in, c_in, auroc_change=change)


def open_set_split(
    x: torch.Tensor, y: torch.Tensor, open_classes: Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[int, ...]]:
    """Split a labelled set into known classes and an open set (Table V's OSR protocol on any data):
    returns ``(x_known, y_known, x_open, known_classes)`` with ``y_known`` renumbered ``0..len(known)-1`` in
    the order of ``known_classes`` (the remaining labels, ascending)."""
    check_images("x", x)
    y = torch.as_tensor(check_labels("y", y, length=x.shape[0]))
    if isinstance(open_classes, str | bytes) or not isinstance(open_classes, Sequence):
        raise TypeError("open_classes must be a sequence of class labels")
    opened = sorted({int(c) for c in open_classes})
    present = sorted({int(c) for c in y.tolist()})
    if not opened or not set(opened) <= set(present):
        raise ValueError(f"open_classes must be a non-empty subset of the labels present {present}; got {opened}")
    known = tuple(c for c in present if c not in opened)
    if len(known) < 2:
        raise ValueError("at least two classes must stay known")
    is_open = torch.isin(y, torch.tensor(opened, dtype=y.dtype))
    remap = torch.full((max(present) + 1,), -1, dtype=torch.long)
    remap[list(known)] = torch.arange(len(known))
    return x[~is_open], remap[y[~is_open].long()], x[is_open], known


def match_images(x: torch.Tensor, like: torch.Tensor | Sequence[int]) -> torch.Tensor:
    """Bring outlier images to the in-distribution sample shape ``(C, H, W)`` (of ``like``, a tensor or the
    shape itself): area/bilinear resize to H×W, grey → C channels by repetition, C → 1 by averaging. Values
    stay in [0, 1]. Used to pair any OOD dataset with any in-distribution one (e.g. 8×8 digits as OOD for
    28×28 Fashion-MNIST)."""
    import torch.nn.functional as F

    check_images("x", x)
    shape = tuple(like.shape[1:]) if isinstance(like, torch.Tensor) else tuple(int(s) for s in like)
    if len(shape) != 3 or x.dim() != 4:
        raise ValueError(f"images must be (N, C, H, W) and like a (C, H, W) shape; got {tuple(x.shape)} and {shape}")
    c, h, w = shape
    if x.shape[1] != c:
        if x.shape[1] == 1:
            x = x.repeat(1, c, 1, 1)
        elif c == 1:
            x = x.mean(1, keepdim=True)
        else:
            raise ValueError(f"cannot map {x.shape[1]} channels to {c}")
    if tuple(x.shape[2:]) != (h, w):
        mode = "area" if x.shape[2] >= h and x.shape[3] >= w else "bilinear"
        kw = {} if mode == "area" else {"align_corners": False}
        x = F.interpolate(x, size=(h, w), mode=mode, **kw).clamp(0.0, 1.0)
    return x
