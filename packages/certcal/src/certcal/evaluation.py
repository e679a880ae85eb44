"""Certified calibration across radii (paper §5, Table 2, Figs. 2-3): CA, CBS and CCE per radius.

At radius r only the inputs whose smoothed prediction is certified at r count (certificate C1); their
confidence bounds at r (certificate C2, Standard or CDF) feed the certified Brier score and the certified
calibration error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from robustsuite_common.checks import check_choice, check_int, check_labels, check_probability

from ._intervals import boot, ci, proportion
from .cce import ADMMConfig, CCEMethod, DECEConfig, certified_brier_score, certified_calibration_error
from .confidence import BOUND_METHODS, confidence_bounds
from .metrics import expected_calibration_error
from .smoothing import CertifyResult

__all__ = ["CertificateWidths", "CertifiedCalibrationCurve", "CommonSetCurve", "RadiusRow", "certificate_widths",
           "certified_calibration_curve", "common_set_curve"]


def _brier_terms(lo: np.ndarray, up: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Per-input terms of the certified Brier score (Theorem 3.3): their mean is the CBS."""
    return c * (1.0 - lo) ** 2 + (1.0 - c) * up**2


def _mean(v: np.ndarray) -> float:
    return float(np.mean(v))


def _cce_statistic(n_bins: int):
    def stat(lo: np.ndarray, up: np.ndarray, c: np.ndarray) -> float:
        return certified_calibration_error(lo, up, c, n_bins=n_bins).value

    return stat


@dataclass(frozen=True)
class RadiusRow:
    """Certified metrics at one radius; ``cbs``/``cce`` are None when no input is certified there."""

    radius: float
    certified_accuracy: float
    n_certified: int
    cbs: float | None
    cce: dict[str, float | None]
    clean_ece: float | None
    certified_accuracy_ci: tuple[float, float] | None = None  # Clopper-Pearson 95 %
    cbs_ci: tuple[float, float] | None = None                 # BCa bootstrap 95 % (n_boot > 0; None: see _intervals)
    cce_ci: dict[str, tuple[float, float]] = field(default_factory=dict)  # BCa bootstrap 95 % of the exact CCE

    def to_dict(self) -> dict[str, Any]:
        return {"radius": self.radius, "certified_accuracy": self.certified_accuracy,
                "n_certified": self.n_certified, "cbs": self.cbs, "cce": dict(self.cce),
                "clean_ece": self.clean_ece, "certified_accuracy_ci": self.certified_accuracy_ci,
                "cbs_ci": self.cbs_ci, "cce_ci": dict(self.cce_ci)}


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

    def solver_gap(self, method: str = "admm", reference: str = "exact") -> float | None:
        """Largest ``cce[reference] - cce[method]`` over the radii with a certified input (None if there is none).

        With ``reference="exact"`` (the optimum of program (6), Def. 3.4) and a feasible-point solver such as the
        paper's ADMM (§3.4, App. G) the gap is >= 0: how far the solver stays below the true worst case."""
        for k in (method, reference):
            if not self.rows or k not in self.rows[0].cce:
                raise ValueError(f"{k!r} is not among this curve's CCE methods "
                                 f"{sorted(self.rows[0].cce) if self.rows else []}")
        gaps = [a - b for r in self.rows if r.n_certified
                and (a := r.cce[reference]) is not None and (b := r.cce[method]) is not None]
        return float(max(gaps)) if gaps else None


