"""Issue 14, item 6: MUS, span and s-ECE as functions of ε."""

import json

import numpy as np
import pytest
import torch

from uncspan import EpsSweep, eps_sweep, match_images, open_set_split, plot_eps_sweep, uncertainty_span


def test_eps_sweep_rows_and_figure(std_model, digits, tmp_path):
    _, _, xte, yte = digits
    x, y = xte[:40], yte[:40]
    sw = eps_sweep(std_model, x, y, eps=[0.1, 0.0, 0.2], steps=6, seed=0)
    assert isinstance(sw, EpsSweep) and sw.eps == [0.0, 0.1, 0.2]
    clean, mid, big = sw.rows
    assert clean.mus_mean == 0.0 and clean.entropy_over == clean.entropy_clean == clean.entropy_under
    assert clean.sece_over == clean.sece_clean == clean.sece_under
    for r in sw.rows:
        assert r.mus_mean_ci_low <= r.mus_mean <= r.mus_mean_ci_high
        assert r.entropy_over <= r.entropy_clean <= r.entropy_under
    # the span widens with the budget: the 0.2 row's interval lies above the 0.1 row's mean
    assert big.mus_mean_ci_low > mid.mus_mean
    # each row is the uncertainty span at that budget
    ref = uncertainty_span(std_model, x, eps=0.1, steps=6, seed=0)
    assert mid.mus_mean == pytest.approx(ref.mus.mean)
    json.dumps(sw.to_dict())
    fig = plot_eps_sweep({"std": sw})
    assert len(fig.axes) == 3
    fig.savefig(tmp_path / "s.png")
    assert (tmp_path / "s.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="eps"):
        eps_sweep(std_model, x, y, eps=[])
    with pytest.raises(ValueError, match="name"):
        sw.column("nope")


def test_open_set_split_hand_case():
    x = torch.rand(6, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    y = torch.tensor([0, 3, 1, 2, 3, 1])
    xk, yk, xo, known = open_set_split(x, y, [2])
    assert known == (0, 1, 3)
    assert yk.tolist() == [0, 2, 1, 2, 1]
    assert torch.equal(xo, x[3:4]) and torch.equal(xk, x[[0, 1, 2, 4, 5]])
    with pytest.raises(ValueError, match="open_classes"):
        open_set_split(x, y, [7])
    with pytest.raises(ValueError, match="two classes"):
        open_set_split(x, y, [0, 1, 3])


def test_match_images_shapes_and_range():
    g = torch.Generator().manual_seed(0)
    small = torch.rand(5, 1, 8, 8, generator=g)
    up = match_images(small, (3, 28, 28))
    assert up.shape == (5, 3, 28, 28) and 0 <= float(up.min()) and float(up.max()) <= 1
    assert torch.equal(up[:, 0], up[:, 2])
    rgb = torch.rand(4, 3, 32, 32, generator=g)
    down = match_images(rgb, torch.zeros(1, 1, 16, 16))
    assert down.shape == (4, 1, 16, 16)
    # area resize of a 2x-downsample is the mean of each 2x2 block of the channel mean
    ref = rgb.mean(1, keepdim=True).unfold(2, 2, 2).unfold(3, 2, 2).mean((-1, -2))
    np.testing.assert_allclose(down.numpy(), ref.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="channels"):
        match_images(torch.rand(2, 2, 4, 4, generator=g), (3, 4, 4))
