"""Shared tiny models: a standard and a PGD-adversarially-trained CNN on sklearn's digits (seconds), and
random linear (softmax-regression) models whose attack optima are known independently."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import socket

import pytest
import torch
from torch import nn

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


TIMM_ENTRY = "Tiny2099Offline"  # RobustBench routes it to timm as "tiny2099offline_cifar10_linf"


class TinyTimmNet(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, num_classes)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def tiny2099offline_cifar10_linf(pretrained: bool = False, num_classes: int = 10, **kwargs):
    model = TinyTimmNet(num_classes)
    if pretrained:  # what a timm entry does: fetch the published weights
        state = torch.hub.load_state_dict_from_url("https://example.invalid/tiny2099offline.pt", progress=False)
        model.load_state_dict(state)
    return model


@pytest.fixture()
def registered_timm(monkeypatch):
    """A tiny timm entry that RobustBench routes the name Tiny2099Offline to (cifar10, Linf)."""
    timm = pytest.importorskip("timm")
    from timm.models import _registry

    monkeypatch.setitem(_registry._model_entrypoints, "tiny2099offline_cifar10_linf", tiny2099offline_cifar10_linf)
    assert timm.is_model("tiny2099offline_cifar10_linf")
    return TIMM_ENTRY, TinyTimmNet


@pytest.fixture()
def no_network(monkeypatch):
    """Every socket connection and name lookup fails."""
    def refuse(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