def certified_calibration_curve(
    certificate: CertifyResult,
    labels: Any,
    *,
    radii: Sequence[float],
    bound: str = "cdf",
    methods: Sequence[str] = ("exact", "admm"),
    n_bins: int = 15,
    admm: ADMMConfig | Sequence[ADMMConfig] | None = None,
    dece: DECEConfig | None = None,
    n_boot: int = 0,
    seed: int = 0,
) -> CertifiedCalibrationCurve:
    """CA, CBS and CCE (for each of ``methods``) at every radius, from one ``certify(..., return_scores=True)``.

    CA gets a Clopper-Pearson 95 % interval; with ``n_boot > 0`` CBS and the exact CCE get BCa bootstrap 95 %
    intervals over the certified inputs at that radius (robustsuite_common's ``bootstrap``; an interval the BCa
    method cannot place around its estimate is left out: ``cbs_ci`` None, ``"exact"`` missing from ``cce_ci``).

    Paper: CA, CBS (Theorem 3.3) and CCE (Def. 3.4) across radii, as in §5 and App. C.
    """
    if not isinstance(certificate, CertifyResult):
        raise TypeError(f"certificate must be a CertifyResult, got {type(certificate).__name__}")
    if certificate.scores is None:
        raise ValueError("certificate has no scores: call certify(..., return_scores=True)")
    check_choice("bound", bound, BOUND_METHODS)
    check_int("n_bins", n_bins, ge=1)
    for m in methods:
        check_choice("methods", m, ("exact", "admm", "dece", "brier", "milp"))
    y = _labels(certificate, labels)
    radii_arr = _radii(radii)
    check_int("n_boot", n_boot, ge=0)
    rows = []
    correct_all = certificate.prediction == y
    for r in radii_arr:
        mask = certificate.certified_at(float(r))
        k = int(np.sum(mask & correct_all))
        ca = k / y.shape[0]
        ca_ci = proportion(k, int(y.shape[0])).ci
        if not mask.any():
            rows.append(RadiusRow(float(r), ca, 0, None, {m: None for m in methods}, None, ca_ci))
            continue
        b = confidence_bounds(certificate.scores[mask], sigma=certificate.sigma, radius=float(r), alpha=certificate.alpha,
                              method=bound)  # type: ignore[arg-type]
        c = correct_all[mask]
        cce: dict[str, float | None] = {
            m: certified_calibration_error(b.lower, b.upper, c, n_bins=n_bins, method=cast(CCEMethod, m),
                                           confidences=b.mean, admm=admm, dece=dece).value for m in methods}
        cbs_ci, cce_ci = None, {}
        if n_boot:
            cf = c.astype(np.float64)
            cbs_ci = ci(boot((_brier_terms(b.lower, b.upper, cf),), _mean, seed=seed, n_boot=n_boot))
            if "exact" in methods:
                iv = ci(boot((b.lower, b.upper, cf), _cce_statistic(n_bins), seed=seed, n_boot=n_boot))
                if iv is not None:
                    cce_ci["exact"] = iv
        rows.append(RadiusRow(float(r), ca, int(mask.sum()), certified_brier_score(b.lower, b.upper, c), cce,
                              expected_calibration_error(b.mean, c, n_bins=n_bins), ca_ci, cbs_ci, cce_ci))
    return CertifiedCalibrationCurve(sigma=certificate.sigma, bound=bound, n_bins=n_bins,
                                     n=int(y.shape[0]), rows=tuple(rows))


def _labels(certificate: CertifyResult, labels: Any) -> np.ndarray:
    return check_labels("labels", labels, n_classes=certificate.n_classes, length=int(certificate.prediction.shape[0]))


def _radii(radii: Sequence[float]) -> np.ndarray:
    try:
        arr = np.asarray(list(radii), dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"radii must be a sequence of numbers, got {radii!r}") from None
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"radii must be a non-empty sequence of finite radii >= 0, got {list(arr)!r}")
    return arr


@dataclass(frozen=True)
class CommonSetCurve:
    """CBS and exact CCE at each radius on ONE fixed set of inputs (those certified at the largest radius).

    On a fixed set the confidence intervals nest as the radius grows (lower bound falls, upper bound rises),
    so the worst cases CBS and CCE are non-decreasing in the radius exactly (paper §4: both are maxima over
    the certified confidence box). Intervals: BCa bootstrap over the fixed inputs, the same resampled inputs at
    every radius; None where the BCa interval could not contain its estimate.
    """

    radii: tuple[float, ...]
    n_inputs: int
    cbs: tuple[float, ...]
    cbs_ci: tuple[tuple[float, float] | None, ...]
    cce: tuple[float, ...]
    cce_ci: tuple[tuple[float, float] | None, ...]
    diff_cbs_ci: tuple[float, float] | None   # bootstrap interval of CBS(r_max) - CBS(r_min)
    diff_cce_ci: tuple[float, float] | None   # bootstrap interval of CCE(r_max) - CCE(r_min)

    @property
    def cbs_increase(self) -> float:
        """CBS(r_max) - CBS(r_min) on the fixed set (>= 0 exactly: the certified boxes nest)."""
        return self.cbs[-1] - self.cbs[0]

    @property
    def cce_increase(self) -> float:
        """CCE(r_max) - CCE(r_min) on the fixed set (>= 0 exactly)."""
        return self.cce[-1] - self.cce[0]

    @property
    def increase_separated(self) -> bool:
        """True when the bootstrap intervals of both increases (CBS and CCE) lie strictly above 0."""
        if self.diff_cbs_ci is None or self.diff_cce_ci is None:
            return False
        return bool(min(self.diff_cbs_ci[0], self.diff_cce_ci[0]) > 0)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: getattr(self, k) for k in self.__dataclass_fields__}, "cbs_increase": self.cbs_increase,
                "cce_increase": self.cce_increase, "increase_separated": self.increase_separated}


