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
        noisy_model, xtr[:256], ytr[:256], method=method, sigma=0.25, eps=0.25, epochs=1, batch_size=128,
        num_noise=2, attack_steps=2, admm=ADMMConfig(steps=50, inits=("brier",)), seed=0)
    assert len(res.loss_history) == 1 and np.isfinite(res.loss_history[0])
    assert all(torch.equal(a, b) for a, b in zip(before, noisy_model.parameters(), strict=True))
    assert any(not torch.equal(a, b) for a, b in zip(before, res.model.parameters(), strict=True))
    assert res.to_dict()["method"] == method


def test_training_is_deterministic(noisy_model, digits):
    xtr, ytr, _, _ = digits
    kw = dict(method="brier_act", sigma=0.25, eps=0.25, epochs=1, batch_size=128, num_noise=2,
              attack_steps=2, seed=7)
    a = adversarial_calibration_training(noisy_model, xtr[:256], ytr[:256], **kw)
    b = adversarial_calibration_training(noisy_model, xtr[:256], ytr[:256], **kw)
    assert all(torch.equal(p, q) for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True))


def test_curve_table_like_table2(noisy_model, digits):
    _, _, xte, yte = digits
    cert = certify(noisy_model, xte[:120], sigma=0.25, n0=50, n=500, batch_size=8192, seed=0, return_scores=True)
    curve = certified_calibration_curve(cert, yte[:120].numpy(), radii=[0.0, 0.25, 0.5],
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
        certified_calibration_curve(certify(noisy_model, xtr[:2], sigma=0.25, n0=5, n=10), ytr[:2].numpy(), radii=[0.0])


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
    from certcal import ACTComparisonConfig, act_comparison

    xtr, ytr, xte, yte = digits
    cfg = ACTComparisonConfig(methods=("gaussian", "acce_act"), seeds=(0,), sigma=0.25, eps=0.25, radii=(0.0, 0.25),
                              epochs=1, batch_size=128, n0=20, n=60, n_boot=5)
    res = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], config=cfg)
    assert [(r.method, r.radius) for r in res.rows] == [("gaussian", 0.0), ("gaussian", 0.25), ("acce_act", 0.0),
                                                        ("acce_act", 0.25)]
    for r in res.rows:
        assert r.certified_accuracy_ci_low <= r.certified_accuracy <= r.certified_accuracy_ci_high
        if r.cbs is not None:
            assert 0 <= r.cbs <= 1 and 0 <= r.cce <= 1 and r.cbs_ci_low <= r.cbs_ci_high
    # CA cannot rise with the radius; the certified set only shrinks
    for m in cfg.methods:
        assert res.row(m, 0.25).certified_accuracy <= res.row(m, 0.0).certified_accuracy
    again = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], config=cfg)
    assert again.to_dict() == res.to_dict()
    with pytest.raises(ValueError, match="methods"):
        ACTComparisonConfig(methods=("sgd",))
    # the former keywords still work for one release (epsilon included), with a DeprecationWarning
    with pytest.warns(DeprecationWarning, match="ACTComparisonConfig"):
        old = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], methods=("gaussian", "acce_act"),
                             seeds=(0,), sigma=0.25, epsilon=0.25, radii=(0.0, 0.25), epochs=1, batch_size=128,
                             n0=20, n=60, n_boot=5)
    assert old.to_dict() == res.to_dict()


def test_act_comparison_checkpoint_resume(noisy_model, digits, tmp_path, monkeypatch):
    import certcal.act.run as ap
    from certcal import ACTComparisonConfig, act_comparison

    xtr, ytr, xte, yte = digits
    cfg = ACTComparisonConfig(methods=("smoothadv",), seeds=(0,), sigma=0.25, eps=0.25, radii=(0.0, 0.25), epochs=1,
                              batch_size=128, n0=20, n=60, n_boot=5)
    kw = dict(config=cfg, checkpoint_dir=tmp_path)
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
        act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], **{**kw, "config": cfg.replace(eps=0.5)})


