"""Issue 14, defect 2: a RobustBench entry routed through timm loads offline from its checkpoint in
``model_dir`` (RobustBench itself calls ``timm.create_model(..., pretrained=True)``, which downloads)."""

import socket

import pytest
import torch
from torch import nn

from uncspan import load_robustbench_models

NAME = "Tiny2099Offline"  # RobustBench routes it to timm as "tiny2099offline_cifar10_linf"


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
def registered(monkeypatch):
    timm = pytest.importorskip("timm")
    from timm.models import _registry

    monkeypatch.setitem(_registry._model_entrypoints, "tiny2099offline_cifar10_linf", tiny2099offline_cifar10_linf)
    assert timm.is_model("tiny2099offline_cifar10_linf")


@pytest.fixture()
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_timm_routed_entry_loads_offline_from_model_dir(tmp_path, registered, no_network):
    from uncspan._compat import import_robustbench

    try:
        import_robustbench()
    except ImportError:
        pytest.skip("RobustBench extra not installed")
    g = torch.Generator().manual_seed(0)
    ref = TinyTimmNet()
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    folder = tmp_path / "cifar10" / "Linf"
    folder.mkdir(parents=True)
    torch.save({"state_dict": {f"module.{k}": v for k, v in ref.state_dict().items()}}, folder / f"{NAME}.pt")
    models, skipped = load_robustbench_models([NAME], tmp_path)
    assert skipped == {}
    model = models[NAME]
    assert not model.training
    x = torch.rand(4, 3, 8, 8, generator=g)
    with torch.no_grad():
        torch.testing.assert_close(model(x), ref(x))
