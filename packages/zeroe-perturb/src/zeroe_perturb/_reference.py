"""The paper's reported values, kept as data (``data/paper_reference.json``): Table 5's harmfulness rankings, Table
3's defense ranking, Table 6's unshielded scores, the clean scores and the chance lines."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any


@functools.cache
def paper_reference() -> dict[str, Any]:
    """The parsed ``data/paper_reference.json`` (read once)."""
    text = resources.files("zeroe_perturb").joinpath("data/paper_reference.json").read_text(encoding="utf-8")
    return json.loads(text)


def table5() -> dict[str, dict[str, int]]:
    """Table 5: task (POS, NLI, TC) -> attacker -> rank at the high level (1 = most harmful)."""
    t = paper_reference()["table5_ranking_high"]
    return {task: dict(ranks) for task, ranks in t.items() if task != "note"}
