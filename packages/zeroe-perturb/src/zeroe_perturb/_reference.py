"""The paper's reported values, kept as data (``experiment/paper.json``): Table 5's harmfulness rankings, Table
3's defense ranking, Table 6's unshielded scores, the clean scores and the chance lines.

Read here by path (not through :func:`zeroe_perturb.experiment.paper_values`), so the core modules
(:mod:`zeroe_perturb.ranking`) can use Table 5 without importing the experiment package.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any


@functools.cache
def _paper_json() -> dict[str, Any]:
    """The parsed ``experiment/paper.json`` (read once; callers copy what they hand out)."""
    text = resources.files("zeroe_perturb").joinpath("experiment/paper.json").read_text(encoding="utf-8")
    return json.loads(text)


def table5() -> dict[str, dict[str, int]]:
    """Table 5: task (POS, NLI, TC) -> attacker -> rank at the high level (1 = most harmful)."""
    t = _paper_json()["table5_ranking_high"]
    return {task: dict(ranks) for task, ranks in t.items() if task != "note"}
