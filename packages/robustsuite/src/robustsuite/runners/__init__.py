"""Method runners: each module here turns one package's experiment into report sections; discovered by name
(modules starting with ``_`` are helpers).

A declarative runner sets ``EXPERIMENT`` and declares its input specs (:class:`robustsuite.run.adapter.ExperimentRunner`).
A runner that computes its section itself (the overview) defines ``NAME``, ``TITLE``, ``PAPER``, its parameters as a
typed ``Params`` config (robustsuite_common.config) and ``run(ctx: RunContext, params) -> Section``, optionally
``check_params(params)`` (checks across keys), ``SEEDED = False``, and ``shard_count(params)`` with
``run_shard(ctx, params, index, count)`` (shards saved under ``ctx.work_dir()``, merged by ``run``).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from types import ModuleType
from typing import Any

from ..errors import ConfigError
from ..run.context import RunContext

__all__ = ["RunContext", "available", "get"]

_REQUIRED = ("NAME", "TITLE", "run")


@functools.cache
def available() -> dict[str, ModuleType]:
    """All runner modules by ``NAME``: ``overview`` first, then the methods alphabetically (scanned once)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        from ..run.adapter import ExperimentRunner, ParamsRunner

        # a declarative runner (the package's experiment does the work) or one with typed parameters
        mod = ExperimentRunner(mod) if hasattr(mod, "EXPERIMENT") else ParamsRunner(mod)
        missing = [a for a in _REQUIRED if not hasattr(mod, a)]
        if missing:
            raise ImportError(f"runner module {mod.__name__} lacks {missing}")
        found[mod.NAME] = mod
    return dict(sorted(found.items(), key=lambda kv: (kv[0] != "overview", kv[0])))


def get(name: str) -> Any:
    runners = available()
    if name not in runners:
        raise ConfigError(f"unknown method {name!r}; available: {sorted(runners)}")
    return runners[name]
