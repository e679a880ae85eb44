"""certcal's use of the shared interval toolkit (robustsuite_common.intervals): one place that turns a
bootstrap of a certified metric into an :class:`Interval`, or ``None`` with the reason when none can be given.

Every interval is robustsuite_common's: Clopper-Pearson (``proportion``) for accuracies, the BCa bootstrap
(``bootstrap``) for CBS, CCE and ECE, resampling the inputs jointly (paired) whenever several arrays describe
the same inputs. A BCa interval of a strongly biased statistic can still exclude its estimate (then the
shared toolkit refuses to build it): such a cell gets no interval, and :data:`OMITTED` says why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from robustsuite_common.intervals import Interval, IntervalError, bootstrap, proportion

__all__ = ["OMITTED", "Interval", "boot", "ci", "proportion"]

OMITTED = ("no interval: the BCa bootstrap interval excluded the estimate (a statistic too biased for the "
           "bootstrap at this sample size)")


def boot(arrays: Sequence[Any], statistic: Callable[..., float], *, seed: int, n_boot: int,
         bounds: tuple[float | None, float | None] = (0.0, 1.0)) -> Interval | None:
    """BCa bootstrap interval of ``statistic(*arrays)`` over the inputs (axis 0 of every array, resampled
    jointly), or ``None`` when the interval cannot contain the estimate (see :data:`OMITTED`)."""
    data = tuple(np.asarray(a, dtype=np.float64) for a in arrays)
    try:
        return bootstrap(data, statistic, seed=int(seed), n_resamples=int(n_boot), bounds=bounds,
                         vectorized=False)
    except IntervalError:
        return None


def ci(interval: Interval | None) -> tuple[float, float] | None:
    """``(low, high)`` of an interval, or None."""
    return None if interval is None else interval.ci
