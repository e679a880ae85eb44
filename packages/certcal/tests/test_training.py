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


def test_acce_act_inner_adversary_keeps_predictions_budget_and_raises_batch_calibration_error(noisy_model, digits):
    """ACCE-ACT's alternating ADMM/PGD adversary (App. F.2): smoothed predictions fixed, ||x' - x|| <= eps, and
    the batch's ECE of the Monte-Carlo confidences (same noise draws) does not fall below the clean one."""
    from certcal import expected_calibration_error
    from certcal.training import _acce_admm_pgd, _smoothed_logprob

    xtr, ytr, _, _ = digits
    xb, yb = xtr[:128], ytr[:128]
    gen = torch.Generator().manual_seed(0)
    noise = 0.25 * torch.randn((128, 4) + tuple(xb.shape[1:]), generator=gen)
    with torch.no_grad():
        lp0 = _smoothed_logprob(noisy_model, xb, noise)
    pred = lp0.argmax(1)
    correct = (pred == yb).double()
    eps = 0.5
    cfg = ADMMConfig(lr_a=1e-2)
    x_adv = _acce_admm_pgd(noisy_model, xb, noise, pred, correct, lp0, eps, 0.25, 8, 2 * eps / 8, 15, cfg)
    assert torch.all((x_adv - xb).flatten(1).norm(dim=1) <= eps + 1e-5)
    with torch.no_grad():
        lp = _smoothed_logprob(noisy_model, x_adv, noise)
    assert torch.equal(lp.argmax(1), pred)
    z0 = lp0.gather(1, pred[:, None]).exp().squeeze(1).double().numpy()
    z1 = lp.gather(1, pred[:, None]).exp().squeeze(1).double().numpy()
    c = correct.numpy()
    assert expected_calibration_error(z1, c) >= expected_calibration_error(z0, c) - 1e-9
    assert not torch.equal(x_adv, xb)


def test_act_comparison_table_mechanics(noisy_model, digits):
    from certcal import act_comparison

    xtr, ytr, xte, yte = digits
    kw = dict(methods=("gaussian", "acce_act"), seeds=(0,), sigma=0.25, epsilon=0.25, radii=(0.0, 0.25), epochs=1,
              batch_size=128, n0=20, n=60, n_boot=5)
    res = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], **kw)
    assert [(r.method, r.radius) for r in res.rows] == [("gaussian", 0.0), ("gaussian", 0.25), ("acce_act", 0.0),
                                                        ("acce_act", 0.25)]
    for r in res.rows:
        assert r.certified_accuracy_ci_low <= r.certified_accuracy <= r.certified_accuracy_ci_high
        if r.cbs is not None:
            assert 0 <= r.cbs <= 1 and 0 <= r.cce <= 1 and r.cbs_ci_low <= r.cbs_ci_high
    # CA cannot rise with the radius; the certified set only shrinks
    for m in kw["methods"]:
        assert res.row(m, 0.25).certified_accuracy <= res.row(m, 0.0).certified_accuracy
    again = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], **kw)
    assert again.to_dict() == res.to_dict()
    with pytest.raises(ValueError, match="methods"):
        act_comparison(noisy_model, xtr[:8], ytr[:8], xte[:8], yte[:8], methods=("sgd",))


def test_act_comparison_checkpoint_resume(noisy_model, digits, tmp_path, monkeypatch):
    import certcal.act_protocol as ap
    from certcal import act_comparison

    xtr, ytr, xte, yte = digits
    kw = dict(methods=("smoothadv",), seeds=(0,), sigma=0.25, epsilon=0.25, radii=(0.0, 0.25), epochs=1,
              batch_size=128, n0=20, n=60, n_boot=5, checkpoint_dir=tmp_path)
    res = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], **kw)
    saved = sorted(p.suffix for p in tmp_path.iterdir())
    assert saved == [".npz", ".pt"]
    # a finished run is recomputed from the saved certificate: no training, no certify
    def boom(*a, **k):
        raise AssertionError("recomputed instead of resumed")

    monkeypatch.setattr(ap, "adversarial_calibration_training", boom)
    monkeypatch.setattr(ap, "certify", boom)
    assert act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], **kw).to_dict() == res.to_dict()
    # interrupted after training (certificate missing): the weights are reloaded, only certify runs again
    next(tmp_path.glob("*.npz")).unlink()
    monkeypatch.setattr(ap, "certify", certify)
    assert act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], **kw).to_dict() == res.to_dict()
    # another setting gets other checkpoint names (no stale reuse)
    with pytest.raises(AssertionError, match="recomputed"):
        act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], **{**kw, "epsilon": 0.5})
