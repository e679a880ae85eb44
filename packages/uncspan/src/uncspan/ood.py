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

from ._validation import check_eps, check_images, check_model, check_norm, check_positive_int, check_seed
from .attacks import OverConfidenceAttack
from .measures import entropy_from_logits

__all__ = ["KnownClassesModel", "DetectionMetrics", "detection_metrics", "OODRow", "OODUnderAttack", "ood_under_attack",
           "open_set_split", "match_images", "auroc_ci"]


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
        self.train(model.training)  # follow the wrapped model's mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x).index_select(-1, self.index)


def _scores(v: object, name: str) -> np.ndarray:
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu().numpy()
    a = np.asarray(v, dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a non-empty finite 1-D array of scores")
    return a


def detection_metrics(scores_in: object, scores_out: object, *, tpr: float = 0.95) -> DetectionMetrics:
    """Detection metrics for in-distribution vs outlier scores (higher score = more outlying), via
    scikit-learn's ``roc_auc_score``, ``average_precision_score`` and ``roc_curve``."""
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


def auroc_ci(scores_in: object, scores_out: object, *, seed: int = 0, n_boot: int = 1000,
             level: float = 0.95) -> tuple[float, float]:
    """Percentile-bootstrap interval of the AUROC, resampling in-distribution and outlier scores separately
    (stratified, so both classes are present in every replicate). The AUROC of a replicate is the
    Mann-Whitney statistic, computed from ranks in one vectorised pass."""
    from scipy.stats import rankdata

    s_in, s_out = _scores(scores_in, "scores_in"), _scores(scores_out, "scores_out")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    rng = np.random.default_rng(seed)
    a = 1 - level
    vals = np.empty(n_boot)
    for i in range(0, n_boot, 100):
        m = min(100, n_boot - i)
        bi = s_in[rng.integers(0, s_in.size, size=(m, s_in.size))]
        bo = s_out[rng.integers(0, s_out.size, size=(m, s_out.size))]
        ranks = rankdata(np.concatenate([bi, bo], axis=1), axis=1)  # ties get mid-ranks
        r_out = ranks[:, s_in.size:].sum(1)
        vals[i : i + m] = (r_out - s_out.size * (s_out.size + 1) / 2) / (s_in.size * s_out.size)
    return float(np.quantile(vals, a / 2)), float(np.quantile(vals, 1 - a / 2))


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

    @property
    def auroc_falls(self) -> bool:
        """The attack's effect in Table V, read from the intervals: the AUROC interval at the last budget lies
        wholly below the one at the first (the clean row when the budgets start at 0)."""
        return bool(self.rows[-1].auroc_ci_high < self.rows[0].auroc_ci_low)

    def table(self) -> list[list[float]]:
        """One list per row, in :attr:`COLUMNS` order."""
        return [[r.to_dict()[c] for c in self.COLUMNS] for r in self.rows]

    def to_dict(self, per_sample: bool = False) -> dict:
        """JSON-safe dict; ``per_sample=True`` adds the per-sample scores, predictions and confidences."""
        d = {"norm": self.norm, "steps": self.steps, "rows": [r.to_dict(per_sample) for r in self.rows]}
        if per_sample:
            d |= {k: getattr(self, k).tolist() for k in _IN if getattr(self, k) is not None}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> OODUnderAttack:
        """Rebuild from :meth:`to_dict` output (with the per-sample arrays when it has them)."""
        return cls(str(d["norm"]), int(d["steps"]), tuple(OODRow.from_dict(r) for r in d["rows"]), **_arrays(d, _IN))


@torch.no_grad()
def _clean(model: nn.Module, x: torch.Tensor, batch_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample entropy, prediction and top-class probability of the clean inputs."""
    dev = next((p.device for p in model.parameters()), x.device)
    logits = torch.cat([model(x[i : i + batch_size].to(dev)).double() for i in range(0, x.shape[0], batch_size)])
    h = torch.cat([entropy_from_logits(logits[i : i + batch_size]) for i in range(0, logits.shape[0], batch_size)])
    return h.cpu().numpy(), logits.argmax(-1).cpu().numpy(), logits.softmax(-1).max(-1).values.cpu().numpy()


def ood_under_attack(
    model: nn.Module,
    x_in: torch.Tensor,
    x_out: torch.Tensor,
    eps: Sequence[float],
    *,
    norm: str = "Linf",
    steps: int = 150,
    seed: int | None = 0,
    optimizer: str = "pgd",
    n_boot: int = 1000,
    batch_size: int = 256,
    progress: bool = False,
) -> OODUnderAttack:
    """Detection metrics of in-distribution ``x_in`` against outliers ``x_out`` (OOD or open-set), clean and
    with the outliers perturbed by the over-confidence attack at each budget in ``eps`` (0 = clean), as in
    Table V; the AUROC interval is :func:`auroc_ci` with ``n_boot`` replicates. The per-sample entropies (the
    scores), predictions and confidences stay on the result."""
    check_model(model)
    check_images(x_in, "x_in")
    check_images(x_out, "x_out")
    if x_in.shape[1:] != x_out.shape[1:]:
        raise ValueError(f"x_in and x_out must have the same sample shape; got {tuple(x_in.shape[1:])} and {tuple(x_out.shape[1:])}")
    norm = check_norm(norm)
    if isinstance(eps, int | float):
        eps = [eps]
    budgets = [check_eps(e) for e in eps]
    if not budgets or not all(isinstance(e, float) for e in budgets):
        raise ValueError("eps must be a non-empty sequence of scalar budgets >= 0")
    steps = check_positive_int(steps, "steps", minimum=0)
    seed = check_seed(seed)
    n_boot = check_positive_int(n_boot, "n_boot")
    h_in, p_in, c_in = _clean(model, x_in, batch_size)
    attack = OverConfidenceAttack(steps=steps, optimizer=optimizer, batch_size=batch_size, progress=progress,
                                  keep_adv=False)
    rows = []
    for e in budgets:
        if e == 0:
            h_out, p_out, c_out = _clean(model, x_out, batch_size)
        else:
            adv = attack(model, x_out, e, norm=norm, seed=seed)
            h_out, p_out, c_out = adv.entropy_adv, adv.pred_adv, adv.conf_adv
        lo, hi = auroc_ci(h_in, h_out, seed=0 if seed is None else seed, n_boot=n_boot)
        rows.append(OODRow(e, detection_metrics(h_in, h_out), float(h_in.mean()), float(h_out.mean()), lo, hi,
                           h_out, p_out, c_out))
    return OODUnderAttack(norm, steps, tuple(rows), h_in, p_in, c_in)


def open_set_split(
    x: torch.Tensor, y: torch.Tensor, open_classes: Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[int, ...]]:
    """Split a labelled set into known classes and an open set (Table V's OSR protocol on any data):
    returns ``(x_known, y_known, x_open, known_classes)`` with ``y_known`` renumbered ``0..len(known)-1`` in
    the order of ``known_classes`` (the remaining labels, ascending)."""
    check_images(x)
    if not isinstance(y, torch.Tensor) or y.dtype not in (torch.int64, torch.int32) or y.shape != (x.shape[0],):
        raise TypeError(f"y must be an integer tensor of shape ({x.shape[0]},)")
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

    check_images(x)
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
