"""The paper's evaluation as one experiment: Chen et al., *Towards Evaluating the Robustness of Neural Networks
Learned by Transduction* (ICLR 2022), Tables 1, 2, 3, 4, 6 and Figure 1, on the caller's models and data.

::

    from transduct_attack import experiment
    result = experiment.run(experiment.Models(standard=cnn, adversarial=cnn_at),
                            experiment.Data(train=train_split, test=test_split),
                            experiment.preset("demo"), store=experiment.MemoryStore())

The contract every method package's experiment follows (issue 34):

- ``config.py``: :class:`Config` groups the paper's hyper-parameters (:class:`ThreatConfig`, :class:`AttackConfig`,
  :class:`RobustnessConfig`, :class:`RMCConfig`, :class:`DENTConfig`, :class:`DANNConfig`, :class:`TADVConfig`,
  :class:`URejectronConfig`, :class:`AuditConfig`); :data:`PRESETS` names settings (``demo``, ``paper``,
  ``paper-cpu``), :func:`preset` returns one.
- ``inputs.py``: :class:`Models` (the standard and the adversarially trained base) and :class:`Data`.
- ``run.py``: :func:`run` plays every game of the selected tables (each game checkpointed in ``store``) and
  returns a :class:`Result` (``result.py``): tables with the paper's values beside ours, metrics with intervals,
  per-sample records, a summary written from the numbers, notes and warnings; :func:`shard_count` and
  :func:`run_shard` share the RMC games out between processes.
- ``figures.py``: :func:`figures` draws the result; ``paper.json``: the paper's values (:func:`paper_values`).

Each defense's part of the evaluation is one module, its recipe on the caller's data beside the experiment's
tables: :mod:`.rmc` (Tables 1, 6), :mod:`.dent` (Table 2), :mod:`.retraining` (DANN, TADV: Tables 3, 4),
:mod:`.urejectron` (Figure 1), :mod:`.audit` (the verdict's ``transductive-gain`` check), :mod:`.effects` (the
paper's headline effects).
"""

from __future__ import annotations

from robustsuite_common.experiment import DirStore, MemoryStore, Split, Store

from ._common import paper_values
from .config import (
    PRESETS,
    TABLES,
    AttackConfig,
    AuditConfig,
    Config,
    DANNConfig,
    DENTConfig,
    RMCConfig,
    RobustnessConfig,
    TADVConfig,
    ThreatConfig,
    URejectronConfig,
    preset,
)
from .figures import figures
from .inputs import Data, Models
from .result import TITLE, Result
from .run import EXECUTION_FIELDS, run, run_shard, shard_count

__all__ = ["Config", "ThreatConfig", "AttackConfig", "RobustnessConfig", "RMCConfig", "DENTConfig", "DANNConfig",
           "TADVConfig", "URejectronConfig", "AuditConfig", "TABLES", "PRESETS", "preset", "Models", "Data", "Result",
           "TITLE", "run", "figures", "paper_values", "EXECUTION_FIELDS", "shard_count", "run_shard", "Store",
           "MemoryStore", "DirStore", "Split"]
