import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from robustsuite_common.projection import project
from uncspan._optim import apgd_checkpoints, random_start


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0), st.sampled_from(["Linf", "L2"]))
def test_projection_lands_in_ball_and_box_and_is_idempotent(seed, eps, norm):
    g = torch.Generator().manual_seed(seed)
    x0 = torch.rand(4, 1, 3, 3, generator=g, dtype=torch.float64)
    x = x0 + 3 * torch.randn(4, 1, 3, 3, generator=g, dtype=torch.float64)
    e = torch.full((4, 1, 1, 1), eps, dtype=torch.float64)
    p = project(x, x0, eps=e, norm=norm, linf="delta")
    d = (p - x0).flatten(1)
    size = d.abs().max(1).values if norm == "Linf" else d.norm(dim=1)
    assert (size <= eps + 1e-12).all()
    assert p.min() >= 0 and p.max() <= 1
    assert torch.allclose(project(p, x0, eps=e, norm=norm, linf="delta"), p)
    r = random_start(x0, e, norm, g)
    d = (r - x0).flatten(1)
    size = d.abs().max(1).values if norm == "Linf" else d.norm(dim=1)
    assert (size <= eps + 1e-12).all()


def test_apgd_checkpoints_follow_croce_hein():
    # p = 0, 0.22, 0.41, 0.57, 0.70, 0.80, 0.87, 0.93, 0.99, ... times the budget, rounded up
    assert apgd_checkpoints(100)[:8] == [22, 41, 57, 70, 80, 87, 93, 99]
    assert apgd_checkpoints(100)[-1] <= 100
