"""Attacks: independent optima on linear models, best-iterate property, constraints, determinism, errors."""

import math
import warnings

import numpy as np
import pytest
import scipy.optimize
import torch
import torch.nn.functional as F
from torch import nn

from uncspan import MisclassificationAttack, OverConfidenceAttack, UnderConfidenceAttack, entropy_from_logits


def _binary_entropy_of_margin(m):
    p = 1.0 / (1.0 + np.exp(-np.abs(m)))
    return -(p * np.log(p) + (1 - p) * np.log1p(-p))


def _interior_inputs(n, d, seed):
    g = torch.Generator().manual_seed(seed)
    return (0.3 + 0.4 * torch.rand(n, 1, 1, d, generator=g)).float()


@pytest.mark.parametrize("norm", ["Linf", "L2"])
def test_two_class_linear_closed_form(make_linear, norm):
    """For z = Wx + b with 2 classes, the margin m = (w1−w2)·x + (b1−b2) moves by exactly
    eps·||w1−w2||_1 (L∞) or eps·||w1−w2||_2 (L2) inside the ball (the box is inactive here), so the entropy
    range is closed-form: min at |m0| + r, max at max(|m0| − r, 0)."""
    d, eps = 8, 0.05
    model = make_linear(d, 2, seed=0)
    x = _interior_inputs(64, d, seed=1)
    w = model[1].weight.detach().double()
    b = model[1].bias.detach().double()
    dw = (w[0] - w[1]).numpy()
    m0 = (x.flatten(1).double() @ (w[0] - w[1]) + (b[0] - b[1])).numpy()
    r = eps * (np.abs(dw).sum() if norm == "Linf" else np.linalg.norm(dw))
    h_min = _binary_entropy_of_margin(np.abs(m0) + r)
    h_max = _binary_entropy_of_margin(np.maximum(np.abs(m0) - r, 0.0))
    over = OverConfidenceAttack()(model, x, eps, norm=norm)
    under = UnderConfidenceAttack()(model, x, eps, norm=norm)
    np.testing.assert_allclose(over.entropy_adv, h_min, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(under.entropy_adv, h_max, rtol=1e-3, atol=1e-6)
    assert (under.entropy_adv > over.entropy_adv).all()
    # both extremes really differ from the clean entropy for this budget
    assert (h_max - h_min).min() > 0.01


def _convex_reference(model, x0, eps, goal):
    """Global optimum of the (convex, for a linear model) attack loss over the box
    [x0−eps, x0+eps] ∩ [0,1] by scipy's L-BFGS-B — independent of the package's optimiser."""
    w = model[1].weight.detach().double().numpy()
    b = model[1].bias.detach().double().numpy()
    target = int(np.argmax(w @ x0 + b))

    def f(v):
        z = w @ v + b
        zmax = z.max()
        lse = zmax + np.log(np.exp(z - zmax).sum())
        p = np.exp(z - lse)
        if goal == "over":
            return lse - z[target], w.T @ (p - np.eye(len(z))[target])
        return lse - z.mean(), w.T @ (p - 1.0 / len(z))

    bounds = list(zip(np.maximum(x0 - eps, 0), np.minimum(x0 + eps, 1), strict=True))
    res = scipy.optimize.minimize(f, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                                  options={"ftol": 1e-14, "gtol": 1e-12, "maxiter": 5000})
    z = w @ res.x + b
    return res.fun, float(entropy_from_logits(torch.tensor(z)))


@pytest.mark.parametrize("optimizer", ["pgd", "apgd"])
def test_multiclass_linear_reaches_convex_optimum(make_linear, optimizer):
    d, k, eps = 16, 4, 0.04
    model = make_linear(d, k, seed=3, scale=0.8)
    g = torch.Generator().manual_seed(5)
    x = torch.rand(24, 1, 4, 4, generator=g)  # includes pixels near the box edges
    for goal, attack in (("over", OverConfidenceAttack(optimizer=optimizer)),
                         ("under", UnderConfidenceAttack(optimizer=optimizer))):
        res = attack(model, x, eps)
        for i in range(x.shape[0]):
            ref_loss, ref_h = _convex_reference(model, x[i].flatten().double().numpy(), eps, goal)
            assert res.loss[i] >= ref_loss - 1e-6  # nothing beats the global optimum
            if goal == "over":
                # the lowest-entropy iterate is also the loss optimum (f_ŷ → 1 minimises both)
                assert res.loss[i] <= ref_loss + 1e-3 * max(1.0, abs(ref_loss))
                assert res.entropy_adv[i] <= ref_h + 1e-3 * max(ref_h, 1e-3)
            else:
                # for K > 2 the max-entropy point and the Eq. 11 optimum differ slightly; the kept
                # (highest-entropy) iterate must be at least as uncertain as the Eq. 11 optimum
                assert res.entropy_adv[i] >= ref_h - 1e-4


def test_best_iterate_is_kept_not_last(std_model, digits):
    """An independent plain PGD loop records every iterate; the attack must return the minimum entropy
    seen (clean input included), and a big step makes the last iterate worse for some samples."""
    _, _, xte, _ = digits
    x = xte[:40]
    eps, step, steps = 0.2, 0.08, 12
    res = OverConfidenceAttack(steps=steps, step_size=step)(std_model, x, eps)
    with torch.no_grad():
        logits = std_model(x)
    target = logits.argmax(-1)
    hist = [entropy_from_logits(logits.double())]
    xa = x.clone()
    for _ in range(steps):
        xa.requires_grad_(True)
        loss = F.cross_entropy(std_model(xa), target, reduction="sum")
        gr = torch.autograd.grad(loss, xa)[0]
        xa = torch.min(torch.max(xa.detach() - step * gr.sign(), x - eps), x + eps).clamp(0, 1)
        with torch.no_grad():
            hist.append(entropy_from_logits(std_model(xa).double()))
    hist = torch.stack(hist).numpy()
    np.testing.assert_allclose(res.entropy_adv, hist.min(0), rtol=1e-4, atol=1e-7)
    assert (hist[-1] > hist.min(0) * (1 + 1e-3) + 1e-9).any()
    assert (res.best_step < steps + 1).any()


@pytest.mark.parametrize("norm", ["Linf", "L2"])
def test_constraints_and_input_not_mutated(std_model, digits, norm):
    _, _, xte, _ = digits
    x = xte[:30].clone()
    before = x.clone()
    eps = 0.1 if norm == "Linf" else 0.5
    for attack in (OverConfidenceAttack(steps=10, random_start=True), UnderConfidenceAttack(steps=10, optimizer="apgd", random_start=True),
                   UnderConfidenceAttack(steps=5, restarts=1, objective=("cross_entropy", "entropy"))):
        res = attack(std_model, x, eps, norm=norm, seed=0)
        assert torch.equal(x, before)
        delta = (res.x_adv - x).flatten(1)
        size = delta.abs().max(1).values if norm == "Linf" else delta.norm(dim=1)
        assert (size <= eps + 1e-5).all()
        assert res.x_adv.min() >= 0 and res.x_adv.max() <= 1
        with torch.no_grad():
            h = entropy_from_logits(std_model(res.x_adv).double()).numpy()
        np.testing.assert_allclose(h, res.entropy_adv, rtol=1e-5, atol=1e-7)
    over = OverConfidenceAttack(steps=10)(std_model, x, eps, norm=norm)
    under = UnderConfidenceAttack(steps=10)(std_model, x, eps, norm=norm)
    assert (over.entropy_adv <= over.entropy_clean + 1e-9).all()
    assert (under.entropy_adv >= under.entropy_clean - 1e-9).all()
    # the stabilising attack never flips the prediction it stabilises
    assert (over.pred_adv == over.pred_clean).all()


def test_determinism_under_seed(std_model, digits):
    _, _, xte, _ = digits
    x = xte[:20]
    attack = UnderConfidenceAttack(steps=8, random_start=True)
    state = torch.get_rng_state()
    a = attack(std_model, x, 0.1, seed=7)
    b = attack(std_model, x, 0.1, seed=7)
    c = attack(std_model, x, 0.1, seed=8)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a.x_adv, b.x_adv)
    np.testing.assert_array_equal(a.entropy_adv, b.entropy_adv)
    assert not torch.equal(a.x_adv, c.x_adv)


