import math

import numpy as np
import pytest
import scipy.stats
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from uncspan import (
    DeepEnsemble,
    MCDropoutModel,
    entropy,
    entropy_from_logits,
    epistemic_decomposition,
    max_softmax_probability,
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-20, 20), min_size=2, max_size=12))
def test_entropy_matches_scipy_and_bounds(logits):
    z = torch.tensor(logits, dtype=torch.float64)
    p = torch.softmax(z, -1)
    h = float(entropy(p))
    assert h == pytest.approx(scipy.stats.entropy(p.numpy()), abs=1e-9)
    assert float(entropy_from_logits(z)) == pytest.approx(h, abs=1e-9)
    assert -1e-12 <= h <= math.log(len(logits)) + 1e-12


def test_entropy_extremes_numpy_in_numpy_out():
    p = np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]])
    h = entropy(p)
    assert isinstance(h, np.ndarray)
    np.testing.assert_allclose(h, [math.log(4), 0.0], atol=1e-12)
    np.testing.assert_allclose(max_softmax_probability(p), [0.25, 1.0])


def test_entropy_from_extreme_logits_is_finite():
    z = torch.tensor([[1e7, 0.0, -1e7], [1e-3, 0.0, 0.0]])
    h = entropy_from_logits(z)
    assert torch.isfinite(h).all()
    assert float(h[0]) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("bad", [np.array([0.5, 0.6]), np.array([1.0]), np.array([-0.1, 1.1])])
def test_entropy_rejects_bad_probs(bad):
    with pytest.raises(ValueError, match="probs"):
        entropy(bad)
    with pytest.raises(TypeError, match="probs"):
        entropy("0.5,0.5")


def test_epistemic_decomposition_reference_values():
    # identical members: no disagreement -> MI 0; two confident members disagreeing -> MI = log 2
    same = np.tile(np.array([[[0.7, 0.3]]]), (5, 1, 1))
    d = epistemic_decomposition(same)
    np.testing.assert_allclose(d.mutual_information, 0.0, atol=1e-12)
    np.testing.assert_allclose(d.total, scipy.stats.entropy([0.7, 0.3]))
    opp = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    d = epistemic_decomposition(opp)
    np.testing.assert_allclose(d.mutual_information, math.log(2))
    np.testing.assert_allclose(d.expected_entropy, 0.0)
    np.testing.assert_allclose(d.total, d.expected_entropy + d.mutual_information)
    assert set(d.to_dict()) == {"total", "expected_entropy", "mutual_information"}
    with pytest.raises(ValueError, match="member_probs"):
        epistemic_decomposition(np.ones((3, 2)) / 2)


def test_deep_ensemble_is_bayesian_model_average(make_linear):
    members = [make_linear(4, 3, s) for s in range(3)]
    ens = DeepEnsemble(members)
    x = torch.rand(5, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        mean_p = torch.stack([torch.softmax(m(x), -1) for m in members]).mean(0)
        np.testing.assert_allclose(torch.softmax(ens(x), -1).numpy(), mean_p.numpy(), atol=1e-6)
    d = ens.decompose(x)
    assert (d.mutual_information > 0).all()
    with pytest.raises(ValueError, match="members"):
        DeepEnsemble([members[0]])


def _dropout_net():
    g = torch.Generator().manual_seed(1)
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 3))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return net.eval()


def test_mc_dropout_deterministic_and_leaves_global_rng_alone(make_linear):
    net = _dropout_net()
    x = torch.rand(6, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    mc = MCDropoutModel(net, n_samples=8, seed=3)
    state = torch.get_rng_state()
    a, b = mc(x), mc(x)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a, b)
    assert not net.training
    d = mc.decompose(x)
    assert (d.mutual_information > 1e-4).all()  # dropout masks disagree
    other = MCDropoutModel(net, n_samples=8, seed=4)(x)
    assert not torch.allclose(a, other)
    with pytest.raises(ValueError, match="dropout"):
        MCDropoutModel(make_linear(4, 3, 0))


