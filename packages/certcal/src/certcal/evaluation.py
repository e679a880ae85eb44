"""Certified calibration across radii (paper §5, Table 2, Figs. 2-3): CA, CBS and CCE per radius.

At radius r only the inputs whose smoothed prediction is certified at r count (certificate C1); their
confidence bounds at r (certificate C2, Standard or CDF) feed the certified Brier score and the certified
calibration error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import check_choice, check_positive_int
from .calibration_error import ADMMConfig, DECEConfig, certified_brier_score, certified_calibration_error
from .confidence import BOUND_METHODS, confidence_bounds
from .metrics import expected_calibration_error
from .smoothing import CertifyResult

__all__ = ["CertificateWidths", "CertifiedCalibrationCurve", "CommonSetCurve", "RadiusRow", "bootstrap_ci",
           "certificate_widths", "certified_calibration_curve", "common_set_curve"]


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
    cbs_ci: tuple[float, float] | None = None                 # bootstrap 95 % (n_boot > 0)
    cce_ci: dict[str, tuple[float, float]] = field(default_factory=dict)

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
        gaps = [r.cce[reference] - r.cce[method] for r in self.rows if r.n_certified]
        return float(max(gaps)) if gaps else None


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
    n_boot: int = 0,
    seed: int = 0,
) -> CertifiedCalibrationCurve:
    """CA, CBS and CCE (for each of ``methods``) at every radius, from one ``certify(..., return_scores=True)``.

    CA gets a Clopper-Pearson 95 % interval; with ``n_boot > 0`` CBS and the exact CCE get percentile bootstrap
    95 % intervals over the certified inputs at that radius (:func:`bootstrap_ci`).
    """
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
    if not isinstance(n_boot, int) or n_boot < 0:
        raise ValueError(f"n_boot must be a non-negative int, got {n_boot!r}")
    from scipy.stats import binomtest

    rows = []
    correct_all = certificate.prediction == y
    for r in radii_arr:
        mask = certificate.certified_at(float(r))
        k = int(np.sum(mask & correct_all))
        ca = k / y.shape[0]
        ci = binomtest(k, int(y.shape[0])).proportion_ci(confidence_level=0.95, method="exact")
        ca_ci = (float(ci.low), float(ci.high))
        if not mask.any():
            rows.append(RadiusRow(float(r), ca, 0, None, {m: None for m in methods}, None, ca_ci))
            continue
        b = confidence_bounds(certificate.scores[mask], certificate.sigma, float(r), alpha=certificate.alpha,
                              method=bound)  # type: ignore[arg-type]
        c = correct_all[mask]
        cce = {m: certified_calibration_error(b.lower, b.upper, c, n_bins, method=m, confidences=b.mean,
                                              admm=admm, dece=dece).value for m in methods}
        cbs_ci, cce_ci = None, {}
        if n_boot:
            m_ = int(mask.sum())
            lo, hi = b.lower, b.upper
            cbs_ci = bootstrap_ci(lambda i, lo=lo, hi=hi, c=c: certified_brier_score(lo[i], hi[i], c[i]), m_,
                                  n_boot=n_boot, seed=seed)
            if "exact" in methods:
                cce_ci["exact"] = bootstrap_ci(
                    lambda i, lo=lo, hi=hi, c=c: certified_calibration_error(lo[i], hi[i], c[i], n_bins).value, m_,
                    n_boot=n_boot, seed=seed)
        rows.append(RadiusRow(float(r), ca, int(mask.sum()), certified_brier_score(b.lower, b.upper, c), cce,
                              expected_calibration_error(b.mean, c, n_bins), ca_ci, cbs_ci, cce_ci))
    return CertifiedCalibrationCurve(sigma=certificate.sigma, bound=bound, n_bins=n_bins,
                                     n=int(y.shape[0]), rows=tuple(rows))


def bootstrap_ci(statistic: Callable[[np.ndarray], float], n: int, *, n_boot: int = 200, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(indices)`` over ``n`` inputs resampled with replacement."""
    check_positive_int("n", n)
    check_positive_int("n_boot", n_boot)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    vals = np.array([statistic(rng.integers(0, n, n)) for _ in range(n_boot)], dtype=np.float64)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(vals, [50 * (1 - confidence), 100 - 50 * (1 - confidence)])
    return float(lo), float(hi)