def test_batching_and_per_sample_budget(std_model, digits):
    _, _, xte, _ = digits
    x = xte[:12]
    full = UnderConfidenceAttack(steps=6)(std_model, x, 0.1)
    single = UnderConfidenceAttack(steps=6, batch_size=1)(std_model, x, 0.1)
    np.testing.assert_allclose(full.entropy_adv, single.entropy_adv, rtol=1e-5, atol=1e-7)
    rs_full = UnderConfidenceAttack(steps=6, random_start=True, optimizer="apgd")(std_model, x, 0.1, seed=1)
    rs_single = UnderConfidenceAttack(steps=6, random_start=True, optimizer="apgd", batch_size=5)(std_model, x, 0.1, seed=1)
    np.testing.assert_allclose(rs_full.entropy_adv, rs_single.entropy_adv, rtol=1e-5, atol=1e-7)
    vec = UnderConfidenceAttack(steps=6)(std_model, x, torch.full((12,), 0.1))
    np.testing.assert_allclose(full.entropy_adv, vec.entropy_adv, rtol=1e-6, atol=1e-8)
    zero = UnderConfidenceAttack(steps=6)(std_model, x, 0.0)
    np.testing.assert_allclose(zero.entropy_adv, zero.entropy_clean, atol=1e-7)
    d = full.to_dict()
    assert d["goal"] == "under" and len(d["entropy_adv"]) == 12


