import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from uncspan import expected_calibration_error, reliability_bins, signed_ece

CONF = [0.1, 0.3, 0.35, 0.9, 1.0, 1.0]
CORRECT = [0, 1, 0, 1, 1, 0]


def test_signed_ece_hand_computed():
    # S = 5 bins, centres 0.1 0.3 0.5 0.7 0.9; 1.0 goes to the last bin.
    # bin0: 1 sample, ob 0 -> -0.1 ; bin1: 2 samples, ob .5 -> +0.2 ; bin4: 3 samples, ob 2/3 -> -7/30
    # s-ECE = (1/6)(-0.1) + (2/6)(0.2) + (3/6)(-7/30) = -1/15
    assert signed_ece(CONF, CORRECT, n_bins=5) == pytest.approx(-1 / 15)
    assert expected_calibration_error(CONF, CORRECT, n_bins=5) == pytest.approx(12 / 60)
    # average-confidence variant: bin means 0.1, 0.325, 29/30
    expected = (1 / 6) * (0 - 0.1) + (2 / 6) * (0.5 - 0.325) + (3 / 6) * (2 / 3 - 29 / 30)
    assert signed_ece(CONF, CORRECT, n_bins=5, expected="mean") == pytest.approx(expected)


def test_bins_edges_and_last_bin():
    b = reliability_bins(np.array([0.0, 0.2, 0.1999, 1.0, 0.99]), np.array([True, True, False, True, True]), n_bins=5)
    np.testing.assert_array_equal(b.counts, [2, 1, 0, 0, 2])  # 0.2 is left-closed into bin 1; 1.0 in bin 4
    np.testing.assert_allclose(b.centres, [0.1, 0.3, 0.5, 0.7, 0.9])
    assert np.isnan(b.accuracy[2])
    d = b.to_dict()
    assert d["accuracy"][2] is None and d["counts"] == [2, 1, 0, 0, 2]


def test_sign_means_over_confidence():
    conf = np.full(100, 0.95)
    assert signed_ece(conf, np.arange(100) < 50) < 0  # 95 % confident, 50 % right: over-confident
    assert signed_ece(np.full(100, 0.55), np.ones(100, bool)) > 0  # under-confident


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60), st.integers(1, 20))
def test_properties(pairs, n_bins):
    conf = np.array([p[0] for p in pairs])
    corr = np.array([p[1] for p in pairs])
    s = signed_ece(conf, corr, n_bins=n_bins)
    assert abs(s) <= expected_calibration_error(conf, corr, n_bins=n_bins) + 1e-12
    # with one bin the average-confidence variant is accuracy minus mean confidence
    assert signed_ece(conf, corr, n_bins=1, expected="mean") == pytest.approx(corr.mean() - conf.mean(), abs=1e-12)
    # torch and numpy inputs agree
    assert signed_ece(torch.tensor(conf), torch.tensor(corr), n_bins=n_bins) == pytest.approx(s)


@pytest.mark.parametrize(
    "conf, corr, kw, exc",
    [([1.2], [1], {}, ValueError), ([0.5], [2], {}, ValueError), ([0.5, 0.5], [1], {}, ValueError),
     ([], [], {}, ValueError), ([0.5], [1], {"n_bins": 0}, ValueError), ([0.5], [1], {"expected": "avg"}, ValueError),
     ("0.5", [1], {}, TypeError)],
)
def test_bad_inputs(conf, corr, kw, exc):
    with pytest.raises(exc):
        signed_ece(conf, corr, **kw)
