"""The experiment's :class:`Result`: an :class:`~robustsuite_common.experiment.ExperimentResult` with typed
accessors for the tables a reader looks up first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from robustsuite_common.experiment import ExperimentResult, Metric

__all__ = ["TITLE", "Result"]

TITLE = "Uncertainty span under over- and under-confidence attacks"


@dataclass(frozen=True)
class Result(ExperimentResult):
    """Tables ``span`` (Table IV: clean accuracy, robust accuracy under standard AutoAttack with this package's PGD
    beside it, MUS / MSUS, mean entropies), ``signed_ece`` (Tables II–III), ``eps_sweep`` and ``ood_osr``
    (Table V), and ``paper_reference`` when a ranked model is one of the paper's; metrics keyed by identifiers;
    per-sample records ``span-<model>``, ``sweep-<model>`` and ``ood-<model>-<outliers>``; ``checks``: the audit's
    ``uncertainty-under-attack`` check per ranked model, when ``audit.enabled``."""


    @property
    def title(self) -> str:
        return TITLE

    def leaderboard(self) -> list[dict[str, Any]]:
        """Table IV's rows as dicts, sorted by MUS (smallest span first)."""
        return self.tables["span"].records()

    def row(self, model: str) -> dict[str, Any]:
        """Table IV's row of ``model``."""
        for r in self.leaderboard():
            if r["model"] == model:
                return r
        raise KeyError(f"no ranked model {model!r}; models: {[r['model'] for r in self.leaderboard()]}")

    def mus(self, model: str) -> Metric:
        """MUS of ``model`` (nats) with its bootstrap interval."""
        return self.metric(f"{slug(model)}_mus_mean")

    @property
    def model_at_chance(self) -> bool:
        """The at-chance flag (False for the audit preset, which measures no clean accuracy of its own)."""
        return bool(self.value("model_at_chance")) if "model_at_chance" in self.metrics else False


def slug(name: str) -> str:
    """A model name as part of an identifier (metric keys, record names): ``builtin:fashion-cnn`` ->
    ``fashion_cnn``."""
    import re

    return re.sub(r"[^A-Za-z0-9]+", "_", str(name).split(":", 1)[-1]).strip("_").lower() or "model"
