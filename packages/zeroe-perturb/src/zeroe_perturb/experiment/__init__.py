"""The Zéroe benchmark as an experiment (Eger & Benz 2020, §4): every attacker at every perturbation level on every
task type, with intervals over the items, the chance line and the paper's Table 5 ranking compared.

>>> from zeroe_perturb import experiment
>>> cfg = experiment.preset("demo")                                   # doctest: +SKIP
>>> result = experiment.run(experiment.Models(classifier=clf),        # doctest: +SKIP
...                         experiment.Data(classification=Split(texts, labels)), cfg)
>>> result.summary, result.tables["levels"], result.metric("kendall_tau_paper")   # doctest: +SKIP

- :class:`Config` groups the settings as the paper does (:class:`AttackConfig`, :class:`SeedsConfig`, the task
  types :class:`ClassificationConfig`, :class:`PairsConfig`, :class:`MultilabelConfig`, :class:`TaggingConfig`,
  :class:`HeadlineConfig`, :class:`DefenseConfig`, :class:`AuditConfig`); :data:`PRESETS` holds ``"demo"``, ``"paper"``
  and ``"audit"`` (the verdict's ``zeroe-noise`` check alone, in ``Result.checks``).
- :func:`run` takes :class:`Models` and :class:`Data` and returns a :class:`Result`; :func:`figures` draws it.
- The paper's reported values are data: :func:`paper_reference` (``data/paper_reference.json``).
"""

from .._reference import paper_reference
from ._config import (
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
from ._figures import figures
from ._inputs import Data, Models
from ._result import Result
from ._run import run

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
    "preset",
    "run",
]
