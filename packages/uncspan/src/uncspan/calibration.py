"""Signed expected calibration error (s-ECE, paper Eq. 19) and the reliability bins behind it.

Sign convention. Eq. 19 is printed as ``Σ_s |B_s|/|D| (ex(B_s) − ob(B_s))``, but the paper states that
negative s-ECE means over-confidence, and its Tables II–III agree with that reading (the over-confidence
attack lowers s-ECE; the under-confident adversarially trained models score positive). With
``ex`` = expected probability (confidence) and ``ob`` = observed accuracy, over-confidence is
``ex > ob``, so the printed difference would be *positive*. We therefore compute
``Σ_s |B_s|/|D| (ob(B_s) − ex(B_s))``: negative = over-confident, positive = under-confident — the
meaning the paper gives and its tables show.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from robustsuite_common.calibration import bin_index
from robustsuite_common.checks import check_choice, check_int

__all__ = ["ReliabilityBins", "reliability_bins", "signed_ece", "expected_calibration_error"]

EXPECTED = ("centre", "mean")


def _inputs(confidences: object, correct: object) -> tuple[np.ndarray, np.ndarray]:
    def arr(v, name):
        if isinstance(v, torch.Tensor):
            v = v.detach().cpu().numpy()
        if not isinstance(v, np.ndarray | list | tuple):
            raise TypeError(f"{name} must be a 1-D array or tensor; got {type(v).__name__}")
        return np.asarray(v)

    c = arr(confidences, "confidences").astype(np.float64)
    k = arr(correct, "correct")
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"confidences must be a non-empty 1-D array; got shape {c.shape}")
    if k.shape != c.shape:
        raise ValueError(f"correct must have the same shape as confidences {c.shape}; got {k.shape}")
    if not np.isfinite(c).all() or (c < 0).any() or (c > 1).any():
        raise ValueError("confidences must be finite values in [0, 1]")
    if k.dtype != bool:
        if not np.isin(k, (0, 1)).all():
            raise ValueError("correct must be boolean or 0/1")
        k = k.astype(bool)
    return c, k.astype(np.float64)


@dataclass(frozen=True)
class ReliabilityBins:
    """S equal-width bins ``[s/S, (s+1)/S)`` (the last one closed, so a confidence of exactly 1.0 falls in
    it; netcal's convention, :mod:`robustsuite_common.calibration`): counts, observed accuracy ``ob``, mean confidence, and bin centres ``(2s+1)/2S`` (Eq. 4).
    Empty bins have NaN accuracy / mean confidence and weight 0."""

    edges: np.ndarray
    centres: np.ndarray
    counts: np.ndarray
    accuracy: np.ndarray
    mean_confidence: np.ndarray

    @property
    def weights(self) -> np.ndarray:
        return self.counts / self.counts.sum()

    def to_dict(self) -> dict:
        def clean(a):
            return [None if not np.isfinite(v) else float(v) for v in a]

        return {"edges": self.edges.tolist(), "centres": self.centres.tolist(), "counts": self.counts.tolist(),
                "accuracy": clean(self.accuracy), "mean_confidence": clean(self.mean_confidence)}


def reliability_bins(confidences: object, correct: object, *, n_bins: int = 15) -> ReliabilityBins:
    """Bin predictions by confidence (maximum softmax probability) into ``n_bins`` equal-width bins."""
    c, k = _inputs(confidences, correct)
    s_total = check_int("n_bins", n_bins, ge=1)
    idx = bin_index(c, n_bins=s_total)
    counts = np.bincount(idx, minlength=s_total).astype(np.int64)
    sum_k = np.bincount(idx, weights=k, minlength=s_total)
    sum_c = np.bincount(idx, weights=c, minlength=s_total)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(counts > 0, sum_k / np.maximum(counts, 1), np.nan)
        mconf = np.where(counts > 0, sum_c / np.maximum(counts, 1), np.nan)
    s = np.arange(s_total)
    return ReliabilityBins(
        edges=np.linspace(0.0, 1.0, s_total + 1),
        centres=(2 * s + 1) / (2 * s_total),
        counts=counts,
        accuracy=acc,
        mean_confidence=mconf,
    )


def signed_ece(confidences: object, correct: object, *, n_bins: int = 15, expected: str = "centre") -> float:
    """Signed ECE (Eq. 19): ``Σ_s |B_s|/|D| · (ob(B_s) − ex(B_s))``; negative = over-confident.

    ``expected="centre"`` uses the paper's ``ex(B_s) = (2s+1)/2S``; ``expected="mean"`` uses the mean
    confidence of the bin (the usual ECE estimator of Guo et al., which with one bin per distinct
    confidence reduces to accuracy − mean confidence). See the module docstring for the sign.
    """
    expected = check_choice("expected", expected, EXPECTED)
    b = reliability_bins(confidences, correct, n_bins=n_bins)
    ex = b.centres if expected == "centre" else b.mean_confidence
    m = b.counts > 0
    return float(np.sum(b.weights[m] * (b.accuracy[m] - ex[m])))


def expected_calibration_error(confidences: object, correct: object, *, n_bins: int = 15,
                               expected: str = "centre") -> float:
    """Unsigned ECE (Eq. 4): ``Σ_s |B_s|/|D| · |ob(B_s) − ex(B_s)|``."""
    expected = check_choice("expected", expected, EXPECTED)
    b = reliability_bins(confidences, correct, n_bins=n_bins)
    ex = b.centres if expected == "centre" else b.mean_confidence
    m = b.counts > 0
    return float(np.sum(b.weights[m] * np.abs(b.accuracy[m] - ex[m])))