def _draws(n: int, shape: tuple[int, ...], sigma: float, m: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The permutation and noise draws of a one-batch epoch, in adversarial_calibration_training's order
    (permutation from seed + 1, noise from seed)."""
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed + 1))
    noise = sigma * torch.randn((n, m) + shape, generator=torch.Generator().manual_seed(seed))
    return perm, noise


@pytest.mark.parametrize("method", ["smoothadv", "brier_act", "acce_act"])
def test_outer_loss_is_the_smoothed_soft_classifiers_nll(noisy_model, digits, method):
    """Eq. 7 / SmoothAdv (Salman et al.): the weights minimise the cross-entropy of the smoothed soft
    classifier, -log((1/m) sum_i softmax(f(x' + delta_i))_y), not the mean of the m base cross-entropies.
    With epsilon = 0 the adversary is the identity, so the first (only) batch's reported loss must equal that
    NLL at the initial weights, computed here directly in float64 from the logits."""
    xtr, ytr, _, _ = digits
    x, y, m, sigma = xtr[:64], ytr[:64], 4, 0.25
    res = adversarial_calibration_training(noisy_model, x, y, method=method, sigma=sigma, eps=0.0, epochs=1,
                                           batch_size=64, num_noise=m, seed=3)
    perm, noise = _draws(64, tuple(x.shape[1:]), sigma, m, 3)
    xb, yb = x[perm], y[perm]
    with torch.no_grad():
        logits = noisy_model((xb[:, None] + noise).flatten(0, 1)).double().view(64, m, -1)
    p = torch.softmax(logits, dim=2).mean(1)
    nll = float(-torch.log(p[torch.arange(64), yb]).mean())
    mean_ce = float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), yb.repeat_interleave(m)))
    assert abs(nll - mean_ce) > 1e-3  # the two losses differ on this batch, so the check below discriminates
    assert res.loss_history[0] == pytest.approx(nll, rel=1e-5, abs=1e-6)


def test_noise_only_baseline_keeps_cohens_base_cross_entropy(noisy_model, digits):
    """Cohen et al.'s noise augmentation ("gaussian") trains the base classifier: mean of the m cross-entropies."""
    xtr, ytr, _, _ = digits
    x, y, m, sigma = xtr[:64], ytr[:64], 3, 0.25
    res = adversarial_calibration_training(noisy_model, x, y, method="gaussian", sigma=sigma, eps=0.0,
                                           epochs=1, batch_size=64, num_noise=m, seed=5)
    perm, noise = _draws(64, tuple(x.shape[1:]), sigma, m, 5)
    with torch.no_grad():
        logits = noisy_model((x[perm][:, None] + noise).flatten(0, 1)).double()
    ce = float(torch.nn.functional.cross_entropy(logits, y[perm].repeat_interleave(m)))
    assert res.loss_history[0] == pytest.approx(ce, rel=1e-5, abs=1e-6)


def test_smoothadv_one_pgd_step_matches_direct_gradient(noisy_model, digits):
    """SmoothAdv's inner step (Salman et al.): x' = x + step * g / ||g||_2 with g the gradient of the smoothed
    NLL -log((1/m) sum_i softmax(f(x + delta_i))_y), projected to the eps-ball and [0, 1]; checked against autograd of
    the formula written out in float64."""
    from certcal.training import _inner

    xtr, ytr, _, _ = digits
    xb, yb = xtr[:16], ytr[:16]
    noise = 0.25 * torch.randn((16, 3) + tuple(xb.shape[1:]), generator=torch.Generator().manual_seed(1))
    eps, step = 0.5, 0.2
    got = _inner(noisy_model, "smoothadv", xb, yb, noise, eps, 0.25, 1, step, 15, ADMMConfig())
    net64 = __import__("copy").deepcopy(noisy_model).double()
    xr = xb.double().requires_grad_(True)
    p = torch.softmax(net64((xr[:, None] + noise.double()).flatten(0, 1)).view(16, 3, -1), dim=2).mean(1)
    loss = -torch.log(p[torch.arange(16), yb]).sum()
    (g,) = torch.autograd.grad(loss, xr)
    # step < eps, so only the image box [0, 1] clips
    want = (xb.double() + step * g / g.flatten(1).norm(dim=1).view(-1, 1, 1, 1)).clamp(0.0, 1.0)
    assert torch.allclose(got.double(), want, atol=1e-5)
    assert float((got - xb).flatten(1).norm(dim=1).max()) <= eps + 1e-6


def test_act_selection_rule_follows_the_paper(noisy_model, digits):
    """App. J.1 / §5.3: per seed and radius, models within 3 % of the best CA of ANY model are eligible and each
    method reports its eligible model with the lowest CCE; recomputed here from the per-model table. "none" is
    the base model certified as is."""
    from certcal import ACTComparisonConfig, act_comparison

    xtr, ytr, xte, yte = digits
    seeds = (0, 1)
    cfg = ACTComparisonConfig(methods=("none", "gaussian", "smoothadv"), seeds=seeds, sigma=0.25, eps=0.25,
                              radii=(0.0, 0.25), epochs=1, batch_size=64, n0=20, n=60, n_boot=50,
                              grid={"lr": [1e-3, 5e-2]}, selection_margin=0.03)
    res = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], config=cfg)
    assert len(res.models) == (1 + 2 + 2) * len(seeds) * 2
    for row in res.rows:
        present = []
        for si, seed in enumerate(seeds):
            ms = [m for m in res.models if m.seed == seed and m.radius == row.radius]
            best = max(m.certified_accuracy for m in ms)
            for m in ms:
                assert m.eligible == (m.certified_accuracy >= best - 0.03 - 1e-9)
            own = [m for m in ms if m.method == row.method and m.eligible and m.cce is not None]
            if own:
                pick = min(own, key=lambda m: m.cce)
                assert row.cce_per_seed[si] == pick.cce and row.selected[si] == pick.params
                present.append(pick.cce)
            else:
                assert row.cce_per_seed[si] is None and row.selected[si] is None
        assert row.n_selected == len(present)
        if present:
            assert row.cce == pytest.approx(np.mean(present))
            assert row.cce_ci_low - 1e-12 <= row.cce <= row.cce_ci_high + 1e-12  # BCa, robustsuite_common
    # the base model's row is plain certification with each seed, pooled
    k = 0
    for seed in seeds:
        cert = certify(noisy_model, xte[:40], sigma=0.25, n0=20, n=60, batch_size=1024, seed=seed)
        k += int(((cert.prediction == yte[:40].numpy()) & cert.certified_at(0.25)).sum())
    assert res.row("none", 0.25).certified_accuracy == pytest.approx(k / 80)
    # without the CA band every method simply reports its lowest-CCE model
    free = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40],
                          config=cfg.replace(selection_margin=None))
    for row in free.rows:
        for si, seed in enumerate(seeds):
            own = [m.cce for m in free.models if m.seed == seed and m.radius == row.radius
                   and m.method == row.method and m.cce is not None]
            assert row.cce_per_seed[si] == (min(own) if own else None)


