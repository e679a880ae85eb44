"""The one RobustBench loader: local checkpoints load offline (timm-routed entries too), a missing one is a
clear error naming where to put it, before RobustBench is imported."""

from __future__ import annotations

import sys

import pytest
import torch

from robustsuite_common.robustbench import RobustBenchError, checkpoint_path, load_robustbench_model
from robustsuite_common.testing import (
    TIMM_ENTRY,
    refuse_network,
    register_offline_timm_entry,
    write_timm_checkpoint,
)


@pytest.fixture()
def no_network(monkeypatch):
    refuse_network(monkeypatch)


def _robustbench():
    from robustsuite_common import import_robustbench

    try:
        return import_robustbench()
    except ImportError:
        pytest.skip("RobustBench not installed")


def test_missing_checkpoint_names_the_path_before_importing_robustbench(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "robustbench", None)  # importing it would fail
    with pytest.raises(RobustBenchError, match=r"cifar10/Linf/Standard\.pt"):
        load_robustbench_model("Standard", model_dir=tmp_path)
    with pytest.raises(ValueError, match="^dataset"):
        load_robustbench_model("Standard", model_dir=tmp_path, dataset="mnist")


def test_timm_routed_entry_loads_offline_from_model_dir(tmp_path, monkeypatch, no_network):
    _robustbench()
    pytest.importorskip("timm")
    register_offline_timm_entry(monkeypatch)
    g = torch.Generator().manual_seed(0)
    ref = write_timm_checkpoint(tmp_path, generator=g)
    assert checkpoint_path(tmp_path, TIMM_ENTRY) == tmp_path / "cifar10" / "Linf" / f"{TIMM_ENTRY}.pt"
    model = load_robustbench_model(TIMM_ENTRY, model_dir=tmp_path)
    assert not model.training
    x = torch.rand(4, 3, 8, 8, generator=g)
    with torch.no_grad():
        torch.testing.assert_close(model(x), ref(x))


def test_zoo_entry_loads_from_local_model_dir(tmp_path, no_network):
    _robustbench()
    from robustbench.model_zoo import model_dicts
    from robustbench.model_zoo.enums import BenchmarkDataset, ThreatModel

    name = "Ding2020MMA"  # the smallest CIFAR-10 L∞ architecture in the zoo
    arch = model_dicts[BenchmarkDataset.cifar_10][ThreatModel.Linf][name]["model"]()
    with torch.no_grad():
        for p in arch.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())) * 0.01)
    target = tmp_path / "cifar10" / "Linf" / f"{name}.pt"
    target.parent.mkdir(parents=True)
    torch.save(arch.state_dict(), target)
    model = load_robustbench_model(name, model_dir=tmp_path)
    x = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(model(x), arch.eval()(x), atol=1e-5, rtol=1e-4)
    with pytest.raises(RobustBenchError, match="no model"):
        (tmp_path / "cifar10" / "Linf" / "NoSuchModel2099.pt").write_bytes(b"")
        load_robustbench_model("NoSuchModel2099", model_dir=tmp_path)