def test_attacks_run_on_bayesian_wrappers(make_linear):
    """Ensembles and MC-dropout are modules returning log BMA probabilities, so the attacks apply and the
    epistemic split can be read at the adversarial point."""
    from uncspan import OverConfidenceAttack, UnderConfidenceAttack

    ens = DeepEnsemble([make_linear(4, 3, s) for s in range(3)]).eval()
    x = 0.3 + 0.4 * torch.rand(8, 1, 2, 2, generator=torch.Generator().manual_seed(2))
    over = OverConfidenceAttack(steps=30)(ens, x, 0.1)
    under = UnderConfidenceAttack(steps=30)(ens, x, 0.1)
    assert over.entropy_adv.mean() < over.entropy_clean.mean() < under.entropy_adv.mean()
    d = ens.decompose(over.x_adv)
    np.testing.assert_allclose(d.total, over.entropy_adv, rtol=1e-5, atol=1e-6)
    mc = MCDropoutModel(_dropout_net(), n_samples=4, seed=0).eval()
    a = UnderConfidenceAttack(steps=5)(mc, x, 0.1)
    b = UnderConfidenceAttack(steps=5)(mc, x, 0.1)
    np.testing.assert_array_equal(a.entropy_adv, b.entropy_adv)  # fixed masks: deterministic target


def test_mc_dropout_estimate_does_not_depend_on_batch_size():
    """Issue 14, defect 4: the dropout masks are drawn per MC sample and shared by every input, so each
    input's estimate is a function of that input alone: any batching gives the same output."""
    net = _dropout_net()
    x = torch.rand(10, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    mc = MCDropoutModel(net, n_samples=6, seed=5)
    full = mc(x)
    for bs in (1, 3, 4):
        parts = torch.cat([mc(x[i : i + bs]) for i in range(0, 10, bs)])
        torch.testing.assert_close(parts, full, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(mc(x.flip(0)).flip(0), full, rtol=1e-6, atol=1e-6)  # order does not matter


def test_mc_dropout_wrapper_starts_in_eval_mode_and_keeps_batchnorm_frozen():
    import warnings

    from uncspan import OverConfidenceAttack

    g = torch.Generator().manual_seed(2)
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.3),
                        nn.Linear(16, 3))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
        net[2].running_mean.copy_(torch.randn(16, generator=g))
    net.train()  # the user hands over a model in training mode
    mc = MCDropoutModel(net, n_samples=4, seed=0)
    assert not mc.training
    stats = net[2].running_mean.clone()
    x = torch.rand(6, 1, 2, 2, generator=g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "training mode" warning from the attack
        OverConfidenceAttack(steps=2)(mc, x, 0.1)
    assert torch.equal(net[2].running_mean, stats)  # batch norm used its running statistics


def test_mc_dropout_masks_drop_the_configured_fraction():
    """Each MC sample zeroes a Binomial(width, p) number of units of a dropout layer: the pooled fraction's
    Clopper-Pearson 95 % interval contains p."""
    p, width, m = 0.3, 400, 50
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, width), nn.Dropout(p), nn.Linear(width, 2))
    with torch.no_grad():
        net[1].weight.zero_()
        net[1].bias.fill_(1.0)  # every unit outputs 1 before dropout
    seen = []
    net[3].register_forward_pre_hook(lambda mod, inp: seen.append(inp[0].detach()))  # what dropout passed on
    MCDropoutModel(net, n_samples=m, seed=0)(torch.zeros(3, 1, 2, 2))
    out = torch.stack(seen)  # (M, 3, width)
    assert torch.equal(out[:, 0], out[:, 1])  # the same mask for every input of one MC sample
    dropped = int((out[:, 0] == 0).sum())
    ci = scipy.stats.binomtest(dropped, m * width).proportion_ci(0.95)
    assert ci.low <= p <= ci.high
    kept = out[:, 0][out[:, 0] != 0]
    torch.testing.assert_close(kept, torch.full_like(kept, 1 / (1 - p)))  # inverted-dropout scaling
