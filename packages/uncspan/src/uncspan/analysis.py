"""What the report reads off the spans (paper §III-B, §V): how far each attack moves the mean entropy (Figs. 2–3),
whether adversarial training shrinks the span (Table I's direction, paired over the same test points), and the
signed ECE clean / after the over / after the under attack (Eq. 19, Tables II–III).

Every interval is a BCa bootstrap that resamples test points with their pairs kept
(:func:`robustsuite_common.intervals.paired_difference`); a verdict is read from the interval only ("below 0"
means its upper end is below 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from robustsuite_common.checks import check_int, check_labels, check_same_setting
from robustsuite_common.intervals import Interval
from robustsuite_common.intervals import paired_difference as _paired_difference

from .calibration import signed_ece
from .leaderboard import Leaderboard
from .span import UncertaintySpan

__all__ = ["PairedDifference", "paired_difference", "EntropyWidening", "entropy_widening", "mus_difference",
           "TrainingComparison", "TrainingEffect", "adversarial_training_effect", "SpanSignedECE", "span_signed_ece"]


@dataclass(frozen=True)
class PairedDifference:
    """Mean of ``a − b`` over paired samples with its 95 % interval (``interval``, BCa bootstrap resampling the
    pairs)."""

    interval: Interval

    @property
    def mean(self) -> float:
        return float(self.interval.estimate)

    @property
    def ci_low(self) -> float:
        return float(self.interval.low)

    @property
    def ci_high(self) -> float:
        return float(self.interval.high)

    @property
    def sign(self) -> int:
        """−1 when the whole interval lies below 0, +1 when it lies above 0, 0 when it includes 0."""
        return -1 if self.ci_high < 0 else 1 if self.ci_low > 0 else 0

    def to_dict(self) -> dict:
        return {"mean": self.mean, "ci_low": self.ci_low, "ci_high": self.ci_high}


def paired_difference(a: object, b: object, *, seed: int = 0, n_boot: int = 2000) -> PairedDifference:
    """Mean of ``a − b`` over paired samples (same items, same order) with its BCa bootstrap interval
    (:func:`robustsuite_common.intervals.paired_difference`, ``n_boot`` resamples drawn with ``seed``)."""
    n_boot = check_int("n_boot", n_boot, ge=1)
    va = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a, dtype=np.float64)
    vb = b.detach().cpu().numpy() if isinstance(b, torch.Tensor) else np.asarray(b, dtype=np.float64)
    for name, v in (("a", va), ("b", vb)):
        if v.ndim != 1 or v.size == 0 or not np.isfinite(v).all():
            raise ValueError(f"{name} must be a non-empty finite 1-D array")
    return PairedDifference(_paired_difference(va, vb, seed=seed, n_resamples=n_boot))


def _span(span: object, name: str = "span") -> UncertaintySpan:
    if not isinstance(span, UncertaintySpan):
        raise TypeError(f"{name} must be an UncertaintySpan (from uncertainty_span); got {type(span).__name__}")
    return span


@dataclass(frozen=True)
class EntropyWidening:
    """How far each attack moves the entropy, paired per test point (Figs. 2–3): ``under`` is the mean of
    ``H_under − H_clean``, ``over`` the mean of ``H_clean − H_over`` (both ≥ 0 by construction of the attacks,
    which keep the clean input when they cannot do better)."""

    under: PairedDifference
    over: PairedDifference

    @property
    def both_move(self) -> bool:
        """Whether both attacks move the mean entropy beyond its interval (both intervals above 0)."""
        return self.under.sign > 0 and self.over.sign > 0

    def to_dict(self) -> dict:
        return {"under": self.under.to_dict(), "over": self.over.to_dict()}


def entropy_widening(span: UncertaintySpan, *, seed: int = 0, n_boot: int = 2000) -> EntropyWidening:
    """The entropy moved by the under- and by the over-confidence attack (§III-B), with paired bootstrap
    intervals (both drawn with ``seed``)."""
    sp = _span(span)
    n_boot = check_int("n_boot", n_boot, ge=1)
    return EntropyWidening(paired_difference(sp.entropy_under, sp.entropy_clean, seed=seed, n_boot=n_boot),
                           paired_difference(sp.entropy_clean, sp.entropy_over, seed=seed, n_boot=n_boot))


def mus_difference(span_a: UncertaintySpan, span_b: UncertaintySpan, *, seed: int = 0,
                   n_boot: int = 2000) -> PairedDifference:
    """``MUS(a) − MUS(b)`` (Eq. 12) paired over the same test points, with its bootstrap interval: the sharper
    comparison of two models than their separate MUS intervals."""
    a, b = _span(span_a, "span_a"), _span(span_b, "span_b")
    check_same_setting({"span_a": a, "span_b": b}, ("eps", "norm"))  # one budget, or the pairing means nothing
    n_boot = check_int("n_boot", n_boot, ge=1)
    return paired_difference(a.span, b.span, seed=seed, n_boot=n_boot)


@dataclass(frozen=True)
class TrainingComparison:
    """One adversarially trained model against one standard model: the paired MUS difference (AT − standard)
    and whether the two models' own MUS intervals (their leaderboard rows) overlap."""

    adversarially_trained: str
    standard: str
    difference: PairedDifference
    intervals_overlap: bool

    @property
    def shrinks_span(self) -> bool:
        """The paper's finding (Table I, §V-B) holds for this pair: the difference's interval is below 0."""
        return self.difference.sign < 0

    def to_dict(self) -> dict:
        return {"adversarially_trained": self.adversarially_trained, "standard": self.standard,
                "difference": self.difference.to_dict(), "intervals_overlap": self.intervals_overlap}