@pytest.mark.parametrize("which", ["std_model", "at_model"])
def test_apgd_beats_pgd_on_under_confidence(which, digits, request):
    """The adaptive step + momentum option reaches a higher mean entropy than plain PGD (same 50-step
    budget, same Eq. 11 objective) on both digits models; measured gap ≈ 0.01–0.03 nats."""
    model = request.getfixturevalue(which)
    _, _, xte, _ = digits
    x = xte[:150]
    pgd = UnderConfidenceAttack(steps=50)(model, x, 0.1)
    apgd = UnderConfidenceAttack(steps=50, optimizer="apgd")(model, x, 0.1)
    assert apgd.entropy_adv.mean() > pgd.entropy_adv.mean() + 0.005


def test_direct_entropy_objective_reaches_higher_entropy(at_model, digits):
    _, _, xte, _ = digits
    x = xte[:100]
    ce = UnderConfidenceAttack(steps=30)(at_model, x, 0.1)
    ent = UnderConfidenceAttack(steps=30, objective="entropy")(at_model, x, 0.1)
    assert ent.entropy_adv.mean() > ce.entropy_adv.mean() + 0.02
    with pytest.raises(ValueError, match="objective"):
        UnderConfidenceAttack(objective="kl")


def test_misclassification_attack_lowers_accuracy(std_model, digits):
    _, _, xte, yte = digits
    x, y = xte[:100], yte[:100]
    res = MisclassificationAttack(steps=20)(std_model, x, 0.2, y=y)
    assert (res.pred_adv == y.numpy()).mean() < (res.pred_clean == y.numpy()).mean() - 0.2
    with pytest.raises(ValueError, match="y="):
        MisclassificationAttack(steps=2)(std_model, x, 0.1)