@dataclass(frozen=True)
class CommonSetCurve:
    """CBS and exact CCE at each radius on ONE fixed set of inputs (those certified at the largest radius).

    On a fixed set the confidence intervals nest as the radius grows (lower bound falls, upper bound rises),
    so the worst cases CBS and CCE are non-decreasing in the radius exactly (paper §4: both are maxima over
    the certified confidence box). Intervals: percentile bootstrap over the fixed inputs, the same resampled
    indices at every radius.
    """

    radii: tuple[float, ...]
    n_inputs: int
    cbs: tuple[float, ...]
    cbs_ci: tuple[tuple[float, float], ...]
    cce: tuple[float, ...]
    cce_ci: tuple[tuple[float, float], ...]
    diff_cbs_ci: tuple[float, float]   # bootstrap interval of CBS(r_max) - CBS(r_min)
    diff_cce_ci: tuple[float, float]   # bootstrap interval of CCE(r_max) - CCE(r_min)

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
        return bool(min(self.diff_cbs_ci[0], self.diff_cce_ci[0]) > 0)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: getattr(self, k) for k in self.__dataclass_fields__}, "cbs_increase": self.cbs_increase,
                "cce_increase": self.cce_increase, "increase_separated": self.increase_separated}


def common_set_curve(certificate: CertifyResult, labels: Any, radii: Sequence[float], *, bound: str = "cdf",
                     n_bins: int = 15, n_boot: int = 200, seed: int = 0) -> CommonSetCurve:
    """CBS and exact CCE across ``radii`` on the inputs certified at ``max(radii)``, with bootstrap intervals."""
    if not isinstance(certificate, CertifyResult) or certificate.scores is None:
        raise TypeError("certificate must be a CertifyResult from certify(..., return_scores=True)")
    check_choice("bound", bound, BOUND_METHODS)
    check_positive_int("n_bins", n_bins)
    check_positive_int("n_boot", n_boot)
    y = np.asarray(labels)
    if y.shape != certificate.prediction.shape:
        raise ValueError(f"labels must have shape {certificate.prediction.shape}, got {y.shape}")
    rr = sorted(float(r) for r in radii)
    if not rr or rr[0] < 0:
        raise ValueError("radii must be a non-empty sequence of non-negative radii")
    mask = certificate.certified_at(rr[-1])
    if not mask.any():
        raise ValueError(f"no input is certified at the largest radius {rr[-1]}; lower the radii")
    c = certificate.prediction[mask] == y[mask]
    bounds = [confidence_bounds(certificate.scores[mask], certificate.sigma, r, alpha=certificate.alpha,
                                method=bound) for r in rr]  # type: ignore[arg-type]
    cbs = [certified_brier_score(b.lower, b.upper, c) for b in bounds]
    cce = [certified_calibration_error(b.lower, b.upper, c, n_bins).value for b in bounds]
    rng = np.random.default_rng(seed)
    m = int(mask.sum())
    boot = rng.integers(0, m, (n_boot, m))
    cbs_b = np.array([[certified_brier_score(b.lower[i], b.upper[i], c[i]) for b in bounds] for i in boot])
    cce_b = np.array([[certified_calibration_error(b.lower[i], b.upper[i], c[i], n_bins).value for b in bounds]
                      for i in boot])

    def pct(v: np.ndarray) -> tuple[float, float]:
        lo, hi = np.percentile(v, [2.5, 97.5])
        return float(lo), float(hi)

    return CommonSetCurve(radii=tuple(rr), n_inputs=m, cbs=tuple(float(v) for v in cbs),
                          cbs_ci=tuple(pct(cbs_b[:, j]) for j in range(len(rr))),
                          cce=tuple(float(v) for v in cce), cce_ci=tuple(pct(cce_b[:, j]) for j in range(len(rr))),
                          diff_cbs_ci=pct(cbs_b[:, -1] - cbs_b[:, 0]), diff_cce_ci=pct(cce_b[:, -1] - cce_b[:, 0]))


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


def certificate_widths(certificate: CertifyResult, radii: Sequence[float], *,
                       alpha: float | None = None) -> CertificateWidths | None:
    """Standard vs CDF certificate (Kumar et al. 2020; paper App. C, Eqs. 12-13): the mean certified-interval
    width over the inputs certified at r = 0, at each of ``radii``; None when no input is certified.

    ``alpha``: the certificates' confidence level (default: the certificate's own ``alpha``)."""
    if not isinstance(certificate, CertifyResult) or certificate.scores is None:
        raise TypeError("certificate must be a CertifyResult from certify(..., return_scores=True)")
    rr = [float(r) for r in radii]
    if not rr or any(not np.isfinite(r) or r < 0 for r in rr):
        raise ValueError(f"radii must be a non-empty sequence of finite non-negative radii, got {list(radii)!r}")
    a = certificate.alpha if alpha is None else alpha
    ok = certificate.certified_at(0.0)
    if not ok.any():
        return None
    w = {m: confidence_bounds(certificate.scores[ok], certificate.sigma, rr, alpha=a,
                              method=m).width.mean(0) for m in BOUND_METHODS}  # type: ignore[arg-type]
    return CertificateWidths(sigma=float(certificate.sigma), alpha=float(a), radii=tuple(rr), n_inputs=int(ok.sum()),
                             standard=tuple(float(v) for v in w["standard"]), cdf=tuple(float(v) for v in w["cdf"]))