def common_set_curve(certificate: CertifyResult, labels: Any, *, radii: Sequence[float], bound: str = "cdf",
                     n_bins: int = 15, n_boot: int = 200, seed: int = 0) -> CommonSetCurve:
    """CBS and exact CCE across ``radii`` on the inputs certified at ``max(radii)``, with BCa bootstrap
    intervals (robustsuite_common) of each value and of the increase from the smallest to the largest radius
    (the same resampled inputs for every radius: the increase is a paired difference).

    Paper: CBS (Theorem 3.3) and CCE (Def. 3.4) across radii on one input set (§5).
    """
    if not isinstance(certificate, CertifyResult) or certificate.scores is None:
        raise TypeError("certificate must be a CertifyResult from certify(..., return_scores=True)")
    check_choice("bound", bound, BOUND_METHODS)
    check_int("n_bins", n_bins, ge=1)
    check_int("n_boot", n_boot, ge=1)
    y = _labels(certificate, labels)
    rr = sorted(float(r) for r in _radii(radii))
    mask = certificate.certified_at(rr[-1])
    if not mask.any():
        raise ValueError(f"no input is certified at the largest radius {rr[-1]}; lower the radii")
    c = (certificate.prediction[mask] == y[mask]).astype(np.float64)
    bounds = [confidence_bounds(certificate.scores[mask], sigma=certificate.sigma, radius=r, alpha=certificate.alpha,
                                method=bound) for r in rr]  # type: ignore[arg-type]
    cbs = [certified_brier_score(b.lower, b.upper, c) for b in bounds]
    cce = [certified_calibration_error(b.lower, b.upper, c, n_bins=n_bins).value for b in bounds]
    stat = _cce_statistic(n_bins)
    cbs_ci = tuple(ci(boot((_brier_terms(b.lower, b.upper, c),), _mean, seed=seed, n_boot=n_boot)) for b in bounds)
    cce_ci = tuple(ci(boot((b.lower, b.upper, c), stat, seed=seed, n_boot=n_boot)) for b in bounds)
    first, last = bounds[0], bounds[-1]
    diff_cbs = ci(boot((_brier_terms(last.lower, last.upper, c) - _brier_terms(first.lower, first.upper, c),), _mean,
                       seed=seed, n_boot=n_boot, bounds=(-1.0, 1.0)))

    def increase(lo0: np.ndarray, up0: np.ndarray, lo1: np.ndarray, up1: np.ndarray, cc: np.ndarray) -> float:
        return stat(lo1, up1, cc) - stat(lo0, up0, cc)

    diff_cce = ci(boot((first.lower, first.upper, last.lower, last.upper, c), increase, seed=seed, n_boot=n_boot,
                       bounds=(-1.0, 1.0)))
    return CommonSetCurve(radii=tuple(rr), n_inputs=int(mask.sum()), cbs=tuple(float(v) for v in cbs),
                          cbs_ci=cbs_ci, cce=tuple(float(v) for v in cce), cce_ci=cce_ci, diff_cbs_ci=diff_cbs,
                          diff_cce_ci=diff_cce)


@dataclass(frozen=True)
class CertificateWidths:
    """Mean width (upper - lower) of Kumar et al.'s two confidence certificates at each radius (paper App. C).

    Both are computed from the same Monte-Carlo scores of the inputs whose prediction is certified at r = 0
    (``n_inputs``), so the ratio CDF / Standard compares the certificates and nothing else; App. C (Fig. 8)
    finds the CDF certificate uniformly tighter (ratio < 1)."""

    sigma: float
    alpha: float
    radii: tuple[float, ...]
    n_inputs: int
    standard: tuple[float, ...]
    cdf: tuple[float, ...]

    @property
    def ratio(self) -> tuple[float, ...]:
        """CDF width / Standard width per radius (a Standard width of 0 counts as 1e-12)."""
        return tuple(float(c / max(s, 1e-12)) for c, s in zip(self.cdf, self.standard, strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {**{k: getattr(self, k) for k in self.__dataclass_fields__}, "ratio": self.ratio}


def certificate_widths(certificate: CertifyResult, *, radii: Sequence[float],
                       alpha: float | None = None) -> CertificateWidths | None:
    """Standard vs CDF certificate (Kumar et al. 2020; paper App. C, Eqs. 12-13): the mean certified-interval
    width over the inputs certified at r = 0, at each of ``radii``; None when no input is certified.

    ``alpha``: the certificates' confidence level (default: the certificate's own ``alpha``)."""
    if not isinstance(certificate, CertifyResult) or certificate.scores is None:
        raise TypeError("certificate must be a CertifyResult from certify(..., return_scores=True)")
    rr = [float(r) for r in _radii(radii)]
    a = certificate.alpha if alpha is None else check_probability("alpha", alpha)
    ok = certificate.certified_at(0.0)
    if not ok.any():
        return None
    w = {m: confidence_bounds(certificate.scores[ok], sigma=certificate.sigma, radius=rr, alpha=a,
                              method=m).width.mean(0) for m in BOUND_METHODS}  # type: ignore[arg-type]
    return CertificateWidths(sigma=float(certificate.sigma), alpha=float(a), radii=tuple(rr), n_inputs=int(ok.sum()),
                             standard=tuple(float(v) for v in w["standard"]), cdf=tuple(float(v) for v in w["cdf"]))
