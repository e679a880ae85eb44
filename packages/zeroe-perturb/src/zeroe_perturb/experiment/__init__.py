"""The Zéroe benchmark as an experiment (Eger & Benz 2020, §4): every attacker at every perturbation level on every
task type, with intervals over the items, the chance line and the paper's Table 5 ranking compared.

>>> from zeroe_perturb import experiment
>>> cfg = experiment.preset("demo")                                   # doctest: +SKIP
>>> result = experiment.run(experiment.Models(classifier=clf),        # doctest: +SKIP
...                         experiment.Data(classification=Split(texts, labels)), cfg)
>>> result.summary, result.tables["levels"], result.metric("kendall_tau_paper")   # doctest: +SKIP

- :class:`Config` groups the settings as the paper does (:class:`AttackConfig`, :class:`SeedsConfig`, the task
  types :class:`ClassificationConfig`, :class:`PairsConfig`, :class:`MultilabelConfig`, :class:`TaggingConfig`,
  :class:`HeadlineConfig`, :class:`DefenseConfig`, :class:`AuditConfig`); :data:`PRESETS` holds ``"demo"``, ``"paper"``,
  ``"paper-cpu"`` and ``"audit"`` (the verdict's ``zeroe-noise`` check alone, in ``Result.checks``).
- :func:`run` takes :class:`Models` and :class:`Data` and returns a :class:`Result`; :func:`figures` draws it.
- The paper's reported values are data: :func:`paper_values` (``paper.json``; ``paper_reference`` is its
  deprecated old name).
"""

from __future__ import annotations

import warnings
from typing import Any

from robustsuite_common.contract import paper_values as _paper_values

from .config import (
    EXECUTION_FIELDS,
    PRESETS,
    AttackConfig,
    AuditConfig,
    ClassificationConfig,
    Config,
    DefenseConfig,
    HeadlineConfig,
    MultilabelConfig,
    PairsConfig,
    SeedsConfig,
    TaggingConfig,
    preset,
)
from .figures import figures
from .inputs import Data, Models
from .result import Result
from .run import run


def paper_values() -> dict[str, Any]:
    """The paper's reported values (``paper.json``): Table 5's harmfulness rankings, Table 3's defense ranking,
    Table 6's unshielded scores, the clean scores and the chance lines; a fresh dict on every call."""
    return _paper_values("zeroe_perturb.experiment")


def paper_reference() -> dict[str, Any]:
    """Deprecated name of :func:`paper_values` (kept one release)."""
    warnings.warn("zeroe_perturb.experiment.paper_reference() is deprecated; use paper_values()", DeprecationWarning,
                  stacklevel=2)
    return paper_values()


__all__ = [
    "EXECUTION_FIELDS",
    "PRESETS",
    "AttackConfig",
    "AuditConfig",
    "ClassificationConfig",
    "Config",
    "Data",
    "DefenseConfig",
    "HeadlineConfig",
    "Models",
    "MultilabelConfig",
    "PairsConfig",
    "Result",
    "SeedsConfig",
    "TaggingConfig",
    "figures",
    "paper_reference",
    "paper_values",
    "preset",
    "run",
]
