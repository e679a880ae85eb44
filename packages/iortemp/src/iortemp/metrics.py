"""Confidence statistics (Table 1) and calibration errors ECE / MCE (Table 11), in float64."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from robustsuite_common.calibration import bin_index
from robustsuite_common.checks import check_finite_array, check_int
from robustsuite_common.models import refuse_probabilities

from ._numerics import scaled_log_softmax64
from ._validation import T_MAX, T_MIN, check_logits_labels, check_temperature

__all__ = ["CalibrationError", "ConfidenceStats", "calibration_error", "confidence_stats"]


@dataclass(frozen=True)
class ConfidenceStats:
    """Predicted-class confidence P(c_hat | x) over a set of inputs (fractions in [0, 1], float64)."""

    mean: float
    std: float
    min: float
    max: float
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CalibrationError:
    """Expected / maximum calibration error over ``n_bins`` equal-width confidence bins (fractions)."""

    ece: float
    mce: float
    accuracy: float
    mean_confidence: float
    n_bins: int
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


def _reporting_temperature(z: np.ndarray, temperature) -> float:
    """``temperature`` checked (a finite number > 0) and small enough that ``z / temperature`` stays finite: a
    subnormal T (1e-320) would overflow the logits to inf and every confidence to NaN."""
    t = check_temperature(temperature)
    with np.errstate(over="ignore"):
        finite = bool(np.all(np.isfinite(z / t)))
    if not finite:
        raise ValueError(f"temperature must keep logits / temperature finite (the tested range is {T_MIN:g} to "
                         f"{T_MAX:g}), got {temperature!r}: the largest |logit| {float(np.abs(z).max()):g} overflows")
    return t


def confidence_stats(logits, *, temperature: float = 1.0) -> ConfidenceStats:
    """Mean (and spread) of the predicted-class probability from ``logits / T`` computed in float64.

    Pass float64 reporting logits (``iortemp.logits64``): a T_d = 2e6 binary model then reports
    0.5000007, not 0.5. Probabilities (rows in [0, 1] summing to 1) are refused: pass ``numpy.log(p)``. NaN or
    infinite logits and a temperature that is not a finite number > 0 are refused
    (``ValueError`` naming ``logits`` / ``temperature``).

    Paper: the confidence statistics of Table 1.
    """
    z = check_finite_array("logits", logits, ndim=2)
    if z.shape[0] == 0 or z.shape[1] < 2:
        raise ValueError(f"logits must have shape (N, K) with N >= 1, K >= 2, got {z.shape}")
    refuse_probabilities("logits", z)
    conf = np.exp(scaled_log_softmax64(z, _reporting_temperature(z, temperature)).max(axis=1))
    return ConfidenceStats(
        float(conf.mean()), float(conf.std()), float(conf.min()), float(conf.max()), len(conf)
    )


def calibration_error(logits, labels, *, n_bins: int = 15, temperature: float = 1.0) -> CalibrationError:
    """ECE and MCE (Naeini et al., 2015) with equal-width bins ``m/B <= conf < (m+1)/B``, the last closed
    (netcal's convention, :mod:`robustsuite_common.calibration`).

    Predictions are the argmax of the logits (never of rounded probabilities) and confidences are
    float64, so near-uniform models are handled: all their confidences fall into the bin just above 1/K
    and ECE = MCE = |accuracy - confidence|, the manual value the paper had to use (Table 11, "*").
    """
    z, y = check_logits_labels(logits, labels)
    refuse_probabilities("logits", z)
    check_int("n_bins", n_bins, ge=1)
    lp = scaled_log_softmax64(z, _reporting_temperature(z, temperature))
    pred = z.argmax(axis=1)
    conf = np.exp(lp[np.arange(len(y)), pred])
    correct = (pred == y).astype(np.float64)
    bins = bin_index(conf, n_bins=n_bins)
    ece = 0.0
    mce = 0.0
    for b in np.unique(bins):
        m = bins == b
        gap = abs(correct[m].mean() - conf[m].mean())
        ece += m.mean() * gap
        mce = max(mce, gap)
    return CalibrationError(float(ece), float(mce), float(correct.mean()), float(conf.mean()), n_bins, len(y))
