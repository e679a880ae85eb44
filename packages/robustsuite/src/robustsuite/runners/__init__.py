"""Method runners: each module here turns one package's experiment into report sections; discovered by name
(modules starting with ``_`` are helpers). Every runner is declarative: it sets ``EXPERIMENT`` and declares its input
specs (:class:`robustsuite.run.adapter.ExperimentRunner`).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any

from ..errors import ConfigError, did_you_mean
from ..run.context import RunContext

__all__ = ["RunContext", "available", "get"]


@functools.cache
def available() -> dict[str, Any]:
    """Every runner module, as an :class:`~robustsuite.run.adapter.ExperimentRunner`, by ``NAME``: ``overview``
    first, then the methods alphabetically (scanned once)."""
    from ..run.adapter import ExperimentRunner

    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = ExperimentRunner(importlib.import_module(f"{__name__}.{info.name}"))
        found[mod.NAME] = mod
    return dict(sorted(found.items(), key=lambda kv: (kv[0] != "overview", kv[0])))


def get(name: str) -> Any:
    runners = available()
    if name not in runners:
        hint = did_you_mean(str(name).replace("-", "_"), runners, cutoff=0.6)
        raise ConfigError(f"unknown method {name!r}{hint} (available: {sorted(runners)})")
    return runners[name]
