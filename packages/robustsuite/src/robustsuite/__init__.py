"""robustsuite umbrella: model and dataset loaders, embedded defaults, unified report and CLI.

The five method packages (zeroe_perturb, iortemp, uncspan, transduct_attack, certcal) are independent;
this package loads models and data for them, runs them as resumable units and merges their sections into
one report (see ARCHITECTURE.md).
"""

from importlib.metadata import version as _version

from .data import Dataset, Split
from .errors import ConfigError, DatasetSpecError, ModelSpecError, SpecError
from .loaders import load_dataset, load_model
from .models import TextClassifier
from .predict import predict_logits
from .report import Figure, Section, Table
from .runners import RunContext

__version__ = _version("robustsuite")
__all__ = [
    "ConfigError", "Dataset", "DatasetSpecError", "Figure", "ModelSpecError", "RunContext", "Section", "Split",
    "SpecError", "Table", "TextClassifier", "__version__", "load_dataset", "load_model", "predict_logits",
]