@dataclass(frozen=True)
class TrainingEffect:
    """Every (adversarially trained, standard) pair of a leaderboard, in the order the models were given."""

    comparisons: tuple[TrainingComparison, ...]

    @property
    def shrinks_span(self) -> bool | None:
        """Whether adversarial training shrinks the span for every pair (``None``: no pair to compare)."""
        return all(c.shrinks_span for c in self.comparisons) if self.comparisons else None

    def to_dict(self) -> dict:
        return {"comparisons": [c.to_dict() for c in self.comparisons], "shrinks_span": self.shrinks_span}


def adversarial_training_effect(board: Leaderboard, *, seed: int = 0, n_boot: int = 2000) -> TrainingEffect:
    """Table I's direction on a leaderboard: for every model declared adversarially trained and every model
    declared standard (``adversarially_trained`` of the rows; undeclared models are left out), the paired MUS
    difference AT − standard (:func:`mus_difference`) on the board's spans."""
    if not isinstance(board, Leaderboard):
        raise TypeError(f"board must be a Leaderboard (from rank_models); got {type(board).__name__}")
    rows = {r.model: r for r in board.rows}
    if set(rows) != set(board.spans):
        raise ValueError("board must hold the spans of all its rows (a leaderboard from rank_models or merge)")
    n_boot = check_int("n_boot", n_boot, ge=1)
    at = [m for m in board.spans if rows[m].adversarially_trained is True]
    std = [m for m in board.spans if rows[m].adversarially_trained is False]
    out = []
    for a in at:
        for s in std:
            ra, rs = rows[a], rows[s]
            overlap = ra.mus_mean_ci_low <= rs.mus_mean_ci_high and rs.mus_mean_ci_low <= ra.mus_mean_ci_high
            out.append(TrainingComparison(a, s, mus_difference(board.spans[a], board.spans[s], seed=seed,
                                                               n_boot=n_boot), bool(overlap)))
    return TrainingEffect(tuple(out))


@dataclass(frozen=True)
class SpanSignedECE:
    """Signed ECE (Eq. 19, ob − ex: negative = over-confident) of the predictions after the under-confidence
    attack, clean and after the over-confidence attack; ``*_meanconf`` use the bins' mean confidence instead of
    the bin centre (``signed_ece(..., expected="mean")``)."""

    under: float
    clean: float
    over: float
    under_meanconf: float
    clean_meanconf: float
    over_meanconf: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def span_signed_ece(span: UncertaintySpan, y: object, *, n_bins: int = 15) -> SpanSignedECE:
    """Tables II–III for one model: s-ECE under / clean / over from a span and the true labels ``y``."""
    sp = _span(span)
    yn = check_labels("y", y, length=sp.pred_clean.size)
    n_bins = check_int("n_bins", n_bins, ge=1)
    vals = {}
    for kind in ("under", "clean", "over"):
        conf, correct = getattr(sp, f"conf_{kind}"), getattr(sp, f"pred_{kind}") == yn
        vals[kind] = signed_ece(conf, correct, n_bins=n_bins)
        vals[f"{kind}_meanconf"] = signed_ece(conf, correct, n_bins=n_bins, expected="mean")
    return SpanSignedECE(**vals)
