"""The paper's reference values, kept as data beside the experiment (``paper.json``, read by :func:`paper_values`):
Table I's RobustBench names, Table IV (clean / robust accuracy, MUS and MSUS μ and σ, RobustBench rank), Tables
II–III (s-ECE under / clean / over) and Table V (open-set and OOD detection under attack), and the setup of §V-A."""

from __future__ import annotations

import warnings
from typing import Any

from robustsuite_common import contract

__all__ = ["paper_values", "paper_reference", "paper_row"]


def paper_values() -> dict[str, Any]:
    """The paper's reference values (a fresh copy of ``paper.json``'s content)."""
    return contract.paper_values("uncspan.experiment")


def paper_reference() -> dict[str, Any]:
    """Deprecated name of :func:`paper_values` (kept one release)."""
    warnings.warn("uncspan.experiment.paper_reference() is deprecated; use paper_values()", DeprecationWarning,
                  stacklevel=2)
    return paper_values()


def paper_row(model: str) -> dict[str, Any] | None:
    """Table IV's row (with Tables II–III's s-ECE) of a model named by its RobustBench name, alone or at the end
    of a spec (``robustbench:cifar10/Linf/Peng2023Robust``); ``None`` when the paper did not evaluate it. A name
    the paper evaluated on both datasets (``Engstrom2019Robustness``) is matched by the spec's dataset, CIFAR-10
    when the spec does not say."""
    ref = paper_values()
    name = str(model).rsplit("/", 1)[-1].split(":", 1)[-1]
    dataset = "imagenet" if "imagenet" in str(model).lower() else "cifar10"
    sece = {r["id"]: r for r in ref["table_ii_iii"]["rows"]}
    for row in ref["table_iv"]["rows"]:
        if row["robustbench_name"] == name and row["dataset"] == dataset:
            s = sece.get(row["id"], {})
            return row | {f"sece_{k}": s[k] for k in ("under", "clean", "over") if k in s}
    return None
