"""Base models of the paper's CIFAR-10 DENT experiments from the RobustBench zoo (extra ``robustbench``).

Nothing is downloaded unless RobustBench itself is allowed to (the checkpoint must be in ``model_dir``
when offline). RobustBench 1.1.1 imports the module ``autoattack``, which the ``pyautoattack``
distribution installs under another name; the shared fix in ``robustsuite-common`` aliases it.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from torch import nn

from robustsuite_common import import_robustbench

__all__ = ["load_robustbench_model", "DENT_BASE_MODELS"]

#: RobustBench ids of the static base models of Table 2 (CIFAR-10, L∞)
DENT_BASE_MODELS: tuple[str, ...] = ("Wu2020Adversarial_extra", "Carmon2019Unlabeled", "Sehwag2020Hydra",
                                     "Wang2020Improving", "Hendrycks2019Using", "Wong2020Fast", "Ding2020MMA")


def load_robustbench_model(name: str, *, model_dir: str | Path = "./models", dataset: str = "cifar10",
                           threat_model: str = "Linf") -> nn.Module:
    """``robustbench.utils.load_model(name, ...)`` in eval mode (inputs in [0, 1], normalisation inside)."""
    try:
        import_robustbench(extra="transduct-attack[robustbench]")
        utils = importlib.import_module("robustbench.utils")
    except ImportError as exc:
        raise ImportError("load_robustbench_model needs the 'robustbench' extra: "
                          "pip install 'transduct-attack[robustbench]'") from exc
    return utils.load_model(name, model_dir=str(model_dir), dataset=dataset, threat_model=threat_model).eval()
