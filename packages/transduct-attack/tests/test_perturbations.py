"""Figure 1(b, c)'s perturbations (appendix A.6): Carlini-Wagner L2 against the closed-form minimal L2 distance of a
linear model, and the common corruptions (range, severity ordering, reference formulas); URejectron's sweep of a
perturbation outside the L∞ game."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

import transduct_attack as ta
from transduct_attack.perturbations import SEVERITIES, corrupt, cw_l2


def _linear(seed: int = 0, d: int = 16, k: int = 3) -> tuple[nn.Module, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lin = nn.Linear(d, k)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(k, d, generator=g))
        lin.bias.copy_(torch.randn(k, generator=g))
    model = nn.Sequential(nn.Flatten(), lin)
    x = 0.4 + 0.2 * torch.rand(40, 1, 4, 4, generator=g)  # inside the box, far from its faces
    with torch.no_grad():
        y = model(x).argmax(1)
    return model, x, y


def _min_l2(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The exact minimal L2 distance from each x to the region another class wins without the box constraint (the
    distance to the nearest hyperplane z_y = z_j, margin_j / ‖w_y − w_j‖), and whether that nearest point lies in
    [0, 1] (then it is the minimum with the box too)."""
    lin = model[1]
    w, b = lin.weight.detach(), lin.bias.detach()
    z = x.flatten(1) @ w.T + b
    dist, inside = [], []
    for i in range(x.shape[0]):
        yi = int(y[i])
        d, j = min((float((z[i, yi] - z[i, j]) / (w[yi] - w[j]).norm()), j) for j in range(w.shape[0]) if j != yi)
        u = (w[j] - w[yi]) / (w[j] - w[yi]).norm()
        point = x[i].flatten() + d * u
        dist.append(d)
        inside.append(bool((point >= 0).all() and (point <= 1).all()))
    return torch.tensor(dist), torch.tensor(inside)


def test_cw_reaches_the_closed_form_minimal_l2_distance_of_a_linear_model():
    model, x, y = _linear()
    bound, inside = _min_l2(model, x, y)
    assert inside.sum() >= 10
    adv = cw_l2(model, x, y, steps=200, binary_search_steps=6, lr=0.01)
    with torch.no_grad():
        fooled = model(adv).argmax(1).ne(y)
    dist = (adv - x).flatten(1).norm(dim=1)
    assert fooled.all()
    ratio = dist / bound
    # never below the exact minimum (any adversarial point crosses a hyperplane), and close to it where that
    # minimum lies in the box (Adam in tanh space does not reach the kink exactly: 1.09 at worst, 1.02 on average,
    # with these settings)
    assert float(ratio.min()) >= 1 - 1e-4
    assert float(ratio[inside].max()) <= 1.15 and float(ratio[inside].mean()) <= 1.05, ratio[inside]
    assert float(adv.min()) >= 0 and float(adv.max()) <= 1
    # the search over c matters: with c fixed at a small value no point is fooled, and the clean x comes back
    weak = cw_l2(model, x, y, c=1e-3, steps=50, binary_search_steps=1)
    with torch.no_grad():
        assert model(weak).argmax(1).eq(y).all()
    assert torch.equal(weak, x)
    assert torch.equal(cw_l2(model, x, y, steps=20, binary_search_steps=2),
                       cw_l2(model, x, y, steps=20, binary_search_steps=2))  # deterministic


def test_cw_checks_its_arguments_before_any_work():
    model, x, y = _linear()
    with pytest.raises(ValueError, match="c"):
        cw_l2(model, x, y, c=0.0)
    with pytest.raises(ValueError, match="kappa"):
        cw_l2(model, x, y, kappa=-1.0)
    with pytest.raises(ValueError, match="binary_search_steps"):
        cw_l2(model, x, y, binary_search_steps=0)
    with pytest.raises(ValueError, match="y"):
        cw_l2(model, x, y[:3])


