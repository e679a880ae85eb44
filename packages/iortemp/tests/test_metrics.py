import numpy as np
import pytest

import iortemp


def test_ece_mce_against_hand_computation():
    # confidences 0.9, 0.9, 0.6, 0.6 (binary); correctness 1, 0, 1, 1 with 10 bins
    p = np.array([0.9, 0.9, 0.6, 0.6])
    z = np.stack([np.zeros(4), np.log(p / (1 - p))], axis=1)  # class 1 predicted with confidence p
    y = np.array([1, 0, 1, 1])
    ce = iortemp.calibration_error(z, y, n_bins=10)
    # bin (0.8, 0.9]: acc 0.5, conf 0.9 -> gap 0.4; bin (0.5, 0.6]: acc 1.0, conf 0.6 -> gap 0.4
    assert ce.ece == pytest.approx(0.5 * 0.4 + 0.5 * 0.4)
    assert ce.mce == pytest.approx(0.4)
    assert ce.accuracy == pytest.approx(0.75)


def test_near_uniform_model_gives_accuracy_minus_half():
    # the Table 11 '*' case: all confidences within 1e-6 of 50 %
    rng = np.random.default_rng(0)
    z = rng.normal(0, 3, size=(500, 2)) / 2e6
    y = np.where(rng.random(500) < 0.9, z.argmax(1), 1 - z.argmax(1))
    ce = iortemp.calibration_error(z, y)
    acc = float((z.argmax(1) == y).mean())
    assert ce.ece == pytest.approx(acc - ce.mean_confidence, abs=1e-15)
    assert ce.ece == pytest.approx(acc - 0.5, abs=1e-5)
    assert ce.mce == pytest.approx(ce.ece)
    assert 0.5 < ce.mean_confidence < 0.5 + 1e-5


def test_confidence_stats_and_bad_input():
    s = iortemp.confidence_stats(np.array([[0.0, 0.0], [0.0, np.log(3.0)]]))
    assert s.mean == pytest.approx((0.5 + 0.75) / 2) and s.n == 2
    assert s.to_dict()["max"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="logits"):
        iortemp.confidence_stats(np.zeros(3))
    with pytest.raises(ValueError, match="n_bins"):
        iortemp.calibration_error(np.zeros((2, 2)), [0, 1], n_bins=0)