def test_act_comparison_bad_arguments(noisy_model, digits):
    from certcal import ACTComparisonConfig, act_comparison

    xtr, ytr, xte, yte = digits
    args = (noisy_model, xtr[:8], ytr[:8], xte[:8], yte[:8])
    with pytest.raises(ValueError, match="grid keys"):
        ACTComparisonConfig(grid={"momentum": [0.9]})
    with pytest.raises(ValueError, match="grid"):
        ACTComparisonConfig(grid={"lr": []})
    with pytest.raises(ValueError, match="grid"):
        ACTComparisonConfig(grid={"lr": [-1.0]})
    with pytest.raises(ValueError, match="rho_growth"):
        ACTComparisonConfig(grid={"rho_growth": [0.5]})
    with pytest.raises(ValueError, match="selection_margin"):
        ACTComparisonConfig(selection_margin=1.5)
    with pytest.raises(ValueError, match="methods"):
        ACTComparisonConfig(methods=("none", "none"))
    with pytest.raises(ValueError, match="selection_margin"):  # the former keywords are checked the same way
        act_comparison(*args, selection_margin=1.5)
    with pytest.raises(TypeError, match="unexpected"):
        act_comparison(*args, nesterov=True)


def test_act_comparison_pairs_each_act_variant_with_at(noisy_model, digits):
    """Each ACT variant's CCE minus AT's per radius: the mean over seeds where both had a selected model of the
    two rows' per-seed CCEs, with a paired interval that contains it; none without the baseline."""
    from certcal import ACTComparisonConfig, act_comparison

    xtr, ytr, xte, yte = digits
    seeds = (0, 1)
    cfg = ACTComparisonConfig(methods=("smoothadv", "brier_act"), seeds=seeds, sigma=0.25, eps=0.25,
                              radii=(0.0, 0.25), epochs=1, batch_size=64, n0=20, n=60, n_boot=60,
                              selection_margin=None, optimizer="sgd", lr=1e-2)
    res = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40], config=cfg)
    assert [(d.method, d.baseline, d.radius) for d in res.differences] == [("brier_act", "smoothadv", 0.0),
                                                                          ("brier_act", "smoothadv", 0.25)]
    for d in res.differences:
        a, b = res.row("brier_act", d.radius), res.row("smoothadv", d.radius)
        both = [(x, y) for x, y in zip(a.cce_per_seed, b.cce_per_seed, strict=True) if x is not None and y is not None]
        assert d.n_seeds == len(both) > 0 and d.n_boot == 60
        assert d.difference == pytest.approx(np.mean([x - y for x, y in both]), abs=1e-12)
        assert d.low is not None and d.low - 1e-12 <= d.difference <= d.high + 1e-12
        assert res.difference("brier_act", d.radius) == d
    assert res.config["optimizer"] == "sgd"
    alone = act_comparison(noisy_model, xtr[:128], ytr[:128], xte[:40], yte[:40],
                           config=cfg.replace(methods=("brier_act",), seeds=(0,)))
    assert alone.differences == () and alone.difference("brier_act", 0.0) is None
    with pytest.raises(ValueError, match="optimizer"):
        cfg.replace(optimizer="rmsprop")


