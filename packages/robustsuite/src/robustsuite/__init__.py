"""robustsuite umbrella: model and dataset loaders, embedded defaults, unified report and CLI.

The five method packages (zeroe_perturb, iortemp, uncspan, transduct_attack, certcal) are independent;
this package loads models (:mod:`robustsuite.zoo`) and data (:mod:`robustsuite.data`) for them, runs them as
resumable units (:mod:`robustsuite.run`, one adapter per method in :mod:`robustsuite.runners`, benchmarks as TOML
files in ``robustsuite/benchmarks``) and merges their sections into one report (:mod:`robustsuite.report`); see
docs/ARCHITECTURE.md. Names are imported on first use, so ``import robustsuite`` (and the CLI's ``--help``) does
not load torch.
"""

from importlib import import_module as _import_module
from importlib.metadata import version as _version

__version__ = _version("robustsuite")
_EXPORTS = {
    "Dataset": "data", "Split": "data", "UserDataset": "data", "align_labels": "data.labels",
    "ConfigError": "errors", "DatasetSpecError": "errors", "ModelSpecError": "errors", "SpecError": "errors",
    "load_dataset": "loaders", "load_model": "loaders", "predict_logits": "predict",
    "TextClassifier": "robustsuite_common.text",
    "Figure": "report", "Section": "report", "Table": "report", "RunContext": "run.context",
    "read_samples": "report.samples",
}
__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str):
    if name in _EXPORTS:
        module = _EXPORTS[name]  # a robustsuite submodule, or robustsuite_common's
        value = getattr(_import_module(module if module.startswith("robustsuite_common") else f".{module}", __name__),
                        name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'robustsuite' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
