"""Standard AutoAttack through the shared call equals pyautoattack's own evaluation with the same seed."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from robustsuite_common.autoattack import autoattack
from robustsuite_common.testing import output_forms, snapshot

pyaa = pytest.importorskip("pyautoattack")


def tiny_model() -> nn.Module:
    g = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 10))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return model


def test_matches_pyautoattack_standard_with_the_same_seed_and_restores_everything():
    model = tiny_model().train()
    g = torch.Generator().manual_seed(1)
    x = torch.rand(12, 1, 4, 4, generator=g)
    y = model.eval()(x).argmax(1)
    y[:3] = (y[:3] + 1) % 10  # three points misclassified already
    model.train()
    before = snapshot(model)
    rng_before = torch.random.get_rng_state()
    res = autoattack(model, x, y, eps=0.05, seed=3, version="custom", attacks=["apgd-ce", "apgd-t"], n_iter=10)
    before.assert_same(model)
    assert torch.equal(torch.random.get_rng_state(), rng_before)
    # the same run directly through pyautoattack
    ref_model = tiny_model().eval()
    with torch.random.fork_rng():
        adv = pyaa.AutoAttack(ref_model, eps=0.05, norm="Linf", seed=3, version="custom",
                              attacks=["apgd-ce", "apgd-t"])
        adv.verbose = False
        for sub in (adv.apgd, adv.apgd_targeted, adv.fab):
            sub.n_iter = 10
        x_ref, _ = adv.run_standard_evaluation(x, y, batch_size=250)
    robust_ref = ref_model(x_ref).argmax(1) == y
    assert torch.equal(res.robust, robust_ref)
    assert not res.robust[:3].any() and res.robust_accuracy <= res.clean_correct.float().mean()
    assert (res.x_adv - x).abs().max() <= 0.05 + 1e-6
    assert "pyautoattack" in res.attack and "seed 3" in res.attack


@pytest.mark.parametrize("form", output_forms()[1:], ids=lambda f: f.name)
def test_accepts_every_output_form(form):
    model = tiny_model().eval()
    x = torch.rand(6, 1, 4, 4, generator=torch.Generator().manual_seed(2))
    y = model(x).argmax(1)
    a = autoattack(model, x, y, eps=0.05, seed=0, version="custom", attacks=["apgd-ce"], n_iter=5)
    b = autoattack(form.wrap(model), x, y, eps=0.05, seed=0, version="custom", attacks=["apgd-ce"], n_iter=5)
    assert torch.equal(a.robust, b.robust)


def test_bad_arguments_are_refused_before_any_work():
    model = tiny_model()
    x = torch.rand(4, 1, 4, 4)
    with pytest.raises(ValueError, match="^eps"):
        autoattack(model, x, torch.zeros(4, dtype=torch.long), eps=float("inf"))
    with pytest.raises(ValueError, match="^x"):
        autoattack(model, x * 255, torch.zeros(4, dtype=torch.long), eps=0.1)
    with pytest.raises(ValueError, match="^y"):
        autoattack(model, x, torch.zeros(5, dtype=torch.long), eps=0.1)
    with pytest.raises(ValueError, match="at least 4"):
        autoattack(nn.Sequential(nn.Flatten(), nn.Linear(16, 3)), x, torch.zeros(4, dtype=torch.long), eps=0.1)
    with pytest.raises(ValueError, match="^version"):
        autoattack(model, x, torch.zeros(4, dtype=torch.long), eps=0.1, version="fast")


def test_a_strided_batch_gives_the_result_of_its_contiguous_copy():
    """pyautoattack reshapes the input gradient with ``.view`` (APGD's DLR losses), which refuses the gradient of a
    transposed (non-contiguous) batch."""
    g = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.Flatten(), nn.Linear(32, 10)).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    x = torch.rand(6, 1, 4, 4, generator=g).transpose(2, 3)
    assert not x.is_contiguous()
    y = model(x).argmax(1)
    kw = {"eps": 0.05, "seed": 0, "version": "custom", "attacks": ["apgd-ce", "apgd-t"], "n_iter": 5}
    assert torch.equal(autoattack(model, x, y, **kw).robust, autoattack(model, x.contiguous(), y, **kw).robust)
