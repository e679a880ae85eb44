"""The paper's experiment (Extreme Confidence and the Illusion of Robustness): its typed configuration,
named presets and ``run(models, data, config, *, store=None, progress=True) -> Result``.

``run`` serves the text classifier as *base*, *↓conf* (T_d = 2e6) and *↑conf* (T_d = 0.005) (and *ddi-at*,
fine-tuned with DDi-AT, when enabled), attacks each with every text attack plain, after adversary calibration
(*cal*, Eq. 9) and after the Brent-optimised temperature (*opt*, Eq. 11), and scores the adversarial examples
on the served system (Tables 2/3); Tables 1/11 (confidence, ECE), Table 4 (transfer), Table 5 (DDi-AT
normalisation), Fig. 1 (the temperature sweep); then the same check for a vision model under PGD, beside
standard AutoAttack on the same points. Every attack run is checkpointed in ``store``.

Layout (the same in every package): ``config.py`` (``Config``, ``PRESETS``, ``preset``, ``paper_values``),
``inputs.py`` (``Models``, ``Data``), ``run.py`` (``run``; its halves ``text.py`` and ``vision.py``), ``result.py``
(``Result``), ``tables.py``, ``figures.py`` and ``paper.json`` (the paper's numbers). ``iortemp experiment
--preset P`` and ``python -m iortemp.experiment --preset P`` are the same command.

>>> from iortemp import experiment
>>> cfg = experiment.preset("demo")          # or "paper", "paper-cpu"; override with robustsuite_common.config
>>> # result = experiment.run(experiment.Models(text=clf), experiment.Data(test=..., val=...), cfg)
"""

from __future__ import annotations

from .config import (
    EXECUTION_FIELDS,
    PRESETS,
    AblationConfig,
    AuditConfig,
    AutoAttackConfig,
    Config,
    DDiATConfig,
    DesignTemperatures,
    SearchConfig,
    SweepConfig,
    SystemsConfig,
    TextAttacksConfig,
    TextConfig,
    VisionConfig,
    paper_values,
    preset,
    reference,
)
from .figures import figures
from .inputs import Data, Models
from .result import TITLE, Result
from .run import run

__all__ = ["EXECUTION_FIELDS", "PRESETS", "TITLE", "AblationConfig", "AuditConfig", "AutoAttackConfig", "Config",
           "DDiATConfig", "Data", "DesignTemperatures", "Models", "Result", "SearchConfig", "SweepConfig",
           "SystemsConfig", "TextAttacksConfig", "TextConfig", "VisionConfig", "figures", "paper_values", "preset",
           "reference", "run"]
