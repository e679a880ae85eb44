"""Shared tiny models: a standard and a PGD-adversarially-trained CNN on sklearn's digits (seconds), and
random linear (softmax-regression) models whose attack optima are known independently."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")


import pytest
import torch
from torch import nn

from robustsuite_common.testing import refuse_network, register_offline_timm_entry
from uncspan._demo import load_digits_split, train_digits_model


@pytest.fixture(scope="session")
def digits():
    return load_digits_split(seed=0)


@pytest.fixture(scope="session")
def std_model(digits):
    xtr, ytr, _, _ = digits
    return train_digits_model(xtr, ytr, epochs=15, seed=0)


@pytest.fixture(scope="session")
def at_model(digits):
    xtr, ytr, _, _ = digits
    return train_digits_model(xtr, ytr, adversarial=True, eps=0.1, epochs=15, attack_steps=3, seed=0)


def linear_model(d: int, k: int, seed: int, scale: float = 1.0) -> nn.Module:
    """Softmax regression on flattened (N,1,h,w) inputs with seeded weights."""
    g = torch.Generator().manual_seed(seed)
    lin = nn.Linear(d, k)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(k, d, generator=g) * scale)
        lin.bias.copy_(torch.randn(k, generator=g) * 0.5)
    return nn.Sequential(nn.Flatten(), lin).eval()


@pytest.fixture(scope="session")
def make_linear():
    return linear_model


@pytest.fixture()
def registered_timm(monkeypatch):
    """A tiny timm entry that RobustBench routes the name Tiny2099Offline to (cifar10, Linf)."""
    pytest.importorskip("timm")
    return register_offline_timm_entry(monkeypatch)


@pytest.fixture()
def robustbench_extra():
    """RobustBench imported through robustsuite_common (this package's extra named); the test skipped without it."""
    from robustsuite_common import import_robustbench

    try:
        return import_robustbench(extra="uncspan[robustbench]")
    except ImportError:
        pytest.skip("RobustBench extra not installed")


@pytest.fixture()
def no_network(monkeypatch):
    """Every socket connection and name lookup fails."""
    refuse_network(monkeypatch)