def test_sgd_step_is_torchs_sgd_on_the_same_loss(noisy_model, digits):
    """optimizer="sgd" (App. I.3): one full-batch noise-only step equals w - lr (grad + wd w) with the loss and
    noise the trainer used (momentum has no effect on the first step); Adam moves the weights differently."""
    import copy

    from certcal._validation import make_generator

    xtr, ytr, _, _ = digits
    x, y = xtr[:64], ytr[:64]
    kw = dict(method="gaussian", sigma=0.25, eps=0.0, epochs=1, batch_size=64, num_noise=1, lr=0.05,
              weight_decay=1e-3, seed=3)
    sgd = adversarial_calibration_training(noisy_model, x, y, optimizer="sgd", momentum=0.9, **kw).model
    adam = adversarial_calibration_training(noisy_model, x, y, **kw).model
    ref = copy.deepcopy(noisy_model)
    gen = make_generator(3, None, torch.device("cpu"))
    perm = torch.randperm(64, generator=make_generator(4, None, torch.device("cpu")))
    noise = 0.25 * torch.randn((64, 1) + tuple(x.shape[1:]), generator=gen, dtype=x.dtype)
    ref.train()
    logits = ref((x[perm][:, None] + noise).flatten(0, 1))
    loss = torch.nn.functional.cross_entropy(logits, torch.as_tensor(y)[perm])
    grads = torch.autograd.grad(loss, list(ref.parameters()))
    for p, g, q, r in zip(ref.parameters(), grads, sgd.parameters(), adam.parameters(), strict=True):
        want = p.detach() - 0.05 * (g + 1e-3 * p.detach())
        assert torch.allclose(q, want, atol=1e-6)
        assert not torch.allclose(r, want, atol=1e-6)
    with pytest.raises(ValueError, match="optimizer"):
        adversarial_calibration_training(noisy_model, x, y, optimizer="rmsprop", **kw)
    with pytest.raises(ValueError, match="momentum"):
        adversarial_calibration_training(noisy_model, x, y, optimizer="sgd", momentum=1.5, **kw)
