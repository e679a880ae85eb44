"""Certified calibration across radii (paper §5, Table 2, Figs. 2-3): CA, CBS and CCE per radius.

At radius r only the inputs whose smoothed prediction is certified at r count (certificate C1); their
confidence bounds at r (certificate C2, Standard or CDF) feed the certified Brier score and the certified
calibration error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import check_choice, check_positive_int
from .calibration_error import ADMMConfig, DECEConfig, certified_brier_score, certified_calibration_error
from .confidence import BOUND_METHODS, confidence_bounds
from .metrics import expected_calibration_error
from .smoothing import CertifyResult

__all__ = ["CertifiedCalibrationCurve", "RadiusRow", "certified_calibration_curve"]


@dataclass(frozen=True)
class RadiusRow:
    """Certified metrics at one radius; ``cbs``/``cce`` are None when no input is certified there."""

    radius: float
    certified_accuracy: float
    n_certified: int
    cbs: float | None
    cce: dict[str, float | None]
    clean_ece: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"radius": self.radius, "certified_accuracy": self.certified_accuracy,
                "n_certified": self.n_certified, "cbs": self.cbs, "cce": dict(self.cce),
                "clean_ece": self.clean_ece}


@dataclass(frozen=True)
class CertifiedCalibrationCurve:
    sigma: float
    bound: str
    n_bins: int
    n: int
    rows: tuple[RadiusRow, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"sigma": self.sigma, "bound": self.bound, "n_bins": self.n_bins, "n": self.n,
                "rows": [r.to_dict() for r in self.rows]}


def certified_calibration_curve(
    certificate: CertifyResult,
    labels: Any,
    radii: Sequence[float],
    *,
    bound: str = "cdf",
    methods: Sequence[str] = ("exact", "admm"),
    n_bins: int = 15,
    admm: ADMMConfig | Sequence[ADMMConfig] | None = None,
    dece: DECEConfig | None = None,
) -> CertifiedCalibrationCurve:
    """CA, CBS and CCE (for each of ``methods``) at every radius, from one ``certify(..., return_scores=True)``."""
    if not isinstance(certificate, CertifyResult):
        raise TypeError(f"certificate must be a CertifyResult, got {type(certificate).__name__}")
    if certificate.scores is None:
        raise ValueError("certificate has no scores: call certify(..., return_scores=True)")
    check_choice("bound", bound, BOUND_METHODS)
    check_positive_int("n_bins", n_bins)
    for m in methods:
        check_choice("methods", m, ("exact", "admm", "dece", "brier", "milp"))
    y = np.asarray(labels)
    if y.shape != certificate.prediction.shape:
        raise ValueError(f"labels must have shape {certificate.prediction.shape}, got {y.shape}")
    radii_arr = np.asarray(list(radii), dtype=np.float64)
    if radii_arr.ndim != 1 or radii_arr.size == 0 or np.any(radii_arr < 0):
        raise ValueError("radii must be a non-empty sequence of non-negative radii")
    rows = []
    correct_all = certificate.prediction == y
    for r in radii_arr:
        mask = certificate.certified_at(float(r))
        ca = float(np.mean(mask & correct_all))
        if not mask.any():
            rows.append(RadiusRow(float(r), ca, 0, None, {m: None for m in methods}, None))
            continue
        b = confidence_bounds(certificate.scores[mask], certificate.sigma, float(r), alpha=certificate.alpha,
                              method=bound)  # type: ignore[arg-type]
        c = correct_all[mask]
        cce = {m: certified_calibration_error(b.lower, b.upper, c, n_bins, method=m, confidences=b.mean,
                                              admm=admm, dece=dece).value for m in methods}
        rows.append(RadiusRow(float(r), ca, int(mask.sum()), certified_brier_score(b.lower, b.upper, c), cce,
                              expected_calibration_error(b.mean, c, n_bins)))
    return CertifiedCalibrationCurve(sigma=certificate.sigma, bound=bound, n_bins=n_bins,
                                     n=int(y.shape[0]), rows=tuple(rows))
