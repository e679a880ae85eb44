"""The one RobustBench loader: a zoo model from a local ``model_dir``, offline.

RobustBench keeps checkpoints at ``<model_dir>/<dataset>/<threat_model>/<name>.pt`` (ensembles as
``<name>.pt_m0.pt`` ...). Two things go wrong offline with ``robustbench.utils.load_model`` alone:

- robustbench 1.1.1 imports ``autoattack``, which PyPI's ``pyautoattack`` installs under another name
  (:func:`robustsuite_common.alias_autoattack` fixes it);
- entries RobustBench routes through timm are created with ``pretrained=True``, which downloads weights even
  when the checkpoint is on disk. Those are built here by timm without weights and loaded from the local file
  (tensors only, ``weights_only=True``).

For the other entries RobustBench's own loader calls ``torch.load`` on the checkpoint: only use a
``model_dir`` you trust.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .autoattack_alias import import_robustbench
from .checks import check_choice

__all__ = ["DATASETS", "THREAT_MODELS", "checkpoint_path", "timm_name", "load_robustbench_model",
           "RobustBenchError"]

DATASETS = ("cifar10", "cifar100", "imagenet")
THREAT_MODELS = ("Linf", "L2", "corruptions")
_NUM_CLASSES = {"cifar10": 10, "cifar100": 100, "imagenet": 1000}


class RobustBenchError(ValueError):
    """A RobustBench model that cannot be loaded here (unknown name, no local checkpoint offline)."""


def checkpoint_path(model_dir: str | Path, name: str, dataset: str = "cifar10",
                    threat_model: str = "Linf") -> Path | None:
    """Where RobustBench keeps ``name``'s checkpoint under ``model_dir``; ``None`` when absent."""
    base = Path(model_dir) / dataset / threat_model
    for candidate in (base / f"{name}.pt", base / f"{name}.pt_m0.pt"):
        if candidate.is_file():
            return candidate
    return None


def timm_name(name: str, dataset: str = "cifar10", threat_model: str = "Linf") -> str | None:
    """The timm architecture RobustBench routes ``name`` to (lower-cased, ``-`` → ``_``, then
    ``_<dataset>_<threat>``), or ``None`` when timm has no such model or is not installed."""
    try:
        import timm
    except ImportError:
        return None
    candidate = f"{name.lower().replace('-', '_')}_{dataset.lower()}_{threat_model.lower()}"
    return candidate if timm.is_model(candidate) else None


def _load_timm(arch: str, path: Path, num_classes: int) -> Any:
    import timm
    import torch

    state = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state_dict", "model"):
        if isinstance(state, Mapping) and isinstance(state.get(key), Mapping):
            state = state[key]
    if not isinstance(state, Mapping):
        raise RobustBenchError(f"checkpoint {path} holds no state dict")
    state = {(k[len("module."):] if k.startswith("module.") else k): v for k, v in state.items()}
    model = timm.create_model(arch, num_classes=num_classes, pretrained=False)
    model.load_state_dict(state)
    return model


def load_robustbench_model(name: str, *, model_dir: str | Path, dataset: str = "cifar10",
                           threat_model: str = "Linf", allow_download: bool = False,
                           extra: str | None = None) -> Any:
    """RobustBench model ``name`` in eval mode (inputs in [0, 1], normalisation inside the model).

    Reads ``model_dir``; with ``allow_download=False`` (default) a missing checkpoint is a
    :class:`RobustBenchError` saying where to put it, before RobustBench is even imported. ``extra`` names
    the caller's extra in the ``ImportError`` when RobustBench is missing (``"uncspan[robustbench]"``).
    """
    check_choice("dataset", dataset, DATASETS)
    check_choice("threat_model", threat_model, THREAT_MODELS)
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a RobustBench model name, got {name!r}")
    path = checkpoint_path(model_dir, name, dataset, threat_model)
    if path is None and not allow_download:
        where = Path(model_dir) / dataset / threat_model / f"{name}.pt"
        raise RobustBenchError(f"RobustBench checkpoint of {name!r} not found at {where}; put it there (or pass "
                               "allow_download=True where the network allows)")
    rb = import_robustbench(extra=extra)
    from robustbench.model_zoo import model_dicts
    from robustbench.model_zoo.enums import BenchmarkDataset, ThreatModel

    zoo = model_dicts[BenchmarkDataset(dataset)].get(ThreatModel(threat_model), {})
    arch = timm_name(name, dataset, threat_model)
    if name not in zoo and arch is None:
        raise RobustBenchError(f"RobustBench has no model {name!r} for {dataset}/{threat_model}; known: "
                               f"{', '.join(sorted(zoo)[:12])}, ...")
    if arch is not None and path is not None:
        model = _load_timm(arch, path, _NUM_CLASSES[dataset])
    else:
        model = rb.utils.load_model(model_name=name, model_dir=str(model_dir), dataset=dataset,
                                    threat_model=threat_model)
    return model.eval()
