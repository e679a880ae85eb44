"""iortemp's ECE bins confidences in the project's one convention (netcal's, robustsuite_common.calibration): on
fixed logits it equals ``netcal.metrics.ECE`` on the same top-label confidences."""

import numpy as np
import pytest

from iortemp import calibration_error


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_iortemp_ece_equals_netcal(n_bins):
    netcal = pytest.importorskip("netcal.metrics")
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 2, (400, 4))
    labels = rng.integers(0, 4, 400)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    conf, correct = p.max(1), (p.argmax(1) == labels).astype(float)
    got = calibration_error(logits, labels, n_bins=n_bins).ece
    assert got == pytest.approx(netcal.ECE(bins=n_bins).measure(conf, correct), rel=1e-9)
