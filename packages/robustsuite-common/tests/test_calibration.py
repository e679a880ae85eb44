"""robustsuite_common.calibration: the one ECE, in netcal's bin convention, equal to ``netcal.metrics.ECE`` on
fixed inputs (netcal is in the workspace's dev group), and to hand-computed values."""

import numpy as np
import pytest

from robustsuite_common.calibration import bin_edges, bin_index, expected_calibration_error


def _inputs(seed: int = 0, n: int = 300):
    rng = np.random.default_rng(seed)
    z = rng.uniform(0, 1, n)
    c = (rng.uniform(0, 1, n) < z ** 1.5).astype(np.float64)
    z[:11] = np.linspace(0, 1, 11)  # confidences on the edges (0.1, 0.2, …) and at 0 and 1
    return z, c


@pytest.mark.parametrize("n_bins", [1, 2, 5, 10, 15, 20])
@pytest.mark.parametrize("seed", [0, 1])
def test_ece_equals_netcal(n_bins, seed):
    netcal = pytest.importorskip("netcal.metrics")
    z, c = _inputs(seed)
    assert expected_calibration_error(z, c, n_bins=n_bins) == pytest.approx(
        netcal.ECE(bins=n_bins).measure(z, c), rel=1e-12, abs=1e-15)


def test_bins_are_closed_on_the_left():
    # netcal: [k/M, (k+1)/M), the last bin closed; 0 and 1 clipped into the first and last bin
    assert bin_index([0.0, 0.1, 0.2, 0.25, 0.5, 0.999, 1.0], n_bins=10).tolist() == [0, 1, 2, 2, 5, 9, 9]
    assert bin_edges(n_bins=4).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_ece_by_hand():
    # bins of width 0.5: {0.2, 0.4} with outcomes {0, 1} -> |1 - 0.6| = 0.4; {0.5, 0.9} with {1, 1} -> |2 - 1.4| = 0.6
    assert expected_calibration_error([0.2, 0.4, 0.5, 0.9], [0, 1, 1, 1], n_bins=2) == pytest.approx(1.0 / 4)
    # one bin: |accuracy - mean confidence|
    assert expected_calibration_error([0.3, 0.9], [1, 0], n_bins=1) == pytest.approx(0.1)
    # 0.5 lies on an edge: netcal puts it in the upper bin, so this is perfectly calibrated per bin
    assert expected_calibration_error([0.5, 0.5, 0.0, 0.0], [1, 0, 0, 0], n_bins=2) == pytest.approx(0.0, abs=1e-15)
