"""Base models of the paper's CIFAR-10 DENT experiments from the RobustBench zoo (extra ``robustbench``).

A thin wrapper of :func:`robustsuite_common.robustbench.load_robustbench_model` (the one RobustBench loader:
offline from a local ``model_dir``, timm-routed entries included); nothing is downloaded unless
``allow_download=True``.
"""

from __future__ import annotations

from pathlib import Path

from torch import nn

__all__ = ["load_robustbench_model", "DENT_BASE_MODELS"]

#: RobustBench ids of the static base models of Table 2 (CIFAR-10, L∞)
DENT_BASE_MODELS: tuple[str, ...] = ("Wu2020Adversarial_extra", "Carmon2019Unlabeled", "Sehwag2020Hydra",
                                     "Wang2020Improving", "Hendrycks2019Using", "Wong2020Fast", "Ding2020MMA")


def load_robustbench_model(name: str, *, model_dir: str | Path = "./models", dataset: str = "cifar10",
                           threat_model: str = "Linf", allow_download: bool = False) -> nn.Module:
    """RobustBench model ``name`` in eval mode (inputs in [0, 1], normalisation inside), from ``model_dir``."""
    from robustsuite_common.robustbench import load_robustbench_model as load

    return load(name, model_dir=model_dir, dataset=dataset, threat_model=threat_model,
                allow_download=allow_download, extra="transduct-attack[robustbench]")
