"""What :func:`~transduct_attack.experiment.run` returns: :class:`Result`, the tables of Chen et al. (ICLR 2022)
with the paper's values beside ours."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from robustsuite_common.experiment import ExperimentResult

__all__ = ["TITLE", "Result"]

#: the section's title (the umbrella's report heads the section with it)
TITLE = "Transductive defenses under adaptive attacks (RMC, DENT, DANN, TADV, URejectron vs FPA/GMSA)"


@dataclass(frozen=True)
class Result(ExperimentResult):
    """What :func:`run` returns (an :class:`~robustsuite_common.experiment.ExperimentResult`); ``checks`` holds the
    verdict's checks the run computed (``audit.enabled``: the ``transductive-gain`` check), empty otherwise."""

    title = TITLE

    @property
    def model_at_chance(self) -> bool:
        """Whether the static model of some table is at chance on its points (its ``<table>_static_at_chance``
        metric): then that table's attack numbers carry no information."""
        return any(bool(m.value) for k, m in self.metrics.items() if k.endswith("_static_at_chance"))

    def rows(self, table: str) -> list[dict[str, Any]]:
        """The rows of ``table`` as dicts."""
        return self.tables[table].records()
