import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certcal import (
    adaptive_calibration_error,
    bin_index,
    brier_score,
    expected_calibration_error,
    reliability_diagram,
)


def test_ece_hand_computed():
    # bins of width 1/5: 0.1 -> bin 0, 0.3 -> bin 1, 0.35 -> bin 1, 0.9 -> bin 4
    z = np.array([0.1, 0.3, 0.35, 0.9])
    c = np.array([0, 1, 0, 1])
    # bin0: |0 - 0.1| = 0.1; bin1: |1 - 0.65| = 0.35; bin4: |1 - 0.9| = 0.1 -> (0.55) / 4
    assert expected_calibration_error(z, c, n_bins=5) == pytest.approx(0.55 / 4)
    assert brier_score(z, c) == pytest.approx((0.01 + 0.49 + 0.1225 + 0.01) / 4)


def test_bin_edges_are_right_closed():
    assert list(bin_index(np.array([0.0, 0.2, 0.2000001, 1.0]), n_bins=5)) == [0, 0, 1, 4]


def test_adaece_equal_count_bins():
    z = np.array([0.1, 0.2, 0.8, 0.9])
    c = np.array([1, 1, 0, 0])
    # two equal-count bins: {0.1, 0.2} gap 1.7, {0.8, 0.9} gap -1.7 -> 3.4 / 4
    assert adaptive_calibration_error(z, c, n_bins=2) == pytest.approx(3.4 / 4)
    # equal-width with 2 bins gives the same split here
    assert expected_calibration_error(z, c, n_bins=2) == pytest.approx(3.4 / 4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=40), st.integers(1, 20))
def test_ece_properties(pairs, n_bins):
    z = np.array([p[0] for p in pairs])
    c = np.array([p[1] for p in pairs], dtype=float)
    ece = expected_calibration_error(z, c, n_bins=n_bins)
    assert 0.0 <= ece <= 1.0
    # triangle inequality: the binned error is at least the global |accuracy - mean confidence|
    assert ece >= abs(c.mean() - z.mean()) - 1e-12
    # one bin reduces to that global gap
    assert expected_calibration_error(z, c, n_bins=1) == pytest.approx(abs(c.mean() - z.mean()), abs=1e-12)
    rd = reliability_diagram(z, c, n_bins=n_bins)
    assert sum(rd.count) == len(z)
    assert rd.ece == pytest.approx(ece)
    assert 0.0 <= adaptive_calibration_error(z, c, n_bins=n_bins) <= 1.0


def test_perfectly_calibrated_is_zero():
    z = np.full(10, 0.7)
    c = np.array([1] * 7 + [0] * 3)
    assert expected_calibration_error(z, c) == pytest.approx(0.0, abs=1e-12)


def test_reliability_diagram_values_and_plot():
    rd = reliability_diagram([0.05, 0.95, 0.9], [0, 1, 0], n_bins=10)
    assert rd.count[0] == 1 and rd.count[9] == 1 and rd.count[8] == 1
    assert rd.accuracy[9] == 1.0 and rd.confidence[8] == pytest.approx(0.9)
    assert set(rd.to_dict()) == {"edges", "count", "accuracy", "confidence", "gap", "ece"}
    import matplotlib

    matplotlib.use("Agg")
    ax = rd.plot()
    assert ax.get_xlim() == (0.0, 1.0)


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"confidences": [0.5, 1.5], "correct": [1, 0]}, ValueError),
        ({"confidences": [0.5, 0.5], "correct": [1, 2]}, ValueError),
        ({"confidences": [0.5, 0.5], "correct": [1]}, ValueError),
        ({"confidences": [], "correct": []}, ValueError),
        ({"confidences": [0.5], "correct": [1], "n_bins": 0}, ValueError),
        ({"confidences": "abc", "correct": [1]}, TypeError),
    ],
)
def test_bad_inputs(kwargs, exc):
    with pytest.raises(exc):
        expected_calibration_error(**kwargs)
