import pytest
import torch
from _fakes import Offset
from hypothesis import given, settings
from hypothesis import strategies as st

from transduct_attack import PGD, PGDEnsemble, cross_entropy, max_wrong_probability
from transduct_attack.pgd import ensemble_gradient, ensemble_objective


def _models(n):
    return [Offset(torch.randn(10, generator=torch.Generator().manual_seed(i))) for i in range(n)]


class TwoLayer(torch.nn.Module):
    def __init__(self, seed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.w1 = torch.nn.Parameter(torch.randn(32, 64, generator=g) / 8)
        self.w2 = torch.nn.Parameter(torch.randn(10, 32, generator=g) / 4)

    def forward(self, x):
        return torch.relu(x.flatten(1) @ self.w1.T) @ self.w2.T


@pytest.fixture()
def data():
    g = torch.Generator().manual_seed(0)
    return torch.rand(12, 1, 8, 8, generator=g), torch.randint(0, 10, (12,), generator=g)


@settings(max_examples=15, deadline=None)
@given(eps=st.floats(0.0, 0.5), seed=st.integers(0, 100))
def test_pgd_stays_in_ball_and_box(eps, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(5, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (5,), generator=g)
    x_adv = PGD(steps=3).run(_models(2), x, y, eps=eps, generator=g)
    assert float((x_adv - x).abs().max()) <= eps + 1e-6
    assert float(x_adv.min()) >= 0 and float(x_adv.max()) <= 1


def test_avg_gradient_equals_one_graph_reference(data):
    x, y = data
    models = [TwoLayer(s) for s in range(4)]
    xr = x.clone().requires_grad_(True)
    ref = torch.autograd.grad(sum(cross_entropy(m(xr), y).sum() for m in models) / 4, xr)[0]
    got = ensemble_gradient(models, x, y, cross_entropy, "avg")
    assert torch.allclose(got, ref, atol=1e-6)


def test_min_gradient_equals_one_graph_reference(data):
    x, y = data
    models = [TwoLayer(s) for s in range(4)]
    xr = x.clone().requires_grad_(True)
    ref = torch.autograd.grad(torch.stack([cross_entropy(m(xr), y) for m in models]).min(0).values.sum(), xr)[0]
    got = ensemble_gradient(models, x, y, cross_entropy, "min")
    assert torch.allclose(got, ref, atol=1e-6)
    vals = torch.stack([cross_entropy(m(x), y) for m in models])
    assert len(set(vals.argmin(0).tolist())) > 1  # several models are someone's minimum: the split is exercised
    # a position-aware model (DENT's per-sample affines) takes the whole batch with a masked loss: same gradient
    models[1].position_aware = True
    assert torch.allclose(ensemble_gradient(models, x, y, cross_entropy, "min"), ref, atol=1e-6)
    assert torch.allclose(ensemble_objective(models, x, y, cross_entropy, "min"), vals.min(0).values)
    assert torch.allclose(ensemble_objective(models, x, y, cross_entropy, "avg"), vals.mean(0), atol=1e-6)


def test_pgd_increases_loss_deterministic_and_no_mutation(data):
    x, y = data
    x0 = x.clone()
    models = [TwoLayer(0)]
    a = PGD(steps=10).run(models, x, y, eps=0.1, generator=torch.Generator().manual_seed(1))
    b = PGD(steps=10).run(models, x, y, eps=0.1, generator=torch.Generator().manual_seed(1))
    assert torch.equal(a, b) and torch.equal(x, x0)
    with torch.no_grad():
        assert float(cross_entropy(models[0](a), y).mean()) > float(cross_entropy(models[0](x), y).mean())


def test_batch_equals_samples_one_by_one(data):
    x, y = data
    solver = PGD(steps=5, random_start=False)
    batch = solver.run([TwoLayer(0)], x, y, eps=0.1, generator=torch.Generator())
    single = torch.cat([solver.run([TwoLayer(0)], x[i:i + 1], y[i:i + 1], eps=0.1, generator=torch.Generator())
                        for i in range(len(y))])
    assert torch.allclose(batch, single, atol=1e-6)


def test_pgd_ensemble_keeps_best_subroutine(data):
    x, y = data
    models = [TwoLayer(0), TwoLayer(1)]
    ens = PGDEnsemble(steps=4, n_untargeted=1, n_targeted=3, random_start=False)
    best = ens.run(models, x, y, eps=0.1, generator=torch.Generator(), aggregate="min")
    sub = PGD(steps=4, random_start=False)
    cands = [sub.run(models, x, y, eps=0.1, generator=torch.Generator(), aggregate="min", loss="cw")]
    cands += [sub.run(models, x, y, eps=0.1, generator=torch.Generator(), aggregate="min", loss="cw-targeted",
                      target=(y + s) % 10) for s in (1, 2, 3)]
    vals = torch.stack([ensemble_objective(models, c, y, max_wrong_probability, "min") for c in cands])
    got = ensemble_objective(models, best, y, max_wrong_probability, "min")
    assert torch.allclose(got, vals.max(0).values)


def test_bad_solver_arguments(data):
    x, y = data
    with pytest.raises(ValueError, match="steps"):
        PGD(steps=0)
    with pytest.raises(ValueError, match="loss"):
        PGD(loss="hinge")
    with pytest.raises(ValueError, match="aggregate"):
        PGD(steps=1).run(_models(1), x, y, eps=0.1, generator=torch.Generator(), aggregate="max")
    with pytest.raises(ValueError, match="eps"):
        PGD(steps=1).run(_models(1), x, y, eps=-1, generator=torch.Generator())


@pytest.mark.parametrize("scale", [1, 3])
def test_steps_scale_adds_steps_of_the_base_size(data, monkeypatch, scale):
    # A.1.3: GMSA-MIN multiplies the number of PGD steps by (i + 1) at a fixed step size; the default step
    # 2.5 * eps / steps must use the base ``steps``, not the scaled count (which would shrink every step).
    import transduct_attack.pgd as pgd_module

    x, y = data
    moves: list[float] = []
    project = pgd_module.project

    def spy(x_new, x_orig, **kw):
        moves.append(float((x_new - x_orig).abs().max()) if not moves else float("nan"))
        return project(x_new, x_orig, **kw)

    monkeypatch.setattr(pgd_module, "project", spy)
    PGD(steps=10, random_start=False).run([TwoLayer(0)], x, y, eps=0.2, steps_scale=scale,
                                         generator=torch.Generator().manual_seed(0))
    assert len(moves) == 10 * scale
    assert moves[0] == pytest.approx(2.5 * 0.2 / 10)
