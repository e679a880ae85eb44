"""uncspan's reliability bins are the project's one convention (netcal's, robustsuite_common.calibration): with
the bins' mean confidence as the expected value its ECE equals ``netcal.metrics.ECE``."""

import numpy as np
import pytest

from uncspan.calibration import expected_calibration_error


@pytest.mark.parametrize("n_bins", [5, 10, 15])
def test_uncspan_mean_ece_equals_netcal(n_bins):
    netcal = pytest.importorskip("netcal.metrics")
    rng = np.random.default_rng(1)
    conf = rng.uniform(0.2, 1.0, 500)
    conf[:9] = np.linspace(0.2, 1.0, 9)  # some on bin edges
    correct = (rng.uniform(0, 1, 500) < conf).astype(float)
    got = expected_calibration_error(conf, correct, n_bins=n_bins, expected="mean")
    assert got == pytest.approx(netcal.ECE(bins=n_bins).measure(conf, correct), rel=1e-9)
