"""Top-label calibration metrics (paper §2.1, Eq. 1): ECE, AdaECE, Brier score, reliability data.

All metrics are computed in float64. ``confidences`` are the top-label confidences z_n in [0, 1] and
``correct`` the indicators c_n = 1{prediction_n = label_n}.

Binning convention (equal-width): bin m covers (m/M, (m+1)/M], except the first bin which is [0, 1/M].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from robustsuite_common.checks import check_int
from robustsuite_common.extras import optional_import

from ._validation import as_binary, as_unit_interval

__all__ = [
    "CalibrationError",
    "ReliabilityDiagram",
    "adaptive_calibration_error",
    "bin_edges",
    "bin_index",
    "brier_score",
    "calibration_error",
    "expected_calibration_error",
    "reliability_diagram",
]


def bin_edges(*, n_bins: int = 15) -> np.ndarray:
    """The M + 1 edges k/M (k = 0..M, each the correctly rounded float of k/M) of the equal-width ECE bins.

    This is the single definition of the bins: ``bin_index``, the ECE, the CCE program and its solvers all
    use these edges, so a confidence on an edge lands in the same bin everywhere.
    """
    check_int("n_bins", n_bins, ge=1)
    return np.arange(n_bins + 1, dtype=np.float64) / n_bins


def _bin_index(z: np.ndarray, n_bins: int) -> np.ndarray:
    """Unchecked ``bin_index`` for validated float64 confidences."""
    edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    return np.clip(np.searchsorted(edges, z, side="left") - 1, 0, n_bins - 1).astype(np.int64)


def bin_index(confidences: Any, *, n_bins: int = 15) -> np.ndarray:
    """Equal-width bin of each confidence: m with edges[m] < z <= edges[m+1] (z = 0 goes to bin 0), where
    edges = ``bin_edges(n_bins)``."""
    check_int("n_bins", n_bins, ge=1)
    z = as_unit_interval("confidences", confidences, ndim=None)
    return _bin_index(z, n_bins)


def _inputs(confidences: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    from robustsuite_common.checks import check_same_length

    z = as_unit_interval("confidences", confidences)
    c = as_binary("correct", correct)
    check_same_length(confidences=z, correct=c)
    if z.shape[0] == 0:
        raise ValueError("confidences must not be empty")
    return z, c


def _binned_error(z: np.ndarray, c: np.ndarray, bins: np.ndarray, n_bins: int) -> float:
    gaps = np.bincount(bins, weights=c - z, minlength=n_bins)
    return float(np.abs(gaps).sum() / z.shape[0])


def expected_calibration_error(confidences: Any, correct: Any, *, n_bins: int = 15) -> float:
    """ECE with M equal-width bins (Eq. 1): (1/N) sum_m |sum_{n in B_m} (c_n - z_n)|."""
    check_int("n_bins", n_bins, ge=1)
    z, c = _inputs(confidences, correct)
    return _binned_error(z, c, _bin_index(z, n_bins), n_bins)


def adaptive_calibration_error(confidences: Any, correct: Any, *, n_bins: int = 15) -> float:
    """AdaECE: Eq. 1 with M equal-count bins (samples sorted by confidence, split into M near-equal groups)."""
    check_int("n_bins", n_bins, ge=1)
    z, c = _inputs(confidences, correct)
    order = np.argsort(z, kind="stable")
    bins = np.empty(z.shape[0], dtype=np.int64)
    for m, chunk in enumerate(np.array_split(order, n_bins)):
        bins[chunk] = m
    return _binned_error(z, c, bins, n_bins)


def brier_score(confidences: Any, correct: Any) -> float:
    """Top-label Brier score TLBS = (1/N) sum_n (c_n - z_n)^2 (paper §2.1)."""
    z, c = _inputs(confidences, correct)
    return float(np.mean((c - z) ** 2))


@dataclass(frozen=True)
class ReliabilityDiagram:
    """Per-bin data of a reliability diagram (equal-width bins).

    ``accuracy`` and ``confidence`` are NaN-free: empty bins hold 0 and have ``count`` 0.
    ``gap`` = confidence - accuracy (positive: over-confident).
    """

    edges: tuple[float, ...]
    count: tuple[int, ...]
    accuracy: tuple[float, ...]
    confidence: tuple[float, ...]
    gap: tuple[float, ...]
    ece: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def plot(self, ax: Any = None, title: str | None = None) -> Any:
        """Draw the diagram on a matplotlib axis (created if None); returns the axis."""
        plt = optional_import("matplotlib.pyplot", extra="certcal[plot]", feature="plotting")

        if ax is None:
            _, ax = plt.subplots(figsize=(4, 4))
        edges = np.asarray(self.edges)
        width = np.diff(edges)
        count = np.asarray(self.count)
        acc = np.asarray(self.accuracy)
        conf = np.asarray(self.confidence)
        nz = count > 0
        ax.bar(edges[:-1][nz], acc[nz], width=width[nz], align="edge", edgecolor="k", color="tab:blue",
               alpha=0.75, label="accuracy")
        ax.bar(edges[:-1][nz], conf[nz], width=width[nz], align="edge", fill=False, edgecolor="tab:red",
               hatch="//", lw=1.2, label="mean confidence")
        ax.plot([0, 1], [0, 1], "k--", lw=1)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("confidence")
        ax.set_ylabel("accuracy")
        ax.set_title(title or f"ECE = {100 * self.ece:.2f}%")
        ax.legend(loc="upper left")
        return ax


def reliability_diagram(confidences: Any, correct: Any, *, n_bins: int = 15) -> ReliabilityDiagram:
    """Reliability-diagram data: per equal-width bin, count, accuracy and mean confidence."""
    check_int("n_bins", n_bins, ge=1)
    z, c = _inputs(confidences, correct)
    bins = _bin_index(z, n_bins)
    count = np.bincount(bins, minlength=n_bins)
    sum_c = np.bincount(bins, weights=c, minlength=n_bins)
    sum_z = np.bincount(bins, weights=z, minlength=n_bins)
    safe = np.maximum(count, 1)
    acc = np.where(count > 0, sum_c / safe, 0.0)
    conf = np.where(count > 0, sum_z / safe, 0.0)
    return ReliabilityDiagram(
        edges=tuple(float(e) for e in bin_edges(n_bins=n_bins)),
        count=tuple(int(k) for k in count),
        accuracy=tuple(float(a) for a in acc),
        confidence=tuple(float(v) for v in conf),
        gap=tuple(float(v) for v in conf - acc),
        ece=_binned_error(z, c, bins, n_bins),
    )


def _batched_ece(z: np.ndarray, c: np.ndarray, n_bins: int) -> np.ndarray:
    """ECE of every row of (B, N) confidences ``z`` and outcomes ``c`` (one bincount for all rows)."""
    b, n = z.shape
    bins = _bin_index(z, n_bins) + n_bins * np.arange(b)[:, None]
    gaps = np.bincount(bins.ravel(), weights=(c - z).ravel(), minlength=b * n_bins).reshape(b, n_bins)
    return np.abs(gaps).sum(1) / n


@dataclass(frozen=True)
class CalibrationError:
    """The calibration of top-label confidences, with what the sample size lets one say about it.

    * ``ece``: the plug-in ECE (Eq. 1). It is biased upwards: even a perfectly calibrated model scores about
      ``null_mean`` on ``n`` samples, because every bin's gap is a noisy mean.
    * ``debiased``: ``ece - null_mean`` with a 95 % interval that contains it. ``null_mean`` is the mean plug-in
      ECE of a perfectly calibrated model with these confidences, estimated by consistency resampling (Bröcker &
      Smith 2007): confidences drawn with replacement from the observed ones, outcomes drawn from them
      (Bernoulli(z)). The interval is the bootstrap's spread of the plug-in ECE (inputs resampled in pairs)
      around its median, reflected as in the basic bootstrap and placed at the debiased estimate; a percentile
      interval of the plug-in ECE can lie entirely above the plug-in estimate, let alone the debiased one.
      Negative values mean "no miscalibration detectable beyond sampling noise".
    * ``p_value``: the calibration test: how often the null's plug-in ECE is at least the observed one,
      ``(1 + #{null >= ece}) / (1 + n_boot)``. Small: the confidences are not calibrated.
    * ``brier``: the top-label Brier score with its BCa bootstrap interval (robustsuite_common).
    """

    ece: float
    debiased: Any  # robustsuite_common.intervals.Interval
    null_mean: float
    p_value: float
    brier: Any  # robustsuite_common.intervals.Interval
    n: int
    n_bins: int
    n_boot: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {"ece": self.ece, "debiased": self.debiased.to_dict(), "null_mean": self.null_mean,
                "p_value": self.p_value, "brier": self.brier.to_dict(), "n": self.n, "n_bins": self.n_bins,
                "n_boot": self.n_boot, "seed": self.seed}


def calibration_error(confidences: Any, correct: Any, *, n_bins: int = 15, seed: int = 0, n_boot: int = 1000,
                      level: float = 0.95) -> CalibrationError:
    """Plug-in ECE, debiased ECE with its interval, the calibration test's p-value and the Brier score with its
    interval (see :class:`CalibrationError`), from top-label ``confidences`` in [0, 1] and 0/1 ``correct``.

    Randomness: ``numpy.random.default_rng(seed)`` draws, in this order, the null's resampled indices
    (n_boot, N), its uniform outcomes (n_boot, N) and the paired bootstrap's indices (n_boot, N); the Brier
    interval uses robustsuite_common's BCa bootstrap with ``seed``."""
    from robustsuite_common.checks import check_probability, check_seed
    from robustsuite_common.intervals import Interval, mean_interval

    check_int("n_bins", n_bins, ge=1)
    check_int("n_boot", n_boot, ge=1)
    seed = check_seed("seed", seed)
    level = check_probability("level", level)
    z, c = _inputs(confidences, correct)
    n = z.shape[0]
    ece = _binned_error(z, c, _bin_index(z, n_bins), n_bins)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    zn = z[idx]
    null = _batched_ece(zn, (rng.random((n_boot, n)) < zn).astype(np.float64), n_bins)
    null_mean = float(null.mean())
    p_value = float((1 + np.count_nonzero(null >= ece - 1e-15)) / (1 + n_boot))
    idx = rng.integers(0, n, size=(n_boot, n))
    boot = _batched_ece(z[idx], c[idx], n_bins)
    a = (1.0 - level) / 2.0
    q_lo, med, q_hi = (float(v) for v in np.quantile(boot, [a, 0.5, 1.0 - a]))
    d = ece - null_mean
    lo, hi = max(-1.0, d - (q_hi - med)), min(1.0, d + (med - q_lo))
    debiased = Interval(d, lo, hi, level, f"debiased ECE: plug-in minus consistency-resampling null mean "
                        f"({n_boot} draws); basic bootstrap spread around the median ({n_boot} resamples)",
                        (-1.0, 1.0))
    brier = mean_interval((c - z) ** 2, seed=seed, level=level, n_resamples=n_boot, bounds=(0.0, 1.0))
    return CalibrationError(ece=ece, debiased=debiased, null_mean=null_mean, p_value=min(1.0, p_value),
                            brier=brier, n=int(n), n_bins=int(n_bins), n_boot=int(n_boot), seed=seed)