def test_zero_gradient_warning_and_a_model_in_train_mode_is_evaluated_in_eval_mode(make_linear):
    const = nn.Sequential(nn.Flatten(), nn.Linear(4, 3))
    with torch.no_grad():
        const[1].weight.zero_()
    x = torch.full((3, 1, 2, 2), 0.5)
    with pytest.warns(RuntimeWarning, match="gradients are zero"):
        OverConfidenceAttack(steps=2)(const.eval(), x, 0.1)
    # issue 25: a model in train mode is attacked in eval mode (no warning needed) and given back in train mode
    net = nn.Sequential(nn.Flatten(), nn.Linear(4, 3), nn.Dropout(0.5)).train()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = OverConfidenceAttack(steps=2)(net, x, 0.1)
    assert net.training and net[2].training
    b = OverConfidenceAttack(steps=2)(net.eval(), x, 0.1)
    np.testing.assert_array_equal(a.entropy_adv, b.entropy_adv)


@pytest.mark.parametrize(
    "kwargs, call, exc, match",
    [
        ({"optimizer": "adam"}, {}, ValueError, "optimizer"),
        ({"steps": -1}, {}, ValueError, "steps"),
        ({"step_size": 0.0}, {}, ValueError, "step_size"),
        ({"momentum": 1.5}, {}, ValueError, "momentum"),
        ({}, {"norm": "L1"}, ValueError, "norm"),
        ({}, {"eps": -0.1}, ValueError, "eps"),
        ({}, {"eps": float("nan")}, ValueError, "eps"),
        ({}, {"eps": [0.1, 0.2]}, ValueError, "eps"),
        ({"random_start": True}, {}, ValueError, "seed"),
        ({}, {"x": torch.full((2, 1, 2, 2), 2.0)}, ValueError, r"x must lie in \[0.0, 1.0\]"),
        ({}, {"x": torch.zeros((2, 1, 2, 2), dtype=torch.int64)}, TypeError, "floating"),
        ({}, {"x": np.zeros((2, 1, 2, 2))}, TypeError, "x must be a torch.Tensor"),
        ({}, {"model": lambda t: t}, TypeError, "model"),
        ({}, {"seed": 1.5}, TypeError, "seed"),
    ],
)
def test_bad_inputs(make_linear, kwargs, call, exc, match):
    args = {"model": make_linear(4, 3, 0), "x": torch.full((3, 1, 2, 2), 0.5), "eps": 0.1}
    extra = {k: call.pop(k) for k in list(call) if k in ("norm", "seed")}
    args.update(call)
    with pytest.raises(exc, match=match):
        OverConfidenceAttack(**kwargs)(args["model"], args["x"], args["eps"], **extra)


def test_log_uniform_reference_for_under_loss(make_linear):
    # the under-confidence loss (Eq. 11) is bounded below by log K, reached exactly at the uniform output
    model = make_linear(4, 5, 0, scale=1e-3)
    x = torch.full((2, 1, 2, 2), 0.5)
    res = UnderConfidenceAttack(steps=50)(model, x, 0.5)
    assert (res.loss >= math.log(5) - 1e-6).all()


def test_zero_dim_tensor_budget_is_a_scalar(std_model, digits):
    _, _, xte, _ = digits
    a = OverConfidenceAttack(steps=3)(std_model, xte[:5], torch.tensor(0.1))
    b = OverConfidenceAttack(steps=3)(std_model, xte[:5], 0.1)
    np.testing.assert_array_equal(a.entropy_adv, b.entropy_adv)


@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.75, 1.0])
def test_apgd_momentum_step_is_the_papers_update(alpha):
    """Croce & Hein (2020) Alg. 1: x + α(z − x) + (1 − α)(x − x_prev), written out in float64."""
    from uncspan._optim import momentum_step

    g = torch.Generator().manual_seed(3)
    x, x_prev, z = (torch.rand(5, 3, 4, 4, generator=g, dtype=torch.float64) for _ in range(3))
    before = [t.clone() for t in (x, x_prev, z)]
    ref = x + alpha * (z - x) + (1 - alpha) * (x - x_prev)
    torch.testing.assert_close(momentum_step(x, x_prev, z, alpha), ref, rtol=0, atol=1e-12)
    assert all(torch.equal(a, b) for a, b in zip(before, (x, x_prev, z), strict=True))  # the iterates are not written to