@pytest.mark.parametrize("kind", list(SEVERITIES))
def test_corruptions_keep_the_range_and_grow_with_severity(kind):
    g = torch.Generator().manual_seed(0)
    blocks = torch.rand(16, 1, 7, 7, generator=g)
    x = torch.nn.functional.interpolate(blocks, size=(28, 28), mode="nearest")  # structured images in [0, 1]
    dist = []
    for s in range(1, 6):
        out = corrupt(x, kind=kind, severity=s, generator=torch.Generator().manual_seed(1))
        assert out.shape == x.shape and float(out.min()) >= 0 and float(out.max()) <= 1
        dist.append(float((out - x).flatten(1).norm(dim=1).mean()))
    assert all(a < b for a, b in zip(dist, dist[1:], strict=False)), dist
    assert dist[0] > 0


def test_corruptions_match_their_reference_formulas():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(4, 1, 9, 9, generator=g)
    assert torch.allclose(corrupt(x, kind="brightness", severity=1), (x + 0.1).clamp(max=1))
    mean = x.mean(dim=(2, 3), keepdim=True)
    assert torch.allclose(corrupt(x, kind="contrast", severity=2), ((x - mean) * 0.3 + mean).clamp(0, 1))
    noise = torch.randn(x.shape, generator=torch.Generator().manual_seed(5))
    assert torch.allclose(corrupt(x, kind="gaussian_noise", severity=3, generator=torch.Generator().manual_seed(5)),
                          (x + 0.18 * noise).clamp(0, 1))
    # the blur against scipy's gaussian filter (edges replicated, truncated at 4σ), as skimage's gaussian runs it
    from scipy.ndimage import gaussian_filter

    ref = np.stack([gaussian_filter(im[0].numpy().astype(np.float64), sigma=2.0, mode="nearest", truncate=4.0)
                    for im in x])
    got = corrupt(x, kind="gaussian_blur", severity=2)[:, 0].numpy()
    assert np.allclose(got, ref, atol=1e-5)
    # colour: brightness raises the HSV value and keeps hue and saturation (channel ratios)
    rgb = torch.rand(2, 3, 5, 5, generator=g) * 0.5 + 0.1
    out = corrupt(rgb, kind="brightness", severity=1)
    assert torch.allclose(out.amax(1), rgb.amax(1) + 0.1)
    assert torch.allclose(out / out.amax(1, keepdim=True), rgb / rgb.amax(1, keepdim=True), atol=1e-6)
    with pytest.raises(ValueError, match="generator"):
        corrupt(x, kind="gaussian_noise")
    with pytest.raises(ValueError, match="severity"):
        corrupt(x, severity=6)
    with pytest.raises(ValueError, match="kind"):
        corrupt(x, kind="fog")


def test_urejectron_rejects_a_brightness_shift_and_sweeps_outside_the_game(digits, mlp_std):
    """Figure 1(c) on digits: the discriminator trained on the brightened test batch rejects the brightened points
    more often than the clean ones; the curve's numbers are its per-point records, the same seed gives the same
    curve, and perturb's output must stay an image in [0, 1]."""
    xtr, _, xte, yte = digits
    urej = ta.URejectron(mlp_std, xtr[:300], epochs=3, batch_size=64)
    x, y = xte[:60], yte[:60]
    bright = lambda a, b, g: corrupt(a, kind="brightness", severity=3)  # noqa: E731
    curve = ta.perturbed_rejection_curve(bright, urej, x, y, thresholds=[0.3, 0.5, 0.7], name="bright", seed=4)
    assert curve.n == 60 and curve.attack == "bright"
    for t, err, rej in zip(curve.thresholds, curve.error_accepted, curve.rejection_rate, strict=True):
        assert curve.errors_at(t).mean() == err and curve.rejected_at(t, perturbed=False).mean() == rej
    assert curve.rejected_at(0.5).mean() > curve.rejected_at(0.5, perturbed=False).mean() + 0.3
    again = ta.perturbed_rejection_curve(bright, urej, x, y, thresholds=[0.3, 0.5, 0.7], name="bright", seed=4)
    assert again == curve
    with pytest.raises(ValueError, match="perturb"):
        ta.perturbed_rejection_curve(lambda a, b, g: a + 2, urej, x, y, thresholds=[0.5], name="bad")
    with pytest.raises(TypeError, match="URejectron"):
        ta.perturbed_rejection_curve(bright, ta.StaticDefense(mlp_std), x, y, thresholds=[0.5], name="bad")
    assert math.isfinite(sum(curve.adv_log_p_test))
