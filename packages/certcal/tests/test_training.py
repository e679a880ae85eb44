import numpy as np
import pytest
import torch

from certcal import (
    ADMMConfig,
    adversarial_calibration_training,
    certified_calibration_curve,
    certify,
)


@pytest.mark.parametrize("method", ["smoothadv", "brier_act", "acce_act", "acce_act_exact"])
def test_methods_run_and_do_not_touch_the_input_model(noisy_model, digits, method):
    xtr, ytr, _, _ = digits
    before = [p.detach().clone() for p in noisy_model.parameters()]
    res = adversarial_calibration_training(
        noisy_model, xtr[:256], ytr[:256], method=method, sigma=0.25, epsilon=0.25, epochs=1, batch_size=128,
        num_noise=2, attack_steps=2, admm=ADMMConfig(steps=50, inits=("brier",)), seed=0)
    assert len(res.loss_history) == 1 and np.isfinite(res.loss_history[0])
    assert all(torch.equal(a, b) for a, b in zip(before, noisy_model.parameters(), strict=True))
    assert any(not torch.equal(a, b) for a, b in zip(before, res.model.parameters(), strict=True))
    assert res.to_dict()["method"] == method


def test_training_is_deterministic(noisy_model, digits):
    xtr, ytr, _, _ = digits
    kw = dict(method="brier_act", sigma=0.25, epsilon=0.25, epochs=1, batch_size=128, num_noise=2,
              attack_steps=2, seed=7)
    a = adversarial_calibration_training(noisy_model, xtr[:256], ytr[:256], **kw)
    b = adversarial_calibration_training(noisy_model, xtr[:256], ytr[:256], **kw)
    assert all(torch.equal(p, q) for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True))


def test_curve_table_like_table2(noisy_model, digits):
    _, _, xte, yte = digits
    cert = certify(noisy_model, xte[:120], 0.25, n0=50, n=500, batch_size=8192, seed=0, return_scores=True)
    curve = certified_calibration_curve(cert, yte[:120].numpy(), [0.0, 0.25, 0.5],
                                        methods=("exact", "admm", "brier"), admm=ADMMConfig(steps=200))
    rows = curve.rows
    assert [r.radius for r in rows] == [0.0, 0.25, 0.5]
    cas = [r.certified_accuracy for r in rows]
    assert cas[0] >= cas[1] >= cas[2]
    for r in rows:
        if r.n_certified:
            assert r.cce["exact"] >= r.cce["admm"] - 1e-12 >= r.cce["brier"] - 2e-12
            assert r.cce["exact"] >= r.clean_ece - 1e-12
    # the paper's effect (Figs. 2-3): certified Brier score grows with the radius on the certified set
    assert rows[1].cbs > rows[0].cbs
    assert curve.to_dict()["rows"][0]["cce"]["exact"] == rows[0].cce["exact"]


def test_bad_training_arguments(noisy_model, digits):
    xtr, ytr, _, _ = digits
    with pytest.raises(ValueError):
        adversarial_calibration_training(noisy_model, xtr[:10], ytr[:10], method="trades")
    with pytest.raises(ValueError):
        adversarial_calibration_training(noisy_model, xtr[:10], ytr[:9])
    with pytest.raises(ValueError):
        adversarial_calibration_training(noisy_model, xtr[:10], ytr[:10], epochs=0)
    with pytest.raises(ValueError):
        certified_calibration_curve(certify(noisy_model, xtr[:2], 0.25, n0=5, n=10), ytr[:2].numpy(), [0.0])
